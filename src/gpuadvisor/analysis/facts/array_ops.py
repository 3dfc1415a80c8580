"""Array operations of known shape in a statement: what the speedup predictor is asked about.

A statement's elementwise arithmetic and ufuncs form one chain (one prediction: eager GPU
libraries launch one kernel per operation, which the predictor counts); matrix products,
reductions, sorts, FFTs and linear algebra are operations of their own, and their results
feed the chain around them (`np.tanh(a @ w + b)` is a matmul plus a two-kernel chain).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from gpuadvisor.analysis.facts.imports import ImportTable, keyword_arg, literal_string, positional_arg
from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.shape_eval import EINSUM_MATMUL
from gpuadvisor.ops.cost import ITEM_BYTES
from gpuadvisor.ops.registry import OPS, Reading
from gpuadvisor.analysis.facts.values import Kind, Value

PREDICTABLE_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
_OPERATOR_TEXT = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.Power: "**", cst.FloorDivide: "//",
}
#: Function and method name -> the registry op it computes, for the ops `check` predicts from calls.
_OP_OF_CALL = {name: entry for entry in OPS.values() if entry.in_code is not None for name in entry.call_names}


@dataclass(frozen=True)
class ArrayOperation:
    node: cst.BaseExpression
    op: str  # a `gpuadvisor predict` op
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    library: str
    on_gpu: bool
    expression: str | None = None
    axis: int | None = None
    input_copy_bytes: float = 0.0  # inputs that exist only on the host (not made from nothing)
    output_bytes: float = 0.0

    @property
    def description(self) -> str:
        infix = OPS[self.op].infix if self.op in OPS else ""
        shapes = f" {infix} ".join("x".join(map(str, s)) for s in self.shapes) if infix else "x".join(map(str, self.shapes[0]))
        what = f"elementwise `{self.expression}`" if self.expression is not None else self.op
        return f"{shapes} {self.dtype} {what}"


def _unwrap(text: str) -> str:
    """The parentheses around a rendered operation dropped where it stands alone (the whole
    expression, an argument of a call): `render` wraps every operator's result, and only it, in
    one pair, so a text that starts with one is wrapped whole."""
    return text[1:-1] if text.startswith("(") else text


def _nbytes(value: Value) -> float:
    return float(math.prod(value.shape or ())) * ITEM_BYTES.get(value.dtype or "", 8)


class OperationFinder:
    """Walks one statement's expression and lists the operations in it."""

    def __init__(self, evaluate: Callable[[cst.BaseExpression], Value | None], imports: ImportTable) -> None:
        self.evaluate = evaluate
        self.imports = imports

    def _array(self, node: cst.BaseExpression) -> Value | None:
        value = self.evaluate(node)
        if value is None or value.kind is not Kind.ARRAY or value.shape is None or value.dtype not in PREDICTABLE_DTYPES:
            return None
        return value

    def _function_name(self, call: cst.Call) -> tuple[str | None, Value | None]:
        """(short function name, receiver value) of a library call or array method."""
        func = call.func
        if isinstance(func, cst.Attribute):
            receiver = self.evaluate(func.value)
            if receiver is not None and receiver.kind is Kind.ARRAY:
                return func.attr.value, receiver
        qualname = self.imports.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualname is None or qualname.split(".")[0] not in ("numpy", "cupy", "cupyx", "torch"):
            return None, None
        return qualname.rsplit(".", 1)[-1], None

    def _is_elementwise(self, node: cst.BaseExpression) -> bool:
        kind = type(node)  # exact types: isinstance on LibCST's abstract bases is slow here
        if kind is cst.BinaryOperation:
            return type(node.operator) in _OPERATOR_TEXT and self._array(node) is not None  # type: ignore[attr-defined]
        if kind is cst.UnaryOperation:
            return type(node.operator) is cst.Minus and self._array(node) is not None  # type: ignore[attr-defined]
        if kind is cst.Call:
            name, _ = self._function_name(node)  # type: ignore[arg-type]
            return name in kb.ELEMENTWISE and self._array(node) is not None
        return False

    def operations(self, root: cst.BaseExpression) -> list[ArrayOperation]:
        found: list[ArrayOperation] = []
        self._visit(root, found)
        return found

    def _visit(self, node: cst.BaseExpression, found: list[ArrayOperation]) -> None:
        if self._is_elementwise(node):
            chain = self._chain(node, found)  # the whole chain at its top: its parts are not visited
            if chain is not None:
                found.append(chain)
            return
        heavy = self._heavy(node)
        for child in self._operands(node):
            self._visit(child, found)
        if heavy is not None:
            found.append(heavy)

    @staticmethod
    def _operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
        kind = type(node)
        if kind is cst.BinaryOperation:
            return [node.left, node.right]  # type: ignore[attr-defined]
        if kind is cst.UnaryOperation:
            return [node.expression]  # type: ignore[attr-defined]
        if kind is cst.Call:
            operands = [arg.value for arg in node.args]  # type: ignore[attr-defined]
            if type(node.func) is cst.Attribute:  # type: ignore[attr-defined]
                operands.insert(0, node.func.value)  # type: ignore[attr-defined]
            return operands
        if kind is cst.Tuple or kind is cst.List:
            return [element.value for element in node.elements]  # type: ignore[attr-defined]
        return []

    # -- elementwise chains ----------------------------------------------------------------
    def _chain(self, root: cst.BaseExpression, found: list[ArrayOperation]) -> ArrayOperation | None:
        names: dict[str, str] = {}
        leaves: list[Value] = []

        def render(node: cst.BaseExpression) -> str | None:
            if self._is_elementwise(node):
                if isinstance(node, cst.BinaryOperation):
                    left, right = render(node.left), render(node.right)
                    if left is None or right is None:
                        return None
                    return f"({left} {_OPERATOR_TEXT[type(node.operator)]} {right})"
                if isinstance(node, cst.UnaryOperation):
                    inner = render(node.expression)
                    return f"(-{inner})" if inner is not None else None
                assert isinstance(node, cst.Call)
                name, receiver = self._function_name(node)
                operands = [arg.value for arg in node.args if arg.keyword is None]
                if receiver is not None:
                    operands.insert(0, node.func.value)  # type: ignore[attr-defined]
                rendered = [render(operand) for operand in operands]
                if any(r is None for r in rendered):
                    return None
                return f"{name}({', '.join(_unwrap(r) for r in rendered)})"  # type: ignore[arg-type]
            value = self.evaluate(node)
            if value is not None and value.kind is Kind.NUMBER and value.number is not None:
                number = value.number
                return repr(number) if float(number).is_integer() else f"{number:.6g}"  # readable, still a literal
            array = self._array(node)
            if array is None:
                return None
            self._visit(node, found)  # heavy operations feeding the chain
            key = " ".join(cst.Module([]).code_for_node(node).split())
            if key not in names:
                names[key] = f"x{len(names)}"
                leaves.append(array)
            return names[key]

        text = render(root)
        result = self._array(root)
        if text is None or result is None:
            return None
        return ArrayOperation(
            node=root,
            op="expr",
            shapes=(result.shape,),  # type: ignore[arg-type]
            dtype=result.dtype,  # type: ignore[arg-type]
            library=result.library,
            on_gpu=result.on_gpu,
            expression=_unwrap(text),
            input_copy_bytes=sum(_nbytes(v) for v in leaves if not v.generated),
            output_bytes=_nbytes(result),
        )

    # -- heavy operations ------------------------------------------------------------------
    def _heavy(self, node: cst.BaseExpression) -> ArrayOperation | None:
        result = self.evaluate(node)
        if result is None or result.kind is not Kind.ARRAY:
            return None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            return self._make(node, "matmul", [node.left, node.right], result)
        if not isinstance(node, cst.Call):
            return None
        name, receiver = self._function_name(node)
        if name is None:
            return None
        operands = [arg.value for arg in node.args if arg.keyword is None]
        if receiver is not None:
            operands.insert(0, node.func.value)  # type: ignore[attr-defined]
        if name == "einsum" and len(operands) == 3 and EINSUM_MATMUL.match(literal_string(operands[0]) or ""):
            return self._make(node, "matmul", operands[1:], result)
        entry = _OP_OF_CALL.get(name)
        if entry is None or entry.in_code is None:
            return None
        op, reading = entry.in_code.predicted_as or entry.name, entry.in_code.reading
        if reading is Reading.FIRST_TWO:
            return self._make(node, op, operands[:2], result)
        if reading is Reading.ALONG_AXIS:
            axis_node = keyword_arg(node, "axis") or keyword_arg(node, "dim") or (positional_arg(node, 0) if receiver is not None else positional_arg(node, 1))
            axis_value = self.evaluate(axis_node) if axis_node is not None else None
            if axis_node is not None and (axis_value is None or axis_value.kind is not Kind.NUMBER):
                return None
            axis = int(axis_value.number) if axis_value is not None and axis_value.number is not None else None
            return self._make(node, op, operands[:1], result, axis=axis)
        if reading is Reading.SQUARE_TWICE:
            matrix = self._array(operands[0]) if operands else None
            if matrix is None or len(matrix.shape or ()) != 2:
                return None
            return self._make(node, op, operands[:1], result, extra_shape=matrix.shape)
        return self._make(node, op, operands[:1], result)  # Reading.FIRST

    def _make(
        self,
        node: cst.BaseExpression,
        op: str,
        operands: list[cst.BaseExpression],
        result: Value,
        axis: int | None = None,
        extra_shape: tuple[int, ...] | None = None,
    ) -> ArrayOperation | None:
        values = [self._array(operand) for operand in operands]
        if not values or any(v is None for v in values):
            return None
        shapes = tuple(v.shape for v in values)  # type: ignore[union-attr]
        if extra_shape is not None:
            shapes = shapes + (extra_shape,)
        dtype = values[0].dtype  # type: ignore[union-attr]
        first = values[0]
        assert first is not None and dtype is not None
        result_bytes = _nbytes(result) if result.shape is not None else sum(_nbytes(v) for v in values)  # type: ignore[misc, arg-type]
        return ArrayOperation(
            node=node,
            op=op,
            shapes=shapes,  # type: ignore[arg-type]
            dtype=dtype,
            library=first.library,
            on_gpu=first.on_gpu,
            axis=axis,
            input_copy_bytes=sum(_nbytes(v) for v in values if not v.generated),  # type: ignore[union-attr, misc, arg-type]
            output_bytes=result_bytes,
        )
