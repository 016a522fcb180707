"""The workbench's Columns page (veil.workbench.pages.columns) through Flask's test client, and its
form logic (veil.workbench.hierarchy_forms): roles into config.yaml, ARX hierarchies loaded,
hierarchies built and previewed, refusals that write nothing, escaping, CSRF."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.workbench_client import ADULT_SUBSET, field_error
from veil.config import load_config
from veil.data.encoding import encode_column
from veil.data.hierarchy import Hierarchy
from veil.workbench import hierarchy_forms as forms

AGE_HIERARCHY = Path(__file__).parents[1] / "src" / "veil" / "resources" / "adult" / "adult_hierarchy_age.csv"
CONFIG = {
    "columns": {"quasi_identifiers": ["age", "sex"], "sensitive": ["occupation"]},
    "hierarchies": {"age": {"intervals": {"widths": [5, 10, 20]}}, "sex": {"flat": {}}},
    "models": [{"k_anonymity": {"k": 5}}, {"distinct_l_diversity": {"l": 2}}],
    "suppression_limit": 0.05,
    "metric": "loss",
}


def adult(bench, config: dict | None = None):
    project = bench.workspace.create("adult", ADULT_SUBSET.read_bytes(), fmt="csv", delimiter=";")
    project.save_config(dict(CONFIG if config is None else config))
    return project


def small(bench, text: str, config: dict, name: str = "small"):
    project = bench.workspace.create(name, text.encode(), fmt="csv", delimiter=",")
    project.save_config(config)
    return project


def snapshot(project) -> dict[str, bytes]:
    """Every file of the project's configuration and hierarchies, with its bytes."""
    files = [project.config_path, *sorted(project.hierarchies_dir.glob("*"))] if project.hierarchies_dir.exists() \
        else [project.config_path]
    return {str(p): p.read_bytes() for p in files}


def roles_form(project, **roles) -> dict:
    form = {f"role-{c}": "insensitive" for c in ("sex", "age", "race", "marital-status", "education",
                                                  "native-country", "workclass", "occupation", "salary-class")}
    form.update({f"role-{c.replace('_', '-')}": r for c, r in roles.items()})
    return form


def upload(bench, project, column: str, data: bytes, filename: str = "h.csv"):
    return bench.post(f"/p/{project.name}/columns/upload?column={column}",
                      {"file": (io.BytesIO(data), filename)}, content_type="multipart/form-data")


def build(bench, project, column: str, action: str = "preview", **fields):
    return bench.post(f"/p/{project.name}/columns/builder?column={column}", {"action": action, **fields})


def element(html: str, element_id: str) -> str:
    found = re.search(rf'id="{re.escape(element_id)}"[^>]*>(.*?)</(p|table)>', html, re.DOTALL)
    assert found, f"no #{element_id}"
    return found.group(1)


# ------------------------------------------------------------------------------- the page

def test_the_page_shows_a_role_select_per_column_and_the_hierarchies(bench):
    project = adult(bench)
    html = bench.text(bench.get(f"/p/{project.name}/columns"))
    for column in ("sex", "age", "race", "occupation", "salary-class"):
        assert f'name="role-{column}"' in html
    assert re.search(r'name="role-age".*?<option value="quasi_identifier" selected', html, re.DOTALL)
    assert re.search(r'name="role-race".*?<option value="insensitive" selected', html, re.DOTALL)
    for column in ("age", "sex", "occupation"):       # quasi-identifiers and the sensitive column
        assert f'id="hierarchy-{column}"' in html and f'id="builder-{column}"' in html
        assert f'id="hierarchy-upload-{column}"' in html and f'id="upload-hierarchy-{column}"' in html
    assert 'id="hierarchy-race"' not in html
    assert "20-24" in element(html, "levels-age")
    assert element(html, "coverage-age") == "Every value of the column is covered."


