"""The privacy-budget accountant: every differentially private query charges it first.

An accountant holds a budget (ε, δ) for one dataset and a record of every charge made against it.
A charge is checked *before* it is recorded: a query that would overspend raises
:class:`BudgetExceededError` and leaves the accountant exactly as it was, so a mechanism that
charges first and draws noise second never draws noise for a refused query. (If the noise draw
then fails, the budget stays spent, which errs on the side of privacy.)

Five accountants, one per way of counting (the composition theorems of McSherry 2009, Dwork,
Rothblum & Vadhan 2010, Farokhi 2020, Kellaris et al. 2014, Rogers et al. 2016 and Cao et al.
2017):

:class:`Accountant`
    Sequential composition: the ε (and δ) of queries on the same data add up. Parallel
    composition: queries in one *parallel group* touch disjoint partitions of the data, so the
    group costs the largest per-partition total, not the sum
    (``with acc.parallel("by age") as g: g.charge(0.5, partition="age<30")``). Post-processing
    is free (:meth:`~Accountant.postprocess` records it at cost 0). With
    ``composition="advanced"`` the accountant also computes the advanced composition bound of
    Dwork, Rothblum and Vadhan for k-fold ε-DP, ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1) at the price
    of an extra δ', and reports (and admits charges under) the better of the two bounds.
:class:`TemporalAccountant`
    Time-fading releases: a charge made ``i`` time steps ago counts with weight g(i), for a
    non-increasing discount g with g(0) = 1, so the effective ε at time t is Σ g(t − t_i) ε_i.
:class:`WindowAccountant`
    w-event privacy for streams: the ε spent in any w consecutive time steps stays within ε.
:class:`FilterAccountant`
    Charges whose ε and δ are chosen adaptively, admitted under a privacy filter (Rogers, Roth,
    Ullman & Vadhan 2016; :mod:`veil.dp.filters`): basic composition or their advanced filter,
    and it says which one admitted each charge.
:class:`TemporalCorrelationAccountant`
    Releases over time whose data is correlated in time (Cao, Yoshikawa, Xiao & Xiong 2017/2018;
    :mod:`veil.dp.temporal`): the temporal privacy leakage of every step (or window of steps)
    stays within the budget α, given the backward and forward transition matrices.

Arithmetic is exact where it can be: every ε and δ is kept as a :class:`fractions.Fraction`, and a
float is read as the decimal it prints as (``0.1`` is 1/10), so ten charges of 0.1 exhaust a
budget of 1.0 exactly, with no spurious overspend and no rounding in the user's favour. Only the
advanced composition bound and the advanced filter (square roots and exponentials) and the
temporal leakage (logarithms) are computed in floating point, and compared so that rounding
refuses rather than admits.

Every accountant serializes to JSON (:meth:`to_json`; :func:`from_json`) with a schema version,
the dataset id, the budget, the options and every charge. A text that is not valid, was written for
another dataset or records more spending than its budget allows is refused with one sentence
(:class:`BudgetFileError`). Keeping a budget that many processes share is the release ledger's job
(:mod:`veil.ledger`): an accountant it opens commits every charge there before the charge returns
(a *sink*), and rebuilds the accountant from that JSON's parts.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction

from veil.dp.filters import advanced_filter_bound
from veil.dp.temporal import LeakageTracker, TemporalCorrelation
from veil.errors import ParameterError, VeilError

__all__ = [
    "Accountant", "Budget", "BudgetExceededError", "BudgetFileError", "Charge", "ExponentialDiscount",
    "FilterAccountant", "HyperbolicDiscount", "ParallelGroup", "Spent", "TemporalAccountant",
    "TemporalCorrelationAccountant", "WindowAccountant", "advanced_composition", "from_document", "from_json",
    "step_epsilons",
]

FORMAT = "veil-dp-budget"
#: 2: the dataset id is a fingerprint of the parsed data and files carry a seal (1: bytes, no seal)
SCHEMA_VERSION = 2
DISCOUNT_SAMPLE_POINTS = tuple(range(65)) + tuple(2 ** p for p in range(7, 21))


class BudgetExceededError(VeilError):
    """A query asks for more privacy budget than is left; nothing was charged.

    Attributes:
        label: the query's label.
        requested: the (ε, δ) the query asked for.
        remaining: the (ε, δ) that was left when it asked.
    """

    def __init__(self, message: str, *, label: str, requested: tuple, remaining: tuple):
        super().__init__(message)
        self.label = label
        self.requested = requested
        self.remaining = remaining


class BudgetFileError(VeilError):
    """A budget file cannot be used: missing, corrupt, or kept for another dataset."""


# --------------------------------------------------------------------------- numbers

def _exact(value, name: str) -> Fraction:
    """``value`` as an exact Fraction; a float is read as the decimal it prints as."""
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a number, got {value!r}.")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ParameterError(f"{name} must be a finite number, got {value}.")
        return Fraction(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            raise ParameterError(f"{name} must be a finite number, got {value}.")
        return Fraction(repr(value))
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise ParameterError(f"{name} must be a number, got {value!r}.") from None
    raise ParameterError(f"{name} must be a number, got {type(value).__name__} {value!r}.")


def _epsilon(value, name: str = "epsilon") -> Fraction:
    eps = _exact(value, name)
    if eps <= 0:
        raise ParameterError(f"{name} must be greater than 0, got {_show(eps)}; a cost of 0 is only for "
                             "post-processing (use postprocess()).")
    return eps


def _delta(value, name: str = "delta") -> Fraction:
    delta = _exact(value, name)
    if not 0 <= delta < 1:
        raise ParameterError(f"{name} must be in [0, 1), got {_show(delta)}.")
    return delta


def _show(x) -> str:
    """A short human form of a number for messages and reports."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):.10g}"


def _dump(x: Fraction) -> str:
    """The exact text of a Fraction: a decimal when it has one, ``p/q`` otherwise."""
    den, twos, fives = x.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{x.numerator}/{x.denominator}"
    places = max(twos, fives)
    digits = str(abs(int(x * 10 ** places))).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}" if places else digits
    return ("-" if x < 0 else "") + text


def _label(label, what: str = "label") -> str:
    if not isinstance(label, str) or not label.strip():
        if what == "label":
            raise ParameterError(f"every charge needs a label, a non-empty text naming the query; got {label!r}.")
        raise ParameterError(f"the {what} must be a non-empty text, got {label!r}.")
    return label


WEIGHT_GRID = 10 ** 18


