"""A DP answer written as a release, a file with its manifest, for the publishing gate to take.

``write_answer`` writes the answer (:meth:`QueryResult.to_dict`, JSON) and a manifest that names
and hashes it (:mod:`veil.output`: both files appear or neither does). The manifest says what the
answer cost, exactly (``epsilon``, ``delta`` as decimal text, the query's label), whether it is
fit for release, the dataset it was drawn from, and — when the query was charged to a ledger —
which charge paid for it, so that :func:`veil.ledger.gate.publish` records the release with that
charge instead of charging it again.
"""

from __future__ import annotations

import datetime as _dt
import json
import os

from veil.dp.accountant import _dump, _exact
from veil.dp.queries import QueryResult

__all__ = ["answer_manifest", "write_answer"]


def answer_manifest(result: QueryResult, *, dataset_id: str | None = None, charge: dict | None = None) -> dict:
    """The manifest of a DP answer (without the ``release`` entry the writer adds).

    Args:
        result: the answer.
        dataset_id: the fingerprint of the table it was drawn from.
        charge: ``{"ledger_id", "population", "seq"}``: the ledger charge that paid for it.
    """
    from veil import __version__

    return {"veil": __version__, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "algorithm": "dp", "query": result.query, "epsilon": _dump(_exact(result.epsilon, "epsilon")),
            "delta": _dump(_exact(result.delta, "delta")), "mechanism": result.mechanism,
            "fit_for_release": bool(result.fit_for_release), "not_fit_because": list(result.not_fit_because),
            "dataset_id": dataset_id, "charge": charge}


def write_answer(result: QueryResult, path: str | os.PathLike, manifest: str | os.PathLike, *,
                 dataset_id: str | None = None, charge: dict | None = None, reads=(),
                 make_folders: bool = False) -> str:
    """Write the answer (JSON) and its manifest as one set; returns the manifest's text.

    Args:
        result: the answer.
        path, manifest: where the answer and its manifest go.
        dataset_id, charge: see :func:`answer_manifest`.
        reads: files the run read, which no output may replace.
        make_folders: create a missing folder of the outputs.

    Raises:
        DataError: a folder is missing or unwritable, or the disk is full.
        ParameterError: an output is an input, or both paths are one file.
    """
    from veil.output import OutputSet

    with OutputSet([path, manifest], reads=reads, make_folders=make_folders) as outputs:
        outputs.put(path, json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
        text = outputs.put_manifest(manifest, answer_manifest(result, dataset_id=dataset_id, charge=charge),
                                    describes={"release": path})
        outputs.commit()
    return text
