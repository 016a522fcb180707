"""Re-identification risk measures."""

from veil.risk.reidentification import ReidentificationRisk, reidentification_risk

__all__ = ["ReidentificationRisk", "reidentification_risk"]
from veil.risk.frequencies import KeyFrequencies, key_frequencies
from veil.risk.individual import SampleRisk, benedetti_franconi, sample_risk
from veil.risk.suda import SudaScores, minimal_sample_uniques, suda2  # noqa: F401 (suda itself would hide its module)
