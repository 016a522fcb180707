"""The join attack on sequential releases: hand-built releases whose exposed records are known."""

import pandas as pd
import pytest

from veil.attacks.join import NothingToJoinError, join_attack
from veil.errors import ColumnError, ParameterError

PEOPLE = pd.DataFrame({
    "sex": ["M", "M", "F", "F", "M", "F"],
    "job": ["eng", "eng", "eng", "eng", "law", "law"],
    "zip": ["A", "B", "A", "B", "C", "C"],
    "disease": ["flu", "hiv", "flu", "cold", "hiv", "flu"],
})
# T1 publishes sex, job and disease; T2 job and zip, in another order. The adversary knows sex and
# zip. Alone, T1 puts each person among 3 of the same sex; joined on job, zip C means a lawyer,
# and there is one lawyer of each sex.
T1 = PEOPLE[["sex", "job", "disease"]]
T2 = PEOPLE[["job", "zip"]].iloc[[5, 3, 1, 4, 2, 0]].reset_index(drop=True)


def test_join_exposes_the_lawyers():
    result = join_attack(T1, T2, quasi_identifiers=["sex", "zip"], k=2, l=2, sensitive="disease")
    assert result.shared == ["job"]
    assert result.before.tolist() == [3, 3, 3, 3, 3, 3]
    assert result.candidates.tolist() == [2, 2, 2, 2, 1, 1]
    assert result.diversity.tolist() == [2, 2, 2, 2, 1, 1]
    assert result.exposed.tolist() == [4, 5] and not result.passed
    assert result.summary()["narrowed"] == 6 and result.joined_groups == 6


def test_join_passes_when_every_joined_group_is_large_enough():
    result = join_attack(T1, T2, quasi_identifiers=["sex", "zip"], k=1)
    assert result.passed and result.summary()["exposed"] == 0


def test_sensitive_column_in_the_second_release():
    second = PEOPLE[["job", "zip", "disease"]]
    result = join_attack(PEOPLE[["sex", "job"]], second, quasi_identifiers=["sex", "zip"], k=1, l=2,
                         sensitive="disease")
    # T2's zip A engineers hold only flu (rows 0 and 2), so every engineer is in a joined group of
    # one value; zip C lawyers hold hiv and flu.
    assert result.diversity.tolist() == [1, 1, 1, 1, 2, 2]
    assert result.exposed.tolist() == [0, 1, 2, 3]


def test_bad_input_is_one_sentence():
    with pytest.raises(NothingToJoinError, match="nothing to join"):
        join_attack(PEOPLE[["sex"]], PEOPLE[["zip"]], quasi_identifiers=["sex", "zip"])
    with pytest.raises(ColumnError, match="neither release publishes 'age'"):
        join_attack(T1, T2, quasi_identifiers=["age"])
    with pytest.raises(ParameterError, match="sensitive column"):
        join_attack(T1, T2, quasi_identifiers=["sex", "zip"], l=2)
    with pytest.raises(ParameterError, match="k must be at least 1"):
        join_attack(T1, T2, quasi_identifiers=["sex", "zip"], k=0)
