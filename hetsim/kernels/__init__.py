"""Op semantics: one registry entry per op type (numpy kernel, shape rule, cost rule).

Importing this package registers every op: the op modules fill `OPS` as they load.
`propagate` gives each tensor of a graph its `Meta`; `execute` runs a graph eagerly.
"""

from hetsim.kernels import attention as _attention
from hetsim.kernels import casts as _casts
from hetsim.kernels import elementwise as _elementwise
from hetsim.kernels import indexing as _indexing
from hetsim.kernels import layout as _layout
from hetsim.kernels import llm as _llm
from hetsim.kernels import nn as _nn
from hetsim.kernels import qgemm as _qgemm
from hetsim.kernels import qlinear as _qlinear
from hetsim.kernels import qmatmul as _qmatmul
from hetsim.kernels import qoperator as _qoperator
from hetsim.kernels import quant as _quant
from hetsim.kernels import reduce as _reduce
from hetsim.kernels import resize as _resize
from hetsim.kernels import rnn as _rnn
from hetsim.kernels import sampling as _sampling
from hetsim.kernels import shape as _shape
from hetsim.kernels import tensor as _tensor
from hetsim.kernels import unary as _unary
from hetsim.kernels import unpool as _unpool
from hetsim.kernels import vision as _vision
from hetsim.kernels.arrays import read_only
from hetsim.kernels.costs import Cost
from hetsim.kernels.execute import Program, compile_program, execute
from hetsim.kernels.meta import Meta
from hetsim.kernels.propagate import (
    bind_dims,
    input_signature,
    keeps_value,
    propagate,
    propagate_costs,
    value_inputs,
)
from hetsim.kernels.registry import (
    OP_CLASSES,
    OPS,
    Kernel,
    OpDef,
    lookup,
    register,
    unsupported_op,
)

__all__ = [
    "OPS",
    "OP_CLASSES",
    "Cost",
    "Kernel",
    "Meta",
    "OpDef",
    "Program",
    "bind_dims",
    "compile_program",
    "execute",
    "input_signature",
    "keeps_value",
    "lookup",
    "propagate",
    "propagate_costs",
    "read_only",
    "register",
    "unsupported_op",
    "value_inputs",
]

del (
    _attention,
    _casts,
    _elementwise,
    _indexing,
    _layout,
    _llm,
    _nn,
    _qgemm,
    _qlinear,
    _qmatmul,
    _qoperator,
    _quant,
    _reduce,
    _resize,
    _rnn,
    _sampling,
    _shape,
    _tensor,
    _unary,
    _unpool,
    _vision,
)
