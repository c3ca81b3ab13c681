"""hetsim.target: config -> canonical `Target` tree (kinds, schemas, tags, canonical form).

`Target(x)` accepts every config form: a kind name (``"cuda"``), a tag name (``"arm-riscv-soc"``), a
mapping, a JSON string, a YAML/JSON/TOML file path, a tag with overrides, or a TVM target (via
`Target.from_tvm`). The modules, in the order a spec flows through them: `sources` (read text),
`tags` (the tag registry), `resolve` (tag references, overrides, wrapping), `canonical` (checks and
defaults, with `schema`, `values`, `rules` and `kinds`, built of `kind_attrs`), `tree` (the frozen
`Target`, of `frozen` values), `display` (text forms) and `catalog` (registering tags and kinds, all
or nothing, a kind checked by `kind_check`). TVM interop is `tvm_reader` (from TVM: any input
form made a plain config by `tvm_config`, its options' types checked by `tvm_types`, problems
said in the input's terms by `tvm_paths`) and `tvm_writer` (to TVM), sharing the tables in
`tvm_names`.
"""

from __future__ import annotations

from hetsim.target.canonical import canonicalize
from hetsim.target.catalog import (
    add_tag_dir,
    list_tags,
    load_kinds,
    register_kind,
    register_tag,
    remove_tag_dir,
    unregister_tag,
)
from hetsim.target.display import kinds_markdown, render_tree, schema_table
from hetsim.target.kinds import EXECUTORS, KINDS, RUNTIMES, find_kind
from hetsim.target.schema import Attr, Kind
from hetsim.target.tags import TAGS
from hetsim.target.tree import Config, Target, target_argument

__all__ = [
    "EXECUTORS",
    "KINDS",
    "RUNTIMES",
    "TAGS",
    "Attr",
    "Config",
    "Kind",
    "Target",
    "add_tag_dir",
    "canonicalize",
    "find_kind",
    "kinds_markdown",
    "list_tags",
    "load_kinds",
    "register_kind",
    "register_tag",
    "remove_tag_dir",
    "render_tree",
    "schema_table",
    "target_argument",
    "unregister_tag",
]
