"""Rows held run after run: Mondrian keeps the rows of each partition contiguous, and reads
positions within those runs when it splits them and when it publishes their cells."""

from __future__ import annotations

import numpy as np


def run_offsets(lengths: np.ndarray) -> np.ndarray:
    """``0, 1, …, lengths[0]-1, 0, 1, …, lengths[1]-1, …``: positions within runs.

    Args:
        lengths: the length of each run.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
