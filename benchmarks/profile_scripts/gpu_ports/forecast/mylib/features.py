"""features.py ported line for line to CuPy (same line numbers)."""
import cupy as np


def lagged(series: np.ndarray, lags: int) -> np.ndarray:
    return np.stack([series[i:series.size - lags + i] for i in range(lags)], axis=1)


class RandomFeatures:
    def __init__(self, d_in: int, width: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.weights = rng.standard_normal((d_in, width)) / np.sqrt(d_in)
        self.phase = rng.uniform(0, 2 * np.pi, width)

    def transform(self, x: np.ndarray) -> np.ndarray:
        return np.cos(x @ self.weights + self.phase)
