"""Replay tests against the glue (issue 27, item 7): every DP release path of veil asks the noise
samplers for the same draws — the same samplers, the same exact scales, the same cells, in the
same order — on a table and on each of its neighbours (one unit removed, added or changed).

The harness is :mod:`veil.conformance.glue`; the neighbours are drawn by hypothesis from each
column's domain (values inside and outside the public categories and bounds, missing and
malformed ones), at the path's unit (a row, an event, a user). Every path runs through the Python
API, and every ``veil dp`` query kind and ``veil ldp encode`` through the CLI in-process too. The
paths that legitimately draw differently are named at the end, each with why and a test that
shows the harness does see them; two deliberately broken releases show the harness can fail.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil.cli import app
from veil.conformance import ConformanceError
from veil.conformance.glue import Draw, check_release, neighbour, recording
from veil.dp import PrivacyUnit, Query
from veil.dp.accountant import Accountant
from veil.dp.aggregates import count as agg_count
from veil.dp.aggregates import mean as agg_mean
from veil.dp.aggregates import sum as agg_sum
from veil.dp.budget import Budget
from veil.dp.mechanisms import (KaryRandomizedResponse, Laplace, PlanarLaplace, ReportNoisyMax,
                                WarnerRandomizedResponse)
from veil.dp.noise import NoiseSource
from veil.dp.panprivate import PanPrivateCounter, PanPrivateDensity
from veil.dp.queries import dp_contingency, dp_count, dp_histogram, dp_mean, dp_quantile, dp_sum
from veil.dp.stream import StreamSettings, release_stream
from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget
from veil.ldp import BLH, GRR, OLH, OUE, SUE

# ---------------------------------------------------------------------------------------------
# the tables and their domains
# ---------------------------------------------------------------------------------------------
PEOPLE = pd.DataFrame({"age": [20 + (i * 7) % 50 for i in range(40)], "sex": ["f", "m", "m", "f"] * 10,
                       "zip": [f"130{i % 4}" for i in range(40)]})
# each column's domain for an added or changed record: inside and outside the public categories
# and bounds, missing, not a number
PEOPLE_DOMAIN = {"age": [0, 19, 37, 64, 100, 150, -40, "unknown", ""], "sex": ["f", "m", "x", ""],
                 "zip": ["1300", "1303", "1309", "99999", ""]}

EVENTS = pd.DataFrame({"time": [i // 3 for i in range(30)], "user": [f"u{(i * 5) % 7}" for i in range(30)],
                       "value": [(i * 13) % 40 - 5 for i in range(30)], "kind": ["a", "b", "c", "b", "a"] * 6})
EVENTS_DOMAIN = {"time": [0, 4, 9, 12, -1, "x"], "user": ["u0", "u3", "u99"], "value": [-50, 0, 17, 80, "?"],
                 "kind": ["a", "c", "z", ""]}

CODES = pd.DataFrame({"code": [(i * 3) % 8 for i in range(30)], "yes": [bool(i % 3) for i in range(30)],
                      "x": [float(i % 5) for i in range(30)], "y": [float(i % 7) for i in range(30)]})
CODES_DOMAIN = {"code": [0, 3, 7], "yes": [True, False], "x": [0.0, 9.5], "y": [-3.0, 2.0]}

SEX, ZIP = ["f", "m"], ["1300", "1301", "1302", "1303"]

# many rows per person: the person unit of grouped queries (the ID column is "pid")
PURCHASES = pd.DataFrame({"pid": [f"p{(i * 7) % 9}" for i in range(36)],
                          "region": ["n", "s", "e", "n", "w", "s"] * 6,
                          "amount": [float((i * 37) % 120 - 10) for i in range(36)]})
# an added person's values: inside and outside the public keys and the bounds, missing
PURCHASES_DOMAIN = {"pid": ["p_new"], "region": ["n", "s", "w", "zz", None],
                    "amount": [0.0, 55.5, -400.0, 1e9, float("nan")]}


# ---------------------------------------------------------------------------------------------
# the neighbours, drawn by hypothesis
# ---------------------------------------------------------------------------------------------
@st.composite
def neighbours(draw, table: pd.DataFrame, domain: dict, kinds=("removed", "added", "changed"),
               unit: str | None = None) -> dict:
    """One neighbour of each kind: a row (or the unit of a row) removed, a record drawn from the
    column domains added at a random position, a row changed to such a record."""
    out = {}
    for kind in kinds:
        row = draw(st.integers(0, len(table) - (kind != "added")))
        record = None
        if kind != "removed":
            columns = list(table.columns) if kind == "added" else draw(
                st.lists(st.sampled_from(list(table.columns)), min_size=1, unique=True))
            record = {c: draw(st.sampled_from(domain[c])) for c in columns}
        out[kind] = neighbour(table, kind, row=row, record=record, unit=unit)
    return out


# ---------------------------------------------------------------------------------------------
# the release paths through the Python API
# ---------------------------------------------------------------------------------------------
def _accountant_session(t):
    """Several queries against one budget, the last refused (overspent): the refusal depends on
    the budget only."""
    acc = Accountant(Budget(1.0), dataset_id="people")
    dp_count(t, 0.3, accountant=acc, noise=1)
    dp_sum(t, "age", (0, 100), 0.3, accountant=acc, noise=2)
    dp_histogram(t, "sex", 0.3, categories={"sex": SEX}, accountant=acc, noise=3)
    try:
        dp_mean(t, "age", (0, 100), 0.3, accountant=acc, noise=4)
    except Exception:
        pass


def _zcdp_session(t):
    """Gaussian queries against a budget in ρ, the last refused (overspent), then one in ε refused
    (another measure): the refusals depend on the budget only."""
    acc = ZCDPAccountant(ZCDPBudget(0.25, 1e-6), dataset_id="people")
    dp_count(t, rho=0.1, accountant=acc, noise=1)
    dp_histogram(t, "sex", rho=0.1, categories={"sex": SEX}, accountant=acc, noise=3)
    for query in (lambda: dp_sum(t, "age", (0, 100), rho=0.1, accountant=acc, noise=2),
                  lambda: dp_count(t, 0.1, accountant=acc, noise=4)):
        try:
            query()
        except Exception:
            pass


def _stream(query, level, **extra):
    cats = ("a", "b", "c") if query == "histogram" else None
    column = "kind" if query == "histogram" else "value"
    s = StreamSettings(query=query, level=level, epsilon=1.0, start=0, end=9, categories=cats,
                       bounds=(0, 30) if query == "sum" else None, value_column=column, **extra)
    return lambda t: release_stream(t, s, noise=7)


def _counter(t):
    counter = PanPrivateCounter(1.0, max_contribution=3, noise=5)
    times = pd.to_numeric(t["time"], errors="coerce")
    for step in range(10):
        counter.update(int((times == step).sum()))
        if step == 4:
            counter.announce_intrusion()
    counter.release()


def _report_noisy_max(t):
    counts = [int((t["zip"] == z).sum()) for z in ZIP]  # over the public categories
    ReportNoisyMax(1.0, candidates=ZIP).release(counts, noise=3)


API_PATHS = {
    "dp_count": lambda t: dp_count(t, 0.5, noise=1),
    "dp_count(column)": lambda t: dp_count(t, 0.5, column="age", noise=1),
    "dp_count gaussian": lambda t: dp_count(t, 0.5, 1e-6, noise=1),
    "dp_sum": lambda t: dp_sum(t, "age", (0, 100), 0.5, noise=1),
    "dp_sum gaussian": lambda t: dp_sum(t, "age", (-10, 100), 0.5, 1e-6, noise=1),
    "dp_mean": lambda t: dp_mean(t, "age", (0, 100), 0.5, noise=1),
    "dp_mean gaussian": lambda t: dp_mean(t, "age", (0, 100), 0.5, 1e-6, noise=1),
    "dp_quantile": lambda t: dp_quantile(t, "age", 0.5, (0, 100), 0.5, grid=50, noise=1),
    "dp_quantile several": lambda t: dp_quantile(t, "age", [0.1, 0.5, 0.9], (0, 100), 0.5, grid=50, noise=1),
    "dp_histogram": lambda t: dp_histogram(t, "sex", 0.5, categories={"sex": SEX}, noise=1),
    "dp_histogram gaussian": lambda t: dp_histogram(t, "zip", 0.5, 1e-6, categories={"zip": ZIP}, noise=1),
    "dp_contingency": lambda t: dp_contingency(t, ["sex", "zip"], 0.5, categories={"sex": SEX, "zip": ZIP},
                                               noise=1),
    "dp_histogram missing category": lambda t: dp_histogram(t, "sex", 0.5, categories={"sex": SEX + [""]}, noise=1),
    "dp_count zcdp": lambda t: dp_count(t, rho=0.1, noise=1),
    "dp_sum zcdp": lambda t: dp_sum(t, "age", (-10, 100), rho=0.1, noise=1),
    "dp_mean zcdp": lambda t: dp_mean(t, "age", (0, 100), rho=0.1, noise=1),
    "dp_histogram zcdp": lambda t: dp_histogram(t, ["sex", "zip"], rho=0.1, categories={"sex": SEX, "zip": ZIP},
                                                noise=1),
    "secure dp_histogram zcdp": lambda t: dp_histogram(t, "zip", rho=0.1, categories={"zip": ZIP}),
    "zcdp accountant session": _zcdp_session,
    "accountant session": _accountant_session,
    "report noisy max": _report_noisy_max,
    "secure dp_count": lambda t: dp_count(t, 0.5),
    "secure dp_quantile": lambda t: dp_quantile(t, "age", 0.5, (0, 100), 0.5, grid=50),
}

def _grouped(unit, *aggs, rng=1, table_kind=None, rho=None):
    def release(t):
        table = t if table_kind is None else table_kind(t)
        query = Query(table, unit=unit).group_by("region", keys=["n", "s", "e", "x"]).agg(*aggs)
        if rho is not None:  # priced in ρ: discrete Gaussian counts, Gaussian sums, a budget in ρ
            acc = ZCDPAccountant(ZCDPBudget(1.0, 1e-6), dataset_id="purchases").declare_unit(unit)
            query.evaluate(rho=rho, rng=rng, accountant=acc)
        else:
            query.evaluate(0.9, rng=rng, accountant=Accountant(Budget(1.0), dataset_id="purchases").declare_unit(unit))
    return release


_AGGS = (agg_count(), agg_sum("amount", -5, 100), agg_mean("amount", 0, 100))
# Grouped queries at the person level: contribution bounding draws its coins (one key per row,
# from the CSPRNG or a generator seeded by one draw of the noise source) outside the noise
# samplers; what the harness checks is that the noise asked for does not depend on the data.
PERSON_PATHS = {
    "grouped person max_rows": _grouped(PrivacyUnit.person("pid", max_rows=3), *_AGGS),
    "grouped person L0 x per group": _grouped(PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=2), *_AGGS),
    "grouped person all bounds": _grouped(PrivacyUnit.person("pid", max_rows=4, max_groups=3, max_rows_per_group=1),
                                          agg_count(), agg_mean("amount", -50, 50)),
    "grouped person polars": _grouped(PrivacyUnit.person("pid", max_rows=3), *_AGGS,
                                      table_kind=lambda t: __import__("polars").from_pandas(t)),
    "grouped person secure": _grouped(PrivacyUnit.person("pid", max_rows=3), *_AGGS, rng=None),
    "grouped row unit": _grouped(PrivacyUnit.rows(), *_AGGS),
    "grouped zcdp person max_rows": _grouped(PrivacyUnit.person("pid", max_rows=3), *_AGGS, rho=0.4),
    "grouped zcdp person all bounds": _grouped(PrivacyUnit.person("pid", max_rows=4, max_groups=3,
                                                                  max_rows_per_group=2), *_AGGS, rho=0.4),
    "grouped zcdp person secure": _grouped(PrivacyUnit.person("pid", max_rows=3), *_AGGS, rng=None, rho=0.4),
    "grouped zcdp row unit": _grouped(PrivacyUnit.rows(), *_AGGS, rho=0.4),
}

STREAM_PATHS = {
    **{f"stream {q} {lvl}": _stream(q, lvl) for q, lvl in itertools.product(("count", "histogram", "sum"),
                                                                            ("event", "user"))},
    **{f"stream {q} event w=3": _stream(q, "event", w=3) for q in ("count", "sum")},
    **{f"stream {q} user m=2": _stream(q, "user", max_events=2) for q in ("count", "histogram")},
    **{f"stream {q} w-event {strategy}": _stream(q, "w-event", w=3, strategy=strategy)
       for q, strategy in itertools.product(("count", "histogram", "sum"), ("uniform", "bd", "ba"))},
    "pan-private counter": _counter,
}

# Local randomizers: each record is randomized on its own, so the cells asked for are the records
# (the number of reports is public in the local model: the collector receives every one). The
# neighbouring relation is one record's value changed.
LOCAL_PATHS = {
    "warner rr": lambda t: WarnerRandomizedResponse(1.0).release(t["yes"].to_numpy(dtype=bool), noise=1),
    "k-ary rr": lambda t: KaryRandomizedResponse(1.0, 8).release(t["code"].to_numpy(dtype=np.int64), noise=1),
    "planar laplace": lambda t: PlanarLaplace(1.0).release(t[["x", "y"]].to_numpy(dtype=float), noise=1),
    **{f"ldp {cls.__name__}": (lambda cls: lambda t: cls(1.0, 8).perturb(t["code"].to_numpy(dtype=np.int64),
                                                                         rng=3))(cls)
       for cls in (GRR, SUE, OUE, BLH, OLH)},
    **{f"ldp {cls.__name__} aggregated": (lambda cls: lambda t: cls(1.0, 8).perturb_and_aggregate(
        t["code"].to_numpy(dtype=np.int64), rng=3, chunk_size=7))(cls) for cls in (GRR, OUE, OLH)},
    "ldp GRR secure": lambda t: GRR(1.0, 8).perturb(t["code"].to_numpy(dtype=np.int64)),
}

FEW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("path", API_PATHS)
@FEW
@given(data=st.data())
def test_a_table_query_draws_the_same_noise_on_every_neighbour(path, data):
    check_release(path, API_PATHS[path], PEOPLE, data.draw(neighbours(PEOPLE, PEOPLE_DOMAIN)))


@pytest.mark.parametrize("path", PERSON_PATHS)
@FEW
@given(data=st.data())
def test_a_grouped_query_draws_the_same_noise_for_one_person_more_or_less(path, data):
    unit = None if path == "grouped row unit" else "pid"
    found = data.draw(neighbours(PURCHASES, PURCHASES_DOMAIN, kinds=("removed", "added"), unit=unit))
    check_release(path, PERSON_PATHS[path], PURCHASES, found)


def test_a_grouped_query_draws_the_same_noise_when_a_heavy_person_joins_or_all_leave():
    """A person with many rows in every key and outside them, extreme values; every person removed."""
    heavy = pd.DataFrame({"pid": ["p_heavy"] * 30, "region": ["n", "s", "e", "x", "zz"] * 6,
                          "amount": [1e6, -1e6, 50.0] * 10})
    fixed = {"heavy added": pd.concat([PURCHASES, heavy], ignore_index=True),
             "one removed": neighbour(PURCHASES, "removed", row=0, unit="pid"),
             "empty": PURCHASES.iloc[:0]}
    for path, release in PERSON_PATHS.items():
        check_release(path, release, PURCHASES, fixed)


def test_the_harness_catches_a_grouped_query_whose_keys_come_from_the_data():
    def keys_from_data(t):  # BROKEN on purpose: the regions present are not public keys
        (Query(t, unit=PrivacyUnit.person("pid", max_rows=3)).group_by("region", keys=sorted(set(t["region"])))
         .agg(agg_count()).evaluate(0.5, rng=1))

    heavy = pd.DataFrame({"pid": ["p_heavy"], "region": ["zz"], "amount": [1.0]})
    with pytest.raises(ConformanceError, match="cells of shape"):
        check_release("keys from data", keys_from_data, PURCHASES,
                      {"added": pd.concat([PURCHASES, heavy], ignore_index=True)})


@pytest.mark.parametrize("path", STREAM_PATHS)
@FEW
@given(data=st.data())
def test_a_stream_draws_the_same_noise_for_one_event_and_one_user_more_or_less(path, data):
    check_release(path, STREAM_PATHS[path], EVENTS, data.draw(neighbours(EVENTS, EVENTS_DOMAIN)))
    # the user level's unit: every event of one user removed, or a new user's event added
    check_release(path, STREAM_PATHS[path], EVENTS,
                  data.draw(neighbours(EVENTS, EVENTS_DOMAIN, kinds=("removed", "added"), unit="user")))


@pytest.mark.parametrize("path", LOCAL_PATHS)
@FEW
@given(data=st.data())
def test_a_local_randomizer_draws_the_same_coins_when_one_record_changes(path, data):
    check_release(path, LOCAL_PATHS[path], CODES, data.draw(neighbours(CODES, CODES_DOMAIN, kinds=("changed",))))


def test_the_neighbours_a_path_is_checked_on_include_the_extreme_ones():
    """Beside hypothesis's draws, fixed neighbours at the edges: the first and last row removed,
    a record far outside every bound and category added, one made entirely missing."""
    far = {"age": 10**6, "sex": "martian", "zip": "00000"}
    fixed = {"first removed": neighbour(PEOPLE, "removed", row=0),
             "last removed": neighbour(PEOPLE, "removed", row=len(PEOPLE) - 1),
             "far added": neighbour(PEOPLE, "added", row=len(PEOPLE), record=far),
             "missing": neighbour(PEOPLE, "changed", row=3, record={"age": "", "sex": "", "zip": ""}),
             "empty": PEOPLE.iloc[:0]}
    for path, release in API_PATHS.items():
        check_release(path, release, PEOPLE, fixed)


# ---------------------------------------------------------------------------------------------
# the CLI, in-process
# ---------------------------------------------------------------------------------------------
_FOLDERS = itertools.count()
PEOPLE_CLI = {
    "count": ["dp", "count", "{data}", "--epsilon", "0.5", "--seed", "1"],
    "count gaussian": ["dp", "count", "{data}", "--epsilon", "0.5", "--delta", "1e-6", "--seed", "1"],
    "sum": ["dp", "sum", "{data}", "--columns", "age", "--bounds", "0,100", "--epsilon", "0.5", "--seed", "1"],
    "mean": ["dp", "mean", "{data}", "--columns", "age", "--bounds", "0,100", "--epsilon", "0.5", "--seed", "1",
             "--json"],
    "quantile": ["dp", "quantile", "{data}", "--columns", "age", "--bounds", "0,100", "--grid", "50",
                 "--epsilon", "0.5", "--seed", "1"],
    "histogram": ["dp", "histogram", "{data}", "--columns", "sex,zip", "--categories", "sex=f,m",
                  "--categories", "zip=1300,1301,1302,1303", "--epsilon", "0.5", "--seed", "1", "--out", "{out}"],
    "budget file": ["dp", "count", "{data}", "--epsilon", "0.5", "--budget-file", "{folder}/b.db", "--budget", "1",
                    "--seed", "1"],
    "count zcdp": ["dp", "count", "{data}", "--mechanism", "gaussian", "--rho", "0.1", "--seed", "1"],
    "sum zcdp": ["dp", "sum", "{data}", "--columns", "age", "--bounds", "0,100", "--rho", "0.1", "--seed", "1"],
    "mean zcdp": ["dp", "mean", "{data}", "--columns", "age", "--bounds", "0,100", "--mechanism", "gaussian",
                  "--rho", "0.1", "--seed", "1", "--json"],
    "histogram zcdp": ["dp", "histogram", "{data}", "--columns", "zip", "--categories", "zip=1300,1301,1302,1303",
                       "--mechanism", "gaussian", "--rho", "0.1", "--seed", "1", "--out", "{out}"],
    "budget file zcdp": ["dp", "count", "{data}", "--rho", "0.1", "--budget-file", "{folder}/b.db", "--budget",
                         "1,1e-6", "--seed", "1"],
}
EVENTS_CLI = {
    f"stream {q} {lvl}": ["dp", "stream", "{data}", "--epsilon", "1", "--start", "0", "--end", "9", "--out", "{out}",
                          "--query", q, "--level", lvl, "--seed", "2"]
    + (["--categories", "a,b,c", "--value-column", "kind"] if q == "histogram" else [])
    + (["--bounds", "0,30"] if q == "sum" else [])
    + (["--w", "3", "--strategy", "bd"] if lvl == "w-event" else [])
    for q, lvl in itertools.product(("count", "histogram", "sum"), ("event", "user", "w-event"))
}
CODES_CLI = {"ldp encode": ["ldp", "encode", "--protocol", "oue", "--epsilon", "1", "--domain", "8",
                            "--data", "{data}", "--column", "code", "--out", "{out}"]}


def _cli(command: list[str], tmp: Path):
    def release(table: pd.DataFrame):
        folder = tmp / f"run{next(_FOLDERS)}"
        folder.mkdir()
        table.to_csv(folder / "data.csv", index=False)
        args = [a.format(data=folder / "data.csv", out=folder / "out", folder=folder) for a in command]
        result = CliRunner().invoke(app, args)
        if result.exit_code:
            raise RuntimeError(f"exit {result.exit_code}: {result.output}")
    return release


@pytest.mark.parametrize("path", list(PEOPLE_CLI) + list(EVENTS_CLI) + list(CODES_CLI))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_veil_dp_command_draws_the_same_noise_on_every_neighbour(path, data, tmp_path):
    if path in PEOPLE_CLI:
        command, table, found = PEOPLE_CLI[path], PEOPLE, data.draw(neighbours(PEOPLE, PEOPLE_DOMAIN))
    elif path in EVENTS_CLI:
        command, table, found = EVENTS_CLI[path], EVENTS, data.draw(neighbours(EVENTS, EVENTS_DOMAIN))
        found.update({f"user {k}": v for k, v in data.draw(neighbours(EVENTS, EVENTS_DOMAIN, ("removed", "added"),
                                                                      unit="user")).items()})
    else:  # a local client per row: one row's value changed (within the public domain: the file is refused else)
        command, table, found = CODES_CLI[path], CODES[["code"]], data.draw(
            neighbours(CODES[["code"]], CODES_DOMAIN, kinds=("changed",)))
    check_release(path, _cli(command, tmp_path), table, found)


# ---------------------------------------------------------------------------------------------
# the harness itself
# ---------------------------------------------------------------------------------------------
def test_recording_changes_no_draw():
    """The same seed gives the same answers with and without the recorder."""
    plain = [dp_histogram(PEOPLE, "zip", 0.5, categories={"zip": ZIP}, noise=9).value,
             dp_quantile(PEOPLE, "age", [0.2, 0.7], (0, 100), 0.5, noise=9).value]
    with recording() as seen:
        recorded = [dp_histogram(PEOPLE, "zip", 0.5, categories={"zip": ZIP}, noise=9).value,
                    dp_quantile(PEOPLE, "age", [0.2, 0.7], (0, 100), 0.5, noise=9).value]
    for a, b in zip(plain, recorded):
        np.testing.assert_array_equal(a, b)
    assert seen.draws == [Draw("NoiseSource.discrete_laplace", (("scale", 2.0),), (4,)),
                          Draw("NoiseSource.gumbel_argmax", (("scale", 8.0),), (2, 1001))]
    assert NoiseSource.laplace.__name__ == "laplace"  # restored after the block


def _unclipped_sum(t):
    """BROKEN on purpose: the sensitivity taken from the data's largest value, not the bounds."""
    ages = pd.to_numeric(t["age"], errors="coerce").dropna().clip(0, 100)
    raw = pd.to_numeric(t["age"], errors="coerce").dropna()
    Laplace(0.5, sensitivity=float(raw.abs().max())).release(float(ages.sum()), noise=1)


