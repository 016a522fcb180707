"""The shadow-model membership attack of veil.synth.evaluation.shadow_models: it re-runs a
generator on shadow training sets, is scored on fresh runs it never trained on, shows no advantage
when the generator ignores its input and a clear one when it copies it; and synthesize's generator
re-runs the mechanism without ever touching the secure source."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from synth_evaluation_data import NAMES, SIZES, chain

from veil.errors import DataError, ParameterError
from veil.synth.evaluation import evaluate
from veil.synth.evaluation.shadow_models import shadow_attack


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(30)
    return chain(300, rng), chain(300, rng)


def copying(codes, rng):
    """Returns its training rows: the total leak."""
    return codes.copy()


def ignoring(codes, rng):
    """Draws from a fixed distribution, whatever it was given: no leak."""
    return chain(codes.shape[0], rng)


class Counting:
    """A generator that records, per call, whether the caller was training or scoring."""

    def __init__(self, inner, switch_after=None, after=None):
        self.inner, self.switch_after, self.after, self.calls = inner, switch_after, after, 0

    def __call__(self, codes, rng):
        self.calls += 1
        if self.switch_after is not None and self.calls > self.switch_after:
            return self.after(codes, rng)
        return self.inner(codes, rng)


def test_no_advantage_when_the_generator_ignores_its_input(tables):
    real, holdout = tables
    result = shadow_attack(real, ignoring(real, np.random.default_rng(1)), SIZES, holdout=holdout,
                           generator=ignoring, rng=np.random.default_rng(2), targets=5, runs=16, trials=32)
    assert result.ran
    assert result.interval[0] <= 0 <= result.interval[1]
    assert abs(result.advantage) < 0.25
    assert sum(t.in_trials + t.out_trials for t in result.targets) == 5 * 32


def test_a_clear_advantage_when_the_generator_copies_its_input(tables):
    real, holdout = tables
    result = shadow_attack(real, real.copy(), SIZES, holdout=holdout, generator=copying,
                           rng=np.random.default_rng(3))
    assert result.advantage > 0.8 and result.interval[0] > 0.6
    kinds = [t.kind for t in result.targets]
    assert kinds.count("outlier") == 3 and kinds.count("random") == 2
    for t in result.targets:            # balanced trials for every target
        assert t.in_trials == t.out_trials == 8


def test_the_advantage_is_scored_on_fresh_runs_the_classifier_never_saw(tables):
    # The generator copies its input while the classifier trains, then ignores it: scored on the
    # training tables the attack would show a perfect advantage; on fresh runs it can show none.
    real, holdout = tables
    generator = Counting(copying, switch_after=16, after=ignoring)
    result = shadow_attack(real, real.copy(), SIZES, holdout=holdout, generator=generator,
                           rng=np.random.default_rng(4), runs=16, trials=16)
    assert generator.calls == result.generator_calls == 16 + 16
    assert result.interval[0] <= 0.3          # not the perfect score of the training tables
    assert result.tpr < 1 or result.fpr > 0


def test_the_generator_is_called_runs_plus_trials_times_whatever_the_number_of_targets(tables):
    real, holdout = tables
    generator = Counting(ignoring)
    shadow_attack(real, real, SIZES, holdout=holdout, generator=generator, rng=np.random.default_rng(5),
                  targets=7, runs=4, trials=6)
    assert generator.calls == 10


def test_the_shadow_sets_hold_the_stated_number_of_reference_records(tables):
    real, holdout = tables
    seen = []
    shadow_attack(real, real, SIZES, holdout=holdout[:120], generator=lambda c, r: seen.append(c.shape) or c.copy(),
                  rng=np.random.default_rng(6), runs=2, trials=2)
    assert seen == [(120, len(SIZES))] * 4
    seen.clear()
    shadow_attack(real, real, SIZES, holdout=holdout, generator=lambda c, r: seen.append(c.shape) or c.copy(),
                  rng=np.random.default_rng(6), runs=2, trials=2, rows=50)
    assert seen == [(50, len(SIZES))] * 4


def test_it_is_a_function_of_the_inputs_and_the_generator_state(tables):
    real, holdout = tables
    first, second = (shadow_attack(real, real, SIZES, holdout=holdout, generator=ignoring,
                                   rng=np.random.default_rng(7), runs=4, trials=4).to_dict() for _ in range(2))
    assert first == second


@pytest.mark.parametrize("generator, holdout, runs, words", [
    (None, True, 16, "No generator"),
    (copying, False, 16, "No holdout"),
    (copying, True, 0, "set to 0"),
])
def test_not_run_cases_say_why(tables, generator, holdout, runs, words):
    real, held = tables
    result = shadow_attack(real, real, SIZES, holdout=held if holdout else None, generator=generator,
                           rng=np.random.default_rng(8), runs=runs)
    assert not result.ran and words in result.reason
    assert result.section().rows[0].measure == "not run"


def test_evaluate_carries_the_attack_and_says_what_it_means(tables):
    real, holdout = tables
    result = evaluate(real, real.copy(), NAMES, SIZES, holdout=holdout, rng=np.random.default_rng(9),
                      generator=copying, shadow_runs=8, shadow_trials=8, max_marginals=20)
    data = result.to_dict()["shadow_model"]
    assert data["ran"] and data["generator_calls"] == 16 and data["advantage"] > 0.5
    section = next(s for s in result.sections() if s.title == "Privacy: shadow-model membership attack")
    measures = [row.measure for row in section.rows]
    assert "shadow-model attack advantage" in measures and "shadow-model attack advantage, 95% CI" in measures
    assert all(row.meaning for row in section.rows)
    # the membership classifier on real records is no longer called a shadow-model attack
    titles = [row.measure for s in result.sections() if s.title == "Privacy: membership inference" for row in s.rows]
    assert not any("shadow" in t for t in titles)
    assert any("membership classifier with known members" in t for t in titles)

    skipped = evaluate(real, real, NAMES, SIZES, holdout=holdout, rng=np.random.default_rng(9), max_marginals=20)
    assert not skipped.shadow.ran and "generator" in skipped.shadow.reason


@pytest.mark.parametrize("options", [{"shadow_runs": 1}, {"shadow_trials": 0}, {"shadow_targets": 0},
                                     {"shadow_runs": True}, {"generator": 3}])
def test_evaluate_refuses_bad_shadow_options(tables, options):
    real, holdout = tables
    with pytest.raises(ParameterError):
        evaluate(real, real, NAMES, SIZES, holdout=holdout, rng=np.random.default_rng(0), **options)


def test_a_generator_returning_something_else_than_codes_is_refused(tables):
    real, holdout = tables
    with pytest.raises(DataError, match="generator"):
        shadow_attack(real, real, SIZES, holdout=holdout, generator=lambda c, r: c[:, :2],
                      rng=np.random.default_rng(0), runs=2, trials=2)


# --------------------------------------------------------------------------- synthesize's generator

def _small():
    from veil.synth import SynthDomain

    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 240), "b": rng.choice(["p", "q"], 240),
                          "c": rng.choice(["u", "v", "w", "t"], 240)})
    domain = SynthDomain.declared({"a": ["x", "y", "z"], "b": ["p", "q"], "c": ["u", "v", "w", "t"]})
    return frame.iloc[:160], frame.iloc[160:], domain


@pytest.mark.parametrize("mechanism", ["mst", "aim"])
def test_synthesize_never_draws_the_shadow_runs_from_the_secure_source(monkeypatch, mechanism):
    from veil.dp import noise
    from veil.synth import synthesize

    real_secure = noise.NoiseSource.secure.__func__
    secure_sources = []

    def counted(cls):
        source = real_secure(cls)
        secure_sources.append(source)
        return source

    monkeypatch.setattr(noise.NoiseSource, "secure", classmethod(counted))
    fits = []
    import veil.synth.aim as aim_module
    import veil.synth.mst as mst_module

    module = mst_module if mechanism == "mst" else aim_module
    original = getattr(module, mechanism)

    def recorded(*args, **kwargs):
        fits.append(kwargs.get("noise"))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, mechanism, recorded)
    train, held, domain = _small()
    release = synthesize(train, domain, mechanism=mechanism, rho=1, holdout=held, shadow_runs=2, shadow_trials=2,
                         shadow_targets=2)
    assert release.fit_for_release
    assert len(secure_sources) == 1                              # the release's fit, and only it
    assert fits[0] is None and len(fits) == 1 + 4                # then 2 + 2 shadow fits
    assert all(isinstance(f, np.random.Generator) for f in fits[1:])
    assert release.evaluation.shadow.ran and release.evaluation.shadow.generator_calls == 4


def test_synthesize_shadow_runs_zero_skips_it_and_seeded_runs_repeat():
    from veil.synth import synthesize

    train, held, domain = _small()
    skipped = synthesize(train, domain, rho=1, holdout=held, rng=3, shadow_runs=0)
    assert not skipped.evaluation.shadow.ran and "0" in skipped.evaluation.shadow.reason
    first, second = (synthesize(train, domain, rho=1, holdout=held, rng=3, shadow_runs=2, shadow_trials=2)
                     .evaluation.shadow.to_dict() for _ in range(2))
    assert first == second and first["ran"]
    with pytest.raises(ParameterError, match="shadow_runs"):
        synthesize(train, domain, rho=1, holdout=held, shadow_runs=-1)
