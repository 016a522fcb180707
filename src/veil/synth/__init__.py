"""Differentially private synthetic data (issue 28): public domains, graphical models fitted to
noisy marginals (Private-PGM), and sampling from them."""

from veil.synth.domain import ColumnDomain, DomainError, SynthDomain
from veil.synth.estimation import Measurement, estimate
from veil.synth.graphical_model import GraphicalModel, model_cells

__all__ = ["ColumnDomain", "DomainError", "GraphicalModel", "Measurement", "SynthDomain", "estimate", "model_cells"]
