"""What a sweep measures: every benchable registry op over log-spaced sizes, dtypes and variants.

Sizes run from the launch-overhead regime (16 elements) to hundreds of MB; a series stops
early once one call takes longer than the sweep allows, and configurations that would not
fit in memory are skipped. Order: all float32 work first, then float64, then half precision,
then complex, so a sweep cut short by its budget has the most useful rows. Which series each op is measured
on, with which params, comes from its registry entry (`Op.bench`); the shape series are here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gpuadvisor.ops.registry import OPS, TF32, Family, benchable

#: Measurements of the machine rather than of an op: copies each way, and one tiny kernel launch.
MACHINE_MEASUREMENTS = ("h2d", "d2h", "launch")
#: The order dtypes are swept in, the most used first, so a sweep cut short keeps the useful rows.
DTYPE_ORDER = ("float32", "float64", "float16", "bfloat16", "complex64", "complex128")
HALF_DTYPES = ("float16", "bfloat16")
#: Measured only for ops whose registry entry says every library takes complex inputs.
COMPLEX_DTYPES = ("complex64", "complex128")

@dataclass(frozen=True)
class Config:
    op: str
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    params: str = ""  # "axis=1", "density=0.01", "expr=sin(x)**2+cos(x)**2"
    pinned: str = ""  # "true"/"false" for h2d/d2h rows

    @property
    def shape_text(self) -> str:
        return ";".join("x".join(str(d) for d in shape) for shape in self.shapes)

    @property
    def series(self) -> tuple[str, str, str, str, int]:
        """Configurations of one series differ only in size (for the early stop)."""
        entry = OPS.get(self.op)
        # matrix products run on several 2-D series, told apart by the second operand's width
        product = entry is not None and entry.family is Family.MATMUL
        variant = self.shapes[1][-1] if len(self.shapes) > 1 and product else 0
        return (self.op, self.dtype, self.params, self.pinned, len(self.shapes[0]) * 100000 + variant)

    def element_count(self) -> int:
        """Elements held in memory (a sparse operand holds only its non-zeros, plus indices)."""
        total = 0
        for index, shape in enumerate(self.shapes):
            count = 1
            for dim in shape:
                count *= dim
            if index == 0 and self.op in OPS and OPS[self.op].family is Family.SPARSE:
                density = float(self.params.partition("density=")[2] or 1.0)
                count = int(count * density * 2)
            total += count
        return total


def _powers(start: int, stop: int, factor: int) -> list[int]:
    values, value = [], start
    while value <= stop:
        values.append(value)
        value *= factor
    return values


def _decimals(start: int, stop: int) -> list[int]:
    """1-3-10 steps: the sizes users have, where powers of two are the odd case (a 1024x1024
    SVD takes 1.5x as long as a 1000x1000 one: cache-set conflicts; FFTs are the reverse)."""
    return sorted(n for n in (m * 10**e for e in range(1, 10) for m in (1, 3)) if start <= n <= stop)


def _series(quick: bool) -> dict[str, list[tuple[tuple[int, ...], ...]]]:
    vector = sorted(_powers(16, 1 << 26, 4) + _decimals(100, 10**7))
    square = sorted(_powers(16, 16384, 2) + _decimals(100, 3000))
    small_square = sorted(_powers(16, 8192, 2) + _decimals(100, 3000))
    if quick:
        vector, square, small_square = [16, 4096], [16, 64], [16, 64]
    return {
        "vector": [((n,),) for n in vector],
        "pair": [((n,), (n,)) for n in vector],
        "matrix": [((n, n),) for n in small_square],
        "matmul": [((n, n), (n, n)) for n in square],
        "matmul_tall": [((n, 256), (256, 256)) for n in ([256, 4096] if quick else _powers(256, 1 << 20, 4))],
        "matmul_batched": [((b, 64, 64), (b, 64, 64)) for b in ([1, 16] if quick else _powers(1, 16384, 4))],
        # m tokens through a transformer MLP's up-projection (4096 -> 11008): matrix-vector at m = 1
        "matmul_layer": [((m, 4096), (4096, 11008)) for m in ([1, 16] if quick else _powers(1, 16384, 4))],
        "solve": [((n, n), (n, 1)) for n in small_square],
        "sparse": [((n, n), (n, 64)) for n in ([256, 1024] if quick else _powers(256, 131072, 2))],
    }


def configurations(dtypes: list[str], ops: set[str] | None, quick: bool, gpu: bool) -> Iterator[Config]:
    series = _series(quick)
    ordered_dtypes = sorted(dtypes, key=lambda d: DTYPE_ORDER.index(d) if d in DTYPE_ORDER else len(DTYPE_ORDER))
    for dtype in ordered_dtypes:
        half, complex_ = dtype in HALF_DTYPES, dtype in COMPLEX_DTYPES
        plan: list[Config] = []
        for entry in benchable():
            bench = entry.bench
            assert bench is not None
            if (half and not bench.half) or (complex_ and not bench.complex_inputs):
                continue
            for run in bench.runs:
                if run.params == TF32 and dtype != "float32":
                    continue  # TF32 is a mode of float32 products
                plan += [
                    Config(entry.name, shapes, dtype, run.params) for shapes in series[run.series]
                    if not bench.largest_side or shapes[0][0] <= bench.largest_side
                ]
        if gpu and dtype in ("float32", "float64"):
            for direction in ("h2d", "d2h"):
                for pinned in ("false", "true"):
                    plan += [Config(direction, shapes, dtype, pinned=pinned) for shapes in series["vector"]]
            if dtype == "float32":
                plan.append(Config("launch", ((1,),), dtype))
        for config in plan:
            if ops is None or config.op in ops:
                yield config
