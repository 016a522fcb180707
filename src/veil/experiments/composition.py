"""The composition experiment of Ganta, Kasiviswanathan and Smith (KDD 2008, Section 3) on Adult.

From the bundled Adult table (30,162 records; quasi-identifiers age, workclass, education,
marital status, race, sex, native country; sensitive occupation, 14 values: the paper's Table 2)
the experiment draws n subsets that share an overlap population P of ``overlap`` people
(5,000 in the paper) and otherwise hold disjoint random records, anonymizes each subset
independently, and runs the intersection attack (:mod:`veil.attacks.intersection`) on the
overlap population, each target knowing their own quasi-identifiers.

**Sampling.** One generator, ``numpy.random.default_rng(seed)``, permutes the rows: the first
``overlap`` rows of the permutation are P, the next ``size − overlap`` rows go to subset 1, the
next to subset 2, and so on; each subset's rows are then put in an order drawn from the same
generator. With ``size`` left out every subset gets an equal share of the records outside P for
the largest number of releases asked (the paper says only that the subsets were drawn without
replacement). The same subsets serve every k, pair and variant, and a run with several numbers
of releases uses the first n subsets, so the settings are compared on the same people.

**Pairs.** ``mondrian-mondrian``, ``mdav-mdav`` and ``mondrian-mdav`` are the paper's three
scenarios (Section 3.2.1): Mondrian (strict multidimensional partitioning along the Adult
hierarchies; LeFevre et al.) and MDAV microaggregation (Domingo-Ferrer and Mateo-Sanz; located by
nearest centroid). With more than two releases a pair's algorithms repeat in turn
(``mondrian-mdav`` with 3 releases: Mondrian, MDAV, Mondrian); a name may also list one algorithm
per release (``mondrian-mdav-mdav``). ``fulldomain`` (optimal full-domain generalization, 2 %
suppression) may appear too.

**Variants.** ``k``: k-anonymity; ``l``: k-anonymity and entropy ℓ-diversity of occupation
(Definition 4); ``t``: k-anonymity and t-closeness of occupation (equal ground distance;
Definition 5). The paper varies ℓ and t at k = 10 (Section 3.4); here ℓ and t are fixed and k
varies, like every other curve.

**Measures** per setting (means over the overlap population; Section 2.1's definitions): the
class size and the effective anonymity EA_ij of each release, the prior min_j EA_ij, the posterior
EA^_i, the average Anon_Drop, the vulnerable population VP (Anon_Drop > 0) and PVP_C for each
confidence level (C = 1: perfect breach, Section 3.2.1; lower: partial breach, Section 3.2.2). Since
the experiment knows who is who, it also reports how many targets were located in their true class
and how many perfect breaches name the true value (a nearest-centroid miss can pin a wrong one).

**Outputs** (written together, or none): ``composition.csv`` (every measure), ``composition.md``
(the main ones as a Markdown table), ``composition.png`` (the paper's figures 1–5 as panels) and
``composition.json`` (settings, seed, subset sizes and digest, versions, timings).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, load_adult
from veil.data.dataset import Dataset
from veil.errors import DataError, ParameterError
from veil.output import write_files

ALGORITHMS = ("mondrian", "mdav", "fulldomain")
DEFAULT_K = (5, 10, 15, 20, 25, 30, 40, 50)
DEFAULT_PAIRS = ("mondrian-mondrian", "mdav-mdav", "mondrian-mdav")
VARIANTS = ("k", "l", "t")
DEFAULT_CONFIDENCE = (1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5)
FILES = ("composition.csv", "composition.md", "composition.png", "composition.json")
FULLDOMAIN_SUPPRESSION = 0.02


@dataclass(frozen=True)
class CompositionSettings:
    """What the composition experiment runs (see the module notes).

    Attributes:
        k: the values of k (each ≥ 2).
        releases: the numbers of releases n (each 2 … 4).
        pairs: the algorithm combinations, e.g. ``"mondrian-mdav"``.
        overlap: the size of the overlap population P.
        size: records per subset (P included); ``None``: P plus an equal share of the rest.
        seed: the seed of the one generator that draws the subsets.
        variants: ``"k"``, ``"l"`` and/or ``"t"``.
        l: ℓ of the entropy ℓ-diversity variant.
        t: t of the t-closeness variant.
        confidence: the levels C of PVP_C, in (0, 1] (1, the perfect breach, is always added).
    """

    k: tuple[int, ...] = DEFAULT_K
    releases: tuple[int, ...] = (2,)
    pairs: tuple[str, ...] = DEFAULT_PAIRS
    overlap: int = 5000
    size: int | None = None
    seed: int = 0
    variants: tuple[str, ...] = ("k",)
    l: float = 3.0
    t: float = 0.2
    confidence: tuple[float, ...] = DEFAULT_CONFIDENCE

    def algorithms(self, pair: str, n: int) -> list[str]:
        """The algorithm of each of ``n`` releases under ``pair``."""
        parts = pair.split("-")
        if len(parts) == n:
            return parts
        return [parts[i % len(parts)] for i in range(n)]


def check_settings(settings: CompositionSettings, rows: int) -> CompositionSettings:
    """Validate the settings against a table of ``rows`` records; returns them normalized.

    Raises:
        ParameterError: a value out of range, an unknown pair or variant, subsets that do not fit.
    """
    if not settings.k:
        raise ParameterError("give at least one value of k.")
    for k in settings.k:
        if isinstance(k, bool) or int(k) != k or k < 2:
            raise ParameterError(f"every k must be a whole number of at least 2, not {k}.")
    if not settings.releases:
        raise ParameterError("give the number of releases (2 to 4).")
    for n in settings.releases:
        if isinstance(n, bool) or int(n) != n or not 2 <= n <= 4:
            raise ParameterError(f"the number of releases must be 2, 3 or 4, not {n}.")
    if not settings.pairs:
        raise ParameterError("give at least one pair of algorithms, such as mondrian-mdav.")
    for pair in settings.pairs:
        parts = pair.split("-")
        unknown = [p for p in parts if p not in ALGORITHMS]
        if unknown:
            raise ParameterError(f"unknown algorithm {unknown[0]!r} in pair {pair!r}; use {', '.join(ALGORITHMS)} "
                                 "joined by '-' (mondrian-mdav).")
        for n in settings.releases:
            if len(parts) not in (1, 2, n):
                raise ParameterError(f"pair {pair!r} names {len(parts)} algorithms for {n} releases; name one per "
                                     "release, or two to alternate.")
    if isinstance(settings.seed, bool) or int(settings.seed) != settings.seed or settings.seed < 0:
        raise ParameterError(f"the seed must be a whole number 0 or more, not {settings.seed}.")
    if not settings.variants:
        raise ParameterError("give at least one variant: k, l or t.")
    for v in settings.variants:
        if v not in VARIANTS:
            raise ParameterError(f"unknown variant {v!r}; use k (k-anonymity), l (plus entropy ℓ-diversity) or t "
                                 "(plus t-closeness).")
    if "l" in settings.variants and not (math.isfinite(settings.l) and settings.l >= 1):
        raise ParameterError(f"ℓ must be a finite number of at least 1, not {settings.l}.")
    if "t" in settings.variants and not 0 < settings.t <= 1:
        raise ParameterError(f"t must be in (0, 1], not {settings.t}.")
    for c in settings.confidence:
        if not 0 < c <= 1:
            raise ParameterError(f"a confidence level must be in (0, 1] (1 is a perfect breach), not {c}.")
    confidence = tuple(dict.fromkeys(float(c) for c in settings.confidence))
    if 1.0 not in confidence:
        confidence = (1.0,) + confidence  # the perfect breach is always reported
    if isinstance(settings.overlap, bool) or int(settings.overlap) != settings.overlap or settings.overlap < 1:
        raise ParameterError(f"the overlap must be a whole number of at least 1, not {settings.overlap}.")
    n_max = max(settings.releases)
    if settings.overlap > rows:
        raise ParameterError(f"the overlap of {settings.overlap:,} people exceeds the table's {rows:,} records.")
    if settings.size is None:
        size = settings.overlap + (rows - settings.overlap) // n_max
    else:
        size = int(settings.size)
        if size < settings.overlap:
            raise ParameterError(f"a subset of {size:,} records cannot hold the overlap of {settings.overlap:,}.")
        if settings.overlap + n_max * (size - settings.overlap) > rows:
            raise ParameterError(f"{n_max} subsets of {size:,} records sharing {settings.overlap:,} need "
                                 f"{settings.overlap + n_max * (size - settings.overlap):,} records, more than the "
                                 f"table's {rows:,}; lower --size or --overlap.")
    if size < max(settings.k):
        raise ParameterError(f"k = {max(settings.k)} is larger than the subsets' {size:,} records.")
    return CompositionSettings(tuple(int(k) for k in settings.k), tuple(int(n) for n in settings.releases),
                               tuple(settings.pairs), int(settings.overlap), size, int(settings.seed),
                               tuple(dict.fromkeys(settings.variants)), float(settings.l), float(settings.t),
                               confidence)


@dataclass
class CompositionResult:
    """The experiment's outcome.

    Attributes:
        settings: the (normalized) settings.
        rows: one dict per setting (releases, pair, variant, k) with every measure.
        info: what ``composition.json`` records (seed, subsets, versions, timings).
    """

    settings: CompositionSettings
    rows: list[dict]
    info: dict = field(default_factory=dict)

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def csv_text(self) -> str:
        return self.frame.to_csv(index=False, float_format="%.6g")

    def markdown(self) -> str:
        return markdown_table(self)

    def json_text(self) -> str:
        return json.dumps(self.info, indent=2, ensure_ascii=False) + "\n"

    def png_bytes(self) -> bytes:
        return figure_png(self)

    def write(self, folder: str | os.PathLike) -> list[Path]:
        """Write the four files into ``folder`` (created if needed): all of them, or none.

        Raises:
            DataError: ``folder`` is a file, or cannot be created.
        """
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise DataError(f"{str(folder)!r} is a file; give a folder for the experiment's outputs.")
        paths = [folder / name for name in FILES]
        write_files({paths[0]: self.csv_text(), paths[1]: self.markdown(), paths[2]: self.png_bytes(),
                     paths[3]: self.json_text()}, make_folders=True)
        return paths


def level_name(level: float) -> str:
    """``100``, ``50``, ``33.3``: a confidence level as a percentage for column names."""
    percent = 100 * level
    return f"{percent:.0f}" if abs(percent - round(percent)) < 1e-6 else f"{percent:.1f}"


# ---------------------------------------------------------------------------------------------
# Running


def _models(variant: str, k: int, settings: CompositionSettings, sensitive: str):
    from veil.models import EntropyLDiversity, KAnonymity, TCloseness

    models = [KAnonymity(k)]
    if variant == "l":
        models.append(EntropyLDiversity(settings.l, sensitive=sensitive))
    elif variant == "t":
        models.append(TCloseness(settings.t, sensitive=sensitive))
    return models


def _variant_label(variant: str, settings: CompositionSettings) -> str:
    return {"k": "k-anonymity", "l": f"entropy {settings.l:g}-diversity", "t": f"{settings.t:g}-closeness"}[variant]


def _anonymize(algorithm: str, dataset: Dataset, models):
    from veil.anonymize import MDAV, FullDomain, Mondrian

    # Each subset's rows are already in an order drawn from the seeded generator; keeping it lets
    # the experiment know which published row is whose (``_table_rows``).
    if algorithm == "mondrian":
        return Mondrian(models).fit_transform(dataset, shuffle=False)
    if algorithm == "mdav":
        return MDAV(models).fit_transform(dataset, shuffle=False)
    return FullDomain(models, suppression_limit=FULLDOMAIN_SUPPRESSION).fit_transform(dataset, shuffle=False)


def _table_rows(release) -> np.ndarray:
    """For each record of the release's input, its row in the published table (−1 if suppressed)."""
    suppressed = release.failing[release.classes.row_class]
    if release.suppressed_style == "star" or not suppressed.any():
        return np.arange(len(suppressed))
    return np.where(suppressed, -1, np.cumsum(~suppressed) - 1)


