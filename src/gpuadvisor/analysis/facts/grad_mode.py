"""Where autograd is off, and which loops evaluate a model with it on.

A forward pass run with autograd on records the graph of every op and keeps the tensors a
backward pass would need (the activations of every layer) for as long as the output lives. An
evaluation never calls backward, so under `torch.no_grad()` / `torch.inference_mode()` none of
that is recorded. A loop over a data loader that runs a model after `model.eval()`, with no
such context around it and no backward in it, is an evaluation that pays for a training graph.

Read by GPU802. Silent where the callers of the function are not all seen: an evaluation
function may be called under `no_grad` by code of another file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from gpuadvisor.analysis.facts.frequency import names_data
from gpuadvisor.analysis.facts.imports import ImportTable, dotted_name
from gpuadvisor.analysis.facts.module_facts import FunctionFacts, LoopFacts, ModuleFacts
from gpuadvisor.analysis.facts.traverse import Nesting, child_nodes
from gpuadvisor.analysis.facts.training import steps_optimizer

#: Context managers and decorators that turn autograd off for the code they wrap.
GRAD_OFF = frozenset(
    {
        "torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode",
    }
)
#: `torch.set_grad_enabled(flag)`: off unless the flag is the literal `True` (a phase loop's
#: `set_grad_enabled(phase == "train")` is off in its evaluation phase).
GRAD_SWITCHES = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"})
#: Calls that differentiate: a loop making one trains (a model in eval mode with frozen
#: normalisation statistics can still be trained).
_DIFFERENTIATING = frozenset({"torch.autograd.grad", "torch.autograd.backward"})


@dataclass(frozen=True)
class EvaluationWithGrad:
    """A loop over data that runs `model` (switched to eval mode before it) with autograd on."""

    loop: LoopFacts
    model: str  # the model as the code names it: "model", "self.model"
    call: cst.Call  # the first call in the loop that runs it (directly or through a helper)


def evaluations_with_grad(facts: ModuleFacts) -> Iterator[EvaluationWithGrad]:
    """Each outermost loop over a data source that runs a model after `.eval()` and never
    differentiates, with autograd on where it runs: not under a context or decorator that turns
    it off, in a function that this file calls at least once with autograd on (or at module
    level), and that no other file calls (whose grad mode we do not see)."""
    off = _GradOff(facts)
    frozen: set[str] | None = None  # the models the file freezes, found at the first candidate
    for loop in facts.loops:
        function = loop.function
        if not isinstance(loop.node, (cst.For, cst.While)) or loop.iterable is None or not names_data(loop.iterable):
            continue
        if loop.few_iterations:
            continue  # a loop that runs once (`for data in loader: trace(model, data); break`) evaluates nothing
        if any(outer.iterable is not None and names_data(outer.iterable) for outer in _ancestors(loop)):
            continue  # the outer pass over the data is the one reported
        if facts.test_file or function.is_test or off.inside(loop.node, function):
            continue
        model = _model_evaluated_before(loop, function, facts)
        if model is None or _differentiates(loop.node, facts) or _switches_to_training(loop.node, model):
            continue
        frozen = _frozen_models(facts) if frozen is None else frozen
        if model in frozen:
            continue  # no parameter asks for a gradient: autograd records nothing
        call = _runs_model(loop, model, facts, off)
        if call is not None and _called_with_grad(function, facts, off):
            yield EvaluationWithGrad(loop, model, call)


def _ancestors(loop: LoopFacts) -> Iterator[LoopFacts]:
    outer = loop.parent
    while outer is not None:
        yield outer
        outer = outer.parent


class _GradOff:
    """Which nodes run with autograd off, per function (computed once each)."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self._off: dict[int, set[int]] = {}

    def nodes(self, function: FunctionFacts) -> set[int]:
        root: cst.CSTNode = function.node if function.node is not None else self.facts.module
        if id(root) not in self._off:
            if isinstance(root, cst.FunctionDef) and any(_turns_grad_off(d.decorator, self.facts.imports) for d in root.decorators):
                self._off[id(root)] = {id(node) for node in _below(root)}
            else:
                self._off[id(root)] = _off_below(root, self.facts.imports)
        return self._off[id(root)]

    def inside(self, node: cst.CSTNode, function: FunctionFacts) -> bool:
        return id(node) in self.nodes(function)


def _turns_grad_off(expr: cst.BaseExpression, imports: ImportTable) -> bool:
    """`torch.no_grad()`, `torch.no_grad` (as a decorator), `torch.inference_mode()`,
    `torch.set_grad_enabled(False)` (any flag but the literal `True`)."""
    func = expr.func if isinstance(expr, cst.Call) else expr
    if not isinstance(func, (cst.Name, cst.Attribute)):
        return False
    # As spelled where the import is not seen (`from utils import *` bringing `torch`): a
    # guess that only ever keeps the rule quiet.
    qualname = imports.qualified_name(func) or dotted_name(func)
    if qualname in GRAD_OFF or (qualname or "").rsplit(".", 1)[-1] in ("no_grad", "inference_mode"):
        return True
    if qualname in GRAD_SWITCHES and isinstance(expr, cst.Call) and expr.args:
        flag = expr.args[0].value
        return not (isinstance(flag, cst.Name) and flag.value == "True")
    return False


