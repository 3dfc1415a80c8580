"""The shared walk: aliases, devices, loops and helpers as users write them, seen through findings."""

from __future__ import annotations

import textwrap

from gpuadvisor import check_source
from gpuadvisor.analysis.facts.values import Device
from gpuadvisor.analysis.facts.walker import gather_facts
import libcst as cst


def rules_of(code: str) -> list[tuple[str, int]]:
    return [(f.rule, f.line) for f in check_source(textwrap.dedent(code).lstrip("\n"), ignore="GPU7")]


def test_import_aliases_are_resolved() -> None:
    code = """
    import torch as th
    from cupy import asarray
    from time import perf_counter as clock
    import numpy as np

    x = th.randn(1000, 1000, device="cuda")
    k = np.ones(3)
    x @ x
    th.cuda.synchronize()
    t0 = clock()
    y = x @ x
    t1 = clock()
    print(t1 - t0)
    for i in range(10):
        g = asarray(k)
    """
    assert rules_of(code) == [("GPU401", 12), ("GPU101", 15)]


def test_maybe_gpu_device_counts_as_gpu() -> None:
    code = """
    import torch
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    w = torch.ones(10, 10).to(device)
    for step in range(100):
        w = w * 0.9
        print(w.sum())
    """
    assert rules_of(code) == [("GPU201", 6)]  # (the one-off host fill on line 3 is not worth a note)


def test_device_parameter_and_model_calls_in_a_function() -> None:
    code = """
    def train(model, loader, optimizer, criterion, device):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            history.append(loss.item())
    """
    assert rules_of(code) == [("GPU201", 7)]


def test_unknown_values_stay_silent() -> None:
    code = """
    import torch

    def report(metrics, **kwargs):
        for name, value in metrics.items():
            print(name, float(value), kwargs)
            if value:
                pass
    """
    assert rules_of(code) == []


def test_cpu_tensors_are_not_gpu_work() -> None:
    code = """
    import time
    import torch
    a = torch.randn(2048, 2048)
    for i in range(100):
        print(a.sum().item())
    start = time.perf_counter()
    b = a @ a
    print(time.perf_counter() - start)
    """
    assert rules_of(code) == []


def test_local_sync_helper_counts_as_synchronisation() -> None:
    code = """
    import time
    import cupy as cp

    def wait_for_gpu():
        cp.cuda.Device().synchronize()

    x = cp.random.rand(4096, 4096)
    for _ in range(3):
        x @ x
    wait_for_gpu()
    t0 = time.perf_counter()
    y = x @ x
    wait_for_gpu()
    print(time.perf_counter() - t0)
    """
    assert rules_of(code) == []


def test_local_function_doing_gpu_work_is_seen_in_a_timed_region() -> None:
    code = """
    import time
    import torch

    def step(x):
        return torch.relu(x @ x)

    x = torch.randn(4096, 4096, device="cuda")
    step(x)
    t0 = time.time()
    step(x)
    t1 = time.time()
    print("step:", t1 - t0)
    """
    assert rules_of(code) == [("GPU401", 11)]


def test_self_attributes_carry_devices_across_methods() -> None:
    code = """
    import torch

    class Scorer:
        def __init__(self):
            self.centroids = torch.randn(100, 64, device="cuda")

        def nearest(self, queries):
            out = []
            for q in queries:
                d = ((self.centroids - q) ** 2).sum(dim=1)
                out.append(int(d.argmin()))
            return out
    """
    assert rules_of(code) == [("GPU201", 11)]


def test_loop_varying_names_include_body_assignments_and_mutations() -> None:
    module = cst.parse_module(
        textwrap.dedent(
            """
            for epoch in range(3):
                batch = next(it)
                cache.append(batch)
                total += 1
            """
        )
    )
    facts = gather_facts(module)
    (loop,) = facts.loops
    assert {"epoch", "batch", "cache", "total"} <= loop.varying


