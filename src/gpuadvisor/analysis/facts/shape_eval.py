"""Static shapes and dtypes of arrays built and transformed with literal sizes.

`N = 4096; a = np.random.rand(N, N).astype(np.float32); c = a @ a.T` gives `c` the shape
(4096, 4096) and dtype float32. Sizes may be literals, named constants and arithmetic on
them (`1 << 20`, `100_000_000`, `2 * N`). Anything else leaves the shape unknown, and rules
that need a shape stay silent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts import shapes as rules
from gpuadvisor.analysis.facts.imports import ImportTable, keyword_arg, literal_string, positional_arg
from gpuadvisor.analysis.facts.values import Kind, Value

EINSUM_MATMUL = re.compile(r"^\s*(\w*)(\w)(\w)\s*,\s*\1(\w)(\w)\s*->\s*\1(\w)(\w)\s*$")


def _rank_of(dims: list[cst.BaseExpression | None]) -> int | None:
    """How many dimensions a factory's size arguments give: `(n, 3, m)` or `[n, 3, m]` as one
    argument, or several size arguments (`torch.zeros(n, 3)`); None for a single unknown size."""
    if len(dims) > 1:
        return len(dims)
    single = dims[0] if dims else None
    if isinstance(single, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in single.elements):
        return len(single.elements)
    return 1 if single is not None and _one_size(single) else None


def _one_size(expr: cst.BaseExpression) -> bool:
    """An expression that is one integer, never a shape: `64`, `x.shape[0]`, `x.size(0)`,
    `len(batch)`, `x.numel()` (`torch.ones(x.shape[0])` is a vector, whatever its length)."""
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        return len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)
    if not isinstance(expr, cst.Call):
        return False
    if isinstance(expr.func, cst.Name):
        return expr.func.value == "len"
    if isinstance(expr.func, cst.Attribute):
        return (expr.func.attr.value == "size" and len(expr.args) == 1) or (expr.func.attr.value == "numel" and not expr.args)
    return False


def _library_default(value: Value) -> str:
    return rules.DEFAULT_FLOAT.get(value.library, "float64")


class ShapeInference:
    """Adds shape/dtype/generated facts to the values the device evaluation produced."""

    def __init__(self, evaluate: Callable[[cst.BaseExpression], Value | None], imports: ImportTable) -> None:
        self.evaluate = evaluate
        self.imports = imports

    # -- arguments ----------------------------------------------------------------------------
    def integer(self, node: cst.BaseExpression | None) -> int | None:
        value = self.evaluate(node) if node is not None else None
        if value is None or value.kind is not Kind.NUMBER or value.number is None:
            return None
        number = value.number
        return int(number) if float(number).is_integer() else None

    def shape_from(self, node: cst.BaseExpression | None) -> tuple[int, ...] | None:
        """`(N, N)`, `[N]`, `N` -> a shape tuple."""
        if node is None:
            return None
        if isinstance(node, (cst.Tuple, cst.List)):
            dims = [self.integer(element.value) for element in node.elements]
            return rules.valid_shape(tuple(dims)) if all(d is not None for d in dims) else None  # type: ignore[arg-type]
        single = self.integer(node)
        return rules.valid_shape((single,)) if single is not None else None

    def dims_from_args(self, call: cst.Call, start: int = 0) -> tuple[int, ...] | None:
        """`rand(N, N)` or `zeros((N, N))` (torch accepts both)."""
        args = [arg.value for arg in call.args if arg.keyword is None and not arg.star][start:]
        if len(args) == 1:
            return self.shape_from(args[0])
        dims = [self.integer(arg) for arg in args]
        if not dims or any(d is None for d in dims):
            return self.shape_from(keyword_arg(call, "size") or keyword_arg(call, "shape"))
        return rules.valid_shape(tuple(dims))  # type: ignore[arg-type]

    def reshape_target(self, call: cst.Call) -> tuple[int, ...] | None:
        """`reshape(-1, 4)` / `reshape((N, -1))`: like a shape, but one -1 is allowed."""
        args = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
            args = [element.value for element in args[0].elements]
        dims = [self.integer(arg) for arg in args]
        return tuple(dims) if dims and all(d is not None for d in dims) else None  # type: ignore[arg-type]

    def _dtype_or(self, node: cst.Call, fallback: str | None) -> str | None:
        """The `dtype=` a call names, else `fallback` (what the call makes without one); a dtype
        named but not known (`dtype=torch.complex32`) is unknown, not the fallback."""
        given = keyword_arg(node, "dtype")
        return self.dtype_of(given) if given is not None else fallback

    def dtype_of(self, node: cst.BaseExpression | None) -> str | None:
        if node is None:
            return None
        text = literal_string(node)
        if text is not None:
            return rules.dtype_from_name(text)
        qualname = self.imports.qualified_name(node)
        if qualname is not None:
            return rules.dtype_from_name(qualname)
        if isinstance(node, cst.Name) and node.value in ("float", "int"):
            return rules.dtype_from_name(node.value)
        return None

    def literal_shape(self, node: cst.BaseExpression) -> tuple[tuple[int, ...], str] | None:
        """Shape and dtype of a nested list/tuple literal of numbers."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return (), "int64" if isinstance(node, cst.Integer) else "float64"
        if isinstance(node, cst.UnaryOperation):
            return self.literal_shape(node.expression)
        if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
            return None
        inner = [self.literal_shape(element.value) for element in node.elements]
        if any(item is None for item in inner) or len({item[0] for item in inner}) != 1:  # type: ignore[index]
            return None
        dtype = "float64" if any(item[1] == "float64" for item in inner) else "int64"  # type: ignore[index]
        return (len(inner),) + inner[0][0], dtype  # type: ignore[index]

    # -- results -----------------------------------------------------------------------------
    def call(self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None, value: Value) -> Value:
        if value.kind is not Kind.ARRAY:
            return value
        shaped = self._shaped_call(node, qualname, method, receiver, value)
        name = method if method is not None else (qualname or "").rsplit(".", 1)[-1]
        return replace(shaped, dtype="bool") if name in kb.MASK_RESULTS else shaped

    def _shaped_call(self, node: cst.Call, qualname: str | None, method: str | None, receiver: Value | None, value: Value) -> Value:
        if receiver is not None and method is not None:
            if receiver.kind is Kind.RNG:
                return self._rng_method(node, method, value)
            if receiver.kind is Kind.ARRAY:
                return self._array_method(node, method, receiver, value)
            return value
        if qualname is None:
            return value
        return self._function(node, qualname, value)

    def _rng_method(self, node: cst.Call, method: str, value: Value) -> Value:
        size_position = {"random": 0, "standard_normal": 0, "normal": 2, "uniform": 2, "integers": 2, "exponential": 1}
        position = size_position.get(method)
        if position is None:
            return value
        shape = self.shape_from(keyword_arg(node, "size") or positional_arg(node, position))
        dtype = self._dtype_or(node, "int64" if method == "integers" else "float64")
        return replace(value, shape=shape, dtype=dtype, generated=True)

    def _function(self, node: cst.Call, qualname: str, value: Value) -> Value:
        name = qualname.rsplit(".", 1)[-1]
        default = _library_default(value)
        args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        arrays = [v for v in (self.evaluate(a) for a in args) if v is not None and v.kind is Kind.ARRAY]
        in_random = ".random." in qualname
        if name in kb.FILL_FACTORIES:
            several = value.library == "torch" and name != "full"
            shape = self.dims_from_args(node) if several else self.shape_from(args[0] if args else keyword_arg(node, "shape") or keyword_arg(node, "size"))
            sizes: list[cst.BaseExpression | None] = list(args if several else args[:1])
            rank = _rank_of(sizes or [keyword_arg(node, "shape") or keyword_arg(node, "size")])
            return replace(value, shape=shape, ndim=rank if shape is None else None, dtype=self._dtype_or(node, default), generated=True)
        if name in kb.LIKE_FACTORIES and arrays:
            return replace(value, shape=arrays[0].shape, dtype=self._dtype_or(node, arrays[0].dtype), generated=True)
        if in_random or name in ("rand", "randn"):
            if name in ("rand", "randn") or (value.library == "torch" and name in ("rand", "randn")):
                shape = self.dims_from_args(node)
            elif name in ("random", "random_sample", "ranf", "sample", "standard_normal"):
                shape = self.shape_from(args[0] if args else keyword_arg(node, "size"))
            elif name in ("uniform", "normal", "randint", "integers"):
                shape = self.shape_from(keyword_arg(node, "size") or (args[2] if len(args) > 2 else None))
            else:
                return replace(value, generated=True)
            dtype = self._dtype_or(node, "int64" if name in ("randint", "integers") else default)
            return replace(value, shape=shape, dtype=dtype, generated=True)
        if name == "arange":
            bounds = [self.evaluate(a) for a in args]
            known = [b.number for b in bounds if b is not None and b.kind is Kind.NUMBER and b.number is not None]
            if not bounds or len(known) != len(bounds):
                return replace(value, generated=True)
            numbers = [float(n) for n in known]
            start, stop, step = (0.0, numbers[0], 1.0) if len(numbers) == 1 else (numbers[0], numbers[1], numbers[2] if len(numbers) > 2 else 1.0)
            length = max(0, math.ceil((stop - start) / step)) if step else 0
            integral = all(n.is_integer() for n in numbers)
            return replace(value, shape=(length,), dtype=self._dtype_or(node, "int64" if integral else default), generated=True)
        if name == "linspace":
            given = keyword_arg(node, "num") or keyword_arg(node, "steps") or (args[2] if len(args) > 2 else None)
            count = self.integer(given)
            # Only an absent `num` means NumPy's default of 50; an unknown one is unknown.
            shape = (count,) if count is not None else ((50,) if given is None and value.library != "torch" else None)
            return replace(value, shape=shape, dtype=self._dtype_or(node, default), generated=True)
        if name in ("eye", "identity"):
            rows = self.integer(args[0] if args else None)
            cols = self.integer(args[1] if len(args) > 1 else keyword_arg(node, "M") or keyword_arg(node, "m")) or rows
            shape = (rows, cols) if rows is not None and cols is not None else None
            return replace(value, shape=shape, dtype=self._dtype_or(node, default), generated=True)
        if name in ("asarray", "array", "tensor", "as_tensor", "from_numpy", "ascontiguousarray"):
            if arrays:
                source = arrays[0]
                return replace(value, shape=source.shape, dtype=self._dtype_or(node, source.dtype), generated=source.generated)
            literal = self.literal_shape(args[0]) if args else None
            if literal is not None:
                dtype = self._dtype_or(node, "float32" if value.library == "torch" and literal[1] == "float64" else literal[1])
                return replace(value, shape=literal[0], dtype=dtype, generated=False)
            return replace(value, generated=False)
        if name in kb.DATA_READERS:
            return replace(value, generated=False)
        if name in kb.JOINS and args:
            arrays = self._joined(args[0])
        return self._operation(node, name, args, arrays, value)

    def _joined(self, parts: cst.BaseExpression) -> list[Value]:
        """The arrays a join is handed: the items of `[a, b]`, or the item of a one-clause
        comprehension (`[torch.arange(b) for _ in range(n)]`); none when any part is unknown."""
        if isinstance(parts, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in parts.elements):
            items = [element.value for element in parts.elements]
        elif isinstance(parts, (cst.ListComp, cst.GeneratorExp)) and parts.for_in.inner_for_in is None:
            items = [parts.elt]
        else:
            return []
        values = [self.evaluate(item) for item in items]
        return [v for v in values if v is not None and v.kind is Kind.ARRAY] if all(v is not None and v.kind is Kind.ARRAY for v in values) else []

    def _operation(self, node: cst.Call, name: str, args: list[cst.BaseExpression], arrays: list[Value], value: Value) -> Value:
        generated = bool(arrays) and all(a.generated for a in arrays)
        shapes = [a.shape for a in arrays]
        dtype = None
        for a in arrays:
            dtype = rules.promote(dtype, a.dtype) if dtype else a.dtype
        if name in kb.ELEMENTWISE and arrays and all(s is not None for s in shapes):
            shape = shapes[0]
            for other in shapes[1:]:
                shape = rules.broadcast(shape, other) if shape is not None else None  # type: ignore[arg-type]
            return replace(value, shape=shape, dtype=dtype, generated=generated)
        if name in kb.ELEMENTWISE and arrays:
            return replace(value, dtype=dtype, generated=generated)  # `exp(arange(n))`: sizes unknown, still made from nothing
        if name in kb.MATMUL_FUNCTIONS and len(arrays) == 2 and None not in shapes:
            return replace(value, shape=rules.matmul_shape(shapes[0], shapes[1]), dtype=dtype, generated=generated)  # type: ignore[arg-type]
        if name == "bmm":
            return replace(value, shape=None, ndim=3, dtype=dtype, generated=generated)  # a batch of matrices, whatever the sizes
        if name == "einsum" and len(arrays) == 2 and None not in shapes and args:
            spec = literal_string(args[0]) or ""
            shape = rules.matmul_shape(shapes[0], shapes[1]) if EINSUM_MATMUL.match(spec) else None  # type: ignore[arg-type]
            return replace(value, shape=shape, dtype=dtype, generated=generated)
        if arrays and shapes[0] is not None:
            first = shapes[0]
            if name in kb.REDUCTIONS:
                axis = self.integer(keyword_arg(node, "axis") or keyword_arg(node, "dim") or (args[1] if len(args) > 1 else None))
                shape = rules.reduce(first, axis) if axis is not None or not node_has_axis(node) else None
                return replace(value, shape=shape, dtype=dtype, generated=generated)
            if name in ("sort", "fft", "ifft", "fft2", "ifft2", "inv"):
                return replace(value, shape=first, dtype=None if "fft" in name else dtype, generated=generated)
            if name == "argsort":
                return replace(value, shape=first, dtype="int64", generated=generated)
            if name == "solve" and len(arrays) == 2:
                return replace(value, shape=shapes[1], dtype=dtype, generated=generated)
        return replace(value, shape=None, dtype=None, generated=generated)

    def _array_method(self, node: cst.Call, method: str, receiver: Value, value: Value) -> Value:
        shape, dtype = receiver.shape, receiver.dtype
        args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        base = replace(value, generated=receiver.generated, ndim=None)  # a reduction or reshape changes it
        same = replace(base, ndim=receiver.ndim)
        if method in kb.SAME_SHAPE_METHODS or method == "to":
            new_dtype = self.dtype_of(args[0]) if method == "to" and args else None
            return replace(same, shape=shape, dtype=new_dtype or dtype)
        if method in ("astype", "type"):
            return replace(same, shape=shape, dtype=self.dtype_of(args[0] if args else keyword_arg(node, "dtype")))
        if method in ("float", "double", "half", "bfloat16"):
            return replace(same, shape=shape, dtype=rules.dtype_from_name(method))
        if shape is None:
            if method in kb.ELEMENTWISE:
                return replace(same, shape=None, dtype=dtype)
            if method in ("reshape", "view"):
                return replace(base, shape=None, dtype=dtype, ndim=_reshape_rank(node))  # `x.view(-1, m, n)`: a stack of matrices
            if method in kb.REDUCTIONS and not node.args:
                return replace(base, shape=None, dtype=dtype, ndim=0)  # `loss.mean()`: a scalar whatever the sizes
            return replace(base, shape=None, dtype=None)
        if method in kb.ELEMENTWISE:
            return replace(base, shape=shape, dtype=dtype)
        if method in ("transpose", "t") and not args:
            return replace(base, shape=tuple(reversed(shape)), dtype=dtype)
        if method in ("reshape", "view"):
            target = self.reshape_target(node)
            return replace(base, shape=rules.reshape(shape, target) if target else None, dtype=dtype)
        if method in ("flatten", "ravel"):
            return replace(base, shape=(math.prod(shape),), dtype=dtype)
        if method in kb.REDUCTIONS:
            axis_node = keyword_arg(node, "axis") or keyword_arg(node, "dim") or (args[0] if args else None)
            axis = self.integer(axis_node)
            reduced = rules.reduce(shape, axis) if axis is not None or axis_node is None else None
            return replace(base, shape=reduced, dtype=dtype)
        if method in ("argsort",):
            return replace(base, shape=shape, dtype="int64")
        if method in kb.MATMUL_FUNCTIONS and args:
            other = self.evaluate(args[0])
            if other is not None and other.shape is not None:
                return replace(base, shape=rules.matmul_shape(shape, other.shape), dtype=rules.promote(dtype, other.dtype))
        return replace(base, shape=None, dtype=None)

    def binary(self, node: cst.BinaryOperation, value: Value) -> Value:
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        arrays = [v for v in (left, right) if v is not None and v.kind is Kind.ARRAY]
        generated = all(a.generated for a in arrays)
        others_known = all(v is not None and (v.kind is Kind.ARRAY or v.kind is Kind.NUMBER) for v in (left, right))
        dtype = None
        for a in arrays:
            dtype = rules.promote(dtype, a.dtype) if dtype else a.dtype
        # `valid & (x > 0)`: masks combined are a mask, whatever their sizes.
        masks = isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and bool(arrays) and all(a.dtype == "bool" for a in arrays)
        if not others_known or any(a.shape is None for a in arrays):
            return replace(value, shape=None, dtype="bool" if masks else None, generated=generated)
        if isinstance(node.operator, cst.MatrixMultiply):
            shape = rules.matmul_shape(arrays[0].shape, arrays[1].shape) if len(arrays) == 2 else None  # type: ignore[arg-type]
        elif len(arrays) == 2:
            shape = rules.broadcast(arrays[0].shape, arrays[1].shape)  # type: ignore[arg-type]
        else:
            shape = arrays[0].shape
        return replace(value, shape=shape, dtype="bool" if masks else dtype, generated=generated)

    def subscript(self, base: Value, node: cst.Subscript) -> tuple[int, ...] | None:
        """Basic indexing of a known shape: `:`, constant slices, `None`, `...`, integers.
        Anything else (an index array, a mask, an unknown bound) leaves the shape unknown."""
        if base.shape is None:
            return None
        dims = list(base.shape)
        elements = [element.slice for element in node.slice]
        if sum(isinstance(e, cst.Index) and isinstance(e.value, cst.Ellipsis) for e in elements) > 1:
            return None
        consumed = sum(not (isinstance(e, cst.Index) and isinstance(e.value, (cst.Name, cst.Ellipsis)) and _new_axis_or_rest(e.value)) for e in elements)
        if consumed > len(dims):
            return None
        shape: list[int] = []
        position = 0
        for element in elements:
            if isinstance(element, cst.Slice):
                length = self._slice_length(element, dims[position])
                if length is None:
                    return None
                shape.append(length)
                position += 1
            elif not isinstance(element, cst.Index):
                return None
            elif isinstance(element.value, cst.Ellipsis):
                rest = len(dims) - consumed
                shape.extend(dims[position : position + rest])
                position += rest
            elif isinstance(element.value, cst.Name) and element.value.value == "None":
                shape.append(1)
            elif self.integer(element.value) is not None:
                position += 1  # an integer index drops its axis
            else:
                return None
        return tuple(shape + dims[position:])

    def _slice_length(self, part: cst.Slice, size: int) -> int | None:
        bounds: list[int | None] = []
        for bound in (part.lower, part.upper, part.step):
            if bound is None:
                bounds.append(None)
                continue
            number = self.integer(bound)
            if number is None:
                return None
            bounds.append(number)
        if bounds[2] == 0:
            return None
        return len(range(*slice(*bounds).indices(size)))

    @staticmethod
    def attribute(base: Value, attr: str) -> Value:
        if attr in ("T", "mT") and base.shape is not None:
            shape = tuple(reversed(base.shape)) if attr == "T" else base.shape[:-2] + base.shape[-2:][::-1]
            return replace(base, shape=shape)
        if attr in ("real", "imag"):
            return replace(base, dtype=None)
        return base


def _new_axis_or_rest(node: cst.BaseExpression) -> bool:
    """`None` and `...` in an index take no axis of the array."""
    return isinstance(node, cst.Ellipsis) or (isinstance(node, cst.Name) and node.value == "None")


def node_has_axis(node: cst.Call) -> bool:
    """`np.sum(x, 1)`, `torch.sum(x, dim=d)`: a reduction function given anything beyond its array
    reduces over some axis (`node.args` counts keyword arguments too)."""
    return len(node.args) > 1


def _reshape_rank(node: cst.Call) -> int | None:
    """The rank a reshape gives, from how many sizes it is handed (`view(-1, m, n)`, `reshape((b,
    -1))`), whatever they are; one name may hold a whole shape, a dtype reinterprets, and a
    starred argument hands over sizes we cannot count."""
    if any(arg.star or arg.keyword is not None for arg in node.args):
        return None
    args = [arg.value for arg in node.args]
    if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
        elements = args[0].elements
        return None if any(isinstance(element, cst.StarredElement) for element in elements) else len(elements)
    return len(args) if len(args) >= 2 else None
