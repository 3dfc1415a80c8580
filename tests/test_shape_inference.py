"""Shapes and dtypes the analysis infers for NumPy code, checked by running that code with NumPy.

Rules that predict speedups (GPU701, GPU702, the `--shapes` costs) read the shape and dtype the
facts give an expression; a wrong one is a wrong prediction shown to the user. Each expression
below is evaluated twice: by NumPy on real arrays, and by the analysis on its source. They must
agree exactly, or (the second table) the analysis must say it does not know: an unknown shape
keeps rules silent, a wrong one misleads.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import pytest

from gpuadvisor.analysis.facts.walker import gather_facts

SETUP = """\
import numpy as np
N = 3
a = np.ones((2, N, 4))
m = np.zeros((N, 4), dtype=np.float32)
v = np.arange(4)
s = np.random.rand(5)
rng = np.random.default_rng(0)
"""

KNOWN = [
    # sizes folded from constants
    "np.ones(1 << 3)", "np.ones(2 ** 3)", "np.ones(N * 2 - 1)", "np.ones(10 // 3)", "np.ones((N + 1) % 3)",
    "np.ones(N - 5 + 4)", "np.empty(N)", "np.full((2, 3), 7.0)",
    # factories
    "np.arange(10)", "np.arange(2, 10)", "np.arange(2, 10, 3)", "np.arange(0.5, 3.0, 0.5)", "np.arange(10, 2)",
    "np.linspace(0, 1)", "np.linspace(0, 1, 7)", "np.eye(N)", "np.eye(N, 5)", "np.eye(N, M=5)", "np.identity(4)",
    "np.array([[1, 2], [3, 4]])", "np.array([1.0, -2.0])", "np.asarray(m)", "np.zeros_like(m)",
    "np.ones_like(a, dtype=np.float32)",
    # random draws, legacy and Generator
    "np.random.rand(N, 2)", "np.random.randn(4)", "np.random.random((2, 2))", "np.random.uniform(0, 1, (3, 2))",
    "np.random.normal(0, 1, size=5)", "np.random.randint(0, 9, (2, 3))", "rng.random((2, 3))", "rng.normal(0, 1, 4)",
    "rng.integers(0, 5, size=(3,))", "rng.standard_normal(6)", "np.zeros(shape=(2, 3))", "rng.random(size=(2, 3))",
    # views and reshapes
    "a.T", "a.mT", "a.transpose()", "m.T", "a.reshape(-1, 4)", "a.reshape((4, -1))", "a.reshape(24)", "a.ravel()", "a.flatten()",
    "a.astype(np.float32)", "m.astype('float64')", "np.zeros((N, N), dtype=np.float32).astype(np.float64)",
    # reductions
    "a.sum()", "a.sum(axis=1)", "a.sum(1)", "a.mean(axis=-1)", "a.max(axis=2)", "np.sum(a, axis=0)", "np.sum(a, 2)", "np.max(a)",
    # indexing
    "a[0]", "a[:, 1]", "a[..., 1:3]", "a[None]", "a[:, None, ::2]", "a[1:, :-1, ::-1]", "a[-1, ..., None]", "a[::-2]",
    # element-wise, broadcast
    "a + m", "a * v", "m - 1", "m * 2.0", "v + 1", "2 * a", "-a", "np.add(a, m)", "np.maximum(a, v)", "np.exp(a)",
    # bitwise operators on integers stay integers (masks: see the test below)
    "np.arange(10) & 3", "np.arange(10) ^ np.arange(10)",
    # products and linear algebra
    "a @ m.T", "np.matmul(a, v)", "np.einsum('bij,bjk->bik', a, np.ones((2, 4, 5)))", "np.linalg.inv(np.eye(N))",
    "np.linalg.solve(np.eye(N), np.ones(N))", "np.sort(s)", "np.argsort(s)",
]

#: The analysis does not follow these (yet): it must say so rather than guess.
UNKNOWN_SHAPE = [
    "np.mean(a, axis=(0, 1))", "np.cumsum(a, axis=1)", "np.where(a > 0, a, 0)", "np.concatenate([a, a])",
    "np.stack([m, m])", "a[np.array([1, 0])]", "a[a > 0]",
]
#: NumPy refuses these: the analysis must give them no shape either.
REFUSED = ["a.reshape(5, -1)", "a @ a", "a + np.ones(5)", "m @ np.ones(3)", "a[0, 0, 0, 0]", "a.sum(axis=3)"]


def _run(expression: str) -> Any:
    names: dict[str, Any] = {}
    exec(SETUP, names)
    return eval(expression, names)


def _inferred(expression: str) -> tuple[tuple[int, ...] | None, str | None]:
    module = cst.parse_module(SETUP + f"probe = {expression}\n")
    statement = module.body[-1]
    assert isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign)
    value = gather_facts(module).value(statement.body[0].value)
    assert value is not None and value.is_array, f"{expression}: not seen as an array"
    return value.shape, value.dtype


@pytest.mark.parametrize("expression", KNOWN)
def test_the_inferred_shape_and_dtype_are_numpys(expression: str) -> None:
    result = _run(expression)
    assert _inferred(expression) == (result.shape, str(result.dtype))


@pytest.mark.parametrize("expression", UNKNOWN_SHAPE)
def test_what_the_analysis_does_not_follow_has_no_shape(expression: str) -> None:
    assert _run(expression).shape  # valid NumPy
    assert _inferred(expression)[0] is None


@pytest.mark.parametrize("expression", ["(a > 0) & (m > 0)", "(v > 0) | (v < -1)"])
def test_masks_combined_are_a_mask_whatever_their_shape(expression: str) -> None:
    """A comparison's shape is not followed, but `&`/`|` of masks is a boolean mask, as NumPy says."""
    assert str(_run(expression).dtype) == "bool"
    assert _inferred(expression) == (None, "bool")


@pytest.mark.parametrize("expression", REFUSED)
def test_what_numpy_refuses_has_no_shape(expression: str) -> None:
    with pytest.raises((ValueError, IndexError)):
        _run(expression)
    assert _inferred(expression)[0] is None
