"""The engines without Spark: a table summarized by its distinct rows and their counts
(:class:`veil.engines.frequency.FrequencyDataset`, what the Spark engine collects) gives every
answer the records give, and the pieces around the Spark engine that need no Spark (folder
outputs, master URLs, the install hint, the configuration's ``engine`` section).
"""

from __future__ import annotations

import builtins
import json
import socket
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veil
from veil.anonymize import MDAV, FullDomain, Mondrian
from veil.data import builders
from veil.dp import dp_count, dp_histogram, dp_mean, dp_sum
from veil.engines import FrequencyDataset, LocalEngine, make_engine
from veil.engines.spark import check_master
from veil.errors import DataError, ParameterError
from veil.models import DeltaDisclosure, DistinctLDiversity, EntropyLDiversity, KAnonymity, TCloseness
from veil.output import OutputSet, folder_sha256, load_manifest

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def summarize(ds: veil.Dataset, also=()) -> FrequencyDataset:
    """The summary the Spark engine would collect, made here with pandas."""
    read = list(dict.fromkeys(list(ds.quasi_identifiers) + list(ds.sensitive) + list(also)))
    frame = ds.table.data.select(read).to_pandas()
    grouped = frame.groupby(read, dropna=False, sort=False).size().reset_index(name="__n")
    # Shuffle the distinct rows: nothing may depend on their order.
    grouped = grouped.sample(frac=1.0, random_state=7).reset_index(drop=True)
    distinct = pa.Table.from_pandas(grouped[read], preserve_index=False)
    return FrequencyDataset(distinct, grouped["__n"].to_numpy(), columns=ds.columns, kind=ds.table.kind,
                            quasi_identifiers=ds.quasi_identifiers, sensitive=ds.sensitive,
                            identifying=ds.identifying, hierarchies=ds.hierarchies, orders=ds.orders)


@pytest.fixture(scope="module")
def adult(adult_csv, adult_hierarchy_paths):
    ds = veil.Dataset(adult_csv, quasi_identifiers=QIS, sensitive="occupation",
                      hierarchies={c: adult_hierarchy_paths[c] for c in QIS + ["occupation"]})
    return ds, summarize(ds, also=["salary-class"])


def cells_per_record(classes) -> list[tuple]:
    """The published cells of every class with its size, in class order."""
    labels = [np.asarray(classes.cells(j).labels, dtype=object)[classes.keys[:, j]]
              for j in range(classes.keys.shape[1])]
    return list(zip(*labels, classes.sizes.tolist()))


def test_the_summary_counts_records(adult):
    ds, summary = adult
    assert summary.num_rows == ds.num_rows == 30162
    assert summary.distinct_rows < ds.num_rows
    assert np.array_equal(summary.column("age").counts(), ds.column("age").counts())


def test_check_on_the_summary_is_the_check_on_the_records(adult):
    ds, summary = adult
    assert veil.check(summary, k=5, l=2, t=0.3).to_dict() == veil.check(ds, k=5, l=2, t=0.3).to_dict()


@pytest.mark.parametrize("models, limit, metric", [
    ([KAnonymity(5)], 0.02, "loss"),
    ([KAnonymity(5), EntropyLDiversity(3)], 0.02, "entropy"),
    ([KAnonymity(3)], 0.0, "kl"),
    ([KAnonymity(4), TCloseness(0.4)], 0.04, {"name": "classification", "label": "salary-class"}),
])
def test_fulldomain_on_the_summary_chooses_the_same_node(adult, models, limit, metric):
    ds, summary = adult
    if isinstance(metric, dict):
        from veil.metrics import make_metric

        metric = make_metric(metric["name"], label=metric["label"])
    here = FullDomain(models, suppression_limit=limit, metric=metric).fit(ds)
    there = FullDomain(models, suppression_limit=limit, metric=metric).fit(summary)
    assert there.result_.levels == here.result_.levels
    assert there.result_.loss == here.result_.loss
    # Row by row below, so in the input's order (the summary's engine writes the rows itself).
    mine, theirs = here.transform(ds, shuffle=False), there.transform(summary, shuffle=False)
    assert theirs.table is None and theirs.num_rows == mine.table.num_rows
    drop = {"created"}
    assert {k: v for k, v in theirs.manifest.items() if k not in drop | {"search", "input"}} == \
        {k: v for k, v in mine.manifest.items() if k not in drop | {"search", "input"}}
    # Row by row: each record's published cells are those of its distinct row.
    labels = theirs.published_labels()
    expected = mine.table.to_pandas()
    frame = ds.table.data.to_pandas()
    read = summary.table.columns
    joined = frame.merge(pd.DataFrame({**{c: summary.table.data.column(c).to_pylist() for c in read},
                                       **{f"out_{q}": labels[q] for q in QIS}, "gone": labels["suppressed"]}),
                         on=read, how="left", sort=False)
    kept = joined[~joined["gone"]]
    for q in QIS:
        assert kept[f"out_{q}"].tolist() == expected[q].tolist()


