"""Findings in code nothing in the checked project refers to: a loss class no script builds is
left out (and counted in the summary) in an application, kept in a package, kept when a
configuration file names it, and kept where the project is not in sight."""

from __future__ import annotations

import json
from pathlib import Path

from gpuadvisor.analysis.facts import references
from gpuadvisor.analysis.facts.references import top_level_definitions

LOSSES = '''\
import torch


class ComputeLoss:
    def __call__(self, pred, targets):
        total = torch.zeros(1, device=targets.device)
        for i in range(pred.shape[0]):
            total += (pred[i] - targets[i]).abs().mean()
            print(f"part {total.item():.3f}")
        return total


class APLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, targets):
        grad = torch.zeros(logits.shape).cuda()
        for ii in range(logits.shape[0]):
            if logits[ii] > 0.5:
                grad[ii] = 1.0
        ctx.save_for_backward(grad)
        return super(APLoss, APLoss).forward(ctx, logits, targets)
'''

TRAIN = '''\
import torch
from losses import ComputeLoss


def train(loader):
    model = Net().cuda()
    compute_loss = ComputeLoss()
    for imgs, targets in loader:
        loss = compute_loss(model(imgs.cuda()), targets.cuda())
        loss.backward()


if __name__ == "__main__":
    train(make_loader())
'''


def check(cli, target: Path) -> tuple[list[tuple[str, int]], dict[str, int], str]:
    report = json.loads(cli("check", str(target), "--format", "json", "--no-cache", "--exit-zero").stdout)
    text = cli("check", str(target), "--no-cache", "--exit-zero").stdout
    found = sorted((Path(f["path"]).name, f["line"]) for f in report["findings"])
    return found, report["summary"], text.strip().splitlines()[-1]


def test_a_class_no_script_builds_is_left_out_and_counted(cli, write, tmp_path) -> None:
    write("losses.py", LOSSES)
    write("train.py", TRAIN)
    found, summary, last_line = check(cli, tmp_path)
    assert {path for path, _ in found} == {"losses.py"}
    assert all(line < 13 for _, line in found)  # only ComputeLoss, built by train.py
    assert summary["unreferenced"] >= 1
    assert "left out in code nothing in the project refers to" in last_line


def test_in_a_package_every_definition_is_what_users_call(cli, write, tmp_path) -> None:
    write("losses.py", LOSSES)
    write("train.py", TRAIN)
    write("pyproject.toml", '[project]\nname = "detector"\nversion = "1.0"\n')
    found, summary, _ = check(cli, tmp_path)
    assert any(line > 13 for path, line in found if path == "losses.py")
    assert "unreferenced" not in summary


def test_a_class_named_in_a_configuration_file_is_used(cli, write, tmp_path) -> None:
    write("losses.py", LOSSES)
    write("train.py", TRAIN)
    write("configs/ap.yaml", "loss: APLoss\nlr: 0.01\n")
    found, summary, _ = check(cli, tmp_path)
    assert any(line > 13 for path, line in found if path == "losses.py")
    assert "unreferenced" not in summary


def test_a_module_nothing_imports_offers_all_it_defines(cli, write, tmp_path) -> None:
    """A snippet module beside the scripts: nothing imports it, so its functions are its offer."""
    write("losses.py", LOSSES)
    write("train.py", TRAIN.replace("from losses import ComputeLoss\n", "from helpers import ComputeLoss\n"))
    found, summary, _ = check(cli, tmp_path)
    assert any(line > 13 for path, line in found if path == "losses.py")
    assert "unreferenced" not in summary


def test_files_given_one_by_one_are_not_a_whole_project(cli, write, tmp_path) -> None:
    losses = write("losses.py", LOSSES)
    write("train.py", TRAIN)
    report = json.loads(cli("check", str(losses), "--format", "json", "--no-cache", "--exit-zero").stdout)
    assert any(f["line"] > 13 for f in report["findings"])


def test_decorated_dunder_and_main_definitions_are_never_candidates() -> None:
    source = "import x\n@register\ndef built_by_name():\n    pass\ndef main():\n    pass\ndef __getattr__(name):\n    pass\nclass Kept:\n    pass\n"
    assert [definition.name for definition in top_level_definitions(source)] == ["Kept"]
    assert top_level_definitions("def broken(:\n") == []


