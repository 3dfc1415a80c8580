"""More of the issue's must-flag / must-stay-silent cases, on realistic snippets."""

from __future__ import annotations

import textwrap

import pytest

from gpuadvisor import check_source


def rules_of(code: str) -> list[tuple[str, int]]:
    return [(f.rule, f.line) for f in check_source(textwrap.dedent(code).lstrip("\n"), ignore="GPU7")]


SILENT = {
    "cuda events with a synchronize": """
        import torch
        x = torch.randn(4096, 4096, device="cuda")
        x @ x
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y = x @ x
        end.record()
        torch.cuda.synchronize()
        print(start.elapsed_time(end), "ms")
    """,
    "cupyx profiler benchmark": """
        import cupy as cp
        from cupyx.profiler import benchmark
        x = cp.random.rand(1 << 24)
        print(benchmark(cp.sqrt, (x,), n_repeat=20))
    """,
    "region ending in .cpu()": """
        import time
        import torch
        x = torch.randn(2048, 2048, device="cuda")
        x @ x
        t0 = time.perf_counter()
        y = (x @ x).cpu()
        print(time.perf_counter() - t0)
    """,
    "threads driving GPU work": """
        import threading
        import torch

        def worker(stream_id):
            x = torch.randn(1024, 1024, device="cuda")
            for _ in range(100):
                x = x @ x

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    """,
    "threads sleeping and reading queues": """
        import queue
        import threading
        import time

        def consumer(q):
            total = 0
            while True:
                item = q.get()
                total += item * 2
                time.sleep(0.01)

        threading.Thread(target=consumer, args=(queue.Queue(),)).start()
    """,
    "env var set before import in a launcher": """
        import os
        os.putenv("OMP_NUM_THREADS", "1")
        os.environ["MKL_NUM_THREADS"] = "1"
        import torch
    """,
    "gpu copy of each file read in the loop": """
        from numba import cuda
        import numpy as np
        for name in files:
            d_frame = cuda.to_device(np.load(name))
    """,
    "sync once per epoch of an epoch loop": """
        import torch
        w = torch.randn(512, device="cuda")
        for epoch in range(100):
            for batch in loader:
                w = w - 0.1 * batch.cuda()
            print(w.norm().item())
    """,
    "metadata reads and CPU tensors in loops": """
        import torch
        x = torch.randn(64, 64, device="cuda")
        cpu = torch.zeros(10)
        for i in range(10):
            n = x.size(0) + x.numel() + len(x) + x.dim()
            if x.is_cuda and x.device.type == "cuda":
                cpu[i] = float(cpu.sum())
    """,
    "a trainer whose self.device is the CPU": """
        import torch

        class Trainer:
            def __init__(self, model):
                self.model = model
                self.device = torch.device("cpu")

            def fit(self, loader):
                for x, y in loader:
                    x, y = x.to(self.device), y.to(self.device)
                    loss = torch.nn.functional.mse_loss(self.model(x), y)
                    loss.backward()
                    print(loss.item())
    """,
}

