"""The workbench's Anonymize page and its task: the form ⇄ configuration mapping (a round trip
under hypothesis), refused fields (nothing written), a run that makes a release satisfying its
models (checked again on the released file), a refused run, a cancelled run and a worker killed
mid-search (no release either way), while the server keeps answering."""
from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.workbench_client import ADULT_SUBSET, field_error
from veil.workbench.model_forms import (ALGORITHMS, FormErrors, describe_models, form_values, kept_models,
                                        metric_names, read_form)

QIS = ["age", "sex", "race"]
CONFIG = {"columns": {"quasi_identifiers": QIS, "sensitive": ["occupation"]},
          "hierarchies": {"age": {"intervals": {"widths": [5, 10, 20, 40]}}, "sex": {"flat": {}},
                          "race": {"flat": {}}},
          "models": [{"k_anonymity": {"k": 2}}], "suppression_limit": 0.0}
SEARCH_KEYS = {"algorithm", "metric", "quasi_identifiers", "heights", "chosen", "nodes", "truncated", "models",
               "utility", "suppressed", "records", "seconds"}
RELEASE_FILES = {"release.csv", "manifest.json", "manifest.private.json", "report.html", "config.yaml",
                 "workbench.json", "search.json"}
# the first 800 records of tests/data/adult_subset.csv: a run takes well under a second
ROWS = 800
TABLE = "".join(ADULT_SUBSET.read_text(encoding="utf-8").splitlines(keepends=True)[:ROWS + 1]).encode()
FORM = {"label": "first try", "k": "5", "l": "2", "l_kind": "distinct", "c": "", "t": "", "distance": "equal",
        "sensitive": "", "suppression_limit": "2", "metric": "loss", "metric_label": "", "algorithm": "fulldomain"}


def _project(bench, name="adult", config=CONFIG, table: bytes | None = None):
    project = bench.workspace.create(name, TABLE if table is None else table, fmt="csv",
                                     delimiter=";")
    project.save_config(config)
    return project


def _long_search(bench, name):
    """A project whose search runs for minutes: a heuristic descent over a lattice of 11⁶ nodes,
    nearly all of them 2-anonymous (the tests stop it long before)."""
    rng = np.random.default_rng(5)
    columns = [f"x{i}" for i in range(6)]
    rows = rng.integers(0, 1024, size=(1000, 6))
    table = ";".join(columns + ["s"]) + "\n" + "".join(
        ";".join(map(str, row)) + f";{i % 3}\n" for i, row in enumerate(rows.tolist()))
    widths = [2 ** e for e in range(1, 11)]
    config = {"columns": {"quasi_identifiers": columns, "sensitive": ["s"]},
              "hierarchies": {c: {"intervals": {"widths": widths, "start": 0}} for c in columns},
              "models": [{"k_anonymity": {"k": 2}}], "suppression_limit": 0.5,
              "algorithm": {"name": "fulldomain", "search": "heuristic", "time_limit": 600}}
    return _project(bench, name, config, table.encode())


def _wait(bench, project, run_id, until=lambda status: status["state"] != "running"):
    deadline = time.monotonic() + 120   # a guard against a hang, not a measure of speed
    while time.monotonic() < deadline:
        status = bench.jobs.status(project, run_id)
        if until(status):
            return status
        time.sleep(0.05)
    raise AssertionError(f"the run did not get there: {status}")


def _start(bench, project, form):
    response = bench.post(f"/p/{project.name}/anonymize", form)
    assert response.status_code == 303, bench.text(response)
    run_id = response.headers["Location"].rstrip("/").rsplit("/", 1)[1]
    assert response.headers["Location"].endswith(f"/p/{project.name}/runs/{run_id}")
    return run_id


# --------------------------------------------------------------------------------------------
# the form ⇄ configuration

_numbers = st.integers(2, 10 ** 6).map(str)
_share = st.decimals(0, "99.99", places=2).map(lambda d: format(d.normalize(), "f"))
_open_unit = st.decimals("0.01", 1, places=2).map(lambda d: format(d.normalize(), "f"))


