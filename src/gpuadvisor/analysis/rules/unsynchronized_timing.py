"""GPU401: a host clock read while asynchronous GPU work may still be running."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short
from gpuadvisor.analysis.rules.timing import SETUP_STAGE, TIMING_PREFILTER, reported_as_setup, timed_regions, times_a_job, unsynchronized_work

_SUGGESTION = (
    "Synchronise before reading the clock (`torch.cuda.synchronize()`, CuPy: "
    "`cp.cuda.Device().synchronize()`), or time with CUDA events, `torch.utils.benchmark.Timer` "
    "or `cupyx.profiler.benchmark`."
)


_FIXTURE_SUGGESTION = (
    "Hand the fixture a function that ends with a synchronisation (`def run(): loss(batch); "
    "torch.cuda.synchronize()` then `benchmark(run)`), or time with `torch.utils.benchmark.Timer`."
)


class UnsynchronizedTiming(Rule):
    code = "GPU401"
    category = "unsynchronized-timing"
    severity = Severity.ERROR
    summary = "Clock read around asynchronous GPU work without synchronising first"
    prefilter = TIMING_PREFILTER

    VALID = [
        # The generated ids decoded to text before the clock is read: the tokenizer copies them
        # to the host, which waits for the generation to finish.
        Valid(
            """
            import time

            import torch
            from transformers import AutoModelForCausalLM


            def chat(name, tokenizer, prompts, device="cuda"):
                model = AutoModelForCausalLM.from_pretrained(name).to(device)
                for prompt in prompts:
                    inputs = tokenizer(prompt, return_tensors="pt").to(device)
                    start = time.time()
                    generated_ids = model.generate(inputs["input_ids"], max_new_tokens=256)
                    response = tokenizer.decode(generated_ids[0], skip_special_tokens=True)
                    print(response, len(generated_ids[0]) / (time.time() - start))
            """
        ),
        # A duration kept to whole seconds is a progress line ("rendered in 3s"), not the
        # measurement of the kernels it spans.
        Valid(
            """
            import time

            import torch


            def render(model, views):
                model = model.cuda()
                images = []
                for view in views:
                    start = time.time()
                    images.append(model(view.cuda()))
                    print(f"view rendered in {int(time.time() - start)}s")
                return images
            """
        ),
        # An f-string formats its GPU statistics, each a wait, before it reaches the clock read
        # written after them: the time printed covers the finished sampling.
        Valid(
            """
            import time
            import torch


            def sample(model, x, steps):
                start_time = time.time()
                for t in range(steps):
                    x = x + model(x, torch.full((1,), t, device="cuda"))
                d = torch.norm(x[1:] - x[:-1], dim=-1)
                print(f"distance: {d.mean():.3f} +- {d.std():.3f}, time: {time.time() - start_time:.3f}")
                return x
            """
        ),
        # A statement string naming a function of another file: what it runs is not known here.
        Valid(
            """
            import timeit
            import torch
            from comms import all_gather

            x = torch.ones(1024, device="cuda")
            print(timeit.timeit("all_gather()", globals=globals(), number=10))
            """
        ),
        # A loss printed at most every 30 seconds of wall time: the clock throttles the log (it
        # times nothing), and the read runs once per period, not once per step.
        Valid(
            """
            import time
            import torch
            model = torch.nn.Linear(8, 1).cuda()
            x = torch.randn(64, 8, device="cuda")
            last = time.time()
            for step in range(10000):
                loss = model(x).sum()
                loss.backward()
                now = time.time()
                if now - last > 30:
                    print(f"step {step}: loss {loss.item():.4f}")
                    last = now
            """
        ),
        # A Warp timer switched off (`active=False`) reads no clock: it times nothing, whatever
        # its other arguments say.
        Valid(
            """
            import numpy as np
            import warp as wp

            class Example:
                def __init__(self):
                    self.profiler = {}
                    self.x = wp.zeros(4096, dtype=wp.vec3)

                def step(self):
                    with wp.ScopedTimer("step", dict=self.profiler, active=False):
                        wp.capture_launch(self.graph)

            example = Example()
            for _ in range(300):
                example.step()
            print("Average frame sim time:", np.mean(example.profiler["step"]))
            """
        ),
        # The CUDA branch times with events and a synchronize; the clock is read only in the
        # branch for every other device (the host, Apple's MPS), where it is the way to time.
        Valid(
            """
            import time
            import torch
            def measure(matcher, data, device, repeats=100):
                for _ in range(10):
                    matcher(data)
                for _ in range(repeats):
                    if device.type == "cuda":
                        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        start.record()
                        matcher(data)
                        end.record()
                        torch.cuda.synchronize()
                        elapsed = start.elapsed_time(end)
                    else:
                        begin = time.perf_counter()
                        matcher(data)
                        elapsed = time.perf_counter() - begin
                return elapsed
            model = torch.nn.Linear(8, 8).cuda()
            print(measure(model, torch.randn(64, 8, device="cuda"), torch.device("cuda")))
            """
        ),
        # KeOps runs a formula when it is reduced (`K @ b`, `.argKmin(k, dim=1)`, `.solve(b)`) and
        # waits for its kernel before returning, and so does the backward pass of its result:
        # building the formula (`LazyTensor`, arithmetic, `.sum(-1)`) launches nothing.
        Valid(
            """
            import time
            import torch
            from pykeops.torch import Genred, LazyTensor
            from torch.autograd import grad
            x = torch.randn(100000, 3, device="cuda")
            y = torch.randn(200000, 3, device="cuda", requires_grad=True)
            b = torch.randn(200000, 2, device="cuda")
            def gaussian(x, y):
                d = ((LazyTensor(x[:, None, :]) - LazyTensor(y[None, :, :])) ** 2).sum(-1)
                return (-d / 2).exp()
            K = gaussian(x, y)
            a = K @ b
            start = time.time()
            a = K @ b
            print("convolution", time.time() - start)
            for k in (1, 3, 10):
                start = time.time()
                nearest = gaussian(x, y).argKmin(k, dim=1)
                print(k, time.time() - start)
            routine = Genred("Exp(-SqDist(x,y))*b", ["x=Vi(3)", "y=Vj(3)", "b=Vj(2)"], reduction_op="Sum", axis=1)
            c = routine(x, y, b)
            g = grad(c, y, torch.ones_like(c))[0]
            start = time.time()
            g = grad(c, y, torch.ones_like(c))[0]
            print("gradient", time.time() - start)
            """
        ),
        # A read that paces a loop: the elapsed time sets how long to wait for the next frame,
        # so host time is what it wants (a robot's control rate), not the GPU's run time.
        Valid(
            """
            import time
            import torch
            def rollout(policy, env, fps=30):
                w = torch.randn(512, 512, device="cuda")
                for step in range(1000):
                    start_time = time.perf_counter()
                    x = torch.tanh(w @ w)
                    dt_time = time.perf_counter() - start_time
                    busy_wait(max(1 / fps - dt_time, 0.0))
            """
        ),
        # Times kept in a dict nobody reads afterwards report nothing: the timer is a leftover.
        Valid(
            """
            import warp as wp
            class Example:
                def __init__(self):
                    self.profiler = {}
                    self.x = wp.zeros(4096, dtype=wp.vec3)
                def step(self):
                    with wp.ScopedTimer("step", dict=self.profiler):
                        wp.capture_launch(self.graph)
            example = Example()
            for _ in range(300):
                example.step()
            """
        ),
        # A time read only where the caller opts in (`verbose_time=False`, never passed): off
        # in every run the code makes, like the sampler's other optional logs.
        Valid(
            """
            import time
            import torch
            def sample(w, x, steps=256, verbose_time=False):
                t1 = time.time()
                for _ in range(steps):
                    x = torch.tanh(x @ w)
                if verbose_time:
                    print(f"Full sampling takes about {time.time() - t1:.2f} seconds.")
                return x
            w = torch.randn(4096, 4096, device="cuda")
            sample(w, torch.randn(64, 4096, device="cuda"))
            """
        ),
        # A whole export's progress line ("Export complete (12.3s)"): the time of a stage the
        # user waited for, not a measurement of the GPU work in it.
        Valid(
            """
            import time
            import torch
            t = time.time()
            model = load_model("yolov7.pt").cuda()
            y = model(torch.zeros(1, 3, 640, 640, device="cuda"))
            torch.onnx.export(model, img, "yolov7.onnx")
            print(f"Export complete ({time.time() - t:.2f}s). Visualize with netron.")
            """
        ),
        # A launch-overhead benchmark: the kernel computes nothing, so the host time of the
        # launches is the number being measured.
        Valid(
            """
            import warp as wp

            @wp.kernel
            def probe(x: float, y: float):
                tid = wp.tid()  # noqa: F841

            timer = wp.ScopedTimer("launch", print=False)
            wp.synchronize_device()
            with timer:
                for _ in range(100_000):
                    wp.launch(probe, dim=1, inputs=[1.0, 2.0])
            wp.synchronize_device()
            print(f"{timer.elapsed / 100_000 * 1e3:.2f} us per launch")
            """
        ),
        # Warp's timer waits for the GPU before reading the clock when told `synchronize=True`; one
        # that only prints a line per frame is a progress log, not a reported measurement.
        Valid(
            """
            import numpy as np
            import warp as wp

            class Example:
                def __init__(self):
                    self.profiler = {}
                    self.x = wp.zeros(4096, dtype=wp.vec3)

                def step(self):
                    with wp.ScopedTimer("step", dict=self.profiler, synchronize=True):
                        wp.capture_launch(self.graph)

            example = Example()
            for _ in range(300):
                example.step()
            print("Average frame sim time:", np.mean(example.profiler["step"]))
            """
        ),
        Valid(
            """
            import warp as wp
            x = wp.zeros(4096, dtype=float)
            for frame in range(300):
                with wp.ScopedTimer("step"):
                    wp.launch(advance, dim=4096, inputs=[x])
            """
        ),
        # A per-iteration meter in a loop that waits every iteration (`loss.item()`): what one
        # step leaves running is waited for in the next step's interval, so the times add up.
        Valid(
            """
            import time
            import torch
            model = Net().cuda()
            end = time.time()
            for images, target in loader:
                loss = criterion(model(images.cuda()), target.cuda())
                losses.update(loss.item())
                loss.backward()
                optimizer.step()
                batch_time.update(time.time() - end)
                end = time.time()
            """
        ),
        Valid(
            """
            import time
            import torch
            a = torch.randn(4096, 4096, device="cuda")
            a @ a
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            c = a @ a
            torch.cuda.synchronize()
            elapsed = time.perf_counter() - t0
            """
        ),
        Valid(
            """
            import time
            import torch
            a = torch.randn(2048, 2048, device="cuda")
            a.sum()
            start = time.time()
            total = (a @ a).sum().item()
            print(time.time() - start)
            """
        ),
        Valid(
            """
            import time
            import torch
            a = torch.randn(2048, 2048)
            start = time.time()
            b = a @ a
            print(time.time() - start)
            """
        ),
        Valid(
            """
            from time import perf_counter as clock
            import torch

            def sync():
                torch.cuda.synchronize()

            x = torch.ones(10**7, device="cuda")
            x.mul(2)
            sync()
            t0 = clock()
            y = x.mul(2)
            sync()
            t1 = clock()
            """
        ),
        # The tokens a generator yields are read to the host before the clock: `.cpu()` of what may be
        # a GPU tensor waits for the work that made it, so the time is not only launch time.
        Valid(
            """
            import time
            import torch

            def stream(model, tokens):
                tokens = torch.tensor(tokens, device="cuda")
                for _ in range(64):
                    logits = model(tokens)
                    tokens = torch.cat([tokens, logits.argmax(-1)[-1:]])
                    yield tokens, logits

            def generate(model, prompts):
                for prompt in prompts:
                    start = time.time()
                    for tokens, logits in stream(model, prompt):
                        pass
                    text = tokens.cpu().tolist()
                    print(text, time.time() - start)
            """
        ),
        Valid(
            """
            import torch
            from torch.utils import benchmark
            x = torch.randn(1024, 1024, device="cuda")
            timer = benchmark.Timer(stmt="x @ x", globals={"x": x})
            print(timer.timeit(100))
            """
        ),
    ]
    INVALID = [
        # A per-step timer whose step sometimes logs each parameter's gradient norm: a loop over
        # parameters is a pass over the model's tensors, not a job that makes the timer a log.
        Invalid(
            """
            import time

            import torch


            def log_grad_norm(model):
                for name, param in model.named_parameters():
                    print(name, param.grad.norm().item())


            def train(loader, log_every=100):
                model = torch.nn.Linear(64, 64).cuda()
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                end = time.time()
                for step, x in enumerate(loader):
                    loss = model(x.cuda()).sum()
                    loss.backward()
                    opt.step()
                    if step % log_every == 0:
                        log_grad_norm(model)
                    batch_time = time.time() - end
                    print(f"batch time {batch_time:.3f}s")
                    end = time.time()
            """,
            line=21,
        ),
        # Warp's `ScopedTimer` does not synchronise by default: the frame times it keeps, averaged
        # and printed, time the graph launch, not the simulation.
        Invalid(
            """
            import numpy as np
            import warp as wp

            class Example:
                def __init__(self):
                    self.profiler = {}
                    self.x = wp.zeros(4096, dtype=wp.vec3)

                def step(self):
                    with wp.ScopedTimer("step", dict=self.profiler):
                        wp.capture_launch(self.graph)

            example = Example()
            for _ in range(300):
                example.step()
            print("Average frame sim time:", np.mean(example.profiler["step"]))
            """,
            line=10,
            message="reads the host clock when its block ends without waiting for the GPU work",
        ),
        Invalid(
            """
            import time
            import torch
            a = torch.randn(4096, 4096, device="cuda")
            for _ in range(3):
                a @ a
            start = time.perf_counter()
            c = a @ a
            elapsed = time.perf_counter() - start
            print(f"{elapsed * 1e3:.2f} ms")
            """,
            line=8,
        ),
        Invalid(
            """
            import timeit
            import cupy as cp
            x = cp.random.rand(10_000_000)
            cp.sqrt(x)
            t = timeit.default_timer()
            y = cp.sqrt(x)
            dt = timeit.default_timer() - t
            print(f"sqrt: {dt:.4f} s")
            """,
            line=7,
        ),
        Invalid(
            """
            import timeit
            import torch
            x = torch.rand(4096, 4096, device="cuda")
            print(timeit.timeit(lambda: x @ x, number=100))
            """,
            line=4,
        ),
        # A per-step time whose synchronise runs on one step in a hundred: the other 99 samples
        # measure how fast the step is queued.
        Invalid(
            """
            import time
            import torch
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                start = time.perf_counter()
                model(x.cuda()).sum().backward()
                optimizer.step()
                if step % 100 == 0:
                    torch.cuda.synchronize()
                step_times.append(time.perf_counter() - start)
            """,
            line=10,
        ),
        # "Inference finished in ... seconds" ends a timed inference run: a measurement, read
        # before the GPU work it launched has finished.
        Invalid(
            """
            import time
            import torch
            model = Net().cuda()
            batch = torch.randn(256, 1024, device="cuda")
            start = time.time()
            with torch.no_grad():
                for _ in range(100):
                    out = model(batch)
            end = time.time()
            print("Inference finished in {} seconds".format(end - start))
            """,
            line=9,
            message="The clock is read while GPU work launched since the previous clock read may still be running",
        ),
        # A step timer whose two reads sit in one branch of the loop body: the interval runs
        # from the read at the bottom of one step to the print in the next, across the product.
        Invalid(
            """
            import time
            import torch
            a = torch.randn(4096, 4096, device="cuda")
            for step in range(100):
                if cfg.log_step_time:
                    b = a @ a
                    print("step time", time.time() - tic)
                    tic = time.time()
            """,
            line=7,
            message="The clock is read while GPU work launched since the previous clock read may still be running",
        ),
        # A handful of repetitions is a benchmark, not a job: its last products may still be
        # running at the clock read.
        Invalid(
            """
            import time
            import torch

            x = torch.randn(4096, 4096, device="cuda")
            y = x @ x
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(5):
                y = x @ x
            elapsed = time.perf_counter() - t0
            print(f"5 products: {elapsed * 1000:.2f} ms")
            """,
            line=10,
            message="The clock is read while GPU work launched since the previous clock read may still be running",
        ),
        # The statement timeit runs is a string naming this file's function: it queues a product
        # and returns, so the figure is launch time.
        Invalid(
            """
            import timeit
            import torch

            a = torch.randn(8192, 8192, device="cuda")

            def product():
                return a @ a

            product()
            torch.cuda.synchronize()
            print(timeit.timeit("product()", globals=globals(), number=100))
            """,
            line=11,
            message="`timeit` times GPU work that is never synchronised",
        ),
        # A Timer made on the spot, timing NCCL all-reduces of a CUDA tensor: each call is queued
        # on a stream and returns at once.
        Invalid(
            """
            import timeit
            import torch
            import torch.distributed as dist

            dist.init_process_group("nccl")
            flag = torch.ones(1, device="cuda")

            def all_reduce():
                dist.all_reduce(flag, op=dist.ReduceOp.SUM)
                return flag

            all_reduce()
            torch.cuda.synchronize()
            print(timeit.Timer("all_reduce()", globals=globals()).timeit(number=1000))
            """,
            line=14,
            message="`timeit` times GPU work that is never synchronised",
        ),
        # pytest-benchmark's pedantic mode times the same way: rounds of calls between host clock
        # reads, with nothing waiting for the GPU.
        Invalid(
            """
            import torch
            def test_attention_speed(benchmark):
                attention = torch.nn.MultiheadAttention(512, 8).cuda()
                x = torch.randn(128, 32, 512, device="cuda")
                benchmark.pedantic(attention, args=(x, x, x), rounds=100, warmup_rounds=5)
            """,
            line=5,
            message="pytest-benchmark's `benchmark` times GPU work",
        ),
    ]

    VALID += [
        # A per-step interval nobody reads (its print commented out): nothing is reported wrong.
        Valid(
            """
            import time
            import torch
            w = torch.randn(784, 10, device="cuda", requires_grad=True)
            for images in loader:
                time0 = time.time()
                loss = (images.cuda() @ w).sum()
                loss.backward()
                dt = time.time() - time0
                # print(f"step took {dt:.3f} s")
            """
        ),
        Valid(
            """
            import time
            import torch
            end = time.time()
            for images, labels in loader:
                images = images.to("cuda", non_blocking=True)
                data_time.update(time.time() - end)
                loss = criterion(model(images), labels.cuda())
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
                batch_time.update(time.time() - end)
                end = time.time()
            """
        ),
        Valid(
            """
            import time
            import torch
            for _ in range(10):
                ts = time.perf_counter()
                images = pipe(prompt_embeds=embeds.to("cuda"), output_type="latent").images
                images = image_processor.postprocess(vae.decode(images))
                print("inference time", time.perf_counter() - ts)
            """
        ),
        # A whole-run log around a training function whose loop goes over the data: what is
        # still queued at the end is a rounding error of the run, not a wrong measurement.
        Valid(
            """
            import time
            import torch
            def train(model, loader, optimizer):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
            model = Net().cuda()
            start = time.perf_counter()
            train(model, loader, optimizer)
            print(f"Training time: {time.perf_counter() - start:.2f}s")
            """
        ),
        # A stretch of training (a loop that steps the optimizer) between two collection rounds:
        # a progress log over hundreds of updates, not the measurement of an operation.
        Valid(
            """
            import time
            import torch
            policy = Policy().cuda()
            for i, data in enumerate(collector):
                start = time.time()
                for _ in range(cfg.num_updates):
                    loss = loss_module(data.to("cuda"))
                    loss.backward()
                    optim.step()
                    optim.zero_grad()
                logger.log({"train/time": time.time() - start}, step=i)
            """
        ),
        # A running total shown on every step: the clock restarts only after a synchronised
        # evaluation, so each reading spans all the steps since; the measured total is kept
        # after the synchronise.
        Valid(
            """
            import time
            import torch

            def log(line):
                print(line)

            model = Net().cuda()
            elapsed_ms = 0.0
            torch.cuda.synchronize()
            start = time.perf_counter()
            for step in range(num_steps):
                if step % eval_every == 0:
                    torch.cuda.synchronize()
                    elapsed_ms += 1000 * (time.perf_counter() - start)
                    evaluate(model)
                    torch.cuda.synchronize()
                    start = time.perf_counter()
                model(next_batch()).backward()
                optimizer.step()
                shown = elapsed_ms + 1000 * (time.perf_counter() - start)
                log(f"step {step} time {shown:.0f} ms")
            """
        ),
        # cuDF's readers return a frame that is parsed and sized, and wrapping its columns launches
        # nothing: no GPU work is left queued when the clock is read.
        Valid(
            """
            import time
            import cudf
            start = time.time()
            trips = cudf.read_csv("trips.csv", usecols=["lon", "lat"])
            print("ingest time", time.time() - start)
            start = time.time()
            lon, lat = cudf.Series(trips["lon"]), cudf.Series(trips["lat"])
            print("column time", time.time() - start)
            """
        ),
        # A RAPIDS call benchmarked with pytest-benchmark: its result's size is read back to the host
        # before it returns, so nothing is left running when the fixture reads the clock.
        Valid(
            """
            import cupy
            import cuspatial

            def bench_trajectories(benchmark):
                ids = cupy.random.randint(1, 400, 10000)
                x, y = cupy.random.random(10000), cupy.random.random(10000)
                stamps = cupy.random.random(10000) * 10000
                benchmark(cuspatial.derive_trajectories, ids, x, y, stamps)
            """
        ),
        # A whole-function 'total time' print around a pass over the data in blocks.
        Valid(
            """
            import time
            import cupy
            def fit(points, nbatch):
                t0 = time.time()
                potential = cupy.zeros(len(points))
                for start in range(0, len(points), nbatch):
                    potential[start:start + nbatch] = kernel(cupy.asarray(points[start:start + nbatch]))
                charges = cupy.linalg.solve(gram, potential)
                print("Total wall time:", time.time() - t0)
                return charges
            """
        ),
        # pytest-benchmark timing CPU work.
        Valid(
            """
            import torch
            def test_sort_speed(benchmark):
                x = torch.randn(100_000)
                benchmark(torch.sort, x)
            """
        ),
        # The elapsed time is only stored again, never read (its report was removed): nothing is
        # measured wrong. YOLOv4's evaluation loop.
        Valid(
            """
            import time
            import torch
            def evaluate(model, loader):
                model = model.cuda().eval()
                for images in loader:
                    model_input = images.cuda()
                    model_time = time.time()
                    outputs = model(model_input)
                    model_time = time.time() - model_time
            """
        ),
        # `Variable(img)` hands the same tensor back: no kernel after the blocking copy.
        Valid(
            """
            import time
            import torch
            from torch.autograd import Variable
            def detect(model, frame):
                t0 = time.time()
                img = torch.from_numpy(frame).float().div(255.0).cuda()
                img = Variable(img)
                t1 = time.time()
                print("preprocess", t1 - t0)
                return model(img)
            """
        ),
        # `use_gpu = False` as shipped: the timed model runs on the CPU (a tutorial's comparison).
        Valid(
            """
            import time
            import torch
            use_gpu = False
            if use_gpu:
                device = torch.device("cuda")
            else:
                device = torch.device("cpu")
            model = torch.nn.Linear(64, 64).to(device)
            x = torch.randn(32, 64).to(device)
            start = time.time()
            for _ in range(1000):
                model(x)
            print("inference time", (time.time() - start) / 1000)
            """
        ),
    ]
    INVALID += [
        Invalid(
            """
            import time
            import torch
            weights = torch.randn(784, 10, device="cuda", requires_grad=True)
            end = time.time()
            for images, labels in loader:
                images = images.to("cuda", non_blocking=True)
                data_time.update(time.time() - end)
                loss = torch.nn.functional.cross_entropy(images @ weights, labels.cuda())
                loss.backward()
                optimizer.step()
                batch_time.update(time.time() - end)
                end = time.time()
            """,
            line=11,
        ),
        # pytest-benchmark's fixture reads the host clock around each call: the loss returns
        # once its kernels are queued.
        Invalid(
            """
            import torch
            def test_loss_speed(benchmark):
                loss = Loss().to("cuda")
                batch = torch.randn(256, 64, device="cuda")
                benchmark(loss, batch)
            """,
            line=5,
            message="pytest-benchmark's `benchmark` times GPU work",
        ),
        # The evaluation every 100 steps waits for the GPU, but only on those steps: the other
        # 99 intervals end while the step's kernels are still queued.
        Invalid(
            """
            import time
            import torch
            model = Net().cuda()
            for step in range(max_steps):
                t0 = time.time()
                loss = model(next(batches).cuda()).mean()
                loss.backward()
                optimizer.step()
                if step % 100 == 0:
                    print(evaluate(model).item())
                dt = time.time() - t0
                print(f"step {step}: {dt * 1000:.1f} ms")
            """,
            line=11,
        ),
        # A loss benchmarked on a record built with its tensors on the GPU (`device=` given to a
        # class we cannot see: its fields live there).
        Invalid(
            """
            import torch
            from tensordict import TensorDict
            def test_dqn_loss_speed(benchmark, batch=128):
                device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
                td = TensorDict({"obs": torch.randn(batch, 8), "reward": torch.randn(batch, 1)}, [batch], device=device)
                benchmark(dqn_loss, td)
            """,
            line=6,
            message="pytest-benchmark's `benchmark` times GPU work",
        ),
        # A KeOps formula reduced along its vector dimension (`.sum(-1)`, the default) is still a
        # formula; the torch work timed next to it is queued, not waited for.
        Invalid(
            """
            import time
            import torch
            from pykeops.torch import LazyTensor
            x = torch.randn(100000, 3, device="cuda")
            w = torch.randn(4096, 4096, device="cuda")
            for _ in range(3):
                d = ((LazyTensor(x[:, None, :]) - LazyTensor(x[None, :, :])) ** 2).sum(-1)
                w = w @ w
            start = time.time()
            d = ((LazyTensor(x[:, None, :]) - LazyTensor(x[None, :, :])) ** 2).sum(-1)
            w = w @ w
            print("step", time.time() - start)
            """,
            line=12,
        ),
        # The branch that names the host is the one with the synchronize; the clock in the other
        # branch times CUDA work.
        Invalid(
            """
            import time
            import torch
            def measure(matcher, data, device):
                for _ in range(10):
                    matcher(data)
                if device.type == "cpu":
                    elapsed = 0.0
                else:
                    begin = time.perf_counter()
                    matcher(data)
                    elapsed = time.perf_counter() - begin
                return elapsed
            model = torch.nn.Linear(8, 8).cuda()
            print(measure(model, torch.randn(64, 8, device="cuda"), torch.device("cuda")))
            """,
            line=11,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        unsynced_regions = [
            region
            for region in timed_regions(facts)
            if not (region.steady or region.cumulative or times_a_job(region, facts))  # the queued tail of a whole run, an epoch or a running total is a rounding error of it
            and unsynchronized_work(region.inside, facts, guards=region.closing.ctx.guards)
        ]
        for region in unsynced_regions:
            if reported_as_setup(region, facts, SETUP_STAGE):
                continue  # "Export complete (12.3s)": a stage's progress line, not a measurement of GPU work
            if region.timer is not None:
                yield Report(
                    region.closing.node,
                    f"`{short(facts.code(region.timer.item), 40)}` reads the host clock when its block ends without waiting "
                    "for the GPU work launched inside it (it synchronises only with `synchronize=True`): the times it "
                    "keeps measure how fast that work is queued, not how long it runs",
                    "Pass `synchronize=True` to the timer (or call `wp.synchronize_device()` as the block's last "
                    "statement), or time the device work with CUDA events.",
                )
            else:
                yield Report(
                    region.closing.node,
                    "The clock is read while GPU work launched since the previous clock read may still be "
                    "running: GPU calls return before the GPU finishes, so this measures launch time, "
                    "not run time",
                    _SUGGESTION,
                )
        for loop in facts.loops:
            if loop.timed_repetition:
                events = [event for scope in facts.scopes for event in scope.events if loop in event.ctx.loops()]
                if unsynchronized_work(events, facts):
                    yield Report(
                        loop.node,
                        "`%timeit` repeats GPU work that is never synchronised: each run returns once the "
                        "kernels are queued, so it measures launch time, not run time",
                        "End the timed statement with a synchronisation (`%timeit f(x); cuda.synchronize()`, "
                        "`torch.cuda.synchronize()`), or time with CUDA events or `cupyx.profiler.benchmark`.",
                    )
        for timed in facts.timed_calls:
            if timed.work is not None:
                unsynchronized = timed.work.launches_gpu and not timed.work.synchronizes
            else:
                unsynchronized = timed.gpu_inputs
            if unsynchronized:
                yield Report(
                    timed.node,
                    f"{timed.timer} times GPU work that is never synchronised: it measures how fast kernels "
                    "are queued, not how long they run",
                    _FIXTURE_SUGGESTION if timed.fixture else _SUGGESTION,
                )
