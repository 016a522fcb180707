"""Releases are shuffled by default with the secure source (the defence against Sweeney's unsorted
matching attack); keeping the input order is explicit, and the manifest warns about it."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil import Dataset
from veil.anonymize import MDAV, Mondrian
from veil.anonymize.release import INPUT_ORDER_WARNING
from veil.attacks.matching import matching_attack
from veil.models import KAnonymity

ANONYMIZERS = {"mondrian": lambda: Mondrian([KAnonymity(2)]), "mdav": lambda: MDAV(k=3)}

tables = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=12, max_size=40)


def people(rows) -> Dataset:
    # The sensitive value is distinct per person: both releases publish it unchanged, so it is the
    # column on which an adversary tests whether two releases are in the same order.
    frame = pd.DataFrame(rows, columns=["a", "b"]).assign(s=[f"s{i}" for i in range(len(rows))])
    return Dataset(frame, quasi_identifiers=["a", "b"], sensitive=["s"])


def sorted_rows(release) -> list[tuple]:
    return sorted(release.table.to_pandas().astype(str).itertuples(index=False, name=None))


@pytest.mark.parametrize("algorithm", sorted(ANONYMIZERS))
@settings(max_examples=15, deadline=None)
@given(rows=tables)
def test_property_a_default_release_is_a_permutation_of_the_input_order_release(algorithm, rows):
    ds = people(rows)
    anonymizer = ANONYMIZERS[algorithm]().fit(ds)
    shuffled, kept = anonymizer.transform(ds), anonymizer.transform(ds, shuffle=False)
    # No record lost or invented: the same published rows, as a multiset.
    assert shuffled.num_rows == kept.num_rows == ds.num_rows
    assert sorted_rows(shuffled) == sorted_rows(kept)
    assert kept.table.column("s").to_pylist() == [f"s{i}" for i in range(len(rows))]
    assert shuffled.manifest["output"] | {"columns": None} == {
        "rows": ds.num_rows, "columns": None, "suppressed": "remove", "shuffled": True, "seed": None,
        "order": "secure shuffle"}
    # Only the order differs: the input-order warning, first, is the one more the kept release says.
    assert INPUT_ORDER_WARNING not in shuffled.manifest.get("warnings", [])
    assert kept.manifest["output"]["order"] == "input order"
    assert kept.manifest["warnings"] == [INPUT_ORDER_WARNING] + shuffled.manifest.get("warnings", [])


@settings(max_examples=15, deadline=None)
@given(rows=tables)
def test_property_two_default_releases_cannot_be_joined_by_position(rows):
    ds = people(rows)
    mondrian, mdav = Mondrian([KAnonymity(2)]).fit(ds), MDAV(k=3).fit(ds)
    # Both shuffled: the sensitive column tells the adversary the rows do not correspond (they
    # would only if the two secure permutations were equal, odds of 1 in 12! or fewer).
    result = matching_attack(mondrian.transform(ds), mdav.transform(ds), quasi_identifiers=["a", "b"])
    assert not result.linkable and result.agreement < 1.0
    assert len(result.narrowed) == 0 and len(result.exposed) == 0
    assert (result.joined == result.before).all()
    # One of the two in the input order is enough to defeat the join too.
    kept_first = mondrian.transform(ds, shuffle=False)
    assert not matching_attack(kept_first, mdav.transform(ds), quasi_identifiers=["a", "b"]).linkable
    # Both in the input order: the join recovers, for each person, the rows sharing both classes.
    first, second = kept_first.table.to_pandas(), mdav.transform(ds, shuffle=False).table.to_pandas()
    result = matching_attack(first, second, quasi_identifiers=["a", "b"])
    pairs = pd.DataFrame({"first": first["a"].astype(str) + "|" + first["b"].astype(str),
                          "second": second["a"].astype(str) + "|" + second["b"].astype(str)})
    truth = pairs.groupby(["first", "second"])["first"].transform("size").to_numpy()
    smaller = pd.concat([pairs.groupby(c)[c].transform("size") for c in pairs], axis=1).min(axis=1).to_numpy()
    assert result.linkable and result.agreement == 1.0
    assert result.joined.tolist() == truth.tolist() and result.before.tolist() == smaller.tolist()
    assert result.narrowed.tolist() == [i for i in range(len(rows)) if truth[i] < smaller[i]]



def test_the_input_order_pair_narrows_where_the_default_pair_does_not():
    rows = [(3, 4), (5, 0), (0, 4), (5, 1), (1, 5), (2, 1), (4, 1), (2, 3), (3, 0), (0, 5), (4, 5), (3, 4), (1, 2),
            (4, 0), (1, 0), (2, 5), (0, 2), (2, 5), (1, 3), (1, 0), (4, 0), (1, 2), (2, 0), (5, 4), (5, 0)]
    ds = people(rows)
    mondrian, mdav = Mondrian([KAnonymity(2)]).fit(ds), MDAV(k=3).fit(ds)
    kept = matching_attack(mondrian.transform(ds, shuffle=False), mdav.transform(ds, shuffle=False),
                           quasi_identifiers=["a", "b"])
    shuffled = matching_attack(mondrian.transform(ds), mdav.transform(ds), quasi_identifiers=["a", "b"])
    # Joined by position, 10 people lose candidates and 8 of them are alone in their pair of classes.
    assert kept.linkable and len(kept.narrowed) == 10 and len(kept.exposed) == 8
    assert not shuffled.linkable and len(shuffled.narrowed) == 0