@pytest.mark.parametrize("models, categorical", [
    ([KAnonymity(5)], "hierarchy"),
    ([KAnonymity(5), EntropyLDiversity(3)], "order"),
    ([KAnonymity(4), DeltaDisclosure(3.0)], "hierarchy"),
])
def test_strict_mondrian_on_the_summary_makes_the_same_partitions(adult, models, categorical):
    ds, summary = adult
    here = Mondrian(models, categorical=categorical).fit(ds)
    there = Mondrian(models, categorical=categorical).fit(summary)
    assert cells_per_record(there.classes_) == cells_per_record(here.classes_)
    assert (there.rounds_, there.partitions_found_, there.collapsed_) == \
        (here.rounds_, here.partitions_found_, here.collapsed_)
    assert there.recoding()["partitions"] == here.recoding()["partitions"]


def test_relaxed_mondrian_is_refused_on_a_summary(adult):
    with pytest.raises(ParameterError, match="strict"):
        Mondrian([KAnonymity(5)], mode="relaxed").fit(adult[1])
    with pytest.raises(ParameterError, match="MDAV groups records one by one"):
        MDAV([KAnonymity(5)]).fit(adult[1])


def test_dp_queries_on_the_summary_answer_as_on_the_records(adult):
    ds, summary = adult
    for query in (lambda d: dp_count(d, 1.0, noise=3), lambda d: dp_count(d, 1.0, column="age", noise=3),
                  lambda d: dp_sum(d, "age", (17, 90), 1.0, noise=3),
                  lambda d: dp_mean(d, "age", (17, 90), 1.0, noise=3),
                  lambda d: dp_histogram(d, ["sex", "race"], 1.0, noise=3,
                                         categories={"sex": ["Male", "Female"], "race": ds.hierarchies["race"]})):
        here, there = query(ds).to_dict(), query(summary).to_dict()
        assert json.dumps(there, sort_keys=True, default=str) == json.dumps(here, sort_keys=True, default=str)


tables = st.integers(min_value=20, max_value=200).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 30), min_size=n, max_size=n),
    st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n)))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables, st.integers(2, 4))
def test_random_tables_summarized_give_the_same_answers(columns, k):
    ages, letters, diseases = columns
    frame = pd.DataFrame({"age": ages, "letter": letters, "disease": diseases, "id": range(len(ages))})
    hierarchies = {"age": builders.intervals(frame["age"], [5, 10]), "letter": builders.flat(frame["letter"])}
    ds = veil.Dataset(frame, quasi_identifiers=["age", "letter"], sensitive="disease", identifying="id",
                      hierarchies=hierarchies)
    summary = summarize(ds)
    assert veil.check(summary, k=k).to_dict() == veil.check(ds, k=k).to_dict()
    models = [KAnonymity(k), DistinctLDiversity(2)]
    try:
        here = FullDomain(models, suppression_limit=0.1).fit(ds).result_
    except veil.InfeasibleError:
        with pytest.raises(veil.InfeasibleError):
            FullDomain(models, suppression_limit=0.1).fit(summary)
    else:
        there = FullDomain(models, suppression_limit=0.1).fit(summary).result_
        assert {**there.__dict__, "seconds": 0} == {**here.__dict__, "seconds": 0}
    try:
        local = Mondrian([KAnonymity(k)]).fit(ds)
    except veil.InfeasibleError:
        return
    assert cells_per_record(Mondrian([KAnonymity(k)]).fit(summary).classes_) == cells_per_record(local.classes_)


# -- around the Spark engine, without Spark ----------------------------------------------------

def test_a_folder_output_is_published_whole_and_bound_to_its_manifest(tmp_path):
    out, manifest = tmp_path / "release.parquet", tmp_path / "manifest.json"

    def write(folder):  # what Spark does: a folder of part files
        Path(folder).mkdir()
        for i in range(3):
            (Path(folder) / f"part-{i}").write_text(f"rows {i}\n")

    with OutputSet([out, manifest], folders=[out]) as outputs:
        described = outputs.put_folder(out, write)
        assert not out.exists()
        outputs.put_manifest(manifest, {"what": "test"}, describes={"release": out})
        outputs.commit()
    assert sorted(p.name for p in out.iterdir()) == ["part-0", "part-1", "part-2"]
    assert described["files"] == 3 and described["folder"] is True
    assert load_manifest(manifest, out)["release"]["sha256"] == folder_sha256(out)
    (out / "part-1").write_text("rows changed\n")
    with pytest.raises(DataError, match="does not match"):
        load_manifest(manifest, out)
    with pytest.raises(DataError, match="already exists"):
        OutputSet([out], folders=[out])


