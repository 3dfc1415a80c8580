"""Convert Liger-Kernel's eager-PyTorch reference timings (H100, B200, RTX 3090) into training rows.

Liger-Kernel (github.com/linkedin/Liger-Kernel) times each of its Triton kernels against the eager
PyTorch code it replaces and appends every result to `benchmark/data/all_benchmark_data*.csv`
(one row per kernel, provider, mode and size, with the GPU's name). Only the eager PyTorch
("torch") rows in "forward" mode are kept, and only for kernels one `predict` op expresses:
ReLU squared and Megatron's SwiGLU (elementwise chains), DyT (an elementwise chain whose
per-column and one-element operands are written as scalars: read from cache, they add no
traffic) and softmax. The time is `triton.testing.do_bench(..., quantiles=[0.5, 0.2, 0.8])`'s
median: CUDA events around each call, L2 cleared before each, so rows carry `timing=kernel`.

    python3 tools/import_liger.py path/to/Liger-Kernel   # a checkout at the commit named in HEADER
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import NamedTuple

from published_rows import gpu_row, write_source

DTYPES = {"torch.float32": "float32", "torch.bfloat16": "bfloat16"}


class Kernel(NamedTuple):
    """How one Liger benchmark's eager-PyTorch rows become predict requests."""

    data_file: str  # under benchmark/data/
    op: str
    #: The benchmark's x value and its extra config -> the operand shapes.
    shapes: str
    expression: str = ""
    #: The dtype the chain runs in, where the config names none or PyTorch's type promotion changes it.
    dtype: str = ""


#: kernel_name -> how its rows are costed, from benchmark/scripts/benchmark_<kernel>.py at the commit that added
#: the rows (named in HEADER); the torch code each times is quoted.
KERNELS: dict[str, Kernel] = {
    # TorchReLUSquared: torch.square(torch.nn.functional.relu(x)), x = randn(M, N): two kernels.
    "relu_squared": Kernel("all_benchmark_data.csv", "expr", "{M}x{x}", "square(relu(x))"),
    # y = randn(S, B, 2 * ffn_local, bfloat16); y_1, y_2 = torch.chunk(y, 2, -1); F.silu(y_1) * y_2: two kernels
    # over S*B rows of ffn_local columns (the halves are strided views; each row of them is contiguous).
    "megatron_swiglu": Kernel("all_benchmark_data.csv", "expr", "{SB}x{x};{SB}x{x}", "silu(x)*y", "bfloat16"),
    # torch.nn.Softmax(dim=-1) on randn(M, N).
    "softmax": Kernel("all_benchmark_data.csv", "softmax", "{M}x{x}"),
    # TorchDyT: gamma * torch.tanh(x * alpha) (+ beta), alpha a one-element tensor, gamma and beta of hidden_size:
    # three (four) kernels, each streaming one BT x hidden array in and one out. The module is moved to the GPU but
    # not cast: alpha, gamma and beta stay float32, and alpha has one dimension (not a 0-d scalar), so x * alpha
    # promotes the bfloat16 x to float32 and the chain runs in float32 from its first result on.
    "dyt": Kernel("all_benchmark_data_cutile.csv", "expr", "{x}x{hidden_size}", "2*tanh(x*0.5)", "float32"),
    # The B200 softmax series of the cuTile comparison: torch.nn.Softmax(dim=-1) on randn(BT, hidden_size).
    "softmax_cutile": Kernel("all_benchmark_data_cutile.csv", "softmax", "{x}x{hidden_size}"),
}

