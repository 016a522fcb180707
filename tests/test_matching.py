"""The unsorted matching attack: releases in the same row order are joined by position; shuffled ones are not."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.attacks.matching import matching_attack
from veil.errors import ParameterError

# Sweeney's setting: one table, two 2-anonymous releases generalizing different columns, both
# in the input's order. Each release has classes of 2, but joined by position each row's pair
# of classes is unique.
FIRST = pd.DataFrame({"race": ["black", "black", "white", "white"], "zip": ["021**", "021**", "021**", "021**"],
                      "birth": ["1965", "1965", "1964", "1964"], "problem": ["flu", "cold", "flu", "cold"]})
SECOND = pd.DataFrame({"race": ["person", "person", "person", "person"], "zip": ["02138", "02139", "02138", "02139"],
                       "birth": ["196*", "196*", "196*", "196*"], "problem": ["flu", "cold", "flu", "cold"]})
QI = ["race", "zip", "birth"]


def test_same_order_exposes_every_row():
    result = matching_attack(FIRST, SECOND, quasi_identifiers=QI)
    assert result.linkable and result.link_columns == ["problem"] and result.agreement == 1.0
    assert result.before.tolist() == [2, 2, 2, 2]
    assert result.joined.tolist() == [1, 1, 1, 1]
    assert result.exposed.tolist() == [0, 1, 2, 3] and result.summary()["unique"] == 4


def test_a_shuffled_release_is_not_linkable():
    shuffled = SECOND.iloc[[1, 0, 3, 2]].reset_index(drop=True)
    result = matching_attack(FIRST, shuffled, quasi_identifiers=QI)
    assert not result.linkable and result.agreement == 0.0
    assert len(result.exposed) == 0 and len(result.narrowed) == 0


def test_different_row_counts_cannot_be_joined_by_position():
    result = matching_attack(FIRST, SECOND.iloc[:3], quasi_identifiers=QI)
    assert not result.linkable and "cannot be joined by position" in result.notes[0]


def test_no_column_alike_is_taken_as_linkable_with_a_note():
    result = matching_attack(FIRST.drop(columns="problem"), SECOND.drop(columns="problem"), quasi_identifiers=QI)
    assert result.linkable and result.link_columns == [] and "no column alike" in result.notes[0]


def test_bad_input():
    with pytest.raises(ParameterError, match="k must be at least 1"):
        matching_attack(FIRST, SECOND, quasi_identifiers=QI, k=0)
    with pytest.raises(ParameterError, match="name the quasi-identifiers"):
        matching_attack(FIRST, SECOND)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)), min_size=4, max_size=40),
       st.integers(0, 2**32 - 1))
def test_property_shuffled_releases_defeat_unsorted_matching(rows, seed):
    table = pd.DataFrame(rows, columns=["a", "b", "s"]).astype(str)
    first = table.assign(b="*")
    second = table.assign(a="*")
    permutation = np.random.default_rng(seed).permutation(len(table))
    shuffled = second.iloc[permutation].reset_index(drop=True)
    result = matching_attack(first, shuffled, quasi_identifiers=["a", "b"])
    moved = (table["s"].to_numpy() != table["s"].to_numpy()[permutation]).any()
    if moved:
        # Some row now meets a row with another sensitive value: the order is seen to be broken.
        assert not result.linkable and len(result.exposed) == 0 and len(result.narrowed) == 0
    # Joined by position, a person is never in a smaller set than the true pairs give.
    truth = matching_attack(first, second, quasi_identifiers=["a", "b"])
    assert (truth.joined <= truth.before).all()


def test_releases_are_shuffled_securely_by_default_and_input_order_is_flagged():
    import veil
    from veil.anonymize import Release
    from veil.models import KAnonymity
    from veil.randomness import secure_permutation

    order = secure_permutation(1000)
    assert sorted(order.tolist()) == list(range(1000)) and not (order == np.arange(1000)).all()
    with pytest.raises(ParameterError, match="0 or more positions"):
        secure_permutation(-1)
    table = pd.DataFrame({"a": [str(v % 7) for v in range(200)], "s": [str(v) for v in range(200)]})
    ds = veil.Dataset(table, quasi_identifiers=["a"], sensitive=["s"])
    classes = veil.EquivalenceClasses.from_dataset(ds)

    def make(**options):
        return Release(ds, classes, [False] * classes.n_classes, algorithm="fulldomain", models=[KAnonymity(1)],
                       suppression_limit=0.0, **options)

    secure = make()
    assert secure.manifest["output"]["order"] == "secure shuffle" and secure.manifest["output"]["seed"] is None
    assert secure.table.column("s").to_pylist() != table["s"].tolist()
    kept = make(shuffle=False)
    assert kept.manifest["output"]["order"] == "input order"
    assert kept.table.column("s").to_pylist() == table["s"].tolist()
    assert make(rng=3).manifest["output"]["order"] == "seeded shuffle"
    # The input order is what unsorted matching needs; the secure shuffle defeats it.
    assert matching_attack(kept, kept.table, quasi_identifiers=["a"]).linkable
    assert not matching_attack(kept, secure, quasi_identifiers=["a"]).linkable
