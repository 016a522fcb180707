"""``veil init``'s starter configuration: a commented YAML file for a table, every role and
hierarchy in it a guess that says so.

Roles are guessed from the column names and values (identifiers, sensitive attributes, everything
else a quasi-identifier), and each quasi-identifier gets a hierarchy: the ARX hierarchy file lying
beside the table when there is one (``<table>_hierarchy_<column>.csv``, ARX's naming) and it
covers the column, else a built one: numeric bands, masking for fixed-length digit codes, calendar
units for dates, otherwise flat. The file's first line names
the JSON Schema veil ships (``# yaml-language-server: $schema=file:///…/veil.schema.json``), so
that an editor completes and checks it offline.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import yaml

from veil.config.schema import COLUMN_ROLES, SHIPPED_SCHEMA
from veil.errors import ConfigError, ParameterError
from veil.output import OutputSet


IDENTIFYING_WORDS = ("name", "email", "mail", "phone", "telephone", "mobile", "ssn", "address",
                     "passport", "iban", "username", "surname", "firstname", "lastname")
IDENTIFYING_TOKENS = ("id", "uuid", "guid", "ssn", "nhs", "mrn")
SENSITIVE_WORDS = ("disease", "diagnosis", "illness", "salary", "income", "occupation", "condition", "wage",
                   "treatment", "medication")
POSTAL_WORDS = ("zip", "postcode", "postal", "plz")
DEFAULT_SAMPLE_ROWS = 100_000


def _tokens(name: str) -> list[str]:
    """Words of a column name: ``PatientID`` → patient, id; ``e_mail-2`` → e, mail, 2."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def _has_word(tokens: Sequence[str], words: Sequence[str]) -> bool:
    """Whether a word of the name is, begins or ends with one of ``words`` (``firstname``, ``emails``)."""
    return any(t == w or t.startswith(w) or t.endswith(w) for t in tokens for w in words)


def _yaml_text(value: str) -> str:
    """A string as a YAML flow scalar, quoted only when it has to be."""
    out = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, allow_unicode=True)
    if out.endswith("\n...\n"):
        out = out[:-5]
    return out.strip()


def _nice_width(x: float) -> float:
    """The 1-2-5 series number nearest above ``x`` (5, 10, 20, 50, ...)."""
    if x <= 0:
        return 1.0
    exponent = math.floor(math.log10(x))
    for mantissa in (1, 2, 5, 10):
        width = mantissa * 10.0 ** exponent
        if width >= x * (1 - 1e-9):
            return float(f"{width:.12g}")
    return 10.0 ** (exponent + 1)


def _band_widths(nums) -> list[float]:
    """About 15 bands over the range at the first level, then twice and four times as wide (only
    widths narrower than the range; whole numbers get bands wider than 1)."""
    lo, hi = float(min(nums)), float(max(nums))
    integral = all(float(x).is_integer() for x in nums)
    base = _nice_width((hi - lo) / 15)
    if integral:
        base = max(base, 1.0)
    return [w for w in (base, 2 * base, 4 * base) if w < hi - lo and not (integral and w <= 1)]


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.12g}"


@dataclass
class _Guess:
    column: str
    role: str                 # quasi_identifiers, sensitive or identifying
    why: str                  # the role guess, for a comment
    hierarchy: str = ""       # YAML flow text of the hierarchy
    hierarchy_why: str = ""


def _guess(name: str, values) -> _Guess:
    from veil.data.encoding import encode_column, stray_texts

    column = encode_column(name, values)
    present = [i for i in range(column.cardinality) if i != column.missing_code]
    labels = [str(column.labels[i]) for i in present]
    non_missing = int((column.codes != column.missing_code).sum()) if column.missing_code is not None \
        else len(column.codes)
    tokens = _tokens(name)

    if any(t in IDENTIFYING_TOKENS for t in tokens) or _has_word(tokens, IDENTIFYING_WORDS):
        return _Guess(name, "identifying", "the name suggests an identifier")
    if not labels:
        return _Guess(name, "identifying", "every value is missing, so the column is dropped")
    if _has_word(tokens, SENSITIVE_WORDS):
        return _Guess(name, "sensitive", "the name suggests a sensitive attribute")
    stray = stray_texts(column)
    if not column.is_numeric and not stray and non_missing > 1 and len(labels) == non_missing:
        return _Guess(name, "identifying", "every value is different text, as in a name or a record number")

    guess = _Guess(name, "quasi_identifiers", "neither identifying nor sensitive by its name")
    guess.hierarchy, guess.hierarchy_why = _hierarchy_guess(column, tokens)
    return guess


