"""Which attribute settings the code leaves on or off (`facts.settings`), read directly."""

from __future__ import annotations

import textwrap
from collections import Counter

import libcst as cst
import pytest

from gpuadvisor.analysis.facts.settings import attribute_defaults, bindings_in, literal_truth, switched_off_parameter, values_bound_to


def defaults(code: str) -> dict[str, bool | None]:
    return attribute_defaults(cst.parse_module(textwrap.dedent(code)))


@pytest.mark.parametrize(
    ("literal", "truth"),
    [("False", False), ("None", False), ("0", False), ("0.0", False), ('""', False), ("True", True), ("3", True), ('"x"', True), ("flag", None)],
)
def test_a_literal_has_the_truth_python_gives_it(literal: str, truth: bool | None) -> None:
    assert literal_truth(cst.parse_expression(literal)) is truth


def test_a_literal_store_and_a_parameter_default_set_a_setting() -> None:
    found = defaults(
        """
        class Flow:
            def __init__(self, model, ln=True, debug: bool = False):
                self.ln = ln
                self.stratified = False
                self.debug: bool = debug
        """
    )
    assert found == {"ln": True, "stratified": False, "debug": False}


@pytest.mark.parametrize(
    "change",
    [
        "flow.stratified = True",  # set on an object elsewhere in the file
        "self.stratified = not self.stratified",  # computed
        "self.stratified |= other",  # augmented
        'setattr(flow, "stratified", True)',
        "setattr(flow, name, value)",  # any attribute, any value
    ],
)
def test_any_other_store_leaves_the_setting_unknown(change: str) -> None:
    found = defaults(
        f"""
        class Flow:
            def __init__(self):
                self.stratified = False

            def toggle(self, flow, other, name, value):
                {change}
        """
    )
    assert found.get("stratified") is None


def test_stores_that_disagree_leave_the_setting_unknown() -> None:
    assert defaults("class A:\n    def a(self):\n        self.x = False\n    def b(self):\n        self.x = True\n").get("x") is None


def test_a_parameter_rebound_before_the_store_is_not_its_default() -> None:
    found = defaults(
        """
        class Flow:
            def __init__(self, cfg, ln=False):
                ln = ln or cfg.ln
                self.ln = ln
        """
    )
    assert found.get("ln") is None


def test_submodules_swapped_by_name_set_no_setting() -> None:
    found = defaults(
        """
        class Quantizer:
            def configure(self, mse=False):
                self.mse = mse

        def make_quant(module, names):
            for attr in dir(module):
                if attr in names:
                    setattr(module, attr, QuantLinear(getattr(module, attr)))
        """
    )
    assert found == {"mse": False}


@pytest.mark.parametrize(
    ("signature", "body", "off"),
    [
        ("return_list=False", "pass", True),
        ("return_list=None", "pass", False),  # "not given", not "off"
        ("return_list=False", "return_list = return_list or cfg.keep", False),  # rebound: the default is not what runs
        ("return_list=True", "pass", False),
    ],
)
def test_a_parameter_is_a_switch_when_written_false_and_never_rebound(signature: str, body: str, off: bool) -> None:
    function = cst.parse_module(f"def sample(x, cfg, {signature}):\n    {body}\n").body[0]
    assert isinstance(function, cst.FunctionDef)
    assert switched_off_parameter(function, "return_list") is off


def test_a_tuple_assignment_stores_each_value_in_its_own_attribute() -> None:
    """`self.gr, self.autobalance = model.gr, autobalance`: the switch is the parameter's default;
    its neighbour, a computed value, is unknown, as is every name where a starred or
    mismatched side pairs nothing."""
    found = defaults(
        """
        class Loss:
            def __init__(self, model, autobalance=False, sort=True):
                self.gr, self.autobalance = model.gr, autobalance
                (self.a, self.b), self.sort = (0, 1), sort
                self.x, self.y = pair
                self.p, *self.q = 1, 2, 3
        """
    )
    assert found == {"autobalance": False, "a": False, "b": True, "sort": True}  # the unknown are left out


def test_setattr_in_a_loop_over_spelled_out_names_leaves_only_those_unknown() -> None:
    """`for k in "na", "nc": setattr(self, k, ...)` may set `na` and `nc`, nothing else; a loop
    over names computed at run time may set anything."""
    spelled = defaults(
        """
        class Loss:
            def __init__(self, det, autobalance=False):
                self.autobalance, self.na = autobalance, False
                for k in "na", "nc":
                    setattr(self, k, getattr(det, k))
        """
    )
    assert spelled == {"autobalance": False}
    computed = defaults(
        """
        class Loss:
            def __init__(self, det, names, autobalance=False):
                self.autobalance = autobalance
                for k in names:
                    setattr(self, k, getattr(det, k))
        """
    )
    assert computed == {}


def test_the_bindings_of_a_scope_found_at_once_are_those_found_name_by_name() -> None:
    """`bindings_in` (one pass, used for every `if name:` of a walk) agrees with
    `values_bound_to` for every name a module binds; parameters bind too."""
    module = cst.parse_module(
        "retrain = False\nx, (y, z) = 1, (2, 3)\nn += 1\nm: int = 4\nfor i in range(3):\n    pass\n"
        "with open('f') as fh:\n    pass\nif (w := 5):\n    pass\ndef f(a, b=2):\n    retrain = True\n    return [k for k in a]\n"
    )
    found = bindings_in(module)

    def written(values: list[cst.BaseExpression | None]) -> Counter[str | None]:
        return Counter(module.code_for_node(value) if value is not None else None for value in values)

    for name in ("retrain", "x", "y", "z", "n", "m", "i", "fh", "w"):
        assert written(found[name]) == written(values_bound_to(name, module)), name
    assert written(found["retrain"]) == Counter({"False": 1, "True": 1})
    assert found["a"] == (None,) and found["b"] == (None,)
    assert "k" not in found  # a comprehension's own variable binds nothing outside it
