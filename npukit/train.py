"""Training and scoring CameraNet, deterministically, in NumPy.

The invariant this module keeps: **the shipped weights are reproducible.**
The shipped weights (``npukit/data/cameranet.npz``) were produced by exactly::

    train(epochs=8, n_train=6000, batch=64, lr=0.03, weight_decay=0.0001, smoothing=0.1, seed=0, data_seed=100)

(the string :data:`TRAIN_CALL`; :func:`reproduce` runs it, and
``python -m npukit.train`` — ``make weights`` — re-trains and rewrites the
file, byte for byte the same when the weights come out the same).

Training minimises :func:`loss_and_grads` (softmax cross-entropy with label
smoothing, through :meth:`CameraNet.backward`) with AdamW; :func:`accuracy`
and :func:`confusion_matrix` score a network on held-out images.

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

if __name__ == "__main__":  # `python -m npukit.train` (make weights): see main()
    import os

    # One BLAS thread: the same weights, and on a busy machine several times
    # faster, because a second BLAS thread mostly waits for a free core.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import math
import time
from typing import Any, Callable, Sequence

import numpy as np

from . import _check, _tally
from .data import CLASSES, shapes_dataset
from .data import HELDOUT_SEED as _HELDOUT_SEED
from .models import WEIGHTS_PATH, CameraNet, _check_images, summary

__all__ = [
    "HELDOUT_SEED",
    "TRAIN_KWARGS",
    "TRAIN_CALL",
    "loss_and_grads",
    "train",
    "reproduce",
    "accuracy",
    "confusion_matrix",
    "numbers",
    "main",
]


#: Seed of the held-out images used to state CameraNet's accuracy (:data:`npukit.data.HELDOUT_SEED`,
#: the one held-out draw of :func:`npukit.data.heldout`). Training draws its images from
#: ``data_seed`` (100 by default), never from this seed.
HELDOUT_SEED: int = _HELDOUT_SEED


#: The exact training call that produced the shipped weights.
TRAIN_KWARGS: dict[str, Any] = {
    "epochs": 8,
    "n_train": 6000,
    "batch": 64,
    "lr": 0.03,
    "weight_decay": 0.0001,
    "smoothing": 0.1,
    "seed": 0,
    "data_seed": 100,
}


TRAIN_CALL: str = "train(" + ", ".join(f"{k}={v!r}" for k, v in TRAIN_KWARGS.items()) + ")"


def _cross_entropy(logits: np.ndarray, labels: np.ndarray, smoothing: float = 0.0) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy and its gradient with respect to the logits.

    With label smoothing ε the target puts 1 − ε on the true class and spreads
    ε evenly over all classes, which keeps the logits from growing without bound.
    """
    n, k = logits.shape
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    target = np.full_like(log_probs, smoothing / k)
    target[np.arange(n), labels] += 1 - smoothing
    loss = -(target * log_probs).sum(axis=1).mean()
    return float(loss), (np.exp(log_probs) - target) / n


def _num_classes(net: CameraNet) -> int:
    return net.layers[-1].cout


def loss_and_grads(net: CameraNet, images: np.ndarray, labels: np.ndarray, *,
                   smoothing: float = 0.0) -> tuple[float, dict[str, np.ndarray]]:
    """Mean softmax cross-entropy of a training-mode pass of ``net``, and its gradients.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    net : CameraNet
    images : numpy.ndarray
        As for :meth:`CameraNet.forward` (at least one image).
    labels : numpy.ndarray
        Integer class indices in ``[0, num_classes)``, shape ``(n,)``.
    smoothing : float
        Label smoothing ε in [0, 1) (0 for plain cross-entropy).

    Returns
    -------
    loss : float
    grads : dict
        As returned by :meth:`CameraNet.backward`.

    Raises
    ------
    TypeError, ValueError
        For a ``net`` that is not a CameraNet, bad ``images``, ``labels`` (a
        negative label or one past the last class too) or ``smoothing``.

    Examples
    --------
    >>> net = CameraNet(stem=4, blocks=[(8, 2)], seed=0)
    >>> loss, grads = loss_and_grads(net, *shapes_dataset(4, seed=0))
    >>> grads["block1.pw.weight"].shape == net.params["block1.pw.weight"].shape
    True
    """
    _check.instance(net, "net", CameraNet)
    images = _check_images(images, net.size, dtypes=(np.float32, np.float64))
    labels = _check.labels(labels, "labels", classes=_num_classes(net), n=len(images))
    smoothing = _check.fraction(smoothing, "smoothing")
    logits = net.forward(images, train=True)
    loss, d_logits = _cross_entropy(logits, labels, smoothing)
    return loss, net.backward(d_logits)


