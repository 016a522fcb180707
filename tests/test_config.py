"""Configuration files: the example, every validation error (file, line, key), paths, builders and
the starter configuration written by ``veil init``."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

import veil
from veil.config import (AnonymizationConfig, ConfigError, load_config, starter_config,
                         write_starter_config)
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_folder

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult-fulldomain.yaml"

PEOPLE = ("id,name,age,zip,sex,disease\n"
          "1,Ann,28,13053,F,flu\n2,Bob,29,13068,M,cancer\n3,Cid,21,13068,M,flu\n"
          "4,Dee,23,13053,F,cold\n5,Eve,50,14853,F,cancer\n6,Fay,55,14853,F,flu\n"
          "7,Gus,47,14850,M,cold\n8,Hal,36,13053,M,flu\n9,Ida,41,14850,F,cancer\n"
          "10,Jo,33,13068,F,flu\n")

BASE = """\
data: people.csv
columns:
  quasi_identifiers: [age, zip, sex]
  sensitive: [disease]
  identifying: [id, name]
hierarchies:
  age: {intervals: {widths: [10, 20]}}
  zip: {masking: {}}
  sex: {flat: {}}
models:
  - k_anonymity: {k: 2}
  - distinct_l_diversity: {l: 2, sensitive: disease}
suppression_limit: 0.1
metric: loss
algorithm: {name: fulldomain, search: optimal}
output: {suppressed: remove, shuffle: true, seed: 7}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "people.csv").write_text(PEOPLE, encoding="utf-8")
    return tmp_path


