"""The op registry: one entry per operation `gpuadvisor predict` knows (ops/registry.py).

This layer sits below the measurement harness and the predictor, both of which read it, and
imports nothing heavier than the standard library: an op's names, how code calls it, its
FLOP and byte formulas, how the CPU libraries thread it, which series `gpuadvisor bench`
measures it on and which sizes a sweep covers all live in its entry, so adding an op is
one entry (and its tests) instead of a string in a dozen modules.
"""
