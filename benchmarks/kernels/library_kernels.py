"""Kernels written the way NumPy library code is written by people who never heard of a tracer:
stateful classes (optimizers, filters, recurrent cells, batch norm holding running statistics),
gradients held in dicts, intercept columns with ``np.c_`` / ``np.r_``, ``as_strided`` and
``sliding_window_view`` windows, CRCs over bytes with a 256-entry table, CSR products with
data-bounded slices, a DCT by loops, small CNN forwards, Levinson-Durbin, k-means, Gauss-Seidel.
Registered into ``kernels.KERNELS`` (imported at the end of ``kernels.py``); each has a
jax.numpy version of the same algorithm for ``jax.jit``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from kernels import kernel
from numpy.lib.stride_tricks import as_strided, sliding_window_view

_R = np.random.default_rng(1234)


# =============================================================================================
# stateful classes and dict-held gradients
# =============================================================================================
class Adam:
    """Adam holding its moment estimates per parameter name."""

    def __init__(self, params, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def update(self, params, grads):
        self.t += 1
        for k in params:
            self.m[k] *= self.beta1
            self.m[k] += (1 - self.beta1) * grads[k]
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * grads[k] ** 2
            m_hat = self.m[k] / (1 - self.beta1 ** self.t)
            v_hat = self.v[k] / (1 - self.beta2 ** self.t)
            params[k] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def _adam_linear_jax(X, y):
    n = X.shape[0]
    w, b = jnp.zeros(X.shape[1]), jnp.zeros(1)
    mw, vw, mb, vb = jnp.zeros_like(w), jnp.zeros_like(w), jnp.zeros_like(b), jnp.zeros_like(b)
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
    for t in range(1, 21):
        err = X @ w + b - y
        gw, gb = X.T @ err / n, jnp.sum(err, keepdims=True) / n
        mw, mb = mw * b1 + (1 - b1) * gw, mb * b1 + (1 - b1) * gb
        vw, vb = b2 * vw + (1 - b2) * gw ** 2, b2 * vb + (1 - b2) * gb ** 2
        w = w - lr * (mw / (1 - b1 ** t)) / (jnp.sqrt(vw / (1 - b2 ** t)) + eps)
        b = b - lr * (mb / (1 - b1 ** t)) / (jnp.sqrt(vb / (1 - b2 ** t)) + eps)
    return jnp.concatenate([w, b])


@kernel("adam_class_linreg", lambda: (_R.standard_normal((64, 8)), _R.standard_normal(64)), _adam_linear_jax)
def adam_class_linreg(X, y):
    n = X.shape[0]
    params = {"w": np.zeros(X.shape[1]), "b": np.zeros(1)}
    opt = Adam(params, lr=0.05)
    for step in range(20):
        err = X @ params["w"] + params["b"] - y
        grads = {"w": X.T @ err / n, "b": np.sum(err, keepdims=True) / n}
        opt.update(params, grads)
    return np.concatenate([params["w"], params["b"]])


class AdamState:
    """Adam over arrays owned by the caller (a training loop's checkpointed state)."""

    def __init__(self, m, v, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8):
        self.m, self.v = m, v
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps

    def step(self, w, g, t):
        self.m *= self.beta1
        self.m += (1 - self.beta1) * g
        self.v *= self.beta2
        self.v += (1 - self.beta2) * g * g
        w -= self.lr * (self.m / (1 - self.beta1 ** t)) / (np.sqrt(self.v / (1 - self.beta2 ** t)) + self.eps)


def _adam_inplace_jax(w, m, v, X, y):
    for t in range(1, 5):
        g = X.T @ (X @ w - y) / y.shape[0]
        m = m * 0.9 + (1 - 0.9) * g
        v = v * 0.999 + (1 - 0.999) * g * g
        w = w - 0.01 * (m / (1 - 0.9 ** t)) / (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return jnp.stack([w, m, v])


@kernel("adam_state_inplace",
        lambda: (_R.standard_normal(16), np.zeros(16), np.zeros(16), _R.standard_normal((128, 16)),
                 _R.standard_normal(128)),
        _adam_inplace_jax, inplace=True)
def adam_state_inplace(w, m, v, X, y):
    opt = AdamState(m, v)
    for t in range(1, 5):
        g = X.T @ (X @ w - y) / len(y)
        opt.step(w, g, t)


class SGDMomentum:
    def __init__(self, lr=0.1, momentum=0.9):
        self.lr = lr
        self.momentum = momentum
        self.velocity = {}

    def __call__(self, params, grads):
        for name, g in grads.items():
            if name not in self.velocity:
                self.velocity[name] = np.zeros_like(g)
            v = self.velocity[name]
            v *= self.momentum
            v -= self.lr * g
            params[name] += v


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _softmax_momentum_jax(X, labels):
    Y = jax.nn.one_hot(labels, 4, dtype=X.dtype)
    W, b = jnp.zeros((X.shape[1], 4)), jnp.zeros(4)
    vW, vb = jnp.zeros_like(W), jnp.zeros_like(b)
    for _ in range(10):
        z = X @ W + b
        z = z - z.max(axis=1, keepdims=True)
        P = jnp.exp(z) / jnp.exp(z).sum(axis=1, keepdims=True)
        dZ = (P - Y) / X.shape[0]
        vW = vW * 0.9 - 0.5 * (X.T @ dZ)
        W = W + vW
        vb = vb * 0.9 - 0.5 * dZ.sum(axis=0)
        b = b + vb
    return W, b


@kernel("momentum_softmax_class", lambda: (_R.standard_normal((96, 6)), _R.integers(0, 4, 96)),
        _softmax_momentum_jax)
def momentum_softmax_class(X, labels):
    n_classes = 4
    Y = np.eye(n_classes)[labels]
    params = {"W": np.zeros((X.shape[1], n_classes)), "b": np.zeros(n_classes)}
    opt = SGDMomentum(lr=0.5, momentum=0.9)
    for epoch in range(10):
        P = softmax(X @ params["W"] + params["b"])
        dZ = (P - Y) / X.shape[0]
        grads = {"W": X.T @ dZ, "b": dZ.sum(axis=0)}
        opt(params, grads)
    return params["W"], params["b"]


def _ln_mlp_jax(X, Y, W1, W2):
    p = {"W1": W1, "b1": jnp.zeros(W1.shape[1]), "W2": W2, "b2": jnp.zeros(W2.shape[1]),
         "gamma": jnp.ones(X.shape[1]), "beta": jnp.zeros(X.shape[1])}
    losses = []
    for _ in range(3):
        mu = X.mean(axis=1, keepdims=True)
        xhat = (X - mu) / jnp.sqrt(X.var(axis=1, keepdims=True) + 1e-5)
        ln = p["gamma"] * xhat + p["beta"]
        h_pre = ln @ p["W1"] + p["b1"]
        h = jnp.maximum(h_pre, 0)
        diff = h @ p["W2"] + p["b2"] - Y
        losses.append(0.5 * jnp.mean(jnp.sum(diff ** 2, axis=1)))
        dout = diff / X.shape[0]
        g = {"W2": h.T @ dout, "b2": dout.sum(axis=0)}
        dh = jnp.where(h_pre <= 0, 0.0, dout @ p["W2"].T)
        g["W1"], g["b1"] = ln.T @ dh, dh.sum(axis=0)
        dln = dh @ p["W1"].T
        g["gamma"], g["beta"] = (dln * xhat).sum(axis=0), dln.sum(axis=0)
        p = {k: p[k] - 0.1 * g[k] for k in p}
    return p["W1"], p["W2"], p["gamma"], jnp.array(losses)


@kernel("layernorm_mlp_dict_grads",
        lambda: (_R.standard_normal((32, 16)), _R.standard_normal((32, 4)), 0.3 * _R.standard_normal((16, 32)),
                 0.3 * _R.standard_normal((32, 4))),
        _ln_mlp_jax)
def layernorm_mlp_dict_grads(X, Y, W1, W2):
    params = {"W1": W1.copy(), "b1": np.zeros(W1.shape[1]), "W2": W2.copy(), "b2": np.zeros(W2.shape[1]),
              "gamma": np.ones(X.shape[1]), "beta": np.zeros(X.shape[1])}
    lr = 0.1
    losses = []
    for step in range(3):
        # forward
        mu = X.mean(axis=1, keepdims=True)
        var = X.var(axis=1, keepdims=True)
        xhat = (X - mu) / np.sqrt(var + 1e-5)
        ln = params["gamma"] * xhat + params["beta"]
        h_pre = ln @ params["W1"] + params["b1"]
        h = np.maximum(h_pre, 0)
        out = h @ params["W2"] + params["b2"]
        diff = out - Y
        losses.append(0.5 * np.mean(np.sum(diff ** 2, axis=1)))
        # backward
        dout = diff / X.shape[0]
        grads = {}
        grads["W2"] = h.T @ dout
        grads["b2"] = dout.sum(axis=0)
        dh = dout @ params["W2"].T
        dh[h_pre <= 0] = 0
        grads["W1"] = ln.T @ dh
        grads["b1"] = dh.sum(axis=0)
        dln = dh @ params["W1"].T
        grads["gamma"] = (dln * xhat).sum(axis=0)
        grads["beta"] = dln.sum(axis=0)
        for k in params:
            params[k] -= lr * grads[k]
    return params["W1"], params["W2"], params["gamma"], np.array(losses)


class ExponentialMovingAverage:
    def __init__(self, alpha, shape):
        self.alpha = alpha
        self.value = np.zeros(shape)
        self.initialized = False

    def update(self, x):
        if not self.initialized:
            self.value = x.copy()
            self.initialized = True
        else:
            self.value *= 1 - self.alpha
            self.value += self.alpha * x
        return self.value


def _ema_jax(signal):
    def step(v, x):
        v = v * (1 - 0.1) + 0.1 * x
        return v, v
    _, rest = lax.scan(step, signal[0], signal[1:])
    return jnp.concatenate([signal[:1], rest])


@kernel("ema_filter_class", lambda: (np.cumsum(_R.standard_normal((64, 8)), axis=0),), _ema_jax)
def ema_filter_class(signal):
    ema = ExponentialMovingAverage(0.1, signal.shape[1])
    out = np.empty_like(signal)
    for t in range(signal.shape[0]):
        out[t] = ema.update(signal[t])
    return out


class RNNCell:
    def __init__(self, Wx, Wh, b):
        self.Wx, self.Wh, self.b = Wx, Wh, b
        self.h = np.zeros(Wh.shape[0])
        self.history = []

    def __call__(self, x):
        self.h = np.tanh(x @ self.Wx + self.h @ self.Wh + self.b)
        self.history.append(self.h)
        return self.h


def _rnn_jax(xs, Wx, Wh, b):
    def step(h, x):
        h = jnp.tanh(x @ Wx + h @ Wh + b)
        return h, h
    h, hs = lax.scan(step, jnp.zeros(Wh.shape[0]), xs)
    return hs, h


@kernel("rnn_cell_class",
        lambda: (_R.standard_normal((16, 8)), 0.4 * _R.standard_normal((8, 16)), 0.3 * _R.standard_normal((16, 16)),
                 0.1 * _R.standard_normal(16)),
        _rnn_jax)
def rnn_cell_class(xs, Wx, Wh, b):
    cell = RNNCell(Wx, Wh, b)
    for x in xs:
        cell(x)
    return np.stack(cell.history), cell.h


class BatchNorm1d:
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        self.gamma = np.ones(num_features)
        self.beta = np.zeros(num_features)
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.momentum = momentum
        self.eps = eps

    def __call__(self, x, training=True):
        if training:
            mean = x.mean(axis=0)
            var = x.var(axis=0)
            self.running_mean *= 1 - self.momentum
            self.running_mean += self.momentum * mean
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var
        else:
            mean, var = self.running_mean, self.running_var
        return self.gamma * (x - mean) / np.sqrt(var + self.eps) + self.beta


def _batchnorm_jax(batches):
    rm, rv = jnp.zeros(batches.shape[2]), jnp.ones(batches.shape[2])
    for i in range(batches.shape[0]):
        rm = rm * (1 - 0.1) + 0.1 * batches[i].mean(axis=0)
        rv = (1 - 0.1) * rv + 0.1 * batches[i].var(axis=0)
    return (batches[0] - rm) / jnp.sqrt(rv + 1e-5), rm, rv


@kernel("batchnorm_running_stats", lambda: (2.0 + 3.0 * _R.standard_normal((8, 32, 16)),), _batchnorm_jax)
def batchnorm_running_stats(batches):
    bn = BatchNorm1d(batches.shape[2])
    for batch in batches:
        bn(batch)
    return bn(batches[0], training=False), bn.running_mean, bn.running_var


# =============================================================================================
# intercept columns: np.c_ / np.r_
# =============================================================================================
def _ridge_jax(X, y):
    A = jnp.c_[jnp.ones(X.shape[0]), X]
    penalty = jnp.r_[0.0, jnp.full(X.shape[1], 0.1)]
    return jnp.linalg.solve(A.T @ A + jnp.diag(penalty), A.T @ y)


@kernel("ridge_intercept_c_", lambda: (_R.standard_normal((128, 6)), _R.standard_normal(128)), _ridge_jax)
def ridge_intercept_c_(X, y):
    A = np.c_[np.ones(X.shape[0]), X]
    lam = 0.1
    penalty = np.r_[0.0, np.full(X.shape[1], lam)]  # the intercept is not penalized
    coef = np.linalg.solve(A.T @ A + np.diag(penalty), A.T @ y)
    return coef


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _logreg_jax(X, y):
    Xb = jnp.c_[jnp.ones(X.shape[0]), X]

    def body(_, w):
        p = 1.0 / (1.0 + jnp.exp(-(Xb @ w)))
        return w - 0.5 * (Xb.T @ (p - y) / y.shape[0])
    return lax.fori_loop(0, 50, body, jnp.zeros(Xb.shape[1]))


@kernel("logreg_intercept_c_", lambda: (_R.standard_normal((200, 5)), (_R.random(200) < 0.5).astype(np.float64)),
        _logreg_jax)
def logreg_intercept_c_(X, y):
    Xb = np.c_[np.ones(len(X)), X]
    w = np.zeros(Xb.shape[1])
    for _ in range(50):
        p = sigmoid(Xb @ w)
        grad = Xb.T @ (p - y) / len(y)
        w -= 0.5 * grad
    return w


def _smooth_jax(x):
    s = jnp.r_[x[10:0:-1], x, x[-2:-12:-1]]
    w = jnp.hanning(11)
    return jnp.convolve(w / w.sum(), s, mode="valid")


@kernel("cookbook_smooth_r_", lambda: (np.sin(np.linspace(0, 6, 256)) + 0.2 * _R.standard_normal(256),), _smooth_jax)
def cookbook_smooth_r_(x, window_len=11):
    """The SciPy cookbook's smooth(): reflect the ends with np.r_, convolve with a window."""
    s = np.r_[x[window_len - 1:0:-1], x, x[-2:-window_len - 1:-1]]
    w = np.hanning(window_len)
    y = np.convolve(w / w.sum(), s, mode="valid")
    return y


def _simpson_jax(y):
    n = y.shape[1]
    w = jnp.r_[1.0, jnp.tile(jnp.array([4.0, 2.0]), (n - 3) // 2), 4.0, 1.0] * (1.0 / (n - 1)) / 3
    return y @ w


@kernel("simpson_weights_r_", lambda: (np.sin(np.outer(np.arange(1, 9), np.linspace(0, 1, 129))),), _simpson_jax)
def simpson_weights_r_(y):
    n = y.shape[1]
    h = 1.0 / (n - 1)
    w = np.r_[1.0, np.tile([4.0, 2.0], (n - 3) // 2), 4.0, 1.0] * h / 3
    return y @ w


# =============================================================================================
# stride tricks: as_strided / sliding_window_view
# =============================================================================================
def rolling_window(a, window):
    shape = a.shape[:-1] + (a.shape[-1] - window + 1, window)
    strides = a.strides + (a.strides[-1],)
    return np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def _moving_average_jax(x):
    n = x.shape[1] - 8 + 1
    return sum(x[:, i:i + n] for i in range(8)) / 8


@kernel("moving_average_as_strided", lambda: (_R.standard_normal((8, 128)),), _moving_average_jax)
def moving_average_as_strided(x):
    return rolling_window(x, 8).mean(axis=-1)


def _maxpool_jax(x):
    C, H, W = x.shape
    return x.reshape(C, H // 2, 2, W // 2, 2).max(axis=(2, 4))


@kernel("maxpool_as_strided", lambda: (_R.standard_normal((4, 32, 32)),), _maxpool_jax)
def maxpool_as_strided(x):
    C, H, W = x.shape
    sc, sh, sw = x.strides
    win = as_strided(x, shape=(C, H // 2, W // 2, 2, 2), strides=(sc, 2 * sh, 2 * sw, sh, sw))
    return win.max(axis=(3, 4))


SOBEL_X = np.array([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
SOBEL_Y = SOBEL_X.T.copy()


def _sobel_jax(img):
    H, W = img.shape
    gx = sum(SOBEL_X[i, j] * img[i:i + H - 2, j:j + W - 2] for i in range(3) for j in range(3))
    gy = sum(SOBEL_Y[i, j] * img[i:i + H - 2, j:j + W - 2] for i in range(3) for j in range(3))
    return jnp.hypot(gx, gy)


@kernel("sobel_sliding_window", lambda: (_R.random((48, 48)),), _sobel_jax)
def sobel_sliding_window(img):
    win = sliding_window_view(img, (3, 3))
    gx = np.einsum("ijkl,kl->ij", win, SOBEL_X)
    gy = np.einsum("ijkl,kl->ij", win, SOBEL_Y)
    return np.hypot(gx, gy)


def _bands_jax(prices):
    n = prices.shape[0] - 20 + 1
    win = jnp.stack([prices[i:i + n] for i in range(20)], axis=-1)
    mid, sd = win.mean(axis=-1), win.std(axis=-1)
    return mid - 2.0 * sd, mid, mid + 2.0 * sd, win.max(axis=-1)


@kernel("bollinger_sliding_window", lambda: (100 + np.cumsum(_R.standard_normal(256)),), _bands_jax)
def bollinger_sliding_window(prices, window=20, k=2.0):
    win = sliding_window_view(prices, window)
    mid = win.mean(axis=-1)
    sd = win.std(axis=-1)
    return mid - k * sd, mid, mid + k * sd, win.max(axis=-1)


# =============================================================================================
# bytes: CRC-32 and CRC-16 with 256-entry tables
# =============================================================================================
def _make_crc32_table():
    table = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table[i] = c
    return table


CRC32_TABLE = _make_crc32_table()


def _crc32_jax(data):
    table = jnp.asarray(CRC32_TABLE)

    def body(i, crc):
        return table[(crc ^ data[i].astype(jnp.uint32)) & 0xFF] ^ (crc >> 8)
    return lax.fori_loop(0, data.shape[0], body, jnp.uint32(0xFFFFFFFF)) ^ jnp.uint32(0xFFFFFFFF)


@kernel("crc32_table", lambda: (_R.integers(0, 256, 64, dtype=np.uint8),), _crc32_jax)
def crc32_table(data):
    crc = np.uint32(0xFFFFFFFF)
    for b in data:
        crc = CRC32_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ np.uint32(0xFFFFFFFF)


def _make_crc16_table(poly=0x1021):
    table = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ poly) if c & 0x8000 else (c << 1)
        table.append(c & 0xFFFF)
    return np.array(table, dtype=np.uint16)


CRC16_TABLE = _make_crc16_table()


def _crc16_jax(data):
    table = jnp.asarray(CRC16_TABLE)

    def body(i, crc):
        return ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ data[i].astype(jnp.uint16)) & 0xFF]
    return lax.fori_loop(0, data.shape[0], body, jnp.uint16(0xFFFF))


@kernel("crc16_ccitt", lambda: (_R.integers(0, 256, 48, dtype=np.uint8),), _crc16_jax)
def crc16_ccitt(data):
    """CRC-16/CCITT-FALSE (init 0xFFFF, poly 0x1021)."""
    crc = np.uint16(0xFFFF)
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xFF]
    return crc


# =============================================================================================
# sparse CSR matrix-vector products
# =============================================================================================
def _random_csr(n, max_per_row, rng):
    counts = rng.integers(0, max_per_row + 1, n)
    rowptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    cols = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for c in counts]).astype(np.int64)
    vals = rng.standard_normal(rowptr[-1])
    return rowptr, cols, vals


def _csr_jax(rowptr, cols, vals, x):
    n = rowptr.shape[0] - 1
    rows = jnp.repeat(jnp.arange(n), jnp.diff(rowptr), total_repeat_length=cols.shape[0])
    return jax.ops.segment_sum(vals * x[cols], rows, num_segments=n)


@kernel("csr_matvec_slices", lambda: (*_random_csr(64, 8, _R), _R.standard_normal(64)), _csr_jax)
def csr_matvec_slices(rowptr, cols, vals, x):
    n = len(rowptr) - 1
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[cols[rowptr[i]:rowptr[i + 1]]] @ vals[rowptr[i]:rowptr[i + 1]]
    return y


@kernel("csr_matvec_scalar_loop", lambda: (*_random_csr(32, 6, _R), _R.standard_normal(32)), _csr_jax)
def csr_matvec_scalar_loop(rowptr, cols, vals, x):
    n = len(rowptr) - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(rowptr[i], rowptr[i + 1]):
            s += vals[k] * x[cols[k]]
        y[i] = s
    return y


# =============================================================================================
# signal processing: DCT-II by loops, Levinson-Durbin
# =============================================================================================
def _dct_jax(x):
    N = x.shape[0]
    k, n = np.arange(N)[:, None], np.arange(N)[None, :]
    C = np.cos(np.pi * k * (2 * n + 1) / (2 * N))
    scale = np.where(np.arange(N) == 0, np.sqrt(1.0 / N), np.sqrt(2.0 / N))
    return (C @ x) * scale


@kernel("dct2_loops_16", lambda: (_R.standard_normal(16),), _dct_jax)
def dct2_loops_16(x):
    N = len(x)
    X = np.zeros(N)
    for k in range(N):
        s = 0.0
        for n in range(N):
            s += x[n] * np.cos(np.pi * k * (2 * n + 1) / (2 * N))
        X[k] = s * (np.sqrt(1.0 / N) if k == 0 else np.sqrt(2.0 / N))
    return X


def autocorr(x, maxlag):
    n = len(x)
    return np.array([np.dot(x[:n - k], x[k:]) for k in range(maxlag + 1)]) / n


def levinson_durbin(r, order):
    a = np.zeros(order + 1)
    a[0] = 1.0
    e = r[0]
    for k in range(1, order + 1):
        acc = r[k] + np.dot(a[1:k], r[k - 1:0:-1])
        lam = -acc / e
        a[1:k] = a[1:k] + lam * a[k - 1:0:-1]
        a[k] = lam
        e *= 1.0 - lam * lam
    return a, e


def _lpc_jax(x):
    n, order = x.shape[0], 10
    r = jnp.stack([jnp.dot(x[:n - k], x[k:]) for k in range(order + 1)]) / n
    a = jnp.zeros(order + 1).at[0].set(1.0)
    e = r[0]
    for k in range(1, order + 1):
        acc = r[k] + jnp.dot(a[1:k], r[k - 1:0:-1])
        lam = -acc / e
        a = a.at[1:k].set(a[1:k] + lam * a[k - 1:0:-1]).at[k].set(lam)
        e = e * (1.0 - lam * lam)
    return a, e


def _ar_signal(n):
    x = np.zeros(n)
    noise = _R.standard_normal(n)
    for t in range(2, n):
        x[t] = 1.3 * x[t - 1] - 0.6 * x[t - 2] + noise[t]
    return x


@kernel("levinson_durbin_lpc", lambda: (_ar_signal(256),), _lpc_jax)
def levinson_durbin_lpc(x):
    r = autocorr(x, 10)
    return levinson_durbin(r, 10)


# =============================================================================================
# small CNN forwards
# =============================================================================================
def relu(x):
    return np.maximum(x, 0)


def conv3x3_loops(img, filters, bias):
    H, W = img.shape[1:]
    F = filters.shape[0]
    out = np.zeros((F, H - 2, W - 2))
    for f in range(F):
        for i in range(H - 2):
            for j in range(W - 2):
                out[f, i, j] = np.sum(img[:, i:i + 3, j:j + 3] * filters[f]) + bias[f]
    return out


def maxpool2x2(x):
    F, H, W = x.shape
    return x.reshape(F, H // 2, 2, W // 2, 2).max(axis=(2, 4))


def _cnn_jax(img, filters, bias, W, b):
    H, Wd = img.shape[1:]
    Ho, Wo = H - 2, Wd - 2
    conv = sum(jnp.einsum("chw,fc->fhw", img[:, i:i + Ho, j:j + Wo], filters[:, :, i, j])
               for i in range(3) for j in range(3)) + bias[:, None, None]
    h = jnp.maximum(conv, 0)
    F = h.shape[0]
    p = h.reshape(F, Ho // 2, 2, Wo // 2, 2).max(axis=(2, 4))
    z = p.reshape(-1) @ W + b
    e = jnp.exp(z - z.max())
    return e / e.sum()


@kernel("cnn_loops_1x8x8",
        lambda: (_R.standard_normal((1, 8, 8)), 0.5 * _R.standard_normal((4, 1, 3, 3)), 0.1 * _R.standard_normal(4),
                 0.3 * _R.standard_normal((36, 10)), 0.1 * _R.standard_normal(10)),
        _cnn_jax)
def cnn_loops_1x8x8(img, filters, bias, W, b):
    h = relu(conv3x3_loops(img, filters, bias))
    p = maxpool2x2(h)
    z = p.flatten() @ W + b
    e = np.exp(z - z.max())
    return e / e.sum()


@kernel("cnn_windows_3x16x16",
        lambda: (_R.standard_normal((3, 16, 16)), 0.3 * _R.standard_normal((8, 3, 3, 3)), 0.1 * _R.standard_normal(8),
                 0.1 * _R.standard_normal((8 * 7 * 7, 10)), 0.1 * _R.standard_normal(10)),
        _cnn_jax)
def cnn_windows_3x16x16(img, filters, bias, W, b):
    win = sliding_window_view(img, (3, 3), axis=(1, 2))          # (C, H-2, W-2, 3, 3)
    conv = np.einsum("chwkl,fckl->fhw", win, filters) + bias[:, None, None]
    h = relu(conv)
    p = maxpool2x2(h)
    z = p.reshape(-1) @ W + b
    z -= z.max()
    probs = np.exp(z)
    probs /= probs.sum()
    return probs


# =============================================================================================
# clustering and iterative solvers
# =============================================================================================
def _blobs():
    centers = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0], [6.0, 0.0]])
    X = np.concatenate([c + _R.standard_normal((32, 2)) for c in centers])
    return X, X[[0, 40, 70, 100]].copy() + 0.5


def _kmeans_jax(X, centers):
    k = centers.shape[0]
    for _ in range(5):
        d = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = d.argmin(axis=1)
        onehot = (labels[:, None] == jnp.arange(k)).astype(X.dtype)
        centers = (onehot.T @ X) / onehot.sum(axis=0)[:, None]
    return centers, labels


@kernel("kmeans_steps", _blobs, _kmeans_jax)
def kmeans_steps(X, centers, n_iter=5):
    centers = centers.copy()
    for _ in range(n_iter):
        d = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = d.argmin(axis=1)
        for j in range(centers.shape[0]):
            centers[j] = X[labels == j].mean(axis=0)
    return centers, labels


def _gauss_seidel_jax(u, f):
    n, m = u.shape
    h2 = (1.0 / (n - 1)) ** 2

    def point(idx, u):
        i, j = 1 + idx // (m - 2), 1 + idx % (m - 2)
        return u.at[i, j].set(0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - h2 * f[i, j]))
    return lax.fori_loop(0, 2 * (n - 2) * (m - 2), lambda t, u: point(t % ((n - 2) * (m - 2)), u), u)


@kernel("gauss_seidel_inplace", lambda: (_R.standard_normal((16, 16)), _R.standard_normal((16, 16))),
        _gauss_seidel_jax, inplace=True)
def gauss_seidel_inplace(u, f, sweeps=2):
    n, m = u.shape
    h2 = (1.0 / (n - 1)) ** 2
    for sweep in range(sweeps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - h2 * f[i, j])