FLAGGED = {
    "a timed helper called once from a driver that holds a loop times what the driver hands it": (
        """
        import time
        import torch

        def bench(x):
            start = time.perf_counter()
            y = x @ x
            print("took", time.perf_counter() - start)

        def main(sizes):
            x = torch.randn(4096, 4096, device="cuda")
            for size in sizes:
                print(size)
            bench(x)
        """,
        [("GPU401", 7), ("GPU402", 7)],
    ),
    "what a helper run once returns from a GPU argument is on the GPU where the loop reads it": (
        """
        import torch

        def normalize(x):
            return x / x.norm()

        def main(loader):
            model = torch.nn.Linear(3, 3).cuda()
            scale = normalize(torch.ones(3, device="cuda"))
            for x in loader:
                out = model(x.cuda()) * scale
                if scale.sum() > 1:
                    print("big")
        """,
        [("GPU201", 11)],
    ),
    "a model built on the CPU and handed to accelerator.prepare reads its loss every step": (
        """
        import torch
        from accelerate import Accelerator
        accelerator = Accelerator()
        model = torch.nn.Linear(16, 2)
        optimizer = torch.optim.AdamW(model.parameters())
        model, optimizer = accelerator.prepare(model, optimizer)
        for x, y in loader:
            loss = criterion(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            print(loss.item())
        """,
        [("GPU201", 11)],
    ),
    "calling an array library's module object does not stop the file's findings": (
        """
        import torch
        x = torch(1)
        model = Net().cuda()
        for xb in loader:
            print(model(xb.cuda()).sum().item())
        """,
        [("GPU201", 5)],
    ),
    "the else branch reads the loss the if branch turned into a number": (
        """
        import torch
        def all_reduce(tensors):
            for t in tensors:
                torch.distributed.all_reduce(t)
            return tensors
        model = Net().cuda()
        for inputs, labels in loader:
            loss = criterion(model(inputs.cuda()), labels.cuda())
            loss.backward()
            optimizer.step()
            if detection:
                loss = loss.item()
            else:
                if world_size > 1:
                    [loss] = all_reduce([loss])
                loss = loss.item()
            meter.update(loss)
        """,
        [("GPU201", 12), ("GPU201", 16)],
    ),
    "moving the parts of a batch in an inner loop keeps the loop a step loop": (
        """
        import torch
        model = Net().cuda()
        for inputs, labels in loader:
            for i in range(len(inputs)):
                inputs[i] = inputs[i].cuda(non_blocking=True)
            loss = criterion(model(inputs), labels.cuda())
            loss.backward()
            optimizer.step()
            print(loss.item())
        """,
        [("GPU201", 9)],
    ),
    "numba to_device of the same array per iteration": (
        """
        from numba import cuda
        import numpy as np
        weights = np.ones(1024)
        for step in range(100):
            d_w = cuda.to_device(weights)
        """,
        [("GPU101", 5)],
    ),
    "multiprocessing.dummy pool for arithmetic": (
        """
        from multiprocessing.dummy import Pool

        def collatz(n):
            steps = 0
            while n != 1:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
            return steps

        with Pool(8) as pool:
            lengths = pool.map(collatz, range(1, 100_000))
        """,
        [("GPU501", 11)],
    ),
    "os.putenv after numpy": (
        """
        import os
        import numpy as np
        os.putenv("OPENBLAS_NUM_THREADS", "1")
        """,
        [("GPU502", 3)],
    ),
    "cupy .get() of an unchanged array per iteration": (
        """
        import cupy as cp
        centers = cp.random.rand(10, 3)
        for step in range(50):
            host_centers = centers.get()
            plot(host_centers, step)
        """,
        [("GPU101", 4)],
    ),
    "torch.tensor of constant data on the device in a loop": (
        """
        import torch
        for x in batches:
            scale = torch.tensor([0.5, 2.0, 1.0], device="cuda")
            out = x.cuda() * scale
        """,
        [("GPU101", 3)],
    ),
    "datetime.now around cupy work": (
        """
        from datetime import datetime
        import cupy as cp
        a = cp.random.rand(4096, 4096)
        a @ a
        begin = datetime.now()
        b = a @ a
        print(datetime.now() - begin)
        """,
        [("GPU401", 7)],
    ),
    "the sum of per-head GPU losses read every step": (
        """
        import torch
        import torch.nn.functional as F

        critic = Critic().cuda()
        for obs, targets in loader:
            qs = critic(obs.cuda())
            loss = sum(F.mse_loss(q, targets.cuda()) for q in qs)
            loss.backward()
            print(f"loss {loss.item():.3f}")
        """,
        [("GPU201", 9)],
    ),
    "a host copy accumulated after a counter's += in the same loop": (
        """
        import torch
        model = Net().cuda()
        seen, running = 0, 0.0
        for x, y in loader:
            seen += 1
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            running += loss.detach().cpu().numpy()
        """,
        [("GPU201", 8)],
    ),
    "a CUDA tensor class imported by name, built from a host draw per step": (
        """
        import numpy as np
        from torch.cuda import FloatTensor
        for step in range(1000):
            noise = FloatTensor(np.random.randn(64))
            out = model(noise)
        """,
        [("GPU102", 4)],
    ),
    "a list with a starred part copied to the GPU per iteration": (
        """
        import cupy as cp
        bounds = load_bounds()
        for step in range(100):
            limits = cp.asarray([*bounds, 1.0])
            out = step * limits
        """,
        [("GPU101", 4)],
    ),
    "per-pair reads of rows zipped from two GPU batches": (
        """
        import torch
        model = Net().cuda()
        for x, y in loader:
            outs = model(x.cuda())
            targets = y.cuda()
            for out, target in zip(outs, targets):
                print(out.sum().item(), float(target.max()))
        """,
        [("GPU201", 7), ("GPU201", 7)],
    ),
    "a Triton kernel of this file launched as kernel[grid](...) and timed without a synchronize": (
        """
        import time
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)

        x = torch.randn(1 << 24, device="cuda")
        out = torch.empty_like(x)
        grid = (triton.cdiv(x.numel(), 1024),)
        add_kernel[grid](x, x, out, x.numel(), BLOCK=1024)
        torch.cuda.synchronize()
        start = time.perf_counter()
        add_kernel[grid](x, x, out, x.numel(), BLOCK=1024)
        print(f"{(time.perf_counter() - start) * 1e3:.3f} ms")
        """,
        [("GPU401", 19)],
    ),
    "a legacy CUDA tensor class read on the host per step": (
        """
        import torch
        for step in range(100):
            x = torch.cuda.FloatTensor(64, 64)
            print(x.sum().item())
        """,
        [("GPU201", 4)],
    ),
    "a legacy CUDA tensor class through the usual `Tensor` alias": (
        """
        import torch
        Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
        for step in range(100):
            x = Tensor(64, 64)
            print(x.sum().item())
        """,
        [("GPU201", 5)],
    ),
    "an endless step counter with a start is a hot loop, not a handful of iterations": (
        """
        import itertools
        import torch

        model = torch.nn.Linear(10, 1).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = iter(loader)
        for step in itertools.count(1):
            x, y = next(batches)
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(step, loss.item())
        """,
        [("GPU201", 13)],
    ),
    "two reads on consecutive lines wait once, at the first": (
        """
        import torch

        model = torch.nn.Linear(10, 2).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            logits = model(x)
            classification = torch.nn.functional.cross_entropy(logits, y)
            penalty = logits.pow(2).mean()
            loss = classification + 0.01 * penalty
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            classification_value = classification.item()
            penalty_value = penalty.item()
        """,
        [("GPU201", 14)],
    ),
    "Lightning's self.device, never assigned in the file, is the GPU": (
        """
        import torch

        class LitModel(LightningModule):
            def training_step(self, batch, batch_idx):
                for i in range(100):
                    noise = torch.randn(64, 64).to(self.device)
                    print(noise.sum().item())
        """,
        [("GPU102", 6), ("GPU201", 7)],
    ),
    # Discriminator and generator steps take turns and each branch returns its loss as a
    # number: whichever way the test goes, every call of `update()` waits once (one finding
    # per branch).
    "a read in each branch of an if/else of a stepped function": (
        """
        import torch
        import torch.nn.functional as F

        class Adversarial(torch.nn.Module):
            def __init__(self, featurizer, classifier, discriminator, d_steps_per_g):
                super().__init__()
                self.featurizer, self.classifier, self.discriminator = featurizer, classifier, discriminator
                self.d_steps_per_g = d_steps_per_g
                self.update_count = 0
                self.disc_opt = torch.optim.Adam(discriminator.parameters())
                self.gen_opt = torch.optim.Adam(classifier.parameters())

            def update(self, x, y, domains):
                self.update_count += 1
                z = self.featurizer(x)
                disc_loss = F.cross_entropy(self.discriminator(z), domains)
                if self.update_count % (1 + self.d_steps_per_g) < self.d_steps_per_g:
                    self.disc_opt.zero_grad()
                    disc_loss.backward()
                    self.disc_opt.step()
                    return {"disc_loss": disc_loss.item()}
                else:
                    gen_loss = F.cross_entropy(self.classifier(z), y) - disc_loss
                    self.gen_opt.zero_grad()
                    gen_loss.backward()
                    self.gen_opt.step()
                    return {"gen_loss": gen_loss.item()}

        algorithm = Adversarial(featurizer, classifier, discriminator, 1).to("cuda")
        """,
        [("GPU201", 21), ("GPU201", 27)],
    ),
}


