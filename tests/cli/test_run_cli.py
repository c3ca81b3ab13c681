"""``hetsim run``: options, what it prints, the files it writes (with a stand-in simulate)."""

from __future__ import annotations

import errno
import io
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetsim.cli import build_parser, main
from hetsim.cli import run as run_command
from hetsim.report import Result, chrome_trace, format_summary
from hetsim.report.tables import rich_console
from tests.report.scenarios import two_level_record


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the simulator by one that records its arguments and returns the hand-made run."""
    seen: list[dict[str, Any]] = []

    def simulate(model: str, target: str, **options: Any) -> Result:
        seen.append({"model": model, "target": target, **options})
        return Result.from_record(two_level_record())

    monkeypatch.setattr(run_command, "_simulate", simulate)
    return seen


def test_parser_defaults() -> None:
    args = build_parser().parse_args(["run", "mlp", "--target", "cuda"])
    assert (args.model, args.target, args.mode, args.seed, args.dims) == (
        "mlp", "cuda", "functional", 0, {},
    )  # fmt: skip
    assert (args.inputs, args.save_outputs, args.trace, args.gantt, args.json) == (
        None, None, None, None, False,
    )  # fmt: skip


def test_parser_reads_every_option() -> None:
    args = build_parser().parse_args(
        ["run", "m.onnx", "--target", "t.yaml", "--mode", "timing", "--inputs", "in.npz",
         "--save-outputs", "out.npz", "--trace", "t.json", "--gantt", "g.png", "--json",
         "--seed", "7", "--dims", "seq=128,batch=2", "--dims", "heads=4"]
    )  # fmt: skip
    assert args.mode == "timing"
    assert args.seed == 7
    assert args.dims == {"seq": 128, "batch": 2, "heads": 4}  # every --dims, merged
    assert (args.inputs, args.save_outputs) == (Path("in.npz"), Path("out.npz"))
    assert (args.trace, args.gantt, args.json) == (Path("t.json"), Path("g.png"), True)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "mlp"], "the following arguments are required: --target"),
        (
            ["run", "mlp", "--target", "cpu", "--dims", "seq"],
            "argument --dims: expected name=value pairs such as seq=128, got 'seq'",
        ),
        (
            ["run", "mlp", "--target", "cpu", "--dims", "seq=long"],
            "argument --dims: expected name=value pairs such as seq=128, got 'seq=long'",
        ),
        (
            # said "expected name=value pairs such as seq=128", though it is one
            ["run", "mlp", "--target", "cpu", "--dims", "seq=-1"],
            "argument --dims: seq: expected an integer >= 0, got -1",
        ),
        (
            ["run", "mlp", "--target", "cpu", "--dims", "seq=4,seq=8"],
            "argument --dims: expected each dim once, got 'seq' twice",
        ),
        (
            ["run", "mlp", "--target", "cpu", "--mode", "fast"],
            "argument --mode: invalid choice: 'fast'",  # the rest is worded by the Python version
        ),
        (  # these two were errors with status 1, after the model and target were read
            ["run", "mlp", "--target", "cpu", "--partition", "costs"],
            "argument --partition: expected one of capability, cost, rules, got 'costs'",
        ),
        (
            ["run", "mlp", "--target", "cpu", "--cuda-graph", "foo"],
            "argument --cuda-graph: expected one of none, whole, regions, buckets, got 'foo'",
        ),
    ],
    ids=[
        "no-target",
        "dims-no-pair",
        "dims-not-integer",
        "dims-negative",
        "dims-twice",
        "bad-mode",
        "bad-partition",
        "bad-cuda-graph",
    ],
)
def test_bad_arguments_exit_with_usage(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_run_prints_the_summary(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rich.console", None)
    assert main(["run", "mlp", "--target", "cuda"]) == 0
    expected = format_summary(Result.from_record(two_level_record()))
    # headed by the model and the target as given, which the summary had not named
    assert capsys.readouterr().out == "mlp on cuda, functional mode\n" + expected + "\n"
    assert calls == [{"model": "mlp", "target": "cuda", "seed": 0, "mode": "functional"}]


def test_run_passes_seed_mode_dims_and_inputs(calls: list[dict[str, Any]], tmp_path: Path) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.savez(tmp_path / "in.npz", x=x)
    path = str(tmp_path / "in.npz")
    argv = ["run", "tiny.onnx", "--target", "t.toml", "--mode", "timing", "--seed", "3",
            "--inputs", path, "--dims", "seq=16", "--dims", "batch=2"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    (call,) = calls
    inputs = call.pop("inputs")
    assert call == {
        "model": "tiny.onnx",
        "target": "t.toml",
        "seed": 3,
        "mode": "timing",
        "dims": {"seq": 16, "batch": 2},
    }
    assert list(inputs) == ["x"]
    np.testing.assert_array_equal(inputs["x"], x)
    assert inputs["x"].dtype == np.float32


def test_run_passes_the_partition_policy_and_rules(
    calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    rules = tmp_path / "rules.yaml"
    argv = ["run", "mlp", "--target", "cuda", "--partition", "rules", "--rules", str(rules)]
    assert main([*argv, "--json"]) == 0
    (call,) = calls
    assert (call["partition"], call["rules"]) == ("rules", rules)


@pytest.mark.parametrize("command", ["run", "plan"])
def test_partition_rules_without_rules_says_which_option_is_missing(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # it said "rules: expected a list of rules or a YAML file for policy 'rules', got None",
    # the API's words for an argument the command line does not have
    assert main([command, "cnn", "--target", "arm-riscv-soc", "--partition", "rules"]) == 1
    assert capsys.readouterr().err == (
        "error: --partition rules: expected --rules FILE (the placement rules), got none\n"
    )


def test_run_json_prints_the_result_dict(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "mlp", "--target", "cuda", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == Result.from_record(two_level_record()).to_dict()


def test_run_writes_trace_gantt_and_outputs(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace, gantt, outputs = tmp_path / "t.json", tmp_path / "g.png", tmp_path / "out.npz"
    argv = ["run", "mlp", "--target", "cuda", "--json", "--trace", str(trace),
            "--gantt", str(gantt), "--save-outputs", str(outputs)]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(trace.read_text()) == chrome_trace(two_level_record())
    assert gantt.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with np.load(outputs) as saved:
        assert sorted(saved.files) == ["file", "y"]  # "file" would break np.savez(**outputs)
        np.testing.assert_array_equal(saved["y"], np.full((2, 2), 0.5))
        np.testing.assert_array_equal(saved["file"], np.arange(3))
    assert capsys.readouterr().err == (
        f"wrote outputs to {outputs}\nwrote trace to {trace}\nwrote Gantt chart to {gantt}\n"
    )


def _save_outputs(
    monkeypatch: pytest.MonkeyPatch, path: Path, outputs: dict[str, np.ndarray]
) -> int:
    """The status of ``hetsim run ... --save-outputs path`` whose run returns `outputs`."""
    record = two_level_record(outputs=outputs)
    monkeypatch.setattr(run_command, "_simulate", lambda *a, **k: Result.from_record(record))
    return main(["run", "odd.onnx", "--target", "cuda", "--save-outputs", str(path)])


def test_outputs_np_load_reads_under_one_key_are_not_saved(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # np.load(path)["y.npy"] read member y.npy, output y's, not output y.npy (member y.npy.npy)
    path = tmp_path / "out.npz"
    assert _save_outputs(monkeypatch, path, {"y": np.zeros(2), "y.npy": np.ones(2)}) == 1
    assert capsys.readouterr() == (
        "",
        f"error: --save-outputs {path}: expected output names np.load tells apart, got 'y' and "
        "'y.npy' (its key 'y.npy' reads output 'y', stored as y.npy)\n",
    )
    assert not path.exists()


def test_outputs_named_with_npy_alone_are_saved_as_np_load_reads_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "out.npz"
    assert _save_outputs(monkeypatch, path, {"y.npy": np.ones(2), "z": np.zeros(1)}) == 0
    with np.load(path) as saved:
        assert sorted(saved.files) == ["y.npy", "z"]
        np.testing.assert_array_equal(saved["y.npy"], np.ones(2))


def test_saving_outputs_of_a_timing_run_is_an_error(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "mlp", "--target", "cuda", "--mode", "timing",
            "--save-outputs", str(tmp_path / "o.npz")]  # fmt: skip
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        "error: --save-outputs: expected --mode functional (timing mode computes no values), "
        "got 'timing'\n"
    )
    assert calls == []


def test_an_input_named_like_another_with_npy_reads_its_own_array(
    calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    # numpy's key lookup takes "a.npy" for member a.npy, input a's: d = a - a.npy read [0, 0]
    a, b = np.array([1.0, 2.0], np.float32), np.array([-10.0, -20.0], np.float32)
    np.savez(tmp_path / "in.npz", **{"a": a, "a.npy": b})
    path = str(tmp_path / "in.npz")
    assert main(["run", "tiny.onnx", "--target", "t.toml", "--inputs", path, "--json"]) == 0
    inputs = calls[0]["inputs"]
    assert sorted(inputs) == ["a", "a.npy"]
    np.testing.assert_array_equal(inputs["a"], a)
    np.testing.assert_array_equal(inputs["a.npy"], b)


def test_an_array_member_named_without_npy_is_read(
    calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    # read by its bytes, as numpy reads it: the name alone had it refused
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.arange(3, dtype=np.float32))
    path = tmp_path / "in.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x", buffer.getvalue())
    assert main(["run", "tiny.onnx", "--target", "t.toml", "--inputs", str(path), "--json"]) == 0
    np.testing.assert_array_equal(calls[0]["inputs"]["x"], [0, 1, 2])


def test_inputs_that_are_one_array_are_an_error(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "x.npy", np.zeros(3))
    assert main(["run", "mlp", "--target", "cuda", "--inputs", str(tmp_path / "x.npy")]) == 1
    assert capsys.readouterr().err == (
        f"error: --inputs {tmp_path / 'x.npy'}: expected an .npz file of named arrays, "
        "got one array\n"
    )


def _npz_bytes(compress: bool = False) -> bytes:
    """An .npz of one float32 array 'x' of 1,000 elements, as bytes."""
    buffer = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buffer, x=np.arange(1000, dtype=np.float32))
    return buffer.getvalue()


def _npy_header(shape: tuple[int, ...]) -> bytes:
    buffer = io.BytesIO()
    header = {"descr": "<f4", "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def _zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _flipped(data: bytes, start: int, stop: int) -> bytes:
    """`data` with the bytes from `start` to `stop` inverted: damage a copy would take."""
    damaged = bytearray(data)
    for i in range(start, stop):
        damaged[i] ^= 0xFF
    return bytes(damaged)


def _with_entry_flags(data: bytes, *, method: int | None = None, flags: int = 0) -> bytes:
    """`data`, a zip of one entry, with the entry's compression method or flag bits changed in
    both its local header and the central directory."""
    damaged = bytearray(data)
    for offset in (0, data.index(b"PK\x01\x02") + 2):  # the central entry's fields sit 2 later
        damaged[offset + 6] |= flags
        if method is not None:
            damaged[offset + 8 : offset + 10] = method.to_bytes(2, "little")
    return bytes(damaged)


NPZ_HEADER = 30 + len("x.npy")  # a zip's local header, then the first entry's bytes

BAD_INPUTS = {
    # np.load raised EOFError: No data left in file
    "empty": (b"", "got an empty file"),
    "text": (b"x = 1\n", "got an unreadable file"),
    "truncated": (_npz_bytes()[:2000], "got a truncated or damaged zip archive"),
    "only-zip-magic": (b"PK\x03\x04", "got a truncated or damaged zip archive"),
    "damaged-entry": (
        _flipped(_npz_bytes(), NPZ_HEADER + 200, NPZ_HEADER + 260),
        "got an entry 'x' it cannot read: Bad CRC-32 for file 'x.npy'",
    ),
    "entry-cut-short": (
        _zip_of({"x.npy": _npy_header((1000,)) + bytes(100)}),
        "got an entry 'x' it cannot read: EOF: reading array data, expected 4000 bytes got 100",
    ),
    # numpy's _ArrayMemoryError: Unable to allocate 36.4 TiB
    "entry-claiming-a-huge-shape": (
        _zip_of({"x.npy": _npy_header((10**13,)) + bytes(64)}),
        "got an entry 'x' it cannot read: Unable to allocate 36.4 TiB for an array with shape "
        "(10000000000000,) and data type float32",
    ),
    # RuntimeError: File 'x.npy' is encrypted, password required for extraction
    "encrypted-entry": (
        _with_entry_flags(_npz_bytes(), flags=1),
        "got an entry 'x' it cannot read: File 'x.npy' is encrypted, password required for "
        "extraction",
    ),
    # NotImplementedError: That compression method is not supported
    "unknown-compression": (
        _with_entry_flags(_npz_bytes(), method=99),
        "got an entry 'x' it cannot read: That compression method is not supported",
    ),
    # its raw bytes went to the simulator as an input
    "entry-not-an-array": (_zip_of({"x": b"hello"}), "got an entry 'x' that is not an array"),
    # a timing run took it for no --inputs at all
    "no-arrays": (_zip_of({}), "got an archive with no arrays"),
}


@pytest.mark.parametrize(("data", "got"), BAD_INPUTS.values(), ids=BAD_INPUTS)
def test_inputs_that_are_not_a_readable_npz_are_an_error(
    data: bytes,
    got: str,
    calls: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "in.npz"
    path.write_bytes(data)
    argv = ["run", "mlp", "--target", "cuda", "--mode", "timing", "--inputs", str(path)]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"error: --inputs {path}: expected an .npz file of named arrays, {got}\n"
    )
    assert calls == []


def test_inputs_with_a_damaged_compressed_entry_are_an_error(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # zlib.error as a traceback; what zlib says after "Error -3" depends on the bytes and zlib
    path = tmp_path / "in.npz"
    path.write_bytes(_flipped(_npz_bytes(compress=True), NPZ_HEADER + 5, NPZ_HEADER + 60))
    assert main(["run", "mlp", "--target", "cuda", "--inputs", str(path)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        f"error: --inputs {path}: expected an .npz file of named arrays, got an entry 'x' it "
        "cannot read: Error -3 while decompressing data: "
    )


def test_inputs_of_one_array_claiming_a_huge_shape_are_an_error(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # numpy's _ArrayMemoryError: np.load reads an .npy whole before it says it is one array
    path = tmp_path / "in.npy"
    path.write_bytes(_npy_header((10**13,)) + bytes(64))
    assert main(["run", "mlp", "--target", "cuda", "--inputs", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"error: --inputs {path}: expected an .npz file of named arrays, got one array it cannot "
        "read: Unable to allocate 36.4 TiB for an array with shape (10000000000000,) and data "
        "type float32\n"
    )


def test_inputs_that_cannot_be_opened_are_an_error(
    calls: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(path: Path, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(np, "load", refuse)  # tests may run as root, whom chmod does not stop
    path = tmp_path / "in.npz"
    assert main(["run", "mlp", "--target", "cuda", "--inputs", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"error: --inputs {path}: expected a file it can read, got Permission denied\n"
    )


def test_missing_inputs_file_is_an_error(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none.npz"
    assert main(["run", "mlp", "--target", "cuda", "--inputs", str(missing)]) == 1
    assert capsys.readouterr().err == (
        f"error: --inputs {missing}: expected an .npz file of named arrays, got no such file\n"
    )


def test_inputs_that_are_a_directory_are_an_error(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "mlp", "--target", "cuda", "--inputs", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"error: --inputs {tmp_path}: expected an .npz file of named arrays, got a directory\n"
    )


def test_inputs_holding_an_object_array_are_an_error(
    calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.npz"
    np.savez(path, x=np.array([{"a": 1}], dtype=object))  # loads only with pickles allowed
    assert main(["run", "mlp", "--target", "cuda", "--inputs", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"error: --inputs {path}: expected an .npz file of named arrays, got an entry 'x' it "
        "cannot read: Object arrays cannot be loaded when allow_pickle=False\n"
    )
    assert calls == []


@pytest.mark.parametrize(
    ("option", "writer"),
    [("--trace", "to_chrome_trace"), ("--gantt", "plot_gantt"), ("--save-outputs", None)],
)
def test_a_file_that_cannot_be_written_names_its_option(
    calls: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    option: str,
    writer: str | None,
) -> None:
    # a read-only folder or a full disk shows only when writing, after the simulation
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    if writer is None:
        monkeypatch.setattr(run_command, "_save_outputs", refuse)
    else:
        monkeypatch.setattr(Result, writer, refuse)
    path = tmp_path / "out"  # no suffix: the chart's .png, the trace's .json, the .npz agree
    assert main(["run", "mlp", "--target", "cuda", option, str(path)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {option} {path}: expected a file it can write, got No space left on device"
    )


def test_any_other_os_error_is_a_message_not_a_traceback(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied", "/somewhere/model.onnx")

    monkeypatch.setattr(run_command, "_simulate", refuse)
    assert main(["run", "mlp", "--target", "cuda"]) == 1
    assert capsys.readouterr().err == "error: /somewhere/model.onnx: Permission denied\n"


@pytest.mark.parametrize("target", ["x86-cpu", "arm/cortex-a72", "x86-h100"])
def test_functional_run_saves_the_outputs_of_the_eager_reference(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("hetsim.api", reason="hetsim.api.simulate is not written yet")
    from hetsim.kernels import execute
    from hetsim.models import load_model

    graph = load_model("mlp")
    rng = np.random.default_rng(5)
    inputs = {
        name: rng.standard_normal(t.shape).astype(t.dtype) for name, t in graph.inputs.items()
    }
    np.savez(tmp_path / "in.npz", **inputs)
    argv = ["run", "mlp", "--target", target, "--inputs", str(tmp_path / "in.npz"),
            "--save-outputs", str(tmp_path / "out.npz"), "--json"]  # fmt: skip
    assert main(argv) == 0
    figures = json.loads(capsys.readouterr().out)
    expected = execute(graph, inputs)
    with np.load(tmp_path / "out.npz") as saved:
        assert sorted(saved.files) == sorted(expected)
        for name, value in expected.items():
            np.testing.assert_allclose(saved[name], value, rtol=1e-6, atol=1e-6)
    # One thread per resource: the breakdown covers every processor for the whole makespan.
    total = sum(figures["breakdown_us"].values())
    assert total == pytest.approx(len(figures["processors"]) * figures["makespan_us"])


def test_no_fuse_saves_the_op_by_op_values_and_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hetsim.api import make_inputs
    from hetsim.kernels import execute
    from hetsim.models import load_model

    graph = load_model("cnn")  # BatchNormalizations after Convs: fused by default
    inputs = make_inputs(graph, 0)
    figures = {}
    for fuse, flags in [(True, []), (False, ["--no-fuse"])]:
        out = tmp_path / f"{fuse}.npz"
        argv = ["run", "cnn", "--target", "x86-h100", "--save-outputs", str(out), "--json"]
        assert main([*argv, *flags]) == 0
        figures[fuse] = json.loads(capsys.readouterr().out)
        expected = execute(graph, inputs, fuse=fuse)
        with np.load(out) as saved:
            for name, value in expected.items():
                np.testing.assert_array_equal(saved[name], value)
    assert figures[True] == figures[False]


def test_timing_run_reports_the_functional_makespan(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("hetsim.api", reason="hetsim.api.simulate is not written yet")
    makespans = []
    for mode in ("functional", "timing"):
        assert main(["run", "cnn", "--target", "x86-h100", "--mode", mode, "--json"]) == 0
        makespans.append(json.loads(capsys.readouterr().out)["makespan_us"])
    assert makespans[0] == makespans[1]


def test_inputs_of_another_dtype_than_the_model_declares_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.savez(tmp_path / "in.npz", x=np.zeros((1, 64), np.int64))
    argv = ["run", "mlp", "--target", "x86-h100", "--inputs", str(tmp_path / "in.npz")]
    assert main(argv) == 1
    assert capsys.readouterr() == ("", "error: input 'x': expected float32 array, got int64\n")


def _flagged_target(tmp_path: Path, devices: dict[str, object]) -> str:
    path = tmp_path / "flagged.json"
    path.write_text(json.dumps({"tag": "x86-h100", "devices": devices}))
    return str(path)


def test_cuda_graph_none_overrides_the_targets_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A device's ``cuda_graph: true`` asks for graphs; ``--cuda-graph none`` says no to them,
    as ``simulate(cuda_graph="none")`` does: the run equals the plain tag's, with no capture."""
    flagged = _flagged_target(tmp_path, {"gpu0": {"cuda_graph": True}})
    runs = {}
    for name, argv in (
        ("plain", ["--target", "x86-h100"]),
        ("flagged", ["--target", flagged]),
        ("none", ["--target", flagged, "--cuda-graph", "none"]),
    ):
        assert main(["run", "mlp", "--mode", "timing", "--json", *argv]) == 0
        runs[name] = json.loads(capsys.readouterr().out)
    assert runs["flagged"]["breakdown_us"]["capture"] > 0
    assert runs["none"]["breakdown_us"]["capture"] == 0
    assert runs["none"]["makespan_us"] == runs["plain"]["makespan_us"]


