"""Grouped DP queries on Spark (veil.dp.spark_statistics) against the pandas engine.

One classic ``local[2]`` session for the module and, when the Spark Connect client's packages are
installed, one local Spark Connect server (a ``spark-submit`` of PySpark's own
``SparkConnectServer``, in a process of its own). Where the engines must agree exactly (the row
unit, or bounds that keep every row) the statistics are compared with
:func:`veil.dp.statistics.compute_statistics`; where bounding chooses at random, the frequencies
of the choices over many independent persons are compared with what
:func:`veil.dp.privacy_unit.bound_contributions` gives. Without PySpark, Java or the Connect
client the tests skip and say why (they fail instead under ``VEIL_REQUIRE_SERVICES=1``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.dp import Accountant, Budget
from veil.dp import aggregates as A
from veil.dp.grouped_query import Query
from veil.dp.noise import as_noise_source
from veil.dp.privacy_unit import PrivacyUnit, bound_contributions, selection_keys
from veil.dp.spark_statistics import spark_true_statistics
from veil.dp.statistics import compute_statistics
from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget
from veil.errors import ParameterError, VeilError

from spark_session import classic_session, java, unavailable

pytestmark = pytest.mark.service

ALL = [("rows",), ("count", "x"), ("sum", "x", -2.0, 7.5), ("csum", "x", -2.0, 7.5), ("csq", "x", -2.0, 7.5),
       ("hist", "x", -2.0, 7.5, 5), ("count", "y"), ("sum", "y", 0.0, 3.0)]


@pytest.fixture(scope="module")
def spark():
    """A classic local[2] session (the one the run already has, if any)."""
    yield from classic_session()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ConnectServer:
    """A local Spark Connect server: PySpark's ``SparkConnectServer`` run by its ``spark-submit``."""

    def __init__(self, folder: Path):
        from pyspark.find_spark_home import _find_spark_home

        self.port = _free_port()
        self.log = folder / "connect-server.log"
        home = _find_spark_home()
        env = {**os.environ, "SPARK_HOME": home, "SPARK_CONNECT_MODE": "0", "SPARK_LOG_DIR": str(folder)}
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [os.path.join(home, "bin", "spark-submit"), "--class",
                 "org.apache.spark.sql.connect.service.SparkConnectServer", "--name", "veil-test", "--master",
                 "local[1]", "--conf", f"spark.connect.grpc.binding.port={self.port}", "--conf",
                 "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2", "--driver-memory", "512m",
                 "spark-internal"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)

    def wait(self, timeout: float = 180.0) -> str | None:
        """None once the server listens, else why it did not start."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                return f"the Spark Connect server stopped (see {self.log})"
            if "Spark Connect server started" in self.log.read_text(errors="replace"):
                return None
            time.sleep(0.5)
        return f"the Spark Connect server did not start within {timeout:g} s"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _connect_client_missing() -> str | None:
    try:
        import google.protobuf  # noqa: F401
        import grpc  # noqa: F401
        import grpc_status  # noqa: F401
        import zstandard  # noqa: F401
    except ImportError as exc:
        return (f"the Spark Connect client needs {exc.name} (pip install \"pyspark[connect]\": grpcio, grpcio-status, "
                "googleapis-common-protos, zstandard)")
    return None


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """A Spark Connect server for the module (the server jar ships with PySpark 4)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        unavailable('PySpark is not installed (pip install "veil[spark]")')
    if java() is None:
        unavailable("Java is not installed (Spark needs Java 17 or later on PATH or in JAVA_HOME)")
    missing = _connect_client_missing()
    if missing:
        unavailable(missing)
    server = ConnectServer(tmp_path_factory.mktemp("connect"))
    why = server.wait()
    if why:
        server.stop()
        unavailable(why)
    yield server
    server.stop()


def _fast_failing(session) -> None:
    """Give up on an unreachable server after one quick retry (PySpark retries for 10 minutes)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    session.client.set_retry_policies([DefaultPolicy(max_retries=1, initial_backoff=10, max_backoff=10)])


@pytest.fixture(scope="module")
def connect(connect_server):
    """A Spark Connect session to the module's server."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(f"sc://127.0.0.1:{connect_server.port}").create()
    yield session
    try:
        session.stop()
    except Exception:  # noqa: BLE001 - the last test stops the server under it
        pass


