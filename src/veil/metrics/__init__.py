"""Utility metrics: how much a release keeps of the original data.

Every metric reads the equivalence classes of a release and the cells they publish, with a
mask of suppressed classes, and offers the three calls a search needs: :meth:`~UtilityMetric.value`
(the metric as reported), :meth:`~UtilityMetric.loss` (what a search minimizes) and
:meth:`~UtilityMetric.loss_bound` (a lower bound on the loss of this node and every more general
one, for pruning). Pick one by key with :func:`make_metric`; report them all with
:func:`evaluate_all`.

========================  ==============================================================
key                       metric
========================  ==============================================================
``height``                generalization height, Σ of the levels
``precision``             Sweeney's precision (higher is better)
``discernibility``        Σ class size² + |D| per suppressed record
``aecs``                  average equivalence class size
``loss``                  normalized certainty penalty (ARX's "loss")
``entropy``               non-uniform entropy
``classification``        Iyengar's classification metric (option ``label``)
``kl``                    KL-divergence between the original and the released distribution
``ig_pl``                 information gain / privacy loss of top-down specialization (``label``)
``workload``              mean relative error of random counting queries
========================  ==============================================================
"""

from __future__ import annotations

import difflib
import inspect

import numpy as np

from veil.classes import EquivalenceClasses
from veil.errors import ParameterError
from veil.metrics.base import UtilityMetric, has_levels
from veil.metrics.classification import ClassificationMetric, InformationGainPrivacyLoss
from veil.metrics.generalization import GeneralizationHeight, Precision
from veil.metrics.information import KLDivergence, NonUniformEntropy, NormalizedCertaintyPenalty
from veil.metrics.partition import AverageClassSize, Discernibility
from veil.metrics.workload import QueryWorkload

METRICS: dict[str, type[UtilityMetric]] = {
    cls.key: cls for cls in (GeneralizationHeight, Precision, Discernibility, AverageClassSize,
                             NormalizedCertaintyPenalty, NonUniformEntropy, ClassificationMetric,
                             KLDivergence, InformationGainPrivacyLoss, QueryWorkload)
}

# Other names the literature and other tools use for the same metrics.
ALIASES: dict[str, str] = {
    "ncp": "loss", "gcp": "loss", "nue": "entropy", "non-uniform entropy": "entropy",
    "dm": "discernibility", "cm": "classification", "kl-divergence": "kl", "avg_class_size": "aecs",
    "prec": "precision",
}


def _resolve(key: str) -> type[UtilityMetric]:
    if not isinstance(key, str):
        raise ParameterError(f"a utility metric is named by a string key, not {key!r}.")
    norm = key.strip().lower()
    norm = ALIASES.get(norm, norm)
    if norm in METRICS:
        return METRICS[norm]
    close = difflib.get_close_matches(norm, list(METRICS) + list(ALIASES), n=1, cutoff=0.4)
    if close:
        raise ParameterError(f"there is no utility metric '{key}'; did you mean "
                             f"'{ALIASES.get(close[0], close[0])}'?")
    raise ParameterError(f"there is no utility metric '{key}'; use one of {', '.join(METRICS)}.")


def make_metric(key: str, **options) -> UtilityMetric:
    """The utility metric named ``key``, built with ``options`` (e.g. ``label`` for
    ``classification`` and ``ig_pl``; ``queries``, ``max_attributes``, ``seed``, ``sanity`` for
    ``workload``).

    Raises:
        ParameterError: an unknown key (the closest valid key is named), an option the metric
            does not take, or an option out of range (a missing label, say).
    """
    cls = _resolve(key)
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = [o for o in options if o not in accepted]
    if unknown:
        takes = f"it takes {', '.join(accepted)}" if accepted else "it takes none"
        raise ParameterError(f"the {cls.key} metric has no option '{unknown[0]}'; {takes}.")
    return cls(**options)


def evaluate_all(classes: EquivalenceClasses, suppressed: np.ndarray | None = None,
                 keys: list[str] | tuple[str, ...] | None = None, *, label: str | None = None,
                 options: dict[str, dict] | None = None) -> dict[str, float]:
    """The value of every metric that applies to a release, by key (for the release's report).

    Args:
        classes: the release's equivalence classes.
        suppressed: one bool per class, ``True`` where it is suppressed; ``None`` for none.
        keys: the metrics to compute (default: all that apply: those needing a label are
            skipped without ``label``, ``height`` and ``precision`` when a cell has no level).
        label: the class label column for ``classification`` and ``ig_pl``.
        options: per key, extra options for :func:`make_metric` (e.g. ``{"workload": {"seed": 1}}``).

    Raises:
        ParameterError: an unknown key, or a key given explicitly that needs a label when none is
            given or needs hierarchy levels the release lacks.
    """
    options = options or {}
    explicit = keys is not None
    chosen = [_resolve(k).key for k in keys] if explicit else list(METRICS)
    levels = has_levels(classes)
    out: dict[str, float] = {}
    for key in chosen:
        cls = METRICS[key]
        opts = dict(options.get(key, {}))
        if cls.needs_label:
            if label is None and "label" not in opts:
                if explicit:
                    raise ParameterError(f"the {key} metric needs a class label; pass label=<column>.")
                continue
            opts.setdefault("label", label)
        if cls.needs_levels and not levels and not explicit:
            continue
        out[key] = make_metric(key, **opts).value(classes, suppressed)
    return out


__all__ = [
    "ALIASES", "AverageClassSize", "ClassificationMetric", "Discernibility", "GeneralizationHeight",
    "InformationGainPrivacyLoss", "KLDivergence", "METRICS", "NonUniformEntropy",
    "NormalizedCertaintyPenalty", "Precision", "QueryWorkload", "UtilityMetric", "evaluate_all",
    "make_metric",
]
