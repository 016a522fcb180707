"""The workbench's DP page (veil.workbench.pages.dp): a budget set from a form, queries charged to
the project's population in the workbench's ledger exactly as ``veil dp --ledger`` charges them,
the answers with their intervals, and refusals that charge nothing."""
from __future__ import annotations

import json
import math
import re
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.workbench_client import ADULT_SUBSET, field_error
from veil.dp.mechanisms import Geometric
from veil.ledger import Ledger
from veil.workbench.pages.dp import parse_query_form

ROWS = "sex;age;city\n" + "".join(f"{s};{a};{c}\n" for s, a, c in [
    ("F", 34, "Lyon"), ("M", 51, "Paris"), ("F", 27, "Paris"), ("M", 45, "Nice"), ("F", 62, "Lyon"),
    ("M", 38, "Paris"), ("F", 29, "Nice"), ("M", 55, "Lyon")])


def _project(bench, name="survey", table: bytes | None = None):
    project = bench.workspace.create(name, table if table is not None else ROWS.encode(), fmt="csv", delimiter=";")
    project.save_config({"columns": {}})
    return project


def _budget(bench, name="survey", epsilon="1", delta="0"):
    response = bench.post(f"/p/{name}/dp/budget", {"epsilon": epsilon, "delta": delta})
    assert response.status_code == 303, bench.text(response)


def _left(bench, name="survey"):
    """What the ledger says is left (ε, δ), exactly, and how many charges it holds."""
    ledger = Ledger(str(bench.workspace.ledger_path))
    try:
        acc = ledger.budget(name)
        return acc.remaining(), len(acc.charges)
    finally:
        ledger.close()


def _answer_dirs(project):
    root = project.root / "dp"
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def test_a_count_shows_with_its_interval_and_the_budget_left_drops_by_exactly_its_epsilon(bench):
    project = _project(bench, "adult", ADULT_SUBSET.read_bytes())
    page = bench.text(bench.get("/p/adult/dp"))
    assert 'id="budget-form"' in page and 'id="dp-form"' not in page
    _budget(bench, "adult", "1", "0")
    assert _left(bench, "adult") == ((Fraction(1), Fraction(0)), 0)
    assert 'id="dp-form"' in bench.text(bench.get("/p/adult/dp"))

    response = bench.post("/p/adult/dp/query", {"kind": "count", "column": "", "epsilon": "0.3"})
    assert response.status_code == 303, bench.text(response)
    assert _left(bench, "adult") == ((Fraction(7, 10), Fraction(0)), 1)

    [folder] = _answer_dirs(project)
    answer = json.loads((project.root / "dp" / folder / "answer.json").read_text())
    manifest = json.loads((project.root / "dp" / folder / "manifest.json").read_text())
    # veil's vetted secure sampler drew it (a seeded source would be labelled not fit for release)
    assert answer["fit_for_release"] is True and answer["noise_source"].startswith("secure")
    assert manifest["charge"]["population"] == "adult" and manifest["charge"]["seq"] >= 1 and "seal" in manifest
    # the interval is veil's: the geometric mechanism's 95 % error bound around the noisy count
    half = Geometric(0.3, 1.0).error_bound(0.05)
    assert (answer["low"], answer["high"]) == (answer["value"] - half, answer["value"] + half)
    assert abs(answer["value"] - 3016) < 200

    page = bench.text(bench.get("/p/adult/dp"))
    answers = page[page.index('id="answers"'):]
    assert f"{answer['value']:,}" in answers and f"95% interval [{answer['low']:,}, {answer['high']:,}]" in answers
    assert re.search(r'id="budget-left-epsilon">0\.7<', page)
    assert re.search(r'id="budget-spent-epsilon">0\.3<', page)


def test_asking_more_than_is_left_is_refused_and_charges_nothing(bench):
    project = _project(bench)
    _budget(bench, epsilon="0.5")
    assert bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.4"}).status_code == 303
    before, dirs = _left(bench), _answer_dirs(project)
    response = bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.2"})
    assert response.status_code == 400
    assert "more than the budget left" in field_error(bench.text(response), "epsilon")
    assert _left(bench) == before and _answer_dirs(project) == dirs
    # what is left, exactly (0.5 − 0.4 is 0.1 in veil's exact accounting), can be spent to the last bit
    assert bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.1"}).status_code == 303
    assert _left(bench) == ((Fraction(0), Fraction(0)), 2)
    response = bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "1e-9"})
    assert response.status_code == 400 and field_error(bench.text(response), "epsilon")
    assert _left(bench) == ((Fraction(0), Fraction(0)), 2)


