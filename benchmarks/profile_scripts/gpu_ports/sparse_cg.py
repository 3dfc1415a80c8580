"""sparse_cg.py ported line for line to CuPy and cupyx.scipy.sparse (same line numbers)."""
import cupy as np
import cupyx.scipy.sparse as sp

m = 300
one_d = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
eye = sp.identity(m)
A = (sp.kron(one_d, eye) + sp.kron(eye, one_d)).tocsr()
b = np.ones(A.shape[0])
inv_diag = 1.0 / A.diagonal()

x = np.zeros_like(b)
r = b - A @ x
z = inv_diag * r
p = z.copy()
rz = r @ z
for it in range(1500):
    Ap = A @ p
    alpha = rz / (p @ Ap)
    x += alpha * p
    r -= alpha * Ap
    if np.linalg.norm(r) < 1e-8:
        break
    z = inv_diag * r
    rz_new = r @ z
    p = z + (rz_new / rz) * p
    rz = rz_new
print("iterations", it, "residual", float(np.linalg.norm(b - A @ x)))
