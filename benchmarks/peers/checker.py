"""pyCANON (``pycanon.anonymity``): its levels of the privacy models, timed on Adult, and its
levels on the small tables of veil's agreement fixture."""

from __future__ import annotations

import gc
import time
import warnings

from peers import versions
from timing import progress


def _plain(value):
    """pyCANON's return value (a number or a tuple of numbers) as JSON-ready Python numbers."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    number = float(value)
    return int(number) if number.is_integer() else number


def time_on_csv(csv: str, quasi_identifiers: list[str], sensitive: list[str],
                functions: list[list]) -> dict:
    """Time each pyCANON function once on the pandas frame ``pd.read_csv(csv, sep=";")``.

    ``functions`` lists ``[key, name in pycanon.anonymity, needs_sensitive]`` (k-anonymity takes
    no sensitive columns). Returns the versions and, per key, the function, its time and value.
    """
    import pandas as pd
    from pycanon import anonymity

    frame = pd.read_csv(csv, sep=";")
    out = {}
    for key, name, needs_sensitive in functions:
        progress(f"pyCANON: {name} (slow)")
        args = (frame, quasi_identifiers, sensitive) if needs_sensitive else (frame, quasi_identifiers)
        function = getattr(anonymity, name)
        gc.collect()
        start = time.perf_counter()
        value = function(*args)
        out[key] = {"function": name, "seconds": time.perf_counter() - start, "value": _plain(value)}
    return {"versions": versions("pycanon", "numpy", "pandas"), "models": out}


def levels(cases: list[dict]) -> dict:
    """pyCANON's value of every call of every case.

    A case is ``{"table": {column: values}, "calls": [[name, quasi_identifiers, sensitive or
    None], ...]}``; its frame is ``pd.DataFrame(table)``, with text columns of the ``object``
    dtype (pandas 2, which pyCANON pins). Returns the versions and, per case, the value of each
    call in order.
    """
    import pandas as pd
    from pycanon import anonymity

    out = []
    with warnings.catch_warnings():
        # recursive (c,ℓ)-diversity warns for every class where c is undefined.
        warnings.simplefilter("ignore")
        for i, case in enumerate(cases):
            progress(f"pyCANON: fixture table {i + 1} of {len(cases)}")
            frame = pd.DataFrame(case["table"])
            values = []
            for name, quasi_identifiers, sensitive in case["calls"]:
                args = (frame, quasi_identifiers) + ((sensitive,) if sensitive is not None else ())
                values.append(_plain(getattr(anonymity, name)(*args)))
            out.append(values)
    return {"versions": versions("pycanon", "numpy", "pandas"), "levels": out}
