"""The attack task: veil as the adversary on one published release of a project.

It runs what ``veil attack single`` runs (the homogeneity, background-knowledge, skewness and
similarity attacks and the disclosure measures, :func:`veil.attacks.single.attack_release`) on the
release file as it was published, read with its manifest: the manifest's roles, its delimiter, the
spreadsheet guard undone when it was written with one, and the rows it calls suppressed (shown as
``*``) left out, as the release's report reads them. The similarity attack groups a sensitive
column's values by the hierarchy the private file records (the one the release was made with).
Nothing is anonymized again. The findings go to ``attacks.json`` in the release folder, written
atomically; the release itself is not touched.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from veil.errors import ParameterError
from veil.workbench.projects import Project, write_atomic


def attack_folder(folder: Path) -> dict:
    """Attack the release in ``folder`` (``release.csv``, ``manifest.json`` and its private file).

    Returns:
        The single-release attacks' summary (:meth:`SingleReleaseReport.to_dict`), with ``attacked``
        (when, UTC) added.

    Raises:
        DataError: the manifest or its private file cannot be read, or the release file is not the
            one the manifest names (its SHA-256 differs).
        ParameterError: the release has no sensitive column, or no released record.
    """
    from veil.attacks.single import DEFAULT_LEVEL, attack_release
    from veil.classes import STAR, EquivalenceClasses
    from veil.data.dataset import Dataset
    from veil.data.hierarchy import Hierarchy
    from veil.data.io import read_table
    from veil.report import read_release_manifest
    from veil.spreadsheet import is_guarded, unguard_table

    doc = read_release_manifest(folder / "manifest.json")
    roles = doc["roles"]
    sensitive = list(roles.get("sensitive") or [])
    if not sensitive:
        raise ParameterError("the attacks read a sensitive column and this release has none; mark a column "
                             "sensitive on the Columns page and make the release again.")
    delimiter = (doc.get("input") or {}).get("delimiter") or ","
    table = read_table(folder / "release.csv", delimiter).data
    if is_guarded(doc):
        table = unguard_table(table)
    rows = doc.get("hierarchy_rows") or {}
    hierarchies = {c: Hierarchy(rows[c], name=f"the hierarchy of '{c}' in the release's private file")
                   for c in sensitive if rows.get(c)}
    ds = Dataset(table, quasi_identifiers=list(roles["quasi_identifiers"]), sensitive=sensitive,
                 hierarchies=hierarchies)
    classes = EquivalenceClasses.from_dataset(ds)
    suppression = doc.get("suppression") or {}
    if (doc.get("output") or {}).get("suppressed") == "star" and (suppression.get("records") or 0) > 0:
        classes = classes.subset(~classes.printed_as(STAR))   # the suppressed records, as the report leaves them out
    level = min([DEFAULT_LEVEL] + [h.height for h in hierarchies.values() if h.height >= 1])
    report = attack_release(classes, level=level)
    return {**report.to_dict(), "attacked": datetime.now(UTC).isoformat(timespec="seconds")}


def run(project: Project, params: dict, out: Path, progress) -> dict:
    """The worker's entry point: attack the release ``params["release"]`` of ``project``.

    Writes ``attacks.json`` into the release folder (whole or not at all) and returns
    ``{"release": ID, "exposed": N}``: N, the records the homogeneity or similarity attack exposes
    (what ``veil attack single`` exits 1 for).

    Raises:
        NotFound: there is no such release.
        DataError, ParameterError: as :func:`attack_folder`.
    """
    release_id = params.get("release")
    folder = project.release_dir(release_id if isinstance(release_id, str) else "")
    progress.stage("reading the release and attacking it")
    found = attack_folder(folder)
    progress.stage("writing the findings")
    write_atomic(folder / "attacks.json", json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    exposed = 0
    for column in (found.get("attacks") or {}).values():
        exposed = max(exposed, int((column.get("homogeneity") or {}).get("records") or 0),
                      int((column.get("similarity") or {}).get("records") or 0))
    return {"release": release_id, "exposed": exposed}
