"""Running a configuration's method of statistical disclosure control: recode first if asked, apply
the method, measure the risk before and after and the utility, and make the
:class:`~veil.sdc.release.PerturbedRelease`.

``algorithm: {name: localsuppression | pram | swap | noise | topcoding, …}`` (see
:mod:`veil.config.sdc_section`). With ``recode: fulldomain`` the table is first generalized by
:class:`veil.anonymize.FullDomain` under the file's models, hierarchies, suppression limit and
metric (its records suppressed are removed, or shown as ``*``, as the output section says, and
the method leaves them alone); the method then runs on the recoded table: local suppression on the
recoded quasi-identifiers (its k defaulting to the k_anonymity model's, which the parser fills
in), PRAM on the recoded categories, the numeric methods on columns the recoding leaves as they
are.

**Randomness.** ``seed: null`` (the default) draws from the operating system's secure source,
through each method's own secure mode (``rng=None``): the release is fit for release. A seed makes
a reproducible experiment, which the manifest marks not fit for release and whose seed it records.

**Risk.** The Benedetti–Franconi individual risk (:mod:`veil.sdc.table_risk`) of the input's
quasi-identifiers with its sampling weights (before) and of the published table's (after), a
suppressed cell matching any value under ``matching: any``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from veil.errors import ConfigError, ParameterError, VeilError, lower_first
from veil.sdc.release import PerturbedRelease
from veil.sdc.table_risk import risk_summary, table_risk

__all__ = ["run_sdc"]


def run_sdc(cfg, dataset) -> PerturbedRelease:
    """Apply the configuration's method to ``dataset`` (see the module notes).

    Args:
        cfg: the :class:`~veil.config.AnonymizationConfig`, whose algorithm is a method of
            :data:`veil.config.sdc_section.SDC_ALGORITHMS`.
        dataset: its :class:`~veil.data.dataset.Dataset`, read.

    Returns:
        The release, not yet written.

    Raises:
        ConfigError: the method refuses its parameters on this table (naming the algorithm's line),
            a column to perturb does not hold numbers, a matrix does not fit its column.
        DataError: bad sampling weights.
    """
    spec = cfg.algorithm
    options = dict(spec.options)
    recode = options.pop("recode", None)
    seed = options.pop("seed", None)
    if getattr(dataset, "weight", None):
        dataset.sampling_weights  # noqa: B018 - refuses bad weights, in one sentence, before any work
    original = _published_columns(dataset)
    star = cfg.output.suppressed == "star"
    removed = np.zeros(dataset.num_rows, dtype=bool)
    recoding = None
    table = original
    if recode == "fulldomain":
        table, removed, recoding = _recode(cfg, dataset)
    active = table.filter(pa.array(~removed)) if removed.any() else table
    method = _METHODS[spec.name]
    try:
        result = method(cfg, dataset, active, options, seed)
    except ConfigError:
        raise
    except VeilError as exc:
        raise ConfigError(f"{spec.origin}: algorithm '{spec.name}': {lower_first(str(exc))}") from None
    changed = result.pop("table")
    if removed.any() and star:
        published = _scatter(table, ~removed, changed)
    else:
        published = changed
    survey = {"weight": getattr(dataset, "weight", None), "strata": list(getattr(dataset, "strata", None) or ()),
              "household": getattr(dataset, "household", None)}
    qis = list(dataset.quasi_identifiers)
    before = table_risk(original, qis, **survey)
    marker = result.get("cell_marker") if result.get("matching", "any") == "any" else None
    after = table_risk(published, qis, **survey, marker="*" if (star and marker is None and recode) else marker)
    return PerturbedRelease(
        dataset, published, spec.name, result.pop("parameters"), result.pop("perturbed"), seed=seed,
        private_parameters=result.pop("private", {}), recoding=recoding,
        suppressed_cells=result.pop("suppressed_cells", {}), cell_marker=result.pop("cell_marker", "*"),
        matching=result.pop("matching", "any"), suppressed_records=int(removed.sum()),
        suppressed_style=cfg.output.suppressed, risk_before=risk_summary(before), risk_after=risk_summary(after),
        utility=result.pop("utility", {}), details={"risk_before": before, "risk_after": after},
        shuffle=cfg.output.shuffle, shuffle_seed=cfg.output.seed, spreadsheet_guard=cfg.output.spreadsheet_guard)


# ------------------------------------------------------------------------------ the table


def _published_columns(dataset) -> pa.Table:
    """The input table without its identifying columns, text read as codes decoded."""
    data = dataset.table.data
    columns = {}
    for name in dataset.columns:
        if name in dataset.identifying:
            continue
        column = data.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        columns[name] = column
    return pa.table(columns)


def _recode(cfg, dataset) -> tuple[pa.Table, np.ndarray, dict]:
    """Optimal full-domain generalization under the file's models, in the input's row order; the
    records it suppresses (shown as ``*``), and what the manifest says of it."""
    from veil.anonymize import FullDomain

    try:
        anonymizer = FullDomain(cfg.models(), suppression_limit=cfg.suppression_limit, metric=cfg.metric())
        release = anonymizer.fit(dataset).transform(dataset, suppressed="star", shuffle=False)
    except ConfigError:
        raise
    except ParameterError as exc:
        raise ConfigError(f"{cfg.algorithm.origin}: algorithm.recode fulldomain: {lower_first(str(exc))}") from None
    removed = np.asarray(release.failing[release.classes.row_class], dtype=bool)
    manifest, private = release.manifest, release.private_manifest
    recoding = {"algorithm": "fulldomain", "node": manifest.get("node"), "heights": manifest.get("heights"),
                "models": manifest.get("models"), "suppression_limit": cfg.suppression_limit,
                **({"hierarchy_files": manifest["hierarchy_files"]} if "hierarchy_files" in manifest else {}),
                "private": {"models": private.get("models"), "search": private.get("search"),
                            "generalization": private.get("generalization")}}
    return release.table, removed, recoding


def _scatter(full: pa.Table, active: np.ndarray, changed: pa.Table) -> pa.Table:
    """``full`` with the rows where ``active`` holds replaced by ``changed``'s rows, in order."""
    columns = {}
    for name in full.column_names:
        new = changed.column(name)
        old = full.column(name)
        if new.type != old.type:
            new, old = new.cast(pa.string()), old.cast(pa.string())
        values = np.asarray(old.to_pylist(), dtype=object)
        values[active] = np.asarray(new.to_pylist(), dtype=object)
        columns[name] = pa.array(values.tolist(), type=new.type)
    return pa.table(columns)


def _replace(table: pa.Table, name: str, column) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, column)