@pytest.mark.parametrize("code", [pytest.param(c, id=name) for name, c in SILENT.items()])
def test_stays_silent(code: str) -> None:
    assert rules_of(code) == []


@pytest.mark.parametrize(("code", "expected"), [pytest.param(c, e, id=name) for name, (c, e) in FLAGGED.items()])
def test_is_flagged(code: str, expected: list[tuple[str, int]]) -> None:
    assert rules_of(code) == expected


def test_module_parameters_are_not_gpu_arrays() -> None:
    code = """
    import torch
    gpu_module = module.cuda()
    params = tuple(gpu_module.parameters())
    grads = [g for g in gpu_module.parameters()]
    """
    assert rules_of(code) == []


def test_a_name_reassigned_from_itself_before_its_copy_leaves_the_file_analysed() -> None:
    """`noise = noise * 0.5` is its own last assignment: following a host fill back through it
    must stop (a hop limit) instead of recursing until the file is refused as too complex,
    which would also lose the finding of the second loop."""
    code = """
    import numpy as np
    import torch

    for step in range(1000):
        noise = np.random.randn(64)
        noise = noise * 0.5
        batch = torch.from_numpy(noise).cuda()

    for step in range(1000):
        fresh = np.random.randn(64)
        scaled = fresh * 0.5
        batch = torch.from_numpy(scaled).cuda()
    """
    assert ("GPU102", 12) in rules_of(code)


