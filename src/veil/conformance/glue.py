"""Replay checks of the glue around veil's noise samplers: the noise a release asks for must not
depend on the data.

Most privacy bugs of DP libraries are not in the samplers but in the code around them: a
sensitivity computed from the unclipped data, a noise scale or a number of draws that depends on
the values, a loop over the distinct values present. Each of them shows up in the *calls* made to
the samplers. So this module records every call a release makes into veil's randomness —
:class:`veil.dp.noise.NoiseSource` (Laplace, discrete Laplace, Gaussian, the exponential mechanism
and report-noisy-max, randomized response, the planar-Laplace draws, coins) and the local clients'
:class:`veil.ldp.randomness.Randomness` — as one :class:`Draw` each: the sampler, its parameters
as exact values (a float is kept as the float it is, compared exactly) and the shape of the cells
it is asked for, in order. A release is then run on a table and on each of its neighbours (one
record removed, added or changed; :func:`neighbour`), and the two sequences of draws must be
identical (:func:`check_release`): the definition of the glue being data-independent.

Coupled replay. An adaptive release may decide what to draw next from what it has *released*
(the w-event budget strategies publish a step only when a noisy dissimilarity is large): that is
post-processing and allowed. So the neighbour's run is coupled with the table's: while its draws
match the table's, each returns the output the table's draw returned (:func:`replaying`), and the
release's decisions can depend on the data only through the noisy outputs. A draw that differs
(another sampler, parameter or shape; one more or one less) ends the coupling, and the run goes
on with real draws so that the whole sequence can be shown.

Recording (:func:`recording`) leaves every sampler's behaviour unchanged: the wrapper calls the
sampler and keeps the call. Both context managers replace the samplers' methods on their classes
for the duration of the block (so that sources a release makes itself, such as a CLI's
``NoiseSource.seeded(seed)``, are seen too) and restore them after; they are for tests, in one
thread at a time. A sampler calling another one (none does today) is recorded once, as the outer
call.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.conformance.base import ConformanceError
from veil.dp.noise import NoiseSource
from veil.errors import ParameterError
from veil.ldp.randomness import Randomness

__all__ = ["SAMPLERS", "Draw", "Recording", "check_release", "neighbour", "recording", "replaying"]

#: Every sampler method, by class: the argument whose shape is the cells asked for (an array of
#: values, or a ``size``), and the arguments that are its parameters.
SAMPLERS: dict[type, dict[str, tuple[str, tuple[str, ...]]]] = {
    NoiseSource: {
        "laplace": ("values", ("scale",)),
        "discrete_laplace": ("values", ("scale",)),
        "gaussian": ("values", ("scale",)),
        "discrete_gaussian": ("values", ("scale",)),
        "gumbel_argmax": ("scores", ("scale",)),
        "exponential_argmax": ("scores", ("scale",)),
        "flip_bits": ("bits", ("keep_prob",)),
        "randomize_categories": ("codes", ("k", "keep_prob")),
        "uniform": ("size", ()),
        "bernoulli": ("size", ("prob",)),
        "gamma2": ("size", ("scale",)),
    },
    Randomness: {
        "uniform": ("size", ()),
        "bernoulli": ("size", ("prob", "rounding")),
        "integers": ("size", ("high",)),
        "hash_seeds": ("size", ("low",)),
    },
}


@dataclass(frozen=True)
class Draw:
    """One call into a sampler: which one, its parameters (exact values) and the cells' shape."""

    sampler: str
    parameters: tuple
    cells: tuple

    def __str__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.parameters)
        return f"{self.sampler}({shown}) on cells of shape {self.cells}"


@dataclass
class Recording:
    """The draws of one release, in order, and what each returned."""

    draws: list[Draw] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)


