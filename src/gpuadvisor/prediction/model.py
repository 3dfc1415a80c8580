"""The learned correction: measured time / analytic time, per side, from dimensionless features.

Features are ratios of analytic times computed from the hardware's own specs (how many call
overheads the work is worth; compute vs memory time, i.e. arithmetic intensity against the
ridge point), so what is learned on one machine carries over to machines never measured.
Per op, scikit-learn's Ridge fits a smooth curve in those features; the residuals' 10th and
90th percentiles per op give the uncertainty interval. The fitted coefficients are plain
numbers applied with NumPy (microseconds per prediction). The model fitted on the shipped
rows ships with the package (`fitted_model.json`, written by `python tools/fit_model.py`), so
predictions need neither scikit-learn nor a fit; only the user's own `gpuadvisor bench` rows
(or a development checkout whose model code changed) call for a refit, cached as JSON in the
user cache, and that needs the training extra (`pip install 'gpuadvisor[train]'`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

from gpuadvisor._safe_io import JSON_SIZE_LIMIT, dumps_json, parse_json, read_regular, report_damaged

from gpuadvisor._paths import user_cache_dir
from gpuadvisor._version import __version__
from gpuadvisor.ops.registry import OPS, Family
from gpuadvisor.prediction.errors import TrainingStackMissing
from gpuadvisor.prediction.notices import slow_step
from gpuadvisor.prediction.hardware import REAL_DTYPE
from gpuadvisor.prediction.roofline import SideTime
from gpuadvisor.prediction.training import Sample, data_fingerprint, load_samples, packaged_data_files, user_data_files

FEATURE_VERSION = 20
#: Ops with a fitted curve of their own: an op `fitted_as` another is fitted on that one's.
_CURVE_OPS = tuple(name for name, entry in OPS.items() if not entry.fitted_as)
SIDE_OPS = {"cpu": _CURVE_OPS, "gpu": _CURVE_OPS, "copy": ("h2d", "d2h")}
PER_OP_FEATURES = 8
#: Where in an op's block `_basis` puts its constant (first) and its power-of-two term (last).
LEVEL_TERM, POWER_OF_TWO_TERM = 0, PER_OP_FEATURES - 1
#: Columns after the op blocks, shared by every op: float64, half precision (`feature_row`).
DTYPE_COLUMNS = 2
#: log10 spread assumed where no measured rows exist for an op on a side (a factor of ~3).
UNMEASURED_SPREAD = 0.5


#: GPU ops whose FLOPs decide their time; for the others (streaming, sorting, transforms) the
#: FLOP count is nominal, and a compute-vs-memory feature would only learn each GPU's ratio of
#: peak FLOP/s to bandwidth (5x apart between a V100 and an RTX 4090), which does not carry
#: over. On the CPU the ratio is what separates vectorised from transcendental-bound loops.
COMPUTE_BOUND_OPS = frozenset(name for name, entry in OPS.items() if entry.compute_bound)
#: GPU matrix products have their rate from the path cuBLAS takes (tensor_cores.py: tensor or CUDA cores per
#: dtype, tiles, waves): their intensity feature would only learn each path's ratio of peak FLOP/s to
#: bandwidth (held out, it put an A100's 8000^3 SGEMM and DGEMM 1.4x too fast and best-shape bf16 products
#: on an L4 or RTX 4090 1.4-1.6x too slow). Their size effects are analytic too (tiles, waves, split-K, each
#: wave's fill, the kernel's latency), so they get no size curve either, only a level: a curve fitted on
#: sources that measure a few sizes each bends between them. mlx-benchmark's batched float32 products of
#: 32-64-wide tiles, 1.9-2.9x over their analytic time at 0.3-1 ms, had lifted every product of that length
#: by 1.3-1.5x (held out, the best-shape bf16 products of an A100 PCIe and an L4, whose analytic time is
#: within 5%), and busy-gemm's 8000^3 fp16 product at 49% of peak bent the curve up 1.25x past 1 ms.
GPU_RATE_MODELLED_OPS = frozenset(name for name, entry in OPS.items() if entry.family is Family.MATMUL)
#: CPU factorisations (LAPACK) get no intensity feature either. Their FLOPs per byte grow with n, so along one
#: machine's size sweep the feature only repeats the size (`v`), and with the two in one fit their slopes grow
#: large and opposite; a machine with another ratio of FLOP/s to bandwidth, or float64 where float32 was
#: measured, then reads the feature outside its measured range, where no span holds it. The LAPACK rows were
#: measured on one host (the H100 lease's 16-vCPU VM, float32): first look at a 24-core Xeon Gold 6248R's
#: 5000^2 float64 factorisations (harningle_xeon6248r.csv), det came out 61x too fast and cholesky 11x too slow
#: while their analytic times were within 1.0-2.8x and 2.1-6.4x.
CPU_LINALG_OPS = frozenset(name for name, entry in OPS.items() if entry.family is Family.LINALG)


def work_in_overheads(analytic: SideTime) -> float:
    """log10 of the work in call overheads: where on its size curve an op is."""
    work = max(analytic.compute_s, analytic.memory_s)
    return math.log10(max(work / max(analytic.overhead_s, 1e-9), 1e-6))


def _basis(analytic: SideTime, dtype: str, library: str, op: str, side: str, span: tuple[float, float] | None) -> list[float]:
    """Per-op curve basis in hardware-normalised units, plus a PyTorch-vs-CuPy offset on the GPU.

    Outside the sizes measured for the op (`span`), the curve is held at its last measured
    value: a fitted polynomial must not extrapolate (a 32K matmul is not 40x slower than its
    FLOPs because the quadratic term says so).
    """
    v = work_in_overheads(analytic)
    if span is not None:
        v = min(max(v, span[0]), span[1])
    if side == "gpu" and op in GPU_RATE_MODELLED_OPS:  # a level only: see GPU_RATE_MODELLED_OPS
        v = 0.0
    w = 0.0
    if op not in CPU_LINALG_OPS if side == "cpu" else op in COMPUTE_BOUND_OPS and op not in GPU_RATE_MODELLED_OPS:
        w = math.log10(max(analytic.compute_s, 1e-15) / max(analytic.memory_s, 1e-15))  # intensity against the ridge point
    w += 0.3 if REAL_DTYPE.get(dtype, dtype) == "float64" else 0.0  # without intensity, a float64 level per op
    torch = 1.0 if library == "torch" and side != "cpu" else 0.0  # the CPU has a curve per library
    pow2 = 1.0 if analytic.power_of_two else 0.0
    return [1.0, v, v * v / 10.0, max(v - 1.0, 0.0), max(v - 3.0, 0.0), w, torch, pow2]


#: NumPy rows (CuPy on the GPU) also switch on a NumPy block per op: the shared block is then
#: fitted by the PyTorch rows and the NumPy block by the difference, so NumPy's curve is fitted
#: on NumPy rows alone (on the CPU the libraries thread differently; on the GPU CuPy launches
#: differently, and one single-call CuPy source otherwise sets the shape of PyTorch's curves:
#: its rising expr curve put FlagPerf's 2^30-element torch chains 4.4x too slow, held out),
#: while an op measured only for PyTorch still gets its curve for NumPy.
OWN_BLOCK_LIBRARY = {"cpu": "numpy", "gpu": "numpy"}


def feature_width(side: str) -> int:
    blocks = 2 if side in OWN_BLOCK_LIBRARY else 1
    return len(SIDE_OPS[side]) * PER_OP_FEATURES * blocks + DTYPE_COLUMNS


def _op_blocks(width: int) -> range:
    """The first column of each op's block in a feature row of this width."""
    return range(0, width - DTYPE_COLUMNS, PER_OP_FEATURES)


