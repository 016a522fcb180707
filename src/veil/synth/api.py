"""The Python interface of DP synthetic data: :func:`synthesize` and the :class:`SyntheticRelease`
it returns (``veil synth`` is the same on the command line, :mod:`veil.cli.synth`).

:func:`synthesize` checks every argument and encodes the table in the public domain first (a value
the domain does not cover is refused before any noise is drawn), then fits the mechanism (MST,
McKenna, Sheldon and Miklau 2021, or AIM, McKenna, Mullins, Sheldon and Miklau, PVLDB 2022: the
only step that reads the private table under differential privacy, spending exactly the budget
given), samples the rows from the fitted model and decodes them (post-processing, free), and, when
asked, evaluates the synthetic table against the real one (:mod:`veil.synth.evaluation`: NOT
private, for the curator only).

Randomness: ``rng=None`` (the default) draws the noise from the secure samplers and the rows from a
generator seeded by the operating system; an integer seed or a ``numpy.random.Generator`` makes the
run reproducible and **not fit for release** (the manifest and the report say so, and ``veil
publish`` refuses it).

Nothing here touches a ledger or a budget file: the budget is charged when the release is published
(``veil publish``, :mod:`veil.ledger.gate`), in one transaction with its record.
"""

from __future__ import annotations

import math
import numbers
import secrets
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Sequence

import numpy as np

from veil.errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

    from veil.synth.domain import SynthDomain
    from veil.synth.evaluation import Evaluation
    from veil.synth.fit import SynthFit

__all__ = ["DEFAULT_MAX_MODEL_CELLS", "MECHANISMS", "SHADOW_RUNS", "SyntheticRelease", "check_budget", "synthesize"]

MECHANISMS = ("mst", "aim")
#: the shadow-model attack's training and evaluation runs when none are given, per mechanism: each
#: run is one fit (MST about 0.2 s on 10,000 Adult records, AIM about 1.5 s, on 2 cores), so AIM gets
#: half as many, which widens its interval.
SHADOW_RUNS = {"mst": 16, "aim": 8}
#: AIM's model-size limit when none is given (the paper's 80 MB of float64 cells, rounded).
DEFAULT_MAX_MODEL_CELLS = 10_000_000

_SEEDED = "seeded: not fit for release"


@dataclass(frozen=True)
class SyntheticRelease:
    """Synthetic data and what made it.

    Attributes:
        table: the synthetic table (pandas, or polars for a polars input), in the domain's column order.
        fit: the mechanism's fit (:class:`~veil.synth.fit.SynthFit`): the model, every measurement
            and selection, the budget spent.
        evaluation: the evaluation against the real table (:class:`~veil.synth.evaluation.Evaluation`,
            computed from the private table, NOT differentially private: for the curator's decision,
            never for publication), or ``None``.
        codes: the synthetic rows as codes of the domain.
        seeded: whether the run was seeded (reproducible; not fit for release).
        unfit_reasons: why the release is not fit for release (empty when it is).
    """

    table: pd.DataFrame
    fit: SynthFit
    evaluation: Evaluation | None
    codes: np.ndarray
    seeded: bool
    unfit_reasons: tuple[str, ...] = ()

    @property
    def domain(self) -> SynthDomain:
        return self.fit.domain

    @property
    def fit_for_release(self) -> bool:
        """True only for a secure run over a public domain."""
        return not self.unfit_reasons

    @property
    def randomness(self) -> str:
        """``secure``, or ``seeded: not fit for release``."""
        return _SEEDED if self.seeded else "secure"

    def manifest(self, *, output_format: str = "csv") -> dict:
        """The public manifest's body (what :func:`veil.synth.release.synthetic_manifest` writes)."""
        from veil.synth.release import synthetic_manifest

        return synthetic_manifest(self, output_format=output_format)

    def write(self, out, *, table_name: str = "synthetic.csv", report: bool = True, fingerprint: str | None = None,
              key: bytes | None = None, reads=(), title: str | None = None) -> dict:
        """Write the synthetic table (``table_name``: ``.csv``, or ``.parquet`` for Parquet), its sealed
        manifest and the report into the folder ``out``, all or none; returns the manifest (see
        :func:`veil.synth.release.write_synthetic_release`)."""
        from veil.synth.release import write_synthetic_release

        return write_synthetic_release(self, out, table_name=table_name, report=report, fingerprint=fingerprint,
                                       key=key, reads=reads, title=title)


