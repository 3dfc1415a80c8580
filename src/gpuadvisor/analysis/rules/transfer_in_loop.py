"""GPU101: a host<->device copy of the same data on every loop iteration."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.call_sites import arguments_at_sites, takes_branch
from gpuadvisor.analysis.facts.frequency import counts_epochs, forward_of_gpu_module, is_setting_switch
from gpuadvisor.analysis.facts.imports import names_in_target
from gpuadvisor.analysis.facts.traverse import child_nodes, own_nodes
from gpuadvisor.analysis.facts.measurement import sets_up_a_measurement
from gpuadvisor.analysis.facts.module_facts import CallFact, EventKind, FunctionFacts, LoopFacts, ModuleFacts, Runs, Transfer
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import (
    contains,
    guarded_by_iteration,
    has_opaque_call,
    is_loop_invariant,
    names_bound_in,
    plain_array,
    referenced_names,
    short,
    written_by_kernels_in,
)
from gpuadvisor.analysis.facts.values import Kind
from gpuadvisor.analysis.rules.host_fill import host_fill
from gpuadvisor.analysis.rules.timing import once_per_pass


def _memoized_tables(function: cst.FunctionDef, transfer: Transfer, memoized: set[int]) -> set[str]:
    """Names the function binds only to a memoized call's result (`window = self.get_window(kind,
    n)` of an `lru_cache`d method), apart from the copy's own statement (`window =
    torch.from_numpy(window).to(wav.device)`): the same host table comes back for the same
    arguments, so copying it on every call copies one table again and again. `memoized`: the
    file's memoized calls (`ModuleFacts.memoized_calls`)."""
    if not memoized:
        return set()
    cached: set[str] = set()
    other: set[str] = set()
    for node in own_nodes(function.body):
        if not isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) or contains(node, transfer.node):
            continue
        targets = [target.target for target in node.targets] if isinstance(node, cst.Assign) else [node.target]
        names = {name for target in targets for name in names_in_target(target)}
        single = isinstance(node, cst.Assign) and len(targets) == 1 and isinstance(targets[0], cst.Name)
        (cached if single and id(node.value) in memoized else other).update(names)
    return cached - other


class TransferInLoop(Rule):
    code = "GPU101"
    category = "transfer-in-loop"
    severity = Severity.WARNING
    summary = "Host<->device copy repeated every loop iteration although the data does not change"

    VALID = [
        # A random draw makes new data on every iteration: its copy is not the same data copied again
        # (GPU102 reports the host draw).
        Valid(
            """
            import numpy as np
            import torch

            model = torch.nn.Linear(640, 10).cuda()
            for step in range(1000):
                mask = torch.from_numpy(np.random.binomial(1, 0.9, size=(256, 640)).astype(np.float32)).cuda()
                model(batch * mask)
            """,
        ),
        # `norm.detach().clone().to(device)` for each subset: `clone()` asks for a fresh tensor each
        # time (one buffer per subset, each free to change on its own), so hoisting it out of the loop
        # would share one; not the same table sent again (deepinv's tomography subsets).
        Valid(
            """
            import torch


            def split_physics(physics, subsets, device):
                for subset in subsets:
                    subset.register_buffer("operator_norm", physics.operator_norm.detach().clone().to(device))
                    subset.normalize = True
            """
        ),
        # The accumulators an epoch's evaluation starts from, made beside its loops over the data:
        # a few scalars copied once per pass.
        Valid(
            """
            import torch


            def train(model, loader, valloader, optimizer, epochs):
                model = model.cuda()
                for epoch in range(epochs):
                    for image, depth in loader:
                        loss = (model(image.cuda()) - depth.cuda()).abs().mean()
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    totals = {"abs_rel": torch.tensor([0.0]).cuda(), "rmse": torch.tensor([0.0]).cuda()}
                    for image, depth in valloader:
                        with torch.no_grad():
                            error = model(image.cuda()) - depth.cuda()
                        totals["abs_rel"] += error.abs().mean()
                        totals["rmse"] += error.pow(2).mean().sqrt()
                    print({name: value / len(valloader) for name, value in totals.items()})
            """
        ),
        # The loop writes each pose into the batch through `getattr(batch.camera, k)[0] = ...`:
        # the batch changes, so each copy carries new data.
        Valid(
            """
            import torch


            def render_poses(model, batch, poses, device="cuda"):
                model = model.to(device)
                frames = []
                for pose in poses:
                    for k in ("R", "T"):
                        getattr(batch.camera, k)[0] = getattr(pose, k)
                    net_input = batch.to(device)
                    frames.append(model(net_input))
                return frames
            """
        ),
        # `torch.zeros_like(X)` is made where `X` lives: with `X` handed in from callers we cannot
        # see, the `.cuda()` may copy nothing (fast_adversarial's random restarts).
        Valid(
            """
            import torch


            def attack_pgd(model, X, y, restarts):
                for _ in range(restarts):
                    delta = torch.zeros_like(X).cuda()
                    delta.uniform_(-0.03, 0.03)
                    loss = torch.nn.functional.cross_entropy(model(X + delta), y)
                    loss.backward()
            """
        ),
        # A memoized helper that returns the table already on the device (Whisper's mel filters):
        # the copy runs once per device and size, not once per call.
        Valid(
            """
            import functools
            import librosa
            import torch


            @functools.lru_cache(maxsize=None)
            def mel_filters(device, n_mels):
                table = librosa.filters.mel(sr=16000, n_fft=400, n_mels=n_mels)
                return torch.from_numpy(table).to(device)


            def log_mel(audio, n_mels=80):
                stft = torch.stft(audio, 400, 160, return_complex=True)
                return (mel_filters(audio.device, n_mels) @ stft.abs() ** 2).clamp(min=1e-10).log10()


            model = Whisper().cuda()
            optimizer = torch.optim.AdamW(model.parameters())
            for audio, tokens in loader:
                audio, tokens = audio.cuda(), tokens.cuda()
                loss = model(log_mel(audio), tokens)
                loss.backward()
                optimizer.step()
            """
        ),
        # An empty cache per layer (`torch.tensor([], device=...)`, OpenNMT's decoder): no elements, no copy.
        Valid(
            """
            import torch

            class Decoder(torch.nn.Module):
                def init_cache(self, enc_out):
                    for layer in self.layers:
                        layer.cache = {
                            "keys": torch.tensor([], device=enc_out.device),
                            "values": torch.tensor([], device=enc_out.device),
                        }

            decoder = Decoder().cuda()
            for batch in loader:
                decoder.init_cache(encoder(batch.cuda()))
            """
        ),
        # A buffer registered by the file's mixin moves with the module: `.to(x)` copies nothing.
        Valid(
            """
            import torch
            from torch import nn
            class PermutationMixin:
                def update_layer(self, n):
                    P = torch.empty((4, n, n))
                    for i in range(4):
                        P[i] = torch.eye(n)
                    self.register_buffer("perm", P, persistent=False)
            class Rotated(nn.Module, PermutationMixin):
                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    for name in self.active_adapters:
                        P = self.perm.to(x)
                        x = x @ P[0]
                    return x
            model = Rotated().cuda()
            """
        ),
        # A constant inside a function a project helper compiles (`torch.compile` traces it once
        # and keeps the constant on the device with the graph).
        Valid(
            """
            import torch
            def maybe_compile(*args, **kwargs):
                if not hasattr(torch, "compile"):
                    return args[0]
                return torch.compile(*args, **kwargs)
            @maybe_compile
            def get_viewmat(c2w):
                return c2w[:, :3, :3] * torch.tensor([[[1, -1, -1]]], device=c2w.device, dtype=c2w.dtype)
            c2w = torch.randn(1, 4, 4, device="cuda")
            for step in range(1000):
                v = get_viewmat(c2w)
            """
        ),
        # A parameter moves with its module (`model.cuda()` elsewhere): `.to(x.device)` is a no-op then.
        Valid(
            """
            import torch
            class Gate(torch.nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.scale = torch.nn.Parameter(torch.ones(n))
                def forward(self, x):
                    return x * self.scale.view(1, -1).to(x.device)
            """
        ),
        # A copy made every 500 steps, not every step.
        Valid(
            """
            import torch
            def train(model, loader, optimizer, mask_np):
                for step, batch in enumerate(loader):
                    loss = model(batch.cuda()).mean()
                    loss.backward()
                    optimizer.step()
                    if step % 500 == 0:
                        mask = torch.from_numpy(mask_np).cuda()
                        model.apply_mask(mask)
            """
        ),
        # Each call of `next()` on an endless loader hands back a new batch: not the same data.
        Valid(
            """
            import torch
            def train_generator(G, D, loader, steps, accumulate):
                for step in range(steps):
                    for _ in range(accumulate):
                        images = next(loader).cuda()
                        loss = D(G(torch.randn(8, 64, device="cuda"))).mean() - D(images).mean()
                        loss.backward()
            """
        ),
        # A branch no caller turns on: every call leaves `top_k` at None, so the copy never runs.
        Valid(
            """
            import torch
            def generate(model, idx, max_new_tokens, top_k=None, eos_id=None):
                for _ in range(max_new_tokens):
                    logits = model(idx)[:, -1, :]
                    if top_k is not None:
                        top, _ = torch.topk(logits, top_k)
                        logits = torch.where(logits < top[:, -1:], torch.tensor(float("-inf")).to(logits.device), logits)
                    idx_next = torch.argmax(logits, dim=-1, keepdim=True)
                    if idx_next == eos_id:
                        break
                    idx = torch.cat((idx, idx_next), dim=1)
                return idx
            def reply(model, idx):
                return generate(model.cuda(), idx.cuda(), max_new_tokens=256, eos_id=50256)
            """
        ),
        # The peak memory the device holds is read again each step: it changes as the run goes,
        # so the upload is of new data, not of one value that could be hoisted.
        Valid(
            """
            import torch
            import torch.distributed as dist

            def train(engine, batches, device):
                for batch in batches:
                    loss = engine(**batch).loss
                    engine.backward(loss)
                    engine.step()
                    peak = torch.tensor(torch.cuda.max_memory_reserved(device) / 2**30, device=device)
                    dist.all_reduce(peak, op=dist.ReduceOp.MAX)
            """
        ),
        # An offload switch (`if args.offload:`) moving an object that may be a whole pipeline back
        # to the host: not data we know to be an array, so not a table re-copied on every step.
        Valid(
            """
            import torch
            def main(args, accelerator, loader, pipe):
                def compute(prompt, text_encoding_pipeline):
                    text_encoding_pipeline = text_encoding_pipeline.to(accelerator.device)
                    embeds = text_encoding_pipeline.encode_prompt(prompt)
                    if args.offload:
                        text_encoding_pipeline = text_encoding_pipeline.to("cpu")
                    return embeds
                for batch in loader:
                    e = compute(batch["prompt"], pipe)
                    e.sum().backward()
            """
        ),
        # A method named for the copy (`copy_to_device`): a caller calls it when it wants the
        # device copy, so the copy is the method's job, not a table re-sent on every step.
        Valid(
            """
            import dataclasses
            import cupy as cp
            import numpy as np
            @dataclasses.dataclass
            class PositionOptions:
                initial_scan: np.ndarray
                use_adaptive_moment: bool = False
                def append(self, new_scan):
                    self.initial_scan = np.append(self.initial_scan, values=new_scan, axis=-2)
                def copy_to_device(self):
                    return PositionOptions(cp.asarray(self.initial_scan), self.use_adaptive_moment)
            """
        ),
        # A copy made only when the call's own argument asks for it (`if first:`), not on every call.
        Valid(
            """
            import torch
            class Agent:
                def update(self, batch, first):
                    if first:
                        self.zero = torch.tensor(0.).to("cuda")
                    return self.critic(batch.to("cuda")).mean() + self.zero
            agent = Agent()
            for step, batch in enumerate(loader):
                agent.update(batch, step == 0)
            """
        ),
        # A closure defined in the batch loop copies that iteration's batch: new data each call.
        Valid(
            """
            import torch
            def train(encoder, loader, optimizer, device):
                for itr, (udata, masks) in enumerate(loader):
                    def load_imgs():
                        imgs = udata[0].to(device, non_blocking=True)
                        return imgs, [m.to(device, non_blocking=True) for m in masks]
                    imgs, masks_enc = load_imgs()
                    loss = encoder(imgs, masks_enc).mean()
                    loss.backward()
                    optimizer.step()
            """
        ),
        # The same edge list handed to `train()` once per epoch: one copy per pass over the data,
        # nothing next to the pass itself.
        Valid(
            """
            import torch

            def train(model, x, split_edge, optimizer, batch_size):
                source = split_edge["train"]["source_node"].to(x.device)
                for perm in torch.utils.data.DataLoader(range(source.size(0)), batch_size, shuffle=True):
                    loss = model(x, source[perm]).mean()
                    loss.backward()
                    optimizer.step()

            x = torch.randn(1000, 64, device="cuda")
            split_edge = load_edges()
            for epoch in range(1, 101):
                train(model, x, split_edge, optimizer, 4096)
            """
        ),
        # Scales computed by a helper from activations on the GPU are GPU values: moving them to
        # a weight's device copies nothing from the host.
        Valid(
            """
            import torch
            def get_act_scale(x):
                return x.abs().view(-1, x.shape[-1]).mean(0)
            def search(block, linears, x):
                x = x.to(next(block.parameters()).device)
                x_max = get_act_scale(x)
                for ratio in range(20):
                    scales = x_max.pow(ratio / 20).clamp(min=1e-4).view(-1)
                    for fc in linears:
                        fc.weight.mul_(scales.view(1, -1).to(fc.weight.device))
            """
        ),
        # A renderer reads the simulation's GPU state back once per frame: the frame is the
        # output, and the state the method reads is its object's own, not something handed in.
        Valid(
            """
            import torch

            class Example:
                def __init__(self):
                    self.positions = torch.zeros(100, 3, device="cuda")

                def render(self):
                    return self.positions.cpu().numpy()

            example = Example()
            for frame in range(100):
                example.render()
            """
        ),
        # A helper that uploads what it is handed, handed a new batch of a host replay buffer
        # on every step: each copy is new data.
        Valid(
            """
            import numpy as np
            import torch

            def to_device(arr, like):
                return torch.from_numpy(arr).to(device=like.device)

            def train(model, buffer, steps):
                probe = torch.zeros(1, device="cuda")
                for step in range(steps):
                    batch = buffer.sample(256)
                    loss = model(to_device(batch, probe)).mean()
                    loss.backward()
            """
        ),
        # Warp: a host array (`device="cpu"`) filled per substep copies nothing; the loss read back in a
        # loop that replays the graph writing it is new data each time (GPU201's business).
        Valid(
            """
            import numpy as np
            import warp as wp
            forces = wp.zeros(1, dtype=wp.vec3)
            for substep in range(16):
                gravity = wp.array([[0.0, -9.8, 0.0]], dtype=wp.vec3, device="cpu")
                wp.launch(integrate, dim=1024, inputs=[forces, gravity])
            loss = wp.zeros(1, dtype=float)
            for i in range(100):
                wp.capture_launch(graph)
                history = loss.numpy()
            """
        ),
        # A replay buffer's draw: rows picked by random indices are a new batch on every call.
        Valid(
            """
            import numpy as np
            import torch
            class ReplayBuffer:
                def __init__(self, capacity, device):
                    self.device = device
                    self.actions = np.empty((capacity, 6), dtype=np.float32)
                def sample(self, batch_size):
                    idxs = np.random.randint(0, len(self.actions), size=batch_size)
                    return torch.as_tensor(self.actions[idxs], device=self.device)
            """
        ),
        # A slice copies nothing, and a list index of a host tensor stays on the host.
        Valid(
            """
            import torch
            def generate(model, idx, steps, table):
                for _ in range(steps):
                    logits = model(idx)[:, -1, :]
                    v, _ = torch.topk(logits, 50)
                    logits[logits < v[:, -1:]] = -float("Inf")
                    weights = table[:, [0, 2]]
                    idx = torch.cat((idx, torch.argmax(logits * weights.sum(), dim=-1, keepdim=True)), dim=1)
                return idx
            model = GPT().cuda()
            generate(model, torch.zeros((1, 1), dtype=torch.long, device="cuda"), 100, torch.ones(4, 4))
            """
        ),
        # Moved once in `__init__`, or what the method is handed: not a fixed table re-copied.
        Valid(
            """
            import torch
            class Scheduler:
                def __init__(self, device, n=1000):
                    self.betas = torch.linspace(1e-4, 0.02, n).to(device)
                def set_timesteps(self, n, device):
                    self.timesteps = torch.arange(n).to(device)
                def scale(self, sample, sigma):
                    return sample / sigma.to(sample.device)
            """
        ),
        # One receive buffer per rank: each must be a distinct tensor, so one hoisted copy would alias them.
        Valid(
            """
            import torch
            import torch.distributed as dist
            def all_gather_sizes(local_size, world_size):
                sizes = [torch.IntTensor([0]).to("cuda") for _ in range(world_size)]
                dist.all_gather(sizes, local_size)
                return sizes
            """
        ),
        Valid(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            model = Net().to(device)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = loss_fn(model(x), y)
            """
        ),
        Valid(
            """
            import torch
            weights = torch.from_numpy(w_np).cuda()
            for step in range(100):
                out = weights @ inputs[step]
            """
        ),
        Valid(
            """
            import cupy as cp
            for path in files:
                batch = cp.asarray(np.load(path))
            """
        ),
        Valid(
            """
            import torch
            cache = None
            for step in range(100):
                if cache is None:
                    cache = table.cuda()
            """
        ),
        Valid(
            """
            import torch
            for epoch in range(10):
                model.cuda()
            """
        ),
        Valid(
            """
            import torch
            for trial in range(10):
                noise = torch.randn(64, 3).cuda()
                sample = np.random.rand(100)
                gpu_sample = torch.from_numpy(np.random.rand(100)).cuda()
            """
        ),
        Valid(
            """
            import torch
            def embed(tokens, table):
                return table.to("cuda")[tokens]
            def cached_weights(self):
                if self._weights is None:
                    self._weights = self.host_weights.to("cuda")
                return self._weights
            for batch in loader:
                out = embed(batch, vocab) + cached_weights(model)
            """
        ),
        Valid(
            """
            import cupy
            def minima(arrays):
                return cupy.concatenate(
                    [a.min(keepdims=True) if a.size != 0 else cupy.asarray([0]) for a in arrays]
                )
            """
        ),
        Valid(
            """
            import torch
            head_dims = [64, 128, 256]
            for head_dim in head_dims:
                q = torch.randn(8, 4096, 16, head_dim, device="cuda")
                scale = torch.tensor([1.0], device="cuda")
                benchmark(attention, q, scale)
            """
        ),
        # The same launches on device arrays: copied once, before the loop.
        Valid(
            """
            import numpy as np
            from numba import cuda
            @cuda.jit
            def scale(x, out):
                i = cuda.grid(1)
                if i < x.size:
                    out[i] = 2 * x[i]
            x = cuda.to_device(np.random.rand(1_000_000))
            out = cuda.device_array_like(x)
            for step in range(100):
                scale[1024, 1024](x, out)
            """
        ),
        # Indices built on the GPU, and rows picked by a sampler's host indices (data, not a fill).
        Valid(
            """
            import torch
            model = Net().cuda()
            for images, labels, picked in loader:
                out = model(images.cuda())
                best = out[torch.arange(out.shape[0], device=out.device), labels.cuda()]
                chosen = out[picked]
            """
        ),
        # A table of numbers written in the code, copied by a helper the script runs once: set-up, not per call.
        Valid(
            """
            import torch


            def make_weights():
                weights = torch.tensor([0.25, 0.5, 0.25])
                return weights.cuda()


            KERNEL = make_weights()
            """,
        ),
    ]
    INVALID = [
        # Informer's ProbAttention: a helper its forward runs on every call indexes the queries with a
        # host `arange`, so each pass of the model copies the index to the GPU first.
        Invalid(
            """
            import torch
            import torch.nn as nn


            class ProbAttention(nn.Module):
                def _reduce(self, Q, top):
                    return Q[torch.arange(Q.shape[0])[:, None], top]

                def forward(self, queries, keys):
                    B, L, E = queries.shape
                    scores = torch.matmul(queries, keys.transpose(-2, -1))
                    top = scores.max(-1)[0].topk(8, sorted=False)[1]
                    return self._reduce(queries, top)


            attention = ProbAttention().cuda()
            """,
            line=7,
        ),
        # tortoise-tts' copy of guided-diffusion's `_extract_into_tensor`: `arr.astype(np.float32)` of
        # the same schedule table is the same data on every call, so the copy repeats what the last
        # call already sent.
        Invalid(
            """
            import numpy as np
            import torch as th


            def _extract_into_tensor(arr, timesteps, broadcast_shape):
                res = th.from_numpy(arr.astype(np.float32)).to(device=timesteps.device)[timesteps]
                while len(res.shape) < len(broadcast_shape):
                    res = res[..., None]
                return res.expand(broadcast_shape)


            class Diffusion:
                def __init__(self, betas):
                    self.alphas = 1.0 - np.array(betas, dtype=np.float64)

                def p_sample(self, model, x, t):
                    return model(x, t) * _extract_into_tensor(self.alphas, t, x.shape)

                def p_sample_loop(self, model, shape, device):
                    img = th.randn(*shape, device=device)
                    for i in reversed(range(1000)):
                        t = th.full((shape[0],), i, device=device)
                        img = self.p_sample(model, img, t)
                    return img
            """,
            line=6,
        ),
        # The validation set copied again each epoch, beside the epoch's loop over the batches:
        # once per pass, but the same data every time, and not a handful of numbers.
        Invalid(
            """
            import torch


            def fit(model, loader, X_val, optimizer, epochs):
                model = model.cuda()
                X_val = torch.from_numpy(X_val)
                for epoch in range(epochs):
                    for xb, yb in loader:
                        loss = torch.nn.functional.cross_entropy(model(xb.cuda()), yb.cuda())
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    with torch.no_grad():
                        preds = model(X_val.cuda()).argmax(dim=1)
                    print(epoch, preds.float().mean().item())
            """,
            line=14,
        ),
        # A helper that copies a memoized host table (an `lru_cache`d window or filter bank) on every
        # call, once per scale of a loss computed on every training step: the same copy each time.
        Invalid(
            """
            import functools
            import torch
            from scipy import signal


            class MultiScaleMelLoss(torch.nn.Module):
                def __init__(self, window_lengths=(32, 64, 128, 256)):
                    super().__init__()
                    self.window_lengths = window_lengths

                @staticmethod
                @functools.lru_cache(None)
                def get_window(window_type, window_length):
                    return signal.get_window(window_type, window_length)

                def spectrogram(self, wav, window_length):
                    window = self.get_window("hann", window_length)
                    window = torch.from_numpy(window).to(wav.device).float()
                    return torch.stft(wav, n_fft=window_length, window=window, return_complex=True).abs()

                def forward(self, x, y):
                    loss = 0.0
                    for n in self.window_lengths:
                        loss = loss + (self.spectrogram(x, n) - self.spectrogram(y, n)).abs().mean()
                    return loss


            model = Vocoder().cuda()
            mel_loss = MultiScaleMelLoss()
            optimizer = torch.optim.AdamW(model.parameters())
            for mel, wav in loader:
                mel, wav = mel.cuda(), wav.cuda()
                loss = mel_loss(model(mel), wav)
                loss.backward()
                optimizer.step()
            """,
            line=18,
            message="but `window` comes from a memoized (`lru_cache`) call",
        ),
        # A mask filled on the host and edited with a constant is still a host fill: indexing the
        # GPU scores with it copies it on every generated token.
        Invalid(
            """
            import torch
            from transformers import LogitsProcessor
            class ForceLabel(LogitsProcessor):
                def __init__(self, label_ids):
                    self.label_ids, self.step = label_ids, 0
                def __call__(self, input_ids, scores):
                    mask = torch.ones(scores.size(), dtype=torch.bool)
                    mask[0, self.label_ids[self.step]] = False
                    scores[mask] = -float("inf")
                    self.step += 1
                    return scores
            device = "cuda"
            """,
            line=9,
            message="`scores[mask]` indexes a GPU array with `mask`, made on the host: the index is copied to the GPU",
        ),
        # Warp: a constant force uploaded from a Python list on every substep of a simulation.
        Invalid(
            """
            import warp as wp

            class Example:
                def __init__(self, n):
                    self.body_f = wp.zeros(n, dtype=wp.spatial_vector)

                def simulate(self):
                    for _ in range(self.sim_substeps):
                        self.body_f.assign([[0.0, 0.0, -7000.0, 0.0, 0.0, 0.0]])
                        wp.launch(integrate, dim=len(self.body_f), inputs=[self.body_f])
            """,
            line=9,
            message="copies `[[0.0, 0.0, -7000.0, 0.0, 0.0, 0.0]]` from host to GPU on every iteration",
        ),
        Invalid(
            """
            import torch
            X = torch.from_numpy(X_np)
            for epoch in range(100):
                X_gpu = X.cuda()
                loss = (model(X_gpu) - y).pow(2).mean()
            """,
            line=4,
        ),
        Invalid(
            """
            import numpy as np
            import cupy as cp
            kernel = np.hanning(64)
            for frame in frames:
                k = cp.asarray(kernel)
                out = cp.convolve(frame, k)
            """,
            line=5,
        ),
        Invalid(
            """
            import torch
            dev = torch.device("cuda")
            mask = torch.ones(512, 512)
            results = [img * mask.to(dev) for img in images]
            """,
            line=4,
        ),
        Invalid(
            """
            import cupy as cp
            table = cp.arange(1000)
            for i in range(10):
                host_table = cp.asnumpy(table)
                total += host_table[i]
            """,
            line=4,
        ),
        Invalid(
            """
            import torch
            def get_sigmas(timesteps):
                sigmas = noise_scheduler.sigmas.to(device=accelerator.device)
                return sigmas[timesteps]
            for step, batch in enumerate(loader):
                latents = batch["pixel_values"].to(accelerator.device)
                loss = (latents * get_sigmas(batch["timesteps"])).mean()
            """,
            line=3,
            message="on every call of `get_sigmas()`",
        ),
        Invalid(
            """
            import torch
            device = torch.accelerator.current_accelerator()
            mask = torch.ones(512, 512)
            for x in loader:
                out = model(x.to(device)) * mask.to(device)
            """,
            line=5,
        ),
        Invalid(
            """
            import torch
            def train(rank):
                device = torch.device(f"cuda:{rank}")
                mask = torch.ones(512, 512)
                for x in loader:
                    out = model(x.to(device)) * mask.to(device)
            """,
            line=6,
        ),
        Invalid(
            """
            import torch
            def train(local_rank):
                mask = torch.ones(512, 512)
                for x in loader:
                    out = model(x.to(local_rank)) * mask.to(local_rank)
            """,
            line=5,
        ),
        Invalid(
            """
            import torch
            def select_device():
                return torch.device("cuda" if torch.cuda.is_available() else "cpu")
            device = select_device()
            mask = torch.ones(512, 512)
            for x in loader:
                out = model(x.to(device)) * mask.to(device)
            """,
            line=7,
        ),
        # A schedule table the object keeps on the host, copied on every call of a method.
        Invalid(
            """
            import torch
            class VPSDE:
                def __init__(self, n=1000):
                    self.discrete_betas = torch.linspace(1e-4, 0.02, n)
                def discretize(self, x, t):
                    beta = self.discrete_betas.to(x.device)[t]
                    return x * beta
            """,
            line=6,
            message="`self.discrete_betas.to(x.device)` copies `self.discrete_betas`, a table the object keeps on the "
            "host, to the GPU on every call of `discretize()`",
        ),
        # A numba kernel launched on host arrays: numba copies them in and out at every launch.
        Invalid(
            """
            import numpy as np
            from numba import cuda
            @cuda.jit
            def scale(x, out):
                i = cuda.grid(1)
                if i < x.size:
                    out[i] = 2 * x[i]
            x = np.random.rand(1_000_000)
            out = np.empty_like(x)
            for step in range(100):
                scale[1024, 1024](x, out)
            """,
            line=11,
            message="`scale` is launched with host NumPy arrays (`x`, `out`) on every iteration",
        ),
        # A slice of a rotary table the module keeps as a plain attribute (not a buffer, so moving
        # the module leaves it on the host), copied on every forward pass.
        Invalid(
            """
            import torch
            class Rotary(torch.nn.Module):
                def __init__(self, dim, max_len):
                    super().__init__()
                    freqs = torch.outer(torch.arange(max_len).float(), torch.arange(0, dim, 2).float())
                    self.cos_cached = freqs.cos()
                def forward(self, x):
                    return self.cos_cached[: x.shape[0]].to(x.device)
            """,
            line=8,
            message="a table the object keeps on the host",
        ),
        # A hash encoding's per-level scales, a plain attribute reshaped on every forward pass.
        Invalid(
            """
            import torch
            class HashEncoding(torch.nn.Module):
                def __init__(self, num_levels=16, min_res=16, growth=1.4):
                    super().__init__()
                    self.scalings = torch.floor(min_res * growth ** torch.arange(num_levels))
                def forward(self, x):
                    return x[..., None, :] * self.scalings.view(-1, 1).to(x.device)
            """,
            line=7,
            message="copies `self.scalings.view(-1, 1)`, a table the object keeps on the host",
        ),
        # Top-k filtering in a generation loop indexes the GPU values with a list literal.
        Invalid(
            """
            import torch
            @torch.no_grad()
            def generate(model, idx, max_new_tokens, top_k=200):
                for _ in range(max_new_tokens):
                    logits = model(idx)[:, -1, :]
                    v, _ = torch.topk(logits, top_k)
                    logits[logits < v[:, [-1]]] = -float("Inf")
                    idx = torch.cat((idx, torch.argmax(logits, dim=-1, keepdim=True)), dim=1)
                return idx
            model = GPT().cuda()
            generate(model, torch.zeros((1, 1), dtype=torch.long, device="cuda"), 100)
            """,
            line=7,
            message="indexes a GPU array with the Python list `[-1]`",
        ),
        # CuPy queues the copy of a list index without waiting for the GPU (measured), so the
        # message does not call it blocking.
        Invalid(
            """
            import cupy as cp
            grid = cp.random.random((512, 512))
            for step in range(1000):
                corners = grid[[0, -1]]
                grid = grid * 0.5 + corners.mean()
            """,
            line=4,
            message="the list is copied to the GPU (a host-to-device copy) on every iteration",
        ),
        # A row index made on the host in a pooling step that a module runs on every forward.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class TextEncoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(512, 512)
                def forward(self, tokens, text):
                    x = self.proj(tokens)
                    return x[torch.arange(x.shape[0]), text.argmax(dim=-1)]
            encoder = TextEncoder().cuda()
            for tokens, text in loader:
                features = encoder(tokens.cuda(), text.cuda())
            """,
            line=9,
            message="made on the host: the index is copied to the GPU",
        ),
        # Per-token sampling with a list index: the index copy blocks every token (measured: a
        # Python-list index waits for the GPU; `multinomial` does not, so nothing else drains the queue).
        Invalid(
            """
            import torch
            @torch.no_grad()
            def generate(model, idx, max_new_tokens, top_k=200):
                for _ in range(max_new_tokens):
                    logits = model(idx)[:, -1, :]
                    v, _ = torch.topk(logits, top_k)
                    logits[logits < v[:, [-1]]] = -float("Inf")
                    idx_next = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1)
                    idx = torch.cat((idx, idx_next), dim=1)
                return idx
            model = GPT().cuda()
            generate(model, torch.zeros((1, 1), dtype=torch.long, device="cuda"), 100)
            """,
            line=7,
            message="indexes a GPU array with the Python list `[-1]`",
        ),
        # CuPy queues the copy of a list index without waiting for the GPU (measured), so the
        # message does not call it blocking.
        Invalid(
            """
            import cupy as cp
            grid = cp.random.random((512, 512))
            for step in range(1000):
                corners = grid[[0, -1]]
                grid = grid * 0.5 + corners.mean()
            """,
            line=4,
            message="the list is copied to the GPU (a host-to-device copy) on every iteration",
        ),
        # A diffusion schedule kept as NumPy arrays on the object, copied whole by a helper
        # that picks one entry per sample, on every model call of the sampling loop.
        Invalid(
            """
            import numpy as np
            import torch

            def extract(arr, timesteps, shape):
                return torch.from_numpy(arr).to(device=timesteps.device)[timesteps].float().view(shape)

            class Diffusion:
                def __init__(self, betas):
                    self.betas = np.asarray(betas)
                    self.alphas_cumprod = np.cumprod(1.0 - self.betas)

                def step(self, model, x, t):
                    scale = extract(self.alphas_cumprod, t, (-1, 1, 1, 1))
                    return model(x, t) * extract(1.0 - self.alphas_cumprod, t, (-1, 1, 1, 1)) + x * scale

                def sample(self, model, x):
                    for i in reversed(range(1000)):
                        t = torch.full((x.shape[0],), i, device=x.device)
                        x = self.step(model, x, t)
                    return x

            Diffusion(np.linspace(1e-4, 0.02, 1000)).sample(Net().cuda(), torch.randn(8, 3, 32, 32, device="cuda"))
            """,
            line=5,
            message="its callers hand it the same host tables each time (`self.alphas_cumprod` and others)",
        ),
        # PPO's mini-batches cut from a rollout storage on the GPU (a plain class moved by its own
        # `to(device)`) with the Python lists of indices a `BatchSampler` hands out.
        Invalid(
            """
            import torch
            from torch.utils.data.sampler import BatchSampler, SubsetRandomSampler
            class RolloutStorage:
                def __init__(self, num_steps):
                    self.obs = torch.zeros(num_steps, 4)
                def to(self, device):
                    self.obs = self.obs.to(device)
                def feed_forward_generator(self, mini_batch_size):
                    sampler = BatchSampler(SubsetRandomSampler(range(self.obs.size(0))), mini_batch_size, drop_last=True)
                    for indices in sampler:
                        yield self.obs[indices]
            """,
            line=11,
            message="a Python list of indices from a batch sampler",
        ),
        # `t[range(n), labels] = 1.0`: the range becomes a host index tensor, copied to the GPU at
        # every step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for imgs, labels in loader:
                ps = model(imgs.cuda())
                n = ps.shape[0]
                t = torch.zeros(n, 80, device="cuda")
                t[range(n), labels.cuda()] = 1.0
                loss = torch.nn.functional.binary_cross_entropy_with_logits(ps, t)
                loss.backward()
            """,
            line=7,
            message="indexes a GPU array with `range(n)`, made on the host: the index is copied to the GPU (a blocking host-to-device copy) on every iteration",
        ),
        # `if n:` with `n` the number of matched targets skips only an empty batch: the copy
        # under it runs on nearly every step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for imgs, labels in loader:
                ps = model(imgs.cuda())
                n = labels.shape[0]
                if n:
                    t = torch.zeros(n, 80, device="cuda")
                    t[range(n), labels.cuda()] = 1.0
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(ps, t)
                    loss.backward()
            """,
            line=8,
            message="indexes a GPU array with `range(n)`",
        ),
        # A helper copies the table it is handed, and the batch loop hands it the same NumPy
        # array every time (`yc`, set before the loop).
        Invalid(
            """
            import numpy as np
            import torch

            def yweighted(yc, adist, xy, device=torch.device("cuda")):
                yy = torch.from_numpy(yc).to(device)
                weights = torch.nn.functional.relu(adist)
                return (weights / weights.sum(0) * yy[xy]).sum(0)

            def run(ops, bfile, device=torch.device("cuda")):
                yc = np.asarray(ops["yc"])
                for ibatch in range(bfile.n_batches):
                    X = bfile.padded_batch_to_torch(ibatch).to(device)
                    xy, adist = template_match(X)
                    yct = yweighted(yc, adist, xy, device=device)
            """,
            line=5,
            message="its callers hand it the same host tables each time (`yc`)",
        ),
        # `T % args.replay_frequency == 0` is the agent's training cadence (every few environment
        # steps), not a sampled log: the learn step's `range` index is copied each time it trains.
        Invalid(
            """
            import torch

            class Agent:
                def __init__(self, num_actions, batch_size):
                    self.online_net = DQN(num_actions).cuda()
                    self.batch_size = batch_size

                def learn(self, states, actions):
                    log_ps = self.online_net(states.cuda())
                    log_ps_a = log_ps[range(self.batch_size), actions.cuda()]
                    (-log_ps_a.sum()).backward()

            dqn = Agent(6, 32)
            for T in range(1, args.T_max + 1):
                states, actions = memory.sample(32)
                if T % args.replay_frequency == 0:
                    dqn.learn(states, actions)
            """,
            line=10,
            message="indexes a GPU array with `range(self.batch_size)`",
        ),
        # A constant made on the host in the default branch of a settings switch of a method that
        # training calls on every step: one branch or the other runs on every call.
        Invalid(
            """
            import torch
            class SAC:
                def __init__(self, args, device):
                    self.device = device
                    self.automatic_entropy_tuning = args.automatic_entropy_tuning
                def update_parameters(self, batch):
                    loss = self.critic(batch.to(self.device)).mean()
                    loss.backward()
                    if self.automatic_entropy_tuning:
                        alpha_loss = (self.log_alpha * loss.detach()).mean()
                    else:
                        alpha_loss = torch.tensor(0.).to(self.device)
                    return alpha_loss
            agent = SAC(args, torch.device("cuda"))
            for batch in loader:
                agent.update_parameters(batch)
            """,
            line=12,
            message="`torch.tensor(0.).to(self.device)` copies `torch.tensor(0.)` from host to GPU on every call of "
            "`update_parameters()`, which runs on every iteration of a loop",
        ),
        # The same branch where a caller passes `top_k`: the copy runs for every new token.
        Invalid(
            """
            import torch
            def generate(model, idx, max_new_tokens, top_k=None, eos_id=None):
                for _ in range(max_new_tokens):
                    logits = model(idx)[:, -1, :]
                    if top_k is not None:
                        top, _ = torch.topk(logits, top_k)
                        logits = torch.where(logits < top[:, -1:], torch.tensor(float("-inf")).to(logits.device), logits)
                    idx_next = torch.argmax(logits, dim=-1, keepdim=True)
                    if idx_next == eos_id:
                        break
                    idx = torch.cat((idx, idx_next), dim=1)
                return idx
            def reply(model, idx):
                return generate(model.cuda(), idx.cuda(), max_new_tokens=256, top_k=50, eos_id=50256)
            """,
            line=7,
        ),
        # The device is the `device` global of a module of the project (rlkit's `pytorch_util`,
        # set by `set_gpu_mode()`): the configured device, as `args.device` is.
        Invalid(
            """
            import numpy as np
            import torch
            import rlkit.torch.pytorch_util as ptu
            def train(policy, optimizer, batches):
                for batch in batches:
                    correction = torch.from_numpy(np.log([2.0])).float().to(ptu.device)
                    loss = (policy(batch) - correction).pow(2).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
            line=6,
        ),
        # A wait in the other branch (sampling, while the greedy branch runs) does not make the
        # host index's copy a stall that only moves: it runs on every decoding step.
        Invalid(
            """
            import torch
            import torch.nn.functional as F
            from torch.distributions import Categorical

            class Greedy:
                def __init__(self, temperature):
                    self.temperature = temperature

                def update(self, tokens, logits, sum_logprobs):
                    if self.temperature == 0:
                        next_tokens = logits.argmax(dim=-1)
                    else:
                        next_tokens = Categorical(logits=logits / self.temperature).sample()
                    logprobs = F.log_softmax(logits.float(), dim=-1)
                    current = logprobs[torch.arange(logprobs.shape[0]), next_tokens]
                    sum_logprobs += current
                    return torch.cat([tokens, next_tokens[:, None]], dim=-1)

            def decode(model, tokens, steps):
                decoder = Greedy(0.0)
                total = torch.zeros(tokens.shape[0], device="cuda")
                for _ in range(steps):
                    logits = model(tokens.cuda())[:, -1]
                    tokens = decoder.update(tokens, logits, total)
                return tokens
            """,
            line=15,
        ),
        # `if n > 0:` is the same test as `if n:`
        Invalid(
            """
            import torch
            model = Net().cuda()
            for imgs, labels in loader:
                ps = model(imgs.cuda())
                n = labels.shape[0]
                if n > 0:
                    t = torch.zeros(n, 80, device="cuda")
                    t[range(n), labels.cuda()] = 1.0
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(ps, t)
                    loss.backward()
            """,
            line=8,
            message="indexes a GPU array with `range(n)`",
        ),
        # A comprehension's target is its own name: `w` changes inside the list, not in the
        # loop, so the class weights built from the settings are the same tensor every step.
        Invalid(
            """
            import torch

            def train(model, loader, optimizer, class_weights, device):
                for images, labels in loader:
                    images, labels = images.to(device), labels.to(device)
                    weights = torch.tensor([w / sum(class_weights) for w in class_weights]).to(device)
                    loss = torch.nn.functional.cross_entropy(model(images), labels, weight=weights)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
            line=6,
        ),
        # `type_as(x)` takes x's device as well as its dtype: a host kernel cast like a GPU batch
        # is copied to the GPU, on every step, though the kernel never changes.
        Invalid(
            """
            import torch
            import torch.nn.functional as F

            kernel = torch.tensor([[1., 2., 1.], [2., 4., 2.], [1., 2., 1.]]) / 16

            def train(model, loader, opt):
                for x in loader:
                    x = x.cuda()
                    blurred = F.conv2d(x, kernel.type_as(x)[None, None].expand(3, 1, 3, 3), groups=3, padding=1)
                    loss = model(blurred).mean()
                    loss.backward()
                    opt.step()
            """,
            line=9,
        ),
        # pointnet.pytorch's STN3d: an identity written as numbers, built on the host and copied in every forward
        # of a model a training loop runs: the same table each call, a blocking copy each time.
        Invalid(
            """
            import numpy as np
            import torch
            import torch.nn as nn


            class STN3d(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(256, 9)

                def forward(self, x):
                    batchsize = x.size()[0]
                    x = self.fc(x)
                    iden = torch.from_numpy(np.array([1, 0, 0, 0, 1, 0, 0, 0, 1]).astype(np.float32)).view(1, 9).repeat(batchsize, 1)
                    if x.is_cuda:
                        iden = iden.cuda()
                    return (x + iden).view(-1, 3, 3)


            def train(loader, optimizer):
                model = STN3d().cuda()
                for points in loader:
                    loss = model(points.cuda()).sum()
                    loss.backward()
                    optimizer.step()
            """,
            line=16,
            message="numbers written in the code, from host to GPU on every call of `forward()`",
        ),
        # YOLOv4's loss: `np.r_` builds a host index array on every pass, and indexing the GPU output
        # with it copies it to the device each time (one finding per index the loop builds).
        Invalid(
            """
            import numpy as np
            import torch


            def yolo_loss(outputs, n_ch):
                loss = 0
                for output in outputs:
                    output[..., np.r_[:2, 4:n_ch]] = torch.sigmoid(output[..., np.r_[:2, 4:n_ch]])
                    loss = loss + output.sum()
                return loss


            def train(model, loader, optimizer):
                model = model.cuda()
                for images, _ in loader:
                    loss = yolo_loss(model(images.cuda()), 85)
                    loss.backward()
                    optimizer.step()
            """,
            line=8,
            message="an index array NumPy builds on the host: it is copied to the GPU",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        #: Names bound in each helper, computed once per function (a statement can hold
        #: hundreds of copies, and each would walk the whole function again).
        self._bound: dict[cst.FunctionDef, set[str]] = {}
        self._changed: dict[cst.FunctionDef, set[str]] = {}  # see `_changed_around`
        self._memoized = facts.memoized_calls()  # (once per file, not once per copy)
        for transfer in facts.transfers:
            if _reported_elsewhere(transfer, facts) or _distinct_per_iteration(transfer, facts):
                continue
            if transfer.ctx.compiled and transfer.launch is None:
                continue  # traced once by `torch.compile`: a constant made there is kept on the device
            if transfer.host_index and _waits_anyway(transfer):
                continue  # a sampling step that reads back (`multinomial`) stalls there anyway
            if transfer.ctx.loop is None:
                yield from self._check_helper(transfer, facts)
                continue
            loop: LoopFacts | None = transfer.ctx.loop
            if loop is not None and _in_iterable(transfer.node, loop):
                loop = loop.parent  # `[f(p) for p in m.cpu().parameters()]`: the iterable runs once
            if loop is None or not transfer.ctx.repeated or not self._copies_data(transfer) or _moves_a_buffer(transfer, facts):
                continue
            if transfer.ctx.loop is loop and once_per_pass(loop, facts) and _a_few_numbers(transfer, facts):
                continue  # an epoch loop's evaluation accumulators, beside its loops over the data
            if facts.in_test_code(transfer.ctx):
                continue
            if transfer.launch is None and not transfer.host_index and not is_loop_invariant(transfer.copied, loop, facts):
                continue  # (numba copies host arguments at every launch, and a host index at every use)
            if transfer.direction == "d2h" and written_by_kernels_in(transfer.receiver, transfer.ctx, loop, facts):
                continue
            if guarded_by_iteration(transfer.ctx.guards, loop) or sets_up_a_measurement(transfer.ctx, facts):
                continue  # (a benchmark's per-configuration set-up is outside what its harness times)
            if any(takes_branch(test, transfer.ctx.function, facts) is False for test in transfer.ctx.guards):
                continue  # `if top_k is not None:` where no caller passes `top_k`: the copy never runs
            yield self._report(transfer, facts)

    def _check_helper(self, transfer: Transfer, facts: ModuleFacts) -> Iterator[Report]:
        """A helper that copies the same data on each call, called on every iteration of a loop
        (`def get_sigmas(t): sigmas = scheduler.sigmas.to(device) ...` called per training step)."""
        function = transfer.ctx.function
        node = function.node
        if not isinstance(node, cst.FunctionDef) or facts.in_test_code(transfer.ctx) or transfer.ctx.opt_in:
            return
        if not all(is_setting_switch(test) for test in transfer.ctx.guards):
            return  # (a branch taken now and then: the first step, a cache miss, a sampled log)
        if transfer.ctx.guards and not plain_array(transfer.receiver):
            return  # `if args.offload: pipe = pipe.to("cpu")`: under a switch, only data we know is an array
        if _moves_to_device_by_name(function):
            return  # `def copy_to_device(self):`: the copy is what a caller asks for when it calls it
        if not self._copies_data(transfer):
            return
        if node not in self._bound:
            self._bound[node] = names_bound_in(node)
        repeated = function.runs is Runs.REPEATED  # a caller here or in another file runs it in a loop
        own_table = function.runs in (Runs.PER_CALL, Runs.SAMPLED) and _copies_own_table(transfer, function)
        # An own table is the object's field, not what this call was handed; a slice of it
        # (`self.cos_cached[:n]`) is still the same table, whatever bound picks the rows.
        copied = _table_of(transfer.copied) if own_table else transfer.copied
        referenced = referenced_names(copied)
        memoized = referenced & _memoized_tables(node, transfer, self._memoized)
        varying = referenced & self._bound[node] - ({"self"} if own_table else set()) - memoized
        if function.parent is not None and referenced & self._changed_around(function, facts):
            return  # a closure defined in a loop body reads that iteration's batch (`udata[0].to(device)`)
        constant = _literal_table(transfer.copied, node, transfer.node) if transfer.direction == "h2d" and not transfer.host_index else None
        if constant is not None:
            forward = None if repeated else forward_of_gpu_module(function, facts)
            if repeated or forward is not None:
                yield _constant_report(transfer, constant, function, forward, facts)
            return
        handed = _tables_handed(varying, node, function, facts) if varying and repeated and not transfer.host_index else []
        if varying and not transfer.host_index and not handed:
            return  # (a host index is copied at every use, whatever it holds)
        if has_opaque_call(transfer.copied, facts):
            return
        name = function.name.rsplit(".", 1)[-1]
        if transfer.host_index:
            forward = None if repeated else forward_of_gpu_module(function, facts)
            if repeated:
                yield _list_index_report(transfer, facts, f"on every call of `{name}()`, which runs on every iteration of a loop")
            elif forward is not None:
                # `K[:, torch.arange(L)]` in an attention layer's forward: a model runs it on every batch
                where = f"`{forward}()`," if forward == function.name else f"`{name}()`, which `{forward}()` runs"
                yield _list_index_report(transfer, facts, f"on every call of {where} on every pass of a module on the GPU")
            return
        if repeated or own_table:
            call = short(facts.code(transfer.node))
            source = short(facts.code(transfer.copied), 40)
            if transfer.direction == "h2d" and not repeated:
                message = (
                    f"`{call}` copies `{source}`, a table the object keeps on the host, to the GPU on every call of "
                    f"`{name}()`; it does not change between calls, so each call (each step, where a loop calls it) "
                    "pays an allocation and a blocking copy"
                )
                table = short(facts.code(copied), 40)
                suggestion = (
                    f"Keep it on the GPU: register it as a buffer of the module, or move it once "
                    f"(`{table} = {table}.to(device)`) and index the device copy."
                )
            elif transfer.direction == "h2d" and handed:
                message = (
                    f"`{call}` copies `{source}` from host to GPU on every call of `{name}()`, which runs on "
                    f"every iteration of a loop, and its callers hand it the same host tables each time "
                    f"(`{short(facts.code(handed[0]), 40)}`{' and others' if len(handed) > 1 else ''})"
                )
                suggestion = f"Keep those tables on the GPU (move them once, where they are made) so that `{name}()` only indexes them."
            elif transfer.direction == "h2d" and memoized:
                table = sorted(memoized)[0]
                message = (
                    f"`{call}` copies `{source}` from host to GPU on every call of `{name}()`, which runs on "
                    f"every iteration of a loop, but `{table}` comes from a memoized (`lru_cache`) call: the same "
                    "host table each time, copied again on every call"
                )
                suggestion = f"Memoize the device copy instead (cache `{source}` moved to the GPU), so that `{name}()` copies each table once."
            elif transfer.direction == "h2d":
                message = (
                    f"`{call}` copies `{source}` from host to GPU on every call of `{name}()`, which runs on "
                    f"every iteration of a loop, but `{source}` does not change between calls"
                )
                suggestion = f"Copy it to the GPU once (before the loop, or cached on first use) and let `{name}()` reuse the device copy."
            else:
                message = (
                    f"`{call}` copies the same GPU data back to the host on every call of `{name}()`, which runs "
                    "on every iteration of a loop (and waits for the GPU each time)"
                )
                suggestion = f"Copy it to the host once and let `{name}()` reuse the host copy."
            yield Report(transfer.node, message, suggestion)

    def _changed_around(self, function: FunctionFacts, facts: ModuleFacts) -> set[str]:
        """Names that change on each pass of a loop the function is defined in (`for itr, (udata,
        masks) in enumerate(loader): def load_imgs(): ...`): a closure reads their current value.
        Once per function (each containment test walks a loop's body)."""
        node = function.node
        assert isinstance(node, cst.FunctionDef)
        if node not in self._changed:
            self._changed[node] = {
                name for loop in facts.loops if loop.function is function.parent and contains(loop.node, node) for name in loop.varying
            }
        return self._changed[node]

    @staticmethod
    def _copies_data(transfer: Transfer) -> bool:
        """Only report copies we are sure allocate a new copy each time (not a module move)."""
        if isinstance(transfer.copied, (cst.List, cst.Tuple)) and not transfer.copied.elements:
            return False  # `torch.tensor([], device=d)`: an empty tensor, nothing to copy
        if transfer.launch is not None or transfer.host_index or transfer.through is not None:
            return True  # numba's own copies of host arguments, made at every launch; a host index, at every use; a helper's copy
        if transfer.receiver is not None:
            return transfer.receiver.is_array or transfer.receiver.kind is Kind.SEQUENCE
        if isinstance(transfer.copied, (cst.List, cst.Tuple, cst.Call)):
            return True
        func = transfer.node.func if isinstance(transfer.node, cst.Call) else None
        if isinstance(func, cst.Attribute):
            # `x_gpu = x.cuda()`: a new name for the copy means a tensor, not a module moved in place.
            copied = transfer.copied
            source_name = copied.value if isinstance(copied, cst.Name) else None
            return transfer.assigned_to is not None and transfer.assigned_to != source_name
        return False

    @staticmethod
    def _report(transfer: Transfer, facts: ModuleFacts) -> Report:
        if transfer.launch is not None:
            arrays = ", ".join(f"`{short(facts.code(arg), 20)}`" for arg in transfer.host_arguments)
            return Report(
                transfer.node,
                f"`{transfer.launch}` is launched with host NumPy {'arrays' if len(transfer.host_arguments) > 1 else 'array'} "
                f"({arrays}) on every iteration: numba copies each one to the GPU before the launch and back after it, "
                "and waits for the kernel each time",
                "Copy the inputs to the GPU once before the loop (`d_x = numba.cuda.to_device(x)`), launch on the "
                "device arrays (`numba.cuda.device_array_like(out)` for outputs) and `copy_to_host()` once after it.",
            )
        if transfer.host_index:
            return _list_index_report(transfer, facts, "on every iteration")
        call = short(facts.code(transfer.node))
        source = short(facts.code(transfer.copied), 40)
        if transfer.direction == "h2d":
            message = (
                f"`{call}` copies `{source}` from host to GPU on every iteration, "
                f"but `{source}` does not change inside the loop"
            )
            suggestion = "Copy it to the GPU once before the loop and reuse the device copy inside it."
        else:
            message = (
                f"`{call}` copies the same GPU data back to the host on every iteration "
                f"(and waits for the GPU each time)"
            )
            suggestion = "Copy it to the host once, outside the loop, and reuse the host copy."
        return Report(transfer.node, message, suggestion)


def _a_few_numbers(transfer: Transfer, facts: ModuleFacts) -> bool:
    """What is copied is known to be a vector at most (`torch.tensor([0.0])`): a counter or an
    accumulator, not a validation set."""
    copied = facts.value(transfer.copied)
    return copied is not None and copied.rank is not None and copied.rank <= 1


def _waits_anyway(transfer: Transfer) -> bool:
    """The same pass already waits for the GPU elsewhere (an `.item()`, `multinomial`'s check, a
    copy back) in this loop's body, or in this function when the copy is outside loops: the stall
    of the index copy then only moves, and replacing it alone saves a launch gap. Only a wait
    that runs whenever the copy does counts: not one under an `if` the copy is not under (the
    sampling branch of a decoder whose greedy branch is what runs)."""
    loop = transfer.ctx.loop
    copy_guards = {id(test) for test in transfer.ctx.guards}
    return any(
        event.kind is EventKind.SYNC
        and event.node is not transfer.node
        and (loop is None or loop in event.ctx.loops())
        and {id(test) for test in event.ctx.guards} <= copy_guards
        for event in transfer.ctx.function.events
    )


#: Calls that turn a literal into an array or reshape one without changing what it holds.
_LITERAL_WRAPPERS = frozenset({
    "tensor", "Tensor", "FloatTensor", "LongTensor", "as_tensor", "from_numpy", "array", "asarray", "Variable",
    "astype", "float", "double", "long", "view", "reshape", "repeat", "expand", "unsqueeze", "flatten",
})
#: Of those, the ones whose arguments are sizes (`repeat(batchsize, 1)`), which may vary per call, and the ones
#: whose argument is a type (`astype(np.float32)`).
_SIZE_ARGUMENTS = frozenset({"view", "reshape", "repeat", "expand", "unsqueeze"})
_RETYPES = frozenset({"astype", "float", "double", "long"})


def _numeric_literal(node: cst.BaseExpression) -> bool:
    """`[1, 0, 0, 0, 1, 0, 0, 0, 1]`, `((1.0, 0.0), (0.0, 1.0))`: numbers written in the code, two or more."""
    if isinstance(node, (cst.List, cst.Tuple)):
        items = [element.value for element in node.elements]
        return len(items) >= 2 and all(_numeric_literal(item) or isinstance(item, (cst.Integer, cst.Float)) or (
            isinstance(item, cst.UnaryOperation) and isinstance(item.expression, (cst.Integer, cst.Float))) for item in items)
    return False


def _literal_table(copied: cst.BaseExpression, function: cst.FunctionDef, copy: cst.CSTNode) -> cst.BaseExpression | None:
    """The array expression behind `copied` when it holds only numbers written in the code (the same on every
    call): `torch.from_numpy(np.array([1, 0, 0, 0, 1, 0, 0, 0, 1]).astype(np.float32)).view(1, 9).repeat(b, 1)`
    bound once in the function besides the `copy` itself (pointnet's STN3d identity, made in every forward, then
    `iden = iden.cuda()`), or such an expression itself."""
    expr = copied
    if isinstance(expr, cst.Name):
        bound = [
            statement.value
            for statement in own_nodes(function.body)
            if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and statement.value is not copy
            and isinstance(statement.targets[0].target, cst.Name) and statement.targets[0].target.value == expr.value
        ]
        if len(bound) != 1:
            return None
        expr = bound[0]
    table = expr
    while True:
        if _numeric_literal(expr):
            return table
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name not in _LITERAL_WRAPPERS:
            return None
        data = [arg.value for arg in expr.args if arg.keyword is None]
        if isinstance(func, cst.Attribute) and (name in _SIZE_ARGUMENTS or name in _RETYPES or not expr.args):
            expr = func.value  # a method of the data: the receiver holds it
        elif data and name not in _SIZE_ARGUMENTS:
            expr = data[0]  # a constructor: its first argument holds it
        else:
            return None


def _constant_report(transfer: Transfer, constant: cst.BaseExpression, function: FunctionFacts, forward: str | None, facts: ModuleFacts) -> Report:
    call = short(facts.code(transfer.node))
    name = function.name.rsplit(".", 1)[-1]
    if forward is None:
        where = f"`{name}()`, which runs on every iteration of a loop"
    else:
        runner = f"`{forward}()`" if forward == function.name else f"`{name}()`, which `{forward}()` runs"
        where = f"{runner} on every pass of a module on the GPU"
    return Report(
        transfer.node,
        f"`{call}` copies `{short(facts.code(constant), 50)}`, numbers written in the code, from host to GPU on every "
        f"call of {where}: each call builds the same table on the host and copies it again (a blocking copy from "
        "pageable memory)",
        "Make it once: register it as a buffer in `__init__` (`self.register_buffer(\"table\", torch.tensor(...))`, it moves "
        "with the module), or build it on the device (`torch.eye(3, device=x.device)`).",
    )


