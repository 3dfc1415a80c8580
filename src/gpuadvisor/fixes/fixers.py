"""Which rule has which fix, and whether it is safe: the one table the CLI, the editor server
and the rule documents (`autofix:` in `rules/*.md`, written by `tools/sync_rule_docs.py`) read.

Each fixer lives in a module of its own and turns a finding into an Edit, or declines (None)
whenever it cannot show the rewrite is right; the finding then stays.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.fixes.accumulate_on_device import accumulate_on_device
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.create_on_device import create_on_device
from gpuadvisor.fixes.hoist_copy import hoist_copy
from gpuadvisor.fixes.processes_for_compute import processes_for_compute
from gpuadvisor.fixes.synchronize_clock import synchronize_before_clock
from gpuadvisor.fixes.threads_before_import import set_threads_before_import
from gpuadvisor.fixes.warm_up import warm_up

Fixer = Callable[[Finding, FixContext], "Edit | None"]

#: Fixers by rule code.
FIXERS: dict[str, Fixer] = {
    "GPU101": hoist_copy,
    "GPU102": create_on_device,
    "GPU201": accumulate_on_device,
    "GPU401": synchronize_before_clock,
    "GPU402": warm_up,
    "GPU501": processes_for_compute,
    "GPU502": set_threads_before_import,
}
#: What each rule's fix is, for the rule documents: "safe", "unsafe" or when each applies.
FIX_KINDS: dict[str, str] = {
    "GPU101": "unsafe (copy hoisted above the loop)",
    "GPU102": "safe for exact fills (zeros, ones, empty, full, eye, integer arange); unsafe for random draws, floating-point fills (linspace, windows) and when `.to(x)` may name a tensor",
    "GPU201": "unsafe (sum kept on the device, read once after the loop)",
    "GPU401": "safe",
    "GPU402": "unsafe (one untimed warm-up call added)",
    "GPU501": "unsafe (thread pool replaced by a process pool)",
    "GPU502": "unsafe",
}
