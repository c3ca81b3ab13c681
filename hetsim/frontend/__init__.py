"""Model frontends: ONNX (an .onnx file or a ModelProto) into a `hetsim.ir.Graph`."""

from hetsim.frontend.onnx import SUPPORTED_DTYPES, fold_constants, load_onnx, require_onnx
from hetsim.frontend.qdq import fuse_qdq

__all__ = ["SUPPORTED_DTYPES", "fold_constants", "fuse_qdq", "load_onnx", "require_onnx"]
