"""A bounded fuzz run: generated GPU-flavoured programs (and broken cuts of them) never crash
the analysis. Every file yields findings or a clean error entry, never an `internal` one.

Seeded, so a failure names the program that caused it and reproduces.
"""

from __future__ import annotations

import random

import pytest

from gpuadvisor.analysis.checker import Checker
from gpuadvisor.analysis.rules import ALL_RULES

IMPORTS = [
    "import torch", "import torch as th", "import numpy as np", "import cupy as cp", "import cupy",
    "from numba import cuda", "import time", "from time import perf_counter as clock", "import threading",
    "import os", "from concurrent.futures import ThreadPoolExecutor",
]
EXPRESSIONS = [
    "torch.zeros({n}, device='cuda')", "torch.randn({n}, {n}).cuda()", "np.random.rand({n}, {n})", "cp.asarray(x)",
    "x @ y", "x.sum()", "x.item()", "float(x)", "x.to(device)", "x.cpu().numpy()", "cp.asnumpy(x)", "np.sin(x) + 1",
    "[v for v in x]", "x[i] * 2", "sum(x)", "max(x, key=abs)", "model(x)", "th.tensor([1, 2, 3])",
    "time.time() - t0", "clock()", "x if x is not None else y", "f'{x}'", "'%d' % x", "lambda v: v.cuda()",
    "x.shape[0]", "len(x)", "cuda.to_device(x)", "kernel[32, 64](x)", "y.T", "-x", "not x", "(x, y)",
]
TARGETS = ["x", "y", "device", "t0", "total", "i", "self.w", "out[i]", "x, y"]


def _expression(rng: random.Random) -> str:
    return rng.choice(EXPRESSIONS).replace("{n}", str(rng.choice([3, 16, 4096, 8192, "N"])))


def _block(rng: random.Random, depth: int, indent: str) -> list[str]:
    lines: list[str] = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if depth < 4 and kind < 0.15:
            lines.append(f"{indent}for i in range({rng.choice([3, 100, 'n', 'x.shape[0]'])}):")
            lines += _block(rng, depth + 1, indent + "    ")
        elif depth < 4 and kind < 0.25:
            lines.append(f"{indent}while {_expression(rng)}:")
            lines += _block(rng, depth + 1, indent + "    ")
        elif depth < 4 and kind < 0.35:
            lines.append(f"{indent}if {_expression(rng)}:")
            lines += _block(rng, depth + 1, indent + "    ")
            if rng.random() < 0.5:
                lines.append(f"{indent}else:")
                lines += _block(rng, depth + 1, indent + "    ")
        elif depth < 3 and kind < 0.42:
            lines.append(f"{indent}def {rng.choice(['step', 'test_step', 'train', 'get_sigmas'])}(x, device='cuda'):")
            lines += _block(rng, depth + 1, indent + "    ")
        elif depth < 3 and kind < 0.47:
            lines.append(f"{indent}with torch.no_grad():")
            lines += _block(rng, depth + 1, indent + "    ")
        elif kind < 0.55:
            lines.append(f"{indent}{_expression(rng)}")
        elif kind < 0.6:
            lines.append(f"{indent}return {_expression(rng)}" if depth else f"{indent}pass")
        else:
            lines.append(f"{indent}{rng.choice(TARGETS)} = {_expression(rng)}")
    return lines


def program(seed: int) -> str:
    rng = random.Random(seed)
    head = rng.sample(IMPORTS, rng.randint(1, 5))
    return "\n".join(head + ["N = 4096", "n = 100"] + _block(rng, 0, "")) + "\n"


# The first 100 programs run in the default run, the other 300 with the slow tests (CI runs both).
@pytest.mark.parametrize("start", [pytest.param(start, marks=pytest.mark.slow) if start >= 100 else start for start in range(0, 400, 50)])
def test_generated_programs_never_crash_the_analysis(start: int) -> None:
    checker = Checker(ALL_RULES)
    for seed in range(start, start + 50):
        source = program(seed)
        for text in (source, source[: len(source) * 2 // 3]):  # whole, and cut mid-way (often broken)
            result = checker.check_text(text, f"fuzz_{seed}.py")
            assert result.error is None or result.error.kind in ("syntax", "too-complex"), (seed, result.error, text)
