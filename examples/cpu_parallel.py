"""Speed up a simulation by running it on several threads (it will not get faster)."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

os.environ["OMP_NUM_THREADS"] = "4"


def simulate_walkers(n_steps: int, seed: int) -> float:
    position = 0.0
    state = seed
    for _ in range(n_steps):
        state = (state * 1103515245 + 12345) % 2**31
        position += 1.0 if state % 2 else -1.0
    return position * position


def mean_square_displacement(n_walkers: int = 8, n_steps: int = 1_000_000) -> float:
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(simulate_walkers, [n_steps] * n_walkers, range(n_walkers)))
    return float(np.mean(results))
