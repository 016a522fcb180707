"""Tests of what full-domain generalization publishes (veil.anonymize.Release).

1. Property tests on random tables, models and options: every release satisfies its models (on
   its classes, and on the CSV read back with veil.Dataset and measured with veil.check); every
   input record is published or counted as suppressed; rows are shuffled by default and keep the
   input's order when asked to (the same rows either way); suppressed records shown as ``*`` are
   exactly the suppressed ones; the generalization map agrees with the hierarchy levels; the
   manifest is JSON without NaN.
2. Examples: shuffling with a seed, the kind of frame returned, identifying columns dropped, the
   manifest's keys, writing files.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import veil
from veil import Dataset, DataError, EquivalenceClasses, ParameterError, builders
from veil.anonymize import FullDomain, InfeasibleError, Release
from veil.models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosure, DistinctLDiversity, EntropyLDiversity,
                         KAnonymity, RecursiveCLDiversity, TCloseness)

QIS = ["zip", "age", "sex"]
SENSITIVE = ["disease", "income"]
PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOLERANCE = 1e-9


def random_frame(seed: int, n: int) -> pd.DataFrame:
    """``id`` (identifying), three quasi-identifiers, a text and a numeric sensitive column and an
    insensitive ``note``, with skewed values so that some classes are small."""
    rng = np.random.default_rng(seed)

    def skewed(m: int) -> np.ndarray:
        return rng.choice(m, n, p=rng.dirichlet(np.full(m, float(rng.choice([0.3, 1.0, 4.0])))))

    pool = ["".join(str(d) for d in rng.integers(0, 3, 3)) for _ in range(int(rng.integers(2, 9)))]
    return pd.DataFrame({
        "id": [f"person-{i}" for i in range(n)],
        "zip": [pool[i] for i in skewed(len(pool))],
        "age": 20 + skewed(int(rng.integers(3, 40))),
        "sex": np.array(["F", "M", "X"])[skewed(int(rng.integers(1, 4)))],
        "disease": np.array(["flu", "cold", "cancer", "gastritis", "asthma"])[skewed(int(rng.integers(1, 6)))],
        "income": 1000 * (1 + skewed(int(rng.integers(1, 6)))),
        "note": [f"n{i % 7}" for i in range(n)],
    })


def hierarchies(frame: pd.DataFrame) -> dict:
    return {"zip": builders.masking(frame["zip"]), "age": builders.intervals(frame["age"], [5, 10]),
            "sex": builders.flat(frame["sex"])}


def dataset(frame, *, kind: str = "pandas") -> Dataset:
    data = {"pandas": frame, "polars": pl.from_pandas(frame) if isinstance(frame, pd.DataFrame) else frame,
            "arrow": pa.Table.from_pandas(frame, preserve_index=False)}[kind]
    return Dataset(data, quasi_identifiers=QIS, sensitive=SENSITIVE, identifying=["id"],
                   hierarchies=hierarchies(frame))


def rounded(low, high):
    return st.floats(low, high).map(lambda x: round(x, 2))


TARGET = st.sampled_from([None, "disease", "income"])
MODELS = st.one_of(
    st.builds(KAnonymity, st.integers(1, 5)),
    st.builds(AlphaKAnonymity, rounded(0.4, 1.0), st.none() | st.integers(1, 4), TARGET),
    st.builds(DistinctLDiversity, st.integers(1, 3), TARGET),
    st.builds(EntropyLDiversity, rounded(1.0, 2.5), TARGET),
    st.builds(RecursiveCLDiversity, rounded(1.0, 4.0), st.integers(1, 3), TARGET),
    st.builds(TCloseness, rounded(0.15, 0.9), st.just("equal"), TARGET),
    st.builds(TCloseness, rounded(0.15, 0.9), st.just("ordered"), st.just("income")),
    st.builds(DeltaDisclosure, rounded(0.5, 3.0), TARGET),
    st.builds(BetaLikeness, rounded(0.5, 5.0), st.booleans(), TARGET),
)
LIMITS = st.one_of(st.just(0.0), rounded(0.02, 0.3))


def fit_or_none(frame, models, limit, metric="loss", kind="pandas"):
    ds = dataset(frame, kind=kind)
    try:
        return ds, FullDomain(models, suppression_limit=limit, metric=metric).fit(ds)
    except InfeasibleError:
        event("infeasible")
        return ds, None


def suppressed_rows(release: Release) -> np.ndarray:
    return release.failing[release.classes.row_class]


def sorted_rows(frame: pd.DataFrame) -> list[tuple]:
    """The rows of a frame as text, sorted: what two releases in different orders share."""
    return sorted(map(tuple, frame.astype(str).to_numpy()))


def check_level(report, model) -> None:
    """The level veil.check measures on the re-read release meets the model's threshold."""
    result = report.results[model.key]
    if result.by_sensitive and model.sensitive is not None:
        result = result.by_sensitive[model.sensitive]
    elif model.sensitive is not None:
        assert result.sensitive in (None, model.sensitive)
    slack = TOLERANCE * max(1.0, model.threshold)
    if model.higher_is_better:
        assert result.level >= model.threshold - slack, (model, result.level)
    elif model.strict:
        assert result.level < model.threshold + slack, (model, result.level)
    else:
        assert result.level <= model.threshold + slack, (model, result.level)


