"""Facts that cross files: a helper in one module called on GPU values from a loop in another,
classes moved to the GPU elsewhere, relative imports, and what stays silent."""

from __future__ import annotations

import json
from pathlib import Path

import libcst as cst
import pytest

from gpuadvisor.analysis.facts.project import ProjectIndex, exports_from_json, exports_to_json, module_exports
from gpuadvisor.analysis.facts.walker import gather_facts

MODELS = """\
import torch

def discriminator_loss(real_outputs, fake_outputs):
    loss = 0
    real_losses = []
    for real, fake in zip(real_outputs, fake_outputs):
        r = torch.mean((1 - real) ** 2)
        loss += r + torch.mean(fake ** 2)
        real_losses.append(r.item())
    return loss, real_losses
"""

TRAIN = """\
import torch
from models import discriminator_loss

def train(loader):
    device = torch.device("cuda")
    disc = Discriminator().to(device)
    for x in loader:
        real_out, fake_out = disc(x.to(device))
        loss, _ = discriminator_loss(real_out, fake_out)
        loss.backward()
"""


@pytest.fixture(autouse=True, params=["on", pytest.param("off", marks=pytest.mark.slow)], ids=["prescan", "every-file-parsed"])
def prescan(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every project here gives the same findings whether or not the pre-scan skips files (the
    second mode repeats every case, so it runs with the slow tests: CI runs both)."""
    monkeypatch.setenv("GPUADVISOR_PRESCAN", request.param)


def findings(cli, target: Path) -> list[tuple[str, int, str, str]]:
    report = json.loads(cli("check", str(target), "--format", "json", "--no-cache").stdout)
    return sorted((Path(f["path"]).relative_to(target).as_posix(), f["line"], f["rule"], f["message"]) for f in report["findings"])


def test_a_helper_in_another_module_handed_gpu_outputs_is_checked_with_them(cli, write, tmp_path) -> None:
    write("models.py", MODELS)
    write("train.py", TRAIN)
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("models.py", 9, "GPU201")]


def test_a_module_inside_a_package_is_not_importable_by_its_bare_name(cli, write, tmp_path) -> None:
    """`gan/models.py` in a package is `gan.models`, not `models`: `from models import ...` at
    the root still means the root's `models.py` (were both `models`, neither could be chosen)."""
    write("models.py", MODELS)
    write("gan/__init__.py", "")
    write("gan/models.py", "def discriminator_loss(real_outputs, fake_outputs):\n    return 0.0, []\n")
    write("train.py", TRAIN)
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("models.py", 9, "GPU201")]


def test_a_helper_called_in_an_epoch_loop_of_another_file_runs_in_that_loop(cli, write, tmp_path) -> None:
    """A call in a loop tells the callee's file how often it runs even when it is not a hot
    step (an epoch loop) and hands over nothing on the GPU: the host draw repeats per epoch."""
    write("utils.py", "import torch\n\n\ndef make_noise(n):\n    return torch.randn(n, 128).cuda()\n")
    write(
        "train.py",
        "import torch\nfrom utils import make_noise\n\ngenerator = torch.nn.Linear(128, 784).cuda()\n"
        "for epoch in range(100):\n    z = make_noise(64)\n    samples = generator(z)\n",
    )
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("utils.py", 5, "GPU102")]
    assert "which runs in a loop" in found[0][3]


def test_the_helper_alone_says_nothing(cli, write, tmp_path) -> None:
    write("models.py", MODELS)  # nobody here says what the outputs are
    assert findings(cli, tmp_path) == []


def test_callers_that_disagree_across_files_leave_the_parameter_unknown(cli, write, tmp_path) -> None:
    write("models.py", MODELS)
    write("train.py", TRAIN)
    write(
        "cpu_eval.py",
        "import torch\nfrom models import discriminator_loss\nfor r, f in batches:\n"
        "    discriminator_loss([torch.zeros(3)], [torch.ones(3)])\n",
    )
    assert findings(cli, tmp_path) == []


FUNCTIONAL = """\
import torch

def _binary_validation(preds, target):
    unique_values = torch.unique(target)
    if torch.any((unique_values != 0) & (unique_values != 1)):
        raise RuntimeError("target must be binary")

def binary_accuracy(preds, target):
    _binary_validation(preds, target)
    return (preds == target).float().mean()
"""


def metric_class(validate_default: str) -> str:
    return f"""\
import torch
from torch import Tensor
from torchmetrics import Metric
from functional import _binary_validation

DEVICE = "cuda"

class BinaryAccuracy(Metric):
    def __init__(self, validate_args: bool = {validate_default}) -> None:
        super().__init__()
        self.validate_args = validate_args

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.validate_args:
            _binary_validation(preds, target)
"""


def test_a_helper_the_public_api_also_forwards_to_runs_on_the_gpu_callers_tensors(cli, write, tmp_path) -> None:
    """torchmetrics' shape: a metric's `update` (per batch, on the accelerator) calls a validation
    helper from the functional module under `if self.validate_args:`, on unless turned off; the
    functional API in that module forwards its own user-given inputs to the same helper, which
    says nothing against the metric's GPU tensors."""
    write("functional.py", FUNCTIONAL)
    write("metric.py", metric_class("True"))
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("functional.py", 4, "GPU201")]
    assert "metric.py's `update()` calls `_binary_validation()` on every iteration" in found[0][3]


def test_a_helper_behind_a_setting_that_is_off_by_default_stays_silent(cli, write, tmp_path) -> None:
    write("functional.py", FUNCTIONAL)
    write("metric.py", metric_class("False"))
    assert findings(cli, tmp_path) == []


def test_a_caller_that_hands_host_tensors_does_not_hide_the_gpu_caller(cli, write, tmp_path) -> None:
    """BigVGAN's `mel_spectrogram(y)`: the dataset calls it on host audio, the training loop on
    the generator's GPU output. The helper's read waits for the GPU on the training loop's calls,
    whatever the host caller does, and the finding names the caller that pays."""
    write("functional.py", FUNCTIONAL)
    write("metric.py", metric_class("True"))
    write("cpu_check.py", "import torch\nfrom functional import _binary_validation\nfor _ in range(100):\n    _binary_validation(torch.zeros(8), torch.zeros(8))\n")
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("functional.py", 4, "GPU201")]
    assert "metric.py's `update()` calls `_binary_validation()` on every iteration" in found[0][3]


def test_callers_that_all_hand_host_tensors_leave_the_helper_silent(cli, write, tmp_path) -> None:
    write("functional.py", FUNCTIONAL)
    write("cpu_check.py", "import torch\nfrom functional import _binary_validation\nfor _ in range(100):\n    _binary_validation(torch.zeros(8), torch.zeros(8))\n")
    assert findings(cli, tmp_path) == []


def test_what_a_test_file_hands_a_helper_counts_only_where_the_project_never_calls_it(cli, write, tmp_path) -> None:
    """A test picks its own inputs (CUDA tensors to compare two versions): where the project
    calls the helper itself, its calls say what the helper is handed and the test's neither
    add GPU values nor disagree; where only tests call it, they are all there is to go on."""
    test_models = (
        "import torch\nfrom models import discriminator_loss\n\ndef test_loss():\n"
        "    for n in range(10):\n        discriminator_loss(torch.ones(2, 3).cuda(), torch.zeros(2, 3).cuda())\n"
    )
    write("models.py", MODELS)
    write("tests/test_models.py", test_models)
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("models.py", 9, "GPU201")]
    write("report.py", "import numpy as np\nfrom models import discriminator_loss\n\nprint(discriminator_loss(np.ones((2, 3)), np.zeros((2, 3))))\n")
    assert findings(cli, tmp_path) == []
    write("train.py", TRAIN)
    write("tests/test_models.py", test_models.replace(".cuda()", ""))
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("models.py", 9, "GPU201")]


