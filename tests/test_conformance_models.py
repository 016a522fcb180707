"""The privacy models' conformance suite (:mod:`veil.conformance.models`): every registered model
keeps the contract, every model of veil is registered, and a model broken on purpose in each
property is caught."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veil.models
from veil.conformance import MODELS, ConformanceError, ModelCase, check_model, random_table
from veil.errors import ParameterError
from veil.models import DeltaDisclosure, EntropyLDiversity, KAnonymity, PrivacyModel


@pytest.mark.parametrize("case", MODELS, ids=str)
def test_every_model_keeps_the_contract(case):
    check_model(case)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from([c for c in MODELS if "join" not in c.name and "presence" not in c.name
                             and "map" not in c.name]),
       seed=st.integers(3, 2**32 - 1))
def test_property_the_contract_holds_on_any_random_table(case, seed):
    check_model(case, seeds=[seed])


def test_every_model_of_veil_is_registered():
    table = random_table(0)
    registered = {type(case.make(table)) for case in MODELS}
    exported = {getattr(veil.models, name) for name in veil.models.__all__}
    models = {cls for cls in exported if isinstance(cls, type) and issubclass(cls, PrivacyModel)
              and cls is not PrivacyModel}
    assert models <= registered, f"not in MODELS: {sorted(c.__name__ for c in models - registered)}"


@pytest.mark.parametrize("name", ["δ-disclosure privacy", "δ-presence with a floor", "join k-anonymity"])
def test_a_model_not_declared_monotonic_is_shown_to_need_it(name):
    # The suite meets a generalization that fails above a node that passes.
    case = next(case for case in MODELS if case.name == name)
    assert not case.make(random_table(0)).monotonic
    assert check_model(case).counterexample is not None


# --------------------------------------------------------------------------- broken on purpose

class LaxK(KAnonymity):
    """Lets classes one record short of k pass."""

    def class_passed(self, classes, levels):
        return levels >= self.threshold - 1


class StrictK(KAnonymity):
    """Compares strictly without declaring it."""

    def class_passed(self, classes, levels):
        return levels > self.threshold


class MeanK(KAnonymity):
    """Reports the mean class size as the level."""

    def evaluate(self, classes):
        result = super().evaluate(classes)
        return dataclasses.replace(result, level=float(np.mean(result.class_levels)))


class MonotonicDelta(DeltaDisclosure):
    """Claims a monotonicity δ-disclosure does not have."""

    monotonic = True


class SuppressingEntropy(EntropyLDiversity):
    """Claims that its failing records never grow under generalization."""

    monotonic_with_suppression = True


class Contradicting(KAnonymity):
    """Monotonic with suppression but not monotonic."""

    monotonic = False


class RowsK(KAnonymity):
    """Counts the rows of a class, not its records."""

    def class_levels(self, classes, counts):
        return np.bincount(classes.row_class[classes.row_class >= 0], minlength=classes.n_classes)


class ThresholdLevelK(KAnonymity):
    """Measures something else when no threshold is given."""

    def class_levels(self, classes, counts):
        return classes.sizes if self.threshold is not None else classes.sizes + 1


class SilentK(KAnonymity):
    """Accepts a negative k."""

    def __init__(self, k=None):
        PrivacyModel.__init__(self, k)


class ChattyK(KAnonymity):
    """Refuses a bad k in two sentences."""

    def __init__(self, k=None):
        if k is not None and not k >= 1:
            raise ParameterError(f"k is {k}. Give a k of at least 1.")
        super().__init__(k)


@pytest.mark.parametrize("broken, threshold, prop", [
    (LaxK, 3, "verdict"),
    (StrictK, 3, "verdict"),
    (MeanK, 3, "level"),
    (MonotonicDelta, 1.0, "monotonic"),
    (SuppressingEntropy, 1.8, "monotonic-suppression"),
    (RowsK, 3, "weighted"),
    (ThresholdLevelK, 3, "measure-only"),
    (SilentK, 3, "parameters"),
    (ChattyK, 3, "parameters"),
], ids=lambda v: v.__name__ if isinstance(v, type) else str(v))
def test_a_broken_model_is_caught(broken, threshold, prop):
    case = ModelCase(broken.__name__, lambda t, threshold=threshold: broken(threshold))
    with pytest.raises(ConformanceError) as caught:
        check_model(case)
    assert caught.value.property == prop, caught.value


def test_contradicting_declarations_are_caught():
    with pytest.raises(ConformanceError) as caught:
        check_model(ModelCase("contradicting", lambda t, threshold=3: Contradicting(threshold)))
    assert caught.value.property == "declaration"


def test_the_failure_names_the_model_the_table_and_the_property():
    with pytest.raises(ConformanceError) as caught:
        check_model(ModelCase("lax k", lambda t, threshold=3: LaxK(threshold)), seeds=[1])
    assert str(caught.value).startswith("lax k (table 1) at node ")
    assert "its verdict and its level disagree" in str(caught.value)
