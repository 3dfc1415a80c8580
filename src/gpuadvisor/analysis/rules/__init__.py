"""The rule registry: every rule class, in code order, and selection by code or category."""

from __future__ import annotations

from collections.abc import Iterable

from gpuadvisor.analysis.rule import Rule
from gpuadvisor.analysis.rules.builtin_over_gpu import BuiltinOverGpuArray
from gpuadvisor.analysis.rules.create_then_transfer import CreateThenTransfer
from gpuadvisor.analysis.rules.gpu_candidate import GpuCandidate
from gpuadvisor.analysis.rules.gpu_slower_than_cpu import GpuSlowerThanCpu
from gpuadvisor.analysis.rules.python_loop_matmul import PythonLoopMatmul
from gpuadvisor.analysis.rules.small_kernel_loop import SmallKernelLoop
from gpuadvisor.analysis.rules.sync_in_loop import SyncInLoop
from gpuadvisor.analysis.rules.thread_env_after_import import ThreadEnvAfterImport
from gpuadvisor.analysis.rules.threading_for_compute import ThreadingForCompute
from gpuadvisor.analysis.rules.timing_without_warmup import TimingWithoutWarmup
from gpuadvisor.analysis.rules.transfer_in_loop import TransferInLoop
from gpuadvisor.analysis.rules.unsynchronized_timing import UnsynchronizedTiming

ALL_RULES: tuple[type[Rule], ...] = tuple(
    sorted(
        (
            TransferInLoop,
            CreateThenTransfer,
            SyncInLoop,
            SmallKernelLoop,
            BuiltinOverGpuArray,
            UnsynchronizedTiming,
            TimingWithoutWarmup,
            ThreadingForCompute,
            ThreadEnvAfterImport,
            PythonLoopMatmul,
            GpuCandidate,
            GpuSlowerThanCpu,
        ),
        key=lambda rule: rule.code,
    )
)
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}
CATEGORIES: frozenset[str] = frozenset(rule.category for rule in ALL_RULES)


class UnknownRuleError(ValueError):
    pass


def _expand(selector: str) -> set[str]:
    name = selector.strip()
    if name.upper() == "ALL":
        return set(RULES_BY_CODE)
    if name.upper() in RULES_BY_CODE:
        return {name.upper()}
    if name.lower() in CATEGORIES:
        return {rule.code for rule in ALL_RULES if rule.category == name.lower()}
    prefix = [code for code in RULES_BY_CODE if code.startswith(name.upper())] if name else []
    if prefix:
        return set(prefix)  # "GPU1" selects GPU101, GPU102, like ruff's prefixes
    raise UnknownRuleError(f"unknown rule code or category: {selector!r} (see `gpuadvisor rules`)")


def resolve_codes(selectors: Iterable[str]) -> set[str]:
    codes: set[str] = set()
    for selector in selectors:
        if selector.strip():
            codes |= _expand(selector)
    return codes


def select_rules(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> list[type[Rule]]:
    """The rules to run: all (or `select`), minus `ignore`; codes, prefixes or categories."""
    chosen = resolve_codes(select) if select else set(RULES_BY_CODE)
    chosen -= resolve_codes(ignore or ())
    return [rule for rule in ALL_RULES if rule.code in chosen]