def test_a_sync_in_a_helper_file_without_torch_is_reported_with_its_caller(cli, write, tmp_path) -> None:
    write("meters.py", "def record(meter, loss):\n    meter.append(loss.item())\n")
    write(
        "train.py",
        "import torch\nfrom meters import record\n\ndef main(loader):\n    model = Net().cuda()\n    meter = []\n"
        "    for x in loader:\n        loss = model(x.cuda()).mean()\n        loss.backward()\n        record(meter, loss)\n",
    )
    (path, line, rule, message), = findings(cli, tmp_path)
    assert (path, line, rule) == ("meters.py", 2, "GPU201")
    assert "train.py's `main()` calls `record()` on every iteration of a loop" in message


def test_a_module_class_moved_to_the_gpu_by_another_file_runs_its_methods_there(cli, write, tmp_path) -> None:
    write("moco/__init__.py", "")
    write(
        "moco/builder.py",
        "import torch\n\nclass MoCo(torch.nn.Module):\n    def __init__(self, make):\n        super().__init__()\n"
        "        self.encoder_q, self.encoder_k = make(), make()\n        self.register_buffer('ptr', torch.zeros(1, dtype=torch.long))\n\n"
        "    def forward(self, q, k):\n        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):\n"
        "            p_k.data = p_k.data * 0.999 + p_q.data * 0.001\n        start = int(self.ptr)\n        return self.encoder_q(q)\n",
    )
    write(
        "main.py",
        "import torch\nimport moco.builder\n\ndef main(loader):\n    model = moco.builder.MoCo(resnet50)\n    model.cuda()\n"
        "    for q, k in loader:\n        model(q.cuda(), k.cuda()).sum().backward()\n",
    )
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [
        ("moco/builder.py", 10, "GPU301"),
        ("moco/builder.py", 12, "GPU201"),
    ]


def test_a_subclass_moved_to_the_gpu_runs_the_methods_it_inherits_there(cli, write, tmp_path) -> None:
    """`MoCo_ResNet(MoCo)` is built and moved in another file; `forward` and the per-parameter
    momentum update it calls are `MoCo`'s, and run with `self` on the GPU."""
    write("moco/__init__.py", "")
    write(
        "moco/builder.py",
        "import torch\n\nclass MoCo(torch.nn.Module):\n    def __init__(self, make):\n        super().__init__()\n"
        "        self.base, self.momentum = make(), make()\n\n"
        "    def _update(self, m):\n        for p_b, p_m in zip(self.base.parameters(), self.momentum.parameters()):\n"
        "            p_m.data = p_m.data * m + p_b.data * (1. - m)\n\n"
        "    def forward(self, x, m):\n        self._update(m)\n        return self.base(x)\n\n\n"
        "class MoCo_ResNet(MoCo):\n    def head(self):\n        return None\n",
    )
    write(
        "main.py",
        "import torch\nfrom moco.builder import MoCo_ResNet\n\ndef main(loader):\n    model = MoCo_ResNet(resnet50)\n"
        "    model.cuda()\n    for x in loader:\n        model(x.cuda(), 0.99).sum().backward()\n",
    )
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("moco/builder.py", 9, "GPU301")]


OPTIMIZER = (
    "import torch\n\nclass LARS(torch.optim.Optimizer):\n    def __init__(self, params, lr=0.1):\n"
    "        super(LARS, self).__init__(params, dict(lr=lr))\n\n    @torch.no_grad()\n    def step(self):\n"
    "        for g in self.param_groups:\n            for p in g['params']:\n"
    "                p.add_(p.grad * torch.norm(p) / torch.norm(p.grad), alpha=-g['lr'])\n"
)


_MAKES = {
    "built-elsewhere": "LARS(model.parameters())",
    "handed-to-a-factory": "PyroStyle(LARS, model.parameters())",
    "never-built": "torch.optim.SGD(model.parameters(), lr=0.1)  # LARS(...)",
}


@pytest.mark.parametrize("how", [*_MAKES, "handed-in-its-own-file"])
def test_an_optimizer_class_steps_every_iteration_only_where_the_project_builds_it(cli, write, tmp_path, how: str) -> None:
    """An optimizer kept for an option nobody takes (its one use commented out) has no step that
    runs; the same class built by the training script steps once per iteration, and so does one
    handed to a factory that builds it (Pyro's `PyroOptim(ClippedAdam, args)`), in its own file
    or another."""
    factory = "\n\ndef clipped(params):\n    return PyroStyle(LARS, params)\n" if how == "handed-in-its-own-file" else ""
    write("optim.py", OPTIMIZER + factory)
    write("factory.py", "import torch\n\nclass PyroStyle:\n    def __init__(self, make, params):\n        self.make, self.params = make, params\n")
    make = _MAKES.get(how, "clipped(model.parameters())")
    write(
        "train.py",
        f"import torch\nfrom optim import LARS, clipped\nfrom factory import PyroStyle\n\ndef train(model, loader):\n"
        f"    model = model.cuda()\n    opt = {make}\n"
        "    for x in loader:\n        model(x.cuda()).sum().backward()\n        opt.step()\n",
    )
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert found == ([] if how == "never-built" else [("optim.py", 10, "GPU301")])


def test_relative_imports_reach_the_sibling_module(cli, write, tmp_path) -> None:
    write("pkg/__init__.py", "")
    write(
        "pkg/ema.py",
        "class EMA:\n    def __init__(self, mu):\n        self.mu, self.shadow = mu, {}\n\n    def update(self, module):\n"
        "        for name, p in module.named_parameters():\n            self.shadow[name].data = (1 - self.mu) * p.data + self.mu * self.shadow[name].data\n",
    )
    write(
        "pkg/train.py",
        "import torch\nfrom .ema import EMA\n\ndef fit(loader):\n    model = Net().cuda()\n    ema = EMA(0.999)\n"
        "    for x in loader:\n        model(x.cuda()).mean().backward()\n        ema.update(model)\n",
    )
    (path, line, rule, message), = findings(cli, tmp_path)
    assert (path, line, rule) == ("pkg/ema.py", 6, "GPU301")
    assert "train.py's `fit()` calls it on every iteration of a loop" in message


def test_the_cache_keeps_what_other_files_said(cli, write, tmp_path) -> None:
    write("models.py", MODELS)
    train = write("train.py", TRAIN)
    first = cli("check", str(tmp_path), "--format", "json").stdout
    assert cli("check", str(tmp_path), "--format", "json").stdout == first
    train.write_text(TRAIN.replace('torch.device("cuda")', 'torch.device("cpu")'))
    assert json.loads(cli("check", str(tmp_path), "--format", "json").stdout)["findings"] == []


