"""What a contributor adding an op relies on: one registry entry (gpuadvisor/ops/registry.py)
makes the op costed, predicted, listed, swept and measured, with no other module to touch."""

from __future__ import annotations

import math

import pytest

from gpuadvisor.bench import cli as bench_cli
from gpuadvisor.bench.backends import NumpyBackend, ScipyBackend, TorchBackend
from gpuadvisor.bench.plan import Config, _series, configurations
from gpuadvisor.ops import formulas
from gpuadvisor.ops.registry import OPS, Bench, Family, Op, Run, VECTOR, benchable
from gpuadvisor.prediction.costs import op_cost
from gpuadvisor.prediction.hardware import resolve_cpu, resolve_gpu
from gpuadvisor.prediction.predictor import predict
from gpuadvisor.prediction.sweep import sweep



def example(entry: Op) -> tuple[list[tuple[int, ...]], str | None]:
    """Operand shapes at a small size of the op's own sweep series, and an expression for expr."""
    shapes = entry.sweep.shapes(entry.sweep.sizes[2])
    return shapes, "sin(x) * x" if entry.family is Family.EXPRESSION else None


@pytest.mark.parametrize("name", list(OPS))
def test_every_op_is_costed_and_predicted(name: str) -> None:
    shapes, expression = example(OPS[name])
    cost = op_cost(name, shapes, expression=expression)
    assert cost.op == name and cost.memory_bytes > 0 and cost.kernels >= 1
    for library in ("numpy", "torch"):
        result = predict(name, shapes, gpu="h100-sxm", cpu="laptop", expression=expression, library=library)
        assert math.isfinite(result.speedup) and result.cpu_seconds > 0 and result.gpu_seconds > 0


def test_every_op_is_listed_by_predict(cli) -> None:
    listed = cli("predict", "--list-ops").stdout.splitlines()
    assert [line.split()[0] for line in listed] == list(OPS)
    assert all(OPS[line.split()[0]].description in line for line in listed)
    assert "--list-ops" in cli("predict", "--help").stdout


@pytest.mark.parametrize("name", list(OPS))
def test_every_op_sweeps(name: str) -> None:
    expression = "sin(x) * x" if OPS[name].family is Family.EXPRESSION else None
    result = sweep(name, "float32", resolve_gpu("h100-sxm"), resolve_cpu("laptop"), expression=expression)
    assert result.sizes == list(OPS[name].sweep.sizes) and len(result.predictions) == len(result.sizes)


@pytest.mark.parametrize("name", list(OPS))
def test_every_op_is_planned_for_bench_or_marked_not_benchable(name: str) -> None:
    entry = OPS[name]
    if entry.bench is None:  # measured in published rows only
        assert name not in bench_cli.ALL_OPS
        return
    assert name in bench_cli.ALL_OPS
    assert {run.series for run in entry.bench.runs} <= set(_series(quick=True))
    plan = list(configurations(["float32"], {name}, quick=True, gpu=False))
    assert plan and all(config.op == name for config in plan)
    pytest.importorskip("torch")  # an op only PyTorch measures needs its backend (CI installs the CPU build)
    backends = [NumpyBackend(), ScipyBackend(), TorchBackend("cpu")]
    assert any(backend.supports(config) for backend in backends for config in plan)


def test_the_harness_runs_every_op_the_plan_holds_on_the_cpu() -> None:
    pytest.importorskip("torch")
    backends = [NumpyBackend(), ScipyBackend(), TorchBackend("cpu")]
    measured = set()
    for config in configurations(["float32"], None, quick=True, gpu=False):
        for backend in backends:
            work = backend.prepare(config)
            if work is not None:
                work()
                measured.add(config.op)
    assert measured == {entry.name for entry in benchable()}


def test_plan_order_follows_bench_priority() -> None:
    first_seen: list[str] = []
    for config in configurations(["float32"], None, quick=True, gpu=False):
        if config.op not in first_seen:
            first_seen.append(config.op)
    assert first_seen == [entry.name for entry in benchable()]


@pytest.fixture
def fake_op(monkeypatch: pytest.MonkeyPatch) -> Op:
    """A new op added to the registry only: negate, measured on the vector series."""
    entry = Op(
        name="negate", description="elementwise -x", family=Family.ELEMENTWISE, cost=formulas.transcendental, sweep=VECTOR,
        bench=Bench(priority=3, runs=(Run("vector"),), function=lambda xp: xp.negative),
    )
    monkeypatch.setitem(OPS, entry.name, entry)
    return entry


def test_an_op_added_to_the_registry_alone_is_predictable_end_to_end(fake_op: Op, cli) -> None:
    assert op_cost("negate", [(1000,)]).flops > 0
    result = predict("negate", [(1 << 20,)], gpu="h100-sxm", cpu="laptop")
    assert math.isfinite(result.speedup) and result.gpu_seconds > 0
    assert "negate" in cli("predict", "--list-ops").stdout
    assert cli("predict", "negate", "--shape", "1000000", "--cpu", "laptop").exit_code == 0
    assert sweep("negate", "float32", resolve_gpu("h100-sxm"), resolve_cpu("laptop")).sizes == list(VECTOR.sizes)
    plan = list(configurations(["float32"], {"negate"}, quick=True, gpu=False))
    assert plan == [Config("negate", shapes, "float32") for shapes in _series(quick=True)["vector"]]
    work = NumpyBackend().prepare(plan[0])
    assert work is not None and work().shape == plan[0].shapes[0]


def test_the_crossover_is_where_the_gpu_wins_from_there_on() -> None:
    """A size where the GPU wins, followed by one where it loses again (a tile-size step), is no
    crossover: the crossover is the smallest size from which every larger one wins."""
    from gpuadvisor.prediction.sweep import _first_win

    assert _first_win([1, 2, 3, 4, 5], [0.5, 1.2, 0.9, 1.5, 3.0]) == 4
    assert _first_win([1, 2, 3], [0.2, 0.5, 0.9]) is None
    assert _first_win([1, 2, 3], [0.8, 1.0, 1.4]) == 2
