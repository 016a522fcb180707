"""Publishing a collection of anonymized marginals: one CSV per marginal and a manifest, written
together through :mod:`veil.output`, after every privacy model has been checked.

The manifest holds what a reader can compute from the marginals themselves (their attributes,
levels, cells and records, the models' levels on them, the maximum-entropy estimate's method) and
the parameters; what was measured on the input table (the KL-divergence of the estimate from it,
and the greedy search's steps, each chosen by that divergence) goes to the private file beside it
(``manifest.private.json``, :mod:`veil.manifests`), which the curator keeps.

A collection that fails a model is refused with one sentence that names the model, the marginal
and the cell (or, for the models of the whole collection, the tuple or group) that fail.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Iterable, Sequence

import veil
from veil.errors import InfeasibleError
from veil.manifests import private_path, put_private
from veil.marginals.collection import MarginalCollection, MarginalSpec
from veil.marginals.privacy import (CollectionResult, KCombinatorialAnonymity, KLinkAnonymity, MaxEntLDiversity,
                                    refusal)
from veil.marginals.search import SearchStep

MANIFEST = "manifest.json"
KIND = "marginals"
# The entries of the algorithm measured on the input table: kept in the private file.
PRIVATE_ALGORITHM = ("steps", "start_kl_divergence", "stopped")


def marginal_file(index: int) -> str:
    """The file name of the ``index``-th marginal (from 0): ``marginal-01.csv``, …"""
    return f"marginal-{index + 1:02d}.csv"


class MarginalRelease:
    """A collection of anonymized marginals that satisfies its privacy models.

    Build with :meth:`from_collection`.

    Attributes:
        collection: the marginals.
        results: each privacy model's outcome (all passed).
        kl: the KL-divergence of the max-ent estimate from the data, in nats.
        algorithm: how the marginals were chosen: ``{"name": "given"}``, or the greedy
            search's settings and its steps.
        roles: per marginal, ``"base"`` (the anonymized table), ``"given"`` or ``"added"`` (by
            the search).
    """

    def __init__(self, collection: MarginalCollection, results: Sequence[CollectionResult], kl: float,
                 algorithm: dict, roles: Sequence[str]):
        self.collection = collection
        self.results = list(results)
        self.kl = kl
        self.algorithm = algorithm
        self.roles = list(roles)

    @classmethod
    def from_collection(cls, collection: MarginalCollection,
                        models: Sequence[KLinkAnonymity | KCombinatorialAnonymity | MaxEntLDiversity], *,
                        roles: Sequence[str] | None = None, steps: Sequence[SearchStep] | None = None,
                        search: dict | None = None) -> "MarginalRelease":
        """Check every model on ``collection`` and make it a release.

        Args:
            collection: the marginals to publish.
            models: the privacy models it must satisfy.
            roles: each marginal's role (default ``"given"``).
            steps: the greedy search's steps when it chose the marginals.
            search: the greedy search's settings when it chose the marginals.

        Raises:
            InfeasibleError: a model fails (the sentence names the marginal and cell, the tuple
                or the group), or the max-ent estimate exceeds its limits.
        """
        results = []
        for model in models:
            result = model.evaluate(collection)
            if not result.passed:
                raise InfeasibleError(refusal(result, collection))
            results.append(result)
        estimate = collection.estimate
        kl = collection.kl_divergence()
        algorithm = {"name": "given"} if steps is None else {
            "name": "greedy", "paper": "Kifer and Gehrke, SIGMOD 2006", **(search or {}),
            "steps": [{"marginal": s.marginal.label, "kl_divergence": s.kl, "cells": s.cells,
                       "candidates": s.candidates, "checked": s.checked, "undecided": s.undecided,
                       "seconds": round(s.seconds, 3)}
                      for s in steps]}
        algorithm["maxent"] = {"method": estimate.method_, "decomposable": estimate.decomposable_,
                               "iterations": estimate.iterations_, "residual": estimate.residual_}
        return cls(collection, results, kl, algorithm, roles or ["given"] * len(collection))

    def csv_text(self, index: int) -> str:
        """The ``index``-th marginal as CSV: its attributes' published values and ``count``."""
        table = self.collection.marginals[index]
        labels = self.collection.counter.labels(table)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(list(table.attributes) + ["count"])
        for row in zip(*(labels[a] for a in table.attributes), table.counts.tolist()):
            writer.writerow(row)
        return out.getvalue()

    def manifest(self) -> dict:
        """The published manifest, without the files' hashes (which :meth:`write` adds): nothing in
        it is measured on the input table beyond what the marginals show (see the module notes)."""
        doc = self._document()
        doc.pop("utility")
        doc["algorithm"] = {k: v for k, v in doc["algorithm"].items() if k not in PRIVATE_ALGORITHM}
        return doc

    def private_manifest(self) -> dict:
        """What the curator keeps in the private file: the KL-divergence of the estimate from the
        input table, and the whole ``algorithm`` (the greedy search's steps and divergences)."""
        doc = self._document()
        return {"veil": doc["veil"], "utility": doc["utility"], "algorithm": doc["algorithm"]}

    def _document(self) -> dict:
        counter = self.collection.counter
        return {
            "kind": KIND,
            "veil": veil.__version__,
            "data": {"records": counter.n, "attributes": list(counter.attributes), "sensitive": counter.sensitive,
                     "quasi_identifiers": list(counter.dataset.quasi_identifiers)},
            "algorithm": self.algorithm,
            "marginals": [{"name": MarginalSpec.of_table(m).label, "role": role, "attributes": list(m.attributes),
                           "levels": dict(zip(m.attributes, m.levels)), "cells": int(len(m.counts)),
                           "records": m.total}
                          for m, role in zip(self.collection.marginals, self.roles)],
            "privacy": [r.to_dict() for r in self.results],
            "utility": {"kl_divergence": self.kl, "unit": "nats",
                        "definition": "KL(data ‖ maximum-entropy estimate from the marginals), on the observed "
                                      "tuples (Kifer and Gehrke, SIGMOD 2006)"},
        }

    def targets(self, folder: str | os.PathLike, manifest: str = MANIFEST) -> list[Path]:
        """The files :meth:`write` writes into ``folder``: the marginals, the manifest's private file,
        then the manifest."""
        folder = Path(folder)
        return ([folder / marginal_file(i) for i in range(len(self.collection))]
                + [private_path(folder / manifest), folder / manifest])

    def write(self, folder: str | os.PathLike, *, manifest: str = MANIFEST,
              reads: Iterable[str | os.PathLike | None] = (), extra: dict | None = None) -> list[Path]:
        """Write every marginal, the manifest and its private file into ``folder`` (created if
        missing), all of them or none; the manifest names each marginal's file with its SHA-256,
        and holds ``extra`` too (the configuration, say). Returns the files written, the manifest
        last.

        Raises:
            DataError: ``folder`` is a file or cannot be written.
            ParameterError: a target is a file the run reads.
        """
        from veil.output import OutputSet

        targets = self.targets(folder, manifest)
        doc = {**self.manifest(), **(extra or {})}
        files = {}
        with OutputSet(targets, reads=reads, make_folders=True) as outputs:
            for i, target in enumerate(targets[:-2]):
                outputs.put(target, self.csv_text(i))
                doc["marginals"][i]["file"] = outputs.describe(target, relative_to=Path(folder))
                files[f"marginal-{i + 1:02d}"] = target
            put_private(outputs, targets[-2], self.private_manifest(), describes=files)
            outputs.put_manifest(targets[-1], doc, describes={})
            return outputs.commit()