def curve_of(op: str) -> str:
    """The op whose fitted curve this op's rows join and its predictions read (`Op.fitted_as`)."""
    entry = OPS.get(op)
    return entry.fitted_as if entry is not None and entry.fitted_as else op


def slot(side: str, op: str, library: str) -> str:
    """The key of an op's spread and span: per library on the CPU, per op elsewhere."""
    return f"{library}:{curve_of(op)}" if side in OWN_BLOCK_LIBRARY else curve_of(op)


def feature_row(
    side: str, op: str, dtype: str, analytic: SideTime, library: str = "numpy", span: tuple[float, float] | None = None
) -> np.ndarray:
    ops = SIDE_OPS[side]
    row = np.zeros(feature_width(side))
    op = curve_of(op)
    if op in ops:
        basis = _basis(analytic, dtype, library, op, side, span)
        start = ops.index(op) * PER_OP_FEATURES
        row[start : start + PER_OP_FEATURES] = basis
        if OWN_BLOCK_LIBRARY.get(side) == library:
            start += len(ops) * PER_OP_FEATURES
            row[start : start + PER_OP_FEATURES] = basis
    row[-2] = 1.0 if REAL_DTYPE.get(dtype, dtype) == "float64" else 0.0
    row[-1] = 1.0 if dtype in ("float16", "bfloat16") else 0.0
    return row


