"""What a release does to every column, and the warnings a steward must see (issue 25, items 16-18).

1. The audit's two cases, end to end: a table whose exact admission dates are not a
   quasi-identifier (the column is listed as published as is, with a date warning, on the
   terminal, in the manifest and in the report), and t = 0.01 on 200 records (the warning that
   every quasi-identifier is at the top, on the terminal, in the manifest, in the gate's decision
   and in the report; the command still exits 0).
2. The rules on published values: dates in several spellings, free text, values few records
   share; missing values and the records a release leaves out are not read; no value is quoted.
3. Every input column appears once, with its role and a disposition that agrees with what is
   published (a property over random tables and algorithms).
4. Suppression beyond the utility left.
5. The configuration's ``name`` and the table's name in the manifest.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil.anonymize import MDAV, FullDomain, Mondrian
from veil.anonymize.columns import RARE_RECORDS, profile_column
from veil.anonymize.useless import suppression_beyond_utility
from veil.cli import app
from veil.data.dataset import Dataset
from veil.data import builders
from veil.models import KAnonymity
from veil.report import read_release_manifest, release_file, release_report, release_report_of, render_html

runner = CliRunner()
DISEASES = ["flu", "cold", "cancer", "hiv", "asthma"]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def patients(folder: Path, n: int = 200, seed: int = 1) -> Path:
    """``n`` patients: age, sex, zip (quasi-identifiers), the exact day of admission, a disease."""
    rng = np.random.default_rng(seed)
    rows = ["age,sex,zip,admitted,disease"]
    for _ in range(n):
        day = dt.date(2021, 1, 1) + dt.timedelta(days=int(rng.integers(0, 700)))
        rows.append(f"{rng.integers(18, 90)},{'MF'[rng.integers(2)]},{13000 + rng.integers(0, 60)},"
                    f"{day.isoformat()},{DISEASES[rng.integers(5)]}")
    path = folder / "patients.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def config(folder: Path, model: str, *, extra: str = "") -> Path:
    path = folder / "c.yaml"
    path.write_text("\n".join([
        "data: patients.csv", "columns:", "  quasi_identifiers: [age, sex, zip]", "  sensitive: [disease]",
        "hierarchies:", "  age: {intervals: {widths: [5, 10, 20]}}", "  sex: {flat: {}}", "  zip: {masking: {}}",
        "models:", f"  - {model}", extra]) + "\n", encoding="utf-8")
    return path


def one_line(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------- 1. the audit's cases

def test_exact_admission_dates_are_listed_as_published_as_is_with_a_date_warning(tmp_path):
    patients(tmp_path)
    cfg = config(tmp_path, "k_anonymity: {k: 5}", extra="suppression_limit: 0.05")
    out, manifest, report = tmp_path / "r.csv", tmp_path / "m.json", tmp_path / "r.html"
    result = invoke("anonymize", "--config", cfg, "--out", out, "--manifest", manifest, "--report", report)
    assert result.exit_code == 0, result.output
    # the terminal lists every column with its role and disposition, and says the warning
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") == 5}
    assert set(rows) >= {"age", "sex", "zip", "admitted", "disease"}
    assert "insensitive" in rows["admitted"] and "published as is" in rows["admitted"] and "dates" in rows["admitted"]
    assert "sensitive" in rows["disease"] and "dates" not in rows["disease"]
    assert "quasi-identifying" in rows["age"]
    said = one_line(result.stdout)
    assert "warning: column 'admitted' is published as is and holds exact dates" in said
    # the manifest lists the column and carries the sentence, quoting no date
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    columns = {c["name"]: c for c in doc["columns"]}
    assert [c["name"] for c in doc["columns"]] == ["age", "sex", "zip", "admitted", "disease"]
    assert columns["admitted"] == {"name": "admitted", "role": "insensitive", "disposition": "as is",
                                   "warnings": ["date"]}
    assert columns["disease"]["warnings"] == []
    assert any(w.startswith("column 'admitted' is published as is") for w in doc["warnings"])
    assert not re.search(r"20\d\d-\d\d-\d\d", json.dumps(doc["columns"]) + json.dumps(doc["warnings"]))
    # the report: in the summary's warnings and in the column table
    page = report.read_text(encoding="utf-8")
    summary = page[page.index('<section id="summary">'):page.index("</section>")]
    assert "column &#39;admitted&#39; is published as is and holds exact dates" in summary
    assert re.search(r"columns published unchanged</th><td>.*?<bdi>admitted</bdi>", summary)
    row = re.search(r"<tr><td><bdi>admitted</bdi></td>(.*?)</tr>", page)[1]
    assert "insensitive" in row and "published as is" in row and "dates" in row


def test_t_001_on_200_records_warns_that_every_quasi_identifier_is_at_the_top(tmp_path):
    patients(tmp_path)
    cfg = config(tmp_path, "t_closeness: {t: 0.01, sensitive: disease}")
    out, manifest, report = tmp_path / "r.csv", tmp_path / "m.json", tmp_path / "r.html"
    result = invoke("anonymize", "--config", cfg, "--out", out, "--manifest", manifest, "--report", report)
    assert result.exit_code == 0, result.output  # a warning, not an error
    assert "warning: the released records form a single class" in one_line(result.stdout)
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    assert doc["models"][0]["passed"] and doc["classes"]["released"] == 1
    assert any(w.startswith("the released records form a single class") for w in doc["warnings"])
    assert {c["disposition"] for c in doc["columns"] if c["role"] == "quasi-identifying"} == {"suppressed"}
    page = report.read_text(encoding="utf-8")
    summary = page[page.index('<section id="summary">'):page.index("</section>")]
    assert "the released records form a single class" in summary and 'id="warnings"' in summary
    # veil report on the files gives the same warning, and the publishing gate says it
    doc = read_release_manifest(manifest)
    from_file = release_report(doc, release_file(manifest, doc))
    assert any(w.startswith("the released records form a single class") for w in from_file.warnings)
    # a manifest written before veil judged columns gets the same judgements from the published table
    older = {k: v for k, v in doc.items() if k not in ("columns", "warnings")}
    again = release_report(older, release_file(manifest, doc))
    assert again.warnings == from_file.warnings
    assert [(c.name, c.role, c.disposition, c.warning) for c in again.columns] == \
        [(c.name, c.role, c.disposition, c.warning) for c in from_file.columns]
    ledger, policy = tmp_path / "ledger.db", tmp_path / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    ward: {}\n", encoding="utf-8")
    made = invoke("ledger", "init", "--ledger", ledger, "--policy", policy)
    assert made.exit_code == 0, made.output
    published = invoke("publish", manifest, "--ledger", ledger, "--population", "ward", "--data",
                       tmp_path / "patients.csv", "--json")
    assert published.exit_code == 0, published.output
    decision = json.loads(published.stdout)
    assert any(w.startswith("the released records form a single class") for w in decision["warnings"])


def test_a_release_that_keeps_detail_has_no_such_warning(tmp_path):
    patients(tmp_path, n=2000)
    cfg = config(tmp_path, "k_anonymity: {k: 2}")
    result = invoke("anonymize", "--config", cfg, "--out", tmp_path / "r.csv", "--json")
    doc = json.loads(result.stdout)
    assert not any("single class" in w or "top of its hierarchy" in w for w in doc.get("warnings", []))


# --------------------------------------------------------------------------------------------- 2. the rules

@pytest.mark.parametrize("values", [
    ["2021-03-07", "2021-03-08", "2022-11-30"],
    ["07/03/2021", "08/03/2021", "30/11/2022"],
    ["03/07/2021", "3/8/21", "11/30/2022"],
    ["7 Mar 2021", "8 March 2021", "30-nov-2022"],
    ["March 7, 2021", "Nov 30 2022", "Mar 8, 2021"],
    ["2021-03-07 10:15", "2021-03-07T10:16:07Z", "2022-11-30 23:59:59.5+01:00"],
])
def test_dates_in_common_spellings_are_dates(values):
    assert profile_column(pa.array(values * 3)).kind == "date"


def test_date_and_timestamp_columns_are_dates_and_one_date_is_not_a_risk():
    days = pa.array([dt.date(2021, 1, d) for d in range(1, 29)])
    assert profile_column(days).kind == "date"
    stamps = pa.array(pd.to_datetime(["2021-01-01 10:00", "2021-01-02 11:00"]))
    assert profile_column(stamps).kind == "date"
    assert profile_column(pa.array(["2021-01-01"] * 50)).kind is None  # one date singles nobody out


@pytest.mark.parametrize("values", [
    ["10-19", "20-29", "30-39"] * 20,                         # bands
    ["13053", "13068", "13053"] * 20,                         # zip codes
    ["1.5", "2.5", "3.5"] * 20,                               # numbers
    ["2021", "2022", "2023"] * 20,                            # years
    ["Never-married", "Married-civ-spouse"] * 30,             # categories
])
def test_ordinary_columns_are_not_dates(values):
    assert profile_column(pa.array(values)).kind is None


def test_free_text_is_flagged_and_short_categories_are_not():
    notes = [f"patient {i} complained of pain in the left knee" for i in range(40)]
    assert profile_column(pa.array(notes)).kind == "free_text"
    categories = ["married civil spouse", "never married at all"] * 20  # many words, few values
    assert profile_column(pa.array(categories)).kind is None


def test_rare_values_above_one_percent_are_flagged_and_a_thin_tail_is_not():
    rng = np.random.default_rng(0)
    amounts = pa.array(rng.integers(0, 10**6, size=1000))
    profile = profile_column(amounts)
    assert profile.kind == "rare_values" and profile.rare_records > 990
    # ten records of 1,000 alone in their value: 1 %, not more
    tail = pa.array([str(v) for v in [20, 30, 40, 50] * 247 + [f"9{i}" for i in range(10)] + [20] * 2])
    assert profile_column(tail).rare_records == 10 and profile_column(tail).kind is None
    eleven = pa.array([str(v) for v in [20, 30, 40, 50] * 247 + [f"9{i}" for i in range(11)] + [20]])
    assert profile_column(eleven).kind == "rare_values"
    # a value held by RARE_RECORDS records is not rare
    assert profile_column(pa.array([str(i // RARE_RECORDS) for i in range(100)])).rare_records == 0


def test_values_few_records_share_are_a_warning_for_an_insensitive_column_only():
    from veil.anonymize.columns import ColumnDisposition

    profile = profile_column(pa.array(np.arange(100)))
    assert profile.kind == "rare_values"
    assert ColumnDisposition("salary", "insensitive", "as is", profile=profile).warning == "rare_values"
    sensitive = ColumnDisposition("salary", "sensitive", "as is", profile=profile)
    assert sensitive.warning is None and sensitive.warning_sentence() is None
    died = profile_column(pa.array(["2021-01-01", "2021-02-01"]))
    dates = ColumnDisposition("died", "sensitive", "as is", profile=died)
    assert dates.warning == "date"
    assert dates.warning_sentence().startswith("column 'died' (sensitive) is published as is")


def test_a_column_the_engine_did_not_read_is_said_to_be_unjudged():
    from veil.anonymize.columns import ColumnDisposition

    unread = ColumnDisposition("notes", "insensitive", "as is")
    assert unread.warning is None and "not judged" in unread.describe()
    assert ColumnDisposition("age", "quasi-identifying", "as is", 0, 4).describe() == "published as is"


def test_missing_values_and_left_out_rows_are_not_read():
    values = pa.array(["", "?", None] * 40 + ["2021-01-01", "2021-01-02"])
    assert profile_column(values, missing=("?",)).records == 2
    # the two dates are in rows a release leaves out: nothing of them is judged
    rows = np.array([True] * 120 + [False, False])
    assert profile_column(values, rows=rows, missing=("?",)) == profile_column(pa.array([""] * 3), missing=("?",))
    weighted = profile_column(pa.array(["a", "b"]), weights=np.array([10, 1]))
    assert weighted.records == 11 and weighted.rare_records == 1


def test_a_suppressed_record_is_not_judged(tmp_path):
    """The only records holding exact dates are suppressed (removed): the published column holds
    none, so it is not called dates."""
    rows = ["q,when"] + [f"a,x{i % 3}" for i in range(30)] + ["b,2021-01-01", "c,2021-01-02"]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    ds = Dataset(path, quasi_identifiers=["q"], hierarchies={"q": builders.flat(["a", "b", "c"])})
    release = FullDomain([KAnonymity(3)], suppression_limit=0.1).fit_transform(ds)
    assert release.suppressed_records == 2
    when = next(c for c in release.columns if c.name == "when")
    assert when.profile.records == 30 and when.warning is None
    starred = FullDomain([KAnonymity(3)], suppression_limit=0.1).fit(ds).transform(ds, suppressed="star")
    # shown as *, the two records are published with their values, each held by one record of 32
    shown = next(c for c in starred.columns if c.name == "when")
    assert shown.profile.records == 32 and shown.profile.rare_records == 2 and shown.warning == "rare_values"


# --------------------------------------------------------------------------------------------- 3. every column, once

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(8, 60), k=st.integers(2, 6), algorithm=st.sampled_from(["fulldomain", "mondrian", "mdav"]),
       seed=st.integers(0, 10**6), style=st.sampled_from(["remove", "star"]))
def test_every_column_appears_once_with_a_disposition_that_matches_the_table(n, k, algorithm, seed, style):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"id": np.arange(n), "age": rng.integers(20, 40, n), "zip": rng.choice(["a", "b", "c"], n),
                          "note": rng.choice(["x", "y"], n), "ill": rng.choice(["p", "q", "r"], n)})
    hierarchies = {"age": builders.intervals(frame["age"], [5, 10]), "zip": builders.flat(["a", "b", "c"])}
    ds = Dataset(frame, quasi_identifiers=["age", "zip"], sensitive=["ill"], identifying=["id"],
                 hierarchies=hierarchies if algorithm == "fulldomain" else None)
    if k > n:
        return
    cls = {"fulldomain": FullDomain, "mondrian": Mondrian, "mdav": MDAV}[algorithm]
    options = {"suppression_limit": 0.2} if algorithm == "fulldomain" else {}
    release = cls([KAnonymity(k)], **options).fit(ds).transform(ds, suppressed=style, rng=seed)
    columns = release.columns
    assert [c.name for c in columns] == list(frame.columns)
    roles = {c.name: (c.role, c.disposition) for c in columns}
    assert roles["id"] == ("identifying", "dropped") and "id" not in release.data.columns
    assert roles["note"] == ("insensitive", "as is") and roles["ill"] == ("sensitive", "as is")
    published = release.data
    kept = published if style == "remove" else published[(published[["age", "zip"]] != "*").any(axis=1)]
    for q in ("age", "zip"):
        disposition = roles[q][1]
        shown = kept[q].astype(str)
        original = frame.loc[frame.index.isin(range(n)), q].astype(str)
        if disposition == "as is":
            assert set(shown) <= set(original)
        if disposition == "suppressed" and len(kept):
            assert shown.nunique() == 1
    for name in ("note", "ill"):
        profile = next(c for c in columns if c.name == name).profile
        assert profile.records == len(published) and profile.distinct == published[name].nunique()
    assert [c.to_manifest()["name"] for c in columns] == [c["name"] for c in release.manifest["columns"]]


# --------------------------------------------------------------------------------------------- 4. suppression

def test_suppression_beyond_the_utility_left_is_defined_by_loss():
    assert suppression_beyond_utility(0.0, 1.0) is None              # nothing suppressed
    assert suppression_beyond_utility(0.3, 0.6) is None              # 30 % ≤ 40 % kept
    said = suppression_beyond_utility(0.45, 0.7)                     # 45 % > 30 % kept
    assert said.startswith("suppression removed 45.0% of the records, more than the 30.0%")
    assert suppression_beyond_utility(1.0, 1.0).startswith("suppression removed 100.0%")


def test_a_release_that_suppresses_most_records_warns(tmp_path):
    """12 of 20 records alone in their class, suppressed; the other 8 published as they are: the
    release keeps 40 % of the detail (loss 0.6) and suppressed 60 % of the records."""
    from veil.anonymize.release import Release
    from veil.classes import EquivalenceClasses

    values = [str(i) for i in range(12)] + ["a"] * 8
    ds = Dataset(pd.DataFrame({"q": values, "s": list("xy") * 10}), quasi_identifiers=["q"], sensitive=["s"])
    classes = EquivalenceClasses.from_dataset(ds)
    release = Release(ds, classes, classes.sizes < 2, algorithm="by hand", models=[KAnonymity(2)],
                      suppression_limit=0.6)
    assert release.suppressed_records == 12 and release.metrics()["loss"] == pytest.approx(0.6)
    said = "suppression removed 60.0% of the records, more than the 40.0% of the quasi-identifiers' detail"
    assert said in " ".join(release.warnings) and said in " ".join(release.curator_manifest["warnings"])
    # judged on the input's size and the records suppressed: the curator's, never the published manifest's
    assert said not in " ".join(release.manifest.get("warnings", []))
    fewer = Release(ds, classes, np.zeros(classes.n_classes, dtype=bool), algorithm="by hand",
                    models=[KAnonymity(1)], suppression_limit=0.0)
    assert "warnings" not in fewer.manifest


# --------------------------------------------------------------------------------------------- 5. names

def test_the_configuration_names_the_table_and_the_file_name_is_the_default(tmp_path):
    patients(tmp_path)
    cfg = config(tmp_path, "k_anonymity: {k: 5}", extra="suppression_limit: 0.05")
    default = json.loads(invoke("anonymize", "--config", cfg, "--out", tmp_path / "a.csv", "--json").stdout)
    assert default["input"]["name"] == "patients"
    cfg.write_text("name: Ward 7 admissions\n" + cfg.read_text(encoding="utf-8"), encoding="utf-8")
    report = tmp_path / "r.html"
    named = invoke("anonymize", "--config", cfg, "--out", tmp_path / "b.csv", "--json", "--report", report)
    assert json.loads(named.stdout)["input"]["name"] == "Ward 7 admissions"
    page = report.read_text(encoding="utf-8")
    assert "<title>Release report: Ward 7 admissions</title>" in page
    assert "<tr><th scope=\"row\">table</th><td><bdi>Ward 7 admissions</bdi></td></tr>" in page
    assert "Release report: fulldomain" not in page
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [a, b]\n" + cfg.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    refused = invoke("anonymize", "--config", bad, "--out", tmp_path / "c.csv")
    assert refused.exit_code == 2 and "name must be text" in refused.stderr


def test_a_frame_has_no_name_and_the_report_says_so(tmp_path):
    frame = pd.DataFrame({"q": ["a", "b"] * 10, "s": ["x", "y", "z", "w"] * 5})
    release = Mondrian([KAnonymity(2)]).fit_transform(Dataset(frame, quasi_identifiers=["q"], sensitive=["s"]))
    assert release.manifest["input"]["name"] is None
    assert release_report_of(release).title == "Release report: the input table"
    assert release_report_of(release, name="survey").summary.name == "survey"
    assert "survey" in render_html(release_report_of(release, name="survey"))


def test_a_mask_of_the_wrong_length_is_refused_in_one_sentence():
    from helpers import one_sentence_error
    from veil.errors import ParameterError

    one_sentence_error(ParameterError, lambda: profile_column(pa.array(["a", "b"]), rows=np.array([True])),
                       "rows holds 1 entries for a column of 2")
