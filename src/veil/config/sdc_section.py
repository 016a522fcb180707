"""The configuration of statistical disclosure control: the survey roles of columns (sampling
weights, strata, households), the risk models, the perturbative and suppressive methods as
algorithms, and the publishing gate's risk check.

These are tables of the schema (:mod:`veil.config.schema` merges them into ``COLUMN_ROLES``,
``MODELS``, ``ALGORITHMS`` and ``POLICY_OPTIONS``), with the value types only they use: a PRAM
transition matrix per column (:class:`TransitionMatrices`) and the thresholds of top and bottom
coding per column (:class:`CodingThresholds`). What the methods do is :mod:`veil.sdc`; how a
configuration runs one, :mod:`veil.sdc.pipeline`.

**Recoding first.** Every method takes ``recode: fulldomain``: the table is first generalized by
optimal full-domain generalization under the file's ``models``, ``hierarchies`` and
``suppression_limit`` (as ``algorithm: fulldomain`` would), then the method runs on the recoded
table, as statistics offices practise it (recode, then suppress locally).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from veil.config.options import Option, optional, required
from veil.config.table_entries import AlgorithmSchema, ModelSchema
from veil.config.value_types import NAME_SCHEMA, Boolean, Choice, Column, Columns, Nullable, Number, WholeNumber

if TYPE_CHECKING:
    import yaml

Parser = Any

#: The algorithms of :mod:`veil.sdc` (the pipeline runs them, not an anonymizer of veil.anonymize).
SDC_ALGORITHMS = ("localsuppression", "pram", "swap", "noise", "topcoding")
#: What a matrix's row may be off 1 by.
STOCHASTIC_TOLERANCE = 1e-9

SEED = optional(Nullable(WholeNumber(0)), None,
                about="null (every draw from the operating system's secure source: fit for release) or a seed: a "
                      "reproducible experiment, which the manifest marks not fit for release", example=7)
RECODE = optional(Nullable(Choice(("fulldomain",))), None,
                  about="fulldomain: first generalize the table by optimal full-domain generalization under the "
                        "file's models, hierarchies and suppression limit, then apply the method to the recoded table "
                        "(null: the method alone, on the table as it is)", example="fulldomain")


@dataclass(frozen=True)
class TransitionMatrices:
    """PRAM's given transition matrices: per column a square list of rows, row a (the chance that
    category a is released as each category) in the order of the column's categories sorted as
    text, each row non-negative and summing to 1."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> dict[str, list[list[float]]]:
        out = {}
        for column, (key_node, value) in p.mapping(node, where, "{sex: [[0.9, 0.1], [0.1, 0.9]]}").items():
            at = f"{where}.{column}"
            p.column(key_node, where)
            rows = [[p.number(cell, at, 0, 1) for cell in p.items(row, at)] for row in p.items(value, at)]
            if not rows or any(len(row) != len(rows) for row in rows):
                raise p.error(value, f"{at} must be square, one row of {len(rows)} numbers per category (the "
                                     "categories sorted as text), like [[0.9, 0.1], [0.1, 0.9]].")
            for i, row in enumerate(rows):
                if not math.isclose(sum(row), 1.0, rel_tol=0, abs_tol=STOCHASTIC_TOLERANCE):
                    raise p.error(value, f"{at} is not stochastic: row {i + 1} sums to {sum(row):.12g}, and every "
                                         "row must sum to 1.")
            out[column] = rows
        return out

    def json_schema(self) -> dict:
        row = {"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0, "maximum": 1}}
        return {"type": "object", "additionalProperties": {"type": "array", "minItems": 1, "items": row}}


CODING_OPTIONS: dict[str, Option] = {
    "top": optional(Nullable(Number()), None, about="values above it are top-coded (null: no top coding)",
                    example=100000),
    "bottom": optional(Nullable(Number()), None, about="values below it are bottom-coded (null: no bottom coding)",
                       example=18),
    "replacement": optional(Nullable(Number()), None,
                            about="the value a coded cell takes (null: the threshold it crossed)", example=100000),
}


@dataclass(frozen=True)
class CodingThresholds:
    """Top and bottom coding's thresholds, per numeric column ``{top, bottom, replacement}``."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> dict[str, dict]:
        from veil.config.options import Options

        out = {}
        for column, (key_node, value) in p.mapping(node, where, "{income: {top: 100000}}").items():
            p.column(key_node, where)
            options = Options(CODING_OPTIONS, "{top: 100000, bottom: 0}")(p, value, f"{where}.{column}", key_node)
            if options["top"] is None and options["bottom"] is None:
                raise p.error(key_node, f"{where}.{column} needs top or bottom (or both).")
            if options["top"] is not None and options["bottom"] is not None and options["bottom"] > options["top"]:
                raise p.error(key_node, f"{where}.{column} has bottom {options['bottom']:g} above top "
                                        f"{options['top']:g}.")
            out[column] = options
        return out

    def json_schema(self) -> dict:
        from veil.config.options import options_schema

        each = options_schema(CODING_OPTIONS)
        each["type"] = "object"
        return {"type": "object", "minProperties": 1, "additionalProperties": each}


#: The survey roles of columns (beside quasi-identifiers, sensitive and identifying columns).
SURVEY_ROLES: dict[str, Option] = {
    "weight": optional(Column(), about="the sampling weight of each record (how many people of the population it "
                                       "stands for): population frequencies are estimated from it; published as is",
                       example="weight"),
    "strata": optional(Columns(), about="the columns of the sampling design's strata: a record's frequencies are "
                                        "counted within its stratum", example=["region"]),
    "household": optional(Column(), about="the column naming each record's household: a household is at risk when "
                                          "any of its members is", example="household_id"),
}

_HOUSEHOLD = optional(Boolean(), False, about="measure the household risk (a household is at risk when any of its "
                                              "members is) instead of the record's (needs columns.household)",
                      example=True)
RISK_MODELS: dict[str, ModelSchema] = {
    "average_risk": ModelSchema("AverageRisk", {
        "risk": required(Number(0, 1), "the largest rate of expected re-identifications (Benedetti–Franconi "
                                       "individual risk, summed over the released records, per record)",
                         example=0.01),
        "household": _HOUSEHOLD}, "{risk: 0.01}",
        "the expected share of released records re-identified (the global risk's rate) is at most risk",
        needs_sensitive=False),
    "records_at_risk": ModelSchema("RecordsAtRisk", {
        "risk": required(Number(0, 1), "the individual risk above which a record is at risk", example=0.2),
        "share": required(Number(0, 1), "the largest share of released records at risk", example=0.05),
        "household": _HOUSEHOLD}, "{risk: 0.2, share: 0.05}",
        "at most share of the released records have an individual risk above risk", needs_sensitive=False),
    "population_uniqueness": ModelSchema("PopulationUniqueness", {
        "share": required(Number(0, 1), "the largest estimated share of population uniques", example=0.01),
        "population_size": required(WholeNumber(1), "the number of people in the population the table is a "
                                                    "sample of (at least the table's rows)", example=1000000),
        "estimator": optional(Choice(("dankar", "pitman", "zayatz", "snb")), "dankar",
                              about="the estimator of population uniques: dankar (Dankar et al.'s decision rule, "
                                    "the default), pitman, zayatz or snb (slide negative binomial)",
                              example="pitman")}, "{share: 0.01, population_size: 1000000}",
        "the estimated share of population uniques is at most share (ARX's estimators)", needs_sensitive=False),
}

SDC_ALGORITHM_SCHEMAS: dict[str, AlgorithmSchema] = {
    "localsuppression": AlgorithmSchema("LocalSuppression", {
        "k": optional(WholeNumber(1), about="suppress cells until every record shares its quasi-identifiers with at "
                                            "least k − 1 others (default: the k of the k_anonymity model)",
                      example=5),
        "risk": optional(Number(0, 1, lo_open=True), about="instead of k: suppress cells until no record's "
                                                           "individual risk exceeds risk", example=0.1),
        "importance": optional(Columns(), about="quasi-identifiers from most to least important: the first is "
                                                "suppressed last (default: the order of columns.quasi_identifiers)",
                               example=["age", "sex"]),
        "matching": optional(Choice(("any", "category")), "any",
                             about="how a suppressed cell counts: any (it matches every value, as sdcMicro and the "
                                   "adversary who reads it as unknown) or category (a value of its own)",
                             example="category"),
        "method": optional(Choice(("greedy", "optimal")), "greedy",
                           about="greedy (fast, not proven minimal) or optimal (the fewest suppressed cells, proven; "
                                 "for small tables)", example="optimal"),
        "recode": RECODE,
    }, needs_hierarchies=False, what="local suppression", optional_sections=("models",)),
    "pram": AlgorithmSchema("Pram", {
        "columns": required(Columns(), "the categorical columns to post-randomize", example=["sex", "race"]),
        "matrix": optional(TransitionMatrices(),
                           about="per column its transition matrix: row a gives the chances that category a is "
                                 "released as each category, the categories sorted as text (give matrix or alpha)",
                           example={"sex": [[0.9, 0.1], [0.1, 0.9]]}),
        "alpha": optional(Number(0, 1, lo_open=True, hi_open=True),
                          about="invariant PRAM (Gouweleeuw et al. 1998): each column's matrix is made from its "
                                "frequencies so that they are kept in expectation; alpha is the largest chance of a "
                                "change (give matrix or alpha)", example=0.2),
        "by": optional(Columns(), about="post-randomize within the strata these columns make, each with the "
                                        "invariant matrix of its own frequencies (invariant PRAM only)",
                       example=["region"]),
        "seed": SEED,
        "recode": RECODE,
    }, needs_hierarchies=False, what="PRAM (post-randomization)", exactly_one=(("matrix", "alpha"),),
        optional_sections=("models",)),
    "swap": AlgorithmSchema("Swap", {
        "columns": required(Columns(), "the numeric columns to rank-swap", example=["income"]),
        "p": required(Number(0, 100, lo_open=True), "swap partners lie within p % of the records in rank (Moore "
                                                    "1996)", example=5),
        "seed": SEED,
        "recode": RECODE,
    }, needs_hierarchies=False, what="rank swapping", optional_sections=("models",)),
    "noise": AlgorithmSchema("Noise", {
        "columns": required(Columns(), "the numeric columns to add noise to", example=["income", "hours"]),
        "amount": required(Number(0, lo_open=True), "the noise's standard deviation as a multiple of each "
                                                    "column's (uncorrelated) or each principal component's "
                                                    "(correlated): 0.5 adds noise of half the spread", example=0.5),
        "kind": optional(Choice(("uncorrelated", "correlated")), "uncorrelated",
                         about="uncorrelated (independent noise per column) or correlated (noise with the columns' "
                               "covariance, which keeps their correlations)", example="correlated"),
        "seed": SEED,
        "recode": RECODE,
    }, needs_hierarchies=False, what="additive noise", optional_sections=("models",)),
    "topcoding": AlgorithmSchema("TopCoding", {
        "columns": required(CodingThresholds(), "per numeric column, its top and bottom thresholds and the "
                                                "replacement", example={"income": {"top": 100000}}),
        "recode": RECODE,
    }, needs_hierarchies=False, what="top and bottom coding", optional_sections=("models",)),
}

#: The gate's risk check of a release alone (:class:`veil.ledger.checks.RiskCheck`).
RISK_CHECK_OPTIONS: dict[str, Option] = {
    "max_individual": optional(Number(0, 1), 0.2,
                               about="the individual risk above which a released record is at risk", example=0.1),
    "max_share": optional(Number(0, 1), 0.0, about="the largest share of released records at risk", example=0.05),
    "max_rate": optional(Nullable(Number(0, 1)), None,
                         about="the largest rate of expected re-identifications (global risk per released record; "
                               "null: not checked)", example=0.01),
    "household": optional(Boolean(), False, about="judge the household risk (needs the release's household column)",
                          example=True),
}

__all__ = ["CODING_OPTIONS", "NAME_SCHEMA", "RISK_CHECK_OPTIONS", "RISK_MODELS", "SDC_ALGORITHMS",
           "SDC_ALGORITHM_SCHEMAS", "SEED", "SURVEY_ROLES", "CodingThresholds", "TransitionMatrices"]
