"""The pre-scan: which files cannot produce a finding, decided from their text before LibCST parses them.

Each rule declares what must appear in a file's text for it to fire at all (`Rule.prefilter`:
regexes that must all match). The words are taken from the tables the facts read
(`facts/knowledge.py`), on two grounds that hold for any spelling of the code:

- a qualified name (`torch.cuda.synchronize`, `time.perf_counter`, `threading.Thread`) is only
  ever resolved through an import that names its top-level module, so that word is in the text;
- every array or GPU value the walk knows of starts from an array library, a device word
  (`"cuda"`, a `device` or `local_rank` parameter, `self.device`), an accelerator object, or
  a loss a training step calls `.backward()` on. A file without any of them holds no GPU value,
  whatever else it does, unless another file hands it one (then it is always parsed).

The runner (`interfaces/runner.py`) keeps the cross-file facts sound: a file the pre-scan skips is
still parsed when a parsed file refers to it (a call, a base class, a class moved to the GPU) or
when it imports a parsed file (its loops may call into that file); see `imported_modules`.
Switch it off with `GPUADVISOR_PRESCAN=off` in the environment (every file is then parsed; the
findings are the same, only slower: the tests and `benchmarks/check_speed.py` compare both).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from gpuadvisor.analysis.facts import knowledge as kb

if TYPE_CHECKING:
    from gpuadvisor.analysis.rules.base import Rule


def words(*groups: Iterable[str]) -> str:
    """A regex matching any of the words as a whole word (`device`, not `devices`)."""
    names = sorted({name for group in groups for name in group}, key=lambda name: (-len(name), name))
    return r"\b(?:" + "|".join(map(re.escape, names)) + r")\b"


def roots(qualnames: Iterable[str]) -> set[str]:
    """The top-level modules of qualified names: the word an import of each must contain."""
    return {name.split(".", 1)[0] for name in qualnames}


def attributes(*groups: Iterable[str]) -> str:
    """A regex matching `.name` for any of the names, with space, line continuations or comment
    lines between the dot and the name (as a bracketed expression may have them)."""
    return r"\.(?:[\s\\]|#[^\n]*\n)*" + words(*groups)


#: Where a GPU value can come from: the array libraries; a device named by a parameter
#: (`device`, `dev`), an attribute (`args.device`, `x.device`) or a string (`"cuda:0"`, `"MPS"`:
#: read case-insensitively, before any `:`); a move (`.cuda()`, or `.to(...)`, where a GPU index
#: such as `local_rank` or `0` names the device); an accelerator (`fabric.setup(model)`); a
#: device query; and, in a project that names CUDA, the loss a training step calls `.backward()` on.
GPU_WORDS = "|".join(
    (
        words(
            kb.ARRAY_LIBRARIES,
            kb.DEVICE_PARAMETER_NAMES,
            kb.ACCELERATOR_NAMES,
            roots(kb.DEVICE_QUERIES),
            roots(kb.GPU_COUNT_CALLS),
        ),
        attributes({"device", "cuda", "to"}, kb.BACKWARD_METHODS),
        r"[\"'](?i:\s*" + words(kb.GPU_DEVICE_KINDS) + r"\s*[:\"'])",
    )
)
#: Array values of known shape (the speedup rules): only the array libraries make them (SciPy's
#: functions take NumPy arrays; named for good measure).
ARRAY_WORDS = words(kb.ARRAY_LIBRARIES, {"scipy"})
#: Clock reads and timed repetitions: `time`, `timeit`, `datetime`, pytest-benchmark's fixture,
#: Warp's `ScopedTimer` (its class name is in any text that uses it), or a notebook's `%timeit`
#: as the notebook reader writes it.
CLOCK_WORDS = (
    words(
        roots(kb.CLOCKS | kb.TIMEIT_CALLS),
        {kb.BENCHMARK_FIXTURE},
        {name.rsplit(".", 1)[-1] for name in kb.WARP_TIMERS | kb.EVENT_ELAPSED_FUNCTIONS},
        {"elapsed_time"},
    )
    + "|"
    + re.escape(kb.TIMEIT_LOOP_HEADER)
)
#: Threads: the thread class and the thread pools.
THREAD_WORDS = words(roots(kb.THREAD_POOL_FACTORIES | {kb.THREAD_CLASS}))
#: Environment variables that size thread pools, set in the text.
THREAD_ENV_WORDS = words(kb.THREAD_ENV_VARS)
#: Debugging switches: the anomaly-detection calls (their last name is in the text of any call
#: that resolves to them) and CUDA_LAUNCH_BLOCKING.
DEBUG_SWITCH_WORDS = words({name.rsplit(".", 1)[-1] for name in kb.ANOMALY_DETECTION}, kb.BLOCKING_LAUNCH_ENV_VARS)
#: An allocator flush is named by its function, whatever it is imported as.
ALLOCATOR_FLUSH_WORDS = words({name.rsplit(".", 1)[-1] for name in kb.ALLOCATOR_FLUSHES})
#: A product of two subscripted reads, `a[i][k] * b[k][j]`, also parenthesised or spread over
#: lines: `]`, closing brackets, space, whole comment lines or line continuations, `*` (not `**`,
#: `*=`), opening brackets, space, comment lines, then a name. Each comment runs to its line's
#: end, so the regex never backtracks over the ways to split a line of `#`s.
SUBSCRIPT_PRODUCT = r"\][\s)\\]*(?:#[^\n]*\n[\s)\\]*)*\*(?![*=])[\s(\\]*(?:#[^\n]*\n[\s(\\]*)*[^\W\d]"


def enabled() -> bool:
    """The pre-scan is on unless GPUADVISOR_PRESCAN is `off` (or 0/false/no)."""
    return os.environ.get("GPUADVISOR_PRESCAN", "on").strip().lower() not in ("off", "0", "false", "no")


class PreScan:
    """Could any of the rules fire on this text at all? (Each rule's `prefilter` regexes must all match.)"""

    def __init__(self, rules: Sequence[type[Rule]]) -> None:
        self._patterns = {source: re.compile(source) for rule in rules for source in rule.prefilter}
        self._requirements = [rule.prefilter for rule in rules]

    def admits(self, text: str) -> bool:
        seen: dict[str, bool] = {}
        for required in self._requirements:
            for source in required:
                if source not in seen:
                    seen[source] = self._patterns[source].search(text) is not None
                if not seen[source]:
                    break
            else:
                return True
        return False


_CONTINUATION = re.compile(r"\\\r?\n")
#: `from M import a`, `from .m import (a,\n b)`, `from.m import a`: written so that no text makes
#: the regex backtrack more than linearly (the module part starts with a word character; a
#: parenthesised list is read up to 10,000 characters, then its first line only).
_FROM_IMPORT = re.compile(r"\bfrom\b([\s.]*)(\w[\w.]*\s*)?\bimport\b\s*(\([^)]{0,10000}\)|[^\n;]*)")
_IMPORT = re.compile(r"\bimport\s+([^\n;]*)")  # import a.b as c, d (and, in passing, the names of every from-import)
_NAME = re.compile(r"[\w.]+")


def imported_modules(text: str) -> set[str]:
    """Every module the text may import, as dotted names to resolve against the project's files
    (relative ones keep their dots). Over-approximate on purpose: matches inside strings and
    comments count, and for `from M import x` both `M` and `M.x` (x may be a module) are given."""
    text = _CONTINUATION.sub(" ", text)
    found = {name for match in _IMPORT.finditer(text) for name in _NAME.findall(match.group(1)) if name != "as"}
    for match in _FROM_IMPORT.finditer(text):
        module = re.sub(r"\s+", "", match.group(1) + (match.group(2) or ""))
        found.add(module)
        for name in _NAME.findall(match.group(3)):
            if name != "as":
                found.add(f"{module}{name}" if module.endswith(".") or not module else f"{module}.{name}")
    found.discard("")
    return found
