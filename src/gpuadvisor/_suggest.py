""""Did you mean ...?" for names typed on the command line (rule codes, hardware profiles)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(typed: str, known: Iterable[str], limit: int = 4) -> str:
    """` (did you mean a, b?)` for the known names closest to `typed`, or "" when none is close.

    Names that start with or contain what was typed come first (`h100` -> `h100-sxm`,
    `h100-pcie`), then spelling neighbours (`GPU1O1` -> `GPU101`).
    """
    wanted = typed.strip().lower()
    if not wanted:
        return ""
    names = list(dict.fromkeys(known))
    lowered = {name.lower(): name for name in names}
    containing = [name for name in names if wanted in name.lower()]
    containing.sort(key=lambda name: (not name.lower().startswith(wanted), len(name)))
    close = [lowered[match] for match in difflib.get_close_matches(wanted, list(lowered), n=limit, cutoff=0.6)]
    picked = list(dict.fromkeys([*containing, *close]))[:limit]
    return f" (did you mean {', '.join(picked)}?)" if picked else ""