def train(*, epochs: int = 8, n_train: int = 6000, batch: int = 64, lr: float = 0.03, weight_decay: float = 0.0001,
          smoothing: float = 0.1, seed: int = 0, data_seed: int = 100, arch: dict[str, Any] | None = None,
          log: Callable[[str], None] | None = None) -> tuple[CameraNet, list[float]]:
    """Train a CameraNet from scratch, deterministically.

    Draws ``n_train`` images with ``shapes_dataset(n_train, seed=data_seed)``,
    then runs AdamW (β = 0.9, 0.999; decoupled weight decay on convolution and
    ``fc`` weights only) on shuffled mini-batches for ``epochs`` epochs, the
    learning rate following a cosine from ``lr`` down to 0, minimising
    :func:`loss_and_grads`. The same call gives the same weights (on the same
    machine and NumPy build; another BLAS may round differently). See
    chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    epochs, n_train, batch : int
        Passes over the data, training images, images per step (a last
        incomplete batch of an epoch is skipped, so BN always sees ``batch``).
    lr, weight_decay, smoothing : float
        Peak learning rate, AdamW weight decay, label smoothing ε.
    seed, data_seed : int
        Seed of the weights and the shuffling; seed of the training images
        (keep it away from :data:`HELDOUT_SEED`).
    arch : dict, optional
        :class:`CameraNet` arguments (``stem``, ``blocks``, ``num_classes``,
        ``size``); the images are drawn at its ``size``.
    log : callable, optional
        Called with one progress line per epoch (e.g. ``print``).

    Returns
    -------
    net : CameraNet
    losses : list of float
        The training loss of every step.

    Raises
    ------
    TypeError, ValueError
        If a count or seed is not a non-negative integer (``batch`` >= 2,
        ``n_train >= batch``), a rate is not in [0, 1), ``arch`` is not a
        dict of CameraNet arguments for >= 8 classes and 16-pixel images, or
        ``log`` is not callable.

    Examples
    --------
    >>> net, losses = train(epochs=1, n_train=64, batch=32, seed=0)
    >>> len(losses)
    2
    """
    epochs = _check.integer(epochs, "epochs", minimum=1)
    batch = _check.integer(batch, "batch", minimum=2)
    n_train = _check.integer(n_train, "n_train", minimum=batch)
    seed, data_seed = _check.integer(seed, "seed", minimum=0), _check.integer(data_seed, "data_seed", minimum=0)
    lr, weight_decay, smoothing = (_check.fraction(value, name) for name, value in
                                   (("lr", lr), ("weight_decay", weight_decay), ("smoothing", smoothing)))
    _check_log(log)
    net = _untrained(arch, seed)
    images, labels = shapes_dataset(n_train, seed=data_seed, size=net.size)
    moments = {k: (np.zeros_like(net.params[k]), np.zeros_like(net.params[k])) for k in net.trainable()}
    rng = np.random.default_rng(seed)
    steps_per_epoch = n_train // batch
    total = epochs * steps_per_epoch
    losses: list[float] = []
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(n_train)
        for s in range(steps_per_epoch):
            idx = order[s * batch:(s + 1) * batch]
            t = len(losses)
            rate = lr * 0.5 * (1 + math.cos(math.pi * t / total))
            loss, grads = loss_and_grads(net, images[idx], labels[idx], smoothing=smoothing)
            losses.append(loss)
            _adamw_step(net, grads, moments, t, rate, weight_decay)
        if log is not None:
            recent = losses[-steps_per_epoch:]
            log(f"epoch {epoch + 1}/{epochs}: mean loss {sum(recent) / len(recent):.4f}, "
                f"{time.perf_counter() - start:.1f} s")
    return net, losses


def _check_log(log: Any) -> None:
    if log is not None and not callable(log):
        raise TypeError(f"log must be callable (e.g. print) or None, got {type(log).__name__}")


