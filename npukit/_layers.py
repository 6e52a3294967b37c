"""CameraNet's operators: each layer's initial weights, forward and backward pass, and ONNX node.

The invariant this module keeps: **every backward is the exact derivative of
its forward** (the tests check each against finite differences in float64),
and every ONNX node computes what its forward computes (the tests run both).
The passes work on channels-last (N, H, W, C) activations, where a 1×1
convolution is a single matrix multiply; :mod:`npukit.models` transposes at
its NCHW interface. A forward returns ``(output, cache)``; a backward takes
the output's gradient and that cache and returns the input's gradient (and
the parameters' gradients).

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ._arith import conv_out_size

if TYPE_CHECKING:
    from .models import Layer

BN_EPSILON = 1e-5  # ONNX BatchNormalization's default epsilon
BN_MOMENTUM = 0.1  # weight of the new batch in the running statistics


def windows(xp: np.ndarray, k: int, stride: int, ho: int, wo: int):
    """The k×k shifted views of a padded NHWC tensor, one per kernel tap (i, j)."""
    for i in range(k):
        for j in range(k):
            yield i, j, xp[:, i:i + stride * (ho - 1) + 1:stride, j:j + stride * (wo - 1) + 1:stride, :]


def conv_forward(x: np.ndarray, w: np.ndarray, layer: Layer):
    """Convolution with 'same' padding; ``w`` has the ONNX layout (Cout, Cin/groups, k, k)."""
    n, h, wd, cin = x.shape
    k, s = layer.kernel, layer.stride
    if k == 1:  # pointwise: one matrix multiply over all N·H·W pixels
        y = x.reshape(-1, cin) @ w[:, :, 0, 0].T
        return y.reshape(n, h, wd, w.shape[0]), (x, w)
    ho, wo = conv_out_size(h, k, s, k // 2, k // 2), conv_out_size(wd, k, s, k // 2, k // 2)
    xp = np.pad(x, ((0, 0), (k // 2, k // 2), (k // 2, k // 2), (0, 0)))
    if layer.groups > 1:  # depthwise (groups == channels): each channel has its own k×k filter
        y = np.zeros((n, ho, wo, cin), dtype=x.dtype)
        for i, j, view in windows(xp, k, s, ho, wo):
            y += view * w[:, 0, i, j]
        return y, (xp, w)
    # dense k×k: im2col, then one matrix multiply
    cols = np.stack([view for _, _, view in windows(xp, k, s, ho, wo)], axis=3)  # (n, ho, wo, k·k, cin)
    cols = cols.reshape(n * ho * wo, k * k * cin)
    w_mat = w.transpose(2, 3, 1, 0).reshape(k * k * cin, -1)  # rows ordered (i, j, cin) like cols
    y = cols @ w_mat
    return y.reshape(n, ho, wo, w.shape[0]), (xp, cols, w_mat, w)


def conv_backward(dy: np.ndarray, cache, layer: Layer):
    """Gradients (dx, dw) of :func:`conv_forward`."""
    k, s = layer.kernel, layer.stride
    if k == 1:
        x, w = cache
        dy2 = dy.reshape(-1, dy.shape[-1])
        return (dy2 @ w[:, :, 0, 0]).reshape(x.shape), (dy2.T @ x.reshape(-1, x.shape[-1]))[:, :, None, None]
    p = k // 2
    n, ho, wo, cout = dy.shape
    if layer.groups > 1:
        xp, w = cache
        dxp, dw = np.zeros_like(xp), np.zeros_like(w)
        for (i, j, view), (_, _, d_view) in zip(windows(xp, k, s, ho, wo), windows(dxp, k, s, ho, wo)):
            dw[:, 0, i, j] = channel_sum(view * dy)
            d_view += dy * w[:, 0, i, j]  # writes through the view into dxp
        return dxp[:, p:-p, p:-p, :], dw
    xp, cols, w_mat, w = cache
    cin = xp.shape[-1]
    dy2 = dy.reshape(-1, cout)
    dw = (cols.T @ dy2).reshape(k, k, cin, cout).transpose(3, 2, 0, 1)
    dcols = (dy2 @ w_mat.T).reshape(n, ho, wo, k, k, cin)
    dxp = np.zeros_like(xp)
    for i, j, d_view in windows(dxp, k, s, ho, wo):  # col2im: each tap's gradient goes back where it came from
        d_view += dcols[:, :, :, i, j, :]
    return dxp[:, p:-p, p:-p, :], dw


def channel_sum(a: np.ndarray) -> np.ndarray:
    """Sum an NHWC tensor over every axis but the channels.

    ``np.einsum`` adds up each channel in one pass over memory, several times
    faster than ``a.sum(axis=(0, 1, 2))``, which adds one short row of C
    numbers at a time. (A matrix–vector product with a vector of ones is
    faster still on an idle machine, but it calls multithreaded BLAS, whose
    threads stall when other programs share the cores.)
    """
    return np.einsum("mc->c", a.reshape(-1, a.shape[-1]))


def bn_forward(x: np.ndarray, scale, bias, mean, var, train: bool):
    """BatchNormalization over N, H, W; in training mode with the batch's statistics."""
    if train:
        m = x.shape[0] * x.shape[1] * x.shape[2]
        mean = channel_sum(x) / m
        centred = x - mean
        var = channel_sum(centred * centred) / m
    else:
        centred = x - mean
    inv_std = 1 / np.sqrt(var + BN_EPSILON)
    x_hat = centred * inv_std
    return scale * x_hat + bias, (x_hat, inv_std, scale, mean, var)


