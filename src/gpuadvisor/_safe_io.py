"""Reading the files gpuadvisor reads, and writing JSON, without trusting what is on disk.

Every file the tool reads goes through `read_regular` (regular files only: a FIFO or
`/dev/zero` named like a cache entry must not block or fill memory; a size limit) and every
JSON file through `load_json` (bounded nesting, no NaN/Infinity, no number that does not fit
a float). One policy for files the tool itself wrote (caches, calibration, fitted models):
a damaged one is ignored, reported once on stderr, and replaced by the caller.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

#: JSON files the tool reads (caches, shapes, profiles) are far smaller than this.
JSON_SIZE_LIMIT = 64 * 1024 * 1024
#: Larger source files are generated (tables, bundled code): parsing them takes minutes and gigabytes.
MAX_SOURCE_BYTES = 4 * 1024 * 1024
#: Deepest nesting accepted in a JSON file; the tool's own files nest a handful of levels.
JSON_DEPTH_LIMIT = 64
#: Longest integer accepted in a JSON file (sizes and counts need far fewer digits).
_LONGEST_INTEGER = 30
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


class UnsafeFile(ValueError):
    """The file is not something the tool reads: a pipe or device, too large, badly formed."""


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (OSError if it cannot be opened)."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise UnsafeFile("not a regular file (a pipe, socket or device)")
        if status.st_size > limit:
            raise UnsafeFile(f"file too large to analyse ({status.st_size / 2**20:.1f} MiB; the limit is {limit / 2**20:.0f} MiB)")
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew while being read
        raise UnsafeFile(f"file too large (the limit is {limit / 2**20:.0f} MiB)")
    return data


def _constant(name: str) -> float:
    raise UnsafeFile(f"{name} is not a number JSON allows")


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > _LONGEST_INTEGER:
        raise UnsafeFile(f"an integer of {len(text)} digits")
    return int(text)


def _floating(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UnsafeFile(f"{text[:20]} does not fit a float")
    return value


def parse_json(text: str, depth_limit: int = JSON_DEPTH_LIMIT) -> Any:
    """json.loads with bounded nesting and finite numbers only (UnsafeFile otherwise)."""
    brackets = _STRINGS.sub("", text)
    depth = deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > depth_limit:
                raise UnsafeFile(f"JSON nested more than {depth_limit} levels deep")
        elif char in "]}":
            depth -= 1
    try:
        return json.loads(text, parse_constant=_constant, parse_int=_integer, parse_float=_floating)
    except RecursionError:
        raise UnsafeFile("JSON nested too deeply") from None


def load_json(path: str | os.PathLike[str], limit: int = JSON_SIZE_LIMIT) -> Any:
    """A JSON file read safely: OSError when absent or unreadable, UnsafeFile (a ValueError)
    when it is not a regular file, too large, not UTF-8 JSON, too deep or not finite."""
    data = read_regular(path, limit)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsafeFile(f"not UTF-8 text ({exc.reason})") from None
    try:
        return parse_json(text)
    except UnsafeFile:
        raise
    except ValueError as exc:
        raise UnsafeFile(f"not valid JSON ({exc})") from None


_reported: set[str] = set()


def report_damaged(path: str | os.PathLike[str], reason: object) -> None:
    """Say once per file and process that a file the tool wrote is damaged and will be replaced."""
    key = os.path.abspath(path)
    if key in _reported:
        return
    _reported.add(key)
    try:
        print(f"gpuadvisor: ignoring damaged file {Path(path)} ({reason}); it will be rebuilt", file=sys.stderr)
    except (OSError, ValueError):
        pass  # stderr closed or full: the warning is a courtesy


def finite(value: Any) -> Any:
    """A copy of a JSON-ready value with NaN and infinities replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def dumps_json(value: Any, **options: Any) -> str:
    """json.dumps that never writes NaN or Infinity (invalid JSON that most readers refuse).
    Values are copied through `finite` only when the C encoder refuses them: the copy costs
    more than the encoding, and nearly every value (each cache entry a check writes) is finite."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:  # a NaN or an infinity somewhere
        return json.dumps(finite(value), allow_nan=False, **options)