def test_cuda_graph_note_from_the_targets_flags_names_no_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "flagged.json"
    target.write_text(
        json.dumps({"tag": "two-node-h100", "devices": {"node1": {"devices": {"gpu0": {
            "cuda_graph": True}}}}})
    )  # fmt: skip
    assert main(["run", "mlp", "--mode", "timing", "--json", "--target", str(target)]) == 0
    err = capsys.readouterr().err
    assert "note: node1/gpu0: cuda_graph is set, but only the root level's kernels" in err
    assert "--cuda-graph" not in err


def test_outputs_saved_to_dev_null_are_discarded(capsys: pytest.CaptureFixture[str]) -> None:
    # zipfile seeks in the file it writes, and /dev/null's seek "succeeds" at 0: struct.error,
    # a traceback; a pipe or /dev/null now takes the archive made in memory
    devnull = Path(os.devnull)
    if not devnull.exists() or devnull.is_file():
        pytest.skip("no character-device /dev/null here")
    assert main(["run", "mlp", "--target", "x86-h100", "--save-outputs", str(devnull)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == f"wrote outputs to {devnull}"


@pytest.mark.parametrize(
    ("first", "second"), [("--trace", "--gantt"), ("--save-outputs", "--trace")]
)
def test_two_outputs_naming_one_file_are_refused(
    first: str, second: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the later write replaced the earlier, both reported written: --trace out --gantt out
    # left a PNG and no trace
    out = tmp_path / "out"
    argv = ["run", "mlp", "--target", "x86-h100", "--mode", "functional", first, str(out)]
    assert main([*argv, second, str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{second} {out}: expected a file of its own, got the file of {first}" in err
    assert not out.exists()


def test_a_rich_summary_to_a_reader_gone_raises_broken_pipe_error() -> None:
    # rich's console exited 1 with nothing said (its on_broken_pipe: `hetsim run ... | head -1`),
    # where the CLI stops quietly on a BrokenPipeError with status 0, as it does with --json
    pytest.importorskip("rich")

    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        rich_console(Gone()).print("makespan")