def _list_index_report(transfer: Transfer, facts: ModuleFacts, how_often: str) -> Report:
    """`v[:, [-1]]` or `v[torch.arange(n), i]`: the index is a host tensor copied to the GPU before
    indexing."""
    subscript = short(facts.code(transfer.node))
    index = short(facts.code(transfer.copied), 40)
    # PyTorch waits for the GPU before copying an index; CuPy queues the copy (both measured).
    copy = "a host-to-device copy" if transfer.indexed_library == "cupy" else "a blocking host-to-device copy"
    if isinstance(transfer.copied, cst.List):
        return Report(
            transfer.node,
            f"`{subscript}` indexes a GPU array with the Python list `{index}`: the list is copied to the GPU "
            f"({copy}) {how_often}",
            "Index with a slice or an integer instead (`x[:, -1:]` rather than `x[:, [-1]]`); for several "
            "positions, build the index on the GPU once before the loop (`torch.tensor([0, 2], device=x.device)`).",
        )
    if facts.imports.builds_index_array(transfer.copied):  # `np.r_[:2, 4:n]`
        return Report(
            transfer.node,
            f"`{subscript}` indexes a GPU array with `{index}`, an index array NumPy builds on the host: it is "
            f"copied to the GPU ({copy}) {how_often}",
            "Index with slices where they do the job (one op per slice), or build the index on the GPU once, "
            "outside the loop (`keep = torch.as_tensor(np.r_[:2, 4:n], device=x.device)`), and reuse it.",
        )
    if transfer.receiver is not None and transfer.receiver.kind is Kind.INDEX_LIST:
        return Report(
            transfer.node,
            f"`{subscript}` indexes a GPU array with `{index}`, a Python list of indices from a batch sampler: "
            f"the list is copied to the GPU ({copy}) {how_often}",
            "Draw the mini-batch indices on the GPU: `perm = torch.randperm(n, device=x.device)` once per "
            "epoch, then `x[perm[start:start + batch_size]]` for each mini-batch.",
        )
    return Report(
        transfer.node,
        f"`{subscript}` indexes a GPU array with `{index}`, made on the host: the index is copied to the GPU "
        f"({copy}) {how_often}",
        "Make the index on the GPU: pass `device=` to the factory (`torch.arange(n, device=x.device)`), "
        "or build it once outside the loop on the GPU.",
    )


