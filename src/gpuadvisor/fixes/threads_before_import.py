"""GPU502: move `os.environ["OMP_NUM_THREADS"] = "4"` above the first import of a library that
sizes its thread pool on import (unsafe: the library then runs with that many threads, which
can change floating-point reduction order, and the speed, which is the point)."""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.fixes.context import Edit, FixContext
from gpuadvisor.fixes.helpers import dotted, module_aliases, names_in


def _first_pool_import(module: cst.Module) -> cst.SimpleStatementLine | None:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import) and any((dotted(a.name) or "").split(".")[0] in kb.THREAD_POOL_IMPORTERS for a in small.names):
                return statement
            if isinstance(small, cst.ImportFrom) and small.module is not None and (dotted(small.module) or "").split(".")[0] in kb.THREAD_POOL_IMPORTERS:
                return statement
    return None


def _only_literals_and_os(statement: cst.SimpleStatementLine) -> bool:
    """The statement reads nothing but `os` and literals, so it means the same earlier."""
    return names_in(statement) <= {"os", "environ", "setdefault", "putenv", "update"}


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
    os_bound_before = "os" in module_aliases(context.module.with_changes(body=before_import), "os")
    moved = [statement] if os_bound_before else [cst.parse_statement("import os\n"), statement]

    def insert(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.CSTNode]:
        return cst.FlattenSentinel([*moved, updated])

    def remove(updated: cst.CSTNode) -> cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE

    return Edit({first_import: insert, statement: remove}, safe=False, description="set the variable before the import")
