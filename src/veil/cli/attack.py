"""``veil attack``: veil as the adversary, on any release (a released CSV and its roles suffice).

``veil attack single`` runs the homogeneity, background-knowledge, skewness and similarity attacks
and the disclosure measures on one release; ``veil attack intersection`` intersects what
independent releases say about the same people (Ganta et al., KDD 2008); ``veil attack
minimality`` reasons as an adversary who knows the algorithm (Wong et al., VLDB 2007); ``veil
attack matching`` joins two releases by row position (Sweeney 2002), ``veil attack join`` two
projections on their shared columns (Wang and Fung 2006), ``veil attack correspondence`` matches
the records of two versions of a growing table (Fung et al., EDBT 2008), and ``veil attack
presence`` gives each person of a population the probability of being in a release. Every attack
exits 0 when it exposes no one and 1 when it does (each command's help says what counts). Errors a
user can cause are one sentence on standard error with exit status 2, as everywhere in veil.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import List, Optional

import pandas as pd
import typer
from rich.markup import escape
from rich.table import Table as RichTable

from veil.attacks.intersection import (GENERALIZED, MICROAGGREGATED, IntersectionResult, PublishedRelease,
                                       intersection_attack)
from veil.attacks.single import (DEFAULT_LEVEL, DEFAULT_SKEW, DEFAULT_THRESHOLD, ColumnAttacks,
                                 SingleReleaseReport, attack_release)
from veil.cli.console import (Console, EXIT_FAILED_CHECK, command_group, fails_cleanly, files_named, parse_orders, parse_pairs,
                              reads_tables, split_names, stage, terminal)
from veil.errors import ParameterError
from veil.output import OutputSet

attack_app = command_group(no_args_is_help=True, help="Attack a release the way an adversary would.")

# How many values or groups a summary line names before saying "and N more".
SHOWN = 3


@attack_app.command("single")
@fails_cleanly
@reads_tables
def single_command(
    data: Path = typer.Argument(..., help="Released table (CSV or Parquet) to attack."),
    qi: str = typer.Option(..., "--qi", help="Quasi-identifying columns, comma-separated."),
    sensitive: str = typer.Option(..., "--sensitive", help="Sensitive columns, comma-separated."),
    hierarchy: List[str] = typer.Option([], "--hierarchy",
                                        help="COL=FILE: ARX hierarchy of a sensitive column (similarity groups)."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    m: Optional[int] = typer.Option(None, "--m", help="Largest number of values the adversary rules out "
                                                      "(default: distinct values − 2, or where all are pinned)."),
    threshold: float = typer.Option(DEFAULT_THRESHOLD, "--threshold",
                                    help="Posterior at or above which a record counts as exposed, in (0, 1]."),
    skew: float = typer.Option(DEFAULT_SKEW, "--skew", help="Skewness factor (> 1): class share ÷ table share."),
    level: Optional[int] = typer.Option(None, "--level", help="Hierarchy level of the similarity groups "
                                                               f"(default {DEFAULT_LEVEL}); needs --hierarchy."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Run the homogeneity, background-knowledge, skewness and similarity attacks on a release,
    and measure its disclosure (A_know, A_acc, δ).

    Generalized quasi-identifier values are read as text: records with equal values form a class.

    A hierarchy on a sensitive column (--hierarchy) gives the similarity attack its groups.

    Exits 1 when an attack exposes a record: its class gives away its sensitive value
    (homogeneity) or, with --hierarchy, the group of that value (similarity).
    """
    qis, sens = split_names(qi), split_names(sensitive)
    if not sens:
        raise ParameterError("--sensitive names no column; give the sensitive columns to attack.")
    hierarchies = parse_pairs(hierarchy, "--hierarchy")
    unused = [name for name in hierarchies if name in qis]
    for name in unused:
        del hierarchies[name]
    # A level out of range is refused by attack_release itself, with the range.
    if level is not None and level >= 1 and not hierarchies:
        raise ParameterError("--level sets the similarity attack's hierarchy level, which needs a sensitive "
                             "column's hierarchy; give --hierarchy COL=FILE or leave --level out.")
    with stage(f"attacking {data.name}"):
        report = attack_release(data, quasi_identifiers=qis, sensitive=sens, hierarchies=hierarchies,
                                delimiter=delimiter, max_m=m, threshold=threshold, skew=skew,
                                level=DEFAULT_LEVEL if level is None else level)
    for name in unused:
        report.notes.append(f"the hierarchy of quasi-identifier '{name}' was not used: the single-release "
                            "attacks read the released values as they are.")
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        render_single(report, terminal())
    if any(len(col.homogeneity.records) or (col.similarity is not None and len(col.similarity.records))
           for col in report.by_sensitive.values()):
        raise typer.Exit(EXIT_FAILED_CHECK)