def guess_hierarchy(name: str, values, missing_values: Sequence[str] = ("",)) -> tuple[str, str]:
    """The hierarchy ``veil init`` guesses for a quasi-identifier, whatever its role was guessed to be.

    Numeric bands for numbers, masking for fixed-length digit codes (or a postal-code name),
    calendar units for ``YYYY-MM-DD`` dates, otherwise flat (see :func:`starter_config`).

    Args:
        name: the column's name.
        values: the column's values (a sample will do).
        missing_values: cell texts that mean "missing".

    Returns:
        The hierarchy as YAML flow text (``{intervals: {widths: [5, 10, 20]}}``) and why it was
        chosen, as the starter configuration's comment says it.
    """
    from veil.data.encoding import encode_column

    return _hierarchy_guess(encode_column(name, values, missing_values=tuple(missing_values)), _tokens(name))


def _hierarchy_guess(column, tokens: Sequence[str]) -> tuple[str, str]:
    """:func:`guess_hierarchy` of an encoded column whose name has the words ``tokens``."""
    import pandas as pd

    from veil.data.encoding import stray_texts

    present = [i for i in range(column.cardinality) if i != column.missing_code]
    labels = [str(column.labels[i]) for i in present]
    stray = stray_texts(column)
    digits = bool(labels) and all(re.fullmatch(r"\d+", v) for v in labels)
    same_length = digits and len({len(v) for v in labels}) == 1
    postal = _has_word(tokens, POSTAL_WORDS)
    if digits and (postal or (same_length and len(labels[0]) >= 5)
                   or (same_length and len(labels[0]) >= 2 and any(v.startswith("0") for v in labels))):
        length = max(len(v) for v in labels)
        example = labels[0]
        masked = [example[:len(example) - i] + "*" * i for i in (1, 2)]
        why = "a postal-code name" if postal else f"{length}-digit codes"
        return "{masking: {}}", f"{why}, so digits are masked from the right ({masked[0]}, {masked[1]}, ...)"
    if not column.is_numeric and labels and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) for v in labels):
        return "{dates: {units: [month, year]}}", "dates, so day → month → year"
    if column.is_numeric and len(labels) > 2:
        nums = column.numeric[:len(present)] if column.missing_code is not None else column.numeric
        widths = _band_widths(nums)
        if widths:
            lo, hi = float(min(nums)), float(max(nums))
            shown = ", ".join(_number_text(w) for w in widths)
            rest = "".join(f", then {_number_text(w)}" for w in widths[1:])
            why = (f"numeric ({_number_text(lo)} to {_number_text(hi)}), so {_number_text(widths[0])}-wide "
                   f"bands{rest}, then *")
            return f"{{intervals: {{widths: [{shown}]}}}}", why
    if stray:
        shown = ", ".join(f"{value!r} ({count:,} row{'s' if count != 1 else ''})" for value, count in stray.items())
        numbers = pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce").dropna().to_numpy(dtype=float)
        widths = _band_widths(numbers)
        bands = (f" and give {{intervals: {{widths: [{', '.join(_number_text(w) for w in widths)}]}}}}"
                 if widths else "")
        return "{flat: {}}", (f"numbers, but read as text because of {shown}: correct those values, or list them "
                               f"under a top-level missing_values key{bands}; as text, either kept or suppressed to *")
    kind = "numeric with few values" if column.is_numeric else "text"
    return "{flat: {}}", f"{kind}, so either kept or suppressed to * (replace with a hierarchy file for finer steps)"


def _hierarchy_file(data_path: Path, column: str, values) -> tuple[Path | None, str]:
    """The ARX hierarchy file of ``column`` beside the table (``<table>_hierarchy_<column>.csv``),
    and why it is not used when it lies there but cannot serve (an empty reason when it can)."""
    from veil.data.encoding import encode_column
    from veil.data.hierarchy import Hierarchy
    from veil.errors import VeilError, lower_first

    path = data_path.parent / f"{data_path.stem}_hierarchy_{column}.csv"
    if not path.is_file():
        return None, ""
    try:
        Hierarchy.read_csv(path).align(encode_column(column, values))
    except VeilError as exc:
        return None, f"{path.name} lies beside the table but is not used: {lower_first(str(exc)).rstrip('.')}"
    return path, ""


