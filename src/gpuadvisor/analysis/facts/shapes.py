"""Shape and dtype rules of NumPy-like libraries, for statically known sizes."""

from __future__ import annotations

import math

#: Default element type of each library's float factories.
DEFAULT_FLOAT = {"numpy": "float64", "cupy": "float64", "torch": "float32"}
DTYPE_NAMES = {
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32", "float": "float32",
    "single": "float32", "float64": "float64", "double": "float64", "int64": "int64", "int32": "int32",
    "long": "int64", "int": "int64", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool", "bool_": "bool",
}
#: Largest element count we believe is a real array (bigger is a misread constant).
MAX_ELEMENTS = 1 << 40


def dtype_from_name(name: str) -> str | None:
    """"np.float32", "torch.float64", "float32" -> canonical dtype name."""
    return DTYPE_NAMES.get(name.rsplit(".", 1)[-1])


def valid_shape(shape: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if shape is None or any(d < 0 for d in shape) or math.prod(shape) > MAX_ELEMENTS:
        return None
    return shape


def broadcast(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...] | None:
    result = []
    for a, b in zip(reversed((1,) * (len(second) - len(first)) + first), reversed((1,) * (len(first) - len(second)) + second)):
        if a != b and 1 not in (a, b):
            return None
        result.append(b if a == 1 else a)  # a size of 1 takes the other's, even 0 (not max)
    return tuple(reversed(result))


def matmul_shape(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...] | None:
    if len(first) < 1 or len(second) < 1:
        return None
    a = first if len(first) > 1 else (1,) + first
    b = second if len(second) > 1 else second + (1,)
    if a[-1] != b[-2]:
        return None
    batch = broadcast(a[:-2], b[:-2])
    if batch is None:
        return None
    shape = batch + (a[-2], b[-1])
    if len(first) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(second) == 1:
        shape = shape[:-1]
    return shape


def reshape(shape: tuple[int, ...], target: tuple[int, ...]) -> tuple[int, ...] | None:
    total = math.prod(shape)
    if target.count(-1) > 1:
        return None
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        if known == 0 or total % known:
            return None
        target = tuple(total // known if d == -1 else d for d in target)
    return target if math.prod(target) == total else None


def reduce(shape: tuple[int, ...], axis: int | None) -> tuple[int, ...] | None:
    if axis is None:
        return ()
    if not -len(shape) <= axis < len(shape):
        return None
    axis %= len(shape)
    return shape[:axis] + shape[axis + 1 :]


def promote(first: str | None, second: str | None) -> str | None:
    """Result dtype of a binary operation between arrays (the wider float wins)."""
    if first is not None and first == second:
        return first  # `mask & keep`: two boolean masks make one
    order = ("int32", "int64", "float16", "bfloat16", "float32", "float64")
    known = [d for d in (first, second) if d in order]
    if not known:
        return None
    return max(known, key=order.index)