def _names(tally: dict[str, int]) -> str:
    shown = [f"{escape(label or '(missing)')} ({count:,})" for label, count in list(tally.items())[:SHOWN]]
    more = len(tally) - SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _share(part: int, whole: int) -> str:
    return f"{part / max(whole, 1):.2%}"


def render_single(report: SingleReleaseReport, console: Console) -> None:
    """Print a single-release attack report as readable tables."""
    classes = report.classes
    ds = classes.dataset
    console.print(f"[bold]{classes.n_rows:,}[/] released records in [bold]{classes.n_classes:,}[/] classes; "
                  f"quasi-identifiers: {escape(', '.join(ds.quasi_identifiers))}; "
                  f"sensitive: {escape(', '.join(report.by_sensitive))}")
    for name, col in report.by_sensitive.items():
        _render_column(name, col, classes.n_rows, console)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)


def _render_column(name: str, col: ColumnAttacks, n_rows: int, console: Console) -> None:
    table = RichTable(title=f"Attacks on '{escape(name)}'", title_justify="left")
    for head in ("attack", "classes", "records", "share", "what is learnt"):
        table.add_column(head, justify="right" if head in ("classes", "records", "share") else "left")
    h = col.homogeneity
    table.add_row("homogeneity", f"{len(h.classes):,}", f"{len(h.records):,}", _share(len(h.records), n_rows),
                  _names(h.summary()["values"]) or "nothing")
    bk = col.background_knowledge
    hit = [m for m in bk.m if bk.records_exposed[m]]
    detail = (f"from m = {hit[0]} on ({bk.records_exposed[hit[0]]:,} records then); per m below" if hit
              else "nothing")
    table.add_row(f"background knowledge (m ≤ {bk.max_m}, posterior ≥ {bk.threshold:g})", f"{len(bk.classes):,}",
                  f"{len(bk.records):,}", _share(len(bk.records), n_rows), detail)
    sk = col.skewness
    summary = sk.summary()
    detail = (f"values {_names(summary['values'])}; {sk.class_records:,} records in skewed classes"
              if len(sk.classes) else "nothing")
    table.add_row(f"skewness (ratio ≥ {sk.factor:g})", f"{len(sk.classes):,}", f"{len(sk.records):,}",
                  _share(len(sk.records), n_rows), detail)
    sim = col.similarity
    if sim is None:
        table.add_row("similarity", "", "", "", "[dim]no hierarchy[/]")
    else:
        groups = sim.summary()["groups"]
        detail = (f"groups {_names(groups)}; not homogeneous: {int((~sim.homogeneous).sum()):,} classes"
                  if groups else "nothing")
        table.add_row(f"similarity (level {sim.level})", f"{len(sim.classes):,}", f"{len(sim.records):,}",
                      _share(len(sim.records), n_rows), detail)
    console.print(table)
    per_m = RichTable(title=f"Background knowledge on '{escape(name)}': the adversary rules out m values",
                      title_justify="left")
    for head in ("m", "classes pinned", "records pinned", f"classes ≥ {bk.threshold:g}", f"records ≥ {bk.threshold:g}",
                 "share"):
        per_m.add_column(head, justify="right")
    for m in bk.m:
        per_m.add_row(str(m), f"{bk.classes_pinned[m]:,}", f"{bk.records_pinned[m]:,}", f"{bk.classes_exposed[m]:,}",
                      f"{bk.records_exposed[m]:,}", _share(int(bk.records_exposed[m]), n_rows))
    console.print(per_m)
    d = col.disclosure
    console.print(f"disclosure (Brickell & Shmatikov): A_know {d.a_know:.4g}, A_acc {d.a_acc:.4g} "
                  f"(guessing accuracy {d.accuracy_base:.2%} → {d.accuracy_base + d.a_acc:.2%}), "
                  f"δ {d.delta:.4g}, largest A_diff {d.a_diff.max():.4g}, largest A_quot {d.a_quot.max():.4g}")


# A terminal summary lists the values left per target up to this many targets, and the most
# frequent intersections beyond (the JSON and --out list every target).
TARGETS_LISTED = 10
OUTCOMES_LISTED = 5

DEFAULT_LEVELS = "1,1/2,1/3,1/4,1/5"


def parse_levels(text: str) -> list[float]:
    """Confidence levels: ``1,0.5,1/3,25%``. Checking the range is the attack's job."""
    levels = []
    for part in split_names(text):
        try:
            if part.endswith("%"):
                levels.append(float(part[:-1]) / 100)
            else:
                levels.append(float(Fraction(part)))
        except (ValueError, ZeroDivisionError):
            raise ParameterError(f"--confidence takes numbers in (0, 1] such as 1, 0.5, 1/3 or 25%, not {part!r}.") \
                from None
    if not levels:
        raise ParameterError("--confidence names no level; give levels in (0, 1] such as 1,1/2,1/3.")
    return levels


