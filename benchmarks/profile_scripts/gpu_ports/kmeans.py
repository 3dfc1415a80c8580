"""kmeans.py ported line for line to CuPy (same line numbers; data made on the GPU)."""
import cupy as np, cupyx

rng = np.random.default_rng(0)
n, d, k = 60_000, 16, 24
centers_true = rng.standard_normal((k, d)) * 6
labels_true = rng.integers(0, k, n)
points = centers_true[labels_true] + rng.standard_normal((n, d))

centroids = points[np.random.permutation(n)[:k]].copy()
for step in range(25):
    distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    assign = np.argmin(distances, axis=1)
    sums = np.zeros((k, d))
    cupyx.scatter_add(sums, assign, points)
    counts = np.bincount(assign, minlength=k)
    centroids = sums / np.maximum(counts, 1)[:, None]
inertia = np.linalg.norm(points - centroids[assign], axis=1).sum()
print(f"inertia {float(inertia):.1f}")
