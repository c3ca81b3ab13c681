"""Bounds of the integer and address options (``compare --iterations``, ``bench --ops``,
``sweep --workers``, ``sweep --scheduler``) and of list options that must not be empty: a value
out of bounds is a usage error naming the option, when the command line is read."""

from __future__ import annotations

import pytest

from hetsim.cli import build_parser, main
from hetsim.cli import compare as compare_cli
from hetsim.cli.bench import MAX_OPS
from hetsim.cli.compare import MAX_ITERATIONS
from hetsim.cli.sweep import MAX_WORKERS
from hetsim.compare.traces import MAX_SIZE


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last line `main` prints for `argv`, a usage error (exit status 2)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


COMPARE = ["compare", "squeezenet", "--target", "x86-h100"]


@pytest.mark.parametrize("value", ["10000000000000000000", "1000001", "0", "-5", "abc", "1.5"])
def test_iterations_out_of_bounds_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # 10000000000000000000 raised OverflowError in hetsim.compare; 0 and -5 said "iterations:"
    assert _usage_error([*COMPARE, f"--iterations={value}"], capsys) == (
        "hetsim compare: error: argument --iterations: expected an integer from 1 to 1000000, "
        f"got {value!r}"
    )


@pytest.mark.parametrize("value", ["1", str(MAX_ITERATIONS)])
def test_iterations_at_the_bounds_are_taken(value: str) -> None:
    assert build_parser().parse_args([*COMPARE, "--iterations", value]).iterations == int(value)


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_empty_buckets_are_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    # ran the default buckets, as if --buckets were not given
    assert _usage_error([*COMPARE, "--buckets", value], capsys) == (
        "hetsim compare: error: argument --buckets: expected one or more comma-separated "
        f"positive integers, got {value!r}"
    )


