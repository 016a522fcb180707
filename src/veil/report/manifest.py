"""The shape of a release manifest, as the report reads it.

A manifest is a JSON file, so anyone can hand the report one whose entries are of the wrong kind
(the models as a string, a level as text, a count as a list). :func:`check_manifest_shape` checks
every entry the report (and :func:`veil.check.check`, which it calls with the manifest) reads
before any is used, so such a file is one sentence naming the entry, never a failure deep inside
the report.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from veil.errors import DataError
from veil.untrusted import quoted

_ANSWER = "give the manifest veil anonymize wrote with the release"


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _flag(value: Any) -> bool:
    return isinstance(value, bool)


def _level(value: Any) -> bool:
    return value is None or _number(value)


def _optional(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or test(value)


# entry → (the test of each of its fields, what the fields should be, in words); None: not a mapping
_SECTIONS: dict[str, dict[str, tuple[Callable[[Any], bool], str]]] = {
    "roles": {"quasi_identifiers": (_names, "a list of column names"),
              "sensitive": (_optional(_names), "a list of column names"),
              "identifying": (_optional(_names), "a list of column names")},
    "input": {"delimiter": (_optional(_text), "one character"), "rows": (_optional(_count), "a count")},
    "output": {"suppressed": (_optional(_text), "remove or star"), "rows": (_optional(_count), "a count"),
               "shuffled": (_optional(_flag), "true or false"), "seed": (_optional(_count), "a seed or null")},
    "suppression": {"limit": (_optional(_number), "a share"), "records": (_optional(_count), "a count"),
                    "share": (_optional(_number), "a share")},
    "search": {"metric": (_optional(_text), "a metric's name"),
               "proven_optimal": (_optional(_flag), "true or false"),
               "nodes_checked": (_optional(_count), "a count"), "nodes_total": (_optional(_count), "a count")},
}
_MODEL_FIELDS = {"model": (_text, "a model's name"), "sensitive": (_optional(_text), "a column name or null"),
                 "threshold": (_number, "a number"), "level": (_level, "a number or null"),
                 "passed": (_flag, "true or false")}


def check_manifest_shape(doc: Mapping, name: str) -> None:
    """Refuse a manifest any of whose entries the report reads is of the wrong kind.

    Args:
        doc: the parsed manifest (a JSON object).
        name: how to name the manifest in a message (its path).

    Raises:
        DataError: the first entry of the wrong kind, named with what it should be.
    """
    where = f"manifest {quoted(name)}"

    def refuse(entry: str, should: str) -> DataError:
        return DataError(f"{where} holds {entry} that is not {should}; {_ANSWER}.")

    for key in ("algorithm", "created", "veil"):
        if key in doc and doc[key] is not None and not _text(doc[key]):
            raise refuse(f"'{key}'", "text")
    for section, fields in _SECTIONS.items():
        value = doc.get(section)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise refuse(f"'{section}'", "a JSON object")
        for field, (test, should) in fields.items():
            if field in value and not test(value[field]):
                raise refuse(f"'{section}.{field}'", should)
    models = doc.get("models")
    if models is not None:
        if not isinstance(models, list) or not all(isinstance(m, Mapping) for m in models):
            raise refuse("'models'", "a list of JSON objects, one per model")
        for i, model in enumerate(models):
            for field, (test, should) in _MODEL_FIELDS.items():
                if field in ("sensitive", "level") and field not in model:
                    continue
                if field not in model or not test(model[field]):
                    raise refuse(f"'models[{i}].{field}'", should)
    for section, test, should in (("metrics", lambda v: isinstance(v, Mapping), "a JSON object"),
                                  ("node", lambda v: isinstance(v, Mapping) and all(_count(x) for x in v.values()),
                                   "a JSON object of levels"),
                                  ("reference", _reference, "a JSON object of value counts per column"),
                                  ("generalization", _value_maps, "a JSON object of value maps per column")):
        if doc.get(section) is not None and not test(doc[section]):
            raise refuse(f"'{section}'", should)


def _reference(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(counts, Mapping) and all(_number(c) for c in counts.values()) for counts in value.values())


def _value_maps(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(m, Mapping) and all(isinstance(v, str) for v in m.values()) for m in value.values())


__all__ = ["check_manifest_shape"]