DIFFUSION = '''\
import torch


class GaussianDiffusion:
    def sample(self, model, shape, device):
        x = torch.randn(*shape, device=device)
        for i in range(1000):
            t = torch.tensor([i] * shape[0], device=device)
            x = model(x, t)
        return x

    def calc_bpd_loop(self, model, x_start):
        total = []
        for t in range(1000):
            total.append(model(x_start, torch.tensor([t] * x_start.shape[0], device=x_start.device)).item())
        return total


class Denoiser(torch.nn.Module):
    def training_loss(self, n):
        x = torch.randn(n, 8, device="cuda")
        for i in range(n):
            print(x[i].sum().item())
'''

SAMPLE = '''\
import torch
from diffusion import GaussianDiffusion, Denoiser

if __name__ == "__main__":
    model = Denoiser().cuda()
    images = GaussianDiffusion().sample(model, (16, 3, 64, 64), "cuda")
'''


def test_a_method_of_a_plain_class_nothing_calls_is_left_out_but_a_framework_class_keeps_its_methods(cli, write, tmp_path) -> None:
    """`calc_bpd_loop` is named nowhere: left out. `Denoiser.training_loss` is named nowhere
    either, but its class derives from a framework's, which may call it (Lightning does)."""
    write("diffusion.py", DIFFUSION)
    write("sample.py", SAMPLE)
    found, summary, _ = check(cli, tmp_path)
    lines = {line for path, line in found if path == "diffusion.py"}
    assert any(5 <= line <= 10 for line in lines)  # sample(), which the script calls
    assert not any(12 <= line <= 16 for line in lines)  # calc_bpd_loop(), which nothing calls
    assert any(line >= 19 for line in lines)  # Denoiser.training_loss
    assert summary["unreferenced"] >= 1


UNUSED_TRAINER = '''\
import torch
from losses import APLoss


class ComputeLossAP:
    def __init__(self, model):
        self.model = model

    def __call__(self, logits, targets):
        return APLoss.apply(logits, targets)
'''


def test_a_class_named_only_inside_code_nothing_uses_is_left_out_too(cli, write, tmp_path) -> None:
    """`APLoss` is named by a trainer class no script builds: it runs no more than the trainer."""
    write("losses.py", LOSSES)
    write("train.py", TRAIN)
    write("trainers.py", UNUSED_TRAINER)
    write("launch.py", "import trainers\nif __name__ == '__main__':\n    trainers.ComputeLossAP\n")
    found, summary, _ = check(cli, tmp_path)
    assert any(line > 13 for path, line in found if path == "losses.py")  # the trainer is named by a script
    (tmp_path / "launch.py").write_text("import trainers\nif __name__ == '__main__':\n    pass\n")
    found, summary, _ = check(cli, tmp_path)
    assert not any(line > 13 for path, line in found if path == "losses.py")
    assert summary["unreferenced"] >= 1


def test_definitions_naming_only_each_other_are_left_out(cli, write, tmp_path) -> None:
    losses = LOSSES + "\n\ndef ap_loss(logits, targets):\n    return APLoss.apply(logits, targets) + retry(logits)\n\n\ndef retry(x):\n    return ap_loss(x, x)\n"
    write("losses.py", losses)
    write("train.py", TRAIN)
    found, _, _ = check(cli, tmp_path)
    assert not any(line > 13 for path, line in found if path == "losses.py")


def test_an_import_is_no_use_unless_it_renames(cli, write, tmp_path) -> None:
    """`from losses import APLoss` runs nothing; `... import APLoss as Loss` is how the script names it."""
    write("losses.py", LOSSES)
    write("train.py", TRAIN.replace("from losses import ComputeLoss\n", "from losses import ComputeLoss, APLoss\n"))
    found, _, _ = check(cli, tmp_path)
    assert not any(line > 13 for path, line in found if path == "losses.py")
    write("train.py", TRAIN.replace("from losses import ComputeLoss\n", "from losses import ComputeLoss, APLoss as Loss\n"))
    found, _, _ = check(cli, tmp_path)
    assert any(line > 13 for path, line in found if path == "losses.py")


EXAMPLE = '''\
import torch


def grid(n):
    total = torch.zeros(n, device="cuda")
    for i in range(n):
        total[i] = torch.arange(n).cuda().sum()
    return total


def transport(x):
    out = torch.zeros(1, device="cuda")
    for i in range(x.shape[0]):
        out += torch.ones(3).cuda().sum()
    return out


transport(torch.randn(100, 3, device="cuda"))
'''