def _off_below(root: cst.CSTNode, imports: ImportTable) -> set[int]:
    """Nodes under a `with` that turns autograd off, or after a statement that does
    (`torch.set_grad_enabled(False)`) in the same block."""
    off: set[int] = set()
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.With) and any(_turns_grad_off(item.item, imports) for item in node.items):
            off.update(id(inner) for inner in _below(node.body))
            continue
        body = node.body if isinstance(node, (cst.Module, cst.IndentedBlock)) else None
        if isinstance(body, (list, tuple)):
            switched = False
            for statement in body:
                if switched:
                    off.update(id(inner) for inner in _below(statement))
                elif _switch_statement(statement, imports):
                    switched = True
        stack.extend(child_nodes(node))
    return off


def _switch_statement(statement: cst.CSTNode, imports: ImportTable) -> bool:
    """`torch.set_grad_enabled(False)` as a statement of its own."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    return any(isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _turns_grad_off(small.value, imports) for small in statement.body)


def _below(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child_nodes(node))


def _model_evaluated_before(loop: LoopFacts, function: FunctionFacts, facts: ModuleFacts) -> str | None:
    """`M` of a `M.eval()` statement that runs before the loop whenever the loop runs: in the
    block holding the loop statement or in one around it, above it."""
    root: cst.CSTNode = function.node if function.node is not None else facts.module
    chain = [loop.node, *Nesting(root).ancestors(loop.node)]
    for statement, block in zip(chain, chain[1:]):
        body = block.body if isinstance(block, (cst.Module, cst.IndentedBlock)) else None
        if not isinstance(body, (list, tuple)) or statement not in body:
            continue
        for earlier in body[: body.index(statement)]:
            model = _evaluated(earlier)
            if model is not None:
                return model
    return None


def _evaluated(statement: cst.CSTNode) -> str | None:
    """`model.eval()` (or `self.model.eval()`, or `model = model.eval()`) as a statement: the
    model's dotted name."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    for small in statement.body:
        call = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
        if not (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute) and call.func.attr.value == "eval"):
            continue
        model = dotted_name(call.func.value)
        if not isinstance(small, cst.Assign) or (len(small.targets) == 1 and dotted_name(small.targets[0].target) == model):
            return model
    return None


def _frozen_models(facts: ModuleFacts) -> set[str]:
    """The models the file freezes: `model.requires_grad_(False)`, or `p.requires_grad = False`
    in a loop over `model.parameters()`. A frozen model's forward records no graph (unless its
    input asks for gradients, which an evaluation's batch does not)."""
    frozen: set[str] = set()
    for node in _below(facts.module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_":
            flag = node.args[0].value if node.args else None
            model = dotted_name(node.func.value)
            if model is not None and isinstance(flag, cst.Name) and flag.value == "False":
                frozen.add(model)
        if isinstance(node, cst.For) and isinstance(node.iter, cst.Call) and any(_sets_requires_grad_off(inner) for inner in _below(node.body)):
            model = dotted_name(node.iter.func)
            if model is not None and model.endswith(".parameters"):
                frozen.add(model.removesuffix(".parameters"))
    return frozen


def _sets_requires_grad_off(node: cst.CSTNode) -> bool:
    """`p.requires_grad = False`."""
    return (
        isinstance(node, cst.Assign)
        and isinstance(node.value, cst.Name)
        and node.value.value == "False"
        and any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" for t in node.targets)
    )


def _differentiates(root: cst.CSTNode, facts: ModuleFacts) -> bool:
    """A backward pass or an optimizer step somewhere in the code: it trains."""
    for node in _below(root):
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
            return True
        if steps_optimizer(node) or facts.imports.qualified_name(node.func) in _DIFFERENTIATING:
            return True
    return False


def _switches_to_training(root: cst.CSTNode, model: str) -> bool:
    """`model.train()` in the loop: it goes back to training mode on the way."""
    return any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "train" and dotted_name(node.func.value) == model
        for node in _below(root)
    )


def _runs_model(loop: LoopFacts, model: str, facts: ModuleFacts, off: _GradOff) -> cst.Call | None:
    """The first call in the loop body that runs `model` with autograd on: `model(x)`,
    `model.forward(x)`, or a method of the same class it calls through `self` that does
    (`self._process_one_batch(...)` running `self.model(...)`), differentiating nowhere."""
    runs = {model, f"{model}.forward"}
    owner = loop.function.name.rpartition(".")[0]
    for node in _below(loop.node):
        if not isinstance(node, cst.Call) or off.inside(node, loop.function):
            continue
        called = dotted_name(node.func)
        if called in runs:
            return node
        helper = facts.functions.get(f"{owner}.{called.removeprefix('self.')}") if owner and called and called.startswith("self.") else None
        if helper is None or not isinstance(helper.node, cst.FunctionDef) or not model.startswith("self."):
            continue
        inner = [call for call in _below(helper.node.body) if isinstance(call, cst.Call) and dotted_name(call.func) in runs]
        if any(not off.inside(call, helper) for call in inner) and not _differentiates(helper.node.body, facts):
            return node
    return None


def _called_with_grad(function: FunctionFacts, facts: ModuleFacts, off: _GradOff) -> bool:
    """Module-level code runs with autograd on unless it turns it off; a function, where this
    file calls it at least once outside such a context, and no other file calls it."""
    if function.node is None:
        return True
    if function.called_from_project or not function.called_in_file:
        return False
    for scope in facts.scopes:
        for event in scope.events:
            if function in facts.functions_called(event) and not off.inside(event.node, scope):
                return True
    return False