def test_module_names_resolve_to_the_nearest_file_and_ties_stay_unknown(tmp_path) -> None:
    for name in ("a/utils.py", "b/utils.py", "a/train.py", "c/train.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    paths = [str(tmp_path / name) for name in ("a/utils.py", "b/utils.py", "a/train.py", "c/train.py")]
    index = ProjectIndex(paths)
    assert index.resolve("utils.log", paths[2]) == (paths[0], "log")  # the sibling wins
    assert index.resolve("utils.log", paths[3]) is None  # two candidates, equally far: unknown
    assert index.resolve(".utils.log", paths[2]) == (paths[0], "log")


def test_an_absolute_import_resolves_from_the_deepest_root_that_holds_the_importer(tmp_path) -> None:
    """A project that vendors another one with the same layout (PatchTST's `Formers/FEDformer`):
    `from utils.masking import ...` in each copy's `layers/` loads that copy's own `utils`."""
    names = ("utils/masking.py", "layers/attn.py", "Formers/FED/utils/masking.py", "Formers/FED/layers/attn.py")
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    outer_mask, outer_attn, inner_mask, inner_attn = (str(tmp_path / name) for name in names)
    index = ProjectIndex([outer_mask, outer_attn, inner_mask, inner_attn])
    assert index.resolve("utils.masking.ProbMask", outer_attn) == (outer_mask, "ProbMask")
    assert index.resolve("utils.masking.ProbMask", inner_attn) == (inner_mask, "ProbMask")


def test_a_caller_passing_star_args_leaves_the_parameters_unknown(cli, write, tmp_path) -> None:
    write("models.py", MODELS)
    write("train.py", TRAIN.replace("discriminator_loss(real_out, fake_out)", "discriminator_loss(*(real_out, fake_out))"))
    assert findings(cli, tmp_path) == []


def test_exports_survive_the_cache_round_trip() -> None:
    source = (
        "import torch\nfrom helpers import log\n\nclass Net(torch.nn.Module):\n    pass\n\n"
        "def dev():\n    return torch.device('cuda')\n\ndef upload(x):\n    return torch.from_numpy(x).cuda()\n\n"
        "net = Net().cuda()\nstd = torch.ones(3).cuda()\nfor x in data:\n    log(net(x.cuda()), step=1)\n"
    )
    exports = module_exports(gather_facts(cst.parse_module(source), "a.py"))
    assert exports.results and exports.calls and exports.classes == (("Net", True),)
    assert exports.uploads == (("upload", (0, "x")),)
    assert [name for name, _ in exports.values] == ["std"] and exports.from_imports == (("log", "helpers.log"),)
    assert exports_from_json(exports_to_json(exports)) == exports


NORMALIZE = """\
import torch

mean = torch.tensor((0.49, 0.48, 0.45)).view(3, 1, 1).cuda()
std = torch.tensor((0.25, 0.24, 0.26)).view(3, 1, 1).cuda()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
"""

ATTACK_TRAIN = """\
import torch
from utils import device, std as channel_std

def train(model, loader, opt):
    epsilon = (8 / 255.0) / channel_std
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        delta = torch.zeros_like(x)
        for j in range(len(epsilon)):
            delta[:, j].uniform_(-epsilon[j][0][0].item(), epsilon[j][0][0].item())
        loss = torch.nn.functional.cross_entropy(model(x + delta), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())
"""


def test_top_level_gpu_tensors_and_devices_imported_from_another_file_keep_their_device(cli, write, tmp_path) -> None:
    """fast_adversarial's `from utils import std`: a normalisation tensor made on the GPU at the
    top of a sibling module, divided into a per-channel radius read back on every step; and the
    shared `device` a script moves its batches to. Names imported as aliases keep the value."""
    write("utils.py", NORMALIZE)
    write("train.py", ATTACK_TRAIN)
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("train.py", 10, "GPU201"), ("train.py", 15, "GPU201")]


def test_a_top_level_host_tensor_imported_from_another_file_is_not_taken_for_the_gpu(cli, write, tmp_path) -> None:
    write("utils.py", NORMALIZE.replace(".cuda()", "").replace('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', 'device = "cpu"'))
    write("train.py", ATTACK_TRAIN)
    assert findings(cli, tmp_path) == []


DISTRIBUTED = """\
def apply_gradient_allreduce(module):
    module.warn_on_half = True
    for param in module.parameters():
        param.register_hook(lambda *unused: None)
    return module
"""

WAVE_TRAIN = """\
import torch
from distributed import apply_gradient_allreduce
from glow import WaveGlow

def load_checkpoint(path, model, optimizer):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    return model, optimizer, checkpoint["iteration"]

def train(loader, num_gpus, path):
    model = WaveGlow().cuda()
    if num_gpus > 1:
        model = apply_gradient_allreduce(model)
    optimizer = torch.optim.Adam(model.parameters())
    if path:
        model, optimizer, iteration = load_checkpoint(path, model, optimizer)
    for mel, audio in loader:
        loss = model((mel.cuda(), audio.cuda())).sum()
        print(loss.item())
"""


def test_a_function_that_returns_what_it_was_given_keeps_its_device(cli, write, tmp_path) -> None:
    """`model = apply_gradient_allreduce(model)` (another file) and `model, opt, step =
    load_checkpoint(path, model, opt)` hand back the GPU model they were given."""
    write("distributed.py", DISTRIBUTED)
    write("train.py", WAVE_TRAIN)
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("train.py", 19, "GPU201")]


def test_two_functions_of_one_file_that_return_what_they_were_given(cli, write, tmp_path) -> None:
    """Both helpers live in another file, so both reach the caller through that file's exports."""
    loader_helper, train = WAVE_TRAIN.split("def train(", 1)
    imports, checkpoint = loader_helper.split("def load_checkpoint", 1)
    write("distributed.py", "import torch\n\n" + DISTRIBUTED + "\n\ndef load_checkpoint" + checkpoint)
    write("train.py", imports.replace("import apply_gradient_allreduce", "import apply_gradient_allreduce, load_checkpoint") + "def train(" + train)
    found = findings(cli, tmp_path)
    assert [(path, rule) for path, _, rule, _ in found] == [("train.py", "GPU201")]


def test_a_function_that_rebinds_its_parameter_is_no_passthrough(cli, write, tmp_path) -> None:
    write("distributed.py", DISTRIBUTED.replace("    return module", "    module = make_copy(module)\n    return module"))
    write("train.py", WAVE_TRAIN.replace("    if num_gpus > 1:\n        model = apply", "    if True:\n        pass\n    model = apply").replace("    if path:\n", "    if False:\n"))
    assert findings(cli, tmp_path) == []


def test_a_folder_without_init_is_a_namespace_package(cli, write, tmp_path) -> None:
    """`from train.metrics import accuracy` run from the repository root: `train/` has no
    `__init__.py`, yet the helper is the one in `train/metrics.py`."""
    write(
        "train/metrics.py",
        """\
        def accuracy(scores, targets):
            return (scores.argmax(dim=1) == targets).float().sum().item()
        """,
    )
    write(
        "train/loop.py",
        """\
        import torch
        from train.metrics import accuracy

        def train_epoch(model, loader, device):
            for x, y in loader:
                scores = model(x.to(device))
                correct = accuracy(scores, y.to(device))
        """,
    )
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("train/metrics.py", 2, "GPU201")]
    index = ProjectIndex([str(tmp_path / "train/metrics.py"), str(tmp_path / "train/loop.py")])
    assert index.resolve("train.metrics.accuracy", str(tmp_path / "train/loop.py")) == (str(tmp_path / "train/metrics.py"), "accuracy")


def test_a_subclass_in_another_file_inherits_what_its_base_sets_on_self(cli, write, tmp_path) -> None:
    """`self.policy` is moved to the device in the base class's setup (another file); the subclass's
    training step reads losses computed with it on every gradient step."""
    write(
        "algos/base.py",
        """\
        import torch

        class BaseAlgorithm:
            def __init__(self, policy_class):
                self.device = torch.device("cuda")
                self.policy = policy_class()
                self.policy = self.policy.to(self.device)
        """,
    )
    write(
        "algos/dqn.py",
        """\
        import torch
        import torch.nn.functional as F
        from algos.base import BaseAlgorithm

        class DQN(BaseAlgorithm):
            def train(self, buffer, gradient_steps):
                losses = []
                for _ in range(gradient_steps):
                    batch = buffer.sample()
                    q = self.policy.q_net(batch.observations)
                    loss = sum(F.mse_loss(head, batch.targets) for head in q)
                    losses.append(loss.item())
                    loss.backward()
        """,
    )
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("algos/dqn.py", 12, "GPU201")]


def test_a_subclass_of_a_host_base_stays_silent(cli, write, tmp_path) -> None:
    write(
        "algos/base.py",
        """\
        class BaseAlgorithm:
            def __init__(self, policy_class):
                self.policy = policy_class()
        """,
    )
    write(
        "algos/dqn.py",
        """\
        from algos.base import BaseAlgorithm

        class DQN(BaseAlgorithm):
            def train(self, buffer, gradient_steps):
                for _ in range(gradient_steps):
                    loss = self.policy.q_net(buffer.sample()).mean()
                    print(loss.item())
        """,
    )
    assert findings(cli, tmp_path) == []


