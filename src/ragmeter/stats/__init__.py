"""Bootstrap intervals, paired comparisons, sample sizes and rater agreement.

Every interval here is reproducible bit for bit. With an integer seed the random
draws come from mulberry32, and :func:`bootstrap` and the interval of
:func:`paired` return exactly what the reference TypeScript ``bootstrapInterval``
and ``pairedDifference`` return for the same scores, rounds and seed: the same
draws, the same left-to-right sums, the same sort and the same order statistics.
A :class:`numpy.random.Generator` may be passed instead of a seed; the result
then records ``rng="numpy"`` and ``seed=None``.

This module is the one place to import them from; each lives in its own room:

* :mod:`ragmeter.stats.draws`: the mulberry32 generator and the resampling draws;
* :mod:`ragmeter.stats.bootstrap`: exact resampled sums, :class:`Estimate`, :func:`bootstrap`;
* :mod:`ragmeter.stats.resample`: the same sums for rounds of thousands of draws, by tiles;
* :mod:`ragmeter.stats.paired`: :func:`paired`, :func:`compare_all`, :func:`holm`,
  :func:`benjamini_hochberg`;
* :mod:`ragmeter.stats.exact`: :func:`clopper_pearson`, exact intervals near 0% and 100%;
* :mod:`ragmeter.stats.maxt`: the step-down max-T over a family of paired comparisons;
* :mod:`ragmeter.stats.size`: :func:`sample_size`, :func:`sample_size_many` and the
  ``questions_*`` planners;
* :mod:`ragmeter.stats.agreement`: :func:`agreement`, :func:`cohen_kappa`;
* :mod:`ragmeter.stats.validate`: the input checks they share.

Imported from their own modules (the first two reach :mod:`ragmeter.stats.maxt`, whose
paired tests read this package, so re-exporting them here would close a loop):

* :mod:`ragmeter.stats.reruns`: intervals and paired tests of scores with reruns;
* :mod:`ragmeter.stats.rerun_variance`: variance shares (questions vs reruns), flip rates;
* :mod:`ragmeter.stats.ordinal_agreement`: weighted kappa, Krippendorff's alpha, test-retest.

See ``docs/statistics.md`` for what the numbers mean.
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr
from ragmeter.errors import InputError  # noqa: F401
from ragmeter.stats.agreement import Agreement, agreement, cohen_kappa  # noqa: F401
from ragmeter.stats.bootstrap import (  # noqa: F401
    Estimate,
    bootstrap,
    bootstrap_many,
    format_ends,
    format_interval,
    from_fields,
    percentile_interval,
    resampled_means,
    seq_mean,
)
from ragmeter.stats.draws import (  # noqa: F401
    mulberry32,
    mulberry32_indices,
    resample_indices,
    rng_name,
)
from ragmeter.stats.exact import clopper_pearson  # noqa: F401
from ragmeter.stats.paired import (  # noqa: F401
    Comparison,
    benjamini_hochberg,
    compare_all,
    compare_pairs,
    holm,
    interval_verdict,
    interval_winner,
    paired,
    verdict_text,
    winner_of,
)
from ragmeter.stats.size import (  # noqa: F401
    SizeRow,
    questions_for_half_width,
    questions_to_separate,
    sample_size,
    sample_size_many,
)
from ragmeter.stats.validate import (  # noqa: F401
    Method,
    Seed,
    alpha_of,
    as_matrix,
    check_common,
    check_fraction,
    check_names,
    seed_record,
)

__all__ = [
    "Agreement",
    "Comparison",
    "Estimate",
    "SizeRow",
    "agreement",
    "benjamini_hochberg",
    "bootstrap",
    "bootstrap_many",
    "clopper_pearson",
    "cohen_kappa",
    "compare_all",
    "holm",
    "mulberry32",
    "paired",
    "questions_for_half_width",
    "questions_to_separate",
    "resample_indices",
    "rng_name",
    "sample_size",
    "sample_size_many",
]

# The internals of these rooms stay in their modules; the names this package once re-exported
# (``stats._sign_blocks``, ...) forward there with a warning (``_compat.MOVED_NAMES``).
__getattr__ = lazy_getattr(__name__, {})
