"""This machine's CPU: detected from /proc/cpuinfo, refined by `gpuadvisor calibrate`.

Detection gives a peak estimate (cores x clock x SIMD width); calibration measures what
NumPy actually gets (BLAS GFLOP/s per dtype, memory bandwidth) in under a minute and stores
it in the user cache, where later runs find it.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from gpuadvisor._paths import user_cache_dir
from gpuadvisor._safe_io import dumps_json, load_json, report_damaged
from gpuadvisor.prediction.hardware import CpuProfile, measured_cpus


@lru_cache(maxsize=1)
def _cpuinfo() -> dict[str, str]:
    """/proc/cpuinfo's first processor, read once per process (model and flags do not change;
    reading it was most of the time of one prediction)."""
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                info.setdefault(key.strip().lower(), value.strip())
    except OSError:
        pass
    return info


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@lru_cache(maxsize=1)
def _max_clock_khz() -> str:
    try:
        return Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").read_text().strip()
    except OSError:
        return ""


def _clock_ghz(info: dict[str, str]) -> float:
    try:
        return int(_max_clock_khz()) / 1e6
    except ValueError:
        pass
    try:
        return float(info.get("cpu mhz", "")) / 1000
    except ValueError:
        return 2.5


def _fp32_flops_per_cycle(flags: set[str]) -> int:
    if "avx512f" in flags:
        return 64
    if "avx2" in flags and "fma" in flags:
        return 32
    if "avx" in flags:
        return 16
    return 8


def calibration_file() -> Path:
    return user_cache_dir() / "cpu-calibration.json"


def detected_cpu() -> CpuProfile:
    info = _cpuinfo()
    cores = _cores()
    flags = set(info.get("flags", "").split())
    clock = _clock_ghz(info)
    per_cycle = _fp32_flops_per_cycle(flags)
    fp32 = cores * clock * per_cycle
    return CpuProfile(
        key="local",
        name=info.get("model name") or os.uname().machine,
        cores=cores,
        fp32_gflops=round(fp32, 1),
        fp64_gflops=round(fp32 / 2, 1),
        mem_bandwidth_gbs=round(min(12.0 * cores, 200.0), 1),
        sources={
            "peak": f"detected: {cores} cores x {clock:.2f} GHz x {per_cycle} fp32 FLOP/cycle (from CPU flags)",
            "mem_bandwidth_gbs": "guess: 12 GB/s per core; run `gpuadvisor calibrate` to measure",
        },
    )


def local_cpu() -> CpuProfile:
    detected = detected_cpu()
    try:
        stored = load_json(calibration_file())
        if stored.get("name") == detected.name and int(stored.get("cores", 0)) == detected.cores:
            rates = [float(stored[key]) for key in ("fp32_gflops", "fp64_gflops", "mem_bandwidth_gbs")]
            if not all(math.isfinite(rate) and rate > 0 for rate in rates):
                raise ValueError("calibration holds a rate that is not a positive number")
            return CpuProfile(
                key="local",
                name=detected.name,
                cores=detected.cores,
                fp32_gflops=rates[0],
                fp64_gflops=rates[1],
                mem_bandwidth_gbs=rates[2],
                sources={"all": f"measured by `gpuadvisor calibrate` on {stored.get('date', '?')}"},
            )
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        report_damaged(calibration_file(), exc)  # corrupt, or of the wrong shape (`[]`, zero rates)
    measured = measured_cpus().get((detected.name, detected.cores))
    if measured is not None:  # a machine our training rows come from: use its calibrated specs
        return replace(measured, key="local")
    return detected


#: How long `calibrate` repeats each measured run: the machine's best rate shows within seconds.
_MEASURING_SECONDS = 2.0


def _best_rate(work: float, run) -> float:
    """Best work/second over repeated runs (best, not median: we want the capability)."""
    run()
    best, deadline = 0.0, time.perf_counter() + _MEASURING_SECONDS
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        run()
        best = max(best, work / (time.perf_counter() - start))
    return best


def calibrate() -> CpuProfile:
    """Measure BLAS GFLOP/s (fp32, fp64) and memory bandwidth; store them for `--cpu local`."""
    import numpy as np

    rng = np.random.default_rng(0)
    rates = {}
    for dtype in ("float32", "float64"):
        n = 1536
        a, b = rng.standard_normal((n, n), dtype=dtype), rng.standard_normal((n, n), dtype=dtype)
        rates[dtype] = _best_rate(2 * n**3, lambda: a @ b) / 1e9
    source = rng.standard_normal(1 << 25)  # 256 MiB
    target = np.empty_like(source)
    bandwidth = _best_rate(2 * source.nbytes, lambda: np.copyto(target, source)) / 1e9
    detected = detected_cpu()
    record = {
        "name": detected.name,
        "cores": detected.cores,
        "fp32_gflops": round(rates["float32"], 1),
        "fp64_gflops": round(rates["float64"], 1),
        "mem_bandwidth_gbs": round(bandwidth, 1),
        "date": time.strftime("%Y-%m-%d"),
    }
    calibration_file().parent.mkdir(parents=True, exist_ok=True)
    calibration_file().write_text(dumps_json(record, indent=2), encoding="utf-8")
    return local_cpu()