# --------------------------------------------------------------------------------------------
# 1. Properties of every release

@settings(max_examples=100, **PROPERTY)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(10, 150), models=st.lists(MODELS, min_size=1, max_size=3),
       limit=LIMITS)
def test_release_satisfies_its_models_and_accounts_for_every_record(seed, n, models, limit):
    frame = random_frame(seed, n)
    before = frame.copy(deep=True)
    ds, fitted = fit_or_none(frame, models, limit)
    if fitted is None:
        return
    release = fitted.transform(ds)
    suppressed = suppressed_rows(release)

    # Every record is published or counted as suppressed, within the limit.
    assert release.suppressed_records == int(suppressed.sum()) == fitted.result_.suppressed_records
    assert release.suppressed_records <= math.floor(limit * n + 1e-9)
    assert release.table.num_rows + release.suppressed_records == n
    assert int(release.released_classes.sizes.sum()) == release.table.num_rows

    # Every model holds on the released classes ...
    for model in models:
        assert model.evaluate(release.released_classes).passed, model

    # ... and on the published CSV, read back as a new dataset and measured by veil.check. The
    # class-local models (k, α, the ℓ-diversities) hold on the file itself; those that compare each
    # class with the whole table (t-closeness, δ-disclosure, β-likeness) are defined against the
    # input's distribution, which the manifest carries when records were suppressed.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "release.csv"
        path.write_text(release.csv_text(), encoding="utf-8")
        published = Dataset(path, quasi_identifiers=QIS, sensitive=SENSITIVE)
    assert published.num_rows == release.table.num_rows
    reread = EquivalenceClasses.from_dataset(published)
    assert sorted(reread.sizes.tolist()) == sorted(release.released_classes.sizes.tolist())
    local = [m for m in models if not isinstance(m, (TCloseness, DeltaDisclosure, BetaLikeness))]
    for model in (models if release.suppressed_records == 0 else local):
        assert model.evaluate(reread).passed, model
    recursive = [m for m in local if isinstance(m, RecursiveCLDiversity)]
    report = veil.check(published, c=recursive[0].c if recursive else 2.0, classes=reread,
                        manifest=release.curator_manifest)
    for model in models:
        if not isinstance(model, RecursiveCLDiversity) or model.c == report.c:
            check_level(report, model)

    # With the input's order kept, row i is the i-th kept record: the identifying column is
    # dropped, every other column is published, and the columns that are not generalized are
    # unchanged.
    out = fitted.transform(ds, shuffle=False).data
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["zip", "age", "sex", "disease", "income", "note"]
    kept = frame.loc[~suppressed].reset_index(drop=True)
    for column in ("disease", "income", "note"):
        assert out[column].tolist() == kept[column].tolist()
    # Generalized columns hold each kept record's value at the chosen level.
    for q, level in fitted.levels_.items():
        expected = ds.labels(q, level)[ds.generalized_codes(q, level)][~suppressed]
        assert out[q].astype(str).tolist() == [str(v) for v in expected]
    # The default release publishes the same rows, shuffled.
    assert sorted_rows(release.data) == sorted_rows(out)
    pd.testing.assert_frame_equal(frame, before)


@settings(max_examples=40, **PROPERTY)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(10, 150), models=st.lists(MODELS, min_size=1, max_size=2),
       limit=rounded(0.05, 0.3), shuffle=st.booleans(), shuffle_seed=st.integers(0, 2 ** 31))
