"""Convert FlagPerf's native-PyTorch operator timings on an A100 40GB SXM into training rows.

FlagPerf (github.com/FlagOpen/FlagPerf, `operation/benchmarks/<op>/nvidia/A100_40_SXM/<DTYPE>_README.md`)
times each operator once per dtype with PyTorch ("nativetorch") and with FlagGems; only the
nativetorch row is kept. Its "kerneltime" column is `triton.testing.do_bench(..., return_mode="median")`:
CUDA events around each call, L2 cleared before each, the median of the samples, so rows carry
`timing=kernel`. Shapes and arguments are read from each op's `main.py` and `case_config.yaml` at the
same commit and written down in OPS below (they are constants there, not parsed).

    python3 tools/import_flagperf.py path/to/FlagPerf   # a checkout at the commit named in HEADER
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from published_rows import gpu_row, write_source

GPU = "NVIDIA A100-SXM4-40GB"
CUBE = "1024x1024x1024"  # torch.randn(Melements, 1024, 1024), Melements = 1024 (or the same 2**30 elements flat)

#: FlagPerf op -> (predict op, shape, params) from operation/benchmarks/<op>/main.py and case_config.yaml.
OPS: dict[str, tuple[str, str, str]] = {
    "add": ("add", f"{CUBE};{CUBE}", ""),                      # torch.add(a, b)
    "sub": ("expr", f"{CUBE};{CUBE}", "expr=x-y"),             # torch.sub(a, b)
    "mul": ("expr", "1073741824", "expr=x*2"),                 # torch.mul(a, 2), a flat
    "div": ("expr", "1073741824", "expr=x/0.5"),               # torch.div(a, 0.5), a flat
    "pow": ("expr", CUBE, "expr=x**2"),                        # torch.pow(a, 2)
    "neg": ("expr", CUBE, "expr=-x"),                          # torch.neg(a)
    "abs": ("expr", CUBE, "expr=abs(x)"),                      # torch.abs(a)
    "reciprocal": ("expr", CUBE, "expr=reciprocal(x)"),        # torch.reciprocal(a)
    "rsqrt": ("expr", CUBE, "expr=rsqrt(x)"),                  # torch.rsqrt(a)
    "cos": ("expr", CUBE, "expr=cos(x)"),                      # torch.cos(a)
    "sin": ("sin", CUBE, ""),                                  # torch.sin(a)
    "exp": ("exp", "1073741824", ""),                          # torch.exp(a), a flat
    "sum": ("sum", CUBE, ""),                                  # torch.sum(a): every element
    "mean": ("mean", CUBE, ""),                                # torch.mean(a): every element
    "argmax": ("argmax", "81920x81920", "axis=1"),             # torch.argmax(a, 1), a is (M*80, N*80), M = N = 1024
    "mm": ("matmul", "8192x8192;8192x8192", ""),               # torch.mm(a, b), M = N = K = 8192
    "bmm": ("matmul", "2x4096x4096;2x4096x4096", ""),          # torch.bmm(a, b), BS = 2, M = N = K = 4096
    "mv": ("matmul", "1024x1024;1024x1", ""),                  # torch.mv(a, b), a 1024 x 1024, b 1024 (a GEMV)
}
DTYPES = {"FP32": "float32", "FP16": "float16", "BF16": "bfloat16"}

#: mm in FP32 ran at 127 TFLOP/s, 6.5x the A100's 19.5 TFLOP/s FP32 peak: TF32 tensor cores (mm's main.py,
#: unlike bmm's, never calls set_ieee_float32, which sets allow_tf32 = False; bmm in FP32 ran at 19.1 TFLOP/s).
TF32 = {("mm", "FP32")}

HEADER = """\
# source: https://github.com/FlagOpen/FlagPerf operation/benchmarks/<op>/nvidia/A100_40_SXM/{FP32,FP16,BF16}_README.md,
#   read at commit 1b5a030398ab719e406f77877eb34c9599b17fd2 (results committed 2024-08-06 to 2024-08-15: 9869bf51,
#   a5b9e7f7, 19dc3839); shapes and arguments from operation/benchmarks/<op>/main.py and case_config.yaml (unchanged
#   for nvidia since the results were committed). Converted by tools/import_flagperf.py
# GPU: NVIDIA A100 40GB SXM4 (README: "A100-40GiB-SXM", TDP 400W, in a DGX A100 with AMD EPYC 7742)
# libs: PyTorch of the NGC container nvcr.io/nvidia/pytorch:24.03-py3 (operation/vendors/nvidia/ngctorch2403, the image
#   the nvidia cases are configured with; the READMEs do not repeat it), cuBLAS; only the "nativetorch" row is used
# what: one eager torch call per row: torch.add/sub(a, b), mul(a, 2), div(a, 0.5), pow(a, 2), neg, abs, reciprocal,
#   rsqrt, cos, sin, exp on 2**30 elements (torch.randn(1024, 1024, 1024), or flat); sum and mean of all 2**30 elements;
#   argmax(a, 1) of 81920 x 81920; mm 8192^3; bmm 2 x 4096^3; mv 1024 x 1024 by 1024 (costed as a 1024x1024;1024x1
#   product); each in float32, float16 and bfloat16. mm in float32 ran at 127 TFLOP/s (6.5x the FP32 peak): TF32,
#   params tf32=1; bmm in float32 ran at 19.1 TFLOP/s after set_ieee_float32 (allow_tf32 = False): plain FP32
# timing: the README's "kerneltime" column: triton.testing.do_bench(return_mode="median") after 10 warm-up ms, over 1000
#   ms of calls: CUDA events around each call, L2 cleared before each: kernel time, params timing=kernel and l2=flushed. (The
#   "cputime" column, the mean of 50,000 calls launched back to back, and the single "warm latency" are not used.)
# left out: ops with no predict op (max, min, amax, prod, all, comparisons, bitwise, isinf/isnan, triu, outer, linear,
#   addmm, dropout, norms, softmax/log_softmax, cross_entropy_loss), rsub (same kernel as sub), ops timed with their
#   backward pass (tanh, sigmoid, relu, silu), gelu (approximation not stated), the FlagGems rows, int dtypes
# reliability: MEDIUM-HIGH (one automated harness, median kernel time; one size per op, one run, 2-3 digit rounding)
"""


def _kernel_seconds(readme: str) -> float:
    """The nativetorch row's kerneltime (microseconds) from the "其他评测结果" table."""
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] == "nativetorch" and re.fullmatch(r"[\d.]+us", cells[2]):
            return float(cells[2][:-2]) * 1e-6
    raise ValueError("no nativetorch kerneltime row")


def rows(checkout: Path) -> list[dict[str, str]]:
    out = []
    for name, (op, shape, params) in OPS.items():
        for tag, dtype in DTYPES.items():
            readme = checkout / "operation" / "benchmarks" / name / "nvidia" / "A100_40_SXM" / f"{tag}_README.md"
            seconds = _kernel_seconds(readme.read_text(encoding="utf-8"))
            extra = ["tf32=1"] if (name, tag) in TF32 else []
            params_text = ";".join([p for p in [params, *extra] if p] + ["timing=kernel", "l2=flushed"])
            out.append(gpu_row(op, shape, dtype, params_text, seconds, GPU, "flagperf_a100", "2024-08"))
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_source("flagperf_a100", HEADER, rows(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
