"""GPU601: nested pure-Python loops multiplying array elements one by one."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts.module_facts import LoopFacts, ModuleFacts
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.prescan import SUBSCRIPT_PRODUCT
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short
from gpuadvisor.analysis.facts.traverse import ReadOnlyVisitor


def _index_names(node: cst.BaseExpression) -> list[str] | None:
    """Names used as indices in `a[i][k]` / `a[i, k]`; None if not purely name-indexed."""
    names: list[str] = []
    while isinstance(node, cst.Subscript):
        for element in node.slice:
            index = element.slice
            if not isinstance(index, cst.Index) or not isinstance(index.value, cst.Name):
                return None
            names.append(index.value.value)
        node = node.value
    return names if names and isinstance(node, (cst.Name, cst.Attribute)) else None


class _ProductFinder(ReadOnlyVisitor):
    """Finds an accumulated product of two element reads indexed by loop variables, sharing one."""

    def __init__(self, loop_targets: set[str], facts: ModuleFacts) -> None:
        self.loop_targets = loop_targets
        self.facts = facts
        self.accumulating = 0
        self.found: cst.BinaryOperation | None = None

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self.accumulating += 1

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        if isinstance(original_node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self.accumulating -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if self.facts.imports.qualified_name(node.func) == "builtins.sum":
            self.accumulating += 1

    def leave_Call(self, original_node: cst.Call) -> None:
        if self.facts.imports.qualified_name(original_node.func) == "builtins.sum":
            self.accumulating -= 1

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self.found is not None or not self.accumulating or not isinstance(node.operator, cst.Multiply):
            return
        left, right = _index_names(node.left), _index_names(node.right)
        if left is None or right is None:
            return
        used = set(left) | set(right)
        if len(used & self.loop_targets) < 2 or not set(left) & set(right) & self.loop_targets:
            # A product contracts over an index both factors read (`A[i, k] * B[k, j]`, `a[i, j] *
            # b[i, j]`); `amp[e] * frac[x]` scattered per event and trace is an outer product.
            return
        values = (self.facts.value(node.left), self.facts.value(node.right))
        if any(v is not None and v.on_gpu for v in values):
            return  # GPU element loops are the small-kernel rule's business
        self.found = node


class PythonLoopMatmul(Rule):
    code = "GPU601"
    category = "python-loop-matmul"
    severity = Severity.WARNING
    summary = "Nested Python loops multiplying array elements one at a time; one NumPy call does it"
    prefilter = (r"\bfor\b", SUBSCRIPT_PRODUCT)

    VALID = [
        # A Warp kernel built with `wp.Kernel(func)` rather than a decorator: `wp.tid()` marks it,
        # and its 3x3 loops are compiled and run per GPU thread, never by the interpreter.
        Valid(
            """
            import warp as wp
            def make_kernel(dtype):
                def matmul_3x3(A: wp.array(ndim=3, dtype=dtype), B: wp.array(ndim=3, dtype=dtype), C: wp.array(ndim=3, dtype=dtype)):
                    b = wp.tid()
                    for i in range(3):
                        for j in range(3):
                            for k in range(3):
                                C[b, i, j] += A[b, i, k] * B[b, k, j]
                return wp.Kernel(matmul_3x3, key="matmul_3x3")
            """
        ),
        # Each event's amplitude spread over the traces it crosses: the factors share no index,
        # so this is a scatter of an outer product, set up once, not a product of matrices.
        Valid(
            """
            import numpy as np
            def linear_events(x, t0, amp, nt):
                d = np.zeros((len(x), nt))
                for ievent in range(len(t0)):
                    shift = t0[ievent] + x
                    it = shift.astype(int)
                    frac = shift - it
                    for ix in range(len(x)):
                        d[ix, it[ix]] += amp[ievent] * frac[ix]
                return d
            """
        ),
        # A sum over one axis, then an element-wise product stored cell by cell: nothing is
        # accumulated across the inner loop, so this is no matrix product written by hand.
        Valid(
            """
            import numpy as np
            for i in range(n):
                for j in range(m):
                    total = sum(row[i] for row in rows)
                    out[i, j] = a[i, j] * b[j, i] / total
            """
        ),
        Valid(
            """
            import numpy as np
            C = A @ B
            for i in range(n):
                scale[i] = weights[i] * 2
            """
        ),
        Valid(
            """
            from numba import njit

            @njit
            def matmul(A, B, C):
                for i in range(A.shape[0]):
                    for j in range(B.shape[1]):
                        for k in range(A.shape[1]):
                            C[i, j] += A[i, k] * B[k, j]
            """
        ),
        Valid(
            """
            for row in grid:
                for cell in row:
                    cell.value += cell.weight[0] * factor[0]
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            def matmul(A, B):
                n, m, p = len(A), len(B), len(B[0])
                C = [[0.0] * p for _ in range(n)]
                for i in range(n):
                    for j in range(p):
                        for k in range(m):
                            C[i][j] += A[i][k] * B[k][j]
                return C
            """,
            line=4,
        ),
        Invalid(
            """
            import numpy as np
            a = np.random.rand(300, 300)
            b = np.random.rand(300, 300)
            out = np.zeros((300, 300))
            for i in range(300):
                for j in range(300):
                    out[i, j] = sum(a[i, k] * b[k, j] for k in range(300))
            """,
            line=5,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        nests: dict[int, list[LoopFacts]] = {}  # outermost loop's id -> every loop inside it, itself included
        for inner in facts.loops:
            outermost = inner
            while outermost.parent is not None:
                outermost = outermost.parent
            nests.setdefault(id(outermost), []).append(inner)
        for loop in facts.loops:
            if loop.parent is not None or loop.function.compiled or isinstance(loop.node, cst.While):
                continue
            nest = nests[id(loop)]
            if len(nest) < 2:
                continue
            finder = _ProductFinder(set().union(*(inner.targets for inner in nest)), facts)
            finder.walk(loop.node)
            if finder.found is None:
                continue
            yield Report(
                loop.node,
                f"Nested Python loops compute `{short(facts.code(finder.found), 40)}` one element at a "
                "time: the interpreter manages ~10^7 such steps per second, one BLAS call ~10^10 or more",
                "Replace the loops with one array operation on NumPy arrays: `C = A @ B` (or `np.dot`, "
                "`np.einsum`).",
                end_node=loop.header_end(),
            )
