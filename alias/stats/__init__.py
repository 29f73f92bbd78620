"""Statistics of the ALIAS paper (Methods, Metrics and Experiment 2 Analysis; Appendices F,
K-P, R-V): per-task pass rates, bootstrap intervals over tasks, TOST equivalence, exposure
effects and difference in differences, sign test, permutation tests, Spearman correlation.

Units: rates are fractions in [0, 1]; differences are reported in percentage points
(``scale=100``, the default of every difference estimator; ``scale=1.0`` for quantities such
as mean token log-likelihoods). The unit of analysis and of resampling is the task. Every
randomized procedure takes a ``seed`` (default :data:`DEFAULT_SEED`) and uses 10,000
resamples/permutations by default (:data:`DEFAULT_RESAMPLES`).
"""
from .bootstrap import (DEFAULT_RESAMPLES, DEFAULT_SEED, BootstrapEstimate, ExposureEffects,
                        PairedDifference, TostResult, bootstrap_indices, bootstrap_mean,
                        exposure_effects, mean_difference, tost_equivalence)
from .nonparametric import (PermutationResult, SignTestResult, SpearmanResult,
                            permutation_test_groups, sign_test, spearman_permutation)
from .rates import pass_at_k, pass_rates, seen_unseen_rates

__all__ = [
    "DEFAULT_RESAMPLES", "DEFAULT_SEED",
    "BootstrapEstimate", "PairedDifference", "TostResult", "ExposureEffects",
    "SignTestResult", "PermutationResult", "SpearmanResult",
    "pass_rates", "pass_at_k", "seen_unseen_rates",
    "bootstrap_indices", "bootstrap_mean", "mean_difference", "tost_equivalence",
    "exposure_effects",
    "sign_test", "permutation_test_groups", "spearman_permutation",
]