def _exact(value: Any) -> Any:
    """A parameter as a plain Python value that compares exactly (a numpy scalar made Python)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def _cells(argument: str, value: Any) -> tuple:
    """The shape of the cells asked for: a ``size`` (a number or a shape) as given, else the
    shape of the values (a scalar value is one cell of shape ``()``)."""
    if argument == "size":
        return (int(value),) if isinstance(value, (int, np.integer)) else tuple(int(v) for v in value)
    return tuple(int(v) for v in np.shape(value))


def _draw(cls: type, name: str, signature: inspect.Signature, args: tuple, kwargs: dict) -> Draw:
    cells_arg, params = SAMPLERS[cls][name]
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    arguments = bound.arguments
    return Draw(f"{cls.__name__}.{name}", tuple((p, _exact(arguments[p])) for p in params),
                _cells(cells_arg, arguments[cells_arg]))


@contextlib.contextmanager
def _patched(on_call: Callable[[Draw, Callable[[], Any]], Any]) -> Iterator[None]:
    """Replace every sampler method with a wrapper that hands its :class:`Draw` and the real call
    to ``on_call``; nested sampler calls go straight through."""
    depth = [0]
    originals = []

    def wrap(cls, name, original):
        signature = inspect.signature(original)

        def wrapper(*args, **kwargs):
            if depth[0]:
                return original(*args, **kwargs)
            depth[0] += 1
            try:
                return on_call(_draw(cls, name, signature, args, kwargs), lambda: original(*args, **kwargs))
            finally:
                depth[0] -= 1

        wrapper.__wrapped__ = original
        return wrapper

    try:
        for cls, methods in SAMPLERS.items():
            for name in methods:
                original = cls.__dict__[name]
                originals.append((cls, name, original))
                setattr(cls, name, wrap(cls, name, original))
        yield
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)


@contextlib.contextmanager
def recording() -> Iterator[Recording]:
    """Record every sampler call made in the block, leaving the samplers' behaviour unchanged.

    Example::

        with recording() as seen:
            dp_count(table, 1.0)
        seen.draws  # [Draw('NoiseSource.discrete_laplace', (('scale', 1.0),), ())]
    """
    seen = Recording()

    def on_call(draw, call):
        out = call()
        seen.draws.append(draw)
        seen.outputs.append(out)
        return out

    with _patched(on_call):
        yield seen


@contextlib.contextmanager
def replaying(reference: Recording) -> Iterator[Recording]:
    """Record every sampler call made in the block, coupled with ``reference``: while the calls
    match the reference's draws one for one, each returns the output the reference's draw returned
    (a copy) instead of drawing; from the first call that differs on, real draws are made."""
    seen = Recording()
    coupled = [True]

    def on_call(draw, call):
        i = len(seen.draws)
        if coupled[0] and i < len(reference.draws) and reference.draws[i] == draw:
            out = _copy(reference.outputs[i])
        else:
            coupled[0] = False
            out = call()
        seen.draws.append(draw)
        seen.outputs.append(out)
        return out

    with _patched(on_call):
        yield seen


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


# ---------------------------------------------------------------------------------------------
# neighbours
# ---------------------------------------------------------------------------------------------
KINDS = ("removed", "added", "changed")


def neighbour(table: pd.DataFrame, kind: str, *, row: int = 0, record: Mapping[str, Any] | None = None,
              unit: str | None = None) -> pd.DataFrame:
    """A neighbour of ``table`` under add/remove-one (or change-one) of a privacy unit.

    Args:
        table: the table; it is not modified.
        kind: ``"removed"`` (the unit of row ``row`` taken out), ``"added"`` (``record`` put in at
            position ``row``) or ``"changed"`` (row ``row``'s values replaced by ``record``'s).
        row: the position of the row, 0 … len(table) − 1 (for ``"added"``, 0 … len(table)).
        record: the values of the added or changed record, one per column of the table (or of the
            columns to change), e.g. drawn from each column's public domain.
        unit: the column that identifies a unit of several rows (a user, a person); with it,
            ``"removed"`` takes out every row of that unit and ``"added"`` adds a record of a new
            unit (``record`` should give that column a value the table does not hold). ``None``:
            the unit is the row.

    Raises:
        ParameterError: an unknown kind, a row out of range, a missing record or a record with a
            column the table does not have.
    """
    if kind not in KINDS:
        raise ParameterError(f"a neighbour is 'removed', 'added' or 'changed', got {kind!r}.")
    n = len(table)
    if not 0 <= row < n + (kind == "added"):
        raise ParameterError(f"row {row} is outside the table of {n} rows.")
    if kind == "removed":
        if unit is None:
            return table.drop(index=table.index[row]).reset_index(drop=True)
        return table[table[unit] != table[unit].iloc[row]].reset_index(drop=True)
    if not record:
        raise ParameterError(f"an {kind} neighbour needs the record's values.")
    unknown = [c for c in record if c not in table.columns]
    if unknown:
        raise ParameterError(f"the record names column '{unknown[0]}', which the table does not have.")
    if kind == "added":
        if set(record) != set(table.columns):
            raise ParameterError("an added record needs a value for every column of the table.")
        new = pd.DataFrame([{c: record[c] for c in table.columns}]).astype(table.dtypes.to_dict(), errors="ignore")
        return pd.concat([table.iloc[:row], new, table.iloc[row:]], ignore_index=True)
    out = table.copy()
    for column, value in record.items():
        out[column] = out[column].astype(object)
        out.iloc[row, out.columns.get_loc(column)] = value
    return out.infer_objects()


# ---------------------------------------------------------------------------------------------
# the check
# ---------------------------------------------------------------------------------------------
def check_release(name: str, release: Callable[[Any], Any], table: Any,
                  neighbours: Mapping[str, Any] | Sequence[tuple[str, Any]], *, refused: bool = False) -> Recording:
    """Check that ``release`` asks the samplers for the same noise on ``table`` and its neighbours.

    ``release(table)`` runs once under :func:`recording`, then ``release(other)`` once for every
    neighbour under :func:`replaying` that recording; every sequence of draws (sampler, exact
    parameters, cells' shape, in order) must equal the table's. Whatever else the release does
    (write files, print) is its own business, but a release that raises on one table and not on
    its neighbour has a data-dependent refusal, which fails the check too.

    Args:
        name: what is checked, for the failure's message.
        release: a function of one table that makes one release.
        table: the table.
        neighbours: its neighbours, by label (a mapping, or pairs of label and table).
        refused: the release is expected to refuse ``table`` (then every neighbour must refuse
            it too, drawing alike before it does); by default an error on the table itself is
            raised again, so that a broken path never passes by refusing everything.

    Returns:
        The table's recording.

    Raises:
        ConformanceError: (property ``glue``) the draws, or whether the release raised, differ on
            a neighbour; the message shows the first difference.
    """
    with recording() as base:
        base_error = _run(release, table)
    if base_error is not None and not refused:
        raise base_error
    if base_error is None and refused:
        raise ConformanceError(name, "glue", "the release was expected to refuse the table, and did not")
    if not base.draws and base_error is None:
        raise ConformanceError(name, "glue", "the release drew no noise at all on the table; check the path "
                                             "reaches the samplers")
    pairs = neighbours.items() if isinstance(neighbours, Mapping) else neighbours
    for label, other in pairs:
        with replaying(base) as seen:
            error = _run(release, other)
        if (base_error is None) != (error is None):
            which = "the table" if base_error is not None else f"the {label} neighbour"
            raise ConformanceError(name, "glue", f"the release raised on {which} only: "
                                                 f"{base_error or error!r}")
        if seen.draws != base.draws:
            raise ConformanceError(name, "glue", f"on the {label} neighbour: {_difference(base.draws, seen.draws)}")
    return base


def _run(release: Callable[[Any], Any], table: Any) -> BaseException | None:
    try:
        release(table)
    except Exception as exc:  # the check compares whether both runs raise
        return exc
    return None


def _difference(mine: list[Draw], theirs: list[Draw]) -> str:
    for i, (a, b) in enumerate(itertools.zip_longest(mine, theirs)):
        if a != b:
            if a is None:
                return f"draw {i + 1} is an extra {b} (the table made {len(mine)} draws)"
            if b is None:
                return f"draw {i + 1}, {a}, is missing (the neighbour made {len(theirs)} draws)"
            return f"draw {i + 1} is {b}, where the table's is {a}"
    return "the draws are equal"  # pragma: no cover - only called when they differ