# ---- tables ---------------------------------------------------------------------------------------
def table(seed: int, n: int = 120, people: int = 25) -> pd.DataFrame:
    """Rows of ``people`` persons in groups a/b/c (and some in no public key), with missing, infinite
    and out-of-range values."""
    rng = np.random.default_rng(seed)
    x = rng.normal(3.0, 4.0, n)
    x[rng.random(n) < 0.1] = np.nan
    x[rng.random(n) < 0.03] = np.inf
    x[rng.random(n) < 0.03] = -np.inf
    return pd.DataFrame({"pid": rng.integers(0, people, n).astype("int64"),
                         "g": rng.choice(["a", "b", "c", "other"], n),
                         "h": rng.integers(0, 3, n).astype("int64"),
                         "x": x, "y": rng.integers(0, 5, n).astype("int64")})


def same_statistics(got: dict, expected: dict) -> None:
    assert set(got) == set(expected)
    for stat, values in expected.items():
        # the table's types: counts int64, sums float64 (on no rows too)
        assert got[stat].dtype == values.dtype == (np.int64 if stat[0] in ("rows", "count", "hist") else np.float64), stat
        assert got[stat].shape == values.shape, stat
        if stat[0] in ("rows", "count", "hist"):
            assert got[stat].tolist() == values.tolist(), stat
        else:  # Spark adds in an order of its own
            np.testing.assert_allclose(got[stat], values, rtol=1e-12, atol=1e-9, err_msg=str(stat))


def pandas_statistics(frame: pd.DataFrame, keys, wanted, kept=None):
    group = keys.index_of_rows(frame)
    if kept is not None:
        group = np.where(kept, group, -1)
    return compute_statistics(frame, group, len(keys), wanted)


KEEP_ALL = PrivacyUnit.person("pid", max_rows=10_000, max_groups=100, max_rows_per_group=10_000)


# ---- the statistics agree with the pandas engine where they are deterministic -----------------------------
@pytest.mark.parametrize("unit", [PrivacyUnit.rows(), KEEP_ALL], ids=["rows", "person-keeps-all"])
def test_public_keys_statistics_equal_the_pandas_engine(spark, unit):
    frame = table(1)
    query = Query(spark.createDataFrame(frame), unit=unit)
    grouped = query.group_by(["g", "h"], domains={"g": ["c", "a", "empty", "b"], "h": [0, 1, 2, 9]})
    keys_frame, stats = spark_true_statistics(query, ("g", "h"), grouped.keys, ALL, as_noise_source(5))
    assert keys_frame.values.tolist() == grouped.keys.frame().values.tolist()  # every key, in the public order
    same_statistics(stats, pandas_statistics(frame, grouped.keys, ALL))
    empty = [i for i, key in enumerate(grouped.keys.keys) if key[0] == "empty" or key[1] == 9]
    assert all(stats[("rows",)][i] == 0 and stats[("sum", "x", -2.0, 7.5)][i] == 0.0 for i in empty)


@pytest.mark.parametrize("unit", [PrivacyUnit.rows(), KEEP_ALL], ids=["rows", "person-keeps-all"])
def test_private_keys_are_the_present_keys_sorted(spark, unit):
    frame = table(2)
    frame.loc[3, "g"] = None  # a row with no key: in no group
    query = Query(spark.createDataFrame(frame), unit=unit)
    keys_frame, stats = spark_true_statistics(query, ("h", "g"), None, ALL, as_noise_source(5))
    present = frame.dropna(subset=["g"])[["h", "g"]].drop_duplicates().sort_values(["h", "g"])
    assert keys_frame.values.tolist() == present.values.tolist()
    from veil.dp.public_keys import PublicKeys

    same_statistics(stats, pandas_statistics(frame, PublicKeys.from_list(("h", "g"),
                                                                         [tuple(k) for k in present.values]), ALL))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(0, 60))
