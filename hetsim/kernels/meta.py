"""What is known of one tensor while shapes propagate: `Meta`, its shape, dtype and maybe value.

Shape rules (`OpDef.infer`, in `registry`) take and give `Meta`s, and `propagate` gives one to
every tensor of a graph. Reading and checking them is left to `checks`, counting an op's work
from them to `costs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Meta"]


@dataclass(frozen=True, slots=True)
class Meta:
    """What is known of one tensor while shapes propagate: shape, dtype and maybe its value.

    `value` is set for constants and for small tensors computed during propagation (shape
    arithmetic), so that rules such as Reshape's can read them.
    """

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    value: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes the tensor occupies."""
        return self.size * self.dtype.itemsize

    @classmethod
    def of(cls, array: np.ndarray, *, keep_value: bool = True) -> Meta:
        """The Meta of a concrete array, keeping its value when asked."""
        return cls(tuple(array.shape), array.dtype, array if keep_value else None)

    def __repr__(self) -> str:
        known = " value" if self.value is not None else ""
        return f"<Meta {self.dtype}{list(self.shape)}{known}>"
