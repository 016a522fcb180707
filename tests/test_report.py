"""The release report (``veil.report``, ``veil report``).

1. The figures: their accessible names, their colours (the colour-blind-safe palette), their
   refusals.
2. What the report says agrees with ``veil check`` and ``veil attack single`` on the same release,
   and counts exposed records without naming one.
3. The page is self-contained (no script, no external resource), its figures have alt text and
   captions, its tables are real tables, and what the data holds is escaped.
4. ``veil report``, ``veil anonymize --report``: the page is written; bad input (an incompatible
   manifest, a missing release, an output over an input) exits 2 with one sentence and writes
   nothing.

5. In a real browser (headless Chromium, the ``service`` marker): the page loads without an error
   and without fetching anything, every figure has a size, a screenshot is taken, and it prints
   on A4. Without Chromium these skip with the reason, unless VEIL_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from veil.anonymize import FullDomain
from veil.attacks import attack_release
from veil.check import check
from veil.cli import app
from veil.data.dataset import Dataset
from veil.errors import DataError, ParameterError
from veil.manifests import private_path
from veil.models import EntropyLDiversity, KAnonymity
from veil.report import read_release_manifest, release_file, release_report, release_report_of, render_html
from veil.report.figures import GRID, INK, PALETTE, THRESHOLD, bar_chart, step_chart

from helpers import ADULT_DIR

QIS = ["sex", "age", "race", "education"]
OKABE_ITO = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The first 2,000 records of Adult, released under 5-anonymity and entropy 2-diversity of
    occupation; returns the Release and its (manifest, release) files."""
    folder = tmp_path_factory.mktemp("release")
    lines = (ADULT_DIR / "adult.csv").read_bytes().splitlines(keepends=True)
    data = folder / "adult-2000.csv"
    data.write_bytes(b"".join(lines[:2001]))
    hierarchies = {c: ADULT_DIR / f"adult_hierarchy_{c}.csv" for c in QIS + ["occupation"]}
    ds = Dataset(data, quasi_identifiers=QIS, sensitive=["occupation"], hierarchies=hierarchies)
    anonymizer = FullDomain([KAnonymity(5), EntropyLDiversity(2, sensitive="occupation")], suppression_limit=0.02,
                            metric="loss").fit(ds)
    release = anonymizer.transform(ds)
    release.write(folder / "release.csv", folder / "manifest.json")
    return release, folder / "manifest.json", folder / "release.csv", data


@pytest.fixture(scope="module")
def page(published) -> str:
    return render_html(release_report_of(published[0]))


# --------------------------------------------------------------------------------------------- 1. figures

def test_a_bar_chart_is_an_image_with_a_name_and_a_description():
    figure = bar_chart("f", ["a", "b"], {"x": [1, 2], "y": [3, 0]}, title="T <1>", alt="A & B", caption="C")
    svg = str(figure.svg)
    assert svg.startswith("<svg") and 'role="img"' in svg and 'aria-labelledby="f-title f-desc"' in svg
    assert '<title id="f-title">T &lt;1&gt;</title>' in svg and '<desc id="f-desc">A &amp; B</desc>' in svg
    assert svg.count("<rect") == 2 + 4  # the legend's two marks, then one bar per value


@pytest.mark.parametrize("series, words", [({"x": [1]}, "one value per category"),
                                           ({"x": [1, -1]}, "negative"),
                                           ({"x": [1, float("inf")]}, "infinite")])
def test_a_bar_chart_refuses_bad_values(series, words):
    with pytest.raises(ParameterError, match=words):
        bar_chart("f", ["a", "b"], series, title="t", alt="a", caption="c")


def test_a_step_chart_refuses_points_off_the_unit_square():
    with pytest.raises(ParameterError, match="one y per x"):
        step_chart("s", [0, 0.5], [1], title="t", alt="a", caption="c", x_label="x", y_label="y")
    with pytest.raises(ParameterError, match=r"\[0, 1\]"):
        step_chart("s", [0, 2], [1, 0], title="t", alt="a", caption="c", x_label="x", y_label="y")


def test_the_palette_is_okabe_ito():
    assert set(PALETTE) | {THRESHOLD} <= OKABE_ITO


