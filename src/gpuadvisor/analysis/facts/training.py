"""Training steps: what a function that trains a model tells us without knowing its callers.

A function that calls `optimizer.step()` runs once per optimizer step, whoever calls it (an RL
policy's `learn()`, a trainer's `training_step()`), and the tensor it calls `.backward()` on is a
loss of the model being trained: a torch tensor on the model's device. In a project that trains
on the GPU, those two facts are enough to see a per-step `.item()` on the loss, even when the
model was handed in by code we cannot follow.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.imports import ImportTable, dotted_name, positional_arg
from gpuadvisor.analysis.facts.traverse import own_nodes


def is_optimizer_name(expr: cst.BaseExpression) -> bool:
    """`optimizer`, `self.actor_optim`, `opt_g`, `self._optimizer`: a name that says it holds an optimizer."""
    dotted = dotted_name(expr)
    if dotted is None:
        return False
    last = dotted.rsplit(".", 1)[-1].lower().strip("_")
    return "optim" in last or last == "opt" or last.startswith("opt_") or last.endswith("_opt")


def steps_optimizer(call: cst.Call) -> bool:
    """`optimizer.step()`, `self.optim.step(closure)`, `scaler.step(optimizer)`, or a training
    helper handed the loss and the optimizer (`self.net.train_step(loss, self.optim)`)."""
    if _loss_handed_with_optimizer(call) is not None:
        return True
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "step":
        return False
    first = positional_arg(call)
    if is_optimizer_name(func.value):
        return first is None or isinstance(first, (cst.Name, cst.Lambda))  # a closure, not an env action
    return first is not None and is_optimizer_name(first)


def steps_an_optimizer(body: cst.CSTNode) -> bool:
    """The code steps an optimizer somewhere in its own statements (not in functions it defines):
    a training loop, or a function that runs a training update."""
    return optimizer_step_in(body) is not None


def optimizer_step_in(body: cst.CSTNode) -> cst.Call | None:
    """The first optimizer step among the code's own statements, if any."""
    return next((node for node in own_nodes(body) if isinstance(node, cst.Call) and steps_optimizer(node)), None)


def _backward_argument(call: cst.Call, imports: ImportTable) -> cst.BaseExpression | None:
    """The loss a backward call differentiates: `loss.backward()`, `fabric.backward(loss)`,
    `accelerator.backward(loss)`, `torch.autograd.backward(loss)`, `scaler.scale(loss).backward()`."""
    func = call.func
    handed = _loss_handed_with_optimizer(call)
    if handed is not None:
        return handed
    if not isinstance(func, cst.Attribute) or func.attr.value not in kb.BACKWARD_METHODS:
        return None
    receiver = func.value
    owner = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
    if owner in kb.ACCELERATOR_NAMES or imports.qualified_name(func) == "torch.autograd.backward":
        return positional_arg(call)
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value == "scale":
        return positional_arg(receiver)
    return receiver


#: Words in the name of a helper that, handed a loss and an optimizer, trains with them; and
#: words of helpers handed a model and an optimizer to save, load or set up their state.
_TRAINING_HELPER_WORDS = ("train", "step", "update", "backward")
_STATE_HELPER_WORDS = ("state", "checkpoint", "save", "load", "init", "optimizer")


def _loss_handed_with_optimizer(call: cst.Call) -> cst.BaseExpression | None:
    """`self.net.train_step(loss, self.optim)`, `update_params(loss, optimizer)`: a training helper
    handed a loss first and an optimizer after it differentiates the loss and steps the optimizer
    (SLM-Lab's algorithms train only through `Net.train_step`), whichever file defines it."""
    name = (dotted_name(call.func) or "").rsplit(".", 1)[-1].lower()
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if not any(word in name for word in _TRAINING_HELPER_WORDS) or any(word in name for word in _STATE_HELPER_WORDS):
        return None  # (`get_optimizer_state_dict(model, opt)`, `save_checkpoint_step(model, optim)`)
    if len(positional) < 2:
        return None
    return positional[0] if any(is_optimizer_name(value) for value in positional[1:]) else None


