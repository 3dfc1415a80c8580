"""run.py ported line for line to CuPy (same line numbers)."""
import sys
from pathlib import Path

import cupy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mylib.features import RandomFeatures, lagged  # noqa: E402
from mylib.ridge import fit  # noqa: E402

rng = np.random.default_rng(3)
t = np.arange(40_000)
series = np.sin(t / 50) + 0.5 * np.sin(t / 7) + 0.3 * rng.standard_normal(t.size)
lags = 48
x_all = lagged(series, lags)
y_all = series[lags:]
mapper = RandomFeatures(lags, 512)
errors = []
for origin in range(26_000, 38_000, 3_000):
    phi = mapper.transform(x_all[:origin])
    coef = fit(phi, y_all[:origin], 1e-2)
    forecast = mapper.transform(x_all[origin:origin + 1_000]) @ coef
    errors.append(np.mean((forecast - y_all[origin:origin + 1_000]) ** 2))
print("mse", np.round(np.stack(errors), 4))
