"""Settings that are off unless a caller turns them on: which `if` branches are opt-in paths.

`def sample(x, return_list=False): ... if return_list:` and `self.stratified = False` in
`__init__`, then `if self.stratified:` in `forward`: the branch runs only where a caller asks for
it, so a per-step cost inside it is not a cost of the runs the code is written for (gptq's MSE
grid search behind `if self.mse:`, which every `configure(...)` leaves False by default). The
default is read from what the code writes: a literal, or a parameter's literal default; any other
store of the attribute in the file (a computed value, another object's `x.flag = ...`,
`setattr`) leaves the setting unknown.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import cast

import libcst as cst

from gpuadvisor.analysis.facts.imports import literal_string
from gpuadvisor.analysis.facts.traverse import child_nodes

#: A setting's value as the code writes it: its truth, or None when not written as a constant.
Truth = bool | None


def literal_truth(node: cst.BaseExpression | None) -> Truth:
    """`False`, `None`, `0`, `""` are false; `True`, `3`, `"x"` true; anything else unknown."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return node.value == "True"
    if isinstance(node, (cst.Integer, cst.Float)):
        return bool(node.evaluated_value)
    text = literal_string(node) if node is not None else None
    return bool(text) if text is not None else None


def parameter_default_truth(function: cst.FunctionDef, name: str) -> Truth:
    """The truth of a parameter's literal default, when the function never rebinds the name."""
    return literal_truth(_kept_default(function, name))


def switched_off_parameter(function: cst.FunctionDef, name: str) -> bool:
    """A parameter written `flag=False` and never rebound: a switch the caller has to throw
    (`None` says "not given" more often than "off", so only `False` counts here)."""
    default = _kept_default(function, name)
    return isinstance(default, cst.Name) and default.value == "False"


