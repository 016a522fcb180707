"""The gate's re-check of the models on a whole table's risk (``average_risk``, ``records_at_risk``,
``population_uniqueness``: :mod:`veil.models.risk`, :mod:`veil.models.uniqueness`) on a release's
published file.

``veil.check`` measures the models of classes; these read the sampling design too (the weight,
strata and household columns) and their options (a threshold, a population size), which the
manifest's configuration records. Each is measured on the published classes, the records
suppressed and shown as ``*`` left out as the release leaves them out, and compared with the level
the release's private file records.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TABLE_MODELS", "table_model_level"]

#: The configuration's name of each such model → its class in :mod:`veil.models`.
TABLE_MODELS = {"average_risk": "AverageRisk", "records_at_risk": "RecordsAtRisk",
                "population_uniqueness": "PopulationUniqueness"}


def table_model_level(manifest: dict, table, row: dict) -> Any:
    """The level of the model of ``row`` (a manifest's model row) measured on the published
    ``table``, or ``None`` when the manifest's configuration does not say how to build it."""
    import veil.models
    from veil.classes import STAR, EquivalenceClasses
    from veil.data.dataset import Dataset

    config = manifest.get("config") or {}
    options = next((dict(entry[row["key"]]) for entry in config.get("models") or []
                    if isinstance(entry, dict) and row["key"] in entry), None)
    if options is None:
        return None
    model = getattr(veil.models, TABLE_MODELS[row["key"]])(**options)
    columns = config.get("columns") or {}
    names = set(table.column_names)
    design = {role: columns[role] for role in ("weight", "household") if columns.get(role) in names}
    strata = [s for s in columns.get("strata") or [] if s in names]
    if strata:
        design["strata"] = strata
    qis = [q for q in (manifest.get("roles") or {}).get("quasi_identifiers") or [] if q in names]
    classes = EquivalenceClasses.from_dataset(Dataset(table, quasi_identifiers=qis, **design))
    if (manifest.get("output") or {}).get("suppressed") == "star" and (manifest.get("suppression") or {}).get(
            "records"):
        classes = classes.subset(~classes.printed_as(STAR))
    level = model.evaluate(classes).level if classes.n_classes else None
    return None if level is None else float(level)
