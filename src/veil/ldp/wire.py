"""Local-DP reports as text: one report a line, as a client sends it and a collector reads it.

A deployment fixes a protocol, an ε and a public domain; each client randomizes its own value
(:meth:`~veil.ldp.protocols.FrequencyOracle.perturb`, with the secure source) and sends one line;
the collector gathers the lines, counts the reports supporting each value and estimates every
count (:meth:`~veil.ldp.protocols.FrequencyOracle.estimate`). A line is a JSON object::

    {"format": "veil-ldp-report/1", "protocol": "OUE", "epsilon": 1.0, "domain": 14,
     "categories": "9f2c…", "secure": true, "report": "01000000100010"}

``report`` is a GRR report's code, a unary report's bits (SUE, OUE: one character ``0`` or ``1``
per value) or a local-hashing report's ``[y, a, b]`` (BLH, OLH: the hashed value and the hash's
seed). ``categories`` identifies the public list of values the codes index (a digest of the list,
which is public; ``null`` when the domain is the codes ``0..d − 1``), so that a collector with
another list or order refuses the reports instead of mislabelling them; ``secure`` says whether
the client drew its coins from the operating system's secure source. The collector checks every
line against the deployment it was told (protocol, ε, domain, categories) and refuses the first
line that differs, naming it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable, Iterator, Sequence

import numpy as np

from veil.errors import DataError
from veil.ldp.protocols import FrequencyOracle, Reports, Supports

FORMAT = "veil-ldp-report/1"
#: Lines parsed and counted at a time (memory stays one chunk of reports).
CHUNK = 50_000


def categories_digest(categories: Sequence[str] | None) -> str | None:
    """What a report line says about the list of values its codes index (``None``: the codes)."""
    if categories is None:
        return None
    return hashlib.sha256("\n".join(categories).encode("utf-8")).hexdigest()[:16]


def _report_value(name: str, data, i: int):
    if name == "GRR":
        return int(data[i])
    if name in ("SUE", "OUE"):
        return "".join("1" if bit else "0" for bit in data[i])
    y, a, b = data
    return [int(y[i]), int(a[i]), int(b[i])]


def report_lines(oracle: FrequencyOracle, reports: Reports, categories: Sequence[str] | None = None) -> Iterator[str]:
    """The text lines of ``reports`` (each ends with a line break), one per report.

    Args:
        oracle: the protocol the reports were made with.
        reports: what :meth:`~veil.ldp.protocols.FrequencyOracle.perturb` returned.
        categories: the public list of values the codes index (``None``: the codes themselves).
    """
    data = reports.batch()
    head = {"format": FORMAT, "protocol": oracle.name, "epsilon": float(oracle.epsilon), "domain": oracle.domain,
            "categories": categories_digest(categories), "secure": bool(reports.fit_for_release)}
    for i in range(len(reports)):
        yield json.dumps({**head, "report": _report_value(oracle.name, data, i)}, separators=(",", ":")) + "\n"


def _parsed(oracle: FrequencyOracle, reports: list, where: str, first_line: int):
    """The raw batch (as ``perturb`` makes it) of parsed report values."""
    name, d = oracle.name, oracle.domain
    try:
        if name == "GRR":
            if not all(isinstance(r, int) and not isinstance(r, bool) for r in reports):
                raise ValueError
            return np.asarray(reports, dtype=np.int64)
        if name in ("SUE", "OUE"):
            if not all(isinstance(r, str) and len(r) == d and set(r) <= {"0", "1"} for r in reports):
                raise ValueError
            return np.frombuffer("".join(reports).encode("ascii"), dtype=np.uint8).reshape(len(reports), d) == ord("1")
        if not all(isinstance(r, list) and len(r) == 3 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                  for x in r) for r in reports):
            raise ValueError
        y = np.asarray([r[0] for r in reports], dtype=np.int64)
        a = np.asarray([r[1] for r in reports], dtype=np.uint64)
        b = np.asarray([r[2] for r in reports], dtype=np.uint64)
        return y, a, b
    except (ValueError, OverflowError, TypeError):
        shape = {"GRR": "a code", "SUE": f"{d} bits", "OUE": f"{d} bits"}.get(name, "[y, a, b]")
        raise DataError(f"{where}: a report among lines {first_line} to {first_line + len(reports) - 1} is not "
                        f"{shape}, as a {name} report over {d} values is; collect only what veil ldp encode "
                        "wrote for this deployment.") from None


def read_supports(lines: Iterable[tuple[str, int, str]], oracle: FrequencyOracle,
                  categories: Sequence[str] | None = None) -> Supports:
    """Count the reports of ``lines`` that support each value.

    Args:
        lines: ``(where, line number, text)`` for every line received (``where`` names its file).
        oracle: the deployment's protocol (its ε and domain).
        categories: the deployment's public list of values (``None``: the codes).

    Returns:
        The support counts of every report, with ``fit_for_release`` true when every line says
        its coins came from the secure source.

    Raises:
        DataError: a line that is not a report, or one made for another deployment (named), or no
            report at all.
    """
    expected = {"format": FORMAT, "protocol": oracle.name, "epsilon": float(oracle.epsilon), "domain": oracle.domain,
                "categories": categories_digest(categories)}
    counts = np.zeros(oracle.domain, dtype=np.int64)
    n, secure = 0, True
    batch: list = []
    batch_where, batch_start = "", 0

    def flush() -> None:
        nonlocal n
        if batch:
            counts[:] += oracle.aggregate(_parsed(oracle, batch, batch_where, batch_start))
            n += len(batch)
            batch.clear()

    for where, number, text in lines:
        if not text.strip():
            continue
        try:
            doc = json.loads(text)
        except ValueError:
            raise DataError(f"{where}, line {number}: not a report line (it is not JSON); collect only what veil ldp "
                            "encode wrote.") from None
        if not isinstance(doc, dict) or "report" not in doc:
            raise DataError(f"{where}, line {number}: not a report line (no report); collect only what veil ldp "
                            "encode wrote.")
        for key, value in expected.items():
            if doc.get(key) != value:
                raise DataError(f"{where}, line {number}: the report was made with {key} {doc.get(key)!r}, and this "
                                f"collection has {value!r}; collect each deployment's reports with its own protocol, "
                                "epsilon and domain.")
        secure = secure and doc.get("secure") is True
        if where != batch_where:
            flush()
            batch_where, batch_start = where, number
        if not batch:
            batch_start = number
        batch.append(doc["report"])
        if len(batch) >= CHUNK:
            flush()
    flush()
    if n == 0:
        raise DataError("no report was received; give the files the clients' reports were gathered in.")
    return Supports(oracle.name, counts, n, secure)