def _relative(path: Path, folder: str | os.PathLike | None) -> str:
    """``path`` as a configuration in ``folder`` names it (relative to it; as given without one)."""
    if folder is None:
        return str(path).replace(os.sep, "/")
    try:
        return os.path.relpath(path.resolve(), Path(folder).resolve()).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return str(path.resolve()).replace(os.sep, "/")


def starter_config(data_path: str | os.PathLike, *, delimiter: str | None = None,
                   sample_rows: int = DEFAULT_SAMPLE_ROWS, relative_to: str | os.PathLike | None = None) -> str:
    """The text of a commented configuration for a table, with every guess marked as one.

    Roles are guessed from column names and values: identifiers (``id``, ``name``, ``email``,
    ``phone``, ``ssn``, ``address`` ..., or text whose values are all different), sensitive
    columns (``disease``, ``diagnosis``, ``salary``, ``income``, ``occupation`` ...), and every
    other column a quasi-identifier with a hierarchy: the ARX hierarchy file beside the table
    (``<table>_hierarchy_<column>.csv``) when it covers the column's values, else a built one:
    numeric bands, masking for fixed-length digit codes such as ZIP codes, calendar units for
    dates, otherwise flat. A sensitive column with such a file gets it too.

    Args:
        data_path: the table (CSV or Parquet).
        delimiter: the CSV delimiter (sniffed when ``None``).
        sample_rows: how many rows the guesses read.
        relative_to: the folder the configuration will be saved in; ``data:`` is written relative
            to it (default: the path as given).

    Raises:
        DataError: the table cannot be read.
        ConfigError: no column can be taken for a quasi-identifier.
    """
    from veil.data.io import read_table

    if sample_rows < 1:
        raise ParameterError(f"sample_rows must be at least 1, not {sample_rows}.")
    table = read_table(data_path, delimiter)
    sample = table.data.slice(0, sample_rows)
    guesses = [_guess(name, sample.column(name)) for name in table.columns]
    for g in guesses:
        if g.role not in ("quasi_identifiers", "sensitive"):
            continue
        found, why_not = _hierarchy_file(Path(data_path), g.column, sample.column(g.column))
        if found is not None:
            g.hierarchy = f"{{file: {_yaml_text(_relative(found, relative_to))}}}"
            g.hierarchy_why = f"{found.name} lies beside the table, named as ARX names this column's hierarchy"
        elif why_not and g.role == "quasi_identifiers":
            g.hierarchy_why += f" ({why_not})"
    by_role = {role: [g for g in guesses if g.role == role] for role in COLUMN_ROLES}
    if not by_role["quasi_identifiers"]:
        raise ConfigError(f"no column of {str(data_path)!r} looks like a quasi-identifier (each looks identifying "
                          "or sensitive); write the configuration by hand, starting from "
                          "examples/adult-fulldomain.yaml.")

    data_text = _relative(Path(data_path), relative_to) if relative_to is not None else str(data_path).replace(
        os.sep, "/")
    shown_name = Path(data_path).name

    out: list[str] = []
    add = out.append

    def item(text: str, comment: str, indent: int = 4, column: int = 30) -> None:
        line = " " * indent + text
        add(f"{line:<{column}}  # {comment}" if comment else line)

    add(f"# yaml-language-server: $schema={SHIPPED_SCHEMA.resolve().as_uri()}")
    add(f"# veil anonymization configuration for {shown_name}, written by `veil init`.")
    add("#")
    add("# Every role and hierarchy below is a GUESS made from the column names and values, and each")
    add("# guess says so. Check every line before you publish anything.")
    add("#")
    from veil.data.text_encoding import UTF8, current_encoding

    encoding = "" if current_encoding() == UTF8 else f" --encoding {current_encoding()}"
    add("# Run:  veil anonymize --config THIS_FILE --out release.csv --manifest manifest.json --report report.html"
        + encoding)
    add("# (the manifest says how the release was made and is what veil publish takes; the report is one page)")
    add("# A DATA argument (veil anonymize DATA --config THIS_FILE ...) overrides `data:` below.")
    add("")
    item(f"data: {_yaml_text(data_text)}", "the table; a relative path is read from this file's folder", 0)
    if table.kind == "csv":
        item(f"delimiter: {_yaml_text(table.delimiter)}", "sniffed from the file", 0)
    add("")
    add("columns:")
    add("  # Quasi-identifiers can be linked to outside data (age, ZIP code, sex, ...); they are generalized.")
    add("  quasi_identifiers:")
    for g in by_role["quasi_identifiers"]:
        item(f"- {_yaml_text(g.column)}", f"guessed: {g.why}")
    for role, about, none in (
            ("sensitive", "Sensitive columns are what an adversary must not learn; the models below protect them.",
             "no column name suggested a sensitive attribute"),
            ("identifying", "Identifying columns (names, record numbers) are dropped from the release.",
             "no column looked identifying")):
        add(f"  # {about}")
        if by_role[role]:
            add(f"  {role}:")
            for g in by_role[role]:
                item(f"- {_yaml_text(g.column)}", f"guessed: {g.why}")
        else:
            add(f"{'  ' + role + ': []':<32}# guessed: {none}")
    add("  # Every column not listed above is released unchanged.")
    add("")
    add("# One hierarchy per quasi-identifier: level 0 is the original value, each level is coarser.")
    add("# Builders: intervals {widths: [5, 10, 20], start: 0}, masking {char: \"*\"},")
    add("# dates {units: [month, year], format: \"%Y-%m-%d\"}, flat {} (kept or *); or an ARX hierarchy")
    add("# file: {file: hierarchy_age.csv} (no header, ;-separated, one row per value, one column per level).")
    add("# A sensitive column may have one too (hierarchical t-closeness uses it).")
    add("hierarchies:")
    for g in by_role["quasi_identifiers"] + [g for g in by_role["sensitive"] if g.hierarchy.startswith("{file:")]:
        item(f"{_yaml_text(g.column)}: {g.hierarchy}", f"guessed: {g.hierarchy_why}", indent=2, column=44)
    add("")
    add("# The release must satisfy every model listed. Others: alpha_k_anonymity {alpha, k},")
    add("# entropy_l_diversity {l}, recursive_cl_diversity {c, l}, t_closeness {t, distance: equal|ordered|")
    add("# hierarchical}, delta_disclosure {delta}, beta_likeness {beta, enhanced}; each may name its")
    add("# column with `sensitive: NAME` (default: every sensitive column). Against a public population")
    add("# the table is a sample of: delta_presence {population: FILE, delta_max}, k_map {population: FILE, k}.")
    add("models:")
    item("- k_anonymity: {k: 5}", "default: each record shares its quasi-identifiers with 4 others", 2, 44)
    if by_role["sensitive"]:
        item("- distinct_l_diversity: {l: 2}",
             "default, as a sensitive column was guessed: 2 different values per class", 2, 44)
    add("")
    item("suppression_limit: 0.02", "default: at most 2 % of the records may be removed", 0, 44)
    item("metric: loss", "information loss; or height, precision, discernibility, aecs,", 0, 44)
    add(f"{'':44}  # entropy, kl, ig_pl, workload, {{name: classification, label: COLUMN}}")
    item("algorithm: fulldomain", "or {name: fulldomain, search: optimal|heuristic, time_limit: 60}", 0, 44)
    add("output:")
    item("suppressed: remove", "remove suppressed records, or star: keep them with * everywhere", 2, 44)
    item("shuffle: true", "secure shuffle; false keeps the input order, which lets", 2, 44)
    add(f"{'':44}  # two releases of one table be joined by row position")
    item("seed: null", "seed of the shuffle (null: secure; a seed is not fit for release)", 2, 44)
    return "\n".join(out) + "\n"


def write_starter_config(data_path: str | os.PathLike, out_path: str | os.PathLike, *,
                         delimiter: str | None = None, sample_rows: int = DEFAULT_SAMPLE_ROWS,
                         overwrite: bool = False) -> None:
    """Write :func:`starter_config` to ``out_path`` atomically, with ``data:`` relative to it.

    Raises:
        ConfigError: ``out_path`` exists and ``overwrite`` is false.
        ParameterError: ``out_path`` is the table itself (even with ``overwrite``).
        DataError: the table cannot be read, or ``out_path`` cannot be written (see
            :class:`veil.output.OutputSet`).
    """
    out_path = Path(out_path)
    outputs = OutputSet([out_path], reads=[data_path])
    if out_path.exists() and not overwrite:
        raise ConfigError(f"{str(out_path)!r} already exists; choose another file name or allow overwriting it.")
    text = starter_config(data_path, delimiter=delimiter, sample_rows=sample_rows, relative_to=out_path.parent)
    with outputs:
        outputs.put(out_path, text)
        outputs.commit()