def test_the_page_draws_only_with_the_palette(page):
    colours = set(re.findall(r'(?:fill|stroke)="(#[0-9A-Fa-f]{6})"', page))
    assert colours and colours <= set(PALETTE) | {INK, GRID, THRESHOLD}


# --------------------------------------------------------------------------------------------- 2. content

def test_the_report_agrees_with_check_and_the_attacks(published):
    release, manifest, release_csv, _ = published
    doc = read_release_manifest(manifest)
    report = release_report(doc, release_file(manifest, doc), risk_threshold=0.1)
    ds = Dataset(release_csv, quasi_identifiers=QIS, sensitive=["occupation"])
    checked = check(ds, manifest=doc, risk_threshold=0.1)
    assert report.risk["max"] == checked.risk.prosecutor_max == 1 / release.released_classes.sizes.min()
    assert report.risk["at_risk"] == checked.risk.prosecutor_at_risk
    assert report.measured == checked.to_dict()["by_sensitive"]
    attacks = attack_release(ds)
    col = attacks.by_sensitive["occupation"]
    rows = {row[0].split(" (")[0]: row for row in report.attacks["occupation"]}
    assert rows["homogeneity"][2] == len(col.homogeneity.records)
    assert rows["background knowledge"][2] == len(col.background_knowledge.records)
    assert rows["skewness"][2] == len(col.skewness.records)
    assert [m["level"] for m in report.models] == [m["level"] for m in doc["models"]]


def test_the_class_size_figure_accounts_for_every_record(published):
    release = published[0]
    report = release_report_of(release)
    sizes = report.figures["classes"][0]
    counted = sum(int(n.replace(",", "")) for n in re.findall(r"([\d,]+) records", sizes.alt.split(";", 1)[1]))
    assert counted == release.released_classes.n_rows
    assert f"{release.released_classes.n_classes:,} classes" in sizes.alt


def test_the_report_compares_utility_with_the_input_and_the_trivial_release_of_the_same_records(published):
    release = published[0]
    report = release_report_of(release)
    rows = {row.key: row for row in report.metrics}
    assert rows["loss"].input == 0 and rows["loss"].trivial == 1 and 0 < rows["loss"].release < 1
    assert rows["loss"].kept == pytest.approx(1 - rows["loss"].release)
    tops = sum(release.dataset.generalizations[q].height for q in QIS)
    assert rows["height"].input == 0 and rows["height"].trivial == tops
    assert rows["precision"].input == 1 and rows["precision"].trivial == 0 and rows["precision"].higher_is_better
    n = release.dataset.num_rows
    assert rows["discernibility"].trivial == n * n and rows["aecs"].trivial == n  # one class of every record
    for row in report.metrics:  # every figure of the same records, so the release lies between its two ends
        assert row.meaning.endswith(".") and ("better" in row.meaning)
        assert row.kept is not None and -1e-9 <= row.kept <= 1 + 1e-9, row
    from_file = release_report(read_release_manifest(published[1]), published[2])
    assert all(row.input is None and row.trivial is None and row.kept is None for row in from_file.metrics)
    assert "utility" not in from_file.figures  # no share kept to draw


def test_an_original_of_other_records_is_refused(published, tmp_path):
    _, manifest, release_csv, data = published
    fewer = tmp_path / "fewer.csv"
    fewer.write_bytes(b"".join(data.read_bytes().splitlines(keepends=True)[:1001]))
    ds = Dataset(fewer, quasi_identifiers=QIS, sensitive=["occupation"])
    with pytest.raises(ParameterError, match="holds 1,000 records and the release was made from 2,000"):
        release_report(read_release_manifest(manifest), release_csv, original=ds)
    result = invoke("report", manifest, "--out", tmp_path / "r.html", "--original", fewer)
    assert result.exit_code == 2 and "give the table the release was made from" in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_the_summary_comes_first_with_the_verdicts_the_risk_and_the_columns(published, page):
    release = published[0]
    main = page[page.index("<main>"):]
    assert main.index('<section id="summary">') < main.index("<section", main.index('<section id="summary">') + 1)
    summary = main[:main.index("</section>")]
    assert "<td><bdi>adult-2000</bdi></td>" in summary and "fulldomain" in summary  # the table's name, then the algorithm
    assert "<h1>Release report: adult-2000</h1>" in page
    for model in release.manifest["models"]:
        assert f"<td>{model['model']}</td>" in summary
    assert summary.count('class="pass">met</td>') == len(release.manifest["models"])
    report = release_report_of(release)
    sizes = release.released_classes.sizes
    assert report.summary.at_risk == int(sizes[1 / sizes > 0.2].sum())
    assert report.summary.suppressed == release.suppressed_records
    assert f"{release.suppressed_records:,} (" in summary
    assert report.summary.unchanged == [c.name for c in release.columns if c.disposition == "as is"]
    assert "occupation" in report.summary.unchanged and "salary-class" in report.summary.unchanged


