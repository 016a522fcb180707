"""A workbench project: a table, its configuration and its releases, as files in the data folder.

::

    DATA/
      ledger.db                  the release ledger every project publishes through
      NAME/
        project.json             the table's file name, format and delimiter, when it was made
        table.csv | table.parquet
        config.yaml              the configuration `veil anonymize --config` reads (data: table.csv)
        hierarchies/COLUMN.csv   hierarchies loaded or built on the Columns page (ARX's format)
        releases/ID/             release.csv, manifest.json, manifest.private.json, report.html,
                                 config.yaml (the configuration it was made with), attacks.json
        runs/ID/                 request.json, status.json, log: one run of a worker process

A release folder appears whole or not at all: a worker writes it under ``runs/ID/out`` and
renames it into ``releases/`` when everything is written.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from veil.errors import ParameterError
from veil.workbench.security import project_name

_ID = re.compile(r"[0-9a-z][0-9a-z-]{0,63}")
LEDGER_FILE = "ledger.db"


class NotFound(ParameterError):
    """A project, release or run that does not exist (the page answers 404)."""


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``path`` whole or not at all (a temporary file in the same folder, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def checked_id(value: str) -> str:
    """A release or run id as the workbench makes them (lower-case letters, digits and '-')."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise NotFound("no such release or run.")
    return value


@dataclass(frozen=True)
class Project:
    """One project folder (see the module's docstring)."""

    root: Path

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def meta(self) -> dict:
        """``project.json``: ``table`` (file name), ``format`` (csv or parquet), ``delimiter``, ``created``."""
        return json.loads((self.root / "project.json").read_text(encoding="utf-8"))

    @property
    def table_path(self) -> Path:
        return self.root / self.meta["table"]

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def hierarchies_dir(self) -> Path:
        return self.root / "hierarchies"

    @property
    def releases_dir(self) -> Path:
        return self.root / "releases"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    def config(self) -> dict:
        """The configuration as a mapping (empty before the first save)."""
        if not self.config_path.exists():
            return {}
        return yaml.safe_load(self.config_path.read_text(encoding="utf-8")) or {}

    def save_config(self, document: dict) -> None:
        """Write ``config.yaml`` atomically; ``data:`` always names the project's table."""
        document = {"data": self.meta["table"], **{k: v for k, v in document.items() if k != "data"}}
        if self.meta.get("format") == "csv":
            document["delimiter"] = self.meta["delimiter"]
        header = (f"# veil configuration of the workbench project {self.name!r}.\n"
                  "# Rerun it from a terminal: veil anonymize --config config.yaml --out release.csv "
                  "--manifest manifest.json --report report.html\n")
        write_atomic(self.config_path, header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True))

    def release_ids(self) -> list[str]:
        """The project's releases, oldest first."""
        if not self.releases_dir.is_dir():
            return []
        found = [p for p in self.releases_dir.iterdir() if p.is_dir() and _ID.fullmatch(p.name)]
        return [p.name for p in sorted(found, key=lambda p: (p.stat().st_mtime, p.name))]

    def release_dir(self, release_id: str) -> Path:
        """The folder of one release.

        Raises:
            NotFound: there is no such release.
        """
        path = self.releases_dir / checked_id(release_id)
        if not path.is_dir():
            raise NotFound("no such release.")
        return path

    def run_dir(self, run_id: str) -> Path:
        """The folder of one run.

        Raises:
            NotFound: there is no such run.
        """
        path = self.runs_dir / checked_id(run_id)
        if not path.is_dir():
            raise NotFound("no such run.")
        return path


class Workspace:
    """The data folder: its projects and the ledger they publish through."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    @property
    def ledger_path(self) -> Path:
        return self.root / LEDGER_FILE

    def projects(self) -> list[Project]:
        """Every project, by name."""
        return [Project(p) for p in sorted(self.root.iterdir())
                if p.is_dir() and not p.name.startswith(".") and (p / "project.json").exists()]

    def project(self, name: str) -> Project:
        """The project called ``name``.

        Raises:
            NotFound: there is no such project (or the name could not be one).
        """
        try:
            name = project_name(name)
        except ParameterError:
            raise NotFound("no such project.") from None
        path = self.root / name
        if not (path / "project.json").is_file():
            raise NotFound("no such project.")
        return Project(path)

    def create(self, name: str, table: bytes, *, fmt: str, delimiter: str | None) -> Project:
        """Make a project from a table's bytes, whole or not at all.

        The table is written as ``table.csv`` or ``table.parquet`` whatever the uploaded file was
        called: the upload's name never becomes a path.

        Raises:
            ParameterError: the name is not a valid project name, or a project of that name exists.
        """
        name = project_name(name)
        final = self.root / name
        if final.exists():
            raise ParameterError(f"a project called {name!r} exists; choose another name.")
        if fmt not in ("csv", "parquet"):
            raise ParameterError("upload a CSV or Parquet table.")
        staging = Path(tempfile.mkdtemp(dir=self.root, prefix=".new-"))
        try:
            file = f"table.{fmt}"
            write_atomic(staging / file, table)
            meta = {"table": file, "format": fmt, "delimiter": delimiter,
                    "created": datetime.now(UTC).isoformat(timespec="seconds")}
            write_atomic(staging / "project.json", json.dumps(meta, indent=2) + "\n")
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return Project(final)

    def sweep(self) -> None:
        """Remove what an interrupted upload left (``.new-*`` folders), and the uploads that were
        waiting for confirmation (``.upload-*``: their confirm pages died with the server)."""
        for path in [*self.root.glob(".new-*"), *self.root.glob(".upload-*")]:
            shutil.rmtree(path, ignore_errors=True)
