"""Integer arithmetic shared by several chapters: one formula, one place."""

from __future__ import annotations


def ceil_div(n: int, d: int) -> int:
    """⌈n / d⌉ for integers, without floating point."""
    return -(-n // d)


def round_up(n: int, multiple: int) -> int:
    """The smallest multiple of ``multiple`` that is ≥ ``n``."""
    return ceil_div(n, multiple) * multiple


def conv_out_size(size: int, kernel: int, stride: int = 1, pad_before: int = 0, pad_after: int = 0,
                  dilation: int = 1) -> int:
    """Output length of a convolution along one axis (ONNX Conv, floor rounding).

    ``⌊(size + pads − dilation·(kernel − 1) − 1) / stride⌋ + 1``; zero or
    negative means the window does not fit even once.
    """
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1
