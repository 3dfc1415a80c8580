"""Shapes observed at run time: what `gpuadvisor profile` saw each operand name hold.

On the lines that may hold array operations, the profiler records what each operand name
held when the line ran (an array's shape, dtype, library and device, or a number), how often
the line ran and the time spent in it. Saved as JSON (`save_observations`), they let
`check --shapes FILE` reuse them without running the script again. This module has no
LibCST in it: the tracer that fills these records runs inside the user's script.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpuadvisor._safe_io import dumps_json, load_json
from gpuadvisor.analysis.facts.values import Device, Value, array, number

SHAPES_FORMAT = "gpuadvisor-shapes/1"


@dataclass(frozen=True)
class Observation:
    """What one operand name held when its line ran: an array, or a plain number."""

    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    library: str | None = None  # numpy | torch | cupy
    on_gpu: bool = False
    number: float | None = None

    def to_json(self) -> dict[str, object]:
        if self.shape is None:
            return {"number": self.number}
        return {"shape": list(self.shape), "dtype": self.dtype, "library": self.library, "on_gpu": self.on_gpu}

    @classmethod
    def from_json(cls, data: object) -> Observation:
        if not isinstance(data, dict):
            raise ValueError("an observation must be an object")
        if "shape" not in data:
            value = data.get("number")
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError("a number observation needs a finite number")
            return cls(number=float(value))
        shape, dtype, library = data.get("shape"), data.get("dtype"), data.get("library")
        if not isinstance(shape, list) or len(shape) > 64 or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ValueError("shape must be a list of at most 64 sizes (NumPy's limit)")
        if not isinstance(dtype, str) or library not in ("numpy", "torch", "cupy"):
            raise ValueError("an array observation needs a dtype and a library (numpy, torch, cupy)")
        return cls(tuple(shape), dtype, library, bool(data.get("on_gpu", False)))

    def value(self) -> Value:
        if self.shape is None:
            assert self.number is not None
            return number(self.number)
        device = Device.GPU if self.on_gpu else Device.HOST
        return array(self.library or "numpy", device, shape=self.shape, dtype=self.dtype)


#: Operand name -> what it held, for one way a line ran.
Signature = tuple[tuple[str, Observation], ...]


@dataclass
class LineRecord:
    """One watched statement: how often it ran, the time spent in it, and what its names held."""

    hits: int = 0
    seconds: float = 0.0
    #: Each distinct signature with the hits and seconds that ran with it.
    signatures: dict[Signature, list[float]] = field(default_factory=dict)


def text_digest(text: str) -> str:
    import hashlib  # OpenSSL's start-up is not paid by a `check` without --shapes

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass
class FileObservations:
    path: str
    digest: str
    #: first line of a statement -> its records
    lines: dict[int, LineRecord]


def save_observations(files: Iterable[FileObservations], target: Path) -> None:
    """The recorded shapes as JSON, for `check --shapes FILE`."""
    payload = {
        "format": SHAPES_FORMAT,
        "files": [
            {
                "path": item.path,
                "sha256": item.digest,
                "lines": [
                    {
                        "line": line,
                        "hits": record.hits,
                        "seconds": record.seconds,
                        "signatures": [
                            {"names": {name: seen.to_json() for name, seen in signature}, "hits": counts[0], "seconds": counts[1]}
                            for signature, counts in record.signatures.items()
                        ],
                    }
                    for line, record in sorted(item.lines.items())
                ],
            }
            for item in files
        ],
    }
    target.write_text(dumps_json(payload, indent=1), encoding="utf-8")


class ShapesFileError(ValueError):
    """The shapes file cannot be read; the message says why in one line."""


def load_observations(source: Path) -> dict[str, FileObservations]:
    """Recorded shapes by resolved file path (raises ShapesFileError with a clear reason)."""
    try:
        data = load_json(source)
    except OSError as exc:
        raise ShapesFileError(f"cannot read shapes file {source}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ShapesFileError(f"shapes file {source} cannot be used: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != SHAPES_FORMAT or not isinstance(data.get("files"), list):
        raise ShapesFileError(f"{source} is not a shapes file written by `gpuadvisor profile` ({SHAPES_FORMAT})")
    found: dict[str, FileObservations] = {}
    try:
        for item in data["files"]:
            lines: dict[int, LineRecord] = {}
            for entry in item["lines"]:
                record = LineRecord(int(entry["hits"]), float(entry["seconds"]))
                for signature in entry["signatures"]:
                    names = tuple((str(name), Observation.from_json(seen)) for name, seen in signature["names"].items())
                    record.signatures[names] = [float(signature["hits"]), float(signature["seconds"])]
                lines[int(entry["line"])] = record
            found[str(Path(item["path"]).resolve())] = FileObservations(str(item["path"]), str(item["sha256"]), lines)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ShapesFileError(f"shapes file {source} is malformed: {exc}") from None
    return found


def most_common(record: LineRecord) -> Signature | None:
    """The signature that took the most time on a line (shapes for `check`)."""
    if not record.signatures:
        return None
    return max(record.signatures.items(), key=lambda item: (item[1][1], item[1][0]))[0]


def signatures_by_rank(lines: Mapping[int, LineRecord], limit: int) -> Iterator[dict[int, Signature]]:
    """The k-th most time-consuming signature of every line, for k = 0 .. limit-1: one static
    walk per rank gives every line's operations under the shapes it really ran with."""
    ranked = {
        line: sorted(record.signatures, key=lambda s: -record.signatures[s][1])[:limit] for line, record in lines.items()
    }
    depth = max((len(signatures) for signatures in ranked.values()), default=0)
    for rank in range(depth):
        yield {line: signatures[rank] for line, signatures in ranked.items() if len(signatures) > rank}
