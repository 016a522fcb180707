"""Configuration files for anonymization: what they may hold, how they are read, what they become,
and the starter ``veil init`` writes.

========================  =====================================================================
module                    job
========================  =====================================================================
``specification``         the objects a file describes (:class:`AnonymizationConfig`,
                          :class:`ModelSpec`, …)
``schema``                the declarative schema: the option tables of the sections, keys, types
                          and ranges, and its JSON Schema
``value_types``           the schema's value types: a check of one YAML value and its JSON Schema
``per_quasi_identifier``  the value type of one value for every quasi-identifier, or per column
``options``               an option of a mapping (required, or its default), and mappings of them
``table_entries``         the kinds of table entry (a model, metric, algorithm, builder, section)
``policy_section``        the ``policy:`` section read into a :class:`PolicySpec`
``marginals_section``     the ``marginals:`` section: models of the collection, marginals, base
``yaml_nodes``            the YAML composed with its lines, and the primitives that read one node
``parser``                :func:`load_config`, :func:`load_policy`: the sections read with the
                          declared columns, errors as ``file, line N: …``
``starter``               :func:`starter_config` and :func:`write_starter_config`, for ``veil init``
========================  =====================================================================

A mistake in a file is one sentence naming the file, the line and the key, e.g.
``adult.yaml, line 12: unknown model 'k_anonimity'; did you mean 'k_anonymity'?``. The JSON
Schema of the format (:func:`configuration_schema`, printed by ``veil config schema``) is
generated from the same tables the parser reads.
"""

from veil.config.parser import load_config, load_policy
from veil.config.schema import (ALGORITHMS, METRICS, MODELS, SECTIONS, SHIPPED_SCHEMA, configuration_schema,
                                schema_text)
from veil.config.specification import (AlgorithmSpec, AnonymizationConfig, HierarchySpec, MetricSpec, ModelSpec,
                                       OutputSpec, PolicySpec, PopulationSpec)
from veil.config.starter import starter_config, write_starter_config
from veil.errors import ConfigError

__all__ = [
    "ALGORITHMS", "AlgorithmSpec", "AnonymizationConfig", "ConfigError", "HierarchySpec", "METRICS", "MODELS",
    "MetricSpec", "ModelSpec", "OutputSpec", "PolicySpec", "PopulationSpec", "SECTIONS", "SHIPPED_SCHEMA",
    "configuration_schema", "load_config", "load_policy", "schema_text", "starter_config", "write_starter_config",
]