def _numbers(table: pa.Table, name: str, origin: str) -> tuple[np.ndarray, pa.DataType]:
    """A column as float64 (NaN for a missing cell), and its type.

    Raises:
        ConfigError: the column does not hold numbers.
    """
    column = table.column(name)
    kind = column.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
        raise ConfigError(f"{origin}: algorithm.columns names '{name}', which does not hold numbers; the method "
                          "perturbs numeric columns only.")
    values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.float64), kind


def _as_column(values: np.ndarray, kind: pa.DataType) -> pa.Array:
    """Perturbed numbers as a column of the input's kind: whole numbers stay whole (rounded), other
    numbers are rounded to 6 decimals; NaN is a missing cell."""
    missing = np.isnan(values)
    if pa.types.is_integer(kind):
        return pa.array(np.rint(np.where(missing, 0, values)).astype(np.int64), mask=missing)
    return pa.array(np.round(values, 6), mask=missing, type=pa.float64())


def _secure_or(seed):
    return None if seed is None else np.random.default_rng(seed)


def _utility_dict(value) -> dict:
    if value is None:
        return {}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in dataclasses.asdict(value).items()}
    return dict(value)


# ------------------------------------------------------------------------------ the methods


def _local_suppression(cfg, dataset, table: pa.Table, options: dict, seed) -> dict:
    from veil.data.dataset import Dataset
    from veil.sdc.local_suppression import local_suppression, record_suppression_cells

    qis = list(dataset.quasi_identifiers)
    survey = {role: value for role, value in (("weight", getattr(dataset, "weight", None)),
                                              ("strata", list(getattr(dataset, "strata", None) or ()) or None))
              if value}
    work = Dataset(table, quasi_identifiers=qis, missing_values=dataset.missing_values, **survey)
    result = local_suppression(work, k=options.get("k"), risk=options.get("risk"),
                               importance=options.get("importance"), matching=options.get("matching", "any"),
                               method=options.get("method", "greedy"))
    marker = "*" if cfg.output.suppressed == "star" else ""
    out = table
    suppressed = np.asarray(result.suppressed, dtype=bool)
    for j, name in enumerate(result.columns):
        blank = suppressed[:, j]
        if not blank.any():
            continue
        column = table.column(name)
        if marker == "*":
            text = column.cast(pa.string()) if column.type != pa.string() else column
            out = _replace(out, name, pc.if_else(pa.array(blank), pa.scalar("*"), text))
        else:
            out = _replace(out, name, pc.if_else(pa.array(blank), pa.scalar(None, column.type), column))
    per_column = {name: int(v) for name, v in result.per_column().items()}
    utility = {"suppressed_cells": per_column, "cells": int(result.cells), "optimal": bool(result.optimal),
               "lower_bound": int(result.lower_bound)}
    if result.k is not None:
        utility["record_suppression_cells"] = int(record_suppression_cells(work, result.k))
    parameters = {"k": result.k, "risk": result.risk, "importance": list(options.get("importance") or qis),
                  "matching": result.matching, "method": result.method, "optimal": bool(result.optimal)}
    return {"table": out, "parameters": parameters, "perturbed": [n for n, c in per_column.items() if c],
            "suppressed_cells": per_column, "cell_marker": marker, "matching": result.matching, "utility": utility,
            "private": {"lower_bound": int(result.lower_bound)}}


