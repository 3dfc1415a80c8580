"""Whether a checked file lets float32 matrix products run on TF32 tensor cores.

PyTorch turns TF32 on for matmul with `torch.backends.cuda.matmul.allow_tf32 = True` or
`torch.set_float32_matmul_precision("high")` / `("medium")` (off by default since 1.12; "highest"
turns it off); CuPy with the environment variable `CUPY_TF32=1`. Both are process-wide
switches people set once near the top of a script, so the file's text is read for them: the
last switch that executes wins, lines commented out do not count. A file setting one of them
gets its float32 matmul predictions costed on TF32 tensor cores (prediction/tensor_cores.py).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

_SWITCHES = re.compile(
    r"""^[^#\n]*?(?:
        allow_tf32\s*=\s*(?P<flag>True|False)
      | set_float32_matmul_precision\(\s*['"](?P<precision>highest|high|medium)['"]\s*\)
      | ['"]CUPY_TF32['"]\s*\]\s*=\s*['"](?P<cupy>[01])['"]
    )""",
    re.MULTILINE | re.VERBOSE,
)


def tf32_in_source(source: str) -> dict[str, bool]:
    """{"torch": ..., "numpy": ...}: whether the source's last switch for each library allows TF32."""
    allowed = {"torch": False, "numpy": False}
    for match in _SWITCHES.finditer(source):
        if match.group("flag") is not None:
            allowed["torch"] = match.group("flag") == "True"
        elif match.group("precision") is not None:
            allowed["torch"] = match.group("precision") != "highest"
        else:
            allowed["numpy"] = match.group("cupy") == "1"
    return allowed


def tf32_allowed(path: str, library: str) -> bool:
    """Whether the file at `path` allows TF32 matmul for `library` ("torch", or "numpy" for CuPy)."""
    try:
        return _switches_of(path, os.stat(path).st_mtime_ns).get(library, False)
    except OSError:
        return False


@lru_cache(maxsize=256)
def _switches_of(path: str, modified_ns: int) -> dict[str, bool]:
    """Read once per version of the file (a file edited between checks in one process is re-read)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return tf32_in_source(handle.read())
