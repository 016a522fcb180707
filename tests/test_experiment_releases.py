"""``veil experiment releases`` on a small part of Adult: the careless publisher is exposed, the careful one is not."""

import pytest
from typer.testing import CliRunner

from veil import Dataset
from veil.cli import app
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_hierarchies
from veil.errors import ParameterError
from veil.experiments.releases import run_releases

from helpers import ADULT_SUBSET_CSV


@pytest.fixture(scope="module")
def subset():
    files = adult_hierarchies()
    return Dataset(ADULT_SUBSET_CSV, quasi_identifiers=list(ADULT_QUASI_IDENTIFIERS), sensitive="occupation",
                   hierarchies={c: files[c] for c in list(ADULT_QUASI_IDENTIFIERS) + ["occupation"]}, delimiter=";")


def test_careless_releases_expose_people_and_shuffled_ones_do_not(subset, tmp_path):
    result = run_releases((3,), seed=1, dataset=subset)
    frame = result.frame.set_index(["scenario", "publisher"])
    matching = frame.loc[("same table, same order", "careless")]
    assert matching["records"] == subset.num_rows and matching["exposed"] > 0
    assert frame.loc[("same table, same order", "careful"), "exposed"] == 0
    assert 0 <= frame.loc[("overlapping projections", "careless"), "exposed_share"] <= 1
    incremental = result.frame[result.frame["scenario"] == "incremental versions"].set_index("attack")
    assert incremental.index.tolist() == ["forward", "cross", "backward"]
    assert incremental.loc["forward", "records"] + incremental.loc["backward", "records"] == subset.num_rows
    assert (incremental["exposed"] <= incremental["records"]).all()
    paths = result.write(tmp_path)
    assert [p.name for p in paths] == ["releases.csv", "releases.png"]
    assert paths[1].read_bytes()[:4] == b"\x89PNG"


def test_bad_k_is_refused():
    with pytest.raises(ParameterError, match="at least 2"):
        run_releases((1,))
    result = CliRunner().invoke(app, ["experiment", "releases", "--k", "five"])
    assert result.exit_code == 2 and "--k takes comma-separated whole numbers" in result.output