def _categories(column) -> list[str]:
    texts = column.cast(pa.string()) if column.type != pa.string() else column
    return sorted(v for v in pc.unique(texts).to_pylist() if v is not None)


def _pram(cfg, dataset, table: pa.Table, options: dict, seed) -> dict:
    from veil.sdc.pram import pram

    rng = _secure_or(seed)
    out = table
    private: dict[str, Any] = {"categories": {}, "matrices": {}}
    utility = {}
    groups = _groups(table, options.get("by") or ())
    for name in options["columns"]:
        column = table.column(name)
        text = column.cast(pa.string()) if column.type != pa.string() else column
        categories = _categories(column)
        released = np.asarray(text.to_pylist(), dtype=object)
        matrix = None
        if options.get("matrix") is not None:
            matrix = np.asarray(options["matrix"][name], dtype=np.float64)
            if matrix.shape[0] != len(categories):
                raise ConfigError(f"{cfg.algorithm.origin}: algorithm.matrix.{name} has {matrix.shape[0]} rows, and "
                                  f"'{name}' has {len(categories)} categories; give one row and column per category "
                                  "(sorted as text).")
        estimates = np.zeros(len(categories))
        for rows in groups:
            part = pa.table({name: text.take(pa.array(rows))})
            result = pram(part, name, matrix=_in_order(matrix, categories, part, name), alpha=options.get("alpha"),
                          rng=rng)
            labels = np.asarray(result.categories, dtype=object)
            codes = np.asarray(result.released)
            shown = codes >= 0
            values = np.full(len(rows), None, dtype=object)
            values[shown] = labels[codes[shown]]
            released[rows] = np.where(np.asarray(text.take(pa.array(rows)).is_null()), None, values)
            estimate = np.asarray(result.estimate(), dtype=np.float64)
            for i, label in enumerate(result.categories):
                estimates[categories.index(str(label))] += estimate[i]
            private["matrices"].setdefault(name, []).append(np.asarray(result.matrix).round(12).tolist())
        new = pa.array(released.tolist(), type=pa.string())
        out = _replace(out, name, new if column.type == pa.string() else new)
        original_counts = _counts(text, categories)
        released_counts = _counts(new, categories)
        n = max(int(original_counts.sum()), 1)
        utility[name] = {"categories": categories, "original": original_counts.tolist(),
                         "released": released_counts.tolist(), "estimate": np.round(estimates, 6).tolist(),
                         "estimator_error": float(np.abs(estimates - original_counts).sum() / n),
                         "released_error": float(np.abs(released_counts - original_counts).sum() / n),
                         "changed": int(sum(1 for a, b in zip(text.to_pylist(), new.to_pylist()) if a != b))}
        private["categories"][name] = categories
    parameters: dict[str, Any] = {"columns": list(options["columns"])}
    if options.get("matrix") is not None:
        parameters["matrix"] = options["matrix"]   # chosen by the publisher, over the categories sorted as text
        parameters["invariant"] = False
    else:
        parameters.update({"alpha": options["alpha"], "invariant": True, "by": list(options.get("by") or [])})
    return {"table": out, "parameters": parameters, "perturbed": list(options["columns"]), "utility": utility,
            "private": private}


