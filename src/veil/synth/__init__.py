"""Differentially private synthetic data (issue 28): public domains, graphical models fitted to
noisy marginals (Private-PGM), and sampling from them; :func:`synthesize` (``veil synth`` in Python)
runs a mechanism (MST, AIM) end to end and returns a :class:`SyntheticRelease`."""

from veil.synth.domain import ColumnDomain, DomainError, SynthDomain
from veil.synth.estimation import Measurement, estimate
from veil.synth.graphical_model import GraphicalModel, model_cells
from veil.synth.api import SyntheticRelease, synthesize

__all__ = ["ColumnDomain", "DomainError", "GraphicalModel", "Measurement", "SynthDomain", "SyntheticRelease", "estimate",
           "model_cells", "synthesize"]