def check_budget(epsilon=None, delta=None, rho=None) -> tuple[Fraction, Fraction | None, Fraction | None]:
    """The budget as ρ-zCDP, given exactly one way: ``epsilon`` and ``delta`` (converted by
    :func:`veil.synth.budget.rho_for`, the largest ρ whose (ε, δ) is within them), or ``rho``.

    Returns:
        ``(rho, epsilon, delta)``, exact; ε and δ are ``None`` for a budget given in ρ.

    Raises:
        ParameterError: both or neither way, ε <= 0, δ outside (0, 1), ρ <= 0, a value that is not
            a finite number.
    """
    from veil.dp.exact import exact

    if (epsilon is None) == (rho is None) or (rho is not None and delta is not None) \
            or (epsilon is not None and delta is None):
        raise ParameterError("give the budget one way: epsilon and delta, or rho alone.")
    if rho is not None:
        r = exact(_number(rho, "rho"), "rho")
        if r <= 0:
            raise ParameterError(f"rho must be greater than 0, got {rho!r}.")
        return r, None, None
    eps, dlt = exact(_number(epsilon, "epsilon"), "epsilon"), exact(_number(delta, "delta"), "delta")
    if eps <= 0:
        raise ParameterError(f"epsilon must be greater than 0, got {epsilon!r}.")
    if not 0 < dlt < 1:
        raise ParameterError(f"delta must be above 0 and below 1, got {delta!r}.")
    from veil.synth.budget import rho_for

    return rho_for(eps, dlt), eps, dlt


def _number(value, name: str):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str, Fraction)) \
            or (isinstance(value, float) and not math.isfinite(value)):
        raise ParameterError(f"{name} must be a finite number, got {value!r}.")
    return value


def _workload(workload, names: Sequence[str]):
    if workload is None:
        return None
    cliques = []
    for entry in workload:
        clique, weight = (entry if len(entry) == 2 and not isinstance(entry[0], str) else (entry, 1.0))
        clique = tuple(clique) if not isinstance(clique, str) else (clique,)
        unknown = [c for c in clique if c not in names]
        if unknown:
            raise ParameterError(f"the workload names '{unknown[0]}', which is not a column of the domain "
                                 f"({', '.join(names)}).")
        if not clique or len(set(clique)) != len(clique):
            raise ParameterError(f"a marginal of the workload ({', '.join(clique) or 'none'}) must name one or more "
                                 "columns, each once.")
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not weight > 0 \
                or not math.isfinite(weight):
            raise ParameterError(f"the weight of marginal ({', '.join(clique)}) must be a number above 0, got "
                                 f"{weight!r}.")
        cliques.append((clique, float(weight)))
    if not cliques:
        raise ParameterError("the workload lists no marginal; give at least one, or None for every 2- and 3-way one.")
    return cliques


def _generators(rng) -> tuple[object, np.random.Generator, np.random.Generator, bool]:
    """The noise argument of the mechanisms, the generator of the post-processing (sampling and
    decoding), that of the evaluation, and whether the run is seeded."""
    if rng is None:
        fresh = np.random.SeedSequence(secrets.randbits(128)).spawn(2)
        return None, np.random.default_rng(fresh[0]), np.random.default_rng(fresh[1]), False
    if isinstance(rng, np.random.Generator):
        return rng, rng, rng, True
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        streams = np.random.SeedSequence(int(rng)).spawn(3)
        return np.random.default_rng(streams[0]), np.random.default_rng(streams[1]), \
            np.random.default_rng(streams[2]), True
    raise ParameterError(f"rng must be None (secure), a whole number >= 0 or a numpy.random.Generator, got {rng!r}.")


