"""What the analyzer hands back: findings and per-file errors, as plain data.

These are the records every interface (text, JSON, SARIF, GitHub annotations, the Python
API) renders, so their field names follow the public contract exactly.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a finding only holds a Prediction once one was made: kept off the start-up path
    from gpuadvisor.analysis.facts.project import ModuleExports
    from gpuadvisor.prediction.result import Prediction


class Severity(enum.IntEnum):
    """Ordered so that `severity >= fail_on` decides the exit code."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            choices = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (choose from {choices})") from None


@dataclass(frozen=True)
class Finding:
    """One reported problem at one place in one file (positions: 1-based lines, 0-based columns)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    rule: str
    category: str
    severity: Severity
    message: str
    suggestion: str
    prediction: Prediction | None = None  # the same record `gpuadvisor.predict()` returns
    cell: int | None = None  # notebooks: the code cell (from 1); `line` then counts within it

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.label
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        from gpuadvisor.prediction.result import Prediction

        prediction = data.get("prediction")
        return cls(**{
            **data,
            "severity": Severity.parse(data["severity"]),
            "prediction": Prediction.from_dict(prediction) if isinstance(prediction, dict) else None,
        })


@dataclass(frozen=True)
class FileError:
    """A file that could not be read, decoded or parsed; reported, never raised."""

    path: str
    kind: str  # read | decode | syntax | too-complex | timeout | crash | internal
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileError:
        return cls(**data)


@dataclass(frozen=True)
class PredictionCandidate:
    """An array operation whose finding depends on a speedup prediction.

    Analysis produces these per file (cacheable plain data); after every file is analysed,
    one batched prediction decides which become findings and fills in their numbers.
    """

    op: str
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    on_gpu: bool
    description: str
    expression: str | None = None
    axis: int | None = None
    input_copy_bytes: float = 0.0
    output_bytes: float = 0.0
    #: Runs inside a loop of many iterations: small savings add up, so smaller ones count.
    repeated: bool = False
    #: The baseline the prediction compares: "torch" code (PyTorch on CPU vs CUDA) or "numpy"
    #: (NumPy/SciPy vs CuPy).
    library: str = "numpy"
    #: Seconds one run of the operation's whole statement took when `gpuadvisor profile` ran it
    #: (check --shapes): the CPU side is then this measured time, as in profile's report.
    measured_cpu_seconds: float | None = None
    #: ... and the first line of that statement (its operations share the measured time)
    measured_statement: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PredictionCandidate:
        return cls(**{**data, "shapes": tuple(tuple(s) for s in data["shapes"])})


@dataclass
class FileResult:
    """Everything one file produced: findings in source order, or the error that stopped it."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    error: FileError | None = None
    #: Findings waiting for a prediction (message and suggestion are filled in afterwards).
    candidates: list[tuple[Finding, PredictionCandidate]] = field(default_factory=list)
    #: What this file tells the rest of the checked project (`facts/project.py`); None when
    #: it was not walked (an error, or no array library in sight).
    exports: ModuleExports | None = None
