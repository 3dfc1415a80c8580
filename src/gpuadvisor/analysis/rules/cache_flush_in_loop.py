"""GPU202: the caching allocator emptied on every step of a loop."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.call_sites import takes_branch
from gpuadvisor.analysis.facts.frequency import is_per_step, is_setting_switch
from gpuadvisor.analysis.facts.imports import is_none
from gpuadvisor.analysis.facts.measurement import hands_over_work
from gpuadvisor.analysis.facts.module_facts import CallFact, Context, LoopFacts, ModuleFacts
from gpuadvisor.analysis.facts.training import optimizer_step_in
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.prescan import ALLOCATOR_FLUSH_WORDS
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short
from gpuadvisor.analysis.rules.timing import iteration_callees
from gpuadvisor.analysis.facts.traverse import Nesting


def _deliberate_release(call: CallFact, facts: ModuleFacts) -> bool:
    """A flush where emptying the cache is the point: in an `except` handler
    (`except torch.cuda.OutOfMemoryError: torch.cuda.empty_cache()`, run when memory ran out), or,
    in a function called per step, right after the code dropped the object holding the memory
    (`del pipeline; gc.collect(); torch.cuda.empty_cache()`: a validation pipeline, a model
    exported to TensorRT, a checkpoint tensor set to None; only `gc.collect()` may stand between
    the `del` and the flush). Inside a loop over the work itself (`del self.output` after each
    validation image), what is dropped is what the next iteration allocates again."""
    nesting = Nesting(call.ctx.function.node or facts.module)
    around = nesting.ancestors(call.node)
    if any(isinstance(node, cst.ExceptHandler) for node in around):
        return True
    if call.ctx.loop is not None:
        return False
    statement = next((node for node in around if isinstance(node, cst.SimpleStatementLine)), None)
    block = nesting.parent.get(id(statement)) if statement is not None else None
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return False
    return _deletes_before(block.body[: block.body.index(statement)], facts)


def _deletes_before(statements: Sequence[cst.BaseStatement], facts: ModuleFacts) -> bool:
    for statement in reversed(statements):
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        small = statement.body
        if any(isinstance(part, cst.Del) or _drops_a_reference(part) for part in small):
            return True
        collects = all(
            isinstance(part, cst.Expr) and isinstance(part.value, cst.Call) and facts.imports.qualified_name(part.value.func) == "gc.collect"
            for part in small
        )
        if not collects:
            return False
    return False


#: Words of a loop (its iterable or its targets) that walks the work itself, a batch, sample,
#: image, chunk, step or token at a time, where each iteration allocates what the model needs:
#: not a loop over a model's layers, a checkpoint's tensors, benchmark cases or loggers.
_STEP_WORDS = ("loader", "dataset", "batch", "sample", "image", "chunk", "step", "token")


def _steps_through_work(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """A loop whose iterations are steps of the work: it names data, batches, steps or tokens,
    or its body steps an optimizer."""
    iterable = loop.iterable
    words = " ".join([*loop.targets, facts.code(iterable) if iterable is not None else ""]).lower()
    return any(word in words for word in _STEP_WORDS) or optimizer_step_in(loop.node) is not None


def _in_step_loop(ctx: Context, facts: ModuleFacts) -> bool:
    return any(_steps_through_work(loop, facts) for loop in ctx.loops())


def _drops_a_reference(statement: cst.BaseSmallStatement) -> bool:
    """`tensor = None`: the same as `del tensor` for the memory it held."""
    return isinstance(statement, cst.Assign) and is_none(statement.value)


def _calls_a_measured_run(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """An iteration calls a function of this file that measures its own work, reading a clock or
    handing it to a harness (`for grid in grids: stats = main(grid); torch.cuda.empty_cache()`,
    `main` running `timeit(repeats, forward)`): the flush separates measured configurations, once
    per whole run, on purpose."""
    return any(
        callee.reads_clock or any(call.ctx.function is callee and hands_over_work(call, facts) for call in facts.calls)
        for callee, _ in iteration_callees(loop, facts)
    )


def _every_step(call: CallFact, facts: ModuleFacts) -> str | None:
    """Where the flush repeats, as the message says it, or None when it does not run per step.

    In a loop of the function: on each of its iterations (not sampled, not once per epoch), in a
    loop that steps through the work (`_steps_through_work`). In a function with no loop around
    the call: when the function steps an optimizer (one call per training step), or a loop of
    this file that steps through the work calls it on every iteration; and no test a caller
    decides guards the call (a fixed setting of the run does not count)."""
    ctx = call.ctx
    function = ctx.function
    if ctx.compiled or ctx.opt_in or facts.in_test_code(ctx):
        return None
    if function.reads_clock:
        return None  # a benchmark that starts each timed run from an empty cache, on purpose
    if ctx.loop is not None:
        if any(loop.timed_repetition for loop in ctx.loops()) or not is_per_step(ctx, facts) or not _in_step_loop(ctx, facts):
            return None
        if _calls_a_measured_run(ctx.loop, facts):
            return None  # once per measured configuration, on purpose
        return "runs on every iteration of this loop; each call"
    if any(takes_branch(test, function, facts) is not True and not is_setting_switch(test) for test in ctx.guards):
        return None
    name = function.name.rsplit(".", 1)[-1]
    if function.optimizer_step is not None and not function.called_in_file:
        step = short(facts.code(function.optimizer_step), 40)
        return f"runs in `{name}()`, which calls `{step}` and so runs once per training step; each call"
    site = next(
        (event for event in facts.call_sites(function) if is_per_step(event.ctx, facts) and _in_step_loop(event.ctx, facts)), None
    )
    if site is None:
        return None
    return f"runs in `{name}()`, which `{site.ctx.function.name.rsplit('.', 1)[-1]}()` calls on every iteration of a loop; each call"


class CacheFlushInLoop(Rule):
    code = "GPU202"
    category = "cache-flush-in-loop"
    severity = Severity.WARNING
    summary = "`torch.cuda.empty_cache()` on every loop iteration: a device wait, then the memory is allocated again"
    prefilter = (ALLOCATOR_FLUSH_WORDS,)

    VALID = [
        # In a function called per step, memory handed back right after the tensor holding it was deleted.
        Valid(
            """
            import torch
            def evaluate(model, batch):
                preds = model(batch.cuda())
                score = preds.float().mean()
                del preds
                torch.cuda.empty_cache()
                return score
            def train(model, loader, optimizer):
                for batch in loader:
                    loss = model(batch.cuda()).mean()
                    loss.backward()
                    optimizer.step()
                    evaluate(model, batch)
            """
        ),
        # A sweep over configurations, each measured by a function of the script: the flush
        # after each measured run keeps one configuration's memory out of the next one's numbers.
        Valid(
            """
            import time
            import torch
            def timeit(repeats, f, *args):
                f(*args)
                torch.cuda.synchronize()
                start = time.time()
                for _ in range(repeats):
                    f(*args)
                torch.cuda.synchronize()
                return (time.time() - start) / repeats
            def measure(batch_size, repeats):
                x = torch.randn(batch_size, 1024, device="cuda")
                return timeit(repeats, torch.nn.functional.gelu, x)
            def sweep(args):
                for batch_size in args.batch_sizes:
                    print(batch_size, measure(batch_size, args.repeats))
                    torch.cuda.empty_cache()
            """
        ),
        # After a run, or when an allocation failed: what the call is for.
        Valid(
            """
            import torch
            def evaluate(model, loader):
                outputs = [model(x.cuda()) for x in loader]
                torch.cuda.empty_cache()
                return outputs
            """
        ),
        Valid(
            """
            import torch
            def infer(model, batches):
                results = []
                for batch in batches:
                    try:
                        results.append(model(batch.cuda()))
                    except torch.cuda.OutOfMemoryError:
                        torch.cuda.empty_cache()
                        results.append(model(batch.half().cuda()))
                return results
            """
        ),
        # Every 500 steps, or once per epoch: nothing next to the steps in between.
        Valid(
            """
            import torch
            def train(model, loader, optimizer):
                for step, (x, y) in enumerate(loader):
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
                    if step % 500 == 0:
                        torch.cuda.empty_cache()
            """
        ),
        Valid(
            """
            import torch
            for epoch in range(100):
                train_one_epoch(model, loader)
                torch.cuda.empty_cache()
            """
        ),
        # A handful of models, each loaded and dropped: the cache goes back between them.
        Valid(
            """
            import torch
            for name in ["small", "base", "large"]:
                model = load(name).cuda()
                evaluate(model)
                del model
                torch.cuda.empty_cache()
            """
        ),
        # A benchmark that starts every timed run from an empty cache, on purpose.
        Valid(
            """
            import time
            import torch
            def bench(fn, runs=50):
                times = []
                for _ in range(runs):
                    torch.cuda.empty_cache()
                    torch.cuda.synchronize()
                    start = time.perf_counter()
                    fn()
                    torch.cuda.synchronize()
                    times.append(time.perf_counter() - start)
                return times
            """
        ),
        # A one-off conversion, a layer at a time: a loop over the model's modules, not over work.
        Valid(
            """
            import gc
            import torch
            def quantize_model(model, quantize):
                for name, module in model.named_modules():
                    if isinstance(module, torch.nn.Linear):
                        module.cuda()
                        set_module(model, name, quantize(module).cpu())
                        gc.collect()
                        torch.cuda.empty_cache()
            """
        ),
        # Every N steps of a training loop whose step count a method of the class advances.
        Valid(
            """
            import torch
            class TrainLoop:
                def run_loop(self):
                    while True:
                        self.run_step(next(self.data))
                        if self.step % self.save_interval == 0:
                            self.save()
                            torch.cuda.empty_cache()
                def run_step(self, batch):
                    loss = self.model(batch.cuda()).mean()
                    loss.backward()
                    self.opt.step()
                    self.step += 1
            """
        ),
        # Memory handed back right after the object holding it was dropped: what the call is for.
        Valid(
            """
            import gc
            import torch
            def log_validation(pipeline_args, trackers, step):
                for tracker in trackers:
                    pipeline = make_pipeline(pipeline_args).to("cuda")
                    tracker.log({"samples": pipeline(num_inference_steps=25).images}, step=step)
                    del pipeline
                    gc.collect()
                    torch.cuda.empty_cache()
            """
        ),
        # A helper that only runs when the caller asks for it.
        Valid(
            """
            import torch
            def release(model, free_memory):
                if free_memory:
                    torch.cuda.empty_cache()
            def run(model, loader):
                for x in loader:
                    model(x.cuda())
                    release(model, free_memory=False)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch
            def train(model, loader, optimizer, device):
                for x, y in loader:
                    loss = model(x.to(device), y.to(device))
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()
                    torch.cuda.empty_cache()
            """,
            line=8,
            message="on every iteration of this loop",
        ),
        Invalid(
            """
            import torch
            def assign_targets(preds, targets):
                matched = match(preds, targets)
                torch.cuda.empty_cache()
                return matched
            def compute_loss(outputs, labels):
                total = 0
                for batch_idx in range(outputs.shape[0]):
                    total = total + assign_targets(outputs[batch_idx], labels[batch_idx]).sum()
                return total
            """,
            line=4,
            message="calls on every iteration of a loop",
        ),
        Invalid(
            """
            import torch
            def train_step(model, batch, optimizer):
                loss = model(batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                torch.cuda.empty_cache()
                return loss
            """,
            line=7,
            message="once per training step",
        ),
        # Dropping the outputs of each validation image and then flushing: the next image
        # allocates the same buffers again, through the driver, after a wait for the GPU.
        Invalid(
            """
            import torch

            class SRModel:
                def validation(self, dataloader):
                    for idx, val_data in enumerate(dataloader):
                        self.lq = val_data["lq"].to(self.device)
                        with torch.no_grad():
                            self.output = self.net_g(self.lq)
                        save(self.output.cpu(), idx)
                        del self.lq
                        del self.output
                        torch.cuda.empty_cache()
            """,
            line=12,
        ),
        # A loop over a data loader steps one batch at a time, even when each step loops over
        # the configured metrics: the flush still runs once per image.
        Invalid(
            """
            import torch

            def validate(model, dataloader, metrics, device):
                scores = {name: 0.0 for name in metrics}
                for batch in dataloader:
                    with torch.no_grad():
                        output = model(batch["lq"].to(device))
                    for name, metric in metrics.items():
                        scores[name] += metric(output, batch["gt"].to(device))
                    torch.cuda.empty_cache()
                return scores
            """,
            line=10,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for call in facts.calls:
            if call.qualname not in kb.ALLOCATOR_FLUSHES:
                continue
            where = _every_step(call, facts)
            if where is None or _deliberate_release(call, facts):
                continue
            code = short(facts.code(call.node))
            yield Report(
                call.node,
                f"`{code}` {where} hands the GPU memory PyTorch has cached back to the driver: it waits "
                "for the GPU to finish its queued work, and the next step allocates the same memory "
                "again through slow `cudaMalloc` calls",
                "Remove it from the loop: PyTorch reuses freed memory by itself, and emptying the cache "
                "only helps other processes. If memory runs out, call it in the out-of-memory handler or "
                "once after the loop, or reduce fragmentation with "
                "`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.",
            )
