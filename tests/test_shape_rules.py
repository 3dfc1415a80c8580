"""The shape arithmetic the facts use, checked directly against NumPy's rules for `@`."""

from __future__ import annotations

import numpy as np
import pytest

from gpuadvisor.analysis.facts.shapes import matmul_shape


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
