"""GPU and CPU profiles: the catalogue, custom TOML/JSON files, and this machine (`local`)."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuadvisor._suggest import did_you_mean
from gpuadvisor._safe_io import UnsafeFile, load_json, parse_json, read_regular, report_damaged
from gpuadvisor.ops.cost import REAL_DTYPE
from gpuadvisor.prediction.errors import HardwareError

__all__ = ["REAL_DTYPE", "HardwareError", "GpuProfile", "CpuProfile", "resolve_gpu", "resolve_cpu", "catalog", "match_gpu_name"]


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def read_shipped_toml(path: Path) -> dict[str, Any]:
    """A TOML file shipped with gpuadvisor (the catalogue, the measured machines), parsed once
    per version of the file: the parsed table is kept as JSON in the user cache, since
    importing and running the TOML parser is a tenth of a small `check`'s start-up. A cache
    entry that cannot be read or is not a table is ignored and written again."""
    info = path.stat()
    from gpuadvisor._paths import user_cache_dir

    memo = user_cache_dir() / "parsed" / f"{path.stem}-{info.st_size}-{info.st_mtime_ns}.json"
    try:
        cached = load_json(memo)
        if isinstance(cached, dict):
            return cached
        report_damaged(memo, "not a table")
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        report_damaged(memo, exc)
    data: dict[str, Any] = _toml().loads(path.read_text(encoding="utf-8"))
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        partial = memo.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data), encoding="utf-8")
        os.replace(partial, memo)
    except OSError:
        pass  # a read-only cache only costs the parse
    return data


CATALOG = Path(__file__).with_name("catalog.toml")
_PACKAGED_DATA = Path(__file__).resolve().parent.parent / "training_data"
_REPOSITORY_DATA = Path(__file__).resolve().parents[3] / "training_data"
GPU_KEYS = ("name", "fp32_tflops", "fp64_tflops", "fp16_tflops", "mem_bandwidth_gbs", "memory_gb", "host_link_gbs")
CPU_KEYS = ("name", "cores", "fp32_gflops", "fp64_gflops", "mem_bandwidth_gbs")


@dataclass(frozen=True)
class GpuProfile:
    key: str
    name: str
    fp32_tflops: float
    fp64_tflops: float
    fp16_tflops: float
    mem_bandwidth_gbs: float
    memory_gb: float
    host_link_gbs: float
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: Last-level (L2) cache: work whose data fits runs faster than DRAM bandwidth. Optional
    #: (0 = unknown: DRAM bandwidth only).
    l2_cache_mb: float = 0.0
    #: Tensor cores (optional; 0 = no such path): dense bf16 with fp32 accumulation (also what
    #: cuBLAS's fp16 GEMMs get), TF32, FP64 tensor cores; streaming multiprocessors (0 =
    #: unknown). tensor_cores.py turns them into the rate a matrix product runs at.
    bf16_tflops: float = 0.0
    tf32_tflops: float = 0.0
    fp64_tensor_tflops: float = 0.0
    sm_count: float = 0.0
    #: The clock the datasheet's peaks are quoted at (the rated boost) and the clock the GPU holds under
    #: sustained matrix work where a cited measurement says it differs (optional; 0 = as rated). GeForce
    #: boards' GPU Boost runs well past the rated boost while power and temperature allow.
    boost_clock_mhz: float = 0.0
    sustained_clock_mhz: float = 0.0

    @property
    def clock_ratio(self) -> float:
        """Sustained over rated clock: what the datasheet's arithmetic peaks are scaled by."""
        if self.boost_clock_mhz > 0 and self.sustained_clock_mhz > 0:
            return self.sustained_clock_mhz / self.boost_clock_mhz
        return 1.0

    def peak_flops(self, dtype: str) -> float:
        tflops = {"float64": self.fp64_tflops, "float16": self.fp16_tflops, "bfloat16": self.fp16_tflops}
        return tflops.get(REAL_DTYPE.get(dtype, dtype), self.fp32_tflops) * 1e12


@dataclass(frozen=True)
class CpuProfile:
    key: str
    name: str
    cores: int
    fp32_gflops: float
    fp64_gflops: float
    mem_bandwidth_gbs: float
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def peak_flops(self, dtype: str) -> float:
        return (self.fp64_gflops if REAL_DTYPE.get(dtype, dtype) == "float64" else self.fp32_gflops) * 1e9


def _build(kind: type, key: str, table: dict[str, Any], where: str) -> Any:
    required = GPU_KEYS if kind is GpuProfile else CPU_KEYS
    missing = [k for k in required if k not in table]
    if missing:
        raise HardwareError(f"{where}: missing key(s) {', '.join(missing)} (a {kind.__name__} needs {', '.join(required)})")
    sources = table.get("sources", {})
    if not isinstance(sources, dict):
        raise HardwareError(f"{where}: sources must be a table of key = \"where the number comes from\"")
    values: dict[str, Any] = {"key": key, "sources": {str(k): str(v) for k, v in sources.items()}}
    for spec in fields(kind):
        if spec.name in ("key", "sources") or (spec.name not in required and spec.name not in table):
            continue
        raw = table[spec.name]
        if spec.name == "name":
            values["name"] = str(raw)
            continue
        try:
            number = float(raw) if not isinstance(raw, bool) else math.nan
        except (TypeError, ValueError, OverflowError):
            raise HardwareError(f"{where}: {spec.name} must be a number, not {raw!r}") from None
        if not math.isfinite(number) or number <= 0:
            raise HardwareError(f"{where}: {spec.name} must be a finite positive number, not {raw!r}")
        if spec.name == "cores" and (number != int(number) or number < 1):
            raise HardwareError(f"{where}: cores must be a whole number of at least 1, not {raw!r}")
        values[spec.name] = int(number) if spec.name == "cores" else number
    return kind(**values)


