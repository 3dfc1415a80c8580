"""What a torch training step costs per module kind on a GPU machine: the figures behind `profile`'s costs of
module calls, `loss.backward()` and `optimizer.step()` (profiling/torch_modules.py).

Runs on a GPU machine with torch only. Per module kind, on small inputs (host-bound, as most training steps of
small models are), calls issued back to back with one synchronisation at the end, divided by their number:
- ``forward``: one call of the module (train mode);
- ``backward``: forward, then `.sum().backward()`, less the forward and the sum;
and per optimizer and parameter count, ``step`` (gradients in place).

Usage: python benchmarks/gpu_torch_costs.py OUT.json
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import torch
import torch.nn as nn

DEVICE = "cuda"


def _queued(call: Callable[[], object]) -> float:
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    count = 20
    while True:
        start = time.perf_counter()
        for _ in range(count):
            call()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        if elapsed > 0.1 or count >= 20_000:
            return elapsed / count
        count *= 4


def _modules() -> dict[str, tuple[nn.Module, torch.Tensor]]:
    image = torch.randn(64, 32, 16, 16, device=DEVICE, requires_grad=True)
    rows = torch.randn(512, 256, device=DEVICE, requires_grad=True)
    tokens = torch.randn(16, 64, 256, device=DEVICE, requires_grad=True)
    return {
        "Linear(256, 256)": (nn.Linear(256, 256), rows),
        "ReLU": (nn.ReLU(), rows),
        "GELU": (nn.GELU(), rows),
        "Dropout(0.1)": (nn.Dropout(0.1), rows),
        "LayerNorm(256)": (nn.LayerNorm(256), rows),
        "BatchNorm1d(256)": (nn.BatchNorm1d(256), rows),
        "Conv2d(32, 32, 3, padding=1)": (nn.Conv2d(32, 32, 3, padding=1), image),
        "BatchNorm2d(32)": (nn.BatchNorm2d(32), image),
        "MaxPool2d(2)": (nn.MaxPool2d(2), image),
        "Flatten": (nn.Flatten(), image),
        "MultiheadAttention(256, 4) self": (nn.MultiheadAttention(256, 4, batch_first=True), tokens),
        "Embedding(1000, 256)": (nn.Embedding(1000, 256), torch.randint(0, 1000, (512,), device=DEVICE)),
    }


def main() -> None:
    results: dict[str, dict] = {"modules": {}, "optimizers": {}, "ops": {}}
    for name, (module, x) in _modules().items():
        module = module.to(DEVICE).train()
        attention = isinstance(module, nn.MultiheadAttention)

        def forward() -> torch.Tensor:
            out = module(x, x, x, need_weights=False)[0] if attention else module(x)  # noqa: B023
            return out

        def loss_only(out: torch.Tensor = forward().detach().requires_grad_()) -> object:
            return out.sum().backward()

        def forward_backward() -> object:
            return forward().sum().backward()

        forward_s, summed_s, both_s = _queued(forward), _queued(loss_only), _queued(forward_backward)
        results["modules"][name] = {"forward_s": forward_s, "backward_s": max(both_s - forward_s - summed_s, 0.0),
                                    "sum_backward_s": summed_s, "forward_backward_s": both_s}
        row = results["modules"][name]
        print(f"{name:<34} forward {forward_s * 1e6:7.1f} us  backward {row['backward_s'] * 1e6:7.1f} us", flush=True)
    for optimizer_name, make in (("Adam", lambda p: torch.optim.Adam(p, lr=1e-3)), ("AdamW", lambda p: torch.optim.AdamW(p, lr=1e-3)),
                                 ("SGD momentum", lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9)), ("SGD", lambda p: torch.optim.SGD(p, lr=1e-2))):
        for count in (2, 8, 32, 128):
            parameters = [nn.Parameter(torch.randn(256, 256, device=DEVICE)) for _ in range(count)]
            for parameter in parameters:
                parameter.grad = torch.randn_like(parameter)
            optimizer = make(parameters)
            step_s = _queued(optimizer.step)
            zero_s = _queued(lambda: optimizer.zero_grad(set_to_none=False))  # noqa: B023
            results["optimizers"][f"{optimizer_name} x{count}"] = {"step_s": step_s, "zero_grad_in_place_s": zero_s}
            print(f"{optimizer_name + ' x' + str(count):<34} step {step_s * 1e6:7.1f} us  zero_grad(in place) {zero_s * 1e6:6.1f} us", flush=True)
    a = torch.randn(512, 256, device=DEVICE)
    labels = torch.randint(0, 10, (512,), device=DEVICE)
    logits = torch.randn(512, 10, device=DEVICE)
    for name, call in (("a + a", lambda: a + a), ("a.sum()", lambda: a.sum()), ("F.cross_entropy", lambda: nn.functional.cross_entropy(logits, labels)),
                       ("a[labels]", lambda: a[labels]), ("loss.item()", lambda: a.sum().item())):
        results["ops"][name] = {"queued_s": _queued(call)}
        print(f"{name:<34} {results['ops'][name]['queued_s'] * 1e6:7.1f} us", flush=True)
    with open(sys.argv[1], "w") as out:
        json.dump({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, **results}, out, indent=1)


if __name__ == "__main__":
    main()