def write(folder: Path, text: str, name: str = "job.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    """The 1-based number of the first line of ``text`` holding ``needle``."""
    for number, line in enumerate(textwrap.dedent(text).splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} is not in the text")


def error_of(path: Path, **kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, **kwargs)
    return str(info.value)


def assert_names(message: str, path: Path, line: int, *keys: str) -> None:
    assert message.startswith(f"{path}, line {line}: "), message
    for key in keys:
        assert key in message, (key, message)
    assert "\n" not in message


# -- the example ---------------------------------------------------------------------------------

def test_example_loads_with_the_demo_settings():
    config = load_config(EXAMPLE)
    assert isinstance(config, AnonymizationConfig)
    assert config.data == adult_folder() / "adult.csv" or config.data.samefile(adult_folder() / "adult.csv")
    assert config.quasi_identifiers == ADULT_QUASI_IDENTIFIERS
    assert config.sensitive == ("occupation",)
    assert config.suppression_limit == 0.02
    assert config.metric_spec.name == "loss"
    assert config.algorithm.name == "fulldomain" and config.algorithm.options["search"] == "optimal"
    assert set(config.hierarchies) == set(ADULT_QUASI_IDENTIFIERS) | {"occupation"}
    for spec in config.hierarchies.values():
        assert spec.kind == "file" and spec.path.is_file()
    models = config.models()
    assert [type(m) for m in models] == [veil.KAnonymity, veil.EntropyLDiversity]
    assert models[0].threshold == 5 and models[1].threshold == 3 and models[1].sensitive == "occupation"
    ds = config.dataset()
    assert ds.num_rows == 30_162 and ds.hierarchies["age"].levels == 5
    assert config.to_dict()["models"] == [{"k_anonymity": {"k": 5}},
                                          {"entropy_l_diversity": {"l": 3, "sensitive": "occupation"}}]


def test_example_says_data_is_overridden_by_the_data_argument():
    text = EXAMPLE.read_text(encoding="utf-8")
    assert "DATA argument overrides" in text
    assert "data: ../src/veil/resources/adult/adult.csv" in text


def test_example_builds_a_fulldomain_anonymizer():
    anonymize = pytest.importorskip("veil.anonymize")
    pytest.importorskip("veil.metrics")
    if not hasattr(anonymize, "FullDomain"):
        pytest.skip("veil.anonymize does not export FullDomain yet")
    anonymizer = load_config(EXAMPLE).anonymizer()
    assert isinstance(anonymizer, anonymize.FullDomain)


# -- a valid configuration -----------------------------------------------------------------------

def test_base_config_loads_and_builds(folder: Path):
    config = load_config(write(folder, BASE))
    assert config.data == folder / "people.csv"
    assert config.identifying == ("id", "name")
    assert config.output.shuffle is True and config.output.seed == 7
    assert config.hierarchies["zip"].kind == "masking"
    ds = config.dataset()
    assert ds.quasi_identifiers == ["age", "zip", "sex"] and ds.num_rows == 10
    assert ds.hierarchies["zip"].rows()[0][:2] == ["13053", "1305*"]


def test_builders_give_the_same_hierarchy_as_calling_them(folder: Path):
    text = BASE.replace("zip: {masking: {}}", "zip: {masking: {char: '#'}}").replace(
        "age: {intervals: {widths: [10, 20]}}", "age: {intervals: {widths: [5, 10, 20], start: 0}}")
    ds = load_config(write(folder, text)).dataset()
    table = veil.data.read_table(folder / "people.csv")
    assert ds.hierarchies["age"].rows() == veil.builders.intervals(table.data.column("age"), widths=[5, 10, 20],
                                                                   start=0).rows()
    assert ds.hierarchies["zip"].rows() == veil.builders.masking(table.data.column("zip"), char="#").rows()
    assert ds.hierarchies["sex"].rows() == veil.builders.flat(table.data.column("sex")).rows()


def test_dates_builder_and_file_hierarchy(folder: Path):
    (folder / "visits.csv").write_text("when,sex,disease\n2024-01-05,F,flu\n2024-02-11,M,cold\n"
                                       "2023-12-30,F,flu\n", encoding="utf-8")
    (folder / "h").mkdir()
    (folder / "h" / "sex.csv").write_text("F;*\nM;*\n", encoding="utf-8")
    path = write(folder, """\
        data: visits.csv
        columns: {quasi_identifiers: [when, sex], sensitive: disease}
        hierarchies:
          when: {dates: {units: [month, quarter, year]}}
          sex: h/sex.csv
        models: [{k_anonymity: {k: 1}}]
        """)
    config = load_config(path)
    assert config.hierarchies["sex"].path == folder / "h" / "sex.csv"
    ds = config.dataset()
    values = veil.data.read_table(folder / "visits.csv").data.column("when")
    assert ds.hierarchies["when"].rows() == veil.builders.dates(values, ["month", "quarter", "year"]).rows()
    assert ds.hierarchies["sex"].rows() == [["F", "*"], ["M", "*"]]


def test_relative_paths_resolve_against_the_config_folder(folder: Path, monkeypatch):
    conf = folder / "conf"
    conf.mkdir()
    (folder / "ages.csv").write_text("".join(f"{a};{a // 10 * 10}s;*\n" for a in range(0, 100)), encoding="utf-8")
    text = BASE.replace("data: people.csv", "data: ../people.csv").replace(
        "age: {intervals: {widths: [10, 20]}}", "age: {file: ../ages.csv}")
    path = write(conf, text)
    monkeypatch.chdir(conf.parent.parent)  # anywhere but the config's folder
    config = load_config(os.path.relpath(path))
    assert config.data == folder / "people.csv"
    assert config.hierarchies["age"].path == folder / "ages.csv"
    assert config.dataset().hierarchies["age"].levels == 3


def test_data_argument_overrides_the_config(folder: Path, tmp_path_factory):
    other_dir = tmp_path_factory.mktemp("other")
    other = other_dir / "more.csv"
    other.write_text(PEOPLE + "11,Kim,60,14853,M,flu\n", encoding="utf-8")
    path = write(folder, BASE)
    config = load_config(path, data=other)
    assert config.data == other and config.dataset().num_rows == 11
    # With a DATA argument the config may leave data out, and may name a missing file.
    assert load_config(write(folder, BASE.replace("data: people.csv\n", "")), data=other).data == other
    assert load_config(write(folder, BASE.replace("people.csv", "gone.csv")), data=other).data == other
    message = error_of(path, data=other_dir / "nope.csv")
    assert "nope.csv" in message and "does not exist" in message


def test_mondrian_and_mdav_validate_but_need_their_implementation(folder: Path):
    text = BASE.replace("algorithm: {name: fulldomain, search: optimal}", "algorithm: {name: mondrian, mode: relaxed}")
    text = text.replace("hierarchies:\n  age: {intervals: {widths: [10, 20]}}\n", "hierarchies:\n")
    config = load_config(write(folder, text))  # no hierarchy for age: Mondrian needs none
    assert config.algorithm.name == "mondrian" and config.algorithm.options == {"mode": "relaxed"}
    mdav = load_config(write(folder, text.replace("{name: mondrian, mode: relaxed}", "{name: mdav, k: 3}")))
    assert mdav.algorithm.options == {"k": 3}
    try:
        import veil.anonymize as anonymize
    except ImportError:
        anonymize = None
    if anonymize is None or not hasattr(anonymize, "Mondrian"):
        with pytest.raises(ConfigError, match="mondrian.*not available"):
            config.anonymizer()
    path = write(folder, text.replace("{name: mondrian, mode: relaxed}", "{name: mondrian, mode: loose}"))
    assert_names(error_of(path), path, line_of(text, "algorithm:"), "algorithm.mode", "'loose'")


# -- every validation error names the file, the line and the key ---------------------------------

def check_error(folder: Path, text: str, needle: str, *keys: str, **kwargs) -> str:
    path = write(folder, text)
    message = error_of(path, **kwargs)
    assert_names(message, path, line_of(text, needle), *keys)
    return message


def test_unknown_top_level_key_suggests_the_closest(folder: Path):
    text = BASE.replace("suppression_limit: 0.1", "suppresion_limit: 0.1")
    message = check_error(folder, text, "suppresion_limit", "'suppresion_limit'")
    assert "did you mean 'suppression_limit'?" in message


def test_unknown_model_suggests_the_closest(folder: Path):
    text = BASE.replace("- k_anonymity: {k: 2}", "- k_anonimity: {k: 2}")
    message = check_error(folder, text, "k_anonimity", "unknown model 'k_anonimity'")
    assert message.endswith("did you mean 'k_anonymity'?")


@pytest.mark.parametrize("old, new, needle, keys", [
    ("{k: 2}", "{k: two}", "k_anonymity", ("k_anonymity.k", "whole number", "'two'")),
    ("{k: 2}", "{k: 2.5}", "k_anonymity", ("k_anonymity.k", "whole number")),
    ("{k: 2}", "{k: 0}", "k_anonymity", ("k_anonymity.k", "at least 1", "not 0")),
    ("suppression_limit: 0.1", "suppression_limit: 1.5", "suppression_limit", ("suppression_limit", "below 1", "1.5")),
    ("suppression_limit: 0.1", "suppression_limit: -0.1", "suppression_limit", ("suppression_limit", "at least 0")),
    ("shuffle: true", "shuffle: maybe", "output:", ("output.shuffle", "true or false")),
    ("suppressed: remove", "suppressed: hide", "output:", ("output.suppressed", "'hide'")),
    ("- distinct_l_diversity: {l: 2, sensitive: disease}", "- t_closeness: {t: 1.2}", "t_closeness",
     ("t_closeness.t", "at most 1")),
    ("- distinct_l_diversity: {l: 2, sensitive: disease}", "- t_closeness: {t: 0.2, distance: orderd}",
     "t_closeness", ("t_closeness.distance", "did you mean 'ordered'?")),
    ("- distinct_l_diversity: {l: 2, sensitive: disease}", "- distinct_l_diversity: {ll: 2}",
     "distinct_l_diversity", ("unknown key 'll'", "did you mean 'l'?")),
    ("- distinct_l_diversity: {l: 2, sensitive: disease}", "- beta_likeness: {beta: 0}", "beta_likeness",
     ("beta_likeness.beta", "above 0")),
    ("- distinct_l_diversity: {l: 2, sensitive: disease}", "- recursive_cl_diversity: {l: 2}",
     "recursive_cl_diversity", ("recursive_cl_diversity needs 'c'",)),
    ("- distinct_l_diversity: {l: 2, sensitive: disease}", "- alpha_k_anonymity: {alpha: 1.5, k: 2}",
     "alpha_k_anonymity", ("alpha_k_anonymity.alpha",)),
    ("age: {intervals: {widths: [10, 20]}}", "age: {intervals: {widths: [10, 25]}}", "age:",
     ("hierarchies.age.intervals.widths", "25", "multiple of 10")),
    ("age: {intervals: {widths: [10, 20]}}", "age: {interval: {widths: [10, 20]}}", "age:",
     ("unknown key 'interval'", "did you mean 'intervals'?")),
    ("age: {intervals: {widths: [10, 20]}}", "age: {intervals: {}}", "age:",
     ("hierarchies.age.intervals needs 'widths'",)),
    ("zip: {masking: {}}", "zip: {masking: {char: '**'}}", "zip:", ("hierarchies.zip.masking.char", "one character")),
    ("metric: loss", "metric: los", "metric:", ("unknown metric 'los'", "did you mean 'loss'?")),
    ("metric: loss", "metric: {name: classification, label: salary}", "metric:",
     ("metric.label", "'salary'", "not a column")),
    ("algorithm: {name: fulldomain, search: optimal}", "algorithm: {name: fulldomain, search: fast}", "algorithm:",
     ("algorithm.search", "'fast'")),
    ("algorithm: {name: fulldomain, search: optimal}", "algorithm: {name: fulldomain, time_limit: 0}",
     "algorithm:", ("algorithm.time_limit", "above 0")),
    ("algorithm: {name: fulldomain, search: optimal}", "algorithm: fuldomain", "algorithm:",
     ("unknown algorithm 'fuldomain'", "did you mean 'fulldomain'?")),
])
def test_bad_values_are_refused_at_their_line(folder: Path, old: str, new: str, needle: str, keys: tuple):
    assert old in BASE
    check_error(folder, BASE.replace(old, new), needle, *keys)


def test_missing_quasi_identifiers(folder: Path):
    text = BASE.replace("  quasi_identifiers: [age, zip, sex]\n", "")
    check_error(folder, text, "columns:", "columns", "quasi_identifiers")
    empty = BASE.replace("quasi_identifiers: [age, zip, sex]", "quasi_identifiers: []")
    check_error(folder, empty, "quasi_identifiers", "columns.quasi_identifiers is empty")


def test_missing_required_top_level_keys(folder: Path):
    for key, start in (("models", "models:"), ("columns", "columns:"), ("data", "data:")):
        lines = BASE.splitlines(keepends=True)
        first = line_of(BASE, start) - 1
        end = first + 1
        while end < len(lines) and lines[end].startswith(" "):
            end += 1
        path = write(folder, "".join(lines[:first] + lines[end:]))
        assert_names(error_of(path), path, 1, f"'{key}' is missing")


def test_hierarchy_for_a_column_that_is_not_a_qi_or_sensitive(folder: Path):
    text = BASE.replace("  sex: {flat: {}}\n", "  sex: {flat: {}}\n  zipp: {flat: {}}\n")
    check_error(folder, text, "zipp", "hierarchies", "'zipp'", "did you mean 'zip'?")
    text = BASE.replace("  sex: {flat: {}}\n", "  sex: {flat: {}}\n  name: {flat: {}}\n")
    check_error(folder, text, "name: {flat", "'name'", "neither a quasi-identifier nor a sensitive column")


def test_column_that_is_not_in_the_table(folder: Path):
    text = BASE.replace("quasi_identifiers: [age, zip, sex]", "quasi_identifiers: [age, zip, gender]")
    check_error(folder, text, "quasi_identifiers", "columns.quasi_identifiers", "'gender'", "people.csv")


def test_column_with_two_roles(folder: Path):
    text = BASE.replace("identifying: [id, name]", "identifying: [id, age]")
    check_error(folder, text, "identifying", "'age'", "one role", "columns.quasi_identifiers",
                "columns.identifying")


def test_model_naming_an_undeclared_sensitive_column(folder: Path):
    text = BASE.replace("sensitive: disease}", "sensitive: diseases}")
    check_error(folder, text, "distinct_l_diversity", "distinct_l_diversity.sensitive", "'diseases'",
                "did you mean 'disease'?")
    no_sensitive = BASE.replace("  sensitive: [disease]\n", "").replace(", sensitive: disease}", "}")
    check_error(folder, no_sensitive, "distinct_l_diversity", "distinct_l_diversity", "columns.sensitive")


def test_hierarchical_t_closeness_needs_a_sensitive_hierarchy(folder: Path):
    text = BASE.replace("- distinct_l_diversity: {l: 2, sensitive: disease}",
                        "- t_closeness: {t: 0.3, distance: hierarchical}")
    check_error(folder, text, "t_closeness", "t_closeness.distance", "hierarchy", "'disease'")
    with_hierarchy = text.replace("  sex: {flat: {}}\n", "  sex: {flat: {}}\n  disease: {flat: {}}\n")
    model = load_config(write(folder, with_hierarchy)).models()[1]
    assert isinstance(model, veil.TCloseness) and model.distance == "hierarchical"


def test_fulldomain_needs_a_hierarchy_per_qi(folder: Path):
    text = BASE.replace("  sex: {flat: {}}\n", "")
    check_error(folder, text, "quasi_identifiers", "'sex'", "no hierarchy", "hierarchies")


def test_missing_data_file_names_the_path_tried(folder: Path):
    text = BASE.replace("data: people.csv", "data: data/peeple.csv")
    message = check_error(folder, text, "data:", "data file", "does not exist")
    assert str(folder / "data" / "peeple.csv") in message


def test_missing_hierarchy_file(folder: Path):
    text = BASE.replace("sex: {flat: {}}", "sex: {file: sex.csv}")
    message = check_error(folder, text, "sex: {file", "hierarchies.sex.file", "does not exist")
    assert str(folder / "sex.csv") in message


@pytest.mark.parametrize("old, new, needle", [
    ("  - k_anonymity: {k: 2}", "  - k_anonymity: {k: 2", "k_anonymity"),
    ("  sex: {flat: {}}", " sex: {flat: {}}", "sex:"),
    ("metric: loss", "metric: loss: high", "metric"),
])
def test_malformed_yaml_names_file_and_line(folder: Path, old: str, new: str, needle: str):
    text = BASE.replace(old, new)
    path = write(folder, text)
    message = error_of(path)
    assert message.startswith(f"{path}, line "), message
    assert "not valid YAML" in message and "\n" not in message
    line = int(message.split("line ")[1].split(":")[0])
    assert abs(line - line_of(text, needle)) <= 1, message


def test_unclosed_bracket_names_the_line_it_was_opened_on(folder: Path):
    text = BASE.replace("  - k_anonymity: {k: 2}", "  - k_anonymity: {k: 2")
    check_error(folder, text, "distinct_l_diversity", "not valid YAML",
                f"starts on line {line_of(text, 'k_anonymity')}")


def test_tabs_and_several_documents(folder: Path):
    check_error(folder, BASE.replace("  sex: {flat: {}}", "\tsex: {flat: {}}"), "sex:", "not valid YAML", "tabs")
    check_error(folder, BASE + "---\ndata: x.csv\n", "---", "not valid YAML", "single document")


def test_hierarchy_file_that_does_not_cover_the_column_names_its_line(folder: Path):
    (folder / "sex.csv").write_text("F;*\n", encoding="utf-8")
    text = BASE.replace("sex: {flat: {}}", "sex: {file: sex.csv}")
    path = write(folder, text)
    config = load_config(path)
    with pytest.raises(ConfigError) as info:
        config.dataset()
    assert_names(str(info.value), path, line_of(text, "sex: {file"), "sex.csv", "'M'")
    assert config.hierarchies["sex"].build().name == "hierarchy file 'sex.csv'"


def test_builder_that_does_not_fit_the_column_names_its_line(folder: Path):
    text = BASE.replace("sex: {flat: {}}", "sex: {intervals: {widths: [2]}}")
    path = write(folder, text)
    with pytest.raises(ConfigError) as info:
        load_config(path).dataset()
    assert_names(str(info.value), path, line_of(text, "sex: {intervals"), "'sex'", "needs numbers")


def test_metric_options_are_checked_by_make_metric(folder: Path):
    pytest.importorskip("veil.metrics")
    text = BASE.replace("metric: loss", "metric: {name: workload, seeds: 3}")
    check_error(folder, text, "metric:", "metric 'workload'", "'seeds'")
    metric = load_config(write(folder, BASE.replace("metric: loss", "metric: {name: kl}"))).metric()
    assert metric.key == "kl"


def test_duplicate_keys_and_misindented_models(folder: Path):
    text = BASE + "metric: height\n"
    check_error(folder, text, "metric: height", "'metric' twice", f"line {line_of(BASE, 'metric: loss')}")
    text = BASE.replace("  - k_anonymity: {k: 2}", "  - k_anonymity:\n    k: 2")
    check_error(folder, text, "- k_anonymity:", "each entry of models", "indent")


def test_empty_and_non_mapping_files(folder: Path):
    path = write(folder, "# nothing yet\n")
    assert_names(error_of(path), path, 1, "empty")
    path = write(folder, "- data: people.csv\n")
    assert_names(error_of(path), path, 1, "mapping")
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(folder / "absent.yaml")


def test_model_constructor_errors_are_mapped(folder: Path, monkeypatch):
    # A check only the model makes (none of the schema's) still comes back with the model's line.
    import veil.config as config_module
    from veil.config.schema import MODELS, ModelSchema, optional

    monkeypatch.setitem(MODELS, "recursive_cl_diversity", ModelSchema(
        "RecursiveCLDiversity", {"c": optional(lambda p, n, w: p.number(n, w, None, None)),
                                 "l": optional(lambda p, n, w: p.integer(n, w, 1))}))
    text = BASE.replace("- distinct_l_diversity: {l: 2, sensitive: disease}",
                        "- recursive_cl_diversity: {c: -1, l: 2}")
    check_error(folder, text, "recursive_cl_diversity", "recursive_cl_diversity", "c must be greater than 0")
    assert config_module.ConfigError is ConfigError


def test_metric_with_options_is_kept_for_make_metric(folder: Path):
    text = BASE.replace("metric: loss", "metric: {name: classification, label: disease}")
    spec = load_config(write(folder, text)).metric_spec
    assert spec.name == "classification" and dict(spec.options) == {"label": "disease"}


def test_config_error_is_a_veil_error():
    assert issubclass(ConfigError, veil.VeilError)


# -- the starter configuration -----------------------------------------------------------------

STARTER_TABLE = ("patient_id,age,zip,sex,disease\n" + "".join(
    f"{i},{20 + (i * 37) % 60},{['13053', '13068', '02139', '14853'][i % 4]},{'FM'[i % 2]},"
    f"{['flu', 'cancer', 'cold'][i % 3]}\n" for i in range(1, 41)))


def test_starter_config_guesses_roles_and_hierarchies(tmp_path: Path):
    data = tmp_path / "patients.csv"
    data.write_text(STARTER_TABLE, encoding="utf-8")
    text = starter_config(data, relative_to=tmp_path)
    lines = text.splitlines()

    def line(prefix: str) -> str:
        return next(l for l in lines if l.strip().startswith(prefix))

    assert "guessed" in line("- patient_id") and "identifier" in line("- patient_id")
    assert "guessed" in line("- disease") and "sensitive" in line("- disease")
    assert "guessed" in line("age:") and "numeric (21 to 78)" in line("age:") and "5-wide bands" in line("age:")
    assert "intervals: {widths: [5, 10, 20]}" in line("age:")
    assert "masking" in line("zip:") and "guessed" in line("zip:")
    assert "flat" in line("sex:") and "guessed" in line("sex:")
    assert "k_anonymity: {k: 5}" in text and "distinct_l_diversity: {l: 2}" in text
    assert "suppression_limit: 0.02" in text and "metric: loss" in text and "algorithm: fulldomain" in text

    out = tmp_path / "patients.yaml"
    out.write_text(text, encoding="utf-8")
    config = load_config(out)
    assert config.quasi_identifiers == ("age", "zip", "sex")
    assert config.sensitive == ("disease",) and config.identifying == ("patient_id",)
    assert [s.name for s in config.model_specs] == ["k_anonymity", "distinct_l_diversity"]
    assert config.suppression_limit == 0.02 and config.algorithm.name == "fulldomain"
    ds = config.dataset()
    assert ds.hierarchies["zip"].rows()[0][:3] == ["02139", "0213*", "021**"]
    assert ds.hierarchies["age"].rows()[0] == ["21", "20-24", "20-29", "20-39", "*"]


def test_starter_guesses_from_values(tmp_path: Path):
    data = tmp_path / "t.csv"
    data.write_text("who,code,city,Income\n" + "".join(
        f"P{i},{i % 3:05d},{['Lyon', 'Nice'][i % 2]},{1000 * i}\n" for i in range(12)), encoding="utf-8")
    text = starter_config(data, relative_to=tmp_path)
    assert "every value is different" in next(l for l in text.splitlines() if "- who" in l)
    assert "masking" in next(l for l in text.splitlines() if l.startswith("  code:"))
    assert "- Income" in text.split("sensitive:")[1].split("identifying")[0]
    out = tmp_path / "t.yaml"
    out.write_text(text, encoding="utf-8")
    config = load_config(out)
    assert config.identifying == ("who",) and config.sensitive == ("Income",)


def test_write_starter_config_is_relative_and_refuses_to_overwrite(tmp_path: Path):
    data = tmp_path / "patients.csv"
    data.write_text(STARTER_TABLE, encoding="utf-8")
    (tmp_path / "configs").mkdir()
    out = tmp_path / "configs" / "job.yaml"
    write_starter_config(data, out)
    assert "data: ../patients.csv" in out.read_text(encoding="utf-8")
    assert load_config(out).data == data
    with pytest.raises(ConfigError, match="already exists"):
        write_starter_config(data, out)
    write_starter_config(data, out, overwrite=True)
    assert [p.name for p in out.parent.iterdir()] == ["job.yaml"]  # no temporary file left


def test_starter_config_on_the_bundled_adult_loads_back(tmp_path: Path):
    out = tmp_path / "adult.yaml"
    write_starter_config(adult_folder() / "adult.csv", out)
    config = load_config(out)
    assert set(config.sensitive) == {"occupation", "salary-class"}
    assert "age" in config.quasi_identifiers and config.delimiter == ";"
    # the ARX hierarchy files lying beside the bundled table are taken
    assert config.hierarchies["age"].kind == "file" and config.hierarchies["age"].path.name == "adult_hierarchy_age.csv"
