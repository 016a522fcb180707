"""diffprivlib and OpenDP answering the DP benchmark's queries, and the table's cell indexing
that both sides of the benchmark share.

The columns' integer codes come as ``.npy`` files written by veil's side (``<folder>/<column>.npy``),
so that every tool counts the same rows. Each query returns its time, the noise step's time and
the noisy cells; veil's side checks their accuracy.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
from pathlib import Path

import numpy as np

from peers import versions
from timing import best_of, progress


def labels(name: str, k: int) -> list[str]:
    """The text values of a column: ``a00`` … for ``k`` categories."""
    return [f"{name}{i:02d}" for i in range(k)]


def mixed_key(codes: dict[str, np.ndarray], names: list[str], sizes: dict[str, int]) -> np.ndarray:
    """Row by row, the index of its cell in the C-ordered table over ``names``."""
    key = codes[names[0]]
    for name in names[1:]:
        key = key * sizes[name] + codes[name]
    return key


def true_counts(codes: dict[str, np.ndarray], names: list[str], sizes: dict[str, int]) -> np.ndarray:
    """The exact count of every cell of the table over ``names``."""
    shape = tuple(sizes[n] for n in names)
    return np.bincount(mixed_key(codes, names, sizes), minlength=math.prod(shape)).reshape(shape)


def _load(folder: str, sizes: dict[str, int]) -> dict[str, np.ndarray]:
    return {name: np.load(Path(folder) / f"{name}.npy") for name in sizes}


def diffprivlib_queries(folder: str, sizes: dict[str, int], queries: dict[str, list[str]], epsilon: float,
                        repeat: int) -> dict:
    """``diffprivlib.tools.histogram`` (one column) and ``histogramdd`` (several) on the codes, one
    bin per category (``bins`` = the categories, ``range`` = (−0.5, k − 0.5)); the (N, D) array
    ``histogramdd`` needs is built before the clock starts. The noise step alone is one
    ``GeometricTruncated.randomise`` per cell, as those functions do after counting.

    Raises:
        AssertionError: diffprivlib's bins do not count the codes exactly.
    """
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.mechanisms import GeometricTruncated
    from diffprivlib.tools import histogram, histogramdd

    codes = _load(folder, sizes)

    def noise_only(truth):
        mech = GeometricTruncated(epsilon=epsilon, sensitivity=1, lower=0, upper=sys.maxsize)
        return [mech.randomise(int(x)) for x in truth.ravel()]

    out = {}
    for query, names in queries.items():
        progress(f"diffprivlib: {query}")
        if len(names) == 1:
            data, bins, bounds = codes[names[0]], sizes[names[0]], (-0.5, sizes[names[0]] - 0.5)
            call = lambda: histogram(data, epsilon=epsilon, bins=bins, range=bounds,
                                     accountant=BudgetAccountant())[0]
            count_only = lambda: np.histogram(data, bins=bins, range=bounds)[0]
        else:
            data = np.column_stack([codes[n] for n in names])
            bins, bounds = [sizes[n] for n in names], [(-0.5, sizes[n] - 0.5) for n in names]
            call = lambda: histogramdd(data, epsilon=epsilon, bins=bins, range=bounds,
                                       accountant=BudgetAccountant())[0]
            count_only = lambda: np.histogramdd(data, bins=bins, range=bounds)[0]
        seconds, noisy = best_of(call, repeat)
        truth = true_counts(codes, names, sizes)
        assert np.array_equal(np.asarray(count_only()).astype(np.int64), truth), "diffprivlib's bins miss the codes"
        noise_s, _ = best_of(lambda: noise_only(truth), repeat)
        out[query] = {"seconds": seconds, "noise_s": noise_s, "noisy": np.asarray(noisy, dtype=float).ravel().tolist()}
    return {"versions": versions("diffprivlib", "numpy", "scikit-learn"), "queries": out}


def opendp_queries(folder: str, sizes: dict[str, int], queries: dict[str, list[str]], epsilon: float,
                   repeat: int) -> dict:
    """OpenDP's ``make_count_by_categories`` over the codes (the categories given, no null
    category) chained with ``then_laplace`` (discrete Laplace on integer counts); several
    columns are counted as one mixed-radix key, built inside the timed step. The noise step
    alone is ``make_laplace`` on the true counts. Then OpenDP's polars pipeline, see
    :func:`_opendp_polars`.

    Raises:
        AssertionError: OpenDP's counts are not the exact counts of the codes.
    """
    import opendp.prelude as dp

    dp.enable_features("contrib")
    codes = _load(folder, sizes)
    out = {}
    for query, names in queries.items():
        progress(f"OpenDP: {query}")
        cells = math.prod(sizes[n] for n in names)

        def build():
            count = dp.t.make_count_by_categories(dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance(),
                                                  categories=list(range(cells)), null_category=False, TOA="i64")
            return count, count >> dp.m.then_laplace(scale=1.0 / epsilon)

        build_s, (count, meas) = best_of(build, repeat)
        # The key is part of the work: OpenDP's vector API counts one column, so three become one.
        seconds, noisy = best_of(lambda: meas(mixed_key(codes, names, sizes)), repeat)
        truth = true_counts(codes, names, sizes)
        assert np.array_equal(np.asarray(count(mixed_key(codes, names, sizes)), dtype=np.int64).reshape(truth.shape),
                              truth)
        laplace = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"),
                                    scale=1.0 / epsilon)
        noise_s, _ = best_of(lambda: laplace(truth.ravel()), repeat)
        out[query] = {"seconds": seconds, "build_s": build_s, "noise_s": noise_s,
                      "privacy_map_epsilon": float(meas.map(1)), "noisy": [int(x) for x in noisy]}
    return {"versions": versions("opendp", "polars", "numpy"), "queries": out,
            "polars": _opendp_polars(codes, sizes, queries, epsilon, repeat)}


def _opendp_polars(codes: dict, sizes: dict[str, int], queries: dict[str, list[str]], epsilon: float,
                   repeat: int) -> dict:
    """OpenDP's polars pipeline (``Context`` with a ``Margin`` whose keys are public,
    ``group_by(...).agg(dp.len())``, ``with_keys``) over the text columns; on failure, the
    reason in one line."""
    import opendp.prelude as dp
    import polars as pl

    frame = pl.DataFrame({n: pl.Series(n, labels(n, k)).gather(codes[n]) for n, k in sizes.items()})
    out = {"queries": {}}
    try:
        for query, by in queries.items():
            progress(f"OpenDP polars: {query}")
            keys = pl.DataFrame(list(itertools.product(*(labels(n, sizes[n]) for n in by))), schema=by,
                                orient="row").lazy()

            def release():
                context = dp.Context.compositor(
                    data=frame.lazy(), privacy_unit=dp.unit_of(contributions=1),
                    privacy_loss=dp.loss_of(epsilon=epsilon), split_evenly_over=1,
                    margins=[dp.polars.Margin(by=by, invariant="keys")])
                return context.query().group_by(by).agg(dp.len()).with_keys(keys).release().collect()

            seconds, released = best_of(release, repeat)
            index = {n: {v: i for i, v in enumerate(labels(n, sizes[n]))} for n in by}
            noisy = np.full(tuple(sizes[n] for n in by), np.nan)
            count_col = [c for c in released.columns if c not in by][0]
            for row in released.iter_rows(named=True):
                noisy[tuple(index[n][row[n]] for n in by)] = row[count_col]
            out["queries"][query] = {"seconds": seconds, "noisy": noisy.ravel().tolist()}
    except Exception as exc:  # noqa: BLE001 - any failure is reported, the rest of the run goes on
        text = " ".join(str(exc).split())
        found = re.search(r"Installed python polars version \([^)]*\) != expected version \([^)]*\)", text)
        out = {"error": f"{type(exc).__name__}: {found.group(0) if found else text[:300]}"}
        if found:
            out["error"] += (" — OpenDP's polars plugin only reads query plans of the polars it was built "
                             "against; this environment's polars is another version.")
    return out
