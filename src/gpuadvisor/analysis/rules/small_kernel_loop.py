"""GPU301: a Python loop launching tiny GPU operations element by element or row by row."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import Context, EventKind, LoopFacts, ModuleFacts, Runs
from gpuadvisor.analysis.facts.values import Value
from gpuadvisor.analysis.facts.frequency import sampling_period
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.facts.imports import keyword_arg
from gpuadvisor.analysis.rules.common import referenced_names, short
from gpuadvisor.analysis.facts.traverse import child_nodes


def _launches_per_element(loop: LoopFacts, facts: ModuleFacts) -> bool:
    if loop.function.compiled or loop.has_opaque_call or loop.gpu_ops == 0:
        return False
    if loop.parameters_of is not None:
        return _every_step(loop, facts) is not None
    # A model's output may be a list of maps (a detector's scales): its items are not rows.
    iterates_gpu_array = loop.iter_value is not None and loop.iter_value.is_gpu_array and not loop.iter_value.packed
    per_element = iterates_gpu_array or (loop.counts_indices and bool(loop.element_reads))
    return per_element and not _works_on_slabs(loop, facts) and not _works_on_whole_arrays(loop, facts)



def _works_on_slabs(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """What the loop picks per iteration is known to be a matrix or more (`h1[i] += dv[i]` with
    `dv` a 4-d array, `for block in batch_of_images`): each kernel works on a slab, not on an
    element or a row, so launches are not what costs."""
    picked = [facts.value(read) for read in loop.element_reads]
    rows = loop.iter_value
    if rows is not None and rows.is_gpu_array and rows.rank:
        picked.append(replace(rows, shape=rows.shape[1:] if rows.shape else None, ndim=rows.rank - 1))
    return any(value is not None and _is_slab(value) for value in picked)


def _is_slab(value: Value) -> bool:
    """Known sizes: at least `SLAB_ELEMENTS` elements (a batch of 3x3 matrices is not); sizes
    unknown: two dimensions or more."""
    if value.shape is not None:
        return math.prod(value.shape) >= kb.SLAB_ELEMENTS
    return value.rank is not None and value.rank >= 2


#: Names of fully sharded data parallelism (`FSDPStrategy`, `FullyShardedDataParallel`, `fully_shard`).
_SHARDING_WORDS = ("FSDP", "FullyShardedDataParallel", "fully_shard")

#: GPU work keys of a moving-average blend: `a * tau + b * (1 - tau)`, `.mul_(d).add_(p)`, `.lerp_`.
_SCALES = frozenset({"Multiply", ".mul", ".mul_"})
_SUMS = frozenset({"Add", "Subtract", ".add", ".add_", ".sub_"})
_LERPS = frozenset({".lerp", ".lerp_"})


def _blends(loop: LoopFacts) -> bool:
    """Each parameter becomes a weighted mix of itself and another tensor: an EMA or Polyak
    (soft target) update, which training code makes once per optimisation step."""
    keys = {event.key for event in loop.function.events if event.kind is EventKind.GPU_WORK and loop in event.ctx.loops()}
    return bool(keys & _LERPS) or bool(keys & _SCALES and keys & _SUMS)


def _every_step(loop: LoopFacts, facts: ModuleFacts) -> str | None:
    """Why a loop over parameters runs on every training step (not a one-off initialisation),
    as the end of the message; None when nothing says it does."""
    parent = loop.parent
    while parent is not None:
        if not parent.few_iterations:
            if any((period := sampling_period(test, facts)) is not None and period >= kb.SPARSE_PERIOD for test in loop.entry_guards):
                return None  # `if step % 1000 == 0:` (by default): a target copy every thousand steps
            return "every time it runs, inside a loop"
        parent = parent.parent
    function = loop.function
    name = function.name.rsplit(".", 1)[-1]
    if function.stepped_by is not None:
        through = f" (through `{function.stepped_by.through.strip('`')}`)" if function.stepped_by.through else ""
        return f"every time `{name}()` runs, and {function.stepped_by.where} calls it on every iteration of a loop{through}"
    if function.node is not None and function.runs is not Runs.ONCE and _blends(loop) and not facts.in_test_code(Context(function, None)):
        return f"on every call of `{name}()`, a moving-average update that training runs once per step"
    return None


def _iterations(loop: LoopFacts, facts: ModuleFacts) -> int | None:
    """The trip count of `for i in range(N)` when N is a known number."""
    iterable = loop.iterable
    if not isinstance(iterable, cst.Call) or facts.imports.qualified_name(iterable.func) != "builtins.range":
        return None
    bounds = [facts.value(arg.value) for arg in iterable.args]
    if len(bounds) != 1 or bounds[0] is None or bounds[0].number is None:
        return None
    return int(bounds[0].number)


def _calls_method(loop: LoopFacts, facts: ModuleFacts, method: str) -> bool:
    return any(call.method == method and loop in call.ctx.loops() for call in facts.calls)


def _works_on_whole_arrays(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """Does some kernel of the loop take a whole GPU array that stays the same across iterations?

    `for c in coefficients: y = y * x + c` or `for lo, hi in bands: h += cupy.sinc(hi * m)`
    launch one kernel per element of a short list, but each kernel runs over all of `x` or
    `m`: the launches are not what costs, and there is no batched form to suggest. A loop
    that also waits for the GPU each time (`(table == t).nonzero().item()`) stays flagged:
    the round trips add up whatever the kernels cost.
    """
    events = [event for event in loop.function.events if loop in event.ctx.loops()]
    if any(event.kind is EventKind.SYNC for event in events):
        return False
    return any(event.kind is EventKind.GPU_WORK and _whole_array_kernel(event.node, loop, facts) for event in events)


def _whole_array_kernel(operation: cst.CSTNode, loop: LoopFacts, facts: ModuleFacts) -> bool:
    """An operand is a GPU array that does not change across iterations, and none is indexed
    by the loop (`x[i] / peak` works on one element even though `peak` is a whole array); a
    prefix the loop bounds (`hits[:, :k]`) still takes a slab of the whole array."""
    whole = False
    stack: list[cst.CSTNode] = [operation]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Subscript):
            moving = [element for element in node.slice if referenced_names(element) & loop.varying]
            if any(not _prefix_slice(element, loop) for element in moving):
                return False  # `x[i]`, `x[i:i + 1]`: one element or row per iteration
            if moving:
                stack.append(node.value)  # `hits[:, :k]`: a prefix of the whole array, however long the loop makes it
            continue
        if isinstance(node, cst.Name) and node.value not in loop.varying:
            value = facts.value(node)
            whole = whole or (value is not None and value.is_gpu_array)
        stack.extend(child_nodes(node))
    return whole


def _prefix_slice(element: cst.SubscriptElement, loop: LoopFacts) -> bool:
    """`:k`: a slice that starts where it always starts and ends where the loop says."""
    index = element.slice
    return isinstance(index, cst.Slice) and (index.lower is None or not referenced_names(index.lower) & loop.varying)


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    """The `name=` argument itself (a finding points at it), not only its value."""
    return next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


def _tensor_learning_rate(call: cst.Call, qualname: str, facts: ModuleFacts) -> cst.Arg | None:
    """`torch.optim.Adam(params, lr=torch.tensor(3e-4, device="cuda"))` with neither
    `capturable=True` nor `fused=True`: Adam turns its multi-tensor path off for a tensor
    learning rate and passes `-lr / bias_correction` as a Python scalar to `addcdiv_`, per tensor."""
    if qualname not in kb.TENSOR_LR_SINGLE_TENSOR_OPTIMIZERS:
        return None
    lr = _keyword(call, "lr")
    value = facts.value(lr.value) if lr is not None else None
    if lr is None or value is None or not value.is_gpu_array:
        return None
    for flag in ("capturable", "fused"):
        given = keyword_arg(call, flag)
        if given is not None and not (isinstance(given, cst.Name) and given.value == "False"):
            return None
    return lr


class SmallKernelLoop(Rule):
    code = "GPU301"
    category = "small-kernel-loop"
    severity = Severity.WARNING
    summary = "Python loop launching one tiny GPU kernel per element or row; batch it"

    VALID = [
        # The same over what a helper handed back: an array has no `.keys()`, so it is a mapping
        # of a few named terms.
        Valid(
            """
            import torch
            from torch import nn

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


            class Relobralo(nn.Module):
                def __init__(self, weigh, num_losses):
                    super().__init__()
                    self.weigh = weigh
                    self.register_buffer("previous", torch.ones(num_losses))

                def forward(self, preds: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
                    losses = self.weigh(preds, target, self.previous)
                    weights = torch.ones_like(self.previous)
                    for i, name in enumerate(losses.keys()):
                        weights[i] = torch.exp(losses[name] / self.previous[i])
                    return (weights * torch.stack(list(losses.values()))).sum()
            """
        ),
        # A loop over the entries of a `Dict[str, Tensor]` of loss terms: as many as the terms
        # the code names, a handful, not one per element.
        Valid(
            """
            from typing import Dict

            import torch
            from torch import nn

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


            class SoftAdapt(nn.Module):
                def __init__(self, num_losses):
                    super().__init__()
                    self.register_buffer("previous", torch.ones(num_losses))

                def forward(self, losses: Dict[str, torch.Tensor]) -> torch.Tensor:
                    weights = torch.ones_like(self.previous)
                    total = torch.zeros_like(self.previous[0])
                    for i, key in enumerate(losses.keys()):
                        weights[i] = torch.exp(losses[key] / self.previous[i])
                        total = total + weights[i] * losses[key]
                    return total
            """
        ),
        # A loop over the matrices of a stack (`view(-1, m, n)` has three dimensions): each
        # scatter fills a whole matrix, and the stack is the batch of models (botorch's PairwiseGP).
        Valid(
            """
            import torch


            def comparison_matrices(comparisons, batch, m, n):
                D = torch.zeros(batch, m, n, device="cuda")
                pairs = comparisons.cuda().view(-1, m, 2).long()
                for i, sub_D in enumerate(D.view(-1, m, n)):
                    sub_D.scatter_(1, pairs[i, :, [0]], 1)
                    sub_D.scatter_(1, pairs[i, :, [1]], -1)
                return D
            """
        ),
        # A generator over the two results of `torch.std_mean`, not over rows of an array.
        Valid(
            """
            import torch


            def standardize(X):
                X = X.cuda()
                std, mean = (values.unsqueeze(-2) for values in torch.std_mean(X, dim=0))
                return (X - mean) / std
            """
        ),
        # The iterable of a comprehension is computed once, on the whole batch; the comprehension
        # then hands out views of its rows (deepinv's plotting of a batch of filters).
        Valid(
            """
            import torch


            from deepinv.physics.generator import DiffractionBlurGenerator
            from deepinv.utils.plotting import plot

            device = torch.device("cuda")
            generator = DiffractionBlurGenerator((31, 31), device=device, dtype=torch.float32)
            filters = generator.step(batch_size=3)
            plot([f for f in filters["filter"] ** 0.5], suptitle="diffraction blurs")
            plot([p for p in torch.angle(filters["pupil"]) * torch.abs(filters["pupil"])])
            """
        ),
        # Written for torch.export (torchtune's export-only positional embeddings): `torch._check_is_size`
        # tells the tracer each `.item()` is a size symbol, and the loop is unrolled into the graph.
        Valid(
            """
            import torch
            from torch import nn

            class TilePositionalEmbedding(nn.Module):
                def __init__(self, max_tiles, dim):
                    super().__init__()
                    self.embedding = nn.Parameter(torch.randn(max_tiles, max_tiles, 1, dim))

                def forward(self, x: torch.Tensor, aspect_ratio: torch.Tensor) -> torch.Tensor:
                    for batch_idx, (n_tiles_h, n_tiles_w) in enumerate(aspect_ratio):
                        n_tiles_h = n_tiles_h.item()
                        n_tiles_w = n_tiles_w.item()
                        torch._check_is_size(n_tiles_h)
                        torch._check_is_size(n_tiles_w)
                        pos = self.embedding[:n_tiles_h, :n_tiles_w].reshape(n_tiles_h * n_tiles_w, 1, -1)
                        x[batch_idx, : n_tiles_h * n_tiles_w] += pos
                    return x

            model = TilePositionalEmbedding(4, 64).cuda()
            """
        ),
        # Each `k` of a short list takes the first k columns of the whole batch: a slab per kernel.
        Valid(
            """
            import torch
            from ignite.metrics import Metric
            class HitRate(Metric):
                def reset(self):
                    self._hits_per_k = torch.zeros(len(self.top_k), device="cuda")
                def update(self, output):
                    y_pred, y = output[0].detach(), output[1].detach()
                    _, indices = torch.topk(y_pred, k=self.top_k[-1], dim=-1)
                    hits = torch.gather(y, dim=-1, index=indices)
                    for i, k in enumerate(self.top_k):
                        self._hits_per_k[i] += torch.any(hits[:, :k] > 0, dim=-1).sum()
            device = "cuda"
            """
        ),
        # Chaining the matrices of a `bmm` result: each iteration is a whole matrix product.
        Valid(
            """
            import torch
            from torch import nn
            class Butterfly(nn.Module):
                def forward(self, x: torch.Tensor, blocks: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
                    factors = torch.bmm(perm, torch.bmm(blocks, perm.permute(0, 2, 1)))
                    rotation = factors[0]
                    for i in range(1, factors.shape[0]):
                        rotation = factors[i] @ rotation
                    return x @ rotation
            model = Butterfly().cuda()
            """
        ),
        # A trainer's batch of fields hands out its keys (a dict) or its examples (trl's GRPO
        # collator keeps the list of dataset rows): a loop over it walks no rows of a tensor.
        Valid(
            """
            import torch
            from transformers import Trainer
            class RolloutTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    prompts = [example.get("prompt", "") for example in inputs]
                    for key in inputs:
                        inputs[key] = inputs[key].float()
                    return model(**inputs).loss
            torch.cuda.set_device(0)
            """
        ),
        # A model's constructor that builds its layers in a loop builds the model once: each
        # layer's per-parameter initialisation runs at construction, not per step.
        Valid(
            """
            import torch
            from torch import nn
            from models.base import SequenceModule
            class Recurrence(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    self.weight = nn.Parameter(torch.empty(d, device="cuda"))
                    self.bias = nn.Parameter(torch.empty(d, device="cuda"))
                    self.reset_parameters()
                def reset_parameters(self):
                    for name, weight in self.named_parameters():
                        nn.init.uniform_(weight, -0.1, 0.1)
            class Stack(SequenceModule):
                def __init__(self, d, n_layers):
                    super().__init__()
                    self.rnns = nn.ModuleList()
                    for _ in range(n_layers):
                        self.rnns.append(Recurrence(d))
            """
        ),
        Valid(
            # a refinement model returns one flow map per iteration: `preds[i]` is a whole map, not a row
            """
            import torch
            def sequence_loss(preds, target, gamma=0.8):
                n = len(preds)
                loss = 0.0
                for i in range(n):
                    loss += gamma ** (n - i - 1) * (preds[i] - target).abs().mean()
                return loss
            def train(net, loader):
                model = torch.nn.DataParallel(net).cuda()
                optimizer = torch.optim.AdamW(model.parameters())
                for image, flow in loader:
                    preds = model(image.cuda())
                    loss = sequence_loss(preds, flow.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """
        ),
        # A soft target update on one step in ten (the least period that counts as sparse): a tenth
        # of the steps pay for it, not every one.
        Valid(
            """
            import torch
            device = torch.device("cuda")
            qf, qf_target = QNetwork().to(device), QNetwork().to(device)
            for step in range(total_steps):
                train_step(qf, batch)
                if step % 10 == 0:
                    for param, target_param in zip(qf.parameters(), qf_target.parameters()):
                        target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
            """
        ),
        # A detector's output is a list of per-scale maps: a loop over it visits three maps, not
        # rows of one tensor.
        Valid(
            """
            import torch
            model = Detector().cuda()
            for imgs, targets in loader:
                p = model(imgs.cuda())
                gains = [torch.tensor(pp.shape, device="cuda")[[3, 2, 3, 2]] for pp in p[:3]]
                loss = sum(pp.sigmoid().mean() for pp in p)
                loss.backward()
            """
        ),
        # A generator's mini-batches: each item is a slab of rows, not one row of an array.
        Valid(
            """
            import torch
            def batches(x, size):
                for start in range(0, x.size(0), size):
                    yield x[start:start + size]
            data = torch.randn(100000, 64, device="cuda")
            for epoch in range(10):
                for batch in batches(data, 256):
                    out = torch.relu(batch @ weight)
            """
        ),
        # A hard copy into a target network, in a method nobody here calls per step, and a
        # re-initialisation: no blend, so nothing says they run every step.
        Valid(
            """
            import copy
            import torch
            class Agent:
                def __init__(self, net):
                    self.q = net.to("cuda")
                    self.target = copy.deepcopy(self.q)
                def sync_target(self):
                    for p, t in zip(self.q.parameters(), self.target.parameters()):
                        t.data.copy_(p.data)
                def reset(self):
                    for p in self.q.parameters():
                        p.data.normal_(0.0, 0.02)
            """
        ),
        # Initialising parameters once, before training: a handful of launches, once.
        Valid(
            """
            import torch
            model = Net().to("cuda")
            for p in model.parameters():
                torch.nn.init.normal_(p, std=0.02)
            """
        ),
        Valid(
            """
            import cupy
            def polyval(p, x):
                p = cupy.asarray(p)
                x = cupy.asarray(x)
                y = cupy.zeros_like(x)
                for coefficient in p:
                    y = y * x + coefficient
                return y
            """
        ),
        Valid(
            """
            import torch
            x = torch.randn(4096, 4096, device="cuda")
            for layer in layers:
                x = layer(x)
            for epoch in range(10):
                x = torch.tanh(x @ w)
            """
        ),
        Valid(
            """
            import torch
            x = torch.from_numpy(values)
            for i in range(len(x)):
                x[i] = x[i] * 2
            """
        ),
        Valid(
            """
            import torch
            seq = torch.randn(100, 32, 64, device="cuda")
            h = torch.zeros(32, 64, device="cuda")
            for t in range(100):
                h = cell(seq[t], h)
            """
        ),
        Valid(
            """
            from numba import cuda, njit
            import cupy as cp
            x = cp.arange(100)

            @njit
            def scale(a):
                for i in range(a.shape[0]):
                    a[i] = a[i] * 2
            """
        ),
        # Initialising the tables of a ParameterDict: one call per entry, at construction.
        Valid(
            """
            import torch
            import torch.nn as nn
            class Embeddings(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.tables = nn.ParameterDict({k: nn.Parameter(torch.empty(n, 64)) for k, n in sizes.items()})
                    self.reset_parameters()
                def reset_parameters(self):
                    for table in self.tables.values():
                        torch.nn.init.xavier_uniform_(table)
            model = Embeddings({"paper": 1000, "author": 500}).cuda()
            """
        ),
        # Under FSDP the optimizer steps a few flattened shards; foreach=False saves memory there.
        Valid(
            """
            import torch
            from lightning.fabric.strategies import FSDPStrategy
            strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full")
            model = fabric.setup(GPT(config))
            optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, foreach=False)
            """
        ),
        # A target network copied every 1000 steps by default (the config class says so).
        Valid(
            """
            import torch
            import tyro
            from dataclasses import dataclass
            @dataclass
            class Args:
                target_network_frequency: int = 1000
                tau: float = 0.005
            args = tyro.cli(Args)
            q_network, target_network = QNetwork().cuda(), QNetwork().cuda()
            for global_step in range(1_000_000):
                train_step(q_network, next(batches))
                if global_step % args.target_network_frequency == 0:
                    for target_param, param in zip(target_network.parameters(), q_network.parameters()):
                        target_param.data.copy_(args.tau * param.data + (1.0 - args.tau) * target_param.data)
            """
        ),
        # Each iteration adds a (3, nao, nao) slab of a 4-d array: big kernels, a few of them.
        Valid(
            """
            import cupy
            def response(atoms, nao, solve):
                dv = cupy.empty((len(atoms), 3, nao, nao))
                for i, atom in enumerate(atoms):
                    dv[i] = solve(atom)
                return dv
            def hessian_h1(atoms, h1, nao, solve):
                dv = response(atoms, nao, solve)
                for i, atom in enumerate(atoms):
                    h1[i] += dv[i]
                return h1
            """
        ),
        # The same with `capturable=True`: the step size stays on the device.
        Valid(
            """
            import torch
            device = torch.device("cuda")
            actor = Actor().to(device)
            optim = torch.optim.Adam(actor.parameters(), lr=torch.tensor(3e-4, device=device), capturable=True)
            """
        ),
        # A cuDF frame walked by column: a handful of columns, each a whole-column operation.
        Valid(
            """
            import cudf
            events = cudf.read_parquet("events.parquet")
            codes = {}
            for name, column in events.items():
                codes[name] = column.astype("category").cat.codes
            for position, name in enumerate(events.columns):
                events[name] = events[name].fillna(0) * 2
            """
        ),
    ]
    INVALID = [
        # robomimic's target critics: `zip(self.nets["critic"], self.nets["critic_target"])` hands
        # out one submodule of each container per iteration, on the GPU where the containers are, so
        # the Polyak update it calls loops over GPU parameters on every training step.
        Invalid(
            """
            import torch
            import torch.nn as nn


            def soft_update(source, target, tau):
                for target_param, param in zip(target.parameters(), source.parameters()):
                    target_param.copy_(target_param * (1.0 - tau) + param * tau)


            def train(loader, critics, critic_targets, optimizer):
                critics = nn.ModuleList(critics).cuda()
                critic_targets = nn.ModuleList(critic_targets).cuda()
                for batch in loader:
                    batch = batch.cuda()
                    loss = critics[0](batch).mean()
                    loss.backward()
                    optimizer.step()
                    for critic, critic_target in zip(critics, critic_targets):
                        soft_update(critic, critic_target, 0.005)
            """,
            line=6,
        ),
        # A project's own optimizer (Pyro's `ClippedAdam`): its step runs once per training step,
        # one parameter tensor at a time.
        Invalid(
            """
            import torch
            from torch.optim.optimizer import Optimizer

            class ClippedAdam(Optimizer):
                def __init__(self, params, lr=1e-3, clip_norm=10.0):
                    super().__init__(params, dict(lr=lr, clip_norm=clip_norm))

                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:
                            if p.grad is None:
                                continue
                            grad = p.grad.clamp_(-group["clip_norm"], group["clip_norm"])
                            p.data.add_(grad, alpha=-group["lr"])

            device = torch.device("cuda")
            """,
            line=10,
            message="over the parameters of `group[\"params\"]` launches 2 GPU kernels per parameter tensor",
        ),
        # A Polyak update of a target network, one parameter tensor at a time, every step.
        Invalid(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            qf = QNetwork().to(device)
            qf_target = QNetwork().to(device)
            for step in range(total_steps):
                train_step(qf, batch)
                for param, target_param in zip(qf.parameters(), qf_target.parameters()):
                    target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
            """,
            line=7,
            message="over the parameters of `qf` launches 4 GPU kernels per parameter tensor",
        ),
        # A categorical projection adding into each row of the batch separately.
        Invalid(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            net = QNetwork().to(device)
            for step in range(total_steps):
                _, pmfs = net.get_action(obs)
                lower = (pmfs * 50).floor().long()
                target = torch.zeros_like(pmfs)
                for i in range(128):
                    target[i].index_add_(0, lower[i], pmfs[i])
            """,
            line=8,
            message="(128 launches each time the loop runs)",
        ),
        Invalid(
            """
            import torch
            schedule = torch.linspace(999, 0, 1000, device="cuda").long()
            for batch in loader:
                timesteps = torch.randint(0, 1000, (batch.shape[0],), device="cuda")
                indices = [(schedule == t).nonzero().item() for t in timesteps]
            """,
            line=5,
        ),
        Invalid(
            """
            import torch
            x = torch.randn(10_000, device="cuda")
            y = torch.empty_like(x)
            for i in range(x.shape[0]):
                y[i] = x[i] * 2
            """,
            line=4,
        ),
        Invalid(
            """
            import torch
            a = torch.randn(512, 64, device="cuda")
            b = torch.randn(512, 64, device="cuda")
            out = torch.empty(512, device="cuda")
            for i in range(512):
                out[i] = torch.dot(a[i], b[i])
            """,
            line=5,
        ),
        Invalid(
            """
            import torch
            mats = torch.randn(1000, 3, 3, device="cuda")
            determinants = [torch.linalg.det(m) for m in mats]
            """,
            line=3,
        ),
        # A Polyak (soft target) update in a method: an update made once per training step.
        Invalid(
            """
            import copy
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            class TD3:
                def __init__(self, actor):
                    self.actor = actor.to(device)
                    self.actor_target = copy.deepcopy(self.actor)
                def train(self, batch, tau=0.005):
                    for param, target in zip(self.actor.parameters(), self.actor_target.parameters()):
                        target.data.copy_(tau * param.data + (1 - tau) * target.data)
            """,
            line=9,
            message="on every call of `train()`, a moving-average update that training runs once per step",
        ),
        # An EMA helper object whose `update` the training loop calls every step.
        Invalid(
            """
            import torch
            class EMAHelper:
                def __init__(self, mu):
                    self.mu, self.shadow = mu, {}
                def update(self, module):
                    for name, param in module.named_parameters():
                        self.shadow[name].data = (1.0 - self.mu) * param.data + self.mu * self.shadow[name].data
            def train(loader):
                model = Net().cuda()
                ema = EMAHelper(0.999)
                for x in loader:
                    model(x.cuda()).mean().backward()
                    ema.update(model)
            """,
            line=6,
            message="every time `update()` runs, and `train()` calls it on every iteration of a loop",
        ),
        # A momentum encoder updated in `forward` of a module the script moves to the GPU.
        Invalid(
            """
            import torch
            class MoCo(torch.nn.Module):
                def __init__(self, make_encoder):
                    super().__init__()
                    self.encoder_q, self.encoder_k = make_encoder(), make_encoder()
                def _momentum_update(self):
                    for q, k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                        k.data = k.data * 0.999 + q.data * 0.001
                def forward(self, im_q, im_k):
                    self._momentum_update()
                    return self.encoder_q(im_q), self.encoder_k(im_k)
            model = MoCo(resnet50).cuda()
            for im_q, im_k in loader:
                model(im_q.cuda(), im_k.cuda())
            """,
            line=7,
            message="(through `forward()`)",
        ),
        # A network built by a factory and put in training mode before the move: `.train()`
        # exists only on modules, so the moved object is a module and this is its EMA copy.
        Invalid(
            """
            import copy
            import torch
            device = torch.device("cuda", rank)
            G = build_network(**G_kwargs).train().requires_grad_(False).to(device)
            G_ema = copy.deepcopy(G).eval()
            for step in range(total_steps):
                train_step(G, next(batches))
                for p_ema, p in zip(G_ema.parameters(), G.parameters()):
                    p_ema.copy_(p.lerp(p_ema, 0.999))
            """,
            line=8,
            message="over the parameters of `G_ema`",
        ),
        # The optimizer's own per-parameter loop, chosen explicitly.
        Invalid(
            """
            import torch
            model = GPT(config).cuda()
            optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.1, foreach=False)
            """,
            line=3,
            message="`AdamW(..., foreach=False)`",
        ),
        # The same soft update with the default period 1: every step.
        Invalid(
            """
            import torch
            import tyro
            from dataclasses import dataclass
            @dataclass
            class Args:
                target_network_frequency: int = 1
                tau: float = 0.005
            args = tyro.cli(Args)
            q_network, target_network = QNetwork().cuda(), QNetwork().cuda()
            for global_step in range(1_000_000):
                train_step(q_network, next(batches))
                if global_step % args.target_network_frequency == 0:
                    for target_param, param in zip(target_network.parameters(), q_network.parameters()):
                        target_param.data.copy_(args.tau * param.data + (1.0 - args.tau) * target_param.data)
            """,
            line=13,
            message="over the parameters of `target_network`",
        ),
        # A learning rate kept as a CUDA tensor (to anneal it on the device) without
        # `capturable=True`: Adam steps one parameter tensor at a time and syncs for each.
        Invalid(
            """
            import torch
            device = torch.device("cuda")
            actor = Actor().to(device)
            optim = torch.optim.Adam(actor.parameters(), lr=torch.tensor(3e-4, device=device), eps=1e-5)
            """,
            line=4,
            message="without `capturable=True`",
        ),
        # An EMA module that looks its shadow buffers up by parameter name, called every step.
        Invalid(
            """
            import torch
            class LitEma(torch.nn.Module):
                def forward(self, model):
                    m_param = dict(model.named_parameters())
                    shadow = dict(self.named_buffers())
                    for key in m_param:
                        shadow[key].sub_(0.001 * (shadow[key] - m_param[key]))
            net = Net().cuda()
            ema = LitEma().cuda()
            for batch in loader:
                net(batch.cuda()).sum().backward()
                opt.step()
                ema(net)
            """,
            line=6,
            message="over the parameters of `m_param`",
        ),
        # A copy of the parameters (a list comprehension over them) zipped with the originals.
        Invalid(
            """
            import torch
            def update_ema(target_params, source_params, rate=0.99):
                for targ, src in zip(target_params, source_params):
                    targ.detach().mul_(rate).add_(src, alpha=1 - rate)
            net = Net().cuda()
            ema_params = [p.detach().clone() for p in net.parameters()]
            for batch in loader:
                net(batch.cuda()).sum().backward()
                opt.step()
                update_ema(ema_params, net.parameters())
            """,
            line=3,
            message="every time `update_ema()` runs",
        ),
        # A custom optimizer's `step()` runs once per training step wherever it is called.
        Invalid(
            """
            import torch
            from torch.optim import Optimizer
            device = torch.device("cuda")
            class Lamb(Optimizer):
                @torch.no_grad()
                def step(self):
                    for group in self.param_groups:
                        for p in group["params"]:
                            p.add_(p.grad * p.norm(), alpha=-group["lr"])
            """,
            line=8,
            message="every time `step()` runs, and the training loop calls it",
        ),
        # An EMA over the model's state dict (parameters and buffers by name), every step.
        Invalid(
            """
            import copy
            import torch
            net = Net().cuda()
            ema = copy.deepcopy(net)
            for x, y in loader:
                net(x.cuda()).sum().backward()
                optimizer.step()
                with torch.no_grad():
                    for ema_value, value in zip(ema.state_dict().values(), net.state_dict().values()):
                        ema_value.mul_(0.999).add_(value, alpha=0.001)
            """,
            line=9,
            message="This Python loop over the parameters of `ema.state_dict().values()`",
        ),
        # An EMA object that copies the model it is built from: its update blends the copy's
        # parameters one by one, every step.
        Invalid(
            """
            import copy
            import torch

            class Averaged:
                def __init__(self, model):
                    self.shadow = copy.deepcopy(model)

                def update(self, model, decay):
                    with torch.no_grad():
                        for kept, new in zip(self.shadow.parameters(), model.parameters()):
                            kept.mul_(decay).add_(new, alpha=1 - decay)

            net = Net().cuda()
            averaged = Averaged(net)
            for x, y in loader:
                net(x.cuda()).sum().backward()
                optimizer.step()
                averaged.update(net, 0.999)
            """,
            line=10,
            message="This Python loop over the parameters of `self.shadow`",
        ),
        # A lookahead copy kept as a dict of the state's tensors, blended in one tensor at a time:
        # the copy's tensors are not known, but they are zipped with a GPU model's state, one
        # pair per parameter, and `lerp_` changes a tensor on the device of what it is handed.
        Invalid(
            """
            import torch
            net = Net().cuda()
            slow = {k: v.clone() for k, v in net.state_dict().items()}
            for step, (x, y) in enumerate(loader):
                loss_fn(net(x.cuda()), y.cuda()).backward()
                optimizer.step()
                for kept, new in zip(slow.values(), net.state_dict().values()):
                    kept.lerp_(new, 0.2)
            """,
            line=7,
            message="This Python loop over the parameters of `net.state_dict().values()`",
        ),
        # A network moved in place by a statement (`net.train().to(device)`, no assignment): a module
        # moves itself, so `net` is on the GPU and its EMA copy with it.
        Invalid(
            """
            import copy
            import torch
            device = torch.device("cuda")
            net = construct_network(**network_kwargs)
            net.train().requires_grad_(True).to(device)
            ema = copy.deepcopy(net).eval().requires_grad_(False)
            for images, labels in loader:
                loss_fn(net(images.to(device)), labels.to(device)).backward()
                optimizer.step()
                for p_ema, p_net in zip(ema.parameters(), net.parameters()):
                    p_ema.copy_(p_net.detach().lerp(p_ema, 0.999))
            """,
            line=10,
            message="This Python loop over the parameters of `ema`",
        ),
        # K-FAC's `step()` walks the parameters of the model it was built with, once per step.
        Invalid(
            """
            import torch
            import torch.optim as optim
            device = torch.device("cuda")
            class KFACOptimizer(optim.Optimizer):
                def __init__(self, model, lr=0.25):
                    self.model = model
                    self.lr = lr
                def step(self):
                    vg_sum = 0
                    for p in self.model.parameters():
                        vg_sum += (p.grad * p.grad * self.lr * self.lr).sum()
            """,
            line=10,
            message="This Python loop over the parameters of `self.model.parameters()`",
        ),
        # An EMA over an ordered dict of named parameters, after every optimizer step.
        Invalid(
            """
            from collections import OrderedDict
            import torch

            def update_ema(ema_model, model, decay=0.9999):
                ema_params = OrderedDict(ema_model.named_parameters())
                model_params = OrderedDict(model.named_parameters())
                for name, param in model_params.items():
                    ema_params[name].mul_(decay).add_(param.data, alpha=1 - decay)

            model = torch.nn.Linear(64, 64).cuda()
            ema = torch.nn.Linear(64, 64).cuda()
            optimizer = torch.optim.AdamW(model.parameters())
            for x in loader:
                model(x.cuda()).square().mean().backward()
                optimizer.step()
                update_ema(ema, model)
            """,
            line=7,
            message="over the parameters of `model_params.items()`",
        ),
        # An optimizer keeping its momentum in `self.state[p]`, read back by key: the momentum
        # buffer is made like the parameter, so its updates are GPU kernels too, per parameter.
        Invalid(
            """
            import torch

            class LARS(torch.optim.Optimizer):
                @torch.no_grad()
                def step(self):
                    for g in self.param_groups:
                        for p in g["params"]:
                            if p.grad is None:
                                continue
                            state = self.state[p]
                            if "mu" not in state:
                                state["mu"] = torch.zeros_like(p)
                            mu = state["mu"]
                            mu.mul_(g["momentum"]).add_(p.grad)
                            p.add_(mu, alpha=-g["lr"])

            def train(model, loader):
                model = model.cuda()
                opt = LARS(model.parameters(), dict(lr=0.1, momentum=0.9))
                for x in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
            """,
            line=7,
            message="over the parameters of `g[\"params\"]` launches 4 GPU kernels per parameter tensor",
        ),
        Invalid(
            # a model's outputs indexed by a tensor are one tensor: `rep[i]` is a row of it
            """
            import torch
            from model import GNN
            def train(model, loader, optimizer, device):
                for batch in loader:
                    batch = batch.to(device)
                    rep = model(batch.x, batch.edge_index)[batch.center_idx]
                    expanded = torch.cat([rep[i].repeat((4, 1)) for i in range(len(rep))], dim=0)
                    optimizer.zero_grad()
                    expanded.sum().backward()
                    optimizer.step()
            def main(loader):
                device = torch.device("cuda")
                model = GNN(5, 300).to(device)
                train(model, loader, torch.optim.Adam(model.parameters()), device)
            """,
            line=7,
        ),
        # A model handed to a wrapper module that is then moved (`Trainer(net).to(device)`) moves
        # with it: the EMA of its state, one tensor at a time on every step, runs on the GPU.
        Invalid(
            """
            import copy
            import torch
            from torch import nn
            from diffusion import DiffusionSampler, DiffusionTrainer
            class UNet(nn.Module):
                def __init__(self, ch):
                    super().__init__()
                    self.conv = nn.Conv2d(3, ch, 3, padding=1)
            def ema(source, target, decay):
                source_dict, target_dict = source.state_dict(), target.state_dict()
                for key in source_dict.keys():
                    target_dict[key].data.copy_(target_dict[key].data * decay + source_dict[key].data * (1 - decay))
            def train(loader, steps, device):
                net = UNet(ch=128)
                ema_net = copy.deepcopy(net)
                optimizer = torch.optim.Adam(net.parameters(), lr=2e-4)
                trainer = DiffusionTrainer(net, 1e-4, 0.02, 1000).to(device)
                sampler = DiffusionSampler(ema_net, 1e-4, 0.02, 1000).to(device)
                for step, x in zip(range(steps), loader):
                    loss = trainer(x.to(device)).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    ema(net, ema_net, 0.9999)
            """,
            line=11,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        flagged = [
            loop
            for loop in facts.loops
            if not loop.few_iterations and _launches_per_element(loop, facts) and not (facts.test_file or loop.function.is_test)
        ]
        yield from self._per_parameter_optimizers(facts)
        flagged_nodes = {loop.node for loop in flagged}
        for loop in flagged:
            if any(outer.node in flagged_nodes for outer in self._ancestors(loop)):
                continue  # report the outermost loop of a nest once
            if loop.parameters_of is not None:
                yield self._per_parameter(loop, facts)
                continue
            iterable = loop.iterable
            what = (
                f"one row of `{short(facts.code(iterable), 30)}`"
                if iterable is not None and loop.iter_value is not None and loop.iter_value.is_gpu_array
                else "a single element or row"
            )
            kernels = "a GPU kernel" if loop.gpu_ops == 1 else f"{loop.gpu_ops} GPU kernels"
            count = _iterations(loop, facts)
            total = f" ({count * loop.gpu_ops} launches each time the loop runs)" if count is not None else ""
            suggestion = (
                "Replace the loop with one batched operation over the whole array (e.g. `y = x * 2`, "
                "`(a * b).sum(dim=1)`, `torch.linalg.inv(batch)`)."
            )
            if _calls_method(loop, facts, "index_add_"):
                suggestion = (
                    "Do the per-row `index_add_` calls as one: flatten the rows and offset each row's "
                    "indices by `row * width` (`out.view(-1).index_add_(0, (idx + offsets).view(-1), "
                    "src.view(-1))`)."
                )
            yield Report(
                loop.node,
                f"This Python loop launches {kernels} per iteration, each on {what}{total}: the launch "
                "overhead (microseconds per kernel) dwarfs the work",
                suggestion,
                end_node=loop.header_end(),
            )

    @staticmethod
    def _per_parameter_optimizers(facts: ModuleFacts) -> Iterator[Report]:
        """`torch.optim.AdamW(params, foreach=False)`: the optimizer's own per-parameter loop. Not
        under FSDP, whose optimizer sees a few flattened shards (and where the setting saves the
        memory of the multi-tensor temporaries)."""
        if any(word in (call.qualname or "") for call in facts.calls for word in _SHARDING_WORDS):
            return
        for call in facts.calls:
            if not (call.qualname or "").startswith("torch.optim.") or facts.in_test_code(call.ctx):
                continue
            tensor_lr = _tensor_learning_rate(call.node, call.qualname or "", facts)
            if tensor_lr is not None:
                name = (call.qualname or "").rsplit(".", 1)[-1]
                yield Report(
                    tensor_lr,
                    f"`{name}(..., lr=<GPU tensor>)` without `capturable=True`: PyTorch then updates the "
                    "parameters one tensor at a time (no multi-tensor kernels) and reads the step size back "
                    "to the host for each of them: a sync per parameter tensor on every step",
                    "Pass the learning rate as a float (anneal it by setting `group['lr']`), or keep the "
                    "tensor and pass `capturable=True`.",
                )
            foreach = _keyword(call.node, "foreach")
            turned_off = foreach is not None and isinstance(foreach.value, cst.Name) and foreach.value.value == "False"
            if turned_off and keyword_arg(call.node, "fused") is None:
                name = call.qualname.rsplit(".", 1)[-1]  # type: ignore[union-attr]
                yield Report(
                    foreach,  # type: ignore[arg-type]
                    f"`{name}(..., foreach=False)` makes every optimizer step loop over the parameters in "
                    "Python, launching several small kernels per parameter tensor: hundreds to thousands of "
                    "launches per step on a GPU",
                    "Leave `foreach` at its default (multi-tensor kernels on CUDA) or pass `fused=True`; if "
                    "it was turned off to save memory, say so in a comment and suppress this line.",
                )

    @staticmethod
    def _per_parameter(loop: LoopFacts, facts: ModuleFacts) -> Report:
        kernels = "a GPU kernel" if loop.gpu_ops == 1 else f"{loop.gpu_ops} GPU kernels"
        owner, _, method = loop.function.name.rpartition(".")
        if _calls_method(loop, facts, "norm"):
            fix = (
                "Take all the norms at once: `torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))` "
                "on the list of gradients (or `torch.nn.utils.clip_grad_norm_(params, max_norm)`, which "
                "returns the total norm), and read it as a number only on the steps that log it."
            )
        elif owner in facts.optimizer_classes and method == "step":
            fix = (
                "Write the update on each group's lists of tensors with the multi-tensor ops "
                "(`torch._foreach_mul_`, `_foreach_add_`, `_foreach_addcdiv_`, `_foreach_sqrt`), as "
                "`torch.optim`'s own optimizers do, or build on one of them that has a `foreach`/`fused` path."
            )
        else:
            fix = (
                "Update all tensors at once with the multi-tensor ops: `torch._foreach_lerp_(targets, "
                "params, tau)` for a Polyak/EMA update (`torch._foreach_mul_`/`_foreach_add_` for others), "
                "on lists made once from `.parameters()`."
            )
        return Report(
            loop.node,
            f"This Python loop over the parameters of `{short(loop.parameters_of or '', 30)}` launches {kernels} per "
            f"parameter tensor {_every_step(loop, facts)}: with tens or hundreds of parameter "
            "tensors that is hundreds of tiny launches per step",
            fix,
            end_node=loop.header_end(),
        )

    @staticmethod
    def _ancestors(loop: LoopFacts) -> Iterator[LoopFacts]:
        parent = loop.parent
        while parent is not None:
            yield parent
            parent = parent.parent
