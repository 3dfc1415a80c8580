"""Line/column ranges for the few nodes that are reported, without re-rendering the whole file.

LibCST's PositionProvider regenerates the source of the entire module, which costs more than
the parse on big files. We render only the top-level statements that hold a finding and
anchor each with the line CPython's (C-speed) `ast` gives for that statement.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider


def _full(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def _statement_lines(module: cst.Module, text: str) -> dict[cst.CSTNode, int] | None:
    """First line of each top-level statement, or None when `ast` cannot tell us."""
    try:
        ast_body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # e.g. syntax newer than this interpreter
    lines: dict[cst.CSTNode, int] = {}
    cursor = 0
    for statement in module.body:
        if cursor >= len(ast_body):
            return None
        lines[statement] = ast_body[cursor].lineno
        cursor += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return lines if cursor == len(ast_body) else None


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
    starts = _statement_lines(module, text)
    if starts is None:
        return _full(module)
    found: dict[cst.CSTNode, CodeRange] = {}
    for top, inside in by_top.items():
        assert top is not None
        alone = module.with_changes(body=[top], header=[], footer=[])
        local = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        offset = starts[top] - local[top].start.line
        for node in inside:
            found[node] = _shift(local[node], offset)
    return found
