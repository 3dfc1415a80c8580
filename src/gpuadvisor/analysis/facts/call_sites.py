"""Which branch of a function its callers take: `if reduction == "mean":` on a parameter whose
default is "mean" and which no call of the project overrides runs whenever the function runs;
`if norm_type == inf:` on a parameter that defaults to 2.0 and that no caller sets never does.
A function nobody in the project calls runs its defaults' branches as far as we know, but
nothing says a branch is never taken: its callers are elsewhere.

Read by the rules that weigh code under a test of a parameter. Unknown (None) as soon as one
value is not a constant we can read, a call from another file passes the parameter, or the
function rebinds it to something else.
"""

from __future__ import annotations

import math

import libcst as cst

from gpuadvisor.analysis.facts.imports import dotted_name, is_none
from gpuadvisor.analysis.facts.module_facts import CallFact, EventKind, FunctionFacts, ModuleFacts
from gpuadvisor.analysis.facts.traverse import own_nodes

#: Names of infinity (`from math import inf`, `torch.inf`, `np.inf`), by their last part.
_INFINITY_NAMES = frozenset({"inf", "Inf", "infty"})
#: `norm_type = float(norm_type)`: the same value, converted.
_KEEPING_CONVERSIONS = frozenset({"float", "int", "str"})


def takes_branch(test: cst.BaseExpression, function: FunctionFacts, facts: ModuleFacts) -> bool | None:
    """True when every run of `function` takes the branch `test` guards, False when none does,
    None when that depends on what we cannot see. Only `name == constant` / `!=` tests of a
    parameter with a constant default, `name is None` / `is not None` of a parameter whose default
    is None or a literal, and their negation (the guard of an `else` branch)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        taken_if_true = takes_branch(test.expression, function, facts)  # also the `else` of an `if`
        return None if taken_if_true is None else not taken_if_true
    node = function.node
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(node, cst.FunctionDef)):
        return None
    (comparison,) = test.comparisons
    if not isinstance(comparison.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)) or not isinstance(test.left, cst.Name):
        return None
    identity = isinstance(comparison.operator, (cst.Is, cst.IsNot))
    if identity and not is_none(comparison.comparator):
        return None
    read = _noneness if identity else _constant  # `top_k is not None`: only whether it was given
    name, wanted = test.left.value, read(comparison.comparator)
    default = _default_of(node, name)
    if wanted is None or default is None or _rebound(node, name):
        return None
    values = [read(default)]
    passed = passed_arguments(function, name, facts)
    if passed is None:
        return None
    values += [read(expr) for expr in passed]
    if any(value is None for value in values):
        return None
    equal = [value == wanted for value in values]
    if not (all(equal) or not any(equal)):
        return None
    taken = equal[0] == isinstance(comparison.operator, (cst.Equal, cst.Is))
    if not taken and not (function.called_in_file or function.called_from_project):
        return None  # no caller seen: an entry point or a library's API, called as its users like
    return taken


def _noneness(expr: cst.BaseExpression) -> str | None:
    """For `is None` tests: "none" for `None`, "given" for a literal, None when unknown."""
    if is_none(expr):
        return "none"
    return "given" if _constant(expr) is not None or isinstance(expr, (cst.List, cst.Tuple, cst.Dict)) else None


def _constant(expr: cst.BaseExpression) -> object | None:
    """The value of a literal string or number, or infinity by name (`inf`, `math.inf`)."""
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _constant(expr.expression)
        return -inner if isinstance(inner, float) else None
    dotted = dotted_name(expr)
    if dotted is not None and dotted.rsplit(".", 1)[-1] in _INFINITY_NAMES:
        return math.inf
    return None


def parameters_of(node: cst.FunctionDef) -> list[cst.Param]:
    return [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]


def _default_of(node: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    return next((param.default for param in parameters_of(node) if param.name.value == name), None)


def _rebound(node: cst.FunctionDef, name: str) -> bool:
    """The function assigns the parameter anything but a conversion of itself."""
    for inner in own_nodes(node.body):
        if isinstance(inner, cst.AugAssign) and dotted_name(inner.target) == name:
            return True
        if not isinstance(inner, cst.Assign) or not any(dotted_name(target.target) == name for target in inner.targets):
            continue
        value = inner.value
        kept = (
            isinstance(value, cst.Call)
            and dotted_name(value.func) in _KEEPING_CONVERSIONS
            and len(value.args) == 1
            and dotted_name(value.args[0].value) == name
        )
        if not kept:
            return True
    return False


def calls_of(function: FunctionFacts, facts: ModuleFacts) -> list[tuple[FunctionFacts, int]]:
    """Where this file calls `function`: each calling scope with the index of the call among its
    events (what ran before a call is `scope.events[:index]`)."""
    return [
        (scope, index)
        for scope in facts.scopes
        for index, event in enumerate(scope.events)
        if event.kind is EventKind.LOCAL_CALL and function in facts.functions_called(event)
    ]


def passed_arguments(function: FunctionFacts, name: str, facts: ModuleFacts) -> list[cst.BaseExpression] | None:
    """What the calls of this file pass for `name` (calls that leave it to its default add
    nothing); None when a call from another file passes it, whose value we do not have."""
    sites = arguments_at_sites(function, name, facts)
    return None if sites is None else [value for value, _ in sites]


def arguments_at_sites(function: FunctionFacts, name: str, facts: ModuleFacts) -> list[tuple[cst.BaseExpression, CallFact]] | None:
    """`passed_arguments`, each with the call that passes it."""
    node = function.node
    assert isinstance(node, cst.FunctionDef)
    positional = [*node.params.posonly_params, *node.params.params]
    index = next((i for i, param in enumerate(positional) if param.name.value == name), None)
    if index is not None and positional and positional[0].name.value in ("self", "cls"):
        index = index - 1 if index > 0 else None  # `self` itself is no argument of the call
    for call in facts.external_calls:
        if call.key == function.name and (call.has_star or name in dict(call.keywords) or (index is not None and index < len(call.positional))):
            return None
    passed: list[tuple[cst.BaseExpression, CallFact]] = []
    for scope in facts.scopes:
        for event in scope.events:
            site = facts.call_of.get(event.node) if function in facts.functions_called(event) and isinstance(event.node, cst.Call) else None
            if site is None:
                continue
            if any(arg.star for arg in site.node.args):
                return None
            value = site.passed(name, index)
            if value is not None:
                passed.append((value, site))
    return passed