def test_row_unit_statistics_equal_the_pandas_engine_property(spark, seed, n):
    frame = table(seed, n=n, people=5)
    query = Query(spark.createDataFrame(frame, schema="pid long, g string, h long, x double, y long"))
    grouped = query.group_by("g", keys=["a", "b", "c"])
    _, stats = spark_true_statistics(query, ("g",), grouped.keys, ALL, as_noise_source(seed))
    same_statistics(stats, pandas_statistics(frame, grouped.keys, ALL))
    # no row is lost or invented: the rows of the public keys, each counted once
    assert int(stats[("rows",)].sum()) == int(frame["g"].isin(["a", "b", "c"]).sum())
    assert stats[("hist", "x", -2.0, 7.5, 5)].sum(axis=1).tolist() == stats[("count", "x")].tolist()


def test_public_keys_match_values_as_the_pandas_engine_does(spark):
    frame = pd.DataFrame({"i": [1, 2, 3, 3], "f": [1.0, np.nan, 2.5, 1.0], "s": ["1", "a", "b", "a"]})
    query = Query(spark.createDataFrame(frame))
    for column, keys in (("i", [1.0, "3", 2, 7]), ("f", [1, float("nan"), 2.5]), ("s", [1, "a", "zz"])):
        grouped = query.group_by(column, keys=keys)
        _, stats = spark_true_statistics(query, (column,), grouped.keys, [("rows",)], as_noise_source(1))
        assert stats[("rows",)].tolist() == pandas_statistics(frame, grouped.keys, [("rows",)])[("rows",)].tolist()


def test_only_max_rows_keeps_exactly_min_of_rows_and_bound(spark):
    frame = table(3, n=300, people=12)
    unit = PrivacyUnit.person("pid", max_rows=4)
    query = Query(spark.createDataFrame(frame), unit=unit)
    _, stats = spark_true_statistics(query, ("g",), None, [("rows",)], as_noise_source(2))
    kept = frame.dropna(subset=["g"]).groupby("pid").size().clip(upper=4).sum()
    assert int(stats[("rows",)].sum()) == int(kept)