def bn_backward(dy: np.ndarray, cache):
    """Gradients (dx, dscale, dbias) of a training-mode :func:`bn_forward`."""
    x_hat, inv_std, scale, _, _ = cache
    m = dy.shape[0] * dy.shape[1] * dy.shape[2]
    dbias = channel_sum(dy)
    dscale = channel_sum(dy * x_hat)
    dx = (scale * inv_std / m) * (m * dy - dbias - x_hat * dscale)
    return dx, dscale, dbias


def bn_update_running(p: dict[str, np.ndarray], name: str, cache, count: int) -> None:
    """Move BN's running statistics towards a training batch's (momentum :data:`BN_MOMENTUM`)."""
    _, _, _, mean, var = cache
    unbiased = var * count / max(count - 1, 1)  # the running variance is unbiased, as in PyTorch
    for role, batch_value in (("mean", mean), ("var", unbiased)):
        old = p[f"{name}.{role}"]
        p[f"{name}.{role}"] = ((1 - BN_MOMENTUM) * old + BN_MOMENTUM * batch_value).astype(old.dtype)


def forward(layer: Layer, x: np.ndarray, p: dict[str, np.ndarray], train: bool):
    """One layer's output and the cache its backward needs (training mode updates BN's statistics)."""
    name = layer.name
    if layer.op == "Conv":
        return conv_forward(x, p[f"{name}.weight"], layer)
    if layer.op == "BatchNormalization":
        y, cache = bn_forward(x, *(p[f"{name}.{r}"] for r in ("scale", "bias", "mean", "var")), train)
        if train:
            bn_update_running(p, name, cache, x.shape[0] * x.shape[1] * x.shape[2])
        return y, cache
    if layer.op == "Relu":
        return np.maximum(x, 0), x > 0
    if layer.op == "GlobalAveragePool":
        return x.mean(axis=(1, 2), keepdims=True), x.shape
    if layer.op == "Flatten":
        return x.reshape(x.shape[0], x.shape[1] * x.shape[2] * x.shape[3]), x.shape
    return x @ p[f"{name}.weight"].T + p[f"{name}.bias"], x  # Gemm


def backward(layer: Layer, dx: np.ndarray, cache, p: dict[str, np.ndarray], grads: dict) -> np.ndarray:
    """The gradient of one layer's input; its parameters' gradients go into ``grads``."""
    name = layer.name
    if layer.op == "Gemm":
        grads[f"{name}.weight"], grads[f"{name}.bias"] = dx.T @ cache, channel_sum(dx)
        return dx @ p[f"{name}.weight"]
    if layer.op == "Flatten":
        return dx.reshape(cache)
    if layer.op == "GlobalAveragePool":
        return np.broadcast_to(dx / (cache[1] * cache[2]), cache)
    if layer.op == "Relu":
        return dx * cache
    if layer.op == "BatchNormalization":
        dx, grads[f"{name}.scale"], grads[f"{name}.bias"] = bn_backward(dx, cache)
        return dx
    dx, grads[f"{name}.weight"] = conv_backward(dx, cache, layer)
    return dx


def init_params(layers: Sequence[Layer], seed: int) -> dict[str, np.ndarray]:
    """He-normal convolution weights, unit BN, small random ``fc``: the untrained network."""
    rng = np.random.default_rng(seed)
    params: dict[str, np.ndarray] = {}
    for layer in layers:
        name = layer.name
        if layer.op == "Conv":
            fan_in = layer.cin // layer.groups * layer.kernel ** 2
            shape = (layer.cout, layer.cin // layer.groups, layer.kernel, layer.kernel)
            params[f"{name}.weight"] = rng.normal(0, math.sqrt(2 / fan_in), shape).astype(np.float32)
        elif layer.op == "BatchNormalization":
            for role, fill in (("scale", 1), ("bias", 0), ("mean", 0), ("var", 1)):
                params[f"{name}.{role}"] = np.full(layer.cout, fill, np.float32)
        elif layer.op == "Gemm":
            shape = (layer.cout, layer.cin)
            params[f"{name}.weight"] = rng.normal(0, math.sqrt(1 / layer.cin), shape).astype(np.float32)
            params[f"{name}.bias"] = np.zeros(layer.cout, np.float32)
    return params


def onnx_node(layer: Layer, inp: str, out: str) -> tuple[Any, list[str]]:
    """The ONNX node of one layer and the names of its initializers."""
    from onnx import helper

    name = layer.name
    if layer.op == "Conv":
        k, pad = layer.kernel, layer.kernel // 2
        keys = [f"{name}.weight"]
        return helper.make_node("Conv", [inp, *keys], [out], name=name, kernel_shape=[k, k],
                                strides=[layer.stride] * 2, pads=[pad] * 4, dilations=[1, 1],
                                group=layer.groups), keys
    if layer.op == "BatchNormalization":
        keys = [f"{name}.{role}" for role in ("scale", "bias", "mean", "var")]
        return helper.make_node("BatchNormalization", [inp, *keys], [out], name=name, epsilon=BN_EPSILON), keys
    if layer.op == "Gemm":
        keys = [f"{name}.weight", f"{name}.bias"]
        return helper.make_node("Gemm", [inp, *keys], [out], name=name, transB=1), keys
    if layer.op == "Flatten":
        return helper.make_node("Flatten", [inp], [out], name=name, axis=1), []
    return helper.make_node(layer.op, [inp], [out], name=name), []  # Relu, GlobalAveragePool