def test_a_data_sized_function_is_named_by_its_own_name() -> None:
    """`nonzero(mask)` imported from torch is named `nonzero()` in the message, as `torch.nonzero`
    and the method `.nonzero()` are."""
    code = """
    import torch
    from torch import nonzero
    model = Net().cuda()
    for x in loader:
        scores = model(x.cuda())
        keep = nonzero(scores > 0.5)
        boxes = scores[keep]
    """
    (finding,) = check_source(textwrap.dedent(code).lstrip("\n"), ignore="GPU7")
    assert (finding.rule, finding.line) == ("GPU201", 6)
    assert finding.message.startswith("a data-sized `nonzero()` (`nonzero(scores > 0.5)`)")


WARM_UP_SKIP = """
def benchmark_{number}(model, compile, num_samples):
    tokens = torch.randint(0, 32000, (1, 16), device="cuda")
    start = {first} if compile else {second}
    for i in range(start, num_samples):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        y = decode(model, tokens)
        if {skip_test}:
            continue
        torch.cuda.synchronize()
        print(f"{{y.size(-1) / (time.perf_counter() - t0):.02f}} tokens/sec")
"""


def test_a_warm_up_skipped_in_one_configuration_only_is_found_however_the_skip_is_written() -> None:
    """`start = -1 if compile else 0` and `if i == -1: continue`: the first sample is dropped when
    compiling only. Every comparison against every small bound, for both orders of the starts,
    one benchmark function each: GPU402 where Python's comparison drops the first sample of
    exactly one configuration."""
    code, expected = "import time\nimport torch\ndef decode(model, tokens):\n    return model(tokens).argmax(-1)\n", set()
    for first, second in ((-1, 0), (0, -1)):
        for comparison in ("==", "!=", "<", "<=", ">", ">="):
            for bound in (-1, 0, 1):
                skip_test = f"i {comparison} {bound}"
                dropped = [eval(f"{value} {comparison} {bound}") for value in (first, second)]  # noqa: S307
                if dropped.count(True) == 1:
                    expected.add((code.count("\n") + 12, f"start = {first} if compile else {second}; if {skip_test}"))
                code += WARM_UP_SKIP.format(number=len(code), first=first, second=second, skip_test=skip_test)
    lines = code.splitlines()
    found = {
        (f.line, f"{lines[f.line - 9].strip()}; {lines[f.line - 4].strip().rstrip(':')}")
        for f in check_source(code, select="GPU402")
        if f.message.startswith("The warm-up iteration of this timing loop is skipped only when `compile` holds")
    }
    assert found == expected


@pytest.mark.parametrize("other_skip", ["i == profiled_step", "i > len(prompts)", "i == num_samples - 1", "i in profiled_steps", "verbose"])
def test_a_skip_against_a_value_the_rule_cannot_read_does_not_pass_for_the_warm_up_skip(other_skip: str) -> None:
    """Besides `if i == -1: continue`, the loop leaves out a sample compared against a name or an
    expression, or on a flag: which sample that is is not known, so it is not taken for a skip of
    the first one (which would silence the finding in both configurations)."""
    code = f"""
    import time
    import torch
    def decode(model, tokens):
        return model(tokens).argmax(-1)
    def benchmark(model, compile, num_samples, profiled_step, profiled_steps, prompts, verbose):
        tokens = torch.randint(0, 32000, (1, 16), device="cuda")
        start = -1 if compile else 0
        for i in range(start, num_samples):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = decode(model, tokens)
            if i == -1:
                continue
            if {other_skip}:
                continue
            torch.cuda.synchronize()
            print(f"{{y.size(-1) / (time.perf_counter() - t0):.02f}} tokens/sec")
    """
    found = check_source(textwrap.dedent(code).lstrip("\n"), select="GPU402")
    assert [(f.line, f.message.startswith("The warm-up iteration of this timing loop is skipped only when `compile` holds")) for f in found] == [(17, True)]