@dataclass
class SideModel:
    side: str
    coef: np.ndarray
    #: slot (see `slot`) -> (10th, 90th) percentile of held-out log10(measured / predicted).
    spread: dict[str, tuple[float, float]] = field(default_factory=dict)
    rows: int = 0
    #: slot, and op over all libraries -> (smallest, largest) work_in_overheads of its rows.
    span: dict[str, tuple[float, float]] = field(default_factory=dict)

    def row(self, op: str, dtype: str, analytic: SideTime, library: str) -> np.ndarray:
        own = slot(self.side, op, library)
        if self.side == "cpu" and own not in self.span:
            # No rows of this library's op: its analytic time as it is. On the CPU the libraries run an op
            # differently (threads, passes), and another library's curve is no guide: first look at the H200
            # host's NumPy argmax, concat and softmax, which had only torch's CPU curve from mlx-benchmark's
            # hosts, 0.70 / 0.86 / 0.76 off; the analytic time alone, 0.07 / 0.21 / 0.61.
            return np.zeros(feature_width(self.side))
        return feature_row(self.side, op, dtype, analytic, library, self.span.get(own, self.span.get(curve_of(op))))

    def correction(self, features: np.ndarray) -> np.ndarray:
        return features @ self.coef

    def interval(self, op: str, library: str) -> tuple[float, float]:
        return self.spread.get(slot(self.side, op, library), (-UNMEASURED_SPREAD, UNMEASURED_SPREAD))

    def measured(self, op: str, library: str) -> bool:
        return slot(self.side, op, library) in self.spread


def fit_side(side: str, samples: list[Sample]) -> SideModel:
    # The op must be most of the time; rows kept for evaluation only (see training_data/README) are not fitted.
    samples = [s for s in samples if s.measured_s > 1.25 * s.extra_s and s.role != "evaluation"]
    if not samples:
        return SideModel(side, np.zeros(feature_width(side)))
    features = _without_unmeasured_power_of_two(np.array([feature_row(side, s.op, s.dtype, s.analytic, s.library) for s in samples]))
    target = np.array([math.log10((s.measured_s - s.extra_s) / s.timed_s) for s in samples])
    weights = _source_weights(samples)
    coef = _fit_coef(side, features, target, weights)
    residual = _held_out_residuals(side, samples, features, target, weights)
    slots = [slot(side, s.op, s.library) for s in samples]
    return SideModel(side, coef, _spreads(slots, residual, [s.source for s in samples]), len(samples), _spans(side, samples))


def _without_unmeasured_power_of_two(features: np.ndarray) -> np.ndarray:
    """The power-of-two term of an op's block left out of the fit where the op's rows are all powers of two: it
    then repeats the op's level, the two share one number, and every other size loses its share. First look at
    the H200's decimal sizes: a 1000-element NumPy argmax predicted 6x slower than a 1024-element one, from
    mlx-benchmark's rows, all shaped 64 x 1024 x 128. Its coefficient comes out zero, so predictions ignore it."""
    features = features.copy()
    for start in _op_blocks(features.shape[1]):
        rows = features[:, start + LEVEL_TERM] != 0
        if rows.any() and np.all(features[rows, start + POWER_OF_TWO_TERM] != 0):
            features[:, start + POWER_OF_TWO_TERM] = 0.0
    return features