@lru_cache(maxsize=None)
def catalog() -> tuple[dict[str, GpuProfile], dict[str, CpuProfile]]:
    data = read_shipped_toml(CATALOG)
    gpus = {k: _build(GpuProfile, k, v, f"catalog gpu.{k}") for k, v in data["gpu"].items()}
    cpus = {k: _build(CpuProfile, k, v, f"catalog cpu.{k}") for k, v in data["cpu"].items()}
    return gpus, cpus


#: A hardware profile is a dozen lines; anything this big is not one (or is /dev/zero).
_MAX_PROFILE_BYTES = 1 << 20


def _read_profile(path: Path) -> str:
    try:
        return read_regular(path, _MAX_PROFILE_BYTES).decode("utf-8")
    except UnsafeFile as exc:
        raise OSError(str(exc)) from None


def _load_file(path: Path) -> dict[str, Any]:
    try:
        text = _read_profile(path)
        data = parse_json(text) if path.suffix.lower() == ".json" else _toml().loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise HardwareError(f"cannot read hardware profile {path}: {exc}") from None
    except RecursionError:
        raise HardwareError(f"hardware profile {path} is nested too deeply to read") from None
    except ValueError as exc:  # TOMLDecodeError is a ValueError
        raise HardwareError(f"hardware profile {path} is not valid {'JSON' if path.suffix == '.json' else 'TOML'}: {exc}") from None
    if not isinstance(data, dict):
        raise HardwareError(f"hardware profile {path} must hold a table of keys")
    return data


def _looks_like_path(text: str) -> bool:
    return text.endswith((".toml", ".json")) or os.sep in text or Path(text).is_file()


def resolve_gpu(name: str) -> GpuProfile:
    gpus, _ = catalog()
    key = name.strip().lower()
    if key in gpus:
        return gpus[key]
    if _looks_like_path(name):
        return _build(GpuProfile, Path(name).stem, _load_file(Path(name)), name)
    hint = did_you_mean(name, gpus)
    raise HardwareError(f"unknown GPU {name!r}{hint}; `gpuadvisor hardware` lists the known ones, or pass a TOML/JSON file")


def resolve_cpu(name: str | None) -> CpuProfile:
    if name is None or name.strip().lower() == "local":
        from gpuadvisor.prediction.local import local_cpu

        return local_cpu()
    _, cpus = catalog()
    key = name.strip().lower()
    if key in cpus:
        return cpus[key]
    if _looks_like_path(name):
        return _build(CpuProfile, Path(name).stem, _load_file(Path(name)), name)
    hint = did_you_mean(name, [*cpus, "local"])
    raise HardwareError(f"unknown CPU {name!r}{hint}; `gpuadvisor hardware` lists the known ones, `local`, or a TOML/JSON file")


#: How GPUs report themselves (torch.cuda.get_device_name, CuPy, nvidia-smi) -> catalogue key.
_NAME_PATTERNS = (
    ("b200", "b200"), ("h200", "h200"), ("h100 pcie", "h100-pcie"), ("h100", "h100-sxm"), ("a100-sxm4-40gb", "a100-40gb"),
    ("a100-pcie-40gb", "a100-40gb"), ("a100 40gb", "a100-40gb"), ("a100 80gb pcie", "a100-80gb-pcie"),
    ("a100-pcie-80gb", "a100-80gb-pcie"), ("a100", "a100-80gb"), ("l40s", "l40s"),
    ("l4", "l4"), ("a10", "a10"), ("v100-pcie", "v100-pcie"), ("v100", "v100"), ("t4", "t4"), ("rtx 5090", "rtx5090"), ("rtx 5080", "rtx5080"),
    ("rtx 4090", "rtx4090"), ("rtx 4070", "rtx4070"), ("rtx 3090", "rtx3090"), ("rtx 3080", "rtx3080"),
    ("rtx 3060", "rtx3060"),
)


def match_gpu_name(reported: str) -> GpuProfile | None:
    text = reported.lower().replace("geforce ", "")
    if not text:
        return None
    gpus, _ = catalog()
    for pattern, key in _NAME_PATTERNS:
        if re.search(rf"(?<![a-z0-9]){re.escape(pattern)}(?![a-z0-9])", text):  # "l4" is not "L40"
            return gpus[key]
    return None


def training_data_folder() -> Path:
    return _PACKAGED_DATA if _PACKAGED_DATA.is_dir() else _REPOSITORY_DATA


@lru_cache(maxsize=None)
def measured_cpus() -> dict[tuple[str, int], CpuProfile]:
    """CPUs that measured rows come from, with calibrated specs (training_data/machines.toml)."""
    path = training_data_folder() / "machines.toml"
    machines: dict[tuple[str, int], CpuProfile] = {}
    if not path.is_file():
        return machines
    for entry in read_shipped_toml(path).get("cpu", []):
        profile = CpuProfile(
            key=entry.get("key", "measured"),
            name=entry["cpu_name"],
            cores=int(entry["cpu_cores"]),
            fp32_gflops=float(entry["fp32_gflops"]),
            fp64_gflops=float(entry["fp64_gflops"]),
            mem_bandwidth_gbs=float(entry["mem_bandwidth_gbs"]),
            sources={"all": entry.get("measured") or entry.get("specs") or "training_data/machines.toml"},
        )
        machines[(profile.name, profile.cores)] = profile
    return machines
