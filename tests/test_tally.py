"""Tests of npukit.tally: the one contract for the "numbers so far" rows.

The contract: each registered chapter module's ``numbers(ctx)`` returns a
list of :class:`tally.Row` of its own chapter; :func:`tally.rows` returns them
in chapter order and refuses anything else with a clear error; a
:class:`tally.Context` validates its arguments and computes each lazy field
once. Stand-in chapter modules (registered with monkeypatch) make the rows
here, so the tests do not depend on what the real chapters measure.
"""

from __future__ import annotations

import sys
import types

import pytest

import npukit
from npukit import tally
from npukit.data import shapes_dataset
from npukit.models import CameraNet


def _register(monkeypatch, chapters: dict[int, object]) -> None:
    """Replace npukit.CHAPTERS by stand-in modules: chapter -> numbers function."""
    registry = {}
    for chapter, numbers in chapters.items():
        name = f"_tally_test_ch{chapter}"
        module = types.ModuleType(f"npukit.{name}")
        if numbers is not None:
            module.numbers = numbers
        monkeypatch.setitem(sys.modules, f"npukit.{name}", module)
        registry[chapter] = name
    monkeypatch.setattr(npukit, "CHAPTERS", registry)


def _rows_of(chapter: int, *quantities: str):
    return lambda ctx: [tally.Row(chapter, q, "1", "test") for q in quantities]


# ---- Row --------------------------------------------------------------------------------


def test_row_holds_its_fields():
    row = tally.Row(3, "MACs", "569,344", "graphs.op_counts")
    assert (row.chapter, row.quantity, row.value, row.how) == (3, "MACs", "569,344", "graphs.op_counts")


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((-1, "q", "v", "h"), ValueError, "chapter must be >= 0"),
        ((1.0, "q", "v", "h"), TypeError, "chapter must be an integer"),
        ((True, "q", "v", "h"), TypeError, "chapter must be an integer"),
        ((1, 3, "v", "h"), TypeError, "quantity must be a string"),
        ((1, "q", 2.5, "h"), TypeError, "value must be a string"),
        ((1, "q", "v", " "), ValueError, "how must not be empty"),
    ],
)
def test_row_refuses_bad_fields(args, error, match):
    with pytest.raises(error, match=match):
        tally.Row(*args)


# ---- rows(): the contract -------------------------------------------------------------------


def test_rows_come_back_in_chapter_order(monkeypatch):
    _register(monkeypatch, {2: _rows_of(2, "c"), 0: _rows_of(0, "a1", "a2"), 1: _rows_of(1, "b")})
    ctx = tally.Context()
    assert [(r.chapter, r.quantity) for r in tally.rows(2, ctx)] == [(0, "a1"), (0, "a2"), (1, "b"), (2, "c")]
    assert [r.quantity for r in tally.rows(1, ctx)] == ["a1", "a2", "b"]
    assert [r.quantity for r in tally.rows(0, ctx)] == ["a1", "a2"]
    html = tally.table(2, ctx).data
    assert html.index("<td>a1</td>") < html.index("<td>b</td>") < html.index("<td>c</td>")


def test_rows_pass_the_same_context_to_every_chapter(monkeypatch):
    seen = []

    def record(chapter):
        def numbers(ctx):
            seen.append(ctx)
            return [tally.Row(chapter, "q", "v", "h")]
        return numbers

    _register(monkeypatch, {0: record(0), 1: record(1)})
    ctx = tally.Context()
    tally.rows(1, ctx)
    assert seen == [ctx, ctx]


@pytest.mark.parametrize(
    "numbers, error, match",
    [
        (lambda ctx: [tally.Row(0, "q", "v", "h"), ("q", "v")], TypeError,
         r"npukit\._tally_test_ch0\.numbers must return tally\.Row items, got tuple"),
        (lambda ctx: [tally.Row(5, "q", "v", "h")], ValueError,
         r"must return rows of chapter 0, got a row of chapter 5"),
        (lambda ctx: (tally.Row(0, "q", "v", "h"),), TypeError, "must return a list of tally.Row, got tuple"),
        (lambda ctx: None, TypeError, "must return a list of tally.Row, got NoneType"),
        (None, TypeError, r"npukit\._tally_test_ch0 is registered for chapter 0 but defines no numbers"),
    ],
)
def test_a_module_that_breaks_the_contract_is_refused(monkeypatch, numbers, error, match):
    _register(monkeypatch, {0: numbers})
    with pytest.raises(error, match=match):
        tally.rows(0, tally.Context())


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((-1,), ValueError, "upto must be >= 0"),
        ((1.5,), TypeError, "upto must be an integer"),
        ((0, "ctx"), TypeError, "ctx must be a tally.Context"),
    ],
)
def test_rows_and_table_refuse_bad_arguments(args, error, match):
    for func in (tally.rows, tally.table):
        with pytest.raises(error, match=match):
            func(*args)


def test_every_registered_chapter_keeps_the_contract():
    """The real chapters, up to chapter 0 (fast): rows of chapter 0, a table with its accuracy."""
    ctx = tally.Context()
    got = tally.rows(0, ctx)
    assert got and all(isinstance(r, tally.Row) and r.chapter == 0 for r in got)
    assert "held-out accuracy" in tally.table(0, ctx).data
    for chapter, name in npukit.CHAPTERS.items():
        assert callable(getattr(getattr(npukit, name), "numbers", None)), (chapter, name)


# ---- Context -----------------------------------------------------------------------------


def test_context_lazy_fields_are_computed_once(monkeypatch):
    calls = []
    real = CameraNet.pretrained.__func__

    def counting(cls):
        calls.append(1)
        return real(cls)

    monkeypatch.setattr(CameraNet, "pretrained", classmethod(counting))
    ctx = tally.Context()
    assert calls == []  # nothing is computed until asked for
    net = ctx.net
    assert ctx.net is net and calls == [1]
    assert ctx.images is ctx.images
    model = ctx.model
    assert ctx.model is model and calls == [1]
    assert [n.name for n in model.graph.node] == [layer.name for layer in net.layers]


def test_context_uses_what_it_is_given():
    net = CameraNet(stem=4, blocks=[(8, 2)], size=16)
    images = shapes_dataset(3, seed=1, size=16)[0]
    ctx = tally.Context(net=net, images=images, npu_buffer=1024)
    assert ctx.net is net and ctx.images is images and ctx.npu_buffer == 1024
    assert [d.dim_value for d in ctx.model.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 16, 16]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"net": "CameraNet"}, TypeError, "net must be a CameraNet"),
        ({"images": [[0.0]]}, TypeError, "images must be a numpy.ndarray"),
        ({"machine": 1e9}, TypeError, "machine must be a MachineSpec"),
        ({"conversions": "NCHW"}, TypeError, "conversions must be a list or tuple"),
        ({"npu_buffer": 0}, ValueError, "npu_buffer must be >= 1"),
        ({"npu_buffer": 1024.0}, TypeError, "npu_buffer must be an integer"),
    ],
)
def test_context_validates_its_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        tally.Context(**kwargs)
