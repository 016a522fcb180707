"""Differential privacy: mechanisms with secure noise, queries over a table (count, sum, mean,
quantiles, histograms and contingency tables), a privacy-budget accountant (kept, for many
processes, in a release ledger: :mod:`veil.ledger`), and releases over time: continual counts,
histograms and sums at event, user and w-event level (with the adaptive w-event budgets of
Kellaris et al.), pan-private streaming (Dwork et al.), privacy filters for adaptively chosen
charges (Rogers et al.) and the temporal privacy leakage of data correlated in time (Cao et al.).

Real releases draw their noise through OpenDP's floating-point-safe samplers (the default,
``noise=None``); a run with a seed or a ``numpy.random.Generator`` is an experiment and its
:class:`NoisyRelease` says ``fit_for_release=False``.
"""

from veil.dp.continual import (ContinualRelease, binary_tree_counts, continual_histogram, continual_sum,
                               event_level_counts, w_event_counts)
from veil.dp.mechanisms import (CountEstimate, ExponentialMechanism, Gaussian, Geometric, KaryRandomizedResponse,
                                Laplace, PlanarLaplace, NoisyRelease, ReportNoisyMax, WarnerRandomizedResponse,
                                analytic_gaussian_sigma, classical_gaussian_sigma, gaussian_delta,
                                planar_radius_cdf, planar_radius_quantile)
from veil.dp.accountant import Accountant, advanced_composition
from veil.dp.budget import Budget, BudgetExceededError
from veil.dp.budget_file import BudgetFileError
from veil.dp.correlation_accountant import TemporalCorrelationAccountant
from veil.dp.discounting import TemporalAccountant
from veil.dp.filter_accountant import FilterAccountant
from veil.dp.window_accountant import WindowAccountant
from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget
from veil.dp.discrete_gaussian import DiscreteGaussian
from veil.dp.zcdp_gaussian import ZCDPGaussian
from veil.dp.measures import ZCDP, ApproxDP, MeasureMismatchError, PureDP, compose
from veil.dp.zcdp_conversion import zcdp_delta, zcdp_epsilon
from veil.dp.fingerprint import dataset_id
from veil.dp.aggregates import Count, Mean, Sum
from veil.dp.grouped_answer import GroupedAnswer
from veil.dp.grouped_query import GroupedQuery, Query
from veil.dp.privacy_unit import PrivacyUnit
from veil.dp.budget_unit import BudgetUnit, UnitMismatchError
from veil.dp.public_keys import PublicKeys
from veil.dp.partition_selection import PartitionSelection
from veil.dp.noise import NoiseSource, as_noise_source
from veil.dp.panprivate import PanPrivateCounter, PanPrivateDensity
from veil.dp.queries import (QueryResult, dp_contingency, dp_count, dp_histogram, dp_mean, dp_quantile, dp_sum,
                             postprocess, quantile_grid)
from veil.dp.stream import StreamSettings, release_stream
from veil.dp.temporal import TemporalCorrelation

__all__ = [
    "QueryResult", "dp_contingency", "dp_count", "dp_histogram", "dp_mean", "dp_quantile", "dp_sum", "postprocess",
    "quantile_grid",
    "BudgetUnit", "Count", "GroupedAnswer", "GroupedQuery", "Mean", "PrivacyUnit", "PublicKeys", "Query", "Sum",
    "UnitMismatchError", "PartitionSelection",
    "ContinualRelease", "binary_tree_counts", "continual_histogram", "continual_sum", "event_level_counts",
    "w_event_counts",
    "PanPrivateCounter", "PanPrivateDensity", "StreamSettings", "TemporalCorrelation", "release_stream",
    "Accountant", "Budget", "BudgetExceededError", "BudgetFileError", "FilterAccountant",
    "TemporalAccountant", "TemporalCorrelationAccountant", "WindowAccountant", "advanced_composition", "dataset_id",
    "CountEstimate", "ExponentialMechanism", "Gaussian", "Geometric", "KaryRandomizedResponse", "Laplace",
    "NoiseSource", "PlanarLaplace", "NoisyRelease", "ReportNoisyMax", "WarnerRandomizedResponse",
    "analytic_gaussian_sigma", "as_noise_source", "classical_gaussian_sigma", "gaussian_delta",
    "planar_radius_cdf", "planar_radius_quantile",
    "ApproxDP", "DiscreteGaussian", "MeasureMismatchError", "PureDP", "ZCDP", "ZCDPAccountant", "ZCDPBudget",
    "ZCDPGaussian", "compose",
    "zcdp_delta", "zcdp_epsilon",
]
