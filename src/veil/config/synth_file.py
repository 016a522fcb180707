"""A configuration file read for ``veil synth``: the table, how to read it, and its ``synth:``
section (:mod:`veil.config.synth_section`), which may stand alone in the file with ``data:``.

Apart from the section so that the section's module, which the schema lists, does not import the
schema back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from veil.config.synth_section import SynthSpec

__all__ = ["SynthConfig", "load_synth"]


@dataclass(frozen=True)
class SynthConfig:
    """A file read for ``veil synth``: the table, how to read it, and its ``synth`` section."""

    data: Path
    spec: SynthSpec
    delimiter: str | None = None
    missing_values: tuple[str, ...] = ("",)
    source: Path | None = None
    reads: tuple[Path, ...] = field(default_factory=tuple)


def load_synth(path: str | os.PathLike, *, data: str | os.PathLike | None = None) -> SynthConfig:
    """Read the ``synth:`` section of a configuration file (which may hold it alone, with ``data:``).

    Args:
        path: the YAML file.
        data: a table path that overrides the file's ``data:`` (as given on a command line).

    Raises:
        ConfigError: the file is missing, is not valid YAML, has no ``synth:`` section or no table,
            or the section breaks the schema (an unknown column, a budget given two ways, a domain
            read from the data without ``from_data``, ...): one sentence naming the file and line.
    """
    from veil.config.parser import Parser
    from veil.config.schema import SECTIONS
    from veil.config.yaml_nodes import compose

    path = Path(path)
    root = compose(path)
    p = Parser(str(path), path.resolve().parent)
    if root is None:
        raise p.error(1, "the file is empty; veil synth needs a 'synth:' section.")
    top = p.mapping(root, "the configuration", "'synth:' on its own line")
    p.known_keys(top, list(SECTIONS), "the top level")
    if "synth" not in top:
        raise p.error(1, "the file has no 'synth:' section; give one, like 'synth: {epsilon: 1.0, delta: 1.0e-9, "
                         "domain: {sex: {categories: [F, M]}}}'.")
    if data is None and "data" not in top:
        raise p.error(1, "the file names no table; give 'data: FILE', or the table on the command line.")
    p.data_override = data
    table = p.read_data(top.get("data"))["data"]
    delimiter = p.read_delimiter(top.get("delimiter"))["delimiter"]
    missing = p.read_missing_values(top.get("missing_values")).get("missing_values", ("",))
    spec = SECTIONS["synth"].read(p, *top["synth"], "synth")
    files = [c.file for c in spec.domain if c.file is not None] + ([spec.holdout] if spec.holdout else [])
    return SynthConfig(table, spec, delimiter, missing, path, tuple([path, table, *files]))
