"""`[tool.gpuadvisor]` in pyproject.toml: found by walking up from the checked path."""

from __future__ import annotations

import fnmatch
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuadvisor.analysis.findings.records import Finding, Severity
from gpuadvisor.analysis.rules import UnknownRuleError, resolve_codes

_KNOWN_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "exclude", "per-file-ignores", "fail-on", "gpu", "cpu", "gpu-candidate-threshold")


class ConfigError(Exception):
    """A configuration problem the user must fix; reported with exit code 2."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: dict[str, frozenset[str]] = field(default_factory=dict)
    fail_on: Severity = Severity.WARNING
    gpu: str | None = None  # profile name or file for speedup predictions
    cpu: str | None = None
    threshold: float | None = None  # minimum predicted speedup for a gpu-candidate finding
    root: Path = field(default_factory=Path.cwd)  # patterns are relative to this folder
    source: Path | None = None

    def relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    def is_excluded(self, path: Path) -> bool:
        if not self.exclude:
            return False
        relative = self.relative(path)
        parts = relative.split("/")
        for pattern in self.exclude:
            pattern = pattern.rstrip("/")
            if fnmatch.fnmatch(relative, pattern) or any(fnmatch.fnmatch(part, pattern) for part in parts):
                return True
        return False

    def ignored_for(self, path: str) -> frozenset[str]:
        relative = self.relative(Path(path))
        codes: set[str] = set()
        for pattern, ignored in self.per_file_ignores.items():
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(Path(path).name, pattern):
                codes |= ignored
        return frozenset(codes)

    def keeps(self, finding: Finding) -> bool:
        return finding.rule not in self.ignored_for(finding.path)


def find_config_file(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.gpuadvisor] table, from `start` upwards."""
    folder = start if start.is_dir() else start.parent
    for candidate in (folder.resolve(), *folder.resolve().parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = pyproject.read_bytes()
            except OSError:
                continue
            if b"tool.gpuadvisor" in data:
                return pyproject  # even if it does not decode: loading it says why
    return None


def _string_list(table: dict[str, Any], key: str, where: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: [tool.gpuadvisor] {key} must be a list of strings")
    return tuple(item.strip() for item in value)


def _codes(selectors: tuple[str, ...], key: str, where: Path) -> None:
    try:
        resolve_codes(selectors)
    except UnknownRuleError as exc:
        raise ConfigError(f"{where}: [tool.gpuadvisor] {key}: {exc}") from None


def load_config(pyproject: Path) -> Config:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {pyproject}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{pyproject} is nested too deeply to read") from None
    tool = data.get("tool", {})
    table = tool.get("gpuadvisor", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.gpuadvisor] must be a table")
    unknown = sorted(set(table) - set(_KNOWN_KEYS))
    if unknown:
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.gpuadvisor]: {', '.join(unknown)} (known: {', '.join(_KNOWN_KEYS)})")
    selections = {key: _string_list(table, key, pyproject) for key in ("select", "extend-select", "ignore", "extend-ignore")}
    for key, selectors in selections.items():
        _codes(selectors, key, pyproject)
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{pyproject}: [tool.gpuadvisor] per-file-ignores must map glob patterns to lists of codes")
    per_file_ignores: dict[str, frozenset[str]] = {}
    for pattern, selectors in per_file.items():
        listed = _string_list({"codes": selectors}, "codes", pyproject)
        try:
            per_file_ignores[pattern] = frozenset(resolve_codes(listed))
        except UnknownRuleError as exc:
            raise ConfigError(f"{pyproject}: per-file-ignores[{pattern!r}]: {exc}") from None
    try:
        fail_on = Severity.parse(str(table.get("fail-on", "warning")))
    except ValueError as exc:
        raise ConfigError(f"{pyproject}: [tool.gpuadvisor] fail-on: {exc}") from None
    hardware = {}
    for key in ("gpu", "cpu"):
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"{pyproject}: [tool.gpuadvisor] {key} must be a profile name or a file path")
        if key in table:  # a relative profile file is relative to the pyproject.toml
            candidate = pyproject.parent / table[key]
            hardware[key] = str(candidate) if candidate.is_file() else table[key]
    threshold = table.get("gpu-candidate-threshold")
    usable = isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and math.isfinite(threshold)
    if threshold is not None and (not usable or threshold <= 0):
        raise ConfigError(f"{pyproject}: [tool.gpuadvisor] gpu-candidate-threshold must be a finite positive number")
    return Config(
        gpu=hardware.get("gpu"),
        cpu=hardware.get("cpu"),
        threshold=float(threshold) if threshold is not None else None,
        select=selections["select"],
        ignore=selections["ignore"],
        extend_select=selections["extend-select"],
        extend_ignore=selections["extend-ignore"],
        exclude=_string_list(table, "exclude", pyproject),
        per_file_ignores=per_file_ignores,
        fail_on=fail_on,
        root=pyproject.parent,
        source=pyproject,
    )


def discover_config(paths: list[str]) -> Config:
    """Config for a run over `paths`: from the first real path (or the working directory)."""
    start = next((Path(p) for p in paths if p != "-" and Path(p).exists()), Path.cwd())
    found = find_config_file(start)
    return load_config(found) if found is not None else Config()
