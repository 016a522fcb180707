"""A published release as the adversary holds it: the released table, its veil manifest, the
hierarchies of its quasi-identifiers and the value orders, and what the attacks on published
tables read from them (the table itself, the manifest's roles, the kind of release, the labels a
column may publish and the values each covers).

Every attack across releases (:mod:`veil.attacks.intersection`, :mod:`veil.attacks.correspondence`,
:mod:`veil.attacks.join`, :mod:`veil.attacks.matching`) and the membership attack
(:mod:`veil.attacks.presence`) take their releases as :class:`PublishedRelease` (or a veil
``Release``, or a released table) through :func:`as_published`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa

from veil.attacks.published_values import UnreadableValueError, hierarchy_nodes
from veil.classes import STAR
from veil.data.hierarchy import Hierarchy
from veil.data.io import read_table
from veil.errors import ColumnError, DataError, ParameterError
from veil.inputs import MANIFEST_LIMIT, read_text

GENERALIZED = "generalized"
MICROAGGREGATED = "microaggregated"
KINDS = ("auto", GENERALIZED, MICROAGGREGATED)


class ReleaseMismatchError(ColumnError):
    """The releases do not all publish the quasi-identifiers and the sensitive column."""


@dataclass(eq=False)
class PublishedRelease:
    """A release as the adversary holds it: the published table, and what came with it.

    Args:
        table: the released table (a path to a CSV or Parquet file, a pandas or polars frame, or
            a pyarrow Table).
        manifest: the release's veil manifest (a dict or the path of its JSON file), or ``None``.
            It tells the kind of release, the roles, the value map of a full-domain release, the
            boxes of a Mondrian release and the standardization of a microaggregated one.
        hierarchies: per quasi-identifier, a :class:`Hierarchy` (or the path of an ARX hierarchy
            CSV) whose node labels the release may publish.
        orders: per quasi-identifier, the order of its values (text ranges, ordinal columns).
        kind: ``"generalized"`` (locate by containment), ``"microaggregated"`` (nearest centroid),
            or ``"auto"``: microaggregated when the manifest says MDAV, else generalized.
        name: what to call the release in messages (default: the file name, or ``release N``).
        delimiter: the CSV delimiter (sniffed when ``None``).
        target_rows: for evaluation only (experiments): the row of the table that holds each
            target, −1 where none does; the result then tells whether each target was located
            in its true class.
    """

    table: object
    manifest: Mapping | str | os.PathLike | None = None
    hierarchies: Mapping[str, Hierarchy | str | os.PathLike] | None = None
    orders: Mapping[str, Sequence[str]] | None = None
    kind: str = "auto"
    name: str | None = None
    delimiter: str | None = None
    target_rows: np.ndarray | None = None

    @classmethod
    def from_release(cls, release, *, name: str | None = None,
                     target_rows: np.ndarray | None = None) -> "PublishedRelease":
        """A veil :class:`~veil.anonymize.Release` as its curator attacks it in memory: its table,
        the manifest's roles and levels, what its private file adds (the value map, the whole
        recoding), and the hierarchies of its quasi-identifiers."""
        ds = release.dataset
        manifest = {"algorithm": release.algorithm,
                    "roles": {"quasi_identifiers": list(ds.quasi_identifiers), "sensitive": list(ds.sensitive)},
                    "generalization": release.generalization_map()}
        levels = {q: release.classes.cells(j).level for j, q in enumerate(ds.quasi_identifiers)}
        if all(level is not None for level in levels.values()):
            manifest["node"] = levels
            manifest["heights"] = {q: ds.generalizations[q].height if q in ds.generalizations else 0
                                   for q in ds.quasi_identifiers}
        if release.recoding is not None:
            manifest["recoding"] = release.recoding
        hierarchies = {q: h for q, h in ds.hierarchies.items() if q in ds.quasi_identifiers}
        orders = {q: o for q, o in ds.orders.items() if q in ds.quasi_identifiers}
        return cls(release.table, manifest=manifest, hierarchies=hierarchies, orders=orders,
                   name=name or f"{release.algorithm} release", target_rows=target_rows)


def as_published(source) -> PublishedRelease:
    """``source`` as a :class:`PublishedRelease`: itself, a veil ``Release`` read by
    :meth:`PublishedRelease.from_release`, or a released table (a path or a frame) without a manifest.

    Raises:
        ParameterError: the release's ``kind`` is not ``"auto"``, ``"generalized"`` or ``"microaggregated"``.
    """
    from veil.anonymize.release import Release

    if isinstance(source, PublishedRelease):
        published = source
    elif isinstance(source, Release):
        published = PublishedRelease.from_release(source)
    else:
        published = PublishedRelease(source)
    if published.kind not in KINDS:
        raise ParameterError(f"the kind of a release is 'auto', 'generalized' or 'microaggregated', "
                             f"not {published.kind!r}.")
    return published


def published_table(published: PublishedRelease, delimiter: str | None = None) -> pa.Table:
    """The released table of ``published``, read when it is a path or a frame; a file its manifest
    says was written with the spreadsheet guard is read as released (:func:`veil.spreadsheet.unguard_table`).

    Raises:
        DataError: the table cannot be read.
    """
    from veil.spreadsheet import is_guarded, unguard_table

    if isinstance(published.table, pa.Table):
        return published.table
    table = read_table(published.table, published.delimiter or delimiter).data
    if published.manifest is not None and is_guarded(load_manifest(published.manifest, "the release")):
        table = unguard_table(table)
    return table


def release_name(published: PublishedRelease, position: int) -> str:
    """What messages call the release at ``position`` (from 1): ``release N``, with its name or file name."""
    if published.name:
        return f"release {position} ({published.name})"
    if isinstance(published.table, (str, os.PathLike)):
        return f"release {position} ({Path(published.table).name})"
    return f"release {position}"


def load_manifest(manifest, where: str) -> dict | None:
    """A release's manifest as a dict (a copy of a mapping, or a JSON file read), or ``None``.

    Args:
        manifest: a mapping, the path of a JSON file, or ``None``.
        where: the release, for error messages.

    Raises:
        DataError: the file does not exist, is not valid JSON or is not a JSON object.
    """
    if manifest is None or isinstance(manifest, Mapping):
        return None if manifest is None else dict(manifest)
    path = Path(manifest)
    if not path.is_file():
        raise DataError(f"the manifest {str(path)!r} of {where} does not exist; check the path.")
    try:
        loaded = json.loads(read_text(path, "the manifest", MANIFEST_LIMIT))  # a regular file, of a manifest's size
    except json.JSONDecodeError as exc:
        raise DataError(f"the manifest {str(path)!r} of {where} is not valid JSON ({exc}).") from None
    if not isinstance(loaded, dict):
        raise DataError(f"the manifest {str(path)!r} of {where} is not a JSON object; give a veil manifest.")
    return loaded


def load_hierarchies(hierarchies) -> dict[str, Hierarchy]:
    """Per column, the :class:`Hierarchy` given (read from its ARX CSV file when given as a path).

    Raises:
        DataError, HierarchyError: a hierarchy file cannot be read.
    """
    out = {}
    for name, h in (hierarchies or {}).items():
        out[name] = h if isinstance(h, Hierarchy) else Hierarchy.read_csv(h)
    return out


def named_hierarchies(published: PublishedRelease, manifest: dict | None, known=()) -> dict[str, Hierarchy]:
    """The hierarchy files a release's manifest names (``hierarchy_files``) for the columns that
    have none in ``known`` nor given with the release, each checked against its SHA-256 and looked
    for where it was given, then in the manifest's folder (see :func:`veil.manifests.referenced_hierarchy`).

    Raises:
        DataError: a file found is not the one the release was made with.
    """
    from veil.manifests import referenced_hierarchy

    named = (manifest or {}).get("hierarchy_files") or {}
    folder = None if published.manifest is None or isinstance(published.manifest, Mapping) else \
        Path(published.manifest).parent
    out = {}
    for column in named:
        if column in known or column in (published.hierarchies or {}):
            continue
        found = referenced_hierarchy(manifest, column, folder)
        if found is not None:
            out[column] = found
    return out


def roles(manifest: dict | None) -> tuple[list[str], list[str]]:
    """``(quasi_identifiers, sensitive)``: the column roles a manifest names (empty lists without one)."""
    roles = (manifest or {}).get("roles") or {}
    return list(roles.get("quasi_identifiers") or []), list(roles.get("sensitive") or [])


def is_microaggregated(published: PublishedRelease, manifest: dict | None) -> bool:
    """Whether a release is located by nearest centroid: its ``kind`` when not ``"auto"``, else whether
    its manifest says MDAV made it."""
    if published.kind != "auto":
        return published.kind == MICROAGGREGATED
    if not manifest:
        return False
    recoding = manifest.get("recoding") or {}
    return manifest.get("algorithm") == "mdav" or recoding.get("method") == "mdav"


def nodes_for(q: str, hierarchies: dict[str, Hierarchy], manifest: dict | None) -> dict[str, frozenset] | None:
    """The labels column ``q`` of a release may publish, each with the original values it covers: the
    nodes of the column's hierarchy (:func:`hierarchy_nodes`), the value map of a full-domain
    manifest (``generalization``) and the value sets of a Mondrian manifest's partitions; ``None``
    when none of these says anything about the column."""
    nodes: dict[str, set] = {}
    if q in hierarchies:
        for label, members in hierarchy_nodes(hierarchies[q]).items():
            nodes.setdefault(label, set()).update(members)
    value_map = ((manifest or {}).get("generalization") or {}).get(q)
    if value_map:
        for original, published in value_map.items():
            nodes.setdefault(str(published), set()).add(str(original))
    # Mondrian's value sets, published as {a,b}: the manifest lists their members exactly (a
    # member may hold a comma).
    for part in ((manifest or {}).get("recoding") or {}).get("partitions") or []:
        members = ((part.get("box") or {}).get(q) or {}).get("values")
        if members:
            members = [str(m) for m in members]
            label = members[0] if len(members) == 1 else "{" + ",".join(members) + "}"
            nodes.setdefault(label, set()).update(members)
    return {label: frozenset(m) for label, m in nodes.items()} if nodes else None


def check_boxes(name: str, manifest: dict | None, qis: Sequence[str], nodes: dict) -> None:
    """Refuse a Mondrian release whose manifest names a hierarchy node in a box that no hierarchy
    of ``nodes`` (per column, as :func:`nodes_for` gives them) explains.

    Raises:
        UnreadableValueError: such a node, named with its column.
    """
    partitions = ((manifest or {}).get("recoding") or {}).get("partitions") or []
    for q in qis:
        known = nodes.get(q) or {}
        for part in partitions:
            box = (part.get("box") or {}).get(q) or {}
            node, level = box.get("node"), box.get("level")
            if node is not None and level and str(node) != STAR and str(node) not in known:
                raise UnreadableValueError(
                    f"{name} publishes the hierarchy node {str(node)!r} (level {level}) in column '{q}', and no "
                    f"hierarchy says which values it covers; give the column's hierarchy (--hierarchy {q}=FILE).")

