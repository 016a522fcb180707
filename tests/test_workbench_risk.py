"""The workbench's Risk page (veil.workbench.pages.risk) and its figures (veil.workbench.figures),
through Flask's test client, on tables whose classes are counted by hand."""
from __future__ import annotations

import base64
import csv
import io
import re
import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.workbench_client import ADULT_SUBSET, field_error
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.errors import ParameterError
from veil.workbench import figures

# (age, zip) classes of sizes 3, 2 and 1: k = 1; distinct ℓ per class 2, 2, 1: ℓ = 1.
ROWS = [("30", "1000", "flu"), ("30", "1000", "flu"), ("30", "1000", "cold"),
        ("40", "2000", "flu"), ("40", "2000", "hiv"),
        ("50", "3000", "cold")]
HEADER = ("age", "zip", "disease")


def make(bench, name, rows=ROWS, header=HEADER, *, models=None, sensitive=("disease",), weight=None, config=None):
    """A project over ``rows`` (;-separated) and a configuration naming its roles and models."""
    text = io.StringIO()
    writer = csv.writer(text, delimiter=";", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    project = bench.workspace.create(name, text.getvalue().encode(), fmt="csv", delimiter=";")
    if config is None:
        columns = {"quasi_identifiers": [c for c in header if c not in sensitive and c != weight],
                   "sensitive": list(sensitive)}
        if weight:
            columns["weight"] = weight
        config = {"columns": columns, "hierarchies": {q: {"flat": {}} for q in columns["quasi_identifiers"]},
                  "models": models if models is not None else [{"k_anonymity": {"k": 2}},
                                                               {"distinct_l_diversity": {"l": 1}}]}
    project.save_config(config)
    return project


def model_rows(html: str) -> list[list[str]]:
    """The cells of #models-check's body, tags stripped."""
    body = re.search(r'<table id="models-check">.*?<tbody>(.*?)</tbody>', html, re.DOTALL).group(1)
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.DOTALL)]


def attacker_rows(html: str) -> dict[str, list[str]]:
    body = re.search(r'<table id="attacker-risk">.*?<tbody>(.*?)</tbody>', html, re.DOTALL).group(1)
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL) for row in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL)]
    return {row[0]: row[1:] for row in rows}


