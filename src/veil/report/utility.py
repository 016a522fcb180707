"""The utility a release keeps, beside the same figures for its input and for the trivial release.

A utility metric means little alone (a loss of 0.32, a discernibility of 5.4·10⁷), and comparing
two metrics, or a metric with one of another table, compares unlike things. So every metric of a
release is set beside the same metric, with the same options, on the **same records**:

* the **input**, ungeneralized and nothing suppressed: the most a release of it can keep;
* the **trivial release**: every record published, every quasi-identifier at the top of its
  hierarchy (``*``), or reduced to one cell covering all its values when the input comes without
  hierarchies (its height and precision then follow from the hierarchies' heights the manifest
  records): the least a release that publishes every record can keep.

The share of the utility kept is where the release lies between the two: ``(trivial − release) /
(trivial − input)`` for a metric where lower is better, and ``(release − trivial) / (input −
trivial)`` where higher is better; 1 keeps everything the input has, 0 no more than the trivial
release. It is undefined when the two ends coincide (a table whose quasi-identifiers hold one
value each).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from veil.cells import Cells
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.errors import ParameterError
from veil.metrics import METRICS, evaluate_all
from veil.report.figures import Figure, bar_chart
from veil.report.measures import metric_meaning


@dataclass(frozen=True)
class UtilityRow:
    """One utility metric of a release beside its two ends (see the module notes).

    Attributes:
        key: the metric's key (:data:`veil.metrics.METRICS`).
        release: its value on the release.
        input: its value on the ungeneralized input, or ``None`` without the input.
        trivial: its value on the trivial release of the input, or ``None`` without the input.
        higher_is_better: whether a larger value keeps more.
        meaning: what it means, in one sentence.
    """

    key: str
    release: float
    input: float | None
    trivial: float | None
    higher_is_better: bool
    meaning: str

    @property
    def kept(self) -> float | None:
        """The share of the utility kept, between the trivial release (0) and the input (1), or
        ``None`` when either end is unknown or the two coincide."""
        if self.input is None or self.trivial is None or not np.isfinite([self.release, self.input,
                                                                          self.trivial]).all():
            return None
        span = self.input - self.trivial
        if span == 0:
            return None
        return float((self.release - self.trivial) / span)


def trivial_classes(dataset: Dataset) -> EquivalenceClasses:
    """The trivial release of ``dataset``: every record published, every quasi-identifier at the top
    of its hierarchy (the lattice's most general node) when each has one, else one cell covering
    all of its values (local cells, which the metrics that read hierarchy levels do not score)."""
    qis = dataset.quasi_identifiers
    if all(q in dataset.generalizations for q in qis):
        return EquivalenceClasses.from_dataset(dataset, {q: dataset.generalizations[q].height for q in qis}, track=())
    cells = []
    for q in qis:
        column = dataset.column(q)
        cells.append(Cells.from_sets(column, np.array([0, column.cardinality]), np.arange(column.cardinality),
                                     np.array(["*"], dtype=object)))
    rows = np.zeros(dataset.table.num_rows, dtype=np.int64)
    return EquivalenceClasses.from_partition(dataset, rows, np.zeros((1, len(qis)), dtype=np.int32), cells, track=())


def utility_rows(manifest: Mapping, original: Dataset | None) -> list[UtilityRow]:
    """Each numeric utility metric the manifest records, beside its value on the input and on the
    trivial release of the input (``None`` for both without ``original``).

    Args:
        manifest: the release's manifest.
        original: the ungeneralized input, with the release's quasi-identifiers.

    Raises:
        ParameterError: ``original`` does not hold as many records as the release was made from,
            so its figures would not describe the same records.
    """
    released = {k: float(v) for k, v in (manifest.get("metrics") or {}).items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)}
    base: dict[str, float] = {}
    trivial: dict[str, float] = {}
    if original is not None and released:
        rows = (manifest.get("input") or {}).get("rows")
        if isinstance(rows, int) and rows != original.num_rows:
            raise ParameterError(f"the original table holds {original.num_rows:,} records and the release was made "
                                 f"from {rows:,}; give the table the release was made from.")
        base = evaluate_all(EquivalenceClasses.from_dataset(original), None, list(released))
        # The trivial release sits at the top of every hierarchy; without the hierarchies its
        # height and precision are unknown.
        levels = all(q in original.generalizations for q in original.quasi_identifiers)
        keys = [k for k in released if levels or not (k in METRICS and METRICS[k].needs_levels)]
        trivial = evaluate_all(trivial_classes(original), None, keys) if keys else {}
        if not levels:
            trivial.update(_top_of_hierarchies(manifest, original.quasi_identifiers, released))
    return [UtilityRow(k, v, base.get(k), trivial.get(k),
                       bool(METRICS[k].higher_is_better) if k in METRICS else False, metric_meaning(k))
            for k, v in released.items()]


def _top_of_hierarchies(manifest: Mapping, qis: Sequence[str], keys) -> dict[str, float]:
    """Height and precision of the trivial release from the hierarchies' heights the manifest's
    ``columns`` record (for an input given without its hierarchies): every quasi-identifier at its
    top, ``height = Σ heights`` and ``precision = 1 − (columns with a hierarchy) / (columns)``."""
    heights = {c.get("name"): c.get("height") for c in manifest.get("columns") or [] if isinstance(c, Mapping)}
    if not qis or not all(isinstance(heights.get(q), int) for q in qis):
        return {}
    out = {"height": float(sum(heights[q] for q in qis)),
           "precision": 1.0 - sum(1 for q in qis if heights[q] > 0) / len(qis)}
    return {k: v for k, v in out.items() if k in keys}


def utility_figure(rows: Sequence[UtilityRow]) -> Figure | None:
    """The share of the utility the release keeps, per metric, all on one scale from the trivial
    release (0) to the input (1); ``None`` when no share is known."""
    shown = [r for r in rows if r.kept is not None]
    if not shown:
        return None
    kept = [min(max(r.kept, 0.0), 1.0) for r in shown]
    alt = "Share of the utility the release keeps, between the trivial release (0) and the input (1): " + "; ".join(
        f"{r.key} {k:.1%}" for r, k in zip(shown, kept)) + "."
    return bar_chart("utility", [r.key for r in shown], {"utility kept": kept}, title="The utility kept, per metric",
                     alt=alt, fmt="{:.1%}".format, scale=[1.0] * len(shown),
                     caption="Where the release lies, for each metric, between the trivial release of the same "
                             "records (every quasi-identifier *, 0 %) and the input itself (100 %): the longer the "
                             "bar, the more the release keeps. Every bar is on this one scale.")
