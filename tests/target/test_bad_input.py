"""Odd input at the target boundary: each is a TargetError that names what and where, never a
traceback from inside and never a tree that breaks what reads it later."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hetsim.errors import TargetError
from hetsim.target import Target, add_tag_dir, list_tags, register_tag, unregister_tag
from hetsim.target.sources import MAX_NESTING

TOO_DEEP = f"expected lists and mappings nested at most {MAX_NESTING} deep, got deeper"


def _messages(action: Callable[[], object]) -> list[str]:
    with pytest.raises(TargetError) as err:
        action()
    return [p.message for p in err.value.problems]


def _nested(depth: int) -> Any:
    """`depth` mappings, each the value of the one above: ``{"a": {"a": ... 1}}``."""
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


# the path of the first mapping too deep in a value at `vendor`: nested in MAX_NESTING others
DEEP_PATH = "vendor" + ".a" * (MAX_NESTING - 1)


def test_a_device_named_like_a_memory_is_rejected() -> None:
    # the platform names a processor's memory <path>.mem: a device 'g.mem' beside a device 'g'
    # replaced g's memory node in the platform graph with a processor
    devices = [{"kind": "cuda", "name": "g"}, {"kind": "npu", "name": "g.mem"}]
    spec = {"kind": "hetero", "devices": devices}
    assert _messages(lambda: Target(spec)) == [
        "devices[g.mem].name: expected a name not ending in '.mem' (memories are named so), "
        "got 'g.mem'"
    ]


def test_a_device_node_given_to_target_becomes_a_root() -> None:
    # it came back as it was: a tree whose root is a device, which build_platform read as a
    # level (AttributeError: 'NoneType' object has no attribute 'attrs')
    device = Target("cuda").devices[0]
    root = Target(device)
    assert (root.kind, root.host.kind, root.devices) == ("hetero", "x86-cpu", (device,))  # type: ignore[union-attr]
    level = Target("arm-riscv-soc").devices[0]
    assert Target(level) is level


def test_values_nested_deeper_than_the_limit_are_an_error() -> None:
    # a value nested 900 deep was a RecursionError from copy.deepcopy in the resolver
    assert _messages(lambda: Target({"kind": "cuda", "vendor": _nested(900)})) == [
        f"{DEEP_PATH}: {TOO_DEEP}"
    ]


def test_values_nested_to_the_limit_are_checked_as_usual() -> None:
    assert _messages(lambda: Target({"kind": "cuda", "link": _nested(MAX_NESTING - 1)})) == [
        "link.a: unknown attribute"
    ]


def test_changes_nested_too_deep_are_an_error() -> None:
    soc = Target("arm-riscv-soc")
    assert _messages(lambda: soc.override({"vendor": _nested(900)})) == [f"{DEEP_PATH}: {TOO_DEEP}"]


def test_a_tag_nested_too_deep_is_an_error() -> None:
    assert _messages(lambda: register_tag("py/deep", {"kind": "cuda", "vendor": _nested(900)})) == [
        f"tags[py/deep].{DEEP_PATH}: {TOO_DEEP}"
    ]


def test_a_file_nested_too_deep_names_itself(tmp_path: Path) -> None:
    # json reads 900 levels; Target.load then raised RecursionError, and so did finding the line
    path = tmp_path / "deep.json"
    path.write_text(json.dumps({"kind": "cuda", "vendor": _nested(900)}))
    assert _messages(lambda: Target.load(path)) == [f"{path}: {DEEP_PATH}: {TOO_DEEP}"]


def test_a_tag_file_nested_too_deep_names_itself(tag_folder: Callable[..., Path]) -> None:
    folder = tag_folder({"deep.json": json.dumps(_nested(900))}, register=False)
    path = ".".join(["a"] * MAX_NESTING)
    assert _messages(lambda: add_tag_dir(folder)) == [f"{folder / 'deep.json'}: {path}: {TOO_DEEP}"]


def test_a_tvm_config_nested_too_deep_is_an_error() -> None:
    config: Any = {"kind": "llvm", "mtriple": "x86_64-linux-gnu"}
    for _ in range(600):  # a RecursionError in the reader, one host inside the next
        config = {"kind": "cuda", "host": config}
    path = ".".join(["host"] * MAX_NESTING)
    assert _messages(lambda: Target.from_tvm(config)) == [f"{path}: {TOO_DEEP}"]


def test_a_name_too_long_for_a_file_is_an_unknown_name() -> None:
    # pathlib's is_dir() raised OSError (File name too long) after the TargetError
    name = "a" * 300
    assert _messages(lambda: Target(name)) == [f"unknown kind or tag {name!r}"]


def test_a_file_name_too_long_or_with_a_nul_is_named() -> None:
    name = "a" * 300 + ".yaml"
    assert _messages(lambda: Target(name)) == [
        f"{name}: expected a target file, got 'File name too long'"
    ]
    assert _messages(lambda: Target.load("a\0b.yaml")) == [
        "'a\\x00b.yaml': expected a target file, got a name with a NUL"
    ]


def test_an_empty_key_is_named_by_its_repr() -> None:
    assert _messages(lambda: Target({"kind": "cuda", "link": {"": 1}})) == [
        "link.'': unknown attribute"
    ]


def test_a_tvm_mattr_string_is_not_read_as_letters() -> None:
    # list('+neon') made ['+', 'n', 'e', 'o', 'n']: 'mattr[0]: ..., got '+''
    config = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": "+neon"}
    assert _messages(lambda: Target.from_tvm(config)) == [
        "mattr: expected a list of strings matching '[+-]?[A-Za-z0-9_.-]+', got '+neon'"
    ]


@pytest.mark.parametrize(
    ("name", "data", "description", "message"),
    [
        # dict(data) raised ValueError / TypeError
        (
            "py/x",
            ["cuda"],
            "",
            "tags[py/x]: expected a mapping (a tag holds one target or config), got ['cuda']",
        ),
        (
            "py/x",
            None,
            "",
            "tags[py/x]: expected a mapping (a tag holds one target or config), got None",
        ),
        # AttributeError: 'int' object has no attribute 'lower'
        (
            3,
            {"kind": "cuda"},
            "",
            "tags[3]: expected a name matching "
            "'[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*', got 3",
        ),
        # registered, and list_tags() gave the int
        ("py/x", {"kind": "cuda"}, 3, "tags[py/x].description: expected a string, got 3"),
    ],
)
def test_register_tag_names_what_is_wrong(
    name: Any, data: Any, description: Any, message: str
) -> None:
    assert _messages(lambda: register_tag(name, data, description)) == [message]


def test_register_tag_keeps_the_description_on_one_line() -> None:
    register_tag("py/two-lines", {"kind": "cuda"}, "a GPU\n  of two lines")
    try:
        assert ("py/two-lines", "a GPU of two lines") in list_tags()
    finally:
        unregister_tag("py/two-lines")


def test_an_empty_tag_file_is_called_empty(tag_folder: Callable[..., Path]) -> None:
    folder = tag_folder({"empty.yaml": "", "list.yaml": "- cuda\n"}, register=False)
    assert _messages(lambda: add_tag_dir(folder)) == [
        f"{folder / 'empty.yaml'}:1: expected a mapping (a tag file holds one target or config), "
        "got an empty file",
        f"{folder / 'list.yaml'}:1: expected a mapping (a tag file holds one target or config), "
        "got list",
    ]


NEITHER = "expected a 'kind' or a 'tag', got neither"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"tags": "arm-riscv-soc"}, f"{NEITHER}, and key 'tags' (did you mean 'tag'?)"),
        ({"device": ["cuda"]}, f"{NEITHER}, and key 'device' (did you mean 'devices'?)"),
        (
            {"kind": "hetero", "devices": [{"name": "g", "Tag": "nvidia/h100"}]},
            f"devices[g]: {NEITHER}, and key 'Tag' (did you mean 'tag'?)",
        ),
        ({"name": "g", "cores": 2}, NEITHER),  # no key near a naming one: nothing to suggest
    ],
)
def test_a_node_without_a_kind_names_the_key_that_misspells_one(
    spec: dict[str, Any], expected: str
) -> None:
    # a misspelt tag or devices key said only "got neither", where every other near miss of a
    # key gets "did you mean" (found by a target audit)
    with pytest.raises(TargetError) as caught:
        Target(spec)
    assert [p.message for p in caught.value.problems] == [expected]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"tag": "arm-riscv-soc", "devices": {"np\nu": {"cores": 2}}},
         "devices[np\\nu]: unknown device"),
        ({"kind": "cuda", "fr\x1b[2Jq": 1}, "fr\\x1b[2Jq: unknown attribute"),
    ],
)  # fmt: skip
def test_a_path_with_control_characters_is_shown_escaped(
    spec: dict[str, object], message: str
) -> None:
    # printed as it was, a newline broke the problem's line, an escape reached the terminal
    with pytest.raises(TargetError) as caught:
        Target(spec)
    assert str(caught.value) == message
