"""``veil ldp``: local-DP frequency oracles, simulated (``simulate``) or deployed (``encode`` on each
client, ``collect`` on the collector).

``veil ldp encode VALUE --protocol P --epsilon E (--domain D | --categories FILE)`` is a client:
it randomizes its value with the secure source and prints one report line (with ``--data TABLE
--column C --out FILE``, every row's report, as each row's client would make it). ``veil ldp
collect FILE… --protocol P --epsilon E (--domain D | --categories FILE)`` is the collector: it
checks every line against the deployment and estimates every value's count (see
:mod:`veil.ldp.wire` for the line format).

``veil ldp simulate --protocol all|auto|grr,sue,oue,blh,olh --epsilon E --domain D --users N
[--data FILE --column C] [--repeat R] [--seed S | --secure] [--json]`` perturbs every user's
value, aggregates, estimates every value's count and prints, per protocol, the empirical mean
squared error of the count estimates (over the d values and the R runs) beside the theoretical
variance: the exact per-value variance averaged over the values (Wang et al.'s Var* plus the
c_v term) and Var* alone.

Without ``--data`` the users' values are synthetic: a Zipf-like distribution P(v) ∝ 1/(v + 1)
over the domain, drawn with the seed. With ``--data FILE --column C`` each row is a user: an
integer column is taken as codes 0..D − 1 (a value outside is named), a text column is coded in
sorted order of its categories (``--domain`` defaults to their number).

A simulation is an experiment, never a release: its output (the MSE) is computed from the true
counts, and with ``--data`` the domain comes from the data unless ``--domain`` gives it, so it
always says ``fit_for_release: false`` and why. The coins are seeded (``--seed``, a whole number
>= 0, default 0); ``--secure`` draws them from the operating system's CSPRNG instead, as a real
client would (slower: 8 bytes per coin).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import typer
from rich.markup import escape

from veil.cli.console import command_group, fails_cleanly, split_names, terminal
from veil.errors import DataError, ParameterError
from veil.ldp.protocols import (
    PROTOCOLS,
    _check_domain,
    _check_epsilon,
    _check_values,
    make_protocol,
)
from veil.ldp.randomness import Randomness

ldp_app = command_group(no_args_is_help=True,
                        help="Local differential privacy: frequency oracles (GRR, SUE, OUE, BLH, OLH), simulated, or "
                             "deployed with a client (encode) and a collector (collect).")


def _protocol_names(text: str) -> list[str]:
    names = [name.lower() for name in split_names(text)]
    if not names:
        raise ParameterError("--protocol needs a name: grr, sue, oue, blh, olh, auto or all.")
    out: list[str] = []
    for name in names:
        if name == "all":
            out += list(PROTOCOLS)
        elif name in PROTOCOLS or name == "auto":
            out.append(name)
        else:
            raise ParameterError(f"unknown protocol {name!r}; choose grr, sue, oue, blh, olh, auto or all.")
    return list(dict.fromkeys(out))


# Peak memory of a simulation, measured with every protocol (BLH and OLH keep three 8-byte numbers
# per user besides the value and the draws): bytes per synthetic user, and per value of the domain.
BYTES_PER_USER = 64
BYTES_PER_VALUE = 32


def _memory() -> int | None:
    """The machine's physical memory in bytes, or ``None`` where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_fits(users: int, domain: int, memory: int | None) -> None:
    """Refuse a synthetic simulation whose arrays cannot fit in ``memory`` bytes.

    Raises:
        ParameterError: the simulation needs more memory than the machine has, naming the most
            users it can simulate over ``domain`` values (or the largest domain, when the domain
            alone does not fit).
    """
    need = users * BYTES_PER_USER + domain * BYTES_PER_VALUE
    if memory is None or need <= memory:
        return
    most = (memory - domain * BYTES_PER_VALUE) // BYTES_PER_USER
    if most < 1:
        raise ParameterError(f"--domain {domain:,} needs about {_bytes(domain * BYTES_PER_VALUE)} of memory and this "
                             f"machine has {_bytes(memory)}; simulate a domain of at most "
                             f"{memory // (2 * BYTES_PER_VALUE):,} values.")
    raise ParameterError(f"--users {users:,} needs about {_bytes(need)} of memory and this machine has "
                         f"{_bytes(memory)}; simulate at most {most:,} users over {domain:,} values.")


