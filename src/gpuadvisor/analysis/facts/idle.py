"""Where the GPU is already idle: host reads that follow a device-wide wait, or another read,
in the same pass.

A training step that times itself writes `torch.cuda.synchronize(); t1 = time.time()` and then
prints `loss.item()`: the wait for the step is the synchronize (there for the timer), and the
read after it copies a finished scalar. The read is free when the wait surely ran before it in
the same iteration (no branch around the wait that the read is outside of, save an `if` that
only picks which device to wait for) and nothing between them can queue GPU work: only builtins,
clock reads and this file's functions that launch none, and no GPU operation the walk recorded.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.imports import referenced_names
from gpuadvisor.analysis.facts.module_facts import CallFact, EventKind, ModuleFacts, SyncPoint
from gpuadvisor.analysis.facts.traverse import Nesting, calls_in, own_nodes
from gpuadvisor.analysis.facts.values import Device, Kind


def reads_after_a_device_wait(facts: ModuleFacts) -> set[int]:
    """Ids of the sync nodes of `facts.syncs` that run right after a device-wide wait."""
    waits = [call for call in facts.calls if call.qualname in kb.DEVICE_WIDE_WAITS and call.ctx.loop is not None]
    # A read waits for the GPU as a device-wide wait does (`print(f"{loss.item()}")`, then
    # `wandb.log({"loss": loss.item()})` under `if is_main_process:`): the later read copies a
    # finished value.
    waits += _calls_of_reads(facts, lambda sync: True)
    return _reads_beside(facts, waits, after=True)


def reads_before_a_needed_read(facts: ModuleFacts, needed: set[int]) -> set[int]:
    """Ids of the sync nodes that run right before a read the host needs on the same pass
    (`losses.update(loss.item())`, then `accuracy(output.cpu().numpy(), ...)` on the next line),
    with nothing between that can queue GPU work: the needed read waits for the same work, so
    this one adds no wait of its own. `needed`: the ids of those reads' sync nodes."""
    return _reads_beside(facts, _calls_of_reads(facts, lambda sync: id(sync.node) in needed), after=False)


def _calls_of_reads(facts: ModuleFacts, wanted: Callable[[SyncPoint], bool]) -> list[CallFact]:
    """The calls of the loop reads `wanted` picks: each waits for the GPU as a device-wide wait does."""
    return [
        call for sync in facts.syncs
        if isinstance(sync.node, cst.Call) and sync.ctx.loop is not None and wanted(sync) and (call := facts.call_of.get(sync.node)) is not None
    ]


def _reads_beside(facts: ModuleFacts, waits: list[CallFact], after: bool) -> set[int]:
    """Syncs that run right after one of `waits` (`after`), or right before one, in the same
    loop of the same function, where the wait runs on every pass that reaches the read and
    nothing between them can queue GPU work."""
    if not waits:
        return set()
    idle: set[int] = set()
    reads = {id(sync.node) for sync in facts.syncs}  # another read between copies, queues nothing
    # Grouped by function once: with every read a possible wait, most functions with a loop have some.
    waits_of: dict[int, list[CallFact]] = {}
    for call in waits:
        waits_of.setdefault(id(call.ctx.function), []).append(call)
    calls_of: dict[int, list[CallFact]] = {}
    for call in facts.calls:
        if id(call.ctx.function) in waits_of:
            calls_of.setdefault(id(call.ctx.function), []).append(call)
    syncs_of: dict[int, list[SyncPoint]] = {}
    for sync in facts.syncs:
        syncs_of.setdefault(id(sync.ctx.function), []).append(sync)
    # Method names whose definition in this file launches GPU work (`self.train_step(i)`): one
    # look at the functions per file, not one per call between a wait and a read.
    launching = frozenset(key.rpartition(".")[2] for key, function in facts.functions.items() if function.launches_gpu)
    for key, own_waits in waits_of.items():
        function = own_waits[0].ctx.function
        layout = _Layout(function.node if function.node is not None else facts.module)
        calls = calls_of[key]
        work = [event.node for event in function.events if event.kind is EventKind.GPU_WORK]
        for sync in syncs_of.get(key, []):
            if id(sync.node) not in layout.position:
                continue
            here = layout.position[id(sync.node)]
            beside = [w for w in own_waits if w.ctx.loop is sync.ctx.loop and id(w.node) != id(sync.node) and (layout.position[id(w.node)] < here) == after]
            if not beside:
                continue
            wait = (max if after else min)(beside, key=lambda w: layout.position[id(w.node)])
            if _sampled(wait, sync) or not layout.runs_before(wait.node, sync.node):
                continue
            if after and not _work_between(wait, sync.node, calls, reads, work, layout, launching, facts):
                idle.add(id(sync.node))
            elif not after and isinstance(sync.node, cst.Call) and (read := facts.call_of.get(sync.node)) is not None:
                if not _work_between(read, wait.node, calls, reads, work, layout, launching, facts, read_first=True):
                    idle.add(id(sync.node))
    return idle


def _sampled(wait: CallFact, sync: SyncPoint) -> bool:
    """The wait runs on some iterations only (`if step % 100 == 0: torch.cuda.synchronize()`): a
    test of its own that changes from one iteration to the next, where a device choice does not."""
    loop = wait.ctx.loop
    return loop is not None and any(referenced_names(test) & loop.varying for test in wait.ctx.guards if test not in sync.ctx.guards)


