"""GPU101: copy the unchanging data once, before the loop, and use the copy inside it.

    for epoch in range(n):                  X_gpu_2 = X.cuda()
        X_gpu = X.cuda()            ->      for epoch in range(n):
        ...                                     X_gpu = X_gpu_2

Unsafe: the copy now also runs when the loop runs zero times (and fails where the device is
missing), and later changes to the data made outside what this file shows are not seen. Offered
only where the rule's own facts show that nothing the copy reads changes in the loop, nothing
in the loop is handed what it reads, and the copy runs on every iteration (no `if`, `try`).
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import LoopFacts, ModuleFacts, Transfer
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules.common import calls_in, is_loop_invariant, referenced_names
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import dotted, fresh_name, insert_before


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


def _data_read(transfer: Transfer, facts: ModuleFacts) -> set[str]:
    """The names whose data the copy reads, less library names (`cp.asarray`). The device it
    copies to is left out: no call can change a device (or a tensor's device) in place."""
    read = referenced_names(transfer.copied)
    return {name for name in read if facts.imports.qualified_name(cst.Name(name.split(".")[0])) is None}


def _new_name(transfer: Transfer, module: cst.Module) -> str:
    source = dotted(transfer.copied) if isinstance(transfer.copied, (cst.Name, cst.Attribute)) else None
    stem = source.rsplit(".", 1)[-1] if source else "copied"
    return fresh_name(f"{stem}_{'gpu' if transfer.direction == 'h2d' else 'host'}", module)


def hoist_copy(finding: Finding, context: FixContext) -> Edit | None:
    node = context.node_at(finding, cst.Call)
    facts = context.facts
    transfer = next((t for t in facts.transfers if t.node is node), None)
    if transfer is None or transfer.ctx.loop is None or transfer.ctx.guards:
        return None
    loop = transfer.ctx.loop
    statement = context.statement_of(transfer.node)
    if not isinstance(loop.node, (cst.For, cst.While)) or statement is None or context.block_of(loop.node) is None:
        return None
    if not _runs_every_iteration(statement, loop.node, context):
        return None
    parts = [transfer.copied, *(arg.value for arg in transfer.node.args)]  # the data and where it goes
    if not all(is_loop_invariant(part, loop, facts) for part in parts) or referenced_names(transfer.node) & loop.varying:
        return None
    if _handed_to_unknown_code(_data_read(transfer, facts), loop, facts):
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