def _spans(side: str, samples: list[Sample]) -> dict[str, tuple[float, float]]:
    """Per slot, and per op over all libraries: the (smallest, largest) work_in_overheads measured."""
    span: dict[str, tuple[float, float]] = {}
    for sample in samples:
        v = work_in_overheads(sample.analytic)
        for key in {slot(side, sample.op, sample.library), curve_of(sample.op)}:
            low, high = span.get(key, (v, v))
            span[key] = (min(low, v), max(high, v))
    return span


RIDGE_ALPHA = 1e-3
#: On the GPU the bends of an op's size curve (its square and hinge terms, `_basis`) pay this much
#: more for their size than its level and slope: a curve bends where its rows demand it, not in
#: the gap between two clusters of measured sizes, where an unpenalised bend is free to swing
#: (published GPU sources measure a few sizes each: torch's argmax, measured at 8M elements and at
#: 6.7G, came out 3.4-4.5x too fast at 2.1G on KernelBench's H100 rows, first look; 1.6x with the
#: penalty). The CPU curves are fitted on dense size sweeps, whose bends the data support.
BEND_PENALTY = 1000.0
BEND_TERMS = (2, 3, 4)


def _fit_coef(side: str, features: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Ridge coefficients, on the GPU the bend terms of every op's curve penalised BEND_PENALTY times harder."""
    scale = np.ones(features.shape[1])
    if side == "gpu":
        for op_start in _op_blocks(features.shape[1]):
            scale[[op_start + term for term in BEND_TERMS]] = BEND_PENALTY**-0.5
    Ridge = _ridge()
    fitted = Ridge(alpha=RIDGE_ALPHA, fit_intercept=False).fit(features * scale, target, sample_weight=weights)
    return np.asarray(fitted.coef_, dtype=float) * scale


TRAINING_EXTRA_HINT = "pip install 'gpuadvisor[train]'"


def _ridge() -> type:
    try:
        from sklearn.linear_model import Ridge  # imported only when fitting
    except ImportError:
        raise TrainingStackMissing(f"fitting the speedup model needs scikit-learn: {TRAINING_EXTRA_HINT}") from None
    return Ridge  # type: ignore[no-any-return]
SIZE_FOLDS = 4
#: An op's own interval needs this many held-out residuals; with fewer it takes the side's.
OWN_SPREAD_ROWS = 12


def _spreads(slots: list[str], residual: np.ndarray, sources: list[str]) -> dict[str, tuple[float, float]]:
    """Per slot, the 10th and 90th percentile of held-out residuals, each source weighing as much
    as another: the 80% interval. Counted per row, the one source with 750 rows of an op set its
    interval for every source never seen (held-out coverage on new GPU sources 16-43%)."""
    pooled = _quantiles(residual, sources) if len(residual) >= 3 else (-UNMEASURED_SPREAD, UNMEASURED_SPREAD)
    spread: dict[str, tuple[float, float]] = {}
    for key in sorted(set(slots)):
        mine = [i for i, s in enumerate(slots) if s == key]
        low, high = _quantiles(residual[mine], [sources[i] for i in mine]) if len(mine) >= OWN_SPREAD_ROWS else pooled
        spread[key] = (float(min(low, -0.02)), float(max(high, 0.02)))
    return spread


def _quantiles(residual: np.ndarray, sources: list[str]) -> tuple[float, float]:
    """The 10th and 90th percentile of the residuals, each source weighing as much as another
    (weighted quantiles: each residual at the middle of its share of the cumulative weight)."""
    counts: dict[str, int] = {}
    for source in sources:
        counts[source] = counts.get(source, 0) + 1
    order = np.argsort(residual)
    weights = np.array([1.0 / counts[sources[i]] for i in order])
    cumulative = (np.cumsum(weights) - 0.5 * weights) / weights.sum()
    low, high = np.interp([0.1, 0.9], cumulative, residual[order])
    return float(low), float(high)


def _folds(samples: list[Sample]) -> np.ndarray:
    """Fold of each row: its published source, or for our own series its size quartile.

    Holding out a whole source (other hardware, other people's method) or a whole size range
    makes the residuals the errors of predictions for hardware or sizes never measured, which
    is what users' predictions face.
    """
    sources = sorted({s.source for s in samples})
    folds = np.array([(sources.index(s.source) + 1) * SIZE_FOLDS for s in samples])
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    for index, sample in enumerate(samples):
        if not sample.pair and not sample.published:  # a series measured by us: hold out its size ranges instead
            groups.setdefault((sample.source, sample.op, sample.dtype, sample.library), []).append(index)
    for members in groups.values():
        members.sort(key=lambda i: samples[i].analytic.total_s)
        for rank, index in enumerate(members):
            folds[index] = rank * SIZE_FOLDS // len(members)
    return folds


def _source_weights(samples: list[Sample]) -> np.ndarray:
    """Each machine is one draw of hardware: all the rows one source measured with one library
    weigh as much together as another source's, however many each has. Fitted per row, the
    2,000 rows of the development machine set the torch-CPU curves for every other CPU
    (leave-one-source-out speedup error 0.180 per row, 0.160 balanced)."""
    counts: dict[tuple[str, str], int] = {}
    for sample in samples:
        key = (sample.source, sample.library)
        counts[key] = counts.get(key, 0) + 1
    weights = np.array([_source_share(counts[(s.source, s.library)]) / counts[(s.source, s.library)] for s in samples])
    return weights * len(weights) / weights.sum()


#: A source's rows carry both its own noise and what sets it apart from other sources (its hardware and
#: method): by the usual random-effects weighting a source of n rows is worth n / (n + ROW_NOISE_RATIO) of a
#: source of many, where ROW_NOISE_RATIO is the variance of the GPU errors within a source over that of the
#: sources' biases: held out, the biases of the 13 published GPU sources spread by 0.048 in log10 and their
#: rows scatter about twice as much around them (median |error| 0.02-0.09 at biases near 0), so 2^2 = 4.
#: A handful of rows is a weak draw: the four
#: 8000^3 products of busygemm_a100.csv, one of them at half the fp16 rate every other source measures, had
#: set the size curve of every GPU product as firmly as XLA's 750 rows.
ROW_NOISE_RATIO = 4.0


def _source_share(rows: int) -> float:
    return rows / (rows + ROW_NOISE_RATIO)


def _held_out_residuals(
    side: str, samples: list[Sample], features: np.ndarray, target: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Residuals of each row under a model fitted without its fold: honest interval widths.

    The held-out rows are predicted as users' requests are: with each op's curve held at the
    sizes the fold's model was fitted on (unclamped, a polynomial fitted on the larger sizes
    alone puts tiny sorts 10**5 off, and the interval of every sort with them).
    """
    residual = np.empty_like(target)
    everything = np.arange(len(target))
    folds = _folds(samples)
    for fold in np.unique(folds):
        held = everything[folds == fold]
        kept = everything[folds != fold]
        if len(kept) == 0:
            residual[held] = target[held]
            continue
        coef = _fit_coef(side, features[kept], target[kept], weights[kept])
        partial = SideModel(side, coef, span=_spans(side, [samples[i] for i in kept]))
        for index in held:
            sample = samples[index]
            residual[index] = target[index] - partial.row(sample.op, sample.dtype, sample.analytic, sample.library) @ coef
    return residual


@dataclass
class CorrectionModel:
    sides: dict[str, SideModel]
    key: str

    def to_json(self) -> str:
        return dumps_json(
            {
                "key": self.key,
                "sides": {
                    name: {"coef": side.coef.tolist(), "spread": side.spread, "rows": side.rows, "span": side.span}
                    for name, side in self.sides.items()
                },
            }
        )

    @classmethod
    def from_json(cls, text: str, key: str) -> CorrectionModel:
        data = parse_json(text)
        if data.get("key") != key:
            raise ValueError("cache entry belongs to other data or versions")
        if set(data["sides"]) != set(SIDE_OPS):
            raise ValueError("cache entry lacks a side of the model")
        sides = {}
        for name, side in data["sides"].items():
            coef = np.asarray(side["coef"], dtype=float)
            if coef.shape != (feature_width(name),) or not np.all(np.isfinite(coef)):
                raise ValueError("cache entry has the wrong shape")
            spread = {op: (float(lo), float(hi)) for op, (lo, hi) in side["spread"].items()}
            span = {op: (float(lo), float(hi)) for op, (lo, hi) in side["span"].items()}
            sides[name] = SideModel(name, coef, spread, int(side["rows"]), span)
        return cls(sides, key)


def train(samples: list[Sample], key: str = "") -> CorrectionModel:
    return CorrectionModel({side: fit_side(side, [s for s in samples if s.side == side]) for side in SIDE_OPS}, key)


#: The model fitted on the shipped rows, generated by `python tools/fit_model.py`.
SHIPPED_MODEL = Path(__file__).with_name("fitted_model.json")
#: Modules of this package that only apply a fitted model (or measure this machine): editing
#: them leaves the fit unchanged. Every other module here (and catalog.toml) shapes the
#: analytic times the model corrects, so the shipped fit records their digest.
_NOT_FIT_INPUTS = frozenset(
    {"__init__.py", "predictor.py", "result.py", "sweep.py", "formatting.py", "errors.py", "notices.py", "local.py"}
)


#: The op registry's formulas and library traits shape the analytic times too: all of it is an input.
_REGISTRY = Path(__file__).parent.parent / "ops"


def fit_input_files() -> list[Path]:
    """The source files whose content the shipped fit depends on, besides the training data."""
    folder = Path(__file__).parent
    sources = [p for p in sorted(folder.glob("*.py")) if p.name not in _NOT_FIT_INPUTS]
    return [*sources, *sorted(folder.glob("*.toml")), *sorted(_REGISTRY.glob("*.py"))]


def shipped_key() -> str:
    """What the shipped fit was made from: the packaged rows, the model code, the feature version."""
    digest = hashlib.sha256(data_fingerprint(packaged_data_files()).encode())
    for path in fit_input_files():
        digest.update(path.name.encode())
        digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return f"shipped-{FEATURE_VERSION}-{digest.hexdigest()[:20]}"


def fit_shipped_model() -> CorrectionModel:
    """Fit on the packaged rows only (what `tools/fit_model.py` writes to SHIPPED_MODEL)."""
    return train(list(load_samples(packaged_data_files())), shipped_key())


def _read_shipped(key: str | None) -> CorrectionModel | None:
    """The shipped model; with `key`, only when it was fitted from the current inputs."""
    try:
        text = SHIPPED_MODEL.read_text(encoding="utf-8")
        return CorrectionModel.from_json(text, key if key is not None else json.loads(text)["key"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def model_key() -> str:
    try:
        sklearn_version = metadata.version("scikit-learn")  # without importing it
    except metadata.PackageNotFoundError:
        sklearn_version = "none"
    parts = (data_fingerprint(), __version__, np.__version__, sklearn_version, str(FEATURE_VERSION))
    return "-".join(parts).replace("/", "_")


def cache_file(key: str) -> Path:
    return user_cache_dir() / "model" / f"{key}.json"


class StaleModelWarning(UserWarning):
    """Predictions fall back to the shipped model because a refit is not possible here."""


def load_model() -> CorrectionModel:
    """The shipped model when it matches the current rows and code (no fit, no scikit-learn);
    else the model cached for the current data and versions; else a freshly fitted one."""
    if not user_data_files():
        shipped = _read_shipped(shipped_key())
        if shipped is not None:
            return shipped
    key = model_key()
    path = cache_file(key)
    try:
        return CorrectionModel.from_json(read_regular(path, JSON_SIZE_LIMIT).decode("utf-8"), key)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        report_damaged(path, exc)  # corrupt, foreign or valid JSON of the wrong shape (`null`): rebuilt
    try:
        with slow_step("Fitting the speedup model to the measured rows (once; cached)"):
            model = train(list(load_samples()), key)
    except TrainingStackMissing as exc:
        fallback = _read_shipped(None)
        if fallback is None:
            raise
        why = "your own `gpuadvisor bench` rows" if user_data_files() else "the changed model code"
        warnings.warn(f"{exc}; predictions use the shipped model, without {why}", StaleModelWarning, stacklevel=2)
        return fallback
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8") as tmp:
            tmp.write(model.to_json())
        os.replace(tmp.name, path)
    except OSError:
        pass
    return model
