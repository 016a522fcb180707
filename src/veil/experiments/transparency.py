"""The adversary who knows the algorithm, on Adult: veil's optimal full-domain search, Mondrian
and Ace against the minimality attack.

For ℓ in 2 … 8, the bundled Adult table (quasi-identifiers sex, age, race, marital-status,
education, native-country, workclass; sensitive occupation) is anonymized three ways:

* optimal full-domain generalization (:class:`~veil.anonymize.FullDomain`, least loss, no
  suppression) under ℓ-diversity of occupation (distinct by default, or entropy);
* Mondrian (strict, categorical columns along their hierarchies) under the same model;
* Ace (:class:`~veil.anonymize.Ace`), transparent ℓ-diversity, with a seeded Assign (an
  experiment, reproducible).

Each release is attacked by an adversary who knows everyone's quasi-identifiers and the algorithm
(:class:`~veil.attacks.minimality.MinimalityAttack` with :class:`OptimalFullDomain`,
:class:`MondrianProcess` and :class:`AceProcess`), and the experiment reports the share of the
people whose posterior of some occupation exceeds 1/ℓ. Adult is far too large to enumerate the
inputs, so the attack bounds (see :mod:`veil.attacks.minimality`): the share is exact where the
attack proves it (classes no rejected node can touch; Ace, whose posteriors are at most 1/ℓ by
Xiao, Tao and Koudas's Lemma 2) and otherwise a lower bound, and each row says which. A
setting the data cannot meet (ℓ = 8 for Ace: the most frequent occupation holds more than 1/8 of
Adult) is reported as such. The rows also carry each release's utility: NCP (``loss``),
discernibility and the workload's mean relative error.

**Outputs.** ``transparency.csv`` (one row per algorithm and ℓ), ``transparency.md`` (the same as
a table, with the setup) and ``transparency.png`` (the share against ℓ, a filled marker where it
is exact and a hollow one where it is a lower bound; and NCP against ℓ), written together: all of
them or none.
"""

from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from veil.errors import DataError, InfeasibleError, ParameterError
from veil.experiments.csv_rows import rows_csv

DEFAULT_L = (2, 3, 4, 5, 6, 7, 8)
DEFAULT_SEED = 0
MODELS = ("distinct", "entropy")
ALGORITHMS = ("fulldomain", "mondrian", "ace")
LABELS = {"fulldomain": "optimal full-domain", "mondrian": "Mondrian (strict)", "ace": "Ace"}
SENSITIVE = "occupation"
FILES = ("transparency.csv", "transparency.md", "transparency.png")
COLUMNS = ("algorithm", "l", "model", "status", "classes", "people", "exceeding", "share", "exact",
           "people_known_exactly", "loss", "discernibility", "workload", "seconds_anonymize", "seconds_attack",
           "records", "seed", "note")


@dataclass
class TransparencyRun:
    """The measurements of one run.

    Attributes:
        rows: one dict per algorithm and ℓ, keys :data:`COLUMNS`.
        config: the run's parameters (ℓ values, model, seed, records, …).
        seconds: wall-clock time of the run.
    """

    rows: list[dict]
    config: dict
    seconds: float


def _check(ls: Sequence[int], model: str) -> list[int]:
    if model not in MODELS:
        raise ParameterError(f"the experiment's model is 'distinct' or 'entropy' ℓ-diversity, not {model!r}.")
    out = []
    for value in ls:
        if isinstance(value, bool) or not float(value).is_integer() or value < 2:
            raise ParameterError(f"each ℓ is a whole number of at least 2, not {value!r}.")
        out.append(int(value))
    if not out:
        raise ParameterError("give at least one value of ℓ.")
    return sorted(set(out))


def _anonymize(dataset, algorithm: str, l: int, model: str, seed: int):
    from veil.anonymize import Ace, FullDomain, Mondrian
    from veil.attacks.minimality import AceProcess, MondrianProcess, OptimalFullDomain
    from veil.models import DistinctLDiversity, EntropyLDiversity

    models = [(DistinctLDiversity if model == "distinct" else EntropyLDiversity)(l, sensitive=SENSITIVE)]
    if algorithm == "fulldomain":
        return FullDomain(models, metric="loss").fit_transform(dataset), OptimalFullDomain(models, metric="loss")
    if algorithm == "mondrian":
        return Mondrian(models).fit_transform(dataset), MondrianProcess(models)
    return Ace(l=l, sensitive=SENSITIVE, rng=seed).fit_transform(dataset), AceProcess(l)


