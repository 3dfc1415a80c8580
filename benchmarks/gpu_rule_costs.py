"""What a rule's anti-pattern costs on a real GPU: the bad and the good example of a rule, timed side by side.

Runs on a GPU machine with torch (and torchvision where there) only. For GPU802 (autograd left on in an
evaluation loop): a model in eval() mode run over batches with autograd on, as the rule reports it, and
under torch.no_grad() and torch.inference_mode(), its fix; per model, the time per batch (median of the
timed batches, the device synchronised before each clock read and the batch's outputs kept alive until
the next batch replaces them, as `outputs = model(x)` in a loop does) and the peak memory the loop
allocates above the model's own.

Usage: python benchmarks/gpu_rule_costs.py OUT.json
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator

import torch

BATCHES = 12
#: Autograd on is timed first and again last: a difference between the two is drift, not the fix.
MODES = ("autograd on", "no_grad", "inference_mode", "autograd on (again)")


def _models() -> Iterator[tuple[str, torch.nn.Module, Callable[[], torch.Tensor]]]:
    try:
        import torchvision  # noqa: PLC0415  (optional there)

        yield "resnet50 fp32, 128x3x224x224", torchvision.models.resnet50(), lambda: torch.randn(128, 3, 224, 224, device="cuda")
    except ImportError:
        pass
    layer = torch.nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)
    yield "transformer encoder 12x1024 fp32, 32x512 tokens", encoder, lambda: torch.randn(32, 512, 1024, device="cuda")
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    yield "MLP 256-512-512-10, batch 512", mlp, lambda: torch.randn(512, 256, device="cuda")


def _loop(model: torch.nn.Module, make: Callable[[], torch.Tensor], mode: str) -> dict[str, float]:
    context = {"autograd on": contextlib.nullcontext, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[mode.split(" (")[0]]
    inputs = [make() for _ in range(4)]
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    times = []
    outputs = None
    with context():
        for step in range(BATCHES + 2):
            torch.cuda.synchronize()
            start = time.perf_counter()
            outputs = model(inputs[step % len(inputs)])
            torch.cuda.synchronize()
            if step >= 2:  # two warm-up batches: cuDNN's algorithm search, the allocator's first blocks
                times.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated() - base
    del outputs
    return {"median_s": statistics.median(times), "peak_extra_bytes": float(peak)}


def main() -> None:
    results: dict[str, dict[str, dict[str, float]]] = {}
    for name, model, make in _models():
        model = model.cuda().eval()
        results[name] = {mode: _loop(model, make, mode) for mode in MODES}
        rows = results[name]
        print(f"{name}: " + ", ".join(f"{mode} {row['median_s'] * 1e3:.2f} ms {row['peak_extra_bytes'] / 2**20:.0f} MiB" for mode, row in rows.items()), flush=True)
        del model
        torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as out:
        json.dump({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "models": results}, out, indent=1)


if __name__ == "__main__":
    main()