def test_every_measure_says_what_it_means_and_which_way_is_better(page, published):
    from veil.report.measures import DISCLOSURE_MEANINGS, METRIC_MEANINGS, MODEL_MEANINGS

    assert all(text.endswith(".") for text in [*MODEL_MEANINGS.values(), *METRIC_MEANINGS.values(),
                                               *DISCLOSURE_MEANINGS.values()])
    assert all("better" in text for text in [*MODEL_MEANINGS.values(), *METRIC_MEANINGS.values()])
    from veil.metrics import METRICS

    assert set(METRICS) <= set(METRIC_MEANINGS)
    report = release_report_of(published[0])
    for levels in report.measured.values():
        for key in levels:
            assert key in MODEL_MEANINGS and MODEL_MEANINGS[key].split(";")[0] in page.replace("&#39;", "'")
    for label in report.disclosure["occupation"]:
        assert label in DISCLOSURE_MEANINGS
    # the δ of the disclosure measures is named apart from the model's, which compares with the input
    assert "δ (against the released table)" in page


# --------------------------------------------------------------------------------------------- 3. the page

class Outline(HTMLParser):
    """The tags, attributes and texts of a page, as the accessibility checks read them."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.open: list[str] = []
        self.figures: list[dict] = []
        self.ids: dict[str, str] = {}
        self._text_of: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self.open.append(tag)
        if tag == "figure":
            self.figures.append({"svg": None, "caption": ""})
        if tag == "svg" and self.figures:
            self.figures[-1]["svg"] = attrs
        if "id" in attrs:
            self._text_of = attrs["id"]
            self.ids[attrs["id"]] = ""

    def handle_endtag(self, tag):
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data):
        if self._text_of is not None:
            self.ids[self._text_of] += data
        if "figcaption" in self.open and self.figures:
            self.figures[-1]["caption"] += data


def test_the_page_loads_nothing(page):
    outline = Outline()
    outline.feed(page)
    tags = {tag for tag, _ in outline.tags}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed"}
    for _, attrs in outline.tags:
        assert not any(k in ("src", "href") for k in attrs), attrs
    assert "url(" not in page and "@import" not in page


def test_every_figure_has_alt_text_and_a_caption(page):
    outline = Outline()
    outline.feed(page)
    assert len(outline.figures) >= 6
    for figure in outline.figures:
        svg = figure["svg"]
        assert svg["role"] == "img"
        title, desc = svg["aria-labelledby"].split()
        assert outline.ids[title].strip() and len(outline.ids[desc].strip()) > 20
        assert figure["caption"].strip()


def test_tables_are_real_tables(page):
    outline = Outline()
    outline.feed(page)
    tables = [attrs for tag, attrs in outline.tags if tag == "table"]
    assert len(tables) >= 6
    assert page.count("<caption>") == len(tables)
    assert page.count('scope="col"') + page.count('scope="row"') > 20


def test_the_page_escapes_what_the_data_holds(tmp_path):
    data = tmp_path / "t.csv"
    rows = ["zip,illness"] + [f"<b>{i % 2}</b>,<script>alert(1)</script>" for i in range(6)]
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    ds = Dataset(data, quasi_identifiers=["zip"], sensitive=["illness"])
    from veil.anonymize import Mondrian

    release = Mondrian([KAnonymity(2)]).fit(ds).transform(ds)
    page = render_html(release_report_of(release))
    assert "<script>" not in page and "&lt;script&gt;" in page


# --------------------------------------------------------------------------------------------- 4. the commands

def test_veil_report_writes_the_page(published, tmp_path):
    _, manifest, _, data = published
    out = tmp_path / "r.html"
    result = invoke("report", manifest, "--out", out, "--original", data,
                    "--hierarchy", f"occupation={ADULT_DIR / 'adult_hierarchy_occupation.csv'}")
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "similarity (level 1)" in page
    assert page.startswith("<!DOCTYPE html>") and "The adversary's view" in page
    assert "not given" not in page  # the ungeneralized input was given
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_veil_report_writes_beside_the_manifest_by_default(published, tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    for path in [*published[1:3], private_path(published[1])]:
        (folder / path.name).write_bytes(path.read_bytes())
    result = invoke("report", folder / "manifest.json")
    assert result.exit_code == 0, result.output
    assert (folder / "report.html").read_text(encoding="utf-8").endswith("</html>\n")


def _copy(published, folder: Path, edit=None) -> Path:
    folder.mkdir(exist_ok=True)
    for path in [*published[1:3], private_path(published[1])]:
        (folder / path.name).write_bytes(path.read_bytes())
    if edit:
        doc = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        edit(doc)
        (folder / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder / "manifest.json"


@pytest.mark.parametrize("case, words", [
    ("version", "written by veil 9.0.0"),
    ("no release", "does not exist"),
    ("altered release", "does not match"),
    ("over the manifest", "is an input of this run"),
    ("over the release", "is an input of this run"),
    ("no roles", "no quasi-identifiers"),
    ("hierarchy of a quasi-identifier", "not a sensitive column"),
    ("no private file", "is kept in the release's private file, which is not beside the manifest; give it "
                        "(--private manifest.private.json"),
])
def test_veil_report_refuses_bad_input_in_one_sentence(published, tmp_path, case, words):
    edit = {"version": lambda d: d.update(veil="9.0.0"),
            "no roles": lambda d: d.update(roles={})}.get(case)
    manifest = _copy(published, tmp_path / "in", edit)
    release = manifest.parent / "release.csv"
    out = tmp_path / "out.html"
    if case == "no release":
        release.unlink()
    if case == "altered release":
        release.write_text(release.read_text(encoding="utf-8") + "x\n", encoding="utf-8")
    if case == "over the manifest":
        out = manifest
    if case == "over the release":
        out = release
    if case == "no private file":
        private_path(manifest).unlink()
    before = {p: p.read_bytes() for p in manifest.parent.iterdir()}
    extra = ["--hierarchy", f"sex={ADULT_DIR / 'adult_hierarchy_sex.csv'}"] if case.startswith("hierarchy") else []
    result = invoke("report", manifest, "--out", out, *extra)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and words in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert {p: p.read_bytes() for p in manifest.parent.iterdir()} == before
    assert not (tmp_path / "out.html").exists()


def test_read_release_manifest_names_the_version(published, tmp_path):
    manifest = _copy(published, tmp_path / "in", lambda d: d.pop("veil"))
    with pytest.raises(DataError, match="unknown version"):
        read_release_manifest(manifest)


def test_veil_anonymize_writes_the_report_with_the_release(published, tmp_path):
    _, _, _, data = published
    config = tmp_path / "c.yaml"
    config.write_text("\n".join([
        f"data: {data}", 'delimiter: ";"', "columns:", "  quasi_identifiers: [sex, age]", "  sensitive: [occupation]",
        "hierarchies:", f"  sex: {{file: {ADULT_DIR / 'adult_hierarchy_sex.csv'}}}",
        f"  age: {{file: {ADULT_DIR / 'adult_hierarchy_age.csv'}}}",
        "models:", "  - k_anonymity: {k: 5}", "suppression_limit: 0.02", "metric: loss"]) + "\n", encoding="utf-8")
    out, manifest, report = tmp_path / "o.csv", tmp_path / "m.json", tmp_path / "r.html"
    result = invoke("anonymize", "--config", config, "--out", out, "--manifest", manifest, "--report", report)
    assert result.exit_code == 0, result.output
    assert (f"wrote {out}, {manifest}, {private_path(manifest)} (private: keep it, do not publish it) and {report}"
            in result.stdout.replace("\n", ""))
    page = report.read_text(encoding="utf-8")
    assert "k-anonymity at 5" in page and 'id="figure-risk"' in page
    # the report refuses to replace the configuration, and then nothing is written
    again = invoke("anonymize", "--config", config, "--out", tmp_path / "o2.csv", "--report", config)
    assert again.exit_code == 2 and "is an input of this run" in again.stderr
    assert not (tmp_path / "o2.csv").exists() and config.read_text(encoding="utf-8").startswith("data:")


def test_the_risk_curve_steps_at_each_class_size(published):
    release = published[0]
    report = release_report_of(release)
    risk = report.figures["classes"][1]
    sizes = release.released_classes.sizes
    expected = float(sizes[1 / sizes > report.risk["threshold"]].sum() / sizes.sum())
    assert f"{expected:.2%} of the records" in risk.alt
    assert np.isclose(report.risk["at_risk"], expected)


# --------------------------------------------------------------------------------------------- 5. a real browser

# Injected first in <head> of a copy of the page: records every error (scripts, resources that
# fail to load, console.error), then, once loaded, the size of every figure and every resource
# fetched, as JSON in a <pre> that --dump-dom prints.
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(String(e.message || (e.target && (e.target.src || e.target.href)))), true);
const __error = console.error; console.error = (...a) => { window.__errors.push(a.join(" ")); __error(...a); };
window.addEventListener("load", () => {
  const figures = [...document.querySelectorAll("figure svg")].map(s => {
    const r = s.getBoundingClientRect(); return {id: s.getAttribute("aria-labelledby"), width: r.width, height: r.height};
  });
  const pre = document.createElement("pre"); pre.id = "veil-probe";
  pre.textContent = JSON.stringify({errors: window.__errors, figures,
                                    resources: performance.getEntriesByType("resource").map(e => e.name)});
  document.body.appendChild(pre);
});
</script>"""