@st.composite
def _forms(draw):
    form = {"label": draw(st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_categories=("Cc", "Cs")), max_size=20)),
            "k": draw(st.one_of(st.just(""), _numbers)), "l_kind": draw(st.sampled_from(["distinct", "entropy",
                                                                                         "recursive"])),
            "suppression_limit": draw(_share), "metric": draw(st.sampled_from(metric_names())),
            "algorithm": draw(st.sampled_from(ALGORITHMS)), "distance": "equal", "sensitive": "", "c": "", "t": "",
            "l": "", "metric_label": ""}
    if draw(st.booleans()):
        form["l"] = draw(st.integers(2, 50).map(str)) if form["l_kind"] != "entropy" else draw(
            st.decimals("1.01", 50, places=2).map(lambda d: format(d.normalize(), "f")))
        if form["l_kind"] == "recursive":
            form["c"] = draw(st.decimals("0.01", 100, places=2).map(lambda d: format(d.normalize(), "f")))
    if draw(st.booleans()):
        form["t"] = draw(_open_unit)
        form["distance"] = draw(st.sampled_from(["equal", "ordered", "hierarchical"]))
    if form["l"] or form["t"]:
        form["sensitive"] = draw(st.sampled_from(["", "occupation", "salary-class"]))
    if not (form["k"] or form["l"] or form["t"]):
        form["k"] = "2"
    if form["metric"] in ("classification", "ig_pl"):
        form["metric_label"] = "salary-class"
    if not form["l"]:
        form["l_kind"] = "distinct"
    return form


@settings(max_examples=40, deadline=None)
@given(_forms())
def test_a_form_read_into_a_configuration_reads_back_the_same(form):
    config = {**CONFIG, "columns": {**CONFIG["columns"], "sensitive": ["occupation", "salary-class"]},
              "models": [{"delta_presence": {"population": "p.csv", "delta_max": 0.5}}]}
    document, label = read_form(form, config)
    assert label == form["label"].strip()
    back = form_values(document)
    assert back == {**form, "label": ""}
    assert document["columns"] == config["columns"] and document["hierarchies"] == config["hierarchies"]
    assert kept_models(document) == config["models"]   # a model the form does not edit is kept
    assert read_form(back, document)[0] == document


@settings(max_examples=40, deadline=None)
@given(st.decimals(0, "99.9999", places=4))
def test_the_suppression_limit_is_a_percentage_of_the_configuration_s_share(percent):
    document, _ = read_form({"k": "2", "suppression_limit": str(percent)}, CONFIG)
    assert 0 <= document["suppression_limit"] < 1
    assert abs(document["suppression_limit"] * 100 - float(percent)) < 1e-9
    assert float(form_values(document)["suppression_limit"]) == float(percent)


def test_the_form_shows_what_config_yaml_holds():
    config = {**CONFIG, "models": [{"k_anonymity": {"k": 7}}, {"recursive_cl_diversity": {"c": 3, "l": 2}},
                                   {"t_closeness": {"t": 0.25, "distance": "ordered", "sensitive": "occupation"}},
                                   {"entropy_l_diversity": {"l": 3}}],
              "suppression_limit": 0.07, "metric": {"name": "classification", "label": "salary-class"},
              "algorithm": {"name": "mondrian", "mode": "relaxed"}}
    values = form_values(config)
    assert {k: values[k] for k in ("k", "l", "l_kind", "c", "t", "distance", "suppression_limit", "metric",
                                   "metric_label", "algorithm")} == {
        "k": "7", "l": "2", "l_kind": "recursive", "c": "3", "t": "", "distance": "equal",
        "suppression_limit": "7", "metric": "classification", "metric_label": "salary-class",
        "algorithm": "mondrian"}
    # the second ℓ-diversity and the t-closeness of another column than ℓ's stay as they are
    assert describe_models(kept_models(config)) == ["t_closeness: t = 0.25, distance = ordered, sensitive = occupation",
                                                    "entropy_l_diversity: l = 3"]
    document, _ = read_form(values, config)
    assert document["algorithm"] == {"name": "mondrian", "mode": "relaxed"}   # its options are kept
    assert document["models"] == config["models"][:2] + config["models"][2:]


