"""Conformance suites: the contract every privacy model, anonymization algorithm, DP mechanism
and LDP protocol of veil keeps, as checks anyone can run on an implementation of their own.

In the spirit of scikit-learn's ``check_estimator``, each family has a registry, one line per
implementation, and a check that raises :class:`ConformanceError` (an ``AssertionError`` naming the
implementation and the property it breaks) on the first broken property:

* privacy models, :data:`MODELS` and :func:`check_model`: level and verdict agree, the declared
  monotonicity holds, and a table's records and its counts of distinct rows give one result;
* anonymization algorithms, :data:`ANONYMIZERS` and :func:`check_anonymizer`: the published table
  satisfies the models, no record is invented or lost, the rows are a shuffle, and the manifest
  matches the release;
* DP mechanisms, :data:`MECHANISMS` and :func:`check_mechanism`, and the DP queries on a table,
  :data:`QUERIES` and :func:`check_query`: the draws follow the stated distribution, the error
  bound and the variance hold, and a seeded run is not fit for release;
* LDP frequency oracles, :data:`PROTOCOLS` and :func:`check_protocol`: the estimator is unbiased
  with the stated variance, and no report is likelier than e^ε times under one value than another;
* the glue around the noise samplers, :func:`check_release` (:mod:`veil.conformance.glue`): a
  release asks the samplers for the same draws (sampler, exact scale, cells) on a table and on
  each of its neighbours (:func:`neighbour`).

Bad parameters must raise a :class:`~veil.errors.ParameterError` of one sentence in every family.
The checks run on random tables and draws made from seeds (:mod:`veil.conformance.tables`), so a
verdict is the same on every run. A new model is checked with
``check_model(ModelCase("my model", lambda t, threshold=3: MyModel(threshold)))``, and joins
:data:`MODELS` with that line; ``tests/test_conformance_*.py`` run every registry, and
``docs/contributing.md`` says more.
"""

from veil.conformance.anonymizers import ANONYMIZERS, AnonymizerCase, AnonymizerCheck, check_anonymizer
from veil.conformance.base import PROPERTIES, ConformanceError
from veil.conformance.glue import check_release, neighbour
from veil.conformance.mechanisms import MECHANISMS, MechanismCase, MechanismCheck, check_mechanism
from veil.conformance.models import MODELS, ModelCase, ModelCheck, check_model
from veil.conformance.protocols import PROTOCOLS, ProtocolCase, ProtocolCheck, check_protocol
from veil.conformance.queries import QUERIES, QueryCase, QueryCheck, check_query
from veil.conformance.tables import RandomTable, random_table

__all__ = [
    "ANONYMIZERS", "AnonymizerCase", "AnonymizerCheck", "check_anonymizer",
    "PROPERTIES", "ConformanceError",
    "check_release", "neighbour",
    "MECHANISMS", "MechanismCase", "MechanismCheck", "check_mechanism",
    "MODELS", "ModelCase", "ModelCheck", "check_model",
    "PROTOCOLS", "ProtocolCase", "ProtocolCheck", "check_protocol",
    "QUERIES", "QueryCase", "QueryCheck", "check_query",
    "RandomTable", "random_table",
]