def test_a_charge_that_no_longer_fits_is_refused_by_the_ledger_and_charges_nothing(bench, monkeypatch):
    """The form is checked against the budget as the page last read it; the ledger's own check
    refuses a charge that another request spent meanwhile."""
    from veil.workbench.pages import dp

    project = _project(bench)
    _budget(bench, epsilon="1")
    with bench.app.app_context():
        stale = dp.budget_state(project)
    assert bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.9"}).status_code == 303
    before, dirs = _left(bench), _answer_dirs(project)
    monkeypatch.setattr(dp, "budget_state", lambda p: stale)
    response = bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.5"})
    assert response.status_code == 400 and field_error(bench.text(response), "epsilon")
    assert _left(bench) == before and _answer_dirs(project) == dirs


def test_queries_asked_at_once_never_spend_more_than_the_budget(bench):
    """Six requests at once, each checked against the same budget left: the ledger's transaction
    lets exactly the three that fit through, and only they leave an answer."""
    from concurrent.futures import ThreadPoolExecutor

    project = _project(bench)
    _budget(bench, epsilon="1")

    def ask(_):
        client = bench.app.test_client()
        client.get(f"/?token={bench.app.config['VEIL_TOKEN']}")
        return client.post("/p/survey/dp/query", data={"kind": "count", "epsilon": "0.3",
                                                       "csrf_token": bench.csrf}).status_code

    with ThreadPoolExecutor(6) as pool:
        codes = sorted(pool.map(ask, range(6)))
    assert codes == [303] * 3 + [400] * 3
    assert _left(bench) == ((Fraction(1, 10), Fraction(0)), 3) and len(_answer_dirs(project)) == 3
    # a folder left by an answer interrupted while written is not listed, and breaks nothing
    (project.root / "dp" / "20260101-000000-000000-deadbeef").mkdir()
    page = bench.text(bench.get("/p/survey/dp"))
    assert page.count('class="dp-answer"') == 3


REFUSED = [
    ({"kind": "count", "epsilon": "0"}, "epsilon"),
    ({"kind": "count", "epsilon": "-0.1"}, "epsilon"),
    ({"kind": "count", "epsilon": "nan"}, "epsilon"),
    ({"kind": "count", "epsilon": "inf"}, "epsilon"),
    ({"kind": "count", "epsilon": "lots"}, "epsilon"),
    ({"kind": "count", "epsilon": ""}, "epsilon"),
    ({"kind": "count", "epsilon": "0.1", "delta": "1"}, "delta"),
    ({"kind": "sum", "column": "age", "epsilon": "0.1"}, "low"),
    ({"kind": "mean", "column": "age", "low": "0", "epsilon": "0.1"}, "high"),
    ({"kind": "mean", "column": "age", "low": "90", "high": "10", "epsilon": "0.1"}, "high"),
    ({"kind": "sum", "column": "salary", "low": "0", "high": "9", "epsilon": "0.1"}, "column"),
    ({"kind": "median", "column": "", "low": "0", "high": "9", "epsilon": "0.1"}, "column"),
    ({"kind": "quantile", "column": "age", "low": "0", "high": "99", "q": "1.5", "epsilon": "0.1"}, "q"),
    ({"kind": "histogram", "column": "city", "epsilon": "0.1"}, "keys"),
    ({"kind": "mean", "column": "age", "group_by": "city", "low": "0", "high": "99", "epsilon": "0.1"}, "keys"),
    ({"kind": "count", "group_by": "nowhere", "keys": "a", "epsilon": "0.1"}, "group_by"),
    ({"kind": "median", "column": "age", "low": "0", "high": "99", "epsilon": "0.1", "delta": "0.001"}, "delta"),
    ({"kind": "drop table", "epsilon": "0.1"}, "kind"),
]