def test_an_override_runs_as_often_as_the_base_class_loop_that_calls_it(cli, write, tmp_path) -> None:
    """The base class's `learn()` loop calls `self.train()`; the subclass in another file that
    overrides `train` is what runs there, once per iteration."""
    write(
        "algos/base.py",
        """\
        import torch

        class OnPolicy:
            def __init__(self, policy_class):
                self.policy = policy_class().to(torch.device("cuda"))

            def learn(self, total_steps):
                steps = 0
                while steps < total_steps:
                    steps += self.collect()
                    self.train()
        """,
    )
    write(
        "algos/a2c.py",
        """\
        import torch
        from algos.base import OnPolicy

        class A2C(OnPolicy):
            def train(self):
                loss = self.policy.loss(self.buffer.get())
                loss.backward()
                self.log("train/loss", loss.item())
        """,
    )
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("algos/a2c.py", 8, "GPU201")]
    assert "base.py's `learn()` calls `train()` on every iteration of a loop" in found[0][3]


def test_a_method_inherited_from_a_base_in_its_file_runs_from_the_loop_of_another(cli, write, tmp_path) -> None:
    """`UniformSampler` inherits `sample` from an abstract `ScheduleSampler` (plain Python: `ABC`);
    the training loop in another file holds it as `self.sampler = sampler or UniformSampler(n)`,
    calls it per step and unpacks the two GPU tensors it returns."""
    write(
        "cm/resample.py",
        """\
        from abc import ABC, abstractmethod

        import numpy as np
        import torch as th

        class ScheduleSampler(ABC):
            @abstractmethod
            def weights(self):
                ...

            def sample(self, batch_size, device):
                p = self.weights() / np.sum(self.weights())
                indices = th.from_numpy(np.random.choice(len(p), size=(batch_size,), p=p)).long().to(device)
                weights = th.from_numpy(1 / (len(p) * p[indices.cpu().numpy()])).float().to(device)
                return indices, weights

        class UniformSampler(ScheduleSampler):
            def __init__(self, n):
                self._weights = np.ones([n])

            def weights(self):
                return self._weights
        """,
    )
    write(
        "cm/train.py",
        """\
        import torch as th
        from .resample import UniformSampler

        def dev():
            if th.cuda.is_available():
                return th.device("cuda")
            return th.device("cpu")

        class TrainLoop:
            def __init__(self, model, data, sampler=None):
                self.model, self.data = model, data
                self.sampler = sampler or UniformSampler(1000)

            def run_loop(self):
                for batch in self.data:
                    micro = batch.to(dev())
                    t, weights = self.sampler.sample(micro.shape[0], dev())
                    loss = (self.model(micro, t) * weights).mean()
                    loss.backward()
                    print(weights.sum().item())
        """,
    )
    write("cm/__init__.py", "")
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [
        ("cm/resample.py", 13, "GPU102"),
        ("cm/train.py", 20, "GPU201"),
    ]
    assert "every call of `ScheduleSampler.sample`, which runs in a loop" in found[0][3]


POLICY = """\
import torch

class DQNPolicy(torch.nn.Module):
    def __init__(self, model, optim):
        super().__init__()
        self.model, self.optim = model, optim

    def learn(self, batch):
        loss = (self.model(batch.obs) - batch.returns).pow(2).mean()
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return {"loss": loss.item()}
"""


def test_a_training_step_in_a_library_module_is_a_step_when_the_project_trains_on_cuda(cli, write, tmp_path) -> None:
    write("policy.py", POLICY)
    write("examples/train_dqn.py", 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n')
    (path, line, rule, message), = findings(cli, tmp_path)
    assert (path, line, rule) == ("policy.py", 13, "GPU201")
    assert "on every training step: `learn()` calls `self.optim.step()`" in message


def test_the_same_training_step_in_a_project_that_never_names_cuda_is_silent(cli, write, tmp_path) -> None:
    write("policy.py", POLICY)
    write("examples/train_dqn.py", "import torch\nnet = Net()\n")
    assert findings(cli, tmp_path) == []


def test_a_grad_norm_helper_in_another_file_handed_the_parameters_of_a_model_moved_in_place(cli, write, tmp_path) -> None:
    """`model = build_model(cfg); model.cuda()` moves a module we cannot see; the helper in
    utils.py gets `model.parameters()` on every step and reads one norm per parameter."""
    write(
        "utils_simmim.py",
        """\
        import torch

        def get_grad_norm(parameters, norm_type=2):
            if isinstance(parameters, torch.Tensor):
                parameters = [parameters]
            parameters = list(filter(lambda p: p.grad is not None, parameters))
            total_norm = 0
            for p in parameters:
                param_norm = p.grad.data.norm(norm_type)
                total_norm += param_norm.item() ** norm_type
            return total_norm ** (1.0 / norm_type)
        """,
    )
    write(
        "main.py",
        """\
        import torch
        from models import build_model
        from utils_simmim import get_grad_norm

        def train_one_epoch(model, loader, optimizer):
            for samples, targets in loader:
                loss = model(samples.cuda(non_blocking=True)).mean()
                optimizer.zero_grad()
                loss.backward()
                grad_norm = get_grad_norm(model.parameters())
                optimizer.step()

        def main(config):
            model = build_model(config)
            model.cuda()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            train_one_epoch(model, [], optimizer)
        """,
    )
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [
        ("utils_simmim.py", 8, "GPU301"),
        ("utils_simmim.py", 10, "GPU201"),
    ]
    assert "main.py's `train_one_epoch()` calls it on every iteration of a loop" in found[0][3]
    assert "on every parameter tensor of `parameters`" in found[1][3]


TRACKER = """\
class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


class LossTracker:
    def __init__(self):
        self.losses = AverageMeter()

    def update(self, loss, output, target):
        self.losses.update(loss.item(), output.size(0))
"""

TRACKED_TRAINING = """\
import torch.nn as nn
from utils{module} import LossTracker

criterion = nn.CrossEntropyLoss().cuda()


def train(model, loader, optimizer):
    tracker = LossTracker()
    for images, target in loader:
        images, target = images.cuda(), target.cuda()
        output = model(images)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        tracker.update(loss, output, target)
"""


@pytest.mark.parametrize("module", [".utils", ""], ids=["from-the-module", "re-exported-by-the-package"])
def test_a_method_of_a_class_from_a_package_reads_the_loss_of_every_step(cli, write, tmp_path, module: str) -> None:
    """`utils/__init__.py` is the package `utils` (not `utils.utils`), and the class it re-exports
    with `from .utils import LossTracker` is the one `utils/utils.py` defines: the tracker's
    `.item()` runs once per training step of the other file."""
    write("utils/__init__.py", "from .utils import LossTracker\n")
    write("utils/utils.py", TRACKER)
    write("main.py", TRACKED_TRAINING.format(module=module))
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("utils/utils.py", 16, "GPU201")]


def test_a_package_init_is_importable_by_the_package_name_only(tmp_path: Path) -> None:
    (tmp_path / "utils").mkdir()
    for name in ("__init__.py", "utils.py"):
        (tmp_path / "utils" / name).write_text("")
    index = ProjectIndex([str(tmp_path / "utils" / "__init__.py"), str(tmp_path / "utils" / "utils.py")])
    assert index.resolve("utils.utils.LossTracker", str(tmp_path / "main.py")) == (str(tmp_path / "utils" / "utils.py"), "LossTracker")


SAMPLER = """\
import torch

class Sampler:
    def __init__(self, model):
        self.model = model

    def sample(self, x, steps):
        for t in range(steps):
            x = self.p_sample(x, t)
        return x

    def p_sample(self, x, t):
        out = self.model.apply_model(x, t)
        if self.model.parameterization == "v":
            out = self.model.predict_from_v(x, t, out)
        return out
"""


def test_a_string_setting_of_a_model_moved_to_the_gpu_is_not_a_gpu_value(cli, write, tmp_path) -> None:
    """`self.model` holds whatever the app moved to the GPU, but a field compared with a string
    literal is a Python str: the sampler's step reads nothing from the device."""
    write("sampler.py", SAMPLER)
    write(
        "app.py",
        """\
import torch
from sampler import Sampler
model = create_model("config.yaml").cpu()
model = model.cuda()
sampler = Sampler(model)
def process(prompt):
    return sampler.sample(torch.randn(1, 4, 64, 64, device="cuda"), 50)
""",
    )
    assert findings(cli, tmp_path) == []