def _present_values_histogram(t):
    """BROKEN on purpose: a noisy count per zip code present in the data."""
    for z in sorted(t["zip"].astype(str).unique()):
        dp_count(t[t["zip"].astype(str) == z], 0.5, noise=1)


def _scale_from_n(t):
    """BROKEN on purpose: ε divided among the rows."""
    Laplace(1.0 / len(t)).release(0.0, noise=1)


@pytest.mark.parametrize("broken", [_unclipped_sum, _present_values_histogram, _scale_from_n])
def test_the_harness_catches_a_data_dependent_glue(broken):
    with pytest.raises(ConformanceError, match="depends on the data"):
        check_release(broken.__name__, broken, PEOPLE,
                      {"far added": neighbour(PEOPLE, "added", row=5, record={"age": 1000, "sex": "f", "zip": "777"}),
                       "removed": neighbour(PEOPLE, "removed", row=0)})


def test_a_refusal_on_one_neighbour_only_fails_the_check():
    def refuses_small_tables(t):
        if len(t) < len(PEOPLE):  # a refusal that depends on the data
            raise ValueError("too few rows")
        dp_count(t, 1.0, noise=1)

    with pytest.raises(ConformanceError, match="raised on the removed neighbour only"):
        check_release("refusal", refuses_small_tables, PEOPLE, {"removed": neighbour(PEOPLE, "removed", row=0)})