@pytest.mark.parametrize("value", ["\u00b2", "16,\u0663"])
def test_buckets_in_digits_int_cannot_read_are_named(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # "²" passed str.isdigit, then int() refused it: argparse's "invalid parse_buckets value"
    bad = value.split(",")[-1]
    assert _usage_error([*COMPARE, "--buckets", value], capsys) == (
        "hetsim compare: error: argument --buckets: expected comma-separated positive "
        f"integers, got {bad!r}"
    )


@pytest.mark.parametrize("value", ["9" * 5000, str(2**63)], ids=["5000-digits", "2**63"])
def test_buckets_past_an_int64_are_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # 5000 digits, more than int() reads: argparse's "invalid parse_buckets value"
    assert _usage_error([*COMPARE, "--buckets", f"1,{value}"], capsys) == (
        "hetsim compare: error: argument --buckets: expected positive integers up to "
        f"2**63 - 1, got {value!r}"
    )


def test_buckets_up_to_an_int64_are_taken() -> None:
    assert compare_cli.MAX_BUCKET == MAX_SIZE == 2**63 - 1
    args = build_parser().parse_args([*COMPARE, "--buckets", f"1,{MAX_SIZE}"])
    assert args.buckets == [1, MAX_SIZE]


def test_an_op_count_past_the_cap_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # built a graph of that many ops until the memory ran out
    argv = ["bench", "dispatch", "--ops", "1,99999999999999999999999"]
    assert _usage_error(argv, capsys) == (
        "hetsim bench dispatch: error: argument --ops: expected op counts of at most 100000, "
        "got 99999999999999999999999"
    )


def test_op_counts_up_to_the_cap_are_taken() -> None:
    args = build_parser().parse_args(["bench", "dispatch", "--ops", f"1,{MAX_OPS}"])
    assert args.ops == (1, MAX_OPS)


SWEEP = ["sweep", "sweep.yaml"]


@pytest.mark.parametrize("value", ["-1", "257", "99999999999999999999999", "abc"])
def test_workers_out_of_bounds_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # a huge count kept Dask starting worker processes; -1 said "workers:" after the sweep loaded
    assert _usage_error([*SWEEP, f"--workers={value}"], capsys) == (
        f"hetsim sweep: error: argument --workers: expected an integer from 0 to 256, got {value!r}"
    )


@pytest.mark.parametrize("value", ["0", str(MAX_WORKERS)])
def test_workers_at_the_bounds_are_taken(value: str) -> None:
    assert build_parser().parse_args([*SWEEP, "--workers", value]).workers == int(value)


FORM = (
    "expected an address [SCHEME://]HOST:PORT such as tcp://10.0.0.5:8786 (an IPv6 host in "
    "brackets: [::1]:8786), got "
)


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("tcp://host:notaport", "expected a port from 1 to 65535, got 'notaport' in "
                                "'tcp://host:notaport'"),
        ("tcp://host:99999", "expected a port from 1 to 65535, got '99999' in 'tcp://host:99999'"),
        ("host:0", "expected a port from 1 to 65535, got '0' in 'host:0'"),
        ("tcp://host:8786/x", "expected a port from 1 to 65535, got '8786/x' in "
                              "'tcp://host:8786/x'"),
        ("foo://host:1", "expected a scheme among tcp, tls, ws, wss, got 'foo' in 'foo://host:1'"),
        (":::", FORM + "':::'"),
        ("", FORM + "''"),
        ("tcp://", FORM + "'tcp://'"),
        ("host", FORM + "'host'"),
        ("::1:8786", FORM + "'::1:8786'"),
        ("user@host:1", FORM + "'user@host:1'"),
    ],
    ids=["port-not-a-number", "port-too-large", "port-zero", "path", "unknown-scheme",
         "colons", "empty", "no-host", "no-port", "ipv6-without-brackets", "user"],
)  # fmt: skip
def test_a_malformed_scheduler_address_is_a_usage_error(
    address: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # ValueError tracebacks from distributed (invalid literal for int(), invalid address ':::',
    # missing port number, unknown address scheme), after the sweep file was loaded
    assert _usage_error([*SWEEP, "--scheduler", address], capsys) == (
        f"hetsim sweep: error: argument --scheduler: {message}"
    )


@pytest.mark.parametrize(
    "address", ["tcp://10.0.0.5:8786", "10.0.0.5:8786", "tls://sched.example:1", "[::1]:65535"]
)
def test_a_well_formed_scheduler_address_is_taken(address: str) -> None:
    assert build_parser().parse_args([*SWEEP, "--scheduler", address]).scheduler == address


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("bogus", "expected fixed:N, uniform:LO:HI or decode:START[:STEP], got 'bogus'"),
        ("fixed:-1", "expected fixed:N, uniform:LO:HI or decode:START[:STEP], got 'fixed:-1'"),
        ("FIXED:3", "expected fixed:N, uniform:LO:HI or decode:START[:STEP], got 'FIXED:3'"),
        ("uniform:5:2", "expected uniform:LO:HI with LO <= HI, got 'uniform:5:2'"),
    ],
)
def test_a_malformed_seq_dist_is_a_usage_error(
    spec: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # it was refused after the model loaded, with exit status 1; for a model without dims, as a
    # model with nothing to draw, the spec itself unnamed
    for model in ("transformer", "squeezenet"):
        argv = ["compare", model, "--target", "x86-h100", "--seq-dist", spec]
        assert _usage_error(argv, capsys) == (
            f"hetsim compare: error: argument --seq-dist: {expected}"
        )


@pytest.mark.parametrize("command", [COMPARE, ["run", "mlp", "--target", "x86-h100"]])
@pytest.mark.parametrize("value", ["-1", "x", "1.5"])
def test_a_seed_that_is_no_non_negative_integer_is_a_usage_error(
    command: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # -1 was refused after the model loaded (exit status 1), and for compare only when nothing
    # drew from it
    assert _usage_error([*command, f"--seed={value}"], capsys) == (
        f"hetsim {command[0]}: error: argument --seed: expected a non-negative integer, "
        f"got {value!r}"
    )
    assert build_parser().parse_args([*command, "--seed", "12345678901234567890"]).seed == (
        12345678901234567890
    )
