"""Behaviour that `benchmarks/mutation_score.py` found no test guarding: each test here failed
against a seeded mutant (a flipped comparison, a dropped `not`, a lost return value) that the
rest of the suite let through."""

from __future__ import annotations

import pytest

from gpuadvisor import check_source


def predicted_ops(code: str) -> list[tuple[int, str]]:
    """(line, operation described) of each gpu-candidate finding, without the timings."""
    return [(f.line, f.message.split(":")[0]) for f in check_source(code, "sizes.py", select="GPU701", cpu="laptop")]


def test_sizes_computed_from_constants_reach_the_prediction() -> None:
    code = "import numpy as np\nN = 2 * 4096\na = np.random.rand(N, N)\nb = a @ a\n"
    assert predicted_ops(code) == [(4, "8192x8192 @ 8192x8192 float64 matmul")]


@pytest.mark.parametrize("reduction", ["a.sum(axis=2)", "np.sum(a, axis=2)", "np.mean(a, 2)"])
def test_a_reduction_along_an_axis_keeps_the_other_axes(reduction: str) -> None:
    code = f"import numpy as np\na = np.random.rand(4096, 8192, 4)\ns = {reduction}\nu = s.T @ s\n"
    assert predicted_ops(code)[-1] == (4, "8192x4096 @ 4096x8192 float64 matmul")


CUPY_LOOPS = {
    "a public CuPy function returns a GPU array": (
        "import cupy as cp\n\ndef run(x, steps):\n    total = 0.0\n    for _ in range(steps):\n"
        "        g = cp.linalg.norm(x)\n        total += float(g)\n    return total\n",
        [("GPU201", 7)],
    ),
    "the CUDA runtime namespace returns Python values": (
        "import cupy as cp\n\ndef run(steps):\n    for _ in range(steps):\n"
        "        count = cp.cuda.runtime.getDeviceCount()\n        if count > 1:\n            print(count)\n",
        [],
    ),
}


@pytest.mark.parametrize("name", sorted(CUPY_LOOPS))
def test_which_cupy_calls_give_device_values(name: str) -> None:
    code, expected = CUPY_LOOPS[name]
    assert [(f.rule, f.line) for f in check_source(code, "loop.py")] == expected