def test_star_keeps_every_row_and_stars_exactly_the_suppressed(seed, n, models, limit, shuffle, shuffle_seed):
    frame = random_frame(seed, n)
    ds, fitted = fit_or_none(frame, models, limit)
    if fitted is None:
        return
    # Row by row against the input, so in the input's order.
    release = fitted.transform(ds, suppressed="star", shuffle=False)
    assert release.table.num_rows == n
    suppressed = suppressed_rows(release)
    out = release.data
    starred = (out[QIS] == "*").all(axis=1).to_numpy()
    assert starred[suppressed].all()
    # A record that is not suppressed shows its generalized values (all * only at the top node).
    top = all(level == ds.generalizations[q].height for q, level in fitted.levels_.items())
    assert starred[~suppressed].all() if top else not starred[~suppressed].any()
    gmap = release.generalization_map()
    for q in QIS:
        assert out.loc[~suppressed, q].tolist() == [gmap[q][str(v)] for v in frame.loc[~suppressed, q]]
    assert out["note"].tolist() == frame["note"].tolist()
    if suppressed.any():
        event("star with suppressed records")
    # Shuffled (by default securely; with a seed in an order the seed fixes), the same rows.
    if shuffle:
        first = fitted.transform(ds, suppressed="star", rng=shuffle_seed)
        second = fitted.transform(ds, suppressed="star", rng=shuffle_seed)
        assert first.table.equals(second.table)
        assert first.manifest["output"]["seed"] == shuffle_seed and first.manifest["output"]["shuffled"]
    else:
        first = fitted.transform(ds, suppressed="star")
        assert first.manifest["output"]["order"] == "secure shuffle"
    assert sorted_rows(first.data) == sorted_rows(out)


@settings(max_examples=30, **PROPERTY)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(10, 150), models=st.lists(MODELS, min_size=1, max_size=3),
       limit=LIMITS, style=st.sampled_from(["remove", "star"]))
def test_manifest_is_complete_and_strict_json(seed, n, models, limit, style):
    frame = random_frame(seed, n)
    ds, fitted = fit_or_none(frame, models, limit, metric="discernibility")
    if fitted is None:
        return
    release = fitted.transform(ds, suppressed=style)
    published, private = release.manifest, release.private_manifest
    for doc in (published, private):
        json.dumps(doc, allow_nan=False)  # raises on NaN or infinity
    assert json.loads(release.manifest_text()) == json.loads(json.dumps(published))
    # The published manifest describes the transformation; what the input holds is in the private file.
    assert {"manifest_version", "veil", "created", "algorithm", "input", "roles", "output", "suppression", "classes",
            "models", "node", "heights", "search"} <= published.keys()
    assert not {"metrics", "generalization", "reference", "hierarchy_rows"} & published.keys()
    assert "rows" not in published["input"] and set(published["search"]) == {"metric"}
    assert set(published["suppression"]) == ({"limit", "records"} if style == "star" else {"limit"})
    assert {"input", "suppression", "models", "metrics", "reference", "generalization", "hierarchy_rows",
            "search"} <= private.keys()
    manifest = release.curator_manifest
    assert manifest["algorithm"] == "fulldomain"
    assert manifest["input"]["rows"] == n and manifest["input"]["kind"] == "pandas"
    assert manifest["input"]["columns"] == list(frame.columns)
    assert manifest["roles"] == {"quasi_identifiers": QIS, "sensitive": SENSITIVE, "identifying": ["id"],
                                 "insensitive": ["note"]}
    assert manifest["output"]["rows"] == release.table.num_rows
    assert manifest["output"]["columns"] == ["zip", "age", "sex", "disease", "income", "note"]
    assert manifest["output"]["suppressed"] == style
    assert manifest["suppression"]["records"] == release.suppressed_records
    assert manifest["suppression"]["limit"] == limit
    assert manifest["suppression"]["share"] == pytest.approx(release.suppressed_records / n)
    assert manifest["classes"]["released"] == release.released_classes.n_classes
    assert manifest["classes"]["smallest"] == int(release.released_classes.sizes.min())
    assert [row["key"] for row in manifest["models"]] == [m.key for m in models]
    assert all(row["passed"] is True for row in manifest["models"])
    assert [{k: v for k, v in row.items() if k != "level"} for row in manifest["models"]] == \
        [{k: v for k, v in row.items() if k != "level"} for row in published["models"]]
    assert manifest["node"] == fitted.levels_
    assert manifest["heights"] == {q: ds.generalizations[q].height for q in QIS}
    assert manifest["generalization"] == release.generalization_map()
    assert manifest["search"]["metric"] == "discernibility"
    assert manifest["search"]["loss"] == fitted.result_.loss
    assert manifest["metrics"]["discernibility"] == fitted.result_.loss
    assert manifest["search"]["proven_optimal"] is True
    # Every metric value is a number (or "inf"), never NaN.
    for key, value in manifest["metrics"].items():
        assert value == "inf" or (isinstance(value, (int, float)) and math.isfinite(value)), key