def _untrained(arch: Any, seed: int) -> CameraNet:
    """A fresh CameraNet of architecture ``arch`` that can learn :func:`shapes_dataset`'s classes."""
    arch = {} if arch is None else _check.instance(arch, "arch", dict, "dict of CameraNet arguments")
    unknown = set(arch) - {"stem", "blocks", "num_classes", "size"}
    if unknown:
        raise ValueError(f"arch may hold stem, blocks, num_classes and size, got {sorted(map(str, unknown))}")
    net = CameraNet(seed=seed, **arch)
    if _num_classes(net) < len(CLASSES):
        raise ValueError(f"arch['num_classes'] must be >= {len(CLASSES)} (the data's classes), got {_num_classes(net)}")
    if net.size < 16:
        raise ValueError(f"arch['size'] must be >= 16 (the smallest images shapes_dataset draws), got {net.size}")
    return net


def _adamw_step(net: CameraNet, grads: dict[str, np.ndarray], moments: dict[str, tuple[np.ndarray, np.ndarray]],
                t: int, rate: float, weight_decay: float) -> None:
    """One AdamW update of every trainable parameter (β = 0.9, 0.999; decay on weights only), in place."""
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for k, (m1, m2) in moments.items():
        g = grads[k]
        m1 = beta1 * m1 + (1 - beta1) * g
        m2 = beta2 * m2 + (1 - beta2) * g * g
        moments[k] = (m1, m2)
        step = (m1 / (1 - beta1 ** (t + 1))) / (np.sqrt(m2 / (1 - beta2 ** (t + 1))) + eps)
        if k.endswith(".weight"):
            step = step + weight_decay * net.params[k]
        net.params[k] = (net.params[k] - rate * step).astype(np.float32)


def reproduce(log: Callable[[str], None] | None = None) -> CameraNet:
    """Re-run :data:`TRAIN_CALL`, the training that made the shipped weights.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    log : callable, optional
        Receives one progress line per epoch.

    Returns
    -------
    CameraNet
        The re-trained network (on the machine that made the shipped file,
        bit for bit the same weights).

    Raises
    ------
    TypeError
        If ``log`` is not callable.

    Examples
    --------
    >>> net = reproduce(log=print)  # doctest: +SKIP
    epoch 1/8: ...
    """
    _check_log(log)
    net, _ = train(**TRAIN_KWARGS, log=log)
    return net


