"""AnonyPy (``anonypy`` 0.2.1): its Mondrian on Adult, step by step."""

from __future__ import annotations

import gc
import time

from peers import versions


def anonypy_mondrian(csv: str, quasi_identifiers: list[str], sensitive: str, k: int):
    """Yield ``["ready", versions]`` once the frame is read, then each step's time as it ends.

    The frame is ``pd.read_csv(csv, sep=";", keep_default_na=False)`` with every column but
    ``age`` of the ``category`` dtype (AnonyPy treats a column of any other dtype as numeric). The
    two steps are what ``anonypy.Preserver.anonymize_k_anonymity`` runs: the partitioning
    (``anonypy.mondrian.Mondrian.partition``), yielded as ``["partition", seconds, group of every
    row]``, and the release (``anonypy.anonymize``), as ``["anonymize", seconds, rows released]``.
    A generator, so that the caller can stop a step that runs too long and keep the steps before.
    """
    import numpy as np
    import pandas as pd

    import anonypy
    from anonypy.mondrian import Mondrian

    frame = pd.read_csv(csv, sep=";", keep_default_na=False)
    for name in frame.columns:
        if name != "age":
            frame[name] = frame[name].astype("category")
    mondrian = Mondrian(frame, quasi_identifiers, sensitive)
    yield ["ready", versions("anonypy", "numpy", "pandas")]
    gc.collect()
    start = time.perf_counter()
    partitions = mondrian.partition(k=k)
    seconds = time.perf_counter() - start
    group = np.empty(len(frame), dtype=np.int64)
    for i, rows in enumerate(partitions):
        group[rows.to_numpy()] = i  # the frame's index is its row numbers
    yield ["partition", seconds, group.tolist()]
    gc.collect()
    start = time.perf_counter()
    released = anonypy.anonymize(frame, partitions, quasi_identifiers, sensitive)
    yield ["anonymize", time.perf_counter() - start, len(released)]