def test_device_values_are_tracked_through_assignments() -> None:
    module = cst.parse_module("import torch\nd = 'cuda' if ok else 'cpu'\nx = torch.zeros(3, device=d)\ny = x.cpu()\nz = y + 1\n")
    facts = gather_facts(module)
    values = {stmt.body[0].targets[0].target.value: facts.value(stmt.body[0].value) for stmt in module.body[1:]}
    assert values["x"].device is Device.MAYBE_GPU
    assert values["y"].device is Device.HOST
    assert values["z"].device is Device.HOST


def test_numba_kernel_launch_is_gpu_work() -> None:
    code = """
    import time
    from numba import cuda

    @cuda.jit
    def scale(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    d_x = cuda.to_device(host)
    scale[64, 256](d_x)
    cuda.synchronize()
    t0 = time.perf_counter()
    scale[64, 256](d_x)
    t1 = time.perf_counter()
    elapsed = t1 - t0
    """
    assert rules_of(code) == [("GPU401", 15)]


def test_python_312_syntax_and_match_are_analysed() -> None:
    code = """
    import torch
    type Batch = list[torch.Tensor]

    def first[T](items: list[T]) -> T:
        return items[0]

    w = torch.ones(4, device="cuda")
    for cmd in commands:
        match cmd:
            case "norm":
                print(w.norm().item())
    """
    assert rules_of(code) == [("GPU201", 11)]


def test_the_shapes_check_reads_are_those_that_took_the_most_time_then_ran_most_often() -> None:
    """`check --shapes` analyses each line with one recorded signature: the most time-consuming;
    among equal times (a line too quick for the clock records 0 s for every way it ran), the
    most frequent."""
    from gpuadvisor.analysis.facts.observations import LineRecord, Observation, most_common

    small, large, huge = ((("x", Observation(shape=(n,), dtype="float32", library="numpy")),) for n in (8, 4096, 10**6))
    record = LineRecord(hits=1010, seconds=0.0, signatures={small: [10.0, 0.0], large: [1000.0, 0.0]})
    assert most_common(record) == large
    record.signatures[huge] = [1.0, 0.5]
    assert most_common(record) == huge
    assert most_common(LineRecord()) is None


def _idle_reads(code: str) -> list[str]:
    from gpuadvisor.analysis.facts.idle import reads_after_a_device_wait

    facts = gather_facts(cst.parse_module(textwrap.dedent(code)))
    idle = reads_after_a_device_wait(facts)
    return [facts.code(sync.node) for sync in facts.syncs if id(sync.node) in idle]


_TIMED_STEP = """
import time
import torch
model = torch.nn.Linear(8, 8).cuda()
for step in range(100):
    loss = model(torch.randn(4, 8, device="cuda")).sum()
    {between}
    t1 = time.time()
    print(loss.item())
"""


def test_a_read_after_a_device_wide_wait_finds_the_gpu_idle() -> None:
    assert _idle_reads(_TIMED_STEP.format(between="torch.cuda.synchronize()")) == ["loss.item()"]
    # an `if` that only picks the device to wait for is the wait
    assert _idle_reads(_TIMED_STEP.format(between='if dev == "cuda":\n        torch.cuda.synchronize()')) == ["loss.item()"]


def test_a_wait_that_may_not_run_or_work_after_it_leaves_the_read_a_wait() -> None:
    sometimes = 'if step % 10 == 0:\n        torch.cuda.synchronize()\n        print("tick")'
    assert _idle_reads(_TIMED_STEP.format(between=sometimes)) == []
    queued = "torch.cuda.synchronize()\n    loss = loss + model(torch.randn(4, 8, device='cuda')).sum()"
    assert _idle_reads(_TIMED_STEP.format(between=queued)) == []
    unknown = "torch.cuda.synchronize()\n    meter.update(loss)"  # a call we cannot see may launch GPU work
    assert _idle_reads(_TIMED_STEP.format(between=unknown)) == []
    sampled = "if step % 10 == 0:\n        torch.cuda.synchronize()"  # a wait on one step in ten
    assert _idle_reads(_TIMED_STEP.format(between=sampled)) == []
    switched = "if trace:\n        torch.cuda.synchronize()\n        traced = step"  # not only a wait: skipped when off
    assert _idle_reads(_TIMED_STEP.format(between=switched)) == []


