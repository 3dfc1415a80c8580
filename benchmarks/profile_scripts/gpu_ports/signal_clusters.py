"""examples/signal_clusters.py ported line for line to CuPy (same line numbers; the recording read with NumPy, copied in).

    python examples/signal_clusters.py recording.npy [clusters] [rounds]
    python examples/signal_clusters.py --make-data recording.npy   # a synthetic recording

A typical analysis script: the array sizes come from the file, so only a run (`gpuadvisor
profile`) can tell which lines are worth moving to a GPU.
"""

import sys

import cupy as np, numpy

WINDOW = 1024
HOP = 512


def make_recording(path: str, seconds: int = 600, rate: int = 16_000) -> None:
    rng = np.random.default_rng(7)
    t = np.arange(seconds * rate, dtype=np.float32) / rate
    tones = np.sin(2 * np.pi * 440.0 * t) * (t % 4 < 2) + 0.5 * np.sin(2 * np.pi * 1200.0 * t) * (t % 3 < 1)
    noise = rng.standard_normal(t.shape[0], dtype=np.float32)
    np.save(path, (tones + 0.3 * noise).astype(np.float32))


def frames(signal: np.ndarray) -> np.ndarray:
    count = 1 + (signal.shape[0] - WINDOW) // HOP
    index = np.arange(WINDOW)[None, :] + HOP * np.arange(count)[:, None]
    return signal[index] * np.hanning(WINDOW).astype(np.float32)


def spectra(windows: np.ndarray) -> np.ndarray:
    power = np.abs(np.fft.rfft(windows, axis=1)) ** 2
    logged = np.log(power + 1e-9)
    return (logged - logged.mean(axis=0)) / (logged.std(axis=0) + 1e-6)


def kmeans(features: np.ndarray, clusters: int, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    centers = features[:: features.shape[0] // clusters][:clusters].copy()
    for _ in range(rounds):
        distances = (features * features).sum(axis=1)[:, None] - 2.0 * features @ centers.T + (centers * centers).sum(axis=1)
        labels = distances.argmin(axis=1)
        for k in range(clusters):
            members = features[labels == k]
            if len(members):
                centers[k] = members.mean(axis=0)
    return centers, labels


def main(argv: list[str]) -> int:
    if argv[:1] == ["--make-data"]:
        make_recording(argv[1])
        return 0
    signal = np.asarray(numpy.load(argv[0]))
    clusters = int(argv[1]) if len(argv) > 1 else 8
    rounds = int(argv[2]) if len(argv) > 2 else 20
    features = spectra(frames(signal))
    covariance = features.T @ features / features.shape[0]
    centers, labels = kmeans(features, clusters, rounds)
    print(f"{features.shape[0]} windows, {clusters} clusters, sizes {np.bincount(labels, minlength=clusters).tolist()}")
    print(f"covariance trace {float(np.trace(covariance)):.1f}, centre spread {float(np.linalg.norm(centers)):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
