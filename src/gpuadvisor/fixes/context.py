"""What a fixer sees: the parsed file, the node a finding points at, the node's statement, and
the facts the rules judged the file by (gathered from the same tree, so its nodes are the keys)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Union

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider

from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.findings.records import Finding

#: What a node becomes: a node, several statements in its place, or nothing.
Replacement = Union[cst.CSTNode, cst.FlattenSentinel[cst.CSTNode], cst.RemovalSentinel]
Rewrite = Callable[[cst.CSTNode], Replacement]


@dataclass
class Edit:
    """The rewrites one fix makes, keyed by the original nodes they replace."""

    rewrites: dict[cst.CSTNode, Rewrite]
    safe: bool
    description: str
    #: The fix may also settle other findings of its rule (one synchronize covers the clock
    #: reads after it): the next such fix in the file waits for the re-check of the next round.
    one_per_round: bool = False


@dataclass
class FixContext:
    module: cst.Module
    positions: Mapping[cst.CSTNode, CodeRange]
    parents: Mapping[cst.CSTNode, cst.CSTNode]
    path: str = "<string>"
    _by_range: dict[tuple[int, int, int, int], list[cst.CSTNode]] = field(default_factory=dict)
    _facts: ModuleFacts | None = None

    @classmethod
    def of(cls, text: str, path: str = "<string>") -> FixContext:
        wrapper = MetadataWrapper(cst.parse_module(text))
        positions = wrapper.resolve(PositionProvider)
        context = cls(wrapper.module, positions, wrapper.resolve(ParentNodeProvider), path)
        for node, where in positions.items():
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            context._by_range.setdefault(key, []).append(node)
        return context

    @property
    def facts(self) -> ModuleFacts:
        """What the rules know about this tree (walked on first use: most fixers never ask)."""
        if self._facts is None:
            from gpuadvisor.analysis.facts.walker import gather_facts

            self._facts = gather_facts(self.module, self.path)
        return self._facts

    def node_at(self, finding: Finding, kind: type = cst.CSTNode) -> cst.CSTNode | None:
        """The outermost node of type `kind` that spans exactly the finding's range."""
        key = (finding.line, finding.column, finding.end_line, finding.end_column)
        return next((node for node in self._by_range.get(key, []) if isinstance(node, kind)), None)

    def statement_of(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The line of simple statements holding `node`, when it sits in a block of its own
        (not after `if x:` on the same line, where nothing can be inserted before it)."""
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseCompoundStatement):
            if isinstance(current, cst.SimpleStatementLine):
                return current
            current = self.parents.get(current)
        return None

    def is_top_level(self, statement: cst.CSTNode) -> bool:
        return self.parents.get(statement) is self.module

    def block_of(self, statement: cst.CSTNode) -> tuple[cst.CSTNode, list[cst.CSTNode]] | None:
        """The block (module or indented body) holding the statement, and its statements."""
        parent = self.parents.get(statement)
        if isinstance(parent, (cst.Module, cst.IndentedBlock)):
            return parent, list(parent.body)
        return None
