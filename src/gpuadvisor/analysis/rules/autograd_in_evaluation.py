"""GPU802: an evaluation loop that runs a model with autograd on."""

from __future__ import annotations

from collections.abc import Iterator

from gpuadvisor.analysis.facts.grad_mode import evaluations_with_grad
from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.findings.records import Severity
from gpuadvisor.analysis.rules.base import Invalid, Report, Rule, Valid
from gpuadvisor.analysis.rules.common import short


class AutogradInEvaluation(Rule):
    code = "GPU802"
    category = "autograd-in-evaluation"
    severity = Severity.WARNING
    summary = "Model run over a data loader after `.eval()` with autograd on: each forward records a graph nothing uses"
    prefilter = (r"\.eval\(\s*\)",)  # an evaluation starts by switching the model to eval mode

    VALID = [
        # A frozen backbone (every parameter's `requires_grad` off): its forward records no graph.
        Valid(
            """
            import torch

            backbone = torch.hub.load("facebookresearch/dino:main", "dino_vits16").cuda()
            backbone.requires_grad_(False)
            backbone.eval()
            features = []
            for images, _ in loader:
                features.append(backbone(images.cuda()))
            """,
        ),
        # A loop over the loader that stops after its first batch (tracing the model once) evaluates nothing.
        Valid(
            """
            import torch

            netB.eval()
            for data in train_loader:
                netB(data["image"].cuda())
                break
            """,
        ),
        # yolov3's `test()`: `torch` arrives through a star import, and the model call inside the loop is
        # under `torch.no_grad()`.
        Valid(
            """
            from utils import *

            def test(model, dataloader, device):
                model.eval()
                for imgs, targets in dataloader:
                    with torch.no_grad():
                        out = model(imgs.to(device))

            test(net, loader, "cuda")
            """,
        ),
        # The loop under `torch.no_grad()`, or the function decorated with it.
        Valid(
            """
            import torch

            def validate(model, val_loader, device):
                model.eval()
                total = 0.0
                with torch.no_grad():
                    for x, y in val_loader:
                        total += torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
                return total

            @torch.inference_mode()
            def test(model, test_loader, device):
                model.eval()
                return [model(x.to(device)) for x, _ in test_loader]

            validate(net, loader, "cuda")
            test(net, loader, "cuda")
            """
        ),
        # A phase loop that turns autograd off for its evaluation phase.
        Valid(
            """
            import torch

            def run_epoch(model, loaders, optimizer, phase):
                model.eval()
                for x, y in loaders[phase]:
                    with torch.set_grad_enabled(phase == "train"):
                        out = model(x.cuda())

            run_epoch(net, loaders, opt, "val")
            """
        ),
        # Eval mode for frozen batch-norm statistics while training: the loop differentiates.
        Valid(
            """
            import torch

            def finetune(model, train_loader, optimizer):
                model.eval()
                for x, y in train_loader:
                    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()

            finetune(net, loader, opt)
            """
        ),
        # Every call of the evaluation function is made with autograd off.
        Valid(
            """
            import torch

            def evaluate(model, loader):
                model.eval()
                return sum(model(x.cuda()).sum() for x, _ in loader)

            def evaluate_all(model, loader):
                model.eval()
                outputs = []
                for x, _ in loader:
                    outputs.append(model(x.cuda()))
                return outputs

            with torch.no_grad():
                evaluate_all(net, loader)
            """
        ),
    ]
    INVALID = [
        # Informer's `vali()`: eval mode, a pass over the validation loader through a helper
        # that runs `self.model`, and no `no_grad` anywhere on the way.
        Invalid(
            """
            import numpy as np
            import torch

            class Experiment:
                def vali(self, vali_loader, criterion):
                    self.model.eval()
                    total_loss = []
                    for batch_x, batch_y in vali_loader:
                        pred, true = self._process_one_batch(batch_x, batch_y)
                        total_loss.append(criterion(pred.detach().cpu(), true.detach().cpu()))
                    self.model.train()
                    return np.average(total_loss)

                def _process_one_batch(self, batch_x, batch_y):
                    outputs = self.model(batch_x.float().to(self.device))
                    return outputs, batch_y.float().to(self.device)

                def train(self, train_loader, vali_loader, criterion):
                    for epoch in range(10):
                        vali_loss = self.vali(vali_loader, criterion)
            """,
            line=8,
            message="every forward pass records its autograd graph",
        ),
        # DGCNN's test loop inside the epoch loop of `train()`, called from the script.
        Invalid(
            """
            import torch

            def train(model, train_loader, test_loader, opt):
                for epoch in range(250):
                    model.train()
                    for data, label in train_loader:
                        opt.zero_grad()
                        loss = torch.nn.functional.cross_entropy(model(data.cuda()), label.cuda())
                        loss.backward()
                        opt.step()
                    model.eval()
                    test_pred = []
                    for data, label in test_loader:
                        logits = model(data.cuda())
                        test_pred.append(logits.max(dim=1)[1])

            if __name__ == "__main__":
                train(net, train_loader, test_loader, opt)
            """,
            line=13,
        ),
    ]

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        for found in evaluations_with_grad(facts):
            function = found.loop.function
            decorate = f"decorate `{function.name.rsplit('.', 1)[-1]}()` with `@torch.no_grad()`" if function.node is not None else "wrap it"
            yield Report(
                found.loop.node,
                f"this loop evaluates `{found.model}` (switched to `.eval()` above it) with autograd on: every forward pass "
                "records its autograd graph and keeps each layer's activations for a backward pass that never comes, "
                f"which costs GPU memory and time on every batch (`{short(facts.code(found.call))}` runs it)",
                f"Run the loop under `with torch.no_grad():` (or `torch.inference_mode()`), or {decorate}.",
            )
