"""What travels with a release and what stays with its curator: the manifest and its private file.

A release made by ``veil anonymize`` (full-domain, Mondrian, MDAV, Ace; either engine) comes with
two JSON files, written in one :class:`~veil.output.OutputSet` with the table:

* the **manifest** (``manifest.json``), published with the table. It describes the transformation
  and nothing of the private table: the parameters, the roles, the hierarchy levels per
  quasi-identifier, the models with their thresholds and verdicts, and only figures a reader can
  compute from the published table itself (the classes, their smallest size, the levels of the
  models that read the classes alone) or that are the transformation's declared outputs (the
  published rows, their order);
* the **private file** (``manifest.private.json`` beside it: :func:`private_path`), which the
  curator keeps. It holds everything derived from the input table: its row count and the records
  suppressed, the raw value → published value map, the reference distribution of every sensitive
  column (the input's, suppressed records included), the levels of the models measured against
  that distribution, the utility metrics, the search's statistics, the hierarchies' rows, the
  algorithms' data-derived settings (MDAV's standardization, Mondrian's and Ace's rounds), and
  the notes about the input's values. It names the release's file and SHA-256, so it is read
  only with its own release (:func:`load_private`).

Field by field, manifest version 2 (:data:`MANIFEST_VERSION`):

================  ==========================================================================
published         ``manifest_version``, ``veil``, ``created``, ``algorithm``; ``input`` (its
                  columns, kind, delimiter); ``roles``; ``output`` (rows, columns, how
                  suppressed records are shown, order, seed); ``suppression.limit`` (and the
                  records suppressed when they are shown as ``*``, where the table shows them);
                  ``classes``; each model's name, key, threshold, sensitive column, verdict,
                  and its level when it reads the classes alone (k, α, ℓ, c, join, δ-presence
                  and k-map against a public population); ``node`` and ``heights`` (the level
                  and height of each quasi-identifier's hierarchy); ``hierarchy_files`` (each
                  hierarchy read from a file: the file as given and its SHA-256); the public
                  part of ``recoding`` (settings, and each released class's size with its
                  published box or values); ``search.metric``; ``warnings``; ``config``;
                  ``release``
private           ``input.rows``; ``suppression.records`` and ``share``; every model's level;
                  ``metrics``; ``reference``; ``generalization`` (the value map);
                  ``hierarchy_rows`` (every hierarchy's rows: a builder's leaves are the data's
                  values); the whole ``recoding`` (with MDAV's standardization, Mondrian's and
                  Ace's rounds and timings) and ``search`` (loss, nodes checked, optimality,
                  time); ``notes``; ``attacks``
================  ==========================================================================

The private file holds the *whole* of each section it touches; the curator's view of a release,
:func:`combined`, is the manifest with what the private file adds (a published entry stands, so
that the claims the curator's tools check are the published ones). ``veil check --manifest``,
``veil report`` and ``veil publish`` read that view when the private file is there, and say in
one sentence what to pass when they need it and it is missing. A manifest written before the
split (version 1, with a ``generalization`` map) holds everything itself and reads as its own
combined view.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping

from veil.errors import DataError

#: The manifest format: 2 splits what is published from what the curator keeps.
MANIFEST_VERSION = 2
#: What a private file says it is.
PRIVATE_KIND = "veil private manifest"
#: The private file's name: the manifest's, with this in place of its suffix.
PRIVATE_SUFFIX = ".private.json"
# Entries of a private file that describe the file itself, not the release.
_META = ("kind", "manifest_version", "release")


def private_path(manifest: str | os.PathLike) -> Path:
    """Where a manifest's private file goes: beside it, ``manifest.json`` → ``manifest.private.json``."""
    path = Path(manifest)
    stem = path.name[:-len(path.suffix)] if path.suffix else path.name
    return path.with_name(stem + PRIVATE_SUFFIX)


def is_split(manifest: Mapping) -> bool:
    """Whether a manifest keeps its private part in a private file (version 2 and later)."""
    version = manifest.get("manifest_version", 1)
    return isinstance(version, int) and version >= MANIFEST_VERSION


def private_document(private: Mapping) -> dict:
    """A private file's content with the entries that say what it is (see :func:`combined`)."""
    return {"kind": PRIVATE_KIND, "manifest_version": MANIFEST_VERSION,
            **{key: value for key, value in private.items() if key not in ("kind", "manifest_version")}}


def combined(manifest: Mapping, private: Mapping | None) -> dict:
    """The curator's view of a release: the manifest with what its private file adds.

    What the manifest publishes stands (a claim the curator's tools check is the published one):
    a section both hold gets the private file's entries the manifest lacks, each published model
    row the level its private row gives, and the warnings the private file's warnings add; a
    section only the private file holds is added.
    Without a private file, the manifest itself.
    """
    if not private:
        return dict(manifest)
    out = dict(manifest)
    for key, value in private.items():
        if key in _META:
            continue
        mine = manifest.get(key)
        if mine is None:
            out[key] = value
        elif isinstance(mine, Mapping) and isinstance(value, Mapping):
            out[key] = {**value, **mine}
        elif key == "warnings" and isinstance(mine, list) and isinstance(value, list):
            out[key] = list(mine) + [w for w in value if w not in mine]
        elif key == "models" and isinstance(mine, list) and isinstance(value, list) and len(mine) == len(value):
            out[key] = [{**({"level": theirs.get("level")} if isinstance(theirs, Mapping) and "level" not in row
                            and theirs.get("key") == row.get("key") else {}), **row}
                        for row, theirs in zip(mine, value)]
    return out