def test_a_project_harness_is_handed_work_only_when_given_a_function_or_a_library_call() -> None:
    """`bench(step, a)` hands the harness a function of this file to repeat; `bench(a)` hands it
    an array, which is data, not work (mutation seed 4421: `in` turned `not in`)."""
    from gpuadvisor.analysis.facts.measurement import hands_over_work

    code = textwrap.dedent(
        """
        import torch
        def step(a):
            return a @ a
        a = torch.randn(64, 64, device="cuda")
        bench(step, a)
        bench(a)
        bench(torch.mm, a, a)
        """
    )
    facts = gather_facts(cst.parse_module(code))
    handed = {facts.code(call.node): hands_over_work(call, facts) for call in facts.calls if facts.code(call.node).startswith("bench(")}
    assert handed == {"bench(step, a)": True, "bench(a)": False, "bench(torch.mm, a, a)": True}


def test_a_read_after_another_read_of_the_step_finds_the_gpu_idle() -> None:
    """`print(f"{loss.item()}")`, then `wandb.log({"loss": loss.item()})` under a rank test: the
    first read waited for the step, so the second copies a finished scalar (but not after a call
    that may compute with a GPU tensor)."""
    step = """
import torch
model = torch.nn.Linear(8, 1).cuda()
for step in range(100):
    loss = model(torch.randn(4, 8, device="cuda")).sum()
    print(f"loss {{loss.item()}}")
    {between}
    if is_main_process:
        wandb.log(dict(loss=loss.item()))
"""
    assert _idle_reads(step.format(between="names = list(parts.items())")) == ["loss.item()"]
    assert _idle_reads(step.format(between="meter.update(loss)")) == []


def test_a_subclass_reads_its_fields_and_calls_its_methods_as_its_base_defines_them() -> None:
    """`range(self.n_restarts)` in a subclass sized by the base constructor's default (one
    restart), and `self.attack_single_run(...)` run by the base's definition."""
    code = textwrap.dedent(
        """
        class Attack:
            def __init__(self, model, n_restarts=1):
                self.n_restarts = n_restarts

            def attack_single_run(self, x):
                return x


        class Targeted(Attack):
            def perturb(self, x):
                for counter in range(self.n_restarts):
                    x = self.attack_single_run(x)
                return x
        """
    )
    facts = gather_facts(cst.parse_module(code))
    (loop,) = facts.loops
    assert loop.few_iterations
    called = [facts.function_called(event) for event in facts.functions["Targeted.perturb"].events]
    assert facts.functions["Attack.attack_single_run"] in called


def test_a_loop_over_a_dict_display_of_literal_keys_is_few_until_a_computed_key_joins() -> None:
    """`results = {"d1": ..., "rmse": ...}`: its keys are the ones the code names, in a
    comprehension over it too; `results[name] = ...` with a computed key may add any number."""
    code = textwrap.dedent(
        """
        import torch


        def summarize(names):
            results = {"d1": torch.zeros(()), "rmse": torch.zeros(())}
            shown = [value.item() for value in results.values()]
            for key, value in results.items():
                print(key, value)
            for name in names:
                results[name] = torch.zeros(())
            for key in results.keys():
                print(key)
            return shown
        """
    )
    facts = gather_facts(cst.parse_module(code))
    comprehension, named, extended, grown = facts.loops
    assert comprehension.few_iterations and named.few_iterations
    assert not extended.few_iterations and not grown.few_iterations
