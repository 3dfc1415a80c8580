"""GPU101: copy the unchanging data once, before the loop, and use the copy inside it.

    for epoch in range(n):                  X_gpu_2 = X.cuda()
        X_gpu = X.cuda()            ->      for epoch in range(n):
        ...                                     X_gpu = X_gpu_2

Unsafe: the copy now also runs when the loop runs zero times (and fails where the device is
missing), and later changes to the data made outside what this file shows are not seen. Offered
only where the rule's own facts show that nothing the copy reads changes in the loop, nothing
in the loop is handed what it reads, the copy runs on every iteration (no `if`, `try`), and the
loop only reads the copy (each iteration used to get a fresh one). It goes above every
enclosing loop of the function it is invariant in.
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import LoopFacts, ModuleFacts, Transfer
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules.common import calls_in, is_loop_invariant, referenced_names
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import dotted, fresh_name, insert_before, walk


#: Blocks a copy may be moved out of: they change gradient tracking, not where or what is copied
#: (`with torch.cuda.device(1):` would change where `.cuda()` copies to).
_TRANSPARENT_BLOCKS = frozenset({"torch.no_grad", "torch.inference_mode"})


def _runs_every_iteration(statement: cst.CSTNode, loop: cst.CSTNode, context: FixContext) -> bool:
    """The statement sits in the loop's body, at most inside `with torch.no_grad():` (no branch,
    no `try`, no other context manager)."""
    current = context.parents.get(statement)
    while current is not None and current is not loop:
        if isinstance(current, cst.With):
            managers = [item.item.func if isinstance(item.item, cst.Call) else item.item for item in current.items]
            names = [context.facts.imports.qualified_name(m) if isinstance(m, (cst.Name, cst.Attribute)) else None for m in managers]
            if not all(name in _TRANSPARENT_BLOCKS for name in names):
                return False
        elif not isinstance(current, cst.IndentedBlock):
            return False
        current = context.parents.get(current)
    return current is loop


def _handed_to_unknown_code(names: set[str], loop: LoopFacts, facts: ModuleFacts) -> bool:
    """Does the loop pass what the copy reads to a call we cannot see into (which may change it
    in place), or read an attribute while calling such code (which may reassign it)?"""
    for call in calls_in(loop.node):
        made = facts.call_of.get(call)
        qualname = made.qualname if made is not None else None
        if qualname is not None and (kb.library_of(qualname) or qualname.startswith("builtins.")):
            continue
        if made is not None and made.receiver is not None and made.receiver.is_array:
            continue  # array methods that change their array in place make it varying already
        if any("." in name for name in names):
            return True
        handed = {dotted(arg.value) for arg in call.args}
        if handed & names:
            return True
    return False


def _uses_of_the_copy(transfer: Transfer, statement: cst.SimpleStatementLine, loop: LoopFacts) -> list[cst.CSTNode]:
    """Where the loop uses the copy: the name it is assigned to (`X_gpu = X.cuda()`), or the
    copy call itself where it is used in place (`x * mask.to(dev)`)."""
    small = statement.body[0] if len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and small.value is transfer.node and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Name):
            return [n for n in walk(loop.node) if isinstance(n, cst.Name) and n.value == target.value and n is not target]
    return [transfer.node]


def _left_unchanged(use: cst.CSTNode, context: FixContext) -> bool:
    """Is this use of the copy a plain read? Each iteration used to get a fresh copy; after
    the hoist they share one, so a write into it (`x_gpu[0] = 1`, `x_gpu += 1`, `x_gpu.mul_(2)`,
    `out=x_gpu`), an alias (`y = x_gpu`) or letting it escape (`results.append(x_gpu)`,
    `return x_gpu`) would change what later iterations see."""
    parent = context.parents.get(use)
    grandparent = context.parents.get(parent) if parent is not None else None
    if isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is use:
        if isinstance(grandparent, (cst.AssignTarget, cst.AugAssign)) or _in_assignment_target(parent, context):
            return False
        if isinstance(parent, cst.Attribute) and isinstance(grandparent, cst.Call) and grandparent.func is parent:
            method = parent.attr.value
            return not (method.endswith("_") or method in kb.MUTATING_METHODS)
        return True
    if isinstance(parent, cst.Arg):
        call = grandparent
        if parent.keyword is not None and parent.keyword.value == "out":
            return False
        name = (dotted(call.func) or "") if isinstance(call, cst.Call) else ""
        last = name.rsplit(".", 1)[-1]
        return isinstance(call, cst.Call) and bool(name) and not (last.endswith("_") or last in kb.MUTATING_METHODS)
    return isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation, cst.IfExp))


def _in_assignment_target(node: cst.CSTNode, context: FixContext) -> bool:
    current: cst.CSTNode | None = node
    while current is not None and not isinstance(current, cst.BaseSmallStatement):
        parent = context.parents.get(current)
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is current):
            return True
        current = parent
    return False


def _data_read(transfer: Transfer, facts: ModuleFacts) -> set[str]:
    """The names whose data the copy reads, less library names (`cp.asarray`). The device it
    copies to is left out: no call can change a device (or a tensor's device) in place."""
    read = referenced_names(transfer.copied)
    return {name for name in read if facts.imports.qualified_name(cst.Name(name.split(".")[0])) is None}


def _new_name(transfer: Transfer, module: cst.Module) -> str:
    source = dotted(transfer.copied) if isinstance(transfer.copied, (cst.Name, cst.Attribute)) else None
    literal = isinstance(transfer.copied, (cst.List, cst.Tuple, cst.Integer, cst.Float))
    stem = source.rsplit(".", 1)[-1] if source else "constant" if literal else "copied"
    return fresh_name(f"{stem}_{'gpu' if transfer.direction == 'h2d' else 'host'}", module)


def _can_leave(transfer: Transfer, inner: cst.CSTNode, loop: LoopFacts, context: FixContext) -> bool:
    """May the copy move above `loop`, from `inner` (its statement, or a loop nested in `loop`
    that it has already left)?"""
    facts = context.facts
    if not isinstance(loop.node, (cst.For, cst.While)) or context.block_of(loop.node) is None:
        return False
    if not _runs_every_iteration(inner, loop.node, context):
        return False
    if not isinstance(transfer.node, cst.Call):
        return False  # a list index is rewritten as a slice, not hoisted
    parts = [transfer.copied, *(arg.value for arg in transfer.node.args)]  # the data and where it goes
    if not all(is_loop_invariant(part, loop, facts) for part in parts) or referenced_names(transfer.node) & loop.varying:
        return False
    return not _handed_to_unknown_code(_data_read(transfer, facts), loop, facts)


def hoist_copy(finding: Finding, context: FixContext) -> Edit | None:
    node = context.node_at(finding, cst.Call)
    transfer = next((t for t in context.facts.transfers if t.node is node), None)
    statement = context.statement_of(node) if node is not None else None
    if transfer is None or transfer.ctx.loop is None or transfer.ctx.guards or statement is None:
        return None
    if not _can_leave(transfer, statement, transfer.ctx.loop, context):
        return None
    # Above every enclosing loop the copy is invariant in, not just the innermost: one copy per
    # epoch hoisted out of the batch loop would still be a copy per epoch.
    loop = transfer.ctx.loop
    while loop.parent is not None and loop.parent.function is loop.function and _can_leave(transfer, loop.node, loop.parent, context):
        loop = loop.parent
    if not all(_left_unchanged(use, context) for use in _uses_of_the_copy(transfer, statement, loop)):
        return None
    name = _new_name(transfer, context.module)
    copy: list[cst.CSTNode] = [transfer.node]

    def use_name(updated: cst.CSTNode) -> cst.CSTNode:
        copy[0] = updated  # the copy as other fixes left it
        return cst.Name(name)

    def copy_before(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        assignment = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], copy[0])])  # type: ignore[arg-type]
        return insert_before([assignment], updated)

    return Edit({transfer.node: use_name, loop.node: copy_before}, safe=False, description=f"copy once before the loop into `{name}`")