@settings(max_examples=30, **PROPERTY)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(10, 150), limit=LIMITS, k=st.integers(1, 4))
def test_generalization_map_agrees_with_the_hierarchy_levels(seed, n, limit, k):
    frame = random_frame(seed, n)
    ds, fitted = fit_or_none(frame, [KAnonymity(k)], limit, metric="height")
    if fitted is None:
        return
    gmap = fitted.transform(ds).generalization_map()
    assert set(gmap) == set(QIS)
    built = hierarchies(frame)
    for q in QIS:
        level = fitted.levels_[q]
        # The hierarchy as ARX rows: leaf -> its label at each level.
        rows = {row[0]: row for row in built[q].rows()}
        values = sorted({str(v) for v in frame[q]})
        assert sorted(gmap[q]) == values
        assert all(gmap[q][v] == rows[v][level] for v in values)


# --------------------------------------------------------------------------------------------
# 2. Examples

@pytest.fixture
def frame() -> pd.DataFrame:
    return random_frame(seed=11, n=120)


@pytest.fixture
def fitted(frame):
    ds = dataset(frame)
    return ds, FullDomain([KAnonymity(3), DistinctLDiversity(2, sensitive="disease")], suppression_limit=0.1,
                          metric="loss").fit(ds)


def test_shuffle_with_seed_is_a_reproducible_permutation(fitted):
    ds, search = fitted
    plain = search.transform(ds, shuffle=False)
    first = search.transform(ds, rng=42)
    again = search.transform(ds, rng=42)
    other = search.transform(ds, rng=43)
    assert first.table.equals(again.table)
    assert not first.table.equals(plain.table)
    assert not first.table.equals(other.table)  # 117 rows: another seed gives another order
    rows = lambda release: sorted(map(tuple, release.data.astype(str).to_numpy()))  # noqa: E731
    assert rows(first) == rows(plain) == rows(other)
    assert first.manifest["output"] == {**plain.manifest["output"], "shuffled": True, "seed": 42,
                                        "order": "seeded shuffle"}
    assert plain.manifest["output"]["seed"] is None and plain.manifest["output"]["shuffled"] is False
    # A Generator works too; its seed is unknown to the manifest.
    generated = search.transform(ds, rng=np.random.default_rng(42))
    assert generated.manifest["output"]["seed"] is None
    assert rows(generated) == rows(plain)
    assert first.csv_text() == again.csv_text()


@pytest.mark.parametrize("kind, cls", [("pandas", pd.DataFrame), ("polars", pl.DataFrame), ("arrow", pa.Table)])
def test_frame_kind_in_is_frame_kind_out(frame, kind, cls):
    ds = dataset(frame, kind=kind)
    release = FullDomain([KAnonymity(3)], suppression_limit=0.05).fit_transform(ds)
    out = release.data
    assert isinstance(out, cls)
    assert list(out.columns if kind != "arrow" else out.column_names) == ["zip", "age", "sex", "disease",
                                                                         "income", "note"]
    assert len(out) == release.table.num_rows
    as_pandas = out if kind == "pandas" else out.to_pandas()
    reference = FullDomain([KAnonymity(3)], suppression_limit=0.05).fit_transform(dataset(frame)).data
    # Two shuffles: the same rows in another order.
    columns = list(reference.columns)
    pd.testing.assert_frame_equal(as_pandas.sort_values(columns).reset_index(drop=True),
                                  reference.sort_values(columns).reset_index(drop=True), check_dtype=False)
    assert release.manifest["input"]["kind"] == kind


def test_polars_input_is_not_modified(frame):
    polars_frame = pl.from_pandas(frame)
    before = polars_frame.clone()
    ds = Dataset(polars_frame, quasi_identifiers=QIS, sensitive=SENSITIVE, identifying=["id"],
                 hierarchies=hierarchies(frame))
    FullDomain([KAnonymity(4)], suppression_limit=0.1).fit_transform(ds, suppressed="star", shuffle=True, rng=3)
    assert polars_frame.equals(before)


def test_csv_input_gives_pandas_and_keeps_the_delimiter(tmp_path, frame):
    path = tmp_path / "people.csv"
    frame.to_csv(path, sep=";", index=False)
    before = path.read_bytes()
    ds = Dataset(path, quasi_identifiers=QIS, sensitive=SENSITIVE, identifying=["id"],
                 hierarchies=hierarchies(frame))
    release = FullDomain([KAnonymity(3)], suppression_limit=0.05).fit_transform(ds)
    assert isinstance(release.data, pd.DataFrame)
    text = release.csv_text()
    assert text.splitlines()[0] == "zip;age;sex;disease;income;note"
    assert len(text.splitlines()) == release.table.num_rows + 1
    assert release.csv_text(delimiter=",").splitlines()[0] == "zip,age,sex,disease,income,note"
    assert path.read_bytes() == before


