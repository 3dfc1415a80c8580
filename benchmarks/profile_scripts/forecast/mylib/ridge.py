"""Closed-form ridge regression."""
import numpy as np


def fit(features: np.ndarray, target: np.ndarray, penalty: float) -> np.ndarray:
    gram = features.T @ features
    gram[np.diag_indices_from(gram)] += penalty
    return np.linalg.solve(gram, features.T @ target)
