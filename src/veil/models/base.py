"""What every privacy model shares: a measured level per class and overall, and a verdict.

A model reads only the equivalence classes (sizes and count matrices), never the rows, so the
same object serves ``veil check`` on a finished release and the anonymization searches, which
evaluate it on every candidate generalization.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.errors import ParameterError

# Relative tolerance when a measured level is compared with a threshold, so that e.g.
# exp(log 3) = 2.9999999999999996 still counts as 3.
TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class ModelResult:
    """The outcome of evaluating one privacy model.

    Attributes:
        model: the model's name, e.g. ``"entropy ℓ-diversity"``.
        key: the model's short key, e.g. ``"l_entropy"``.
        level: the level the data reaches (smallest k or ℓ, largest α, t, δ or β over classes).
        threshold: the threshold checked, or ``None`` when only measuring.
        passed: whether every class meets the threshold (``None`` without a threshold).
        class_levels: the level of each class.
        class_passed: whether each class meets the threshold (``None`` without a threshold).
        higher_is_better: whether a larger level means more privacy (k, ℓ) or less (α, t, δ, β).
        sensitive: the sensitive column, or ``None`` for a model that reads none or for the
            combination over several.
        by_sensitive: per sensitive column, its own result when several were combined.
    """

    model: str
    key: str
    level: float
    threshold: float | None
    passed: bool | None
    class_levels: np.ndarray
    class_passed: np.ndarray | None
    higher_is_better: bool
    sensitive: str | None = None
    by_sensitive: dict[str, "ModelResult"] = field(default_factory=dict)

    @property
    def failing_classes(self) -> np.ndarray:
        """Indices of the classes that do not meet the threshold."""
        if self.class_passed is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(~self.class_passed)


class PrivacyModel:
    """Base of the privacy models.

    Subclasses set ``name``, ``key`` and ``higher_is_better`` and implement
    :meth:`class_levels`; models that read a sensitive column set ``needs_sensitive``.

    Args:
        threshold: the level to check, or ``None`` to measure only.
        sensitive: the sensitive column to evaluate; ``None`` evaluates every sensitive column
            the model applies to and combines them (each class must meet the threshold for all).
    """

    name = "privacy model"
    key = "model"
    higher_is_better = True
    needs_sensitive = True
    # δ-disclosure is defined with a strict inequality; the other models are not.
    strict = False
    # Whether every class satisfying the model implies that every merge of classes containing it
    # does too. ``monotonic``: when all classes satisfy it, so does every more general node (the
    # generalization property lattice searches prune on). ``monotonic_with_suppression``: the
    # records in failing classes never grow under generalization, so a suppression limit met
    # at a node is met above it.
    monotonic = True
    monotonic_with_suppression = False

    def __init__(self, threshold: float | None = None, sensitive: str | None = None):
        self.threshold = None if threshold is None else float(threshold)
        self.sensitive = sensitive

    def __repr__(self) -> str:
        return f"{type(self).__name__}(threshold={self.threshold}, sensitive={self.sensitive!r})"

    def applies_to(self, counts: SensitiveCounts) -> bool:
        """Whether the model is defined for this sensitive column."""
        return True

    def why_not(self, counts: SensitiveCounts) -> str:
        """One sentence saying why the model does not apply to a column."""
        return f"{self.name} does not apply to column '{counts.name}'."

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        raise NotImplementedError

    def class_passed(self, classes: EquivalenceClasses, levels: np.ndarray) -> np.ndarray | None:
        """Whether each class meets the threshold, or ``None`` without a threshold."""
        if self.threshold is None:
            return None
        slack = TOLERANCE * max(abs(self.threshold), 1.0)
        if self.higher_is_better:
            return levels >= self.threshold - slack
        if self.strict:
            return levels < self.threshold - slack
        return levels <= self.threshold + slack

    def evaluate(self, classes: EquivalenceClasses) -> ModelResult:
        """Measure the model on ``classes`` and check the threshold.

        Raises:
            ParameterError: the model needs a sensitive column and there is none it applies to.
        """
        if not self.needs_sensitive:
            return self._result(classes, None)
        targets = self.targets(classes)
        results = {name: self._result(classes, classes.sensitive[name]) for name in targets}
        if len(results) == 1:
            return next(iter(results.values()))
        return self._combine(results)

    def failing(self, classes: EquivalenceClasses) -> np.ndarray:
        """Bool per class: whether it misses the threshold, which is ``~evaluate(classes).class_passed``
        (the classes an anonymization suppresses), computed without measuring the level.

        A model may override :meth:`_failing_on` with a test that gives exactly that verdict for
        less work (a search asks it of thousands of nodes); a model whose ``evaluate``,
        ``class_levels`` or ``class_passed`` is overridden below that test is evaluated in full.

        Raises:
            ParameterError: the model has no threshold, or needs a sensitive column and there is
                none it applies to.
        """
        found = self.failing_quick(classes)
        return ~self.evaluate(classes).class_passed if found is None else found

    def failing_quick(self, classes: EquivalenceClasses) -> np.ndarray | None:
        """:meth:`failing` by the model's quick test, or ``None`` where that test cannot tell
        (a class as close to the threshold as rounding reaches: the model then needs a full
        evaluation of these very classes). A class's verdict here depends on that class alone.

        Raises:
            ParameterError: as :meth:`failing`.
        """
        if self.threshold is None:
            raise ParameterError(f"{self.name} needs a threshold to anonymize with.")
        if not _fast_failing(type(self)):
            return None
        if not self.needs_sensitive:
            return self._failing_on(classes, None)
        failing = None
        for name in self.targets(classes):
            found = self._failing_on(classes, classes.sensitive[name])
            if found is None:
                return None
            failing = found if failing is None else failing | found
        return failing

    def _failing_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray | None:
        """The classes failing the threshold on one sensitive column (``None`` for a model that
        reads none), or ``None`` when a class lies too close to the threshold to tell without
        a full evaluation; overridden by models with a faster exact test."""
        return ~self.class_passed(classes, self.class_levels(classes, counts))

    def smallest_class(self, classes: EquivalenceClasses) -> int:
        """The fewest records a class needs to meet the threshold: every smaller class of these
        classes' dataset fails the model whatever its sensitive values, as :meth:`failing` and
        ``evaluate`` judge it (1 when the model proves no such size). A search decides from class
        sizes alone that a node suppresses too many records.

        Raises:
            ParameterError: as :meth:`failing`.
        """
        if self.threshold is None:
            raise ParameterError(f"{self.name} needs a threshold to anonymize with.")
        if not _fast_failing(type(self)):
            return 1
        if not self.needs_sensitive:
            return self._smallest_on(classes, None)
        return max(self._smallest_on(classes, classes.sensitive[name]) for name in self.targets(classes))

    def _smallest_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> int:
        """:meth:`smallest_class` on one sensitive column; overridden where a size is proven."""
        return 1

    def targets(self, classes: EquivalenceClasses) -> list[str]:
        """The sensitive columns this model reads on these classes.

        Raises:
            ParameterError: the model needs a sensitive column and there is none it applies to.
        """
        if self.sensitive is not None:
            if self.sensitive not in classes.sensitive:
                raise ParameterError(f"{self.name} was asked for column '{self.sensitive}', which is "
                                     "not a sensitive column of the dataset.")
            counts = classes.sensitive[self.sensitive]
            if not self.applies_to(counts):
                raise ParameterError(self.why_not(counts))
            return [self.sensitive]
        if not classes.sensitive:
            raise ParameterError(f"{self.name} needs a sensitive column; declare one.")
        targets = [name for name, sc in classes.sensitive.items() if self.applies_to(sc)]
        if not targets:
            raise ParameterError(self.why_not(next(iter(classes.sensitive.values()))))
        return targets

    def _result(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> ModelResult:
        levels = self.class_levels(classes, counts)
        passed = self.class_passed(classes, levels)
        level = float(levels.min() if self.higher_is_better else levels.max()) if len(levels) else float("nan")
        return ModelResult(self.name, self.key, level, self.threshold,
                           None if passed is None else bool(passed.all()), levels, passed,
                           self.higher_is_better, None if counts is None else counts.name)

    def _combine(self, results: dict[str, ModelResult]) -> ModelResult:
        stacked = np.stack([r.class_levels for r in results.values()])
        levels = stacked.min(axis=0) if self.higher_is_better else stacked.max(axis=0)
        passed = None
        if self.threshold is not None:
            passed = np.logical_and.reduce([r.class_passed for r in results.values()])
        worst = min if self.higher_is_better else max
        return ModelResult(self.name, self.key, worst(r.level for r in results.values()), self.threshold,
                           None if passed is None else bool(passed.all()), levels, passed,
                           self.higher_is_better, None, results)


_OVERRIDABLE = ("evaluate", "targets", "_result", "_combine", "class_levels", "class_passed", "_smallest_on")
# Returned by smallest_class when no class of any size can meet the threshold.
NO_CLASS_PASSES = np.iinfo(np.int64).max
_FAST: dict[type, bool] = {}


def _fast_failing(cls: type) -> bool:
    """Whether ``cls``'s own :meth:`PrivacyModel._failing_on` decides what ``evaluate`` would: it
    is defined by some class below :class:`PrivacyModel` and nothing that ``evaluate`` reads was
    overridden further down."""
    if cls not in _FAST:
        owner = next(k for k in cls.__mro__ if "_failing_on" in k.__dict__)
        _FAST[cls] = owner is not PrivacyModel and all(
            getattr(cls, name) is getattr(owner, name) for name in _OVERRIDABLE)
    return _FAST[cls]


def ceil_threshold(model: PrivacyModel) -> int:
    """The smallest whole number that meets a higher-is-better threshold as ``class_passed``
    compares (with its tolerance)."""
    return int(np.ceil(model.threshold - TOLERANCE * max(abs(model.threshold), 1.0)))


def smallest_covering(q: np.ndarray, enough) -> int:
    """The fewest records whose values can hold table shares ``q`` meeting ``enough(share)``:
    the smallest ``s`` with ``enough`` of the ``s`` largest shares summed
    (:data:`NO_CLASS_PASSES` when no ``s`` does). ``enough`` must grow with the share."""
    top = np.cumsum(np.sort(np.asarray(q, dtype=float))[::-1])
    for s, share in enumerate(top.tolist(), start=1):
        if enough(share):
            return s
    return NO_CLASS_PASSES


def require(condition: bool, message: str) -> None:
    """Raise :class:`ParameterError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ParameterError(message)
