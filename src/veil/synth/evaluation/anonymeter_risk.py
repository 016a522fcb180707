"""The result shape Anonymeter-style risks share (singling out, linkage): an attack's success
rate on real training records against the same attack's rate on control records (the holdout,
records the synthesizer never saw), and the risk ``(attack − control) / (1 − control)`` of Giomi
et al. (PoPETs 2023) with its confidence interval (see :mod:`.intervals`)."""

from __future__ import annotations

from dataclasses import dataclass

from veil.synth.evaluation.intervals import risk, risk_interval, wilson
from veil.synth.evaluation.sections import Row, interval, number, share


@dataclass(frozen=True)
class RiskEstimate:
    """An attack's hits on training records and on control records, and the risk they give."""
    attempts: int
    attack_hits: int
    control_attempts: int
    control_hits: int

    @property
    def attack_rate(self) -> float:
        return self.attack_hits / self.attempts

    @property
    def control_rate(self) -> float:
        return self.control_hits / self.control_attempts

    @property
    def risk(self) -> float:
        return risk(self.attack_rate, self.control_rate)

    @property
    def interval(self) -> tuple[float, float]:
        return risk_interval(self.attack_hits, self.attempts, self.control_hits, self.control_attempts)

    def to_dict(self) -> dict:
        return {"attempts": self.attempts, "attack_hits": self.attack_hits, "attack_rate": self.attack_rate,
                "attack_rate_interval": list(wilson(self.attack_hits, self.attempts)),
                "control_attempts": self.control_attempts, "control_hits": self.control_hits,
                "control_rate": self.control_rate,
                "control_rate_interval": list(wilson(self.control_hits, self.control_attempts)),
                "risk": self.risk, "risk_interval": list(self.interval), "confidence": 0.95}

    def rows(self, name: str, success: str) -> list[Row]:
        """The rows of a report: the two rates and the risk with its interval."""
        return [Row(f"{name}: attack / control success", f"{share(self.attack_rate)} / {share(self.control_rate)}",
                    f"Share of {self.attempts} attempts in which {success}, against training records / against "
                    f"holdout records the synthesizer never saw (the control: what chance and the population give)."),
                Row(f"{name} risk", number(self.risk),
                    "(attack − control) / (1 − control), Anonymeter's risk: 0 means the synthetic table helps the "
                    "attacker no more than chance does, 1 that every attempt succeeds through it; lower is better."),
                Row(f"{name} risk, 95% CI", interval(self.interval),
                    "Bounds from Wilson intervals of the two rates (each at 97.5%); an interval that holds 0 means "
                    "no risk could be shown.")]
