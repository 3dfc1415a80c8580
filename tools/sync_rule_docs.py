"""Regenerate rule document headers and the README rule table from the rule classes.

    python tools/sync_rule_docs.py          # rewrite what is stale
    python tools/sync_rule_docs.py --check  # exit 1 if anything is stale (CI, pre-commit)
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.interfaces.docsync import sync

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = sync(ROOT, ALL_RULES, write=not check)
    for path in stale:
        print(f"{'stale' if check else 'rewrote'}: {path.relative_to(ROOT)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