def test_roles_saved_land_in_config_yaml_and_veil_loads_it(bench):
    project = adult(bench, {**CONFIG, "orders": {"sex": ["Male", "Female"]}})
    response = bench.post(f"/p/{project.name}/columns/roles",
                          roles_form(project, age="quasi_identifier", race="quasi_identifier",
                                     occupation="sensitive", salary_class="identifying"))
    assert response.status_code == 303
    saved = project.config()
    assert saved["columns"]["quasi_identifiers"] == ["age", "race"]
    assert saved["columns"]["sensitive"] == ["occupation"]
    assert saved["columns"]["identifying"] == ["salary-class"]
    # everything else kept; the new quasi-identifier gets veil init's guess; sex's hierarchy goes with its role
    assert saved["hierarchies"] == {"age": {"intervals": {"widths": [5, 10, 20]}}, "race": {"flat": {}}}
    assert "orders" not in saved
    assert saved["models"] == CONFIG["models"] and saved["suppression_limit"] == 0.05
    loaded = load_config(project.config_path)
    assert loaded.quasi_identifiers == ("age", "race") and loaded.identifying == ("salary-class",)
    html = bench.text(bench.get(f"/p/{project.name}/columns"))
    assert re.search(r'name="role-salary-class".*?<option value="identifying" selected', html, re.DOTALL)


def test_a_new_quasi_identifier_gets_the_hierarchy_veil_init_guesses(bench):
    text = "zip,visit,n\n" + "".join(f"{13000 + i},2024-0{1 + i % 9}-1{i % 9},{i}\n" for i in range(40))
    project = small(bench, text, {"columns": {"quasi_identifiers": ["n"]}, "hierarchies": {"n": {"flat": {}}},
                                  "models": [{"k_anonymity": {"k": 2}}]})
    response = bench.post(f"/p/{project.name}/columns/roles", {"role-zip": "quasi_identifier",
                                                               "role-visit": "quasi_identifier",
                                                               "role-n": "quasi_identifier"})
    assert response.status_code == 303
    hierarchies = project.config()["hierarchies"]
    assert hierarchies["zip"] == {"masking": {}}
    assert hierarchies["visit"] == {"dates": {"units": ["month", "year"]}}
    assert hierarchies["n"] == {"flat": {}}
    load_config(project.config_path)


def test_a_weight_must_be_one_positive_numeric_column(bench):
    text = "age,w,v\n" + "".join(f"{20 + i},{i},{1.5 + i}\n" for i in range(10))   # w holds a 0
    project = small(bench, text, {"columns": {"quasi_identifiers": ["age"]}, "hierarchies": {"age": {"flat": {}}},
                                  "models": [{"k_anonymity": {"k": 2}}]})
    before = snapshot(project)
    refused = bench.post(f"/p/{project.name}/columns/roles",
                         {"role-age": "quasi_identifier", "role-w": "weight", "role-v": "insensitive"})
    assert refused.status_code == 400
    message = field_error(bench.text(refused), "role-w")
    assert message and "weight column" in message and "1 row" in message
    two = bench.post(f"/p/{project.name}/columns/roles",
                     {"role-age": "quasi_identifier", "role-w": "weight", "role-v": "weight"})
    assert two.status_code == 400 and "only one column" in field_error(bench.text(two), "role-v")
    assert snapshot(project) == before
    saved = bench.post(f"/p/{project.name}/columns/roles",
                       {"role-age": "quasi_identifier", "role-w": "insensitive", "role-v": "weight"})
    assert saved.status_code == 303
    assert project.config()["columns"]["weight"] == "v"
    assert load_config(project.config_path).weight == "v"


def test_roles_without_a_quasi_identifier_or_that_veil_refuses_write_nothing(bench):
    project = adult(bench)
    before = snapshot(project)
    none = bench.post(f"/p/{project.name}/columns/roles", roles_form(project, occupation="sensitive"))
    assert none.status_code == 400 and "at least one column as a quasi-identifier" in bench.text(none)
    # l-diversity needs a sensitive column: veil's parser refuses, and its sentence is shown
    parser = bench.post(f"/p/{project.name}/columns/roles", roles_form(project, age="quasi_identifier"))
    assert parser.status_code == 400 and "sensitive" in bench.text(parser)
    assert ".config-check" not in bench.text(parser)
    assert snapshot(project) == before
    assert not list(project.root.glob(".config-check*"))


# ------------------------------------------------------------------------------- loading a file