def _unavailable(reason: str):
    if os.environ.get("VEIL_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason}, and VEIL_REQUIRE_SERVICES=1 demands it")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A function running headless Chromium with extra arguments on a file, returning its
    standard output and error; skips (or fails, when services are required) without it."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        _unavailable("Chromium is not installed (Debian package chromium)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    # As root (CI) Chromium refuses its sandbox; the pages it opens here are veil's own.
    base = [binary, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        base.append("--no-sandbox")

    def run(page: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(base + list(args) + [page.as_uri()], capture_output=True, text=True, timeout=180)

    blank = profile / "blank.html"
    blank.write_text("<!DOCTYPE html><title>t</title><p>ok</p>", encoding="utf-8")
    try:
        started = run(blank, "--dump-dom")
    except (OSError, subprocess.TimeoutExpired) as exc:
        _unavailable(f"Chromium could not start: {exc}")
    if started.returncode != 0 or "<p>ok</p>" not in started.stdout:
        _unavailable(f"Chromium could not start (exit {started.returncode}): {started.stderr.strip()[-300:]}")
    return run


def probe(browser, html: str, folder: Path) -> dict:
    page = folder / "probe.html"
    page.write_text(html.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    done = browser(page, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="veil-probe">(.*?)</pre>', done.stdout, re.S)
    assert found, "the page did not finish loading"
    text = found[1].replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(text)


@pytest.mark.service
def test_the_page_loads_in_a_browser_without_errors_and_its_figures_have_size(browser, page, tmp_path):
    found = probe(browser, page, tmp_path)
    assert found["errors"] == []
    assert found["resources"] == []
    assert len(found["figures"]) == page.count("<figure ") >= 6
    assert all(f["width"] > 100 and f["height"] > 20 for f in found["figures"]), found["figures"]


@pytest.mark.service
def test_the_summary_is_the_first_thing_the_browser_shows_and_it_loads_cleanly(browser, tmp_path):
    """The audit's useless release (t = 0.01 on 200 records): the page opens on its summary, whose
    warnings say that every quasi-identifier is at the top, without a console error."""
    rng = np.random.default_rng(1)
    frame = {"age": rng.integers(18, 90, 200).astype(str), "sex": rng.choice(["M", "F"], 200),
             "admitted": [str(np.datetime64("2021-01-01") + int(d)) for d in rng.integers(0, 700, 200)],
             "disease": rng.choice(["flu", "cold", "cancer", "hiv", "asthma"], 200)}
    import pandas as pd
    from veil.data import builders
    from veil.models import TCloseness

    ds = Dataset(pd.DataFrame(frame), quasi_identifiers=["age", "sex"], sensitive=["disease"],
                 hierarchies={"age": builders.flat(sorted(set(frame["age"]))), "sex": builders.flat(["F", "M"])},
                 name="ward 7")
    release = FullDomain([TCloseness(0.01, sensitive="disease")]).fit_transform(ds)
    html = render_html(release_report_of(release))
    probe_page = html.replace("</body>", "<script>window.addEventListener('load', () => { const p = "
                              "document.createElement('pre'); p.id = 'veil-first'; const s = document.querySelector"
                              "('main > section'); p.textContent = s.id + '|' + s.innerText; "
                              "document.body.appendChild(p); });</script></body>", 1)
    found = probe(browser, probe_page, tmp_path)
    assert found["errors"] == [] and found["resources"] == []
    page = tmp_path / "probe.html"
    shown = browser(page, "--dump-dom").stdout
    first = re.search(r'<pre id="veil-first">(.*?)</pre>', shown, re.S)[1]
    assert first.startswith("summary|") and "ward 7" in first
    assert "the released records form a single class" in first and "holds exact dates" in first


@pytest.mark.service
def test_the_browser_check_sees_an_error(browser, tmp_path):
    broken = "<!DOCTYPE html><html><head><title>t</title></head><body><img src='missing.png' alt='x'></body></html>"
    found = probe(browser, broken, tmp_path)
    assert found["errors"] and "missing.png" in found["errors"][0]


@pytest.mark.service
def test_a_screenshot_of_the_page(browser, page, tmp_path):
    report = tmp_path / "report.html"
    report.write_text(page, encoding="utf-8")
    shot = tmp_path / "report.png"
    done = browser(report, f"--screenshot={shot}", "--window-size=900,2400", "--hide-scrollbars")
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000  # a blank page is a few kilobytes
    print(f"screenshot: {shot}")


@pytest.mark.service
def test_the_page_prints_on_a4(browser, page, tmp_path):
    report = tmp_path / "report.html"
    report.write_text(page, encoding="utf-8")
    pdf = tmp_path / "report.pdf"
    done = browser(report, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    assert done.returncode == 0, done.stderr[-2000:]
    boxes = re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf.read_bytes())
    assert len(boxes) >= 2  # several pages
    # A4 is 210 × 297 mm: 595.3 × 841.9 points
    assert all(abs(float(w) - 595.3) < 1 and abs(float(h) - 841.9) < 1 for w, h in boxes), boxes


# --------------------------------------------------------------------------------------------- the intersection

def test_the_report_runs_the_intersection_attack_with_earlier_releases(published, tmp_path):
    from veil.anonymize import Mondrian
    from veil.attacks.intersection import PublishedRelease, intersection_attack

    release, manifest, release_csv, data = published
    ds = Dataset(data, quasi_identifiers=QIS, sensitive=["occupation"])
    other = Mondrian([KAnonymity(3)]).fit(ds).transform(ds)
    other.write(tmp_path / "other.csv", tmp_path / "other.json")
    report = release_report_of(release, earlier=[other], targets=data)
    expected = intersection_attack([PublishedRelease.from_release(release), other], data, sensitive="occupation")
    summary = expected.summary()
    rows = dict(report.intersection)
    assert rows["targets attacked"] == f"{summary['targets']:,}" == "2,000"
    assert rows["vulnerable targets (fewer values left than any single release leaves)"].startswith(
        f"{summary['vulnerable']:,} (")
    assert summary["vulnerable"] > 0  # a Mondrian release beside a full-domain one narrows people down
    assert 'id="figure-intersection"' in render_html(report)
    # the command line: the earlier release's manifest, the input as the targets
    out = tmp_path / "r.html"
    result = invoke("report", manifest, "--out", out, "--earlier", tmp_path / "other.json", "--original", data)
    assert result.exit_code == 0, result.output
    assert f"{summary['vulnerable']:,} (" in out.read_text(encoding="utf-8")
    refused = invoke("report", manifest, "--out", tmp_path / "s.html", "--earlier", tmp_path / "other.json")
    assert refused.exit_code == 2 and "--targets" in refused.stderr and not (tmp_path / "s.html").exists()


# --------------------------------------------------------------------------------------------- DP answers

def _dp_report(tmp_path: Path) -> tuple[str, list[Path], Path]:
    """A DP report of three seeded answers charged to one budget: the page, the answers, the budget."""
    table = tmp_path / "t.csv"
    table.write_text("age,sex\n" + "".join(f"{20 + i % 50},{'MF'[i % 2]}\n" for i in range(200)), encoding="utf-8")
    budget = tmp_path / "b.db"
    answers = []
    for i, args in enumerate([["count"], ["mean", "--columns", "age", "--bounds", "0,100"],
                              ["histogram", "--columns", "sex", "--categories", "sex=M,F"]]):
        result = invoke("dp", *args, table, "--epsilon", "0.5", "--budget-file", budget, "--budget", "2",
                        "--seed", str(i), "--json")
        assert result.exit_code == 0, result.output
        answers.append(tmp_path / f"a{i}.json")
        answers[-1].write_text(result.stdout, encoding="utf-8")
    shown = invoke("dp", "budget", budget, "--json")
    assert shown.exit_code == 0, shown.output
    budget = tmp_path / "budget.json"
    budget.write_text(shown.stdout, encoding="utf-8")
    out = tmp_path / "dp.html"
    result = invoke("dp", "report", *answers, "--budget", budget, "--out", out)
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8"), answers, budget


def test_the_dp_report_shows_each_answer_with_its_error_bar_and_the_budget(tmp_path):
    page, answers, budget = _dp_report(tmp_path)
    spent = re.search(r'<th scope="row">spent</th><td class="num">([\d.]+)</td>', page)
    left = re.search(r'<th scope="row">left</th><td class="num">([\d.]+)</td>', page)
    assert float(spent[1]) == 1.5 and float(left[1]) == 0.5
    assert page.count("<figure ") == 3 and "Not fit for release" in page  # seeded answers
    histogram = json.loads(answers[2].read_text(encoding="utf-8"))
    low, high = histogram["low"][0], histogram["high"][0]
    assert f"[{low:,}, {high:,}]" in page
    # an answer file that is not one, and an output over an input, are refused in one sentence
    refused = invoke("dp", "report", budget, "--out", tmp_path / "x.html")
    assert refused.exit_code == 2 and "is not an answer of veil dp" in refused.stderr
    refused = invoke("dp", "report", answers[0], "--out", answers[0])
    assert refused.exit_code == 2 and "is an input of this run" in refused.stderr
    assert not (tmp_path / "x.html").exists() and json.loads(answers[0].read_text(encoding="utf-8"))["query"]


@pytest.mark.service
def test_the_dp_report_loads_in_a_browser_without_errors_and_its_figures_have_size(browser, tmp_path):
    page = _dp_report(tmp_path)[0]
    found = probe(browser, page, tmp_path)
    assert found["errors"] == [] and found["resources"] == []
    assert len(found["figures"]) == page.count("<figure ") == 3
    assert all(f["width"] > 100 and f["height"] > 20 for f in found["figures"]), found["figures"]


def test_an_error_bar_must_hold_its_answer():
    from veil.report.figures import interval_chart

    with pytest.raises(ParameterError, match="low ≤ value ≤ high"):
        interval_chart("i", ["a"], [5], [6], [7], title="t", alt="a", caption="c")


def test_a_seeded_shuffle_is_called_undoable_and_the_input_order_a_risk(published):
    release, *_ = published
    ds = release.dataset
    fitted = FullDomain([KAnonymity(5)], suppression_limit=0.02, metric="loss").fit(ds)
    notes = release_report_of(fitted.transform(ds, rng=3)).notes
    assert any("recover the input's row order" in n for n in notes)
    kept = release_report_of(fitted.transform(ds, shuffle=False))
    # rows in the input's order are a warning of the summary, said once
    assert sum(w.startswith("the rows keep the input's order") for w in kept.warnings) == 1
    assert kept.summary.warnings == kept.warnings and not any("input's order" in n for n in kept.notes)
    secure = release_report_of(release)  # the default: the secure shuffle, nothing to say
    assert not any("row order" in n or "input's order" in n for n in secure.notes + secure.warnings)
