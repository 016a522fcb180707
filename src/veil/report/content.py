"""What a release's report says: the facts a data steward signs off, gathered from the release.

It opens with a summary (:mod:`veil.report.summary`): the table's name, each model's verdict, the
records at risk and suppressed, the columns published unchanged and every warning; it lists every
column of the input with its role and what the release does with it
(:mod:`veil.anonymize.columns`); every measure comes with a sentence saying what it means and
which way is better (:mod:`veil.report.measures`); and the utility metrics are set beside the
same metrics of the input and of the trivial release of the same records
(:mod:`veil.report.utility`).

The report judges the **published table as a reader sees it** (rows whose quasi-identifier cells
print alike are one class), read back from the released file with the roles its manifest
records, exactly as ``veil check --manifest`` and ``veil attack single`` read it: every privacy
model's level per sensitive column (:func:`veil.check.check`), the prosecutor re-identification
risk of every record (El Emam and Dankar, JAMIA 2008: a record in a class of f records is
re-identified with probability 1/f), and the single-release attacks (homogeneity, background
knowledge, skewness, similarity; Machanavajjhala et al., TKDD 2007; Li et al., ICDE 2007) with
the disclosure measures of Brickell and Shmatikov (KDD 2008). Only counts of exposed records are
reported, never which records they are.

The manifest and its private file (:mod:`veil.manifests`, which the report reads together: the
report is the curator's) supply what the table cannot: the configuration, the transformation,
the suppression, the search and the reference distributions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from veil.anonymize.columns import ColumnDisposition
from veil.attacks.intersection import PublishedRelease, intersection_attack
from veil.attacks.single import DEFAULT_THRESHOLD, attack_release
from veil.check import check
from veil.classes import STAR, EquivalenceClasses
from veil.data.dataset import Dataset
from veil.data.io import read_table
from veil.errors import DataError, ParameterError
from veil.manifests import combined, is_split, load_private, missing_private
from veil.output import load_manifest
from veil.spreadsheet import is_guarded, unguard_table
from veil.report.figures import Figure, bar_chart, step_chart
from veil.report.summary import Summary, dataset_name, report_columns, report_warnings, summarize
from veil.report.utility import UtilityRow, utility_figure, utility_rows
from veil.report.manifest import check_manifest_shape

# The manifests this version reads: those written by a veil of the same release series.
READABLE_SERIES = "0.1"

WORST_CLASSES = 3      # classes shown against the table in the sensitive-value figure
VALUES_SHOWN = 10      # sensitive values named in that figure; the rest are summed
SIZE_BINS = (1, 2, 3, 4, 5, 10, 20, 50, 100, 500, 1000)

MODEL_NAMES = {"k": "k-anonymity", "alpha": "(α,k)-anonymity", "l_distinct": "distinct ℓ-diversity",
               "l_entropy": "entropy ℓ-diversity", "c_l_recursive": "recursive (c,ℓ)-diversity",
               "t_equal": "t-closeness (equal distance)", "t_ordered": "t-closeness (ordered distance)",
               "t_hierarchical": "t-closeness (hierarchical distance)", "delta": "δ-disclosure privacy",
               "beta_basic": "basic β-likeness", "beta_enhanced": "enhanced β-likeness"}


@dataclass
class ReleaseReport:
    """The content of a release's report, ready to be rendered.

    Attributes:
        title: the report's title.
        name: the table's name.
        created: when the release was made (from its manifest).
        version: the veil version that made the release.
        configuration: ``(label, text)`` pairs describing the configuration in words.
        transformation: one row per quasi-identifier: its name, level (or ``None``) and the
            number of distinct published values.
        models: one row per configured model: name, sensitive column, threshold, level, verdict.
        measured: per sensitive column (or ``"all"`` without one), every model's level.
        risk: the prosecutor risk figures (``threshold``, ``max``, ``avg``, ``at_risk``).
        attacks: per sensitive column, rows ``(attack, classes, records, share, learnt)``.
        disclosure: per sensitive column, the disclosure measures.
        intersection: the intersection attack's summary rows, or ``None``.
        metrics: one :class:`~veil.report.utility.UtilityRow` per utility metric.
        summary: the verdict at the top (:class:`~veil.report.summary.Summary`).
        columns: every input column with its role and disposition.
        warnings: every warning (one sentence each), as the summary lists them.
        figures: the figures, by section.
        notes: remarks worth the reader's attention (one sentence each).
    """

    title: str
    name: str
    created: str
    version: str
    configuration: list[tuple[str, str]]
    transformation: list[tuple[str, int | None, int]]
    models: list[dict]
    measured: dict[str, dict[str, object]]
    risk: dict[str, float]
    attacks: dict[str, list[tuple[str, int, int, float, str]]]
    disclosure: dict[str, dict[str, float]]
    metrics: list[UtilityRow]
    summary: Summary | None = None
    columns: list[ColumnDisposition] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    figures: dict[str, list[Figure]] = field(default_factory=dict)
    intersection: list[tuple[str, str]] | None = None
    notes: list[str] = field(default_factory=list)


def read_release_manifest(manifest: str | os.PathLike, release: str | os.PathLike | None = None,
                          private: str | os.PathLike | None = None) -> dict:
    """A release manifest veil can report on, checked against the release file it names, with its
    private file's sections (:func:`veil.manifests.combined`).

    Args:
        manifest: the manifest written with the release (JSON).
        release: the release file the caller holds, which must be the one the manifest names.
        private: the manifest's private file (default: the one beside it).

    Raises:
        DataError: the manifest cannot be read, names a missing or altered release
            (:func:`veil.output.load_manifest`), was written by an incompatible veil version,
            records no roles, or holds an entry of the wrong kind (:mod:`veil.report.manifest`);
            its private file is missing, or belongs to another release.
    """
    doc = load_manifest(manifest, release)
    version = doc.get("veil")
    if not isinstance(version, str) or ".".join(version.split(".")[:2]) != READABLE_SERIES:
        raise DataError(f"manifest {str(manifest)!r} was written by veil {version or 'of an unknown version'}, whose "
                        f"manifests this veil ({READABLE_SERIES}.x) cannot read; publish the release again with it.")
    roles = doc.get("roles")
    if not isinstance(roles, dict) or not roles.get("quasi_identifiers"):
        raise DataError(f"manifest {str(manifest)!r} records no quasi-identifiers; give the manifest veil anonymize "
                        "wrote with the release.")
    check_manifest_shape(doc, str(manifest))
    if is_split(doc):
        secret = load_private(manifest, doc, private)
        if secret is None:
            raise DataError(missing_private(manifest, "what the report says of the input table (its size, the "
                                                      "suppressed records, the metrics, the reference distributions)"))
        doc = combined(doc, secret)
    return doc


def release_file(manifest: str | os.PathLike, doc: Mapping) -> str:
    """The path of the release a manifest names (relative to the manifest's folder)."""
    return os.path.join(os.path.dirname(os.path.abspath(manifest)), doc["release"]["file"])


def release_report(manifest: Mapping, table, *, original: Dataset | None = None,
                   heights: Mapping[str, int] | None = None,
                   sensitive_hierarchies: Mapping | None = None, risk_threshold: float = 0.2,
                   attack_threshold: float = DEFAULT_THRESHOLD, earlier: Sequence = (), targets=None,
                   this_release=None, title: str | None = None, name: str | None = None,
                   columns: Sequence[ColumnDisposition] | None = None) -> ReleaseReport:
    """Gather the report of a release from its manifest and its published table.

    Args:
        manifest: the release's manifest with its private file's sections (as
            :func:`read_release_manifest` returns it, or ``Release.curator_manifest``).
        table: the published table: a path, a frame or a ``veil.data.io.Table``. Its CSV
            delimiter is the manifest's input delimiter.
        original: the ungeneralized input (with the release's roles and, for the metrics that read
            hierarchy levels, its hierarchies), whose own metrics and those of its trivial
            release the release's are compared with; ``None`` leaves the comparison out.
        heights: per quasi-identifier, the height of its hierarchy (the lattice figure scales
            each level by it); unknown heights are drawn on the largest level's scale.
        sensitive_hierarchies: hierarchies of sensitive columns (the similarity attack's groups).
        risk_threshold: the prosecutor risk above which a record counts as at risk, in (0, 1].
        attack_threshold: the posterior at which the background-knowledge adversary counts a
            record as exposed, in (0, 1].
        earlier: earlier releases of the same people (each a
            :class:`~veil.attacks.intersection.PublishedRelease`, a ``Release`` or a released
            table), against which the intersection attack is run with this release.
        targets: the people the intersection attack locates (a path or a frame with their
            quasi-identifiers); needed with ``earlier``.
        this_release: how the intersection attack reads this release (a ``PublishedRelease`` or
            a ``Release``); by default ``table`` with ``manifest``.
        title: the report's title (default: names the table).
        name: the table's name (default: the manifest's, else its data file's name).
        columns: the release's columns with their dispositions (``Release.columns``); by default
            read from the manifest and judged on ``table``.

    Raises:
        ParameterError: a threshold out of range, ``earlier`` without ``targets``, a hierarchy
            of a column that is not sensitive, or an ``original`` of another number of records
            than the release was made from.
        DataError, ColumnError: the table cannot be read or lacks a column the manifest names.
    """
    if not 0 < risk_threshold <= 1:
        raise ParameterError(f"the risk threshold must be in (0, 1], not {risk_threshold}.")
    roles = manifest["roles"]
    qis, sensitive = list(roles["quasi_identifiers"]), list(roles.get("sensitive") or [])
    if earlier and targets is None:
        raise ParameterError("the intersection attack with earlier releases needs the people it locates; give the "
                             "targets (their quasi-identifiers).")
    if earlier and not sensitive:
        raise ParameterError("the intersection attack needs a sensitive column, and the release has none; leave the "
                             "earlier releases out.")
    delimiter = (manifest.get("input") or {}).get("delimiter") or ","
    stray = [n for n in (sensitive_hierarchies or {}) if n not in sensitive]
    if stray:
        raise ParameterError(f"a hierarchy is given for '{stray[0]}', which is not a sensitive column of the release "
                             f"({', '.join(sensitive) or 'it has none'}); give hierarchies of sensitive columns only.")
    hierarchies = dict(sensitive_hierarchies or {})
    if isinstance(table, (str, os.PathLike)) and is_guarded(manifest):
        # written with the spreadsheet guard: read as it was released
        table = unguard_table(read_table(table, delimiter).data)
    ds = Dataset(table, quasi_identifiers=qis, sensitive=sensitive, hierarchies=hierarchies,
                 delimiter=delimiter if isinstance(table, (str, os.PathLike)) else None)
    checked = check(ds, manifest=manifest, risk_threshold=risk_threshold)
    classes = checked.classes
    summary = checked.to_dict()
    notes = list(checked.notes)
    name = dataset_name(manifest, name)
    report = ReleaseReport(
        title=title or f"Release report: {name}", name=name,
        created=str(manifest.get("created", "")), version=str(manifest.get("veil", "")),
        configuration=describe_configuration(manifest),
        transformation=describe_transformation(manifest, classes),
        models=configured_models(manifest),
        measured=summary["by_sensitive"] or {"all": {"k": summary["k"]}},
        risk={"threshold": risk_threshold, "max": checked.risk.prosecutor_max, "avg": checked.risk.prosecutor_avg,
              "at_risk": checked.risk.prosecutor_at_risk},
        attacks={}, disclosure={}, metrics=[], notes=notes)
    output = manifest.get("output") or {}
    # Rows kept in the input's order are a warning (report_warnings), not a note.
    if output.get("shuffled") is not False and output.get("seed") is not None:
        report.notes.append("the rows were shuffled with the seed the manifest records, so anyone can undo the "
                            "shuffle and recover the input's row order.")
    report.figures["classes"] = [class_size_figure(classes), risk_figure(classes, risk_threshold)]
    # The classes are compared with the input's distribution when the manifest records it (as the
    # models are), else with the released table's own.
    reference = "input table" if manifest.get("reference") else "released table"
    report.figures["sensitive"] = [sensitive_figure(classes, name, reference) for name in sensitive
                                   if classes.n_classes]
    if sensitive and classes.n_rows:
        # The attacks read the published classes as `veil attack single` does (the released table's
        # own distribution is the adversary's prior), without the rows the manifest calls suppressed.
        published = EquivalenceClasses.from_dataset(ds)
        if checked.suppressed:
            published = published.subset(~published.printed_as(STAR))
        attacks = attack_release(published, threshold=attack_threshold)
        notes.extend(n for n in attacks.notes if n not in notes)
        for name, col in attacks.by_sensitive.items():
            report.attacks[name] = attack_rows(col, classes.n_rows)
            d = col.disclosure
            report.disclosure[name] = {"A_know": float(d.a_know), "A_acc": float(d.a_acc),
                                       "δ (against the released table)": float(d.delta),
                                       "guessing accuracy before": float(d.accuracy_base),
                                       "guessing accuracy after": float(d.accuracy_base + d.a_acc)}
        report.figures["attacks"] = [attack_figure(name, rows) for name, rows in report.attacks.items()]
    if earlier:
        if this_release is None:
            this_release = PublishedRelease(table, manifest=dict(manifest), name="this release",
                                            delimiter=delimiter if isinstance(table, (str, os.PathLike)) else None)
        result = intersection_attack([this_release, *earlier], targets, quasi_identifiers=qis,
                                     sensitive=sensitive[0], delimiter=delimiter)
        report.intersection = intersection_rows(result.summary())
        report.figures["intersection"] = [intersection_figure(result.summary())]
        notes.extend(n for n in result.notes if n not in notes)
    report.metrics = utility_rows(manifest, original)
    figure = utility_figure(report.metrics)
    if figure is not None:
        report.figures["utility"] = [figure]
    lattice = lattice_figures(manifest, heights or {})
    if lattice:
        report.figures["lattice"] = lattice
    report.columns = list(columns) if columns is not None else report_columns(manifest, ds.table.data, classes)
    report.warnings = report_warnings(manifest, report.columns, classes)
    report.summary = summarize(manifest, name=report.name, models=report.models, classes=classes,
                               risk_threshold=risk_threshold, columns=report.columns, warnings=report.warnings)
    return report


# ------------------------------------------------------------------------------ in words

def _names(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


def describe_configuration(manifest: Mapping) -> list[tuple[str, str]]:
    """The configuration of a release in words, from its manifest."""
    roles = manifest["roles"]
    suppression = manifest.get("suppression") or {}
    output = manifest.get("output") or {}
    search = manifest.get("search") or {}
    rows = [("algorithm", str(manifest.get("algorithm", "unknown"))),
            ("quasi-identifiers", _names(roles.get("quasi_identifiers") or [])),
            ("sensitive columns", _names(roles.get("sensitive") or [])),
            ("identifying columns (removed)", _names(roles.get("identifying") or [])),
            ("privacy models", _names([_model_words(m) for m in manifest.get("models") or []]))]
    if suppression:
        style = "removed" if output.get("suppressed") == "remove" else "shown as *"
        rows.append(("suppression", f"at most {suppression.get('limit', 0):.2%} of the records; "
                                    f"{suppression.get('records', 0):,} suppressed "
                                    f"({suppression.get('share', 0):.2%}), {style}"))
    if search.get("metric"):
        proof = "proven optimal" if search.get("proven_optimal") else "not proven optimal"
        rows.append(("utility optimized", f"{search['metric']} ({proof})"))
    source = manifest.get("input") or {}
    if source:
        rows.append(("records", f"{source.get('rows', 0):,} in the input, {output.get('rows', 0):,} released"))
    return rows


def _model_words(row: Mapping) -> str:
    on = f" of {row['sensitive']}" if row.get("sensitive") else ""
    return f"{row['model']}{on} at {row['threshold']:g}"


def describe_transformation(manifest: Mapping, classes: EquivalenceClasses) -> list[tuple[str, int | None, int]]:
    """Per quasi-identifier: its generalization level (``None`` for a partitioning) and how many
    distinct values the release publishes in it."""
    node = manifest.get("node") or {}
    return [(q, node.get(q), int(len(np.unique(classes.keys[:, j]))) if classes.n_classes else 0)
            for j, q in enumerate(classes.dataset.quasi_identifiers)]


def configured_models(manifest: Mapping) -> list[dict]:
    """The models the release was made for, with their levels and verdicts (from the manifest)."""
    return [{"model": m["model"], "key": m.get("key") or "", "sensitive": m.get("sensitive") or "",
             "threshold": m["threshold"], "level": m["level"], "passed": bool(m["passed"])}
            for m in manifest.get("models") or []]


def attack_rows(col, n_rows: int) -> list[tuple[str, int, int, float, str]]:
    """One row per single-release attack: what it exposes, in counts and share of the records."""
    rows = []
    h = col.homogeneity
    rows.append(("homogeneity", len(h.classes), len(h.records), len(h.records) / n_rows,
                 "the class holds one sensitive value"))
    bk = col.background_knowledge
    rows.append((f"background knowledge (m ≤ {bk.max_m})", len(bk.classes), len(bk.records), len(bk.records) / n_rows,
                 f"ruling out up to {bk.max_m} values gives a posterior of at least {bk.threshold:g}"))
    sk = col.skewness
    rows.append((f"skewness (×{sk.factor:g})", len(sk.classes), len(sk.records), len(sk.records) / n_rows,
                 f"a value is {sk.factor:g} times as likely in the class as in the table"))
    if col.similarity is not None:
        sim = col.similarity
        rows.append((f"similarity (level {sim.level})", len(sim.classes), len(sim.records), len(sim.records) / n_rows,
                     "the class's values all fall in one group of the hierarchy"))
    return rows


# ------------------------------------------------------------------------------ figures

def _key(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower())


def class_size_figure(classes: EquivalenceClasses) -> Figure:
    """How many classes, and records, the release has of each size."""
    sizes = classes.sizes
    edges = np.array(SIZE_BINS + (np.iinfo(np.int64).max,))
    which = np.searchsorted(edges, sizes, side="right") - 1
    n_classes = np.bincount(which, minlength=len(SIZE_BINS))[:len(SIZE_BINS)]
    n_records = np.bincount(which, weights=sizes, minlength=len(SIZE_BINS))[:len(SIZE_BINS)]
    used = np.flatnonzero(n_classes)
    labels = [f"{lo}" if hi - lo == 1 else (f"{lo}–{hi - 1}" if i < len(SIZE_BINS) - 1 else f"{lo} or more")
              for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))]
    cats = [labels[i] for i in used]
    smallest = int(sizes.min()) if len(sizes) else 0
    alt = (f"{classes.n_classes:,} classes hold {classes.n_rows:,} records; the smallest holds {smallest:,}. "
           + "; ".join(f"size {c}: {int(n_classes[i]):,} classes, {int(n_records[i]):,} records"
                       for c, i in zip(cats, used)) + ".")
    # One quantity on one scale: the records in classes of each size (the classes are named in
    # the labels, never drawn on the records' scale).
    return bar_chart("class-sizes", [f"size {c} ({int(n_classes[i]):,} classes)" for c, i in zip(cats, used)],
                     {"records": [float(n_records[i]) for i in used]},
                     title="Records by the size of their class", alt=alt,
                     caption=f"The records in classes of each size (how many classes of that size there are in "
                             f"brackets). A record in a class of f records is re-identified with probability 1/f, "
                             f"so the higher the bars at the top, the riskier; the smallest class holds "
                             f"{smallest:,}.")


