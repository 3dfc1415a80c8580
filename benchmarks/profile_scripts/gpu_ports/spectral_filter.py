"""spectral_filter.py ported line for line to CuPy (same line numbers)."""
import cupy as np

rng = np.random.default_rng(1)
rate, frame, hop = 16_000, 1024, 256
signal = rng.standard_normal(rate * 180).astype(np.float32)
window = np.hanning(frame).astype(np.float32)
starts = np.arange(0, signal.size - frame, hop)
mel = np.abs(rng.standard_normal((frame // 2 + 1, 64))).astype(np.float32)
features = []
for chunk in range(0, starts.size, 512):
    frames = signal[starts[chunk:chunk + 512, None] + np.arange(frame)] * window
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    features.append(np.log(power @ mel + 1e-6))
feats = np.concatenate(features)

image = rng.standard_normal((1024, 1024))
yy, xx = np.meshgrid(np.fft.fftfreq(1024), np.fft.rfftfreq(1024), indexing="ij")
for sigma in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4):
    gain = np.exp(-(xx**2 + yy**2) / (2 * sigma**2))
    smooth = np.fft.irfft2(np.fft.rfft2(image) * gain, s=image.shape)
    mix = np.einsum("ij,jk->ik", smooth[:, :256], smooth[:256, :])
print(feats.shape, float(mix.std()))
