"""``veil experiment``: reproductions of the published experiments, each writing a table (CSV and
Markdown) and a figure (PNG) into a folder, all of them or none.

``veil experiment composition`` is the composition attack of Ganta, Kasiviswanathan and Smith
(KDD 2008) on Adult; ``veil experiment tradeoff`` is Brickell and Shmatikov's privacy/utility
trade-off on Adult (KDD 2008); ``veil experiment transparency`` sets the minimality attack (Wong
et al., VLDB 2007) on optimal full-domain, Mondrian and Ace (Xiao et al., TODS 2010) releases of
Adult; ``veil experiment alphabeta`` is the αβ algorithm of Rastogi, Suciu and Hong (VLDB 2007) on
Adult; ``veil experiment marginals`` is Kifer and Gehrke's anonymized marginals on Adult (SIGMOD
2006); ``veil experiment releases`` runs the attacks across releases (unsorted matching, join,
membership, tuple correspondence) on a careless and a careful publisher's releases of Adult.
Errors a user can cause are one sentence on standard error with exit status 2, and nothing is
written.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from veil.cli.attack import parse_levels
from veil.cli.console import command_group, fails_cleanly, progress_bar, split_names, stage, terminal
from veil.errors import DataError, ParameterError
from veil.experiments import alphabeta, composition, marginals, releases, tradeoff, transparency
from veil.output import check_targets

experiment_app = command_group(no_args_is_help=True, help="Reproduce the published experiments.")


def _integers(text: str, option: str) -> tuple[int, ...]:
    values = []
    for part in split_names(text):
        try:
            values.append(int(part))
        except ValueError:
            raise ParameterError(f"{option} takes whole numbers separated by commas, not {part!r}.") from None
    if not values:
        raise ParameterError(f"{option} names no value.")
    return tuple(values)


@experiment_app.command("composition")
@fails_cleanly
def composition_command(
    out: Path = typer.Option(Path("veil-composition"), "--out", help="Folder for composition.csv, .md, .png "
                                                                     "and .json."),
    k: str = typer.Option(",".join(map(str, composition.DEFAULT_K)), "--k",
                          help="Values of k, comma-separated."),
    releases: str = typer.Option("2", "--releases", help="Number of releases n, 2 to 4 (or a list: 2,3,4)."),
    pairs: str = typer.Option(",".join(composition.DEFAULT_PAIRS), "--pairs",
                              help="Algorithm combinations: mondrian, mdav or fulldomain joined by '-', "
                                   "alternating over the releases (or one per release)."),
    overlap: int = typer.Option(5000, "--overlap", help="People in every release (the paper's P)."),
    size: Optional[int] = typer.Option(None, "--size", help="Records per subset, overlap included "
                                                            "(default: the overlap plus an equal share of the rest)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generator that draws the subsets (recorded)."),
    variants: str = typer.Option("k", "--variants", help="k (k-anonymity), l (plus entropy ℓ-diversity), "
                                                         "t (plus t-closeness), comma-separated."),
    l: Optional[float] = typer.Option(None, "--l", help="ℓ of the ℓ-diversity variant (default 3; needs l in "
                                                         "--variants)."),
    t: Optional[float] = typer.Option(None, "--t", help="t of the t-closeness variant (default 0.2; needs t in "
                                                         "--variants)."),
    confidence: str = typer.Option("1,1/2,1/3,1/4,1/5", "--confidence",
                                   help="Confidence levels C in (0, 1] for PVP_C (1, the perfect breach, always)."),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON instead of the table."),
) -> None:
    """Reproduce the composition attack of Ganta, Kasiviswanathan and Smith (KDD 2008) on Adult.

    Draws subsets of the bundled Adult table that share an overlap population, anonymizes each
    independently (Mondrian, MDAV, …) for every k and variant, runs the intersection attack on
    the overlap population and writes a table (CSV and Markdown), a figure (PNG) and the settings
    with the seed (JSON) into --out, all or nothing.
    """
    from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, load_adult

    if out.exists() and not out.is_dir():
        raise ParameterError(f"{str(out)!r} is a file; give a folder for the experiment's outputs.")
    chosen = tuple(split_names(variants))
    for option, value, variant in (("--l", l, "l"), ("--t", t, "t")):
        if value is not None and variant not in chosen:
            raise ParameterError(f"{option} sets the {variant} variant, which --variants does not run; add {variant} "
                                 f"to --variants or leave {option} out.")
    settings = composition.CompositionSettings(
        k=_integers(k, "--k"), releases=_integers(releases, "--releases"), pairs=tuple(split_names(pairs)),
        overlap=overlap, size=size, seed=seed, variants=chosen, l=3.0 if l is None else l, t=0.2 if t is None else t,
        confidence=tuple(parse_levels(confidence)))
    check_targets([out / name for name in composition.FILES], make_folders=True)
    dataset = load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)
    composition.check_settings(settings, dataset.num_rows)  # refuse bad settings before any work
    with progress_bar("composition experiment") as progress:
        result = composition.run_composition(settings, progress=progress, dataset=dataset)
    with stage(f"writing {out}"):
        paths = result.write(out)
    if as_json:
        sys.stdout.write(json.dumps({"info": result.info, "rows": result.rows}, indent=2, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(result.markdown())
    console = terminal()
    console.print(f"wrote {', '.join(str(p) for p in paths)} in {result.info['seconds']['total']:.1f} s",
                  markup=False)


def _joined(values) -> str:
    return ",".join(f"{v:g}" for v in values)


def parse_values(text: Optional[str], option: str, whole: bool) -> list[float]:
    """``"2,5,10"`` into numbers; ``""`` or ``"none"`` into an empty list (the model is skipped).

    Raises:
        ParameterError: an item is not a number (a whole number when ``whole``).
    """
    if text is None or text.strip().lower() in ("", "none", "-"):
        return []
    values = []
    for item in split_names(text):
        try:
            value = int(item) if whole else float(item)
        except ValueError:
            kind = "whole numbers" if whole else "numbers"
            raise ParameterError(f"{option} takes comma-separated {kind}, not {item!r}.") from None
        values.append(value)
    return values


@experiment_app.command("tradeoff")
@fails_cleanly
def tradeoff_command(
    out: Path = typer.Option(Path("veil-tradeoff"), "--out",
                             help="Folder for tradeoff.csv, tradeoff.md and tradeoff.png (created if missing)."),
    k: str = typer.Option(_joined(tradeoff.DEFAULT_K), "--k",
                          help="Values of k (k-anonymity), comma-separated; 'none' skips the model."),
    l: str = typer.Option(_joined(tradeoff.DEFAULT_L), "--l",
                          help="Values of ℓ (entropy ℓ-diversity of occupation), comma-separated; 'none' skips the "
                               "model."),
    t: str = typer.Option(_joined(tradeoff.DEFAULT_T), "--t",
                          help="Values of t (t-closeness of occupation, equal distance), comma-separated; 'none' "
                               "skips the model."),
    seed: int = typer.Option(tradeoff.DEFAULT_SEED, "--seed",
                             help="Seed of the sample, the train/test splits and the classifiers (recorded in every "
                                  "output)."),
    classifiers: str = typer.Option("tree,bayes,logistic", "--classifiers",
                                    help="Classifiers of the workload, comma-separated: tree, bayes, logistic."),
    algorithm: str = typer.Option("fulldomain", "--algorithm", help="fulldomain (as in the paper) or mondrian."),
    suppression: Optional[float] = typer.Option(None, "--suppression",
                                                help="Share of records full-domain generalization may suppress, in "
                                                     f"[0, 1) (default {tradeoff.DEFAULT_SUPPRESSION:g})."),
    sample: Optional[int] = typer.Option(None, "--sample", help="Use this many Adult records, drawn with the "
                                                                "seed (default: all 30,162)."),
) -> None:
    """Brickell and Shmatikov's privacy/utility trade-off on the bundled Adult table.

    Anonymizes Adult for each k, ℓ and t; trains a decision tree, naive Bayes
    and logistic regression on the published quasi-identifiers to predict
    occupation (sensitive) and salary-class (neutral); and sets the accuracy
    gain over trivial sanitization (U_san − U_base) against the adversary's
    knowledge gain about occupation (A_know, A_acc), with trivial sanitization
    and the original table (U_max) as reference lines.

    Writes OUT/tradeoff.csv, OUT/tradeoff.md and OUT/tradeoff.png, all of them
    or none.
    """
    if out.exists() and not out.is_dir():
        raise DataError(f"{str(out)!r} is a file; give a folder for the experiment's outputs.")
    check_targets([out / name for name in tradeoff.FILES], make_folders=True)
    ks = parse_values(k, "--k", whole=True)
    ls = parse_values(l, "--l", whole=False)
    ts = parse_values(t, "--t", whole=False)
    if suppression is not None and algorithm.strip().lower() == "mondrian":
        raise ParameterError("--suppression applies to full-domain generalization; Mondrian suppresses nothing, so "
                             "leave it out.")
    suppression = tradeoff.DEFAULT_SUPPRESSION if suppression is None else suppression
    started = time.perf_counter()
    with progress_bar("anonymizing and classifying") as progress:
        run = tradeoff.run_tradeoff(k=ks, l=ls, t=ts, seed=seed, classifiers=split_names(classifiers) or [""],
                           algorithm=algorithm.strip().lower(), suppression=suppression, sample=sample,
                           progress=progress)
    with stage(f"writing {out}"):
        written = tradeoff.write_tradeoff(run, out)
    console = terminal()
    families = ", ".join(f"{len(run.config[p])} {tradeoff.SYMBOLS[p]}" for p in ("k", "l", "t") if run.config[p])
    console.print(f"tradeoff: {run.config['records']:,} Adult records, {families}, seed {run.config['seed']}: "
                  f"{run.releases} releases measured in {time.perf_counter() - started:.1f} s")
    console.print("wrote " + ", ".join(str(p) for p in written[:-1]) + f" and {written[-1]}")


@experiment_app.command("transparency")
@fails_cleanly
def transparency_command(
    out: Path = typer.Option(Path("veil-transparency"), "--out",
                             help="Folder for transparency.csv, .md and .png (created if missing)."),
    l: str = typer.Option(_joined(transparency.DEFAULT_L), "--l", help="Values of ℓ (whole numbers ≥ 2), "
                                                                        "comma-separated."),
    model: Optional[str] = typer.Option(None, "--model", help="ℓ-diversity of full-domain and Mondrian: distinct "
                                                              "(default) or entropy."),
    algorithms: str = typer.Option(",".join(transparency.ALGORITHMS), "--algorithms",
                                   help="fulldomain, mondrian, ace, comma-separated."),
    seed: int = typer.Option(transparency.DEFAULT_SEED, "--seed", help="Seed of Ace's Assign and of the sample "
                                                                       "(recorded)."),
    sample: Optional[int] = typer.Option(None, "--sample", help="Use this many Adult records, drawn with the seed "
                                                                "(default: all 30,162)."),
) -> None:
    """The adversary who knows the algorithm, on Adult: optimal full-domain,
    Mondrian and Ace against the minimality attack, for each ℓ.

    Reports the share of people whose posterior of some occupation exceeds
    1/ℓ (exact where the attack proves it, otherwise a lower bound) and
    each release's utility, and writes OUT/transparency.csv, .md and .png,
    all of them or none.
    """
    if out.exists() and not out.is_dir():
        raise DataError(f"{str(out)!r} is a file; give a folder for the experiment's outputs.")
    check_targets([out / name for name in transparency.FILES], make_folders=True)
    ls = parse_values(l, "--l", whole=True)
    chosen = split_names(algorithms)
    if model is not None and not {"fulldomain", "mondrian"} & set(chosen):
        raise ParameterError("--model sets the ℓ-diversity of full-domain and Mondrian, which --algorithms does not "
                             "run; leave --model out.")
    with progress_bar("anonymizing and attacking") as progress:
        run = transparency.run_transparency(l=ls, model=(model or "distinct").strip().lower(), seed=seed,
                                            sample=sample, algorithms=chosen, progress=progress)
    with stage(f"writing {out}"):
        written = transparency.write_transparency(run, out)
    sys.stdout.write(transparency.markdown_text(run))
    terminal().print("wrote " + ", ".join(str(p) for p in written), markup=False)


@experiment_app.command("alphabeta")
@fails_cleanly
def alphabeta_command(
    out: Path = typer.Option(Path("veil-alphabeta"), "--out",
                             help="Folder for alphabeta.csv, alphabeta.md and alphabeta.png (created if missing)."),
    gamma: str = typer.Option(_joined(alphabeta.DEFAULT_GAMMAS), "--gamma",
                              help="Posterior bounds γ, comma-separated, each in (0, 1)."),
    k: float = typer.Option(alphabeta.DEFAULT_K, "--k", help="The prior bound as d = k·n/m."),
    queries: int = typer.Option(alphabeta.DEFAULT_QUERIES, "--queries", help="Random counting queries in the "
                                                                             "workload."),
    views: int = typer.Option(alphabeta.DEFAULT_VIEWS, "--views", help="Views drawn per γ (errors pooled)."),
    seed: int = typer.Option(alphabeta.DEFAULT_SEED, "--seed", help="Seed of the workload and the coins (recorded "
                                                                    "in every output)."),
) -> None:
    """The αβ algorithm of Rastogi, Suciu and Hong on the bundled Adult table.

    Publishes Adult over its nine columns (the domains of their hierarchies:
    about 10⁹ tuples) for each γ at d = k·n/m, with α and β per Theorem 4.3,
    and answers random counting queries from each view; reports α, β, the
    size of the view and the estimation error against ρ = √(k/γ) and Theorem
    4.4's bound. The views are seeded experiments, not releases.

    Writes OUT/alphabeta.csv, OUT/alphabeta.md and OUT/alphabeta.png, all of
    them or none.
    """
    if out.exists() and not out.is_dir():
        raise DataError(f"{str(out)!r} is a file; give a folder for the experiment's outputs.")
    check_targets([out / name for name in alphabeta.FILES], make_folders=True)
    gammas = parse_values(gamma, "--gamma", whole=False)
    started = time.perf_counter()
    with progress_bar("publishing and answering") as progress:
        run = alphabeta.run_alphabeta(gammas=gammas, k=k, queries=queries, views=views, seed=seed, progress=progress)
    with stage(f"writing {out}"):
        written = alphabeta.write_alphabeta(run, out)
    console = terminal()
    console.print(f"alphabeta: Adult, m = {run.config['m']:,}, n = {run.config['n']:,}, {len(run.rows)} values of γ "
                  f"× {views} views, {queries:,} queries, seed {seed}, in {time.perf_counter() - started:.1f} s")
    for row in run.rows:
        console.print(f"  γ = {row['gamma']:g}: α = {row['alpha']:.6f}, β = {row['beta']:.3g}, |V| ≈ "
                      f"{row['view_rows']:,.0f}, RMS error {row['rms_error']:.1f} (ρ√n = {row['rho_sqrt_n']:.1f})")
    console.print("wrote " + ", ".join(str(p) for p in written[:-1]) + f" and {written[-1]}")


@experiment_app.command("marginals")
@fails_cleanly
def marginals_command(
    out: Path = typer.Option(Path("veil-marginals"), "--out",
                             help="Folder for marginals.csv, marginals.png and collections.json (created if missing)."),
    k: str = typer.Option(",".join(map(str, marginals.DEFAULT_K)), "--k",
                          help="Values of k (k-anonymity of the table, k-link anonymity of the marginals), "
                               "comma-separated."),
    l: float = typer.Option(marginals.DEFAULT_L, "--l",
                            help="ℓ of entropy ℓ-diversity of occupation (MaxEnt ℓ-diversity of the marginals)."),
    max_marginals: int = typer.Option(marginals.DEFAULT_MARGINALS, "--max-marginals",
                                      help="The most marginals added to the table."),
    max_attributes: int = typer.Option(marginals.DEFAULT_ATTRIBUTES, "--max-attributes",
                                       help="The most attributes in one marginal."),
    max_cells: Optional[int] = typer.Option(None, "--max-cells", help="The most cells in one marginal (default: "
                                                                       "no limit)."),
) -> None:
    """Kifer and Gehrke's anonymized marginals on the bundled Adult table (SIGMOD 2006).

    For each k: veil's optimal k-anonymous, entropy ℓ-diverse full-domain
    table (no suppression, minimal KL-divergence), then the marginals the
    greedy search adds under k-link anonymity and MaxEnt ℓ-diversity. Writes
    the KL-divergence after each addition (marginals.csv), a figure of it
    against the number of marginals (marginals.png) and the chosen
    collections (collections.json), all of them or none.
    """
    if out.exists() and not out.is_dir():
        raise DataError(f"{str(out)!r} is a file; give a folder for the experiment's outputs.")
    check_targets([out / name for name in marginals.FILES], make_folders=True)
    started = time.perf_counter()
    with progress_bar("choosing marginals") as progress:
        run = marginals.run_marginals(k=_integers(k, "--k"), l=l, max_marginals=max_marginals,
                                      max_attributes=max_attributes, max_cells=max_cells, progress=progress)
    with stage(f"writing {out}"):
        written = marginals.write_marginals(run, out)
    console = terminal()
    for value, single, added in run.summary():
        console.print(f"k = {value}, ℓ = {l:g}: KL-divergence {single:.4f} nats for the table alone, {added:.4f} with "
                      "its marginals", markup=False)
    console.print(f"wrote {', '.join(str(p) for p in written)} in {time.perf_counter() - started:.1f} s", markup=False)


@experiment_app.command("releases")
@fails_cleanly
def releases_command(
    out: Path = typer.Option(Path("veil-releases"), "--out", help="Folder for releases.csv and releases.png."),
    k: str = typer.Option(_joined(releases.DEFAULT_K), "--k", help="Values of k, comma-separated."),
    seed: int = typer.Option(0, "--seed", help="Seed of the careful publisher's shuffles and of the sample."),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON instead of the table."),
) -> None:
    """Attacks across releases of Adult: a careless publisher against a careful one.

    Publishes Adult twice in the same row order (unsorted matching), as two projections that
    share columns (join attack), as a sample of the population (membership) and as two versions
    of a growing table (forward, cross and backward attacks), for each k, and counts the people
    each attack exposes. Writes OUT/releases.csv and OUT/releases.png, both or
    neither.
    """
    if out.exists() and not out.is_dir():
        raise ParameterError(f"{str(out)!r} is a file; give a folder for the experiment's outputs.")
    check_targets([out / name for name in releases.FILES], make_folders=True)
    ks = [int(v) for v in parse_values(k, "--k", whole=True)]
    with stage("publishing and attacking"):
        result = releases.run_releases(ks, seed=seed)
    with stage(f"writing {out}"):
        paths = result.write(out)
    if as_json:
        sys.stdout.write(json.dumps({"seed": result.seed, "rows": result.rows}, indent=2, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(result.frame.to_string(index=False) + "\n")
    terminal().print(f"wrote {', '.join(str(p) for p in paths)} in {result.seconds:.1f} s", markup=False)
