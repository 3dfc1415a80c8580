"""Convert KernelBench's eager-PyTorch reference timings on two H100s into training rows.

KernelBench (github.com/ScalingIntelligence/KernelBench) times the PyTorch reference module of
each of its problems before scoring generated kernels against it, and commits the results per
GPU as `results/timing/<GPU>/baseline_time_torch.json` (mean, std, min, max of 100 trials, ms).
Only level-1 problems that one `predict` op expresses are kept (single matrix products,
elementwise activations, softmax, reductions along an axis, argmax/argmin, MinGPT's GELU chain);
their shapes are constants in `KernelBench/level1/<problem>.py`, written down in PROBLEMS below.
Inputs are `torch.rand` float32 on the device; PyTorch's default keeps float32 matrix products
off TF32.

    python3 tools/import_kernelbench.py path/to/KernelBench   # a checkout at the commit named in HEADER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from published_rows import gpu_row, write_source

#: Problem file (level 1) -> (predict op, shapes, params) from its get_inputs() and forward().
PROBLEMS: dict[str, tuple[str, str, str]] = {
    "1_Square_matrix_multiplication_": ("matmul", "4096x4096;4096x4096", ""),
    "2_Standard_matrix_multiplication_": ("matmul", "2048x8192;8192x4096", ""),
    "3_Batched_matrix_multiplication": ("matmul", "128x512x1024;128x1024x2048", ""),                # torch.bmm
    "4_Matrix_vector_multiplication_": ("matmul", "2048x1048576;1048576x1", ""),
    "5_Matrix_scalar_multiplication": ("expr", "65536x16384", "expr=x*3.14"),
    "6_Matmul_with_large_K_dimension_": ("matmul", "256x524288;524288x256", ""),
    "7_Matmul_with_small_K_dimension_": ("matmul", "32768x64;64x32768", ""),
    "8_Matmul_with_irregular_shapes_": ("matmul", "8205x2949;2949x5921", ""),
    "9_Tall_skinny_matrix_multiplication_": ("matmul", "32768x32;32x32768", ""),
    # (16, 1024, 2048) @ (2048, 768): torch folds the leading dimensions into one 16384-row GEMM.
    "10_3D_tensor_matrix_multiplication": ("matmul", "16384x2048;2048x768", ""),
    "13_Matmul_for_symmetric_matrices": ("matmul", "4096x4096;4096x4096", ""),
    # A.T, B.T: transposed views, handed to cuBLAS as transposed operands (no copy).
    "16_Matmul_with_transposed_A": ("matmul", "2048x8192;8192x4096", ""),
    "17_Matmul_with_transposed_B": ("matmul", "2048x8192;8192x4096", ""),
    "18_Matmul_with_transposed_both": ("matmul", "2048x8192;8192x4096", ""),
    "19_ReLU": ("expr", "4096x393216", "expr=relu(x)"),
    "20_LeakyReLU": ("expr", "4096x393216", "expr=leaky_relu(x)"),
    "21_Sigmoid": ("expr", "4096x393216", "expr=sigmoid(x)"),
    "22_Tanh": ("expr", "4096x393216", "expr=tanh(x)"),
    "23_Softmax": ("softmax", "4096x393216", ""),                                                   # dim=1, the last
    "25_Swish": ("expr", "4096x393216", "expr=x*sigmoid(x)"),
    "26_GELU_": ("expr", "4096x393216", "expr=gelu(x)"),
    "27_SELU_": ("expr", "4096x393216", "expr=selu(x)"),
    "29_Softplus": ("expr", "4096x393216", "expr=softplus(x)"),
    "30_Softsign": ("expr", "4096x393216", "expr=x/(1+abs(x))"),
    "31_ELU": ("expr", "4096x393216", "expr=elu(x)"),
    "32_HardTanh": ("expr", "4096x393216", "expr=clip(x,-1.0,1.0)"),                               # one clamp kernel
    "47_Sum_reduction_over_a_dimension": ("sum", "128x4096x4095", "axis=1"),
    "48_Mean_reduction_over_a_dimension": ("mean", "128x4096x4095", "axis=1"),
    "51_Argmax_over_a_dimension": ("argmax", "128x4096x4095", "axis=1"),
    "52_Argmin_over_a_dimension": ("argmax", "128x4096x4095", "axis=1"),                          # the same kernel, min
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))): eight kernels.
    "88_MinGPTNewGelu": ("expr", "8192x8192", "expr=0.5*x*(1.0+tanh(0.7978845608*(x+0.044715*x**3)))"),
}

#: run folder -> (date, torch version, the params its timing adds: the SXM run thrashes L2 before each trial)
RUNS: dict[str, tuple[str, str, str]] = {
    "H100_Modal": ("2025-12-31", "torch 2.9.0", "timing=kernel;l2=flushed"),
    "H100_PCIe_LambdaLabs": ("2025-07-21", "torch 2.5.0", "timing=kernel"),
}

HEADER = """\
# source: https://github.com/ScalingIntelligence/KernelBench results/timing/H100_Modal/baseline_time_torch.json (added by
#   1f8d20fa, 2025-12-31, PyTorch 2.9.0 per pyproject.toml) and results/timing/H100_PCIe_LambdaLabs/baseline_time_torch.json
#   (last changed by 129232ea, 2025-07-21, PyTorch 2.5.0 per requirements.txt), both read at commit
#   1f8d20fa06357a9c343f4508887b6da22f114752; shapes from KernelBench/level1/<problem>.py at that commit (the level-1
#   problems used here are unchanged between the two runs). Converted by tools/import_kernelbench.py
# GPU: the JSON's "hardware" field (torch.cuda.get_device_name): "NVIDIA H100 80GB HBM3" (H100 SXM on Modal, 700 W) and
#   "NVIDIA H100 PCIe" (Lambda Labs, 350 W)
# libs: PyTorch eager (the reference Model of each problem, under torch.no_grad), cuBLAS; float32 inputs from torch.rand,
#   TF32 off (PyTorch's default for matrix products)
# what: level-1 problems: float32 matrix products (4096^3 square and symmetric; 2048x8192 @ 8192x4096 plain and with
#   A, B or both transposed; bmm 128 x 512x1024 @ 1024x2048; GEMV 2048x1048576 @ 1048576x1; large K 256x524288 @
#   524288x256; small K 32768x64 @ 64x32768; tall-skinny 32768x32 @ 32x32768; irregular 8205x2949 @ 2949x5921;
#   (16,1024,2048) @ 2048x768); A * 3.14 on 65536x16384; relu, leaky_relu, sigmoid, tanh, x * sigmoid(x), gelu, selu,
#   softplus, x / (1 + |x|), elu, hardtanh on 4096x393216; softmax over rows of 393216; sum, mean, argmax and argmin
#   (costed as argmax) over the middle axis of 128x4096x4095; MinGPT's tanh GELU (8 kernels) on 8192x8192
# timing: the JSON's "mean" (ms) of 100 trials after 3 warm-ups, CUDA events recorded around each call of the model.
#   H100 SXM run: L2 thrashed by a 256 MB fill before each trial, the start event queued behind that fill, so the
#   host's launches are hidden; H100 PCIe run (older harness): events around each call, no cache thrash; every problem
#   here moves 64 MB to 13 GB, so both are kernel time: params timing=kernel, and l2=flushed on the SXM rows
# left out: problems no predict op expresses (diagonal and triangular products, 4-D einsum, normalisations, pooling,
#   convolutions, max/min values, log_softmax, hardsigmoid, cumulative sums, losses, attention); levels 2-3 (fused
#   model blocks); the torch.compile files; the older v0.1 timings (other problem sizes, removed by 58303b0)
# reliability: MEDIUM-HIGH (one automated harness, mean of 100 trials, 3 significant digits; one run per GPU)
"""


def rows(checkout: Path) -> list[dict[str, str]]:
    out = []
    for folder, (when, version, timing) in RUNS.items():
        table = json.loads((checkout / "results" / "timing" / folder / "baseline_time_torch.json").read_text(encoding="utf-8"))
        for problem, (op, shape, params) in PROBLEMS.items():
            stats = table["level1"][f"{problem}.py"]
            params_text = ";".join([p for p in [params, timing] if p])
            out.append(gpu_row(op, shape, "float32", params_text, stats["mean"] * 1e-3, stats["hardware"], "kernelbench_h100",
                               when, library_version=version))
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_source("kernelbench_h100", HEADER, rows(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
