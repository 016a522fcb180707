"""Work spread over threads (veil.parallel): the count, the order, and results that do not
depend on it."""

from __future__ import annotations

import numpy as np
import pytest

import veil
from veil import classes
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS
from veil.errors import ParameterError
from veil.parallel import map_threads, thread_count


def test_the_thread_count_comes_from_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv("VEIL_THREADS", "3")
    assert thread_count() == 3 and thread_count(1) == 1
    monkeypatch.delenv("VEIL_THREADS")
    assert thread_count() >= 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_bad_thread_count_is_one_sentence(bad):
    with pytest.raises(ParameterError, match="whole number"):
        thread_count(bad)


def test_a_bad_environment_setting_is_one_sentence(monkeypatch):
    monkeypatch.setenv("VEIL_THREADS", "two")
    with pytest.raises(ParameterError, match="VEIL_THREADS"):
        thread_count()


def test_results_come_back_in_order():
    assert map_threads(lambda x: x * x, range(50), threads=4) == [x * x for x in range(50)]
    assert map_threads(str, [], threads=2) == []


def test_one_thread_and_several_give_the_same_dataset_and_check(monkeypatch, adult_csv, adult_hierarchy_paths):
    def run(threads: str):
        monkeypatch.setenv("VEIL_THREADS", threads)
        # Small blocks, so that 30,162 rows make several pieces of work for the threads.
        monkeypatch.setattr(classes, "BLOCK_ROWS", 1 << 20 if threads == "1" else 4096)
        ds = veil.Dataset(adult_csv, quasi_identifiers=list(ADULT_QUASI_IDENTIFIERS), sensitive=["occupation", "salary-class"],
                          hierarchies={"occupation": adult_hierarchy_paths["occupation"]})
        return ds, veil.check(ds).to_dict()

    (one, report_one), (two, report_two) = run("1"), run("2")
    for name in one.quasi_identifiers + one.sensitive:
        assert np.array_equal(one.column(name).codes, two.column(name).codes)
        assert one.column(name).labels.tolist() == two.column(name).labels.tolist()
    assert report_one == report_two


def test_counts_by_blocks_of_rows_are_the_counts_of_all_rows(monkeypatch):
    rng = np.random.default_rng(4)
    rows = rng.integers(-1, 6, 50_000)  # class -1: suppressed rows, not counted
    column = veil.data.encode_column("v", rng.integers(0, 4, 50_000))
    expected = np.zeros((6, 4), dtype=np.int64)
    np.add.at(expected, (rows[rows >= 0], column.codes[rows >= 0]), 1)
    for threads, block in (("1", 1 << 20), ("2", 1000), ("3", 777)):
        monkeypatch.setenv("VEIL_THREADS", threads)
        monkeypatch.setattr(classes, "BLOCK_ROWS", block)
        assert np.array_equal(classes.class_value_counts(rows, column, 6), expected)


def test_the_lattice_search_finds_the_same_node_with_any_number_of_threads(monkeypatch, adult_subset_csv,
                                                                            adult_hierarchy_paths):
    from veil.anonymize import FullDomain
    from veil.models import EntropyLDiversity, KAnonymity

    qis = list(ADULT_QUASI_IDENTIFIERS)

    def fit(threads: str):
        monkeypatch.setenv("VEIL_THREADS", threads)
        monkeypatch.setattr(classes, "BLOCK_ROWS", 1 << 20 if threads == "1" else 512)
        ds = veil.Dataset(adult_subset_csv, quasi_identifiers=qis, sensitive="occupation",
                          hierarchies={q: adult_hierarchy_paths[q] for q in qis})
        search = FullDomain([KAnonymity(5), EntropyLDiversity(2)], suppression_limit=0.04).fit(ds)
        release = search.transform(ds, rng=0)  # a seeded shuffle: the same order in both runs
        return search.result_, release.csv_text()

    (one, text_one), (two, text_two) = fit("1"), fit("2")
    found = lambda r: (r.levels, r.loss, r.suppressed_records, r.nodes_checked)  # noqa: E731
    assert found(one) == found(two)
    assert text_one == text_two