def risk_figure(classes: EquivalenceClasses, threshold: float) -> Figure:
    """The share of records whose prosecutor risk is at least r, for every r, with the threshold."""
    sizes = classes.sizes
    if len(sizes):
        distinct, n_classes = np.unique(sizes, return_counts=True)
        below = np.cumsum(n_classes * distinct) / sizes.sum()   # records in classes of size ≤ each size
        # from r = 1/size on (risks increasing), the records at risk > r are those in smaller classes
        x = [0.0] + (1.0 / distinct[::-1]).tolist()
        y = [1.0] + np.concatenate([below[::-1][1:], [0.0]]).tolist()
    else:
        x, y = [0.0], [0.0]
    at_risk = float(sizes[1.0 / sizes > threshold].sum() / sizes.sum()) if len(sizes) else 0.0
    highest = float(1.0 / sizes.min()) if len(sizes) else 0.0
    alt = (f"Per-record prosecutor risk: the highest is {highest:.3g}; {at_risk:.2%} of the records have a risk above "
           f"the threshold {threshold:g}.")
    return step_chart("risk", x, y, title="Per-record re-identification risk (prosecutor)", alt=alt,
                      caption=f"Share of records whose prosecutor risk exceeds r, for every r; the dashed line is "
                              f"the threshold {threshold:g}, above which {at_risk:.2%} of the records lie.",
                      x_label="risk r = 1 / class size", y_label="records with risk > r",
                      marker=threshold, marker_label=f"threshold {threshold:g}")


