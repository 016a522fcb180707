"""What every anonymizer shares, after scikit-learn's estimators: ``fit`` learns the
transformation from a dataset, ``transform`` publishes a :class:`~veil.anonymize.Release`."""

from __future__ import annotations

from veil.data.dataset import Dataset


class Anonymizer:
    """Base of the anonymization algorithms; subclasses implement ``fit`` and ``transform``."""

    def fit(self, dataset: Dataset, progress=None) -> "Anonymizer":
        raise NotImplementedError

    def transform(self, dataset: Dataset, **options):
        raise NotImplementedError

    def fit_transform(self, dataset: Dataset, **options):
        """:meth:`fit`, then :meth:`transform` (options as for :meth:`transform`, and ``progress``)."""
        progress = options.pop("progress", None)
        return self.fit(dataset, progress=progress).transform(dataset, **options)
