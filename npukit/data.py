"""CameraNet's data: labelled 32×32 RGB images of shapes and stripes, drawn procedurally.

The invariant this module keeps: **the same arguments give the same images, on
every machine.** Nothing is downloaded; a seed, a count and a few options
(background, lighting, noise) fully determine every pixel and label.

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from . import _check

__all__ = [
    "CLASSES",
    "BRIGHT_WHITE",
    "HELDOUT_SEED",
    "HELDOUT_N",
    "shapes_dataset",
    "heldout",
]


#: Class names, in label order (label ``k`` is ``CLASSES[k]``).
CLASSES: tuple[str, ...] = (
    "circle",
    "square",
    "triangle",
    "cross",
    "ring",
    "horizontal stripes",
    "vertical stripes",
    "diagonal stripes",
)


#: Keyword arguments of :func:`shapes_dataset` that draw a *biased* subset:
#: only bright images on a white background (chapter 6 calibrates on it).
BRIGHT_WHITE: dict[str, Any] = {"background": "light", "brightness": (1.15, 1.4)}


#: Seed of the held-out images every page scores CameraNet on. Training draws its images from
#: ``data_seed`` (100 by default, :data:`npukit.train.TRAIN_KWARGS`), never from this seed.
HELDOUT_SEED: int = 1

#: Size of the one held-out draw (:func:`heldout`). A page that needs fewer images takes a stated
#: prefix of it, never a smaller draw: ``shapes_dataset(m, seed)`` is not a prefix of
#: ``shapes_dataset(n, seed)``, because each attribute is drawn for all ``n`` images at once.
HELDOUT_N: int = 2000

_BACKGROUNDS = ("random", "light", "dark")
_HELD: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _signed_distance(kind: str, u: np.ndarray, v: np.ndarray, r: np.ndarray, period: np.ndarray,
                     phase: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Signed distance (pixels, positive inside) to a shape of class ``kind``.

    ``u, v`` are pixel coordinates relative to the shape's centre, rotated by
    the shape's angle; ``dx, dy`` are the same coordinates unrotated.
    """
    if kind == "circle":
        return r - np.hypot(u, v)
    if kind == "square":
        return 0.85 * r - np.maximum(np.abs(u), np.abs(v))
    if kind == "triangle":
        # Equilateral triangle of circumradius 1.2 r: inside all three edges,
        # whose outward normals point at 90°, 210° and 330°.
        edges = [u * math.cos(a) + v * math.sin(a) for a in np.deg2rad([90.0, 210.0, 330.0])]
        return 0.6 * r - np.maximum(np.maximum(edges[0], edges[1]), edges[2])
    if kind == "cross":
        half_width = np.maximum(1.5, 0.3 * r)
        bar_1 = np.minimum(r - np.abs(u), half_width - np.abs(v))
        bar_2 = np.minimum(half_width - np.abs(u), r - np.abs(v))
        return np.maximum(bar_1, bar_2)
    if kind == "ring":
        thickness = np.maximum(2.0, 0.35 * r)
        return thickness / 2 - np.abs(np.hypot(u, v) - (r - thickness / 2))
    # Stripes: bands of width period/2 across v, inside an upright square patch.
    band = period / 4 - np.abs(np.mod(v + phase, period) - period / 2)
    patch = (r + 3) - np.maximum(np.abs(dx), np.abs(dy))
    return np.minimum(band, patch)


def _rotation(kind: str, jitter: np.ndarray, turn: np.ndarray, side: np.ndarray) -> np.ndarray:
    """The rotation angle (radians) of each shape of class ``kind``."""
    if kind == "triangle":
        return turn  # any orientation is still a triangle
    if kind == "vertical stripes":
        return np.pi / 2 + jitter / 2
    if kind == "diagonal stripes":
        return np.where(side, np.pi / 4, -np.pi / 4) + jitter / 2
    if kind == "horizontal stripes":
        return jitter / 2
    return jitter