def _bytes(size: int) -> str:
    units = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    value, unit = float(size), 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    return f"{value:,.1f} {units[unit]}" if unit else f"{size:,} bytes"


def _synthetic(domain: int, users: int, seed: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, domain + 1)
    # A stream of its own: drawn from the same stream as the coins, the data would be correlated
    # with the perturbation (the users with small values would get the small uniforms).
    rng = np.random.default_rng([seed, 0x5EED])
    return rng.choice(domain, size=users, p=weights / weights.sum()).astype(np.int64)


def _from_file(data: Path, column: str, domain: int | None) -> tuple[np.ndarray, int]:
    from veil.dp.queries import _Columns

    if not data.is_file():
        raise DataError(f"data file {str(data)!r} does not exist; check the path.")
    col = _Columns(data, strict=True).column(column)  # a simulation: a malformed line is refused, as ever
    if col.missing_code is not None and np.any(col.codes == col.missing_code):
        raise DataError(f"column '{column}' has missing values; every user needs a value in the domain.")
    if col.is_numeric:
        values = col.numeric[col.codes]
        d = _check_domain(domain) if domain is not None else int(np.nanmax(values)) + 1
        return _check_values(values, d), d
    labels = [str(label) for label in col.labels]
    d = _check_domain(domain) if domain is not None else _check_domain(len(labels))
    if len(labels) > d:
        extra = ", ".join(labels[d:d + 5]) + (" …" if len(labels) > d + 5 else "")
        raise ParameterError(f"column '{column}' has {len(labels)} distinct values but the domain holds {d}; "
                             f"the values {extra} fall outside it (raise --domain).")
    return col.codes.astype(np.int64), d


def simulate(protocols: list[str], epsilon: float, domain: int, values: np.ndarray, repeat: int,
             source: Randomness) -> list[dict]:
    """Run each protocol ``repeat`` times on ``values``; the rows the command prints."""
    truth = np.bincount(values, minlength=domain)
    n = len(values)
    rows = []
    for name in protocols:
        proto = make_protocol(name, epsilon, domain)
        errors = []
        start = time.perf_counter()
        for _ in range(repeat):
            est = proto.estimate(proto.perturb_and_aggregate(values, rng=source))
            errors.append(np.mean((est - truth) ** 2))
        seconds = (time.perf_counter() - start) / repeat
        exact = float(np.mean(proto.variance(n, truth)))
        mse = float(np.mean(errors))
        row = {"protocol": proto.name, "requested": name, "p": proto.p, "q": proto.q,
               "report_bits": proto.report_bits, "variance_approx": float(proto.variance(n)),
               "variance_exact_mean": exact, "empirical_mse": mse, "mse_over_variance": mse / exact,
               "seconds_per_run": seconds}
        if hasattr(proto, "g"):
            row["g"] = proto.g
        rows.append(row)
    return rows