def _moves_a_buffer(transfer: Transfer, facts: ModuleFacts) -> bool:
    """`self.boft_P.to(x)` of a buffer the file registers: it moved to the GPU with its module,
    so the call copies nothing from the host (at most a cast on the device)."""
    copied = transfer.copied
    return (
        transfer.receiver is None and isinstance(copied, cst.Attribute) and isinstance(copied.value, cst.Name)
        and copied.value.value == "self" and copied.attr.value in facts.buffer_names
    )


def _tables_handed(
    varying: set[str], node: cst.FunctionDef, function: FunctionFacts, facts: ModuleFacts
) -> list[cst.BaseExpression]:
    """`_extract_into_tensor(self.betas, t, shape)`: the copied data is one parameter, no call of
    this file hands it a GPU value or a non-array, and some hand the same table each time: one
    the caller's object keeps (`self.betas`, or arithmetic on such fields and numbers), or a
    name the loop around the call never changes (`yweighted(yc, ...)` per batch, `yc` set
    before the loop): those tables are returned. Empty when a call hands something else, or a
    call from another file passes it."""
    parameters = {param.name.value for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)} - {"self", "cls"}
    if len(varying) != 1 or not varying <= parameters:
        return []
    passed = arguments_at_sites(function, next(iter(varying)), facts)
    if not passed:
        return []
    for argument, _ in passed:
        value = facts.value(argument)
        if value is not None and (not value.is_array or value.on_gpu):
            return []  # (unknown values pass: what is copied to the GPU was on the host)
    return [argument for argument, site in passed if _own_fields_only(argument) or _kept_by_the_loop(argument, site, facts)]


