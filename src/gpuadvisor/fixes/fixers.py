"""The fixers, one per rule code: each turns a finding into an Edit, or declines (None).

A fixer declines whenever it cannot show the rewrite is right; the finding then stays.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.fixes.context import Edit, FixContext

Fixer = Callable[[Finding, FixContext], "Edit | None"]


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _module_aliases(module: cst.Module, library: str) -> list[str]:
    """Names bound to `library` by top-level `import library [as name]` statements."""
    names = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if _dotted(alias.name) == library:
                            names.append(alias.asname.name.value if alias.asname else library)  # type: ignore[union-attr]
    return names


def _from_import_aliases(module: cst.Module, library: str, name: str) -> list[str]:
    """Names bound to `library.name` by top-level `from library import name [as alias]`."""
    names = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None and _dotted(small.module) == library:
                    for alias in small.names if not isinstance(small.names, cst.ImportStar) else ():
                        if _dotted(alias.name) == name:
                            names.append(alias.asname.name.value if alias.asname else name)  # type: ignore[union-attr]
    return names


def _is_device_expression(node: cst.BaseExpression) -> bool:
    """A string, `x.device`, `torch.device(...)`, or a conditional choosing between those."""
    if isinstance(node, cst.IfExp):
        return _is_device_expression(node.body) and _is_device_expression(node.orelse)
    return (
        isinstance(node, cst.SimpleString)
        or (isinstance(node, cst.Attribute) and node.attr.value == "device")
        or (isinstance(node, cst.Call) and (_dotted(node.func) or "").endswith("device"))
    )


def _always_a_device(name: str, module: cst.Module) -> bool:
    """Every binding of `name` in the file assigns a device (no parameter, loop or import binds it)."""
    bindings = 0
    for node in _walk(module):
        if isinstance(node, cst.Param) and node.name.value == name:
            return False
        if isinstance(node, (cst.For, cst.CompFor)) and name in {n.value for n in _walk(node.target) if isinstance(n, cst.Name)}:
            return False
        if isinstance(node, (cst.AsName, cst.Global, cst.Nonlocal, cst.NamedExpr, cst.AugAssign)) and name in {
            n.value for n in _walk(node) if isinstance(n, cst.Name)
        }:
            return False
        if isinstance(node, cst.Assign) and any(name in {n.value for n in _walk(t.target) if isinstance(n, cst.Name)} for t in node.targets):
            if not (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and _is_device_expression(node.value)):
                return False
            bindings += 1
        if isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name) and node.target.value == name:
            if node.value is None or not _is_device_expression(node.value):
                return False
            bindings += 1
    return bindings > 0


# -- GPU102: create the tensor on the device ---------------------------------------------------


def _device_argument(transfer: cst.Call, module: cst.Module) -> tuple[cst.BaseExpression, bool] | None:
    """The device a `.cuda(...)` / `.to(...)` moves to, and whether it is certainly a device
    (`.to(x)` with a tensor `x` would also take its dtype: then the rewrite is unsafe)."""
    method = transfer.func.attr.value  # type: ignore[attr-defined]
    args = transfer.args
    if any(arg.keyword is not None and arg.keyword.value != "non_blocking" for arg in args) or any(arg.star for arg in args):
        return None
    positional = [arg.value for arg in args if arg.keyword is None]
    if method == "cuda":
        if not positional:
            return cst.SimpleString('"cuda"'), True
        if len(positional) == 1 and isinstance(positional[0], cst.Integer):
            return cst.SimpleString(f'"cuda:{positional[0].value}"'), True
        return None
    if len(positional) != 1:
        return None
    device = positional[0]
    certain = _is_device_expression(device) or (isinstance(device, cst.Name) and _always_a_device(device.value, module))
    return device, certain


def _with_last_argument(call: cst.Call, added: cst.Arg) -> cst.Call:
    """`f(a, b)` -> `f(a, b, added)`, keeping a call laid out one argument per line that way."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[added])
    last = args[-1]
    comma = last.comma
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        # `f(\n    a,  # note\n)`: the new argument goes on a line of its own, indented like `a`.
        before = args[-2].comma.whitespace_after if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else call.whitespace_before_args
        indent = before.last_line if isinstance(before, cst.ParenthesizedWhitespace) else cst.SimpleWhitespace("")
        closing = comma.whitespace_after
        args[-1] = last.with_changes(comma=comma.with_changes(whitespace_after=closing.with_changes(last_line=indent)))
        added = added.with_changes(comma=cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(indent=closing.indent, last_line=closing.last_line)))
    elif isinstance(comma, cst.Comma):
        args[-1] = last.with_changes(comma=comma.with_changes(whitespace_after=cst.SimpleWhitespace(" ")))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, added])


