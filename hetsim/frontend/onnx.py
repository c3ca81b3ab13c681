"""Read ONNX models into hetsim's IR: an .onnx file or an ``onnx.ModelProto`` becomes a `Graph`.

This is the validation boundary for models: an op, a domain or a dtype that hetsim does not
support, and a file that is not an ONNX model, are `ModelError`s here, so nothing past it has
to check again and nothing is silently skipped. Tensors and value types are read by
`hetsim.frontend.tensors`. After conversion, `fold_constants` (`hetsim.frontend.folding`)
replaces every constant sub-graph (weights made by ConstantOfShape, shape arithmetic on static
shapes) with initializers, computed with the kernels of `hetsim.kernels.OPS`. Symbolic
dimensions (``dim_param``) of the model inputs are kept as `str` dims.

``onnx`` is an optional dependency: it is imported inside the functions that read protos.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hetsim.errors import ModelError, OpError, SimulationError, printable
from hetsim.frontend import proto as onnx_proto
from hetsim.frontend import qdq, tensors
from hetsim.frontend.folding import fold_constants
from hetsim.frontend.tensors import SUPPORTED_DTYPES
from hetsim.ir import Graph, Op, op_label
from hetsim.ir.fields import RESERVED_OP_NAMES
from hetsim.kernels import OPS, unsupported_op

if TYPE_CHECKING:
    import onnx

__all__ = ["SUPPORTED_DTYPES", "fold_constants", "load_onnx", "require_onnx"]

_DEFAULT_DOMAINS = ("", "ai.onnx")
_DOMAIN_OWNERS = {"com.microsoft": "onnxruntime"}
"""Who defines a domain's ops, as an unsupported-op message names them."""


def load_onnx(
    source: str | Path | onnx.ModelProto, *, fold: bool = True, fuse_qdq: bool = True
) -> Graph:
    """Convert an ONNX model into a validated `Graph`, with constant sub-graphs folded and QDQ
    groups fused into integer ops.

    Parameters
    ----------
    source
        A path to an .onnx file, or a loaded ``onnx.ModelProto``.
    fold
        Fold constant sub-graphs into initializers (see `fold_constants`).
    fuse_qdq
        Rewrite each DequantizeLinear -> Conv/MatMul -> QuantizeLinear group into a QLinearConv
        or QLinearMatMul (`hetsim.frontend.qdq.fuse_qdq`), as onnxruntime does, so that int8
        devices can run it. Constants are folded first, DequantizeLinear ops kept, so that a
        weight quantized by a QuantizeLinear in the graph is an int8 initializer by then.

    Returns
    -------
    Graph
        Ops in topological order; the opset is the model's default-domain opset, or, for a
        model that imports only another domain's (``com.microsoft``) and has no op of the
        default domain, `NEWEST_OPSET`.

    Raises
    ------
    ModelError
        A file that cannot be read as an ONNX model, or holds no graph (a GraphProto saved
        alone); an op outside the supported set
        (``<file>: op <name> (<OpType>): unsupported op <OpType> (did you mean ...); <where the
        supported op types are listed>``: `hetsim.kernels.unsupported_op`), a call
        of a function of the model's own included; an unsupported dtype; a structural problem
        (dangling input, cycle, duplicate output); an op that folding constants runs and
        refuses (an `OpError`, as `execute` raises it); a ModelProto whose external data is not
        loaded. Each message is led by the file (``model <graph name>`` for a ModelProto) and
        names where in it the problem is.
        What ONNX forbids and would otherwise be read as a guess: two initializers, or two
        attributes of a node, of one name; two default-domain opsets; a graph input that is
        an initializer stating another dtype or shape; an attribute whose value is not in its
        type's field, that refers to a function's attribute, or whose text is not UTF-8; a
        sparse initializer; a tensor value outside its dtype's range.
    SimulationError
        An op that folding constants runs whose arrays this machine cannot allocate (as
        `execute` raises it, led by the file).

    Examples
    --------
    >>> from onnx import TensorProto, helper
    >>> model = helper.make_model(
    ...     helper.make_graph(
    ...         [helper.make_node("Relu", ["x"], ["y"], name="relu")],
    ...         "tiny",
    ...         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", 4])],
    ...         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["seq", 4])],
    ...     ),
    ...     opset_imports=[helper.make_opsetid("", 13)],
    ... )
    >>> g = load_onnx(model)
    >>> g.ops, g.inputs["x"], g.opset
    ((<Op relu (Relu)>,), TensorType(shape=('seq', 4), dtype='float32'), 13)
    """
    model, where, default_name = _read(source)
    graph = _convert(model, where, default_name)
    try:
        if fuse_qdq and any(op.type == "DequantizeLinear" for op in graph.ops):
            kept = fold_constants(graph, keep=("DequantizeLinear",)) if fold else graph
            graph = qdq.fuse_qdq(kept)
        return fold_constants(graph) if fold else graph
    except ModelError as err:  # an op that folding or fusion ran and refused: in which model
        raise _in_model(err, where) from err
    except SimulationError as err:  # a folded op's arrays past this machine's memory
        raise SimulationError(f"{where}: {err}") from err


