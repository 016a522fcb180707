"""Conformance suites: the contract every privacy model, anonymization algorithm, DP mechanism
and LDP protocol of veil keeps, as checks anyone can run on an implementation of their own.

In the spirit of scikit-learn's ``check_estimator``, each family has a registry, one line per
implementation, and a check that raises :class:`ConformanceError` (an ``AssertionError`` naming the
implementation and the property it breaks) on the first broken property:

========================= ======================= ============================================================
family                    registry                check
========================= ======================= ============================================================
privacy models            :data:`MODELS`          :func:`check_model`: level and verdict agree; the declared
                                                  monotonicity holds; records and counts agree
anonymization algorithms  :data:`ANONYMIZERS`     :func:`check_anonymizer`: the published table satisfies the
                                                  models; no record invented or lost; a shuffle; the manifest
DP mechanisms             :data:`MECHANISMS`      :func:`check_mechanism`: the stated distribution, error
                                                  bound and variance; seeded runs unfit for release
DP queries                :data:`QUERIES`         :func:`check_query`: the same, for the queries on a table
LDP frequency oracles     :data:`PROTOCOLS`       :func:`check_protocol`: unbiased, variance as stated, e^ε
========================= ======================= ============================================================

Bad parameters must raise a :class:`~veil.errors.ParameterError` of one sentence in every family.
The checks run on random tables and draws made from seeds
(:mod:`veil.conformance.tables`), so a verdict is the same on every run. For example, a new
model is checked with::

    from veil.conformance import ModelCase, check_model
    check_model(ModelCase("my model", lambda t, threshold=3: MyModel(threshold)))

``tests/test_conformance_*.py`` run every registry.
"""

from veil.conformance.anonymizers import ANONYMIZERS, AnonymizerCase, AnonymizerCheck, check_anonymizer
from veil.conformance.base import PROPERTIES, ConformanceError
from veil.conformance.mechanisms import MECHANISMS, MechanismCase, MechanismCheck, check_mechanism
from veil.conformance.models import MODELS, ModelCase, ModelCheck, check_model
from veil.conformance.protocols import PROTOCOLS, ProtocolCase, ProtocolCheck, check_protocol
from veil.conformance.queries import QUERIES, QueryCase, QueryCheck, check_query
from veil.conformance.tables import RandomTable, random_table

__all__ = [
    "ANONYMIZERS", "AnonymizerCase", "AnonymizerCheck", "check_anonymizer",
    "PROPERTIES", "ConformanceError",
    "MECHANISMS", "MechanismCase", "MechanismCheck", "check_mechanism",
    "MODELS", "ModelCase", "ModelCheck", "check_model",
    "PROTOCOLS", "ProtocolCase", "ProtocolCheck", "check_protocol",
    "QUERIES", "QueryCase", "QueryCheck", "check_query",
    "RandomTable", "random_table",
]
