"""Track a target with a constant-velocity Kalman filter, "accelerated" with CuPy."""

import cupy as cp

F = cp.eye(4)
F[0, 2] = F[1, 3] = 1.0  # position += velocity
H = cp.eye(2, 4)
Q = cp.eye(4) * 1e-3
R = cp.eye(2) * 0.5


def track(measurements):
    x = cp.zeros(4)
    P = cp.eye(4)
    I = cp.eye(4)
    for z in measurements:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        K = P @ H.T @ cp.linalg.inv(S)
        x = x + K @ (cp.asarray(z) - H @ x)
        P = (I - K @ H) @ P
    return cp.asnumpy(x)
