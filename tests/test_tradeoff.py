"""The privacy/utility trade-off (Brickell and Shmatikov, KDD 2008): U_max, U_san, U_base beside
A_know and A_acc, and the ``veil experiment tradeoff`` experiment on an Adult sample."""

from __future__ import annotations

import csv
import errno
import io
import os

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from veil import ColumnError, DataError, Dataset, EquivalenceClasses, Hierarchy, KAnonymity, ParameterError, VeilError
from veil.anonymize import FullDomain, Mondrian, Release
from veil.attacks.disclosure import disclosure
from veil.attacks.tradeoff import TradeoffWorkload, classifier_names, stratified_test_mask, tradeoff
from veil.data.bundled import load_adult
from veil.experiments import tradeoff as experiment
from veil.experiments.tradeoff import COLUMNS, run_tradeoff, write_tradeoff
from veil.cli.experiment import tradeoff_command

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ALL = ("tree", "bayes", "logistic")


# ----------------------------------------------------------------------------------- fixtures

def parity_table(n_per_value: int = 40) -> Dataset:
    """QI ``a`` in 0..7 decides the label ``y = a mod 2`` exactly; its hierarchy groups 0-3 and
    4-7, so a generalized value holds both labels equally: generalization destroys the signal.
    ``s`` is a sensitive column tied to ``a`` as well."""
    a = np.repeat(np.arange(8), n_per_value)
    frame = pd.DataFrame({"a": a.astype(str), "b": np.where(np.arange(len(a)) % 3 == 0, "x", "z"),
                          "y": np.where(a % 2 == 0, "even", "odd"), "s": np.where(a < 2, "flu", "cold")})
    hierarchy = Hierarchy([[str(v), "0-3" if v < 4 else "4-7", "*"] for v in range(8)])
    return Dataset(frame, quasi_identifiers=["a", "b"], sensitive="s",
                   hierarchies={"a": hierarchy, "b": Hierarchy([["x", "*"], ["z", "*"]])})


def manual_release(ds: Dataset, levels: dict, **options) -> Release:
    classes = EquivalenceClasses.from_dataset(ds, levels)
    return Release(ds, classes, np.zeros(classes.n_classes, dtype=bool), algorithm="manual", models=[],
                   suppression_limit=0.0, **options)


@pytest.fixture(scope="module")
def adult_sample() -> Dataset:
    return experiment.adult_table(3000, np.random.default_rng(11))


# ----------------------------------------------------------------------------------- the measure

def test_generalization_that_destroys_the_signal_costs_all_the_gain():
    ds = parity_table()
    release = manual_release(ds, {"a": 1, "b": 0})
    result = tradeoff(ds, release, "y", rng=5)
    for c in ALL:
        assert result.u_max[c] == 1.0, c
        assert result.u_max[c] >= result.u_san[c]
        # Each published cell holds both labels in equal numbers: nothing left to learn.
        assert result.u_san[c] <= result.u_base + 0.1, c
    assert result.classifiers == ALL
    assert result.n_train + result.n_test == ds.num_rows
    assert result.seed == 5


def test_u_base_is_the_majority_share_on_the_test_part(adult_sample):
    for target in ("occupation", "salary-class"):
        w = TradeoffWorkload(adult_sample, target, rng=3)
        y = adult_sample.column(target).codes
        majority = np.bincount(y[w.train]).argmax()
        assert w.u_base == pytest.approx(np.mean(y[w.test] == majority), abs=0)
        counts = adult_sample.column(target).counts()
        assert w.majority_share == pytest.approx(counts.max() / counts.sum(), abs=0)
        # Stratified: the test part keeps the table's majority within a record.
        assert abs(w.u_base - w.majority_share) < 1.5 / w.n_test + 1e-12


def test_a_know_and_a_acc_are_those_of_the_disclosure_module(adult_sample):
    release = FullDomain([KAnonymity(5)], suppression_limit=0.02).fit(adult_sample).transform(adult_sample)
    result = tradeoff(adult_sample, release, "salary-class", classifiers="tree", rng=0)
    expected = disclosure(release.released_classes, "occupation")
    assert result.a_know == expected.a_know
    assert result.a_acc == expected.a_acc
    assert result.sensitive == "occupation"
    assert result.suppressed == release.suppressed_records


def test_trivial_sanitization_release_gives_u_san_equal_to_u_base(adult_sample):
    # Every quasi-identifier at its top level: one class, no feature tells records apart, so every
    # classifier predicts the training part's most common value, exactly what U_base scores.
    top = {q: adult_sample.generalizations[q].height for q in adult_sample.quasi_identifiers}
    release = manual_release(adult_sample, top)
    for target in ("occupation", "salary-class"):
        result = tradeoff(adult_sample, release, target, rng=2)
        for c in ALL:
            assert result.u_san[c] == result.u_base, (target, c)
            assert result.accuracy_gain[c] == 0.0
        assert result.a_know == pytest.approx(0.0, abs=1e-12)
        assert result.a_acc == pytest.approx(0.0, abs=1e-12)


