"""The evaluation of a synthetic table before release (fidelity, utility, privacy), computed from
the private table for the curator's decision: not differentially private, not for publication.

One concept per module: :mod:`.marginal_distance` (TVD, SDNist's k-marginal score),
:mod:`.ml_utility` (TSTR against TRTR), :mod:`.membership` (distance to closest record and a
membership classifier with known members), :mod:`.shadow_models` (a shadow-model attack that
re-runs the mechanism), :mod:`.singling_out` and :mod:`.linkage` (Anonymeter-style risks),
:mod:`.disclosure` (copies, real-unique matches, k-anonymity), :mod:`.evaluation` (``evaluate``
and the ``Evaluation`` it returns).
"""

from veil.synth.evaluation.evaluation import Evaluation, evaluate
from veil.synth.evaluation.sections import Row, Section

__all__ = ["Evaluation", "Row", "Section", "evaluate"]