def _positions(items: List[str], option: str, releases: List[Path]) -> dict[int, str]:
    """``N=VALUE`` or ``RELEASE=VALUE`` items, keyed by the release's position (0-based)."""
    out = {}
    for key, value in parse_pairs(items, option).items():
        position = _position(key, option, releases)
        if position in out:
            raise ParameterError(f"{option} is given twice for release {position + 1}; give it once.")
        out[position] = value
    return out


def _position(key: str, option: str, releases: List[Path]) -> int:
    if key.isdigit():
        position = int(key)
        if not 1 <= position <= len(releases):
            raise ParameterError(f"{option} names release {position}, but {len(releases)} releases were given "
                                 f"(number them 1 to {len(releases)}).")
        return position - 1
    for i, path in enumerate(releases):
        if key in (str(path), path.name):
            return i
    raise ParameterError(f"{option} names {key!r}, which is not one of the releases; use its position (1, 2, …) "
                         "or its file name.")


@attack_app.command("intersection")
@fails_cleanly
@reads_tables
def intersection_command(
    releases: List[Path] = typer.Argument(..., help="Two or more released tables (CSV or Parquet)."),
    targets: Path = typer.Option(..., "--targets", help="The people attacked: their quasi-identifier values "
                                                        "(and, if known, their sensitive value)."),
    qi: Optional[str] = typer.Option(None, "--qi", help="Quasi-identifying columns, comma-separated "
                                                        "(default: the first manifest's)."),
    sensitive: Optional[str] = typer.Option(None, "--sensitive", help="The sensitive column "
                                                                      "(default: the first manifest's)."),
    manifest: List[str] = typer.Option([], "--manifest", help="N=FILE: the veil manifest of release N "
                                                              "(1, 2, … or its file name); repeatable."),
    hierarchy: List[str] = typer.Option([], "--hierarchy", help="COL=FILE: ARX hierarchy of a quasi-identifier, "
                                                                "to read the nodes releases publish; repeatable."),
    order: List[str] = typer.Option([], "--order", help="COL=v1,v2,… or COL=FILE: value order of a text column."),
    microaggregated: Optional[str] = typer.Option(None, "--microaggregated",
                                                  help="Releases (1, 2, … or file names) that publish group "
                                                       "centroids: located by nearest centroid."),
    confidence: str = typer.Option(DEFAULT_LEVELS, "--confidence",
                                   help="Confidence levels C in (0, 1] for PVP_C: 1 (perfect breach), 0.5, 1/3, 25%."),
    id_column: Optional[str] = typer.Option(None, "--id", help="Column of the targets file that names them."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write one row per target (CSV) here."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Intersect what independent releases say about the same people (Ganta et al., KDD 2008).

    Each target is located in every release from their quasi-identifiers: by containment in the
    published values (ranges, masks, hierarchy nodes, sets), or by nearest centroid in a
    microaggregated release. The sets of sensitive values of their classes are intersected;
    the summary gives the effective anonymity before and after (EA), its drop, the vulnerable
    population (drop > 0) and PVP_C, the share of targets whose confidence 1/|intersection| is at
    least C. Exits 1 when the releases together breach a target perfectly (one sensitive value
    left).
    """
    levels = parse_levels(confidence)
    if len(releases) < 2:
        raise ParameterError(f"the intersection attack needs at least two releases, not {len(releases)}.")
    manifests = _positions(manifest, "--manifest", releases)
    outputs = None
    if out is not None:
        reads = [*releases, targets, *manifests.values(), *files_named(hierarchy, "--hierarchy"),
                 *files_named(order, "--order")]
        outputs = OutputSet([out], reads=reads)
    micro = {_position(key, "--microaggregated", releases) for key in split_names(microaggregated)}
    hierarchies = parse_pairs(hierarchy, "--hierarchy")
    orders = parse_orders(order)
    for position, path in manifests.items():
        _belongs(path, releases[position])
    _refuse_other_columns(qi, manifests, len(releases), hierarchy=list(hierarchies), order=list(orders))
    published = [PublishedRelease(path, manifest=manifests.get(i), kind=MICROAGGREGATED if i in micro else "auto",
                                  delimiter=delimiter)
                 for i, path in enumerate(releases)]
    sens = split_names(sensitive)
    if len(sens) > 1:
        raise ParameterError("--sensitive names one column; run the attack once per sensitive column.")
    with stage("locating the targets and intersecting"):
        result = intersection_attack(published, targets, quasi_identifiers=split_names(qi) or None,
                                     sensitive=sens[0] if sens else None, confidence=levels,
                                     hierarchies=hierarchies, orders=orders, id_column=id_column,
                                     delimiter=delimiter)
    if outputs is not None:
        with stage(f"writing {out}"), outputs:
            outputs.put(out, result.per_target().to_csv(index=False))
            outputs.commit()
    if as_json:
        ids = json.loads(pd.Series(result.targets).to_json(orient="values"))
        per_target = [{"target": target, "ea_posterior": int(ea), "values_left": left}
                      for target, ea, left in zip(ids, result.ea_posterior, result.values_left())]
        sys.stdout.write(json.dumps({**result.summary(), "per_target": per_target}, indent=2,
                                    ensure_ascii=False) + "\n")
    else:
        render_intersection(result, terminal())
        if out is not None:
            terminal().print(f"wrote {out}", markup=False)
    if result.breached(1.0).any():
        raise typer.Exit(EXIT_FAILED_CHECK)


def _pct(value: float) -> str:
    return f"{value:.2f} %"


def _level(level: float) -> str:
    percent = 100 * level
    return f"{percent:.0f} %" if abs(percent - round(percent)) < 1e-9 else f"{percent:.1f} %"


def render_intersection(result: IntersectionResult, console: Console) -> None:
    """Print an intersection attack's summary as readable tables."""
    s = result.summary()
    console.print(f"Intersection attack on [bold]{escape(s['sensitive'])}[/] across {len(s['releases'])} releases: "
                  f"[bold]{s['targets']:,}[/] targets, {s['values']:,} sensitive values")
    rel = RichTable(title="Releases", title_justify="left")
    for head in ("release", "located by", "rows", "classes", "located", "in several", "class size", "EA"):
        rel.add_column(head, justify="left" if head in ("release", "located by") else "right")
    for entry in s["releases"]:
        how = "containment" if entry["kind"] == GENERALIZED else \
            f"nearest centroid ({entry.get('standardization', 'release')} scaling)"
        located = f"{entry['located']:,}"
        if "correctly_located" in entry:
            located += f" ({entry['correctly_located']:,} right)"
        rel.add_row(escape(entry["name"]), how, f"{entry['rows']:,}", f"{entry['classes']:,}", located,
                    f"{entry['ambiguous']:,}", f"{entry['mean_class_size']:.2f}", f"{entry['mean_ea']:.2f}")
    console.print(rel)
    n = max(s["targets"], 1)
    console.print(f"effective anonymity (distinct sensitive values): prior min_j EA_ij {s['mean_ea_prior']:.3f} → "
                  f"posterior {s['mean_ea_posterior']:.3f} on average; average Anon_Drop {s['mean_anon_drop']:.3f}")
    console.print(f"vulnerable population (Anon_Drop > 0): {s['vulnerable']:,} ({_pct(100 * s['vulnerable'] / n)})")
    table = RichTable(title="Targets the adversary pins with confidence ≥ C (C = 1/|intersection|)",
                      title_justify="left")
    truth = "true_value_kept" in s
    heads = ["confidence C", "targets", "PVP_C"] + (["and right", "share right"] if truth else [])
    for head in heads:
        table.add_column(head, justify="right")
    for entry in s["pvp"]:
        row = [_level(entry["confidence"]) + (" (perfect breach)" if entry["confidence"] == 1 else ""),
               f"{entry['targets']:,}", _pct(entry["percent"])]
        if truth:
            row += [f"{entry['correct']:,}", _pct(entry["correct_percent"])]
        table.add_row(*row)
    console.print(table)
    if truth:
        console.print(f"the true value survives the intersection for {s['true_value_kept']:,} of {s['targets']:,} "
                      "targets.")
    _render_values_left(result, console)
    for note in s["notes"]:
        console.print(f"note: {note}", markup=False)


def _values(values: list[str]) -> str:
    return "{" + ", ".join(escape(v or "(missing)") for v in values) + "}" if values else "nothing (empty)"


def _render_values_left(result: IntersectionResult, console: Console) -> None:
    """The values the adversary is left with: per target for a few targets, else the most
    frequent intersections."""
    n = result.n_targets
    if n == 0:
        return
    if n <= TARGETS_LISTED:
        table = RichTable(title="Values left to the adversary, per target", title_justify="left")
        for head in ("target", "values left", "EA"):
            table.add_column(head, justify="right" if head == "EA" else "left")
        for target, left, ea in zip(result.targets, result.values_left(), result.ea_posterior):
            table.add_row(escape(str(target)), _values(left), f"{int(ea):,}")
        console.print(table)
        return
    outcomes = result.outcomes()
    table = RichTable(title="Values left to the adversary: the most frequent intersections", title_justify="left")
    for head in ("values left", "targets", "share"):
        table.add_column(head, justify="left" if head == "values left" else "right")
    for outcome in outcomes[:OUTCOMES_LISTED]:
        table.add_row(_values(outcome["values"]), f"{outcome['targets']:,}", _pct(100 * outcome["targets"] / n))
    console.print(table)
    rest = len(outcomes) - OUTCOMES_LISTED
    if rest > 0:
        console.print(f"… and {rest:,} other intersections; --out FILE or --json lists every target's values.",
                      markup=False)


PUBLISHERS = ("optimal", "minimal")


def minimality_publisher(cfg, publisher: str):
    """What the adversary knows of the algorithm, from the configuration the release was made with.

    Raises:
        ParameterError: an algorithm the attack does not model, a full-domain search that could
            suppress records, an unknown publisher.
    """
    from veil.attacks.minimality import AceProcess, MinimalFullDomain, MondrianProcess, OptimalFullDomain

    if publisher not in PUBLISHERS:
        raise ParameterError(f"--publisher is 'optimal' (veil's search) or 'minimal' (a minimal node), not "
                             f"{publisher!r}.")
    models, spec = cfg.models(), cfg.algorithm
    if spec.name == "fulldomain":
        if cfg.suppression_limit > 0:
            raise ParameterError(f"the attack models full-domain searches that suppress nothing, and the configuration "
                                 f"allows {cfg.suppression_limit:g} of the records; set suppression_limit: 0.")
        if publisher == "minimal":
            return MinimalFullDomain(models)
        return OptimalFullDomain(models, metric=cfg.metric(), search=spec.options.get("search", "optimal"),
                                 time_limit=spec.options.get("time_limit"))
    if publisher == "minimal":
        raise ParameterError(f"--publisher minimal describes a full-domain release, and this configuration uses "
                             f"{spec.name}; leave --publisher out.")
    if spec.name == "mondrian":
        return MondrianProcess(models, mode=spec.options.get("mode", "strict"),
                               categorical=spec.options.get("categorical", "hierarchy"))
    if spec.name == "ace":
        from veil.anonymize import Ace

        ace = Ace(models, l=spec.options.get("l"), sensitive=spec.options.get("sensitive"))
        return AceProcess(ace.l, categorical=spec.options.get("categorical", "hierarchy"))
    raise ParameterError(f"the minimality attack models full-domain, Mondrian and Ace releases, not {spec.name}'s.")


def _attacked_column(cfg, sensitive: Optional[str]) -> str:
    """The sensitive column to attack: the one named, which must be one the configuration protects
    (Ace's own column for Ace, whose guarantee covers that column only), or the only such column.

    Raises:
        ParameterError: a column the configuration does not protect, or several to choose from.
    """
    protected = list(cfg.sensitive)
    if cfg.algorithm.name == "ace":
        from veil.anonymize import Ace

        chosen = Ace(cfg.models(), l=cfg.algorithm.options.get("l"),
                     sensitive=cfg.algorithm.options.get("sensitive")).sensitive
        protected = [chosen] if chosen is not None else protected
    if sensitive is None:
        if len(protected) != 1:
            raise ParameterError(f"the configuration declares {len(protected)} sensitive columns; name the one to "
                                 "attack with --sensitive.")
        return protected[0]
    if sensitive not in protected:
        raise ParameterError(f"--sensitive names '{sensitive}', which the configuration's algorithm does not protect "
                             f"as a sensitive column; name {' or '.join(repr(c) for c in protected)}.")
    return sensitive


def _population(cfg, path: Path, delimiter: Optional[str]):
    """Everyone's quasi-identifiers, with the configuration's hierarchies and orders."""
    from veil.data.dataset import Dataset
    from veil.data.io import read_table

    table = read_table(path, delimiter)
    missing = [q for q in cfg.quasi_identifiers if q not in table.columns]
    if missing:
        raise ParameterError(f"the population table has no column '{missing[0]}'; it needs every quasi-identifier "
                             f"({', '.join(cfg.quasi_identifiers)}).")
    hierarchies = {name: spec.build(None if spec.kind == "file" else table.data.column(name), cfg.missing_values)
                   for name, spec in cfg.hierarchies.items() if name in cfg.quasi_identifiers}
    return Dataset(table, quasi_identifiers=list(cfg.quasi_identifiers), hierarchies=hierarchies,
                   orders={k: list(v) for k, v in cfg.orders.items() if k in cfg.quasi_identifiers},
                   missing_values=cfg.missing_values), table


@attack_app.command("minimality")
@fails_cleanly
@reads_tables
def minimality_command(
    release: Path = typer.Argument(..., help="The released table (CSV or Parquet)."),
    config: Path = typer.Option(..., "--config", help="The configuration the release was made with: roles, "
                                                      "hierarchies, models and algorithm."),
    population: Path = typer.Option(..., "--population", help="Everyone's quasi-identifiers (one row per person "
                                                              "in the release)."),
    publisher: str = typer.Option("optimal", "--publisher", help="For a full-domain release: optimal (veil's "
                                                                 "search) or minimal (any minimal node)."),
    sensitive: Optional[str] = typer.Option(None, "--sensitive", help="The sensitive column (default: the "
                                                                      "configuration's only one)."),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Posterior above which a person counts as "
                                                                        "exposed (default 1/ℓ)."),
    values: Optional[str] = typer.Option(None, "--values", help="The sensitive values whose posteriors count, "
                                                                "comma-separated (default: all)."),
    id_column: Optional[str] = typer.Option(None, "--id", help="A column of the population naming each person."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write one row per person (CSV) here."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
) -> None:
    """The minimality attack (Wong et al., VLDB 2007): the adversary knows the algorithm.

    He knows everyone's quasi-identifiers and how the release was made, considers every input
    table that could have produced it, and reads each person's posterior of every sensitive value
    off them. On small tables the inputs are enumerated and the posteriors are exact; on large
    ones the attack reports a lower bound on the people whose posterior exceeds the threshold,
    exact where it can prove it, and says which. Exits 1 when someone's posterior exceeds the
    threshold.
    """
    from veil.attacks.minimality import MinimalityAttack
    from veil.config import load_config

    cfg = load_config(config)
    outputs = OutputSet([out], reads=[release, config, population]) if out is not None else None
    attacker = minimality_publisher(cfg, publisher.strip().lower())
    sensitive = _attacked_column(cfg, sensitive)
    people, table = _population(cfg, population, delimiter)
    ids = None
    if id_column is not None:
        if id_column not in table.columns:
            raise ParameterError(f"the population table has no column '{id_column}' to name people by.")
        ids = table.data.column(id_column).to_pylist()
    attack = MinimalityAttack(attacker, threshold=threshold, values=split_names(values) or None)
    with stage("reading the inputs that could have produced the release"):
        attack.fit(release, people, sensitive=sensitive, quasi_identifiers=list(cfg.quasi_identifiers))
    per_person = attack.per_person(ids)
    if outputs is not None:
        with stage(f"writing {out}"), outputs:
            outputs.put(out, per_person.to_csv(index=False))
            outputs.commit()
    summary = attack.summary()
    if as_json:
        summary["per_person"] = json.loads(per_person.to_json(orient="records"))
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    else:
        render_minimality(summary, terminal())
        if out is not None:
            terminal().print(f"wrote {out}", markup=False)
    if attack.exceeding_ > 0:
        raise typer.Exit(EXIT_FAILED_CHECK)


def render_minimality(summary: dict, console: Console) -> None:
    """Print a minimality attack's summary."""
    n = max(summary["people"], 1)
    exact = summary["count_exact"]
    count = summary["exceeding" if exact else "exceeding_at_least"]
    console.print(f"Minimality attack ({escape(summary['publisher'])}): {summary['people']:,} people in "
                  f"{summary['classes']:,} published classes")
    if summary["enumerated"]:
        console.print(f"inputs that could have produced the release: {summary['inputs_consistent']:,} of the "
                      f"{summary['inputs_enumerated']:,} the classes allow; posteriors exact")
    elif summary.get("proven"):
        console.print(f"{escape(summary['not_enumerated'])}; {escape(summary['proven'])}")
    else:
        console.print(f"{escape(summary['not_enumerated'])}: posteriors known exactly for "
                      f"{summary['people_known_exactly']:,} people; the count below is "
                      f"{'exact' if exact else 'a lower bound'}")
    console.print(f"people whose posterior exceeds {summary['threshold']:.4g}: [bold]{'' if exact else 'at least '}"
                  f"{count:,}[/] ({count / n:.2%})")


def _release(path: Path, manifest: Optional[Path], delimiter: Optional[str]) -> PublishedRelease:
    """A release file with its manifest, which must be the one written with it."""
    if manifest is not None:
        _belongs(manifest, path)
    return PublishedRelease(path, manifest=manifest, delimiter=delimiter)


def _belongs(manifest, release: Path) -> None:
    """Refuse a manifest written with another release than ``release`` (e.g. two swapped). A
    manifest that names no release file (one written alone, by ``Release.write_manifest``)
    cannot be checked, and is read as it is.

    Raises:
        DataError: the manifest names another file, or the file's SHA-256 is not the one it gives.
    """
    from veil.output import load_manifest

    try:
        named = json.loads(Path(manifest).read_text(encoding="utf-8")).get("release")
    except (OSError, ValueError, AttributeError):
        return  # the attack says what is wrong with the manifest
    if named is not None:
        load_manifest(manifest, release=release)


def _refuse_other_columns(qi: Optional[str], manifests: dict[int, str], count: int, **named: List[str]) -> None:
    """Refuse a ``--hierarchy`` or ``--order`` column that is not one of the quasi-identifiers the
    attack reads (``--qi``, else the first manifest's, as the attack takes them).

    Raises:
        ParameterError: such a column, named with the option.
    """
    qis = split_names(qi)
    for position in range(count):
        if qis or position not in manifests:
            continue
        try:
            roles = json.loads(Path(manifests[position]).read_text(encoding="utf-8")).get("roles") or {}
        except (OSError, ValueError, AttributeError):
            return  # the attack reports what is wrong with that manifest
        qis = [str(name) for name in roles.get("quasi_identifiers") or []]
    if not qis:
        return  # the attack says the quasi-identifiers are missing
    for option, columns in named.items():
        for column in columns:
            if column not in qis:
                raise ParameterError(f"--{option} names '{column}', which is not a quasi-identifier of the attack "
                                     f"({', '.join(qis)}); name one of those or leave it out.")


def _print_summary(title: str, summary: dict, as_json: bool) -> None:
    """The attack's summary as one JSON object, or as a two-column table with its notes."""
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        return
    console = terminal()
    table = RichTable(title=title, title_justify="left")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        if key in ("attack", "notes"):
            continue
        shown = ", ".join(map(str, value)) if isinstance(value, list) else (
            f"{value:.4g}" if isinstance(value, float) else str(value))
        table.add_row(key, escape(shown))
    console.print(table)
    for note in summary.get("notes") or []:
        console.print(f"note: {note}", markup=False)


@attack_app.command("matching")
@fails_cleanly
@reads_tables
def matching_command(
    first: Path = typer.Argument(..., help="The earlier released table (CSV or Parquet)."),
    second: Path = typer.Argument(..., help="The later released table of the same records."),
    qi: Optional[str] = typer.Option(None, "--qi", help="Quasi-identifying columns, comma-separated "
                                                        "(default: each manifest's)."),
    k: Optional[int] = typer.Option(None, "--k", help="Joined class size under which a row is exposed "
                                                      "(default: the smallest class of either release)."),
    first_manifest: Optional[Path] = typer.Option(None, "--manifest1", help="The first release's veil manifest."),
    second_manifest: Optional[Path] = typer.Option(None, "--manifest2", help="The second release's veil manifest."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """Join two releases of the same records by row position (Sweeney's unsorted matching attack).

    Releases in the same row order are seen to be (their common columns agree on every row); each
    row's classes are then intersected. Reports the rows whose candidate set narrows and those
    left in a class smaller than k; exits 1 when a row is so exposed.
    """
    from veil.attacks.matching import matching_attack

    with stage("joining the releases by position"):
        result = matching_attack(_release(first, first_manifest, delimiter),
                                 _release(second, second_manifest, delimiter),
                                 quasi_identifiers=split_names(qi) or None, k=k, delimiter=delimiter)
    _print_summary("Unsorted matching", result.summary(), as_json)
    if result.linkable and len(result.exposed):
        raise typer.Exit(EXIT_FAILED_CHECK)


@attack_app.command("join")
@fails_cleanly
@reads_tables
def join_command(
    first: Path = typer.Argument(..., help="The earlier released table T1 (its records are the people)."),
    second: Path = typer.Argument(..., help="The later released table T2, another projection of the same records."),
    qi: Optional[str] = typer.Option(None, "--qi", help="Columns the adversary knows, from either release "
                                                        "(default: both manifests')."),
    sensitive: Optional[str] = typer.Option(None, "--sensitive", help="The sensitive column, for --l."),
    k: int = typer.Option(2, "--k", help="The fewest candidates a joined group must have."),
    l: Optional[int] = typer.Option(None, "--l", help="The fewest distinct sensitive values a joined group must have."),
    first_manifest: Optional[Path] = typer.Option(None, "--manifest1", help="The first release's veil manifest."),
    second_manifest: Optional[Path] = typer.Option(None, "--manifest2", help="The second release's veil manifest."),
    hierarchy: List[str] = typer.Option([], "--hierarchy", help="COL=FILE: an ARX hierarchy of a shared column, to "
                                                               "join it at the coarser level where the releases "
                                                               "publish it at two; repeatable."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """Join two projections of the same records on their shared columns (Wang and Fung, KDD 2006).

    Reports the records of the first release in a joined group with fewer than k candidates (or
    ℓ sensitive values): the check for publishing the second release after the first. Exits 1
    when a record is exposed.
    """
    from veil.attacks.join import join_attack

    with stage("joining the releases on their shared columns"):
        result = join_attack(_release(first, first_manifest, delimiter),
                             _release(second, second_manifest, delimiter),
                             quasi_identifiers=split_names(qi) or None, k=k, l=l, sensitive=sensitive,
                             hierarchies=parse_pairs(hierarchy, "--hierarchy"), delimiter=delimiter)
    _print_summary("Join attack", result.summary(), as_json)
    if not result.passed:
        raise typer.Exit(EXIT_FAILED_CHECK)


@attack_app.command("correspondence")
@fails_cleanly
@reads_tables
def correspondence_command(
    first: Path = typer.Argument(..., help="The earlier release R1 (CSV or Parquet)."),
    second: Path = typer.Argument(..., help="The later release R2, of the earlier table grown by new records."),
    targets: Path = typer.Option(..., "--targets", help="The people attacked: their quasi-identifier values."),
    qi: Optional[str] = typer.Option(None, "--qi", help="Quasi-identifying columns, comma-separated "
                                                        "(default: the manifests')."),
    sensitive: Optional[str] = typer.Option(None, "--sensitive", help="Sensitive columns, comma-separated "
                                                                      "(default: the manifests')."),
    k: Optional[int] = typer.Option(None, "--k", help="Candidates under which a person is exposed "
                                                      "(default: the smaller of the releases' own k)."),
    new: Optional[str] = typer.Option(None, "--new", help="Column of the targets file saying (true/false) who is "
                                                          "new in R2 (default: those matching no row of R1)."),
    first_manifest: Optional[Path] = typer.Option(None, "--manifest1", help="The first release's veil manifest."),
    second_manifest: Optional[Path] = typer.Option(None, "--manifest2", help="The second release's veil manifest."),
    hierarchy: List[str] = typer.Option([], "--hierarchy", help="COL=FILE: ARX hierarchy of a quasi-identifier, "
                                                                "to read the nodes releases publish; repeatable."),
    id_column: Optional[str] = typer.Option(None, "--id", help="Column of the targets file that names them."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write one row per target (CSV) here."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """Forward, cross and backward attacks on two versions of a growing table (Fung et al., EDBT 2008).

    Matches published records across the versions to rule out candidates: targets of the earlier
    table are attacked forward (in R1) and cross (in R2), new ones backward (in R2). Reports the
    people left fewer than k candidates; exits 1 when R2 is not BCF-k-anonymous with respect to R1.
    """
    from veil.attacks.correspondence import correspondence_attack

    outputs = None
    if out is not None:
        reads = [first, second, targets, *(m for m in (first_manifest, second_manifest) if m is not None),
                 *files_named(hierarchy, "--hierarchy")]
        outputs = OutputSet([out], reads=reads)
    with stage("matching records across the versions"):
        result = correspondence_attack(_release(first, first_manifest, delimiter),
                                       _release(second, second_manifest, delimiter), targets,
                                       quasi_identifiers=split_names(qi) or None,
                                       sensitive=split_names(sensitive) if sensitive is not None else None, k=k,
                                       new=new, hierarchies=parse_pairs(hierarchy, "--hierarchy"),
                                       id_column=id_column, delimiter=delimiter)
    if outputs is not None:
        with stage(f"writing {out}"), outputs:
            outputs.put(out, result.per_target().to_csv(index=False))
            outputs.commit()
    _print_summary("Tuple-correspondence attacks", result.summary(), as_json)
    if out is not None and not as_json:
        terminal().print(f"wrote {out}", markup=False)
    if not result.passed:
        raise typer.Exit(EXIT_FAILED_CHECK)


@attack_app.command("presence")
@fails_cleanly
@reads_tables
def presence_command(
    release: Path = typer.Argument(..., help="The released table (CSV or Parquet)."),
    population: Path = typer.Option(..., "--population", help="The population table the release was drawn from."),
    qi: Optional[str] = typer.Option(None, "--qi", help="Quasi-identifying columns (default: the manifest's)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="The release's veil manifest (the level of "
                                                                     "each quasi-identifier, and the hierarchy files "
                                                                     "that publish the population's values)."),
    hierarchy: List[str] = typer.Option([], "--hierarchy", help="COL=FILE: the ARX hierarchy the release generalized "
                                                                "a quasi-identifier with (default: the file its "
                                                                "manifest names); repeatable."),
    exposed_at: float = typer.Option(1.0, "--exposed-at", help="Membership probability at which a person counts "
                                                              "as exposed."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """The probability that each person of a population is in a release (membership disclosure).

    A person whose published tuple is shared by f released and F population records is in the
    release with probability f / F (what δ-presence bounds). The population is generalized through
    the hierarchies to the levels the manifest names. Exits 1 when someone's probability reaches
    --exposed-at.
    """
    from veil.attacks.presence import membership_attack

    with stage("matching the population with the release"):
        target = PublishedRelease(release, manifest=manifest, delimiter=delimiter,
                                  hierarchies=parse_pairs(hierarchy, "--hierarchy"))
        result = membership_attack(target, population,
                                   quasi_identifiers=split_names(qi) or None, exposed_at=exposed_at,
                                   delimiter=delimiter)
    _print_summary("Membership attack", result.summary(), as_json)
    if len(result.exposed):
        raise typer.Exit(EXIT_FAILED_CHECK)