def sensitive_figure(classes: EquivalenceClasses, name: str, against: str = "whole table") -> Figure:
    """A sensitive column's distribution in the worst classes against the table the models compare
    them with (``against`` names it: the input table, or the released table).

    The worst classes are those where the adversary's best guess of the value is most often
    right: the highest share of one value (ties: the smaller class first).
    """
    sc = classes.sensitive[name]
    sizes = sc.counts.sum(axis=1)
    posterior = sc.counts.max(axis=1) / np.maximum(sizes, 1)
    worst = np.lexsort((sizes, -posterior))[:WORST_CLASSES]
    reference = sc.reference / max(sc.reference.sum(), 1)
    order = np.argsort(-reference, kind="stable")
    shown, rest = order[:VALUES_SHOWN], order[VALUES_SHOWN:]
    labels = [str(sc.column.labels[i]) or "(missing)" for i in shown] + (["other values"] if len(rest) else [])

    def spread(counts: np.ndarray, total: float) -> list[float]:
        share = counts / max(total, 1)
        return share[shown].tolist() + ([float(share[rest].sum())] if len(rest) else [])

    series = {against: spread(sc.reference, sc.reference.sum())}
    for rank, c in enumerate(worst, start=1):
        series[f"class {rank} ({int(sizes[c]):,} records)"] = spread(sc.counts[c], sizes[c])
    cells = classes.class_labels().iloc[worst]
    described = "; ".join(
        f"class {rank}: " + ", ".join(f"{q} = {row[q]}" for q in classes.dataset.quasi_identifiers)
        + f", its most frequent value holding {posterior[c]:.0%}"
        for rank, (c, (_, row)) in enumerate(zip(worst, cells.iterrows()), start=1))
    alt = (f"The distribution of {name} in the {len(worst)} classes where one value is most frequent, against the "
           f"{against}. {described}.")
    return bar_chart(f"sensitive-{_key(name)}", labels, series, title=f"{name}: the worst classes against the table",
                     alt=alt, fmt="{:.0%}".format,
                     caption=f"Share of each value of {name} in the {against} and in the {len(worst)} classes where "
                             f"an adversary's best guess is most often right ({described}). The closer a class's "
                             "bars are to the table's, the less the class tells about its members.")


