"""Masked reads that are only counted or summed.

`(preds[mask] == target[mask]).float().mean()` copies the selected values out (the host waits to
learn how many there are) only to count them: the same number comes from `((preds == target) &
mask).sum()`, with no selection to size. A masked read whose selection is data the step needs
(`cross_entropy(logits[mask], y[mask])`) is another matter; GPU201 reads this fact to tell the two
apart. Computed once per walk, one parent map per function that holds such a read.
"""

from __future__ import annotations

from collections import defaultdict

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.facts.traverse import Nesting, child_nodes

#: Reductions whose result through a mask needs no masked copy: `x[m].sum()` is `(x * m).sum()`,
#: a count of `x[m] == y[m]` is one of `(x == y) & m`.
_MASKED_REDUCTIONS = frozenset({"sum", "mean", "count_nonzero", "nansum", "any", "all"})
#: What may stand between the masked read and its reduction: elementwise work and casts.
_ELEMENTWISE_NODES = (cst.Comparison, cst.BinaryOperation, cst.UnaryOperation, cst.Arg, cst.ComparisonTarget)


def only_reduced_reads(facts: ModuleFacts) -> set[cst.CSTNode]:
    """The masked reads of the file whose only use is a reduction, directly or through a name bound
    to the read (`masked = preds[mask]; torch.sum(masked == target[mask])`)."""
    by_root: dict[int, list[cst.CSTNode]] = defaultdict(list)
    roots: dict[int, cst.CSTNode] = {}
    for sync in facts.syncs:
        if sync.mask is not None:
            root = sync.ctx.function.node or facts.module
            roots[id(root)] = root
            by_root[id(root)].append(sync.node)
    found: set[cst.CSTNode] = set()
    for key, reads in by_root.items():
        nesting = Nesting(roots[key])
        names: dict[str, list[cst.Name]] | None = None
        for read in reads:
            parent = nesting.parent.get(id(read))
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
                if names is None:
                    names = _names_under(roots[key])
                uses = [node for node in names.get(parent.targets[0].target.value, []) if not isinstance(nesting.parent.get(id(node)), cst.AssignTarget)]
                reduced = bool(uses) and all(_reduced_upward(use, nesting, facts) for use in uses)
            else:
                reduced = _reduced_upward(read, nesting, facts)
            if reduced:
                found.add(read)
    return found


def _names_under(root: cst.CSTNode) -> dict[str, list[cst.Name]]:
    """Every `Name` node under `root` (loads and stores alike), by the name it spells."""
    found: dict[str, list[cst.Name]] = defaultdict(list)
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            found[node.value].append(node)
        stack.extend(child_nodes(node))
    return found


def _reduced_upward(node: cst.CSTNode, nesting: Nesting, facts: ModuleFacts) -> bool:
    """Climbing from `node` through elementwise work and casts reaches a reduction of it."""
    while True:
        parent = nesting.parent.get(id(node))
        if isinstance(parent, _ELEMENTWISE_NODES):
            node = parent
            continue
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = nesting.parent.get(id(parent))
            if not (isinstance(call, cst.Call) and call.func is parent):
                return False
            if parent.attr.value in _MASKED_REDUCTIONS:
                return True
            if parent.attr.value not in kb.RESHAPING_METHODS:
                return False
            node = call
            continue
        if isinstance(parent, cst.Call) and isinstance(node, cst.Arg) and parent.args and parent.args[0] is node:
            qualname = facts.imports.qualified_name(parent.func) or ""
            return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in _MASKED_REDUCTIONS
        return False