def _leading_name(expr: cst.BaseExpression | None) -> str | None:
    """`loss`, `(loss / accumulation_steps)`, `-loss`: the tensor the expression starts from."""
    while isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)):
        expr = expr.left if isinstance(expr, cst.BinaryOperation) else expr.expression
    return expr.value if isinstance(expr, cst.Name) else None


def _operand_names(expr: cst.BaseExpression) -> set[str]:
    """Names combined by arithmetic (`clip + w * vf - ent` -> clip, w, vf, ent), not inside calls."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, cst.BinaryOperation):
        return _operand_names(expr.left) | _operand_names(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return _operand_names(expr.expression)
    return set()


@dataclass(frozen=True)
class TrainedTensors:
    """What `trained_tensors` found in one function."""

    #: Losses the function calls backward on (True) and tensors combined into them (False:
    #: such a name may be a Python number).
    names: dict[str, bool] = field(default_factory=dict)
    #: The assignments, before the last backward call, that bind those names to the loss; a
    #: later one rebinds the name to something else (`loss = total / n` after the loop).
    definitions: frozenset[int] = frozenset()


#: Words a script that places its work on an accelerator names somewhere in its text
#: (`device=`, `.cuda()`, `accelerator="gpu"`, `gpus=1`, `xm.xla_device()`, `"mps"`).
_ACCELERATOR_WORDS = re.compile(r"cuda|device|gpu|accelerat|xla|\bmps\b|triton", re.IGNORECASE)


def host_only_script(source: str) -> bool:
    """A script (`if __name__ == "__main__":`) that names no device, accelerator or GPU anywhere in
    its text: what it builds and trains stays on the host, whatever other files of its project do
    (Pyro's CPU examples beside its CUDA ones). Its own training loop is not a GPU training loop."""
    return bool(kb.ENTRY_POINT.search(source)) and not names_an_accelerator(source)


def names_an_accelerator(source: str) -> bool:
    """The text names a device, an accelerator or a GPU somewhere. A training loop written as a
    module's top-level code is a script's; in a text that names none (pytorch/examples' CPU
    `regression/main.py`), its loss stays on the host."""
    return bool(_ACCELERATOR_WORDS.search(source))


def may_train(source: str) -> bool:
    """A text that names neither a backward method nor an optimizer has no backward call and
    hands no loss to a training helper, so no training step: reading each of its functions for
    one (`trained_tensors`) can be skipped."""
    return "optim" in source or any(method in source for method in kb.BACKWARD_METHODS)  # (a helper handed an optimizer)


def trained_tensors(code: cst.FunctionDef | cst.Module, imports: ImportTable) -> TrainedTensors:
    """The losses of a training function, or of a script's top-level training loop, and the
    tensors summed into them; read only where nothing better is known about the name."""
    nodes = list(own_nodes(code.body if isinstance(code, cst.FunctionDef) else code))
    backward_at = [
        (index, name)
        for index, node in enumerate(nodes)
        if isinstance(node, cst.Call) and (name := _leading_name(_backward_argument(node, imports))) is not None
    ]
    if not backward_at:
        return TrainedTensors()
    last_backward = backward_at[-1][0]
    losses = {name for _, name in backward_at}
    definitions: dict[str, list[tuple[int, cst.Assign]]] = {}
    for index, node in enumerate(nodes):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            definitions.setdefault(node.targets[0].target.value, []).append((index, node))
    parts: set[str] = set()
    pending = list(losses)
    while pending:
        for index, assign in definitions.get(pending.pop(), []):
            if index < last_backward:
                for name in _operand_names(assign.value) - losses - parts:
                    parts.add(name)
                    pending.append(name)
    names = {**{name: False for name in parts}, **{name: True for name in losses}}
    defining = frozenset(
        id(assign) for name in names for index, assign in definitions.get(name, []) if index < last_backward
    )
    return TrainedTensors(names, defining)