def test_refused_input_is_shown_next_to_its_field_and_charges_nothing(bench):
    """Each refusal names its field, charges nothing, writes nothing, and says the same of another
    table with the same header and other values (it depends on the form and the budget only)."""
    project = _project(bench)
    other = "sex;age;city\n" + "".join(f"X{i};{i * 7};Town{i}\n" for i in range(40))
    twin = _project(bench, "twin", other.encode())
    _budget(bench)
    _budget(bench, "twin")
    for form, field in REFUSED:
        response = bench.post("/p/survey/dp/query", form)
        assert response.status_code == 400, form
        message = field_error(bench.text(response), field)
        assert message, (form, field)
        assert field_error(bench.text(bench.post("/p/twin/dp/query", form)), field) == message, form
    for name, made in (("survey", project), ("twin", twin)):   # charges only add up: none was made
        assert _left(bench, name) == ((Fraction(1), Fraction(0)), 0) and _answer_dirs(made) == []


def test_a_bad_budget_is_refused_and_nothing_is_written(bench):
    _project(bench)
    for epsilon, delta, field in [("0", "0", "epsilon"), ("-1", "0", "epsilon"), ("inf", "0", "epsilon"),
                                  ("x", "0", "epsilon"), ("", "0", "epsilon"), ("1", "1", "delta"),
                                  ("1", "-0.1", "delta"), ("1", "nan", "delta")]:
        response = bench.post("/p/survey/dp/budget", {"epsilon": epsilon, "delta": delta})
        assert response.status_code == 400 and field_error(bench.text(response), field), (epsilon, delta)
        assert not bench.workspace.ledger_path.exists()


def test_forms_without_their_csrf_token_are_refused(bench):
    project = _project(bench)
    assert bench.post("/p/survey/dp/budget", {"epsilon": "1"}, csrf=False).status_code == 403
    assert not bench.workspace.ledger_path.exists()
    _budget(bench)
    assert bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.1"}, csrf=False).status_code == 403
    assert _left(bench) == ((Fraction(1), Fraction(0)), 0) and _answer_dirs(project) == []


def test_a_grouped_mean_answers_every_public_key_with_its_interval(bench):
    project = _project(bench)
    _budget(bench)
    response = bench.post("/p/survey/dp/query", {"kind": "mean", "column": "age", "group_by": "city",
                                                 "keys": "Lyon, Paris\nNice\nRome", "low": "0", "high": "100",
                                                 "epsilon": "0.5"})
    assert response.status_code == 303, bench.text(response)
    assert _left(bench) == ((Fraction(1, 2), Fraction(0)), 1)
    [folder] = _answer_dirs(project)
    assert sorted(p.name for p in (project.root / "dp" / folder).iterdir()) == ["answers.csv", "manifest.json"]
    answers = bench.text(bench.get("/p/survey/dp"))
    answers = answers[answers.index('id="answers"'):]
    assert "mean(age)" in answers and "<th>95% interval</th>" in answers
    for key in ("Lyon", "Paris", "Nice", "Rome"):   # every public key, the empty one too, with its interval
        assert re.search(rf'<td>{key}</td><td class="num">-?[0-9.,]+</td><td class="num">\[-?[0-9.,]+, -?[0-9.,]+\]</td>',
                         answers), key


def test_a_histogram_and_a_median_are_answered(bench):
    project = _project(bench)
    _budget(bench)
    assert bench.post("/p/survey/dp/query", {"kind": "histogram", "column": "city", "keys": "Lyon,Paris,Nice",
                                             "epsilon": "0.2"}).status_code == 303
    assert bench.post("/p/survey/dp/query", {"kind": "median", "column": "age", "low": "0", "high": "100",
                                             "epsilon": "0.2"}).status_code == 303
    assert _left(bench) == ((Fraction(3, 5), Fraction(0)), 2) and len(_answer_dirs(project)) == 2
    page = bench.text(bench.get("/p/survey/dp"))
    assert "histogram(city)" in page and "quantile(age, 0.5)" in page and "no error bar in value units" in page


