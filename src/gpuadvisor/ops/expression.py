"""Elementwise expressions (`predict expr --expr ...`, the chains `check` finds): kernels and FLOPs.

An eager library launches one kernel per operation of the expression, each reading its array
operands from memory and writing its result: the cost is counted from the expression's tree.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from gpuadvisor.ops.cost import CostError

#: FLOP-equivalents of one transcendental evaluation (polynomial + range reduction).
TRANSCENDENTAL_FLOPS = 20
TRANSCENDENTAL = frozenset(
    {
        "sin", "cos", "tan", "exp", "log", "log2", "log10", "sqrt", "tanh", "sinh", "cosh", "arctan", "arcsin",
        "arccos", "power", "expm1", "log1p", "erf", "sigmoid", "exp2", "rsqrt", "softplus", "selu", "elu", "gelu",
        "silu",
    }
)
CHEAP_FUNCTIONS = frozenset(
    {
        "abs", "absolute", "maximum", "minimum", "where", "clip", "clamp", "sign", "square", "negative", "floor",
        "ceil", "round", "add", "subtract", "multiply", "divide", "true_divide", "relu", "reciprocal", "leaky_relu",
        "prelu",
    }
)


@dataclass(frozen=True)
class ExpressionCost:
    kernels: int
    flops_per_element: float
    inputs: tuple[str, ...]
    memory_passes: int  # element-sized reads + writes over all kernels


#: Elementwise expressions people write fit on a line or two.
_LONGEST_EXPRESSION = 2_000


def expression_cost(expression: str) -> ExpressionCost:
    """Count kernels and FLOPs per element of a NumPy-style elementwise expression."""
    if len(expression) > _LONGEST_EXPRESSION:
        raise CostError(f"expression too long to cost ({len(expression):,} characters; the limit is {_LONGEST_EXPRESSION:,})")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise CostError(f"cannot parse expression {expression!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise CostError("expression nested too deeply to cost") from None
    kernels, flops, passes = 0, 0.0, 0
    names: set[str] = set()

    def visit(node: ast.AST) -> bool:
        """Return whether the node is an array (vs. a scalar constant)."""
        nonlocal kernels, flops, passes
        if isinstance(node, ast.Expression):
            return visit(node.body)
        if isinstance(node, ast.Name):
            names.add(node.id)
            return True
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.BinOp):
            left, right = visit(node.left), visit(node.right)
            if not (left or right):
                return False
            kernels += 1
            is_pow = isinstance(node.op, ast.Pow)
            flops += 2 if is_pow else 1
            passes += int(left) + int(right) + 1
            return True
        if isinstance(node, ast.UnaryOp):
            inner = visit(node.operand)
            if inner:
                kernels, flops, passes = kernels + 1, flops + 1, passes + 2
            return inner
        if isinstance(node, ast.Compare):
            operands = [visit(node.left)] + [visit(c) for c in node.comparators]
            kernels, flops, passes = kernels + 1, flops + 1, passes + sum(operands) + 1
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name not in TRANSCENDENTAL and name not in CHEAP_FUNCTIONS:
                raise CostError(f"unsupported function {name!r} in expression (elementwise NumPy functions only)")
            operands = [visit(arg) for arg in node.args]
            kernels += 1
            flops += TRANSCENDENTAL_FLOPS if name in TRANSCENDENTAL else 1
            passes += sum(operands) + 1
            return True
        raise CostError(f"unsupported syntax in expression: {ast.dump(node)[:60]}")

    try:
        is_array = visit(tree)
    except RecursionError:
        raise CostError("expression nested too deeply to cost") from None
    if not is_array:
        raise CostError("the expression uses no arrays")
    return ExpressionCost(kernels, flops, tuple(sorted(names)), passes)