def require_onnx(where: str) -> ModuleType:
    """The ``onnx`` module, or a ModelError that says how to install it.

    Examples
    --------
    >>> require_onnx("model resnet50").__name__
    'onnx'
    """
    try:
        import onnx
    except ImportError as err:
        raise ModelError(
            f"{where}: expected the onnx package (pip install 'hetsim[onnx]'), got {err}"
        ) from err
    return onnx


def _read(source: str | Path | onnx.ModelProto) -> tuple[onnx.ModelProto, str, str]:
    """The ModelProto, how messages name it (its path, or ``model <graph name>``), and the
    graph name to use when the model has none (the file stem, or ``model``).

    A file is parsed with `onnx_proto.parse_model`, without importing onnx; only a model whose
    tensors live in external files goes through ``onnx.load``, which reads them.
    """
    from google.protobuf.message import DecodeError

    if not isinstance(source, str | Path):
        onnx = require_onnx("load_onnx")
        if isinstance(source, onnx.ModelProto):
            return source, f"model {printable(source.graph.name or '(unnamed)')}", "model"
        raise ModelError(f"load_onnx: expected a path or an onnx.ModelProto, got {source!r}")
    path = Path(source)
    where = printable(path)
    try:
        is_file = path.is_file()
    except OSError as err:  # a name too long for the file system: not asked, refused
        raise ModelError(f"{where}: expected an ONNX model file, got {err.strerror}") from err
    if not is_file:
        if path.is_dir():
            found = "a directory"
        elif path.exists():  # /dev/null, a pipe: "no such file" had misled
            found = "a special file, not a regular one"
        else:
            found = "no such file"
        raise ModelError(f"{where}: expected an ONNX model file, got {found}")
    if path.stat().st_size == 0:  # protobuf reads it as a model with nothing set
        raise ModelError(f"{where}: expected an ONNX model file, got an empty file")
    try:
        model = onnx_proto.parse_model(path)
    except (DecodeError, ValueError, OSError) as err:
        raise ModelError(f"{where}: expected an ONNX model, got unreadable data ({err})") from err
    if onnx_proto.has_external_data(model):
        _check_external_files(model, path)
        try:
            model = require_onnx(str(path)).load(str(path))
        except (DecodeError, ValueError, OSError) as err:
            raise ModelError(
                f"{where}: expected an ONNX model, got unreadable data ({err})"
            ) from err
    return model, where, path.stem


def _check_external_files(model: onnx.ModelProto, path: Path) -> None:
    """Raise unless every tensor kept in another file (an initializer, a Constant's value) names
    a file beside `path`, in its folder or below (onnx's loader refuses an absolute or a ``../``
    location too, with its own `ValidationError`, which is no ModelError), that holds its
    bytes."""
    folder = path.parent.resolve()
    nodes = model.graph.node
    op_names = _op_names(nodes)
    for index, name, entries in onnx_proto.external_data(model):
        if index is None:
            where = f"{printable(path)}: initializer {printable(name)}"
        else:
            op = f"op {printable(op_names[index])} ({printable(nodes[index].op_type)})"
            where = f"{printable(path)}: {op} attribute {printable(name)}"
        location = entries.get("location", "")
        found = _external_file(location, folder, where) if location else "missing"
        if found in ("folder", "outside"):  # '.', a sub-folder; /etc/x, ../x
            what = "a folder" if found == "folder" else "outside it"
            raise ModelError(
                f"{where}: expected an external data file in the model's folder, got "
                f"{location!r}, {what}"
            )
        if found == "missing":
            got = "no location" if not location else f"no file {path.parent / location}"
            raise ModelError(
                f"{where}: expected its external data file {location or '(unnamed)'} beside the "
                f"model, got {got}"
            )
        _check_extent(entries, path.parent / location, where)


