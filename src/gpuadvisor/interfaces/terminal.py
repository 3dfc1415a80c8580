"""What the command line shows besides the report: colour choice and progress on standard error.

Progress appears only on a terminal (never in CI logs or pipes), only for runs that last
(a bar once a check has taken `PROGRESS_AFTER_S`), and for the model fit, which is rare now
that the fitted model ships with the package but takes seconds when the user's own bench
rows call for it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: A check that finishes sooner shows no progress at all (no flicker on small runs).
PROGRESS_AFTER_S = 2.0


def wants_color(choice: str, stream: IO[str]) -> bool:
    """`--color always|never` decide; `auto` honours FORCE_COLOR, then NO_COLOR, then whether
    `stream` is a terminal (https://no-color.org, https://force-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return _is_terminal(stream)


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


class CheckProgress:
    """A files-checked bar on standard error, started once the run has lasted PROGRESS_AFTER_S."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and _is_terminal(sys.stderr)
        self.started = time.monotonic()
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def update(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            if time.monotonic() - self.started < PROGRESS_AFTER_S or done >= total:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TextColumn("files"), TimeElapsedColumn(),
                console=Console(stderr=True), transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("check", total=total)
        assert self._task is not None
        self._bar.update(self._task, completed=done, total=total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


@contextmanager
def spinner(description: str) -> Iterator[None]:
    """A spinner with `description` on standard error while a long step runs (terminals only)."""
    if not _is_terminal(sys.stderr):
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(description):
        yield


def show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Python warnings as one line, like every other message of the command line."""
    sys.stderr.write(f"gpuadvisor: warning: {message}\n")