def test_html_in_a_column_name_or_a_typed_category_is_escaped(bench):
    table = "<b>bold</b>;age\n<script>x</script>;30\nplain;40\n"
    _project(bench, "html", table.encode())
    _budget(bench, "html")
    page = bench.text(bench.get("/p/html/dp"))
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    response = bench.post("/p/html/dp/query", {"kind": "histogram", "column": "<b>bold</b>",
                                               "keys": "<script>x</script>, plain", "epsilon": "0.1"})
    assert response.status_code == 303, bench.text(response)
    page = bench.text(bench.get("/p/html/dp"))
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page


def test_a_population_without_a_budget_answers_nothing(bench):
    _project(bench)
    ledger = Ledger.init(str(bench.workspace.ledger_path))[0]
    try:
        ledger.add_population("survey")
    finally:
        ledger.close()
    page = bench.text(bench.get("/p/survey/dp"))
    assert "without a privacy budget" in page and 'id="dp-form"' not in page and 'id="budget-form"' not in page
    response = bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.1"})
    assert response.status_code == 400 and "budget first" in bench.text(response)
    response = bench.post("/p/survey/dp/budget", {"epsilon": "1", "delta": "0"})
    assert response.status_code == 400 and "never changes" in bench.text(response)


def test_a_ledger_edited_by_hand_is_shown_and_answers_nothing(bench):
    import sqlite3

    project = _project(bench)
    _budget(bench)
    assert bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.5"}).status_code == 303
    with sqlite3.connect(bench.workspace.ledger_path) as conn:
        conn.execute("UPDATE charges SET epsilon = '0.01'")
    conn.close()
    page = bench.get("/p/survey/dp")
    assert page.status_code == 200 and 'id="dp-form"' not in bench.text(page)
    response = bench.post("/p/survey/dp/query", {"kind": "count", "epsilon": "0.1"})
    assert response.status_code == 400 and 'role="alert"' in bench.text(response)
    assert len(_answer_dirs(project)) == 1


_BUDGET = {"state": "kept", "measure": "approximate", "left_epsilon": Fraction(1, 2), "left_delta": Fraction(0),
           "left": {"epsilon": "0.5", "delta": "0"}}


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True).map(repr)))
def test_any_epsilon_typed_is_accepted_only_when_positive_finite_and_within_what_is_left(text):
    query, errors = parse_query_form({"kind": "count", "epsilon": text}, ["age"], _BUDGET)
    try:
        value = float(text.strip())
    except ValueError:
        value = math.nan
    fits = math.isfinite(value) and 0 < value <= 0.5
    assert ("epsilon" not in errors) == fits
    assert not errors or "epsilon" in errors
    if fits:
        assert query["epsilon"] == value


_KEY = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters=","),
               min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["count", "sum", "mean", "median", "quantile"]),
       keys=st.lists(_KEY, min_size=1, max_size=5, unique=True),
       bounds=st.tuples(st.integers(-1000, 1000), st.integers(1, 1000)),
       q=st.floats(0.01, 0.99), epsilon=st.floats(0.001, 0.5))
def test_a_grouped_form_becomes_the_query_specification_it_says(kind, keys, bounds, q, epsilon):
    """The form of a grouped query maps to a specification veil dp query accepts, saying the same."""
    from veil.config.dp_query_spec import parse_query_spec
    from veil.workbench.pages.dp import _spec_document

    low, high = bounds[0], bounds[0] + bounds[1]
    form = {"kind": kind, "column": "" if kind == "count" else "age", "group_by": "city",
            "keys": ", ".join(keys), "low": str(low), "high": str(high), "q": repr(q), "epsilon": repr(epsilon)}
    query, errors = parse_query_form(form, ["age", "city"], _BUDGET)
    assert errors == {}
    document = parse_query_spec(_spec_document(query)).document
    assert document["group_by"] == {"columns": ["city"], "keys": [k.strip() for k in keys]}
    assert document["epsilon"] == epsilon
    [aggregate] = document["aggregates"]
    assert aggregate["aggregate"] == {"median": "quantiles", "quantile": "quantiles"}.get(kind, kind)
    if kind != "count":
        assert (aggregate["column"], aggregate["low"], aggregate["high"]) == ("age", low, high)
    if kind in ("median", "quantile"):
        assert aggregate["quantiles"] == [0.5 if kind == "median" else q]