def put_private(outputs, path: str | os.PathLike, private: Mapping, describes: Mapping[str, str | os.PathLike]) -> str:
    """Put a private file into ``outputs`` (created readable by its owner only), naming the files
    it belongs with by their SHA-256 (each must be put already).

    Returns:
        Its text, as written.
    """
    folder = os.path.dirname(os.path.abspath(path))
    doc = {**private_document(private),
           **{key: outputs.describe(p, relative_to=folder) for key, p in describes.items()}}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    outputs.put(path, text, mode=0o600)
    return text


def load_private(manifest_path: str | os.PathLike, manifest: Mapping,
                 private: str | os.PathLike | None = None) -> dict | None:
    """The private file of a release, checked to be the one written with it.

    Args:
        manifest_path: the manifest's path.
        manifest: the manifest, as read.
        private: the private file's path; by default :func:`private_path` of the manifest, read
            when it is there.

    Returns:
        The private file's content, or ``None`` for a manifest written before the split (it
        holds everything itself) or when no file was given and none lies beside the manifest.

    Raises:
        DataError: the file given does not exist, is not a veil private file, or belongs to another
            release (the SHA-256 it names is not the manifest's).
    """
    if not is_split(manifest):
        return None
    given = private is not None
    path = Path(private) if given else private_path(manifest_path)
    if not given and not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"the private file {str(path)!r} does not exist; give the one veil anonymize wrote beside "
                        "the manifest.") from None
    except (OSError, UnicodeDecodeError, ValueError):
        raise DataError(f"{str(path)!r} cannot be read as a veil private file (JSON); give the one veil anonymize "
                        "wrote beside the manifest.") from None
    if not isinstance(doc, dict) or doc.get("kind") != PRIVATE_KIND:
        raise DataError(f"{str(path)!r} is not a veil private file; give the one veil anonymize wrote beside the "
                        "manifest.")
    mine, theirs = (manifest.get("release") or {}).get("sha256"), (doc.get("release") or {}).get("sha256")
    if mine != theirs:
        raise DataError(f"the private file {str(path)!r} belongs to another release (the SHA-256 it names is not the "
                        "manifest's); give the one written with this release.")
    return doc


def hierarchy_files(hierarchies: Mapping) -> dict[str, dict]:
    """The published description of the hierarchies read from files: per column, the file as it
    was given and the SHA-256 of its bytes (and its delimiter when not ``;``). A hierarchy made
    in memory (by a builder, from the data) is not described: its leaves are the data's values."""
    out = {}
    for column, hierarchy in hierarchies.items():
        if getattr(hierarchy, "path", None) is not None and getattr(hierarchy, "sha256", None):
            entry = {"file": str(hierarchy.path), "sha256": hierarchy.sha256}
            if getattr(hierarchy, "delimiter", ";") != ";":
                entry["delimiter"] = hierarchy.delimiter
            out[column] = entry
    return out


def referenced_hierarchy(manifest: Mapping, column: str, folder: str | os.PathLike | None = None):
    """The hierarchy file a manifest names for ``column`` (``hierarchy_files``), read from where it
    was given, else from the manifest's folder, and checked against the SHA-256 the manifest records.

    Returns:
        The :class:`~veil.data.hierarchy.Hierarchy`, or ``None`` when the manifest names no file for
        the column or the file is found nowhere.

    Raises:
        DataError: the file found is not the one the release was made with (its SHA-256 differs).
    """
    import hashlib

    from veil.data.hierarchy import Hierarchy

    entry = (manifest.get("hierarchy_files") or {}).get(column)
    if not isinstance(entry, Mapping) or not isinstance(entry.get("file"), str):
        return None
    given = Path(entry["file"])
    places = [given]
    if folder is not None:
        places += [Path(folder) / given, Path(folder) / given.name]
    for place in places:
        if place.is_file():
            digest = hashlib.sha256(place.read_bytes()).hexdigest()
            if digest != entry.get("sha256"):
                raise DataError(f"the hierarchy file {str(place)!r} of '{column}' is not the one the release was made "
                                "with (its SHA-256 differs from the manifest's); give that one (--hierarchy "
                                f"{column}=FILE).")
            return Hierarchy.read_csv(place, delimiter=entry.get("delimiter") or ";")
    return None


def missing_private(manifest_path: str | os.PathLike, what: str, option: str = "--private") -> str:
    """The sentence that asks for a release's private file: ``what`` needs it."""
    return (f"{what} is kept in the release's private file, which is not beside the manifest; give it "
            f"({option} {private_path(manifest_path).name}, written by veil anonymize).")