IMAGEN_TRAINER = """\
import torch
from torch import nn


class ImagenTrainer(nn.Module):
    def __init__(self, imagen, loader):
        super().__init__()
        self.imagen = imagen
        self.dl_iter = iter(loader)

    def train_step(self, *, unet_number=None, **kwargs):
        loss = self.step_with_dl_iter(self.dl_iter, unet_number=unet_number, **kwargs)
        return loss

    def step_with_dl_iter(self, dl_iter, **kwargs):
        images, texts = next(dl_iter)
        loss = self.forward(images, texts=texts, **kwargs)
        return loss

    def forward(self, images, texts=None, unet_number=None):
        total_loss = 0.
        for chunk, chunk_texts in zip(images.split(4), texts):
            loss = self.imagen(chunk, texts=chunk_texts, unet_number=unet_number)
            total_loss += loss.item()
            loss.backward()
        return total_loss
"""


def test_a_trainer_method_returning_a_float_through_methods_written_below_it_is_no_gpu_value(cli, write, tmp_path) -> None:
    """`train_step` -> `step_with_dl_iter` -> `forward`, each below its caller, and `forward`
    sums `loss.item()`s: printing what `train_step` returns in another file reads nothing from
    the GPU (the reads are the `.item()`s, reported where they are)."""
    write("trainer.py", IMAGEN_TRAINER)
    write(
        "cli.py",
        """\
import torch
from trainer import ImagenTrainer


def train(imagen, loader, epochs, unet):
    trainer = ImagenTrainer(imagen, loader)
    trainer = trainer.cuda()
    for _ in range(epochs):
        for _ in range(len(loader)):
            loss = trainer.train_step(unet_number=unet)
            print(f"loss: {loss}")
""",
    )
    assert [(path, line) for path, line, _, _ in findings(cli, tmp_path)] == [("trainer.py", 24)]


CONTENT_FILTER = """\
import torch
from transformers import LlavaForConditionalGeneration


class ContentFilter(torch.nn.Module):
    def __init__(self, device: torch.device = torch.device("cpu")):
        super().__init__()
        self.model = LlavaForConditionalGeneration.from_pretrained("pixtral", device_map=device)

    def rejects(self, inputs) -> bool:
        generate_ids = self.model.generate(**inputs, max_new_tokens=1)
        return generate_ids[0, -1].item() == 3
"""
FILTER_CLI = """\
import torch
from content_filter import ContentFilter

content_filter = ContentFilter(torch.device("{device}"))
while True:
    if content_filter.rejects(input()):
        continue
"""


@pytest.mark.parametrize(("device", "expected"), [("cpu", []), ("cuda", [("content_filter.py", 12, "GPU201")])])
def test_a_device_parameter_every_caller_sets_to_the_host_is_the_host(cli, write, tmp_path, device: str, expected) -> None:
    """A `device` parameter is taken for the GPU by its name; another file that builds the filter
    once with `torch.device("cpu")` says otherwise, and the per-prompt read waits for no GPU."""
    write("content_filter.py", CONTENT_FILTER)
    write("cli.py", FILTER_CLI.format(device=device))
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == expected


EVALUATOR = """\
import torch

class Evaluator:
    def __init__(self, dataloader):
        self.dataloader = dataloader

    def evaluate(self, model, test_size):
        x = torch.ones(1, 3, test_size[0], test_size[1]).cuda()
        model(x)
        results = []
        for imgs, _ in self.dataloader:
            results.append(model(imgs.type(torch.cuda.FloatTensor)))
        return results

    def scale(self, model, test_size):
        x = torch.ones(1, 3, test_size[0], test_size[1]).cuda()
        return model(x)
"""

EVALUATE = """\
from evaluator import Evaluator

def run(model, loader, epochs):
    evaluator = Evaluator(loader)
    for epoch in range(epochs):
        evaluator.evaluate(model, (640, 640))
        evaluator.scale(model, (640, 640))
"""


def test_a_fill_made_once_per_call_of_a_pass_over_the_data_is_set_up(cli, write, tmp_path) -> None:
    """A dummy input for a warm-up run, filled once per evaluation pass that then walks the
    whole loader, costs a sliver of the pass; the same fill in a method without such a loop is
    its work, made on every call."""
    write("evaluator.py", EVALUATOR)
    write("evaluate.py", EVALUATE)
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("evaluator.py", 16, "GPU102")]


AUTOGRAD = """\
import torch
import torch.distributed as dist


class AllReduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous() / dist.get_world_size()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, grads):
        return grads
"""

APPLIES = """\
import torch.nn.functional as F
from distributed import AllReduce


def main(encoder, loader, optimizer):
    encoder = encoder.cuda()
    for imgs, targets in loader:
        loss = F.smooth_l1_loss(encoder(imgs.cuda()), targets.cuda())
        loss = AllReduce.apply(loss)
        loss.backward()
        optimizer.step()
        print(float(loss))
"""


def test_an_autograd_operation_of_another_file_hands_back_a_tensor_where_its_input_is(cli, write, tmp_path) -> None:
    """`AllReduce.apply(loss)` of a `torch.autograd.Function` defined in another file is the loss,
    still on the GPU: `float()` of it waits (a call of unknown code could return a Python number)."""
    write("distributed.py", AUTOGRAD)
    write("train.py", APPLIES)
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("train.py", 12, "GPU201")]


NOT_AUTOGRAD = """\
class Rounder:
    @staticmethod
    def apply(x):
        return round(float(x), 3)
"""

# (no `loss.backward()` on the rounded number: only a tensor has one, and calling it would say so)
APPLIES_PLAIN = (
    APPLIES.replace("from distributed import AllReduce", "from rounding import Rounder")
    .replace("AllReduce.apply(loss)", "Rounder.apply(loss)")
    .replace("        loss.backward()\n", "")
)


def test_an_apply_method_of_another_files_plain_class_is_not_an_autograd_operation(cli, write, tmp_path) -> None:
    """`Rounder.apply(loss)` of a class that is no `torch.autograd.Function` returns what its code
    returns (a Python number here), not a tensor where its input is: the wait is the helper's
    `float(x)`, and `float()` of its result in the loop is silent."""
    write("distributed.py", AUTOGRAD)
    write("rounding.py", NOT_AUTOGRAD)
    write("train.py", APPLIES_PLAIN)
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("rounding.py", 4, "GPU201")]


MOCO = """
    import torch
    from torch import nn

    class MoCo(nn.Module):
        def __init__(self, dim=128, K=4096):
            super().__init__()
            self.encoder = nn.Linear(512, dim)
            self.K = K
            self.register_buffer("queue", torch.randn(dim, K))
            self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

        @torch.no_grad()
        def _dequeue_and_enqueue(self, keys):
            ptr = int(self.queue_ptr)
            self.queue[:, ptr:ptr + keys.shape[0]] = keys.T
            self.queue_ptr[0] = (ptr + keys.shape[0]) % self.K

        def forward(self, x):
            k = self.encoder(x)
            self._dequeue_and_enqueue(k)
            return k

    def moco(**kwargs):
        model = MoCo(**kwargs)
        return model
"""


def test_a_module_made_by_a_factory_in_another_file_is_the_class_the_caller_moves(cli, write, tmp_path) -> None:
    """`model = moco(dim=128); model = model.to(device)`: the factory hands back a `MoCo`, so
    moving it moves that class, and its forward's per-step queue read is a wait on the GPU."""
    write("models/__init__.py", "")
    write("models/moco.py", MOCO)
    write(
        "train.py",
        """
        import torch
        from models.moco import moco

        device = torch.device("cuda")
        model = moco(dim=128)
        model = model.to(device)
        for x in loader:
            k = model(x.to(device))
            k.sum().backward()
        """,
    )
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("models/moco.py", 14, "GPU201")]