def _external_file(location: str, folder: Path, where: str) -> str:
    """Where external data `location` is, beside a model in `folder`: ``"outside"`` the folder
    (looked at first: an unreadable folder there is outside all the same), a ``"folder"`` in it
    (the model's own, ``.``, or a sub-folder), a file ``"here"``, or ``"missing"``; a
    `ModelError` for a location no file can have (a NUL byte, a name too long for the file
    system)."""
    try:
        resolved = (folder / location).resolve()
        if resolved != folder and folder not in resolved.parents:
            return "outside"  # looked at first: nothing outside is looked at
        if resolved.is_dir():  # '.', a sub-folder
            return "folder"
        return "here" if resolved.is_file() else "missing"
    except (OSError, ValueError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise ModelError(
            f"{where}: expected an external data file name, got {location!r} ({reason})"
        ) from err


def _check_extent(entries: dict[str, str], file: Path, where: str) -> None:
    """Raise unless `file` reaches the end of the bytes that `entries` (offset, length) say:
    onnx's loader names the tensor, not the initializer or op, and refuses an offset or a
    length that is not a count with Python's own words (``invalid literal for int()``)."""
    offset, length = (_byte_count(entries, key, where) for key in ("offset", "length"))
    end, size = offset + length, file.stat().st_size
    if end > size:
        raise ModelError(
            f"{where}: expected bytes {offset} to {end} in its external data file "
            f"{entries['location']}, got a file of {size} bytes"
        )


def _byte_count(entries: dict[str, str], key: str, where: str) -> int:
    """External data entry `key` (offset, length; 0 when absent) read as onnx's loader reads
    it, with `int`; a `ModelError` naming it where that is no count."""
    value = entries.get(key, "0")
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise ModelError(
            f"{where}: expected its external data {key} a count of bytes, got {value!r}"
        )
    return count


def _convert(model: onnx.ModelProto, where: str, default_name: str) -> Graph:
    if not model.HasField("graph"):  # a GraphProto saved alone parses as a model without one
        raise ModelError(
            f"{where}: expected an ONNX model holding a graph, got none (a GraphProto saved "
            "without its ModelProto reads so: save the model, not model.graph)"
        )
    proto = model.graph
    functions = frozenset((f.domain, f.name) for f in model.functions)
    # first: a model of another domain's ops imports no opset
    ops = _ops(proto.node, where, functions)
    opset = _default_opset(model, where, ops)
    initializers = tensors.initializers(proto, where)
    if not proto.output:  # nothing to compute: it "ran" in the RET's dispatch alone
        raise ModelError(f"{where}: expected a graph with at least one output, got none")
    twice = sorted(name for name, n in Counter(i.name for i in proto.input).items() if n > 1)
    if twice:
        raise ModelError(
            f"{where}: input {printable(twice[0])}: expected one graph input of a name, got two"
        )
    for info in proto.input:
        if info.name in initializers:
            tensors.check_initializer_input(
                info, initializers[info.name], f"{where}: input {printable(info.name)}"
            )
    named = tensors.dim_params(proto)
    inputs = {
        info.name: tensors.tensor_type(info, f"{where}: input {printable(info.name)}", named)
        for info in proto.input
        if info.name not in initializers
    }
    declared = [
        info for info in (*proto.value_info, *proto.output) if info.type.HasField("tensor_type")
    ]
    value_types = {
        info.name: tensors.tensor_type(info, f"{where}: tensor {printable(info.name)}", named)
        for info in declared
        if info.type.tensor_type.HasField("shape")
    }
    # one of unknown rank declares its dtype all the same, which propagation checks (it had
    # gone unread: a Relu's float32 output declared int64 ran, as onnxruntime refuses it)
    value_dtypes = {
        info.name: tensors.dtype_name(
            info.type.tensor_type.elem_type, f"{where}: tensor {printable(info.name)}"
        )
        for info in declared
        if not info.type.tensor_type.HasField("shape") and info.type.tensor_type.elem_type
    }
    try:
        return Graph(
            name=proto.name or default_name,
            ops=ops,
            inputs=inputs,
            outputs=tuple(o.name for o in proto.output),
            initializers=initializers,
            opset=opset,
            value_types={**value_types, **inputs},
            value_dtypes={n: t for n, t in value_dtypes.items() if n not in inputs},
        )
    except ModelError as err:  # the graph's structure (a tensor made twice, a cycle): its file
        raise _in_model(err, where) from err


def _in_model(err: ModelError, where: str) -> ModelError:
    """`err` led by `where` (the model's file, or ``model <graph name>``); an `OpError` stays
    one, still naming its op."""
    if isinstance(err, OpError):
        return OpError(f"{where}: {err}", err.op)
    return ModelError(f"{where}: {err}")


NEWEST_OPSET = 28
"""The newest default-domain opset whose op versions the kernels follow (onnx 1.23's, whose node
conformance cases they are checked against); a model declaring a newer one may mean an op
version hetsim has never seen, so it is refused rather than run under the old semantics."""


def _default_opset(model: onnx.ModelProto, where: str, ops: Sequence[Op]) -> int:
    """The model's default-domain opset; `NEWEST_OPSET` for a model that imports none but
    another domain's (onnxruntime's ``com.microsoft``) and has no default-domain op: its ops'
    inner float ops (a QLinearSigmoid's Sigmoid) then follow the newest versions, as
    onnxruntime's contrib kernels do."""
    versions = list(
        dict.fromkeys(o.version for o in model.opset_import if o.domain in _DEFAULT_DOMAINS)
    )
    if not versions:
        needing = next((op for op in ops if not OPS[op.type].domain), None)
        if needing is None and model.opset_import:
            return NEWEST_OPSET
        of = f" ({op_label(needing)} is in it)" if needing else ""
        raise ModelError(f"{where}: expected an opset for the default ONNX domain{of}, got none")
    if len(versions) > 1:  # which one the ops follow would be a guess
        got = " and ".join(str(v) for v in versions)
        raise ModelError(f"{where}: expected one default-domain opset, got {got}")
    if not 1 <= versions[0] <= NEWEST_OPSET:
        raise ModelError(
            f"{where}: expected a default-domain opset from 1 to {NEWEST_OPSET} (the newest "
            f"hetsim's kernels follow), got {versions[0]}"
        )
    return int(versions[0])


def _ops(
    nodes: Sequence[onnx.NodeProto], where: str, functions: frozenset[tuple[str, str]]
) -> tuple[Op, ...]:
    ops: list[Op] = []
    for node, name in zip(nodes, _op_names(nodes), strict=True):
        label = f"{where}: op {printable(name)} ({printable(node.op_type)})"
        _check_supported(node, label, functions)
        attrs = _attributes(node, label)
        ops.append(Op(node.op_type, name, tuple(node.input), tuple(node.output), attrs))
    return tuple(ops)


def _op_names(nodes: Sequence[onnx.NodeProto]) -> list[str]:
    """The name of each node's op: its own, its first output's, or ``node<index>``, made unique.

    A node's own name, the first time it is given, is its op's: a name made for another node
    (an unnamed node's output name, a repeated name with a suffix) never takes it, so that rules
    naming an op by the model's node names place that op (an unnamed Relu whose output is
    ``relu`` had taken the name of the node named ``relu``, which became ``relu_1``).

    >>> from onnx import helper
    >>> nodes = [helper.make_node("Relu", ["x"], ["relu"]), helper.make_node("Neg", ["x"], ["n"],
    ...          name="relu"), helper.make_node("Abs", ["x"], ["a"], name="relu")]
    >>> _op_names(nodes)
    ['relu_0', 'relu', 'relu_2']
    """
    own: dict[str, int] = {}  # each explicit name -> the first node that gives it
    for index, node in enumerate(nodes):
        if node.name:
            own.setdefault(node.name, index)
    names: list[str] = []
    taken: set[str] = set(RESERVED_OP_NAMES)  # a node named (return) is renamed, not refused
    for index, node in enumerate(nodes):
        name = node.name or (node.output[0] if node.output else "") or f"node{index}"
        unique, suffix = name, index
        # ONNX lets nodes share a name; hetsim's ops each have their own
        while unique in taken or (unique in own and own[unique] != index):
            unique, suffix = f"{name}_{suffix}", suffix + 1
        taken.add(unique)
        names.append(unique)
    return names


def _attributes(node: onnx.NodeProto, where: str) -> dict[str, Any]:
    """A node's attributes by name; a name given twice is a ModelError (which would win?)."""
    attrs: dict[str, Any] = {}
    for proto in node.attribute:
        if proto.name in attrs:
            raise ModelError(
                f"{where} attribute {proto.name}: expected one attribute of a name, got two"
            )
        attrs[proto.name] = _attribute(proto, where)
    return attrs


def _check_supported(
    node: onnx.NodeProto, label: str, functions: frozenset[tuple[str, str]]
) -> None:
    """The op (`label`: ``<file>: op <name> (<OpType>)``) is registered in the node's domain
    (`hetsim.kernels.OpDef.domain`)."""
    domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
    definition = OPS.get(node.op_type)
    if definition is not None and definition.domain == domain:
        return
    where = f" in domain {node.domain!r}" if domain else ""
    is_function = (node.domain, node.op_type) in functions
    if is_function:
        where += " (a function of the model's own, which hetsim does not inline)"
    elif definition is not None:
        owner = _DOMAIN_OWNERS.get(definition.domain, definition.domain)
        read_in = f"domain {definition.domain!r}" if definition.domain else "the default domain"
        where += f" ({owner or 'ONNX'}'s {node.op_type} is in {read_in})"
    # a type hetsim reads in another domain is named there (no hint: it is the closest); else
    # the closest of all, with its domain where that is another; a function is the model's own
    found = unsupported_op(node.op_type, where, domain, hinted=not is_function)
    raise ModelError(f"{label}: {found}")


# Keyed by onnx.AttributeProto.AttributeType (values fixed by the ONNX protocol), so that the
# table exists without importing onnx: the field that holds the value, and its reader.
_ATTRIBUTE_READERS: dict[int, tuple[str, Callable[[onnx.AttributeProto, str], Any]]] = {
    1: ("f", lambda a, where: float(a.f)),  # FLOAT
    2: ("i", lambda a, where: int(a.i)),  # INT
    3: ("s", lambda a, where: _text(a.s, where)),  # STRING
    4: ("t", lambda a, where: tensors.array(a.t, where)),  # TENSOR
    6: ("floats", lambda a, where: [float(v) for v in a.floats]),  # FLOATS
    7: ("ints", lambda a, where: [int(v) for v in a.ints]),  # INTS
    8: ("strings", lambda a, where: [_text(v, where) for v in a.strings]),  # STRINGS
    9: ("tensors", lambda a, where: [tensors.array(t, where) for t in a.tensors]),  # TENSORS
}
_ATTRIBUTE_FIELDS = ("name", "ref_attr_name", "doc_string", "type")
"""The fields of an AttributeProto that hold no value."""


_DTYPE_ATTRIBUTES = ("to", "dtype")
"""Attributes whose int value is an ONNX element type (Cast's ``to``): checked like tensors."""


def _attribute(proto: onnx.AttributeProto, where: str) -> Any:
    """The Python value of an attribute: int, float, str, list, or numpy array for a tensor."""
    if proto.ref_attr_name:  # onnx's checker lets it by; read, it would be the type's zero
        raise ModelError(
            f"{where} attribute {proto.name}: expected a value, got a reference to attribute "
            f"{proto.ref_attr_name!r} of a function (only a function's body may refer)"
        )
    found = _ATTRIBUTE_READERS.get(proto.type)
    if found is None:
        kind = onnx_proto.messages(where).AttributeProto.AttributeType.Name(proto.type).lower()
        raise ModelError(f"{where}: expected a plain attribute, got {proto.name!r} of type {kind}")
    field, reader = found
    stray = [f.name for f, _ in proto.ListFields() if f.name not in (field, *_ATTRIBUTE_FIELDS)]
    if stray:  # type INT with the value in f: the int read would be 0
        kind = onnx_proto.messages(where).AttributeProto.AttributeType.Name(proto.type).lower()
        raise ModelError(
            f"{where} attribute {proto.name}: expected its value in field {field} (type "
            f"{kind}), got field {stray[0]}"
        )
    value = reader(proto, f"{where} attribute {proto.name}")
    if proto.name in _DTYPE_ATTRIBUTES and isinstance(value, int):
        tensors.dtype_name(value, f"{where} attribute {proto.name}")
    return value


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ModelError(f"{where}: expected UTF-8 text, got {data!r}") from err
