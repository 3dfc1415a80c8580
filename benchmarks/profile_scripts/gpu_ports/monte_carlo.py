"""monte_carlo.py ported line for line to CuPy (same line numbers)."""
import cupy as np

rng = np.random.default_rng(42)
s0, strike, rate, vol, years = 100.0, 105.0, 0.03, 0.25, 1.0
steps, paths_per_batch, batches = 252, 20_000, 16
dt = years / steps
payoffs = []
for _ in range(batches):
    shocks = rng.standard_normal((paths_per_batch, steps))
    log_paths = np.cumsum((rate - 0.5 * vol**2) * dt + vol * np.sqrt(dt) * shocks, axis=1)
    prices = s0 * np.exp(log_paths)
    average = prices.mean(axis=1)
    payoffs.append(np.maximum(average - strike, 0.0))
payoff = np.concatenate(payoffs)
price = np.exp(-rate * years) * payoff.mean()
print(f"price {float(price):.3f} +- {float(1.96 * payoff.std() / np.sqrt(payoff.size)):.3f}")
