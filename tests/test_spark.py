"""The Spark engine against the local engine, on a real Spark session (``local[2]``).

The session is started once for the whole test run (it takes seconds); every test reads the same
tables with both engines and asserts identical measured levels, chosen nodes, partitions, DP
answers (seeded noise) and releases, row for row. Without PySpark or Java the tests are skipped
and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import veil
from veil.anonymize import FullDomain, Mondrian
from veil.data import builders
from veil.dp import Accountant, Budget, dp_count, dp_histogram, dp_mean, dp_sum
from veil.errors import ColumnError, DataError, ParameterError
from veil.models import EntropyLDiversity, KAnonymity
from veil.output import load_manifest

pytestmark = pytest.mark.service

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail with it when the run demands its services
    (``VEIL_REQUIRE_SERVICES=1``, as CI sets), so that a missing Spark is never silently untested."""
    if os.environ.get("VEIL_REQUIRE_SERVICES") == "1":
        pytest.fail(f"VEIL_REQUIRE_SERVICES=1 but Spark is unavailable: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def engine():
    """One Spark session for the whole run: local[2], two shuffle partitions, no UI."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        unavailable('PySpark is not installed (pip install "veil[spark]")')
    if _java() is None:
        unavailable("Java is not installed (Spark needs Java 17 or later on PATH or in JAVA_HOME)")
    from veil.engines import SparkEngine

    spark = SparkEngine("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
                                     "spark.default.parallelism": "2"})
    try:
        spark.session  # start it now, once
    except ParameterError as exc:
        unavailable(f"Spark did not start: {exc}")
    yield spark
    spark.session.stop()


@pytest.fixture(scope="module")
def adult_parquet(tmp_path_factory, adult_csv):
    """Adult as Parquet with typed columns: age an integer, the rest text."""
    frame = pd.read_csv(adult_csv, sep=";", dtype=str, keep_default_na=False)
    frame["age"] = frame["age"].astype("int64")
    path = tmp_path_factory.mktemp("adult") / "adult.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return path


def roles(paths, with_hierarchies=True):
    return {"quasi_identifiers": QIS, "sensitive": ["occupation"],
            "hierarchies": {c: paths[c] for c in QIS + ["occupation"]} if with_hierarchies else {}}


def part_files(folder: Path, suffix: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("part-") and p.name.endswith(suffix))


def read_release(folder: Path, delimiter=";") -> pd.DataFrame:
    """A release Spark wrote, its part files in order."""
    if folder.suffix == ".parquet":
        return pd.concat([pq.read_table(p).to_pandas() for p in part_files(folder, ".parquet")], ignore_index=True)
    return pd.concat([pd.read_csv(p, sep=delimiter, dtype=str, keep_default_na=False)
                      for p in part_files(folder, ".csv")], ignore_index=True)


def without_timing(manifest: dict) -> dict:
    """A manifest less what differs between two runs of the same task: when it was made, how long
    the search took (``seconds`` in ``search`` or ``recoding``), and the ``release`` entry that
    only a written manifest carries."""
    kept = {k: v for k, v in manifest.items() if k not in ("created", "release")}
    for entry in ("search", "recoding"):
        if entry in kept:
            kept[entry] = {k: v for k, v in kept[entry].items() if k != "seconds"}
    return kept


def same_manifest(a: dict, b: dict) -> None:
    assert without_timing(a) == without_timing(b)


def test_check_on_spark_measures_what_the_local_engine_measures(engine, adult_csv, adult_hierarchy_paths):
    local = veil.Dataset(adult_csv, **roles(adult_hierarchy_paths))
    remote = engine.dataset(str(adult_csv), **roles(adult_hierarchy_paths))
    assert remote.num_rows == local.num_rows and remote.distinct_rows < local.num_rows
    assert veil.check(remote, k=5, l=3, t=0.2).to_dict() == veil.check(local, k=5, l=3, t=0.2).to_dict()


def test_fulldomain_on_spark_chooses_the_node_and_writes_the_release_row_for_row(
        engine, adult_csv, adult_hierarchy_paths, tmp_path):
    models = [KAnonymity(5), EntropyLDiversity(3)]
    local = veil.Dataset(adult_csv, **roles(adult_hierarchy_paths))
    remote = engine.dataset(str(adult_csv), **roles(adult_hierarchy_paths))
    here = FullDomain(models, suppression_limit=0.02).fit(local)
    there = FullDomain(models, suppression_limit=0.02).fit(remote)
    assert there.result_.levels == here.result_.levels
    assert (there.result_.loss, there.result_.nodes_checked) == (here.result_.loss, here.result_.nodes_checked)
    mine = here.transform(local, suppressed="star", shuffle=False)
    theirs = there.transform(remote, suppressed="star", shuffle=False)
    out, manifest = tmp_path / "release.csv", tmp_path / "manifest.json"
    document = json.loads(engine.write_release(theirs, out, manifest))
    assert load_manifest(manifest, out)["release"]["folder"] is True
    same_manifest(document, mine.manifest)
    written = read_release(out)
    assert written.columns.tolist() == mine.table.column_names
    assert written.values.tolist() == mine.table.to_pandas().values.tolist()


def test_strict_mondrian_on_spark_makes_the_local_partitions(engine, adult_parquet, adult_hierarchy_paths, tmp_path):
    local = veil.Dataset(adult_parquet, **roles(adult_hierarchy_paths))
    remote = engine.dataset(str(adult_parquet), **roles(adult_hierarchy_paths))
    here = Mondrian([KAnonymity(5)]).fit(local)
    there = Mondrian([KAnonymity(5)]).fit(remote)
    assert there.recoding()["partitions"] == here.recoding()["partitions"]
    mine, theirs = here.transform(local, shuffle=False), there.transform(remote, shuffle=False)
    out = tmp_path / "release.parquet"
    same_manifest(json.loads(engine.write_release(theirs, out)), mine.manifest)
    written = read_release(out)
    expected = mine.table.to_pandas()
    assert written.columns.tolist() == expected.columns.tolist()
    assert written.values.tolist() == expected.values.tolist()


def rows(frame: pd.DataFrame) -> list:
    """The rows of a table as a sorted list: the table as a multiset of rows, whatever their order."""
    return sorted(map(tuple, frame.astype(str).values.tolist()))


def test_a_spark_release_is_shuffled_with_a_secret_key_or_a_seed(engine, adult_parquet, adult_hierarchy_paths,
                                                                  tmp_path):
    path = tmp_path / "adult-head.parquet"
    pq.write_table(pq.read_table(adult_parquet).slice(0, 3000), path)
    local = veil.Dataset(path, **roles(adult_hierarchy_paths))
    remote = engine.dataset(str(path), **roles(adult_hierarchy_paths))
    here = FullDomain([KAnonymity(5)], suppression_limit=0.02).fit(local)
    there = FullDomain([KAnonymity(5)], suppression_limit=0.02).fit(remote)
    expected = here.transform(local, shuffle=False).table.to_pandas()
    written = {}
    for name, rng in (("secure-1", None), ("secure-2", None), ("seeded-1", 7), ("seeded-2", 7)):
        release = there.transform(remote, shuffle=True, rng=rng)
        out = tmp_path / f"{name}.parquet"
        manifest = json.loads(engine.write_release(release, out))
        assert manifest["output"]["order"] == ("secure shuffle" if rng is None else "seeded shuffle")
        written[name] = read_release(out)
        assert rows(written[name]) == rows(expected)
    assert written["secure-1"].values.tolist() != written["secure-2"].values.tolist()
    assert written["secure-1"].values.tolist() != expected.values.tolist()
    assert written["seeded-1"].values.tolist() == written["seeded-2"].values.tolist()


@pytest.fixture(scope="module")
def rounds_on_spark(engine):
    """The same session, strict Mondrian's rounds always run on Spark (level-synchronously)."""
    from veil.engines import SparkEngine

    return SparkEngine(session=engine.session, rounds_on_spark_above=0)


def test_mondrian_rounds_on_spark_make_the_local_release(rounds_on_spark, adult_parquet, adult_hierarchy_paths,
                                                         tmp_path):
    local = veil.Dataset(adult_parquet, **roles(adult_hierarchy_paths))
    remote = rounds_on_spark.dataset(str(adult_parquet), **roles(adult_hierarchy_paths))
    models = [KAnonymity(10), EntropyLDiversity(2)]
    here = Mondrian(models, categorical="order").fit(local)
    there = Mondrian(models, categorical="order").fit(remote)
    assert there.recoding()["partitions"] == here.recoding()["partitions"]
    assert there.rounds_ == here.rounds_
    mine, theirs = here.transform(local, shuffle=True), there.transform(remote, shuffle=True)
    out = tmp_path / "release.parquet"
    same_manifest(json.loads(rounds_on_spark.write_release(theirs, out)), mine.manifest)
    assert rows(read_release(out)) == rows(mine.table.to_pandas())


def test_rounds_on_spark_refuse_a_negative_threshold(engine):
    from veil.engines import SparkEngine

    with pytest.raises(ParameterError, match="0 or more"):
        SparkEngine(session=engine.session, rounds_on_spark_above=-1)


wide_tables = st.integers(min_value=40, max_value=150).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 5000), min_size=n, max_size=n),
    st.lists(st.floats(-1e3, 1e3, allow_nan=False).map(lambda x: round(x, 2)), min_size=n, max_size=n),
    st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=n, max_size=n)))


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(wide_tables, st.sampled_from([[KAnonymity(3)], [KAnonymity(2), EntropyLDiversity(1.5)]]))
def test_rounds_on_spark_split_tables_of_many_distinct_values_as_the_local_engine(rounds_on_spark, tmp_path, columns,
                                                                                 models):
    income, score, disease = columns
    frame = pd.DataFrame({"income": income, "score": score, "disease": disease})
    folder = tmp_path / f"w{abs(hash((tuple(income), tuple(score))))}"
    folder.mkdir()
    path = folder / "table.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    given_roles = dict(quasi_identifiers=["income", "score"], sensitive="disease")
    local = veil.Dataset(path, **given_roles)
    remote = rounds_on_spark.dataset(str(path), **given_roles)
    try:
        here = Mondrian(models).fit(local)
    except veil.errors.VeilError as refused:
        with pytest.raises(type(refused)):
            Mondrian(models).fit(remote)
        return
    there = Mondrian(models).fit(remote)
    assert there.recoding()["partitions"] == here.recoding()["partitions"]
    out = folder / "release.parquet"
    same_manifest(json.loads(rounds_on_spark.write_release(there.transform(remote), out)),
                  here.transform(local).manifest)
    assert rows(read_release(out)) == rows(here.transform(local, shuffle=False).table.to_pandas())


