"""Brickell and Shmatikov's privacy/utility trade-off on Adult ("The cost of privacy", KDD 2008).

The bundled Adult table (quasi-identifiers sex, age, race, marital-status, education,
native-country, workclass; sensitive occupation) is anonymized over ranges of k (k-anonymity),
ℓ (entropy ℓ-diversity of occupation) and t (t-closeness of occupation, equal-distance EMD). For
every release, a workload of classifiers (:mod:`veil.attacks.tradeoff`) predicts from the
published quasi-identifiers

* the **sensitive** attribute, occupation, and
* a **neutral** attribute, salary-class (neither a quasi-identifier nor sensitive),

and the **accuracy gain** ``U_san − U_base`` is set against the adversary's **knowledge gain**
about occupation, ``A_know`` (and ``A_acc``). Two reference points bound every curve: trivial
sanitization (the quasi-identifiers and the other columns in two unlinked tables: no gain of
either kind, ``U_base``) and the original table (accuracy ``U_max`` at the original table's own
``A_know``).

**Anonymization.** Optimal full-domain generalization (:class:`veil.anonymize.FullDomain`,
minimal ``loss``) by default: the paper generalized Adult with full-domain k-anonymity,
ℓ-diversity and t-closeness (with LeFevre et al.'s implementation of generalization and
suppression), and full-domain recoding maps every original value to one published value, so a
classifier trained on published values reads every test record the same way. ℓ-diversity is the
entropy variant (the ℓ-diversity paper's main instantiation; distinct ℓ-diversity lets one value
dominate a class). t-closeness uses the equal ground distance, under which a class's EMD is its
A_diff: t bounds every class's knowledge gain, hence A_know. ``algorithm="mondrian"`` (strict, multidimensional local recoding)
is offered for comparison; it publishes finer cells and therefore sits further right on the
knowledge axis. A suppression limit (default 2 % of the records, as in ``veil demo``) lets the
search keep detail where a few outlying records would otherwise force generalization; suppressed
records are published as ``*`` in every quasi-identifier and keep their place in the workload.
Settings that reach the same release are measured once.

**Outputs.** ``tradeoff.csv`` (one row per release × target × classifier, and the two reference
rows per target × classifier), ``tradeoff.md`` (the same as tables, with the seed and the
setup) and ``tradeoff.png`` (one panel per classifier and target: accuracy gain against
``A_know``, one curve per privacy model, trivial sanitization and the original as reference
lines), written together: all of them or none.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from veil.attacks.tradeoff import CLASSIFIER_LABELS, DEFAULT_TEST_SIZE, TradeoffWorkload, classifier_names
from veil.errors import DataError, ParameterError

DEFAULT_K = (2, 5, 10, 25, 50, 100)
DEFAULT_L = (2, 3, 4, 6, 8)
DEFAULT_T = (0.5, 0.4, 0.3, 0.2, 0.15)
DEFAULT_SEED = 0
DEFAULT_SUPPRESSION = 0.02
ALGORITHMS = ("fulldomain", "mondrian")

SENSITIVE = "occupation"
NEUTRAL = "salary-class"
TARGETS = ((SENSITIVE, "sensitive"), (NEUTRAL, "neutral"))

FAMILIES = {"k": "k-anonymity", "l": "entropy ℓ-diversity", "t": "t-closeness"}
SYMBOLS = {"k": "k", "l": "ℓ", "t": "t"}
ORIGINAL = "original"
TRIVIAL = "trivial sanitization"

FILES = ("tradeoff.csv", "tradeoff.md", "tradeoff.png")
COLUMNS = ("family", "parameter", "value", "target", "role", "classifier", "a_know", "a_acc", "u_base", "u_san",
           "u_max", "accuracy_gain", "max_gain", "classes", "suppressed", "node", "algorithm", "suppression_limit",
           "records", "n_train", "n_test", "seed")


@dataclass(frozen=True)
class Setting:
    """One privacy requirement: ``parameter`` (``"k"``, ``"l"`` or ``"t"``) at ``value``."""

    parameter: str
    value: float

    @property
    def family(self) -> str:
        return FAMILIES[self.parameter]

    @property
    def label(self) -> str:
        return f"{SYMBOLS[self.parameter]} = {self.value:g}"

    def models(self):
        from veil.models import EntropyLDiversity, KAnonymity, TCloseness

        if self.parameter == "k":
            return [KAnonymity(int(self.value))]
        if self.parameter == "l":
            return [EntropyLDiversity(self.value, sensitive=SENSITIVE)]
        return [TCloseness(self.value, distance="equal", sensitive=SENSITIVE)]


@dataclass
class TradeoffRun:
    """The measurements of one run of the experiment.

    Attributes:
        rows: one dict per (release or reference) × target × classifier, keys :data:`COLUMNS`.
        settings: the privacy requirements measured, in order.
        config: the run's parameters (seed, algorithm, suppression limit, records, …).
        original: ``{"a_know": …, "a_acc": …}`` of the original table about occupation.
        seconds: wall-clock time of the run.
        releases: distinct releases measured (settings that reach the same release share one).
    """

    rows: list[dict]
    settings: list[Setting]
    config: dict
    original: dict
    seconds: float
    releases: int = 0

    @property
    def classifiers(self) -> tuple[str, ...]:
        return tuple(self.config["classifiers"])


def _values(values, parameter: str) -> list[float]:
    if values is None:
        return []
    if isinstance(values, str):
        raise ParameterError(f"give the values of {SYMBOLS[parameter]} as a list of numbers, not the text {values!r}.")
    if isinstance(values, (int, float, np.integer, np.floating)):
        values = [values]
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ParameterError(f"{SYMBOLS[parameter]} takes numbers, not {value!r}.")
        value = float(value)
        if not math.isfinite(value):
            raise ParameterError(f"{SYMBOLS[parameter]} must be a finite number, not {value}.")
        if value not in out:
            out.append(value)
    return sorted(out)


def settings_for(k, l, t, *, records: int, max_l: float) -> list[Setting]:
    """The privacy requirements to measure, checked against the table.

    Raises:
        ParameterError: k not a whole number in [2, records]; ℓ outside [2, max_l] (entropy
            ℓ-diversity cannot exceed the exponential of the whole table's entropy); t outside
            (0, 1); no setting at all.
    """
    settings = []
    for value in _values(k, "k"):
        if not value.is_integer() or not 2 <= value <= records:
            raise ParameterError(f"k must be a whole number from 2 to the {records} records, not {value:g}.")
        settings.append(Setting("k", int(value)))
    for value in _values(l, "l"):
        if not 2 <= value <= max_l + 1e-9:
            raise ParameterError(f"ℓ must be from 2 to {max_l:.2f} (entropy ℓ-diversity of {SENSITIVE} cannot exceed "
                                 f"the whole table's exp(entropy)), not {value:g}.")
        settings.append(Setting("l", int(value) if value.is_integer() else value))
    for value in _values(t, "t"):
        if not 0 < value < 1:
            raise ParameterError(f"t must be between 0 and 1 (exclusive), not {value:g}.")
        settings.append(Setting("t", value))
    if not settings:
        raise ParameterError("give at least one value of k, ℓ or t to anonymize with.")
    return settings


def adult_table(sample: int | None, rng: np.random.Generator):
    """The bundled Adult table, or ``sample`` of its records drawn without replacement."""
    from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, load_adult
    from veil.data.dataset import Dataset

    adult = load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)
    if sample is None:
        return adult
    if isinstance(sample, bool) or not isinstance(sample, (int, np.integer)) or not 50 <= sample <= adult.num_rows:
        raise ParameterError(f"the sample must be a whole number of records from 50 to {adult.num_rows}, "
                             f"not {sample!r}.")
    if sample == adult.num_rows:
        return adult
    import pyarrow as pa

    keep = np.sort(rng.choice(adult.num_rows, size=int(sample), replace=False))
    table = adult.table.data.take(pa.array(keep))
    return Dataset(table, quasi_identifiers=adult.quasi_identifiers, sensitive=adult.sensitive,
                   hierarchies=adult.hierarchies)


def _anonymize(dataset, setting: Setting, algorithm: str, suppression: float):
    from veil.anonymize import FullDomain, Mondrian

    models = setting.models()
    if algorithm == "fulldomain":
        anonymizer = FullDomain(models, suppression_limit=suppression, metric="loss").fit(dataset)
    else:
        anonymizer = Mondrian(models, mode="strict").fit(dataset)
    # The trade-off compares each published row with its original record, so the rows keep the
    # input's order (the release is measured, never published).
    return anonymizer.transform(dataset, shuffle=False)


def _release_key(release) -> str:
    """Two settings that publish the same records in the same cells share this key."""
    classes = release.classes
    digest = hashlib.sha1()
    digest.update(np.ascontiguousarray(classes.row_class).tobytes())
    digest.update(np.ascontiguousarray(release.failing[classes.row_class]).tobytes())
    for j in range(len(release.dataset.quasi_identifiers)):
        digest.update("\x1f".join(map(str, classes.cells(j).labels)).encode("utf-8"))
    return digest.hexdigest()


def _node(release) -> str:
    levels = [release.classes.cells(j).level for j in range(len(release.dataset.quasi_identifiers))]
    return "".join(str(v) for v in levels) if all(v is not None for v in levels) else ""


def run_tradeoff(*, k: Sequence[int] | None = DEFAULT_K, l: Sequence[float] | None = DEFAULT_L,
                 t: Sequence[float] | None = DEFAULT_T, seed: int = DEFAULT_SEED,
                 classifiers: Sequence[str] | str | None = None, algorithm: str = "fulldomain",
                 suppression: float = DEFAULT_SUPPRESSION, sample: int | None = None,
                 test_size: float = DEFAULT_TEST_SIZE,
                 progress: Callable[[int, int], None] | None = None) -> TradeoffRun:
    """Run the experiment (see the module) and return its measurements.

    Args:
        k: the values of k to anonymize with (``None`` or empty skips k-anonymity).
        l: the values of ℓ to anonymize with (``None`` or empty skips ℓ-diversity).
        t: the values of t to anonymize with (``None`` or empty skips t-closeness).
        seed: the seed of the sample, the splits and the classifiers (recorded in every output).
        classifiers: the workload's classifiers (default: tree, bayes, logistic).
        algorithm: ``"fulldomain"`` (default) or ``"mondrian"``.
        suppression: the share of records full-domain generalization may suppress, in [0, 1).
        sample: draw this many Adult records (at least 50) instead of using all 30,162.
        test_size: the share of each target value's records held out for testing.
        progress: called as ``progress(done, total)`` after each release.

    Raises:
        ParameterError: a value of k, ℓ or t out of range, an unknown classifier or algorithm, a
            suppression limit outside [0, 1), a bad sample size or seed.
    """
    started = time.perf_counter()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"the seed must be a whole number 0 or more, not {seed!r}.")
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"unknown algorithm {algorithm!r}; use {' or '.join(ALGORITHMS)}.")
    if isinstance(suppression, bool) or not isinstance(suppression, (int, float)) or not 0 <= suppression < 1:
        raise ParameterError(f"the suppression limit is a share of records in [0, 1), not {suppression!r}.")
    names = classifier_names(classifiers)
    master = np.random.default_rng(int(seed))
    sample_rng, split_rng = master.spawn(2)
    dataset = adult_table(sample, sample_rng)
    counts = dataset.column(SENSITIVE).counts()
    share = counts[counts > 0] / counts.sum()
    max_l = float(np.exp(-(share * np.log(share)).sum()))
    settings = settings_for(k, l, t, records=dataset.num_rows, max_l=max_l)

    from veil.attacks.disclosure import disclosure
    from veil.classes import EquivalenceClasses

    workloads = {target: TradeoffWorkload(dataset, target, classifiers=names, test_size=test_size, rng=gen)
                 for (target, _), gen in zip(TARGETS, split_rng.spawn(len(TARGETS)))}
    found = disclosure(EquivalenceClasses.from_dataset(dataset), SENSITIVE)
    original = {"a_know": found.a_know, "a_acc": found.a_acc}
    config = {"experiment": "tradeoff", "data": "adult", "records": dataset.num_rows, "sample": sample,
              "seed": int(seed), "algorithm": algorithm,
              "suppression_limit": float(suppression) if algorithm == "fulldomain" else 0.0,
              "classifiers": list(names), "test_size": float(test_size),
              "quasi_identifiers": list(dataset.quasi_identifiers), "sensitive": SENSITIVE, "neutral": NEUTRAL,
              "k": [s.value for s in settings if s.parameter == "k"],
              "l": [s.value for s in settings if s.parameter == "l"],
              "t": [s.value for s in settings if s.parameter == "t"]}
    common = {"algorithm": algorithm, "suppression_limit": config["suppression_limit"],
              "records": dataset.num_rows, "seed": int(seed)}

    original_classes = EquivalenceClasses.from_dataset(dataset, track=()).n_classes
    original_node = "0" * len(dataset.quasi_identifiers) if algorithm == "fulldomain" else ""
    rows: list[dict] = []
    for target, role in TARGETS:
        w = workloads[target]
        u_max = w.u_max
        for c in names:
            base = {"target": target, "role": role, "classifier": c, "u_base": w.u_base, "u_max": u_max[c],
                    "max_gain": u_max[c] - w.u_base, "n_train": w.n_train, "n_test": w.n_test, **common}
            rows.append({**base, "family": TRIVIAL, "parameter": "", "value": "", "a_know": 0.0, "a_acc": 0.0,
                         "u_san": w.u_base, "accuracy_gain": 0.0, "classes": 1, "suppressed": 0,
                         "node": ""})
            rows.append({**base, "family": ORIGINAL, "parameter": "", "value": "", "a_know": original["a_know"],
                         "a_acc": original["a_acc"], "u_san": u_max[c], "accuracy_gain": u_max[c] - w.u_base,
                         "classes": original_classes, "suppressed": 0, "node": original_node})

    measured: dict[str, dict] = {}
    for done, setting in enumerate(settings, start=1):
        release = _anonymize(dataset, setting, algorithm, suppression)
        key = _release_key(release)
        if key not in measured:
            measured[key] = {target: workloads[target].measure(release, sensitive=SENSITIVE)
                             for target, _ in TARGETS}
        for target, role in TARGETS:
            result = measured[key][target]
            for c in names:
                rows.append({"family": setting.family, "parameter": setting.parameter, "value": setting.value,
                             "target": target, "role": role, "classifier": c, "a_know": result.a_know,
                             "a_acc": result.a_acc, "u_base": result.u_base, "u_san": result.u_san[c],
                             "u_max": result.u_max[c], "accuracy_gain": result.u_san[c] - result.u_base,
                             "max_gain": result.u_max[c] - result.u_base,
                             "classes": release.released_classes.n_classes, "suppressed": result.suppressed,
                             "node": _node(release), "n_train": result.n_train, "n_test": result.n_test,
                             **common})
        if progress is not None:
            progress(done, len(settings))
    return TradeoffRun(rows, settings, config, original, time.perf_counter() - started, releases=len(measured))


# --------------------------------------------------------------------------------------------- outputs


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") if math.isfinite(value) else ""
    return str(value)


def csv_text(run: TradeoffRun) -> str:
    """The run's rows as CSV (columns :data:`COLUMNS`; shares with 6 decimals)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in run.rows:
        writer.writerow([_cell(row[c]) if c != "value" or row[c] == "" else f"{row[c]:g}" for c in COLUMNS])
    return out.getvalue()


def markdown_text(run: TradeoffRun) -> str:
    """The run as Markdown: the setup, then one table per target."""
    cfg = run.config
    names = run.classifiers
    lines = ["## Privacy/utility trade-off on Adult (Brickell and Shmatikov, KDD 2008)", ""]
    lines.append(
        f"{cfg['records']:,} records of the bundled Adult table"
        + (" (a sample drawn with the seed)" if cfg["sample"] else "")
        + f"; quasi-identifiers {', '.join(cfg['quasi_identifiers'])}; sensitive {SENSITIVE}; neutral {NEUTRAL}. "
        + ("Optimal full-domain generalization (minimal loss) with at most "
           f"{cfg['suppression_limit']:.0%} of the records suppressed (shown as `*`)"
           if cfg["algorithm"] == "fulldomain" else "Mondrian (strict) multidimensional generalization")
        + " for k-anonymity, entropy ℓ-diversity and t-closeness (equal-distance EMD) of occupation. "
        f"**Seed {cfg['seed']}** (sample, splits, classifiers); stratified split with "
        f"{cfg['test_size']:.0%} of each target value's records held out for testing. "
        f"{run.releases} distinct releases for {len(run.settings)} settings; run time {run.seconds:.1f} s.")
    lines.append("")
    lines.append("Classifiers: " + "; ".join(f"{c} = {CLASSIFIER_LABELS[c]}" for c in names) + ". "
                 "Features: the quasi-identifiers, one category per published value. "
                 "*U_san*: accuracy trained and tested on the published values; *U_base*: trivial sanitization "
                 "(quasi-identifiers unlinked from the target: the most common value); *U_max*: the original "
                 "values. *A_know*, *A_acc*: the adversary's knowledge and accuracy gain about occupation. "
                 "*Gain* = U_san − U_base.")
    for target, role in TARGETS:
        rows = [r for r in run.rows if r["target"] == target]
        first = rows[0]
        lines += ["", f"### Predicting {target} ({role})", "",
                  f"U_base = {first['u_base']:.4f}; U_max: "
                  + ", ".join(f"{c} {next(r['u_max'] for r in rows if r['classifier'] == c):.4f}" for c in names)
                  + ".", ""]
        header = ["Setting", "Node", "Classes", "Suppressed", "A_know", "A_acc"]
        header += [f"{c} U_san" for c in names] + [f"{c} gain" for c in names]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|---|---|" + "---:|" * (len(header) - 2))
        order = [(TRIVIAL, "", ""), (ORIGINAL, "", "")] + [(s.family, s.parameter, s.value) for s in run.settings]
        for family, parameter, value in order:
            picked = {r["classifier"]: r for r in rows
                      if r["family"] == family and r["parameter"] == parameter and r["value"] == value}
            r = picked[names[0]]
            label = family if not parameter else f"{family}, {SYMBOLS[parameter]} = {value:g}"
            cells = [label, f"`{r['node']}`" if r["node"] else "", f"{r['classes']:,}", f"{r['suppressed']:,}",
                     f"{r['a_know']:.4f}", f"{r['a_acc']:.4f}"]
            cells += [f"{picked[c]['u_san']:.4f}" for c in names]
            cells += [f"{picked[c]['accuracy_gain']:+.4f}" for c in names]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


MARKERS = {"k": "o", "l": "s", "t": "^"}
COLORS = {"k": "tab:blue", "l": "tab:orange", "t": "tab:green"}


def figure_png(run: TradeoffRun) -> bytes:
    """The trade-off curves as PNG bytes: a panel per classifier (rows) and target (columns)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = run.classifiers
    fig = Figure(figsize=(11, 3.4 * len(names) + 0.9), dpi=110)
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(names), len(TARGETS), squeeze=False)
    handles = {}
    for i, c in enumerate(names):
        for j, (target, role) in enumerate(TARGETS):
            ax = axes[i][j]
            rows = [r for r in run.rows if r["target"] == target and r["classifier"] == c]
            ref = next(r for r in rows if r["family"] == ORIGINAL)
            h = ax.axhline(0.0, color="0.35", lw=1.2, label=f"{TRIVIAL} (U_base)")
            handles.setdefault("trivial", h)
            h = ax.axhline(ref["max_gain"], color="black", lw=1.2, ls="--", label="original table (U_max)")
            handles.setdefault("original", h)
            h = ax.scatter([ref["a_know"]], [ref["max_gain"]], marker="*", s=140, color="black", zorder=3,
                           label="original table (its A_know)")
            handles.setdefault("original point", h)
            for parameter in FAMILIES:
                # Joined along the knowledge axis: the trade-off each model offers, its parameter
                # written beside each point (a larger k need not mean a coarser release).
                points = sorted(((r["value"], r["a_know"], r["accuracy_gain"]) for r in rows
                                 if r["parameter"] == parameter), key=lambda p: (p[1], p[2]))
                if not points:
                    continue
                xs, ys = [p[1] for p in points], [p[2] for p in points]
                (h,) = ax.plot(xs, ys, marker=MARKERS[parameter], color=COLORS[parameter], lw=1, ms=5,
                               label=FAMILIES[parameter])
                handles.setdefault(parameter, h)
                for value, x, y in points:
                    ax.annotate(f"{SYMBOLS[parameter]}={value:g}", (x, y), textcoords="offset points",
                                xytext=(3, 3), fontsize=6, color=COLORS[parameter])
            ax.set_title(f"{CLASSIFIER_LABELS[c]}: predicting {target} ({role})\n"
                         f"U_base {ref['u_base']:.3f}, U_max {ref['u_max']:.3f}", fontsize=8.5)
            ax.set_xlabel(f"knowledge gain A_know ({SENSITIVE})", fontsize=8)
            ax.set_ylabel("accuracy gain U_san − U_base", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, color="0.9", lw=0.6)
            ax.set_xlim(left=-0.01)
    cfg = run.config
    how = (f"full-domain generalization, ≤ {cfg['suppression_limit']:.0%} suppressed"
           if cfg["algorithm"] == "fulldomain" else "Mondrian (strict)")
    fig.suptitle(f"Adult ({cfg['records']:,} records), {how}: accuracy gain against knowledge gain "
                 f"(seed {cfg['seed']})", fontsize=10)
    fig.legend(list(handles.values()), [h.get_label() for h in handles.values()], loc="lower center",
               ncol=len(handles), fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def write_tradeoff(run: TradeoffRun, out: str | os.PathLike) -> list[Path]:
    """Write ``tradeoff.csv``, ``tradeoff.md`` and ``tradeoff.png`` into the folder ``out``
    (created if missing): all three appear, or none does.

    Raises:
        DataError: ``out`` is a file, or cannot be created.
    """
    from veil.output.writer import write_files

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{str(folder)!r} is a file; give a folder for the experiment's outputs.")
    texts = {folder / FILES[0]: csv_text(run), folder / FILES[1]: markdown_text(run)}
    return write_files({**texts, folder / FILES[2]: figure_png(run)}, make_folders=True)


def tradeoff_experiment(out: str | os.PathLike, **options) -> TradeoffRun:
    """Run the experiment (options as :func:`run_tradeoff`) and write its outputs into ``out``."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{str(folder)!r} is a file; give a folder for the experiment's outputs.")
    run = run_tradeoff(**options)
    write_tradeoff(run, folder)
    return run
