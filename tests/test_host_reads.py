"""Every way of reading a GPU value on the host that the knowledge tables name, in a training loop.

The tables of `facts/knowledge.py` (`.item()`, `float()`, `print()`, `math.isnan()`, data-sized
ops, explicit synchronizes, ...) decide what GPU201 reports. These tests are generated from the
tables, so a new entry is tested the day it is added: read every step, the loss read is a GPU201
at its line; read under `if step % 100 == 0:` (a sampled progress line), nothing is reported.
Each read sits in a training function of its own, all checked as one file.
"""

from __future__ import annotations

from gpuadvisor import check_source
from gpuadvisor.analysis.facts import knowledge as kb

IMPORTS = "import cmath\nimport math\nimport cupy\nimport numba.cuda\nimport torch\nimport warp\n"
TRAINING_STEP = """
def train_{number}(model, optimizer, loader):
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

HOST_READS = sorted(
    [f"value = loss.{method}()" for method in kb.SCALAR_SYNC_METHODS | (kb.D2H_METHODS - kb.HOST_DATA_METHODS) | kb.DATA_SIZED_OPS]
    + [f"value = {name.removeprefix('builtins.')}(loss)" for name in kb.SYNCING_BUILTINS | kb.FORMATTING_BUILTINS | kb.DATA_SIZED_FUNCTIONS]
    + [f"value = {module}.isnan(loss)" for module in kb.PYTHON_NUMBER_MODULES]
    + ["value = f'{loss:.3f}'", "value = 'loss %f' % loss", "if loss > 10:\n    print('diverging')"]
    + [f"{wait}()" for wait in kb.DEVICE_WIDE_WAITS]
)


def _file_of_reads(guard: str) -> tuple[str, dict[int, str]]:
    """One training function per read, the read last in its loop (under `guard` when given);
    with the line of each read."""
    code, lines = IMPORTS, {}
    for number, read in enumerate(HOST_READS):
        code += TRAINING_STEP.format(number=number)
        depth = 2
        if guard:
            code += f"        {guard}\n"
            depth = 3
        lines[code.count("\n") + 1] = read
        code += "".join(" " * 4 * depth + line + "\n" for line in read.splitlines())
    return code, lines


def test_a_host_read_every_step_is_reported_where_it_is() -> None:
    code, lines = _file_of_reads(guard="")
    reported = {f.line for f in check_source(code, select="GPU201")}
    assert {lines[line] for line in lines.keys() - reported} == set(), "not reported"
    assert reported - lines.keys() == set(), "reported elsewhere"


def test_the_same_reads_every_hundred_steps_are_not() -> None:
    code, _ = _file_of_reads(guard="if step % 100 == 0:")
    assert [(f.line, f.message) for f in check_source(code, select="GPU201")] == []


#: Guards of a per-step `loss.item()`: those that run it on a few steps only (a sampled progress
#: line, the first steps, the last one) and those that run it on every step or on most of them.
SAMPLING_GUARDS = [
    "if step % 100 == 0:", "if not step % 100:", "if (step + 1) % 50 == 0:", "if step % 10 == 9:",
    "if rank == 0 and step % 100 == 0:", "if step % 100 == 0 and rank == 0:", "if step == len(loader) - 1:",
    "if step == 0:", "if step < 10:", "if step <= 100:", "if verbose and step < 5:",
]
EVERY_STEP_GUARDS = [
    "if rank == 0:", "if not overflow:", "if verbose:", "if step > 10:", "if step >= 0:", "if step != 0:",
    "if step < 1000:", "if step % 1 == 0:", "if rank == 0 and verbose:",
]


def test_a_read_under_a_guard_is_reported_when_the_guard_runs_it_every_step() -> None:
    """One training function per guard, the read under it: GPU201 exactly where the guard lets the
    read run on every step (or on all but a few), never where it samples a few steps."""
    code, lines = IMPORTS, {}
    for number, guard in enumerate(SAMPLING_GUARDS + EVERY_STEP_GUARDS):
        code += TRAINING_STEP.format(number=number).replace("(model, optimizer, loader)", "(model, optimizer, loader, rank, verbose, overflow)")
        code += f"        {guard}\n"
        lines[code.count("\n") + 1] = guard
        code += "            print(loss.item())\n"
    reported = {lines[f.line] for f in check_source(code, select="GPU201") if f.line in lines}
    assert sorted(reported) == sorted(EVERY_STEP_GUARDS)


#: Every way a training function holds its model's parameters (or buffers) before a loop reads
#: each of them on the host every step, with the loop target that takes one of them
#: (`parameters()`, `list(...)`, `filter(...)` over it, a dict of `named_parameters()` read
#: through `.items()` or `.values()`); the holders that give names only (`.keys()`, the dict
#: itself) read no tensor.
PARAMETER_HOLDERS = {
    "model.parameters()": "p", "model.buffers()": "p", "list(model.parameters())": "p", "tuple(model.buffers())": "p",
    "filter(lambda p: p.grad is not None, model.parameters())": "p", "dict(model.named_parameters()).values()": "p",
    "model.named_parameters()": "name, p", "model.named_buffers()": "name, p", "list(model.named_parameters())": "name, p",
    "dict(model.named_parameters()).items()": "name, p", "dict(model.named_buffers()).items()": "name, p",
}
NAME_HOLDERS = ["dict(model.named_parameters())", "dict(model.named_parameters()).keys()"]
PARAMETER_READS = """
def train_{number}(model, optimizer, loader):
    model.{placement}()
    held = {holder}
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        for {target} in held:
            print({read})