def test_dp_answers_on_spark_are_the_local_answers(engine, adult_parquet, adult_hierarchy_paths):
    local = veil.Dataset(adult_parquet, quasi_identifiers=["age"])
    spent = Accountant(Budget(10.0), dataset_id="adult on Spark")
    queries = [
        (["age"], lambda d, a=None: dp_sum(d, "age", (17, 90), 1.0, noise=11, accountant=a)),
        (["age"], lambda d, a=None: dp_mean(d, "age", (17, 90), 1.0, noise=11, accountant=a)),
        (["sex", "race"], lambda d, a=None: dp_histogram(
            d, ["sex", "race"], 1.0, noise=11, accountant=a,
            categories={"sex": ["Male", "Female"], "race": veil.Hierarchy.read_csv(adult_hierarchy_paths["race"])})),
        ([], lambda d, a=None: dp_count(d, 0.5, noise=11, accountant=a)),
    ]
    for columns, query in queries:
        remote = engine.query_dataset(str(adult_parquet), columns)
        there = query(remote, spent).to_dict()
        assert json.dumps(there, sort_keys=True, default=str) == json.dumps(query(local).to_dict(), sort_keys=True,
                                                                            default=str)
    assert float(spent.spent().epsilon) == 3.5


tables = st.integers(min_value=30, max_value=120).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 40), min_size=n, max_size=n),
    st.lists(st.sampled_from(["a", "b", "c", None]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n)))


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(tables)
def test_random_tables_give_the_same_levels_nodes_and_releases(engine, tmp_path, columns):
    ages, letters, diseases = columns
    frame = pd.DataFrame({"age": ages, "letter": letters, "disease": diseases, "id": range(len(ages))})
    folder = tmp_path / f"t{abs(hash(tuple(ages)))}"
    folder.mkdir()
    path = folder / "table.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    hierarchies = {"age": builders.intervals(frame["age"], [5, 10]), "letter": builders.flat(frame["letter"])}
    given_roles = dict(quasi_identifiers=["age", "letter"], sensitive="disease", identifying="id",
                       hierarchies=hierarchies)
    local = veil.Dataset(path, **given_roles)
    remote = engine.dataset(str(path), **given_roles)
    assert veil.check(remote, k=2).to_dict() == veil.check(local, k=2).to_dict()
    models = [KAnonymity(2)]
    here = FullDomain(models, suppression_limit=0.1).fit(local)
    there = FullDomain(models, suppression_limit=0.1).fit(remote)
    assert there.result_.levels == here.result_.levels
    out = folder / "release.parquet"
    engine.write_release(there.transform(remote, shuffle=False), out)
    expected = here.transform(local, shuffle=False).table.to_pandas()
    assert read_release(out).values.tolist() == expected.values.tolist()