def _in_order(matrix, categories: list[str], part: pa.Table, name: str):
    """A matrix over ``categories`` (sorted as text) restricted to and ordered as the categories
    PRAM finds in ``part`` (sorted as text too): a given matrix fits the whole table."""
    if matrix is None:
        return None
    present = _categories(part.column(name))
    index = [categories.index(c) for c in present]
    sub = matrix[np.ix_(index, index)]
    if len(present) != len(categories):
        sub = sub / sub.sum(axis=1, keepdims=True)
    return sub


def _groups(table: pa.Table, by) -> list[np.ndarray]:
    if not by:
        return [np.arange(table.num_rows)]
    keys = np.stack([np.asarray(pc.dictionary_encode(pc.cast(table.column(c), pa.string())).combine_chunks()
                                .indices.to_numpy(zero_copy_only=False), dtype=np.int64) for c in by], axis=1)
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.reshape(-1)
    return [np.flatnonzero(group == g) for g in range(int(group.max()) + 1)] if len(group) else []


def _counts(column, categories: list[str]) -> np.ndarray:
    values = column.to_pylist()
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros(len(categories))
    for v in values:
        if v is not None and v in index:
            counts[index[v]] += 1
    return counts


def _numeric(kind: str):
    def run(cfg, dataset, table: pa.Table, options: dict, seed) -> dict:
        from veil.sdc.utility import numeric_utility

        origin = cfg.algorithm.origin
        columns = list(options["columns"])
        values, kinds = zip(*(_numbers(table, name, origin) for name in columns))
        matrix = np.stack(values, axis=1)
        rng = _secure_or(seed)
        if kind == "swap":
            from veil.sdc.swapping import rank_swap

            out = np.stack([rank_swap(matrix[:, j], options["p"], rng) for j in range(len(columns))], axis=1)
            parameters = {"columns": columns, "p": options["p"]}
        elif kind == "noise":
            from veil.sdc.noise import additive_noise

            out = np.asarray(additive_noise(matrix, amount=options["amount"], kind=options.get("kind",
                                                                                           "uncorrelated"), rng=rng))
            parameters = {"columns": columns, "amount": options["amount"],
                          "kind": options.get("kind", "uncorrelated")}
        else:
            from veil.sdc.coding import top_bottom_code

            out = matrix.copy()
            for j, name in enumerate(columns):
                given = options["columns"][name]
                coding = {k: v for k, v in given.items() if v is not None}
                out[:, j] = top_bottom_code(matrix[:, j], **coding)
            parameters = {"columns": {name: dict(options["columns"][name]) for name in columns}}
        new = table
        for j, name in enumerate(columns):
            new = _replace(new, name, _as_column(np.asarray(out[:, j], dtype=np.float64), kinds[j]))
        complete = ~np.isnan(matrix).any(axis=1)
        released = np.stack([pc.cast(new.column(n), pa.float64()).to_numpy(zero_copy_only=False) for n in columns],
                            axis=1)
        utility = _utility_dict(numeric_utility(matrix[complete], released[complete]))
        return {"table": new, "parameters": parameters, "perturbed": columns,
                "utility": {"numeric": utility, "columns": columns}}
    return run


_METHODS = {"localsuppression": _local_suppression, "pram": _pram, "swap": _numeric("swap"),
            "noise": _numeric("noise"), "topcoding": _numeric("topcoding")}
