"""Local DP benchmark (issue 7): veil's frequency oracles beside pure-LDP, in one run.

* **Side by side** at n = 100,000 users over a domain of 64, ε = 1, for OUE and OLH: veil's
  ``perturb`` + ``estimate`` (vectorized over users; best of ``--repeat``) against pure-LDP's
  per-user loop (``UEClient(use_oue=True).privatise`` / ``LHClient(use_olh=True).privatise`` for
  every user, ``aggregate`` of every report, then ``estimate`` of every value; timed once, it is
  slow). Both are checked for accuracy in the same run: the mean squared error of the count
  estimates over the 64 values, divided by the theoretical variance (exact, per value).
* **The goal**: veil's OLH at n = 1,000,000 over a domain of 1,024 (perturb + estimate) in under
  2 s. pure-LDP is not run there (its server evaluates n·d xxhash calls in a Python loop); the
  report gives its 100,000 × 64 time scaled by n·d, labelled as an extrapolation.

The users' values are Zipf-like, P(v) ∝ 1/(v + 1), drawn with the benchmark seed; veil's coins are
seeded (a simulation); pure-LDP draws from ``random`` and ``numpy.random``, seeded the same.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import math
import os
import platform
import random
import time

import numpy as np
from harness import SEED, best_of, cpu_model, fmt_ratio, fmt_time, progress

EPSILON = 1.0
SMALL_N, SMALL_D = 100_000, 64
LARGE_N, LARGE_D = 1_000_000, 1024
LARGE_GOAL_S = 2.0


def _values(n: int, d: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, d + 1)
    return np.random.default_rng(SEED).choice(d, size=n, p=weights / weights.sum()).astype(np.int64)


def _accuracy(estimates: np.ndarray, truth: np.ndarray, variance: np.ndarray) -> dict:
    mse = float(np.mean((estimates - truth) ** 2))
    return {"mse": mse, "variance": float(np.mean(variance)), "mse_over_variance": mse / float(np.mean(variance))}


def _veil(name: str, n: int, d: int, repeat: int) -> dict:
    from veil.ldp import make_protocol

    proto = make_protocol(name, EPSILON, d)
    values = _values(n, d)
    truth = np.bincount(values, minlength=d)
    rng = np.random.default_rng(SEED + 1)
    times = {}
    progress(f"veil {proto.name}: n = {n:,}, d = {d:,}")

    def run():
        start = time.perf_counter()
        reports = proto.perturb(values, rng=rng)
        middle = time.perf_counter()
        est = proto.estimate(reports)
        times.setdefault("perturb", []).append(middle - start)
        times.setdefault("estimate", []).append(time.perf_counter() - middle)
        return est

    seconds, est = best_of(run, repeat)
    return {"protocol": proto.name, "n": n, "d": d, "seconds": seconds, "perturb_s": min(times["perturb"]),
            "estimate_s": min(times["estimate"]), "threads": os.cpu_count(),
            **_accuracy(est, truth, proto.variance(n, truth))}


def _pure_ldp_class(module: str, cls: str):
    """A class from one of pure-LDP's modules, loaded from its file.

    ``pure_ldp.frequency_oracles/__init__.py`` imports every oracle, RAPPOR's among them, which
    needs statsmodels (not a dependency pure-LDP declares); loading the four modules used here by
    path runs the same code without it.
    """
    import importlib.util
    import sys
    from pathlib import Path

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


def _pure_ldp(name: str, n: int, d: int) -> dict:
    UEClient = _pure_ldp_class("unary_encoding/ue_client", "UEClient")
    UEServer = _pure_ldp_class("unary_encoding/ue_server", "UEServer")
    LHClient = _pure_ldp_class("local_hashing/lh_client", "LHClient")
    LHServer = _pure_ldp_class("local_hashing/lh_server", "LHServer")
    identity = lambda x: x
    if name == "oue":
        client = UEClient(EPSILON, d, use_oue=True, index_mapper=identity)
        server = UEServer(EPSILON, d, use_oue=True, index_mapper=identity)
    else:
        client = LHClient(EPSILON, d, use_olh=True, index_mapper=identity)
        server = LHServer(EPSILON, d, use_olh=True, index_mapper=identity)
    values = _values(n, d).tolist()
    truth = np.bincount(values, minlength=d)
    random.seed(SEED)
    np.random.seed(SEED)
    progress(f"pure-LDP {name.upper()}: n = {n:,}, d = {d:,} (slow)")
    start = time.perf_counter()
    for value in values:
        server.aggregate(client.privatise(value))
    est = np.array([server.estimate(v, suppress_warnings=True) for v in range(d)], dtype=float)
    measured = time.perf_counter() - start
    shim = 0.0
    if name == "olh":  # one hash per user on the client, d per user on the server
        shim = _shim_overhead_per_call() * (n + n * d)
    from veil.ldp import make_protocol

    proto = make_protocol(name, EPSILON, d)
    return {"protocol": name.upper(), "n": n, "d": d, "seconds": measured - shim, "measured_s": measured,
            "shim_overhead_s": shim, **_accuracy(est, truth, proto.variance(n, truth))}


def run(repeat: int) -> dict:
    """Time veil and pure-LDP side by side, then veil's OLH on the large setting."""
    import veil

    pairs = []
    for name in ("oue", "olh"):
        ours = _veil(name, SMALL_N, SMALL_D, repeat)
        peer = _pure_ldp(name, SMALL_N, SMALL_D)
        pairs.append({"protocol": name.upper(), "veil": ours, "pure_ldp": peer, "speedup": peer["seconds"] / ours["seconds"]})
    large = _veil("olh", LARGE_N, LARGE_D, repeat)
    olh_peer = pairs[1]["pure_ldp"]["seconds"]
    scale = (LARGE_N * LARGE_D) / (SMALL_N * SMALL_D)
    extrapolated = olh_peer * scale
    progress("")
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
        "versions": {"veil": veil.__version__, "numpy": np.__version__,
                     "pure-ldp": importlib.metadata.version("pure-ldp")},
        "epsilon": EPSILON, "seed": SEED, "repeat": repeat,
        "side_by_side": pairs,
        "large": {"veil": large, "pure_ldp_extrapolated_s": extrapolated, "extrapolation_factor": scale,
                  "speedup_vs_extrapolation": extrapolated / large["seconds"]},
        "goals": {"large_s": large["seconds"], "large_met": large["seconds"] < LARGE_GOAL_S},
    }