def synthesize(table: pd.DataFrame, domain: SynthDomain, *, mechanism: str = "mst", epsilon=None, delta=None,
               rho=None, workload=None, rows: int | None = None, rng=None,
               max_model_cells: int = DEFAULT_MAX_MODEL_CELLS, evaluate: bool = True,
               holdout: pd.DataFrame | None = None, target: str | None = None,
               quasi_identifiers: Sequence[str] | None = None, shadow_runs: int | None = None,
               shadow_trials: int | None = None, shadow_targets: int = 5) -> SyntheticRelease:
    """Differentially private synthetic data of ``table`` over the public ``domain``.

    The mechanism reads the table only through noisy marginals and spends exactly the budget given
    (ρ-zCDP; the sum of its rounds' ρ), so the synthetic table, the fitted model and every
    measurement's noise scale are (ε, δ)-DP (or ρ-zCDP); the evaluation is not.

    Args:
        table: the private table (pandas or polars; the synthetic table is of the same kind); only the
            domain's columns are read.
        domain: every column's PUBLIC values (:class:`~veil.synth.domain.SynthDomain`).
        mechanism: ``"mst"`` (McKenna, Sheldon and Miklau 2021) or ``"aim"`` (McKenna et al., PVLDB 2022).
        epsilon, delta: the budget as (ε, δ)-DP; or
        rho: the budget as ρ-zCDP (exactly one way).
        workload: AIM's marginals: column tuples, or ``(columns, weight)`` pairs (default: every
            2- and 3-way marginal); MST takes none.
        rows: the synthetic table's rows (default: the model's noisy count).
        rng: ``None`` (secure, fit for release), or an integer seed / ``numpy.random.Generator``
            (reproducible, NOT fit for release).
        max_model_cells: AIM's model-size limit in cells.
        evaluate: evaluate the synthetic table against the real one (the report's numbers).
        holdout: rows of the same population the mechanism never saw: the membership attack's control.
        target: the column the machine-learning utility predicts (default: not measured).
        quasi_identifiers: the columns the linkage, singling-out and k-anonymity checks use
            (default: every column).
        shadow_runs, shadow_trials, shadow_targets: the shadow-model membership attack of the
            evaluation (:mod:`veil.synth.evaluation.shadow_models`, run with a holdout): it re-runs
            the same mechanism with the same parameters on ``shadow_runs`` shadow training sets
            drawn from the holdout (0 skips it) and is scored on ``shadow_trials`` fresh ones, for
            ``shadow_targets`` target records; runs and trials default to :data:`SHADOW_RUNS` of
            the mechanism. Its noise is seeded from the evaluation's generator (an attacker's
            simulation: never the secure source, never a release, never charged).

    Returns:
        The :class:`SyntheticRelease`.

    Raises:
        ParameterError: a mechanism veil does not have, the budget not given exactly one way,
            ε <= 0, δ outside (0, 1), ρ <= 0, rows < 1, a workload (or target, quasi-identifier)
            naming a column outside the domain, a workload given to MST, a bad ``rng``, a shadow
            cost out of range.
        DomainError: a column of the domain missing from the table (or the holdout), or a value
            outside its column's domain.
        VeilError: the mechanism's own refusals (e.g. a model-size limit too small for any candidate).
    """
    import pandas as pd

    from veil.synth.domain import SynthDomain

    polars = _is_polars(table)
    table = table.to_pandas() if polars else table
    holdout = holdout.to_pandas() if _is_polars(holdout) else holdout
    if mechanism not in MECHANISMS:
        raise ParameterError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}.")
    if not isinstance(domain, SynthDomain):
        raise ParameterError(f"domain must be a veil.synth.SynthDomain, got {type(domain).__name__}.")
    if not isinstance(table, pd.DataFrame):
        raise ParameterError(f"table must be a pandas DataFrame, got {type(table).__name__}.")
    rho_value, eps, dlt = check_budget(epsilon, delta, rho)
    names = list(domain.names)
    cliques = _workload(workload, names)
    if cliques is not None and mechanism == "mst":
        raise ParameterError("mst chooses its own marginals and takes no workload; give the workload to aim.")
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, numbers.Integral) or rows < 1):
        raise ParameterError(f"rows must be a whole number of at least 1, got {rows!r}.")
    if isinstance(max_model_cells, bool) or not isinstance(max_model_cells, numbers.Integral) or max_model_cells < 1:
        raise ParameterError(f"max_model_cells must be a whole number of at least 1, got {max_model_cells!r}.")
    for name in ([target] if target is not None else []) + list(quasi_identifiers or []):
        if name not in names:
            raise ParameterError(f"'{name}' is not a column of the domain ({', '.join(names)}); evaluate columns of "
                                 "the synthetic table.")
    from veil.synth.evaluation.shadow_models import check_costs

    default_runs = SHADOW_RUNS[mechanism]
    shadow = check_costs(shadow_targets, default_runs if shadow_runs is None else shadow_runs,
                         default_runs if shadow_trials is None else shadow_trials, None)
    if holdout is not None and not isinstance(holdout, pd.DataFrame):
        raise ParameterError(f"holdout must be a pandas DataFrame, got {type(holdout).__name__}.")
    noise, sampling, evaluating, seeded = _generators(rng)
    # Encoded before any noise is drawn: a value outside the domain is refused, spending nothing.
    codes = domain.encode(table)
    held = domain.encode(holdout) if holdout is not None and evaluate else None
    if mechanism == "mst":
        from veil.synth.mst import mst

        fit = mst(codes, domain, rho=rho_value, noise=noise)
    else:
        from veil.synth.aim import aim

        fit = aim(codes, domain, rho=rho_value, noise=noise, workload=cliques,
                  max_model_cells=int(max_model_cells))
    if eps is not None and getattr(fit, "epsilon", None) is None:
        fit = _with_budget(fit, eps, dlt)
    synthetic = fit.sample(None if rows is None else int(rows), sampling)
    frame = domain.decode(synthetic, sampling)
    evaluation = None
    if evaluate:
        from veil.synth.evaluation import evaluate as run_evaluation

        evaluation = run_evaluation(codes, synthetic, names, list(domain.shape), holdout=held, target=target,
                                    workload=None if cliques is None else [c for c, _ in cliques],
                                    quasi_identifiers=None if quasi_identifiers is None else list(quasi_identifiers),
                                    rng=evaluating,
                                    generator=_shadow_generator(mechanism, domain, rho_value, cliques,
                                                                int(max_model_cells), rows, codes.shape[0]),
                                    shadow_targets=shadow[0], shadow_runs=shadow[1], shadow_trials=shadow[2],
                                    shadow_note=_shadow_note(mechanism, shadow_runs, shadow_trials))
    if polars:
        import polars as pl

        frame = pl.from_pandas(frame)
    return SyntheticRelease(frame, fit, evaluation, synthetic, seeded, _unfit(fit, domain, seeded))


