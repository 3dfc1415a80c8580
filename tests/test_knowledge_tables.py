"""Knowledge-table entries read by the value and timing facts, each in a realistic snippet.

Survivors of the mutation runs kept landing in the value facts (`facts/evaluate.py`: which
device a model or tensor is on) and in the timing rules (`rules/timing*.py`: what a clock read
measures, what makes it wait). These tests are generated from the tables of
`facts/knowledge.py`, so a new entry is tested the day it is added, and each table has a control
that is not in it: a name the table does not hold must not act like one it does. Every case is a
function of its own and a table is checked as one file.
"""

from __future__ import annotations

from gpuadvisor import check_source
from gpuadvisor.analysis.facts import knowledge as kb

MEASURED = """
def measure_{number}(n):
    w = torch.randn(64, 64, device="cuda")
    w = w @ w
    start = {clock}()
    for _ in range(n):
        w = w @ w
    {wait}
    print("took", {clock}() - start)
"""
TIMING_IMPORTS = "import datetime\nimport time\nimport timeit\nimport cupy\nimport cupyx.scipy.sparse\nimport numba.cuda\nimport torch\nimport warp\n"

#: How each wait of `kb.EXPLICIT_SYNCS` is written in a program.
WAITS = {
    "torch.cuda.synchronize": "torch.cuda.synchronize()",
    "torch.cuda.current_stream.synchronize": "torch.cuda.current_stream().synchronize()",
    "torch.cuda.default_stream.synchronize": "torch.cuda.default_stream().synchronize()",
    "torch.save": "torch.save(w, 'w.pt')",
    "cupy.cuda.runtime.deviceSynchronize": "cupy.cuda.runtime.deviceSynchronize()",
    "cupy.cuda.Device.synchronize": "cupy.cuda.Device().synchronize()",
    "cupy.cuda.get_current_stream.synchronize": "cupy.cuda.get_current_stream().synchronize()",
    "cupy.asnumpy": "host = cupy.asnumpy(w)",
    "cupyx.scipy.sparse.csr_matrix.get": "host = cupyx.scipy.sparse.csr_matrix(w).get()",
    "numba.cuda.synchronize": "numba.cuda.synchronize()",
    "warp.synchronize": "warp.synchronize()",
    "warp.synchronize_device": "warp.synchronize_device()",
    "warp.synchronize_stream": "warp.synchronize_stream(warp.get_stream())",
    "warp.synchronize_event": "warp.synchronize_event(done)",
}


def _measurements(cases: list[tuple[str, str]]) -> tuple[str, dict[int, tuple[str, str]]]:
    """One timed loop of matrix products per (clock, wait), with the line of its closing read."""
    code, closing = TIMING_IMPORTS, {}
    for number, (clock, wait) in enumerate(cases):
        code += MEASURED.format(number=number, clock=clock, wait=wait or "pass")
        closing[code.count("\n")] = (clock, wait)
    return code, closing


def test_every_clock_read_after_unfinished_gpu_work_is_reported_and_after_a_wait_is_not() -> None:
    """GPU401 at the closing read of every clock the tables name (`time.perf_counter`,
    `datetime.datetime.now`, `timeit.default_timer`, ...) when nothing waits for the products,
    none when `torch.cuda.synchronize()` comes first."""
    clocks = sorted(kb.CLOCKS)
    code, closing = _measurements([(clock, "") for clock in clocks] + [(clock, "torch.cuda.synchronize()") for clock in clocks])
    assert [closing[f.line] for f in check_source(code, select="GPU401")] == [(clock, "") for clock in clocks]


def test_every_wait_the_tables_name_ends_the_gpu_work_before_the_clock_is_read() -> None:
    assert sorted(WAITS) == sorted(kb.EXPLICIT_SYNCS)
    code, closing = _measurements([("time.perf_counter", wait) for wait in WAITS.values()])
    assert [closing[f.line] for f in check_source(code, select="GPU401")] == []


def test_a_clock_the_tables_do_not_name_is_no_clock() -> None:
    code, _ = _measurements([("time.sleep", ""), ("datetime.date.today", "")])
    assert [(f.line, f.message) for f in check_source(code, select="GPU401")] == []


ACCELERATED_TRAINING = """
def train_{number}(model, {owner}, optimizer, loader):
    model = {owner}.{method}(model)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())
"""


def _accelerated(owners: list[str]) -> tuple[str, dict[int, tuple[str, str]]]:
    code, reads = "import torch\n", {}
    for owner in owners:
        for method in sorted(kb.ACCELERATOR_SETUP_METHODS):
            code += ACCELERATED_TRAINING.format(number=len(reads), owner=owner, method=method)
            reads[code.count("\n")] = (owner, method)
    return code, reads


def test_a_model_handed_to_any_accelerator_setup_trains_on_the_gpu() -> None:
    """`model = fabric.setup(model)`, `accelerator.prepare(model)`, ...: the framework moves the
    model to its GPU, so its loss read every step is a GPU201; the same call on an object that is
    no accelerator (`trainer.setup(model)`) moves nothing the analysis knows of."""
    code, reads = _accelerated(sorted(kb.ACCELERATOR_NAMES))
    assert [reads[f.line] for f in check_source(code, select="GPU201")] == list(reads.values())
    code, _ = _accelerated(["trainer", "helper"])
    assert [(f.line, f.message) for f in check_source(code, select="GPU201")] == []


INDEXED_DEVICE = """
def train_{number}(model, optimizer, loader, {name}):
    model.to({name})
    for x, y in loader:
        x, y = x.to({name}), y.to({name})
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())
"""


def test_a_device_given_by_its_gpu_index_is_the_gpu() -> None:
    """`.to(local_rank)`, `.to(gpu_id)`: a device index names a GPU, so the loss read every step
    is a GPU201; `.to(verbose)` or `.to(count)` names no device the analysis knows."""
    code, reads = "import torch\n", {}
    for name in [*sorted(kb.DEVICE_INDEX_NAMES), "verbose", "count"]:
        code += INDEXED_DEVICE.format(number=len(reads), name=name)
        reads[code.count("\n")] = name
    assert [reads[f.line] for f in check_source(code, select="GPU201")] == sorted(kb.DEVICE_INDEX_NAMES)
