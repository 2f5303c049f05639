"""scikit-learn with ``array_api_dispatch=True`` on numr tensors: the estimators, metrics and pairwise
kernels that its documentation lists as array-API ready fit, predict and transform, keep their fitted
attributes and results as numr tensors on the input's device, and match the NumPy run.

Two kinds of test: scikit-learn's own ``check_array_api_input`` (the check its test suite runs for
PyTorch, CuPy and array-api-strict), and value comparisons against the NumPy run on well-conditioned data.
"""

import warnings

import numpy as np
import pytest
import sklearn
import sklearn.metrics
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression, PoissonRegressor, Ridge, RidgeClassifierCV, RidgeCV
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import FeatureUnion
from sklearn.preprocessing import (
    Binarizer,
    KernelCenterer,
    LabelEncoder,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    PolynomialFeatures,
    StandardScaler,
)
from sklearn.utils.estimator_checks import check_array_api_input

import numr_array as xp

from ..helpers import device_data, needs_dtype
from .helpers import assert_tensor_on, host

pytestmark = pytest.mark.usefixtures("scipy_array_api")

# the array-API-ready estimators (scikit-learn's array_api_support tag; MaxAbsScaler works without it),
# with the solvers that support array API dispatch
ESTIMATORS = {
    "PCA-full": PCA(n_components=3, svd_solver="full"),
    "PCA-covariance_eigh": PCA(n_components=3, svd_solver="covariance_eigh"),
    "PCA-randomized": PCA(n_components=3, svd_solver="randomized", power_iteration_normalizer="QR",
                          random_state=0),
    "PCA-auto": PCA(n_components=3),
    "PCA-whiten": PCA(n_components=2, whiten=True),
    "LinearDiscriminantAnalysis": LinearDiscriminantAnalysis(),
    "Ridge": Ridge(solver="svd"),
    "RidgeCV": RidgeCV(alphas=(0.1, 1.0, 10.0)),
    "RidgeClassifierCV": RidgeClassifierCV(alphas=(0.1, 1.0)),
    "GaussianNB": GaussianNB(),
    "LogisticRegression": LogisticRegression(),
    "PoissonRegressor": PoissonRegressor(max_iter=20),
    "StandardScaler": StandardScaler(),
    "MinMaxScaler": MinMaxScaler(),
    "MaxAbsScaler": MaxAbsScaler(),
    "Normalizer": Normalizer(),
    "Binarizer": Binarizer(),
    "KernelCenterer": KernelCenterer(),
    "PolynomialFeatures": PolynomialFeatures(),
    "Nystroem": Nystroem(n_components=5, random_state=0),
    "GridSearchCV": GridSearchCV(Ridge(solver="svd"), {"alpha": [0.1, 1.0]}, cv=2),
    "RandomizedSearchCV": RandomizedSearchCV(LogisticRegression(), {"C": [0.1, 1.0, 10.0]}, n_iter=2, cv=2,
                                             random_state=0),
    "FeatureUnion": FeatureUnion([("pca", PCA(n_components=2)), ("scale", StandardScaler())]),
}

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_sklearn_array_api_check(name, dtype, device):
    """scikit-learn's own array API check: fitted attributes and every method's output stay in numr_array
    on the input's device, with NumPy's shapes and dtypes."""
    # (the check puts int64 labels on the device, and scikit-learn's code makes int64 counts itself)
    needs_dtype(xp.int64, *((xp.float64,) if dtype == "float64" else ()), device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_array_api_input(name, ESTIMATORS[name], "numr_array", device_name=str(device), dtype_name=dtype)


# --- value comparisons ------------------------------------------------------------------------------------

def _data(n=80, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) @ rng.standard_normal((p, p)) + rng.standard_normal(p)
    y3 = np.argmax(X[:, :3] + 0.5 * rng.standard_normal((n, 3)), axis=1)
    yr = X @ rng.standard_normal(p) + 0.1 * rng.standard_normal(n)
    return X, y3, yr


def _fit_both(make, X, y, device, dtype="float64"):
    """The estimator fitted on NumPy data and (under array_api_dispatch) on the same data as numr tensors
    (integer labels in the device's integer dtype). A float64 fit needs a device with float64."""
    if dtype == "float64":
        needs_dtype(xp.float64, device=device)
    X = X.astype(dtype)
    ref = make().fit(X, y) if y is not None else make().fit(X)
    Xt = xp.asarray(X, device=device)
    yt = None if y is None else xp.asarray(device_data(y, device), device=device)
    with sklearn.config_context(array_api_dispatch=True):
        got = make().fit(Xt, yt) if y is not None else make().fit(Xt)
    return ref, got, X, Xt


def _close(ref, got, device, dtype="float64"):
    assert_tensor_on(got, device)
    tol = {"float64": dict(rtol=1e-9, atol=1e-11), "float32": dict(rtol=2e-4, atol=2e-5)}[dtype]
    np.testing.assert_allclose(host(got), ref, **tol)


@pytest.mark.parametrize("solver", ["full", "covariance_eigh", "randomized", "auto"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pca_solvers(solver, dtype, device):
    X, _, _ = _data()
    kw = dict(power_iteration_normalizer="QR", random_state=0) if solver == "randomized" else {}
    ref, got, X, Xt = _fit_both(lambda: PCA(n_components=3, svd_solver=solver, **kw), X, None, device, dtype)
    for attr in ("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_", "mean_"):
        _close(getattr(ref, attr), getattr(got, attr), device, dtype)
    with sklearn.config_context(array_api_dispatch=True):
        Z = got.transform(Xt)
        _close(ref.transform(X), Z, device, dtype)
        _close(ref.inverse_transform(ref.transform(X)), got.inverse_transform(Z), device, dtype)
        _close(ref.get_covariance(), got.get_covariance(), device, dtype)
        assert got.score(Xt) == pytest.approx(ref.score(X), rel=1e-8 if dtype == "float64" else 1e-4)


def test_linear_discriminant_analysis(device):
    X, y, _ = _data()
    ref, got, X, Xt = _fit_both(lambda: LinearDiscriminantAnalysis(n_components=2), X, y, device)
    with sklearn.config_context(array_api_dispatch=True):
        _close(ref.predict_proba(X), got.predict_proba(Xt), device)
        # the discriminant directions come from an SVD, whose singular vectors' signs are the solver's own
        Z, Zref = got.transform(Xt), ref.transform(X)
        signs = np.sign(np.sum(host(Z) * Zref, axis=0))
        _close(Zref * signs, Z, device)
        _close(ref.decision_function(X), got.decision_function(Xt), device)
        assert np.array_equal(host(got.predict(Xt)), ref.predict(X))
    _close(ref.coef_, got.coef_, device)
    _close(ref.means_, got.means_, device)


def test_ridge_and_ridge_cv(device):
    X, _, yr = _data()
    w = np.linspace(0.5, 2.0, X.shape[0])
    for make in (lambda: Ridge(alpha=0.7, solver="svd"), lambda: RidgeCV(alphas=(0.01, 0.1, 1.0, 10.0))):
        ref, got, X, Xt = _fit_both(make, X, yr, device)
        _close(ref.coef_, got.coef_, device)
        with sklearn.config_context(array_api_dispatch=True):
            _close(ref.predict(X), got.predict(Xt), device)
    ref = Ridge(alpha=0.7, solver="svd").fit(X, yr, sample_weight=w)
    with sklearn.config_context(array_api_dispatch=True):
        got = Ridge(alpha=0.7, solver="svd").fit(Xt, xp.asarray(yr, device=device),
                                                 sample_weight=xp.asarray(w, device=device))
    _close(ref.coef_, got.coef_, device)
    assert float(got.intercept_) == pytest.approx(float(ref.intercept_), rel=1e-9)


def test_gaussian_nb(device):
    X, y, _ = _data()
    ref, got, X, Xt = _fit_both(lambda: GaussianNB(var_smoothing=1e-6), X, y, device)
    _close(ref.theta_, got.theta_, device)
    _close(ref.var_, got.var_, device)
    with sklearn.config_context(array_api_dispatch=True):
        _close(ref.predict_proba(X), got.predict_proba(Xt), device)
        _close(ref.predict_log_proba(X), got.predict_log_proba(Xt), device)
        assert got.score(Xt, xp.asarray(_data()[1], device=device)) == pytest.approx(ref.score(X, _data()[1]))


@pytest.mark.parametrize("binary", [True, False])
def test_logistic_regression(binary, device):
    X, y, _ = _data()
    y = (y == 0).astype(np.int64) if binary else y
    ref, got, X, Xt = _fit_both(lambda: LogisticRegression(C=0.5, tol=1e-10, max_iter=1000), X, y, device)
    # lbfgs stops on a tolerance, so iterates may part at the last digits; the optimum is the same
    tol = dict(rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(host(got.coef_), ref.coef_, **tol)
    with sklearn.config_context(array_api_dispatch=True):
        proba = got.predict_proba(Xt)
        assert_tensor_on(proba, device)
        np.testing.assert_allclose(host(proba), ref.predict_proba(X), **tol)
        assert np.array_equal(host(got.predict(Xt)), ref.predict(X))


TRANSFORMERS = {
    "StandardScaler": StandardScaler, "StandardScaler-no-mean": lambda: StandardScaler(with_mean=False),
    "MinMaxScaler": MinMaxScaler, "MinMaxScaler-range": lambda: MinMaxScaler(feature_range=(-2, 3)),
    "MaxAbsScaler": MaxAbsScaler, "Normalizer-l2": Normalizer, "Normalizer-l1": lambda: Normalizer(norm="l1"),
    "Normalizer-max": lambda: Normalizer(norm="max"), "Binarizer": lambda: Binarizer(threshold=0.5),
    "PolynomialFeatures": lambda: PolynomialFeatures(degree=2),
}


@pytest.mark.parametrize("name", list(TRANSFORMERS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_transformers(name, dtype, device):
    if name.startswith("StandardScaler"):  # (scikit-learn counts samples in an int64 array of its own)
        needs_dtype(xp.int64, device=device)
    X, _, _ = _data()
    X[:, 2] = 0.0  # a constant column: the scalers' zero-scale handling
    ref, got, X, Xt = _fit_both(TRANSFORMERS[name], X, None, device, dtype)
    with sklearn.config_context(array_api_dispatch=True):
        Z = got.transform(Xt)
        _close(ref.transform(X), Z, device, dtype)
        if hasattr(ref, "inverse_transform"):
            _close(ref.inverse_transform(ref.transform(X)), got.inverse_transform(Z), device, dtype)


def test_kernel_centerer_and_label_encoder(device):
    X, y, _ = _data()
    K = X @ X.T
    ref, got, K, Kt = _fit_both(KernelCenterer, K, None, device)
    with sklearn.config_context(array_api_dispatch=True):
        _close(ref.transform(K), got.transform(Kt), device)
        labels = xp.asarray(y * 10 + 3, device=device)
        enc = LabelEncoder().fit(labels)
        codes = enc.transform(labels)
        assert_tensor_on(codes, device)
        assert np.array_equal(host(codes), LabelEncoder().fit_transform(y * 10 + 3))
        assert np.array_equal(host(enc.inverse_transform(codes)), y * 10 + 3)


def _classification_inputs():
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 3, 50)
    y_pred = np.where(rng.random(50) < 0.3, (y_true + 1) % 3, y_true)
    y_bin = rng.integers(0, 2, 50)
    score = np.clip(y_bin * 0.3 + 0.7 * rng.random(50), 0.01, 0.99)
    return y_true, y_pred, y_bin, score


_M = sklearn.metrics
_LABELS = _classification_inputs()[:2]
_SCORES = _classification_inputs()[2:]
_REGRESSION = (np.random.default_rng(2).random(40) + 0.5, np.random.default_rng(3).random(40) + 0.5)
METRICS = {
    "accuracy_score": (_M.accuracy_score, _LABELS, {}),
    "balanced_accuracy_score": (_M.balanced_accuracy_score, _LABELS, {}),
    "cohen_kappa_score": (_M.cohen_kappa_score, _LABELS, {}),
    "confusion_matrix": (_M.confusion_matrix, _LABELS, {}),
    "multilabel_confusion_matrix": (_M.multilabel_confusion_matrix, _LABELS, {}),
    "f1_score": (_M.f1_score, _LABELS, {"average": "macro"}),
    "fbeta_score": (_M.fbeta_score, _LABELS, {"beta": 2.0, "average": "weighted"}),
    "precision_score": (_M.precision_score, _LABELS, {"average": "weighted"}),
    "recall_score": (_M.recall_score, _LABELS, {"average": None}),
    "jaccard_score": (_M.jaccard_score, _LABELS, {"average": "micro"}),
    "hamming_loss": (_M.hamming_loss, _LABELS, {}),
    "zero_one_loss": (_M.zero_one_loss, _LABELS, {}),
    "log_loss": (_M.log_loss, _SCORES, {}),
    "brier_score_loss": (_M.brier_score_loss, _SCORES, {}),
    "roc_auc_score": (_M.roc_auc_score, _SCORES, {}),
    "roc_curve": (lambda a, b: _M.roc_curve(a, b)[1], _SCORES, {}),
    "average_precision_score": (_M.average_precision_score, _SCORES, {}),
    "precision_recall_curve": (lambda a, b: _M.precision_recall_curve(a, b)[0], _SCORES, {}),
    "r2_score": (_M.r2_score, _REGRESSION, {}),
    "mean_squared_error": (_M.mean_squared_error, _REGRESSION, {}),
    "root_mean_squared_error": (_M.root_mean_squared_error, _REGRESSION, {}),
    "mean_absolute_error": (_M.mean_absolute_error, _REGRESSION, {}),
    "median_absolute_error": (_M.median_absolute_error, _REGRESSION, {}),
    "mean_pinball_loss": (_M.mean_pinball_loss, _REGRESSION, {"alpha": 0.3}),
    "mean_squared_log_error": (_M.mean_squared_log_error, _REGRESSION, {}),
    "mean_absolute_percentage_error": (_M.mean_absolute_percentage_error, _REGRESSION, {}),
    "explained_variance_score": (_M.explained_variance_score, _REGRESSION, {}),
    "max_error": (_M.max_error, _REGRESSION, {}),
    "mean_tweedie_deviance": (_M.mean_tweedie_deviance, _REGRESSION, {"power": 1.5}),
    "mean_poisson_deviance": (_M.mean_poisson_deviance, _REGRESSION, {}),
    "mean_gamma_deviance": (_M.mean_gamma_deviance, _REGRESSION, {}),
}


# scikit-learn makes a 64-bit array itself in these (float64 weights and averages, int64 label indices)
METRICS_NEED = {"accuracy_score": xp.float64, "hamming_loss": xp.float64, "zero_one_loss": xp.float64,
                "balanced_accuracy_score": xp.int64, "cohen_kappa_score": xp.int64, "confusion_matrix": xp.int64,
                "multilabel_confusion_matrix": xp.int64, "f1_score": xp.int64, "fbeta_score": xp.int64,
                "precision_score": xp.int64, "recall_score": xp.int64, "jaccard_score": xp.int64,
                "brier_score_loss": xp.int64}


@pytest.mark.parametrize("name", list(METRICS))
def test_metrics(name, device):
    if name in METRICS_NEED:
        needs_dtype(METRICS_NEED[name], device=device)
    if name == "roc_auc_score" and device.kind != "cpu":
        pytest.skip("scikit-learn's roc_auc_score calls np.unique on binary labels (sklearn/metrics/_ranking.py), "
                    "which needs the data on the host")
    fn, args, kwargs = METRICS[name]
    # (without float64 or int64 on the device, both runs take the data in the dtypes it has)
    args = [device_data(a, device) for a in args]
    ref = fn(*args, **kwargs)
    with sklearn.config_context(array_api_dispatch=True):
        got = fn(*(xp.asarray(a, device=device) for a in args), **kwargs)
    if isinstance(ref, np.ndarray):
        assert_tensor_on(got, device)
    else:
        assert isinstance(got, float), f"{name} returned {type(got).__name__}"
    single = any(a.dtype == np.float32 for a in args)
    np.testing.assert_allclose(host(got), ref, rtol=1e-5 if single else 1e-10, atol=1e-6 if single else 1e-12)


_P = sklearn.metrics.pairwise
PAIRWISE = {
    "linear_kernel": (_P.linear_kernel, {}),
    "polynomial_kernel": (_P.polynomial_kernel, {"degree": 2, "coef0": 0.5}),
    "rbf_kernel": (_P.rbf_kernel, {"gamma": 0.3}),
    "laplacian_kernel": (_P.laplacian_kernel, {}),
    "sigmoid_kernel": (_P.sigmoid_kernel, {"gamma": 0.1}),
    "chi2_kernel": (_P.chi2_kernel, {}),
    "additive_chi2_kernel": (_P.additive_chi2_kernel, {}),
    "cosine_similarity": (_P.cosine_similarity, {}),
    "cosine_distances": (_P.cosine_distances, {}),
    "euclidean_distances": (_P.euclidean_distances, {}),
    "euclidean_distances-squared": (_P.euclidean_distances, {"squared": True}),
    "manhattan_distances": (_P.manhattan_distances, {}),
    "pairwise_kernels-rbf": (_P.pairwise_kernels, {"metric": "rbf"}),
    "pairwise_distances-cosine": (_P.pairwise_distances, {"metric": "cosine"}),
    "pairwise_distances_argmin": (_P.pairwise_distances_argmin, {}),
    "paired_euclidean_distances": (lambda a, b: _P.paired_euclidean_distances(a, b[: a.shape[0]]), {}),
    "paired_cosine_distances": (lambda a, b: _P.paired_cosine_distances(a, b[: a.shape[0]]), {}),
}


@pytest.mark.parametrize("name", list(PAIRWISE))
def test_pairwise(name, device):
    fn, kwargs = PAIRWISE[name]
    rng = np.random.default_rng(4)
    A, B = rng.random((7, 4)), rng.random((9, 4))  # non-negative: the chi2 kernels need it
    A, B = device_data(A, device), device_data(B, device)  # (float32 on a device without float64)
    ref = fn(A, B, **kwargs)
    with sklearn.config_context(array_api_dispatch=True):
        got = fn(xp.asarray(A, device=device), xp.asarray(B, device=device), **kwargs)
    _close(ref, got, device, A.dtype.name)