PPO_UPDATE = """\
import torch
from torch.distributions import Normal

def update(policy, optimizer, obs, minibatches):
    for mb in minibatches:
        mean, std = policy(obs[mb].cuda())
        loss = -Normal(mean, std).entropy().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize("turned_off", [False, True])
def test_distribution_checks_turned_off_in_the_entry_script_hold_for_the_whole_project(cli, write, tmp_path, turned_off: bool) -> None:
    """`set_default_validate_args(False)` in `main.py` spares every distribution the program
    builds, in any file: the constructor in `ppo.py` then reads nothing back."""
    write("ppo.py", PPO_UPDATE)
    switch = "torch.distributions.Distribution.set_default_validate_args(False)\n" if turned_off else ""
    write("main.py", f"import torch\nfrom ppo import update\n{switch}update(None, None, None, [])\n")
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert found == ([] if turned_off else [("ppo.py", 7, "GPU201")])



def test_the_checks_switch_is_learnt_from_the_first_pass_and_kept_by_the_cache(cli, write, tmp_path) -> None:
    """The runner learns that the checks are off from each file's exports, not by reading every file
    first: a file holding only the switch turns them off, a cached run agrees with a fresh one, and
    taking the switch out brings the finding back."""
    write("ppo.py", PPO_UPDATE)
    write("main.py", "import torch\nimport quiet\nfrom ppo import update\nupdate(None, None, None, [])\n")
    switch = write("quiet.py", "from torch import distributions\ndistributions.Distribution.set_default_validate_args(False)\n")

    def cached_run() -> list[tuple[str, int, str]]:
        report = json.loads(cli("check", str(tmp_path), "--format", "json").stdout)
        return sorted((Path(f["path"]).relative_to(tmp_path).as_posix(), f["line"], f["rule"]) for f in report["findings"])

    assert cached_run() == cached_run() == []
    switch.write_text("from torch import distributions\n", encoding="utf-8")
    assert cached_run() == [("ppo.py", 7, "GPU201")]

PYTORCH_UTIL = """\
import torch

device = None

def set_gpu_mode(mode, gpu_id=0):
    global device
    device = torch.device("cuda:" + str(gpu_id) if mode else "cpu")

def from_numpy(*args, **kwargs):
    return torch.from_numpy(*args, **kwargs).float().to(device)

def tensor(*args, torch_device=None, **kwargs):
    if torch_device is None:
        torch_device = device
    return torch.tensor(*args, **kwargs, device=torch_device)
"""

TRAINER = """\
import numpy as np
import pytorch_util as ptu

def train(policy, optimizer, batches):
    for batch in batches:
        obs = ptu.from_numpy(batch["observations"])
        correction = ptu.from_numpy(np.log([2.0]))
        loss = (policy(obs) - correction).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_helper_of_another_file_that_uploads_its_argument_copies_at_each_call(cli, write, tmp_path) -> None:
    """rlkit's `ptu`: the device is a module global that `set_gpu_mode()` rebinds, and
    `from_numpy(x)` returns `x` copied there. Each batch is new data (silent); the constant
    `np.log([2.0])` is the same host data copied again on every step."""
    write("pytorch_util.py", PYTORCH_UTIL)
    write("trainer.py", TRAINER)
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert found == [("trainer.py", 7, "GPU101")]


def test_a_host_fill_handed_to_an_uploading_helper_of_another_file_is_a_gpu102_fill(cli, write, tmp_path) -> None:
    """`ptu.from_numpy(np.arange(d) / (d + 1))` in a `forward`: a table filled on the host and copied
    on every call, where `torch.arange(d, device=...)` would make it on the GPU."""
    write("pytorch_util.py", PYTORCH_UTIL)
    write(
        "net.py",
        "import numpy as np\nimport torch\nimport pytorch_util as ptu\n\n"
        "class FeatPoint(torch.nn.Module):\n    def forward(self, x):\n        d = x.shape[-1]\n"
        "        weights = ptu.from_numpy(np.arange(d) / (d + 1))\n        return (x * weights).sum(-1)\n",
    )
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert found == [("net.py", 8, "GPU102")]


def test_a_batch_fetcher_of_another_file_puts_each_step_on_the_gpu(cli, write, tmp_path) -> None:
    """StarGAN v2's loop takes each step's record from `next(fetcher)`, an object of another file whose
    `__next__` moves every field to the device: the losses computed from it are GPU tensors, and a
    loss helper's `.item()` waits once per step."""
    write("core/__init__.py", "")
    write("core/data_loader.py", """\
        import torch
        from munch import Munch

        class InputFetcher:
            def __init__(self, loader):
                self.loader = loader
                self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

            def __next__(self):
                x, y = next(self.iter)
                inputs = Munch(x_src=x, y_src=y)
                return Munch({k: v.to(self.device) for k, v in inputs.items()})
        """)
    write("core/solver.py", """\
        import torch.nn.functional as F
        from core.data_loader import InputFetcher

        def compute_d_loss(nets, x_real, y_org):
            out = nets.discriminator(x_real, y_org)
            loss = F.binary_cross_entropy_with_logits(out, out.detach())
            return loss, {"real": loss.item()}

        def train(nets, loaders, optims, total_iters):
            fetcher = InputFetcher(loaders.src)
            for i in range(total_iters):
                inputs = next(fetcher)
                d_loss, d_losses = compute_d_loss(nets, inputs.x_src, inputs.y_src)
                d_loss.backward()
                optims.discriminator.step()
        """)
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert found == [("core/solver.py", 7, "GPU201")]


def test_a_helper_another_file_runs_now_and_then_fills_nothing_per_step(cli, write, tmp_path) -> None:
    """StarGAN v2's debug images: the training loop of another file calls `debug_image` every
    `sample_every` steps, which builds a host tensor per call of a helper: a sliver of the run. The
    same helper called on every step is reported."""
    write("utils.py", """\
        import torch

        def translate(nets, x_src):
            N, C, H, W = x_src.size()
            wb = torch.ones(1, C, H, W).to(x_src.device)
            return torch.cat([wb, nets.generator(x_src)], dim=0)

        def debug_image(nets, x_src, step):
            return translate(nets, x_src)
        """)
    loop = """\
        import torch
        import utils

        def train(nets, loader, opt, args):
            device = torch.device("cuda")
            for i, (x, y) in enumerate(loader):
                x = x.to(device)
                loss = nets.generator(x).mean()
                loss.backward()
                opt.step()
                if (i + 1) % args.sample_every == 0:
                    utils.debug_image(nets, x, step=i + 1)
        """
    write("solver.py", loop)
    assert findings(cli, tmp_path) == []
    write("solver.py", loop.replace("if (i + 1) % args.sample_every == 0:", "if args.debug:"))
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("utils.py", 5, "GPU102")]


def test_a_subclass_of_another_files_module_is_a_module(cli, write, tmp_path) -> None:
    """`class Wide(Base)` with `Base` an `nn.Module` of another file: `Wide(device="cuda")` builds a
    model on the GPU, so what it returns is a GPU value read back every step."""
    write("models.py", "import torch.nn as nn\n\nclass Base(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n")
    write(
        "train.py",
        """\
        import torch
        from models import Base

        class Wide(Base):
            def forward(self, x):
                return self.fc(x)

        def train(loader, wide):
            net = Wide(device="cuda") if wide else Base()
            for x in loader:
                out = net(x)
                print(float(out.sum()))
        """,
    )
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("train.py", 12, "GPU201")]


def test_a_subclass_of_a_module_two_files_away_is_a_module(cli, write, tmp_path) -> None:
    """`class Wide(Base)` in `nets.py` never calls `Base` there; its kind still comes from
    `models.py`, so `train.py`'s `Wide(device="cuda")` is a model on the GPU."""
    write("models.py", "import torch.nn as nn\n\nclass Base(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n")
    write("nets.py", "from models import Base\n\nclass Wide(Base):\n    def forward(self, x):\n        return self.fc(x)\n")
    write(
        "train.py",
        """\
        import torch
        from nets import Wide

        def train(loader):
            net = Wide(device="cuda")
            for x in loader:
                out = net(x)
                print(float(out.sum()))
        """,
    )
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("train.py", 8, "GPU201")]


