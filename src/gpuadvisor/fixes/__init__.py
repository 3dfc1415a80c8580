"""Automatic fixes: LibCST rewrites keyed by rule code, applied so comments and layout survive.

Each fix says whether it is *safe* (the program computes the same results: applied by `--fix`)
or *unsafe* (results or behaviour may change, e.g. thread counts or random streams: applied
only with `--unsafe-fixes`), the distinction ruff draws.
"""

from gpuadvisor.fixes.apply import FixOutcome, fix_text
from gpuadvisor.fixes.fixers import FIX_KINDS

__all__ = ["FIX_KINDS", "FixOutcome", "fix_text"]