def attack_figure(name: str, rows: Sequence[tuple[str, int, int, float, str]]) -> Figure:
    """The records each single-release attack exposes in one sensitive column."""
    alt = f"Records exposed by each attack on {name}: " + "; ".join(
        f"{attack}: {records:,} records ({share:.2%}) in {classes:,} classes"
        for attack, classes, records, share, _ in rows) + "."
    return bar_chart(f"attacks-{_key(name)}", [r[0] for r in rows], {"records exposed": [float(r[2]) for r in rows]},
                     title=f"Attacks on {name}", alt=alt,
                     caption=f"Records whose value of {name} each attack learns or narrows down (counts only; "
                             "no record is named).")


def lattice_figures(manifest: Mapping, heights: Mapping[str, int]) -> list[Figure]:
    """For a full-domain search: each column's chosen level, and the share of the lattice checked."""
    node, search = manifest.get("node"), manifest.get("search")
    if not node or not search:
        return []
    names = list(node)
    top = max(list(node.values()) + list(heights.values()) + [1])
    scale = [float(heights.get(q) or top) for q in names]
    alt = "Chosen generalization levels: " + "; ".join(
        f"{q} level {node[q]}" + (f" of {heights[q]}" if q in heights else "") for q in names) + "."
    levels = bar_chart("lattice-levels", names, {"level": [float(node[q]) for q in names]}, scale=scale,
                       title="Generalization level per quasi-identifier", alt=alt,
                       caption="The level chosen for each quasi-identifier (0 publishes the original values); a full "
                               "bar is the top of the column's hierarchy" + ("" if heights else ", as far as known")
                               + ".")
    checked, total = int(search["nodes_checked"]), int(search["nodes_total"])
    region = bar_chart("lattice-region", ["lattice nodes"], {"checked": [float(checked)],
                                                             "pruned or skipped": [float(total - checked)]},
                       title="The lattice region explored",
                       alt=f"The search checked {checked:,} of the {total:,} nodes of the generalization lattice; "
                           f"the other {total - checked:,} were pruned by monotonicity or bounds.",
                       caption=f"Of the lattice's {total:,} nodes the search checked {checked:,} "
                               f"({checked / max(total, 1):.1%}); the others were decided without being checked.")
    return [levels, region]


