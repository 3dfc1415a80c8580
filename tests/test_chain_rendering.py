"""GPU701 shows an elementwise chain as the expression it predicts: `x0`, `x1` for the arrays in
the order they appear, each operator's result in parentheses (none around the whole expression
or a call's argument), every function and method as a function call with the array first,
constants as written. The text is read back by the cost model (it counts the kernels and the
transcendental calls), and by the user, who must recognise their line in it.

Generated chains are written as a user would (minimal parentheses, methods and functions) and
checked as one file. Two oracles: each finding's expression, evaluated with NumPy on the same
arrays, must give what the source line gives; and its text must be the format above, written
from the generated tree.
"""

from __future__ import annotations

import ast
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor import check_source

#: Elementwise functions of the knowledge table that NumPy has, with their arity.
UNARY = ("sin", "cos", "tanh", "abs", "sqrt", "square", "negative", "sign", "floor", "ceil", "log1p", "arctan")
BINARY = ("add", "subtract", "multiply", "maximum", "minimum")
OPERATORS = (ast.Add(), ast.Sub(), ast.Mult(), ast.Div())
#: Constants the message prints exactly (six significant digits).
CONSTANTS = (0.5, 1.25, 2.0, 3, 0.125)


def _call(name: str, *args: ast.expr) -> ast.expr:
    return ast.Call(ast.Attribute(ast.Name("np"), name), list(args), [])


def _method(receiver: ast.expr, name: str, *args: ast.expr) -> ast.expr:
    return ast.Call(ast.Attribute(receiver, name), list(args), [])


def _number(value: float) -> ast.expr:
    return ast.Constant(value)


leaves = st.sampled_from(["a", "b"]).map(lambda name: ast.Name(name))
numbers = st.sampled_from(CONSTANTS).map(_number)


def _extend(children: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    operand = st.one_of(children, numbers)
    return st.one_of(
        st.builds(lambda op, left, right: ast.BinOp(left, op, right), st.sampled_from(OPERATORS), children, operand),
        st.builds(lambda op, left, right: ast.BinOp(left, op, right), st.sampled_from(OPERATORS), numbers, children),
        st.builds(lambda inner: ast.BinOp(inner, ast.Pow(), ast.Constant(2)), children),
        st.builds(lambda inner: ast.UnaryOp(ast.USub(), inner), children),
        st.builds(lambda name, inner: _call(name, inner), st.sampled_from(UNARY), children),
        st.builds(lambda name, left, right: _call(name, left, right), st.sampled_from(BINARY), children, operand),
        st.builds(lambda inner: _call("clip", inner, _number(0.125), _number(0.5)), children),
        st.builds(lambda inner: _method(inner, "clip", _number(0.125), _number(0.5)), children),
        st.builds(lambda inner: _method(inner, "round", ast.Constant(2)), children),
    )


#: Chains with at least one operation on an array (a bare name is no chain).
chains = st.recursive(leaves, _extend, max_leaves=6).filter(lambda tree: not isinstance(tree, ast.Name))


def _shown(tree: ast.expr, names: dict[str, str]) -> str:
    """The text GPU701 prints for a generated chain: the format of the module docstring."""

    def bare(text: str) -> str:
        return text[1:-1] if text.startswith("(") else text

    def text(node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Constant):
            return repr(node.value)
        if isinstance(node, ast.BinOp):
            symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}[type(node.op)]
            return f"({text(node.left)} {symbol} {text(node.right)})"
        if isinstance(node, ast.UnaryOp):
            return f"(-{text(node.operand)})"
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        receiver = [] if isinstance(node.func.value, ast.Name) and node.func.value.id == "np" else [node.func.value]
        return f"{node.func.attr}({', '.join(bare(text(arg)) for arg in [*receiver, *node.args])})"

    return bare(text(tree))


def _numpy_value(text: str, arrays: dict[str, np.ndarray]) -> np.ndarray:
    names = {name: getattr(np, name) for name in (*UNARY, *BINARY, "clip", "round")}
    with np.errstate(all="ignore"):
        return np.asarray(eval(text, {"np": np, **names}, arrays))  # noqa: S307 - generated, trusted text


@settings(max_examples=4, deadline=None, derandomize=True)
@given(st.lists(chains, min_size=12, max_size=12))
def test_the_expression_shown_computes_what_the_line_computes(trees: list[ast.expr]) -> None:
    lines = [ast.unparse(tree) for tree in trees]
    source = "import numpy as np\nN = 4096\na = np.random.rand(N, N)\nb = np.random.rand(N, N)\nfor step in range(100):\n"
    source += "".join(f"    c{index} = {line}\n" for index, line in enumerate(lines))
    found = {f.line: f.message for f in check_source(source, select="GPU701", cpu="laptop", threshold=0.0)}
    assert sorted(found) == [6 + index for index in range(len(lines))], source
    rng = np.random.default_rng(0)
    arrays = {"a": rng.uniform(-2.0, 2.0, (3, 4)), "b": rng.uniform(-2.0, 2.0, (3, 4))}
    for index, (tree, line) in enumerate(zip(trees, lines)):
        shown = re.search(r"elementwise `(.*)`: ", found[6 + index])
        assert shown is not None, found[6 + index]
        order = list(dict.fromkeys(re.findall(r"\b[ab]\b", line)))  # x0, x1: first appearance
        assert shown.group(1) == _shown(tree, {name: f"x{number}" for number, name in enumerate(order)}), line
        renamed = {f"x{number}": arrays[name] for number, name in enumerate(order)}
        expected, got = _numpy_value(line, arrays), _numpy_value(shown.group(1), renamed)
        assert np.allclose(got, expected, rtol=1e-4, equal_nan=True), (line, shown.group(1))
