"""The array libraries a sweep can measure, each behind the same small interface.

A backend builds its inputs (random normal values, never zeros, outside the timed region)
and returns a zero-argument callable doing exactly the measured work, plus `sync()`, which
waits for the device. Libraries that are not installed are reported, not fatal.
"""

from __future__ import annotations

import functools
import importlib
import os
import warnings
from collections.abc import Callable
from typing import Any

from gpuadvisor.bench.plan import COMPLEX_DTYPES, HALF_DTYPES, MACHINE_MEASUREMENTS, Config
from gpuadvisor.ops.registry import OPS, TF32, Bench, Family

Work = Callable[[], object]
EXPRESSION_FUNCTIONS = ("sin", "cos", "exp", "sqrt", "where")


def _param(config: Config, name: str) -> str | None:
    for part in config.params.split(";"):
        key, _, value = part.partition("=")
        if key == name:
            return value
    return None


def _takes_dtype(bench: Bench, dtype: str) -> bool:
    """float32 and float64 for every op; complex only where the registry says every library
    takes complex inputs (half precision is each GPU backend's own question)."""
    return dtype in ("float32", "float64") or (dtype in COMPLEX_DTYPES and bench.complex_inputs)


def _sparse(config: Config) -> bool:
    """A sparse product: each library builds its sparse matrix its own way."""
    entry = OPS.get(config.op)
    return entry is not None and entry.family is Family.SPARSE


class Backend:
    """Shared op construction; subclasses supply the library calls."""

    name: str
    device = "cpu"
    xp: Any
    library: Any
    rng: Any  # the NumPy or CuPy generator inputs are drawn from

    def __init__(self) -> None:
        self.library = importlib.import_module(self.module_name())

    @classmethod
    def module_name(cls) -> str:
        return cls.name

    @property
    def library_version(self) -> str:
        return str(getattr(self.library, "__version__", ""))

    def threads(self) -> str:
        try:
            from threadpoolctl import threadpool_info

            blas = [pool["num_threads"] for pool in threadpool_info() if pool.get("user_api") == "blas"]
            return str(max(blas)) if blas else ""
        except Exception:  # threadpoolctl is optional
            return ""

    def gpu_name(self) -> str:
        return ""

    def sync(self) -> None:
        """CPU libraries compute synchronously: nothing to wait for."""

    def max_bytes(self) -> int:
        try:
            memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            memory = 8 << 30
        return int(memory * 0.25)

    # -- inputs -----------------------------------------------------------------------------
    def random(self, shape: tuple[int, ...], dtype: str) -> Any:
        raise NotImplementedError

    def uniform(self, shape: tuple[int, ...], dtype: str) -> Any:
        """A new array of uniform [0, 1) draws: the work of the `random` op (NumPy and CuPy)."""
        return self.rng.random(shape, dtype=dtype)

    def eye(self, n: int, dtype: str) -> Any:
        return self.xp.eye(n, dtype=self.dtype(dtype))

    def well_conditioned(self, n: int, dtype: str) -> Any:
        return self.random((n, n), dtype) + n * self.eye(n, dtype)

    def symmetric_positive_definite(self, n: int, dtype: str) -> Any:
        """(R + R^H) / 2 + n I: Hermitian (symmetric when real), and diagonally dominant, so
        positive definite."""
        noise = self.random((n, n), dtype)
        return (noise + noise.conj().T) / 2 + n * self.eye(n, dtype)

    def first_operand(self, bench: Bench, shape: tuple[int, ...], dtype: str) -> Any:
        if bench.symmetric:
            return self.symmetric_positive_definite(shape[0], dtype)
        if bench.conditioned:
            return self.well_conditioned(shape[0], dtype)
        return self.random(shape, dtype)

    def dtype(self, name: str) -> Any:
        return getattr(self.xp, name)

    # -- ops --------------------------------------------------------------------------------
    def supports(self, config: Config) -> bool:
        """Ops the registry measures, in float32 and float64 (and complex where it says so);
        sparse products need SciPy; TF32 products need torch on CUDA."""
        entry = OPS.get(config.op)
        if entry is None or entry.bench is None or entry.family is Family.SPARSE:
            return False
        return _takes_dtype(entry.bench, config.dtype) and config.params != TF32

    def namespace(self) -> Any:
        """Where the registry's timed functions are looked up (`Bench.function`)."""
        return self.xp

    def axis_keywords(self, axis: int | None) -> dict[str, Any]:
        """How a reduction is told its axis: NumPy and CuPy take `axis=`, always."""
        return {"axis": axis}

    def prepare(self, config: Config) -> Work | None:
        if not self.supports(config):
            return None
        entry = OPS[config.op]
        bench = entry.bench
        assert bench is not None
        if entry.family is Family.EXPRESSION:
            return self.expression(config)
        if entry.family is Family.FILL:
            shape, dtype = config.shapes[0], config.dtype
            return lambda: self.uniform(shape, dtype)
        if bench.function is None:
            return None
        shapes, dtype = config.shapes, config.dtype
        inputs = [self.first_operand(bench, shape, dtype) if index == 0 else self.random(shape, dtype) for index, shape in enumerate(shapes)]
        axis = _param(config, "axis")
        keywords = self.axis_keywords(int(axis) if axis else None) if entry.family is Family.REDUCTION else {}
        return functools.partial(bench.function(self.namespace()), *inputs, **keywords)

    def expression(self, config: Config) -> Work:
        x, y = self.random(config.shapes[0], config.dtype), self.random(config.shapes[1], config.dtype)
        scope = {name: getattr(self.xp, name) for name in EXPRESSION_FUNCTIONS}
        scope.update(x=x, y=y)
        code = compile(_param(config, "expr") or "x", "<expr>", "eval")
        return lambda: eval(code, scope)  # noqa: S307 - constant expressions of our own plan