def test_bad_input_is_one_sentence(engine, adult_parquet, tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        engine.dataset(str(tmp_path / "nowhere.parquet"), quasi_identifiers=["age"])
    with pytest.raises(ColumnError, match="not in the table's schema; did you mean 'age'"):
        engine.dataset(str(adult_parquet), quasi_identifiers=["agee"])
    from veil.engines import SparkEngine

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ParameterError, match="cannot be reached"):
        SparkEngine(f"spark://127.0.0.1:{port}", connect_timeout=1.0).session


def test_the_command_line_runs_on_spark(engine, adult_csv, adult_hierarchy_paths, tmp_path):
    from veil.cli import app

    runner = CliRunner()
    base = ["check", str(adult_csv), "--qi", "sex,age,race", "--sensitive", "occupation", "--json"]
    local = runner.invoke(app, base)
    remote = runner.invoke(app, base + ["--engine", "spark", "--master", "local[2]"])
    assert remote.exit_code == local.exit_code == 0, remote.output
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    config = tmp_path / "adult.yaml"
    config.write_text(f"data: {adult_csv}\ncolumns: {{quasi_identifiers: [sex, age], sensitive: [occupation]}}\n"
                      f"hierarchies: {{sex: {{file: {adult_hierarchy_paths['sex']}}}, age: {{file: "
                      f"{adult_hierarchy_paths['age']}}}}}\nmodels: [{{k_anonymity: {{k: 5}}}}]\n"
                      "engine: {name: spark, master: 'local[2]'}\n")
    out, manifest = tmp_path / "release.csv", tmp_path / "manifest.json"
    result = runner.invoke(app, ["anonymize", "--config", str(config), "--out", str(out), "--manifest", str(manifest)])
    assert result.exit_code == 0, result.output
    assert load_manifest(manifest, out)["output"]["rows"] == 30162
    again = runner.invoke(app, ["anonymize", "--config", str(config), "--out", str(out)])
    assert again.exit_code == 2 and "already exists" in again.stderr and len(again.stderr.splitlines()) == 1
    missing = runner.invoke(app, ["check", str(tmp_path / "none.csv"), "--qi", "age", "--engine", "spark"])
    assert missing.exit_code == 2 and missing.stderr.startswith("error: file")