def test_original_release_gives_u_san_equal_to_u_max(adult_sample):
    release = manual_release(adult_sample, None)
    result = tradeoff(adult_sample, release, "occupation", classifiers="tree,bayes", rng=4)
    assert result.u_san == result.u_max


def test_suppressed_records_keep_their_place_as_star(adult_sample):
    release = FullDomain([KAnonymity(10)], suppression_limit=0.05).fit(adult_sample).transform(adult_sample)
    assert release.suppressed_records > 0
    w = TradeoffWorkload(adult_sample, "occupation", classifiers="bayes", rng=1)
    result = w.measure(release)
    assert result.n_test == w.n_test and result.suppressed == release.suppressed_records
    # The same release read from its published table (stars, original order) gives the same U_san:
    # a table is lined up with the original by position, so it keeps the input's order.
    star = FullDomain([KAnonymity(10)], suppression_limit=0.05).fit(adult_sample) \
        .transform(adult_sample, suppressed="star", shuffle=False)
    from_table = w.measure(star.data)
    assert from_table.u_san == result.u_san
    assert from_table.suppressed == release.suppressed_records


def test_released_table_must_line_up_with_the_original(adult_sample):
    fd = FullDomain([KAnonymity(5)]).fit(adult_sample)
    w = TradeoffWorkload(adult_sample, "salary-class", classifiers="tree", rng=0)
    shuffled = fd.transform(adult_sample, rng=3)
    # A veil Release knows where each record went, shuffled or not ...
    assert w.measure(shuffled).u_san == w.measure(fd.transform(adult_sample, shuffle=False)).u_san
    # ... its published table does not.
    with pytest.raises(ParameterError, match="original order"):
        w.measure(shuffled.data)
    with pytest.raises(ParameterError, match="records"):
        w.measure(shuffled.table.slice(0, 100))


def test_mondrian_release_is_measured_the_same_way(adult_sample):
    release = Mondrian([KAnonymity(20)]).fit(adult_sample).transform(adult_sample)
    result = tradeoff(adult_sample, release, "occupation", classifiers="tree,logistic", rng=0)
    assert result.a_know == disclosure(release.released_classes).a_know
    for c in result.classifiers:
        assert 0 <= result.u_san[c] <= 1


def test_seeded_split_is_reproducible_and_stratified():
    labels = np.repeat(np.arange(4), [100, 50, 7, 1])
    a = stratified_test_mask(labels, 0.3, np.random.default_rng(9))
    b = stratified_test_mask(labels, 0.3, np.random.default_rng(9))
    assert np.array_equal(a, b)
    assert np.bincount(labels[a], minlength=4).tolist() == [30, 15, 2, 0]


def test_bad_input_raises_one_sentence():
    ds = parity_table()
    release = manual_release(ds, {"a": 1, "b": 0})
    with pytest.raises(ColumnError, match="target column 'yy' does not exist; did you mean 'y'"):
        tradeoff(ds, release, "yy")
    with pytest.raises(ColumnError, match="quasi-identifier"):
        tradeoff(ds, release, "a")
    single = Dataset(pd.DataFrame({"a": ["1", "2"] * 5, "y": ["same"] * 10}), quasi_identifiers="a")
    with pytest.raises(ParameterError, match="single value"):
        TradeoffWorkload(single, "y")
    with pytest.raises(ParameterError, match="unknown classifier 'svm'"):
        tradeoff(ds, release, "y", classifiers=["tree", "svm"])
    with pytest.raises(ParameterError, match="did you mean 'logistic'"):
        classifier_names("logistik")
    with pytest.raises(ParameterError, match="test share"):
        tradeoff(ds, release, "y", test_size=1.0)
    assert classifier_names("DecisionTreeClassifier, CategoricalNB,LogisticRegression") == ALL


@pytest.mark.parametrize("options, fragment", [
    ({"k": [1]}, "k must be a whole number from 2"),
    ({"k": [2.5]}, "k must be a whole number"),
    ({"k": [10_000]}, "k must be a whole number from 2 to the 300 records"),
    ({"l": [1]}, "ℓ must be from 2"),
    ({"l": [50]}, "ℓ must be from 2"),
    ({"t": [0]}, "t must be between 0 and 1"),
    ({"t": [1.5]}, "t must be between 0 and 1"),
    ({"k": [], "l": [], "t": []}, "at least one value"),
    ({"classifiers": "forest"}, "unknown classifier"),
    ({"algorithm": "incognito"}, "unknown algorithm"),
    ({"suppression": 1.0}, "suppression limit"),
    ({"sample": 10}, "sample"),
    ({"seed": -1}, "seed"),
])
def test_experiment_refuses_out_of_range_settings(options, fragment):
    settings = {"k": [2], "l": [], "t": [], "sample": 300, **options}
    with pytest.raises(ParameterError) as info:
        run_tradeoff(**settings)
    assert fragment in str(info.value)
    assert str(info.value).count(". ") == 0  # one sentence