def test_an_arx_hierarchy_uploads_and_is_referenced(bench):
    project = adult(bench)
    response = upload(bench, project, "age", AGE_HIERARCHY.read_bytes(), "../../evil/adult_hierarchy_age.csv")
    assert response.status_code == 303
    assert project.config()["hierarchies"]["age"] == {"file": "hierarchies/age.csv"}
    saved = project.hierarchies_dir / "age.csv"
    assert saved.read_bytes() == AGE_HIERARCHY.read_bytes()
    assert [p.name for p in project.hierarchies_dir.iterdir()] == ["age.csv"]
    assert not list(bench.data_dir.parent.rglob("evil*")) and not list(bench.data_dir.parent.rglob("adult_hier*"))
    spec = load_config(project.config_path).hierarchies["age"]
    assert spec.kind == "file" and spec.path == saved.resolve()
    html = bench.text(bench.get(f"/p/{project.name}/columns"))
    assert "hierarchies/age.csv" in html and "0-19" in element(html, "levels-age")


def test_a_hierarchy_that_misses_a_value_is_refused_and_nothing_is_written(bench):
    project = adult(bench)
    before = snapshot(project)
    rows = AGE_HIERARCHY.read_text().splitlines(keepends=True)
    missing_39 = "".join(r for r in rows if not r.startswith("39;")).encode()
    response = upload(bench, project, "age", missing_39)
    assert response.status_code == 400
    coverage = element(bench.text(response), "coverage-age")
    assert coverage.startswith("1 value of the column is not covered: &#39;39&#39;")
    grouped = build(bench, project, "sex", "save", builder="grouping", groups="M: Male\nX: <b>other</b>")
    assert grouped.status_code == 400
    assert "1 value of the column is not covered: &#39;Female&#39;" in element(bench.text(grouped), "coverage-sex")
    assert snapshot(project) == before and not project.hierarchies_dir.exists()


@pytest.mark.parametrize("data, words", [
    (b"", "choose an ARX hierarchy file"),
    (b"\xff\xfe\x00bad", "not UTF-8"),
    (b"1;a;*\n1;b;*\n", "twice"),
    (b"1;a;*\n2;a\n", "row 2 has 2 values"),
])
def test_an_unparsable_file_is_refused_next_to_the_field(bench, data, words):
    project = adult(bench)
    before = snapshot(project)
    response = upload(bench, project, "age", data)
    assert response.status_code == 400
    message = field_error(bench.text(response), "file")
    assert message and words in message and "/tmp" not in message and "veil-hierarchy" not in message
    assert snapshot(project) == before


def test_an_upload_over_the_limit_is_refused_on_the_page(tmp_path):
    from tests.workbench_client import Bench

    bench = Bench(tmp_path / "data", max_upload=2048)
    try:
        project = adult(bench)
        before = snapshot(project)
        response = upload(bench, project, "age", b"1;*\n" * 2000)
        assert response.status_code == 413
        assert "upload limit" in field_error(bench.text(response), "file")
        assert snapshot(project) == before
    finally:
        bench.jobs.stop_all()


# ------------------------------------------------------------------------------- builders

def test_builders_preview_their_levels_and_coverage_without_writing(bench):
    project = adult(bench)
    before = snapshot(project)
    intervals = build(bench, project, "age", builder="intervals", widths="10, 20", start="0")
    html = bench.text(intervals)
    assert intervals.status_code == 200
    assert "10-19" in element(html, "levels-age") and "0-19" in element(html, "levels-age")
    assert element(html, "coverage-age") == "Every value of the column is covered."
    assert 'value="10, 20"' in html   # the form keeps what was typed
    masking = bench.text(build(bench, project, "sex", builder="masking", char="#"))
    assert "Mal#" in element(masking, "levels-sex")
    flat = bench.text(build(bench, project, "occupation", builder="flat"))
    levels = element(flat, "levels-occupation")
    assert re.search(r'<td class="num">1</td><td class="num">1</td><td>\*</td>', levels)
    grouping = bench.text(build(bench, project, "sex", builder="grouping",
                                groups="people: Male\n\nall: people"))
    assert "1 value of the column is not covered: &#39;Female&#39;" in element(grouping, "coverage-sex")
    assert snapshot(project) == before