def draw_subsets(rows: int, settings: CompositionSettings) -> tuple[np.ndarray, list[np.ndarray]]:
    """The overlap population and each subset's rows (indices into the table), from the seed."""
    rng = np.random.default_rng(settings.seed)
    perm = rng.permutation(rows)
    overlap = perm[:settings.overlap]
    own = settings.size - settings.overlap
    subsets = []
    for j in range(max(settings.releases)):
        members = np.concatenate([overlap, perm[settings.overlap + j * own: settings.overlap + (j + 1) * own]])
        subsets.append(members[rng.permutation(len(members))])
    return overlap, subsets


def run_composition(settings: CompositionSettings = CompositionSettings(), *,
                    progress: Callable[[int, int], None] | None = None,
                    dataset: Dataset | None = None) -> CompositionResult:
    """Run the composition experiment.

    Args:
        settings: what to run.
        progress: called as ``progress(steps_done, steps)`` (anonymizations and attacks).
        dataset: the table (default: the bundled Adult with the paper's roles); it needs one
            sensitive column, and hierarchies for ``fulldomain``.

    Raises:
        ParameterError: invalid settings (see :func:`check_settings`).
        InfeasibleError: a model no subset can satisfy (say ℓ too high).
    """
    from veil.attacks.intersection import PublishedRelease, intersection_attack

    started = time.perf_counter()
    ds = dataset if dataset is not None else load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)
    if len(ds.sensitive) != 1:
        raise ParameterError("the composition experiment attacks one sensitive column; the table declares "
                             f"{len(ds.sensitive)}.")
    sensitive = ds.sensitive[0]
    settings = check_settings(settings, ds.num_rows)
    overlap, subsets = draw_subsets(ds.num_rows, settings)
    table = ds.table.data
    qis = list(ds.quasi_identifiers)
    datasets = [Dataset(table.take(rows), quasi_identifiers=qis, sensitive=[sensitive],
                        hierarchies=dict(ds.hierarchies), orders=dict(ds.orders)) for rows in subsets]
    # Where each overlap person sits in each subset.
    position = []
    for rows in subsets:
        where = np.empty(ds.num_rows, dtype=np.int64)
        where[rows] = np.arange(len(rows))
        position.append(where[overlap])
    targets = table.take(overlap).select(qis + [sensitive])

    combos = [(n, pair, variant, k) for n in settings.releases for pair in settings.pairs
              for variant in settings.variants for k in settings.k]
    needed = {(j, alg, variant, k) for n, pair, variant, k in combos
              for j, alg in enumerate(settings.algorithms(pair, n))}
    total, done = len(needed) + len(combos), 0
    cache: dict = {}
    anonymize_seconds = 0.0
    rows_out = []
    for n, pair, variant, k in combos:
        algorithms = settings.algorithms(pair, n)
        published = []
        for j, alg in enumerate(algorithms):
            key = (j, alg, variant, k)
            if key not in cache:
                t0 = time.perf_counter()
                release = _anonymize(alg, datasets[j], _models(variant, k, settings, sensitive))
                seconds = time.perf_counter() - t0
                anonymize_seconds += seconds
                cache[key] = (release, _table_rows(release), seconds)
                done += 1
                if progress:
                    progress(done, total)
            release, table_rows, _ = cache[key]
            published.append(PublishedRelease.from_release(release, name=f"{alg} on subset {j + 1}",
                                                           target_rows=table_rows[position[j]]))
        t0 = time.perf_counter()
        result = intersection_attack(published, targets, quasi_identifiers=qis, sensitive=sensitive,
                                     confidence=settings.confidence)
        attack_seconds = time.perf_counter() - t0
        done += 1
        if progress:
            progress(done, total)
        rows_out.append(_row(settings, n, pair, algorithms, variant, k, result, attack_seconds,
                             sum(cache[(j, alg, variant, k)][2] for j, alg in enumerate(algorithms))))
    digest = hashlib.sha256(b"".join(np.asarray(s, dtype=np.int64).tobytes() for s in subsets)).hexdigest()
    info = {
        "experiment": "composition (Ganta, Kasiviswanathan and Smith, KDD 2008, Section 3)",
        "settings": {**asdict(settings), "confidence": list(settings.confidence)},
        "seeds": {"seed": settings.seed, "generator": "numpy.random.default_rng(seed) (PCG64)",
                  "draws": "one permutation of the table's rows (overlap first, then each subset's own records), "
                           "then one permutation of each subset's rows"},
        "data": {"table": "bundled Adult" if dataset is None else "given", "rows": ds.num_rows,
                 "quasi_identifiers": qis, "sensitive": sensitive},
        "subsets": {"count": len(subsets), "size": settings.size, "overlap": settings.overlap,
                    "own_records": settings.size - settings.overlap, "sha256_of_rows": digest},
        "models": {v: _variant_label(v, settings) for v in settings.variants},
        "fulldomain_suppression_limit": FULLDOMAIN_SUPPRESSION,
        "versions": _versions(),
        "seconds": {"total": round(time.perf_counter() - started, 3), "anonymize": round(anonymize_seconds, 3),
                    "attacks": round(sum(r["seconds_attack"] for r in rows_out), 3)},
        "releases_made": len(cache),
    }
    return CompositionResult(settings, rows_out, info)


