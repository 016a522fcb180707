"""The parser's rules for the methods of statistical disclosure control that join several keys or
sections (:mod:`veil.config.sdc_section` has their tables): a recoding first needs models and a
hierarchy per quasi-identifier; local suppression needs k (given, or a k_anonymity model's) or a
risk threshold and an importance order among the quasi-identifiers; PRAM a matrix per column it
randomizes, and groups only with the invariant matrix; no method perturbs a weight, stratum or
household column. Each mistake is one sentence naming the file and the line.
"""

from __future__ import annotations

from typing import Any

from veil.errors import ConfigError

__all__ = ["check_sdc_algorithm", "survey_columns"]

Parser = Any


def survey_columns(p: Parser) -> list[str]:
    """The columns of the sampling design: weight, strata, household."""
    return [c for c in (p.weight, *p.strata, p.household) if c]


def check_sdc_algorithm(p: Parser, name: str, options: dict, entry) -> dict:
    """Check a method's options against the sections read before it, and fill in what they imply
    (local suppression's k from the k_anonymity model).

    Raises:
        ConfigError: one sentence naming the line of the key at fault.
    """
    if entry is None:
        line, nodes = 1, {}
    else:
        key_node, node = entry
        line = key_node
        nodes = {k: v for k, (_, v) in p.mapping(node, "algorithm").items()} if p.is_mapping(node) else {}

    def at(key: str):
        return nodes.get(key, line)

    options = dict(options)
    if options.get("recode") == "fulldomain":
        if not p.models:
            raise p.error(at("recode"), "algorithm.recode fulldomain generalizes the table under the file's models "
                                        "first, and the file has none; add models (like '- k_anonymity: {k: 5}').")
        missing = [q for q in p.quasi if q not in p.hierarchies]
        if missing:
            raise p.error(at("recode"), f"algorithm.recode fulldomain needs a hierarchy for every quasi-identifier, "
                                        f"and '{missing[0]}' has none; add it under hierarchies (a file, or a builder "
                                        "such as {flat: {}}).")
    if p.models and options.get("recode") is None:
        k_only = name == "localsuppression" and all(m.name == "k_anonymity" for m in p.models)
        if not (k_only and options.get("k") is None and options.get("risk") is None):
            node = p.models[0].origin
            raise ConfigError(f"{node}: the models apply to a recoding first, and algorithm {name} has no recode; "
                              "add recode: fulldomain to the algorithm, or remove the models (the method alone does "
                              "not enforce them).")
    design = survey_columns(p)
    if name == "localsuppression":
        return _local_suppression(p, options, at)
    columns = options["columns"]
    columns = list(columns) if not isinstance(columns, dict) else list(columns)
    for column in columns:
        if column in design:
            raise p.error(at("columns"), f"algorithm.columns names '{column}', a column of the sampling design "
                                         "(weight, strata or household), which the methods never perturb; remove it.")
        if column in p.identifying:
            raise p.error(at("columns"), f"algorithm.columns names '{column}', an identifying column, which is "
                                         "dropped from the release; remove it.")
        if options.get("recode") and column in p.quasi and name != "pram":
            raise p.error(at("columns"), f"algorithm.columns names '{column}', a quasi-identifier that recode "
                                         "fulldomain publishes as generalized labels, not numbers; choose another "
                                         "column or leave recode out.")
    if len(set(columns)) != len(columns):
        twice = next(c for i, c in enumerate(columns) if c in columns[:i])
        raise p.error(at("columns"), f"algorithm.columns lists '{twice}' twice; list each column once.")
    if name == "pram":
        _pram(p, options, columns, at, design)
    return options


def _local_suppression(p: Parser, options: dict, at) -> dict:
    if options.get("k") is not None and options.get("risk") is not None:
        raise p.error(at("risk"), "algorithm localsuppression takes k or risk, not both.")
    if options.get("risk") is None and options.get("k") is None:
        ks = [int(m.options["k"]) for m in p.models if m.name == "k_anonymity"]
        if not ks:
            raise p.error(at("k"), "algorithm localsuppression needs k (or risk): give algorithm.k or a k_anonymity "
                                   "model.")
        options["k"] = max(ks)
    for column in options.get("importance") or ():
        if column not in p.quasi:
            raise p.error(at("importance"), f"algorithm.importance names '{column}', which is not a quasi-identifier; "
                                            "list only columns of columns.quasi_identifiers.")
    if options.get("risk") is not None and options.get("method") == "optimal":
        raise p.error(at("method"), "algorithm localsuppression proves a minimum for k only; with a risk threshold "
                                    "use method greedy.")
    return options


def _pram(p: Parser, options: dict, columns: list[str], at, design: list[str]) -> None:
    for column in options.get("by") or ():
        if column in columns:
            raise p.error(at("by"), f"algorithm.by names '{column}', a column PRAM randomizes; group by another.")
    if options.get("by") and options.get("matrix") is not None:
        raise p.error(at("by"), "algorithm.by groups invariant PRAM (alpha); a given matrix applies to the whole "
                                "table, so leave by out.")
    matrices = options.get("matrix")
    if matrices is not None:
        for column in matrices:
            if column not in columns:
                raise p.error(at("matrix"), f"algorithm.matrix gives a matrix for '{column}', which algorithm.columns "
                                            "does not list; add it there or remove its matrix.")
        for column in columns:
            if column not in matrices:
                raise p.error(at("matrix"), f"algorithm.matrix has no matrix for '{column}'; give one for every "
                                            "column PRAM randomizes.")
