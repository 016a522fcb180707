"""Query auditing: the seed lecture's two examples, the attack on the value-based auditor, the
simulatable auditor's decisions checked against an enumeration of the answers and proven
simulatable by running it on two tables that agree on every answer given, and SUM auditing
checked against exact elimination with fractions.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.audit import (AuditSession, DenialAttack, ExtremumState, Query, QueryError, SimulatableAuditor, SumState,
                        ValueBasedAuditor)
from veil.audit import sums as sums_module
from veil.errors import ColumnError, DataError, ParameterError

from helpers import one_sentence_error

PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# The seed lecture's 11 students (slide 7): name, first-year PhD, gender, sensitive value.
STUDENTS = pd.DataFrame({
    "name": "Ben Bha Ios Jan Jian Jie Joe Moh Son Xi Yao".split(),
    "first_year": list("YNYNYNNNNYN"),
    "gender": list("MMMMMMMMFFM"),
    "value": [1, 1, 1, 2, 2, 1, 2, 1, 1, 3, 2],
})
STUDENT_QUERIES = ["max where name = Ben", "max where gender = M", "max where first_year = Y"]
XI = 9


# --------------------------------------------------------------------------------------------
# The seed's examples

def test_max_example_value_based_denial_reveals_x5():
    # Slides 9-17: max(x1..x5) = 10; max(x1..x4) = 8 is denied, and the denial says x5 = 10.
    data = pd.DataFrame({"x": [3, 8, 1, 5, 10]})
    session = AuditSession(data, "x", auditor="value-based")
    first, second = session.ask("max"), session.ask("max rows 0, 1, 2, 3")
    assert first.answered and first.answer == 10
    assert not second.answered and second.record == 4
    attack = DenialAttack("value-based").run(session.transcript_, session.n_records)
    learned = {inf.record: inf.learned for inf in attack.inferences_}
    assert learned == {4: "= 10", 0: "< 10", 1: "< 10", 2: "< 10", 3: "< 10"}
    assert [inf.value for inf in attack.inferences_ if inf.record == 4] == [10]


@pytest.mark.parametrize("x4", [8, 10])
def test_max_example_simulatable_auditor_denies_whatever_the_data_and_leaks_nothing(x4):
    # Slide 19: before computing the answer: > 10 impossible, = 10 safe, < 10 reveals x5: DENY.
    # The decision is the same whether max(x1..x4) is 8 or 10, so it tells nothing.
    data = pd.DataFrame({"x": [3, x4, 1, 5, 10]})
    session = AuditSession(data, "x", auditor="simulatable")
    assert session.ask("max").answered
    second = session.ask("max rows 0, 1, 2, 3")
    assert not second.answered and second.record == 4 and "below 10" in second.reason
    attack = DenialAttack("simulatable").run(session.transcript_, session.n_records)
    assert attack.inferences_ == [] and attack.uninformative_ == 1


def test_students_q2_and_q3_answered_give_xi_3():
    # Slide 7: answering both Q2 (max of males: 2) and Q3 (max of first-years: 3) gives Xi = 3.
    session = AuditSession(STUDENTS, "value", auditor="simulatable")
    q2, q3 = (session.parse(q) for q in STUDENT_QUERIES[1:])
    state = ExtremumState(len(STUDENTS))
    state.record(q2.rows, 2)
    assert state.determined() == {}
    state.record(q3.rows, 3)
    assert state.determined() == {XI: 3}


def test_students_value_based_denial_of_q3_tells_that_xi_is_above_2():
    session = AuditSession(STUDENTS, "value", auditor="value-based", id_column="name")
    decisions = session.run(STUDENT_QUERIES)
    assert [d.answered for d in decisions] == [False, True, False]
    assert decisions[1].answer == 2 and decisions[2].record == XI and "Xi" in decisions[2].reason
    attack = DenialAttack("value-based").run(session.transcript_, session.n_records)
    # Q1 would have been denied whatever Ben's value: nothing learned. Q3's denial says its answer
    # exceeds 2, and only Xi can exceed the males' maximum.
    assert attack.denials_read_ == 2 and attack.uninformative_ == 1
    assert [(inf.step, inf.record, inf.learned) for inf in attack.inferences_] == [(3, XI, "> 2")]


def test_students_simulatable_auditor_denies_q1_and_q3_and_leaks_nothing():
    session = AuditSession(STUDENTS, "value", auditor="simulatable", id_column="name")
    decisions = session.run(STUDENT_QUERIES)
    assert [d.answered for d in decisions] == [False, True, False]
    assert "only Ben" in decisions[0].reason or "holds only Ben" in decisions[0].reason
    assert decisions[2].record == XI
    attack = DenialAttack("simulatable").run(session.transcript_, session.n_records)
    assert attack.inferences_ == [] and attack.uninformative_ == 2
    assert session.log()[1] == {"number": 2, "query": "max where gender = M", "aggregate": "max", "records": 9,
                                "decision": "answered", "answer": 2, "reason": decisions[1].reason, "record": None}


# --------------------------------------------------------------------------------------------
# MAX and MIN: the closed form against the enumeration of answers, and against brute force

def _grid_determined(queries, answers, n):
    """Records whose value is the same in every assignment over a grid that holds every answer,
    a point between each two and one below all (enough for max constraints over the reals)."""
    values = sorted(set(answers))
    grid = [values[0] - 1] + [v for a, b in zip(values, values[1:]) for v in (a, (a + b) / 2)] + [values[-1]]
    queried = sorted({i for q in queries for i in q})
    seen = {i: set() for i in queried}
    for assignment in itertools.product(grid, repeat=len(queried)):
        x = dict(zip(queried, assignment))
        if all(max(x[i] for i in q) == a for q, a in zip(queries, answers)):
            for i in queried:
                seen[i].add(x[i])
    return {i: next(iter(v)) for i, v in seen.items() if len(v) == 1}


@st.composite
def max_sessions(draw, max_n=6, max_queries=7):
    n = draw(st.integers(2, max_n))
    x = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    queries = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True),
                            min_size=1, max_size=max_queries))
    return n, np.array(x, dtype=float), [np.array(sorted(q)) for q in queries]


@settings(max_examples=60, **PROPERTY)
@given(max_sessions(max_n=5, max_queries=4))
def test_determined_records_are_those_brute_force_pins(case):
    n, x, queries = case
    state = ExtremumState(n)
    answered, answers = [], []
    for q in queries:
        state.record(q, x[q].max())
        answered.append(q.tolist())
        answers.append(x[q].max())
    assert state.determined() == _grid_determined(answered, answers, n)


@settings(max_examples=150, **PROPERTY)
@given(max_sessions(), st.sampled_from([1, -1]))
def test_closed_form_denial_is_some_consistent_answer_revealing(case, sign):
    n, x, queries = case
    state = ExtremumState(n, sign)
    for q in queries[:-1]:
        a = x[q].max() if sign > 0 else x[q].min()
        if state.value_based_denial(q, a) is None:
            state.record(q, a)
    q = queries[-1]
    outcomes = [state.outcome(q, lo, hi) for lo, hi in state.answer_cells(q)]
    assert any(o.consistent for o in outcomes)
    assert (state.simulatable_denial(q) is not None) == any(o.reveals for o in outcomes)
    # The true answer lies in a consistent cell, and the value-based test is that cell's outcome.
    a = (x[q].max() if sign > 0 else x[q].min()) * sign
    cell = next(o for o in outcomes if o.low <= a <= o.high and (o.point or o.low < a < o.high))
    assert cell.consistent
    assert (state.value_based_denial(q, a * sign) is not None) == cell.reveals


def _consistent_twin(n, x, queries, decisions, step, rng, sign):
    """A table that agrees with ``x`` on every answer given before ``step``: every record at its
    bound, but for one witness per answered query the others lowered at random."""
    state = ExtremumState(n, sign)
    keep = set()
    for q, d in zip(queries[:step], decisions[:step]):
        if d.answered:
            state.record(q, d.answer)
    for j in range(state.answered):
        keep.add(int(rng.choice(state.remaining_witness(j, np.zeros(0, dtype=np.int64)))))
    twin = np.where(np.isfinite(state.bound), state.bound * sign, rng.integers(0, 5, n))
    lower = np.array([i not in keep and np.isfinite(state.bound[i]) for i in range(n)])
    twin = np.where(lower, twin - sign * rng.integers(0, 3, n), twin).astype(float)
    return twin


@settings(max_examples=120, **PROPERTY)
@given(max_sessions(max_n=7, max_queries=8), st.sampled_from(["max", "min"]), st.integers(0, 2 ** 32 - 1))
def test_simulatable_auditor_decides_alike_on_tables_that_agree_on_the_answers(case, aggregate, seed):
    n, x, queries = case
    sign = 1 if aggregate == "max" else -1
    rng = np.random.default_rng(seed)
    run = _audit(x, queries, aggregate, SimulatableAuditor())
    step = int(rng.integers(0, len(queries)))
    twin = _consistent_twin(n, x, queries, run, step, rng, sign)
    twin_run = _audit(twin, queries[:step + 1], aggregate, SimulatableAuditor())
    for q, d, e in zip(queries[:step], run, twin_run):
        assert d.answered == e.answered
        if d.answered:
            assert d.answer == e.answer  # the twin agrees on every answer given
    assert run[step].answered == twin_run[step].answered


def test_value_based_auditor_is_not_simulatable():
    # The seed's two tables agree on max(x1..x5) = 10 but the naive auditor decides differently.
    queries = [np.arange(5), np.arange(4)]
    low = _audit(np.array([3, 8, 1, 5, 10.0]), queries, "max", ValueBasedAuditor())
    high = _audit(np.array([3, 10, 1, 5, 10.0]), queries, "max", ValueBasedAuditor())
    assert low[0].answer == high[0].answer == 10
    assert not low[1].answered and high[1].answered


def _audit(x, queries, aggregate, auditor):
    session = AuditSession(pd.DataFrame({"x": x}), "x", auditor=auditor)
    return [session.ask(Query.of(aggregate, q, len(x))) for q in queries]


# --------------------------------------------------------------------------------------------
# SUM: exact elimination

def _fraction_units(rows_list, n):
    """Records whose unit vector lies in the span of the 0/1 query vectors (Gaussian elimination
    over fractions, from scratch)."""
    matrix = [[Fraction(int(i in set(r))) for i in range(n)] for r in rows_list]
    pivots, reduced = [], []
    for row in matrix:
        for p, base in zip(pivots, reduced):
            if row[p]:
                row = [a - row[p] * b for a, b in zip(row, base)]
        nonzero = [i for i, v in enumerate(row) if v]
        if not nonzero:
            continue
        p = nonzero[0]
        row = [v / row[p] for v in row]
        reduced = [[a - base[p] * b for a, b in zip(base, row)] for base in reduced]
        pivots.append(p)
        reduced.append(row)
    return sorted(next(i for i, v in enumerate(r) if v) for r in reduced if sum(1 for v in r if v) == 1)


@st.composite
def sum_queries(draw):
    n = draw(st.integers(1, 9))
    queries = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True),
                            min_size=1, max_size=10))
    return n, [np.array(sorted(q)) for q in queries]


@pytest.mark.parametrize("int64_limit", [None, 4])
@settings(max_examples=120, **PROPERTY)
@given(case=sum_queries())
def test_sum_auditor_denies_exactly_what_fractions_say_reveals(case, int64_limit):
    with pytest.MonkeyPatch.context() as patch:
        if int64_limit is not None:
            # A tiny limit forces the switch to Python integers early: the answers must not change.
            patch.setattr(sums_module, "_INT64_SAFE", int64_limit)
        _check_sum_auditor(*case)


def _check_sum_auditor(n, queries):
    state = SumState(n)
    answered = []
    for q in queries:
        plan = state.plan(q)
        revealed = _fraction_units(answered + [q.tolist()], n)
        assert (plan.revealed is not None) == bool(revealed)
        if plan.revealed is not None:
            assert plan.revealed in revealed
            continue
        assert plan.dependent == (len(_fraction_units_rank(answered + [q.tolist()], n)) ==
                                  len(_fraction_units_rank(answered, n)))
        state.commit(plan)
        answered.append(q.tolist())
        assert state.determined().tolist() == []
    assert state.rank == len(_fraction_units_rank(answered, n))


def _fraction_units_rank(rows_list, n):
    """The pivots of the span (its dimension is their number)."""
    matrix = [[Fraction(int(i in set(r))) for i in range(n)] for r in rows_list]
    pivots, reduced = [], []
    for row in matrix:
        for p, base in zip(pivots, reduced):
            if row[p]:
                row = [a - row[p] * b for a, b in zip(row, base)]
        nonzero = [i for i, v in enumerate(row) if v]
        if nonzero:
            pivots.append(nonzero[0])
            reduced.append([v / row[nonzero[0]] for v in row])
    return pivots


def test_sum_auditor_on_a_difference_attack():
    # sum(all) and sum(all but record 2) would give x2: the second is denied by both auditors.
    data = pd.DataFrame({"x": [5, 7, 11, 13]})
    for auditor in ("simulatable", "value-based"):
        session = AuditSession(data, "x", auditor=auditor)
        assert session.ask("sum").answer == 36
        denied = session.ask("sum rows 0, 1, 3")
        assert not denied.answered and denied.record == 2
        again = session.ask("sum rows 0, 1, 2, 3")
        assert again.answered and "follows from earlier answers" in again.reason
        assert DenialAttack(auditor).run(session.transcript_, 4).inferences_ == []


@settings(max_examples=80, **PROPERTY)
@given(sum_queries(), st.integers(0, 2 ** 32 - 1))
def test_sum_auditor_decides_alike_on_tables_that_agree_on_the_answers(case, seed):
    n, queries = case
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 100, n).astype(float)
    run = _audit(x, queries, "sum", SimulatableAuditor())
    step = int(rng.integers(0, len(queries)))
    answered = [q.tolist() for q, d in zip(queries[:step], run) if d.answered]
    twin = x + _integer_null_vector(answered, n, rng)
    twin_run = _audit(twin, queries[:step + 1], "sum", SimulatableAuditor())
    for d, e in zip(run[:step], twin_run):
        assert d.answered == e.answered and (not d.answered or d.answer == e.answer)
    assert run[step].answered == twin_run[step].answered


def _integer_null_vector(rows_list, n, rng):
    """A random integer vector z with q·z = 0 for every query (zero when the span is full)."""
    pivots = _fraction_units_rank(rows_list, n)
    free = [i for i in range(n) if i not in pivots]
    if not free:
        return np.zeros(n)
    # Reduced rows: pivot + Σ r_f x_f = 0, so x_pivot = −Σ r_f x_f.
    matrix = [[Fraction(int(i in set(r))) for i in range(n)] for r in rows_list]
    reduced = []
    for row in matrix:
        for p, base in zip([b[0] for b in reduced], [b[1] for b in reduced]):
            if row[p]:
                row = [a - row[p] * b for a, b in zip(row, base)]
        nz = [i for i, v in enumerate(row) if v]
        if nz:
            row = [v / row[nz[0]] for v in row]
            reduced = [(p, [a - base[nz[0]] * b for a, b in zip(base, row)]) for p, base in reduced]
            reduced.append((nz[0], row))
    z = {f: Fraction(int(rng.integers(-3, 4))) for f in free}
    for p, base in reduced:
        z[p] = -sum(base[f] * z[f] for f in free)
    scale = 1
    for v in z.values():
        scale = scale * v.denominator // np.gcd(scale, v.denominator)
    return np.array([float(z[i] * scale) for i in range(n)])


# --------------------------------------------------------------------------------------------
# Sessions: families, queries, bad input

def test_a_session_answers_one_family_of_aggregates():
    session = AuditSession(pd.DataFrame({"x": [1, 2, 3, 4], "g": list("abab")}), "x")
    assert session.ask("max where g = a").answered
    mixed = session.ask("min where g = b")
    assert not mixed.answered and "mixing MIN" in mixed.reason and mixed.record is None
    assert not session.ask("sum").answered
    assert DenialAttack("value-based").run(session.transcript_, 4).inferences_ == []


def test_query_text_forms():
    data = pd.DataFrame({"x": [10, 20, 30, 40, 50], "age": [25, 31, 47, 52, 31.0],
                         "city": ["New York", "Paris", None, "Paris", "Rome"]})
    session = AuditSession(data, "x")
    assert session.parse("sum where age between 30 and 50").rows.tolist() == [1, 2, 4]
    assert session.parse("sum where age >= 31 and age < 52").rows.tolist() == [1, 2, 4]
    assert session.parse("sum where age = 31.0").rows.tolist() == [1, 4]
    assert session.parse("sum where city in ('New York', Rome)").rows.tolist() == [0, 4]
    assert session.parse("sum where city = ''").rows.tolist() == [2]
    assert session.parse("sum where city != Paris").rows.tolist() == [0, 2, 4]
    assert session.parse("MAX rows 4, 0").rows.tolist() == [0, 4]
    assert session.parse("min").rows.tolist() == [0, 1, 2, 3, 4]


def test_bad_input_is_one_sentence():
    data = pd.DataFrame({"x": [1, 2, 3], "name": ["a", "b", "c"], "gap": [1.0, None, 2.0]})
    one_sentence_error(DataError, lambda: AuditSession(data, "name"), "holds text", "numeric column")
    one_sentence_error(DataError, lambda: AuditSession(data, "gap"), "no number in 1 record")
    one_sentence_error(ColumnError, lambda: AuditSession(data, "y"), "'y' does not exist")
    one_sentence_error(ParameterError, lambda: AuditSession(data, "x", auditor="naive"), "no auditor 'naive'")
    session = AuditSession(data, "x")
    one_sentence_error(QueryError, lambda: session.ask("max where name = z"), "selects no record")
    one_sentence_error(ColumnError, lambda: session.ask("max where nmae = a"), "'nmae'", "did you mean 'name'")
    one_sentence_error(QueryError, lambda: session.ask("max where name > a"), "holds text")
    one_sentence_error(QueryError, lambda: session.ask("avg"), "max, min or sum")
    one_sentence_error(QueryError, lambda: session.ask("sum rows 0, 7"), "record 7", "0 to 2")
    one_sentence_error(QueryError, lambda: session.ask("sum where x = 1 or x = 2"), "joined by 'and'")
    one_sentence_error(QueryError, lambda: session.run(["max", "max where x ="]), "has no value")
    assert session.log_ == []  # a bad query in a batch stops it before any decision


def test_a_queries_file_is_read_whole_and_a_bad_line_is_named_by_its_number(tmp_path):
    data = tmp_path / "x.csv"
    data.write_text("name,x,g\na,3,u\nb,8,u\nc,1,v\n", encoding="utf-8")
    good = tmp_path / "good.txt"
    good.write_text("# comment\n\nmax\nsum where g = u\n", encoding="utf-8")
    session = AuditSession(data, "x")
    assert [q.aggregate for q in session.parse_file(good)] == ["max", "sum"]
    bad = tmp_path / "bad.txt"
    bad.write_text("max\n# comment\n\nmean where g = u\n", encoding="utf-8")
    with pytest.raises(QueryError, match=r"^line 4 of .*bad\.txt'.*max, min or sum"):
        session.parse_file(bad)
    assert session.log_ == []
