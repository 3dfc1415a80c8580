"""GPU402: the first call of some GPU work is inside a timed region that measures that work.

Only measurements of GPU work count: a region repeated to average it, or one reported as the
time of an operation. A model-load, set-up or compilation time printed as such is meant to
include the first call, and a per-epoch log is a progress line, not a benchmark.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from itertools import chain

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.call_sites import calls_of
from gpuadvisor.analysis.facts.module_facts import Event, FunctionFacts, ModuleFacts, Runs
from gpuadvisor.analysis.facts.imports import literal_integer
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import last_assignment, short
from gpuadvisor.analysis.rules.common import launches_gpu
from gpuadvisor.analysis.rules.timing import TIMING_PREFILTER, TimedRegion, event_regions, reported_as_setup, timed_regions, times_a_job
from gpuadvisor.analysis.facts.traverse import child_nodes

#: The comparisons a warm-up skip is written with (`if i == -1: continue`), as Python evaluates them.
_COMPARISONS: dict[type[cst.BaseCompOp], Callable[[int, int], bool]] = {
    cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge,
}


#: Methods with no first call worth paying for: views launch nothing, in-place fills a memset.
_NOTHING_TO_WARM = kb.VIEW_METHODS | kb.FILL_IN_PLACE_METHODS


def _cold_work(region: TimedRegion, facts: ModuleFacts) -> Event | None:
    """The timed GPU work when none of it ran before the region, else None. A view
    (`x.unsqueeze(2)`) launches nothing and an in-place fill (`cache.zero_()`) a memset, so
    neither has a first call worth paying for."""
    work = [event for event in region.inside if launches_gpu(event, facts) and event.key.lstrip(".") not in _NOTHING_TO_WARM]
    if any(call.qualname in kb.WARP_MODULE_LOADERS for call in facts.calls):
        work = [event for event in work if event.key.split(":", 1)[0] not in kb.WARP_LAUNCHES]  # loaded up front
    if not work:
        return None
    if region.closing.ctx.loop is not None and region.closing.ctx.loop is region.opening.ctx.loop:
        return None  # repeated samples: the cold first one is diluted or discarded
    keys = {event.key for event in work}
    earlier = {event.key for event in region.scope.events[: region.start] if launches_gpu(event, facts)}
    if earlier & keys or _warmed_by_callers(region.scope, keys, facts):
        return None
    kernels = [event for event in work if _compiles_on_first_launch(event, facts)]
    if kernels:
        return kernels[0]  # compiling takes seconds: even a long loop does not hide it
    if times_a_job(region, facts):
        return None  # training epochs or a pass over a data set: one cold first step is a small part of it
    return work[-1]


def _warmed_by_callers(function: FunctionFacts, keys: set[str], facts: ModuleFacts) -> bool:
    """Every call of the timing function comes after its caller ran some of the same work
    (`for _ in range(WARMUPS): dist.all_reduce(mat)` and then `timed_allreduce(mat, ...)`)."""
    sites = calls_of(function, facts)
    return bool(sites) and all(
        keys & {event.key for event in scope.events[:index] if launches_gpu(event, facts)} for scope, index in sites
    )


def _warmup_only_sometimes(region: TimedRegion, facts: ModuleFacts) -> cst.BaseExpression | None:
    """`for i in range(start, n)` with `start = -1 if compile else 0` and `if i == -1: continue`:
    the warm-up sample is skipped in one configuration only; in the other the cold first sample
    is timed and kept. Returns the condition that decides, when that is what the loop does."""
    loop = region.closing.ctx.loop
    if loop is None or region.opening.ctx.loop is not loop or not isinstance(loop.node, cst.For):
        return None
    target = loop.node.target
    bounds = loop.node.iter
    if not isinstance(target, cst.Name) or not isinstance(bounds, cst.Call) or len(bounds.args) < 2:
        return None
    if not isinstance(bounds.func, cst.Name) or facts.imports.qualified_name(bounds.func) != "builtins.range":
        return None
    start = bounds.args[0].value
    if isinstance(start, cst.Name):
        start = last_assignment(start.value, loop.node, region.scope, facts) or start
    if not isinstance(start, cst.IfExp):
        return None
    first, second = literal_integer(start.body), literal_integer(start.orelse)
    if first is None or second is None:
        return None
    skipped = [value for value in (first, second) if _skips_iteration(loop.node, target.value, value)]
    return start.test if len(skipped) == 1 else None


def _skips_iteration(loop: cst.For, target: str, value: int) -> bool:
    """Does the loop body `continue` past the iteration where `target == value`?"""
    stack: list[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.If) and _holds(node.test, target, value) and _has_continue(node.body):
            return True
        if not isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
            stack.extend(child_nodes(node))
    return False


def _holds(test: cst.BaseExpression, target: str, value: int) -> bool:
    """`i == -1`, `i < 0`, `i != 0`... evaluated at `i = value` (a test against a name, or of
    several comparisons, is not understood: it is not taken for a skip of the first sample)."""
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == target):
        return False
    if len(test.comparisons) != 1:
        return False
    compare = _COMPARISONS.get(type(test.comparisons[0].operator))
    bound = literal_integer(test.comparisons[0].comparator)
    return compare is not None and bound is not None and compare(value, bound)


def _has_continue(body: cst.BaseSuite) -> bool:
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Continue):
            return True
        if not isinstance(node, (cst.For, cst.While, cst.FunctionDef)):
            stack.extend(child_nodes(node))
    return False


def _compiles_on_first_launch(event: Event, facts: ModuleFacts) -> bool:
    """A launch of a numba `@cuda.jit` kernel of this file: its first call compiles it."""
    kernel = facts.functions.get(event.key)
    return kernel is not None and kernel.cuda_kernel


class TimingWithoutWarmup(Rule):
    code = "GPU402"
    category = "timing-without-warmup"
    severity = Severity.WARNING
    summary = "First call of GPU work timed: context, kernel-load and plan costs land in the number"
    prefilter = TIMING_PREFILTER

    VALID = [
        # The caller warms the collective up before every call of the timing helper.
        Valid(
            """
            import torch
            import torch.distributed as dist

            def timed_allreduce(mat, repeat, start, end):
                start.record()
                for _ in range(repeat):
                    dist.all_reduce(mat)
                end.record()
                torch.cuda.synchronize()
                print(f"{repeat}x: {start.elapsed_time(end):.3f} ms")

            def run(rank):
                big = torch.rand(500000, 2000, device="cuda")
                small = torch.rand(500, 2000, device="cuda")
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                for _ in range(3):
                    dist.all_reduce(big)
                    dist.all_reduce(small)
                torch.cuda.synchronize()
                timed_allreduce(big, 1, start, end)
                timed_allreduce(small, 1000, start, end)
            """
        ),
        # Event timing on a path the caller must turn on (`enable_timing=False`), and nobody does.
        Valid(
            """
            import torch
            model = torch.nn.Linear(64, 64).cuda()
            def decode(input_ids, enable_timing=False):
                start = torch.cuda.Event(enable_timing=enable_timing)
                end = torch.cuda.Event(enable_timing=enable_timing)
                if enable_timing:
                    start.record()
                logits = model(input_ids)
                tokens = logits.argmax(-1)
                if enable_timing:
                    end.record()
                    torch.cuda.synchronize()
                    print(f"decoding time: {start.elapsed_time(end):.0f}ms")
                return tokens
            print(decode(torch.rand(8, 64, device="cuda")))
            """
        ),
        # The measured function ran before the region; the only new kernel is the memset that
        # flushes L2 between repetitions, whose first launch costs next to nothing.
        Valid(
            """
            import torch
            def estimate(fn):
                fn()
                torch.cuda.synchronize()
                cache = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
                start_event = torch.cuda.Event(enable_timing=True)
                end_event = torch.cuda.Event(enable_timing=True)
                start_event.record()
                for _ in range(5):
                    cache.zero_()
                    fn()
                end_event.record()
                torch.cuda.synchronize()
                return start_event.elapsed_time(end_event) / 5
            """
        ),
        # A view (`unsqueeze`) launches no kernel: the only new thing in the region has no first
        # call to pay for, and the rest is work we cannot see.
        Valid(
            """
            import torch
            coords = torch.rand(64, 2, device="cuda")
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            q = coords.unsqueeze(2)
            masks = predictor.predict_torch(point_coords=q)
            end.record()
            torch.cuda.synchronize()
            print("predict", start.elapsed_time(end))
            """
        ),
        # A region in a function the loop calls on every batch: the first sample is cold, the
        # rest are not, as with a region written inside the loop.
        Valid(
            """
            import time
            import torch
            model = torch.nn.Linear(64, 64).cuda()
            def timed_step(x):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                y = model(x)
                torch.cuda.synchronize()
                return y, time.perf_counter() - t0
            times = []
            for x in loader:
                y, dt = timed_step(x.cuda())
                times.append(dt)
            """
        ),
        # The same event timing after an untimed warm-up call: nothing cold is measured.
        Valid(
            """
            import torch
            net = torch.nn.Linear(64, 64).cuda()
            x = torch.rand(2**20, 64, device="cuda")
            net(x)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            y = net(x)
            end.record()
            torch.cuda.synchronize()
            print(f"linear forward = {start.elapsed_time(end):.3f} ms")
            """
        ),
        # A demo's "Done in 4.2s" after each request: the latency the user waited for, the first
        # request's set-up included; no benchmark of an operation.
        Valid(
            """
            import time
            import torch
            def generate(model, prompt, device):
                t0 = time.perf_counter()
                noise = torch.randn(1, 16, 128, 128, device=device)
                image = model(noise, prompt)
                torch.cuda.synchronize()
                t1 = time.perf_counter()
                print(f"Done in {t1 - t0:.1f}s.")
                return image.cpu()
            generate(torch.nn.Linear(4, 4).cuda(), "a cat", "cuda")
            """
        ),
        # The whole quantization job timed once: a pass over the layers and the calibration
        # samples, minutes of work beside which the first call's set-up is a rounding error.
        Valid(
            """
            import time
            import torch
            @torch.no_grad()
            def quantize_layers(model, dev):
                inps = torch.zeros((args.nsamples, 2048, 768), device=dev)
                outs = torch.zeros_like(inps)
                for i in range(len(model.layers)):
                    layer = model.layers[i].to(dev)
                    for j in range(args.nsamples):
                        outs[j] = layer(inps[j].unsqueeze(0))[0]
                    inps, outs = outs, inps
            tick = time.time()
            quantize_layers(model, torch.device("cuda"))
            print(time.time() - tick)
            """
        ),
        # The wall clock is read only where no GPU is present; on a GPU the events time it,
        # after a warm-up call.
        Valid(
            """
            import time
            import torch
            device = torch.device("cuda")
            model = Net().to(device)
            x = torch.randn(8, 3, 224, 224, device=device)
            model(x)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
            else:
                t0 = time.time()
            y = model(x)
            if torch.cuda.is_available():
                end.record()
                torch.cuda.synchronize()
                ms = start.elapsed_time(end)
            else:
                ms = (time.time() - t0) * 1000
            """
        ),
        # Warp compiles and loads the module's kernels in `wp.load_module()`: the first timed launch
        # pays neither.
        Valid(
            """
            import time
            import warp as wp
            wp.load_module()
            def bench(n):
                a = wp.zeros(1024, dtype=float)
                wp.synchronize()
                t1 = time.perf_counter()
                for _ in range(n):
                    wp.launch(inc, dim=1024, inputs=[a])
                wp.synchronize()
                print(f"{(time.perf_counter() - t1) * 1e3:.1f} ms")
            bench(1000)
            """
        ),
        Valid(
            """
            import time
            import torch
            x = torch.randn(8192, 8192, device="cuda")
            for _ in range(3):
                y = x @ x
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = x @ x
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
            """
        ),
        Valid(
            """
            import time
            import cupy as cp
            x = cp.random.rand(4096, 4096)
            samples = []
            for _ in range(20):
                t0 = time.perf_counter()
                y = cp.fft.fft2(x)
                cp.cuda.Device().synchronize()
                samples.append(time.perf_counter() - t0)
            """
        ),
        # A whole training run timed: its first step is part of what the user waits for.
        Valid(
            """
            import time
            import torch
            model = Net().cuda()
            def train(epoch):
                loss = model(features.cuda()).sum()
                loss.backward()
                optimizer.step()
            t_total = time.time()
            for epoch in range(args.epochs):
                train(epoch)
            torch.cuda.synchronize()
            print("Total time elapsed: {:.4f}s".format(time.time() - t_total))
            """
        ),
        # A checkpoint's save time, logged as such (torchtune's "Getting full model state dict
        # took"), is a stage of the run that the user waits for once, not a benchmark.
        Valid(
            """
            import time
            import torch
            from peft import PeftModel
            model = PeftModel.from_pretrained(base, adapter_dir).to("cuda")
            torch.cuda.synchronize()
            start = time.time()
            merged = model.merge_and_unload()
            state = {name: tensor.cpu() for name, tensor in merged.state_dict().items()}
            print(f"Getting the merged state dict took {time.time() - start:.2f}s")
            torch.save(state, "merged.pt")
            """
        ),
        # A load or set-up time printed as such is meant to include the first call.
        Valid(
            """
            import time
            import torch
            def load(path, device):
                return torch.load(path).to(device)
            t0 = time.time()
            model = load("model.pth", "cuda")
            torch.cuda.synchronize()
            print(f"Time to load model: {time.time() - t0:.02f} seconds")
            """
        ),
        # The warm-up iteration is always dropped: the kept samples are warm.
        Valid(
            """
            import time
            import torch
            x = torch.randn(4096, 4096, device="cuda")
            for i in range(-1, 10):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                y = x @ x
                if i == -1:
                    continue
                torch.cuda.synchronize()
                print(time.perf_counter() - t0)
            """
        ),
        # A duration kept to whole seconds is a progress log, not a measurement.
        Valid(
            """
            import logging
            import time
            import torch
            def evaluate(features, labels):
                start = time.time()
                order = torch.randperm(len(features), device="cuda")
                scores = fit_and_score(features[order], labels[order])
                logging.info(f"evaluation done in {int(time.time() - start)}s")
                return scores
            """
        ),
        # The same model and timer after one untimed `generate`: kernels are loaded.
        Valid(
            """
            import time
            import torch
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained(path, device_map="auto")
            input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to("cuda")
            model.generate(input_ids=input_ids, max_length=16)
            torch.cuda.synchronize()
            start = time.time()
            text = model.generate(input_ids=input_ids, max_length=512)
            torch.cuda.synchronize()
            print(f"generation took {time.time() - start:.2f}s")
            """
        ),
        # Another model's `generate` ran on this GPU first (a model built with `device=`): the
        # context, cuBLAS and the common kernels are loaded when the reference model is timed.
        Valid(
            """
            import time
            import torch
            from flash_attn.models.gpt import GPTLMHeadModel
            from transformers import AutoModelForCausalLM
            model = GPTLMHeadModel(config, device=f"cuda:{rank}", dtype=torch.float16)
            out = model.generate(input_ids=input_ids, max_length=150)
            model_hf = AutoModelForCausalLM.from_pretrained(name, device_map="auto")
            torch.cuda.synchronize()
            start = time.time()
            out_hf = model_hf.generate(input_ids=input_ids, max_length=150)
            torch.cuda.synchronize()
            print(f"HF decoding: {(time.time() - start) * 1000:.0f}ms")
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import time
            import torch
            x = torch.randn(8192, 8192, device="cuda")
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = torch.fft.fft2(x)
            torch.cuda.synchronize()
            print("fft2 took", time.perf_counter() - t0)
            """,
            line=8,
        ),
        Invalid(
            """
            import time
            import numpy as np
            from numba import cuda

            @cuda.jit
            def relax(grid, out):
                i, j = cuda.grid(2)
                out[i, j] = 0.25 * (grid[i - 1, j] + grid[i + 1, j] + grid[i, j - 1] + grid[i, j + 1])

            d_grid = cuda.to_device(np.zeros((512, 512)))
            d_out = cuda.device_array_like(d_grid)
            start = time.time()
            for step in range(1000):
                relax[(32, 32), (16, 16)](d_grid, d_out)
                d_grid, d_out = d_out, d_grid
            cuda.synchronize()
            print("total", time.time() - start)
            """,
            line=17,
            message="numba compiles the kernel `relax` on its first launch",
        ),
        # The warm-up sample is skipped only when compiling: without it the cold one is kept.
        Invalid(
            """
            import time
            import torch
            def decode(model, tokens):
                return model(tokens).argmax(-1)
            def benchmark(model, compile, num_samples):
                tokens = torch.randint(0, 32000, (1, 16), device="cuda")
                start = -1 if compile else 0
                for i in range(start, num_samples):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    y = decode(model, tokens)
                    if i == -1:
                        print(f"Compilation time: {time.perf_counter() - t0:.2f} seconds")
                        continue
                    torch.cuda.synchronize()
                    print(f"{y.size(-1) / (time.perf_counter() - t0):.02f} tokens/sec")
            """,
            line=16,
            message="The warm-up iteration of this timing loop is skipped only when `compile` holds",
        ),
        # A Hugging Face model loaded onto the GPU with `device_map`, its `generate` timed once:
        # the first call compiles and loads every kernel it uses.
        Invalid(
            """
            import time
            import torch
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained(path, device_map={"": "cuda"}, torch_dtype=torch.bfloat16)
            input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to("cuda")
            torch.cuda.synchronize()
            start = time.time()
            text = model.generate(input_ids=input_ids, max_length=512)
            torch.cuda.synchronize()
            print(f"generation took {time.time() - start:.2f}s")
            """,
            line=10,
            message="runs `model.generate(input_ids=input_ids, m...` for the first time",
        ),
        # `torch.compile(model)` is the same model, where it was: compiled or not, the first
        # timed `generate` pays for loading (and compiling) its kernels.
        Invalid(
            """
            import time
            import torch
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained(args.path, device_map={"": "cuda"})
            if args.compile:
                model = torch.compile(model)
            torch.cuda.synchronize()
            start = time.time()
            with torch.inference_mode():
                text = model.generate(input_ids=input_ids, max_length=512)
            torch.cuda.synchronize()
            elapsed = time.time() - start
            print(f"prompt + decoding: {elapsed * 1000:.0f} ms")
            """,
            line=12,
        ),
        # A model class from another package built with its weights on the GPU (`device=`): its
        # first `generate` is GPU work, timed cold.
        Invalid(
            """
            import time
            import torch
            from flash_attn.models.gpt import GPTLMHeadModel
            model = GPTLMHeadModel(config, device="cuda", dtype=torch.float16)
            model.eval()
            torch.cuda.synchronize()
            start = time.time()
            out = model.generate(input_ids=input_ids, max_length=150)
            torch.cuda.synchronize()
            print(f"decoding time: {(time.time() - start) * 1000:.0f}ms")
            """,
            line=10,
        ),
        # The time read on one line and reported as an operation's on the next.
        Invalid(
            """
            import time
            import torch
            x = torch.randn(8192, 8192, device="cuda")
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = torch.fft.fft2(x)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            print(f"fft2 took {t1 - t0:.4f} s")
            """,
            line=8,
        ),
        # CUDA events time the GPU itself, yet the first call still pays for loading its kernels.
        Invalid(
            """
            import torch
            net = torch.nn.Linear(64, 64).cuda()
            x = torch.rand(2**20, 64, device="cuda")
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            y = net(x)
            end.record()
            torch.cuda.synchronize()
            print(f"linear forward = {start.elapsed_time(end):.3f} ms")
            """,
            line=9,
            message="This timed region runs `net(x)` for the first time",
        ),
        # CuPy's events, read with `get_elapsed_time`: a first FFT plans inside the measurement.
        Invalid(
            """
            import cupy as cp
            a = cp.random.rand(4096, 4096)
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            f = cp.fft.fft2(a)
            stop.record()
            stop.synchronize()
            print("fft2:", cp.cuda.get_elapsed_time(start, stop), "ms")
            """,
            line=8,
            message="This timed region runs `cp.fft.fft2(a)` for the first time",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for region in chain(timed_regions(facts), event_regions(facts)):
            if reported_as_setup(region, facts):
                continue  # "Time to load model", "compilation time": the first call is the point
            if region.scope.runs is Runs.REPEATED:
                continue  # `def step(self): with wp.ScopedTimer("step", dict=t):` per frame: one cold sample of many
            if region.closing.ctx.repeated:
                # A per-iteration meter: only its first sample holds the warm-up, unless the loop
                # drops that sample in one configuration only.
                condition = _warmup_only_sometimes(region, facts)
                work = {event.key for event in region.inside if launches_gpu(event, facts)}
                loop = region.closing.ctx.loop
                events = region.scope.events
                loop_start = next(i for i, event in enumerate(events) if loop in event.ctx.loops())
                warmed = {event.key for event in events[:loop_start] if launches_gpu(event, facts)}
                if condition is not None and work and not work & warmed:
                    yield Report(
                        region.closing.node,
                        f"The warm-up iteration of this timing loop is skipped only when `{short(facts.code(condition), 30)}` "
                        "holds: otherwise the first timed sample includes CUDA context set-up and kernel loading, "
                        "and it is kept in the results",
                        "Always run one untimed warm-up iteration (then synchronise) before the samples you keep.",
                    )
                continue
            cold = _cold_work(region, facts)
            if cold is None:
                continue
            what = short(facts.code(cold.node), 40)
            if _compiles_on_first_launch(cold, facts):
                cost = f"numba compiles the kernel `{cold.key}` on its first launch (often a second or more), inside the measurement"
            else:
                cost = "CUDA context set-up, kernel loading and cuBLAS/cuFFT plan creation land in the measurement"
            yield Report(
                region.closing.node,
                f"This timed region runs `{what}` for the first time: {cost}",
                "Run the operation once or a few times before starting the clock (then synchronise), "
                "and report the median of several timed repetitions.",
            )
