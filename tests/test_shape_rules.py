"""The shape arithmetic the facts use, checked directly against NumPy: `@`, broadcasting,
reshapes and reductions, on every small shape."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from gpuadvisor.analysis.facts.shapes import broadcast, matmul_shape, reduce, reshape


@pytest.mark.parametrize(
    "first, second",
    [
        ((4, 3), (3, 5)),  # matrix @ matrix
        ((4, 3), (3,)),  # matrix @ vector: the vector's dimension is dropped
        ((3,), (3, 5)),  # vector @ matrix
        ((3,), (3,)),  # vector @ vector: a scalar
        ((2, 1, 4, 3), (7, 3, 5)),  # batched, broadcast batch dimensions
        ((2, 4, 3), (3,)),  # a batch of matrices @ one vector
    ],
)
def test_matmul_shape_matches_numpy(first: tuple[int, ...], second: tuple[int, ...]) -> None:
    expected = (np.ones(first) @ np.ones(second)).shape
    assert matmul_shape(first, second) == expected


@pytest.mark.parametrize("first, second", [((4, 3), (4, 5)), ((2, 4, 3), (5, 3, 2)), ((3,), (4,))])
def test_matmul_shape_is_unknown_where_numpy_refuses(first: tuple[int, ...], second: tuple[int, ...]) -> None:
    with pytest.raises(ValueError):
        np.ones(first) @ np.ones(second)
    assert matmul_shape(first, second) is None


# -- every small shape, against NumPy -------------------------------------------------------
# Ranks 0 to 3 with sizes 0 to 2 (0 and 1 are the sizes with rules of their own): a few thousand
# cases, a fraction of a second, and no place in the shape rules left to a handful of examples.
SMALL_SHAPES = [shape for rank in range(4) for shape in itertools.product(range(3), repeat=rank)]


def _numpy_shape(operation: Callable[[], np.ndarray]) -> tuple[int, ...] | None:
    try:
        return operation().shape
    except (ValueError, np.exceptions.AxisError):
        return None


def test_broadcast_agrees_with_numpy_on_every_small_pair_of_shapes() -> None:
    for first, second in itertools.product(SMALL_SHAPES, repeat=2):
        expected = _numpy_shape(lambda: np.empty(first) + np.empty(second))
        assert broadcast(first, second) == expected, (first, second)


def test_matmul_shape_agrees_with_numpy_on_every_small_pair_of_shapes() -> None:
    for first, second in itertools.product(SMALL_SHAPES, repeat=2):
        expected = _numpy_shape(lambda: np.empty(first) @ np.empty(second))
        assert matmul_shape(first, second) == expected, (first, second)


@pytest.mark.parametrize("target", [(-1,), (2, -1), (-1, 2), (1, -1, 1), (4,), (2, 2), (3, 2), (-1, -1), (0, -1)])
def test_reshape_agrees_with_numpy(target: tuple[int, ...]) -> None:
    for shape in SMALL_SHAPES + [(2, 3, 4), (4, 6)]:
        expected = _numpy_shape(lambda: np.empty(shape).reshape(target))
        assert reshape(shape, target) == expected, (shape, target)


def test_reduce_agrees_with_numpy_for_every_axis_in_range_and_out_of_it() -> None:
    for shape in SMALL_SHAPES[1:]:  # not the 0-d array, whose axis 0 and -1 NumPy takes as no axis
        for axis in [None, *range(-len(shape) - 1, len(shape) + 1)]:
            expected = _numpy_shape(lambda: np.empty(shape).sum(axis=axis))
            assert reduce(shape, axis) == expected, (shape, axis)
