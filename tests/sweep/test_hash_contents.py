"""The sweep hash covers what decides the results: the target's tree and the model files' bytes.

It hashed the ``target`` value and each model as written, so a sweep whose target file (or
.onnx model) was edited kept its hash, and ``--resume`` mixed the results of two platforms in
one file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hetsim.errors import SweepError
from hetsim.sweep import load_sweep, run_sweep
from hetsim.target import add_tag_dir, remove_tag_dir

TARGET = "tag: arm-riscv-soc\nexecutor: {dispatch_us: 0.25}\n"
SWEEP = "target: soc.yaml\nmodels: [mlp]\nvary:\n  devices[vdevice0].link.bandwidth_gbps: [2, 4]\n"


def _full(message: str) -> str:
    return "^" + re.escape(message) + "$"


def _sweep(folder: Path, target: str = TARGET) -> Path:
    """A sweep file in `folder`, with its target file beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "soc.yaml").write_text(target)
    (folder / "sweep.yaml").write_text(SWEEP)
    return folder / "sweep.yaml"


def test_resume_after_editing_the_target_file_is_refused(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    out = tmp_path / "r.jsonl"
    run_sweep(sweep, out=out, workers=0)
    before = load_sweep(sweep).hash
    (tmp_path / "soc.yaml").write_text(TARGET.replace("0.25", "50"))
    after = load_sweep(sweep).hash
    assert after != before
    message = (
        f"{out}: expected results of this sweep (hash {after}), "
        f"got results of another sweep (hash {before}, 'sweep')"
    )
    with pytest.raises(SweepError, match=_full(message)):
        run_sweep(sweep, out=out, workers=0, resume=True)


def test_a_target_file_elsewhere_with_the_same_contents_keeps_the_hash(tmp_path: Path) -> None:
    here = load_sweep(_sweep(tmp_path / "a")).hash
    assert load_sweep(_sweep(tmp_path / "b")).hash == here
    assert load_sweep(_sweep(tmp_path / "c", TARGET.replace("0.25", "50"))).hash != here


def test_a_target_of_the_same_tree_written_otherwise_keeps_the_hash() -> None:
    # the tree decides the results, not how the target was written
    written = {"tag": "arm-riscv-soc", "executor": {"dispatch_us": 0.5}}  # the tag's own
    assert load_sweep({"target": written, "models": ["mlp"]}).hash == (
        load_sweep({"target": "arm-riscv-soc", "models": ["mlp"]}).hash
    )


def test_hash_follows_the_contents_of_a_model_file(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    from hetsim.models import light_model_path

    model = tmp_path / "m.onnx"  # read from the sweep file's folder, not the current one
    (tmp_path / "sweep.yaml").write_text("target: arm-riscv-soc\nmodels: [m.onnx]\n")
    shutil.copyfile(light_model_path("alexnet"), model)
    alexnet = load_sweep(tmp_path / "sweep.yaml").hash
    assert load_sweep(tmp_path / "sweep.yaml").hash == alexnet
    shutil.copyfile(light_model_path("squeezenet"), model)
    assert load_sweep(tmp_path / "sweep.yaml").hash != alexnet
    shutil.copyfile(light_model_path("alexnet"), model)
    assert load_sweep(tmp_path / "sweep.yaml").hash == alexnet


def test_a_model_file_names_its_points_as_the_sweep_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the model was kept as a path from the current folder ('sub/m.onnx', or absolute): the
    # hash and the point ids changed with the folder the sweep ran from, and --resume refused
    # its own results; a worker of a cluster started elsewhere found no such file
    pytest.importorskip("onnx")
    from hetsim.models import light_model_path

    folder = tmp_path / "sub"
    folder.mkdir()
    shutil.copyfile(light_model_path("squeezenet"), folder / "m.onnx")
    sweep = folder / "sweep.yaml"
    sweep.write_text("target: arm-riscv-soc\nmodels: [m.onnx]\n")
    found = {}
    for cwd, spelling in ((folder, "sweep.yaml"), (tmp_path, "sub/sweep.yaml"), (tmp_path, sweep)):
        monkeypatch.chdir(cwd)
        spec = load_sweep(spelling)
        (point,) = spec.points()
        found[str(cwd), str(spelling)] = (spec.hash, point.id, point.params["model"])
        assert point.file == str(folder / "m.onnx")
    assert len(set(found.values())) == 1, found
    assert next(iter(found.values()))[2] == "m.onnx"
    monkeypatch.chdir(tmp_path / "..")  # a worker elsewhere loads it by its absolute path
    out = tmp_path / "r.jsonl"
    run_sweep(load_sweep(sweep), out=out, workers=0)
    assert '"status":"ok"' in out.read_text().splitlines()[1].replace(" ", "")


def test_an_edited_tag_changes_the_hash(tmp_path: Path) -> None:
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "soc.yaml").write_text(TARGET)
    add_tag_dir(tmp_path)
    try:
        spec = load_sweep({"target": "lab/soc", "models": ["mlp"]})
        before = spec.hash
        (tmp_path / "lab" / "soc.yaml").write_text(TARGET.replace("0.25", "50"))
        add_tag_dir(tmp_path)  # read again
        assert load_sweep({"target": "lab/soc", "models": ["mlp"]}).hash != before
        assert spec.hash != before  # the spec's points were made again too
    finally:
        remove_tag_dir(tmp_path)


HASH_OF_A_TAG_SWEEP = """
from hetsim.sweep import load_sweep
print(load_sweep({"target": "arm-riscv-soc", "models": ["mlp"]}).hash)
"""


def test_a_tag_target_hashes_the_same_in_every_process() -> None:
    # workers and --resume compare hashes made in other processes, whose str hashes differ
    hashes = set()
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", HASH_OF_A_TAG_SWEEP],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env=os.environ | {"PYTHONHASHSEED": seed},
        )
        assert done.returncode == 0, done.stderr
        hashes.add(done.stdout.strip())
    assert hashes == {load_sweep({"target": "arm-riscv-soc", "models": ["mlp"]}).hash}


def test_hash_follows_a_model_s_external_weights(tmp_path: Path) -> None:
    # a model whose weights live in another file was hashed by its main file only
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    def save(weight: float) -> None:
        w = numpy_helper.from_array(np.full((4, 4), weight, np.float32), "w")
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
            "external",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])],
            [w],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        (tmp_path / "m.data").unlink(missing_ok=True)  # onnx appends to an existing one
        onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True,
                  all_tensors_to_one_file=True, location="m.data", size_threshold=0)  # fmt: skip

    (tmp_path / "sweep.yaml").write_text("target: x86-h100\nmodels: [m.onnx]\nmode: functional\n")
    save(1.0)
    first = load_sweep(tmp_path / "sweep.yaml").hash
    main_file = (tmp_path / "m.onnx").read_bytes()
    save(2.0)
    assert (tmp_path / "m.onnx").read_bytes() == main_file  # only the weights' file changed
    assert load_sweep(tmp_path / "sweep.yaml").hash != first
    save(1.0)
    assert load_sweep(tmp_path / "sweep.yaml").hash == first
