"""GPU estimates of a line's work from its measured CPU time, where the op model has no entry.

The profiler records lines by cost: a line that ran an array library's code (a torch module, an
optimizer step, a random generator, `np.add.at`, a scipy.sparse product...) is in the report
whatever its syntax. When the shared walk finds no op of known shape there (or only a fragment
of the line's measured time), its GPU time is estimated here from what was measured:

- a scipy.sparse matrix product (`A @ x`, `A.dot(x)`) is a cuSPARSE SpMV: it streams the
  matrix's values and column indices once plus the vectors, at the GPU's memory bandwidth;
- a product of two sparse matrices (`A[rows] @ A.T`) is a cuSPARSE SpGEMM, whose cost is the
  number of partial products, which format, shape and nnz do not give: the measured time is
  scaled by SPGEMM_SPEEDUP (both sides scatter partial products into row accumulators);
- anything else is taken as memory-bound array work: the measured time shrinks by the ratio of
  the two sides' memory bandwidths (conservative for compute-bound work such as a module's
  matmuls, whose FLOP ratio is larger, and for CPU code far below its bandwidth such as random
  draws or `np.add.at`), and each operator or call of the statement costs at least one kernel
  launch. Where the line's operands or the arrays it assigned were of known size, the GPU time
  is at most one read and one write of the largest of them per kernel at the GPU's bandwidth
  (a random draw of 40 MB writes 40 MB, however long NumPy's generator took).

A statement that iterates in Python (a comprehension or generator expression) with no op the
model knows is not estimated here: its time is the interpreter's, which stays on the CPU.

These are deliberately coarse (the interval is 3x either way) and the report says which lines
rest on them. Kept apart from prediction/ so the op model stays the single source for ops.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.ops.cost import ITEM_BYTES
from gpuadvisor.prediction.hardware import CpuProfile, GpuProfile
from gpuadvisor.prediction.libraries import GPU_LAUNCH_S, STREAM_EFFICIENCY
from gpuadvisor.profiling.tracer import ArrayWork

#: Uncertainty of an estimate scaled from measured time, as a factor either way.
SPREAD = 3.0
#: cuSPARSE CSR SpMV reaches about 60% of DRAM bandwidth on large, irregular matrices.
SPMV_EFFICIENCY = 0.6
#: cuSPARSE SpGEMM against SciPy's single-threaded SMMP on the same product: published cuSPARSE
#: SpGEMM rates of 1-3 G partial products/s on recent GPUs over SciPy's 0.1-0.3 G/s per core.
SPGEMM_SPEEDUP = 10.0
#: Host time a GPU line spends waiting to read a value back (an `if` on an array, `float(x)`, `.item()`): the
#: wait for the queue, the copy of a few bytes and the wake-up. On the H200 lease host `bool(cupy.linalg.norm(p) <
#: 1e-8)` took 67.6 us a call against 36.4 for the norm alone: 31 us for the comparison's kernel and the read
#: (benchmarks/gpu_call_overheads.py, gpu_truth/call_overheads_h200.json).
HOST_READ_S = 20e-6
#: CuPy's boolean-mask indexing (`features[labels == k]`): the mask's prefix sum, reading its total on the host,
#: the gather, and CuPy's Python around them: 222 us a call for 18749x513 floats on the H200 lease host, where the
#: launches and the read account for about 60 (same file).
CUPY_MASK_INDEX_S = 200e-6
#: cuSPARSE SpMV's setup per call (descriptors, buffer sizing): cupyx's `csr @ vector` of a 90000-row Poisson
#: matrix took 39 us a call on the H200 lease host, 3 us of it streaming (same file).
SPMV_SETUP_S = 25e-6
#: `float(x)`, `int(x)`, `bool(x)`: the builtins that read a GPU value back (the analyzer's list).
_READ_CALLS = frozenset(name.removeprefix("builtins.") for name in kb.SYNCING_BUILTINS)
_SPARSE = re.compile(r"(?P<format>\w+) (?P<rows>\d+)x(?P<cols>\d+) nnz=(?P<nnz>\d+) (?P<dtype>\w+)")

@dataclass(frozen=True)
class Estimate:
    description: str
    gpu_seconds: float  # per run of the line
    low: float  # speedup interval
    high: float

def _reads(node: ast.AST, names: Collection[str]) -> bool:
    """The expression reads one of `names` (dotted names by their first part: `self.w` -> self)."""
    roots = {name.split(".", 1)[0] for name in names}
    return any(isinstance(inner, ast.Name) and inner.id in roots for inner in ast.walk(node))


def kernel_count(statement: str, array_names: Collection[str] = ()) -> int:
    """Operators and calls in a statement: at least one kernel launch each on the GPU. When the
    names that held arrays are known, an operator on none of them is scalar work done on the host
    (`(rate - 0.5 * vol**2) * dt`), not a kernel."""
    tree = _parsed(statement)
    if tree is None:
        return 1
    kinds = (ast.Call, ast.BinOp, ast.AugAssign, ast.UnaryOp, ast.Subscript, ast.Compare)
    scalar_kinds = (ast.BinOp, ast.UnaryOp, ast.Compare)
    return max(1, sum(
        isinstance(node, kinds) and not (array_names and isinstance(node, scalar_kinds) and not _reads(node, array_names))
        for node in ast.walk(tree)
    ))

def _parsed(statement: str) -> ast.AST | None:
    text = statement.strip()
    try:
        return ast.parse(text + " pass" if text.endswith(":") else text)  # `if norm(r) < tol:`
    except SyntaxError:
        return None


def host_reads(statement: str, array_names: Collection[str]) -> tuple[int, int]:
    """Where a statement reads GPU values back on the host: (plain reads, boolean-mask indexings). A plain read
    is an `if`/`while` test on an array, `float(x)` / `int(x)` / `bool(x)` of one, or its `.item()` /
    `.tolist()`; a boolean mask (`x[a == k]`) reads how many elements it keeps before it can gather them."""
    tree = _parsed(statement)
    if tree is None or not array_names:
        return 0, 0
    reads = masks = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While)) and _reads(node.test, array_names):
            reads += 1
        elif isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id in _READ_CALLS and node.args and _reads(node.args[0], array_names):
                reads += 1
            elif isinstance(function, ast.Attribute) and function.attr in kb.SCALAR_SYNC_METHODS and _reads(function.value, array_names):
                reads += 1
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Compare) and _reads(node.slice, array_names):
            masks += 1
    return reads, masks


def iterates_in_python(statement: str, array_names: Collection[str]) -> bool:
    """The statement runs a comprehension or generator expression whose elements read no name
    that held an array: per-element Python work (`" ".join(words[i] for i in ids)`), unlike
    `np.stack([series[i:i + n] for i in range(k)])`, whose elements are array views."""
    tree = _parsed(statement)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and not _reads(node.elt, array_names):
            return True
        if isinstance(node, ast.DictComp) and not (_reads(node.key, array_names) or _reads(node.value, array_names)):
            return True
    return False


def _sparse_times_sparse(statement: str, sparse_names: tuple[str, ...]) -> bool:
    """A `@` whose two sides both read a name that held a scipy.sparse matrix."""
    tree = _parsed(statement)
    if tree is None or not sparse_names:
        return False

    def reads_sparse(node: ast.AST) -> bool:
        return any(isinstance(inner, ast.Name) and inner.id in sparse_names for inner in ast.walk(node))

    return any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and reads_sparse(node.left) and reads_sparse(node.right)
        for node in ast.walk(tree)
    )


def estimate_line(statement: str, cpu_seconds_per_run: float, work: ArrayWork, gpu: GpuProfile, cpu: CpuProfile) -> Estimate:
    """The GPU time of one run of `statement`, which took `cpu_seconds_per_run` here."""
    library, sparse = work.library, work.sparse
    launch = GPU_LAUNCH_S["torch" if library == "torch" else "cupy"]
    kernels = kernel_count(statement, work.array_names)
    match = _SPARSE.match(sparse or "")
    if match and _sparse_times_sparse(statement, work.sparse_names):
        gpu_seconds = cpu_seconds_per_run / SPGEMM_SPEEDUP + kernels * launch
        description = f"sparse x sparse product ({sparse}): cuSPARSE SpGEMM, measured time / {SPGEMM_SPEEDUP:.0f}"
    elif match and ("@" in statement or ".dot(" in statement):
        rows, cols, nnz = int(match["rows"]), int(match["cols"]), int(match["nnz"])
        item = ITEM_BYTES.get(match["dtype"], 8)
        moved = nnz * (item + 4) + (rows + 1) * 4 + (rows + cols) * item
        gpu_seconds = moved / (gpu.mem_bandwidth_gbs * 1e9 * SPMV_EFFICIENCY) + kernels * launch + SPMV_SETUP_S
        description = f"sparse matrix product ({sparse}): cuSPARSE SpMV, {moved / 1e6:.1f} MB streamed"
    else:
        ratio = cpu.mem_bandwidth_gbs / (gpu.mem_bandwidth_gbs * STREAM_EFFICIENCY)
        streamed = cpu_seconds_per_run * ratio
        if work.largest_bytes > 0:
            streamed = min(streamed, kernels * 2 * work.largest_bytes / (gpu.mem_bandwidth_gbs * 1e9 * STREAM_EFFICIENCY))
        gpu_seconds = streamed + kernels * launch
        description = (
            f"{library} work not in the op model: measured time scaled by memory bandwidth "
            f"({cpu.mem_bandwidth_gbs:.0f} -> {gpu.mem_bandwidth_gbs:.0f} GB/s), {kernels} launch{'es' if kernels != 1 else ''}"
        )
    reads, masks = host_reads(statement, work.array_names)
    if reads or masks:
        mask_s = CUPY_MASK_INDEX_S if library != "torch" else HOST_READ_S + 2 * launch
        gpu_seconds += reads * HOST_READ_S + masks * mask_s
        description += f", {reads + masks} read{'s' if reads + masks != 1 else ''} back on the host"
    speedup = cpu_seconds_per_run / max(gpu_seconds, 1e-12)
    return Estimate(description, gpu_seconds, speedup / SPREAD, speedup * SPREAD)