# ----------------------------------------------------------------------------------- the experiment

def test_tiny_experiment_writes_csv_markdown_and_png(tmp_path):
    run = run_tradeoff(k=[2, 5], l=[], t=[0.3], sample=1500, seed=7)
    files = write_tradeoff(run, tmp_path / "out")
    assert [p.name for p in files] == ["tradeoff.csv", "tradeoff.md", "tradeoff.png"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["tradeoff.csv", "tradeoff.md", "tradeoff.png"]
    rows = list(csv.DictReader(io.StringIO(files[0].read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == COLUMNS
    # (2 references + 3 settings) × 2 targets × 3 classifiers.
    assert len(rows) == 5 * 2 * 3
    assert {r["seed"] for r in rows} == {"7"} and {r["records"] for r in rows} == {"1500"}
    assert {r["family"] for r in rows} == {"trivial sanitization", "original", "k-anonymity", "t-closeness"}
    for r in rows:
        assert float(r["accuracy_gain"]) == pytest.approx(float(r["u_san"]) - float(r["u_base"]), abs=2e-6)
        if r["family"] == "trivial sanitization":
            assert float(r["a_know"]) == 0 and float(r["accuracy_gain"]) == 0
    markdown = files[1].read_text(encoding="utf-8")
    assert "**Seed 7**" in markdown and "### Predicting occupation (sensitive)" in markdown
    assert "### Predicting salary-class (neutral)" in markdown and "| k-anonymity, k = 5 |" in markdown
    assert files[2].read_bytes()[:8] == PNG_SIGNATURE
    # The seed makes the numbers reproducible.
    again = run_tradeoff(k=[2, 5], l=[], t=[0.3], sample=1500, seed=7)
    assert experiment.csv_text(again) == files[0].read_text(encoding="utf-8")


def test_experiment_writes_nothing_when_the_disk_fills(tmp_path, monkeypatch):
    run = run_tradeoff(k=[3], l=[], t=[], sample=300, seed=1, classifiers="bayes")
    real_fsync, calls = os.fsync, []

    def full_on_the_second_file(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_on_the_second_file)
    with pytest.raises(DataError, match="the disk is full"):
        write_tradeoff(run, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []  # no file, no temporary file, not even the folder it made


def test_fulldomain_default_is_the_papers_setting():
    run = run_tradeoff(k=[4], l=[2], t=[0.4], sample=600, seed=2, classifiers="tree")
    assert run.config["algorithm"] == "fulldomain" and run.config["suppression_limit"] == 0.02
    assert all(r["node"] for r in run.rows if r["family"] not in ("trivial sanitization",))


# ----------------------------------------------------------------------------------- the CLI

def cli_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Test harness."""

    app.command("tradeoff")(tradeoff_command)
    return app


def test_cli_writes_the_three_files(tmp_path):
    out = tmp_path / "tradeoff"
    result = CliRunner().invoke(cli_app(), ["tradeoff", "--out", str(out), "--k", "2,5", "--l", "none",
                                            "--t", "0.4", "--seed", "3", "--classifiers", "tree,bayes",
                                            "--sample", "800"])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output
    assert (out / "tradeoff.png").read_bytes()[:8] == PNG_SIGNATURE
    rows = list(csv.DictReader(io.StringIO((out / "tradeoff.csv").read_text(encoding="utf-8"))))
    assert {r["classifier"] for r in rows} == {"tree", "bayes"} and {r["seed"] for r in rows} == {"3"}
    assert "**Seed 3**" in (out / "tradeoff.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("args, fragment", [
    (["--classifiers", "svm"], "unknown classifier 'svm'"),
    (["--k", "1"], "k must be a whole number from 2"),
    (["--k", "two"], "--k takes comma-separated whole numbers"),
    (["--t", "2"], "t must be between 0 and 1"),
    (["--l", "30"], "ℓ must be from 2"),
])
def test_cli_bad_input_is_one_sentence_and_exit_2(tmp_path, args, fragment):
    out = tmp_path / "never"
    result = CliRunner().invoke(cli_app(), ["tradeoff", "--out", str(out), "--sample", "300", *args])
    assert result.exit_code == 2
    assert fragment in result.output
    assert result.output.startswith("error: ") and "Traceback" not in result.output
    assert not out.exists()


def test_cli_refuses_a_file_as_output_folder(tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("keep", encoding="utf-8")
    result = CliRunner().invoke(cli_app(), ["tradeoff", "--out", str(target), "--sample", "300"])
    assert result.exit_code == 2 and "is a file" in result.output
    assert target.read_text(encoding="utf-8") == "keep"


def test_errors_are_veil_errors():
    assert issubclass(ParameterError, VeilError) and issubclass(ColumnError, VeilError)
    assert load_adult().num_rows == 30_162
