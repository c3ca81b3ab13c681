"""Sliding-window geometry shared by Conv, ConvTranspose and the pooling ops.

Owns the attributes every windowed op reads (``kernel_shape``, ``strides``, ``dilations``,
``pads``, ``auto_pad``, ``ceil_mode``), their checks, and the arithmetic that turns them and an
input shape into output sizes and begin/end pads. The kernels themselves live in `conv.py` and
`pool.py`; this module computes no values.

Notation, per spatial dimension: input size ``n``, kernel ``k``, stride ``s``, dilation ``d``,
pads ``b`` (begin) and ``e`` (end). The dilated kernel spans ``k' = (k - 1)·d + 1`` elements.

- explicit pads: ``out = floor((n + b + e - k') / s) + 1`` (``ceil`` in ceil mode, minus one when
  the last window would start past the begin-padded input, as onnx and PyTorch do);
- ``SAME_UPPER`` / ``SAME_LOWER``: ``out = ceil(n / s)``, total pad
  ``max(0, (out - 1)·s + k' - n)``, the odd element at the end (UPPER) or the beginning (LOWER);
- ``VALID``: no pads, ``out = floor((n - k') / s) + 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hetsim.ir import Op
from hetsim.kernels.checks import attr, flag_attr, ints_attr, missing_attribute, op_error

__all__ = ["AUTO_PADS", "Geometry", "WindowAttrs", "read_window_attrs"]

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


@dataclass(frozen=True, slots=True)
class Geometry:
    """A resolved window over the spatial dims of one input shape.

    ``extra`` is padding beyond ``pads_end`` that ceil mode needs so the last window fits; it is
    not part of the input for count-include-pad averaging.
    """

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    pads_end: tuple[int, ...]
    out: tuple[int, ...]
    extra: tuple[int, ...]

    @property
    def span(self) -> tuple[int, ...]:
        """Elements covered by each dilated kernel, ``(k - 1)·d + 1``."""
        return tuple((k - 1) * d + 1 for k, d in zip(self.kernel, self.dilations, strict=True))

    @property
    def is_padded(self) -> bool:
        """True when any begin, end or ceil-mode pad is non-zero."""
        return any(self.pads_begin) or any(self.pads_end) or any(self.extra)


@dataclass(frozen=True, slots=True)
class WindowAttrs:
    """The window attributes of one op, read and checked once; lists are None when absent.
    ``pads_need_notset``: ``pads`` and an ``auto_pad`` other than NOTSET may not come together
    (Conv and ConvTranspose, whose spec says so and onnxruntime refuses it; a pool's spec says
    so too, but onnxruntime reads its pads and ignores them, and hetsim does as well).

    Examples
    --------
    >>> w = WindowAttrs(Op("MaxPool", "p", ("x",), ("y",)), "NOTSET", (3, 3), (2, 2), None,
    ...                 (1, 1, 1, 1), False)
    >>> g = w.resolve((8, 7), (3, 3))
    >>> g.out, g.pads_begin, g.pads_end
    ((4, 4), (1, 1), (1, 1))
    """

    op: Op
    auto_pad: str
    kernel_shape: tuple[int, ...] | None
    strides: tuple[int, ...] | None
    dilations: tuple[int, ...] | None
    pads: tuple[int, ...] | None
    ceil_mode: bool
    pads_need_notset: bool = False

    def resolve(self, spatial: Sequence[int], kernel: Sequence[int]) -> Geometry:
        """The geometry of a window of `kernel` over an input of spatial size `spatial`."""
        rank = len(spatial)
        kernel = self.check_kernel(kernel, rank)
        strides, dilations = self.steps(rank)
        pads = self.explicit_pads(rank)
        spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
        if self.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = [-(-n // s) for n, s in zip(spatial, strides, strict=True)]
            total = [
                max(0, (o - 1) * s + k - n)
                for o, s, k, n in zip(out, strides, spans, spatial, strict=True)
            ]
            small = [t // 2 for t in total]
            large = [t - t // 2 for t in total]
            begin, end = (small, large) if self.auto_pad == "SAME_UPPER" else (large, small)
        else:
            if self.auto_pad == "VALID":
                pads = (0,) * 2 * rank
            begin, end = list(pads[:rank]), list(pads[rank:])
            out = [
                self._out_size(n, b, e, k, s)
                for n, b, e, k, s in zip(spatial, begin, end, spans, strides, strict=True)
            ]
        if min(out) < 1:
            sizes = f"input {list(spatial)} with kernel {list(kernel)} and pads {begin + end}"
            raise op_error(self.op, "expected a window that fits its padded input", sizes)
        extra = [
            max(0, (o - 1) * s + k - (n + b + e))
            for o, s, k, n, b, e in zip(out, strides, spans, spatial, begin, end, strict=True)
        ]
        return Geometry(
            kernel, strides, dilations, tuple(begin), tuple(end), tuple(out), tuple(extra)
        )

    def check_kernel(self, kernel: Sequence[int], rank: int) -> tuple[int, ...]:
        """`kernel` (the weight's spatial shape) as ints, checked against `kernel_shape`."""
        kernel = tuple(int(k) for k in kernel)
        if self.kernel_shape is not None and self.kernel_shape != kernel:
            shown = list(self.kernel_shape)
            raise op_error(self.op, f"expected kernel_shape {list(kernel)}", shown)
        if len(kernel) != rank:
            raise op_error(self.op, f"expected a {rank}-D kernel", f"{list(kernel)}")
        if min(kernel, default=1) < 1:  # kernel_shape is checked: a weight with no taps
            expected = "expected a kernel (the weight's spatial dims) of sizes >= 1"
            raise op_error(self.op, expected, f"{list(kernel)}")
        return kernel

    def steps(self, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Strides and dilations for `rank` spatial dims (1 where absent)."""
        return (
            self._per_dim("strides", self.strides, rank),
            self._per_dim("dilations", self.dilations, rank),
        )

    def explicit_pads(self, rank: int) -> tuple[int, ...]:
        """Begin then end pads for `rank` spatial dims (0 where absent), their count checked in
        every auto_pad mode, where they go unused too (onnxruntime refuses a wrong count)."""
        pads = self._per_dim("pads", self.pads, 2 * rank, fill=0)
        if self.pads_need_notset and self.pads is not None and self.auto_pad != "NOTSET":
            got = f"auto_pad {self.auto_pad!r} and pads {list(pads)}"
            raise op_error(self.op, "expected no 'pads' with auto_pad", got)
        return pads

    def _out_size(self, n: int, begin: int, end: int, span: int, stride: int) -> int:
        room = n + begin + end - span
        if not self.ceil_mode:
            return room // stride + 1
        out = -(-room // stride) + 1
        return out - 1 if (out - 1) * stride >= n + begin else out

    def _per_dim(
        self, name: str, values: tuple[int, ...] | None, count: int, fill: int = 1
    ) -> tuple[int, ...]:
        if values is None:
            return (fill,) * count
        if len(values) != count:
            raise op_error(self.op, f"expected {count} values in {name!r}", list(values))
        return values


def _ints(op: Op, name: str, *, minimum: int) -> tuple[int, ...] | None:
    values = ints_attr(op, name, None)
    if values is None:
        return None
    if any(v < minimum for v in values):
        raise op_error(op, f"expected {name!r} to hold ints >= {minimum}", list(values))
    return values


def read_window_attrs(
    op: Op, *, kernel_required: bool, pads_need_notset: bool = False
) -> WindowAttrs:
    """Read and check the window attributes of `op` (`pads_need_notset`: see `WindowAttrs`).

    Raises
    ------
    ModelError
        An unknown ``auto_pad``, a missing required ``kernel_shape``, a non-positive stride,
        dilation or kernel size, a negative pad, or ``ceil_mode`` together with ``auto_pad``.

    Examples
    --------
    >>> op = Op("Conv", "c0", ("x", "w"), ("y",), {"auto_pad": "SAME"})
    >>> read_window_attrs(op, kernel_required=False)
    Traceback (most recent call last):
    ...
    hetsim.errors.OpError: op c0 (Conv): expected auto_pad in NOTSET, SAME_UPPER, \
SAME_LOWER, VALID, got 'SAME'
    """
    auto_pad = attr(op, "auto_pad", "NOTSET")
    if isinstance(auto_pad, bytes):
        auto_pad = auto_pad.decode()
    if auto_pad not in AUTO_PADS:
        raise op_error(op, f"expected auto_pad in {', '.join(AUTO_PADS)}", repr(auto_pad))
    kernel_shape = _ints(op, "kernel_shape", minimum=1)
    if kernel_required and kernel_shape is None:
        raise missing_attribute(op, "kernel_shape")
    ceil_mode = flag_attr(op, "ceil_mode", 0)
    if ceil_mode and auto_pad != "NOTSET":
        raise op_error(op, "expected ceil_mode 0 with auto_pad", f"auto_pad {auto_pad!r}")
    return WindowAttrs(
        op,
        auto_pad,
        kernel_shape,
        _ints(op, "strides", minimum=1),
        _ints(op, "dilations", minimum=1),
        _ints(op, "pads", minimum=0),
        ceil_mode,
        pads_need_notset,
    )
