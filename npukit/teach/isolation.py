"""What crosses between the checking process and the learner's process when grading, and how.

The grader (:mod:`npukit.teach.grade`) runs each submission in two processes:

* the **checking process** (:mod:`npukit.teach.checking`) runs the instructor's cells and check cells;
  every check, every reference, every clock and the ledger that decides the grade live there;
* the **learner's process** (:mod:`npukit.teach.learner`) runs the lab's cells with the learner's
  solution cells, in a directory of its own.

The invariant: **only data crosses**. A learner's function is called from the checking process through a
:class:`Remote`; its arguments are encoded there and rebuilt in the learner's process, and its result is
converted there into plain values — ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``,
``bytes``, tuples, lists, dicts and sets of them, base ``ndarray`` of numbers, an ONNX model as its bytes —
which the checking process rebuilds with its own code. No object of the learner's (a frame, a closure, a
subclass, a clock, a thread, a hook, its copy of the ledger) exists in the checking process, so none can
reach what decides the grade. Three rules keep the checkers unchanged:

* an array crosses as a **replica**: the same dtype, shape, strides, values and write flag, at an address
  with the same remainder modulo 4096; when it lies inside an array that crossed before while the same
  cell ran (an argument, an earlier result), it is rebuilt as a view of that array, so
  ``np.shares_memory`` and alignment checks read in one process what they would read in the other;
* an object the checker hands over that cannot cross as data (a checker's stand-in such as a recorded
  OpenVINO model, a function to call back, an OpenVINO object it returns) is **lent**: the learner's code
  gets a stand-in whose calls, public attributes and items are served by the checking process, so what
  the stand-in records (the calls, their times) stays there;
* an npukit record (``graphs.OpCount``, ``graphs.MachineSpec``, ``models.CameraNet`` …) crosses to the
  learner's process **by value**.

A message is one JSON header and a list of binary blobs (array bytes, model bytes) on a pipe. The learner's
process can send anything at all; the checking process decodes only the tags below into fresh objects of
its own, and never unpickles or unmarshals what it receives.

See the instructor guide, "Grading" (chapters/instructor.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import select
import struct
import time
import types
from typing import Any, Callable

import numpy as np

from . import core

__all__ = ["Pipe", "Codec", "Remote", "Lent", "CannotCross", "Stopped", "PAGE"]

#: Array replicas keep their address modulo this many bytes (the largest alignment a check asks for).
PAGE = 4096
_MAGIC = b"NPK1"
_LIMIT = 1 << 31                     # bytes in one blob, at most
_KINDS = "biufc"                     # bool, signed, unsigned, float, complex arrays cross
_PUBLIC = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_NDARRAY = np.ndarray     # as imported: a check may stand in for numpy.ndarray while the learner's code runs


class CannotCross(TypeError):
    """A value that cannot cross the process boundary (it is named in the message)."""


class Stopped(core.CheckFailed):
    """The learner's process ended or was stopped: it did not answer within the time allowed, or died."""


# ---- framing ---------------------------------------------------------------------------------------------


class Pipe:
    """A pair of pipe ends carrying messages: ``send(header, blobs)`` / ``receive(deadline)``."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd

    def send(self, header: dict, blobs: list[bytes] = ()) -> None:
        head = json.dumps(header, separators=(",", ":")).encode()
        parts = [_MAGIC, struct.pack("<II", len(head), len(blobs)), head]
        for blob in blobs:
            parts += [struct.pack("<Q", len(blob)), bytes(blob)]
        data = memoryview(b"".join(parts))
        while data:
            data = data[os.write(self.write_fd, data):]

    def receive(self, deadline: float | None = None) -> tuple[dict, list[bytes]]:
        magic, (n_head, n_blobs) = self._read(4, deadline), struct.unpack("<II", self._read(8, deadline))
        if magic != _MAGIC or n_head > _LIMIT or n_blobs > 1 << 20:
            raise Stopped("the learner's process sent something that is not a message")
        header = json.loads(self._read(n_head, deadline))
        blobs = []
        for _ in range(n_blobs):
            (size,) = struct.unpack("<Q", self._read(8, deadline))
            if size > _LIMIT:
                raise Stopped("the learner's process sent a message larger than the grader takes")
            blobs.append(self._read(size, deadline))
        if not isinstance(header, dict):
            raise Stopped("the learner's process sent something that is not a message")
        return header, blobs

    def _read(self, n: int, deadline: float | None) -> bytes:
        out = bytearray()
        while len(out) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.read_fd], [], [], left)[0]:
                    raise TimeoutError("no answer in time")
            chunk = os.read(self.read_fd, min(n - len(out), 1 << 20))
            if not chunk:
                raise EOFError("the other process closed the pipe")
            out += chunk
        return bytes(out)


# ---- arrays ------------------------------------------------------------------------------------------------


class _Memory:
    """Exposes raw memory to NumPy (``__array_interface__``) and keeps its owner alive."""

    def __init__(self, address: int, shape: tuple, strides: tuple | None, typestr: str, writeable: bool,
                 owner: Any) -> None:
        self.__array_interface__ = {"data": (address, not writeable), "shape": tuple(shape), "typestr": typestr,
                                    "strides": None if strides is None else tuple(strides), "version": 3}
        self.owner = owner


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _extent(a: np.ndarray) -> tuple[int, int]:
    """The bytes ``[lo, hi)`` an array's elements occupy."""
    lo = hi = _address(a)
    if a.size == 0:
        return lo, lo
    for n, s in zip(a.shape, a.strides):
        (lo, hi) = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
    return lo, hi + a.itemsize


