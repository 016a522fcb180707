"""``veil experiment tradeoff``: Brickell and Shmatikov's privacy/utility trade-off on Adult.

The lead registers :func:`tradeoff_command` on the ``experiment`` sub-app, e.g.
``experiment_app.command("tradeoff")(tradeoff_command)``. Errors a user can cause are one
sentence on standard error with exit status 2, and nothing is written.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from veil.clitools import fails_cleanly, progress_bar, split_names, stage
from veil.errors import DataError, ParameterError
from veil.experiments.tradeoff import (DEFAULT_K, DEFAULT_L, DEFAULT_SEED, DEFAULT_SUPPRESSION, DEFAULT_T, FILES,
                                       SYMBOLS, run_tradeoff, write_tradeoff)
from veil.output import check_targets


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


@fails_cleanly
def tradeoff_command(
    out: Path = typer.Option(Path("veil-tradeoff"), "--out",
                             help="Folder for tradeoff.csv, tradeoff.md and tradeoff.png (created if missing)."),
    k: str = typer.Option(_joined(DEFAULT_K), "--k", help="Values of k (k-anonymity), comma-separated; "
                                                          "'none' skips the model."),
    l: str = typer.Option(_joined(DEFAULT_L), "--l", help="Values of ℓ (entropy ℓ-diversity of occupation), "
                                                          "comma-separated; 'none' skips the model."),
    t: str = typer.Option(_joined(DEFAULT_T), "--t", help="Values of t (t-closeness of occupation, equal "
                                                          "distance), comma-separated; 'none' skips the model."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the sample, the train/test splits and the "
                                                          "classifiers (recorded in every output)."),
    classifiers: str = typer.Option("tree,bayes,logistic", "--classifiers",
                                    help="Classifiers of the workload, comma-separated: tree, bayes, logistic."),
    algorithm: str = typer.Option("fulldomain", "--algorithm", help="fulldomain (as in the paper) or mondrian."),
    suppression: float = typer.Option(DEFAULT_SUPPRESSION, "--suppression",
                                      help="Share of records full-domain generalization may suppress, in [0, 1)."),
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
    check_targets([out / name for name in FILES], make_folders=True)
    ks = parse_values(k, "--k", whole=True)
    ls = parse_values(l, "--l", whole=False)
    ts = parse_values(t, "--t", whole=False)
    started = time.perf_counter()
    with progress_bar("anonymizing and classifying") as progress:
        run = run_tradeoff(k=ks, l=ls, t=ts, seed=seed, classifiers=split_names(classifiers) or [""],
                           algorithm=algorithm.strip().lower(), suppression=suppression, sample=sample,
                           progress=progress)
    with stage(f"writing {out}"):
        written = write_tradeoff(run, out)
    console = Console(highlight=False)
    families = ", ".join(f"{len(run.config[p])} {SYMBOLS[p]}" for p in ("k", "l", "t") if run.config[p])
    console.print(f"tradeoff: {run.config['records']:,} Adult records, {families}, seed {run.config['seed']}: "
                  f"{run.releases} releases measured in {time.perf_counter() - started:.1f} s")
    console.print("wrote " + ", ".join(str(p) for p in written[:-1]) + f" and {written[-1]}")


__all__ = ["FILES", "parse_values", "tradeoff_command"]
