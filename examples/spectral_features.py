"""Compute spectral features of a large batch of signals with NumPy (runs for minutes)."""

import numpy as np

N_SIGNALS = 4096
LENGTH = 16384

rng = np.random.default_rng(42)
signals = rng.standard_normal((N_SIGNALS, LENGTH), dtype=np.float32)
weights = rng.standard_normal((LENGTH, 512), dtype=np.float32)

projected = signals @ weights
energy = np.sqrt(signals * signals + 1e-6) * np.exp(-signals * signals)
row_mean = energy.mean(axis=1)
spectrum = np.fft.fft(signals)
np.save("projected.npy", projected)