class NumpyBackend(Backend):
    name = "numpy"

    def __init__(self) -> None:
        super().__init__()
        self.xp = self.library
        self.rng = self.library.random.default_rng(0)

    def random(self, shape: tuple[int, ...], dtype: str) -> Any:
        return _normal(self.rng, shape, dtype)


class ScipyBackend(NumpyBackend):
    """SciPy's variants of the linear algebra and FFT ops, and sparse x dense products."""

    name = "scipy"

    def __init__(self) -> None:
        super().__init__()
        self.scipy = importlib.import_module("scipy")
        for sub in ("linalg", "fft", "sparse"):
            importlib.import_module(f"scipy.{sub}")
        self.library = self.scipy

    @classmethod
    def module_name(cls) -> str:
        return "numpy"

    def supports(self, config: Config) -> bool:
        entry = OPS.get(config.op)
        return entry is not None and entry.bench is not None and entry.bench.scipy and config.dtype in ("float32", "float64")

    def namespace(self) -> Any:
        return self.scipy

    def prepare(self, config: Config) -> Work | None:
        if not _sparse(config) or not self.supports(config):
            return super().prepare(config)
        (n, _), dense_shape = config.shapes
        nnz = max(1, int(float(_param(config, "density") or 0.01) * n * n))
        # Random coordinates (duplicates merged), not scipy.sparse.random: that one samples
        # without replacement from all n*n positions, which takes minutes at n = 32768.
        rows, cols = self.rng.integers(0, n, nnz), self.rng.integers(0, n, nnz)
        values = self.random((nnz,), config.dtype) + 2.0
        matrix = self.scipy.sparse.coo_matrix((values, (rows, cols)), shape=(n, n)).tocsr()
        dense = self.random(dense_shape, config.dtype)
        return lambda: matrix @ dense


class TorchBackend(Backend):
    name = "torch"

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        torch = self.library
        self.xp = torch
        self.device = device
        if device == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("torch has no CUDA device here")
        self.generator = torch.Generator(device=device).manual_seed(0)

    def threads(self) -> str:
        return str(self.library.get_num_threads()) if self.device == "cpu" else ""

    def gpu_name(self) -> str:
        return self.library.cuda.get_device_name(0) if self.device == "cuda" else ""

    def sync(self) -> None:
        if self.device == "cuda":
            self.library.cuda.synchronize()

    def max_bytes(self) -> int:
        if self.device == "cuda":
            free, _total = self.library.cuda.mem_get_info()
            return int(free * 0.4)
        return super().max_bytes()

    def supports(self, config: Config) -> bool:
        gpu = self.device == "cuda"
        if config.op in MACHINE_MEASUREMENTS:
            return gpu
        entry = OPS.get(config.op)
        if entry is None or entry.bench is None:
            return False
        if config.dtype in HALF_DTYPES:
            return gpu and entry.bench.half
        if config.params == TF32:
            return gpu and config.dtype == "float32"
        return _takes_dtype(entry.bench, config.dtype)

    def random(self, shape: tuple[int, ...], dtype: str) -> Any:
        torch = self.library
        return torch.randn(shape, dtype=getattr(torch, dtype), device=self.device, generator=self.generator)

    def eye(self, n: int, dtype: str) -> Any:
        return self.library.eye(n, dtype=self.dtype(dtype), device=self.device)

    def uniform(self, shape: tuple[int, ...], dtype: str) -> Any:
        torch = self.library
        return torch.rand(shape, dtype=getattr(torch, dtype), device=self.device, generator=self.generator)

    def axis_keywords(self, axis: int | None) -> dict[str, Any]:
        """torch names the axis `dim=` and takes none for a reduction over everything."""
        return {} if axis is None else {"dim": axis}

    def prepare(self, config: Config) -> Work | None:
        if not self.supports(config):
            return None
        torch = self.library
        dtype = getattr(torch, config.dtype)
        if self.device == "cuda":  # each configuration says whether float32 products may use TF32
            torch.backends.cuda.matmul.allow_tf32 = config.params == TF32
        if _sparse(config):
            (n, _), dense_shape = config.shapes
            nnz = max(1, int(float(_param(config, "density") or 0.01) * n * n))
            rows = torch.randint(0, n, (nnz,), device=self.device, generator=self.generator)
            cols = torch.randint(0, n, (nnz,), device=self.device, generator=self.generator)
            values = self.random((nnz,), config.dtype) + 2.0
            with warnings.catch_warnings():  # torch calls sparse CSR "beta" on every use
                warnings.simplefilter("ignore", UserWarning)
                coo = torch.sparse_coo_tensor(torch.stack([rows, cols]), values, (n, n), check_invariants=False)
                matrix = coo.coalesce().to_sparse_csr()
            dense = self.random(dense_shape, config.dtype)
            return lambda: matrix @ dense
        if config.op in ("h2d", "d2h"):
            (count,) = config.shapes[0]
            pinned = config.pinned == "true"
            if config.op == "h2d":
                host = torch.randn(count, dtype=dtype, pin_memory=pinned)
                return lambda: host.to(self.device, non_blocking=pinned)
            source = self.random((count,), config.dtype)
            target = torch.empty(count, dtype=dtype, pin_memory=pinned)
            return lambda: target.copy_(source, non_blocking=pinned)
        if config.op == "launch":
            tiny = torch.ones(1, device=self.device)
            return lambda: tiny.add_(1.0)
        return super().prepare(config)


