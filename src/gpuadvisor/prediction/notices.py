"""How the prediction package lets an interface show a slow step (a model fit takes seconds).

Importable without NumPy, so the command line can register its display before anything
heavy loads; the library itself never prints progress.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

#: Wraps a slow step, given its description; set by the command line (a spinner on a terminal).
slow_step_display: Callable[[str], AbstractContextManager[None]] | None = None


@contextmanager
def slow_step(description: str) -> Iterator[None]:
    if slow_step_display is None:
        yield
        return
    with slow_step_display(description):
        yield