def test_one_spark_action_collects_the_statistics(spark, monkeypatch):
    from pyspark.sql.classic.dataframe import DataFrame

    calls = []
    for name in ("toArrow", "collect", "toPandas", "count", "take", "toLocalIterator"):
        original = getattr(DataFrame, name)

        def counted(self, *args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(DataFrame, name, counted)
    frame = spark.createDataFrame(table(4))
    query = Query(frame, unit=PrivacyUnit.person("pid", max_rows=3, max_groups=2, max_rows_per_group=2))
    grouped = query.group_by("g", keys=["a", "b"])
    spark_true_statistics(query, ("g",), grouped.keys, ALL, as_noise_source(1))
    spark_true_statistics(query, ("g",), None, ALL, as_noise_source(1))
    assert calls == ["toArrow", "toArrow"]


# ---- the random choices have the distribution of bound_contributions ----------------------------------
def _pandas_choices(frame, unit, keys, seed):
    group = keys.index_of_rows(frame)
    person, _ = pd.factorize(frame["pid"])
    k = selection_keys(as_noise_source(seed), 3 * len(frame)).reshape(3, len(frame))
    return bound_contributions(unit, person, group, k[0], k[1], k[2])


def _chi2_same(a: np.ndarray, b: np.ndarray) -> float:
    """The p-value of the chi-square test that two count vectors come from one distribution."""
    from scipy.stats import chi2_contingency

    table = np.array([a, b])
    table = table[:, table.sum(axis=0) > 0]
    return chi2_contingency(table)[1]


@pytest.mark.parametrize("unit,layout", [
    # one row kept of a person's four, in four groups: each row (group) with probability 1/4
    (PrivacyUnit.person("pid", max_rows=1), {"a": 1, "b": 1, "c": 1, "d": 1}),
    # one group of two kept, uniformly: a with probability 1/2, though it holds 3 rows of 4
    (PrivacyUnit.person("pid", max_groups=1, max_rows_per_group=5), {"a": 3, "b": 1}),
    # all three steps: groups a:3 b:2 c:1, two groups, two rows per group, three rows in all
    (PrivacyUnit.person("pid", max_rows=3, max_groups=2, max_rows_per_group=2), {"a": 3, "b": 2, "c": 1}),
], ids=["max_rows", "max_groups", "all-bounds"])
def test_bounding_choices_have_the_distribution_of_the_pandas_engine(spark, unit, layout):
    people = 3000
    values = [(g, j) for g, count in layout.items() for j in range(count)]
    frame = pd.DataFrame([(p, g, float(j)) for p in range(people) for g, j in values], columns=["pid", "g", "x"])
    query = Query(spark.createDataFrame(frame), unit=unit)
    grouped = query.group_by("g", keys=list(layout))
    hist = ("hist", "x", 0.0, 3.0, 3)  # which row of its group each kept row is
    _, stats = spark_true_statistics(query, ("g",), grouped.keys, [("rows",), hist], as_noise_source(11))
    kept = _pandas_choices(frame, unit, grouped.keys, 12)
    expected = pandas_statistics(frame, grouped.keys, [("rows",), hist], kept)
    # the same number of rows per person (when the bounds fix it) and the same frequencies of each choice
    assert _chi2_same(stats[hist].ravel(), expected[hist].ravel()) > 1e-4
    if unit.max_groups is None:
        assert int(stats[("rows",)].sum()) == int(expected[("rows",)].sum())
    if layout == {"a": 3, "b": 1}:  # uniform over groups, not over rows (a group of 3 rows: 3/4 if by rows)
        assert abs(stats[("rows",)][0] / 3 / people - 0.5) < 0.05


def test_each_query_draws_a_new_secret(spark):
    frame = pd.DataFrame({"pid": np.repeat(np.arange(200), 4), "g": np.tile(list("abcd"), 200)})
    query = Query(spark.createDataFrame(frame), unit=PrivacyUnit.person("pid", max_rows=1))
    grouped = query.group_by("g", keys=list("abcd"))
    seen = {tuple(spark_true_statistics(query, ("g",), grouped.keys, [("rows",)], as_noise_source(None))[1]
                  [("rows",)]) for _ in range(2)}
    assert len(seen) == 2  # the secure source: a fresh secret (equal counts twice: chance about 1e-4)
    again = {tuple(spark_true_statistics(query, ("g",), grouped.keys, [("rows",)], as_noise_source(7))[1]
                   [("rows",)]) for _ in range(2)}
    assert len(again) == 1  # a seeded experiment replays its choice


# ---- whole queries ------------------------------------------------------------------------------------
@pytest.mark.parametrize("price", [{"epsilon": 1.0}, {"rho": 0.5}], ids=["epsilon", "zcdp"])
@pytest.mark.parametrize("unit", [PrivacyUnit.rows(), KEEP_ALL], ids=["rows", "person-keeps-all"])
def test_a_query_on_spark_answers_as_on_pandas(spark, price, unit):
    frame = table(6)
    aggs = (A.count(), A.sum("y", 0, 4), A.mean("x", -2, 7.5))
    answers = []
    for data in (frame, spark.createDataFrame(frame)):
        query = Query(data, unit=unit).group_by("g", keys=["a", "b", "c", "nobody"]).agg(*aggs)
        accountant = (ZCDPAccountant(ZCDPBudget(1.0, 1e-6), dataset_id="t") if "rho" in price else
                      Accountant(Budget(2.0), dataset_id="t")).declare_unit(unit)
        answers.append((query.evaluate(**price, accountant=accountant, rng=21), accountant))
    (local, local_acc), (remote, remote_acc) = answers
    assert remote.kind == "spark" and remote.record == local.record
    assert [(c.label, c.epsilon, c.delta) for c in remote_acc.charges] == \
        [(c.label, c.epsilon, c.delta) for c in local_acc.charges]
    pd.testing.assert_frame_equal(remote.to_pandas(), local.to_pandas(), rtol=1e-9)


def test_the_spark_answer_is_drawn_once(spark):
    query = Query(spark.createDataFrame(table(7)), unit=PrivacyUnit.person("pid", max_rows=2))
    answer = query.group_by("g", keys=["a", "b", "c"]).agg(A.count(), A.mean("x", 0, 5)).evaluate(rho=0.3)
    frame = answer.table()
    assert type(frame).__name__ == "DataFrame" and type(frame).__module__.startswith("pyspark.sql")
    first, second = frame.collect(), frame.orderBy("g").collect()
    assert first == second
    assert [list(r) for r in first] == answer.to_pandas().values.tolist()
    with pytest.raises(ParameterError, match="Spark session"):
        Query(table(7)).group_by("g", keys=["a"]).agg(A.count()).evaluate(1.0, rng=1).table("spark")


# ---- Spark Connect ------------------------------------------------------------------------------------
def test_statistics_and_queries_on_spark_connect(connect):
    frame = table(8)
    data = connect.createDataFrame(frame)
    assert type(data).__module__.startswith("pyspark.sql.connect")
    for unit in (PrivacyUnit.rows(), KEEP_ALL):
        query = Query(data, unit=unit)
        grouped = query.group_by("g", keys=["b", "a", "none", "c"])
        _, stats = spark_true_statistics(query, ("g",), grouped.keys, ALL, as_noise_source(3))
        same_statistics(stats, pandas_statistics(frame, grouped.keys, ALL))
    query = Query(data, unit=PrivacyUnit.person("pid", max_rows=3, max_groups=2, max_rows_per_group=2))
    grouped = query.group_by("g", keys=["a", "b"]).agg(A.count(), A.sum("y", 0, 4))
    query = grouped
    accountant = ZCDPAccountant(ZCDPBudget(1.0, 1e-6), dataset_id="t").declare_unit(query.query.unit)
    answer = grouped.evaluate(rho=0.5, accountant=accountant)
    assert answer.fit_for_release and accountant.spent_rho == Fraction(1, 2)
    table_ = answer.table()
    assert type(table_).__module__.startswith("pyspark.sql.connect")
    assert table_.collect() == table_.collect()
    local = answer.to_pandas()
    assert [list(r) for r in table_.collect()] == local.values.tolist()


def test_an_unreachable_connect_server_is_one_sentence_and_charges_nothing(connect, connect_server):
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    nowhere = ConnectSession.builder.remote(f"sc://127.0.0.1:{_free_port()}").create()
    _fast_failing(nowhere)
    with pytest.raises(ParameterError, match="cannot be reached") as refused:
        Query(nowhere.range(3), unit=PrivacyUnit.rows())
    assert "\n" not in str(refused.value) and str(refused.value).count(". ") == 0
    # the server goes away between building the query and evaluating it: nothing is charged
    query = Query(connect.createDataFrame(table(9)), unit=PrivacyUnit.person("pid", max_rows=2)) \
        .group_by("g", keys=["a", "b"]).agg(A.count())
    _fast_failing(connect)
    connect_server.stop()
    accountant = Accountant(Budget(1.0), dataset_id="t").declare_unit(query.query.unit)
    with pytest.raises(VeilError, match="cannot be reached") as failed:
        query.evaluate(0.5, accountant=accountant)
    assert "\n" not in str(failed.value)
    assert accountant.charges == ()


# ---- the glue: the noise asked for does not depend on the data, on Spark too ---------------------------
PURCHASES = pd.DataFrame({"pid": [f"p{(i * 7) % 9}" for i in range(36)],
                          "region": ["n", "s", "e", "n", "w", "s"] * 6,
                          "amount": [float((i * 37) % 120 - 10) for i in range(36)]})


@pytest.mark.parametrize("price", [{"epsilon": 0.9}, {"rho": 0.4}], ids=["epsilon", "zcdp"])
def test_a_spark_query_draws_the_same_noise_for_one_person_more_or_less(spark, price):
    from veil.conformance.glue import check_release, neighbour

    unit = PrivacyUnit.person("pid", max_rows=4, max_groups=3, max_rows_per_group=2)

    def release(t):
        data = spark.createDataFrame(t, schema="pid string, region string, amount double")
        query = Query(data, unit=unit).group_by("region", keys=["n", "s", "e", "x"]) \
            .agg(A.count(), A.sum("amount", -5, 100), A.mean("amount", 0, 100))
        accountant = (ZCDPAccountant(ZCDPBudget(1.0, 1e-6), dataset_id="p") if "rho" in price else
                      Accountant(Budget(1.0), dataset_id="p")).declare_unit(unit)
        query.evaluate(**price, accountant=accountant)  # the secure source: a release

    heavy = pd.DataFrame({"pid": ["p_heavy"] * 30, "region": ["n", "s", "e", "x", "zz"] * 6,
                          "amount": [1e6, -1e6, 50.0, float("nan"), 3.0] * 6})
    check_release("spark grouped query", release, PURCHASES,
                  {"heavy added": pd.concat([PURCHASES, heavy], ignore_index=True),
                   "one removed": neighbour(PURCHASES, "removed", row=0, unit="pid"),
                   "empty": PURCHASES.iloc[:0]})