def _row(settings: CompositionSettings, n: int, pair: str, algorithms: list[str], variant: str, k: int, result,
         attack_seconds: float, anonymize_seconds: float) -> dict:
    T = max(result.n_targets, 1)
    row = {"releases": n, "pair": pair, "algorithms": "+".join(algorithms), "variant": variant,
           "model": f"{k}-anonymity" + ("" if variant == "k" else f" + {_variant_label(variant, settings)}"),
           "k": k, "overlap": settings.overlap, "subset_size": settings.size, "seed": settings.seed}
    for j in range(max(settings.releases)):
        row[f"classes_{j + 1}"] = result.releases[j].classes if j < n else None
        row[f"class_size_{j + 1}"] = float(result.class_sizes[:, j].mean()) if j < n else None
        row[f"ea_{j + 1}"] = float(result.ea[:, j].mean()) if j < n else None
    row["class_size"] = float(result.class_sizes.mean())
    row["ea_prior"] = float(result.ea.min(axis=1).mean())
    row["ea_posterior"] = float(result.ea_posterior.mean())
    row["anon_drop"] = float(result.anon_drop.mean())
    row["vp_percent"] = 100.0 * float(result.vulnerable.sum()) / T
    for level in settings.confidence:
        row[f"pvp_{level_name(level)}"] = result.pvp(level)
    row["perfect_right_percent"] = 100.0 * float(result.correct_breaches(1.0).sum()) / T
    row["located_percent"] = 100.0 * float(result.correctly_located.mean())
    row["true_kept_percent"] = 100.0 * float(result.true_value_kept.mean())
    row["empty_intersections"] = int((result.ea_posterior == 0).sum())
    row["seconds_anonymize"] = round(anonymize_seconds, 4)
    row["seconds_attack"] = round(attack_seconds, 4)
    return row


