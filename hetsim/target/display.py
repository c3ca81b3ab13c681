"""Text forms of targets and schemas: `str(t)`, the ``--tree`` drawing, schema tables, the docs.

Everything here reads finished values (`Target`, `Kind`) and returns strings; nothing prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from hetsim.target.kinds import REGISTRIES
from hetsim.target.schema import Attr, Kind
from hetsim.target.values import STRUCTURAL_TYPES

if TYPE_CHECKING:
    from hetsim.target.tree import Config, Target

__all__ = ["describe", "kinds_markdown", "render_tree", "schema_table"]


def _label(node: Target | Config) -> str:
    return f"{node.kind}[{node.tag}]" if node.tag else node.kind


def describe(target: Target) -> str:
    """A one-line form of a tree: kinds, tags, executors and device names.

    >>> from hetsim.target.tree import Target
    >>> describe(Target({"kind": "cuda", "name": "gpu0"}))
    'hetero(host=x86-cpu, executor=vm, runtime=cpp, devices=[gpu0: cuda])'
    """
    if not target.is_composite:
        return _label(target)
    assert target.host is not None, "a level has a host"
    assert target.executor is not None, "a level has an executor"
    assert target.runtime is not None, "a level has a runtime"
    devices = ", ".join(f"{d.name}: {describe(d)}" for d in target.devices)
    head = f"hetero[{target.tag}]" if target.tag else "hetero"
    return (
        f"{head}(host={_label(target.host)}, executor={_label(target.executor)}, "
        f"runtime={_label(target.runtime)}, devices=[{devices}])"
    )


def _figures(target: Target, *, is_device: bool = True) -> str:
    """Key parameters of a processor (peak, memory bandwidth) and of a device's link to its
    level's host memory; a level's own link only when it is a device of another level (a root
    level's link and a host's are read by nothing: docs/targets.md, rule 6; nor is the link of a
    device that computes in its host's memory, ``memory_gib: 0``)."""
    a = target.attrs
    link = f"link {a['link']['bandwidth_gbps']:g} GB/s, {a['link']['latency_us']:g} us"
    if target.is_composite:  # its link is its host's memory's, unless that is its parent's
        shares = target.host is not None and target.host.attrs.get("memory_gib") == 0
        return link if is_device and not shares else ""
    peak = a["cores"] * a["freq_ghz"] * a["flops_per_cycle"]
    figures = (
        f"{a['cores']} x {a['freq_ghz']:g} GHz, {peak:g} GFLOP/s, "
        f"mem {a['mem_bandwidth_gbps']:g} GB/s"
    )
    shares_memory = a.get("memory_gib") == 0  # computes in its level host's memory: no link
    return f"{figures}, {link}" if is_device and not shares_memory else figures


def _config_line(role: str, config: Config) -> str:
    values = ", ".join(f"{k}={v!r}" for k, v in config.attrs.items())
    return f"{role}: {_label(config)}  {values}"


def render_tree(target: Target | Any) -> str:
    """An indented drawing of a tree with kinds, tags, executors and key parameters; `target` a
    `Target` or anything `Target` takes (a tag name, a spec: it had failed on a name).

    >>> from hetsim.target.tree import Target
    >>> print(render_tree(Target({"kind": "npu", "name": "npu"})))  # the level takes its name
    npu: hetero
    ├─ host: riscv-cpu  4 x 1.5 GHz, 12 GFLOP/s, mem 11.2 GB/s
    ├─ executor: vm  dispatch_us=0.27, is_static=False
    ├─ runtime: cpp  alloc_us=0.5, free_us=0.2, call_us=0.1
    └─ npu: npu  1 x 1 GHz, 2048 GFLOP/s, mem 16 GB/s
    >>> print(render_tree(Target({"tag": "x86-h100", "name": "lab"})).splitlines()[0])
    lab: hetero[x86-h100]
    """
    from hetsim.target.tree import Target  # tree imports this module

    if not isinstance(target, Target):
        target = Target(target)
    head = describe(target) if not target.is_composite else _head(target)
    if target.is_composite and target.name:  # a root named so: commands show it by this name
        head = f"{target.name}: {head}"
    lines = [f"{head}  {_figures(target, is_device=False)}".rstrip()]
    lines += _children(target, "")
    return "\n".join(lines)


def _head(target: Target) -> str:
    return f"hetero[{target.tag}]" if target.tag else "hetero"


def _children(target: Target, indent: str) -> list[str]:
    assert target.host is not None, "a level has a host"
    assert target.executor is not None, "a level has an executor"
    assert target.runtime is not None, "a level has a runtime"
    items: list[tuple[str, Target | None]] = [
        (f"host: {_label(target.host)}  {_figures(target.host, is_device=False)}", None),
        (_config_line("executor", target.executor), None),
        (_config_line("runtime", target.runtime), None),
    ]
    for child in target.devices:
        label = _head(child) if child.is_composite else _label(child)
        items.append((f"{child.name}: {label}  {_figures(child)}".rstrip(), child))
    lines = []
    for i, (text, device) in enumerate(items):
        last = i == len(items) - 1
        lines.append(f"{indent}{'└─' if last else '├─'} {text}")
        if device is not None and device.is_composite:
            lines += _children(device, indent + ("   " if last else "│  "))
    return lines


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|")


def _attr_rows(attrs: Iterable[Attr], prefix: str = "") -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for attr in attrs:
        name = f"{prefix}{attr.name}"
        if attr.type == "mapping":
            rows.append((name, "mapping", "", "", "", attr.doc))
            rows += _attr_rows(attr.fields, f"{name}.")
            continue
        default = "" if attr.type in STRUCTURAL_TYPES and attr.default is None else attr.default
        kind = f"list of {attr.items.type}" if attr.items else attr.type
        check = "" if attr.type in STRUCTURAL_TYPES else attr.expected
        rows.append(
            (name, kind, attr.unit, repr(default) if default != "" else "''", check, attr.doc)
        )
    return rows


def _kind_named(name: object) -> Kind:
    """The kind called `name`, in whichever category has it (a `TargetError` if none does)."""
    from hetsim.errors import Problem, TargetError

    for registry in REGISTRIES.values():
        found = registry.get(name) if isinstance(name, str) else None
        if found is not None:
            return found
    names = sorted(n for registry in REGISTRIES.values() for n in registry)
    raise TargetError([Problem("schema_table", f"expected a Kind or a kind name in {names}",
                               repr(name))])  # fmt: skip


def schema_table(kind: Kind | str) -> str:
    """A kind's schema as a Markdown table, with its keys, flags and rules above it; `kind` a
    `Kind` or a kind's name (``"cuda"``: it had failed on a name).

    >>> print(schema_table(REGISTRIES["executor"]["graph"]).splitlines()[0])
    ### `graph` (executor): a graph executor: a static node list, static shapes only
    """
    if not isinstance(kind, Kind):
        kind = _kind_named(kind)
    flags = [f for f in ("can_host", "is_composite", "can_capture") if getattr(kind, f)]
    lines = [f"### `{kind.name}` ({kind.category}): {kind.doc}", ""]
    facts = []
    if kind.keys:
        facts.append("keys: " + ", ".join(f"`{k}`" for k in kind.keys))
    if flags:
        facts.append("flags: " + ", ".join(f"`{f}`" for f in flags))
    if kind.default_host and kind.category == "target":
        facts.append(f"default host: `{kind.default_host}`")
    if kind.executors:
        facts.append("runs executors: " + ", ".join(f"`{e}`" for e in kind.executors))
    lines += [f"- {fact}" for fact in facts]
    lines += [f"- rule: {rule.doc}" for rule in kind.rules]
    lines += [
        "",
        "| attribute | type | unit | default | valid values | doc |",
        "|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in _attr_rows(kind.attrs)]
    return "\n".join(lines)


def kinds_markdown() -> str:
    """Every registered kind's schema, for ``docs/targets.md``."""
    sections = [schema_table(k) for registry in REGISTRIES.values() for k in registry.values()]
    return "\n\n".join(sections) + "\n"
