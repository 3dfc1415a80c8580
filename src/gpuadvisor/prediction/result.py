"""The one record of a speedup prediction: what `predict()` returns and what findings carry.

Plain data with no NumPy inside, so that findings (and their cache) can hold it without
loading the predictor.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Prediction:
    """CPU, GPU and copy seconds of one operation, the speedup with its range, a recommendation.

    Serialised by `to_dict` the same way everywhere: `predict --format json` and a finding's
    `prediction` field in `check --format json`.
    """

    op: str
    shapes: list[list[int]]
    dtype: str
    gpu: str
    cpu: str
    data_on: str
    cpu_seconds: float
    gpu_seconds: float
    transfer_seconds: float
    speedup: float
    speedup_compute_only: float
    interval: list[float]
    recommendation: str
    gpu_name: str = ""
    cpu_name: str = ""
    #: "numpy": NumPy/SciPy on the CPU vs CuPy on the GPU; "torch": PyTorch on both.
    library: str = "numpy"
    #: Per side ("cpu", "gpu"): whether the model was fitted to measured runs of this op (on the
    #: machines in the training data, not this one) or rests on the analytic model alone.
    basis: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Prediction:
        return cls(**data)
