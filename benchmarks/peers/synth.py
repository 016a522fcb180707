"""smartnoise-synth's MST and AIM fitting the DP synthetic-data benchmark's table (issue 28).

Runs in a fresh process of the synthetic-data peer environment (``peer_env.py``, ``env="synth"``:
``benchmarks/.synth-venv``, from ``synth-requirements.txt``). It gets the benchmark's table
already discretized: a ``.npy`` file of integer codes (one column per attribute, column ``j``
holding ``0 .. sizes[j] - 1``), the same codes veil's side encodes from the CSV file with its
declared domain, so both tools see the same domain, empty categories included. The codes go in
through a table transformer that passes each code through and declares its column's size (without
it snsynth would read each column's categories from the data). The synthesizer is made with
``Synthesizer.create(mechanism, epsilon=…, delta=…)`` at its defaults otherwise (AIM's
``degree`` can be set: snsynth's default workload is every 2-way marginal); it is fitted and
samples as many rows as the table has, which are written to ``spec["out"]`` as ``.npy``.

snsynth cannot be seeded: its noise comes from OpenDP's samplers and its sampling from NumPy's
global generator, which NumPy seeds from the operating system.
"""

from __future__ import annotations

import os
import time


def fit_sample(spec: dict) -> dict:
    """Fit ``spec["mechanism"]`` (``"mst"`` or ``"aim"``) at ``spec["epsilon"]``, ``spec["delta"]``
    to the codes in ``spec["codes"]`` and write a sample of as many rows to ``spec["out"]``.

    Returns the seconds spent importing, loading, fitting and sampling, and the peer's versions.
    """
    import warnings

    warnings.simplefilter("ignore")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    start = time.perf_counter()
    import numpy as np
    # what Synthesizer.create imports for "mst" and "aim" (mbi, JAX), timed with the imports
    import snsynth.aim
    import snsynth.mst  # noqa: F401
    from snsynth import Synthesizer
    from snsynth.transform.identity import IdentityTransformer
    from snsynth.transform.table import TableTransformer

    class Codes(IdentityTransformer):
        """A column already coded 0 .. size - 1: passed through, its size declared."""

        def __init__(self, size: int):
            super().__init__()
            self.size = size

        @property
        def cardinality(self):
            return [self.size]

    import_s = time.perf_counter() - start
    start = time.perf_counter()
    codes = np.load(spec["codes"])
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    options = {"epsilon": float(spec["epsilon"]), "delta": float(spec["delta"])}
    if spec["mechanism"] == "aim" and spec.get("aim_degree"):
        options["degree"] = int(spec["aim_degree"])
    synth = Synthesizer.create(spec["mechanism"], **options)
    transformer = TableTransformer([Codes(int(s)) for s in spec["sizes"]])
    synth.fit(codes, transformer=transformer)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    rows = synth.sample(codes.shape[0])
    sample = np.asarray(rows, dtype=np.int64).reshape(codes.shape[0], codes.shape[1])
    sample_s = time.perf_counter() - start
    np.save(spec["out"], sample)
    from peers import versions
    return {"import_s": import_s, "load_s": load_s, "fit_s": fit_s, "sample_s": sample_s,
            "versions": versions("smartnoise-synth", "mbi", "jax", "opendp")}
