"""A read-only walk over a LibCST tree, several times faster than `CSTNode.visit`.

LibCST's visitor machinery rebuilds each node on the way back up (it is shared with
transformers), which costs more than the parse on large files. Our walk only reads: it
follows the fields that can hold code, skips whitespace and punctuation, and calls the same
hooks a `CSTVisitor` would (`visit_For`, `leave_For`, `visit_For_body`, `leave_For_body`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import libcst as cst

#: Fields that never hold code: whitespace, brackets, separators, comments.
_TRIVIA_FIELDS = frozenset(
    {
        "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon", "colon",
        "dot", "equal", "star", "arrow", "newline", "leading_lines", "lines_after_decorators",
        "header", "footer", "footer_comment", "trailing_whitespace", "first_line", "empty_lines",
        "default_indent", "default_newline", "encoding", "has_trailing_newline", "indent",
        "asynchronous", "semicolon", "star_tok", "whitespace", "prefix", "quote", "value_quote",
    }
)
#: Source order where a node's field order differs from it (decorators come first).
_FIELD_ORDER: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
}

def _node_types() -> frozenset[type]:
    """Every concrete LibCST node class: `type(x) in` this set is far cheaper than isinstance
    against LibCST's abstract base classes, and the walk asks it for every field of every node."""
    found: set[type] = set()
    pending = [cst.CSTNode]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return frozenset(found)


NODE_TYPES = _node_types()
_SEQUENCES = (tuple, list)

Plan = tuple[Callable[..., Any] | None, Callable[..., Any] | None, tuple[tuple[str, Any, Any], ...]]


def _code_fields(node_type: type) -> tuple[str, ...]:
    if node_type in _FIELD_ORDER:
        return _FIELD_ORDER[node_type]
    names = []
    for field in dataclasses.fields(node_type):
        if field.name in _TRIVIA_FIELDS or field.name.startswith("whitespace"):
            continue
        names.append(field.name)
    return tuple(names)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The code-bearing children of a node, in source order.

    `CSTNode.children` runs a visitor per call and costs more than the rule that asks; this
    reads the same fields the walk follows (whitespace and punctuation skipped).
    """
    node_type = type(node)
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        fields = _CHILD_FIELDS[node_type] = _code_fields(node_type)
    found: list[cst.CSTNode] = []
    for field in fields:
        child = getattr(node, field)
        kind = type(child)
        if kind in NODE_TYPES:
            found.append(child)
        elif kind in _SEQUENCES:
            found.extend(item for item in child if type(item) in NODE_TYPES)
    return found


class ReadOnlyVisitor:
    """Subclass and define `visit_<Node>` / `leave_<Node>` / `visit_<Node>_<field>` hooks."""

    _plans: dict[type, Plan]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._plans = {}

    def _plan(self, node_type: type) -> Plan:
        name = node_type.__name__
        cls = type(self)
        fields = tuple(
            (
                field,
                getattr(cls, f"visit_{name}_{field}", None),
                getattr(cls, f"leave_{name}_{field}", None),
            )
            for field in _code_fields(node_type)
        )
        plan = (getattr(cls, f"visit_{name}", None), getattr(cls, f"leave_{name}", None), fields)
        cls._plans[node_type] = plan
        return plan

    def walk(self, node: cst.CSTNode) -> None:
        node_type = type(node)
        visit, leave, fields = self._plans.get(node_type) or self._plan(node_type)
        if visit is not None and visit(self, node) is False:
            return
        for field, visit_field, leave_field in fields:
            child = getattr(node, field)
            if child is None:
                continue
            if visit_field is not None:
                visit_field(self, node)
            kind = type(child)
            if kind in NODE_TYPES:
                self.walk(child)
            elif kind in _SEQUENCES:
                for item in child:
                    if type(item) in NODE_TYPES:
                        self.walk(item)
            if leave_field is not None:
                leave_field(self, node)
        if leave is not None:
            leave(self, node)


def calls_in(expr: cst.CSTNode) -> Iterator[cst.Call]:
    """Every call inside an expression, itself included."""
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            yield node
        stack.extend(child_nodes(node))


#: Nodes that open a scope of their own (concrete classes: `type(node) in` is exact for them).
NESTED_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def own_nodes(body: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes inside `body` in source order (preorder), leaving out the functions, classes and
    lambdas defined in it: what one function body itself runs."""
    stack = list(reversed(child_nodes(body)))
    while stack:
        node = stack.pop()
        if type(node) in NESTED_SCOPES:
            continue
        yield node
        stack.extend(reversed(child_nodes(node)))


class Nesting:
    """Source order and nesting of the nodes under one root (a function, a module), found in one
    walk: the parent of each node and its preorder position."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.position: dict[int, int] = {}
        self.parent: dict[int, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [root]
        while stack:
            node = stack.pop()
            self.position[id(node)] = len(self.position)
            children = list(child_nodes(node))
            for child in children:
                self.parent[id(child)] = node
            stack.extend(reversed(children))

    def ancestors(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The nodes around `node`, innermost first, up to the root."""
        chain = []
        while id(node) in self.parent:
            node = self.parent[id(node)]
            chain.append(node)
        return chain

