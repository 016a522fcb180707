"""The public domain a configuration's ``synth:`` section declares, built as a
:class:`~veil.synth.domain.SynthDomain` (the section itself is read by
:mod:`veil.config.synth_section`, below the synthesizer, which therefore does not build it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from veil.data.hierarchy import Hierarchy
from veil.errors import ConfigError, VeilError, lower_first
from veil.synth.domain import ColumnDomain, SynthDomain

if TYPE_CHECKING:
    import pandas as pd

    from veil.config.synth_section import SynthSpec

__all__ = ["section_domain"]


def section_domain(section: SynthSpec, table: pd.DataFrame) -> SynthDomain:
    """The :class:`~veil.synth.domain.SynthDomain` a ``synth:`` section declares: declared
    categories and bins, the leaves of hierarchy files, and (only when the section says
    ``from_data``) values read from ``table``.

    Raises:
        ConfigError: a hierarchy file cannot be read.
        DomainError: a domain the synthesizer refuses (e.g. a column read from the data is missing).
    """
    columns = []
    for spec in section.domain:
        if spec.kind == "categories":
            columns.append(SynthDomain.declared({spec.column: list(spec.values or ())}).columns[0])
        elif spec.kind == "bins":
            declared = {"bins": list(spec.edges or ()), "integer": spec.integer}
            columns.append(SynthDomain.declared({spec.column: declared}).columns[0])
        elif spec.kind == "hierarchy":
            try:
                leaves = Hierarchy.read_csv(spec.file, spec.delimiter).leaves
            except VeilError as exc:
                raise ConfigError(f"{spec.origin}: {lower_first(str(exc))}") from None
            columns.append(ColumnDomain(spec.column, tuple(str(v) for v in leaves), None, source="hierarchy"))
        else:
            bins = {spec.column: spec.bins} if spec.bins is not None else None
            columns.append(SynthDomain.from_data(table, columns=[spec.column], bins=bins).columns[0])
    return SynthDomain(tuple(columns))
