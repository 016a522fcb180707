"""The local engine: the table is read into memory and every record is counted with NumPy.

It is what veil does without an engine: :class:`LocalEngine` only names that path, so that code
choosing an engine (the command line, a configuration's ``engine`` section) treats both alike.
It adds no step: its dataset is a plain :class:`veil.Dataset` and its release is written by
:meth:`veil.anonymize.Release.csv_chunks` through :mod:`veil.output`.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Sequence

from veil.data.dataset import Dataset
from veil.data.io import read_table
from veil.manifests import private_path, put_private
from veil.output import OutputSet


class LocalEngine:
    """Run veil's tasks in this process, on the whole table in memory (the default)."""

    name = "local"

    def __repr__(self) -> str:
        return "LocalEngine()"

    def dataset(self, data, *, quasi_identifiers: str | Sequence[str], sensitive: str | Sequence[str] | None = None,
                identifying: str | Sequence[str] | None = None, hierarchies: Mapping[str, Any] | None = None,
                orders: Mapping[str, Sequence[str]] | None = None, missing_values: Sequence[str] = ("",),
                delimiter: str | None = None, also: Sequence[str] = ()) -> Dataset:
        """Read a table into a :class:`veil.Dataset`.

        Args:
            data: a path (CSV or Parquet) or a pandas/polars DataFrame or pyarrow Table.
            quasi_identifiers: the quasi-identifying columns.
            sensitive: the sensitive columns.
            identifying: columns dropped from a release.
            hierarchies: per column, a :class:`veil.Hierarchy`, the path of an ARX hierarchy, or a
                function of the column's values (a pyarrow array) that builds one.
            orders: per column, the order of its values.
            missing_values: cell texts that mean "missing" besides null and NaN.
            delimiter: the CSV delimiter (sniffed when ``None``).
            also: further columns a task reads (every column is read here; kept for symmetry
                with the Spark engine).

        Raises:
            DataError, ColumnError, HierarchyError: as :class:`veil.Dataset` raises them.
        """
        # The role columns are read straight into codes (what the Dataset encodes anyway).
        roles = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers)
        roles += [sensitive] if isinstance(sensitive, str) else list(sensitive or ())
        table = read_table(data, delimiter, dictionary=roles)
        built = {name: given(table.data.column(name)) if callable(given) else given
                 for name, given in (hierarchies or {}).items()}
        return Dataset(table, quasi_identifiers=quasi_identifiers, sensitive=sensitive, identifying=identifying,
                       hierarchies=built, orders=orders, missing_values=missing_values)

    def put_release(self, outputs: OutputSet, release, out: str | os.PathLike) -> dict:
        """Put a release's table into ``outputs`` as one CSV file (the input's delimiter), in
        pieces (:meth:`veil.anonymize.Release.csv_chunks`: it is never held whole); it appears
        when ``outputs`` commits.

        Args:
            outputs: the :class:`~veil.output.OutputSet` that declares ``out``.
            release: the :class:`veil.anonymize.Release`.
            out: the CSV file to write.

        Returns:
            ``{"sha256": …, "bytes": …}`` of the file.

        Raises:
            DataError: the file cannot be written (everything put is removed).
        """
        return outputs.put(out, release.csv_chunks())

    def write_release(self, release, out: str | os.PathLike, manifest: str | os.PathLike | None = None, *,
                      extra: Mapping | None = None, reads=(), outputs: OutputSet | None = None) -> str:
        """Write a release as one CSV file (the input's delimiter), its manifest and the manifest's
        private file, as one set.

        Args:
            release: the :class:`veil.anonymize.Release`.
            out: the CSV file to write.
            manifest: where the manifest (JSON) goes, its private file beside it
                (:func:`veil.manifests.private_path`); without it only the table is written.
            extra: entries added to the manifest.
            reads: files the run read, which no output may replace.
            outputs: an :class:`~veil.output.OutputSet` declared beforehand with these targets
                (:func:`release_targets`).

        Returns:
            The manifest's text (its ``release`` entry included).

        Raises:
            DataError: a target cannot be written.
            ParameterError: an output is an input.
        """
        if outputs is None:
            outputs = OutputSet(release_targets(out, manifest), reads=reads)
        return commit_release(self, outputs, release, out, manifest, extra)


def release_targets(out: str | os.PathLike, manifest: str | os.PathLike | None) -> list:
    """The files a release is written as: the table, and with a manifest the manifest and its
    private file (:func:`veil.manifests.private_path`)."""
    return [out] + ([manifest, private_path(manifest)] if manifest else [])


def commit_release(engine, outputs: OutputSet, release, out: str | os.PathLike, manifest: str | os.PathLike | None,
                   extra: Mapping | None) -> str:
    """Put a release's table (by the engine's ``put_release``), the manifest's private file and
    then the manifest into ``outputs``, and commit them as one set; both engines write their
    releases through it.

    Args:
        engine: the engine whose ``put_release`` writes the table.
        outputs: the :class:`~veil.output.OutputSet` that declares ``out``, ``manifest`` and its
            private file (:func:`release_targets`).
        release: the :class:`veil.anonymize.Release`.
        out: where the table goes.
        manifest: where the manifest (JSON) goes; without it only the table is written.
        extra: entries added to the manifest.

    Returns:
        The manifest's text (its ``release`` entry included).

    Raises:
        DataError: a target cannot be written (nothing is left behind).
    """
    document = {**release.manifest, **(extra or {})}
    with outputs:
        engine.put_release(outputs, release, out)
        if manifest:
            put_private(outputs, private_path(manifest), release.private_manifest, describes={"release": out})
            text = outputs.put_manifest(manifest, document, describes={"release": out})
        else:
            text = json.dumps({**document, "release": outputs.describe(out)}, indent=2, ensure_ascii=False) + "\n"
        outputs.commit()
    return text