def _kept_by_the_loop(argument: cst.BaseExpression, site: CallFact, facts: ModuleFacts) -> bool:
    """A plain name that no iteration of the loop around the call rebinds or changes; an epoch
    loop's call (`train(model, split_edge)` once per pass over the data) copies once per pass,
    which costs nothing next to the pass."""
    loop = site.ctx.loop
    return isinstance(argument, cst.Name) and loop is not None and not counts_epochs(loop) and is_loop_invariant(argument, loop, facts)


def _own_fields_only(expr: cst.BaseExpression) -> bool:
    """`self.posterior_mean_coef1`, `1.0 - self.alphas_cumprod`: fields of `self` and numbers only."""
    stack: list[cst.CSTNode] = [expr]
    fields = False
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute):
            if not (isinstance(node.value, cst.Name) and node.value.value == "self"):
                return False
            fields = True
            continue
        if isinstance(node, (cst.Name, cst.Call, cst.Subscript)):
            return False
        stack.extend(child_nodes(node))
    return fields


def _table_of(copied: cst.BaseExpression) -> cst.BaseExpression:
    """The array sliced or reshaped: `self.cos_cached` for `self.cos_cached[:seq_len]` or
    `self.scalings.view(-1, 1)` (the same values each call). Rows picked by an index
    (`self.actions[idxs]`, a replay buffer's draw) are new data each call, so the indexed
    expression stays what is copied."""
    while True:
        if isinstance(copied, cst.Subscript) and all(_slices(element) for element in copied.slice):
            copied = copied.value
        elif (
            isinstance(copied, cst.Call)
            and isinstance(copied.func, cst.Attribute)
            and copied.func.attr.value in kb.RESHAPING_METHODS
        ):
            copied = copied.func.value
        else:
            return copied


