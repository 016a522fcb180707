"""evaluate and Evaluation of veil.synth.evaluation: the contract (arguments, errors, nothing
modified, determinism), the report's sections, the JSON form, and the utility measure."""

from __future__ import annotations

import json

import numpy as np
import pytest
from synth_evaluation_data import NAMES, chain

from veil.errors import ColumnError, DataError, ParameterError, VeilError
from veil.synth.evaluation import Evaluation, Row, Section, evaluate
from veil.synth.evaluation.ml_utility import ml_utility

SIZES = (6, 8, 5, 9, 7, 10, 6, 2)   # a binary last column: the target, so that boosting fits fast


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(40)
    return chain(1500, rng, SIZES), chain(1500, rng, SIZES), chain(800, rng, SIZES)   # real, synthetic, holdout


@pytest.fixture(scope="module")
def full(tables):
    real, synthetic, holdout = tables
    return evaluate(real, synthetic, NAMES, SIZES, holdout=holdout, target="h", workload=[("a", "b"), ("c", "h", "d")],
                    quasi_identifiers=["a", "b", "c"], rng=np.random.default_rng(41))


def test_every_measure_runs_with_a_holdout_and_a_target(full):
    assert isinstance(full, Evaluation)
    assert full.utility.ran and full.utility.test == "holdout" and full.utility.test_rows == 800
    assert full.membership.dcr.ran and full.membership.classifier.ran
    assert full.singling_out.ran and full.linkage.ran
    assert sorted(full.linkage.first + full.linkage.second) == ["a", "b", "c"]
    assert full.disclosure.quasi_identifiers == ("a", "b", "c") and full.disclosure.baseline.rows == 800
    assert [f.label for f in full.marginals.families] == ["1-way", "2-way", "3-way", "workload"]
    assert full.marginals.families[-1].worst in (("a", "b"), ("c", "d", "h"))


def test_the_sections_say_what_every_number_means_and_that_it_is_private(full):
    sections = full.sections()
    assert all(isinstance(s, Section) and s.title and s.rows for s in sections)
    rows = [row for s in sections for row in s.rows]
    assert all(isinstance(r, Row) and all(isinstance(x, str) and x for x in r) for r in rows)
    assert all(r.meaning.endswith(".") for r in rows)
    about = sections[0].rows[0].meaning
    assert "not differentially private" in about and "must not be published" in about and "curator" in about
    titles = [s.title for s in sections]
    assert any("membership" in t for t in titles) and any("singling" in t for t in titles)


def test_the_dict_is_json_ready_and_says_it_is_not_differentially_private(full):
    data = json.loads(json.dumps(full.to_dict(), allow_nan=False))
    assert data["differentially_private"] is False and "not differentially private" in data["notice"]
    assert data["membership"]["dcr"]["interval"][0] <= data["membership"]["dcr"]["advantage"]
    assert data["ml_utility"]["models"][0]["ratio"]["accuracy"] > 0
    assert set(data) >= {"marginals", "ml_utility", "membership", "singling_out", "linkage", "disclosure", "seconds"}


def test_without_a_holdout_the_attacks_say_why_they_did_not_run(tables):
    real, synthetic, _ = tables
    result = evaluate(real, synthetic, NAMES, SIZES, rng=np.random.default_rng(42))
    assert not result.utility.ran and "target" in result.utility.reason
    for reason in (result.membership.dcr.reason, result.singling_out.reason, result.linkage.reason):
        assert "holdout" in reason
    assert result.disclosure.baseline is None
    rendered = " ".join(r.meaning for s in result.sections() for r in s.rows)
    assert "No holdout was given" in rendered and "No target column was named" in rendered


def test_the_same_generator_state_gives_the_same_evaluation_and_nothing_given_changes(tables):
    real, synthetic, holdout = tables
    copies = [t.copy() for t in tables]
    names, sizes = list(NAMES), list(SIZES)
    runs = [evaluate(real, synthetic, names, sizes, holdout=holdout, target="h", rng=np.random.default_rng(7)).to_dict()
            for _ in range(2)]
    for run in runs:
        run.pop("seconds")
    assert runs[0] == runs[1]
    assert all(np.array_equal(a, b) for a, b in zip(tables, copies))
    assert names == list(NAMES) and sizes == list(SIZES)


