"""Comparing a rendered picture with a reference image, shared by the picture tests."""

from __future__ import annotations

import numpy as np


def _blocks(img: np.ndarray, k: int = 6) -> np.ndarray:
    h, w = (img.shape[0] // k) * k, (img.shape[1] // k) * k
    return img[:h, :w, :3].reshape(h // k, k, w // k, k, 3).mean(axis=(1, 3))


def distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference of 6x6-block averages: tolerant of font and anti-aliasing changes
    (infinite when the sizes differ)."""
    if a.shape[:2] != b.shape[:2]:
        return float("inf")
    return float(np.abs(_blocks(a) - _blocks(b)).mean())
