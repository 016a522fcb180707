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
    kept, others = np.flatnonzero(active), np.flatnonzero(~active)
    source = np.empty(len(active), dtype=np.int64)
    source[kept] = np.arange(len(kept))
    source[others] = len(kept) + np.arange(len(others))
    rest = full.filter(pa.array(~active))
    columns = {}
    for name in full.column_names:
        new, old = changed.column(name), rest.column(name)
        if new.type != old.type:
            new, old = new.cast(pa.string()), old.cast(pa.string())
        both = pa.chunked_array(list(new.chunks) + list(old.chunks), type=new.type)
        columns[name] = both.take(pa.array(source))
    return pa.table(columns)


def _replace(table: pa.Table, name: str, column) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, column)


def _numbers(table: pa.Table, name: str, origin: str, missing=("",)) -> tuple[np.ndarray, bool]:
    """A column as float64 (NaN for a missing cell: null or one of ``missing``), and whether every
    value is a whole number written as one (the release keeps such a column whole).

    Raises:
        ConfigError: the column does not hold numbers.
    """
    column = table.column(name)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        stripped = pc.utf8_trim_whitespace(column)
        if missing:
            stripped = pc.if_else(pc.is_in(stripped, value_set=pa.array(list(missing), type=pa.string())),
                                  pa.scalar(None, pa.string()), stripped)
        try:
            values = pc.cast(stripped, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise ConfigError(f"{origin}: algorithm.columns names '{name}', which does not hold numbers; the method "
                              "perturbs numeric columns only.") from None
        try:
            pc.cast(stripped, pa.int64())
            whole = True
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            whole = False
    elif pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_decimal(column.type):
        values = pc.cast(column, pa.float64())
        whole = pa.types.is_integer(column.type)
    else:
        raise ConfigError(f"{origin}: algorithm.columns names '{name}', which does not hold numbers; the method "
                          "perturbs numeric columns only.")
    out = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    if not np.isfinite(out[~np.isnan(out)]).all():
        raise ConfigError(f"{origin}: algorithm.columns names '{name}', which holds an infinite number; the method "
                          "perturbs finite numbers only.")
    return out, whole


def _as_column(values: np.ndarray, whole: bool) -> pa.Array:
    """Perturbed numbers as a column: a column of whole numbers stays whole (rounded), other
    numbers are rounded to 6 decimals; NaN is a missing cell."""
    missing = np.isnan(values)
    if whole:
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
    importance = list(options["importance"]) if options.get("importance") else \
        "default: the column with the most distinct values is suppressed first"
    parameters = {"k": result.k, "risk": result.risk, "importance": importance,
                  "matching": result.matching, "method": result.method, "optimal": bool(result.optimal)}
    return {"table": out, "parameters": parameters, "perturbed": [n for n, c in per_column.items() if c],
            "suppressed_cells": per_column, "cell_marker": marker, "matching": result.matching, "utility": utility,
            "private": {"lower_bound": int(result.lower_bound)}}


def _categories(column) -> list[str]:
    """A column's categories as PRAM reads them (veil's text of each value), sorted as text."""
    from veil.data.encoding import encode_column

    encoded = encode_column("column", column)
    return sorted(str(label) for label in encoded.labels if label is not None and str(label) != "")


def _pram(cfg, dataset, table: pa.Table, options: dict, seed) -> dict:
    from veil.sdc.pram import pram_columns
    from veil.sdc.pram_utility import pram_utility

    columns = list(options["columns"])
    matrices = None
    if options.get("matrix") is not None:
        matrices = {}
        for name in columns:
            categories = _categories(table.column(name))
            matrix = np.asarray(options["matrix"][name], dtype=np.float64)
            if matrix.shape[0] != len(categories):
                raise ConfigError(f"{cfg.algorithm.origin}: algorithm.matrix.{name} has {matrix.shape[0]} rows, and "
                                  f"'{name}' has {len(categories)} categories; give one row and one column per "
                                  "category (sorted as text).")
            matrices[name] = (categories, matrix)
    release = pram_columns(table, columns, matrices=matrices, alpha=options.get("alpha"),
                           by=options.get("by") or None, rng=_secure_or(seed))
    out = release.data
    utility, private = {}, {}
    described = []
    for name, result in release.results.items():
        measure = pram_utility(result)
        utility[name] = {"categories": list(measure.categories), "original": measure.original.tolist(),
                         "released": measure.released.tolist(),
                         "estimate": None if measure.estimated is None else np.round(measure.estimated, 6).tolist(),
                         "standard_error": None if measure.standard_error is None
                         else np.round(measure.standard_error, 6).tolist(),
                         "changed": measure.changed, "expected_changed": measure.expected_changed,
                         "released_distance": measure.released_distance,
                         "estimate_distance": measure.estimate_distance,
                         "largest_posterior": float(result.disclosure().largest)}
        private[name] = result.private_description()
        public = result.public_description()
        if result.kind == "given":   # the publisher's matrix, over the categories sorted as text: numbers only
            public["matrix"] = options["matrix"][name]
            public["categories"] = "the column's categories, sorted as text"
        described.append(public)
    parameters: dict[str, Any] = {"columns": columns, "invariant": options.get("matrix") is None,
                                  "by": list(options.get("by") or []), "per_column": described}
    if options.get("matrix") is None:
        parameters["alpha"] = options["alpha"]
    return {"table": out, "parameters": parameters, "perturbed": columns, "utility": utility,
            "private": {"pram": private}}


def _numeric(kind: str):
    def run(cfg, dataset, table: pa.Table, options: dict, seed) -> dict:
        origin = cfg.algorithm.origin
        columns = list(options["columns"])
        values, kinds = zip(*(_numbers(table, name, origin, dataset.missing_values) for name in columns))
        matrix = np.stack(values, axis=1)
        rng = _secure_or(seed)
        private: dict[str, Any] = {}
        if kind == "swap":
            from veil.sdc.swapping import rank_swap

            out = np.asarray(rank_swap(matrix, options["p"], rng), dtype=np.float64).reshape(matrix.shape)
            parameters = {"columns": columns, "p": options["p"]}
        elif kind == "noise":
            from veil.sdc.noise import additive_noise

            noisy = additive_noise(matrix, amount=options["amount"], kind=options.get("kind", "uncorrelated"),
                                   rng=rng)
            out = np.asarray(noisy.values, dtype=np.float64).reshape(matrix.shape)
            parameters = {"columns": columns, **noisy.public_parameters()}
        else:
            from veil.sdc.coding import top_bottom_code

            out = matrix.copy()
            parameters = {"columns": {}}
            for j, name in enumerate(columns):
                given = options["columns"][name]
                coding = {k: v for k, v in given.items() if v is not None and k != "replacement"}
                if given.get("replacement") is not None:
                    coding["replacement"] = given["replacement"]
                coded = top_bottom_code(matrix[:, j], **coding)
                out[:, j] = coded.values
                parameters["columns"][name] = coded.public_parameters()
                private[name] = {"top_coded": coded.top_coded, "bottom_coded": coded.bottom_coded}
        new = table
        for j, name in enumerate(columns):
            new = _replace(new, name, _as_column(np.asarray(out[:, j], dtype=np.float64), kinds[j]))
        released = np.stack([pc.cast(new.column(n), pa.float64()).to_numpy(zero_copy_only=False) for n in columns],
                            axis=1)
        return {"table": new, "parameters": parameters, "perturbed": columns,
                "utility": {"numeric": {**_numeric_utility(matrix, released), "columns": columns},
                            "columns": columns},
                "private": private}
    return run


def _numeric_utility(original: np.ndarray, released: np.ndarray) -> dict:
    """The utility measures of :mod:`veil.sdc.utility` on the rows complete in both."""
    from veil.sdc.utility import numeric_utility

    complete = ~(np.isnan(original).any(axis=1) | np.isnan(released).any(axis=1))
    return _utility_dict(numeric_utility(original[complete], released[complete]))


_METHODS = {"localsuppression": _local_suppression, "pram": _pram, "swap": _numeric("swap"),
            "noise": _numeric("noise"), "topcoding": _numeric("topcoding")}