def test_read_only_and_narrow_integer_tables_are_accepted(tables):
    real, synthetic, _ = tables
    frozen = real.astype(np.int8)
    frozen.setflags(write=False)
    result = evaluate(frozen, synthetic.astype(np.uint16), NAMES, SIZES, rng=np.random.default_rng(0))
    assert result.real_rows == 1500


def test_utility_of_a_fresh_sample_of_the_same_distribution_matches_training_on_real():
    rng = np.random.default_rng(43)
    real, fresh, holdout = chain(3000, rng, SIZES), chain(3000, rng, SIZES), chain(2000, rng, SIZES)
    result = ml_utility(real, fresh, NAMES, SIZES, target=7, holdout=holdout, rng=np.random.default_rng(44))
    assert result.majority_accuracy < 0.6
    for model in result.models:
        assert model.trtr.accuracy > result.majority_accuracy + 0.15
        for measure in ("accuracy", "macro_f1", "auc"):
            assert abs(model.ratio(measure) - 1) < 0.05


def test_a_target_of_more_than_two_values_has_no_auc():
    rng = np.random.default_rng(46)
    sizes = (4, 3)
    real = chain(300, rng, sizes)
    result = ml_utility(real, chain(300, rng, sizes), ("x", "y"), sizes, target=1, holdout=chain(100, rng, sizes),
                        rng=rng)
    assert all(m.trtr.auc is None and m.tstr.auc is None for m in result.models)
    assert not any("AUC" in r.measure for r in result.section().rows)


def test_utility_splits_the_real_table_without_a_holdout_and_handles_a_constant_target():
    rng = np.random.default_rng(45)
    sizes = (2, 3, 4)
    real = np.column_stack([rng.integers(s, size=400) for s in sizes])
    real[:, 0] = real[:, 1] >= 1
    synthetic = real.copy()
    synthetic[:, 0] = 1                                      # the synthetic target holds one value
    result = ml_utility(real, synthetic, ("y", "u", "v"), sizes, target=0, holdout=None, rng=rng)
    assert result.test == "split" and result.test_rows == 120 and result.train_rows == 280
    for model in result.models:
        assert model.trtr.accuracy > 0.9 and model.trtr.auc > 0.9
        assert model.tstr.auc == 0.5                         # a constant prediction ranks nothing
    assert "optimistic" in " ".join(r.meaning for r in result.section().rows)


@pytest.mark.parametrize("change, error, words", [
    ({"real": np.zeros(8, dtype=np.int64)}, DataError, "2-D"),
    ({"synthetic": np.zeros((3, 7), dtype=np.int64)}, DataError, "7 columns"),
    ({"real": np.zeros((0, 8), dtype=np.int64)}, DataError, "no rows"),
    ({"real": np.zeros((3, 8))}, DataError, "integer codes"),
    ({"holdout": np.full((3, 8), 9)}, DataError, "outside"),
    ({"names": ("a",) * 8}, ColumnError, "twice"),
    ({"names": "abcdefgh"}, ColumnError, "as a list"),
    ({"sizes": (6,) * 7}, ParameterError, "one size per column"),
    ({"sizes": (0,) * 8}, ParameterError, "at least 1"),
    ({"target": "salary"}, ColumnError, "unknown column 'salary'"),
    ({"workload": [("a", "zz")]}, ColumnError, "unknown column 'zz'"),
    ({"workload": [()]}, ParameterError, "no column"),
    ({"quasi_identifiers": ["a", "a"]}, ColumnError, "twice"),
    ({"quasi_identifiers": []}, ParameterError, "quasi-identifier"),
    ({"rng": 7}, ParameterError, "Generator"),
    ({"max_marginals": 0}, ParameterError, "max_marginals"),
])
def test_bad_input_is_refused_in_one_sentence(tables, change, error, words):
    real, synthetic, holdout = tables
    arguments = {"real": real[:20], "synthetic": synthetic[:20], "names": NAMES, "sizes": SIZES, "holdout": holdout[:20],
                     "rng": np.random.default_rng(0)}
    arguments.update(change)
    with pytest.raises(error) as raised:
        evaluate(arguments.pop("real"), arguments.pop("synthetic"), arguments.pop("names"), arguments.pop("sizes"),
                 **arguments)
    message = str(raised.value)
    assert isinstance(raised.value, VeilError) and words in message
    assert message.endswith(".") and ". " not in message.rstrip(".")