@pytest.mark.parametrize("field, value, extra", [
    ("k", "1", {}), ("k", "2.5", {}), ("k", "five", {}), ("k", "1e3", {}), ("l", "1", {}), ("l", "2.5", {}),
    ("l", "1", {"l_kind": "entropy"}), ("c", "", {"l": "2", "l_kind": "recursive"}),
    ("c", "0", {"l": "2", "l_kind": "recursive"}), ("t", "0", {}), ("t", "1.5", {}), ("t", "nan", {}),
    ("suppression_limit", "100", {}), ("suppression_limit", "-1", {}), ("suppression_limit", "inf", {}),
    ("metric", "bogus", {}), ("algorithm", "alphabeta", {}), ("algorithm", "pram", {}),
    ("metric_label", "", {"metric": "classification"}), ("sensitive", "age", {"l": "2"}),
    ("label", "two\nlines", {}), ("l_kind", "other", {"l": "2"}), ("distance", "far", {"t": "0.2"}),
])
def test_a_field_out_of_range_is_refused_with_one_sentence(field, value, extra):
    with pytest.raises(FormErrors) as refused:
        read_form({**FORM, **extra, field: value}, CONFIG)
    assert field in refused.value.errors
    assert refused.value.errors[field].endswith(".") and refused.value.errors[field].count(". ") == 0


def test_no_model_at_all_is_refused():
    with pytest.raises(FormErrors) as refused:
        read_form({**FORM, "k": "", "l": ""}, CONFIG)
    assert "at least one privacy model" in refused.value.errors["k"]


# --------------------------------------------------------------------------------------------
# the page


def test_the_page_is_filled_from_config_yaml(bench):
    project = _project(bench, config={**CONFIG, "models": [{"k_anonymity": {"k": 7}},
                                                           {"entropy_l_diversity": {"l": 3}}],
                                      "suppression_limit": 0.05})
    html = bench.text(bench.get(f"/p/{project.name}/anonymize"))
    assert 'id="anonymize-form"' in html and 'id="start-run"' in html
    assert 'name="k" inputmode="numeric" value="7"' in html
    assert '<option value="entropy" selected>' in html
    assert 'name="suppression_limit" inputmode="decimal" value="5"' in html
    assert "No release yet." in html


@pytest.mark.parametrize("field, value", [("k", "1"), ("t", "2"), ("suppression_limit", "150"),
                                          ("algorithm", "alphabeta")])
def test_a_refused_form_writes_nothing(bench, field, value):
    project = _project(bench)
    before = project.config_path.read_bytes()
    response = bench.post(f"/p/{project.name}/anonymize", {**FORM, field: value})
    assert response.status_code == 400
    assert field_error(bench.text(response), field)
    assert project.config_path.read_bytes() == before
    assert not project.runs_dir.exists() and not project.releases_dir.exists()


def test_a_configuration_the_algorithm_refuses_is_refused_on_the_page(bench):
    project = _project(bench)
    before = project.config_path.read_bytes()
    # Ace needs an ℓ: from an ℓ-diversity model or its own option
    response = bench.post(f"/p/{project.name}/anonymize", {**FORM, "l": "", "algorithm": "ace"})
    assert response.status_code == 400
    assert field_error(bench.text(response), "algorithm")
    assert project.config_path.read_bytes() == before and not project.runs_dir.exists()