def run_transparency(*, l: Sequence[int] = DEFAULT_L, model: str = "distinct", seed: int = DEFAULT_SEED,
                     sample: int | None = None, algorithms: Sequence[str] = ALGORITHMS,
                     progress: Callable[[int, int], None] | None = None) -> TransparencyRun:
    """Anonymize Adult for every ℓ with every algorithm and attack each release.

    Args:
        l: the values of ℓ (whole numbers ≥ 2).
        model: ``"distinct"`` or ``"entropy"`` ℓ-diversity for full-domain and Mondrian.
        seed: the seed of Ace's Assign and of the sample.
        sample: use this many Adult records, drawn with the seed (default: all).
        algorithms: a subset of ``fulldomain``, ``mondrian``, ``ace``.
        progress: called as ``progress(done, total)`` after each release.

    Raises:
        ParameterError: an ℓ below 2 or not whole, an unknown model or algorithm, a bad sample or seed.
    """
    from veil.attacks.minimality import MinimalityAttack
    from veil.data.dataset import Dataset
    from veil.experiments.tradeoff import adult_table

    started = time.perf_counter()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"the seed must be a whole number 0 or more, not {seed!r}.")
    ls = _check(l, model)
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        raise ParameterError(f"the algorithms are {', '.join(ALGORITHMS)}, not {unknown[0] if unknown else 'none'!r}.")
    dataset = adult_table(sample, np.random.default_rng(seed))
    qis = dataset.quasi_identifiers
    population = Dataset(dataset.table.data.select(qis), quasi_identifiers=qis,
                         hierarchies={q: dataset.hierarchies[q] for q in qis})
    rows = []
    total = len(ls) * len(algorithms)
    for value in ls:
        for algorithm in algorithms:
            row = {c: "" for c in COLUMNS}
            row.update(algorithm=algorithm, l=value, model="transparent" if algorithm == "ace" else model,
                       records=dataset.num_rows, seed=seed, people=dataset.num_rows)
            t0 = time.perf_counter()
            try:
                release, publisher = _anonymize(dataset, algorithm, value, model, seed)
            except InfeasibleError as exc:
                row.update(status="infeasible", note=str(exc))
                rows.append(row)
                if progress:
                    progress(len(rows), total)
                continue
            t1 = time.perf_counter()
            attack = MinimalityAttack(publisher).fit(release, population, sensitive=SENSITIVE,
                                                     quasi_identifiers=qis)
            t2 = time.perf_counter()
            metrics = release.private_manifest["metrics"]
            note = attack.proven_ or ("" if attack.count_exact_ else
                                      f"lower bound; exact for {attack.exact_people_:,} of {dataset.num_rows:,} people")
            row.update(status="ok", classes=release.released_classes.n_classes, exceeding=attack.exceeding_,
                       share=attack.exceeding_ / dataset.num_rows, exact=attack.count_exact_,
                       people_known_exactly=attack.exact_people_, loss=metrics.get("loss"),
                       discernibility=metrics.get("discernibility"), workload=metrics.get("workload"),
                       seconds_anonymize=t1 - t0, seconds_attack=t2 - t1, note=note)
            rows.append(row)
            if progress:
                progress(len(rows), total)
    config = {"l": ls, "model": model, "seed": seed, "sample": sample, "records": dataset.num_rows,
              "quasi_identifiers": qis, "algorithms": list(algorithms)}
    return TransparencyRun(rows, config, time.perf_counter() - started)