def test_identifying_columns_are_dropped_everywhere(fitted):
    ds, search = fitted
    for style in ("remove", "star"):
        release = search.transform(ds, suppressed=style)
        assert "id" not in release.table.column_names
        assert "id" not in release.csv_text().splitlines()[0].split(",")
        assert "person-0" not in release.csv_text()
        assert "id" not in release.manifest["output"]["columns"]


def test_values_with_the_delimiter_are_quoted(tmp_path):
    frame = pd.DataFrame({"zip": ["130", "130", "131", "131"], "sex": ["F", "F", "M", "M"],
                          "note": ["a,b", 'say "hi"', "plain", "x"]})
    ds = Dataset(frame, quasi_identifiers=["zip", "sex"],
                 hierarchies={"zip": builders.masking(frame["zip"]), "sex": builders.flat(frame["sex"])})
    release = FullDomain([KAnonymity(2)]).fit_transform(ds)
    path = tmp_path / "out.csv"
    release.to_csv(path)
    back = pd.read_csv(path, dtype=str)
    assert sorted(back["note"]) == sorted(["a,b", 'say "hi"', "plain", "x"])


def test_files_are_written_atomically_and_refused_in_missing_folders(tmp_path, fitted):
    ds, search = fitted
    release = search.transform(ds)
    release.to_csv(tmp_path / "out.csv")
    release.write_manifest(tmp_path / "manifest.json")
    assert (tmp_path / "out.csv").read_text(encoding="utf-8") == release.csv_text()
    written = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert written["output"] == release.manifest["output"]
    with pytest.raises(DataError, match="does not exist"):
        release.to_csv(tmp_path / "missing" / "out.csv")
    with pytest.raises(DataError, match="does not exist"):
        release.write_manifest(tmp_path / "missing" / "manifest.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "manifest.private.json", "out.csv"]


@pytest.mark.parametrize("style, shuffle", [("remove", False), ("star", False), ("remove", True)])
def test_the_csv_in_small_pieces_is_the_csv_whole(fitted, style, shuffle):
    ds, search = fitted
    release = search.transform(ds, suppressed=style, shuffle=shuffle, rng=5)
    whole = release.csv_text()
    assert b"".join(release.csv_chunks(rows=7)).decode("utf-8") == whole
    assert whole.count("\n") == release.table.num_rows + 1 == release.num_rows + 1
    assert whole.splitlines()[0].split(",") == release.table.column_names == release.column_names


def test_a_suppressed_value_with_the_delimiter_does_not_quote_the_release(tmp_path):
    # Quoting is decided on the published rows only, as it always was.
    csv = tmp_path / "in.csv"
    csv.write_text('zip;note\n130;a\n130;b\n999;"semi;colon"\n', encoding="utf-8")
    ds = Dataset(csv, quasi_identifiers=["zip"], sensitive="note",
                 hierarchies={"zip": builders.flat(["130", "999"])})
    search = FullDomain([KAnonymity(2)], suppression_limit=0.34).fit(ds)
    removed = search.transform(ds).csv_text()
    assert removed.startswith("zip;note\n") and sorted(removed.splitlines()[1:]) == ["130;a", "130;b"]
    shown = search.transform(ds, suppressed="star").csv_text()
    assert sorted(shown.splitlines()[1:]) == ['"*";"semi;colon"', '"130";"a"', '"130";"b"']
    assert sorted(pd.read_csv(io.StringIO(shown), sep=";", dtype=str)["note"]) == ["a", "b", "semi;colon"]


def test_unknown_suppressed_style_is_refused(fitted):
    ds, search = fitted
    with pytest.raises(ParameterError, match="'remove'd or shown as 'star'"):
        search.transform(ds, suppressed="hide")


def test_manifest_model_levels_are_measured_on_the_released_records(fitted):
    ds, search = fitted
    release = search.transform(ds)
    rows = {row["key"]: row for row in release.manifest["models"]}
    assert rows["k"]["level"] == int(release.released_classes.sizes.min()) >= 3
    assert rows["k"]["threshold"] == 3 and rows["k"]["sensitive"] is None
    assert rows["l_distinct"]["sensitive"] == "disease" and rows["l_distinct"]["level"] >= 2
    assert all(row["passed"] for row in rows.values())