class CupyBackend(Backend):
    name = "cupy"
    device = "cuda"

    def __init__(self) -> None:
        super().__init__()
        self.xp = self.library
        self.library.cuda.runtime.getDeviceCount()  # raises when there is no usable GPU
        self.rng = self.library.random.default_rng(0)

    def gpu_name(self) -> str:
        props = self.library.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def threads(self) -> str:
        return ""

    def sync(self) -> None:
        self.library.cuda.Device().synchronize()

    def max_bytes(self) -> int:
        free, _total = self.library.cuda.runtime.memGetInfo()
        return int(free * 0.4)

    def supports(self, config: Config) -> bool:
        if config.op in MACHINE_MEASUREMENTS:
            return config.dtype in ("float32", "float64")
        entry = OPS.get(config.op)
        if entry is None or entry.bench is None:
            return False
        if config.dtype == "float16":
            return entry.bench.half
        return _takes_dtype(entry.bench, config.dtype) and config.params != TF32

    def random(self, shape: tuple[int, ...], dtype: str) -> Any:
        if dtype == "float16":
            return self.rng.standard_normal(shape, dtype="float32").astype("float16")
        return _normal(self.rng, shape, dtype)

    def prepare(self, config: Config) -> Work | None:
        if not self.supports(config):
            return None
        cp = self.library
        if _sparse(config):
            sparse = importlib.import_module("cupyx.scipy.sparse")
            (n, _), dense_shape = config.shapes
            density = float(_param(config, "density") or 0.01)
            matrix = sparse.random(n, n, density=density, format="csr", dtype=config.dtype, random_state=0)
            matrix.data += 2.0
            dense = self.random(dense_shape, config.dtype)
            return lambda: matrix @ dense
        if config.op in ("h2d", "d2h"):
            import numpy

            (count,) = config.shapes[0]
            pinned = config.pinned == "true"
            if pinned:
                cupyx = importlib.import_module("cupyx")
                host = cupyx.empty_pinned((count,), dtype=config.dtype)
            else:
                host = numpy.empty((count,), dtype=config.dtype)
            host[:] = numpy.random.default_rng(0).standard_normal(count).astype(config.dtype) + 2.0
            if config.op == "h2d":
                return lambda: cp.asarray(host)
            device_array = self.random((count,), config.dtype)
            return lambda: device_array.get(out=host)
        if config.op == "launch":
            tiny = cp.ones(1, dtype="float32")
            return lambda: cp.add(tiny, 1.0, out=tiny)
        return super().prepare(config)


def _normal(rng: Any, shape: tuple[int, ...], dtype: str) -> Any:
    """Standard normal values from a NumPy or CuPy generator, which draw only real floats: a
    complex array is two real draws, the real and the imaginary part."""
    if dtype not in COMPLEX_DTYPES:
        return rng.standard_normal(shape, dtype=dtype)
    real = "float32" if dtype == "complex64" else "float64"
    return (rng.standard_normal(shape, dtype=real) + 1j * rng.standard_normal(shape, dtype=real)).astype(dtype)


#: Backend names accepted by --backends, in the order sweeps run them.
BACKENDS: dict[str, Callable[[], Backend]] = {
    "numpy": NumpyBackend,
    "scipy": ScipyBackend,
    "torch": lambda: TorchBackend("cpu"),
    "torch-cuda": lambda: TorchBackend("cuda"),
    "cupy": CupyBackend,
}


def load_backends(names: list[str]) -> tuple[list[Backend], list[str]]:
    """The backends that work here, and one-line notes for those that do not."""
    loaded, notes = [], []
    for name in names:
        try:
            loaded.append(BACKENDS[name]())
        except Exception as exc:  # missing library, no GPU, broken driver: skip with a note
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            notes.append(f"skipping backend {name}: {reason}")
    return loaded, notes
