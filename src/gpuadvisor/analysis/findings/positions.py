"""Line/column ranges for the few nodes that are reported, without re-rendering the whole file.

LibCST's PositionProvider regenerates the source of the entire module, which costs more than
the parse on big files. We render only the statements that hold a finding and anchor each with
the line CPython's (C-speed) `ast` gives for that statement. Inside a class or function body the
statement holding a finding is rendered within its enclosing headers alone (the `class` and `def`
lines with their indentation, no other member): a finding in one method of a 2,000-line class
costs that method's rendering, not the class's.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping, Sequence

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from gpuadvisor.analysis.facts.traverse import child_nodes


def _full(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def _paired(body: Sequence[cst.CSTNode], ast_body: list[ast.stmt]) -> dict[cst.CSTNode, ast.stmt] | None:
    """Each statement of a LibCST body with CPython's statement for it (the first, for a line
    of `a; b`), or None when the two do not line up."""
    pairs: dict[cst.CSTNode, ast.stmt] = {}
    cursor = 0
    for statement in body:
        if cursor >= len(ast_body):
            return None
        pairs[statement] = ast_body[cursor]
        cursor += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return pairs if cursor == len(ast_body) else None


def _top_statements(module: cst.Module, text: str) -> dict[cst.CSTNode, ast.stmt] | None:
    """CPython's statement for each top-level statement, or None when `ast` cannot tell us."""
    try:
        ast_body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # e.g. syntax newer than this interpreter
    return _paired(module.body, ast_body)


def _holding(statement: cst.CSTNode, tree: ast.stmt, nodes: list[cst.CSTNode]) -> Iterator[tuple[list[cst.CSTNode], ast.stmt, list[cst.CSTNode]]]:
    """The narrowest statements that hold `nodes`, each as (its enclosing statements from
    `statement` down to it, CPython's statement for it, the nodes it holds): a class or function
    is narrowed to the statement of its body that holds a node, unless a node is in its header."""
    block = getattr(statement, "body", None)
    pairs = None
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and isinstance(block, cst.IndentedBlock):
        if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pairs = _paired(block.body, tree.body)
    wanted = set(nodes)
    holder: dict[cst.CSTNode, cst.CSTNode] = {}
    for child in pairs or ():
        stack = [child]
        while stack and len(holder) < len(wanted):
            node = stack.pop()
            if node in wanted:
                holder[node] = child
            stack.extend(child_nodes(node))
    if pairs is None or len(holder) < len(wanted):  # a node in the header (or no body to narrow to)
        yield [statement], tree, nodes
        return
    by_child: dict[cst.CSTNode, list[cst.CSTNode]] = {}
    for node in nodes:
        by_child.setdefault(holder[node], []).append(node)
    for child, inside in by_child.items():
        for chain, found, held in _holding(child, pairs[child], inside):
            yield [statement, *chain], found, held


def _alone(module: cst.Module, chain: list[cst.CSTNode]) -> cst.Module:
    """The module reduced to the chain's last statement inside its enclosing headers (its
    indentation kept), without siblings."""
    node = chain[-1]
    for enclosing in reversed(chain[:-1]):
        assert isinstance(enclosing, (cst.FunctionDef, cst.ClassDef)) and isinstance(enclosing.body, cst.IndentedBlock)
        node = enclosing.with_changes(body=enclosing.body.with_changes(body=[node]))
    return module.with_changes(body=[node], header=[], footer=[])


def _shift(position: CodeRange, lines: int) -> CodeRange:
    return CodeRange(
        CodePosition(position.start.line + lines, position.start.column),
        CodePosition(position.end.line + lines, position.end.column),
    )


def resolve_positions(
    module: cst.Module, text: str, nodes: Iterable[cst.CSTNode], statement_of: Mapping[cst.CSTNode, cst.CSTNode]
) -> Mapping[cst.CSTNode, CodeRange]:
    """Positions of `nodes`; `statement_of` maps each to the top-level statement holding it."""
    by_top: dict[cst.CSTNode | None, list[cst.CSTNode]] = {}
    for node in nodes:
        by_top.setdefault(statement_of.get(node), []).append(node)
    if None in by_top or len(by_top) * 4 > len(module.body):
        return _full(module)  # findings all over the file: one render of it is cheaper
    tops = _top_statements(module, text)
    if tops is None:
        return _full(module)
    found: dict[cst.CSTNode, CodeRange] = {}
    for top, inside in by_top.items():
        assert top is not None
        for chain, statement, held in _holding(top, tops[top], inside):
            local = MetadataWrapper(_alone(module, chain), unsafe_skip_copy=True).resolve(PositionProvider)
            offset = statement.lineno - local[chain[-1]].start.line
            for node in held:
                found[node] = _shift(local[node], offset)
    return found