def test_the_coupled_replay_lets_a_release_decide_on_what_it_released():
    """An adaptive release that draws more when its *noisy* answer is large passes (post-processing);
    one that draws more when the *true* answer is large fails."""
    def on_noisy(t):
        noisy = dp_count(t, 1.0, noise=1).value
        if noisy > len(PEOPLE):
            dp_count(t, 1.0, noise=2)

    def on_true(t):
        dp_count(t, 1.0, noise=1)
        if len(t) > len(PEOPLE):
            dp_count(t, 1.0, noise=2)

    added = {"added": neighbour(PEOPLE, "added", row=0, record={"age": 1, "sex": "f", "zip": "1300"})}
    check_release("on noisy", on_noisy, PEOPLE, added)
    with pytest.raises(ConformanceError, match="extra"):
        check_release("on true", on_true, PEOPLE, added)


def test_neighbours_are_neighbours():
    removed = neighbour(EVENTS, "removed", row=4, unit="user")
    assert set(removed["user"]) == set(EVENTS["user"]) - {EVENTS["user"][4]}
    assert len(neighbour(PEOPLE, "removed", row=3)) == len(PEOPLE) - 1
    added = neighbour(PEOPLE, "added", row=2, record={"age": 5, "sex": "x", "zip": "1"})
    assert len(added) == len(PEOPLE) + 1 and added.iloc[2].tolist() == [5, "x", "1"]
    changed = neighbour(PEOPLE, "changed", row=2, record={"sex": "x"})
    assert (changed != PEOPLE).sum().sum() == 1
    assert PEOPLE["sex"][2] == "m"  # nothing the caller gave is modified