def _bytes_at(lo: int, hi: int, owner: Any) -> np.ndarray:
    """A uint8 view of the bytes ``[lo, hi)`` of ``owner``'s memory."""
    return np.asarray(_Memory(lo, (hi - lo,), None, "|u1", False, owner))


def _view(lo: int, offset: int, dtype: np.dtype, shape: tuple, strides: tuple, writeable: bool,
          owner: Any) -> np.ndarray:
    """The array at ``lo + offset`` with this layout, over memory that ``owner`` keeps alive."""
    return np.asarray(_Memory(lo + offset, shape, strides, dtype.str, writeable, owner))


def _aligned(nbytes: int, remainder: int) -> np.ndarray:
    """A fresh uint8 buffer of ``nbytes`` whose address is ``remainder`` modulo :data:`PAGE`."""
    raw = np.empty(nbytes + PAGE, np.uint8)
    start = (remainder - _address(raw)) % PAGE
    return raw[start:start + nbytes]


def _digest(lo: int, hi: int, owner: Any) -> str:
    return hashlib.blake2b(_bytes_at(lo, hi, owner).tobytes(), digest_size=16).hexdigest()


def _layout(a: np.ndarray) -> dict:
    lo, _ = _extent(a)
    return {"dtype": a.dtype.str, "shape": list(a.shape), "strides": list(a.strides), "offset": _address(a) - lo,
            "write": bool(a.flags.writeable)}


def _checked_layout(data: dict) -> tuple[np.dtype, tuple, tuple, int, bool]:
    dtype = np.dtype(str(data["dtype"]))
    if dtype.kind not in _KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise Stopped(f"the learner's process sent an array of dtype {dtype}")
    shape, strides = tuple(int(n) for n in data["shape"]), tuple(int(s) for s in data["strides"])
    if len(shape) != len(strides) or len(shape) > 32 or any(n < 0 for n in shape):
        raise Stopped("the learner's process sent a malformed array")
    return dtype, shape, strides, int(data["offset"]), bool(data["write"])


def _fits(data: dict, size: int) -> None:
    """Refuse an array description whose elements would lie outside the ``size`` bytes it claims."""
    dtype, shape, strides, offset, _ = _checked_layout(data)
    if 0 in shape:
        return
    lo = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + dtype.itemsize
    if lo < 0 or hi > size:
        raise Stopped("the learner's process sent an array reaching outside its own bytes")


# ---- the codec ---------------------------------------------------------------------------------------------


def _import(path: str) -> Any:
    """The object at ``"module:qual.name"``."""
    import importlib

    module, _, qualname = path.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split(".") if qualname else ():
        obj = getattr(obj, part)
    return obj


