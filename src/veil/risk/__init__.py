"""Re-identification risk measures: the prosecutor, journalist and marketer risks of a table, the
sampling-weighted frequencies and Benedetti–Franconi individual, global and household risk of a
survey sample, SUDA2's minimal sample uniques and scores, and the population uniqueness
estimators (Pitman, Zayatz, SNB and Dankar's rule)."""

from veil.risk.frequencies import KeyFrequencies, key_frequencies
from veil.risk.individual import SampleRisk, benedetti_franconi, sample_risk
from veil.risk.reidentification import ReidentificationRisk, reidentification_risk

# ``suda`` itself is imported from veil.risk.suda: here the name would hide its module.
from veil.risk.suda import SudaScores, minimal_sample_uniques, suda2
from veil.risk.uniqueness import UniquenessEstimate, population_uniqueness

__all__ = ["KeyFrequencies", "ReidentificationRisk", "SampleRisk", "SudaScores", "UniquenessEstimate",
           "benedetti_franconi", "key_frequencies", "minimal_sample_uniques", "population_uniqueness",
           "reidentification_risk", "sample_risk", "suda2"]