# ---------------------------------------------------------------------------------------------
# paths that legitimately draw differently, and why
# ---------------------------------------------------------------------------------------------
def test_categories_from_the_data_draw_per_category_present_and_say_not_fit_for_release():
    """``data_categories=True`` asks for one cell per category in the data: the harness sees it.
    It is documented as a disclosure and the result says ``fit_for_release=False``, so no release
    path uses it; the CLI has no such option."""
    def from_data(t):
        assert not dp_histogram(t, "zip", 0.5, data_categories=True, noise=1).fit_for_release

    with pytest.raises(ConformanceError, match="cells of shape"):
        check_release("data categories", from_data, PEOPLE,
                      {"added": neighbour(PEOPLE, "added", row=0, record={"age": 1, "sex": "f", "zip": "777"})})


def test_the_pan_private_density_redraws_the_bits_of_the_users_who_appeared():
    """Dwork et al.'s density estimator redraws, at each update, the bit of every sampled user who
    appeared: the number of coins is the number of such users, by the algorithm's definition (a
    randomized response per user, on the memory). What an intruder sees, the bits, has a
    distribution that is ε-DP at every moment; how many coins were drawn leaves no trace in the
    memory with the secure source (os.urandom keeps no state in the process). The draws that do not
    depend on the data — the sample of users, the initial bits, the release's Laplace noise — are
    equal on a neighbour, and only the update's coins differ."""
    def density(t):
        estimator = PanPrivateDensity([f"u{i}" for i in range(7)] + ["u99"], 1.0, noise=4)
        for step in range(10):
            estimator.update(t["user"][pd.to_numeric(t["time"], errors="coerce") == step].astype(str).tolist())
        estimator.release()
        return estimator.p1_

    other = neighbour(EVENTS, "removed", row=0, unit="user")
    with pytest.raises(ConformanceError, match="NoiseSource.bernoulli"):
        check_release("pan-private density", density, EVENTS, {"removed": other})
    with recording() as mine:
        p1 = density(EVENTS)
    with recording() as theirs:
        density(other)

    def data_independent(draws):
        return [d for d in draws if d.sampler != "NoiseSource.bernoulli" or d.parameters != (("prob", p1),)]

    assert data_independent(mine.draws) == data_independent(theirs.draws)
    assert [d.sampler for d in data_independent(mine.draws)] == ["NoiseSource.bernoulli", "NoiseSource.laplace"]


def test_a_refusal_that_does_not_depend_on_the_data_refuses_every_neighbour_alike():
    """Bad parameters (a quantile with δ > 0) are refused before any draw, on every table."""
    def refused(t):
        dp_quantile(t, "age", 0.5, (0, 100), 0.5, delta=1e-6, noise=1)

    found = {"removed": neighbour(PEOPLE, "removed", row=0), "empty": PEOPLE.iloc[:0]}
    assert check_release("refused quantile", refused, PEOPLE, found, refused=True).draws == []
    with pytest.raises(ConformanceError, match="expected to refuse"):
        check_release("count", API_PATHS["dp_count"], PEOPLE, found, refused=True)


def test_every_public_sampler_is_recorded():
    # A sampler method added to a randomness class must join SAMPLERS, or its calls go unseen.
    import inspect as _inspect

    from veil.conformance.glue import SAMPLERS

    for cls, methods in SAMPLERS.items():
        public = {name for name, member in vars(cls).items()
                  if not name.startswith("_") and _inspect.isfunction(member)}
        assert public - {"description"} <= set(methods), (cls.__name__, sorted(public - set(methods)))
