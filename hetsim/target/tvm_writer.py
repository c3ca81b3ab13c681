"""Write TVM target configs: the one place hetsim writes TVM's target dialect.

This module owns the hetsim -> TVM direction, `spec_to_tvm`, and its registry of writers keyed
by hetsim kind: the CPU kinds are ``llvm`` with their family's ``mtriple``, ``cuda`` is ``cuda``,
``npu`` is ``ext_dev`` and ``hetero`` is ``composite`` (or TVM's device-with-a-``host`` form).
Each node records its origin in TVM's ``model`` annotation (`tvm_names.MODEL_PREFIX`), so that
`tvm_reader` reads tags back as tags and plain kinds as plain kinds.

It translates only: `spec_to_tvm` reads an exported tree (`Target.export()`). TVM has no
executors, runtimes, links or device names, and none of hetsim's cost parameters: those are
dropped on the way out. The name tables are `tvm_names`. ``tvm`` itself is never imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hetsim.errors import Problem, TargetError
from hetsim.target.schema import item_path, join_path
from hetsim.target.tvm_names import CPU_FAMILIES, MODEL_PREFIX
from hetsim.target.tvm_types import is_int64

__all__ = ["spec_to_tvm"]

_Writer = Callable[[Mapping[str, Any], str, list[Problem]], dict[str, Any]]


def spec_to_tvm(exported: Mapping[str, Any]) -> dict[str, Any]:
    """A config dict that ``tvm.target.Target`` (apache-tvm 0.27) accepts, from an exported tree.

    A ``hetero`` node becomes a ``composite``, except a level with no tag and a single plain
    device, which becomes that device with a ``host`` (TVM's own form). Every node carries its
    origin in ``model``: ``"hetsim:<tag>"``, or ``"hetsim:"`` for a plain kind. CPUs always get
    an ``mtriple``, so the result never depends on the machine TVM runs on.

    Parameters
    ----------
    exported
        A tree as `Target.export()` writes it (plain JSON data).

    Returns
    -------
    dict
        The TVM config.

    Raises
    ------
    TargetError
        A node whose kind has no TVM form, with its path.

    Examples
    --------
    >>> cpu = spec_to_tvm({"kind": "arm-cpu", "tag": "arm/cortex-a72", "mcpu": "cortex-a72",
    ...                    "cores": 4})
    >>> cpu["kind"], cpu["mtriple"], cpu["mcpu"], cpu["num-cores"], cpu["model"]
    ('llvm', 'aarch64-linux-gnu', 'cortex-a72', 4, 'hetsim:arm/cortex-a72')
    >>> gpu = spec_to_tvm({"kind": "hetero", "host": {"kind": "x86-cpu", "cores": 2},
    ...                    "devices": [{"kind": "cuda", "name": "gpu0", "arch": "sm_80"}]})
    >>> gpu["kind"], gpu["arch"], gpu["host"]["kind"], gpu["host"]["mtriple"]
    ('cuda', 'sm_80', 'llvm', 'x86_64-linux-gnu')
    """
    problems: list[Problem] = []
    config = _write_node(exported, "", problems)
    if problems:
        raise TargetError(problems)
    return config


def _write_node(node: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    kind = node.get("kind")
    writer = _WRITERS.get(kind) if isinstance(kind, str) else None
    if writer is None:
        expected = f"expected a kind with a TVM form ({', '.join(sorted(_WRITERS))})"
        problems.append(Problem(join_path(path, "kind"), expected, repr(kind)))
        return {}
    config = writer(node, path, problems)
    config.setdefault("model", MODEL_PREFIX + (node.get("tag") or ""))
    return config


def _write_cpu(node: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    config: dict[str, Any] = {
        "kind": "llvm",
        "mtriple": node.get("mtriple") or CPU_FAMILIES[node["kind"]].triple,
    }
    for option in ("mcpu", "mattr"):
        if node.get(option):
            config[option] = node[option]
    cores = node.get("cores")
    if isinstance(cores, int) and not is_int64(cores):  # TVM's num-cores is an int64
        expected = "expected at most 2^63 - 1 cores (TVM's num-cores is a 64-bit integer)"
        problems.append(Problem(join_path(path, "cores"), expected, str(cores)))
    elif cores is not None:
        config["num-cores"] = cores
    return config


def _write_cuda(node: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    return {"kind": "cuda", "arch": node["arch"]} if node.get("arch") else {"kind": "cuda"}


def _write_npu(node: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    return {"kind": "ext_dev"}


def _write_hetero(node: Mapping[str, Any], path: str, problems: list[Problem]) -> dict[str, Any]:
    devices = node.get("devices") or []
    where = join_path(path, "devices")
    paths = [item_path(where, d.get("name") or i) for i, d in enumerate(devices)]
    if len(devices) == 1 and not node.get("tag") and devices[0].get("kind") != "hetero":
        config = _write_node(devices[0], paths[0], problems)
    else:
        written = [_write_node(d, p, problems) for d, p in zip(devices, paths, strict=True)]
        config = {"kind": "composite", "devices": written}
    if node.get("host"):
        config["host"] = _write_node(node["host"], join_path(path, "host"), problems)
    return config


_WRITERS: dict[str, _Writer] = {
    **dict.fromkeys(CPU_FAMILIES, _write_cpu),
    "cuda": _write_cuda,
    "npu": _write_npu,
    "hetero": _write_hetero,
}
