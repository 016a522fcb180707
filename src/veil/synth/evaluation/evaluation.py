"""The evaluation of a synthetic table before release: fidelity, utility and privacy, each number
with a sentence saying what it means.

Every number here is computed from the private table (and the holdout): none of it is covered by
the differential-privacy guarantee of the synthetic table, so it is for the curator's decision
whether to release and must not be published with the release.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.errors import ParameterError
from veil.synth.evaluation.disclosure import Disclosure, disclosure
from veil.synth.evaluation.inputs import check_tables, column_indices
from veil.synth.evaluation.linkage import Linkage, linkage
from veil.synth.evaluation.marginal_distance import MarginalDistance, marginal_distance
from veil.synth.evaluation.membership import Membership, membership
from veil.synth.evaluation.ml_utility import MLUtility, ml_utility
from veil.synth.evaluation.sections import Row, Section
from veil.synth.evaluation.shadow_models import (
    DEFAULT_RUNS,
    DEFAULT_TARGETS,
    DEFAULT_TRIALS,
    Generator,
    ShadowAttack,
    check_costs,
    shadow_attack,
)
from veil.synth.evaluation.singling_out import SinglingOut, singling_out
from veil.synth.evaluation.threads import single_thread

NOTICE = ("These numbers are computed from the private table and are not differentially private: they are for the "
          "curator's decision whether to release, and must not be published with the synthetic table.")


@dataclass(frozen=True)
class Evaluation:
    """Every measure of :func:`evaluate`, with :meth:`sections` for a report and :meth:`to_dict`
    for a JSON file (both private to the curator)."""
    real_rows: int
    synthetic_rows: int
    holdout_rows: int | None
    columns: tuple[str, ...]
    marginals: MarginalDistance
    utility: MLUtility
    membership: Membership
    singling_out: SinglingOut
    linkage: Linkage
    disclosure: Disclosure
    seconds: float
    shadow: ShadowAttack | None = None
    notice: str = NOTICE

    def to_dict(self) -> dict:
        """Every number, JSON-ready (plain dicts, lists, text, numbers and None)."""
        return {"notice": self.notice, "differentially_private": False, "real_rows": self.real_rows,
                "synthetic_rows": self.synthetic_rows, "holdout_rows": self.holdout_rows,
                "columns": list(self.columns), "seconds": self.seconds,
                "marginals": self.marginals.to_dict(), "ml_utility": self.utility.to_dict(),
                "membership": self.membership.to_dict(),
                "shadow_model": None if self.shadow is None else self.shadow.to_dict(),
                "singling_out": self.singling_out.to_dict(),
                "linkage": self.linkage.to_dict(), "disclosure": self.disclosure.to_dict()}

    def sections(self) -> list[Section]:
        """What a report renders: sections (``title``, ``rows``), each row a ``(measure, value,
        meaning)`` of text, the first saying what these numbers are."""
        holdout = ("no holdout (the privacy attacks that need one were not run)" if self.holdout_rows is None
                   else f"{self.holdout_rows} holdout records (real records not used to fit)")
        about = Section("About this evaluation", (
            Row("not for publication", "private", self.notice),
            Row("tables compared", f"{self.real_rows} real / {self.synthetic_rows} synthetic",
                f"The real training table and the synthetic table over {len(self.columns)} columns, with {holdout}."),
            Row("time", f"{self.seconds:.1f} s", "Time the evaluation took."),
        ))
        return [about, self.marginals.section(), self.utility.section(), self.membership.section()] + \
            ([] if self.shadow is None else [self.shadow.section()]) + \
            [self.singling_out.section(), self.linkage.section(), self.disclosure.section()]


def evaluate(real: np.ndarray, synthetic: np.ndarray, names: Sequence[str], sizes: Sequence[int], *,
             holdout: np.ndarray | None = None, target: str | None = None,
             workload: Sequence[tuple[str, ...]] | None = None,
             quasi_identifiers: Sequence[str] | None = None,
             rng: np.random.Generator, max_marginals: int | None = None,
             generator: Generator | None = None, shadow_targets: int = DEFAULT_TARGETS,
             shadow_runs: int = DEFAULT_RUNS, shadow_trials: int = DEFAULT_TRIALS,
             shadow_rows: int | None = None, shadow_note: str | None = None) -> Evaluation:
    """Evaluate a synthetic table against the real table it was fitted on, before release.

    Parameters:
        real: the real (training) records, an n × d array of integer codes, column j in
            0..sizes[j]−1 (the representation ``veil.synth`` shares).
        synthetic: the synthetic records, m × d, the same columns and codes.
        names, sizes: the columns' names and numbers of values, in order.
        holdout: real records NOT used to fit (the same columns and codes). Membership inference,
            singling out and linkage need it as their control and are reported as not run
            without it; utility then tests on a 30 % split of ``real`` (said so), and the
            disclosure checks lack their baseline.
        target: the column the utility classifiers predict; None skips utility (with the reason).
        workload: cliques (tuples of column names) whose marginals' TVD is also reported.
        quasi_identifiers: the columns of the linkage and disclosure checks; default every column.
        rng: the source of every random choice (samples, splits, marginals drawn); the result is a
            function of the inputs and the generator's state.
        max_marginals: marginals of each order (and of the workload) evaluated at most, drawn at
            random beyond (default 2000; see :mod:`.marginal_distance`).
        generator: ``generator(codes, rng)`` re-runs the mechanism that made ``synthetic``, with the
            same parameters, on a code table and returns a synthetic code table of as many rows:
            the shadow-model attack (:mod:`.shadow_models`) runs only with it and a holdout, and
            is reported as not run, with the reason, otherwise. Its randomness comes from ``rng``.
        shadow_targets, shadow_runs, shadow_trials: the attack's target records, training runs
            (0 skips it) and fresh evaluation runs; it calls the generator ``shadow_runs +
            shadow_trials`` times.
        shadow_rows: records per shadow training set (default ``min(len(holdout), len(real))``).
        shadow_note: a sentence for the report on how these costs were chosen.

    The measures are described in the modules :mod:`.marginal_distance`, :mod:`.ml_utility`,
    :mod:`.membership`, :mod:`.shadow_models`, :mod:`.singling_out`, :mod:`.linkage` and
    :mod:`.disclosure`.

    Raises:
        DataError: a table is not a 2-D integer array, has no rows, the wrong number of columns,
            or codes outside 0..size−1.
        ColumnError: names repeat, or the target, the workload or the quasi-identifiers name an
            unknown column.
        ParameterError: sizes do not match the names, ``rng`` is not a numpy Generator, or
            ``max_marginals`` is not a whole number of at least 1, a shadow cost out of range, or
            ``generator`` is not callable.
        DataError: the generator returned something other than a code table of the domain.

    Nothing given is modified.
    """
    started = time.perf_counter()
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy random Generator, not {type(rng).__name__}.")
    if max_marginals is not None and (isinstance(max_marginals, bool) or not isinstance(max_marginals, (int, np.integer))
                                      or max_marginals < 1):
        raise ParameterError(f"max_marginals must be a whole number of at least 1, not {max_marginals!r}.")
    shadow_costs = check_costs(shadow_targets, shadow_runs, shadow_trials, shadow_rows)
    if generator is not None and not callable(generator):
        raise ParameterError(f"generator must be a function (codes, rng) -> codes, not {type(generator).__name__}.")
    tables = check_tables(real, synthetic, names, sizes, holdout)
    target_index = None
    if target is not None:
        target_index = column_indices(tables, [target], "the target")[0]
    cliques = None
    if workload is not None:
        if isinstance(workload, str):
            raise ParameterError("give the workload as a list of tuples of column names, not as text.")
        cliques = []
        for clique in workload:
            if isinstance(clique, str):
                clique = (clique,)
            indices = column_indices(tables, list(clique), "the workload")
            if not indices:
                raise ParameterError("a clique of the workload names no column; give at least one per clique.")
            cliques.append(tuple(sorted(indices)))
    qis = (tuple(range(len(tables.names))) if quasi_identifiers is None
           else column_indices(tables, list(quasi_identifiers), "the quasi-identifiers"))
    if not qis:
        raise ParameterError("give at least one quasi-identifier, or None for every column.")

    with single_thread():
        return _evaluate(tables, target_index, cliques, qis, rng, max_marginals, started,
                         (generator, shadow_costs, shadow_note))


def _evaluate(tables, target_index, cliques, qis, rng, max_marginals, started, shadow) -> Evaluation:
    streams = rng.spawn(6)
    real_t, synthetic_t, holdout_t = tables.real, tables.synthetic, tables.holdout
    marginals = marginal_distance(real_t, synthetic_t, tables.names, tables.sizes, rng=streams[0],
                                  workload=cliques, max_marginals=max_marginals)
    utility = ml_utility(real_t, synthetic_t, tables.names, tables.sizes, target=target_index,
                         holdout=holdout_t, rng=streams[1])
    members = membership(real_t, synthetic_t, tables.sizes, holdout=holdout_t, rng=streams[2])
    single = singling_out(real_t, synthetic_t, tables.sizes, holdout=holdout_t, rng=streams[3])
    link = linkage(real_t, synthetic_t, tables.names, tables.sizes, columns=qis, holdout=holdout_t, rng=streams[4])
    generator, (targets, runs, trials, rows), note = shadow
    shadows = shadow_attack(real_t, synthetic_t, tables.sizes, holdout=holdout_t, generator=generator,
                            rng=streams[5], targets=targets, runs=runs, trials=trials, rows=rows, note=note)
    checks = disclosure(real_t, synthetic_t, tables.names, tables.sizes, quasi_identifiers=qis, holdout=holdout_t)
    return Evaluation(real_t.shape[0], synthetic_t.shape[0], None if holdout_t is None else holdout_t.shape[0],
                      tables.names, marginals, utility, members, single, link, checks,
                      time.perf_counter() - started, shadows)
