"""Speedup prediction: hardware profiles, analytic op costs, and the learned correction.

Depends on nothing else in gpuadvisor; analysis and interfaces depend on it. scikit-learn
is imported only when a prediction is first asked for.
"""