ANNOTATED_FORWARD = """
import typing
from typing import Optional
import torch
from torch import nn, Tensor
class GPT(nn.Module):
    def __init__(self, n_layer):
        super().__init__()
        self.blocks = nn.ModuleList(Attention() for _ in range(n_layer))
    def forward(self, x, input_pos):
        for block in self.blocks:
            x = block(x, input_pos)
        return x
class Attention(nn.Module):
    def forward(self, x: torch.Tensor, input_pos: {annotation}) -> torch.Tensor:
        if input_pos[-1] >= 4096:
            input_pos = input_pos - 1
        return x
model = GPT(12).cuda()
"""


@pytest.mark.parametrize(
    ("annotation", "a_tensor"),
    [
        ("torch.Tensor", True), ("Tensor", True), ("Optional[torch.Tensor]", True), ("typing.Optional[Tensor]", True),
        ("torch.Tensor | None", True), ("None | torch.Tensor", True),
        ("int", False), ("Optional[int]", False), ("list[torch.Tensor]", False), ("torch.Tensor | int", False),
        ("Optional[torch.Tensor, int]", False),
    ],
)
def test_an_input_annotated_as_a_tensor_of_a_module_on_the_gpu_is_a_gpu_tensor(annotation: str, a_tensor: bool) -> None:
    """Every way of writing "a tensor, or None" in a submodule's `forward`: its input is then on
    the GPU of the model, and reading it in an `if` waits for the GPU (GPU201 at the `if`)."""
    code = ANNOTATED_FORWARD.format(annotation=annotation).lstrip("\n")
    assert [f.line for f in check_source(code, select="GPU201")] == ([15] if a_tensor else [])


ADDED_SUBMODULE = """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, n_layer):
        super().__init__()
        for i in range(n_layer):
            {register}
    def forward(self, x):
        return x
class Block(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.max() > 1:
            x = x / x.max()
        return x
def main(device):
    model = Net(4).to(device)
"""


@pytest.mark.parametrize(
    ("register", "on_gpu"),
    [('self.add_module(f"block{i}", Block())', True), ('self.width = i', False)],
)
def test_a_submodule_added_by_name_moves_to_the_gpu_with_its_model(register: str, on_gpu: bool) -> None:
    """`self.add_module(name, Block())` makes Block part of the model: moving the model to a device
    chosen at run time runs Block's `forward` there, whose test of its input then waits (GPU201 at
    the `if`). The file never names CUDA, so only the move says where the modules run."""
    code = ADDED_SUBMODULE.format(register=register).lstrip("\n")
    assert [f.line for f in check_source(code, select="GPU201")] == ([12] if on_gpu else [])


SCALED_FILL = """
import math
import torch
def timestep_embedding(timesteps, dim, table):
    half = dim // 2
    scale = {scale}
    check_finite(scale)
    freqs = torch.exp(torch.arange(half) * -scale)
    return timesteps[:, None].float() * freqs.to(timesteps.device)[None]
"""


@pytest.mark.parametrize(
    ("scale", "reported"),
    [("math.log(10000) / (half - 1)", True), ("float(table)", True), ("10000.0 ** (1 / half)", True), ("lookup(table)", False), ("table.scale", False)],
)
def test_a_host_fill_scaled_by_a_number_is_still_a_fill_and_one_scaled_by_data_is_not(scale: str, reported: bool) -> None:
    """`torch.arange(half) * -scale` moved to the GPU: a GPU102 when `scale` is a number (made
    from constants and sizes), none when it is whatever a helper returns, even one the function
    hands to another call (`check_finite(scale)` does not make it a size)."""
    code = SCALED_FILL.format(scale=scale).lstrip("\n")
    assert [f.line for f in check_source(code, select="GPU102")] == ([8] if reported else [])


#: Loops timed as a whole by one clock read before and one after, and whether GPU401 reports the
#: closing read: a job (a pass over data, epochs, a stretch of optimizer steps, a `while` loop
#: drawing batches with `next()`) is a whole-run log whose few unfinished kernels are a rounding
#: error; repetitions of an operation (`range(10)`, indices, a literal step, a `while` loop that
#: draws nothing) are a measurement, and the last kernels they queue are still running.
TIMED_LOOPS = {
    "while step < steps:\n    x, y = next(data_iterator)": False,
    "while step < steps:\n    x, y = batch": True,
    "for epoch in range(n):": False,
    "for _ in range(args.num_epochs):": False,
    "for start in range(0, n, args.batch_size):": False,
    "for start in range(0, n, 64):": True,
    "for _ in range(10):": True,
    "for i in range(n):": True,
    "for i in range(n):\n    optimizer.step()": False,
    "for x, y in loader:": False,
    "for i, (x, y) in enumerate(loader):": False,
}
TIMED_LOOP = """
def timed_{number}(optimizer, loader, data_iterator, batch, args, n, steps):
    w = torch.randn(64, 64, device="cuda")
    w = w @ w
    step = 0
    start = time.time()
{loop}
        w = w @ w
        step += 1
    print("took", time.time() - start)
"""


