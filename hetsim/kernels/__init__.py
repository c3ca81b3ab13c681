"""Op semantics: one registry entry per op type (numpy kernel, shape rule, cost rule)."""

from hetsim.kernels.registry import OP_CLASSES, OPS, Cost, Kernel, Meta, OpDef, register

__all__ = ["OPS", "OP_CLASSES", "Cost", "Kernel", "Meta", "OpDef", "register"]