def test_a_run_makes_a_release_that_satisfies_its_models(bench):
    project = _project(bench)
    refused = _project(bench, "refused")
    run_id = _start(bench, project, FORM)
    # at the same time, a run the table refuses (k above its records): no release, its sentence
    refused_id = _start(bench, refused, {**FORM, "k": "5000", "l": ""})
    assert bench.get("/").status_code == 200
    assert run_id in bench.text(bench.get(f"/p/{project.name}/anonymize"))
    status = _wait(bench, project, run_id)
    assert status["state"] == "done", status
    assert status["result"] == {"release": run_id}
    folder = project.releases_dir / run_id
    assert {p.name for p in folder.iterdir()} == RELEASE_FILES
    assert not (project.runs_dir / run_id / "out").exists()
    text = project.config_path.read_text(encoding="utf-8")
    assert (folder / "config.yaml").read_text(encoding="utf-8") == text
    assert "k_anonymity" in text and "suppression_limit: 0.02" in text and "hierarchies:" in text
    # the release, read again: 5-anonymous and distinct 2-diverse in occupation, nothing invented
    lines = (folder / "release.csv").read_text(encoding="utf-8").splitlines()
    header, rows = lines[0].split(";"), [line.split(";") for line in lines[1:]]
    at = [header.index(q) for q in QIS]
    classes = Counter(tuple(row[j] for j in at) for row in rows)
    assert min(classes.values()) >= 5
    occupations: dict = {}
    for row in rows:
        occupations.setdefault(tuple(row[j] for j in at), set()).add(row[header.index("occupation")])
    assert min(len(v) for v in occupations.values()) >= 2
    search = json.loads((folder / "search.json").read_text(encoding="utf-8"))
    assert SEARCH_KEYS <= search.keys()
    assert search["records"] == ROWS and search["suppressed"] + len(rows) == ROWS
    assert search["suppressed"] <= 0.02 * ROWS
    assert search["quasi_identifiers"] == QIS and search["heights"] == [5, 1, 1] and not search["truncated"]
    assert len(search["nodes"]) == 6 * 2 * 2
    chosen = next(node for node in search["nodes"] if node["levels"] == search["chosen"])
    assert chosen["anonymous"] and chosen["score"] == pytest.approx(search["utility"]["loss"])
    best = min(node["score"] for node in search["nodes"] if node["anonymous"])
    assert chosen["score"] == pytest.approx(best)   # the search's optimum, measured again
    assert [m["passed"] for m in search["models"]] == [True, True]
    about = json.loads((folder / "workbench.json").read_text(encoding="utf-8"))
    assert about["label"] == "first try" and about["algorithm"] == "fulldomain" and about["metric"] == "loss"
    assert about["models"] == ["k_anonymity: k = 5", "distinct_l_diversity: l = 2"]
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["node"] == dict(zip(QIS, search["chosen"]))
    assert manifest["config"]["data"] == "table.csv"   # as the project's folder reads it
    page = bench.text(bench.get(f"/p/{project.name}/anonymize"))
    assert run_id in page and "first try" in page

    status = _wait(bench, refused, refused_id)
    assert status["state"] == "failed" and "larger than the table" in status["message"]
    assert not refused.releases_dir.exists() and not (refused.runs_dir / refused_id / "out").exists()


def _searching(status):
    assert status["state"] == "running", status
    return status["stage"] == "searching the lattice"


def test_a_cancelled_run_and_a_worker_killed_mid_search_leave_no_release(bench):
    cancelled, killed = _long_search(bench, "cancelled"), _long_search(bench, "killed")
    form = {**FORM, "k": "2", "l": "", "suppression_limit": "50"}
    cancelled_id, killed_id = _start(bench, cancelled, form), _start(bench, killed, form)
    _wait(bench, cancelled, cancelled_id, _searching)
    _wait(bench, killed, killed_id, _searching)
    # the server answers while the runs work
    assert bench.get("/").status_code == 200
    assert "searching the lattice" in bench.text(bench.get(f"/p/{killed.name}/anonymize"))

    response = bench.post(f"/p/{cancelled.name}/runs/{cancelled_id}/cancel")
    assert response.status_code == 303
    assert bench.jobs.status(cancelled, cancelled_id)["state"] == "cancelled"
    assert not cancelled.releases_dir.exists() and not (cancelled.runs_dir / cancelled_id / "out").exists()

    os.kill(int((killed.runs_dir / killed_id / "pid").read_text()), signal.SIGKILL)
    status = _wait(bench, killed, killed_id)
    assert status["state"] == "interrupted"
    assert not killed.releases_dir.exists() and not (killed.runs_dir / killed_id / "out").exists()
    assert bench.get(f"/p/{killed.name}/anonymize").status_code == 200


# --------------------------------------------------------------------------------------------
# search.json


def test_a_lattice_too_large_to_list_is_listed_around_the_chosen_node():
    from veil.workbench.tasks.anonymize import MAX_NODES, _around

    nodes, truncated = _around([10] * 6, [4, 5, 6, 3, 2, 9], MAX_NODES)
    assert truncated and len(nodes) == len(set(nodes)) == MAX_NODES
    assert (4, 5, 6, 3, 2, 9) in nodes and all(0 <= v <= 10 for node in nodes for v in node)
    assert [sum(n) for n in nodes] == sorted(sum(n) for n in nodes)
    everything, truncated = _around([5, 1, 1], [2, 0, 0], MAX_NODES)
    assert not truncated and len(everything) == 24 and everything[0] == (0, 0, 0) and everything[-1] == (5, 1, 1)