def _scored(net: Any, images: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """The predicted and the true labels, after checking all three arguments (labels before the work)."""
    _check.instance(net, "net", CameraNet)
    images = _check_images(images, net.size)
    labels = _check.labels(labels, "labels", classes=_num_classes(net), n=len(images))
    return net(images).argmax(axis=1), labels


def accuracy(net: CameraNet, images: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of ``images`` whose predicted class (argmax of the logits) is ``labels``.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    net : CameraNet
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)``.
    labels : numpy.ndarray
        Integer class indices in ``[0, num_classes)``, shape ``(n,)``.

    Returns
    -------
    float
        In [0, 1]; NaN for no images (there is no accuracy to speak of).

    Raises
    ------
    TypeError, ValueError
        For a ``net`` that is not a CameraNet, bad ``images`` (as for calling
        the network) or ``labels`` that are not class indices of shape ``(n,)``.

    Examples
    --------
    >>> net = CameraNet.pretrained()
    >>> accuracy(net, *shapes_dataset(200, seed=HELDOUT_SEED)) > 0.9
    True
    >>> accuracy(net, *shapes_dataset(0))
    nan
    """
    predicted, labels = _scored(net, images, labels)
    return float((predicted == labels).mean()) if len(labels) else float("nan")


def confusion_matrix(net: CameraNet, images: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Counts of (true class, predicted class) pairs.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    net : CameraNet
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)``.
    labels : numpy.ndarray
        Integer class indices in ``[0, num_classes)``, shape ``(n,)``.

    Returns
    -------
    numpy.ndarray
        int64, shape ``(K, K)`` with ``K`` the network's number of classes
        (``len(CLASSES)`` for CameraNet): row = true class, column =
        predicted class; the diagonal holds the correct answers.

    Raises
    ------
    TypeError, ValueError
        As for :func:`accuracy`.

    Examples
    --------
    >>> m = confusion_matrix(CameraNet.pretrained(), *shapes_dataset(80, seed=HELDOUT_SEED))
    >>> m.shape, int(m.sum())
    ((8, 8), 80)
    """
    predicted, labels = _scored(net, images, labels)
    k = _num_classes(net)
    return np.bincount(labels * k + predicted, minlength=k * k).reshape(k, k).astype(np.int64)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m npukit.train [--out PATH]``: re-train with :data:`TRAIN_CALL` and write the weights.

    Prints one line per epoch, then the training time and the held-out
    accuracy. ``make weights`` runs it to rewrite the shipped file. See
    chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    TypeError
        If ``argv`` is not a list or tuple of strings.
    ValueError, FileNotFoundError
        If ``--out`` is a directory or in a folder that does not exist
        (checked before training, not after).

    Examples
    --------
    >>> main(["--out", "/tmp/cameranet.npz"])  # doctest: +SKIP
    npukit.train: train(epochs=8, ...)
    """
    import argparse
    import pathlib

    if argv is not None:
        for i, arg in enumerate(_check.sequence(argv, "argv")):
            _check.text(arg, f"argv[{i}]")
    parser = argparse.ArgumentParser(prog="python -m npukit.train",
                                     description="Re-train CameraNet with TRAIN_CALL and write its weights.")
    parser.add_argument("--out", default=str(WEIGHTS_PATH), help=f"where to write (default: {WEIGHTS_PATH})")
    out = pathlib.Path(parser.parse_args(argv).out)
    if out.is_dir():
        raise ValueError(f"--out must name a file, got the directory {str(out)!r}")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"--out {str(out)!r}: its folder does not exist")
    print(f"npukit.train: {TRAIN_CALL}", flush=True)
    start = time.perf_counter()
    net = reproduce(log=lambda line: print(line, flush=True))
    seconds = time.perf_counter() - start
    net.save(out, train_call=TRAIN_CALL)
    held_out = accuracy(net, *shapes_dataset(2000, seed=HELDOUT_SEED))
    print(f"trained in {seconds:.1f} s; held-out accuracy {held_out:.2%}; wrote {out}")
    return 0


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 0's rows of the "numbers so far" table: CameraNet's size, work and accuracy.

    Follows the contract of :mod:`npukit.tally`; reads ``ctx.net``, its
    weight bytes as deployed (``ctx.weight_bytes``: the BatchNorm-folded
    graph's initializers, one convention for the whole book) and its accuracy
    on the one held-out draw (``ctx.float_accuracy`` on ``ctx.heldout``,
    :func:`npukit.data.heldout`). For the shipped network both come from the
    build's store, so every page's table agrees with the prose. See chapter
    0, "Meet CameraNet" (chapters/00_cameranet.md).

    Raises
    ------
    TypeError
        If ``ctx`` is not a :class:`npukit.tally.Context`.

    Examples
    --------
    >>> from npukit import tally
    >>> [r.quantity for r in numbers(tally.Context())]
    ['parameters (trainable)', 'weight bytes, float32 (BatchNorm folded, as deployed)', 'MACs per image', 'held-out accuracy']
    """
    _tally.inputs(ctx)
    net, n = ctx.net, len(ctx.heldout[1])
    rows = summary(net)
    params = sum(r["params"] for r in rows)
    w32 = ctx.weight_bytes["FP32"]
    macs = sum(r["macs"] for r in rows)
    return [
        _tally.Row(0, "parameters (trainable)", f"{params:,}", "counted: conv and fc weights, fc bias, BN scale and bias"),
        _tally.Row(0, "weight bytes, float32 (BatchNorm folded, as deployed)", f"{w32:,} B ({w32 / 1024:.1f} KiB)",
                   "initializers of the ONNX graph with BatchNorm folded into the convolutions (npukit.shared.weight_bytes)"),
        _tally.Row(0, "MACs per image", f"{macs:,}", "summed over layers: output elements × inputs per output"),
        _tally.Row(0, "held-out accuracy", f"{ctx.float_accuracy:.1%}",
                   f"NumPy float32 on the {n:,} images of the held-out draw (npukit.data.heldout, seed {HELDOUT_SEED})"),
    ]

if __name__ == "__main__":
    raise SystemExit(main())
