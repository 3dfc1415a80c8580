"""Compare NumPy and PyTorch matrix multiplication speed (the way many blog posts do it)."""

import time

import numpy as np
import torch

N = 8192

a_cpu = np.random.rand(N, N).astype(np.float32)
b_cpu = np.random.rand(N, N).astype(np.float32)

start = time.time()
c_cpu = a_cpu @ b_cpu
print(f"numpy: {time.time() - start:.3f} s")

a_gpu = torch.randn(N, N, device="cuda")
b_gpu = torch.randn(N, N, device="cuda")

start = time.time()
c_gpu = a_gpu @ b_gpu
elapsed = time.time() - start
print(f"torch cuda: {elapsed:.4f} s  (speedup {(time.time() - start) and 1:.0f}x)")

row_norms = torch.linalg.norm(c_gpu, dim=1)
print("largest row norm:", max(row_norms))
