"""The ``policy:`` section of a configuration file (``veil publish --policy``) read into a
:class:`~veil.config.specification.PolicySpec`: the thresholds of the publishing gate's checks
across releases, the presence check of a release alone, and the populations with their privacy
budgets and composition rules, and the checks of a release alone (``presence`` against a
population table, ``risk``: the records' re-identification risk).

The keys and their types are tables of :mod:`veil.config.schema` (``POLICY_OPTIONS``, ``CHECKS``,
``POPULATION_OPTIONS``), which the value types here are given; what they add are the rules that
join several keys: an option of one composition rule only with that rule, a budget (with a δ for
advanced composition) for every rule but sequential, one discount for temporal composition, and
δ-presence or k-map (or both) for the presence check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from veil.config.options import Option, documented, options_schema
from veil.config.specification import PolicySpec, PopulationSpec
from veil.config.value_types import NAME_SCHEMA

if TYPE_CHECKING:
    import yaml

# The parser (veil.config.parser.Parser), which imports the schema, so it is not named here.
Parser = Any


@dataclass(frozen=True)
class PrivacyUnitValue:
    """A population's privacy unit: ``rows``, or ``{person: ID_COLUMN}`` (a person being the rows
    sharing a value of that column; :mod:`veil.dp.budget_unit`), read as ``None`` or the column."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> str | None:
        if p.is_mapping(node):
            entries = p.mapping(node, where, "{person: user_id}")
            if set(entries) != {"person"}:
                raise p.error(node, f"{where} is rows or {{person: ID_COLUMN}}, like {{person: user_id}}.")
            return p.name_of(entries["person"][1], f"{where}.person")
        p.choice(node, where, ("rows",))
        return None

    def json_schema(self) -> dict:
        person = {"type": "object", "properties": {"person": documented(
            NAME_SCHEMA, "the column whose value names the person each row belongs to", "user_id")},
            "required": ["person"], "additionalProperties": False,
            "description": "a person: every row sharing a value of the ID column"}
        return {"anyOf": [{"const": "rows", "description": "a row"}, person]}


# Each composition rule's own option, and the rule it belongs to.
_RULE_OPTIONS = {"delta_prime": "advanced", "discount": "temporal", "window": "window"}


def _budget(p: Parser, key_node: yaml.Node, here: str, given: dict, composition: str) -> tuple[float, float]:
    """A population's budget: ``(epsilon, delta)``, or ``(rho, delta)`` under zcdp composition,
    in the rule's own measure (:class:`~veil.config.specification.PopulationSpec`)."""
    if composition == "zcdp":
        if "rho" not in given or "epsilon" in given:
            raise p.error(key_node, f"{here} has zcdp composition, whose budget is in ρ: give budget: {{rho: R, "
                                    "delta: D}, without epsilon.")
        if given["delta"] == 0:
            raise p.error(key_node, f"{here} has zcdp composition, whose budget is stated as (ε, δ) at its delta, so "
                                    "its budget needs a delta above 0.")
        return given["rho"], given["delta"]
    if "epsilon" not in given or "rho" in given:
        raise p.error(key_node, f"{here}.budget needs 'epsilon' under {composition} composition (a budget in ε), "
                                "like {epsilon: 1.0}; a budget in rho takes composition: zcdp.")
    return given["epsilon"], given["delta"]


@dataclass(frozen=True)
class PopulationMap:
    """The value of ``policy.populations``: per population name, its key and its budget (the keys
    of ``options``)."""

    options: Mapping[str, Option]

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> tuple[PopulationSpec, ...]:
        out = []
        for name, (key_node, value) in p.mapping(node, where, "{adult: {budget: {epsilon: 1.0}}}").items():
            here = f"{where}.{name}"
            o = p.options(value, here, self.options, key_node, "{key: id, budget: {epsilon: 1.0}}")
            for option, rule in _RULE_OPTIONS.items():
                if o[option] is not None and o["composition"] != rule:
                    raise p.error(key_node, f"{here}.{option} applies only to {rule} composition, and its "
                                            f"composition is {o['composition']}.")
            if o["composition"] != "sequential" and o["budget"] is None:
                raise p.error(key_node, f"{here} has {o['composition']} composition but no budget; give its budget.")
            if o["composition"] == "advanced" and o["budget"] is not None and o["budget"]["delta"] == 0:
                raise p.error(key_node, f"{here} has advanced composition, which spends a δ' > 0, so its budget "
                                        "needs a delta above 0.")
            discount = None
            if o["composition"] == "temporal":
                given = [(k, v) for k, v in (o["discount"] or {}).items()]
                if len(given) != 1:
                    raise p.error(key_node, f"{here} has temporal composition and needs one discount, like "
                                            "{exponential: 0.9} or {hyperbolic: 0.5}.")
                discount = given[0]
            if o["composition"] == "window" and o["window"] is None:
                raise p.error(key_node, f"{here} has window composition and needs window, its length in time steps.")
            budget = None if o["budget"] is None else _budget(p, key_node, here, o["budget"], o["composition"])
            if o["unit"] is not None and budget is None:
                raise p.error(key_node, f"{here}.unit is what a budget protects, and it has no budget; give its budget "
                                        "or leave unit out.")
            out.append(PopulationSpec(name, o["key"], budget, o["composition"], o["delta_prime"], discount,
                                      o["window"], o["relation"], o["unit"]))
        return tuple(out)

    def json_schema(self) -> dict:
        population = options_schema(self.options)
        # the budget is in the composition rule's measure: rho under zcdp, epsilon under the others
        population["if"] = {"properties": {"composition": {"const": "zcdp"}}, "required": ["composition"]}
        population["then"] = {"properties": {"budget": {"anyOf": [{"type": "null"}, {"required": ["rho"]}]}}}
        population["else"] = {"properties": {"budget": {"anyOf": [{"type": "null"}, {"required": ["epsilon"]}]}}}
        return {"type": ["object", "null"], "additionalProperties": population}


@dataclass(frozen=True)
class PolicyOptions:
    """The value of ``policy``: the gate's checks with their thresholds, and the populations (the
    keys of ``options``; ``checks`` are the thresholds of each check, by its key)."""

    options: Mapping[str, Option]
    checks: Mapping[str, Mapping[str, Option]]

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> PolicySpec:
        o = p.options(node, where, self.options, node, "{composition: {intersection: {max_share: 0.0}}}")
        given = o["composition"] or {}
        # a check the file leaves out runs with its defaults
        checks = {name: given.get(name) or {key: option.default for key, option in options.items()}
                  for name, options in self.checks.items()}
        presence = o["presence"]
        if presence is not None and presence["delta_max"] is None and presence["k_map"] is None:
            raise p.error(node, "policy.presence needs delta_max (δ-presence) or k_map (k-map), or both.")
        single = {"presence": presence} if presence is not None else {}
        if o.get("risk") is not None:
            single["risk"] = o["risk"]
        return PolicySpec(o["recheck"], checks, o["populations"], p.origin(node), single)

    def json_schema(self) -> dict:
        return options_schema(self.options)