def _shadow_generator(mechanism: str, domain, rho: Fraction, cliques, max_model_cells: int, rows: int | None,
                      real_rows: int):
    """The shadow-model attack's simulation of the release: ``generate(codes, rng)`` fits the same
    mechanism with the same ρ, workload and model-size limit to ``codes`` and samples as many rows
    (or, when the release's row count was fixed, that count scaled to ``codes``' size). The noise
    is a seeded source on ``rng`` (the evaluation's generator): the attacker's simulation, never
    the secure sampler, never a release, and nothing is charged."""
    def generate(codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if mechanism == "mst":
            from veil.synth.mst import mst

            fit = mst(codes, domain, rho=rho, noise=rng)
        else:
            from veil.synth.aim import aim

            fit = aim(codes, domain, rho=rho, noise=rng, workload=cliques, max_model_cells=max_model_cells)
        wanted = codes.shape[0] if rows is None else max(1, round(int(rows) * codes.shape[0] / real_rows))
        return fit.sample(wanted, rng)

    return generate


def _shadow_note(mechanism: str, runs, trials) -> str | None:
    if mechanism == "aim" and runs is None and trials is None:
        return (f"AIM takes seconds per fit, so by default it gets {SHADOW_RUNS['aim']} training and "
                f"{SHADOW_RUNS['aim']} evaluation runs (MST {SHADOW_RUNS['mst']} and {SHADOW_RUNS['mst']}), "
                "which widens the interval.")
    return None


def _is_polars(frame) -> bool:
    return type(frame).__module__.split(".")[0] == "polars" and hasattr(frame, "to_pandas")


def _with_budget(fit, epsilon: Fraction, delta: Fraction):
    """The fit with the (ε, δ) it was asked for recorded (the mechanisms take ρ alone)."""
    import dataclasses

    return dataclasses.replace(fit, epsilon=float(epsilon), delta=float(delta))


def _unfit(fit, domain, seeded: bool) -> tuple[str, ...]:
    """Why the release is not fit for release, each reason a clause (the mechanism's, then ours)."""
    from veil.errors import lower_first

    reasons = [lower_first(str(r).strip().rstrip(".")) for r in getattr(fit, "unfit_reasons", ()) or ()]
    if not getattr(fit, "fit_for_release", True) and not reasons:
        reasons.append("the mechanism says it is not fit for release")
    if seeded and not any("seed" in r for r in reasons):
        reasons.append("the run was seeded (reproducible randomness), not drawn from the secure source")
    read = [c.name for c in domain.columns if c.source == "data"]
    if read and not any("read from the private table" in r for r in reasons):
        reasons.append(f"the domain of {', '.join(repr(n) for n in read)} was read from the private table")
    return tuple(dict.fromkeys(reasons))