def test_dates_build_and_save(bench):
    text = "day,n\n" + "".join(f"2024-0{1 + i % 9}-1{i % 9},{i}\n" for i in range(30))
    project = small(bench, text, {"columns": {"quasi_identifiers": ["day"]}, "hierarchies": {"day": {"flat": {}}},
                                  "models": [{"k_anonymity": {"k": 2}}]})
    preview = bench.text(build(bench, project, "day", builder="dates", units="quarter, year"))
    assert "2024-Q1" in element(preview, "levels-day")
    saved = build(bench, project, "day", "save", builder="dates", units="quarter, year", format="%Y-%m-%d")
    assert saved.status_code == 303
    assert project.config()["hierarchies"]["day"] == {"dates": {"units": ["quarter", "year"], "format": "%Y-%m-%d"}}
    assert load_config(project.config_path).hierarchies["day"].options["units"] == ("quarter", "year")
    wrong = build(bench, project, "day", "save", builder="dates", units="year, month")
    assert wrong.status_code == 400 and "fine to coarse" in field_error(bench.text(wrong), "units")


def test_a_grouping_is_saved_as_an_arx_file_and_an_interval_builder_in_the_config(bench):
    project = adult(bench)
    groups = "male: Male\nfemale: Female\n\nany: male, female"
    assert build(bench, project, "sex", "save", builder="grouping", groups=groups).status_code == 303
    assert project.config()["hierarchies"]["sex"] == {"file": "hierarchies/sex.csv"}
    assert Hierarchy.read_csv(project.hierarchies_dir / "sex.csv").rows() == [["Male", "male", "any"],
                                                                              ["Female", "female", "any"]]
    assert build(bench, project, "age", "save", builder="intervals", widths="5,10").status_code == 303
    assert project.config()["hierarchies"]["age"] == {"intervals": {"widths": [5, 10]}}
    loaded = load_config(project.config_path)
    assert loaded.hierarchies["sex"].kind == "file" and loaded.hierarchies["age"].kind == "intervals"


@pytest.mark.parametrize("widths, words", [("5,12", "not a multiple of 5"), ("abc", "not a number"),
                                           ("-5", "not a positive number"), ("", "give the band widths")])
def test_bad_widths_are_refused_next_to_the_field(bench, widths, words):
    project = adult(bench)
    before = snapshot(project)
    response = build(bench, project, "age", "save", builder="intervals", widths=widths)
    assert response.status_code == 400
    assert words in field_error(bench.text(response), "widths")
    assert snapshot(project) == before


def test_an_interval_hierarchy_of_text_is_refused(bench):
    project = adult(bench)
    response = build(bench, project, "sex", "save", builder="intervals", widths="5")
    assert response.status_code == 400 and "needs numbers" in field_error(bench.text(response), "widths")


def test_a_column_without_a_hierarchy_role_has_no_hierarchy_form(bench):
    project = adult(bench)
    before = snapshot(project)
    response = build(bench, project, "race", "save", builder="flat")
    assert response.status_code == 400 and snapshot(project) == before
    assert build(bench, project, "nope", "save", builder="flat").status_code == 400


# ------------------------------------------------------------------------------- security

def test_html_in_a_column_name_or_value_is_escaped(bench):
    text = "<b>col</b>,age\n" + "".join(f"<script>alert({i % 2})</script>,{20 + i}\n" for i in range(6))
    config = {"columns": {"quasi_identifiers": ["<b>col</b>", "age"]},
              "hierarchies": {"<b>col</b>": {"flat": {}}, "age": {"flat": {}}}, "models": [{"k_anonymity": {"k": 2}}]}
    project = small(bench, text, config)
    html = bench.text(bench.get(f"/p/{project.name}/columns"))
    assert "<script>alert" not in html and "<b>col</b>" not in html
    assert "&lt;script&gt;alert(0)&lt;/script&gt;" in html and 'name="role-&lt;b&gt;col&lt;/b&gt;"' in html
    grouped = build(bench, project, "<b>col</b>", builder="grouping", groups='"<i>g</i>": "<script>alert(0)</script>"')
    html = bench.text(grouped)
    assert "<script>alert" not in html and "<i>g</i>" not in html and "&lt;i&gt;g&lt;/i&gt;" in html
    saved = build(bench, project, "<b>col</b>", "save", builder="grouping",
                  groups="g: <script>alert(0)</script>, <script>alert(1)</script>")
    assert saved.status_code == 303
    file = project.config()["hierarchies"]["<b>col</b>"]["file"]
    assert re.fullmatch(r"hierarchies/column-[0-9a-f]{16}\.csv", file)
    assert (project.root / file).is_file()


