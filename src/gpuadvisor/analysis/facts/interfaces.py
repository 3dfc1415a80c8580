"""Which methods a call on an object of unknown class may run: one interface of the project.

A training loop written against a base class (`info = model.train_on_batch(batch)`, with
`model` a parameter) runs whichever subclass the configuration picked, so every override of
`train_on_batch` in the project runs once per step. When the object's class is unknown, the
method's name is all we have, and a name alone is a guess: `scaler.update()` or
`optimizer.step()` name library objects as often as the project's own. A name is taken for the
project's method only where the project declares it as one interface: the classes that define it
all derive from one of them, which defines it too (`Algo.log_info`, overridden by `BC`, `CQL`...),
and the name is not one that library objects answer to (`GENERIC_METHODS`). Then the call runs
one of those definitions, and each is told it runs as often as the call.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

#: Methods of the objects a loop handles that are not the project's (tensors, modules,
#: optimizers, schedulers, scalers, meters of libraries, loggers, progress bars, files,
#: containers): a project class defining one of them says nothing about what `x.name()` runs
#: (special methods, `__call__` and the like, are never taken for an interface either).
GENERIC_METHODS = frozenset(
    {
        "forward", "backward", "step", "zero_grad", "update", "reset", "state_dict",
        "load_state_dict", "parameters", "named_parameters", "train", "eval", "to", "cuda", "cpu",
        "item", "numpy", "tolist", "detach", "clone", "append", "extend", "pop", "get", "items",
        "keys", "values", "add", "set", "write", "read", "close", "flush", "log", "info", "debug",
        "warning", "format", "join", "split", "copy", "save", "load", "run", "start", "stop",
        "compute", "apply", "sample", "generate", "predict", "fit", "transform", "encode", "decode",
        "record", "synchronize", "wait", "put", "send", "recv", "next", "set_description",
        "set_postfix", "add_scalar", "add_scalars", "log_metrics", "sum", "mean", "max", "min",
    }
)

Class = TypeVar("Class", bound=Hashable)

#: The key of a call of `method` on an object of unknown class: `?.train_on_batch`.
DISPATCHED_PREFIX = "?."


def dispatched_key(method: str) -> str:
    return f"{DISPATCHED_PREFIX}{method}"


def interface_implementations(
    method: str,
    definers: Iterable[Class],
    parents: Callable[[Class], Iterable[Class]],
) -> list[Class]:
    """The classes whose `method` a call on an object of unknown class runs: all of `definers`
    (the project's classes that define `method`) where they are one interface, else none.

    One interface: two or more definers, one of which every other derives from (directly or
    through classes that do not define it)."""
    found = list(dict.fromkeys(definers))
    if method in GENERIC_METHODS or method.startswith("__") or len(found) < 2:
        return []
    ancestors = {cls: _ancestors(cls, parents) for cls in found}
    roots = [root for root in found if all(cls == root or root in ancestors[cls] for cls in found)]
    return found if roots else []


def _ancestors(cls: Class, parents: Callable[[Class], Iterable[Class]]) -> set[Class]:
    seen: set[Class] = set()
    pending = list(parents(cls))
    while pending:
        base = pending.pop()
        if base not in seen:
            seen.add(base)
            pending.extend(parents(base))
    return seen