"""


def _file_of_parameter_reads(placement: str) -> tuple[str, dict[int, str]]:
    code, lines = "import torch\n", {}
    for number, (holder, target) in enumerate([*PARAMETER_HOLDERS.items(), *((holder, "name") for holder in NAME_HOLDERS)]):
        read = "p.norm().item()" if target.endswith("p") else "name"
        code += PARAMETER_READS.format(number=number, placement=placement, holder=holder, target=target, read=read)
        lines[code.count("\n")] = holder
    return code, lines


def test_each_parameter_of_a_model_on_the_gpu_read_every_step_is_reported_however_it_is_held() -> None:
    code, lines = _file_of_parameter_reads("cuda")
    found = check_source(code, select="GPU201")
    assert [lines.get(f.line) for f in found] == list(PARAMETER_HOLDERS)
    assert all("on every parameter tensor of `held` (one sync per parameter per pass)" in f.message for f in found)


def test_the_parameters_of_a_model_on_the_cpu_are_read_without_waiting() -> None:
    code, _ = _file_of_parameter_reads("cpu")
    assert [(f.line, f.message) for f in check_source(code, select="GPU201")] == []


#: Reads, every step, of a term summed into the loss that nothing else says is a tensor
#: (`aux = compute_aux(x)`): it may be a Python number, so only a read that a number does not
#: have (`.item()`, `.cpu()`) is known to wait for the GPU; `float()` and `print()` are not.
TERM_READS = {"history.append(float(aux))": False, "print(aux)": False, "history.append(aux.item())": True, "history.append(aux.cpu())": True}
TERM_OF_THE_LOSS = """
def train_{number}(model, criterion, optimizer, loader, compute_aux, history):
    model.cuda()
    for x, y in loader:
        aux = compute_aux(x)
        loss = criterion(model(x.cuda()), y.cuda()) + 0.1 * aux
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {read}
"""


def test_a_term_of_the_loss_that_may_be_a_number_is_a_tensor_only_where_a_number_could_not_be() -> None:
    code, reads = "import torch\n", {}
    for number, read in enumerate(TERM_READS):
        code += TERM_OF_THE_LOSS.format(number=number, read=read)
        reads[code.count("\n")] = read
    assert [reads[f.line] for f in check_source(code, select="GPU201")] == [read for read, waits in TERM_READS.items() if waits]


def test_reads_after_a_meter_fed_host_numbers_copy_a_finished_value() -> None:
    """timm's validation loop: the loss read waits for the step; the accuracy reads after it only
    pass host numbers to meters of another library (and read `input.size(0)`), which queues
    nothing on the GPU, so they copy finished values."""
    code = """
import torch
from timm.utils import AverageMeter, accuracy


def validate(model, loader, loss_fn):
    losses, top1, top5 = AverageMeter(), AverageMeter(), AverageMeter()
    model = model.cuda()
    for input, target in loader:
        input, target = input.cuda(), target.cuda()
        output = model(input)
        loss = loss_fn(output, target)
        acc1, acc5 = accuracy(output.detach(), target, topk=(1, 5))
        losses.update(loss.item(), input.size(0))
        top1.update(acc1.item(), input.size(0))
        top5.update(acc5.item(), input.shape[0])
    return top1.avg
"""
    assert [f.line for f in check_source(code, select="GPU201")] == [14]


def test_a_method_of_the_file_that_launches_gpu_work_between_reads_makes_each_wait() -> None:
    """`self.step(i)` is handed a host number too, but this file's `step` runs the model."""
    code = """
import torch


class Trainer:
    def __init__(self, model):
        self.model = model.cuda()

    def step(self, i):
        return self.model(torch.randn(8, 4, device="cuda")).sum()

    def fit(self, n):
        for i in range(n):
            loss = self.step(i)
            print(loss.item())
            self.step(i)
            print(loss.item())
"""
    assert [f.line for f in check_source(code, select="GPU201")] == [15, 17]


def test_a_read_whose_operand_is_computed_after_the_previous_read_waits_for_it() -> None:
    """fast_adversarial's FGSM loop: the accuracy count is computed after `loss.item()` has
    waited, so its own `.item()` waits again, for the comparison and the sum."""
    code = """
import torch


def train(model, loader, criterion, opt):
    model = model.cuda()
    train_loss, train_acc = 0.0, 0
    for X, y in loader:
        X, y = X.cuda(), y.cuda()
        output = model(X)
        loss = criterion(output, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        train_loss += loss.item() * y.size(0)
        train_acc += (output.max(1)[1] == y).sum().item()
    return train_loss, train_acc
"""
    assert [f.line for f in check_source(code, select="GPU201")] == [15, 16]
