"""Behaviour that `benchmarks/mutation_score.py` found no test guarding: each test here failed
against a seeded mutant (a flipped comparison, a dropped `not`, a lost return value) that the
rest of the suite let through."""

from __future__ import annotations

import pytest

from gpuadvisor import check_source
from gpuadvisor.prediction.local import detected_cpu as REAL_DETECTED_CPU  # taken before the fixtures pin it


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


def test_a_launch_probe_row_is_measured_but_never_trained_on(tmp_path) -> None:
    """`bench` writes the empty-launch probe next to real ops; it has no cost to learn from."""
    from gpuadvisor.prediction.training import load_samples

    rows = tmp_path / "rows.csv"
    header = "backend,device,op,shape,dtype,median_s,repeats,cpu_name,cpu_cores,gpu_name,library_version,timestamp,pinned\n"
    rows.write_text(
        header
        + "torch,cuda,launch,1,float32,5e-06,100,AMD EPYC,2,NVIDIA H100 80GB HBM3,2.13.0,2026-11-23T00:00:00,\n"
        + "numpy,cpu,add,1000000;1000000,float32,0.0009,10,AMD EPYC,2,,2.4.6,2026-11-23T00:00:00,\n"
    )
    assert [sample.op for sample in load_samples([rows])] == ["add"]


def test_cpu_detection_from_its_flags_cores_and_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `calibrate`, the peak comes from cores x clock x SIMD width, and the bandwidth is
    a stated guess of 12 GB/s per core, at most 200 GB/s."""
    from gpuadvisor.prediction import local

    monkeypatch.setattr(local, "_cpuinfo", lambda: {"model name": "Test CPU", "flags": "avx avx2 fma"})
    monkeypatch.setattr(local, "_clock_ghz", lambda info: 3.0)
    detect = REAL_DETECTED_CPU
    monkeypatch.setattr(local, "_cores", lambda: 4)
    small = detect()
    assert (small.name, small.cores, small.fp32_gflops, small.fp64_gflops, small.mem_bandwidth_gbs) == ("Test CPU", 4, 384.0, 192.0, 48.0)
    monkeypatch.setattr(local, "_cores", lambda: 64)
    assert detect().mem_bandwidth_gbs == 200.0


@pytest.mark.parametrize(
    "flags, per_cycle", [("avx512f avx2 fma avx", 64), ("avx2 fma avx", 32), ("avx2 avx", 16), ("avx", 16), ("sse4_2", 8), ("", 8)]
)
def test_the_detected_peak_counts_the_widest_vector_unit_of_the_cpu_flags(monkeypatch: pytest.MonkeyPatch, flags: str, per_cycle: int) -> None:
    """fp32 FLOP per cycle and core: AVX-512 64, AVX2 with FMA 32, AVX 16, none of them (an
    ARM or older x86 CPU) 8."""
    from gpuadvisor.prediction import local

    monkeypatch.setattr(local, "_cpuinfo", lambda: {"model name": "Test CPU", "flags": flags})
    monkeypatch.setattr(local, "_clock_ghz", lambda info: 2.0)
    monkeypatch.setattr(local, "_cores", lambda: 4)
    assert REAL_DETECTED_CPU().fp32_gflops == 4 * 2.0 * per_cycle


@pytest.mark.parametrize("counted, cores", [(6, 6), (None, 1)])
def test_where_the_os_has_no_cpu_affinity_the_cores_are_its_cpu_count(monkeypatch: pytest.MonkeyPatch, counted: int | None, cores: int) -> None:
    """macOS and Windows have no `os.sched_getaffinity`: the detected CPU has `os.cpu_count()`
    cores, or one where Python cannot tell."""
    from gpuadvisor.prediction import local

    monkeypatch.setattr(local, "_cpuinfo", lambda: {"model name": "Test CPU", "flags": "avx avx2 fma"})
    monkeypatch.setattr(local, "_clock_ghz", lambda info: 3.0)
    monkeypatch.delattr(local.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(local.os, "cpu_count", lambda: counted)
    detected = REAL_DETECTED_CPU()
    assert (detected.cores, detected.fp32_gflops) == (cores, cores * 3.0 * 32)


def test_every_line_of_a_multi_line_statement_maps_to_its_first_line_and_no_further() -> None:
    import libcst as cst

    from gpuadvisor.analysis.facts.watch import statement_lines

    code = "import numpy as np\nx = np.ones((4, 4))\ny = (x @\n     x +\n     x)\nz = y * 2\n"
    spans = statement_lines(cst.parse_module(code))
    assert spans.get(3) == spans.get(4) == spans.get(5) == 3 and spans.get(6) == 6


def test_a_notebook_finding_keeps_its_end_line_inside_the_cell(tmp_path) -> None:
    import json

    from gpuadvisor import check_paths

    cells = [
        "import torch\nX = torch.ones(1000, 1000)",
        "for step in range(1000):\n    Y = X.to(\n        'cuda'\n    )\n    Y.sum()",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
    }
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(notebook))
    (finding,) = check_paths([path], select="GPU101").findings
    assert (finding.cell, finding.line, finding.end_line) == (2, 2, 4)