def test_in_a_package_an_example_script_helper_nothing_calls_is_left_out(cli, write, tmp_path) -> None:
    """A package's `examples/` scripts are run, not imported: `grid()`, which the script never
    calls (its comment only mentions a grid, the package's `grid` is another name), never runs;
    the package's own module keeps everything it defines."""
    write("pyproject.toml", '[project]\nname = "ot"\nversion = "1.0"\n')
    write("src/ot/losses.py", LOSSES)
    write("src/ot/solvers.py", "def solve_on_grid(x, grid):\n    return grid(x)\n")  # another `grid`
    write("examples/gallery/plot_transport.py", EXAMPLE + "# The points lie on a grid.\n")
    found, summary, _ = check(cli, tmp_path)
    lines = {line for path, line in found if path == "plot_transport.py"}
    assert any(line > 11 for line in lines)  # transport(), which the script calls
    assert not any(line < 10 for line in lines)  # grid(), which nothing calls
    assert any(line > 13 for path, line in found if path == "losses.py")
    assert summary["unreferenced"] >= 1


def test_without_git_the_scripts_beside_a_checked_folder_are_read_for_uses(cli, write, tmp_path) -> None:
    """An unpacked archive (no `.git`): checking `lib/` alone, `train.py` beside it still builds
    `ComputeLoss`, so its findings stay; `APLoss`, named nowhere, goes."""
    write("lib/losses.py", LOSSES)
    write("train.py", TRAIN.replace("from losses import", "from lib.losses import"))
    found, _, _ = check(cli, tmp_path / "lib")
    assert any(line < 13 for path, line in found if path == "losses.py")
    assert not any(line > 13 for path, line in found if path == "losses.py")


def test_a_call_commented_out_in_a_script_is_a_switch_to_flip(cli, write, tmp_path) -> None:
    """`# ap_loss_run()` in the main block: its author runs it by removing the `#`."""
    write("losses.py", LOSSES + "\n\ndef ap_loss_run(logits, targets):\n    return APLoss.apply(logits, targets)\n")
    write("train.py", TRAIN.replace("from losses import ComputeLoss\n", "from losses import ComputeLoss, ap_loss_run\n").replace("    train(make_loader())\n", "    train(make_loader())\n    # ap_loss_run(logits, targets)\n"))
    found, _, _ = check(cli, tmp_path)
    assert any(line > 13 for path, line in found if path == "losses.py")


def test_an_alias_and_an_export_list_name_no_definition(cli, write, tmp_path) -> None:
    """`import APLossV2 as APLoss` uses `APLossV2`, not the old `APLoss` class of the same file;
    `__all__` lists what a module offers, it runs none of it."""
    write("losses.py", LOSSES + "\n\nclass APLossV2(APLoss):\n    pass\n\n\n__all__ = ['APLoss', 'APLossV2']\n")
    write("train.py", TRAIN.replace("from losses import ComputeLoss\n", "from losses import ComputeLoss, APLossV2 as APLoss\n"))
    found, _, _ = check(cli, tmp_path)
    assert any(line > 13 for path, line in found if path == "losses.py")  # APLossV2 derives from APLoss
    write("losses.py", LOSSES + "\n\nclass APLossV2:\n    pass\n\n\n__all__ = ['APLoss', 'APLossV2']\n")
    found, _, _ = check(cli, tmp_path)
    assert not any(line > 13 for path, line in found if path == "losses.py")


def test_a_plugin_module_in_a_package_example_folder_offers_all_it_defines(cli, write, tmp_path) -> None:
    """`examples/community/pipeline.py` builds a constant from its own class but runs nothing: a
    pipeline loaded by name (`custom_pipeline="pipeline"`), not a script, so nothing is dropped."""
    write("pyproject.toml", '[project]\nname = "ot"\nversion = "1.0"\n')
    write("examples/community/pipeline.py", EXAMPLE.replace('transport(torch.randn(100, 3, device="cuda"))', "DEFAULT = grid"))
    found, summary, _ = check(cli, tmp_path)
    assert any(line > 11 for path, line in found if path == "pipeline.py")
    assert "unreferenced" not in summary


def test_a_shared_folder_full_of_other_files_is_not_climbed_into(tmp_path, monkeypatch) -> None:
    """A script checked in `/tmp/try/` has no `.git` above it; `/tmp` holds stray scripts of
    everything else, and reading them all for names would cost minutes: past
    `MAX_CLIMBED_FILES` the checked folder is the project."""
    for n in range(12):
        (tmp_path / f"stray_{n}.py").write_text("x = 1\n")
    mine = tmp_path / "try"
    mine.mkdir()
    (mine / "t.py").write_text("import torch\n")
    assert references.project_root(mine) == tmp_path
    monkeypatch.setattr(references, "MAX_CLIMBED_FILES", 10)
    assert references.project_root(mine) == mine
