"""pure-LDP 1.2.0: its per-user frequency oracles (OUE and OLH), timed once."""

from __future__ import annotations

import importlib.util
import random
import sys
import time
from pathlib import Path

import numpy as np

from peers import versions
from timing import progress


def _pure_ldp_class(module: str, cls: str):
    """A class from one of pure-LDP's modules, loaded from its file.

    ``pure_ldp.frequency_oracles/__init__.py`` imports every oracle, RAPPOR's among them, which
    needs statsmodels (not a dependency pure-LDP declares); loading the four modules used here by
    path runs the same code without it.
    """
    root = Path(importlib.util.find_spec("pure_ldp").submodule_search_locations[0])
    key = f"_veil_bench_pure_ldp_{module.replace('/', '_')}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, root / "frequency_oracles" / f"{module}.py")
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
        if hasattr(sys.modules[key], "xxhash"):
            sys.modules[key].xxhash = _XXHashShim
    return getattr(sys.modules[key], cls)


class _XXHashShim:
    """pure-LDP 1.2.0 hashes ``str`` with ``xxhash.xxh32``, which xxhash 4 refuses ("Strings must
    be encoded before hashing"); this encodes the text first (what xxhash 1.x did in C). Only the
    modules loaded above see it. Its own cost is measured and taken off pure-LDP's time."""

    @staticmethod
    def xxh32(data, seed=0):
        import xxhash

        return xxhash.xxh32(data.encode() if isinstance(data, str) else data, seed=seed)


def _shim_overhead_per_call(calls: int = 300_000) -> float:
    """Seconds the shim adds to one hash call (its Python call and import), measured here."""
    import xxhash

    texts = [str(i % 1024) for i in range(calls)]
    start = time.perf_counter()
    for i, text in enumerate(texts):
        xxhash.xxh32(text.encode(), seed=i).intdigest()
    direct = time.perf_counter() - start
    start = time.perf_counter()
    for i, text in enumerate(texts):
        _XXHashShim.xxh32(text, seed=i).intdigest()
    shimmed = time.perf_counter() - start
    return max(shimmed - direct, 0.0) / calls


def frequency_oracle(name: str, values: list[int], d: int, epsilon: float, seed: int) -> dict:
    """pure-LDP's ``UEClient(use_oue=True)`` (``name`` "oue") or ``LHClient(use_olh=True)`` ("olh"):
    ``privatise`` every user's value and ``aggregate`` the report on the server, then ``estimate``
    every value, timed once (``random`` and ``numpy.random`` seeded with ``seed``).

    Returns the time measured, the shim's cost within it (one hash per user on the client, ``d``
    per user on the server, for OLH) and the estimates.
    """
    UEClient = _pure_ldp_class("unary_encoding/ue_client", "UEClient")
    UEServer = _pure_ldp_class("unary_encoding/ue_server", "UEServer")
    LHClient = _pure_ldp_class("local_hashing/lh_client", "LHClient")
    LHServer = _pure_ldp_class("local_hashing/lh_server", "LHServer")
    identity = lambda x: x
    if name == "oue":
        client = UEClient(epsilon, d, use_oue=True, index_mapper=identity)
        server = UEServer(epsilon, d, use_oue=True, index_mapper=identity)
    else:
        client = LHClient(epsilon, d, use_olh=True, index_mapper=identity)
        server = LHServer(epsilon, d, use_olh=True, index_mapper=identity)
    random.seed(seed)
    np.random.seed(seed)
    progress(f"pure-LDP {name.upper()}: n = {len(values):,}, d = {d:,} (slow)")
    start = time.perf_counter()
    for value in values:
        server.aggregate(client.privatise(value))
    estimates = [float(server.estimate(v, suppress_warnings=True)) for v in range(d)]
    measured = time.perf_counter() - start
    shim = _shim_overhead_per_call() * (len(values) + len(values) * d) if name == "olh" else 0.0
    return {"versions": versions("pure-ldp", "xxhash", "numpy"), "measured_s": measured,
            "shim_overhead_s": shim, "estimates": estimates}
