"""GPU102: a tensor built on the host only to be copied to the GPU right away, where that repeats.

A setup buffer filled on the host once before the training loop costs a few milliseconds in the
whole run: a reviewer would not ask for it to change, so the rule stays silent there. The same
fill in a loop, or in a function that runs per call (a `forward`, a per-sample transform, a loss
helper), pays a host fill, an allocation and a blocking copy every time.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.frequency import loops_over_gpu_work, site_runs
from gpuadvisor.analysis.facts.measurement import sets_up_a_measurement
from gpuadvisor.analysis.facts.traverse import child_nodes
from gpuadvisor.analysis.facts.module_facts import CallFact, Context, FunctionFacts, ModuleFacts, Runs
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import enclosing_statements, short
from gpuadvisor.analysis.rules.host_fill import HostFill, copied_by_constructor, gpu_call, host_fill, moves_to_device
from gpuadvisor.analysis.rules.timing import drained_to_time_each_iteration, once_per_pass, outside_timed_windows, walks_data

#: Calls that seed a random generator: draws right after them are meant to be reproducible.
_SEEDS = ("manual_seed", "seed", "set_rng_state")


def _how_often(ctx: Context, facts: ModuleFacts) -> Runs:
    """As often as the code there runs (`frequency.site_runs`); once per key under
    `if key not in cache:` (memoised); once per pass in an epoch loop's own body, beside the
    loop over the data (the samples drawn for an end-of-epoch image grid) or beside the call
    that runs it (`for epoch in ...: queue = ...; train(loader, queue)`): a sliver of the pass."""
    if any(test in facts.memo_tests for test in ctx.guards):
        return Runs.ONCE
    if ctx.loop is not None and once_per_pass(ctx.loop, facts):
        return Runs.ONCE
    return site_runs(ctx)


def _read_for_its_device(statement: cst.CSTNode | None, node: cst.Call) -> bool:
    """The copy is made to see where it lands (`torch.empty(1).cuda().device`, in a line or in
    the test of an `if`): only its `.device` is read."""
    stack: list[cst.CSTNode] = [statement] if statement is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute) and current.value is node:
            return current.attr.value == "device"
        stack.extend(child_nodes(current))
    return False


def _one_element(fill: HostFill) -> bool:
    """Known to hold one number (`torch.empty(1)`, `torch.zeros(())`)."""
    made = fill.factory.result
    return made is not None and made.shape is not None and all(size == 1 for size in made.shape)


def _empty(fill: HostFill) -> bool:
    """Known to hold no element (`torch.zeros(0, 3)`): its copy moves no data."""
    made = fill.factory.result
    return made is not None and made.shape is not None and 0 in made.shape


def _small(fill: HostFill) -> bool:
    """A vector (`torch.zeros([batch_size])`), not an image-sized canvas: known to have one dimension."""
    made = fill.factory.result
    return made is not None and made.rank is not None and made.rank <= 1


def _seeded(fill: HostFill, facts: ModuleFacts) -> bool:
    """A `generator=` argument, or a seed call earlier in the same loop body (or function)."""
    if fill.factory.keyword("generator") is not None:
        return True
    for call in facts.calls:
        if call is fill.factory:
            return False
        same_place = call.ctx.function is fill.ctx.function and call.ctx.loop is fill.ctx.loop
        seeds = call.method == "manual_seed" or (call.qualname or "").rsplit(".", 1)[-1] in _SEEDS
        if same_place and seeds:
            return True
    return False


class CreateThenTransfer(Rule):
    code = "GPU102"
    category = "create-then-transfer"
    severity = Severity.WARNING
    summary = "Tensor filled on the host and moved to the GPU each time a loop or per-call function runs; create it there"

    VALID = [
        # A host buffer that host code fills in the loop (a camera frame read into it): data, not a fill.
        Valid(
            """
            import numpy as np
            import torch

            for step in range(1000):
                frame = np.zeros((480, 640), dtype=np.float32)
                camera.read_into(frame)
                x = torch.from_numpy(frame).cuda()
                model(x)
            """,
        ),
        # advertorch's GenAttack: a schedule object built once per attack, before its hundred steps of
        # model calls, fills its vectors once per attack, a sliver of the call.
        Valid(
            """
            import torch
            import torch.nn.functional as F

            model = torch.nn.Linear(32, 10).cuda()


            class StepSchedule:
                def __init__(self, x):
                    self.alpha = 0.4 * torch.ones(x.shape[0]).to(x.device)


            def attack(x, y, n_iter=100):
                schedule = StepSchedule(x)
                delta = torch.zeros_like(x, requires_grad=True)
                for i in range(n_iter):
                    loss = F.cross_entropy(model(x + delta), y)
                    grad, = torch.autograd.grad(loss, delta)
                    delta = (delta + schedule.alpha[:, None] * grad.sign()).detach().requires_grad_()
                return x + delta


            for x, y in loader:
                adversarial = attack(x.cuda(), y.cuda())
            """,
        ),
        # The same mask object built once before the loop: its constructor fills once.
        Valid(
            """
            import torch


            class CausalMask:
                def __init__(self, L, device="cpu"):
                    self.mask = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1).to(device)


            mask = CausalMask(128, device="cuda")
            results = []
            for scores in torch.randn(100, 128, 128, device="cuda"):
                results.append(scores.masked_fill(mask.mask, 0.0))
            """,
        ),
        # A helper returns a host table made once, before the loop: the copy in the loop sends the same
        # data each time (GPU101's finding), but no fill runs per iteration. A host array a function
        # returns is not recorded as its result (only GPU values, devices and known classes are), so the
        # fill stays where it was made.
        Valid(
            """
            import numpy as np
            import torch


            def table():
                return np.linspace(0.0, 1.0, 1000)


            def run(model, loader):
                model = model.cuda()
                t = table()
                for batch in loader:
                    coeffs = torch.from_numpy(t).cuda()
                    out = model(batch.cuda() * coeffs[0])
            """
        ),
        # An empty fallback (a mesh file without faces): a (0, 3) tensor holds nothing to fill or copy.
        Valid(
            """
            import torch


            def load_meshes(paths, reader, device="cuda"):
                meshes = []
                for path in paths:
                    data = reader(path)
                    faces = data.faces
                    if faces is None:
                        faces = torch.zeros(0, 3, dtype=torch.int64)
                    meshes.append((data.verts.to(device), faces.to(device)))
                return meshes
            """
        ),
        # A restart loop written as `while counter < self.n_restarts:` with one restart by
        # default runs once per call, as `range(self.n_restarts)` would.
        Valid(
            """
            import torch


            class FAB:
                def __init__(self, model, n_restarts=1, n_iter=100):
                    self.model = model.cuda()
                    self.n_restarts = n_restarts
                    self.n_iter = n_iter

                def perturb(self, x):
                    x = x.cuda()
                    best = x.clone()
                    counter_restarts = 0
                    while counter_restarts < self.n_restarts:
                        start = x + torch.rand(x.shape).to(x.device)
                        if self.model(start).sum() > self.model(best).sum():
                            best = start
                        counter_restarts += 1
                    return best
            """
        ),
        # A random start drawn on the host once per attack, before the hundred steps that call
        # the model: a sliver of each call, however often the evaluation calls it.
        Valid(
            """
            import torch


            class PGD:
                def __init__(self, model, steps=100):
                    self.model = model.cuda()
                    self.steps = steps

                def attack(self, x):
                    x = x.cuda()
                    delta = torch.rand(x.shape).to(x.device) * 2 - 1
                    for i in range(self.steps):
                        delta = delta + self.model(x + delta).sign()
                    return delta

                def robust_accuracy(self, loader):
                    for x, y in loader:
                        self.attack(x)
            """
        ),
        # A weight initialiser no code here calls runs when the model is built: its loop over the
        # layers draws each layer's weights once (deepinv's ICNN).
        Valid(
            """
            import torch
            import torch.nn as nn


            class ICNN(nn.Module):
                def __init__(self, n_layers=4, n_filters=64, device="cuda"):
                    super().__init__()
                    self.device = device
                    self.wz = nn.ModuleList([nn.Conv2d(n_filters, n_filters, 3) for _ in range(n_layers)])
                    self.n_layers, self.n_filters = n_layers, n_filters

                def initialize_weights(self, min_val=0.0, max_val=0.001):
                    for layer in range(self.n_layers):
                        self.wz[layer].weight.data = min_val + (max_val - min_val) * torch.rand(
                            self.n_filters, self.n_filters, 3, 3
                        ).to(self.device)
                    return self
            """
        ),
        # torchattacks' Square: a query counter of one entry per image, made once per attack of a
        # batch that then runs thousands of queries through the model: a sliver of each call.
        Valid(
            """
            import torch


            class Square:
                def __init__(self, model, n_queries=5000):
                    self.model = model
                    self.n_queries = n_queries
                    self.device = torch.device("cuda")

                def margin(self, x, y):
                    logits = self.model(x)
                    return logits.gather(1, y[:, None])

                def attack_single_run(self, x, y):
                    n_queries = torch.ones(x.shape[0]).to(self.device)
                    for i_iter in range(self.n_queries):
                        loss = self.margin(x, y)
                        x = x + 0.01 * loss.sign()
                        n_queries += 1
                    return x, n_queries

                def forward(self, loader):
                    for x, y in loader:
                        x, y = x.to(self.device), y.to(self.device)
                        yield self.attack_single_run(x, y)
            """
        ),
        # A legacy typed constructor handed data (one list) builds a tensor of those values: not a
        # fill, whatever is written into it afterwards.
        Valid(
            """
            import torch
            device = torch.device("cuda")
            for batch in loader:
                lengths = torch.IntTensor(batch.lengths).fill_(0).to(device)
                train_step(batch, lengths)
            """
        ),
        # A process's `run` is its body, started once: the buffers made before its loop are made once
        # per process (ElegantRL's learner), however the copy is written.
        Valid(
            """
            import torch as th
            from multiprocessing import Process


            class Learner(Process):
                def __init__(self, agent, horizon_len, num_seqs):
                    super().__init__()
                    self.agent, self.horizon_len, self.num_seqs = agent, horizon_len, num_seqs

                def run(self):
                    agent = self.agent
                    actions = th.zeros((self.horizon_len, self.num_seqs), dtype=th.int32).to(agent.device)
                    while True:
                        agent.explore(actions)
                        agent.update()
            """
        ),
        # A one-hot array set where the input's tokens say (OpenNMT's graph encoder): the upload is
        # the encoded input, not a pattern one GPU fill could make.
        Valid(
            """
            import numpy as np
            import torch


            class Enc(torch.nn.Module):
                def forward(self, src):
                    npsrc = src.cpu().numpy()
                    onehot = np.zeros((4, 8, 16), dtype=np.int32)
                    for i in range(4):
                        for j in range(8):
                            token = npsrc[i][j]
                            onehot[i][j][token] = 1
                    return torch.from_numpy(onehot).float().to(src.device)


            enc = Enc().cuda()
            for batch in loader:
                enc(batch.cuda())
            """
        ),
        # A one-element copy made only to read where it lands is a probe, in the test of an `if`
        # as in a line of its own: microseconds a call, and no data is moved.
        Valid(
            """
            import torch

            class OnDevice(torch.nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net

                def forward(self, x):
                    if x.device != torch.zeros(1).cuda().device:
                        x = x.cuda()
                    return self.net(x)
            """
        ),
        # The fallback of a NaN check runs only when a solve broke down, not on every call.
        Valid(
            """
            import torch
            from torch import nn
            class KoopmanLayer(nn.Module):
                def forward(self, x, y):
                    K = torch.linalg.lstsq(x, y).solution
                    if torch.isnan(K).any() or torch.isinf(K).any():
                        K = torch.eye(K.shape[1]).to(K.device).unsqueeze(0).repeat(x.shape[0], 1, 1)
                    return torch.bmm(x[:, -1:], K)
            model = KoopmanLayer().cuda()
            """
        ),
        # A training-pair pool made on the first step, under `if not hasattr(self, ...)`: the host
        # fill runs once per run, not on every call of the method.
        Valid(
            """
            import torch

            class PairPool:
                def push(self, lq):
                    b, c, h, w = lq.size()
                    if not hasattr(self, "queue"):
                        self.queue = torch.zeros(180, c, h, w).cuda()
                        self.ptr = 0
                    self.queue[self.ptr:self.ptr + b] = lq
                    self.ptr += b

            def train(pool, loader):
                for lq in loader:
                    pool.push(lq.cuda())
            """
        ),
        # Each step's input is drawn before the clock starts, in a loop that synchronises to time
        # every step: the draw is outside every measurement, and the loop drains the GPU anyway.
        Valid(
            """
            import time
            import torch

            def fake_batch(vocab, device, step):
                g = torch.Generator().manual_seed(step)
                ids = torch.randint(0, vocab, (8, 2048), generator=g).to(device)
                return {"input_ids": ids, "labels": ids}

            def run(model, opt, vocab, device, steps):
                for step in range(steps):
                    batch = fake_batch(vocab, device, step)
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    model(**batch).loss.backward()
                    opt.step()
                    torch.cuda.synchronize()
                    print(f"step {step}: {(time.perf_counter() - t0) * 1000:.1f} ms")
            """
        ),
        # A one-element tensor made to learn which device CUDA picked: microseconds per call of a
        # set-up helper that nothing here is seen to repeat.
        Valid(
            """
            import os
            import torch
            import torch.distributed as tdist

            def initialize(backend="nccl"):
                local_rank = int(os.environ["LOCAL_RANK"])
                torch.cuda.set_device(local_rank)
                tdist.init_process_group(backend=backend)
                return torch.empty(1).cuda().device
            """
        ),
        # A buffer made in an epoch loop whose iteration runs a whole pass over the data (`train`):
        # one fill per epoch, a sliver of the pass.
        Valid(
            """
            import torch
            def main(args, model, loader):
                queue = None
                for epoch in range(args.start_epoch, args.epochs):
                    if args.queue_length > 0 and epoch >= args.epoch_queue_starts and queue is None:
                        queue = torch.zeros(2, args.queue_length, args.feat_dim).cuda()
                    queue = train(loader, model, queue)
            def train(loader, model, queue):
                for x in loader:
                    queue[0] = model(x.cuda())
                return queue
            """
        ),
        # A dummy input filled once per call of an evaluation pass that then walks the whole
        # data loader: set-up, a sliver of each call.
        Valid(
            """
            import torch
            def evaluate(model, dataloader, test_size):
                x = torch.ones(1, 3, test_size[0], test_size[1]).cuda()
                model(x)
                results = []
                for imgs, _ in dataloader:
                    outputs = model(imgs.type(torch.cuda.FloatTensor))
                    results.append(outputs)
                return results
            """
        ),
        # The loss runs on a device every caller names as the host (`loss_device =
        # torch.device("cpu")`): moving the fill there copies nothing to the GPU.
        Valid(
            """
            import torch
            from torch import nn
            class SpeakerEncoder(nn.Module):
                def __init__(self, device, loss_device):
                    super().__init__()
                    self.loss_device = loss_device
                    self.lstm = nn.LSTM(40, 256, 3, batch_first=True).to(device)
                def loss(self, embeds):
                    sim = torch.zeros(embeds.shape[0], embeds.shape[0]).to(self.loss_device)
                    return (sim + embeds @ embeds.T).sum()
            def train(loader):
                device = torch.device("cuda")
                loss_device = torch.device("cpu")
                model = SpeakerEncoder(device, loss_device)
                for batch in loader:
                    embeds = model(batch.to(device))
                    loss = model.loss(embeds.to(loss_device))
                    loss.backward()
            """
        ),
        # A fill compared with each batch's labels is data, not a table that could be made once.
        Valid(
            """
            import torch
            def train(model, loader, device):
                for images, targets in loader:
                    hits = (torch.arange(10).unsqueeze(0) == targets.unsqueeze(1)).float().to(device)
                    loss = (model(images.to(device)) * hits).sum()
                    loss.backward()
            """
        ),
        # A list read from the batch, times a number: data, not a constant fill (it has to be
        # copied; nothing could create it on the GPU).
        Valid(
            """
            import torch
            device = torch.device("cuda")
            for batch in loader:
                weights = torch.tensor(batch["weights"] * 2).to(device)
                loss = (model(batch["x"].to(device)) * weights).mean()
                loss.backward()
            """
        ),
        # A range scaled by host data the loop reads: the product is data, made where the data is.
        Valid(
            """
            import numpy as np
            import torch
            device = torch.device("cuda")
            for batch in loader:
                weights = torch.from_numpy(np.asarray(batch["w"]))
                ramp = (torch.arange(weights.shape[0]) * weights).to(device)
                loss = (model(batch["x"].to(device)) * ramp).mean()
                loss.backward()
            """
        ),
        # A probe that the device works: the copied tensor is thrown away, so there is nothing
        # to create on the GPU instead.
        Valid(
            """
            import torch

            def use_gpu(gpu_number=0):
                try:
                    device = torch.device("cuda:" + str(gpu_number))
                    _ = torch.zeros((1, 1)).to(device)
                    return True
                except RuntimeError:
                    return False

            for name in model_names:
                models.append(build(name, gpu=use_gpu()))
            """
        ),
        # Stratified sampling is a setting the code never turns on, and the `else` of `if self.ln:`
        # runs only for a caller that passes `ln=False`: paths a caller has to ask for.
        Valid(
            """
            import torch

            class RectifiedFlow(torch.nn.Module):
                def __init__(self, model, ln=True):
                    super().__init__()
                    self.model = model
                    self.ln = ln
                    self.stratified = False

                def forward(self, x):
                    b = x.size(0)
                    if self.ln:
                        if self.stratified:
                            quantiles = torch.linspace(0, 1, b + 1).to(x.device)
                            t = quantiles[:-1]
                        else:
                            t = torch.sigmoid(torch.randn(b, device=x.device))
                    else:
                        t = torch.rand((b,)).to(x.device)
                    return self.model(x * t[:, None])

            flow = RectifiedFlow(torch.nn.Linear(8, 8).cuda())
            for x in loader:
                flow(x.cuda()).mean().backward()
            """
        ),
        # Sampling noise for an image grid once per epoch, after the pass over the data.
        Valid(
            """
            import torch
            model = torch.nn.Linear(16, 16).cuda()
            optimizer = torch.optim.Adam(model.parameters())
            for epoch in range(100):
                for x, y in loader:
                    loss = (model(x.cuda()) - y.cuda()).square().mean()
                    loss.backward()
                    optimizer.step()
                with torch.no_grad():
                    noise = torch.randn(16, 16).cuda()
                    grid = model(noise)
            """
        ),
        # A one-off setup copy before the training loop costs milliseconds in the whole run: silent.
        Valid(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            obs = torch.zeros((num_steps, num_envs) + obs_shape).to(device)
            for step in range(num_steps):
                obs[step] = envs.step(policy(obs[step - 1]))
            """
        ),
        Valid(
            """
            import torch
            def train(loader, device):
                totals = torch.zeros(10).to(device)
                for x, y in loader:
                    totals += model(x.to(device)).sum(0)
                return totals
            """
        ),
        Valid(
            """
            import torch
            class Head(torch.nn.Module):
                def __init__(self, device):
                    super().__init__()
                    self.scale = torch.ones(16).to(device)
            """
        ),
        # Memoised per device (`if key not in cache: cache[key] = ...`): a one-off per device, silent.
        Valid(
            """
            import torch
            windows = {}
            def stft(y, n_fft):
                key = str(y.device)
                if key not in windows:
                    windows[key] = torch.hann_window(n_fft).to(y.device)
                return torch.stft(y, n_fft, window=windows[key], return_complex=True)
            """
        ),
        # Made on first use and kept on the object (`if self.grid is None:`): a one-off, silent.
        Valid(
            """
            import torch
            class Positions(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.grid = None

                def forward(self, x):
                    if self.grid is None:
                        self.grid = torch.linspace(-1.0, 1.0, x.shape[-1]).cuda()
                    return x * self.grid
            """
        ),
        # Operands of each benchmarked shape, made once per shape before the harness times the op.
        Valid(
            """
            import torch
            from triton.testing import do_bench
            for m, n, k in [(1024, 1024, 1024), (4096, 4096, 4096)]:
                a = torch.randn(m, k).bfloat16().cuda()
                b = torch.randint(-128, 127, (n, k), dtype=torch.int8).cuda()
                ms = do_bench(lambda: torch.mm(a, b.to(a.dtype).t()))
                print(m, n, k, ms)
            """
        ),
        # The same over enough sizes that the loop repeats: the random keys are drawn on the host
        # once per size, outside what `do_bench` times (a draw only earns a finding when it repeats).
        Valid(
            """
            import torch
            from triton.testing import do_bench
            for size in range(10, 25):
                keys = torch.rand(2 ** size).cuda()
                ms = do_bench(lambda: torch.sort(keys))
                print(2 ** size, ms)
            """
        ),
        # Set-up of a generation call, once per prompt: each call then runs the model once per
        # token, so the small host fill is a sliver of the call.
        Valid(
            """
            import torch
            decoder = torch.nn.GRUCell(512, 512).cuda()
            def generate(state, steps):
                done = torch.zeros([state.size(0)]).byte().cuda()
                for _ in range(steps):
                    state = decoder(state, state)
                    done |= (state.argmax(-1) == 0).byte()
                return state, done
            def serve(prompts):
                return [generate(torch.tensor(p, device="cuda"), 64) for p in prompts]
            """
        ),
        # A CPU device held in a variable is not a copy to the GPU.
        Valid(
            """
            import torch
            def setup():
                cpu_device = torch.device("cpu")
                return torch.zeros(10).to(cpu_device)
            """
        ),
        # Drawn once, copied every iteration: the repeated copy of unchanging data is GPU101's
        # finding; the draw itself runs once.
        Valid(
            """
            import torch
            X_val = torch.randn(100, 10)
            for x in loader:
                X_gpu = X_val.to("cuda")
            """
        ),
        Valid(
            """
            import torch
            x = torch.zeros(1024, 1024, device="cuda")
            y = torch.randn(64, 3, device=x.device)
            """
        ),
        Valid(
            """
            import torch
            x = torch.from_numpy(frame).cuda()
            """
        ),
        Valid(
            """
            import torch
            def embed(x):
                return torch.zeros(8).to(torch.float16) + x
            """
        ),
        # Host data has to be copied whichever way it is written: no GPU fill replaces it.
        Valid(
            """
            import torch
            for obs, states in loader:
                obs_t = torch.tensor(obs).to(device)
                batch = torch.FloatTensor(states).to(dev)
            """
        ),
        # Random numbers drawn on the host outside a loop we can see: CPU and CUDA generators
        # give different values, and a host draw is often meant.
        Valid(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            noise = torch.randn(batch, 128).to(device)
            class Scheduler:
                def add_noise(self, latents):
                    return latents + torch.randn(latents.shape).to(latents.device)
            """
        ),
        # `zeros_like` already allocates where its argument lives; the move is a no-op.
        Valid(
            """
            import torch
            def mask_of(embeds):
                return torch.zeros_like(embeds).to(embeds.device)
            """
        ),
        # `Tensor(n, m)` allocates on the GPU; a host array a compiled kernel filled is data; a
        # grid drawn for the images saved every 400 batches is not a per-step cost.
        Valid(
            """
            import numpy as np
            import torch
            from .core import maximum_path_c
            Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
            def maximum_path(neg_cent, device):
                path = np.zeros(neg_cent.shape, dtype=np.int32)
                maximum_path_c(path, neg_cent)
                return torch.from_numpy(path).to(device=device)
            def sample_image(n_row):
                z = Tensor(np.random.normal(0, 1, (n_row**2, 100)))
                save_image(generator(z), "grid.png")
            for i, (imgs, _) in enumerate(dataloader):
                valid = Tensor(imgs.size(0), 1).fill_(1.0)
                attn = maximum_path(scores(imgs), "cuda")
                if i % 400 == 0:
                    sample_image(n_row=10)
            """
        ),
        Valid(
            """
            import torch
            def test_kernel():
                for size in range(1, 100):
                    ref = torch.ones(size).cuda()
            """
        ),
        # A set-up object built once per value of `args.rho_num`, which the script's own `Args` sets
        # to 1: the loop runs once (torchquantum's ADMM pruning tutorial).
        Valid(
            """
            import torch


            class Args:
                def __init__(self):
                    self.rho_num = 1


            class ADMM:
                def __init__(self, model):
                    self.init(model)

                def init(self, model):
                    weights = torch.cat([p.detach().flatten() for p in model.parameters()])
                    self.dual = torch.zeros(weights.shape).to("cuda")


            args = Args()
            model = torch.nn.Linear(4, 4).cuda()
            for i in range(args.rho_num):
                admm = ADMM(model)
            """,
        ),
    ]
    INVALID = [
        # A NumPy distribution with no torch factory: the fix names the `torch.distributions` class
        # that draws it on the GPU.
        Invalid(
            """
            import numpy as np
            import torch

            model = torch.nn.Linear(640, 10).cuda()
            for step in range(1000):
                mask = torch.from_numpy(np.random.binomial(1, 0.9, size=(256, 640)).astype(np.float32)).cuda()
                model(batch * mask)
            """,
            line=6,
            message='draws random numbers with the CPU generator',
        ),
        # Informer's causal mask: a plain object an attention forward builds on every call fills its
        # triangle on the host and copies it, so its constructor runs as often as the forward.
        Invalid(
            """
            import torch
            import torch.nn as nn


            class CausalMask:
                def __init__(self, B, L, device="cpu"):
                    self.mask = torch.triu(torch.ones(B, 1, L, L, dtype=torch.bool), diagonal=1).to(device)


            class Attention(nn.Module):
                def forward(self, q, k):
                    B, L = q.shape[0], q.shape[1]
                    scores = q @ k.transpose(-2, -1)
                    return scores.masked_fill(CausalMask(B, L, device=q.device).mask, float("-inf"))


            attention = Attention().cuda()
            """,
            line=7,
        ),
        # A decoder's forward fills its initial state on the host before a loop over the
        # characters: the loop is part of the model pass, which training runs every step.
        Invalid(
            """
            import torch
            import torch.nn as nn


            class Decoder(nn.Module):
                def __init__(self, hidden_size=256):
                    super().__init__()
                    self.cell = nn.LSTMCell(hidden_size, hidden_size)
                    self.hidden_size = hidden_size

                def forward(self, feats, num_steps=26):
                    hidden = torch.zeros(feats.size(0), self.hidden_size).to(feats.device)
                    state = (hidden, hidden)
                    outputs = []
                    for i in range(num_steps):
                        state = self.cell(feats[:, i], state)
                        outputs.append(state[0])
                    return torch.stack(outputs, 1)


            def train(loader):
                model = Decoder().cuda()
                opt = torch.optim.Adam(model.parameters())
                for feats, target in loader:
                    loss = (model(feats.cuda()) - target.cuda()).pow(2).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            """,
            line=12,
        ),
        # A fairseq model is an `nn.Module` (Graphormer's diffusion model): in a project that
        # names CUDA its forward runs on the GPU, and a host fill moved to its outputs is per step.
        Invalid(
            """
            import torch
            from fairseq.models import FairseqEncoderModel


            class GraphormerDiffModel(FairseqEncoderModel):
                def __init__(self, encoder, dim):
                    super().__init__(encoder)
                    self.output_model = torch.nn.Linear(dim, 3)

                def forward(self, x_feat):
                    n_graph, n_node = x_feat.size()[:2]
                    out = self.output_model(x_feat)
                    force = torch.zeros(n_graph, n_node, 3).to(out)
                    return force + out


            def train(encoder, loader):
                model = GraphormerDiffModel(encoder, 64).cuda()
                for x in loader:
                    model(x.cuda()).sum().backward()
            """,
            line=13,
            message="`torch.zeros(...)` fills a tensor on the host, then it is copied to the GPU",
        ),
        # Older PyTorch code's `torch.zeros`: a legacy typed constructor handed sizes, filled in place
        # on the host, then copied, on every forward (an attention decoder's state, deep-text-recognition).
        Invalid(
            """
            import torch
            import torch.nn as nn
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


            class Attention(nn.Module):
                def __init__(self, hidden_size, num_classes):
                    super().__init__()
                    self.hidden_size = hidden_size

                def forward(self, batch_H, text):
                    batch_size = batch_H.size(0)
                    hidden = torch.FloatTensor(batch_size, self.hidden_size).fill_(0).to(device)
                    return self.cell(hidden, batch_H, text)


            model = Attention(256, 38).to(device)
            for batch_H, text in loader:
                preds = model(batch_H.to(device), text.to(device))
            """,
            line=13,
            message="`torch.FloatTensor(...)` fills a tensor on the host",
        ),
        # The same loops setting a fixed pattern (`onehot[i][j][j] = 1`): one GPU fill makes it.
        Invalid(
            """
            import numpy as np
            import torch


            class Enc(torch.nn.Module):
                def forward(self, src):
                    npsrc = src.cpu().numpy()
                    onehot = np.zeros((4, 8, 16), dtype=np.int32)
                    for i in range(4):
                        for j in range(8):
                            token = npsrc[i][j]
                            onehot[i][j][j] = 1
                    return torch.from_numpy(onehot).float().to(src.device)


            enc = Enc().cuda()
            for batch in loader:
                enc(batch.cuda())
            """,
            line=13,
            message="`numpy.zeros(...)` fills a tensor on the host, then it is copied to the GPU",
        ),
        # Two host fills stacked and moved: the first one names the fill (the stack is one too).
        Invalid(
            """
            import torch
            for step in range(100):
                pair = torch.stack([
                    torch.zeros(3),
                    torch.ones(3),
                ]).to("cuda")
            """,
            line=3,
            message="`torch.zeros(...)` fills a tensor on the host, then it is copied to the GPU",
        ),
        # The device built from a name the function is handed: still the device the data goes to.
        Invalid(
            """
            import torch
            def train(model, loader, device_name):
                for x, y in loader:
                    x = x.to(torch.device(device_name))
                    weights = torch.ones(10).to(torch.device(device_name))
                    loss = (model(x) * weights).sum()
            """,
            line=5,
            message="`torch.ones(...)` fills a tensor on the host, then it is copied to the GPU, every iteration of this loop",
        ),
        Invalid(
            """
            import torch
            for step in range(10_000):
                buffer = torch.zeros(4096, 4096).cuda()
            """,
            line=3,
            message="`torch.zeros(4096, 4096).cuda()`: `torch.zeros(...)` fills a tensor on the host, then it is "
            "copied to the GPU, every iteration of this loop",
        ),
        Invalid(
            """
            from torch import arange
            for batch in loader:
                idx = arange(10_000).to("cuda:0")
            """,
            line=3,
        ),
        Invalid(
            """
            import torch
            def gradient_penalty(critic, real, fake, device):
                mix = critic(real * 0.5 + fake * 0.5)
                ones = torch.ones(mix.size()).to(device)
                return ones
            """,
            line=4,
            message="every call of `gradient_penalty`",
        ),
        # Any device target counts, and dtype casts on the way do not hide the host fill.
        Invalid(
            """
            import torch
            class VirtualNode(torch.nn.Module):
                def forward(self, x, edge_index, batch):
                    ids = torch.zeros(batch[-1].item() + 1).to(edge_index.dtype).to(edge_index.device)
                    for layer in range(self.num_layers):
                        x = self.convs[layer](x + self.embedding(ids)[batch], edge_index)
                    return x
            """,
            line=4,
            message="`torch.zeros(...)` fills a tensor on the host",
        ),
        Invalid(
            """
            import torch
            def log_mel(audio):
                window = torch.hann_window(400).to(audio.device)
                return torch.stft(audio, 400, window=window, return_complex=True)
            """,
            line=3,
        ),
        Invalid(
            """
            import numpy as np
            import torch
            def cost_matrix(x):
                n, m = x.shape
                cost = torch.ones(n + m + 2, m + 2) * np.inf
                cost[0, 0] = 0
                cost = cost.to(x.device)
                return cost
            """,
            line=7,
        ),
        # Random fills drawn by the CPU generator every environment step.
        Invalid(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            for step in range(num_steps):
                explore = torch.rand((num_envs,)).to(device) < epsilon
            """,
            line=4,
            message="`torch.rand(...)` draws random numbers with the CPU generator, then they are copied to the GPU, "
            "every iteration of this loop",
        ),
        # A seed right before says the host generator is intended: a note, not a warning.
        Invalid(
            """
            import torch
            for episode in range(episodes):
                torch.manual_seed(episode)
                noise = torch.randn(batch, 128).to(device)
            """,
            line=4,
            message="seeded host draws look intended",
            severity=Severity.INFO,
        ),
        # A sampler's timestep vector, built on the host from the loop's step value each step.
        Invalid(
            """
            import torch
            def sample(x, seq, model):
                n = x.size(0)
                for i in reversed(seq):
                    t = (torch.ones(n) * i).to(x.device)
                    x = model(x, t)
                return x
            """,
            line=5,
            message="every iteration of this loop",
        ),
        # A weights vector normalised in steps, three names away from its host fill.
        Invalid(
            """
            import torch
            for batch in loader:
                weights = torch.ones(batch.shape[0])
                scaled = weights * 0.5
                shifted = scaled + 1
                w_gpu = shifted.to("cuda")
            """,
            line=6,
            message="`torch.ones(...)` fills a tensor on the host",
        ),
        # The old typed-tensor alias: `Tensor(data)` copies host data to the GPU when cuda is on.
        Invalid(
            """
            import numpy as np
            import torch
            cuda = torch.cuda.is_available()
            Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
            for imgs, _ in dataloader:
                z = Tensor(np.random.normal(0, 1, (imgs.shape[0], 100)))
                fake = generator(z)
            """,
            line=6,
            message="`Tensor(np.random.normal(0, 1, (imgs.shape[0], 100)))`: `numpy.random.normal(...)` draws random "
            "numbers with the CPU generator, then they are copied to the GPU, every iteration of this loop",
        ),
        Invalid(
            """
            import numpy as np
            import torch
            def gradient_penalty(critic, mixed):
                out = critic(mixed)
                return torch.cuda.FloatTensor(np.ones(out.shape))
            for batch in loader:
                gp = gradient_penalty(critic, batch.cuda())
            """,
            line=5,
            message="`numpy.ones(...)` fills a tensor on the host, then it is copied to the GPU, every call of "
            "`gradient_penalty`, which runs in a loop",
        ),
        Invalid(
            """
            import torch
            Tensor = torch.cuda.FloatTensor
            for x, _ in loader:
                style = torch.randn(x.size(0), 8, 1, 1).type(Tensor)
            """,
            line=4,
            message="`torch.randn(...)` draws random numbers with the CPU generator",
        ),
        # Through the calls that wrap host data: the NumPy fill inside is what is copied.
        Invalid(
            """
            import numpy as np
            import torch
            for x in loader:
                mask = torch.from_numpy(np.zeros((64, 64))).to("cuda")
            """,
            line=4,
            message="`numpy.zeros(...)` fills a tensor on the host, then it is copied to the GPU, every iteration of this loop",
        ),
        # A fill viewed on the host before the copy (`unsqueeze`, `expand`) is still a host fill.
        Invalid(
            """
            import torch
            class RingLayer(torch.nn.Module):
                def forward(self, inputs):
                    n = inputs.shape[-1]
                    bias = torch.eye(n).unsqueeze(0).unsqueeze(0).to(inputs.device)
                    return inputs + bias
            """,
            line=5,
            message="`torch.eye(...)` fills a tensor on the host, then it is copied to the GPU, every call of `RingLayer.forward`",
        ),
        # Timesteps drawn with NumPy's choice on every step: `torch.multinomial` draws on the GPU.
        Invalid(
            """
            import numpy as np
            import torch
            device = torch.device("cuda")
            for batch in loader:
                t = torch.from_numpy(np.random.choice(1000, size=(len(batch),), p=probs)).long().to(device)
                loss = diffusion.loss(model, batch.to(device), t)
            """,
            line=5,
            message="`numpy.random.choice(...)` draws random numbers with the CPU generator",
        ),
        # A helper of the file returns a host draw; the training loop moves it to the GPU each step.
        Invalid(
            """
            import torch
            def random_message(nbits, batch_size):
                return torch.randint(0, 2, (batch_size, nbits))
            def train(model, loader, device="cuda"):
                for batch in loader:
                    x = batch.to(device)
                    message = random_message(16, x.shape[0]).to(device)
                    model(x, message).mean().backward()
            """,
            line=7,
            message="`torch.randint(...)` draws random numbers with the CPU generator, then they are copied to the GPU, every iteration of this loop",
        ),
        # The sinusoidal timestep embedding: a host `arange`, host math on it, then a copy, on
        # every forward of the model.
        Invalid(
            """
            import math
            import torch
            def timestep_embedding(timesteps, dim, max_period=10000):
                half = dim // 2
                freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(device=timesteps.device)
                args = timesteps[:, None].float() * freqs[None]
                return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
            """,
            line=5,
            message="`torch.arange(...)` fills a tensor on the host, then it is copied to the GPU, every call of `timestep_embedding`",
        ),
        # A rank read as a Python int from the launcher's environment is a CUDA device index.
        Invalid(
            """
            import os
            import torch
            local_rank = int(os.environ["LOCAL_RANK"])
            for batch in loader:
                counts = torch.zeros(2).to(local_rank)
                counts[0] += model(batch.to(local_rank)).sum()
            """,
            line=5,
        ),
        # A hidden state filled when the caller passes none (`H=None`, a parameter): again on
        # every call, not once, so every forward pays the host fill and the copy.
        Invalid(
            """
            import torch
            class GConvGRU(torch.nn.Module):
                def _set_hidden_state(self, X, H):
                    if H is None:
                        H = torch.zeros(X.shape[0], self.out_channels).to(X.device)
                    return H
                def forward(self, X, edge_index, H=None):
                    H = self._set_hidden_state(X, H)
                    return self.cell(X, edge_index, H)
            """,
            line=5,
            message="every call of `GConvGRU._set_hidden_state`",
        ),
        # The time of each sampling step, repeated into a list on the host and copied over.
        Invalid(
            """
            import torch

            @torch.no_grad()
            def sample(model, z, sample_steps=50):
                b = z.size(0)
                for i in range(sample_steps, 0, -1):
                    t = i / sample_steps
                    t = torch.tensor([t] * b).to(z.device)
                    z = z - model(z, t) / sample_steps
                return z

            sample(torch.nn.Linear(8, 8).cuda(), torch.randn(16, 8, device="cuda"))
            """,
            line=8,
            message="`torch.tensor(...)` fills a tensor on the host",
        ),
        # `torch.torch` is `torch`: the draw is still torch's CPU generator.
        Invalid(
            """
            import torch
            model = torch.nn.Linear(8, 8).cuda()
            for x in loader:
                x = x.cuda()
                t = torch.torch.rand(x.shape[0]).to("cuda")
                model(x * t[:, None]).mean().backward()
            """,
            line=5,
            message="`torch.rand(...)` draws random numbers with the CPU generator",
        ),
        # The same setting, turned on where the flow is built: the fill runs every step.
        Invalid(
            """
            import torch

            class RectifiedFlow(torch.nn.Module):
                def __init__(self, model):
                    super().__init__()
                    self.model = model
                    self.stratified = False

                def forward(self, x):
                    b = x.size(0)
                    if self.stratified:
                        quantiles = torch.linspace(0, 1, b + 1).to(x.device)
                        return self.model(x * quantiles[:-1, None])
                    return self.model(x)

            flow = RectifiedFlow(torch.nn.Linear(8, 8).cuda())
            flow.stratified = True
            for x in loader:
                flow(x.cuda()).mean().backward()
            """,
            line=12,
            message="`torch.linspace(...)` fills a tensor on the host",
        ),
        # The batch size is an item of the sizes the noise was drawn with (`shape[0]` of
        # `randn(*shape)`): `[i] * shape[0]` is a constant fill made on the host every step.
        Invalid(
            """
            import torch as th

            def p_sample_loop(model, shape, num_timesteps):
                img = th.randn(*shape, device="cuda")
                for i in reversed(range(num_timesteps)):
                    t = th.tensor([i] * shape[0]).cuda()
                    img = model(img, t)
                return img
            """,
            line=6,
            message="`torch.tensor(...)` fills a tensor on the host, then it is copied to the GPU, every iteration of this loop",
        ),
        # The count reaches the fill through two plain renamings of a size: still a size.
        Invalid(
            """
            import torch
            device = torch.device("cuda")
            for step, record in enumerate(records):
                n = record.shape[0]
                rows = n
                count = rows
                t = torch.tensor([0.5] * count).to(device)
                out = model(record.to(device), t)
            """,
            line=7,
            message="`torch.tensor(...)` fills a tensor on the host, then it is copied to the GPU, every iteration of this loop",
        ),
        # A contrastive loss's label table built on the host from `arange` and a comparison
        # of it with itself, then copied to the GPU on every training step.
        Invalid(
            """
            import torch
            import torch.nn.functional as F
            def info_nce_loss(features, batch_size, n_views, device):
                labels = torch.cat([torch.arange(batch_size) for _ in range(n_views)], dim=0)
                labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
                labels = labels.to(device)
                features = F.normalize(features, dim=1)
                return features @ features.T * labels
            def train(model, loader, device):
                for images in loader:
                    images = images.to(device)
                    loss = info_nce_loss(model(images), 256, 2, device).sum()
                    loss.backward()
            """,
            line=6,
            message="`torch.arange(...)` fills a tensor on the host, then it is copied to the GPU, every call of `info_nce_loss`, which runs in a loop",
        ),
        # A forward fills a column of ones per edge on the host before its loop over layers:
        # a loop over layers is no pass over data, so the fill is made on every batch.
        Invalid(
            """
            import torch
            from torch import nn
            class GatedGCN(nn.Module):
                def __init__(self, layers, device):
                    super().__init__()
                    self.layers = nn.ModuleList(layers)
                    self.embedding_e = nn.Linear(1, 64)
                    self.device = device
                def forward(self, g, h, e):
                    e = torch.ones(e.size(0), 1).to(self.device)
                    e = self.embedding_e(e)
                    for conv in self.layers:
                        h, e = conv(g, h, e)
                    return h
            """,
            line=10,
            message="`torch.ones(...)` fills a tensor on the host, then it is copied to the GPU, every call of `GatedGCN.forward`",
        ),
        # `torch.empty` fills nothing: the copy moves whatever the host memory held.
        Invalid(
            """
            import torch
            def sample(model, loader):
                for x in loader:
                    noise = torch.empty(x.shape[0], 128).cuda()
                    model(x.cuda(), noise.normal_())
            """,
            line=4,
            message="`torch.empty(x.shape[0], 128).cuda()`: `torch.empty(...)` allocates an uninitialised tensor on the host, "
            "then its bytes are copied to the GPU, every iteration of this loop",
        ),
        # A one-element zero made on the host and copied next to its operand on every call of a
        # schedule helper: the copy is computed with, not read for its device.
        Invalid(
            """
            import torch

            class NoiseSchedule:
                def __init__(self, beta_0=0.1, beta_1=20.0):
                    self.beta_0, self.beta_1 = beta_0, beta_1

                def inverse_lambda(self, lamb):
                    tmp = 2.0 * (self.beta_1 - self.beta_0) * torch.logaddexp(-2.0 * lamb, torch.zeros((1,)).to(lamb.device))
                    delta = self.beta_0 ** 2 + tmp
                    return tmp / (torch.sqrt(delta) + self.beta_0) / (self.beta_1 - self.beta_0)
            """,
            line=8,
            message="`torch.zeros(...)` fills a tensor on the host, then it is copied to the GPU, every call of `NoiseSchedule.inverse_lambda`",
        ),
        # StarGAN v2's style lookup: a Python range counted into a legacy LongTensor on the host in
        # every forward, then copied to the GPU.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class StyleEncoder(nn.Module):
                def __init__(self, dim, domains):
                    super().__init__()
                    self.heads = nn.Linear(dim, dim * domains)
                def forward(self, h, y):
                    out = self.heads(h).view(h.size(0), -1, h.size(1))
                    idx = torch.LongTensor(range(y.size(0))).to(y.device)
                    return out[idx, y]
            device = torch.device("cuda")
            encoder = StyleEncoder(64, 2).to(device)
            for h, y in loader:
                s = encoder(h.to(device), y.to(device))
                s.mean().backward()
            """,
            line=9,
            message="`range(...)` fills a tensor on the host",
        ),
        Invalid(
            # `next(fetcher)` runs the class's `__next__` once per step: its host draw is per step too
            """
            import torch
            class Fetcher:
                def __init__(self, loader, device):
                    self.iter, self.device = iter(loader), device
                def __next__(self):
                    x = next(self.iter)
                    z = torch.randn(x.size(0), 16)
                    return x.to(self.device), z.to(self.device)
            def train(model, loader, device):
                fetcher = Fetcher(loader, device)
                for step in range(100000):
                    x, z = next(fetcher)
                    model(x, z).mean().backward()
            """,
            line=8,
            message="`z.to(self.device)`: `torch.randn(...)` draws random numbers with the CPU generator, then they are "
            "copied to the GPU, every call of `Fetcher.__next__`, which runs in a loop",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        filled = []
        # `ptu.from_numpy(np.arange(d) / (d + 1))`: a helper of another file that copies its argument.
        uploaded = {id(transfer.node): transfer.copied for transfer in facts.transfers if transfer.through is not None}
        for call in facts.calls:
            copied = copied_by_constructor(call, facts) or uploaded.get(id(call.node))
            if copied is None and isinstance(call.node.func, cst.Attribute) and moves_to_device(call, facts):
                copied = call.node.func.value
            if copied is None:
                continue
            fill = host_fill(copied, call, facts)
            if fill is not None and not facts.in_test_code(call.ctx):
                filled.append((call, fill))
        statements = enclosing_statements(facts.module, {id(call.node) for call, _ in filled})
        drained = drained_to_time_each_iteration(facts) if filled else {}
        for call, fill in filled:
            if _discarded(statements.get(id(call.node)), call.node):
                continue  # `_ = torch.zeros(1).to(device)`: a probe that the device works
            if _empty(fill):
                continue  # `torch.zeros(0, 3)`, a mesh without faces: nothing to fill or copy
            # A helper that returns the fill (`random_message(n).to(dev)`) fills once per call of it.
            made_at = fill.ctx if fill.ctx.function is call.ctx.function else call.ctx
            often = _how_often(made_at, facts)
            if often is Runs.ONCE or (often is Runs.SAMPLED and not made_at.repeated):
                continue  # a one-off set-up copy, or one per call of code run now and then (a sample image every N steps)
            if often in (Runs.PER_CALL, Runs.SAMPLED) and _one_element(fill) and _read_for_its_device(statements.get(id(call.node)), call.node):
                continue  # `torch.empty(1).cuda().device` in code not seen to repeat: a probe, microseconds a call
            if often is not Runs.REPEATED and _how_often(call.ctx, facts) is Runs.REPEATED:
                continue  # filled once, copied every iteration: an unchanging copy (GPU101's finding)
            if often is Runs.REPEATED and not made_at.repeated and _small(fill) and loops_over_gpu_work(made_at.function):
                continue  # a flag vector set up by a call that then runs a loop of model calls: a sliver of it
            if often is Runs.REPEATED and not made_at.repeated and made_at.function.runs_iterations:
                continue  # an attack's random start, made once before its hundred steps: a sliver of the call
            if _built_before_iterations(made_at.function):
                continue  # the same, in the constructor of an object that call builds (an attack's step-size schedule)
            if not made_at.repeated and walks_data(made_at.function, facts):
                continue  # a dummy input made once per evaluation pass that the call then runs: set-up
            if often is Runs.REPEATED and sets_up_a_measurement(made_at, facts):
                continue  # operands of one benchmarked configuration, made outside what the harness times
            if often is Runs.REPEATED and outside_timed_windows(made_at, call.node, facts, drained):
                continue  # a step's input made before the clock starts, in a loop that drains the GPU to time each step
            report = _report(call, fill, often, made_at, facts)
            if report is not None:
                yield report


def _built_before_iterations(function: FunctionFacts) -> bool:
    """A plain class's constructor that this file only calls outside the loops of functions
    that each run a loop of model calls (`scheduler = GenAttackScheduler(x)` before an attack's
    iterations): what it fills is made once per such call, a sliver of it."""
    sites = function.built_at
    return bool(sites) and not function.called_from_project and all(not site.repeated and site.function.runs_iterations for site in sites)


def _discarded(statement: cst.CSTNode | None, node: cst.Call) -> bool:
    """The copy is the whole statement and nothing keeps it (`_ = x.to(device)`, or a bare
    `x.cuda()`): it is made to see that copying works, not to compute with."""
    if isinstance(statement, cst.Expr):
        return statement.value is node
    return (
        isinstance(statement, cst.Assign)
        and statement.value is node
        and all(isinstance(target.target, cst.Name) and target.target.value == "_" for target in statement.targets)
    )


def _report(call: CallFact, fill: HostFill, often: Runs, made_at: Context, facts: ModuleFacts) -> Report | None:
    """Host fills that repeat (per iteration or per call): a warning. Host random draws: only
    where they are seen to repeat in a loop (drawing on the host is often meant: CPU and CUDA
    generators give different numbers), and a note when a seed or generator shows it is meant."""
    function = call.ctx.function.name
    where = (
        f"every call of `{function}`"
        if often in (Runs.PER_CALL, Runs.SAMPLED)
        else "every iteration of this loop" if made_at.repeated else f"every call of `{function}`, which runs in a loop"
    )
    code, qualname = short(facts.code(call.node)), fill.factory.qualname
    fix, factory = gpu_call(qualname, fill.random), (qualname or "").removeprefix("builtins.")  # `range(...)` counted into a tensor
    if not fill.random and (factory or "").rsplit(".", 1)[-1] in kb.UNINITIALISED_FACTORIES:
        return Report(
            call.node,
            f"`{code}`: `{factory}(...)` allocates an uninitialised tensor on the host, then its bytes are copied to the "
            f"GPU, {where}: a host allocation and a blocking copy of nothing useful where one GPU allocation would do",
            f"Allocate it on the GPU directly: {fix}.",
        )
    if not fill.random:
        return Report(
            call.node,
            f"`{code}`: `{factory}(...)` fills a tensor on the host, then it is copied to the GPU, {where}: "
            "an allocation, a host fill and a blocking copy where one GPU fill would do",
            f"Create it on the GPU directly: {fix} (pass `dtype=` too when you convert).",
        )
    if often is not Runs.REPEATED:
        return None
    if _seeded(fill, facts):
        return Report(
            call.node,
            f"`{code}`: `{factory}(...)` draws random numbers with the CPU generator, then they are copied to the GPU, "
            f"{where}; seeded host draws look intended (the same numbers on every device), so this is a note",
            f"If the numbers need not match a CPU run, draw on the GPU: {fix} with a CUDA `torch.Generator`.",
            severity=Severity.INFO,
        )
    return Report(
        call.node,
        f"`{code}`: `{factory}(...)` draws random numbers with the CPU generator, then they are copied to the GPU, "
        f"{where}: a slow host draw and a blocking copy where a GPU draw would do",
        f"Draw them on the GPU: {fix}.",
    )
