"""Which statements `gpuadvisor profile` watches, and how what it saw reaches the shared walk.

Static shapes are rarely known in real code: data comes from files, loaders and parameters.
The profiler watches the statements that may hold array operations (`watch_plan`) and
records what their operand names held; `seed_values` turns those observations into values
of the walk's memo (and the hit counts into "runs repeatedly"), so the evaluator meets `x @ w` with both shapes known and every rule and
prediction downstream works unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gpuadvisor.analysis.facts.imports import dotted_name
from gpuadvisor.analysis.facts.observations import Signature
from gpuadvisor.analysis.facts.values import Value

_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power, cst.FloorDivide, cst.MatrixMultiply, cst.Modulo,
)


@dataclass(frozen=True)
class Watch:
    """A statement that may hold array operations: its first line and the operand names in it,
    the plain names it assigns (read after it ran: the size of what it made, and which arrays
    were made by array work), or an import (timed apart: start-up, the same on any device)."""

    line: int
    last_line: int
    names: tuple[str, ...]
    targets: tuple[str, ...] = ()
    is_import: bool = False


class _WatchFinder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.watches: list[Watch] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in node.body):
            where = self.get_metadata(PositionProvider, node)
            self.watches.append(Watch(where.start.line, where.end.line, (), is_import=True))
        else:
            self._watch(node, node, targets=_assigned_names(node))
        return False

    def _header(self, node: cst.CSTNode, expressions: Iterable[cst.BaseExpression | None]) -> None:
        for expression in expressions:
            if expression is not None:
                self._watch(node, expression, header_only=True)

    def visit_If(self, node: cst.If) -> None:
        self._header(node, [node.test])

    def visit_While(self, node: cst.While) -> None:
        self._header(node, [node.test])

    def visit_For(self, node: cst.For) -> None:
        self._header(node, [node.iter])

    def _watch(self, statement: cst.CSTNode, scope: cst.CSTNode, header_only: bool = False, targets: tuple[str, ...] = ()) -> None:
        collector = _OperandNames()
        scope.visit(collector)
        if not collector.has_operation or not collector.names:
            return
        where = self.get_metadata(PositionProvider, statement)
        last = where.start.line if header_only else where.end.line
        self.watches.append(Watch(where.start.line, last, tuple(dict.fromkeys(collector.names)), targets))


def _assigned_names(line: cst.SimpleStatementLine) -> tuple[str, ...]:
    """Names and dotted names a statement line assigns (`x = ...`, `a, b = ...`, `x += ...`,
    `self.w = ...`)."""
    found: list[str] = []
    for small in line.body:
        targets: list[cst.BaseExpression] = []
        if isinstance(small, cst.Assign):
            targets = [target.target for target in small.targets]
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            targets = [small.target]
        for target in targets:
            elements = [element.value for element in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            found.extend(name for element in elements if (name := dotted_name(element)) is not None)
    return tuple(dict.fromkeys(found))


class _OperandNames(cst.CSTVisitor):
    """Names and dotted names used as operands (never as the function called), and whether
    anything here could be an array operation at all."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.has_operation = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.has_operation = self.has_operation or isinstance(node.operator, _ARITHMETIC)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.has_operation = True

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # `labels == k`, `r < tol`: elementwise on arrays (a kernel, and a wait where a host branch reads it);
        # membership and identity tests are not array work
        self.has_operation = self.has_operation or any(
            not isinstance(target.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for target in node.comparisons
        )

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        # `x[idx]`, `x[mask]`: an index that is neither a constant nor a slice may be an array (a gather);
        # `x[0]`, `x[:, 1:]`, `d["key"]` are views and lookups
        index = node.slice
        if isinstance(index, cst.Index) and not isinstance(index.value, (cst.Integer, cst.SimpleString, cst.UnaryOperation, cst.Ellipsis)):
            self.has_operation = self.has_operation or not (isinstance(index.value, cst.Name) and index.value.value == "None")

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        self.has_operation = self.has_operation or isinstance(node.operator, cst.Minus)

    def visit_Call(self, node: cst.Call) -> bool:
        # Any call may be library work (`rng.standard_normal`, `model(x)`, `opt.step()`): the
        # profiler times it and judges by its measured cost, not by its name.
        self.has_operation = True
        func = node.func
        if isinstance(func, cst.Attribute):
            func.value.visit(self)  # the receiver of a method call is an operand; `np.dot` is not
        elif isinstance(func, cst.Name):
            self.names.append(func.value)  # `model(x)`: the profiler tells a torch module by its value
        for arg in node.args:
            arg.value.visit(self)
        return False

    def _operand(self, node: cst.Name | cst.Attribute) -> bool:
        name = dotted_name(node)
        if name is None:
            return True  # `f(x).y`: look inside
        self.names.append(name)
        return False

    def visit_Name(self, node: cst.Name) -> bool:
        return self._operand(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._operand(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # its parameters are not the line's names

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)  # targets are written, not read (subscripted targets aside)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            node.value.visit(self)
        return False


def watch_plan(module: cst.Module) -> list[Watch]:
    """The statements of a module worth watching: any that may hold an array operation."""
    finder = _WatchFinder()
    MetadataWrapper(module, unsafe_skip_copy=True).visit(finder)
    return finder.watches


@dataclass(frozen=True)
class Seeds:
    """What a run told the walk: values by node id, and the nodes on statements that ran often
    (a function called in a loop elsewhere repeats as much as a loop body does)."""

    values: dict[int, Value]
    repeated: frozenset[int] = frozenset()


def seed_values(module: cst.Module, records: Mapping[int, Signature], repeated_lines: Collection[int] = ()) -> Seeds:
    """Each watched name on a line as it was seen; every node on a line of `repeated_lines`."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    values: dict[int, Value] = {}
    repeated: set[int] = set()
    for node, where in positions.items():
        if where.start.line in repeated_lines:
            repeated.add(id(node))
        if not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        seen = records.get(where.start.line)
        if not seen:
            continue
        name = dotted_name(node)
        for watched, observation in seen:
            if watched == name:
                values[id(node)] = observation.value()
                break
    return Seeds(values, frozenset(repeated))


def statement_lines(module: cst.Module) -> dict[int, int]:
    """Every line of a watched statement -> its first line."""
    spans: dict[int, int] = {}
    for watch in watch_plan(module):
        for line in range(watch.line, watch.last_line + 1):
            spans.setdefault(line, watch.line)
    return spans


def spread_to_lines(module: cst.Module, by_statement: Mapping[int, Signature]) -> dict[int, Signature]:
    """A statement's observations apply on every line it spans (`x = (a @\\n b)`)."""
    spans = statement_lines(module)
    return {line: by_statement[first] for line, first in spans.items() if first in by_statement}