def intersection_rows(summary: Mapping) -> list[tuple[str, str]]:
    """The intersection attack's outcome in words: counts of targets, never who they are."""
    n = summary["targets"]
    rows = [("sensitive column", summary["sensitive"]), ("targets attacked", f"{n:,}")]
    for rel in summary["releases"]:
        rows.append((rel["name"], f"{rel['rows']:,} records in {rel['classes']:,} classes; {rel['located']:,} targets "
                                  f"located, {rel['unlocated']:,} not"))
    rows.append(("distinct values left per target", f"{summary['mean_ea_prior']:.3g} in the best single release, "
                                                    f"{summary['mean_ea_posterior']:.3g} after the intersection "
                                                    "(averages)"))
    rows.append(("vulnerable targets (fewer values left than any single release leaves)",
                 f"{summary['vulnerable']:,} ({summary['vulnerable_share']:.2%})"))
    for entry in summary["pvp"]:
        rows.append((f"targets whose value is guessed with confidence ≥ {entry['confidence']:.3g}",
                     f"{entry['targets']:,} ({entry['percent']:.2f} %)"))
    return rows


def intersection_figure(summary: Mapping) -> Figure:
    """The targets the intersection breaches at each confidence level."""
    levels = summary["pvp"]
    labels = [f"confidence ≥ {e['confidence']:.3g}" for e in levels]
    alt = (f"Of {summary['targets']:,} targets, {summary['vulnerable']:,} are vulnerable; "
           + "; ".join(f"{e['targets']:,} at confidence at least {e['confidence']:.3g}" for e in levels) + ".")
    return bar_chart("intersection", labels, {"targets breached": [float(e["targets"]) for e in levels]},
                     title="The intersection attack", alt=alt,
                     caption="Targets whose sensitive value the releases together give away with at least each "
                             "confidence (1: a single value is left). Counts only; no target is named.")
