"""A tag may not take a kind's name in any letter case: tag names match ignoring case, so a tag
``VM`` was found for the kind ``vm`` wherever a tag is looked up before that kind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hetsim.cli import main
from hetsim.errors import TargetError
from hetsim.target import TAGS, Target, add_tag_dir, register_tag

MakeTags = Callable[..., Path]


@pytest.mark.parametrize(
    ("file", "kind"),
    [
        ("Cuda.yaml", "the target kind 'cuda'"),
        ("VM.yaml", "the executor kind 'vm'"),
        ("CPP.json", "the runtime kind 'cpp'"),
    ],
)
def test_a_tag_named_like_a_kind_in_another_case_is_rejected(
    tag_folder: MakeTags, file: str, kind: str
) -> None:
    text = '{"kind": "npu"}' if file.endswith(".json") else "kind: npu\n"
    folder = tag_folder({file: text}, register=False)
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    name = Path(file).stem
    assert str(err.value) == (
        f"{folder / file}: tags[{name}]: expected a tag name that is not a kind name, got {kind}"
    )
    assert name not in TAGS


def test_a_folder_of_such_tags_is_refused_whole_and_kinds_keep_their_names(
    tag_folder: MakeTags,
) -> None:
    folder = tag_folder(
        {
            "VM.yaml": "kind: npu\n",
            "Cuda.yaml": "kind: npu\ncores: 2\n",
            "lab/ok.yaml": "kind: npu\n",
        },
        register=False,
    )
    with pytest.raises(TargetError) as err:
        add_tag_dir(folder)
    assert [p.message for p in err.value.problems] == [
        f"{folder / 'Cuda.yaml'}: tags[Cuda]: expected a tag name that is not a kind name, got "
        "the target kind 'cuda'",
        f"{folder / 'VM.yaml'}: tags[VM]: expected a tag name that is not a kind name, got the "
        "executor kind 'vm'",
    ]
    assert "lab/ok" not in TAGS  # all or nothing
    with pytest.raises(TargetError, match=r"^expected a target, got executor kind 'vm'$"):
        Target("vm")  # it was the tag: devices=[dev0: npu[VM]]
    with pytest.raises(
        TargetError, match=r"^unknown kind or tag 'CUDA' \(did you mean 'cuda'\?\)$"
    ):
        Target("CUDA")  # it was the tag's NPU


def test_a_tag_registered_from_python_named_like_a_kind_in_another_case_is_rejected() -> None:
    with pytest.raises(TargetError) as err:
        register_tag("Hetero", {"kind": "npu"})
    assert str(err.value) == (
        "tags[Hetero]: expected a tag name that is not a kind name, got the target kind 'hetero'"
    )
    assert "Hetero" not in TAGS


def test_show_of_a_kind_is_not_taken_over_by_a_tag_folder(
    capsys: pytest.CaptureFixture[str], tag_folder: MakeTags
) -> None:
    folder = tag_folder({"VM.yaml": "kind: npu\n"}, register=False)
    assert main(["targets", "show", "vm", "--tags", str(folder)]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == (
        "",
        f"error: {folder / 'VM.yaml'}: tags[VM]: expected a tag name that is not a kind name, "
        "got the executor kind 'vm'\n",
    )


EXECUTOR_TAG = (
    "tag: expected a target tag (a platform's or a device's), got executor tag 'tvm/relax-vm' "
    "(of kind 'vm')"
)


def test_an_executor_tag_as_a_target_is_named_as_the_tag_written(tmp_path: Path) -> None:
    # it said "kind: expected a target kind, got executor kind 'vm'": a kind the user never
    # wrote, at no line of the file
    for spec in ("tvm/relax-vm", {"tag": "tvm/relax-vm"}):
        with pytest.raises(TargetError) as err:
            Target(spec)
        assert [p.message for p in err.value.problems] == [EXECUTOR_TAG]
    path = tmp_path / "t.yaml"
    path.write_text("kind: hetero\nhost: x86-cpu\ndevices:\n  - tag: tvm/relax-vm\n")
    with pytest.raises(TargetError) as err:
        Target(path)
    assert [p.message for p in err.value.problems] == [f"{path}:4: devices[dev0].{EXECUTOR_TAG}"]