def _round_up(w: Fraction) -> Fraction:
    """``w`` rounded up to a multiple of 1e-18 (exact when it already is one): a discount weight is
    never rounded in the user's favour, and sums of weights keep small denominators."""
    if WEIGHT_GRID % w.denominator == 0:
        return w
    return Fraction(-(-w.numerator * WEIGHT_GRID // w.denominator), WEIGHT_GRID)


def _step(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be a whole number of time steps, got {value!r}.")
    return int(value)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def advanced_composition(k: int, epsilon, delta_prime) -> float:
    """The advanced composition bound of Dwork, Rothblum and Vadhan (2010) for k-fold ε-DP.

    k mechanisms, each ε-differentially private (adaptively chosen), together satisfy
    (ε', δ')-differential privacy (plus the sum of their own δ's) with
    ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1).

    Raises:
        ParameterError: k < 0, ε < 0, or δ' outside (0, 1).
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise ParameterError(f"k must be a whole number >= 0, got {k!r}.")
    eps = float(_exact(epsilon, "epsilon"))
    dp = float(_exact(delta_prime, "delta_prime"))
    if eps < 0:
        raise ParameterError(f"epsilon must be >= 0, got {eps}.")
    if not 0 < dp < 1:
        raise ParameterError(f"delta_prime must be in (0, 1), got {dp}.")
    if k == 0 or eps == 0:
        return 0.0
    return math.sqrt(2 * k * math.log(1 / dp)) * eps + k * eps * math.expm1(eps)


# --------------------------------------------------------------------------- records

@dataclass(frozen=True)
class Budget:
    """A privacy budget: ε > 0 and 0 <= δ < 1, kept exactly (floats read as the decimal they print as)."""

    epsilon: Fraction
    delta: Fraction = Fraction(0)

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _epsilon(self.epsilon, "the budget's epsilon"))
        object.__setattr__(self, "delta", _delta(self.delta, "the budget's delta"))

    def __str__(self) -> str:
        return f"ε = {_show(self.epsilon)}, δ = {_show(self.delta)}"


@dataclass(frozen=True)
class Charge:
    """One recorded charge.

    Attributes:
        label: what asked (the query's name).
        epsilon, delta: what it was charged (exact).
        kind: ``"query"`` or ``"postprocess"`` (free).
        group, partition: the parallel group and the partition of the data it touched, if any.
        step: the time step (temporal and window accountants), else ``None``.
        at: when it was charged (UTC, ISO 8601).
    """

    label: str
    epsilon: Fraction
    delta: Fraction = Fraction(0)
    kind: str = "query"
    group: str | None = None
    partition: str | None = None
    step: int | None = None
    at: str = ""

    def to_dict(self) -> dict:
        return {"label": self.label, "kind": self.kind, "epsilon": _dump(self.epsilon),
                "delta": _dump(self.delta), "group": self.group, "partition": self.partition,
                "step": self.step, "at": self.at}


@dataclass(frozen=True)
class Spent:
    """What has been spent: ``epsilon`` and ``delta`` under the bound named by ``method``.

    ``eps, delta = accountant.spent()`` unpacks the pair. The numbers are exact Fractions for
    sequential (and parallel, temporal, window) counting and floats for the advanced bound.
    ``sequential`` is the sequential-composition pair, ``advanced`` the advanced bound (or ``None``
    when it was not asked for).
    """

    epsilon: Fraction | float
    delta: Fraction | float
    method: str = "sequential"
    sequential: tuple = ()
    advanced: tuple | None = None

    def __iter__(self):
        return iter((self.epsilon, self.delta))


# --------------------------------------------------------------------------- base

class _BaseAccountant:
    """What every accountant shares: the dataset id, the budget, the record, JSON and the report."""

    composition = "sequential"

    def __init__(self, budget: Budget, *, dataset_id: str):
        if not isinstance(budget, Budget):
            raise ParameterError(f"budget must be a Budget(epsilon, delta), got {type(budget).__name__}.")
        if not isinstance(dataset_id, str) or not dataset_id.strip():
            raise ParameterError(f"dataset_id must be a non-empty text naming the dataset, got {dataset_id!r}.")
        self.budget = budget
        self.dataset_id = dataset_id
        self._charges: list[Charge] = []
        # Called with the accountant after every new charge, before the charge returns; a ledger
        # uses it to commit the charge before any noise is drawn (see veil.ledger.budget).
        self._sink: Callable[[_BaseAccountant], None] | None = None

    @property
    def charges(self) -> tuple[Charge, ...]:
        """Every charge, in the order it was made."""
        return tuple(self._charges)

    def postprocess(self, label: str, *, step: int | None = None) -> Charge:
        """Record a post-processing of earlier releases; it costs nothing (ε = δ = 0)."""
        label = _label(label)
        if step is not None:
            step = _step(step, "step")
        return self._record(Charge(label, Fraction(0), Fraction(0), kind="postprocess", step=step, at=_now()))

    def _record(self, charge: Charge, undo: Callable[[], None] | None = None) -> Charge:
        """Append ``charge`` and hand the accountant to its sink; if the sink fails, take the charge
        back (``undo`` restores the running totals) and let the error through, so a charge that
        was not saved is not spent and the query that asked for it draws no noise."""
        self._charges.append(charge)
        if self._sink is not None:
            try:
                self._sink(self)
            except BaseException:
                self._charges.pop()
                if undo is not None:
                    undo()
                raise
        return charge

    # subclasses define charge(), can_afford(), spent(), remaining(), _options() and _replay(charge)

    def to_document(self) -> dict:
        """The accountant as a JSON-ready dict (schema version, dataset id, budget, options, every charge)."""
        return {
            "format": FORMAT,
            "version": SCHEMA_VERSION,
            "dataset_id": self.dataset_id,
            "composition": self.composition,
            "budget": {"epsilon": _dump(self.budget.epsilon), "delta": _dump(self.budget.delta)},
            "options": self._options(),
            "charges": [c.to_dict() for c in self._charges],
        }

    def to_json(self) -> str:
        """:meth:`to_document` as JSON text."""
        return json.dumps(self.to_document(), indent=2, ensure_ascii=False) + "\n"

    def _options(self) -> dict:
        return {}

    def report(self) -> list[dict]:
        """Rows of what was spent by what, in charge order.

        Each row has ``label``, ``kind`` (``query``, ``postprocess`` or ``parallel``: one row per
        parallel group, placed where the group first appears), ``epsilon``, ``delta``, ``group``,
        ``partition``, ``step``, ``at`` and ``counted``: the ε the row adds to the total (a
        parallel group counts once, at its cost; its members show ``None``).
        """
        rows, seen = [], set()
        costs = self._group_costs()
        for c in self._charges:
            if c.group is not None and c.group not in seen:
                seen.add(c.group)
                eps, delta = costs[c.group]
                rows.append({"label": c.group, "kind": "parallel", "epsilon": eps, "delta": delta,
                             "group": None, "partition": None, "step": c.step, "at": c.at, "counted": eps})
            rows.append({"label": c.label, "kind": c.kind, "epsilon": c.epsilon, "delta": c.delta,
                         "group": c.group, "partition": c.partition, "step": c.step, "at": c.at,
                         "counted": None if c.group is not None else c.epsilon})
        return rows

    def _group_costs(self) -> dict:
        return {}

    def _adopt(self, other: _BaseAccountant) -> None:
        """Take over the charges and running totals of ``other``, the same budget rebuilt from a
        shared store that holds charges made elsewhere since this accountant was loaded. The sink
        and any parallel group open in this process stay."""
        if type(other) is not type(self) or other.budget != self.budget or other.dataset_id != self.dataset_id:
            raise ParameterError("an accountant can only adopt the record of the same budget.")
        kept = {"_sink", "_open_groups"}
        self.__dict__.update({name: list(value) if isinstance(value, list) else value
                              for name, value in other.__dict__.items() if name not in kept})

    def format_report(self) -> str:
        """:meth:`report` as a text table, with the budget, what is spent and what is left."""
        lines = [f"privacy budget of dataset {self.dataset_id!r}: {self.budget} ({self._counting()})"]
        rows = self.report()
        if rows:
            header = ("label", "kind", "ε", "δ", "counted", "partition", "step")
            table = [header] + [(("  " if r["group"] else "") + r["label"], r["kind"], _show(r["epsilon"]),
                                 _show(r["delta"]), "-" if r["counted"] is None else _show(r["counted"]),
                                 r["partition"] or "", "" if r["step"] is None else str(r["step"]))
                                for r in rows]
            widths = [max(len(row[i]) for row in table) for i in range(len(header))]
            lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
        else:
            lines.append("nothing charged yet")
        spent = self.spent()
        lines.append(f"spent ε = {_show(spent.epsilon)}, δ = {_show(spent.delta)} ({spent.method}); "
                     f"left {self._left_text()}")
        return "\n".join(lines)

    def _counting(self) -> str:
        return "sequential and parallel composition"

    def _left_text(self) -> str:
        eps, delta = self.remaining()
        return f"ε = {_show(eps)}, δ = {_show(delta)}"

    def __repr__(self) -> str:
        spent = self.spent()
        return (f"{type(self).__name__}(dataset_id={self.dataset_id!r}, budget=({self.budget}), "
                f"spent=ε {_show(spent.epsilon)} δ {_show(spent.delta)}, charges={len(self._charges)})")


# --------------------------------------------------------------------------- sequential, parallel, advanced

@dataclass
class _State:
    """Running totals of an :class:`Accountant` (one composition unit per solo charge or group)."""

    eps: Fraction = Fraction(0)        # sequential ε: solo charges + group costs
    delta: Fraction = Fraction(0)      # sequential δ
    units: int = 0                     # k, for the advanced bound
    eps_max: Fraction = Fraction(0)    # the largest unit ε
    groups: dict = field(default_factory=dict)   # group -> {partition: (ε, δ)}
    costs: dict = field(default_factory=dict)    # group -> (ε, δ) = per-partition maxima


class ParallelGroup:
    """Charges on disjoint partitions of the data; the group costs the largest partition total.

    Made by :meth:`Accountant.parallel`; usable only inside its ``with`` block. Charging the same
    partition twice adds up on that partition (sequential composition within it).
    """

    def __init__(self, accountant: Accountant, name: str):
        self._accountant = accountant
        self.name = name
        self._open = True

    def charge(self, epsilon, delta=0.0, *, partition: str, label: str | None = None) -> Charge:
        """Charge a query on one partition; ``label`` defaults to ``"<group> [<partition>]"``."""
        if not self._open:
            raise ParameterError(f"parallel group {self.name!r} is closed; charge inside its with block "
                                 "or open a new group.")
        if label is None:
            label = f"{self.name} [{partition}]"
        return self._accountant.charge(epsilon, delta, label=label, partition=partition, group=self.name)

    def can_afford(self, epsilon, delta=0.0, *, partition: str) -> bool:
        return self._accountant.can_afford(epsilon, delta, partition=partition, group=self.name)

    def spent(self) -> tuple:
        """The group's cost so far: (max partition ε, max partition δ)."""
        return self._accountant._state.costs.get(self.name, (Fraction(0), Fraction(0)))


class Accountant(_BaseAccountant):
    """A privacy budget charged under sequential, parallel and (optionally) advanced composition.

    Args:
        budget: the total (ε, δ) for the dataset.
        dataset_id: the dataset the budget belongs to; a saved budget is only loaded for it.
        composition: ``"sequential"`` (sums, exact) or ``"advanced"`` (also the Dwork-Rothblum-Vadhan
            bound; the better of the two is reported and admits charges).
        advanced_delta_prime: the δ' the advanced bound spends, 0 < δ' <= the budget's δ; by
            default half the budget's δ. Only with ``composition="advanced"``.

    The advanced bound is checked before every charge, with k the number of solo charges and
    parallel groups so far and ε the largest of their costs. Used that way, as a stopping rule for
    adaptively chosen charges, the theorem is slightly optimistic: Rogers, Roth, Ullman and Vadhan
    (2016) show a privacy *filter* needs somewhat larger constants; charges chosen adaptively
    belong in a :class:`FilterAccountant`, whose bound is valid for them.

    Raises:
        ParameterError: a bad budget, composition or δ'; advanced composition with a budget δ of 0.
    """

    def __init__(self, budget: Budget, *, dataset_id: str, composition: str = "sequential",
                 advanced_delta_prime=None):
        super().__init__(budget, dataset_id=dataset_id)
        if composition not in ("sequential", "advanced"):
            raise ParameterError(f"composition must be 'sequential' or 'advanced', got {composition!r}.")
        self.composition = composition
        self.delta_prime: Fraction | None = None
        if composition == "advanced":
            if budget.delta == 0:
                raise ParameterError("advanced composition spends a δ' > 0, so the budget needs a delta > 0; "
                                     "give Budget(epsilon, delta) or use sequential composition.")
            dp = budget.delta / 2 if advanced_delta_prime is None else _exact(advanced_delta_prime,
                                                                              "advanced_delta_prime")
            if not 0 < dp <= budget.delta:
                raise ParameterError(f"advanced_delta_prime must be in (0, {_show(budget.delta)}] (the budget's "
                                     f"delta), got {_show(dp)}.")
            self.delta_prime = dp
        elif advanced_delta_prime is not None:
            raise ParameterError("advanced_delta_prime applies only to composition='advanced'.")
        self._state = _State()
        self._open_groups: set[str] = set()

    # -- the arithmetic

    def _prospect(self, eps: Fraction, delta: Fraction, group, partition) -> _State:
        """The running totals after a charge, without changing anything."""
        s = self._state
        new = _State(s.eps, s.delta, s.units, s.eps_max, s.groups, s.costs)
        if group is None:
            new.eps, new.delta, new.units = s.eps + eps, s.delta + delta, s.units + 1
            new.eps_max = max(s.eps_max, eps)
            return new
        parts = dict(s.groups.get(group, {}))
        pe, pd = parts.get(partition, (Fraction(0), Fraction(0)))
        parts[partition] = (pe + eps, pd + delta)
        old_e, old_d = s.costs.get(group, (Fraction(0), Fraction(0)))
        cost_e = max(old_e, pe + eps)
        cost_d = max(old_d, pd + delta)
        new.groups = {**s.groups, group: parts}
        new.costs = {**s.costs, group: (cost_e, cost_d)}
        new.eps = s.eps - old_e + cost_e
        new.delta = s.delta - old_d + cost_d
        new.units = s.units + (group not in s.groups)
        new.eps_max = max(s.eps_max, cost_e)
        return new

    def _bounds(self, state: _State, delta_prime=None) -> Spent:
        """Both bounds and the better one: the smaller ε, except that under this accountant's own
        advanced composition a bound whose δ does not fit the budget loses to one that does."""
        seq = (state.eps, state.delta)
        dp = self.delta_prime if delta_prime is None else delta_prime
        if dp is None:
            return Spent(state.eps, state.delta, "sequential", seq, None)
        adv = (advanced_composition(state.units, state.eps_max, dp), state.delta + dp)
        better = adv[0] < seq[0]
        if delta_prime is None and adv[1] > self.budget.delta >= seq[1]:
            better = False
        if better:
            return Spent(adv[0], adv[1], "advanced", seq, adv)
        return Spent(state.eps, state.delta, "sequential", seq, adv)

    def _fits(self, state: _State) -> bool:
        b = self.budget
        if state.delta > b.delta:
            return False
        if state.eps <= b.epsilon:
            return True
        if self.delta_prime is None:
            return False
        adv = advanced_composition(state.units, state.eps_max, self.delta_prime)
        return adv <= b.epsilon and state.delta + self.delta_prime <= b.delta

    # -- the public API

    def _validate(self, epsilon, delta, group, partition):
        eps, dlt = _epsilon(epsilon), _delta(delta)
        if (group is None) != (partition is None):
            raise ParameterError("a partition needs its parallel group and a group needs the partition charged; "
                                 "charge inside 'with accountant.parallel(name) as group'.")
        if group is not None:
            _label(group, "parallel group name")
            _label(partition, "partition name")
        return eps, dlt

    def can_afford(self, epsilon, delta=0.0, *, partition: str | None = None, group: str | None = None) -> bool:
        """Whether a charge of (ε, δ) would fit in what is left (nothing is recorded)."""
        eps, dlt = self._validate(epsilon, delta, group, partition)
        return self._fits(self._prospect(eps, dlt, group, partition))

    def charge(self, epsilon, delta=0.0, *, label: str, partition: str | None = None,
               group: str | None = None) -> Charge:
        """Charge a query (ε, δ), checking the budget first; call it before drawing any noise.

        ``group`` and ``partition`` go together: the query touches only that partition of the
        data, disjoint from the group's other partitions (the caller vouches for disjointness),
        so the group costs its largest partition total. Prefer :meth:`parallel`.

        Raises:
            ParameterError: ε <= 0, δ outside [0, 1), a missing label, a partition without a group.
            BudgetExceededError: the charge would overspend; nothing was recorded.
        """
        label = _label(label)
        eps, dlt = self._validate(epsilon, delta, group, partition)
        new = self._prospect(eps, dlt, group, partition)
        if not self._fits(new):
            self._refuse(label, eps, dlt, group, partition, new)
        old, self._state = self._state, new
        return self._record(Charge(label, eps, dlt, group=group, partition=partition, at=_now()),
                            undo=lambda: setattr(self, "_state", old))

    def _refuse(self, label, eps, dlt, group, partition, new):
        left_e, _left_d = self.remaining(dlt)
        where = f"query {label!r}"
        if group is not None:
            old = self._state.costs.get(group, (Fraction(0), Fraction(0)))[0]
            where += (f" on partition {partition!r} of parallel group {group!r} (raising the group's cost "
                      f"from ε = {_show(old)} to ε = {_show(new.costs[group][0])})")
        if new.delta > self.budget.delta:
            what = f"δ = {_show(dlt)} but only δ = {_show(self.budget.delta - self._state.delta)} is left"
        elif left_e <= 0:
            what = f"ε = {_show(eps)} but no ε is left"
        else:
            what = f"ε = {_show(eps)} but only ε = {_show(left_e)} is left"
        raise BudgetExceededError(
            f"{where} asks for {what} of the budget {self.budget} for dataset {self.dataset_id!r}; "
            "ask for less or start a new budget.", label=label, requested=(eps, dlt),
            remaining=(left_e, self.budget.delta - self._state.delta))

    @contextmanager
    def parallel(self, name: str) -> Iterator[ParallelGroup]:
        """A parallel group: queries on disjoint partitions, costing the largest partition total.

        ``with acc.parallel("histogram by age") as g: g.charge(0.5, partition="age<30")``. The name
        must be new: partitions of two different splits of the data are not disjoint.
        """
        name = _label(name, "parallel group name")
        if name in self._state.groups or name in self._open_groups:
            raise ParameterError(f"parallel group {name!r} already exists; give the new group another name.")
        group = ParallelGroup(self, name)
        self._open_groups.add(name)
        try:
            yield group
        finally:
            group._open = False
            self._open_groups.discard(name)

    def spent(self, *, delta_prime=None) -> Spent:
        """What has been spent, under the better of sequential and (when asked) advanced composition.

        The advanced bound is computed with this accountant's δ' when it uses advanced composition,
        or with ``delta_prime`` when given; it treats every solo charge and every parallel group as
        one mechanism and bounds all of them by the largest ε (k-fold ε-DP), at δ = Σ δ_i + δ'.
        """
        dp = None if delta_prime is None else _exact(delta_prime, "delta_prime")
        if dp is not None and not 0 < dp < 1:
            raise ParameterError(f"delta_prime must be in (0, 1), got {_show(dp)}.")
        return self._bounds(self._state, dp)

    def remaining(self, delta=0.0) -> tuple:
        """The largest ε one more (solo) charge with this δ could take, and the δ left.

        Exact under sequential composition; with advanced composition, the larger of the
        sequential remainder and the advanced one (found by bisection, a float). The δ left is the
        budget's δ less what :meth:`spent` reports (which includes δ' once the advanced bound is
        the one in use).
        """
        dlt = _delta(delta)
        b, s = self.budget, self._state
        left_d = b.delta - self.spent().delta
        seq_left = max(Fraction(0), b.epsilon - s.eps) if s.delta + dlt <= b.delta else Fraction(0)
        if self.delta_prime is None or s.delta + dlt + self.delta_prime > b.delta:
            return seq_left, left_d
        k, dp = s.units + 1, self.delta_prime
        if advanced_composition(k, s.eps_max, dp) > b.epsilon:
            return seq_left, left_d
        lo, hi = float(s.eps_max), float(b.epsilon)
        for _ in range(64):
            if advanced_composition(k, hi, dp) > b.epsilon:
                break
            lo, hi = hi, hi * 2
        else:
            return max(seq_left, lo), left_d
        for _ in range(100):
            mid = (lo + hi) / 2
            if advanced_composition(k, mid, dp) <= b.epsilon:
                lo = mid
            else:
                hi = mid
        return (max(seq_left, lo)), left_d

    def _group_costs(self) -> dict:
        return dict(self._state.costs)

    def _counting(self) -> str:
        if self.delta_prime is not None:
            return f"sequential, parallel and advanced composition with δ' = {_show(self.delta_prime)}"
        return "sequential and parallel composition"

    def _options(self) -> dict:
        return {"advanced_delta_prime": None if self.delta_prime is None else _dump(self.delta_prime)}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        self._validate(c.epsilon, c.delta, c.group, c.partition)
        new = self._prospect(c.epsilon, c.delta, c.group, c.partition)
        if not self._fits(new):
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._state = new
        self._charges.append(c)

    @classmethod
    def from_json(cls, text: str, *, dataset_id: str) -> Accountant:
        return _typed(from_json(text, dataset_id=dataset_id), cls)


# --------------------------------------------------------------------------- temporal discounting

@dataclass(frozen=True)
class ExponentialDiscount:
    """g(i) = base ** i, for 0 < base <= 1 (a release loses a share 1 − base of its weight per step)."""

    base: Fraction

    def __post_init__(self):
        base = _exact(self.base, "base")
        if not 0 < base <= 1:
            raise ParameterError(f"the exponential discount's base must be in (0, 1], got {_show(base)}.")
        object.__setattr__(self, "base", base)

    def __call__(self, i: int) -> Fraction:
        if self.base == 1 or i == 0:
            return Fraction(1)
        if i <= 64:
            return _round_up(self.base ** i)
        # beyond, the exact power is too long to be worth it: a float nudged up one ulp, which
        # covers pow's rounding error, so the weight is never smaller than base ** i
        return _round_up(_exact(math.nextafter(float(self.base) ** i, math.inf), "g(i)"))

    def to_dict(self) -> dict:
        return {"name": "exponential", "base": _dump(self.base)}

    def __str__(self) -> str:
        return f"exponential discount g(i) = {_show(self.base)}^i"


@dataclass(frozen=True)
class HyperbolicDiscount:
    """g(i) = 1 / (1 + rate · i), for rate >= 0 (exact)."""

    rate: Fraction

    def __post_init__(self):
        rate = _exact(self.rate, "rate")
        if rate < 0:
            raise ParameterError(f"the hyperbolic discount's rate must be >= 0, got {_show(rate)}.")
        object.__setattr__(self, "rate", rate)

    def __call__(self, i: int) -> Fraction:
        return 1 / (1 + self.rate * i)

    def to_dict(self) -> dict:
        return {"name": "hyperbolic", "rate": _dump(self.rate)}

    def __str__(self) -> str:
        return f"hyperbolic discount g(i) = 1/(1 + {_show(self.rate)}·i)"


_DISCOUNTS = {"exponential": (ExponentialDiscount, "base"), "hyperbolic": (HyperbolicDiscount, "rate")}


class TemporalAccountant(_BaseAccountant):
    """Sequential composition with temporal discounting (Farokhi 2020).

    A charge made at time t_i counts at time t with weight g(t − t_i), so the effective ε at time t
    is Σ g(t − t_i) ε_i; a charge is admitted when that sum, including it, stays within the budget.
    Because g is non-increasing the effective ε never grows between charges, so checking at each
    charge is enough. δ is not discounted (it adds up, as under sequential composition).

    Args:
        budget: the (ε, δ) budget.
        dataset_id: the dataset it belongs to.
        discount: g, a function of the age i = 0, 1, 2, … with g(0) = 1, 0 <= g(i) <= 1 and
            g non-increasing (checked at sample points up to 2**20). The built-in
            :class:`ExponentialDiscount` and :class:`HyperbolicDiscount` are saved with the
            budget; any other function must be given again when the budget is loaded.

    Raises:
        ParameterError: a bad budget, or a g that breaks the rules at a sample point.
    """

    composition = "temporal"

    def __init__(self, budget: Budget, *, dataset_id: str, discount: Callable[[int], float]):
        super().__init__(budget, dataset_id=dataset_id)
        if not callable(discount):
            raise ParameterError(f"discount must be a function g(i) of the age i, got {discount!r}.")
        self.discount = discount
        self._weights: dict[int, Fraction] = {}
        self._delta_spent = Fraction(0)
        previous = None
        for i in DISCOUNT_SAMPLE_POINTS:
            g = self._weight(i)
            if i == 0 and g != 1:
                raise ParameterError(f"the discount g must give g(0) = 1 (a release counts in full when made), "
                                     f"got g(0) = {_show(g)}.")
            if previous is not None and g > previous[1]:
                raise ParameterError(f"the discount g must be non-increasing, but g({i}) = {_show(g)} is larger "
                                     f"than g({previous[0]}) = {_show(previous[1])}.")
            previous = (i, g)

    def _weight(self, age: int) -> Fraction:
        w = self._weights.get(age)
        if w is None:
            try:
                value = self.discount(age)
            except Exception as exc:  # noqa: BLE001 - a user function: report, in one sentence, what it did
                raise ParameterError(f"the discount g failed at g({age}): {exc}.") from None
            w = _round_up(_exact(value, f"g({age})"))
            if not 0 <= w <= 1:
                raise ParameterError(f"the discount g must stay in [0, 1], got g({age}) = {_show(w)}.")
            if len(self._weights) < 1 << 16:
                self._weights[age] = w
        return w

    @property
    def now(self) -> int | None:
        """The time of the latest charge, or ``None`` before the first."""
        steps = [c.step for c in self._charges if c.kind == "query"]
        return steps[-1] if steps else None

    def _effective(self, time: int) -> Fraction:
        return sum((self._weight(time - c.step) * c.epsilon for c in self._charges if c.kind == "query"),
                   Fraction(0))

    def _check_time(self, time) -> int:
        time = _step(time, "time")
        now = self.now
        if now is not None and time < now:
            raise ParameterError(f"time {time} is before the latest charge at time {now}; time only runs forward.")
        return time

    def can_afford(self, epsilon, delta=0.0, *, time: int) -> bool:
        eps, dlt, time = _epsilon(epsilon), _delta(delta), self._check_time(time)
        return (self._effective(time) + eps <= self.budget.epsilon
                and self._delta_spent + dlt <= self.budget.delta)

    def charge(self, epsilon, delta=0.0, *, label: str, time: int) -> Charge:
        """Charge a query at ``time`` (a whole time step, never before the latest charge).

        Raises:
            ParameterError: bad ε, δ, label or time.
            BudgetExceededError: the discounted total would exceed the budget; nothing was recorded.
        """
        label = _label(label)
        eps, dlt, time = _epsilon(epsilon), _delta(delta), self._check_time(time)
        used = self._effective(time)
        b = self.budget
        if self._delta_spent + dlt > b.delta:
            raise BudgetExceededError(
                f"query {label!r} at time {time} asks for δ = {_show(dlt)} but only δ = "
                f"{_show(b.delta - self._delta_spent)} is left of the budget {b} for dataset {self.dataset_id!r}; "
                "ask for less or start a new budget.", label=label, requested=(eps, dlt),
                remaining=(max(Fraction(0), b.epsilon - used), b.delta - self._delta_spent))
        if used + eps > b.epsilon:
            raise BudgetExceededError(
                f"query {label!r} at time {time} asks for ε = {_show(eps)} but only ε = {_show(b.epsilon - used)} "
                f"is left of the budget {b} for dataset {self.dataset_id!r} after discounting earlier releases; "
                "ask for less or wait for older releases to fade.", label=label, requested=(eps, dlt),
                remaining=(b.epsilon - used, b.delta - self._delta_spent))
        old = self._delta_spent
        self._delta_spent += dlt
        return self._record(Charge(label, eps, dlt, step=time, at=_now()),
                            undo=lambda: setattr(self, "_delta_spent", old))

    def spent(self, time: int | None = None) -> Spent:
        """The discounted ε at ``time`` (default: the latest charge) and the δ spent."""
        if time is None:
            time = self.now if self.now is not None else 0
        else:
            time = self._check_time(time)
        eps = self._effective(time)
        return Spent(eps, self._delta_spent, "temporal", (eps, self._delta_spent), None)

    def remaining(self, time: int | None = None) -> tuple:
        eps, delta = self.spent(time)
        return max(Fraction(0), self.budget.epsilon - eps), self.budget.delta - delta

    def _counting(self) -> str:
        d = self.discount
        builtin = isinstance(d, (ExponentialDiscount, HyperbolicDiscount))
        return f"temporal discounting, {d if builtin else 'a custom discount g'}"

    def _options(self) -> dict:
        d = self.discount
        return {"discount": d.to_dict() if isinstance(d, (ExponentialDiscount, HyperbolicDiscount))
                else {"name": "custom"}}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.step is None:
            raise ParameterError("a temporal charge has no time step.")
        time = self._check_time(c.step)
        if self._effective(time) + c.epsilon > self.budget.epsilon or self._delta_spent + c.delta > self.budget.delta:
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._charges.append(c)
        self._delta_spent += c.delta

    @classmethod
    def from_json(cls, text: str, *, dataset_id: str, discount=None) -> TemporalAccountant:
        return _typed(from_json(text, dataset_id=dataset_id, discount=discount), cls)


# --------------------------------------------------------------------------- w-event windows

class WindowAccountant(_BaseAccountant):
    """w-event privacy for a stream (Kellaris et al. 2014): the ε (and δ) spent in any w consecutive
    time steps stays within the budget; charges older than the window are forgotten.

    Steps are whole numbers that never go back, so checking the window that ends at each new
    charge's step covers every window.

    Args:
        w: the window length in time steps, w >= 1.
        epsilon: the budget per window; ``delta`` likewise (default 0).
        dataset_id: the dataset (stream) it belongs to.
    """

    composition = "window"

    def __init__(self, w: int, epsilon, *, dataset_id: str, delta=0.0):
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1:
            raise ParameterError(f"the window length w must be a whole number >= 1, got {w!r}.")
        super().__init__(Budget(epsilon, delta), dataset_id=dataset_id)
        self.w = int(w)

    @property
    def now(self) -> int | None:
        steps = [c.step for c in self._charges if c.kind == "query"]
        return steps[-1] if steps else None

    def _check(self, step) -> int:
        step = _step(step, "step")
        now = self.now
        if now is not None and step < now:
            raise ParameterError(f"step {step} is before the latest charge at step {now}; a stream only moves forward.")
        return step

    def _window(self, step: int) -> tuple[Fraction, Fraction]:
        eps, delta = Fraction(0), Fraction(0)
        for c in reversed(self._charges):
            if c.kind != "query":
                continue
            if c.step <= step - self.w:
                break
            if c.step <= step:
                eps += c.epsilon
                delta += c.delta
        return eps, delta

    def can_afford(self, step: int, epsilon, delta=0.0) -> bool:
        step, eps, dlt = self._check(step), _epsilon(epsilon), _delta(delta)
        used_e, used_d = self._window(step)
        return used_e + eps <= self.budget.epsilon and used_d + dlt <= self.budget.delta

    def charge(self, step: int, epsilon, delta=0.0, *, label: str | None = None) -> Charge:
        """Charge a release at ``step``; ``label`` defaults to ``"step <step>"``.

        Raises:
            ParameterError: bad step (or one before the latest), ε or δ.
            BudgetExceededError: the window ending at ``step`` would exceed the budget; nothing recorded.
        """
        label = _label(f"step {step}" if label is None else label)
        step, eps, dlt = self._check(step), _epsilon(epsilon), _delta(delta)
        used_e, used_d = self._window(step)
        b = self.budget
        if used_e + eps > b.epsilon or used_d + dlt > b.delta:
            what = (f"δ = {_show(dlt)} but only δ = {_show(b.delta - used_d)}" if used_d + dlt > b.delta
                    else f"ε = {_show(eps)} but only ε = {_show(b.epsilon - used_e)}")
            raise BudgetExceededError(
                f"query {label!r} at step {step} asks for {what} is left in the window of steps "
                f"{step - self.w + 1}..{step} (w = {self.w}, {b} per window) "
                f"for dataset {self.dataset_id!r}; ask for less or wait for the window to move on.",
                label=label, requested=(eps, dlt), remaining=(b.epsilon - used_e, b.delta - used_d))
        return self._record(Charge(label, eps, dlt, step=step, at=_now()))

    def spent(self, step: int | None = None) -> Spent:
        """The ε and δ spent in the window of w steps ending at ``step`` (default: the latest charge)."""
        if step is None:
            step = self.now if self.now is not None else 0
        else:
            step = _step(step, "step")
        eps, delta = self._window(step)
        return Spent(eps, delta, "window", (eps, delta), None)

    def remaining(self, step: int | None = None) -> tuple:
        eps, delta = self.spent(step)
        return self.budget.epsilon - eps, self.budget.delta - delta

    def _counting(self) -> str:
        return f"w-event privacy, w = {self.w}"

    def _options(self) -> dict:
        return {"w": self.w}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.step is None:
            raise ParameterError("a window charge has no time step.")
        step = self._check(c.step)
        used_e, used_d = self._window(step)
        if used_e + c.epsilon > self.budget.epsilon or used_d + c.delta > self.budget.delta:
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._charges.append(c)

    @classmethod
    def from_json(cls, text: str, *, dataset_id: str) -> WindowAccountant:
        return _typed(from_json(text, dataset_id=dataset_id), cls)


# --------------------------------------------------------------------------- privacy filters

_FILTER_RULES = ("basic", "advanced", "best")
_RULE_NAMES = {"basic": "basic composition filter", "advanced": "advanced filter of Rogers et al. (2016)"}


class FilterAccountant(_BaseAccountant):
    """A budget for charges whose ε and δ are chosen adaptively, admitted under a privacy filter.

    Rogers, Roth, Ullman and Vadhan (NeurIPS 2016): when each charge's parameters may depend on
    earlier answers, the advanced composition bound for a fixed number k of mechanisms is not a
    valid stopping rule; a *filter* is. Charges are admitted while the filter says continue, and
    the whole interaction is then (ε_g, δ_g)-differentially private, ε_g and δ_g being the
    budget's. The rules (see :mod:`veil.dp.filters`):

    * ``"basic"``: Σ ε_i ≤ ε_g and Σ δ_i ≤ δ_g (exact arithmetic);
    * ``"advanced"``: their Theorem 5.1, Σ δ_i ≤ δ_g/2 and K ≤ ε_g, for 0 < δ_g < 1/e;
    * ``"best"`` (default): a charge is admitted when the basic filter with δ_g/2 or the advanced
      filter with δ_g/2 admits every charge so far with it (why that is valid: the module notes of
      :mod:`veil.dp.filters`); with a budget δ of 0 only the basic filter applies.

    The accountant says which rule admitted each charge (:meth:`rules`) and which one the
    charges so far stand under (:meth:`spent`'s ``method``). Parallel groups are not offered:
    every charge is one adaptively chosen mechanism on the whole data.

    Args:
        budget: the filter's (ε_g, δ_g).
        dataset_id: the dataset the budget belongs to.
        rule: ``"basic"``, ``"advanced"`` or ``"best"``.

    Raises:
        ParameterError: an unknown rule, or a δ_g the advanced filter cannot use (it needs
            0 < δ_g < 1/e, or 0 < δ_g/2 < 1/e under ``"best"``).
    """

    composition = "filter"

    def __init__(self, budget: Budget, *, dataset_id: str, rule: str = "best"):
        super().__init__(budget, dataset_id=dataset_id)
        if rule not in _FILTER_RULES:
            raise ParameterError(f"rule must be 'basic', 'advanced' or 'best', got {rule!r}.")
        self.rule = rule
        # each filter's δ_g: under "best" the two halves of the budget's δ
        share = budget.delta / 2 if rule == "best" else budget.delta
        self._basic_delta = None if rule == "advanced" else share
        self._advanced_delta = None if rule == "basic" or (rule == "best" and budget.delta == 0) else share
        if self._advanced_delta is not None and not 0 < self._advanced_delta < Fraction(1) / Fraction(math.e):
            raise ParameterError(f"the advanced filter needs 0 < delta_g < 1/e, and this budget gives it "
                                 f"{_show(self._advanced_delta)}; give a budget delta in range or use rule='basic'.")

    def _admits(self, epsilons: list[Fraction], deltas: list[Fraction]) -> str | None:
        """The rule that admits these charges, basic first; ``None`` when none does."""
        b = self.budget
        if self._basic_delta is not None and sum(epsilons, Fraction(0)) <= b.epsilon \
                and sum(deltas, Fraction(0)) <= self._basic_delta:
            return "basic"
        if self._advanced_delta is not None and sum(deltas, Fraction(0)) <= self._advanced_delta / 2:
            k = advanced_filter_bound([float(e) for e in epsilons], float(b.epsilon), float(self._advanced_delta))
            if k * (1 + 1e-12) <= float(b.epsilon):
                return "advanced"
        return None

    def _queries(self) -> tuple[list[Fraction], list[Fraction]]:
        done = [c for c in self._charges if c.kind == "query"]
        return [c.epsilon for c in done], [c.delta for c in done]

    def can_afford(self, epsilon, delta=0.0) -> bool:
        """Whether a charge of (ε, δ) would be admitted now (nothing is recorded)."""
        eps, dlt = _epsilon(epsilon), _delta(delta)
        epsilons, deltas = self._queries()
        return self._admits(epsilons + [eps], deltas + [dlt]) is not None

    def charge(self, epsilon, delta=0.0, *, label: str) -> Charge:
        """Charge an adaptively chosen query (ε, δ) if the filter admits it; call it before drawing noise.

        Raises:
            ParameterError: ε <= 0, δ outside [0, 1), or a missing label.
            BudgetExceededError: the filter says halt; nothing was recorded.
        """
        label = _label(label)
        eps, dlt = _epsilon(epsilon), _delta(delta)
        epsilons, deltas = self._queries()
        if self._admits(epsilons + [eps], deltas + [dlt]) is None:
            raise BudgetExceededError(
                f"query {label!r} asks for ε = {_show(eps)}, δ = {_show(dlt)} but the privacy filter ({self._counting()}) "
                f"halts there for the budget {self.budget} of dataset {self.dataset_id!r}; ask for less or start a "
                "new budget.", label=label, requested=(eps, dlt), remaining=self.remaining(dlt))
        return self._record(Charge(label, eps, dlt, at=_now()))

    def rules(self) -> list[str]:
        """For every query charge, in order, the rule that admitted it (``"basic"`` or ``"advanced"``)."""
        epsilons, deltas = self._queries()
        return [self._admits(epsilons[:i + 1], deltas[:i + 1]) for i in range(len(epsilons))]

    def spent(self) -> Spent:
        """The statistic of the rule the charges so far stand under, and Σ δ_i.

        Under the basic filter the exact Σ ε_i; under the advanced filter its K (a float). Either
        way the guarantee of everything admitted is the budget (ε_g, δ_g): a filter is a stopping
        rule, and its statistic says how close the charges are to it.
        """
        epsilons, deltas = self._queries()
        total_d = sum(deltas, Fraction(0))
        rule = self._admits(epsilons, deltas) if epsilons else ("basic" if self._basic_delta is not None
                                                                 else "advanced")
        if rule == "basic":
            total_e = sum(epsilons, Fraction(0))
            return Spent(total_e, total_d, _RULE_NAMES["basic"], (total_e, total_d), None)
        k = advanced_filter_bound([float(e) for e in epsilons], float(self.budget.epsilon),
                                  float(self._advanced_delta))
        return Spent(k, total_d, _RULE_NAMES["advanced"], (sum(epsilons, Fraction(0)), total_d), (k, total_d))

    def remaining(self, delta=0.0) -> tuple:
        """The largest ε one more charge with this δ would be admitted with (0 when none), and the δ left.

        Exact when the basic filter is the one that admits it; otherwise found by bisection on the
        advanced filter (a float, rounded down to a multiple of 1e-12).
        """
        dlt = _delta(delta)
        epsilons, deltas = self._queries()
        total_d = sum(deltas, Fraction(0))
        caps = [d for d in (self._basic_delta, None if self._advanced_delta is None else self._advanced_delta / 2)
                if d is not None]
        left_d = max(caps) - total_d
        best = Fraction(0)
        if self._basic_delta is not None and total_d + dlt <= self._basic_delta:
            best = max(best, self.budget.epsilon - sum(epsilons, Fraction(0)))
        if self._advanced_delta is not None and total_d + dlt <= self._advanced_delta / 2:
            lo, hi = 0.0, float(self.budget.epsilon)
            for _ in range(100):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                if self._admits(epsilons + [_exact(mid, "epsilon")], deltas + [dlt]) == "advanced":
                    lo = mid
                else:
                    hi = mid
            best = max(best, Fraction(math.floor(lo * 10 ** 12), 10 ** 12))
        return max(best, Fraction(0)), max(left_d, Fraction(0))

    def _counting(self) -> str:
        if self._advanced_delta is None:
            return f"{_RULE_NAMES['basic']} (Rogers et al. 2016)"
        if self._basic_delta is None:
            return _RULE_NAMES["advanced"]
        return (f"privacy filter of Rogers et al. (2016): basic composition or their advanced filter, each with "
                f"δ_g = {_show(self._advanced_delta)}")

    def _options(self) -> dict:
        return {"rule": self.rule}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.group is not None or c.partition is not None or c.step is not None:
            raise ValueError("a filter charge has no group, partition or step")
        epsilons, deltas = self._queries()
        if self._admits(epsilons + [c.epsilon], deltas + [c.delta]) is None:
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._charges.append(c)

    @classmethod
    def from_json(cls, text: str, *, dataset_id: str) -> FilterAccountant:
        return _typed(from_json(text, dataset_id=dataset_id), cls)


# --------------------------------------------------------------------------- temporal correlation

#: the most time steps a temporal-correlation budget follows from its first charge to its last
MAX_CORRELATED_STEPS = 1_000_000


def step_epsilons(charges) -> tuple[int | None, list[Fraction]]:
    """ε_t per time step, from the first charged step to the last (0 where nothing was charged).

    Charges at the same step add up (sequential composition within a step); post-processing and
    charges without a step are left out.

    Args:
        charges: the charges of an accountant (:attr:`Accountant.charges`).

    Returns:
        The first step (``None`` when no charge has a step) and the exact ε of every step from it.

    Raises:
        ParameterError: steps that span more than 1,000,000 time steps.
    """
    steps = [(c.step, c.epsilon) for c in charges if c.kind == "query" and c.step is not None]
    if not steps:
        return None, []
    first = min(s for s, _ in steps)
    span = max(s for s, _ in steps) - first + 1
    if span > MAX_CORRELATED_STEPS:
        raise ParameterError(f"the charges span {span:,} time steps; temporal correlation is followed over at most "
                             f"{MAX_CORRELATED_STEPS:,}.")
    eps = [Fraction(0)] * span
    for s, e in steps:
        eps[s - first] += e
    return first, eps


def _matrix_text(matrix) -> list[list[str]] | None:
    return None if matrix is None else [[repr(float(v)) for v in row] for row in matrix]


def _matrix_from(text):
    if text is None:
        return None
    if not isinstance(text, list) or not all(isinstance(row, list) for row in text):
        raise TypeError("a transition matrix is not a list of rows")
    return [[float(_text_number(v)) for v in row] for row in text]


class TemporalCorrelationAccountant(_BaseAccountant):
    """A budget on the temporal privacy leakage of releases over time (Cao et al., ICDE 2017 / TKDE 2018).

    Each charge is an ε-DP release of the data at one time step. When a user's data follows a
    Markov chain the adversary knows (backward and forward transition matrices), a release at
    one step also leaks about the others; the accountant keeps BPL, FPL and TPL of every step
    (:class:`veil.dp.temporal.TemporalCorrelation`) and admits a charge only when, with it,
    the leakage of every window of w steps (TPL_t itself for w = 1) stays within the budget α.
    Adding a release raises the forward loss of every earlier step, so the whole horizon is
    checked at every charge.

    The leakage is computed in floating point; a charge that would bring it to α within
    rounding may be refused, never the other way round.

    Args:
        alpha: the budget α > 0: the most any window of w steps may leak.
        dataset_id: the dataset (stream) the budget belongs to.
        backward: the backward transition matrix P^B, or ``None``.
        forward: the forward transition matrix P^F, or ``None``.
        w: the window length, w >= 1.

    Raises:
        ParameterError: α <= 0, w < 1, or a transition matrix that is not row-stochastic.
    """

    composition = "temporal_correlation"

    def __init__(self, alpha, *, dataset_id: str, backward=None, forward=None, w: int = 1):
        super().__init__(Budget(alpha), dataset_id=dataset_id)
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1:
            raise ParameterError(f"the window length w must be a whole number >= 1, got {w!r}.")
        self.w = int(w)
        self.correlation = TemporalCorrelation(backward, forward)
        # the first charged step, the exact ε of every step from it, and the leakage they add up to
        self._first: int | None = None
        self._totals: list[Fraction] = []
        self._tracker = LeakageTracker(self.correlation, self.w)

    @property
    def now(self) -> int | None:
        """The step of the latest charge, or ``None`` before the first."""
        steps = [c.step for c in self._charges if c.kind == "query"]
        return steps[-1] if steps else None

    def _check(self, step) -> int:
        step = _step(step, "step")
        now = self.now
        if now is not None and step < now:
            raise ParameterError(f"step {step} is before the latest charge at step {now}; a stream only moves forward.")
        return step

    def _with(self, charge: Charge) -> tuple:
        """The first step, the per-step totals and the tracker with ``charge`` made (nothing changes)."""
        first = charge.step if self._first is None else self._first
        index = charge.step - first
        if index >= MAX_CORRELATED_STEPS:
            raise ParameterError(f"step {charge.step} is {index:,} steps after the first charge; temporal correlation "
                                 f"is followed over at most {MAX_CORRELATED_STEPS:,} steps.")
        totals = self._totals + [Fraction(0)] * (index + 1 - len(self._totals))
        totals[index] += charge.epsilon
        return first, totals, self._tracker.with_step(index, float(totals[index]))

    def leakage(self):
        """BPL, FPL, TPL and the window leakage of every step charged so far
        (:class:`veil.dp.temporal.Leakage`, steps from the first charge), or ``None`` before any."""
        return None if self._first is None else self.correlation.leakage([float(e) for e in self._totals], self.w)

    def _trial(self, step, epsilon, delta, label: str) -> Charge:
        step, eps, dlt = self._check(step), _epsilon(epsilon), _delta(delta)
        if dlt != 0:
            raise ParameterError("temporal correlation accounting (Cao et al.) is for pure epsilon-DP releases; "
                                 "charge delta = 0.")
        return Charge(label, eps, dlt, step=step, at=_now())

    def can_afford(self, step: int, epsilon, delta=0.0) -> bool:
        """Whether a release of ε at ``step`` keeps every window's leakage within α (nothing is recorded)."""
        return self._with(self._trial(step, epsilon, delta, "trial"))[2].worst <= float(self.budget.epsilon)

    def charge(self, step: int, epsilon, delta=0.0, *, label: str | None = None) -> Charge:
        """Charge a release of ε at ``step``; ``label`` defaults to ``"step <step>"``.

        Raises:
            ParameterError: a bad or earlier step, ε <= 0, or δ > 0.
            BudgetExceededError: some window's leakage would exceed α; nothing was recorded.
        """
        label = _label(f"step {step}" if label is None else label)
        charge = self._trial(step, epsilon, delta, label)
        new = self._with(charge)
        worst = new[2].worst
        if worst > float(self.budget.epsilon):
            raise BudgetExceededError(
                f"query {label!r} at step {charge.step} asks for ε = {_show(charge.epsilon)} but the temporal privacy "
                f"leakage would reach {worst:.6g} > α = {_show(self.budget.epsilon)} ({self._counting()}) for dataset "
                f"{self.dataset_id!r}; ask for less.", label=label, requested=(charge.epsilon, charge.delta),
                remaining=self.remaining(charge.step))
        old = self._first, self._totals, self._tracker
        self._first, self._totals, self._tracker = new

        def undo() -> None:
            self._first, self._totals, self._tracker = old

        return self._record(charge, undo=undo)

    def spent(self) -> Spent:
        """The largest leakage of any window of w steps so far (a float; δ is always 0)."""
        worst = self._tracker.worst
        return Spent(worst, Fraction(0), "temporal correlation", (worst, Fraction(0)), None)

    def remaining(self, step: int | None = None) -> tuple:
        """The largest ε one more release at ``step`` (default: the latest charged step, or 0) could
        take, rounded down to a multiple of 1e-12, and δ = 0."""
        step = self._check(step if step is not None else (self.now if self.now is not None else 0))
        alpha = float(self.budget.epsilon)
        lo, hi = 0.0, alpha
        for _ in range(100):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if mid > 0 and self._with(Charge("trial", _exact(mid, "epsilon"), step=step))[2].worst <= alpha:
                lo = mid
            else:
                hi = mid
        return Fraction(math.floor(lo * 10 ** 12), 10 ** 12), Fraction(0)

    def _counting(self) -> str:
        c = self.correlation
        known = [name for name, m in (("backward", c.backward), ("forward", c.forward)) if m is not None]
        matrices = " and ".join(f"{name} {getattr(c, name).shape[0]}×{getattr(c, name).shape[0]}" for name in known)
        return (f"temporal correlation (Cao et al.), leakage of every window of w = {self.w} step(s), "
                f"{matrices or 'no'} transition matrix{'ces' if len(known) > 1 else ''}")

    def _options(self) -> dict:
        return {"w": self.w, "backward": _matrix_text(self.correlation.backward),
                "forward": _matrix_text(self.correlation.forward)}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.step is None:
            raise ParameterError("a temporal-correlation charge has no time step.")
        new = self._with(self._trial(c.step, c.epsilon, c.delta, c.label))
        if new[2].worst > float(self.budget.epsilon):
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._first, self._totals, self._tracker = new
        self._charges.append(c)

    @classmethod
    def from_json(cls, text: str, *, dataset_id: str) -> TemporalCorrelationAccountant:
        return _typed(from_json(text, dataset_id=dataset_id), cls)


# --------------------------------------------------------------------------- JSON

def _typed(acc, cls):
    if not isinstance(acc, cls):
        raise BudgetFileError(f"the budget file keeps a {type(acc).__name__}, not a {cls.__name__}; "
                              "load it with veil.dp.accountant.load.")
    return acc


def from_json(text: str, *, dataset_id: str, discount=None, source: str | None = None):
    """An accountant from :meth:`to_json` text, refusing one kept for another dataset.

    Args:
        text: the JSON text.
        dataset_id: the dataset the caller is about to query; must match the text's.
        discount: the g of a temporal budget kept with a custom (unsaved) discount function.
        source: a file name for messages.

    Raises:
        BudgetFileError: the text is not a veil budget, is corrupt, belongs to another dataset, or
            records charges that exceed its own budget.
    """
    return from_document(parse_document(text, source), dataset_id=dataset_id, discount=discount, source=source)


def _where(source: str | None) -> str:
    return f"budget file {source!r}" if source else "the budget JSON"


def parse_document(text: str, source: str | None = None) -> dict:
    """The JSON object of a budget text, checked to be a veil budget of a version this veil reads.

    Raises:
        BudgetFileError: not JSON, not a veil budget, or no valid schema version.
    """
    where = _where(source)
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        raise BudgetFileError(f"{where} is not valid JSON ({exc}); restore it from a backup.") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BudgetFileError(f"{where} is not a veil privacy budget (no \"format\": \"{FORMAT}\").")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BudgetFileError(f"{where} has no valid schema version; it is corrupt.")
    if version > SCHEMA_VERSION:
        raise BudgetFileError(f"{where} has schema version {version}, newer than this veil reads "
                              f"({SCHEMA_VERSION}); upgrade veil.")
    return doc


def from_document(doc: dict, *, dataset_id: str | None, discount=None, source: str | None = None,
                  where: str | None = None):
    """An accountant from a parsed budget document (:func:`parse_document`).

    ``dataset_id=None`` takes the document's own id (to show a budget without its data).
    ``where`` names the document in messages (default: the budget file ``source``).

    Raises:
        BudgetFileError: see :func:`from_json`.
    """
    where = where or _where(source)
    file_id = doc.get("dataset_id")
    if not isinstance(file_id, str) or not file_id.strip():
        raise BudgetFileError(f"{where} names no dataset; it is corrupt.")
    if dataset_id is None:
        dataset_id = file_id
    if file_id != dataset_id:
        raise BudgetFileError(f"{where} belongs to dataset {file_id!r}, not {dataset_id!r}; use the budget "
                              "file of this dataset.")
    try:
        acc = _build(doc, dataset_id, discount)
        charges = doc["charges"]
        if not isinstance(charges, list):
            raise TypeError("charges is not a list")
        for entry in charges:
            acc._replay(_charge_from(entry))
    except BudgetExceededError:
        raise BudgetFileError(f"{where} records charges that exceed its own budget; it was edited or is "
                              "corrupt.") from None
    except BudgetFileError:
        raise
    except KeyError as exc:
        raise BudgetFileError(f"{where} is corrupt (it has no {exc.args[0]!r} entry); restore it from a "
                              "backup.") from None
    except (TypeError, ValueError, AttributeError, ParameterError) as exc:
        reason = str(exc).split(";")[0].rstrip(".") if str(exc) else type(exc).__name__
        raise BudgetFileError(f"{where} is corrupt ({reason}); restore it from a backup.") from None
    return acc


def _build(doc: dict, dataset_id: str, discount):
    budget = doc["budget"]
    options = doc.get("options") or {}
    if not isinstance(budget, dict) or not isinstance(options, dict):
        raise TypeError("budget or options is not an object")
    kind = doc["composition"]
    b = Budget(_text_number(budget["epsilon"]), _text_number(budget["delta"]))
    if kind in ("sequential", "advanced"):
        dp = options.get("advanced_delta_prime")
        return Accountant(b, dataset_id=dataset_id, composition=kind,
                          advanced_delta_prime=None if dp is None else _text_number(dp))
    if kind == "temporal":
        spec = options["discount"]
        name = spec["name"]
        if name in _DISCOUNTS:
            cls, param = _DISCOUNTS[name]
            kept = cls(_text_number(spec[param]))
            if discount is not None and discount != kept:
                raise BudgetFileError(f"the budget file keeps the discount {kept}, not the {discount} given; "
                                      "leave discount out.")
            discount = kept
        elif name == "custom":
            if discount is None:
                raise BudgetFileError("the budget file was kept with a custom discount function; pass the same "
                                      "function as discount= when loading it.")
        else:
            raise ValueError(f"unknown discount {name!r}")
        return TemporalAccountant(b, dataset_id=dataset_id, discount=discount)
    if kind == "window":
        return WindowAccountant(options["w"], b.epsilon, delta=b.delta, dataset_id=dataset_id)
    if kind == "filter":
        return FilterAccountant(b, dataset_id=dataset_id, rule=options["rule"])
    if kind == "temporal_correlation":
        return TemporalCorrelationAccountant(b.epsilon, dataset_id=dataset_id, w=options["w"],
                                             backward=_matrix_from(options["backward"]),
                                             forward=_matrix_from(options["forward"]))
    raise ValueError(f"unknown composition {kind!r}")


def _text_number(value) -> Fraction:
    if not isinstance(value, str):
        raise TypeError(f"number {value!r} is not kept as text")
    return _exact(value, "a number")


def _charge_from(entry) -> Charge:
    if not isinstance(entry, dict):
        raise TypeError("a charge is not an object")
    kind = entry["kind"]
    if kind not in ("query", "postprocess"):
        raise ValueError(f"unknown charge kind {kind!r}")
    eps, delta = _text_number(entry["epsilon"]), _text_number(entry["delta"])
    if kind == "postprocess" and (eps != 0 or delta != 0):
        raise ValueError("a post-processing record has a cost")
    if kind == "query":
        _epsilon(eps)
        _delta(delta)
    step = entry.get("step")
    if step is not None:
        step = _step(step, "step")
    for key in ("group", "partition"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise TypeError(f"{key} is not text")
    at = entry.get("at", "")
    if not isinstance(at, str):
        raise TypeError("at is not text")
    return Charge(_label(entry["label"]), eps, delta, kind=kind, group=entry.get("group"),
                  partition=entry.get("partition"), step=step, at=at)
