"""A population table generalized as a full-domain release generalized its sample.

δ-presence, k-map and the membership attack compare a release of a sample T with the public
population P it was drawn from: a person of P matches a released class when their values,
generalized as the release generalizes, print as the class does. A full-domain release
generalizes every value of a quasi-identifier to one level of that column's hierarchy, so each
person of P is generalized **through the hierarchy** to the level the manifest names (``node``),
never through the release's value map: the map lists only the values the sample holds, and a
person whose value the sample lacks still generalizes to a published class (an age the sample
lacks is still in the band ``*``).

The hierarchy of a column is, in order: the one given (a :class:`~veil.data.hierarchy.Hierarchy` or
an ARX hierarchy file); the file the manifest names (``hierarchy_files``, checked against its
SHA-256); the file the release's configuration names; the builder the configuration names, run on
the population's values (each builder labels a value from the value alone; the top of the
hierarchy is the release's top, at the height the manifest records); the rows the release's
private file keeps. A hierarchy whose height differs from the one the manifest records is not
the release's, and is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa

from veil.data import builders
from veil.data.hierarchy import Hierarchy
from veil.errors import DataError, HierarchyError, lower_first

__all__ = ["publish_population", "release_levels"]


def release_levels(manifest: Mapping | None) -> dict[str, int] | None:
    """The level of each quasi-identifier a full-domain release's manifest names (``node``), or
    ``None`` for a release that is not one (local recoding, or no manifest)."""
    node = (manifest or {}).get("node")
    if not isinstance(node, Mapping) or not node:
        return None
    return {str(q): int(level) for q, level in node.items()}


def publish_population(table: pa.Table, manifest: Mapping, columns: Sequence[str], *,
                       hierarchies: Mapping[str, Hierarchy | str] | None = None, private: Mapping | None = None,
                       folder: str | None = None, where: str = "the release") -> pa.Table:
    """The population with each quasi-identifier replaced by what the release publishes for it.

    Args:
        table: the population, raw values.
        manifest: the release's manifest, with the level of each quasi-identifier (``node``).
        columns: the quasi-identifiers to publish (others are kept as they are; a column the
            manifest gives no level is compared as published, raw).
        hierarchies: per column, the hierarchy the release was made with (a
            :class:`~veil.data.hierarchy.Hierarchy` or the path of an ARX hierarchy file).
        private: the release's private file, whose hierarchy rows serve when nothing else does.
        folder: the manifest's folder, where the hierarchy files it names are looked for too.
        where: how messages call the release.

    Returns:
        The table, each column published as text (a missing value as ``""``).

    Raises:
        DataError: a column generalized above level 0 has no hierarchy to be generalized with;
            a hierarchy is not the one the release was made with (another height), or does not
            cover a value of the population (:class:`~veil.errors.HierarchyError`).
    """
    from veil.data.dataset import Dataset

    levels = release_levels(manifest) or {}
    heights = manifest.get("heights") or {}
    wanted = [q for q in columns if levels.get(q, 0) > 0 and q in table.column_names]
    if not wanted:
        return table
    chosen, targets = {}, {}
    for q in wanted:
        hierarchy, built = _hierarchy(q, levels[q], table, manifest, hierarchies or {}, private or {}, folder, where)
        height = heights.get(q)
        if isinstance(height, int) and not built and hierarchy.height != height:
            raise DataError(f"the hierarchy given for '{q}' has height {hierarchy.height}, but {where} was made with "
                            f"one of height {height}; give the hierarchy the release was made with.")
        level = levels[q]
        if built and isinstance(height, int) and level >= height:
            level = hierarchy.height  # the release's top: a builder's top, whatever the values' lengths
        if level > hierarchy.height:
            raise DataError(f"{where} publishes '{q}' at level {levels[q]}, above the top of the hierarchy given for "
                            f"it ({hierarchy.height}); give the hierarchy the release was made with.")
        chosen[q], targets[q] = hierarchy, level
    missing = (manifest.get("config") or {}).get("missing_values")
    missing = tuple(missing) if isinstance(missing, list) else ("",)
    try:
        view = Dataset(table.select(wanted), quasi_identifiers=wanted, hierarchies=chosen, missing_values=missing)
    except HierarchyError as exc:
        raise HierarchyError(f"the population cannot be generalized as {where} was: {lower_first(str(exc))}") \
            from None
    for q in wanted:
        labels = np.asarray(view.labels(q, targets[q]), dtype=object)[view.generalized_codes(q, targets[q])]
        table = table.set_column(table.column_names.index(q), q, pa.array(labels.astype(str), type=pa.string()))
    return table


def _hierarchy(q: str, level: int, table: pa.Table, manifest: Mapping, given: Mapping, private: Mapping,
               folder: str | None, where: str) -> tuple[Hierarchy, bool]:
    """The hierarchy to publish column ``q`` with, and whether a builder made it here."""
    from veil.manifests import referenced_hierarchy

    if q in given:
        found = given[q]
        return (found if isinstance(found, Hierarchy) else Hierarchy.read_csv(found)), False
    named = referenced_hierarchy(manifest, q, folder)
    if named is not None:
        return named, False
    spec = ((manifest.get("config") or {}).get("hierarchies") or {}).get(q)
    if isinstance(spec, Mapping) and isinstance(spec.get("file"), str) and Path(spec["file"]).is_file():
        options = {"delimiter": spec["delimiter"]} if isinstance(spec.get("delimiter"), str) else {}
        return Hierarchy.read_csv(spec["file"], **options), False
    if isinstance(spec, Mapping) and len(spec) == 1 and next(iter(spec)) in _BUILDERS:
        kind, options = next(iter(spec.items()))
        return _BUILDERS[kind](table.column(q), **dict(options or {})), True
    rows = (private.get("hierarchy_rows") or {}).get(q)
    if rows:
        return Hierarchy(rows, name=f"the hierarchy of '{q}' in the release's private file"), False
    raise DataError(f"{where} publishes '{q}' at level {level} of its hierarchy, and no hierarchy of '{q}' was given "
                    f"to generalize the population with; give it (--hierarchy {q}=FILE).")


def _dates(values, units=("month", "year"), **options) -> Hierarchy:
    return builders.dates(values, units, **options)


# The builders a configuration names, by their key there (see veil.config's hierarchies).
_BUILDERS = {"intervals": builders.intervals, "masking": builders.masking, "flat": builders.flat, "dates": _dates}
