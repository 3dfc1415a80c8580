"""Filter a batch of audio frames on the GPU with CuPy."""

import numpy as np
import cupy as cp

window = np.hanning(1024).astype(np.float32)


def spectral_energy(frames: list) -> list:
    energies = []
    for frame in frames:
        w = cp.asarray(window)
        spectrum = cp.fft.rfft(cp.asarray(frame) * w)
        energies.append(float(cp.abs(spectrum).sum()))
    return energies


def normalise(signal):
    x = cp.asarray(signal)
    out = cp.empty_like(x)
    peak = x.max()
    for i in range(x.shape[0]):
        out[i] = x[i] / peak
    return out


def iterate_until_converged(initial):
    estimate = cp.asarray(initial)
    residual = cp.ones(1)
    while residual.max() > 1e-6:
        update = estimate * 0.5
        residual = cp.abs(update - estimate)
        estimate = update
    return cp.asnumpy(estimate)