def test_only_a_file_that_builds_checked_distributions_says_so_in_its_exports() -> None:
    """The runner walks again, with the checks off, only the files whose exports say they build
    checked distributions: a file without any says it does not."""
    plain = gather_facts(cst.parse_module("import torch\n\ndef f(x):\n    return x.cuda() * 2\n"))
    builds = gather_facts(cst.parse_module("import torch\n\ndef f(mu):\n    return torch.distributions.Normal(mu.cuda(), 1.0)\n"))
    assert (module_exports(plain).builds_checked_distributions, module_exports(builds).builds_checked_distributions) == (False, True)


TIMER = """\
import time


class Timer:
    def tic(self):
        self.start = time.time()

    def toc(self):
        self.total += time.time() - self.start
"""

BENCHMARK = """\
import torch
from core.timer import Timer


def forward_time(model, iterations):
    inputs = torch.rand(64, 3, 224, 224).cuda()
    timer = Timer()
    for _ in range(iterations):
        timer.tic()
        model(inputs)
        torch.cuda.synchronize()
        timer.toc()
    return timer.total
"""


def test_a_wait_before_another_files_clock_reading_method_times_the_step(cli, write, tmp_path) -> None:
    """`timer.toc()` of a Timer class two files away reads `time.time()`: the synchronize before it
    is how the forward pass is timed, not a wait that measures nothing."""
    write("core/__init__.py", "")
    write("core/timer.py", TIMER)
    write("benchmark.py", BENCHMARK)
    assert [rule for _, _, rule, _ in findings(cli, tmp_path)] == []
    write("core/timer.py", TIMER.replace("time.time()", "0.0"))
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("benchmark.py", 11, "GPU201")]


LOGGER = """\
import time


class MetricLogger:
    def log_every(self, iterable, print_freq):
        end = time.time()
        for i, obj in enumerate(iterable):
            yield obj
            if i % print_freq == 0:
                print(f"{i}: {time.time() - end:.3f} s")
            end = time.time()
"""

ENGINE = """\
import torch
from utils import MetricLogger


def train_one_epoch(model, criterion, loader, optimizer, device):
    metric_logger = MetricLogger()
    for samples, targets in metric_logger.log_every(loader, 10):
        loss = criterion(model(samples.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
"""


def test_a_wait_before_another_files_clock_reading_generator_still_measures_nothing(cli, write, tmp_path) -> None:
    """A logger's `log_every` generator reads the clock between the batches it hands out: it times
    each step on average, and the `synchronize()` ending every step only stops the host queueing ahead."""
    write("utils.py", LOGGER)
    write("engine.py", ENGINE)
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("engine.py", 12, "GPU201")]


ACTNORM = """\
import torch
from torch import nn


class ActNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, x):
        if self.training and self.initialized.item() == 0:
            self.loc.data.copy_(-x.mean(dim=(0, 2, 3), keepdim=True))
            self.initialized.fill_(1)
        return x + self.loc
"""

BUILDER = """\
import importlib


def build_model(config):
    module, name = config["target"].rsplit(".", 1)
    return getattr(importlib.import_module(module), name)(**config.get("params", {}))


def train(config, loader, steps):
    model = build_model(config["model"]).{move}
    for step, batch in zip(range(steps), loader):
        loss = model(batch.{move}).square().mean()
        loss.backward()
"""


def test_a_module_of_a_project_that_names_cuda_runs_on_the_gpu_wherever_it_is_moved(cli, write, tmp_path) -> None:
    """taming-transformers' `ActNorm` reads its `initialized` buffer with `.item()` on every forward;
    the model is built by name from a config and moved in another file, so no file moves the class
    itself. A project that names CUDA builds its models to run there; one that never does stays silent."""
    write("modules.py", ACTNORM)
    write("train.py", BUILDER.replace("{move}", "cuda()"))
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("modules.py", 12, "GPU201")]
    write("train.py", BUILDER.replace("{move}", "float()"))
    assert findings(cli, tmp_path) == []


def test_a_trainer_subclass_of_another_files_trainer_runs_its_compute_loss_per_step(cli, write, tmp_path) -> None:
    """trl's shape: `SFTTrainer(_BaseTrainer)` in one file, `_BaseTrainer(Trainer)` in another;
    the Hugging Face Trainer calls the subclass's `compute_loss` on every step all the same."""
    write("pkg/__init__.py", "")
    write("pkg/base_trainer.py", "from transformers import Trainer\n\nclass _BaseTrainer(Trainer):\n    pass\n")
    write(
        "pkg/sft_trainer.py",
        """\
        import torch
        from .base_trainer import _BaseTrainer

        class SFTTrainer(_BaseTrainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                outputs = model(**inputs)
                self._metrics["loss"].append(outputs.loss.item())
                return outputs.loss

        torch.cuda.set_device(0)
        """,
    )
    write("pkg/plain.py", "import torch\nfrom .base_trainer import _BaseTrainer as Base\n\nclass Helper:\n    def compute_loss(self, model, inputs):\n        return model(**inputs).loss.item()\n")
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("pkg/sft_trainer.py", 7, "GPU201")]
    assert "the Hugging Face Trainer calls `compute_loss()`" in found[0][3]


COMPILE_HELPER = """\
import torch

def torch_compile(*args, **kwargs):
    if not hasattr(torch, "compile"):
        return args[0] if args else (lambda fn: fn)
    return torch.compile(*args, **kwargs)
"""

VIEWMAT = """\
import torch
from utils import torch_compile

@torch_compile()
def get_viewmat(c2w):
    return c2w[:, :3, :3] * torch.tensor([[[1, -1, -1]]], device=c2w.device, dtype=c2w.dtype)

def render(cameras):
    for c2w in cameras:
        yield get_viewmat(c2w.cuda())
"""


def test_a_function_a_project_wrapper_of_torch_compile_decorates_is_compiled(cli, write, tmp_path) -> None:
    """nerfstudio's `@torch_compile()` (utils/misc.py returns `torch.compile(...)`): the constant in
    `get_viewmat` is traced once with the graph, not copied on every call."""
    write("utils.py", COMPILE_HELPER)
    write("render.py", VIEWMAT)
    assert findings(cli, tmp_path) == []
    write("utils.py", COMPILE_HELPER.replace("return torch.compile(*args, **kwargs)", "return lambda fn: fn"))
    assert [(path, rule) for path, _, rule, _ in findings(cli, tmp_path)] == [("render.py", "GPU101")]


def test_calling_an_object_of_another_files_class_runs_its_call_method(cli, write, tmp_path) -> None:
    """`meter(loss)` on a `LossMeter()` of another file runs `LossMeter.__call__` on every step:
    its read of the loss waits there (mutation seed 4421 dropped the `__call__` target)."""
    write(
        "meters.py",
        "class LossMeter:\n    def __init__(self):\n        self.total = 0.0\n"
        "    def __call__(self, loss):\n        self.total += loss.item()\n",
    )
    write(
        "train.py",
        "import torch\nfrom meters import LossMeter\n\ndef train(model, loader):\n    meter = LossMeter()\n"
        "    model = model.cuda()\n    for x, y in loader:\n        loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()\n"
        "        loss.backward()\n        meter(loss)\n",
    )
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("meters.py", 5, "GPU201")]


_HOST_SCRIPT = (
    "import torch\n\n\ndef main(model, data, steps):\n    optimizer = torch.optim.Adam(model.parameters())\n"
    "    for t in range(steps):\n        optimizer.zero_grad()\n        loss = model(data).sum()\n        loss.backward()\n"
    "        optimizer.step()\n        print(t, loss.item()){placement}\n\n\nif __name__ == \"__main__\":\n    main(build(), load(), 100)\n"
)