def _cell(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return str(value)


def csv_text(run: TransparencyRun) -> str:
    """The run's rows as CSV (columns :data:`COLUMNS`)."""
    return rows_csv(COLUMNS, run.rows, _cell)


def markdown_text(run: TransparencyRun) -> str:
    """The run as Markdown: the setup, then one table."""
    cfg = run.config
    lines = ["## The adversary who knows the algorithm, on Adult", "",
             f"{cfg['records']:,} records of the bundled Adult table; quasi-identifiers {', '.join(cfg['quasi_identifiers'])}; "
             f"sensitive {SENSITIVE}. Full-domain (optimal, least loss, no suppression) and Mondrian (strict) under "
             f"{cfg['model']} ℓ-diversity; Ace under transparent ℓ-diversity (Assign seeded with {cfg['seed']}). "
             "Each release is attacked by the minimality attack (the adversary knows everyone's "
             "quasi-identifiers and the algorithm); *exposed* counts the people whose posterior of some occupation "
             "exceeds 1/ℓ: exact where marked, otherwise a lower bound (see `veil.attacks.minimality`). "
             f"Run time {run.seconds:.1f} s.", "",
             "| algorithm | ℓ | classes | exposed | share | exact | NCP | discernibility | workload error | note |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---|"]
    for r in run.rows:
        if r["status"] != "ok":
            lines.append(f"| {LABELS[r['algorithm']]} | {r['l']} | | | | | | | | {r['note']} |")
            continue
        lines.append(f"| {LABELS[r['algorithm']]} | {r['l']} | {r['classes']:,} | {'' if r['exact'] else '≥ '}"
                     f"{r['exceeding']:,} | {r['share']:.1%} | {'yes' if r['exact'] else 'bound'} | {r['loss']:.4f} | "
                     f"{r['discernibility']:,.0f} | {r['workload']:.4f} | {r['note']} |")
    lines.append("")
    return "\n".join(lines)


COLORS = {"fulldomain": "tab:blue", "mondrian": "tab:orange", "ace": "tab:green"}
MARKERS = {"fulldomain": "o", "mondrian": "s", "ace": "^"}


def figure_png(run: TransparencyRun) -> bytes:
    """The share of exposed people and the NCP against ℓ, as PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4.2), dpi=110)
    FigureCanvasAgg(fig)
    share_ax, loss_ax = fig.subplots(1, 2)
    for algorithm in run.config["algorithms"]:
        rows = [r for r in run.rows if r["algorithm"] == algorithm and r["status"] == "ok"]
        if not rows:
            continue
        xs = [r["l"] for r in rows]
        color, marker = COLORS[algorithm], MARKERS[algorithm]
        share_ax.plot(xs, [r["share"] for r in rows], color=color, lw=1, label=LABELS[algorithm])
        for r in rows:
            share_ax.scatter([r["l"]], [r["share"]], marker=marker, s=36, zorder=3, color=color if r["exact"] else
                             "white", edgecolors=color)
        loss_ax.plot(xs, [r["loss"] for r in rows], color=color, lw=1, marker=marker, ms=5, label=LABELS[algorithm])
    share_ax.set_xlabel("ℓ")
    share_ax.set_ylabel("share of people with a posterior above 1/ℓ")
    share_ax.set_title("minimality attack (filled: exact, hollow: lower bound)", fontsize=9)
    share_ax.set_ylim(-0.02, 1.02)
    loss_ax.set_xlabel("ℓ")
    loss_ax.set_ylabel("NCP (loss)")
    loss_ax.set_title("utility lost", fontsize=9)
    for ax in (share_ax, loss_ax):
        ax.grid(True, color="0.9", lw=0.6)
        ax.legend(fontsize=8, frameon=False)
    cfg = run.config
    fig.suptitle(f"Adult ({cfg['records']:,} records), {cfg['model']} ℓ-diversity vs transparent ℓ-diversity (Ace)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def write_transparency(run: TransparencyRun, out: str | os.PathLike) -> list[Path]:
    """Write ``transparency.csv``, ``transparency.md`` and ``transparency.png`` into the folder
    ``out`` (created if missing): all three appear, or none does.

    Raises:
        DataError: ``out`` is a file, or cannot be created.
    """
    from veil.output import write_files

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{str(folder)!r} is a file; give a folder for the experiment's outputs.")
    texts = {folder / FILES[0]: csv_text(run), folder / FILES[1]: markdown_text(run)}
    return write_files({**texts, folder / FILES[2]: figure_png(run)}, make_folders=True)