def terminal_report(results: dict) -> str:
    """The report printed to the terminal (80 columns)."""
    lines = [f"veil local-DP benchmark, {results['date']}",
             f"{results['cpu']}, {results['cores']} cores, Python {results['python']}",
             ", ".join(f"{k} {v}" for k, v in results["versions"].items()),
             f"ε = {results['epsilon']:g}; perturb + estimate; veil best of {results['repeat']}, pure-LDP once",
             "", f"n = {SMALL_N:,} users, d = {SMALL_D}",
             f"  {'protocol':<9}{'veil':>10}{'pure-LDP':>11}{'veil faster':>13}{'MSE/Var veil':>14}{'pure-LDP':>10}",
             "  " + "-" * 67]
    for pair in results["side_by_side"]:
        ours, peer = pair["veil"], pair["pure_ldp"]
        lines.append(f"  {pair['protocol']:<9}{fmt_time(ours['seconds']):>10}{fmt_time(peer['seconds']):>11}"
                     f"{fmt_ratio(pair['speedup']):>13}{ours['mse_over_variance']:>14.3f}"
                     f"{peer['mse_over_variance']:>10.3f}")
    large = results["large"]
    ours = large["veil"]
    lines += ["", f"n = {LARGE_N:,} users, d = {LARGE_D:,}, OLH (g = {round(math.exp(results['epsilon'])) + 1})",
              f"  veil: {fmt_time(ours['seconds'])} (perturb {fmt_time(ours['perturb_s'])}, estimate "
              f"{fmt_time(ours['estimate_s'])}, up to {ours['threads']} threads); MSE/Var "
              f"{ours['mse_over_variance']:.3f}",
              f"  pure-LDP not run; its {SMALL_N:,} × {SMALL_D} time × {large['extrapolation_factor']:g} (n·d) "
              f"≈ {fmt_time(large['pure_ldp_extrapolated_s'])}, {fmt_ratio(large['speedup_vs_extrapolation'])} "
              "veil's (an extrapolation)",
              "", "Goal",
              f"  OLH, {LARGE_N:,} users over {LARGE_D:,} values, under {LARGE_GOAL_S:g} s: "
              f"{fmt_time(results['goals']['large_s'])}, {'met' if results['goals']['large_met'] else 'NOT MET'}"]
    return "\n".join(lines)


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    large = results["large"]
    ours = large["veil"]
    out = ["## Local DP benchmark", "",
           f"Measured {results['date']} on {results['cpu']} ({results['cores']} cores), Python "
           f"{results['python']}, " + ", ".join(f"{k} {v}" for k, v in results["versions"].items())
           + f". ε = {results['epsilon']:g}; each figure is perturb + aggregate + estimate of every value; veil is "
           f"the best of {results['repeat']} runs, pure-LDP runs once. Reproduce with "
           "`python benchmarks/run.py --only ldp`.", "",
           f"### Side by side: n = {SMALL_N:,} users, d = {SMALL_D}", "",
           "| protocol | veil | pure-LDP | veil faster by | MSE / Var, veil | MSE / Var, pure-LDP |",
           "|---|---:|---:|---:|---:|---:|"]
    for pair in results["side_by_side"]:
        o, p = pair["veil"], pair["pure_ldp"]
        out.append(f"| {pair['protocol']} | {fmt_time(o['seconds'])} | {fmt_time(p['seconds'])} | "
                   f"{fmt_ratio(pair['speedup'])} | {o['mse_over_variance']:.3f} | {p['mse_over_variance']:.3f} |")
    olh_peer = results["side_by_side"][1]["pure_ldp"]
    out += ["", "MSE / Var: the mean squared error of the 64 count estimates over the mean of their exact "
                "theoretical variances (one run, so ±25 % is sampling noise).", "",
            f"pure-LDP 1.2.0's local hashing passes `str` to `xxhash.xxh32`, which the installed xxhash 4 refuses; "
            f"the run hands it a shim that encodes the text first. Its OLH took {fmt_time(olh_peer['measured_s'])} "
            f"with the shim; the shim's own cost, measured in the same run ({fmt_time(olh_peer['shim_overhead_s'])} "
            f"over {SMALL_N * (SMALL_D + 1):,} hash calls), is taken off, so the figure and ratio above favour "
            "pure-LDP if anything.", "",
            f"### OLH at n = {LARGE_N:,}, d = {LARGE_D:,}", "",
            f"veil: **{fmt_time(ours['seconds'])}** (perturb {fmt_time(ours['perturb_s'])}, estimate "
            f"{fmt_time(ours['estimate_s'])}, aggregation on up to {ours['threads']} threads; "
            f"MSE / Var {ours['mse_over_variance']:.3f}). pure-LDP is not run at this size: scaling its "
            f"{SMALL_N:,} × {SMALL_D} OLH time by n·d (×{large['extrapolation_factor']:g}) gives about "
            f"{fmt_time(large['pure_ldp_extrapolated_s'])}, {fmt_ratio(large['speedup_vs_extrapolation'])} "
            "veil's time (an extrapolation, not a measurement).", "", "Goal:", "",
            f"- OLH, {LARGE_N:,} users over {LARGE_D:,} values, perturb + estimate under {LARGE_GOAL_S:g} s: "
            f"{fmt_time(results['goals']['large_s'])}, **{'met' if results['goals']['large_met'] else 'not met'}**", ""]
    return "\n".join(out)
