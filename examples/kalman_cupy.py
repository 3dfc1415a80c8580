"""Track a target with a constant-velocity Kalman filter, "accelerated" with CuPy."""

import cupy as cp

F = cp.eye(4) + cp.diag(cp.ones(2), k=2)
H = cp.eye(2, 4)
Q = cp.eye(4) * 1e-3
R = cp.eye(2) * 0.5


def step(x, P, z):
    x = F @ x
    P = F @ P @ F.T + Q
    S = H @ P @ H.T + R
    K = P @ H.T @ cp.linalg.inv(S)
    x = x + K @ (z - H @ x)
    P = (cp.eye(4) - K @ H) @ P
    return x, P


def track(measurements):
    x = cp.zeros(4)
    P = cp.eye(4)
    for z in measurements:
        x, P = step(x, P, cp.asarray(z))
    return cp.asnumpy(x)
