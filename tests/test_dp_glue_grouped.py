"""Replay tests of the glue of grouped DP queries whose keys come from a key file, a hierarchy
level, an "other" bucket, or private partition selection (issue 27, items 2 and 7), with the
harness of :mod:`veil.conformance.glue`: on a table and on its neighbours (one person added or
removed, values inside and outside the keys and bounds), the draws asked of the samplers must be
the same.

Public keys (from any source, with or without the other bucket) draw exactly alike on every
neighbour. Private partition selection cannot: see the last tests.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.conformance import ConformanceError
from veil.conformance.glue import check_release, neighbour, recording
from veil.data.hierarchy import Hierarchy
from veil.dp import BudgetUnit, PrivacyUnit, Query
from veil.dp.accountant import Accountant
from veil.dp.aggregates import count, mean, sum
from veil.dp.budget import Budget
from veil.dp.noise import NoiseSource
from veil.dp.partition_selection import PartitionSelection
from veil.dp.true_cells import true_statistics

PURCHASES = pd.DataFrame({"pid": [f"p{(i * 7) % 9}" for i in range(36)],
                          "region": ["n", "s", "e", "n", "w", "s"] * 6,
                          "amount": [float((i * 37) % 120 - 10) for i in range(36)]})
PURCHASES_DOMAIN = {"pid": ["p_new"], "region": ["n", "s", "w", "zz", None],
                    "amount": [0.0, 55.5, -400.0, 1e9, float("nan")]}
AGGS = (count(), sum("amount", -5, 100), mean("amount", 0, 100))
UNIT = PrivacyUnit.person("pid", max_rows=4, max_groups=2, max_rows_per_group=2)

_KEYS_FILE = Path(tempfile.mkdtemp(prefix="veil-glue-keys-")) / "regions.csv"
_KEYS_FILE.write_text("region\nn\ns\nq\n", encoding="utf-8")
COMPASS = Hierarchy([["n", "north-ish", "*"], ["e", "north-ish", "*"], ["s", "south-ish", "*"],
                     ["w", "south-ish", "*"], ["c", "centre", "*"]], name="compass")


def _accountant(unit):
    budget_unit = BudgetUnit.person("pid") if unit.is_person else BudgetUnit.rows()
    return Accountant(Budget(2.0, 1e-5), dataset_id="purchases").declare_unit(budget_unit)


def _release(group, rho=None, unit=UNIT):
    def release(t):
        q = group(Query(t, unit=unit)).agg(*AGGS)
        if rho is not None:
            q.evaluate(rho=rho, rng=5)
        else:
            q.evaluate(0.9, rng=5, accountant=_accountant(unit))
    return release


PUBLIC_PATHS = {
    "key file": _release(lambda q: q.group_by("region", keys_file=_KEYS_FILE)),
    "key file + other": _release(lambda q: q.group_by("region", keys_file=_KEYS_FILE, other=True)),
    "hierarchy level 1": _release(lambda q: q.group_by("region", hierarchy=(COMPASS, 1))),
    "hierarchy level 1 + other": _release(lambda q: q.group_by("region", hierarchy=(COMPASS, 1), other=True)),
    "hierarchy x domain + other": _release(lambda q: q.group_by(
        ["region", "pid"], hierarchy={"region": (COMPASS, 1)}, domains={"pid": ["p0", "p1", "p4"]}, other=True)),
    "list + other": _release(lambda q: q.group_by("region", keys=["n", "x"], other=True)),
    "domains + other zcdp": _release(lambda q: q.group_by("region", domains={"region": ["n", "s"]}, other=True),
                                     rho=0.3),
    "list + other row unit": _release(lambda q: q.group_by("region", keys=["n", "s"], other=True),
                                      unit=PrivacyUnit.rows()),
}


@st.composite
def person_neighbours(draw):
    removed = neighbour(PURCHASES, "removed", row=draw(st.integers(0, len(PURCHASES) - 1)), unit="pid")
    added = PURCHASES
    for _ in range(draw(st.integers(1, 4))):  # a new person of one to four rows
        record = {c: draw(st.sampled_from(v)) for c, v in PURCHASES_DOMAIN.items()}
        added = neighbour(added, "added", row=draw(st.integers(0, len(added))), record=record)
    return {"removed": removed, "added": added}


FEW = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("path", PUBLIC_PATHS)
@FEW
@given(found=person_neighbours())
def test_public_keys_from_any_source_draw_the_same_noise_for_one_person_more_or_less(path, found):
    check_release(path, PUBLIC_PATHS[path], PURCHASES, found)


def test_public_keys_draw_the_same_noise_when_every_person_leaves_or_a_heavy_one_joins():
    heavy = pd.DataFrame({"pid": ["p_heavy"] * 20, "region": ["n", "s", "zz", None] * 5, "amount": [1e6, -1e6] * 10})
    fixed = {"empty": PURCHASES.iloc[:0], "heavy": pd.concat([PURCHASES, heavy], ignore_index=True)}
    for path, release in PUBLIC_PATHS.items():
        check_release(path, release, PURCHASES, fixed)


# ---------------------------------------------------------------------------------------------
# private partition selection
# ---------------------------------------------------------------------------------------------
# Private partition selection draws one noisy count, and one noisy cell per aggregate, for every
# *candidate* key (a key present after contribution bounding): the number of cells asked for is
# the number of candidates, which depends on the data by the algorithm's definition (Wilson et al.
# 2020; Google's DP library), just as the pan-private density estimator of test_dp_glue.py redraws
# one coin per user who appeared. What keeps it private is not that the draws are data-independent
# but that (1) the noise *scales* are (they come from the unit's bounds, never from the
# candidates: the sensitivities take the number of keys as unbounded), (2) a candidate's
# noisy values leave the process only when its noisy count reaches the threshold, which a key
# held by one person alone does with probability at most δ (tests/test_dp_partition_selection.py),
# and (3) nothing is announced about the others (no count, no message; with the secure source the
# number of draws leaves no trace). So the replay checks, on every neighbour, that the samplers and
# their exact scales are identical, in the same order, and that the cells asked for are exactly
# the candidate keys (computed independently by the engine with the same bounding coins).
PRIVATE_PATHS = {
    "private eps": (lambda t: Query(t, unit=UNIT).group_by("region", private=PartitionSelection(1e-6)), None),
    "private eps threshold": (lambda t: Query(t, unit=UNIT).group_by(
        "region", private=PartitionSelection(1e-6, threshold=400, weight=2)), None),
    "private rho": (lambda t: Query(t, unit=UNIT).group_by("region", private=PartitionSelection(1e-6)), 0.5),
    "private row unit": (lambda t: Query(t).group_by("region", private=PartitionSelection(1e-6)), None),
    "private two columns": (lambda t: Query(t.assign(parity=t["amount"].fillna(0) > 40), unit=UNIT).group_by(
        ["region", "parity"], private=PartitionSelection(1e-6)), None),
}


def _run_private(path, table):
    build, rho = PRIVATE_PATHS[path]
    grouped = build(table)
    with recording() as seen:
        if rho is None:
            grouped.agg(*AGGS).evaluate(0.9, rng=11, accountant=_accountant(grouped.query.unit))
        else:
            grouped.agg(*AGGS).evaluate(rho=rho, rng=11)
    _, stats = true_statistics(grouped.query, grouped.columns, None, [("rows",)], NoiseSource.seeded(11))
    return seen.draws, len(stats[("rows",)])


def _check_private(path, tables):
    base, _ = _run_private(path, PURCHASES)
    scales = [(d.sampler, d.parameters) for d in base]
    assert len(scales) == 1 + 4  # the selection's counts, then count, sum, mean's sum and count
    for label, table in tables.items():
        draws, candidates = _run_private(path, table)
        assert [(d.sampler, d.parameters) for d in draws] == scales, label
        assert all(d.cells == (candidates,) for d in draws), label


@pytest.mark.parametrize("path", PRIVATE_PATHS)
@FEW
@given(found=person_neighbours())
def test_private_selection_draws_the_same_scales_over_exactly_the_candidate_keys(path, found):
    _check_private(path, {"table": PURCHASES, **found})


def test_private_selection_with_every_person_gone_or_a_heavy_one_joined():
    heavy = pd.DataFrame({"pid": ["p_heavy"] * 20, "region": [f"r{i}" for i in range(20)], "amount": [1e6] * 20})
    for path in PRIVATE_PATHS:
        _check_private(path, {"empty": PURCHASES.iloc[:0], "heavy": pd.concat([PURCHASES, heavy], ignore_index=True)})


def test_the_harness_sees_the_candidate_keys_of_private_selection():
    """The strict check does fail, on the cells' shape only: a person bringing a key of their own."""
    def release(t):
        PRIVATE_PATHS["private eps"][0](t).agg(count()).evaluate(0.9, rng=11)

    newcomer = pd.DataFrame({"pid": ["p_new"], "region": ["zz"], "amount": [1.0]})
    with pytest.raises(ConformanceError, match="cells of shape"):
        check_release("private eps", release, PURCHASES, {"added": pd.concat([PURCHASES, newcomer], ignore_index=True)})


def test_the_private_replay_catches_a_sensitivity_counted_over_the_candidates(monkeypatch):
    """BROKEN on purpose: the number of keys in the sensitivities taken from the keys present."""
    import veil.dp.grouped_query as gq

    unit = PrivacyUnit.person("pid", max_rows=10, max_rows_per_group=1)  # c = min(10, k): k matters
    PRIVATE_PATHS["broken"] = (lambda t: Query(t, unit=unit).group_by("region", private=PartitionSelection(1e-6)),
                               None)
    monkeypatch.setattr(gq.GroupedQuery, "num_cells", property(lambda self: self.query.frame["region"].nunique()))
    newcomer = pd.DataFrame({"pid": ["p_new"], "region": ["zz"], "amount": [1.0]})
    try:
        with pytest.raises(AssertionError, match="added"):
            _check_private("broken", {"added": pd.concat([PURCHASES, newcomer], ignore_index=True)})
    finally:
        del PRIVATE_PATHS["broken"]