def shapes_dataset(n: int, seed: int = 0, *, size: int = 32, background: str = "random",
                   brightness: tuple[float, float] = (0.6, 1.3), noise: float = 0.06,
                   classes: Sequence[int | str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` labelled RGB images of shapes and stripes, deterministically.

    Each image shows one object of a class in :data:`CLASSES` with a random
    colour on a random background, at a random position, size and angle, lit by
    a random gradient, scaled by a random brightness and covered in Gaussian
    noise. Labels are balanced (every class appears ``n // len(classes)`` or one
    more times) and shuffled. The same arguments always give the same images.
    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    n : int
        Number of images (>= 0).
    seed : int
        Seed of the ``np.random.default_rng`` that draws everything.
    size : int
        Image height and width in pixels (>= 16).
    background : {"random", "light", "dark"}
        Background colours: any colour, near-white, or near-black.
    brightness : (float, float)
        Finite range ``0 < low <= high`` of the overall gain applied to each
        image (values are clipped to [0, 1] afterwards, so a gain above 1
        saturates light areas).
    noise : float
        Largest standard deviation of the additive Gaussian noise (>= 0); each
        image draws its own between 0 and this.
    classes : list, tuple or 1-D array of int or str, optional
        Draw only these classes (labels keep their meaning in :data:`CLASSES`).

    Returns
    -------
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)`` (NCHW), values in [0, 1].
    labels : numpy.ndarray
        int64, shape ``(n,)``, indices into :data:`CLASSES`.

    Raises
    ------
    TypeError
        If ``n``, ``seed`` or ``size`` is not an integer, ``brightness`` is
        not a pair of numbers or ``classes`` not a sequence.
    ValueError
        If a value is out of range, ``background`` is unknown or ``classes``
        is empty or names an unknown class.

    Examples
    --------
    >>> images, labels = shapes_dataset(16, seed=0)
    >>> images.shape, images.dtype, labels.dtype
    ((16, 3, 32, 32), dtype('float32'), dtype('int64'))
    >>> [CLASSES[k] for k in labels[:3]]
    ['triangle', 'cross', 'cross']
    >>> bool(np.array_equal(shapes_dataset(16, seed=0)[0], images))
    True

    A biased subset, only bright images on a white background:

    >>> bright, _ = shapes_dataset(64, seed=0, **BRIGHT_WHITE)
    >>> float(bright.mean()) > float(images.mean())
    True
    """
    n = _check.integer(n, "n", minimum=0)
    seed = _check.integer(seed, "seed", minimum=0)
    size = _check.integer(size, "size", minimum=16, maximum=1024)
    _check.allocation(4 * 4 * n * 3 * size * size, "n and size")  # the float32 images and the drawing's temporaries
    _check.one_of(background, "background", _BACKGROUNDS)
    gains = _check_brightness(brightness)
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not 0 <= noise < 1:
        raise ValueError(f"noise must be a number in [0, 1), got {noise!r}")
    class_ids = _class_ids(classes)

    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.resize(class_ids, n)).astype(np.int64)
    scene = _draw_scenes(rng, n, size, background, gains, float(noise))
    coverage = _coverage(labels, scene, size)
    return _render(rng, coverage, scene, size), labels


def _check_brightness(brightness: Any) -> tuple[float, float]:
    if (isinstance(brightness, (str, bytes)) or not isinstance(brightness, (tuple, list)) or len(brightness) != 2
            or not all(isinstance(b, numbers.Real) and not isinstance(b, bool) for b in brightness)):
        raise TypeError(f"brightness must be a pair of numbers (low, high), got {brightness!r}")
    low, high = float(brightness[0]), float(brightness[1])
    if not 0 < low <= high < math.inf:
        raise ValueError(f"brightness must satisfy 0 < low <= high < inf, got {brightness!r}")
    return low, high


def _class_ids(classes: Any) -> np.ndarray:
    """The labels to draw: every class, or those ``classes`` names (by index or name)."""
    if classes is None:
        return np.arange(len(CLASSES))
    if isinstance(classes, np.ndarray) and classes.ndim == 1:
        classes = classes.tolist()
    classes = _check.sequence(classes, "classes", min_length=1)
    return np.array([_class_index(c, i) for i, c in enumerate(classes)], dtype=np.int64)


def _draw_scenes(rng: np.random.Generator, n: int, size: int, background: str,
                 gains: tuple[float, float], noise: float) -> dict[str, np.ndarray]:
    """Every per-image random number, for all ``n`` images, drawn in a fixed order.

    So the images depend only on n, the seed and the options. Keys: the
    object's radius ``r``, centre ``cx, cy``, rotation draws ``jitter, turn,
    side``, stripe ``period, phase``, colours ``bg, fg``, lighting
    ``light_angle, light_slope``, ``gain`` and noise ``sigma``.
    """
    scale = size / 32.0
    d: dict[str, np.ndarray] = {}
    d["r"] = rng.uniform(5.0, 11.0, n) * scale  # object radius in pixels
    d["cx"] = rng.uniform(d["r"] + 1, size - d["r"] - 1)
    d["cy"] = rng.uniform(d["r"] + 1, size - d["r"] - 1)
    d["jitter"] = rng.uniform(-0.35, 0.35, n)  # about ±20°
    d["turn"] = rng.uniform(0.0, 2 * np.pi, n)
    d["side"] = rng.random(n) < 0.5
    d["period"] = rng.uniform(5.0, 8.0, n) * scale
    d["phase"] = rng.uniform(0.0, 1.0, n) * d["period"]
    low, high = {"light": (0.85, 1.0), "dark": (0.0, 0.15), "random": (0.0, 1.0)}[background]
    d["bg"] = rng.uniform(low, high, (n, 3))
    d["fg"] = rng.uniform(0.0, 1.0, (n, 3))
    d["light_angle"] = rng.uniform(0.0, 2 * np.pi, n)
    d["light_slope"] = rng.uniform(0.0, 0.3, n)
    d["gain"] = rng.uniform(gains[0], gains[1], n)
    d["sigma"] = rng.uniform(0.0, noise, n)
    # Keep the object visible: where it is too close in colour to the
    # background, move each channel half the range away from the background.
    bg, fg = d["bg"], d["fg"]
    faint = np.abs(fg - bg).max(axis=1) < 0.4
    fg[faint] = np.where(bg[faint] > 0.5, bg[faint] - 0.5, bg[faint] + 0.5)
    return d


def _coverage(labels: np.ndarray, d: dict[str, np.ndarray], size: int) -> np.ndarray:
    """How much of each pixel the object covers, in [0, 1], shape ``(n, size, size)``."""
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64) + 0.5  # pixel centres
    coverage = np.zeros((len(labels), size, size))
    for k in np.unique(labels):
        i = np.flatnonzero(labels == k)
        kind = CLASSES[k]
        dx, dy = xs - d["cx"][i, None, None], ys - d["cy"][i, None, None]
        angle = _rotation(kind, d["jitter"][i], d["turn"][i], d["side"][i])[:, None, None]
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        sd = _signed_distance(kind, u, v, d["r"][i, None, None], d["period"][i, None, None],
                              d["phase"][i, None, None], dx, dy)
        coverage[i] = np.clip(sd + 0.5, 0.0, 1.0)  # anti-aliased edge, one pixel wide
    return coverage


def _render(rng: np.random.Generator, coverage: np.ndarray, d: dict[str, np.ndarray], size: int) -> np.ndarray:
    """Colour, light, gain and noise on top of the coverage: the float32 NCHW images in [0, 1]."""
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64) + 0.5
    cov = coverage[:, None]  # (n, 1, size, size)
    images = d["bg"][:, :, None, None] * (1 - cov) + d["fg"][:, :, None, None] * cov
    ramp = ((xs - size / 2) * np.cos(d["light_angle"])[:, None, None]
            + (ys - size / 2) * np.sin(d["light_angle"])[:, None, None]) / (size / 2)
    images *= (1 + d["light_slope"][:, None, None] * ramp)[:, None] * d["gain"][:, None, None, None]
    images += d["sigma"][:, None, None, None] * rng.standard_normal(images.shape)
    return np.clip(images, 0.0, 1.0).astype(np.float32)


def _class_index(c: int | str, i: int) -> int:
    if isinstance(c, str):
        if c not in CLASSES:
            raise ValueError(f"classes must name classes in CLASSES, got {c!r}")
        return CLASSES.index(c)
    k = _check.integer(c, f"classes[{i}]", minimum=0)
    if k >= len(CLASSES):
        raise ValueError(f"classes must hold labels in 0..{len(CLASSES) - 1}, got {k}")
    return k


def heldout(n: int | None = None, *, size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` images and labels of the one held-out draw: ``shapes_dataset(HELDOUT_N, HELDOUT_SEED)``.

    Every page and lab that scores CameraNet on held-out images takes them
    from here, so that "held-out accuracy" means one set of images in the
    whole book: the full draw (:data:`HELDOUT_N` images) or a stated prefix.
    The draw is made once per process and returned read-only (a view, not a
    copy). See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    n : int, optional
        How many of the draw's images, from the first (1 … :data:`HELDOUT_N`;
        default all).
    size : int
        Image side in pixels (>= 16), as for :func:`shapes_dataset`; a size
        other than CameraNet's 32 is a draw of its own.

    Returns
    -------
    images, labels : numpy.ndarray
        Read-only ``(n, 3, size, size)`` float32 and ``(n,)`` int64.

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not an integer in 1 … :data:`HELDOUT_N` or ``size`` not an integer >= 16.

    Examples
    --------
    >>> x, y = heldout(100)
    >>> x.shape, bool(np.array_equal(x, heldout()[0][:100])), x.flags.writeable
    ((100, 3, 32, 32), True, False)
    """
    n = HELDOUT_N if n is None else _check.integer(n, "n", minimum=1)
    if n > HELDOUT_N:
        raise ValueError(f"n must be at most HELDOUT_N = {HELDOUT_N} (the draw's size), got {n}")
    size = _check.integer(size, "size", minimum=16)
    if size not in _HELD:
        images, labels = shapes_dataset(HELDOUT_N, seed=HELDOUT_SEED, size=size)
        images.flags.writeable = labels.flags.writeable = False
        _HELD[size] = (images, labels)
    images, labels = _HELD[size]
    return images[:n], labels[:n]