class _Layout(Nesting):
    """Source order and nesting of one function's nodes, and which waits run before a read."""

    def runs_before(self, wait: cst.CSTNode, read: cst.CSTNode) -> bool:
        """The wait runs on every pass that reaches the read: each branch or loop around the
        wait holds the read too, except an `if` that only chooses which device to wait for."""
        around_read = {id(node) for node in self.ancestors(read)}
        for ancestor in self.ancestors(wait):
            if isinstance(ancestor, (cst.If, cst.Else)):
                if _only_waits(self._whole_if(ancestor)):
                    continue  # the chain as a whole is the wait
                return False
            if isinstance(ancestor, (cst.For, cst.While, cst.Try, cst.ExceptHandler, cst.Finally, cst.IfExp, cst.Lambda, cst.FunctionDef)):
                return False
            if id(ancestor) in around_read:
                return True
        return False

    def _whole_if(self, node: cst.If | cst.Else) -> cst.If:
        """The first `if` of an `if` / `elif` / `else` chain."""
        top: cst.CSTNode = node
        while id(top) in self.parent and isinstance(self.parent[id(top)], (cst.If, cst.Else)):
            top = self.parent[id(top)]
        assert isinstance(top, cst.If)
        return top


def _only_waits(chain: cst.If) -> bool:
    """`if device == "cuda": torch.cuda.synchronize()` / `elif device == "mps": torch.mps.synchronize()`:
    every branch does nothing but wait (and the test calls nothing)."""
    branch: cst.If | cst.Else | None = chain
    while branch is not None:
        if isinstance(branch, cst.If) and any(True for _ in calls_in(branch.test)):
            return False
        body = branch.body
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for statement in statements:
            small = statement.body if isinstance(statement, cst.SimpleStatementLine) else None
            if not small or not all(isinstance(part, cst.Expr) and _is_wait_call(part.value) for part in small):
                return False
        branch = branch.orelse if isinstance(branch, cst.If) else None
    return True


def _is_wait_call(node: cst.BaseExpression) -> bool:
    """A call named like a device-wide wait (`torch.cuda.synchronize()`, `torch.mps.synchronize()`)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("synchronize", "synchronize_device")


def _work_between(
    wait: CallFact,
    read: cst.CSTNode,
    calls: list[CallFact],
    reads: set[int],
    work: list[cst.CSTNode],
    layout: _Layout,
    launching: frozenset[str],
    facts: ModuleFacts,
    read_first: bool = False,
) -> bool:
    """A call that may queue GPU work, or a GPU operation, after the wait and before the read
    (calls the read is an argument of run after it), the read's own operand included. `read_first`:
    `wait` is a read that runs before a needed one (`read`), whose own operand is no work between them."""
    start, end = layout.position[id(wait.node)], layout.position[id(read)]
    around_read = {id(node) for node in layout.ancestors(read)} | {id(read)}
    # a read before a needed one: its own operand ran before it (`loss.detach()` in `loss.detach().cpu()`)
    inside_first = {id(node) for node in own_nodes(wait.node)} if read_first else set()
    for call in calls:
        where = layout.position.get(id(call.node))
        if where is None or not start < where < end or id(call.node) in around_read or id(call.node) in inside_first:
            continue
        if id(call.node) not in reads and not _is_wait_call(call.node) and not _host_only(call, launching, facts):
            return True
    # The read's own operand computed after the wait (`(out.argmax(1) == y).sum().item()` after
    # `loss.item()`): the read waits for those kernels.
    # Views launch nothing (`output.detach().cpu()`).
    operand = {id(node) for node in own_nodes(read)}
    kernels = [node for node in work if not _takes_a_view(node)]
    return any((start < layout.position.get(id(node), -1) < end and id(node) not in around_read) or id(node) in operand for node in kernels)


def _takes_a_view(node: cst.CSTNode) -> bool:
    """`t.detach()`, `t.view(...)`: a method that returns a view of the same memory."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in kb.VIEW_METHODS


def _host_only(call: CallFact, launching: frozenset[str], facts: ModuleFacts) -> bool:
    """Builtins, clock reads, metadata reads (`input.size(0)`), functions of this file that
    launch no GPU work, and methods handed only host numbers by an object that is not on the GPU
    (`losses_m.update(loss.item(), input.size(0))`: a meter of another library adds numbers)."""
    qualname = call.qualname or ""
    if qualname.startswith("builtins.") or qualname in kb.CLOCKS or call.method in kb.METADATA_METHODS:
        return True
    if call.method in kb.PURE_CONTAINER_METHODS and not any(value is not None and value.on_gpu for value in call.args):
        return True  # `loss_dict.items()`, `losses.append(x.item())` (`meter.update(loss)` may compute with the tensor)
    if call.method is not None and _given_host_numbers(call, launching, facts):
        return True
    callee = facts.functions.get(call.node.func.value) if isinstance(call.node.func, cst.Name) else None
    return callee is not None and not callee.launches_gpu


def _given_host_numbers(call: CallFact, launching: frozenset[str], facts: ModuleFacts) -> bool:
    """A method call with arguments, all of them numbers on the host (reads, sizes, literals),
    on an object that is neither a GPU value nor a module and whose method of that name, if this
    file has one, launches no GPU work (`launching`: the names that do): what it computes, it
    computes on the host (a call without arguments, `optimizer.step()`, may work on what the
    object holds)."""
    receiver = call.receiver
    if receiver is not None and (receiver.on_gpu or receiver.kind is Kind.MODULE):
        return False
    return bool(call.node.args) and call.method not in launching and all(_host_number(arg.value, facts) for arg in call.node.args)


def _host_number(expr: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """A literal, a number the walk knows is on the host (`loss.item()`), a metadata read
    (`input.size(0)`, `x.shape[0]`), or arithmetic of them."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return _host_number(expr.left, facts) and _host_number(expr.right, facts)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in kb.METADATA_METHODS:
        return True
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        return True
    value = facts.value(expr)
    return value is not None and value.kind is Kind.NUMBER and value.device is Device.HOST
