"""`hetsim.compare` given bad input: each mistake is a `HetsimError` that names it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hetsim.cli import compare as compare_cli
from hetsim.cli import main
from hetsim.compare import MAX_ITERATIONS, Comparison, StrategyRun, compare, dims_trace, load_shapes
from hetsim.compare.traces import MAX_SIZE, check_iterations
from hetsim.errors import HetsimError, ModelError
from hetsim.sim.graphs import GraphStats


def _raises(message: str, error: type[Exception] = HetsimError) -> Any:
    return pytest.raises(error, match=f"^{re.escape(message)}$")


def test_the_api_caps_iterations_where_the_cli_does() -> None:
    assert MAX_ITERATIONS == compare_cli.MAX_ITERATIONS == 1_000_000


def test_a_count_past_the_cap_is_refused_before_the_trace_is_made() -> None:
    # 10**12 iterations of a spec raised a MemoryError making the list of dims
    with _raises("iterations: expected an integer from 1 to 1000000, got 1000000000000"):
        dims_trace("fixed:3", 10**12)
    check_iterations(MAX_ITERATIONS)  # the cap itself is allowed


@pytest.mark.parametrize("spec", [None, 5, b"fixed:3"])
def test_a_spec_that_is_not_a_str_is_an_error(spec: object) -> None:
    # it raised AttributeError: 'NoneType' object has no attribute 'partition'
    expected = "expected fixed:N, uniform:LO:HI or decode:START[:STEP]"
    with _raises(f"--seq-dist: {expected}, got {spec!r}"):
        dims_trace(spec, 2)  # type: ignore[arg-type]


def test_a_spec_with_a_digit_int_cannot_read_is_an_error() -> None:
    # '²' passed str.isdigit and int('²') raised a ValueError
    expected = "expected fixed:N, uniform:LO:HI or decode:START[:STEP]"
    with _raises(f"--seq-dist: {expected}, got 'fixed:²'"):
        dims_trace("fixed:²", 2)


def test_a_spec_may_use_any_decimal_digits() -> None:
    assert dims_trace("decode:٣", 2) == ({"seq": 3}, {"seq": 4})


def test_a_spec_past_an_int64_is_an_error() -> None:
    # uniform raised numpy's ValueError: high is out of bounds for int64
    spec = f"uniform:1:{2**63}"
    with _raises(f"--seq-dist: expected numbers up to 2**63 - 1, got {spec!r}"):
        dims_trace(spec, 2)
    assert len(dims_trace(f"uniform:1:{2**63 - 1}", 2)) == 2


HUGE = "9" * 5000
"""An integer of more digits than int() reads (4,300)."""


def test_a_spec_number_of_more_digits_than_int_reads_is_an_error() -> None:
    # int() raised its ValueError: Exceeds the limit (4300 digits) for integer string conversion
    with _raises(f"--seq-dist: expected numbers up to 2**63 - 1, got 'fixed:{HUGE}'"):
        dims_trace(f"fixed:{HUGE}", 2)


@pytest.mark.parametrize(
    ("text", "item"),
    [
        (f"1 2 {HUGE}\n", repr(HUGE)),
        (f'["{HUGE}"]', repr(HUGE)),
        (f'[{{"seq": "{HUGE}"}}]', repr({"seq": HUGE})),
        (f"4 {2**63}\n", repr(str(2**63))),
        (f"[4, {2**63}]", repr(2**63)),
    ],
    ids=["text-of-5000-digits", "json-str-of-5000-digits", "json-dims-of-5000-digits",
         "text-past-int64", "json-past-int64"],
)  # fmt: skip
def test_a_shapes_size_past_an_int64_is_an_error(text: str, item: str, tmp_path: Path) -> None:
    # 5000 digits raised int()'s ValueError; 2**63 ran, to fail as an out-of-memory error
    path = tmp_path / "shapes.txt"
    path.write_text(text)
    with _raises(f"--shapes {path}: expected integer sizes up to 2**63 - 1, got {item}"):
        load_shapes(path)
    with _raises(f"--shapes {path}: expected integer sizes up to 2**63 - 1, got {item}"):
        load_shapes(path, dims=())  # a static model, whose iterations the sizes only count


def test_a_shapes_size_of_an_int64_is_taken(tmp_path: Path) -> None:
    path = tmp_path / "shapes.txt"
    path.write_text(f"4 {MAX_SIZE}\n")
    assert load_shapes(path) == ({"seq": 4}, {"seq": MAX_SIZE})


def test_compare_names_a_number_of_more_digits_than_int_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a traceback: ValueError: Exceeds the limit (4300 digits) for integer string conversion
    path = tmp_path / "shapes.txt"
    path.write_text(f"1 2 {HUGE}\n")
    command = ["compare", "transformer", "--target", "x86-h100"]
    assert main([*command, "--shapes", str(path)]) == 1
    error = capsys.readouterr().err
    assert (
        error == f"error: --shapes {path}: expected integer sizes up to 2**63 - 1, got '{HUGE}'\n"
    )
    with pytest.raises(SystemExit) as exit_info:  # a spec's form: read with the command line
        main([*command, "--seq-dist", f"fixed:{HUGE}"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"hetsim compare: error: argument --seq-dist: expected numbers up to 2**63 - 1, got "
        f"'fixed:{HUGE}'"
    )


@pytest.mark.parametrize("dims", ["seq", None, [1]])
def test_dims_must_be_a_sequence_of_names(dims: object, tmp_path: Path) -> None:
    # "seq" drew the dims 's', 'e' and 'q'; None raised TypeError: not iterable
    path = tmp_path / "shapes.txt"
    path.write_text("4 8\n")
    with _raises(f"dims: expected a sequence of dim names, got {dims!r}"):
        dims_trace("fixed:3", 2, dims=dims)  # type: ignore[arg-type]
    with _raises(f"dims: expected a sequence of dim names, got {dims!r}"):
        load_shapes(path, dims=dims)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", [None, 1])
def test_a_shapes_path_that_is_not_a_path_is_an_error(path: object) -> None:
    # it raised pathlib's TypeError: expected str, bytes or os.PathLike object
    expected = "expected a path to a shapes file (a str or an os.PathLike)"
    with _raises(f"--shapes: {expected}, got {path!r}"):
        load_shapes(path)  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "item"), [("4 ²\n", "'²'"), ('[{"seq": "²"}]', "{'seq': '²'}")])
def test_a_shapes_file_with_a_digit_int_cannot_read_is_an_error(
    text: str, item: str, tmp_path: Path
) -> None:
    # '²' passed str.isdigit and int('²') raised a ValueError
    path = tmp_path / "shapes.txt"
    path.write_text(text)
    with _raises(f"--shapes {path}: expected integer sizes >= 0, got {item}"):
        load_shapes(path)


@pytest.mark.parametrize("model", ["transformer", "cnn"])
def test_an_iteration_without_dims_is_an_error(model: str) -> None:
    # None raised TypeError: argument of type 'NoneType' is not iterable (or, for a static
    # model, 'NoneType' object is not iterable)
    message = "trace[1]: dims: expected a mapping of dim name -> size, got None"
    dims = {"seq": 4} if model == "transformer" else {}
    with _raises(message, ModelError):
        compare(model, "x86-h100", ("none",), trace=[dims, None])  # type: ignore[list-item]


COMPARISON = Comparison(
    "m", "t", ({},), (1,), (StrategyRun("none", (2.0,), GraphStats()),), "timing"
)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (None, "plot: expected a path (a str or an os.PathLike), got None"),
        ("chart.json", "plot: expected a .png path (or none), got 'chart.json'"),
    ],
)
def test_a_plot_path_is_checked(path: object, message: str) -> None:
    with _raises(message):
        COMPARISON.plot(path)  # type: ignore[arg-type]


def test_a_plot_to_a_directory_or_a_missing_one_is_refused(tmp_path: Path) -> None:
    # they raised IsADirectoryError and FileNotFoundError from PIL, after drawing the chart
    with _raises(f"plot: expected a file to write, got the directory {str(tmp_path)!r}"):
        COMPARISON.plot(tmp_path)
    path = tmp_path / "missing" / "chart.png"
    message = (
        f"plot: expected a file in an existing directory, got {str(path)!r} "
        f"(no directory {str(tmp_path / 'missing')!r})"
    )
    with _raises(message):
        COMPARISON.plot(path)