def test_a_form_without_its_csrf_token_is_refused(bench):
    project = adult(bench)
    before = snapshot(project)
    assert bench.post(f"/p/{project.name}/columns/roles", roles_form(project, age="quasi_identifier"),
                      csrf=False).status_code == 403
    assert bench.post(f"/p/{project.name}/columns/builder?column=age", {"action": "save", "builder": "flat"},
                      csrf=False).status_code == 403
    no_token = bench.client.post(f"/p/{project.name}/columns/upload?column=age",
                                 data={"file": (io.BytesIO(AGE_HIERARCHY.read_bytes()), "h.csv")},
                                 content_type="multipart/form-data")
    assert no_token.status_code == 403
    assert snapshot(project) == before


# ------------------------------------------------------------------------------- the form logic

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(_TEXT, st.lists(_TEXT, min_size=1, max_size=4), min_size=1, max_size=4),
                min_size=1, max_size=3))
def test_the_groups_text_round_trips(levels):
    assert forms.parse_groups(forms.format_groups(levels)) == levels


@pytest.mark.parametrize("text, words", [
    ("young 17, 18", "no ':'"), (": 17", "no group name"), ("young:", "no members"), ("young: 17,,18", "empty"),
    ('young: "17', "does not close"), ('young: "17" x', "after a closing quote"), ("a: 1\na: 2", "named twice"),
    ("", "give the groups"), ('yo"ung: 1', "quote inside")])
def test_a_groups_text_that_cannot_be_read_says_which_line(text, words):
    with pytest.raises(forms.FieldError) as info:
        forms.parse_groups(text)
    assert info.value.field == "groups" and words in str(info.value)


def test_coverage_matches_numbers_as_veil_aligns_them_and_shows_at_most_five():
    column = encode_column("age", np.array([25, 30, 31, 32, 33, 34, 35, 36]))
    hierarchy = Hierarchy([["25.0", "*"], ["30", "*"]])
    found = forms.coverage(hierarchy, column)
    assert found.uncovered == 6 and found.examples == ("31", "32", "33", "34", "35")
    assert found.sentence() == ("6 values of the column are not covered: '31', '32', '33', '34', '35' and 1 more; "
                                "add a row (or a group) for each.")
    with pytest.raises(forms.FieldError) as info:
        forms.check_covers(hierarchy, column)
    assert info.value.field == "coverage"
    covered = Hierarchy([[str(v), "*"] for v in (25, 30, 31, 32, 33, 34, 35, 36, 99)])
    assert forms.check_covers(covered, column).covered
    assert [level.distinct for level in forms.levels(covered, column)] == [8, 1]


@pytest.mark.parametrize("column", ["../x", "a/b", "..", ".hidden", "a\\b", "x" * 80, "a b", "<b>"])
def test_a_column_name_never_becomes_a_path(column):
    name = forms.file_name(column)
    assert re.fullmatch(r"column-[0-9a-f]{16}\.csv", name)
    assert forms.file_name("age") == "age.csv" and forms.file_name("marital-status") == "marital-status.csv"


def test_a_builder_form_round_trips_through_the_configuration():
    for form in ({"builder": "intervals", "widths": "5,10,20", "start": "0"}, {"builder": "masking", "char": "#"},
                 {"builder": "dates", "units": "month, year", "format": "%d/%m/%Y"}, {"builder": "flat"}):
        kind, options = forms.builder_entry(form)
        entry = yaml.safe_load(yaml.safe_dump({kind: options}))
        assert forms.builder_form(entry) == form
        assert forms.read_entry(entry) == (kind, options)


def test_a_text_column_s_order_is_saved_only_when_it_lists_every_value(bench):
    project = adult(bench)
    before = snapshot(project)
    refused = bench.post(f"/p/{project.name}/columns/order?column=sex", {"order": "Male\n"})
    assert refused.status_code == 400
    assert "1 value of the column is not in the order: &#39;Female&#39;" in field_error(bench.text(refused), "order")
    twice = bench.post(f"/p/{project.name}/columns/order?column=sex", {"order": "Male\nMale\nFemale"})
    assert twice.status_code == 400 and "twice" in field_error(bench.text(twice), "order")
    assert snapshot(project) == before
    assert bench.post(f"/p/{project.name}/columns/order?column=sex", {"order": "Male\r\nFemale\r\n"}).status_code == 303
    assert project.config()["orders"] == {"sex": ["Male", "Female"]}
    assert load_config(project.config_path).orders == {"sex": ("Male", "Female")}
    assert "text, ordered" in bench.text(bench.get(f"/p/{project.name}/columns"))
    assert bench.post(f"/p/{project.name}/columns/order?column=sex", {"order": ""}).status_code == 303
    assert "orders" not in project.config()