def _slices(element: cst.SubscriptElement) -> bool:
    """`:n`, `...`: a slice, not an index."""
    index = element.slice
    return isinstance(index, cst.Slice) or (isinstance(index, cst.Index) and isinstance(index.value, cst.Ellipsis))


def _moves_to_device_by_name(function: FunctionFacts) -> bool:
    """`copy_to_device`, `to_gpu`, `move_to_cuda`: a function whose name says that copying to the
    device is its whole job (a caller calls it once it wants the device copy)."""
    words = function.name.rsplit(".", 1)[-1].lower().split("_")
    return words[0] in kb.MOVER_VERBS and any(word in kb.MOVER_TARGETS for word in words[1:])


def _copies_own_table(transfer: Transfer, function: FunctionFacts) -> bool:
    """`self.discrete_betas.to(x.device)` in a method other than `__init__`: a host tensor the
    object keeps (a schedule, a kernel table) copied host -> GPU each time the method runs."""
    copied = _table_of(transfer.copied)
    name = function.name.rsplit(".", 1)[-1]
    return (
        transfer.direction == "h2d"
        and "." in function.name
        and not name.startswith("__")
        and isinstance(copied, cst.Attribute)
        and isinstance(copied.value, cst.Name)
        and copied.value.value == "self"
        and transfer.receiver is not None
        and transfer.receiver.is_array
        and not transfer.receiver.on_gpu
    )


