"""Convert stas00/ml-engineering's Maximum Achievable Matmul FLOPS table into training rows.

`compute/accelerator/README.md`, section "Maximum Achievable Matmul FLOPS comparison table",
BF16 part: per accelerator, the best `torch.mm` shape its `mamf-finder.py` search found and the
TFLOP/s it reached there, each measured by a contributor on their own machine with the finder of
2025 (the rows of the 2024 finder, with N as the reduction, are the ones mag-/gpu_benchmark
copied and `mamf_best_shapes.csv` holds: a different measurement of the same GPUs). Only the
NVIDIA GPUs with a catalogue profile are kept; the table is transcribed below.

    python3 tools/import_ml_engineering.py
"""

from __future__ import annotations

from published_rows import gpu_row, write_source

HEADER = """\
# source: https://github.com/stas00/ml-engineering compute/accelerator/README.md, section "Maximum Achievable Matmul
#   FLOPS comparison table", BF16 part (snapshot commit 744d01e18b79512572f64a6bbd8b5f4a725203a7); rows entered on
#   2025-01-04 (A100 SXM, A100 PCIe: commits 16c2d5a, 15791b3), 2025-01-05 (H100 SXM: 37acbf2), 2025-07-07 (B200: 176443c)
# method: compute/accelerator/benchmarks/mamf-finder.py as of those commits: a search over shapes of
#   torch.mm(A, B, out=C), A = randn(M, K) contiguous, B = randn(N, K).t() (K is the reduction; the table's "MxNxK");
#   the best shape by mean TFLOP/s is reported; seconds = 2*M*N*K / (TFLOPS * 1e12)
# timing: CUDA events around each torch.mm, a 256 MiB buffer zeroed (L2 flushed) and C rewritten before each call, mean
#   of 100 after 50 warm-up calls: kernel time plus the gap between the events: params timing=kernel;l2=flushed
# libs: PyTorch 2.6.0+cu126 (A100 SXM), 2.5.1+cu124 (A100 PCIe), 2.7.0+cu126 (H100 SXM), 2.7.1+cu128 (B200); cuBLAS(Lt)
# GPUs kept: those with a catalogue profile. "A100 PCIe" is taken as the 80GB board and "A100 SXM" as the 80GB SXM4
#   (memory size not stated; it changes bandwidth, not the tensor-core rate a large product runs at)
# left out: GH200 (900 W), B300, GB200 (no catalogue profile), Intel Gaudi 2/3, AMD MI300X/MI325X/MI355X (not NVIDIA,
#   no profile), the FP8 table (no predict dtype)
# independence: the same method as mamf_best_shapes.csv (whose A100 and H100 SXM rows are this table's 2024 version),
#   re-measured with the 2025 finder (L2 flush and rewritten output per call) and other PyTorch versions
# reliability: MEDIUM (one number per GPU, the best of a shape search: the top of what cuBLAS reaches, not a typical shape)
"""

#: (GPU as torch names it, M, N, K, bf16 TFLOP/s), K the reduction: the BF16 table's NVIDIA rows with a profile.
ROWS = (
    ("NVIDIA A100-SXM4-80GB", 1024, 10240, 5120, 271.2),
    ("NVIDIA A100 80GB PCIe", 2048, 5120, 6144, 252.9),
    ("NVIDIA H100 80GB HBM3", 2048, 2048, 13312, 794.5),
    ("NVIDIA B200", 1792, 16128, 3072, 1745.0),
)


def main() -> None:
    rows = [
        gpu_row("matmul", f"{m}x{k};{k}x{n}", "bfloat16", "timing=kernel;l2=flushed", 2.0 * m * n * k / (tflops * 1e12), gpu, "mlengineering_mamf", "2025")
        for gpu, m, n, k, tflops in ROWS
    ]
    write_source("mlengineering_mamf", HEADER, rows)


if __name__ == "__main__":
    main()