def test_a_clock_read_after_a_job_loop_is_a_log_and_after_repetitions_a_measurement() -> None:
    code, loop_of_line = "import time\nimport torch\n", {}
    for number, loop in enumerate(TIMED_LOOPS):
        code += TIMED_LOOP.format(number=number, loop=textwrap.indent(loop, "    "))
        loop_of_line[code.count("\n")] = loop
    reported = [loop_of_line.get(f.line) for f in check_source(code, select="GPU401")]
    assert reported == [loop for loop, measured in TIMED_LOOPS.items() if measured]


FIELD_OF_A_HELD_MODULE = """
import torch

class Trainer:
    def __init__(self, model):
        self.model = model.cuda()
        self.model.{field} = {made}

    def fit(self, loader):
        for obs in loader:
            print(self.model.{field}.item())
"""


@pytest.mark.parametrize(("made", "reported"), [("torch.zeros(1)", False), ("torch.zeros(1, device='cuda')", True)])
def test_a_field_set_on_a_module_after_its_move_is_where_it_was_made(made: str, reported: bool) -> None:
    """`self.model.steps = torch.zeros(1)` after `self.model = model.cuda()`: a tensor assigned to
    a module's attribute stays where it was made (only `.cuda()`/`.to()` move it), so reading it
    every step waits for the GPU only when it was made there (GPU201 at the read)."""
    code = FIELD_OF_A_HELD_MODULE.format(field="steps", made=made).lstrip("\n")
    assert [f.line for f in check_source(code, select="GPU201")] == ([10] if reported else [])


STEP_CALLING_A_LOOP = """
import torch

def {helper}(model, val_loader):
    for {target} in {iterable}:
        {body}

def train(model, optimizer, loader, val_loader):
    model.cuda()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {helper}(model, val_loader)
        print(loss.item())
"""


@pytest.mark.parametrize(
    ("helper", "target", "iterable", "body", "reported"),
    [
        ("renormalize", "name, p", "model.named_parameters()", "p.data.div_(p.data.norm())", True),
        ("validate", "x, y", "val_loader", "model(x.cuda())", False),
    ],
)
def test_a_step_read_is_amortised_only_by_a_called_pass_over_data(helper: str, target: str, iterable: str, body: str, reported: bool) -> None:
    """A step that calls a function looping over a data set (`validate(model, val_loader)`) runs a
    whole pass per iteration, next to which its `loss.item()` costs nothing; one that calls a loop
    over the model's parameters still waits for the GPU on every step (GPU201 at the read)."""
    code = STEP_CALLING_A_LOOP.format(helper=helper, target=target, iterable=iterable, body=body).lstrip("\n")
    assert [f.line for f in check_source(code, select="GPU201")] == ([15] if reported else [])


@pytest.mark.parametrize(
    "call",
    ["x.repeat_interleave(counts)", "torch.repeat_interleave(x, counts)", "x.repeat_interleave(repeats=counts)"],
)
def test_repeat_interleave_by_gpu_counts_waits_in_either_form(call: str) -> None:
    """The counts are the method's first argument and the function's second: either way, GPU
    counts make the host read them to size the output (mutation seed 4421 moved the position)."""
    code = f"""
import torch
x = torch.randn(1000, 16, device="cuda")
for step in range(100):
    counts = torch.randint(1, 4, (1000,), device="cuda")
    y = {call}
    x = x + y[:1000]
"""
    found = [f for f in check_source(code.lstrip("\n"), select="GPU201")]
    assert [f.line for f in found] == [5]


def test_repeat_interleave_by_host_counts_stays_silent() -> None:
    code = """
import torch
x = torch.randn(1000, 16, device="cuda")
for step in range(100):
    y = torch.repeat_interleave(x, 2)
    x = x + y[:1000]
"""
    assert check_source(code.lstrip("\n"), select="GPU201") == []
