"""Model frontends: ONNX (an .onnx file or a ModelProto) into a `hetsim.ir.Graph`."""

from hetsim.frontend.onnx import SUPPORTED_DTYPES, fold_constants, load_onnx, require_onnx

__all__ = ["SUPPORTED_DTYPES", "fold_constants", "load_onnx", "require_onnx"]
