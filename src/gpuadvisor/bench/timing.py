"""How one configuration is timed: the part of the harness that decides whether numbers are true.

- Inputs are built before timing starts (by the caller); the timed callable only computes.
- Warm-up calls run first, so context creation, kernel loading and plan creation are paid
  outside the samples.
- Every clock read that closes a sample comes after `sync()`: asynchronous GPU work is
  finished before the clock is read (for CPU backends `sync` does nothing).
- Samples repeat until enough time has passed (adaptive, bounded); we keep median, p10, p90.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TimingPolicy:
    warmup: int = 2
    min_repeats: int = 5
    max_repeats: int = 1000
    min_total_s: float = 0.25  # keep sampling until the samples add up to this
    max_total_s: float = 3.0  # ... but never longer than this per configuration

    @classmethod
    def quick(cls) -> TimingPolicy:
        return cls(warmup=1, min_repeats=3, max_repeats=50, min_total_s=0.005, max_total_s=0.2)


@dataclass(frozen=True)
class Timing:
    median_s: float
    p10_s: float
    p90_s: float
    repeats: int


def measure(
    run: Callable[[], object],
    sync: Callable[[], None],
    policy: TimingPolicy,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    for _ in range(policy.warmup):
        run()
    sync()
    samples: list[float] = []
    started = clock()
    while True:
        sync()
        begin = clock()
        run()
        sync()
        end = clock()
        samples.append(end - begin)
        spent = end - started
        enough = len(samples) >= policy.min_repeats and sum(samples) >= policy.min_total_s
        if enough or len(samples) >= policy.max_repeats or (spent >= policy.max_total_s and len(samples) >= 1):
            break
    samples.sort()
    if len(samples) >= 2:
        deciles = statistics.quantiles(samples, n=10, method="inclusive")
        p10, p90 = deciles[0], deciles[-1]
    else:
        p10 = p90 = samples[0]
    return Timing(statistics.median(samples), p10, p90, len(samples))