def test_a_partitioning_algorithm_has_no_lattice_in_search_json(tmp_path):
    from veil.workbench.projects import Workspace
    from veil.workbench.tasks.anonymize import parse_config, search_document

    project = Workspace(tmp_path).create("m", TABLE, fmt="csv", delimiter=";")
    project.save_config({**CONFIG, "algorithm": "mondrian", "models": [{"k_anonymity": {"k": 4}}]})
    cfg = parse_config(project.root, project.config_path.read_text(encoding="utf-8"))
    ds = cfg.dataset()
    anonymizer = cfg.anonymizer().fit(ds)
    release = anonymizer.transform(ds, rng=1)
    search = search_document(cfg, ds, anonymizer, release, 0.5)
    assert SEARCH_KEYS <= search.keys()
    assert search["algorithm"] == "mondrian" and search["chosen"] is None and search["nodes"] == []
    assert search["models"] == [{"model": "k-anonymity", "sensitive": None, "required": "k = 4",
                                 "achieved": search["models"][0]["achieved"], "passed": True}]
    assert search["suppressed"] + release.num_rows == ROWS


def test_a_configuration_the_workbench_does_not_run_is_refused_with_its_sentence(tmp_path):
    from veil.errors import ConfigError
    from veil.workbench.projects import Workspace
    from veil.workbench.tasks.anonymize import parse_config

    project = Workspace(tmp_path).create("m", TABLE, fmt="csv", delimiter=";")
    project.save_config({**CONFIG, "algorithm": {"name": "pram", "columns": ["race"], "alpha": 0.5, "recode": "fulldomain"}})
    with pytest.raises(ConfigError, match="the workbench runs the fulldomain, mondrian, mdav and ace"):
        parse_config(project.root, project.config_path.read_text(encoding="utf-8"))
    with pytest.raises(ConfigError, match=r"^config\.yaml is not valid YAML"):
        parse_config(project.root, "models: [")


def test_a_config_yaml_broken_by_hand_is_shown_not_overwritten(bench):
    project = _project(bench)
    project.config_path.write_text("models: [\n", encoding="utf-8")
    page = bench.get(f"/p/{project.name}/anonymize")
    assert page.status_code == 200 and "not a configuration veil can read" in bench.text(page)
    response = bench.post(f"/p/{project.name}/anonymize", FORM)
    assert response.status_code == 400 and "fix it in a text editor" in bench.text(response)
    assert project.config_path.read_text(encoding="utf-8") == "models: [\n" and not project.runs_dir.exists()


@pytest.mark.parametrize("most", [1000, 9])
def test_each_listed_node_s_verdict_and_score_are_those_of_its_own_classes(tmp_path, monkeypatch, most):
    import veil.workbench.tasks.anonymize as task
    from veil.anonymize.fulldomain import failing_classes
    from veil.classes import EquivalenceClasses
    from veil.workbench.projects import Workspace

    monkeypatch.setattr(task, "MAX_NODES", most)
    project = Workspace(tmp_path).create("m", TABLE, fmt="csv", delimiter=";")
    project.save_config({**CONFIG, "models": [{"k_anonymity": {"k": 3}}, {"entropy_l_diversity": {"l": 2}}],
                         "suppression_limit": 0.03, "metric": "discernibility"})
    cfg = task.parse_config(project.root, project.config_path.read_text(encoding="utf-8"))
    ds = cfg.dataset()
    anonymizer = cfg.anonymizer().fit(ds)
    nodes, truncated = task._nodes(ds, anonymizer, [5, 1, 1], list(anonymizer.result_.levels), None)
    assert truncated == (most < 24) and len(nodes) == min(most, 24)
    metric = anonymizer._metric()
    for node in nodes:
        classes = EquivalenceClasses.from_dataset(ds, node["levels"])
        failing = failing_classes(classes, anonymizer.models)
        anonymous = int(classes.sizes[failing].sum()) <= int(0.03 * ROWS)
        assert node["anonymous"] == anonymous, node
        assert node["score"] == (pytest.approx(metric.loss(classes, failing)) if anonymous else None), node
