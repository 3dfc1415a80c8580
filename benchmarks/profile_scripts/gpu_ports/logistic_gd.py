"""logistic_gd.py ported line for line to CuPy (same line numbers)."""
import cupy as np

rng = np.random.default_rng(5)
samples, features = 200_000, 64
x = rng.standard_normal((samples, features)).astype(np.float32)
true_w = rng.standard_normal(features).astype(np.float32)
y = (x @ true_w + 0.5 * rng.standard_normal(samples).astype(np.float32) > 0).astype(np.float32)

w = np.zeros(features, dtype=np.float32)
bias = np.float32(0.0)
for iteration in range(300):
    logits = x @ w + bias
    prob = 1.0 / (1.0 + np.exp(-logits))
    error = prob - y
    grad_w = x.T @ error / samples
    grad_b = error.mean()
    w -= 0.5 * grad_w
    bias -= 0.5 * grad_b
    if np.abs(grad_w).max() < 1e-4:
        break
loss = -np.mean(y * np.log(prob + 1e-7) + (1 - y) * np.log(1 - prob + 1e-7))
print(f"iterations {iteration + 1}, loss {float(loss):.4f}, accuracy {float(np.mean((prob > 0.5) == y)):.3f}")