@pytest.mark.parametrize("names_a_device", [False, True], ids=["host-script", "script-on-the-gpu"])
def test_a_script_that_names_no_device_trains_on_the_host_in_a_project_that_uses_cuda(cli, write, tmp_path, names_a_device: bool) -> None:
    """Pyro's CPU examples sit beside its CUDA ones: a script that never names a device, an
    accelerator or a GPU keeps its loss on the host, so reading it each step waits for nothing.
    The same loop in a script that puts its work on a device is flagged."""
    write("gpu_example.py", "import torch\n\nmodel = torch.nn.Linear(4, 4).cuda()\n")
    placement = "\n    model.to('cuda')" if names_a_device else ""
    write("cpu_example.py", _HOST_SCRIPT.format(placement=placement))
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert found == ([("cpu_example.py", 11, "GPU201")] if names_a_device else [])


_TOP_LEVEL_SCRIPT = (
    "import torch\nfrom losses import criterion\n\nfc = torch.nn.Linear(4, 1){placement}\n"
    "optimizer = torch.optim.SGD(fc.parameters(), lr=0.1)\nfor step in range(1000):\n    x, y = get_batch()\n"
    "    output = criterion(fc, x, y)\n    loss = output.item()\n    optimizer.zero_grad()\n"
    "    output.backward()\n    optimizer.step()\n"
)


@pytest.mark.parametrize("names_a_device", [False, True], ids=["host-script", "script-on-the-gpu"])
def test_a_training_loop_at_a_scripts_top_level_reads_its_loss_where_the_script_puts_it(cli, write, tmp_path, names_a_device: bool) -> None:
    """pytorch/examples' `regression/main.py` trains at its top level and never names a device:
    its loss is on the host, beside the project's CUDA examples. The same loop in a script that
    moves its model to the GPU reads a GPU loss on every step, though the loss comes from a
    function the check cannot see into: it is what the script calls backward on."""
    write("gpu_example.py", "import torch\n\nmodel = torch.nn.Linear(4, 4).cuda()\n")
    write("regression.py", _TOP_LEVEL_SCRIPT.format(placement=".cuda()" if names_a_device else ""))
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert found == ([("regression.py", 9, "GPU201")] if names_a_device else [])


def test_a_network_moved_by_name_is_a_module_not_a_tensor(cli, write, tmp_path) -> None:
    """ElegantRL's evaluator: `actor = actor.to(device)` moves a network (its name says so), and a
    function handed the network (an evaluation rollout) returns what it likes: here host returns
    built from Python lists. A tensor moved the same way would make the result a GPU tensor."""
    write(
        "evaluator.py",
        "class Evaluator:\n    def evaluate_and_save(self, actor, steps):\n        returns = self.rollouts(actor)\n"
        "        print(returns.mean().item(), steps)\n",
    )
    write(
        "run.py",
        "from evaluator import Evaluator\n\n\ndef run(agent, env, steps, device):\n    actor, evaluator = agent.act, Evaluator()\n"
        "    while True:\n        actor = actor.to(device)\n        evaluator.evaluate_and_save(actor, steps)\n",
    )
    assert findings(cli, tmp_path) == []
    write(
        "run.py",
        "from evaluator import Evaluator\n\n\ndef run(agent, env, steps, device):\n    states, evaluator = agent.states, Evaluator()\n"
        "    while True:\n        states = states.to(device)\n        evaluator.evaluate_and_save(states, steps)\n",
    )
    assert [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)] == [("evaluator.py", 4, "GPU201")]


_MODEL_TEST = (
    "import time\nimport torch\nfrom models import UNO\n\n\ndef test_uno():\n    model = UNO(3, 3){placement}\n"
    "    x = torch.randn(8, 3, 32, 32){placement}\n    loss = model(x).sum()\n    start = time.time()\n    loss.backward()\n"
    "    print(f'backward in {{time.time() - start}}')\n"
)


@pytest.mark.parametrize("on_the_gpu", [False, True], ids=["host-test", "gpu-test"])
def test_a_test_that_builds_its_model_on_the_host_times_host_work(cli, write, tmp_path, on_the_gpu: bool) -> None:
    """neuraloperator's `test_uno.py` builds its model and input on the host and times `backward()`
    for a log line. The project trains on the GPU elsewhere, but a test's loss is where the test
    puts its model: timing host work needs no synchronize. Moved to the GPU, it does."""
    write("models.py", "import torch\n\n\nclass UNO(torch.nn.Module):\n    pass\n")
    write("train.py", "import torch\nfrom models import UNO\n\nmodel = UNO(3, 3).cuda()\n")
    write("tests/test_uno.py", _MODEL_TEST.format(placement=".cuda()" if on_the_gpu else ""))
    found = [(path, line, rule) for path, line, rule, _ in findings(cli, tmp_path)]
    assert [rule for path, _, rule in found if path == "tests/test_uno.py" and rule == "GPU401"] == (["GPU401"] if on_the_gpu else [])


_ALGO_BASE = """\
import torch


class Algo:
    def __init__(self, net):
        self.net = net

    def train_on_batch(self, batch):
        raise NotImplementedError
"""

_ALGO_BC = """\
import torch
from algos.base import Algo


class BC(Algo):
    def train_on_batch(self, batch):
        loss = self.net(batch.cuda()).mean()
        loss.backward()
        return {"loss": loss.item()}
"""


def _trainer(call: str) -> str:
    return f"import torch\n\n\ndef run_epoch(model, loader):\n    for batch in loader:\n        {call}\n"


def test_an_interface_method_called_on_an_object_of_unknown_class_runs_each_override_per_step(cli, write, tmp_path) -> None:
    """robomimic's `run_epoch(model, ...)` calls `model.train_on_batch(batch)` on whichever
    algorithm the configuration built: every override of `Algo.train_on_batch` in the project
    runs once per step, so the `.item()` in `BC`'s is a per-step wait."""
    write("algos/base.py", _ALGO_BASE)
    write("algos/bc.py", _ALGO_BC)
    write("train.py", _trainer("info = model.train_on_batch(batch)"))
    found = findings(cli, tmp_path)
    assert [(path, line, rule) for path, line, rule, _ in found] == [("algos/bc.py", 9, "GPU201")]
    assert "train.py's `run_epoch()` calls `train_on_batch()` on every iteration of a loop" in found[0][3]


_UNRELATED = """\
import torch
from algos.base import Algo


class BC(Algo):
    def train_on_batch(self, batch):
        loss = self.net(batch.cuda()).mean()
        return {"loss": loss.item()}


class Planner(Algo):
    def train_on_batch(self, batch):
        return {"cost": batch.cuda().sum().item()}
"""


@pytest.mark.parametrize(
    "base, algos",
    [
        ("import torch\n\n\nclass Algo:\n    pass\n", _UNRELATED),
        ("import torch\n\n\nclass Algo:\n    pass\n", _ALGO_BC),
    ],
    ids=["no-class-declares-it-for-the-others", "one-definition"],
)
def test_a_method_name_that_is_not_one_interface_of_the_project_stays_unresolved(cli, write, tmp_path, base: str, algos: str) -> None:
    """Where no class of the project declares `train_on_batch` for the others (or only one
    defines it), the name alone does not say the object is the project's."""
    write("algos/base.py", base)
    write("algos/bc.py", algos)
    write("train.py", _trainer("info = model.train_on_batch(batch)"))
    assert findings(cli, tmp_path) == []


def test_a_library_method_name_on_an_object_of_unknown_class_is_not_the_projects(cli, write, tmp_path) -> None:
    """`scaler.update()` in the loop names a GradScaler as often as the project's `update`: a
    project interface called `update` is not assumed to be what runs."""
    write("algos/base.py", _ALGO_BASE.replace("train_on_batch", "update"))
    write("algos/bc.py", _ALGO_BC.replace("train_on_batch", "update"))
    write("train.py", _trainer("scaler.update(batch)"))
    assert findings(cli, tmp_path) == []


def test_a_one_off_call_of_an_interface_method_tells_the_overrides_nothing(cli, write, tmp_path) -> None:
    write("algos/base.py", _ALGO_BASE)
    write("algos/bc.py", _ALGO_BC)
    write("train.py", "import torch\n\n\ndef run_once(model, batch):\n    return model.train_on_batch(batch)\n")
    assert findings(cli, tmp_path) == []
