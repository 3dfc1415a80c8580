"""Training-step facts (`facts/training.py`), directly: which calls step an optimizer, which names
are the losses a function trains with, and where that stops being true."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gpuadvisor.analysis.facts.imports import ImportTable
from gpuadvisor.analysis.facts.training import is_optimizer_name, steps_optimizer, trained_tensors


def function(code: str) -> cst.FunctionDef:
    node = cst.parse_module(textwrap.dedent(code)).body[0]
    assert isinstance(node, cst.FunctionDef)
    return node


def call(code: str) -> cst.Call:
    node = cst.parse_expression(code)
    assert isinstance(node, cst.Call)
    return node


@pytest.mark.parametrize("name", ["optimizer", "self.actor_optim", "opt", "opt_g", "self._optimizer", "d_opt"])
def test_names_that_hold_an_optimizer(name: str) -> None:
    assert is_optimizer_name(cst.parse_expression(name))


@pytest.mark.parametrize("name", ["scheduler", "env", "options", "self.step_size"])
def test_names_that_do_not(name: str) -> None:
    assert not is_optimizer_name(cst.parse_expression(name))


@pytest.mark.parametrize(
    "code",
    [
        "optimizer.step()",
        "self.optim.step(closure)",
        "scaler.step(optimizer)",
        # a training helper handed the loss and the optimizer (SLM-Lab's `Net.train_step`)
        "self.net.train_step(loss, self.optim, self.lr_scheduler)",
        "update_params(policy_loss, optimizer)",
    ],
)
def test_optimizer_steps(code: str) -> None:
    assert steps_optimizer(call(code))


@pytest.mark.parametrize(
    "code",
    [
        "get_optimizer_state_dict(model, optimizer)",  # reads the state of the two
        "save_checkpoint_step(model, optimizer, step)",  # stores it
        "load_train_state(model, optimizer)",
        "train_step(loss)",  # no optimizer handed
        "log_step(loss, optimizer.param_groups[0]['lr'])",  # a number read off the optimizer
    ],
)
def test_helpers_that_save_or_read_an_optimizer_do_not_step_it(code: str) -> None:
    assert not steps_optimizer(call(code))


def test_a_loss_handed_to_a_training_helper_is_trained() -> None:
    found = trained_tensors(
        function(
            """
            def train(self, batch):
                loss = self.policy_loss(batch) + self.val_loss(batch)
                self.net.train_step(loss, self.optim)
                return loss.item()
            """
        ),
        ImportTable(),
    )
    assert found.names == {"loss": True}


@pytest.mark.parametrize("code", ["env.step(action)", "scheduler.step()", "optimizer.step(0.5)", "scaler.update()"])
def test_other_steps(code: str) -> None:
    assert not steps_optimizer(call(code))


def test_the_loss_and_its_parts() -> None:
    found = trained_tensors(
        function(
            """
            def learn(self, batch):
                loss = clip_loss + vf_coef * vf_loss - ent_coef * ent_loss
                (loss / accumulation).backward()
                return clip_loss.item()
            """
        ),
        ImportTable(),
    )
    assert found.names == {"loss": True, "clip_loss": False, "vf_coef": False, "vf_loss": False, "ent_coef": False, "ent_loss": False}


@pytest.mark.parametrize(
    "statement",
    ["fabric.backward(loss)", "self.accelerator.backward(loss)", "scaler.scale(loss).backward()", "loss.backward(retain_graph=True)"],
)
def test_every_way_of_calling_backward(statement: str) -> None:
    found = trained_tensors(function(f"def step(model, x):\n    loss = model(x).mean()\n    {statement}\n"), ImportTable())
    assert found.names == {"loss": True}


def test_a_rebinding_after_backward_is_not_a_definition() -> None:
    code = function(
        """
        def train(loader):
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
            loss = seen / len(loader)
            return loss
        """
    )
    found = trained_tensors(code, ImportTable())
    first, later = [node for node in code.body.body[0].body.body if isinstance(node, cst.SimpleStatementLine)][0], code.body.body[1]
    assert id(first.body[0]) in found.definitions
    assert isinstance(later, cst.SimpleStatementLine) and id(later.body[0]) not in found.definitions


def test_a_function_without_backward_trains_nothing() -> None:
    assert trained_tensors(function("def evaluate(model, x):\n    return model(x).mean().item()\n"), ImportTable()).names == {}