# --------------------------------------------------------------------------- the local engine's answers, refusals
#                                                                              and silence, on any table

def both_engines(args: list[str]) -> tuple:
    """``veil ARGS`` on the local engine, then on Spark."""
    from veil.cli import app

    runner = CliRunner()
    return runner.invoke(app, args), runner.invoke(app, args + ["--engine", "spark", "--master", "local[2]"])


DP_QUERIES = [
    ["count"],
    ["count", "--columns", "sex"],
    ["sum", "--columns", "age", "--bounds", "0,100"],
    ["mean", "--columns", "age", "--bounds", "0,100"],
    ["histogram", "--columns", "sex,age", "--categories", "sex=F,M", "--categories", "age=30,41,52"],
]


@pytest.fixture(scope="module")
def empty_tables(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("empty")
    (folder / "empty.csv").write_text("age,sex\n", encoding="utf-8")
    pq.write_table(pa.table({"age": pa.array([], pa.int64()), "sex": pa.array([], pa.string())}),
                   folder / "empty.parquet")
    return [folder / "empty.csv", folder / "empty.parquet"]


@pytest.mark.parametrize("query", DP_QUERIES)
def test_an_empty_table_is_answered_as_the_local_engine_answers_it(engine, empty_tables, query):
    # Refusing a table because it has no records would tell the analyst that it is empty.
    for path in empty_tables:
        local, spark = both_engines(["dp", *query, str(path), "--epsilon", "1", "--seed", "3", "--json"])
        assert local.exit_code == spark.exit_code == 0, spark.output
        assert json.loads(spark.stdout) == json.loads(local.stdout)
        assert spark.stderr == local.stderr


def test_check_refuses_an_empty_table_in_the_local_engines_words(engine, empty_tables):
    for path in empty_tables:
        local, spark = both_engines(["check", str(path), "--qi", "age"])
        assert local.exit_code == spark.exit_code == 2
        assert spark.stderr == local.stderr and "no records" in spark.stderr


MESSY = b'age,sex\n30,F\n41\n41,M\n"52,F\n52,F,x\n\xff9,M\n,,\n52,F\n41,M\n'


@pytest.fixture(scope="module")
def messy_table(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("messy") / "messy.csv"
    path.write_bytes(MESSY)
    return path


@pytest.mark.parametrize("query", DP_QUERIES)
def test_malformed_lines_are_left_out_as_the_local_engine_leaves_them_out(engine, messy_table, query):
    local, spark = both_engines(["dp", *query, str(messy_table), "--epsilon", "1", "--seed", "3", "--json"])
    assert local.exit_code == spark.exit_code == 0, spark.output
    assert json.loads(spark.stdout) == json.loads(local.stdout)
    assert spark.stderr == local.stderr and "line" not in spark.output
    local, spark = both_engines(["dp", *query, str(messy_table), "--epsilon", "1", "--strict"])
    assert local.exit_code == spark.exit_code == 2
    assert spark.stderr == local.stderr and len(spark.stderr.splitlines()) == 1


def test_check_names_a_ragged_line_as_the_local_engine_does(engine, tmp_path):
    # Spark read only the columns a task needs, so a line with too few fields went unseen.
    path = tmp_path / "ragged.csv"
    path.write_text("a,b\n1,2\n3\n4,5\n", encoding="utf-8")
    local, spark = both_engines(["check", str(path), "--qi", "a"])
    assert local.exit_code == spark.exit_code == 2
    assert spark.stderr == local.stderr == \
        f"error: line 3 of {str(path)!r} has 1 fields but the header has 2 (delimiter ','); fix that row or give " \
        "--delimiter.\n"


def test_a_list_column_is_refused_in_the_local_engines_words(engine, tmp_path):
    path = tmp_path / "lists.parquet"
    pq.write_table(pa.table({"age": [30, 41], "tags": [[1], [2, 3]]}), path)
    for args in (["check", str(path), "--qi", "age"], ["dp", "count", str(path), "--epsilon", "1"]):
        local, spark = both_engines(args)
        assert local.exit_code == spark.exit_code == 2
        assert spark.stderr == local.stderr and "holds lists" in spark.stderr
    frame = engine.session.createDataFrame(pd.DataFrame({"age": [30, 41]})).selectExpr("age", "array(age) AS tags")
    with pytest.raises(DataError, match="column 'tags' of the spark table holds lists"):
        engine.query_dataset(frame, [])


@pytest.mark.parametrize("master, words", [("local[0]", "runs no thread"), ("local[2,0]", "allows no attempt"),
                                           ("local[x]", "is not one of")])
def test_a_bad_master_is_one_sentence_about_the_master(engine, adult_csv, master, words):
    from veil.cli import app

    result = CliRunner().invoke(app, ["dp", "count", str(adult_csv), "--epsilon", "1", "--engine", "spark",
                                      "--master", master])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"error: the Spark master '{master}'") and words in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Java" not in result.stderr


def veil_process(*args: str, **environment: str) -> subprocess.CompletedProcess:
    """``veil ARGS`` in a process of its own (so Spark's Java process is its own too), output captured."""
    env = {**os.environ, **environment}
    return subprocess.run([sys.executable, "-m", "veil", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_nothing_spark_prints_reaches_the_terminal(engine, tmp_path, messy_table):
    # A fresh Java process: its start-up notices, its warnings and, when the job fails on a ragged
    # line, the Java stack traces of the failed task used to come before veil's own sentence.
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3\n4,5\n", encoding="utf-8")
    refused = veil_process("check", str(ragged), "--qi", "a", "--engine", "spark", "--master", "local[1]")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == f"error: line 3 of {str(ragged)!r} has 1 fields but the header has 2 (delimiter ','); " \
                             "fix that row or give --delimiter.\n"
    answered = veil_process("dp", "count", str(messy_table), "--epsilon", "1", "--seed", "1", "--engine", "spark",
                            "--master", "local[1]")
    assert answered.returncode == 0 and answered.stdout.startswith("count: ")
    assert answered.stderr == "warning: NOT fit for release: seeded noise: a reproducible experiment.\n"


def test_a_missing_or_broken_java_is_one_sentence(engine, tmp_path, adult_csv):
    args = ("dp", "count", str(adult_csv), "--epsilon", "1", "--engine", "spark", "--master", "local[1]")
    missing = veil_process(*args, JAVA_HOME=str(tmp_path / "no-java"))
    assert missing.returncode == 2 and missing.stderr == (
        "error: Spark needs Java 17 or later, which was not found; install it, or set JAVA_HOME to the folder it is "
        "installed in.\n")
    broken = tmp_path / "broken-java"
    (broken / "bin").mkdir(parents=True)
    (broken / "bin" / "java").write_text("#!/bin/sh\necho 'Invalid maximum heap size: -Xmxlots' >&2\n"
                                         "echo 'Error: Could not create the Java Virtual Machine.' >&2\nexit 1\n")
    (broken / "bin" / "java").chmod(0o755)
    stopped = veil_process(*args, JAVA_HOME=str(broken))
    assert stopped.returncode == 2 and stopped.stderr == (
        "error: Spark's Java process stopped while starting (Invalid maximum heap size: -Xmxlots); check the Spark "
        "settings.\n")


def test_a_failed_spark_job_is_one_sentence_without_its_stack_trace():
    from pyspark.errors import PySparkException

    from veil.engines.spark_session import java_message, shown, spark_errors

    class JavaException:  # what Py4J hands over: the message, and a cause whose message may say more
        def __init__(self, message, cause=None):
            self.message, self.cause = message, cause

        def getMessage(self):
            return self.message

        def getCause(self):
            return self.cause

    failure = Exception("An error occurred while calling o1.collect.\n\tat org.apache.spark.Foo(Foo.scala:1)")
    failure.java_exception = JavaException(None, JavaException("Executor lost\n\tat org.apache.spark.Bar"))
    assert java_message(failure) == "Executor lost"
    with pytest.raises(DataError) as caught:
        with spark_errors("running Mondrian's rounds"):
            raise PySparkException(message="[JOB_ABORTED] the job was aborted\x1b[31m\nJVM stacktrace: …")
    assert str(caught.value) == ("Spark failed while running Mondrian's rounds ([JOB_ABORTED] the job was aborted "
                                 "[31m); check the Spark settings and the cluster.")
    assert shown("x" * 500, 20) == "x" * 19 + "…"
