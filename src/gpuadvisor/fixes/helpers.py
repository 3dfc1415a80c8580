"""What several fixers need: names of imported libraries, device expressions, node searches,
argument lists extended in their own layout, and statements inserted before another."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` as text, for names and attribute chains only."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node and every node below it."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def names_in(node: cst.CSTNode) -> set[str]:
    """Every plain name written anywhere in the node (read or bound); not the attribute of
    `self.running` or the keyword of `f(running=1)`, which name no variable."""
    nodes = list(walk(node))
    labels = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)}
    labels |= {id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword is not None}
    return {n.value for n in nodes if isinstance(n, cst.Name) and id(n) not in labels}


def module_aliases(module: cst.Module, library: str) -> list[str]:
    """Names bound to `library` by top-level `import library [as name]` statements."""
    names = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if dotted(alias.name) == library:
                            names.append(alias.asname.name.value if alias.asname else library)  # type: ignore[union-attr]
    return names


def from_import_aliases(module: cst.Module, library: str, name: str) -> list[str]:
    """Names bound to `library.name` by top-level `from library import name [as alias]`."""
    names = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None and dotted(small.module) == library:
                    for alias in small.names if not isinstance(small.names, cst.ImportStar) else ():
                        if dotted(alias.name) == name:
                            names.append(alias.asname.name.value if alias.asname else name)  # type: ignore[union-attr]
    return names


def is_device_expression(node: cst.BaseExpression) -> bool:
    """A string, `x.device`, `torch.device(...)`, or a conditional choosing between those."""
    if isinstance(node, cst.IfExp):
        return is_device_expression(node.body) and is_device_expression(node.orelse)
    return (
        isinstance(node, cst.SimpleString)
        or (isinstance(node, cst.Attribute) and node.attr.value == "device")
        or (isinstance(node, cst.Call) and (dotted(node.func) or "").endswith("device"))
    )


def always_a_device(name: str, module: cst.Module) -> bool:
    """Every binding of `name` in the file assigns a device (no parameter, loop or import binds it)."""
    bindings = 0
    for node in walk(module):
        if isinstance(node, cst.Param) and node.name.value == name:
            return False
        if isinstance(node, (cst.For, cst.CompFor)) and name in names_in(node.target):
            return False
        if isinstance(node, (cst.AsName, cst.Global, cst.Nonlocal, cst.NamedExpr, cst.AugAssign)) and name in names_in(node):
            return False
        if isinstance(node, cst.Assign) and any(name in names_in(t.target) for t in node.targets):
            if not (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and is_device_expression(node.value)):
                return False
            bindings += 1
        if isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name) and node.target.value == name:
            if node.value is None or not is_device_expression(node.value):
                return False
            bindings += 1
    return bindings > 0


def with_last_argument(call: cst.Call, added: cst.Arg) -> cst.Call:
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


def keyword_argument(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, written the way PEP 8 writes keyword arguments (no spaces around `=`)."""
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def synchronize_call(module: cst.Module) -> str | None:
    """The call that waits for the file's one GPU library (None: none, or several to choose from).

    Where the device is chosen at run time (`torch.cuda.is_available()` in the file) the code
    also runs on machines without CUDA, where `torch.cuda.synchronize()` raises: it is guarded.
    """
    torch_names = module_aliases(module, "torch")
    cupy_names = module_aliases(module, "cupy")
    numba_names = from_import_aliases(module, "numba", "cuda")
    if len(torch_names) + len(cupy_names) + len(numba_names) != 1:
        return None
    if torch_names:
        call = f"{torch_names[0]}.cuda.synchronize()"
        return f"if {torch_names[0]}.cuda.is_available(): {call}" if "is_available" in module.code else call
    return f"{cupy_names[0]}.cuda.Device().synchronize()" if cupy_names else f"{numba_names[0]}.synchronize()"


def insert_before(statements: list[cst.BaseStatement], updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
    """`statements` then `updated`, the comments and blank lines above `updated` moved above
    the first new statement (they introduce the block, which now starts earlier)."""
    leading = updated.leading_lines  # type: ignore[attr-defined]
    first, *rest = statements
    return cst.FlattenSentinel(
        [first.with_changes(leading_lines=leading), *rest, updated.with_changes(leading_lines=[])]
    )


def fresh_name(wanted: str, module: cst.Module) -> str:
    """`wanted`, or `wanted_2`, `wanted_3`...: a name the file does not use anywhere."""
    used = names_in(module)
    name, number = wanted, 1
    while name in used:
        number += 1
        name = f"{wanted}_{number}"
    return name
