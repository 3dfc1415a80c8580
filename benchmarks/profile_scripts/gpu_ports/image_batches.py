"""image_batches.py ported line for line to CuPy (same line numbers)."""
import cupy as np

rng = np.random.default_rng(4)
height, width, batch = 256, 256, 32
yy, xx = np.meshgrid(np.fft.fftfreq(height), np.fft.rfftfreq(width), indexing="ij")
blur = np.exp(-(xx**2 + yy**2) / (2 * 0.08**2)).astype(np.float32)
means, spreads = [], []
for step in range(12):
    images = rng.random((batch, height, width, 3), dtype=np.float32)
    channel_mean = images.mean(axis=(0, 1, 2))
    channel_std = images.std(axis=(0, 1, 2))
    normalised = (images - channel_mean) / channel_std
    corrected = np.clip(normalised, -3, 3) ** 2
    planes = np.moveaxis(corrected, -1, 1)
    smoothed = np.fft.irfft2(np.fft.rfft2(planes) * blur, s=(height, width))
    means.append(smoothed.mean())
    spreads.append(float(smoothed.std()))
print(f"mean {float(np.mean(np.stack(means))):.4f}, spread {float(np.mean(np.asarray(spreads))):.4f}")