def _reported_elsewhere(transfer: Transfer, facts: ModuleFacts) -> bool:
    """A tensor filled on the host right where it is copied (`torch.zeros(n).to(dev)` in the
    loop or helper): GPU102 reports it, with the better fix (create it on the GPU)."""
    call = facts.call_of.get(transfer.node) if isinstance(transfer.node, cst.Call) else None
    fill = host_fill(transfer.copied, call, facts) if call is not None else None
    if fill is None or fill.random:
        return False
    made = fill.ctx
    return made.function is transfer.ctx.function and made.loop is transfer.ctx.loop


def _distinct_per_iteration(transfer: Transfer, facts: ModuleFacts) -> bool:
    """Each iteration keeps its copy (`[buf.to(dev) for _ in range(world_size)]`,
    `buffers.append(x.cuda())`): the copies must be distinct tensors, so one hoisted copy
    would alias them all."""
    loop = transfer.ctx.loop
    if loop is not None and isinstance(loop.node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        if loop.node.elt is transfer.node:
            return True
    return transfer.node in facts.collected


def _in_iterable(node: cst.CSTNode, loop: LoopFacts) -> bool:
    """Is the node part of what a comprehension iterates (evaluated once, before its loop)?"""
    if isinstance(loop.node, (cst.For, cst.While)):
        return False
    return contains(loop.node.for_in.iter, node)  # type: ignore[union-attr]
