"""Soft-sphere particles in a periodic box: all-pairs forces with NumPy broadcasting, velocity Verlet."""
import numpy as np

rng = np.random.default_rng(11)
count, box, dt, steps = 1_500, 40.0, 0.005, 60
position = rng.uniform(0, box, (count, 3))
velocity = rng.standard_normal((count, 3)) * 0.1


def forces(position: np.ndarray) -> np.ndarray:
    delta = position[:, None, :] - position[None, :, :]
    delta -= box * np.round(delta / box)
    distance2 = (delta ** 2).sum(axis=2) + np.eye(count)
    strength = np.where(distance2 < 4.0, 4.0 - distance2, 0.0)
    np.fill_diagonal(strength, 0.0)
    return (strength[:, :, None] * delta).sum(axis=1)


force = forces(position)
energy = []
for step in range(steps):
    velocity += 0.5 * dt * force
    position = (position + dt * velocity) % box
    force = forces(position)
    velocity += 0.5 * dt * force
    energy.append(0.5 * float((velocity ** 2).sum()))
print(f"kinetic energy {energy[0]:.3f} -> {energy[-1]:.3f}")
