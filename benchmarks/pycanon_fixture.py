"""pyCANON's levels on small random tables, stored for veil's agreement tests.

Run from the repository root::

    python benchmarks/pycanon_fixture.py [--cases N] [--seed S]

Draws ``--cases`` small tables (5–60 rows; 1–3 integer quasi-identifiers ``q0``… with domains
of 1–4 values; a text sensitive column ``d`` of 1–5 disease names and a numeric one ``n`` of 1–6
numbers in 0–100) with ``numpy.random.default_rng(seed)``, has pyCANON measure every model
``tests/test_pycanon_agreement.py`` compares on each, in the peer environment (``peer_env.py``),
and writes the tables and pyCANON's values, with the versions that computed them, to
``tests/data/pycanon_agreement.json``. veil's tests read that file and never need pyCANON; the
checker benchmark (``run.py``) asks pyCANON again for every stored value and reports any change.

A stored level is keyed by pyCANON's function name, followed by the sensitive columns it was
given (comma-separated) when it takes any: ``"k_anonymity"``, ``"alpha_k_anonymity d,n"``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import peer_env
from harness import SEED, json_ready, positive_int

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "pycanon_agreement.json"
CASES = 200
WORDS = ("flu", "cold", "ulcer", "hiv", "gastritis", "asthma")
# What each table is measured on: per pyCANON function, the sensitive columns it is given.
MEASURED = {
    "k_anonymity": [None],
    "alpha_k_anonymity": [["d"], ["n"], ["d", "n"]],
    "l_diversity": [["d"], ["n"], ["d", "n"]],
    "entropy_l_diversity": [["d"], ["n"]],
    "t_closeness": [["d"], ["n"]],
    "delta_disclosure": [["d"], ["n"], ["d", "n"]],
    "basic_beta_likeness": [["d"], ["n"], ["d", "n"]],
    "recursive_c_l_diversity": [["d"]],
}
# Cao and Karras's enhanced β-likeness and pyCANON's differ by definition: this table shows it
# (tests/test_pycanon_agreement.py works it through by hand).
ENHANCED_EXAMPLE = {"q": ["A"] * 4 + ["B"] * 5, "s": list("xxxy") + list("yyyyz")}


def key(name: str, sensitive: list[str] | None) -> str:
    """The fixture's key of one pyCANON call."""
    return name if sensitive is None else f"{name} {','.join(sensitive)}"


def call_of(stored_key: str, quasi_identifiers: list[str]) -> list:
    """The pyCANON call ``[name, quasi_identifiers, sensitive or None]`` a key stands for."""
    name, _, sensitive = stored_key.partition(" ")
    return [name, quasi_identifiers, sensitive.split(",") if sensitive else None]


def draw_table(rng: np.random.Generator) -> tuple[dict, list[str]]:
    """One small table as ``{column: values}`` and its quasi-identifiers."""
    rows = int(rng.integers(5, 61))
    table = {}
    for j in range(int(rng.integers(1, 4))):
        table[f"q{j}"] = rng.integers(0, int(rng.integers(1, 5)), size=rows).tolist()
    words = rng.choice(WORDS, size=int(rng.integers(1, 6)), replace=False)
    table["d"] = rng.choice(words, size=rows).tolist()
    numbers = rng.choice(101, size=int(rng.integers(1, 7)), replace=False)
    table["n"] = rng.choice(numbers, size=rows).tolist()
    return table, [c for c in table if c.startswith("q")]


def make_cases(count: int, seed: int) -> list[dict]:
    """``count`` tables, each with the keys of the calls to measure on it.

    Ordered-distance t-closeness is left out where ``n`` holds one value: pyCANON divides by
    the number of distinct values less one.
    """
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        table, quasi_identifiers = draw_table(rng)
        keys = [key(name, s) for name, options in MEASURED.items() for s in options
                if not (name == "t_closeness" and s == ["n"] and len(set(table["n"])) < 2)]
        cases.append({"table": table, "quasi_identifiers": quasi_identifiers, "keys": keys})
    return cases


def pycanon_levels(cases: list[dict]) -> tuple[dict, list[dict]]:
    """pyCANON's versions and, per case, its value of every key, measured in the peer environment.

    Raises:
        peer_env.PeerError: the peer environment could not be made or pyCANON failed.
    """
    answer = peer_env.call("checker", "levels", cases=[
        {"table": c["table"], "calls": [call_of(k, c["quasi_identifiers"]) for k in c["keys"]]} for c in cases])
    return answer["versions"], [json_ready(dict(zip(c["keys"], values)))
                                for c, values in zip(cases, answer["levels"])]


def recheck(path: Path = FIXTURE) -> dict:
    """Ask pyCANON again for every value stored in the fixture and count those it now gives
    differently (0 when the fixture still holds).

    Raises:
        peer_env.PeerError: the peer environment could not be made or pyCANON failed.
    """
    stored = json.loads(path.read_text(encoding="utf-8"))
    cases = stored["cases"] + [stored["enhanced_beta_example"]]
    for case in cases:
        case["keys"] = list(case["levels"])
    versions, live = pycanon_levels(cases)
    changed = [f"case {i}, {k}" for i, (case, now) in enumerate(zip(cases, live))
               for k in case["keys"] if now[k] != case["levels"][k]]
    return {"values": sum(len(c["keys"]) for c in cases), "tables": len(cases), "changed": changed,
            "stored_versions": stored["versions"], "live_versions": versions}


def fixture_text(fixture: dict) -> str:
    """The fixture as strict JSON with one table per line, so that a change shows per table."""
    head = {k: v for k, v in fixture.items() if k != "cases"}
    lines = [f"  {json.dumps(k)}: {json.dumps(v, allow_nan=False, ensure_ascii=False)}," for k, v in head.items()]
    cases = ",\n".join(f"    {json.dumps(c, allow_nan=False, ensure_ascii=False)}" for c in fixture["cases"])
    return "{\n" + "\n".join(lines) + '\n  "cases": [\n' + cases + "\n  ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    """Measure the tables with pyCANON and write the fixture."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=positive_int, default=CASES, help=f"tables to draw (default {CASES})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"the tables' seed (default {SEED})")
    args = parser.parse_args(argv)
    cases = make_cases(args.cases, args.seed)
    example = {"table": ENHANCED_EXAMPLE, "quasi_identifiers": ["q"],
               "keys": ["enhanced_beta_likeness s", "basic_beta_likeness s"]}
    versions, levels = pycanon_levels(cases + [example])
    for case, values in zip(cases + [example], levels):
        del case["keys"]
        case["levels"] = values
    fixture = {"about": "pyCANON's levels of small tables, for tests/test_pycanon_agreement.py; written by "
                        "python benchmarks/pycanon_fixture.py (do not edit by hand)",
               "versions": versions, "seed": args.seed, "cases": cases, "enhanced_beta_example": example}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(fixture_text(fixture), encoding="utf-8")
    print(f"wrote {len(cases)} tables and {sum(len(c['levels']) for c in cases)} pyCANON values "
          f"(pyCANON {versions['pycanon']}) to {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