def _kept_default(function: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    """The default of the parameter `name`, when the function never rebinds it (so the default
    is what runs when no caller passes it)."""
    params = (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
    found = next((param for param in params if param.name.value == name), None)
    if found is None or found.default is None or _rebinds(function.body, name):
        return None
    return found.default


def _rebinds(body: cst.CSTNode, name: str) -> bool:
    return bool(values_bound_to(name, body))


#: What each binding of a name stores: the value of `name = value`, None for any other binding.
Bound = tuple[cst.BaseExpression | None, ...]


def values_bound_to(name: str, scope: cst.CSTNode) -> Bound:
    """What each binding of `name` in `scope` stores: the value of a plain `name = value`, None
    for any other binding (a loop target, an item of a tuple, an augmented or annotated store,
    `as name`, `name := ...`). A comprehension's own variable binds nothing outside it."""
    return _bindings(scope, parameters=False).get(name, ())


def bindings_in(scope: cst.CSTNode) -> Mapping[str, Bound]:
    """`values_bound_to` for every name of `scope` at once: name -> what each binding stores; a
    function's parameters (unknown values) among them."""
    return _bindings(scope, parameters=True)


#: Nodes that bind their `target` to something other than a plain value.
_TargetBinder = cst.AugAssign | cst.AnnAssign | cst.For | cst.NamedExpr
_UNKNOWN_TARGET_BINDERS = frozenset({cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr})


@functools.lru_cache(maxsize=256)
def _bindings(scope: cst.CSTNode, parameters: bool) -> Mapping[str, Bound]:
    """Found once per scope: several `if` tests and rules ask about one function in turn, and LibCST
    nodes hash by identity, so a cached answer is never given for another tree. Node types are
    compared with `type(...) is`, not `isinstance`: these classes have no subclasses, and the ABC
    check costs more than the rest of the walk."""
    found: dict[str, list[cst.BaseExpression | None]] = {}
    stack: list[cst.CSTNode] = [scope]
    while stack:
        node = stack.pop()
        if type(node) is cst.Assign:
            for target in node.targets:
                if type(target.target) is cst.Name:
                    found.setdefault(target.target.value, []).append(node.value)
                else:
                    _bind_unknown(found, target.target)
        elif type(node) in _UNKNOWN_TARGET_BINDERS:
            _bind_unknown(found, cast(_TargetBinder, node).target)
        elif type(node) is cst.AsName:
            _bind_unknown(found, node.name)
        elif parameters and type(node) is cst.Param:
            found.setdefault(node.name.value, []).append(None)
        stack.extend(child_nodes(node))
    return {name: tuple(values) for name, values in found.items()}


def _bind_unknown(found: dict[str, list[cst.BaseExpression | None]], target: cst.CSTNode) -> None:
    for part in _target_names(target):
        if isinstance(part, cst.Name):
            found.setdefault(part.value, []).append(None)


def _target_names(target: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [part for element in target.elements for part in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return [target]


@functools.lru_cache(maxsize=16)
def attribute_defaults(module: cst.Module) -> Mapping[str, Truth]:
    """Per attribute name stored on `self` in this file, the truth every store agrees on: each
    `self.x = v` inside a method, `v` a literal or a parameter of that method with a literal
    default. None for an attribute any store leaves unknown (a computed value, a store on
    another object, an augmented store); names passed to `setattr` as text count as stores.
    Found once per file (cached as `_bindings` is, and compared by `type(...) is` for the same
    reason)."""
    found: dict[str, Truth] = {}
    unknown: set[str] = set()
    named_by_loop: dict[str, list[str]] = {}  # `for k in "na", "nc": setattr(self, k, ...)`
    stack: list[tuple[cst.CSTNode, cst.FunctionDef | None]] = [(module, None)]
    while stack:
        node, function = stack.pop()
        if type(node) is cst.FunctionDef:
            function = node
        elif type(node) is cst.For and type(node.target) is cst.Name:
            names = _literal_strings(node.iter)
            if names is not None:
                named_by_loop[node.target.value] = names
        elif type(node) is cst.Assign:
            for target in node.targets:
                stored = _paired_values(target.target, node.value) if len(node.targets) == 1 else {}
                for part in _target_names(target.target):
                    _note_store(part, stored.get(id(part)), function, found, unknown)
        elif type(node) is cst.AnnAssign:
            _note_store(node.target, node.value, function, found, unknown)  # `self.debug: bool = False`
        elif type(node) is cst.AugAssign:
            _note_store(node.target, None, function, found, unknown)
        elif type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "setattr":
            name = node.args[1].value if len(node.args) > 1 else None
            text = literal_string(name) if name is not None else None
            if text is not None:
                unknown.add(text)
            elif isinstance(name, cst.Name) and name.value in named_by_loop:
                unknown.update(named_by_loop[name.value])  # the names the loop spells out
            elif not (len(node.args) > 2 and _constructs_object(node.args[2].value)):
                return {}  # `setattr(self, key, value)`: any attribute may be set to anything
        stack.extend((child, function) for child in child_nodes(node))
    return {name: truth for name, truth in found.items() if name not in unknown}


def _literal_strings(node: cst.BaseExpression) -> list[str] | None:
    """`"na", "nc"` or `["na", "nc"]`: the strings, when every item is one."""
    if not isinstance(node, (cst.Tuple, cst.List)):
        return None
    names = [literal_string(element.value) for element in node.elements]
    return None if any(name is None for name in names) else [name for name in names if name is not None]


def _paired_values(target: cst.BaseExpression, value: cst.BaseExpression) -> dict[int, cst.BaseExpression]:
    """Which value each stored name receives: the whole value for a single target, item by item
    for `self.a, self.b = a, b` (a starred side pairs nothing)."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return {id(target): value}
    if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != len(target.elements):
        return {}
    if any(isinstance(element, cst.StarredElement) for element in (*target.elements, *value.elements)):
        return {}
    paired: dict[int, cst.BaseExpression] = {}
    for stored, given in zip(target.elements, value.elements):
        paired.update(_paired_values(stored.value, given.value))
    return paired


def _constructs_object(value: cst.BaseExpression) -> bool:
    """`QuantLinear(...)`: an object built by a class, as when a loop swaps submodules by name;
    no setting is set that way."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name[:1].isupper()


def _note_store(
    target: cst.CSTNode, value: cst.BaseExpression | None, function: cst.FunctionDef | None, found: dict[str, Truth], unknown: set[str]
) -> None:
    if not isinstance(target, cst.Attribute):
        return
    name = target.attr.value
    on_self = isinstance(target.value, cst.Name) and target.value.value == "self"
    truth: Truth = None
    if on_self and value is not None:
        truth = literal_truth(value)
        if truth is None and isinstance(value, cst.Name) and function is not None:
            truth = parameter_default_truth(function, value.value)
    if truth is None or (name in found and found[name] != truth):
        unknown.add(name)
    found.setdefault(name, truth)
