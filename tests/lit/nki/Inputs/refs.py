"""numpy references of the NKI test kernels (tessel run --check --reference refs.py:FUNC): each takes
the kernel's inputs in its parameter order and returns its output."""
import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def causal_softmax(x):
    s = np.where(np.tril(np.ones(x.shape, dtype=bool)), x, -np.inf)
    return softmax(s)


def rmsnorm(x, g, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps) * g


def layernorm(x, gamma, beta, epsilon):
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + epsilon) * gamma + beta


def matmul(lhsT, rhs):
    return lhsT.astype(np.float64).T @ rhs


def matmul_untransposed(a, rhs):
    return a.astype(np.float64) @ rhs


def nkibench_transpose_matmul(lhs, rhs, k_tiles):
    """NKIBench's transpose_matmul on 2-D views: lhs [128, k_tiles*M], rhs [128, k_tiles*N]."""
    a = lhs.astype(np.float64).reshape(-1, lhs.shape[1] // k_tiles)
    return a.T @ rhs.reshape(-1, rhs.shape[1] // k_tiles)


def nkibench_rope(x_in, cos, sin):
    """NKIBench's rope_single_freq_apply: halves of x_in [d, S] rotated by cos, sin [d / 2, S]."""
    e, o = x_in[: x_in.shape[0] // 2], x_in[x_in.shape[0] // 2:]
    return np.concatenate([e * cos - o * sin, o * cos + e * sin])


def nkibench_matmul_add_rmsnorm(x, w, eps, z, g):
    """NKIBench's matmul_add_rmsnorm (g given as [1, N])."""
    y = x.astype(np.float64) @ w + z
    return y * g / np.sqrt(np.mean(y * y, axis=-1, keepdims=True) + eps)


def nkibench_add_rmsnorm_matmul(x, w, eps, z, g):
    """NKIBench's add_rmsnorm_matmul (g given as [1, K])."""
    a = x.astype(np.float64) + z
    return (a * g / np.sqrt(np.mean(a * a, axis=-1, keepdims=True) + eps)) @ w


def nkibench_bmm(lhs, rhs, batch):
    """NKIBench's bmm on 2-D views: lhs [batch*M, K], rhs [batch*K, N]."""
    a = lhs.astype(np.float64).reshape(batch, -1, lhs.shape[1])
    return (a @ rhs.reshape(batch, lhs.shape[1], -1)).reshape(-1, rhs.shape[1])


def scaled_add(a, b, alpha, shape, out_dtype, bias):
    assert tuple(shape) == a.shape and out_dtype == np.float32
    return a * alpha + b + (0.0 if bias is None else bias)


def vector_ops(x, y):
    p = np.arange(128)[:, None]
    f = np.arange(64)[None, :]
    r = 1.0 / (np.abs(y) + 1.0)
    lg = np.log(np.abs(x) + 1.0)
    c = (x > y).astype(np.float32)
    d = 2.0 - x / (np.abs(y) + 1.0)
    pw = (np.abs(x) + 1.0) ** 2.0
    rng = x.max(axis=1, keepdims=True) - x.min(axis=1, keepdims=True)
    e = rng / (np.abs(x) + 1.0)
    mean = x.mean(axis=1, keepdims=True)
    return r + lg + c + d + pw * 0.1 + e - mean + (p * 64 + f) * 0.001 + (5 + 2 * p + f) * 0.01


def tensor_add(a, b):
    return a + b


def attention(qT, k, v):
    s = qT.astype(np.float64).T @ k
    return softmax(s) @ v


def transpose(x):
    return np.ascontiguousarray(x.T)


def flash_attention(q, k, v, softmax_scale=0.125, causal=False):
    """q, k: [heads, d, seq] (transposed, as the kernel reads them); v: [heads, seq, d]."""
    out = []
    for h in range(q.shape[0]):
        s = q[h].astype(np.float64).T @ k[h] * softmax_scale
        if causal:
            s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
        out.append(softmax(s) @ v[h])
    return np.stack(out)


def flash_attention_causal(q, k, v, softmax_scale=0.125):
    return flash_attention(q, k, v, softmax_scale, causal=True)


def exp_row_sums(x, scales):
    """out[:, i] = sum over the row of exp(x * scales[:, i])."""
    return np.stack([np.exp(x * scales[:, i:i + 1]).sum(axis=1) for i in range(scales.shape[1])], axis=1)


def tensor_add_unused(a, b, unused=None):
    assert unused is None
    return a + b


def transpose2d(x, shape2D):
    """Each row of x is a row-major F1 x F2 matrix; each row of the result is its transpose."""
    f1, f2 = shape2D
    return x.reshape(x.shape[0], f1, f2).transpose(0, 2, 1).reshape(x.shape[0], f1 * f2)


def average_pool(in_tensor, pool_size):
    """2-D average pooling of C x H x W over pool_size x pool_size windows (stride pool_size)."""
    c, h, w = in_tensor.shape
    windows = in_tensor.astype(np.float64).reshape(c, h // pool_size, pool_size, w // pool_size, pool_size)
    return windows.mean(axis=(2, 4))


def every_other_column(x):
    return x[:, 0::2]


def pair_sums(x):
    """Sums of adjacent column pairs."""
    return x.reshape(x.shape[0], x.shape[1] // 2, 2).sum(axis=2)


def mamba(delta, u, A, B, C):
    """Mamba's selective scan: h[t] = exp(delta[t] A) h[t - 1] + delta[t] B[t] u[t] per channel and
    state, h[-1] = 0; out[t] = the sum over the states of C[t] h[t]."""
    delta, u, A, B, C = (x.astype(np.float64) for x in (delta, u, A, B, C))
    decay = np.exp(delta[:, :, None, :] * A[None, :, :, None])  # [batch, channels, states, seq]
    drive = (delta * u)[:, :, None, :] * B[:, None, :, :]
    h = np.zeros(decay.shape[:-1])
    out = np.zeros(delta.shape)
    for t in range(delta.shape[-1]):
        h = decay[..., t] * h + drive[..., t]
        out[..., t] = (h * C[:, None, :, t]).sum(axis=-1)
    return out


def scan_forms(x, y, init):
    """h[f] = x[f] h[f - 1] + y[f] from init, then g[f] = max(h[f] - g[f - 1], y[f]) from -1."""
    h, g = np.empty(x.shape), np.empty(x.shape)
    prev_h, prev_g = init[:, 0].astype(np.float64), np.full(x.shape[0], -1.0)
    for f in range(x.shape[1]):
        prev_h = x[:, f] * prev_h + y[:, f]
        prev_g = np.maximum(prev_h - prev_g, y[:, f])
        h[:, f], g[:, f] = prev_h, prev_g
    return g


def layernorm_tutorial(input_tensor, epsilon, gamma_vector, beta_vector):
    """The layernorm tutorial's parameter order; gamma and beta 1-D."""
    return layernorm(input_tensor, gamma_vector, beta_vector, epsilon)


def mean_var(x):
    """Each row's mean and population variance, [rows, 2]."""
    return np.stack([x.mean(axis=1), x.var(axis=1)], axis=1)


def column_sums_maxes(x):
    """Each column's sum over the rows, then each column's max: [2, columns]."""
    return np.stack([x.sum(axis=0), x.max(axis=0)])


def doubled(x):
    return 2 * x