@ldp_app.command("simulate")
@fails_cleanly
def simulate_command(
        protocol: str = typer.Option("all", "--protocol", help="grr, sue, oue, blh, olh, auto (lowest variance) "
                                                               "or all; comma-separated for several."),
        epsilon: float = typer.Option(..., "--epsilon", help="Privacy loss ε > 0 of each user's report."),
        domain: int | None = typer.Option(None, "--domain", help="Number of values d ≥ 2 (codes 0..d-1)."),
        users: int | None = typer.Option(None, "--users", help="Number of synthetic users (without --data)."),
        data: Path | None = typer.Option(None, "--data", help="CSV or Parquet table: one row per user."),
        column: str | None = typer.Option(None, "--column", help="The column holding each user's value."),
        repeat: int = typer.Option(1, "--repeat", help="Runs per protocol; the MSE is their mean."),
        seed: int = typer.Option(0, "--seed", help="Seed of the simulation (and of the synthetic data)."),
        secure: bool = typer.Option(False, "--secure", help="Draw the coins from the OS CSPRNG, as a real client."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Perturb, aggregate and estimate; print each protocol's empirical MSE beside its theoretical variance."""
    eps = _check_epsilon(epsilon)
    names = _protocol_names(protocol)
    if repeat < 1:
        raise ParameterError(f"--repeat must be at least 1, got {repeat}.")
    source = Randomness.secure() if secure else Randomness.seeded(seed)
    if data is not None:
        if column is None:
            raise ParameterError("--data needs --column to say which column holds each user's value.")
        if users is not None:
            raise ParameterError("--users applies only to synthetic data; with --data every row is a user.")
        values, d = _from_file(data, column, domain)
        origin = f"{data}, column {column}"
    else:
        if column is not None:
            raise ParameterError("--column applies only with --data.")
        if domain is None:
            raise ParameterError("--domain is needed for synthetic data: the number of values d ≥ 2.")
        if users is None or users < 1:
            raise ParameterError("--users must be given, at least 1, for synthetic data (or pass --data).")
        d = _check_domain(domain)
        _check_fits(users, d, _memory())
        values = _synthetic(d, users, seed)
        origin = "synthetic, P(v) ∝ 1/(v + 1)"
    for name in names:
        make_protocol(name, eps, d)  # refuse a bad parameter before any work
    rows = simulate(names, eps, d, values, repeat, source)
    reasons = ["a simulation reports its error against the true counts"]
    if data is not None and domain is None:
        reasons.append(f"the domain of {d:,} values comes from the data")
    if not source.fit_for_release:
        reasons.append("seeded coins: a reproducible experiment")
    doc = {"epsilon": eps, "domain": d, "users": len(values), "repeat": repeat, "data": origin,
           "fit_for_release": False, "not_fit_because": reasons, "randomness": source.description,
           "seed": None if secure else seed, "protocols": rows}
    terminal(stderr=True, soft_wrap=True).print(
        f"note: NOT fit for release: {'; '.join(reasons)}.", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    console = terminal(soft_wrap=True)
    console.print(f"LDP simulation: ε = {eps:g}, d = {d:,}, n = {len(values):,} users ({origin}), "
                  f"{repeat} run{'s' if repeat > 1 else ''} per protocol; {source.description}", markup=False)
    head = f"{'protocol':<10}{'p*':>9}{'q*':>9}{'bits':>7}{'MSE':>14}{'Var (exact)':>14}{'MSE/Var':>9}{'Var*':>14}{'time':>9}"
    console.print(head, markup=False)
    for row in rows:
        label = row["protocol"] + (" (auto)" if row["requested"] == "auto" else "")
        console.print(f"{label:<10}{row['p']:>9.4f}{row['q']:>9.4f}{row['report_bits']:>7}"
                      f"{row['empirical_mse']:>14,.1f}{row['variance_exact_mean']:>14,.1f}"
                      f"{row['mse_over_variance']:>9.3f}{row['variance_approx']:>14,.1f}"
                      f"{row['seconds_per_run']:>8.2f}s", markup=False)
    console.print("MSE: mean over values (and runs) of (estimate − true count)²; Var (exact): the estimator's "
                  "variance averaged over the values; Var*: Wang et al.'s approximation n·q*(1−q*)/(p*−q*)².",
                  markup=False)


# --------------------------------------------------------------------------- a real deployment

def _deployment(protocol: str, epsilon: float, domain: int | None, categories: Path | None):
    """The deployment's protocol object and public list of values (``None``: the codes)."""
    if (domain is None) == (categories is None):
        raise ParameterError("give the public domain with --domain (the codes 0..d-1) or with --categories (a file "
                             "of the values, one a line), one of the two.")
    labels = None
    if categories is not None:
        if not categories.is_file():
            raise DataError(f"categories file {str(categories)!r} does not exist; give the file of the domain's "
                            "values, one a line.")
        labels = [line.strip() for line in categories.read_text(encoding="utf-8-sig").splitlines() if line.strip()]
        if len(set(labels)) != len(labels):
            twice = next(label for label in labels if labels.count(label) > 1)
            raise ParameterError(f"the categories file lists {twice!r} twice; list each value once.")
        domain = len(labels)
    name = protocol.strip().lower()
    if name == "all" or "," in name:
        raise ParameterError("a deployment uses one protocol: grr, sue, oue, blh, olh or auto.")
    return make_protocol(name, _check_epsilon(epsilon), _check_domain(domain)), labels


def _codes(texts: list, labels: list[str] | None, domain: int, where: str) -> np.ndarray:
    """The codes of the given values: their positions among the categories, or the codes themselves."""
    import difflib

    if labels is not None:
        position = {label: i for i, label in enumerate(labels)}
        for text in texts:
            if text not in position:
                close = difflib.get_close_matches(str(text), labels, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else "; add it to the categories file."
                raise ParameterError(f"{where} holds {text!r}, which is not one of the categories{hint}")
        return np.asarray([position[text] for text in texts], dtype=np.int64)
    codes = []
    for text in texts:
        try:
            code = int(str(text).strip())
        except ValueError:
            raise ParameterError(f"{where} holds {text!r}, which is not a code 0 to {domain - 1}; give the values "
                                 "with --categories instead.") from None
        if not 0 <= code < domain:
            raise ParameterError(f"{where} holds {code}, outside the codes 0 to {domain - 1}.")
        codes.append(code)
    return np.asarray(codes, dtype=np.int64)


@ldp_app.command("encode")
@fails_cleanly
def encode_command(
        value: str | None = typer.Argument(None, help="This client's value (one of the categories, or a code)."),
        protocol: str = typer.Option(..., "--protocol", help="The deployment's protocol: grr, sue, oue, blh, olh "
                                                             "or auto (chosen from ε and the domain's size)."),
        epsilon: float = typer.Option(..., "--epsilon", help="The deployment's ε > 0 of each report."),
        domain: int | None = typer.Option(None, "--domain", help="The public domain as the codes 0..d-1."),
        categories: Path | None = typer.Option(None, "--categories", help="The public domain as a file of its values, "
                                                                          "one a line (the same file everywhere)."),
        data: Path | None = typer.Option(None, "--data", help="Encode every row of a table, as each row's client "
                                                              "would (needs --column and --out)."),
        column: str | None = typer.Option(None, "--column", help="With --data: the column of each client's value."),
        out: Path | None = typer.Option(None, "--out", help="With --data: the reports file to write."),
) -> None:
    """A client's side: randomize a value with the secure source and print its report (one line).

    What runs on each respondent's device: the value never leaves it, only the randomized report,
    which is ε-differentially private on its own. The coins come from the operating system's
    secure source (there is no seed). With --data, every row of a table is encoded as its own
    client would, into one reports file; veil ldp collect estimates the counts from the reports.
    """
    from veil.data.io import read_table
    from veil.ldp.wire import report_lines
    from veil.output import OutputSet

    oracle, labels = _deployment(protocol, epsilon, domain, categories)
    if data is None:
        if value is None:
            raise ParameterError("give the value to encode, or --data with --column and --out for a table of them.")
        if column is not None or out is not None:
            raise ParameterError("--column and --out apply with --data; a single value's report is printed.")
        report = oracle.perturb(_codes([value], labels, oracle.domain, "the value given")[0])
        sys.stdout.write("".join(report_lines(oracle, report, labels)))
        return
    if value is not None:
        raise ParameterError("give a single value or --data, not both.")
    if column is None or out is None:
        raise ParameterError("--data needs --column (each client's value) and --out (the reports file).")
    table = read_table(data)
    if column not in table.columns:
        raise ParameterError(f"the table has no column '{column}'; its columns are {', '.join(table.columns)}.")
    texts = table.data.column(column).to_pylist()
    if any(text is None or str(text) == "" for text in texts):
        raise DataError(f"column '{column}' has missing values; every client needs a value in the domain.")
    reports = oracle.perturb(_codes([str(text) for text in texts], labels, oracle.domain, f"column '{column}'"))
    outputs = OutputSet([out], reads=[data] + ([categories] if categories else []))
    with outputs:
        outputs.put(out, "".join(report_lines(oracle, reports, labels)))
        outputs.commit()
    terminal(soft_wrap=True).print(
        f"wrote {len(reports):,} {oracle.name} reports (ε = {oracle.epsilon:g}, d = {oracle.domain:,}) to {out}, "
        "each from the secure source", markup=False)


@ldp_app.command("collect")
@fails_cleanly
def collect_command(
        reports: list[Path] = typer.Argument(..., help="The files the clients' report lines were gathered in."),
        protocol: str = typer.Option(..., "--protocol", help="The deployment's protocol (as the clients used it)."),
        epsilon: float = typer.Option(..., "--epsilon", help="The deployment's ε (as the clients used it)."),
        domain: int | None = typer.Option(None, "--domain", help="The public domain as the codes 0..d-1."),
        categories: Path | None = typer.Option(None, "--categories", help="The public domain as a file of its "
                                                                          "values, one a line."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The collector's side: estimate every value's count from the clients' reports.

    Every line is checked against the deployment (protocol, ε, domain); the estimate of each count
    is unbiased, with the same 95 % error bar for every value; 'cleaned' clips negative estimates
    at 0 and rescales them to the number of reports (post-processing: no privacy cost).
    """
    from veil.ldp.protocols import postprocess
    from veil.ldp.wire import read_supports

    oracle, labels = _deployment(protocol, epsilon, domain, categories)

    def lines():
        for path in reports:
            if not path.is_file():
                raise DataError(f"reports file {str(path)!r} does not exist; check the path.")
            with open(path, encoding="utf-8") as fh:
                for number, text in enumerate(fh, start=1):
                    yield str(path), number, text

    supports = read_supports(lines(), oracle, labels)
    estimate = oracle.estimate(supports)
    cleaned = postprocess(estimate, supports.n)
    half_width = 1.96 * float(oracle.variance(supports.n)) ** 0.5
    names = labels if labels is not None else [str(code) for code in range(oracle.domain)]
    doc = {"protocol": oracle.name, "epsilon": oracle.epsilon, "domain": oracle.domain, "reports": supports.n,
           "secure": supports.fit_for_release, "half_width_95": half_width,
           "values": [{"value": name, "estimate": float(e), "cleaned": float(c)}
                      for name, e, c in zip(names, estimate, cleaned)]}
    if not supports.fit_for_release:
        terminal(stderr=True, soft_wrap=True).print(
            "note: some reports say their coins were not drawn from the secure source; the estimates are not fit "
            "for release.", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return
    from rich.table import Table as RichTable

    console = terminal(soft_wrap=True)
    console.print(f"{supports.n:,} {oracle.name} reports (ε = {oracle.epsilon:g}, d = {oracle.domain:,}); each "
                  f"estimate ± {half_width:,.0f} (95 %)", markup=False)
    table = RichTable()
    table.add_column("value")
    table.add_column("estimate", justify="right")
    table.add_column("cleaned", justify="right")
    for entry in doc["values"]:
        table.add_row(escape(entry["value"]), f"{entry['estimate']:,.0f}", f"{entry['cleaned']:,.0f}")
    console.print(table)
