"""One thread for the numerical libraries while the evaluation runs.

scikit-learn's histogram boosting runs on OpenMP threads and NumPy's products on BLAS threads; on
a machine shared with other work, OpenMP threads waiting for each other made one boosting fit
about 70 times slower than a single thread. threadpoolctl limits only the libraries already
loaded, so scikit-learn's are loaded first.
"""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def single_thread():
    """A context in which BLAS and OpenMP use one thread."""
    import sklearn.ensemble
    import sklearn.linear_model  # noqa: F401
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield
