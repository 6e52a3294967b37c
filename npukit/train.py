"""Training and scoring CameraNet, deterministically, in NumPy.

The invariant this module keeps: **the shipped weights are reproducible.**
:data:`TRAIN_CALL` is the exact call that produced ``npukit/data/cameranet.npz``;
``python -m npukit.train`` (``make weights``) runs it again and rewrites the file,
byte for byte the same when the weights come out the same.

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
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from . import _check
from .data import CLASSES, shapes_dataset
from .models import WEIGHTS_PATH, CameraNet, summary

if TYPE_CHECKING:
    from . import tally

__all__ = [
    "HELDOUT_SEED",
    "TRAIN_KWARGS",
    "TRAIN_CALL",
    "train",
    "reproduce",
    "accuracy",
    "confusion_matrix",
    "numbers",
    "main",
]


#: Seed of the held-out images used to state CameraNet's accuracy. Training
#: draws its images from ``data_seed`` (100 by default), never from this seed.
HELDOUT_SEED: int = 1


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


def train(
    *,
    epochs: int = 8,
    n_train: int = 6000,
    batch: int = 64,
    lr: float = 0.03,
    weight_decay: float = 0.0001,
    smoothing: float = 0.1,
    seed: int = 0,
    data_seed: int = 100,
    arch: dict[str, Any] | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[CameraNet, list[float]]:
    """Train a CameraNet from scratch, deterministically.

    Draws ``n_train`` images with ``shapes_dataset(n_train, seed=data_seed)``,
    then runs AdamW (β = 0.9, 0.999; decoupled weight decay on convolution and
    ``fc`` weights only) on shuffled mini-batches for ``epochs`` epochs, with
    the learning rate following a cosine from ``lr`` down to 0 and label
    smoothing ``smoothing`` in the loss. The same call gives the same weights
    (on the same machine and NumPy build; another BLAS may round differently).

    Parameters
    ----------
    epochs, n_train, batch : int
        Passes over the data, training images, images per step (a last
        incomplete batch of an epoch is skipped, so BN always sees ``batch``).
    lr, weight_decay, smoothing : float
        Peak learning rate, AdamW weight decay, label smoothing ε.
    seed : int
        Seed of the weight initialisation and of the shuffling.
    data_seed : int
        Seed of the training images (keep it away from :data:`HELDOUT_SEED`).
    arch : dict, optional
        Keyword arguments for :class:`CameraNet` (``stem``, ``blocks`` …).
    log : callable, optional
        Called with one progress line per epoch (e.g. ``print``).

    Returns
    -------
    net : CameraNet
        The trained network.
    losses : list of float
        The training loss of every step.

    Raises
    ------
    TypeError, ValueError
        If a count is not a positive integer, a rate is negative, or
        ``n_train < batch``.

    Examples
    --------
    >>> net, losses = train(epochs=1, n_train=64, batch=32, seed=0)
    >>> len(losses)
    2
    """
    epochs = _check.integer(epochs, "epochs", minimum=1)
    batch = _check.integer(batch, "batch", minimum=2)
    n_train = _check.integer(n_train, "n_train", minimum=batch)
    seed = _check.integer(seed, "seed", minimum=0)
    for name, value in (("lr", lr), ("weight_decay", weight_decay), ("smoothing", smoothing)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            raise ValueError(f"{name} must be a number in [0, 1), got {value!r}")

    images, labels = shapes_dataset(n_train, seed=data_seed)
    net = CameraNet(seed=seed, **(arch or {}))
    names = net.trainable()
    m1 = {k: np.zeros_like(net.params[k]) for k in names}
    m2 = {k: np.zeros_like(net.params[k]) for k in names}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
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
            loss, grads = net.loss_and_grads(images[idx], labels[idx], smoothing=smoothing)
            losses.append(loss)
            for k in names:
                g = grads[k]
                m1[k] = beta1 * m1[k] + (1 - beta1) * g
                m2[k] = beta2 * m2[k] + (1 - beta2) * g * g
                m_hat = m1[k] / (1 - beta1 ** (t + 1))
                v_hat = m2[k] / (1 - beta2 ** (t + 1))
                step = m_hat / (np.sqrt(v_hat) + eps)
                if k.endswith(".weight"):
                    step = step + weight_decay * net.params[k]
                net.params[k] = (net.params[k] - rate * step).astype(np.float32)
        if log is not None:
            recent = losses[-steps_per_epoch:]
            log(f"epoch {epoch + 1}/{epochs}: mean loss {sum(recent) / len(recent):.4f}, "
                f"{time.perf_counter() - start:.1f} s")
    return net, losses


def reproduce(log: Callable[[str], None] | None = None) -> CameraNet:
    """Re-run :data:`TRAIN_CALL`, the training that made the shipped weights.

    Parameters
    ----------
    log : callable, optional
        Receives one progress line per epoch.

    Returns
    -------
    CameraNet
        The re-trained network (on the machine that made the shipped file,
        bit for bit the same weights).

    Examples
    --------
    >>> net = reproduce(log=print)  # doctest: +SKIP
    epoch 1/8: ...
    """
    net, _ = train(**TRAIN_KWARGS, log=log)
    return net


def accuracy(net: CameraNet, images: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of ``images`` whose predicted class (argmax of the logits) is ``labels``.

    Parameters
    ----------
    net : CameraNet
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)``.
    labels : numpy.ndarray
        Integer labels, shape ``(n,)``.

    Returns
    -------
    float
        In [0, 1] (NaN for no images).

    Raises
    ------
    TypeError, ValueError
        For bad ``images`` (as for calling the network) or ``labels`` that are
        not integers of shape ``(n,)``.

    Examples
    --------
    >>> net = CameraNet.pretrained()
    >>> acc = accuracy(net, *shapes_dataset(200, seed=HELDOUT_SEED))
    >>> acc > 0.9
    True
    """
    logits = net(images)
    labels = _check.as_array(labels, "labels")
    if labels.shape != (len(logits),) or labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers of shape ({len(logits)},), got {labels.dtype} {labels.shape}")
    return float((logits.argmax(axis=1) == labels).mean()) if len(labels) else float("nan")


def confusion_matrix(net: CameraNet, images: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Counts of (true class, predicted class) pairs.

    Parameters
    ----------
    net : CameraNet
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)``.
    labels : numpy.ndarray
        Integer labels, shape ``(n,)``.

    Returns
    -------
    numpy.ndarray
        int64, shape ``(K, K)`` with ``K = len(CLASSES)``: row = true class,
        column = predicted class; the diagonal holds the correct answers.

    Raises
    ------
    TypeError, ValueError
        For bad ``images`` or ``labels``.

    Examples
    --------
    >>> m = confusion_matrix(CameraNet.pretrained(), *shapes_dataset(80, seed=HELDOUT_SEED))
    >>> m.shape, int(m.sum())
    ((8, 8), 80)
    """
    predicted = net(images).argmax(axis=1)
    labels = _check.as_array(labels, "labels")
    if labels.shape != predicted.shape or labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers of shape {predicted.shape}, got {labels.dtype} {labels.shape}")
    k = len(CLASSES)
    return np.bincount(labels * k + predicted, minlength=k * k).reshape(k, k)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m npukit.train [--out PATH]``: re-train with :data:`TRAIN_CALL` and write the weights.

    Prints one line per epoch, then the training time and the held-out
    accuracy. ``make weights`` runs it to rewrite the shipped file.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status, 0.

    Examples
    --------
    >>> main(["--out", "/tmp/cameranet.npz"])  # doctest: +SKIP
    npukit.train: train(epochs=8, ...)
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m npukit.train",
                                     description="Re-train CameraNet with TRAIN_CALL and write its weights.")
    parser.add_argument("--out", default=str(WEIGHTS_PATH), help=f"where to write (default: {WEIGHTS_PATH})")
    args = parser.parse_args(argv)
    print(f"npukit.train: {TRAIN_CALL}", flush=True)
    start = time.perf_counter()
    net = reproduce(log=lambda line: print(line, flush=True))
    seconds = time.perf_counter() - start
    net.save(args.out, train_call=TRAIN_CALL)
    held_out = accuracy(net, *shapes_dataset(2000, seed=HELDOUT_SEED))
    print(f"trained in {seconds:.1f} s; held-out accuracy {held_out:.2%}; wrote {args.out}")
    return 0


def numbers(ctx: tally.Context) -> list[tally.Row]:
    """Chapter 0's rows of the "numbers so far" table: CameraNet's size, work and accuracy.

    Follows the contract of :mod:`npukit.tally`; reads ``ctx.net`` and scores
    it on 2,000 held-out images (seed :data:`HELDOUT_SEED`).

    Examples
    --------
    >>> from npukit import tally
    >>> [r.quantity for r in numbers(tally.Context())]
    ['parameters (trainable)', 'weight bytes, float32', 'MACs per image', 'held-out accuracy']
    """
    from . import tally

    net, n = ctx.net, 2000
    rows = summary(net)
    params = sum(r["params"] for r in rows)
    stored = sum(a.size for a in net.params.values())
    macs = sum(r["macs"] for r in rows)
    acc = accuracy(net, *shapes_dataset(n, seed=HELDOUT_SEED))
    return [
        tally.Row(0, "parameters (trainable)", f"{params:,}", "counted: conv and fc weights, fc bias, BN scale and bias"),
        tally.Row(0, "weight bytes, float32", f"{4 * stored:,} B ({4 * stored / 1024:.1f} KiB)",
                  f"{stored:,} stored numbers (with BN running statistics) × 4 bytes"),
        tally.Row(0, "MACs per image", f"{macs:,}", "summed over layers: output elements × inputs per output"),
        tally.Row(0, "held-out accuracy", f"{acc:.1%}", f"NumPy float32 on {n:,} images of shapes_dataset(seed={HELDOUT_SEED})"),
    ]


if __name__ == "__main__":
    raise SystemExit(main())
