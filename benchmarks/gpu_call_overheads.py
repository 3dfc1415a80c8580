"""What one library call costs the host on a GPU machine: the per-call figures behind the launch costs
the op model and `profile` charge (prediction/libraries.py GPU_LAUNCH_S, profiling/torch_modules.py).

Runs on a GPU machine with CuPy and torch only. Each case is a call on small device data, as the inner
loop of a script makes it; two figures per case:
- ``queued``: calls issued back to back with one device synchronisation at the end, divided by their
  number: what a loop of such calls costs while the host, not the GPU, is the bottleneck;
- ``waited``: the median of single calls each followed by a synchronisation: launch, kernel and wait.

Usage: python benchmarks/gpu_call_overheads.py OUT.json
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator

Case = tuple[str, Callable[[], object]]


def _cupy_cases() -> Iterator[Case]:
    import cupy  # noqa: PLC0415  (GPU machine only)
    import cupyx  # noqa: PLC0415
    import cupyx.scipy.sparse as sparse  # noqa: PLC0415

    a, b = cupy.random.standard_normal(1000), cupy.random.standard_normal(1000)
    s, t = a.sum(), b.sum()
    p, q = cupy.random.standard_normal(90_000), cupy.random.standard_normal(90_000)
    frames = cupy.random.standard_normal((512, 1024), dtype=cupy.float32)
    features = cupy.random.standard_normal((18_749, 513), dtype=cupy.float32)
    labels = cupy.random.randint(0, 8, 18_749)
    distances = cupy.random.standard_normal((60_000, 24))
    assign = cupy.random.randint(0, 24, 60_000)
    points = cupy.random.standard_normal((60_000, 16))
    sums = cupy.zeros((24, 16))
    small, weights = cupy.random.standard_normal((512, 513), dtype=cupy.float32), cupy.random.standard_normal((513, 64), dtype=cupy.float32)
    side = 300
    one_d = sparse.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(side, side))
    eye = sparse.identity(side)
    laplacian = (sparse.kron(one_d, eye) + sparse.kron(eye, one_d)).tocsr()
    yield "cupy a + b (1000 float64)", lambda: a + b
    yield "cupy a * 2.0 (1000 float64)", lambda: a * 2.0
    yield "cupy 0-d s / t", lambda: s / t
    yield "cupy a.sum() (1000)", lambda: a.sum()
    yield "cupy features.mean(axis=0) (18749x513 float32)", lambda: features.mean(axis=0)
    yield "cupy p @ q (90000 float64 dot)", lambda: p @ q
    yield "cupy linalg.norm(p) (90000)", lambda: cupy.linalg.norm(p)
    yield "cupy bool(linalg.norm(p) < 1e-8) (host read)", lambda: bool(cupy.linalg.norm(p) < 1e-8)
    yield "cupy q + (s / t) * p (3 kernels)", lambda: q + (s / t) * p
    yield "cupyx csr @ p (90000, nnz 448800)", lambda: laplacian @ p
    yield "cupy rfft(frames, axis=1) (512x1024 float32)", lambda: cupy.fft.rfft(frames, axis=1)
    yield "cupy small @ weights (512x513 @ 513x64 float32)", lambda: small @ weights
    yield "cupy features[labels == k] (boolean mask, 18749x513)", lambda: features[labels == 3]
    yield "cupy argmin(distances, axis=1) (60000x24)", lambda: cupy.argmin(distances, axis=1)
    yield "cupy bincount(assign, minlength=24)", lambda: cupy.bincount(assign, minlength=24)
    yield "cupyx.scatter_add(sums, assign, points)", lambda: cupyx.scatter_add(sums, assign, points)
    yield "cupy zeros((24, 16))", lambda: cupy.zeros((24, 16))


def _torch_cases() -> Iterator[Case]:
    import torch  # noqa: PLC0415
    import torch.nn as nn  # noqa: PLC0415
    import torch.nn.functional as F  # noqa: PLC0415

    device = "cuda"
    a, b = torch.randn(1000, device=device), torch.randn(1000, device=device)
    features = torch.randn(16_384, 256, device=device)
    targets = torch.randint(0, 4, (16_384,), device=device)
    order = torch.randperm(16_384, device=device)
    idx = order[:512]
    x = features[idx]
    linear = nn.Linear(256, 512).to(device)
    mlp = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 4)).to(device)
    adam = torch.optim.Adam(mlp.parameters(), lr=1e-3)
    cnn = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 10),
    ).to(device)
    sgd = torch.optim.SGD(cnn.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(64, 3, 32, 32, device=device)
    image_labels = torch.randint(0, 10, (64,), device=device)
    conv = cnn[0]

    def mlp_forward() -> object:
        return F.cross_entropy(mlp(features[idx]), targets[idx])

    def mlp_backward() -> object:
        loss = mlp_forward()
        loss.backward()
        return loss

    def mlp_step() -> object:
        loss = mlp_forward()
        adam.zero_grad()
        loss.backward()
        adam.step()
        return loss

    def cnn_forward() -> object:
        return F.cross_entropy(cnn(images), image_labels)

    def cnn_backward() -> object:
        loss = cnn_forward()
        loss.backward()
        return loss

    def cnn_step() -> object:
        loss = cnn_forward()
        sgd.zero_grad()
        loss.backward()
        sgd.step()
        return loss

    mlp_backward()
    cnn_backward()
    yield "torch a + b (1000)", lambda: a + b
    yield "torch a * 2.0 (1000)", lambda: a * 2.0
    yield "torch features[idx] (gather 512 rows of 256)", lambda: features[idx]
    yield "torch linear(x) (512x256 -> 512)", lambda: linear(x)
    yield "torch F.relu(x)", lambda: F.relu(x)
    yield "torch MLP 256-512-512-4 forward + cross_entropy", mlp_forward
    yield "torch MLP forward + backward", mlp_backward
    yield "torch Adam.step() (6 tensors, default foreach)", adam.step
    yield "torch Adam.zero_grad()", adam.zero_grad
    yield "torch MLP train step (forward, zero_grad, backward, Adam)", mlp_step
    yield "torch conv(images) (Conv2d 3->32 on 64x3x32x32)", lambda: conv(images)
    yield "torch CNN forward + cross_entropy (2 conv, 2 bn)", cnn_forward
    yield "torch CNN forward + backward", cnn_backward
    yield "torch SGD momentum step (10 tensors)", sgd.step
    yield "torch CNN train step (forward, zero_grad, backward, SGD)", cnn_step


def _measure(call: Callable[[], object], sync: Callable[[], None]) -> dict[str, float]:
    for _ in range(5):
        call()
    sync()
    count = 20
    while True:
        start = time.perf_counter()
        for _ in range(count):
            call()
        sync()
        elapsed = time.perf_counter() - start
        if elapsed > 0.05 or count >= 20_000:
            break
        count *= 4
    waited = []
    for _ in range(min(200, max(count // 4, 20))):
        sync()
        start = time.perf_counter()
        call()
        sync()
        waited.append(time.perf_counter() - start)
    return {"queued_s": elapsed / count, "waited_s": statistics.median(waited), "calls": count}


def main() -> None:
    import cupy  # noqa: PLC0415
    import torch  # noqa: PLC0415

    def sync() -> None:
        cupy.cuda.runtime.deviceSynchronize()

    results: dict[str, dict[str, float]] = {}
    for cases in (_cupy_cases, _torch_cases):
        try:
            for name, call in cases():
                results[name] = _measure(call, sync)
                row = results[name]
                print(f"{name:<60} queued {row['queued_s'] * 1e6:8.1f} us   waited {row['waited_s'] * 1e6:8.1f} us", flush=True)
        except Exception as error:  # noqa: BLE001  (one library's failure leaves the other's rows)
            print(f"{cases.__name__}: {error!r}", flush=True)
    with open(sys.argv[1], "w") as out:
        json.dump({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cupy": cupy.__version__, "calls": results}, out, indent=1)


if __name__ == "__main__":
    main()
