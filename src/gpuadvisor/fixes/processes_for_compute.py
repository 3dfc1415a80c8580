"""GPU501: `with ThreadPoolExecutor(n) as pool: pool.map(f, ...)` -> `ProcessPoolExecutor(n)`.

Unsafe: the work now runs in other processes. Offered only for the documented pattern, where
that changes nothing but the speed: a `with` block that only hands the pool functions defined
at the top of this file (so the children can import them), which return their results and
change nothing outside themselves (no globals, no writes into arguments); and the block runs
under `if __name__ == "__main__":` or in a function not called while the module is imported
(a child process imports it again where processes are spawned).
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.fixes.context import Edit, FixContext, Rewrite
from gpuadvisor.fixes.helpers import dotted, from_import_aliases, walk

_THREAD_POOLS = frozenset({"concurrent.futures.ThreadPoolExecutor", "concurrent.futures.thread.ThreadPoolExecutor"})
_POOL_METHODS = frozenset({"map", "submit"})


def _top_level_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    return {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}


def _is_main_guard(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    names = {dotted(statement.test.left)} | {
        dotted(c.comparator) if not isinstance(c.comparator, cst.SimpleString) else str(c.comparator.evaluated_value)
        for c in statement.test.comparisons
    }
    return names == {"__name__", "__main__"}


def _self_contained(function: cst.FunctionDef, functions: dict[str, cst.FunctionDef], seen: set[str]) -> bool:
    """Returns a value and changes nothing it did not create: no globals, no writes through
    attributes or subscripts of what it was given, no mutating calls on it; nor do the
    functions of this file it calls."""
    if function.name.value in seen:
        return True
    seen.add(function.name.value)
    if function.decorators or not any(isinstance(node, cst.Return) and node.value is not None for node in walk(function.body)):
        return False
    local = {
        name.value
        for node in walk(function.body) if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For))
        for target in (node.targets if isinstance(node, cst.Assign) else [node])
        for name in walk(target.target) if isinstance(name, cst.Name)
    }
    params = {param.name.value for param in walk(function.params) if isinstance(param, cst.Param)}
    local -= params
    for node in walk(function.body):
        if isinstance(node, (cst.Global, cst.Nonlocal, cst.FunctionDef, cst.ClassDef, cst.Yield)):
            return False
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target] if isinstance(node, (cst.AugAssign, cst.AnnAssign)) else []
        for target in targets:
            if isinstance(target, (cst.Attribute, cst.Subscript)) and _root(target) not in local:
                return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in kb.MUTATING_METHODS and _root(node.func.value) not in local:
                return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in functions:
            if not _self_contained(functions[node.func.value], functions, seen):
                return False
    return True


def _root(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _runs_only_when_run(with_statement: cst.With, context: FixContext) -> bool:
    """Under the `__main__` guard, or in a top-level function no import-time code calls."""
    functions = _top_level_functions(context.module)
    current: cst.CSTNode | None = with_statement
    while current is not None and context.parents.get(current) is not context.module:
        current = context.parents.get(current)
    if current is None:
        return False
    if _is_main_guard(current):
        return True
    if not isinstance(current, cst.FunctionDef):
        return False
    for statement in context.module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or _is_main_guard(statement):
            continue
        if any(isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in functions for node in walk(statement)):
            return False
    return True


def _pool_block(call: cst.Call, pool: str, context: FixContext) -> cst.With | None:
    current = context.parents.get(call)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
        if isinstance(current, cst.With) and len(current.items) == 1:
            asname = current.items[0].asname
            if asname is not None and isinstance(asname.name, cst.Name) and asname.name.value == pool:
                return current
        current = context.parents.get(current)
    return None


def _only_hands_over_functions(with_statement: cst.With, pool: str, functions: dict[str, cst.FunctionDef], context: FixContext) -> bool:
    """Every use of the pool in the block is `.map(f, ...)`/`.submit(f, ...)` of a self-contained
    top-level function `f`."""
    for node in walk(with_statement.body):
        if not (isinstance(node, cst.Name) and node.value == pool):
            continue
        attribute = context.parents.get(node)
        call = context.parents.get(attribute) if attribute is not None else None
        if not (isinstance(attribute, cst.Attribute) and attribute.value is node and attribute.attr.value in _POOL_METHODS):
            return False
        if not isinstance(call, cst.Call) or call.func is not attribute or not call.args or call.args[0].keyword or call.args[0].star:
            return False
        work = call.args[0].value
        if not isinstance(work, cst.Name) or work.value not in functions or not _self_contained(functions[work.value], functions, set()):
            return False
    return True


def _used_after(with_statement: cst.With, pool: str, context: FixContext) -> bool:
    scope: cst.CSTNode | None = context.parents.get(with_statement)
    while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
        scope = context.parents.get(scope)
    inside = set(walk(with_statement))
    return scope is None or any(isinstance(n, cst.Name) and n.value == pool and n not in inside for n in walk(scope))


def processes_for_compute(finding: Finding, context: FixContext) -> Edit | None:
    call = context.node_at(finding, cst.Call)
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or not isinstance(call.func.value, cst.Name):
        return None
    pool = call.func.value.value
    block = _pool_block(call, pool, context)
    if block is None:
        return None
    constructor = block.items[0].item
    if not isinstance(constructor, cst.Call) or context.facts.imports.qualified_name(constructor.func) not in _THREAD_POOLS:
        return None
    args = constructor.args
    if len(args) > 1 or any(arg.star or (arg.keyword is not None and arg.keyword.value != "max_workers") for arg in args):
        return None  # thread names, initialisers: arguments a process pool takes differently or not at all
    functions = _top_level_functions(context.module)
    if not _only_hands_over_functions(block, pool, functions, context) or _used_after(block, pool, context):
        return None
    if not _runs_only_when_run(block, context):
        return None
    rewrites = _renamed_pool(constructor, context)
    if rewrites is None:
        return None
    return Edit(rewrites, safe=False, description="run the work in processes (`ProcessPoolExecutor`)")


def _renamed_pool(constructor: cst.Call, context: FixContext) -> dict[cst.CSTNode, Rewrite] | None:
    """`ThreadPoolExecutor(...)` -> `ProcessPoolExecutor(...)`, and the import that names it."""
    func = constructor.func
    if isinstance(func, cst.Attribute):
        return {func: lambda updated: updated.with_changes(attr=cst.Name("ProcessPoolExecutor"))}
    if not isinstance(func, cst.Name) or func.value != "ThreadPoolExecutor":
        return None  # an alias: the user's own name for it
    existing = from_import_aliases(context.module, "concurrent.futures", "ProcessPoolExecutor")
    process_name = existing[0] if existing else "ProcessPoolExecutor"
    rewrites: dict[cst.CSTNode, Rewrite] = {func: lambda updated: cst.Name(process_name)}
    if existing:
        return rewrites
    statement = _importing(context.module, "ThreadPoolExecutor")
    if statement is None:
        return None
    uses = [n for n in walk(context.module) if isinstance(n, cst.Name) and n.value == "ThreadPoolExecutor"]
    still_used = len(uses) > 2  # the import and this call

    def import_processes(updated: cst.CSTNode) -> cst.CSTNode:
        names = list(updated.names)  # type: ignore[attr-defined]
        if not still_used:
            return updated.with_changes(names=[alias.with_changes(name=cst.Name("ProcessPoolExecutor")) if alias.name.value == "ThreadPoolExecutor" else alias for alias in names])  # type: ignore[attr-defined]
        last = names[-1]
        names[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(names=[*names, cst.ImportAlias(cst.Name("ProcessPoolExecutor"))])  # type: ignore[attr-defined]

    rewrites[statement] = import_processes
    return rewrites


def _importing(module: cst.Module, name: str) -> cst.ImportFrom | None:
    """The top-level `from concurrent.futures import ..., name, ...` (unaliased, one line)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None and dotted(small.module) == "concurrent.futures":
                    if isinstance(small.names, cst.ImportStar) or small.lpar is not None:
                        continue
                    if any(isinstance(a.name, cst.Name) and a.name.value == name and a.asname is None for a in small.names):
                        return small
    return None