def image_of(html: str, element: str) -> tuple[str, ET.Element]:
    """The ``img#element``'s data address and its decoded SVG."""
    found = re.search(rf'<img id="{element}"[^>]* src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
    assert found, f"no img#{element} with an SVG data address"
    svg = base64.b64decode(found.group(1), validate=True).decode("utf-8")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return found.group(1), root


def test_the_page_shows_each_models_level_and_verdict_counted_by_hand(bench):
    make(bench, "hand")
    response = bench.get("/p/hand/risk")
    assert response.status_code == 200
    html = bench.text(response)
    rows = model_rows(html)
    assert rows[0][0] == "k-anonymity" and rows[0][2] == "k ≥ 2" and rows[0][3] == "k = 1"
    assert rows[0][4].startswith("fail") and "1 classes, 1 records" in rows[0][4]   # the singleton (50, 3000)
    assert rows[1][0] == "distinct ℓ-diversity" and rows[1][1] == "disease" and rows[1][2] == "ℓ ≥ 1"
    assert rows[1][3] == "ℓ = 1" and rows[1][4] == "pass"
    assert "6 records in 3 equivalence classes" in html
    # prosecutor: highest 1/1, average 3 classes / 6 records; every record's risk (1/3, 1/2, 1) is above 0.2
    risk = attacker_rows(html)
    assert risk["prosecutor"] == ["1", "0.5", "100.00%"] and risk["marketer"][1] == "0.5"
    assert "journalist" not in risk
    assert "1 records are in classes smaller than k = 2." in html


def test_a_table_without_the_singleton_passes(bench):
    make(bench, "two", ROWS[:5])
    rows = model_rows(bench.text(bench.get("/p/two/risk")))
    assert rows[0][3] == "k = 2" and rows[0][4] == "pass"


def test_the_risk_threshold_counts_the_records_above_it(bench):
    make(bench, "hand")
    html = bench.text(bench.get("/p/hand/risk?risk_threshold=0.4"))
    # risks 1/3 (3 records), 1/2 (2) and 1 (1): those above 0.4 are 3 of 6
    assert attacker_rows(html)["prosecutor"][2] == "50.00%"
    assert 'value="0.4"' in html


def test_k_matches_the_smallest_class_of_the_adult_subset(bench):
    header, *rows = [line.split(";") for line in ADULT_SUBSET.read_text().splitlines()]
    quasi = ["sex", "age", "race", "marital-status"]
    make(bench, "adult", rows, header, sensitive=("salary-class",), models=[{"k_anonymity": {"k": 3}}],
         config={"columns": {"quasi_identifiers": quasi, "sensitive": ["salary-class"]},
                 "hierarchies": {q: {"flat": {}} for q in quasi}, "models": [{"k_anonymity": {"k": 3}}]})
    sizes = Counter(tuple(row[header.index(q)] for q in quasi) for row in rows)
    smallest = min(sizes.values())
    below = sum(size for size in sizes.values() if size < 3)
    html = bench.text(bench.get("/p/adult/risk"))
    row = model_rows(html)[0]
    assert row[3] == f"k = {smallest}"
    assert row[4] == ("pass" if smallest >= 3 else f"fail {sum(s < 3 for s in sizes.values()):,} classes, "
                                                   f"{below:,} records")
    assert f"{len(rows):,} records in {len(sizes):,} equivalence classes" in html


def test_the_figures_are_images_that_depend_on_the_data(bench):
    make(bench, "a")
    make(bench, "b", ROWS[:5])
    first, second = bench.text(bench.get("/p/a/risk")), bench.text(bench.get("/p/b/risk"))
    for html in (first, second):
        for element in ("class-sizes", "record-risks"):
            image_of(html, element)
        assert "<svg" not in html and "style=" not in html
    assert image_of(first, "class-sizes")[0] != image_of(second, "class-sizes")[0]
    assert image_of(first, "record-risks")[0] != image_of(second, "record-risks")[0]


def test_html_in_column_names_and_cells_is_escaped(bench):
    header = ("<b>age</b>", "zip", "<i>disease</i>")
    rows = [(age, z, "<script>alert(1)</script>" if d == "flu" else d) for age, z, d in ROWS]
    make(bench, "html", rows, header, sensitive=("<i>disease</i>",))
    html = bench.text(bench.get("/p/html/risk"))
    assert "<b>age</b>" not in html and "<i>disease</i>" not in html and "<script>alert" not in html
    assert "&lt;b&gt;age&lt;/b&gt;" in html and "&lt;i&gt;disease&lt;/i&gt;" in html


def test_a_bad_population_size_is_refused_next_to_its_field(bench):
    project = make(bench, "hand")
    before = sorted(p.name for p in project.root.rglob("*"))
    for typed in ("abc", "5", "6.5", "-6", "1e6", str(10 ** 11), "9" * 5000, "６"):
        response = bench.get("/p/hand/risk", query_string={"population_size": typed})
        assert response.status_code == 400, typed
        message = field_error(bench.text(response), "population_size")
        assert message and ("whole number" in message or "at least the table&#39;s 6 records" in message), typed
        assert 'id="models-check"' not in bench.text(response)
    assert sorted(p.name for p in project.root.rglob("*")) == before
    assert bench.get("/p/hand/risk", query_string={"population_size": "6"}).status_code == 200


def test_other_values_out_of_range_are_refused(bench):
    make(bench, "hand")
    for field, typed in [("risk_threshold", "0"), ("risk_threshold", "1.5"), ("risk_threshold", "nan"),
                         ("risk_threshold", "x"), ("estimator", "<b>guess</b>")]:
        response = bench.get("/p/hand/risk", query_string={field: typed})
        assert response.status_code == 400 and field_error(bench.text(response), field), (field, typed)
        assert "<b>guess</b>" not in bench.text(response)


def test_a_population_size_estimates_population_uniqueness(bench):
    make(bench, "hand")
    plain = bench.text(bench.get("/p/hand/risk"))
    assert 'id="population-uniqueness"' not in plain
    response = bench.get("/p/hand/risk", query_string={"population_size": "1,000", "estimator": "zayatz"})
    assert response.status_code == 200
    found = re.search(r'id="population-uniqueness">(.*?)</p>', bench.text(response), re.DOTALL).group(1)
    assert "zayatz" in found and "population of 1,000" in found
    assert "16.6667% of the records are unique in the sample" in found   # 1 of 6


def test_a_population_uniqueness_model_gives_the_population_size(bench):
    make(bench, "hand", models=[{"population_uniqueness": {"share": 0.5, "population_size": 600}}])
    html = bench.text(bench.get("/p/hand/risk"))
    assert 'value="600"' in html and "population of 600" in html
    row = model_rows(html)[0]
    assert row[0] == "population uniqueness" and "(population of 600, dankar)" in row[2]


def test_a_weight_column_shows_the_benedetti_franconi_risk(bench):
    # weights of 1: each group is its own population, so a record's risk is 1/(its class's size)
    make(bench, "w1", [r + ("1",) for r in ROWS], HEADER + ("w",), weight="w")
    make(bench, "w9", [r + ("9",) for r in ROWS], HEADER + ("w",), weight="w")
    ones = bench.text(bench.get("/p/w1/risk"))
    cells = re.search(r'<table id="sample-risk">.*?<tbody>(.*?)</tbody>', ones, re.DOTALL).group(1)
    values = re.findall(r'<td class="num">(.*?)</td>', cells)
    assert values == ["1", "0.5", "100.00%", "3"]   # highest 1, mean (3 × 1/3 + 2 × 1/2 + 1)/6, 3 expected
    assert "(individual)" in image_of(ones, "record-risks")[1].findtext("{http://www.w3.org/2000/svg}title")
    nines = bench.text(bench.get("/p/w9/risk"))
    highest = float(re.search(r'<table id="sample-risk">.*?<td class="num">(.*?)</td>', nines, re.DOTALL).group(1))
    assert 0 < highest < 1   # a population nine times the sample: no record is certainly re-identified
    assert image_of(ones, "record-risks")[0] != image_of(nines, "record-risks")[0]


def test_a_presence_models_population_gives_the_journalist_risk(bench):
    project = make(bench, "pop")
    (project.root / "population.csv").write_text("age;zip\n" + "".join(f"{a};{z}\n" for a, z, _ in ROWS * 2))
    project.save_config({"columns": {"quasi_identifiers": ["age", "zip"], "sensitive": ["disease"]},
                         "hierarchies": {"age": {"flat": {}}, "zip": {"flat": {}}},
                         "models": [{"k_map": {"population": "population.csv", "k": 2}}]})
    html = bench.text(bench.get("/p/pop/risk"))
    # the population doubles every class: 6, 4 and 2 people, so every class matches at least 2
    assert model_rows(html)[0][:5] == ["k-map", "—", "k ≥ 2", "k = 2", "pass"]
    assert attacker_rows(html)["journalist"][0] == "0.5"


def test_a_model_that_does_not_apply_says_why(bench):
    make(bench, "text", models=[{"k_anonymity": {"k": 2}}, {"t_closeness": {"t": 0.2, "distance": "ordered"}}])
    response = bench.get("/p/text/risk")
    assert response.status_code == 200
    row = model_rows(bench.text(response))[1]
    assert row[0] == "t-closeness, ordered EMD" and row[2] == "t ≤ 0.2" and row[3] == ""
    assert row[4].startswith("does not apply") and "is text" in row[4]


def test_a_configuration_that_does_not_load_is_shown_with_its_sentence(bench):
    project = make(bench, "bad")
    project.config_path.write_text("data: table.csv\ncolumns: {quasi_identifiers: [age]}\nmodels:\n"
                                   "  - k_anonimity: {k: 2}\n")
    response = bench.get("/p/bad/risk")
    html = bench.text(response)
    assert response.status_code == 200
    message = re.search(r'id="config-error">\s*<p class="error" role="alert">(.*?)</p>', html, re.DOTALL).group(1)
    assert message.startswith("config.yaml, line 4:") and "k_anonimity" in message
    assert 'id="models-check"' not in html
    if "columns.page" in bench.app.view_functions:
        assert 'id="fix-columns" href="/p/bad/columns"' in html


def test_a_table_that_cannot_be_measured_is_named_in_its_project(bench):
    make(bench, "empty", [])
    html = bench.text(bench.get("/p/empty/risk"))
    message = re.search(r'id="config-error">\s*<p class="error" role="alert">(.*?)</p>', html, re.DOTALL).group(1)
    assert "&#39;table.csv&#39; has a header but no records" in message and str(bench.data_dir) not in message


def test_a_missing_project_is_404(bench):
    assert bench.get("/p/nothing/risk").status_code == 404


# ---------------------------------------------------------------------------------- figures

def classes_of(rows, header=HEADER):
    import pyarrow as pa

    table = pa.table({name: [row[i] for row in rows] for i, name in enumerate(header)})
    return EquivalenceClasses.from_dataset(Dataset(table, quasi_identifiers=["age", "zip"], sensitive=["disease"]))


def svg_of(image: figures.Image) -> ET.Element:
    assert image.src.startswith("data:image/svg+xml;base64,")
    return ET.fromstring(base64.b64decode(image.src.split(",", 1)[1], validate=True))


def test_the_class_size_figure_counts_the_classes():
    image = figures.class_sizes(classes_of(ROWS))
    svg_of(image)
    assert "3 classes hold 6 records; the smallest holds 1" in image.alt
    assert "size 1: 1 classes, 1 records; size 2: 1 classes, 2 records; size 3: 1 classes, 3 records" in image.alt
    assert figures.class_sizes(classes_of(ROWS[:5])).src != image.src


def test_the_prosecutor_figure_marks_the_records_above_the_threshold():
    image = figures.prosecutor_risks(classes_of(ROWS), 0.4)
    svg_of(image)
    assert "50.00% of the records have a risk above the threshold 0.4" in image.alt
    assert figures.prosecutor_risks(classes_of(ROWS), 0.6).src != image.src


def test_the_individual_risk_figure_weighs_rows_by_their_records():
    assert "66.67% of the records" in figures.individual_risks([0.1, 0.3, 0.5, np.nan], 0.2).alt
    weighed = figures.individual_risks([0.1, 0.3, 0.5, np.nan], 0.2, records=[1, 2, 1, 5])
    assert "75.00% of the records" in weighed.alt and "the highest is 0.5" in weighed.alt
    svg_of(weighed)


def curve(image: figures.Image) -> list[tuple[float, float]]:
    line = svg_of(image).find(".//{http://www.w3.org/2000/svg}polyline")
    return [tuple(map(float, point.split(","))) for point in line.get("points").split()]


def test_the_individual_risk_curve_steps_down_at_each_risk():
    points = curve(figures.individual_risks([0.25, 0.5, 0.5, 1.0], 0.2))
    heights = sorted({y for _, y in points})
    # the shares above each risk: 1 (from 0), 3/4 (from 0.25), 1/4 (from 0.5), 0 (from 1): four levels
    assert len(heights) == 4


def test_many_distinct_risks_make_a_bounded_curve():
    risks = np.random.default_rng(1).random(20_000)
    image = figures.individual_risks(risks, 0.5)
    assert len(curve(image)) <= 2 * figures.CURVE_POINTS + 4


@pytest.mark.parametrize("threshold", [0, -0.1, 1.5, float("nan")])
def test_a_figure_refuses_a_threshold_out_of_range(threshold):
    with pytest.raises(ParameterError):
        figures.prosecutor_risks(classes_of(ROWS), threshold)
    with pytest.raises(ParameterError):
        figures.individual_risks([0.5], threshold)


def test_the_individual_risk_figure_refuses_what_is_no_risk():
    with pytest.raises(ParameterError):
        figures.individual_risks([1.5], 0.2)
    with pytest.raises(ParameterError):
        figures.individual_risks([0.5, 0.2], 0.2, records=[1])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 5)), min_size=1, max_size=40),
       st.floats(0.01, 1))
def test_the_individual_risk_curve_falls_and_its_share_is_the_records_above(pairs, threshold):
    risks = [r for r, _ in pairs]
    records = [n for _, n in pairs]
    image = figures.individual_risks(risks, threshold, records=records)
    total = sum(records)
    share = sum(n for r, n in pairs if r > threshold) / total if total else 0.0
    assert f"{share:.2%} of the records have a risk above" in image.alt
    heights = [y for _, y in curve(image)]   # SVG units: a larger y is a smaller share
    assert heights == sorted(heights)