HEADER = """\
# source: https://github.com/linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv and
#   benchmark/data/all_benchmark_data_cutile.csv, read at commit ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c; rows added by
#   39a1f454 (relu_squared, 2026-03-27, liger 0.7.0), 2120862b (megatron_swiglu, 2026-07-26, liger 0.8.1), 5d25e468
#   (softmax, RTX 3090, 2025-04-30, liger 0.5.8) and 7a12e092 (dyt and softmax, B200, 2026-07, liger 0.8.0); the code
#   timed is benchmark/scripts/benchmark_<kernel>.py and test/transformers/test_dyt.py at those commits.
#   Converted by tools/import_liger.py
# GPU: the CSV's gpu_name column (torch.cuda.get_device_name): "NVIDIA H100 80GB HBM3" (H100 SXM5), "NVIDIA B200",
#   "NVIDIA GeForce RTX 3090"
# libs: PyTorch eager (the "torch" provider, the reference each Liger kernel replaces); versions not recorded
# what: forward mode only (inputs with requires_grad=True; no backward timed): torch.square(F.relu(x)) on 4096 x N
#   bfloat16 (N = 128..16384); F.silu(y_1) * y_2 over torch.chunk(y, 2, -1) of a (2048, 4, 2F) bfloat16 y
#   (F = 1024..32768); torch.nn.Softmax(dim=-1) on 2048 x N (N = 128..4096) float32 and bfloat16 (RTX 3090) and on
#   BT x 4096 bfloat16 (BT = 1024..8192, B200); DyT gamma * tanh(x * alpha) [+ beta] on a BT x 4096 bfloat16 x
#   (B200), written 2*tanh(x*0.5) [+1]: alpha (one element) and gamma, beta (4096 elements) stay in cache, so the
#   kernels and traffic are those of the scalar form; dtype float32, since the module's float32 parameters (not cast;
#   alpha has shape (1,), not 0-d) promote x * alpha and everything after it to float32
# timing: triton.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8], grad_to_none=[x]) median (y_value_50, ms): CUDA events
#   around each call, L2 cleared before each: kernel time, params timing=kernel (launches overlap the cache clear) and l2=flushed
# left out: the Liger/Triton/cuTile providers; backward and full modes; kernels no predict op expresses (layer_norm,
#   rms_norm, group_norm, cross_entropy and the losses, rope, embedding, attention); the Hugging Face MLP rows of
#   swiglu/geglu (three GEMMs and a chain in one timing); torch_compile rows
# reliability: MEDIUM-HIGH (one automated harness, median of many calls at 1 us event resolution, one run per size)
"""


def _shape(kernel: Kernel, x: int, config: dict[str, object]) -> str:
    sizes = {key: value for key, value in config.items() if isinstance(value, int) and not isinstance(value, bool)}
    if "S" in sizes and "B" in sizes:
        sizes["SB"] = sizes["S"] * sizes["B"]
    return kernel.shapes.format(x=x, **sizes)


def _expression(kernel: Kernel, config: dict[str, object]) -> str:
    return f"{kernel.expression}+1" if config.get("beta") is True else kernel.expression


def rows(checkout: Path) -> list[dict[str, str]]:
    out = []
    for name, kernel in KERNELS.items():
        table = checkout / "benchmark" / "data" / kernel.data_file
        with open(table, newline="", encoding="utf-8") as handle:
            for record in csv.DictReader(handle):
                if (record["kernel_name"], record["kernel_provider"]) != (name.removesuffix("_cutile"), "torch"):
                    continue
                if record["kernel_operation_mode"] != "forward" or record["metric_name"] != "speed":
                    continue
                config = json.loads(record["extra_benchmark_config_str"])
                dtype = kernel.dtype or DTYPES[str(config["dtype"])]
                expression = _expression(kernel, config)
                params = [f"expr={expression}"] if expression else []
                out.append(gpu_row(
                    kernel.op, _shape(kernel, int(record["x_value"]), config), dtype, ";".join([*params, "timing=kernel", "l2=flushed"]),
                    float(record["y_value_50"]) * 1e-3, record["gpu_name"], "liger_kernel", record["timestamp"][:10],
                    library_version=f"liger {record['liger_version']}",
                ))
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_source("liger_kernel", HEADER, rows(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
