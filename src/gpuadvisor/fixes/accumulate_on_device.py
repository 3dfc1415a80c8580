"""GPU201: `total += loss.item()` in a loop -> `total += loss.detach()`, read once after it.

    total = 0.0                              total = 0.0
    for x, y in loader:                      for x, y in loader:
        ...                          ->          ...
        total += loss.item()                     total += loss.detach()
                                             total = float(total)

Unsafe: the sum is taken in the tensor's precision (float32) instead of Python's float64.
Offered only where that is the one difference a reader could see: the accumulator is a plain
name set to a number literal right before the loop, read nowhere inside the loop (nor by code
elsewhere), the value added is the synced number itself, or it times/over/plus/minus plain
numbers (`loss.item() * x.size(0)`), and the loop reads no clock (whose number the sync may
have made right). A `float()` total becomes `float(total)` after the loop; an `int` total
`torch.as_tensor(total).item()`, which keeps a count an int.
"""

from __future__ import annotations


import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import LoopFacts, ModuleFacts
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.rules.common import contains, names_bound_in
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import module_aliases, names_in, walk

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
#: Calls that give a Python number, allowed beside the synced value (`loss.item() * x.size(0)`).
_NUMBER_METHODS = frozenset({"size", "numel", "dim"})


def _synced_value(expr: cst.BaseExpression, facts: ModuleFacts) -> cst.BaseExpression | None:
    """`X` of `X.item()` or `float(X)` (through `.cpu()` / `.detach()`), else None."""
    if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "item":
        inner = expr.func.value
    elif (
        isinstance(expr, cst.Call) and len(expr.args) == 1 and not expr.args[0].keyword and not expr.args[0].star
        and isinstance(expr.func, cst.Name) and facts.imports.qualified_name(expr.func) == "builtins.float"
    ):
        inner = expr.args[0].value
    else:
        return None
    while isinstance(inner, cst.Call) and not inner.args and isinstance(inner.func, cst.Attribute) and inner.func.attr.value in ("cpu", "detach"):
        inner = inner.func.value
    return inner


def _plain_number(expr: cst.BaseExpression) -> bool:
    """A literal, a name, an attribute, `len(...)`, `x.size(0)`: a Python number beside the sum."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Name, cst.Attribute)):
        return True
    if isinstance(expr, cst.Call):
        func = expr.func
        return (isinstance(func, cst.Name) and func.value == "len") or (isinstance(func, cst.Attribute) and func.attr.value in _NUMBER_METHODS)
    return False


def _the_sync(value: cst.BaseExpression, finding_node: cst.CSTNode) -> cst.BaseExpression | None:
    """The operand of the added value that holds the finding (through plain arithmetic only)."""
    current = value
    while isinstance(current, cst.BinaryOperation) and isinstance(current.operator, _ARITHMETIC):
        inside = [side for side in (current.left, current.right) if finding_node in set(walk(side))]
        if len(inside) != 1:
            return None
        other = current.right if inside[0] is current.left else current.left
        if not _plain_number(other):
            return None
        current = inside[0]
    return current if finding_node in set(walk(current)) else None


def _initial_literal(name: str, loop: cst.CSTNode, context: FixContext) -> cst.BaseExpression | None:
    """The number the accumulator is set to by the last statement before the loop naming it
    (`total = 0.0`, `total = count = 0`), in the loop's block or, through `with` blocks that
    hold the loop (`with torch.no_grad(): for ...`), in the block around them."""
    inner: cst.CSTNode = loop
    while True:
        found = context.block_of(inner)
        if found is None:
            return None
        block, body = found
        for statement in reversed(body[: body.index(inner)]):
            if name in names_in(statement):
                return _literal_assigned(name, statement)
        holder = context.parents.get(block)
        if not isinstance(holder, cst.With):
            return None
        inner = holder


def _literal_assigned(name: str, statement: cst.CSTNode) -> cst.BaseExpression | None:
    """The number of `name = 0.0` / `name = other = 0` (targets all plain names), else None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or not isinstance(assign.value, (cst.Integer, cst.Float)):
        return None
    targets = [target.target for target in assign.targets]
    if not all(isinstance(target, cst.Name) for target in targets) or name not in {t.value for t in targets}:  # type: ignore[attr-defined]
        return None
    return assign.value


def _seen_elsewhere(name: str, loop: LoopFacts, target: cst.Name, context: FixContext) -> bool:
    """Is the name read or bound in the loop other than by the `+=` itself, declared global,
    or read by a function that does not bind it (a global or closure read that would see a tensor)?"""
    if any(isinstance(node, cst.Name) and node.value == name and node is not target for node in walk(loop.node)):
        return True
    for node in walk(context.module):
        if isinstance(node, (cst.Global, cst.Nonlocal)) and name in names_in(node):
            return True
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not loop.function.node and name in names_in(node.body):
            if not isinstance(node, cst.FunctionDef) or name not in names_bound_in(node):
                return True
    return False


def accumulate_on_device(finding: Finding, context: FixContext) -> Edit | None:
    facts = context.facts
    node = context.node_at(finding)
    sync = next((s for s in facts.syncs if s.node is node), None)
    if sync is None or sync.ctx.loop is None or not isinstance(sync.ctx.loop.node, (cst.For, cst.While)):
        return None
    loop = sync.ctx.loop
    statement = context.statement_of(sync.node)
    if statement is None or len(statement.body) != 1:
        return None
    accumulation = statement.body[0]
    if not isinstance(accumulation, cst.AugAssign) or not isinstance(accumulation.operator, cst.AddAssign):
        return None
    if not isinstance(accumulation.target, cst.Name):
        return None
    synced = _the_sync(accumulation.value, sync.node)
    value = _synced_value(synced, facts) if synced is not None else None
    if synced is None or value is None:
        return None
    name = accumulation.target.value
    initial = _initial_literal(name, loop.node, context)
    if initial is None or _seen_elsewhere(name, loop, accumulation.target, context):
        return None
    if any(call.qualname in kb.CLOCKS for call in facts.calls if contains(loop.node, call.node)):
        return None  # a clock read in the loop may rely on this sync for its number
    seen = facts.value(value)
    library = seen.library if seen is not None and seen.library in ("torch", "cupy") else None
    torch_names, cupy_names = module_aliases(context.module, "torch"), module_aliases(context.module, "cupy")
    if library is None and len(torch_names) + len(cupy_names) == 1:
        library = "torch" if torch_names else "cupy"
    aliases = torch_names if library == "torch" else cupy_names
    if library is None or len(aliases) != 1:
        return None
    if isinstance(initial, cst.Float):
        read = f"float({name})"
    elif isinstance(synced, cst.Call) and isinstance(synced.func, cst.Attribute):  # `.item()` keeps an int sum an int
        read = f"{aliases[0]}.{'as_tensor' if library == 'torch' else 'asarray'}({name}).item()"
    else:
        return None  # `float()` added to an int: `float(total)` would turn an empty loop's 0 into 0.0
    kept_on_device = cst.Call(cst.Attribute(value, cst.Name("detach"))) if library == "torch" else value
    read_once = cst.parse_statement(f"{name} = {read}\n")

    def accumulate(updated: cst.CSTNode) -> cst.CSTNode:
        return kept_on_device

    def read_after(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        return cst.FlattenSentinel([updated, read_once])

    return Edit(
        {synced: accumulate, loop.node: read_after}, safe=False,
        description=f"accumulate `{name}` on the device and read it once after the loop",
    )