def create_on_device(finding: Finding, context: FixContext) -> Edit | None:
    transfer = context.node_at(finding, cst.Call)
    if not isinstance(transfer, cst.Call) or not isinstance(transfer.func, cst.Attribute):
        return None
    factory = transfer.func.value
    if not isinstance(factory, cst.Call) or any(arg.star for arg in factory.args):
        return None
    found = _device_argument(transfer, context.module)
    if found is None:
        return None
    device, certain = found

    def rewrite(updated: cst.CSTNode) -> cst.CSTNode:
        keyword = cst.Arg(device, keyword=cst.Name("device"), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        return _with_last_argument(updated.func.value, keyword)  # type: ignore[attr-defined]

    return Edit({transfer: rewrite}, safe=certain, description="create the tensor on the device")


# -- GPU401: synchronise before the clock read ------------------------------------------------


def synchronize_before_clock(finding: Finding, context: FixContext) -> Edit | None:
    if not finding.message.startswith("The clock"):
        return None  # `timeit(...)` of GPU work: the statement to time is a string or lambda
    clock = context.node_at(finding, cst.Call)
    statement = context.statement_of(clock) if clock is not None else None
    torch_names = _module_aliases(context.module, "torch")
    cupy_names = _module_aliases(context.module, "cupy")
    numba_names = _from_import_aliases(context.module, "numba", "cuda")
    if statement is None or len(torch_names) + len(cupy_names) + len(numba_names) != 1:
        return None  # no place for a statement, or no single library to synchronise
    if torch_names:
        call = f"{torch_names[0]}.cuda.synchronize()"
    else:
        call = f"{cupy_names[0]}.cuda.Device().synchronize()" if cupy_names else f"{numba_names[0]}.synchronize()"
    if torch_names and "is_available" in context.module.code:
        # The device is chosen at run time: on a machine without CUDA the code runs on the CPU,
        # where `torch.cuda.synchronize()` raises. Guarded, the fix changes nothing there.
        call = f"if {torch_names[0]}.cuda.is_available(): {call}"
    sync = cst.parse_statement(f"{call}\n")

    def rewrite(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        leading = updated.leading_lines  # type: ignore[attr-defined]
        return cst.FlattenSentinel([sync.with_changes(leading_lines=leading), updated.with_changes(leading_lines=[])])

    return Edit({statement: rewrite}, safe=True, description=f"call `{call}` before reading the clock", one_per_round=True)


# -- GPU502: set the thread variable before the first import ----------------------------------


def _first_pool_import(module: cst.Module) -> cst.SimpleStatementLine | None:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import) and any((_dotted(a.name) or "").split(".")[0] in kb.THREAD_POOL_IMPORTERS for a in small.names):
                return statement
            if isinstance(small, cst.ImportFrom) and small.module is not None and (_dotted(small.module) or "").split(".")[0] in kb.THREAD_POOL_IMPORTERS:
                return statement
    return None


def _only_literals_and_os(statement: cst.SimpleStatementLine) -> bool:
    """The statement reads nothing but `os` and literals, so it means the same earlier."""
    names = {node.value for node in _walk(statement) if isinstance(node, cst.Name)}
    return names <= {"os", "environ", "setdefault", "putenv", "update"}


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def set_threads_before_import(finding: Finding, context: FixContext) -> Edit | None:
    target = context.node_at(finding)
    statement = context.statement_of(target) if target is not None else None
    first_import = _first_pool_import(context.module)
    if statement is None or first_import is None or len(statement.body) != 1:
        return None
    if not context.is_top_level(statement) or not _only_literals_and_os(statement):
        return None
    body = list(context.module.body)
    before_import = body[: body.index(first_import)]
    if statement in before_import:
        return None
    os_bound_before = "os" in _module_aliases(context.module.with_changes(body=before_import), "os")
    moved = [statement] if os_bound_before else [cst.parse_statement("import os\n"), statement]

    def insert(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        return cst.FlattenSentinel([*moved, updated])

    def remove(updated: cst.CSTNode) -> cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE

    # Unsafe: the library now runs with the thread count the code asked for, which can change
    # floating-point reduction order (and the speed, which is the point).
    return Edit({first_import: insert, statement: remove}, safe=False, description="set the variable before the import")


#: Fixers by rule code.
FIXERS: dict[str, Fixer] = {
    "GPU102": create_on_device,
    "GPU401": synchronize_before_clock,
    "GPU502": set_threads_before_import,
}
#: What each rule's fix is, for the rule documents: "safe", "unsafe" or "safe or unsafe".
FIX_KINDS: dict[str, str] = {
    "GPU102": "safe; unsafe when `.to(x)` may name a tensor",
    "GPU401": "safe",
    "GPU502": "unsafe",
}