def _path(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


def _is_record_type(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module.startswith("npukit.") and not module.startswith("npukit.teach") and "<locals>" not in cls.__qualname__


class Codec:
    """Encodes values for the other process and rebuilds what it sent, for one side of the channel.

    ``side`` is ``"checking"`` or ``"learner"``. A codec remembers, until :meth:`release` (the end of a
    cell), the arrays that crossed (to rebuild views of them) and the objects lent (to serve calls on them).
    """

    def __init__(self, side: str, *, lendable: Callable[[Any], bool] | None = None,
                 stand_in: Callable[[int, str], Any] | None = None) -> None:
        self.side = side
        self.lendable = lendable or (lambda obj: False)     # checking side: may this object be lent?
        self.stand_in = stand_in                            # learner side: the stand-in for a lent object
        self.regions: dict[int, tuple[Any, int, int]] = {}  # id -> (owner of the memory, lo, hi)
        self.digests: dict[int, str] = {}                   # learner side: the arguments' bytes when they came
        self.lent: dict[int, Any] = {}                      # checking side: ref -> the object lent
        self.kept: list[Any] = []                           # learner side: results kept alive until release
        self._count = 0

    def release(self) -> None:
        self.regions.clear(), self.digests.clear(), self.lent.clear(), self.kept.clear()

    def _next(self) -> int:
        self._count += 1
        return self._count if self.side == "checking" else -self._count

    # -- encoding ------------------------------------------------------------------------------------------

    def encode(self, value: Any, blobs: list[bytes], *, records: bool = True, lend: bool = True) -> Any:
        """``value`` as JSON-able data, with its bulk bytes appended to ``blobs``.

        Raises :class:`CannotCross` for a value this side may not send.
        """
        enc = lambda v: self.encode(v, blobs, records=records, lend=lend)  # noqa: E731
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float:
            return value if np.isfinite(value) else {"$": "float", "v": repr(value)}
        if type(value) is list:
            return [enc(v) for v in value]
        if type(value) is tuple:
            return {"$": "tuple", "v": [enc(v) for v in value]}
        if type(value) is dict:
            return {"$": "dict", "v": [[enc(k), enc(v)] for k, v in value.items()]}
        if type(value) in (set, frozenset):
            return {"$": type(value).__name__, "v": [enc(v) for v in value]}
        if type(value) is complex:
            return {"$": "complex", "v": [repr(value.real), repr(value.imag)]}
        if type(value) in (bytes, bytearray):
            blobs.append(bytes(value))
            return {"$": "bytes", "b": len(blobs) - 1}
        if value is Ellipsis:
            return {"$": "..."}
        if type(value) is slice:
            return {"$": "slice", "v": [enc(value.start), enc(value.stop), enc(value.step)]}
        if isinstance(value, _NDARRAY):
            return self._encode_array(value, blobs)
        if isinstance(value, np.generic):
            return enc(np.asarray(value)[()].item()) if value.dtype.kind in _KINDS else self._refuse(value)
        if isinstance(value, np.dtype):
            return {"$": "dtype", "v": value.str} if value.kind in _KINDS else self._refuse(value)
        if isinstance(value, type) and issubclass(value, np.generic) and value.__module__ == "numpy":
            return {"$": "scalartype", "v": np.dtype(value).str}
        if _is_onnx_model(value):
            blobs.append(value.SerializeToString())
            return {"$": "onnx", "b": len(blobs) - 1}
        return self._encode_other(value, blobs, records, lend)

    def _encode_other(self, value: Any, blobs: list[bytes], records: bool, lend: bool) -> Any:
        if self.side == "learner":
            if type(value) is Lent:
                return {"$": "ref", "ref": value._ref}
            return self._plain_of_subclass(value, blobs)
        if any(isinstance(value, kind) for kind in (int, float, str, tuple, list, dict)):
            return self._plain_of_subclass(value, blobs)
        if records and _is_record_type(type(value)) and hasattr(value, "__dict__"):
            try:
                state = self.encode(dict(vars(value)), blobs, records=True, lend=False)
                return {"$": "record", "type": _path(type(value)), "v": state}
            except CannotCross:
                pass
        if lend and self.lendable(value):
            ref = self._next()
            self.lent[ref] = value
            return {"$": "lent", "ref": ref, "type": type(value).__name__}
        return self._refuse(value)

    def _plain_of_subclass(self, value: Any, blobs: list[bytes]) -> Any:
        """A subclass of a built-in type, as the built-in value it holds (its own methods are not asked)."""
        for kind, plain in ((bool, None), (int, int.__index__), (float, float.__float__), (str, str.__str__),
                            (complex, complex.__complex__), (bytes, bytes.__bytes__)):
            if isinstance(value, kind) and plain is not None:
                return self.encode(plain(value), blobs)
        if isinstance(value, tuple):
            return self.encode(tuple(tuple.__iter__(value)), blobs)
        if isinstance(value, list):
            return self.encode(list(list.__iter__(value)), blobs)
        if isinstance(value, dict):
            return self.encode(dict(dict.items(value)), blobs)
        if isinstance(value, (set, frozenset)):
            return self.encode(set(set.__iter__(value)) if isinstance(value, set)
                               else frozenset(frozenset.__iter__(value)), blobs)
        return self._refuse(value)

    def _refuse(self, value: Any) -> Any:
        what = type(value).__name__
        if self.side == "learner":
            raise CannotCross(f"a {what} (the grader takes numbers, strings, tuples, lists, dicts, sets, NumPy "
                              "arrays of numbers and ONNX models)")
        raise CannotCross(f"the checker tried to hand the learner's process a {what}, which can neither be "
                          "copied nor lent")

    def _encode_array(self, a: np.ndarray, blobs: list[bytes]) -> Any:
        if self.side == "checking" and type(a) is not _NDARRAY:
            raise CannotCross(f"an ndarray subclass ({type(a).__name__}) would lose its methods on the way; "
                              "run the instrumentation next to the learner's function with core.around")
        a = _NDARRAY.view(a, _NDARRAY)
        if a.dtype.kind not in _KINDS or a.dtype.fields is not None:
            return self._refuse(a)
        lo, hi = _extent(a)
        for rid, (owner, r_lo, r_hi) in self.regions.items():
            if r_lo <= lo and hi <= r_hi and hi > lo:
                return {"$": "array", "within": rid, "at": lo - r_lo, **_layout(a)}
            if lo < r_hi and r_lo < hi:
                raise CannotCross("an array that overlaps part of an array it was given or returned before, "
                                  "without lying inside it")
        rid = self._next()
        self.regions[rid] = (a, lo, hi)
        if self.side == "learner":
            self.kept.append(a)    # alive until the cell ends, so no later array can get its address
        blobs.append(_bytes_at(lo, hi, a).tobytes())
        return {"$": "array", "id": rid, "b": len(blobs) - 1, "mod": lo % PAGE, **_layout(a)}

    # -- decoding ------------------------------------------------------------------------------------------

    def decode(self, data: Any, blobs: list[bytes]) -> Any:
        """Rebuild what the other side encoded. Raises :class:`Stopped` on anything malformed."""
        dec = lambda v: self.decode(v, blobs)  # noqa: E731
        if data is None or type(data) in (bool, int, float, str):
            return data
        if type(data) is list:
            return [dec(v) for v in data]
        if type(data) is not dict:
            raise Stopped("the learner's process sent a value of an unknown kind")
        tag = data.get("$")
        if tag == "tuple":
            return tuple(dec(v) for v in data["v"])
        if tag == "dict":
            return {_hashable(dec(k)): dec(v) for k, v in data["v"]}
        if tag in ("set", "frozenset"):
            items = [_hashable(dec(v)) for v in data["v"]]
            return set(items) if tag == "set" else frozenset(items)
        if tag == "float":
            return float(str(data["v"]))
        if tag == "complex":
            return complex(float(str(data["v"][0])), float(str(data["v"][1])))
        if tag == "bytes":
            return blobs[int(data["b"])]
        if tag == "...":
            return Ellipsis
        if tag == "slice":
            return slice(*(dec(v) for v in data["v"]))
        if tag == "array":
            return self._decode_array(data, blobs)
        if tag == "dtype":
            return np.dtype(str(data["v"]))
        if tag == "scalartype":
            return np.dtype(str(data["v"])).type
        if tag == "onnx":
            import onnx

            return onnx.ModelProto.FromString(blobs[int(data["b"])])
        if tag == "ref" and self.side == "checking":
            ref = int(data["ref"])
            if ref not in self.lent:
                raise Stopped("the learner's process named an object it was never lent")
            return self.lent[ref]
        if tag == "lent" and self.side == "learner":
            return self.stand_in(int(data["ref"]), str(data["type"]))
        if tag == "record" and self.side == "learner":
            cls = _import(str(data["type"]))
            obj = object.__new__(cls)
            obj.__dict__.update(dec(data["v"]))
            return obj
        raise Stopped(f"the learner's process sent a value tagged {str(tag)[:20]!r}, which the grader does not take")

    def _decode_array(self, data: dict, blobs: list[bytes]) -> np.ndarray:
        dtype, shape, strides, offset, writeable = _checked_layout(data)
        if "within" in data:
            rid = int(data["within"])
            if rid not in self.regions:
                raise Stopped("the learner's process named an array that never crossed")
            owner, lo, hi = self.regions[rid]
            at = int(data["at"])
            _fits(data, hi - lo - at)
            if at < 0:
                raise Stopped("the learner's process sent a malformed array")
            base_writeable = bool(getattr(owner, "flags", None) is None or owner.flags.writeable)
            return _view(lo + at, offset, dtype, shape, strides, writeable and base_writeable, owner)
        blob = blobs[int(data["b"])]
        _fits(data, len(blob))
        buffer = _aligned(len(blob), int(data["mod"]) % PAGE)
        buffer[:] = np.frombuffer(blob, np.uint8)
        lo = _address(buffer)
        rid = int(data["id"])
        self.regions[rid] = (buffer, lo, lo + len(blob))
        if self.side == "learner":
            self.digests[rid] = _digest(lo, lo + len(blob), buffer)
        return _view(lo, offset, dtype, shape, strides, writeable, buffer)

    # -- arguments written to in place ---------------------------------------------------------------------

    def writes(self, blobs: list[bytes]) -> list:
        """Learner side: the arguments whose bytes the learner's code changed, as ``[id, blob]``."""
        out = []
        for rid, digest in self.digests.items():
            owner, lo, hi = self.regions[rid]
            if _digest(lo, hi, owner) != digest:
                blobs.append(_bytes_at(lo, hi, owner).tobytes())
                out.append([rid, len(blobs) - 1])
                self.digests[rid] = _digest(lo, hi, owner)
        return out

    def apply_writes(self, writes: Any, blobs: list[bytes]) -> None:
        """Checking side: copy the learner's writes into the arguments' own memory (when it is writable)."""
        for rid, b in writes or ():
            owner, lo, hi = self.regions.get(int(rid), (None, 0, 0))
            blob = blobs[int(b)]
            if owner is None or len(blob) != hi - lo:
                raise Stopped("the learner's process reported a write to an array it was not given")
            if owner.flags.writeable:
                np.asarray(_Memory(lo, (hi - lo,), None, "|u1", True, owner))[:] = np.frombuffer(blob, np.uint8)


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        raise Stopped("the learner's process sent an unhashable key") from None
    return v


def _is_onnx_model(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "ModelProto" and (cls.__module__ or "").startswith("onnx")


# ---- the learner's function, seen from the checking process -----------------------------------------------


class Remote:
    """A learner's function living in the learner's process; calling it sends the arguments there.

    The checkers call it as they would call the function itself. Inside a check (while
    :func:`npukit.teach.core.learner_call` runs it) the check's refusals travel with the call, and the
    learner's process watches the call for them; outside a check (an instructor's cell using the learner's
    function) it is a plain call.
    """

    __npukit_remote__ = True

    def __init__(self, learner: Any, handle: int, name: str) -> None:
        self._learner, self._handle, self.__name__ = learner, handle, name
        self.__qualname__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._learner.call(self._handle, args, kwargs, around=None)

    def around(self, helper: Callable[..., Any], *args: Any) -> Any:
        """``helper(function, *args)`` run in the learner's process, next to the function (see ``core.around``)."""
        if not (isinstance(helper, types.FunctionType) and helper.__module__.startswith("npukit.teach.")
                and "<locals>" not in helper.__qualname__):
            raise TypeError("helper must be a module-level function of an npukit.teach module")
        return self._learner.call(self._handle, args, {}, around=_path(helper))

    def __repr__(self) -> str:
        return f"<your function {self.__name__} (in the learner's process)>"


core._REMOTE.append(Remote)   # core.around tells a remote function by its class


def public_name(name: Any) -> bool:
    """True for an attribute name a lent object may be asked for (no underscore first)."""
    return isinstance(name, str) and bool(_PUBLIC.match(name))


class Lent:
    """In the learner's process: the stand-in for an object the checking process lent.

    Calls, public attributes, items, ``len``, iteration and ``np.asarray`` are asked of the real object,
    in the checking process; what it returns comes back as data, or lent again.
    """

    __slots__ = ("_ref", "_type", "_channel")

    def __init__(self, ref: int, typename: str, channel: Any) -> None:
        self._ref, self._type, self._channel = ref, typename, channel

    def __getattr__(self, name: str) -> Any:
        if not public_name(name):
            raise AttributeError(name)
        return self._channel.callback("getattr", self._ref, name=name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._channel.callback("call", self._ref, args=list(args), kwargs=kwargs)

    def __getitem__(self, key: Any) -> Any:
        return self._channel.callback("getitem", self._ref, key=key)

    def __len__(self) -> int:
        return self._channel.callback("len", self._ref)

    def __iter__(self) -> Any:
        return iter(self._channel.callback("list", self._ref))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self._channel.callback("array", self._ref)
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        return f"<{self._type}, lent by the checker>"
