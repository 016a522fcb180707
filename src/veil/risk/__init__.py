"""Re-identification risk measures."""

from veil.risk.reidentification import ReidentificationRisk, reidentification_risk

__all__ = ["ReidentificationRisk", "reidentification_risk"]