def test_a_loaded_file_can_be_edited_as_groups(bench):
    project = adult(bench)
    assert upload(bench, project, "age", AGE_HIERARCHY.read_bytes()).status_code == 303
    html = bench.text(bench.get(f"/p/{project.name}/columns"))
    groups = re.search(r'<textarea name="groups"[^>]*>(.*?)</textarea>', html[html.index('id="builder-age"'):],
                       re.DOTALL).group(1)
    assert groups.startswith("0-4: 1, 2, 3, 4, 5\n")
    again = build(bench, project, "age", "save", builder="grouping", groups=groups)
    assert again.status_code == 303
    assert (project.hierarchies_dir / "age.csv").read_bytes() == AGE_HIERARCHY.read_bytes()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=20, unique=True), st.integers(1, 5))
def test_groups_of_a_hierarchy_build_it_back(values, size):
    from veil.data import builders

    leaves = [str(v) for v in values]
    first = {f"g{i}": leaves[i:i + size] for i in range(0, len(leaves), size)}
    hierarchy = builders.grouping(leaves, [first])
    assert builders.grouping(leaves, forms.groups_of(hierarchy)).rows() == hierarchy.rows()


@pytest.mark.parametrize("text", ["columns: [\n", "- a\n- b\n", "columns: {quasi_identifiers: [age]}\nhierarchies: [a]\n"])
def test_a_config_yaml_the_page_cannot_read_is_named_not_a_crash(bench, text):
    project = adult(bench)
    project.config_path.write_text(text)
    response = bench.get(f"/p/{project.name}/columns")
    assert response.status_code == 400 and "config.yaml" in bench.text(response)
    assert bench.post(f"/p/{project.name}/columns/roles", roles_form(project, age="quasi_identifier")).status_code == 400
    assert project.config_path.read_text() == text


def test_a_missing_project_is_not_found(bench):
    assert bench.get("/p/nope/columns").status_code == 404
    assert bench.post("/p/nope/columns/roles", {}).status_code == 404
    assert bench.get("/p/..%2f..%2fetc/columns").status_code == 404


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.sampled_from([1, 2, 5, 0.5, 0.1]),
       st.one_of(st.none(), st.integers(-100, 100)))
def test_an_interval_form_round_trips_through_config_yaml(multipliers, base, start):
    widths = [base * int(np.prod(multipliers[:i + 1])) for i in range(len(multipliers))]
    form = {"builder": "intervals", "widths": ",".join(f"{w:g}" for w in widths)}
    if start is not None:
        form["start"] = str(start)
    kind, options = forms.builder_entry(form)
    entry = yaml.safe_load(yaml.safe_dump({kind: options}))
    assert forms.builder_entry(forms.builder_form(entry)) == (kind, options)
    assert [float(w) for w in options["widths"]] == pytest.approx(widths)


def test_a_column_named_like_a_number_keeps_its_hierarchy(bench):
    text = "1990,age\n" + "".join(f"{i % 3},{20 + i}\n" for i in range(9))
    project = small(bench, text, {})
    project.config_path.write_text("data: table.csv\ndelimiter: ','\ncolumns: {quasi_identifiers: [1990, age]}\n"
                                   "hierarchies: {1990: {masking: {}}, age: {flat: {}}}\n"
                                   "models: [{k_anonymity: {k: 2}}]\n")
    load_config(project.config_path)
    html = bench.text(bench.get(f"/p/{project.name}/columns"))
    assert 'id="hierarchy-1990"' in html and "{masking: {}}" in html
    assert bench.post(f"/p/{project.name}/columns/roles",
                      {"role-1990": "quasi_identifier", "role-age": "quasi_identifier"}).status_code == 303
    assert project.config()["hierarchies"]["1990"] == {"masking": {}}
    assert load_config(project.config_path).hierarchies["1990"].kind == "masking"
