"""ANJANA (``anjana.anonymity``): its greedy k-anonymity on Adult, timed once per limit."""

from __future__ import annotations

import contextlib
import gc
import io
import time

from peers import versions
from timing import progress


def anjana_k_anonymity(csv: str, hierarchies: dict[str, str], quasi_identifiers: list[str], k: int,
                       limits: list[float]) -> dict:
    """Time ANJANA's k-anonymity once per suppression limit (a fraction) on a ``;``-separated CSV.

    The frame is ``pd.read_csv(csv, sep=";", keep_default_na=False)`` and each hierarchy file is
    read as ``dict(pd.read_csv(file, header=None))`` (ANJANA's README), afresh for every run since
    ANJANA converts its entries in place. ``k_anonymity_inner`` is the function ANJANA's
    ``k_anonymity`` wraps (after a type check); it is called because it also returns the levels
    it chose and the records it suppressed. What ANJANA prints (it does when the table needs no
    generalization or k cannot be reached) is captured and returned.
    """
    import pandas as pd
    from anjana.anonymity import k_anonymity_inner

    frame = pd.read_csv(csv, sep=";", keep_default_na=False)
    runs = []
    for limit in limits:
        progress(f"ANJANA: {limit * 100:g} % (slow)")
        read = {q: dict(pd.read_csv(hierarchies[q], sep=";", header=None, keep_default_na=False))
                for q in quasi_identifiers}
        printed = io.StringIO()
        gc.collect()
        start = time.perf_counter()
        with contextlib.redirect_stdout(printed):
            released, suppressed, chosen = k_anonymity_inner(frame, [], quasi_identifiers, k, limit * 100, read)
        run = {"limit": limit, "seconds": time.perf_counter() - start, "rows_out": len(released),
               "suppressed": int(suppressed), "printed": printed.getvalue().strip()}
        if len(released) and all(q in chosen for q in quasi_identifiers):
            run["levels"] = [int(chosen[q]) for q in quasi_identifiers]
        runs.append(run)
    return {"versions": versions("anjana", "pycanon", "numpy", "pandas"),
            "function": "anjana.anonymity.k_anonymity_inner", "runs": runs}
