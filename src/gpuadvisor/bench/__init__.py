"""The measurement harness behind the training data (`gpuadvisor bench`).

Runs with the standard library, NumPy and whichever of SciPy / torch / CuPy are installed
(no LibCST, no scikit-learn), so it works unchanged on a bare GPU machine:
`PYTHONPATH=src python3 -m gpuadvisor.bench --help`.
"""