def test_a_failed_folder_write_leaves_nothing(tmp_path):
    out = tmp_path / "release.csv"

    def write(folder):
        Path(folder).mkdir()
        (Path(folder) / "part-0").write_text("half a table")
        raise DataError("Spark could not write it.")

    with pytest.raises(DataError, match="could not write"):
        with OutputSet([out], folders=[out]) as outputs:
            outputs.put_folder(out, write)
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_master_is_refused_quickly():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    with pytest.raises(ParameterError, match="cannot be reached"):
        check_master(f"spark://127.0.0.1:{port}", timeout=2.0)
    assert time.perf_counter() - started < 10
    with pytest.raises(ParameterError, match="is not one of"):
        check_master("mesos://somewhere")
    check_master("local[2]")


def test_spark_without_pyspark_says_how_to_install_it(monkeypatch):
    real = builtins.__import__

    def no_pyspark(name, *args, **kwargs):
        if name.split(".")[0] == "pyspark":
            raise ImportError("No module named 'pyspark'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyspark)
    with pytest.raises(ParameterError) as caught:
        make_engine("spark")
    assert str(caught.value) == 'PySpark is not installed; install it with: pip install "veil[spark]".'
    with pytest.raises(ParameterError, match="unknown engine"):
        make_engine("dask")
    assert isinstance(make_engine(None), LocalEngine)


def test_the_configuration_names_its_engine(tmp_path, adult_csv):
    from veil.config import load_config
    from veil.errors import ConfigError

    config = tmp_path / "c.yaml"
    config.write_text(f"data: {adult_csv}\ncolumns: {{quasi_identifiers: [sex]}}\nmodels: [{{k_anonymity: {{k: 2}}}}]\nalgorithm: mondrian\n"
                      "engine: {name: spark, master: 'spark://h:7077', config: {spark.executor.memory: 4g, "
                      "spark.ui.enabled: false}}\n")
    engine = load_config(config).engine
    assert (engine.name, engine.master, dict(engine.config)) == (
        "spark", "spark://h:7077", {"spark.executor.memory": "4g", "spark.ui.enabled": "false"})
    config.write_text(config.read_text().replace("name: spark", "name: sparc"))
    with pytest.raises(ConfigError, match="did you mean 'spark'"):
        load_config(config)


def test_the_command_line_refuses_a_master_without_spark_and_alphabeta_on_spark(tmp_path, adult_csv):
    from typer.testing import CliRunner

    from veil.cli import app

    runner = CliRunner()
    checked = runner.invoke(app, ["check", str(adult_csv), "--qi", "sex", "--master", "local[2]"])
    assert checked.exit_code == 2 and checked.stderr == "error: --master applies only with --engine spark.\n"
    example = Path(__file__).resolve().parents[1] / "examples" / "adult-alphabeta.yaml"
    out = tmp_path / "view.csv"
    for extra, sentence in ((["--master", "local[2]"], "--master applies only with the Spark engine"),
                            (["--engine", "spark"], "the alphabeta algorithm runs on the local engine only")):
        result = runner.invoke(app, ["anonymize", "--config", str(example), "--out", str(out), *extra])
        assert result.exit_code == 2 and sentence in result.stderr and len(result.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_the_command_line_refuses_what_spark_cannot_give_before_starting_it(tmp_path, adult_csv):
    from typer.testing import CliRunner

    from veil.cli import app

    runner = CliRunner()
    example = Path(__file__).resolve().parents[1] / "examples" / "adult-fulldomain.yaml"
    made = runner.invoke(app, ["anonymize", str(adult_csv), "--config", str(example), "--engine", "spark",
                               "--out", str(tmp_path / "release"), "--report", str(tmp_path / "report.html")])
    assert made.exit_code == 2 and len(made.stderr.splitlines()) == 1
    assert "--report reads the published table in memory" in made.stderr
    for extra in (["--ledger", str(tmp_path / "ledger.db")], ["--budget-file", str(tmp_path / "budget.db")],
                  ["--out", str(tmp_path / "answer")]):
        answered = runner.invoke(app, ["dp", "count", str(adult_csv), "--epsilon", "1", "--engine", "spark", *extra])
        assert answered.exit_code == 2 and len(answered.stderr.splitlines()) == 1
        assert "which the Spark engine does not compute" in answered.stderr
    assert list(tmp_path.iterdir()) == []