def _versions() -> dict:
    import matplotlib

    from veil import __version__

    return {"veil": __version__, "numpy": np.__version__, "pandas": pd.__version__,
            "matplotlib": matplotlib.__version__, "python": platform.python_version()}


# ---------------------------------------------------------------------------------------------
# Table and figure


def markdown_table(result: CompositionResult) -> str:
    """The main measures as a Markdown table, with a heading that records the settings and seed."""
    s = result.settings
    levels = [level_name(c) for c in s.confidence]
    heads = ["n", "algorithms", "model", "k", "class size", "EA prior", "EA posterior", "Anon_Drop", "VP %"] + \
            [f"PVP {name} %" for name in levels] + ["located %"]
    lines = [
        "# Composition attack on Adult (Ganta, Kasiviswanathan and Smith, KDD 2008)",
        "",
        f"Overlap population P = {s.overlap:,} people in every release; subsets of {s.size:,} records drawn with "
        f"seed {s.seed}; sensitive occupation. EA is the number of distinct sensitive values in a target's class "
        "(prior: the smallest over the releases; posterior: the intersection); VP: Anon_Drop > 0; PVP C %: the "
        "share of P whose intersection holds at most 1/C values (100: perfect breach); located: the share of "
        "(target, release) pairs where the target was put in its true class (alone or among tied classes).",
        "",
        "| " + " | ".join(heads) + " |",
        "|" + "|".join("---" if h in ("algorithms", "model") else "---:" for h in heads) + "|",
    ]
    for row in result.rows:
        cells = [str(row["releases"]), row["algorithms"], row["model"].split(" + ", 1)[-1] if row["variant"] != "k"
                 else "k-anonymity", str(row["k"]), f"{row['class_size']:.1f}", f"{row['ea_prior']:.2f}",
                 f"{row['ea_posterior']:.2f}", f"{row['anon_drop']:.2f}", f"{row['vp_percent']:.1f}"]
        cells += [f"{row[f'pvp_{name}']:.1f}" for name in levels]
        cells.append(f"{row['located_percent']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def figure_png(result: CompositionResult) -> bytes:
    """The paper's figures as panels of one PNG (matplotlib, Agg backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    s = result.settings
    frame = result.frame
    n0 = s.releases[0]
    first_pair = s.pairs[0]
    panels = ["perfect", "partial", "sizes", "drop"]
    panels += [f"variant_{v}" for v in s.variants if v != "k"]
    if len(s.releases) > 1:
        panels.append("releases")
    cols = 2
    rows = math.ceil(len(panels) / cols)
    fig = Figure(figsize=(11, 4.0 * rows), dpi=100)
    FigureCanvasAgg(fig)
    base_variant = "k" if "k" in s.variants else s.variants[0]
    base = frame[(frame["releases"] == n0) & (frame["variant"] == base_variant)]
    title_model = _variant_label(base_variant, s)
    for i, panel in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        if panel == "perfect":
            for _, part in base.groupby("pair", sort=False):
                ax.plot(part["k"], part["pvp_100"], marker="o", label=part["algorithms"].iloc[0])
            ax.set_title(f"Perfect breach (PVP 100 %), {n0} releases, {title_model}")
            ax.set_ylabel("% of overlap population")
        elif panel == "partial":
            part = base[base["pair"] == first_pair]
            for level in s.confidence:
                ax.plot(part["k"], part[f"pvp_{level_name(level)}"], marker="o", label=f"C ≥ {level_name(level)} %")
            ax.set_title(f"Partial breach, {part['algorithms'].iloc[0] if len(part) else first_pair}")
            ax.set_ylabel("% of overlap population")
        elif panel == "sizes":
            part = base[base["pair"] == first_pair]
            for j in range(n0):
                ax.plot(part["k"], part[f"class_size_{j + 1}"], marker="o", label=f"class size, subset {j + 1}")
                ax.plot(part["k"], part[f"ea_{j + 1}"], marker="s", linestyle="--",
                        label=f"effective anonymity, subset {j + 1}")
            ax.plot(part["k"], part["k"], color="grey", linewidth=0.8, label="presumed (k)")
            ax.set_title("Class size and effective anonymity")
            ax.set_ylabel("records / distinct values")
        elif panel == "drop":
            for _, part in base.groupby("pair", sort=False):
                line = ax.plot(part["k"], part["ea_prior"], marker="o", label=f"{part['algorithms'].iloc[0]} prior")
                ax.plot(part["k"], part["ea_posterior"], marker="s", linestyle="--", color=line[0].get_color(),
                        label=f"{part['algorithms'].iloc[0]} posterior")
            ax.set_title("Effective anonymity before and after the attack")
            ax.set_ylabel("distinct sensitive values")
        elif panel.startswith("variant_"):
            variant = panel.split("_", 1)[1]
            part = frame[(frame["releases"] == n0) & (frame["variant"] == variant) & (frame["pair"] == first_pair)]
            for level in s.confidence:
                ax.plot(part["k"], part[f"pvp_{level_name(level)}"], marker="o", label=f"C ≥ {level_name(level)} %")
            ax.set_title(f"Partial breach with {_variant_label(variant, s)}, "
                         f"{part['algorithms'].iloc[0] if len(part) else first_pair}")
            ax.set_ylabel("% of overlap population")
        else:
            for n, part in frame[(frame["variant"] == base_variant) & (frame["pair"] == first_pair)].groupby(
                    "releases"):
                ax.plot(part["k"], part["pvp_100"], marker="o", label=f"{n} releases")
            ax.set_title(f"Number of releases, {first_pair}")
            ax.set_ylabel("perfect breach, % of overlap population")
        ax.set_xlabel("k")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Composition attack on Adult: overlap {s.overlap:,}, subsets of {s.size:,}, seed {s.seed}")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# Writing


