"""TVM interop errors: each problem named where the TVM input has it, and each option of a type
TVM refuses refused.

A problem hetsim finds resolving what a TVM target reads as is said with the TVM input's path and
option names (``num-cores``, not ``devices[dev0].cores``). An option's type is checked against
TVM 0.27's own (`TVM_OPTION_TYPES`), which the tests that import ``tvm`` compare with TVM's
option registry; they skip only where apache-tvm is not installed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from hetsim.errors import TargetError
from hetsim.target import Target
from hetsim.target.tvm_reader import TVM_OPTION_TYPES

X86 = {"kind": "llvm", "mtriple": "x86_64-linux-gnu"}
TVM_KINDS = ("llvm", "cuda", "ext_dev", "composite")


def _messages(config: object) -> list[str]:
    with pytest.raises(TargetError) as caught:
        Target.from_tvm(config)
    return [p.message for p in caught.value.problems]


def _changed(name: str, *where: str | int, **options: Any) -> dict[str, Any]:
    """Tag `name` as ``to_tvm`` writes it, with `options` set on the node at `where`."""
    config = Target(name).to_tvm()
    node: Any = config
    for key in where:
        node = node[key]
    node.update(options)
    return config


# --- problems said in the TVM input's terms ---------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        # the audit's: each named hetsim's canonical path and attribute
        ({"kind": "cuda", "arch": 90},
         r"arch: expected a string matching 'sm_\\d+a?', got 90"),
        (X86 | {"num-cores": "8"}, "num-cores: expected an integer >= 1, got '8'"),
        ({"kind": "composite", "host": X86,
          "devices": [{"kind": "cuda"}, {"kind": "cuda", "arch": 90}]},
         r"devices[1].arch: expected a string matching 'sm_\\d+a?', got 90"),
        ({"kind": "cuda", "model": "hetsim:nvidia/h999"},
         "model: unknown tag 'nvidia/h999' (did you mean 'nvidia/h200'?)"),
        ({"kind": "composite", "host": X86},
         "devices: expected a list of device targets, got none"),
        # an option read as another attribute, a list's item, a host, a nested composite
        (X86 | {"mattr": ["+avx", "bad attr"]},
         "mattr[1]: expected a string matching '[+-]?[A-Za-z0-9_.-]+', got 'bad attr'"),
        ({"kind": "ext_dev", "host": X86 | {"num-cores": 0}},
         "host.num-cores: expected an integer >= 1, got 0"),
        ({"kind": "composite", "host": X86,
          "devices": [{"kind": "composite", "host": X86,
                       "devices": [{"kind": "ext_dev"}, {"kind": "cuda", "arch": "sm_x"}]}]},
         r"devices[0].devices[1].arch: expected a string matching 'sm_\\d+a?', got 'sm_x'"),
        ({"kind": "composite", "host": X86, "devices": []},
         "devices: expected at least one device, got []"),
        # a TVM tag's and a shipped mcpu's cores
        ({"tag": "arm/rasp4b64", "num-cores": 0}, "num-cores: expected an integer >= 1, got 0"),
        ({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72", "num-cores": 0},
         "num-cores: expected an integer >= 1, got 0"),
        ({"tag": "nvidia/jetson-agx-orin-64gb",
          "host": {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a78",
                   "num-cores": 0}},
         "host.num-cores: expected an integer >= 1, got 0"),
    ],
    ids=[
        "arch", "num-cores", "composite-device", "model", "composite-without-devices",
        "mattr-item", "host", "nested-composite", "composite-empty-devices", "tvm-tag-cores",
        "mcpu-tag-cores", "tvm-platform-tag-host",
    ],
)  # fmt: skip
def test_a_problem_is_said_where_the_tvm_input_has_it(config: object, message: str) -> None:
    assert _messages(config) == [message]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (_changed("x86-h100", "devices", 0, arch="sm_9x"),
         r"devices[0].arch: expected a string matching 'sm_\\d+a?', got 'sm_9x'"),
        (_changed("two-node-h100", "devices", 1, "devices", 0, arch="sm_9x"),
         r"devices[1].devices[0].arch: expected a string matching 'sm_\\d+a?', got 'sm_9x'"),
        (_changed("two-node-h100", "devices", 1, "host", **{"num-cores": 0}),
         "devices[1].host.num-cores: expected an integer >= 1, got 0"),
        (_changed("arm-riscv-soc", "devices", 0, "host", **{"num-cores": 0}),
         "devices[0].host.num-cores: expected an integer >= 1, got 0"),
        (_changed("jetson-agx-orin", "host", **{"num-cores": 0}),
         "host.num-cores: expected an integer >= 1, got 0"),
        (_changed("arm-riscv-soc", "devices", 0, model="hetsim:vendor/npx"),
         "devices[0].model: unknown tag 'vendor/npx' (did you mean 'vendor/npu'?)"),
    ],
    ids=["device", "nested-device", "nested-host", "level-host", "host", "device-model"],
)  # fmt: skip
def test_a_problem_in_a_changed_tag_is_said_where_the_tvm_input_has_it(
    config: object, message: str
) -> None:
    # its device changed by name (gpu0, node1) is the TVM input's device by its index
    assert _messages(config) == [message]


def test_every_problem_of_a_device_with_a_host_is_said_in_tvm_terms() -> None:
    config = {"kind": "cuda", "arch": "sm_x", "host": X86 | {"num-cores": 0}}
    assert _messages(config) == [
        r"arch: expected a string matching 'sm_\\d+a?', got 'sm_x'",
        "host.num-cores: expected an integer >= 1, got 0",
    ]


KINDS_MAPPED = "expected a TVM kind that hetsim maps (composite, cuda, ext_dev, llvm)"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"kind": "metal", "model": "hetsim:nvidia/h100"}, f"kind: {KINDS_MAPPED}, got 'metal'"),
        ({"model": "hetsim:nvidia/h100"}, f"kind: {KINDS_MAPPED}, got nothing"),
        (_changed("x86-h100", "devices", 0, kind="metal"),
         f"devices[0].kind: {KINDS_MAPPED}, got 'metal'"),
        ({"kind": "llvm", "mtriple": "powerpc64le-linux-gnu", "model": "hetsim:x86/xeon-8480c"},
         "mtriple: expected an LLVM triple hetsim maps (aarch64*, arm*, thumb*, riscv64*, "
         "riscv32*, x86_64*, i386*, i686*), got 'powerpc64le-linux-gnu'"),
        ({"kind": "llvm", "model": "hetsim:nvidia/h100"},
         "mtriple: expected an mtriple or an mcpu hetsim knows (TVM's default is the build "
         "machine's), got nothing"),
        ({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": "cortex-a72",
          "model": "hetsim:x86/xeon-8480c"},
         "mcpu: expected an mcpu for x86-cpu (the mtriple is 'x86_64-linux-gnu'), got "
         "'cortex-a72'"),
    ],
    ids=["unknown-kind", "no-kind", "platform-device", "triple", "no-triple", "mcpu-family"],
)  # fmt: skip
def test_a_node_written_from_a_tag_is_read_as_its_tvm_kind_reads(
    config: object, message: str
) -> None:
    # each read as the tag its model names (an H100, a Xeon), whatever its kind, triple or mcpu;
    # a Xeon with an ARM mcpu said 'kind: expected 'x86-cpu' ..., got None', and a platform's
    # device of another kind raised a KeyError
    assert _messages(config) == [message]


# --- options of a type TVM refuses ------------------------------------------------------------

WRONG_TYPES = [
    ({"kind": "cuda", "arch": "sm_90", "keys": "gpu"},
     "keys: expected a list of strings (TVM's type 'Array<str>'), got 'gpu'"),
    ({"kind": "cuda", "arch": "sm_90", "max_num_threads": "1024"},
     "max_num_threads: expected an integer (TVM's type 'int'), got '1024'"),
    (X86 | {"libs": "cblas"},
     "libs: expected a list of strings (TVM's type 'Array<str>'), got 'cblas'"),
    (X86 | {"fast-math": "true"}, "fast-math: expected a boolean (TVM's type 'bool'), got 'true'"),
    (X86 | {"opt-level": 3.0}, "opt-level: expected an integer (TVM's type 'int'), got 3.0"),
    (X86 | {"tag": 5}, "tag: expected a string (TVM's type 'str'), got 5"),
    (X86 | {"model": 5}, "model: expected a string (TVM's type 'str'), got 5"),
    # options hetsim maps, where it read the value as absent or did not read it
    (X86 | {"num-cores": None}, "num-cores: expected an integer (TVM's type 'int'), got None"),
    (X86 | {"mattr": None},
     "mattr: expected a list of strings (TVM's type 'Array<str>'), got None"),
    ({"kind": "cuda", "arch": "sm_80", "mcpu": 5},
     "mcpu: expected a string (TVM's type 'str'), got 5"),
    # nested: a host (as a JSON string too), a composite's device
    ({"kind": "cuda", "arch": "sm_80", "host": X86 | {"keys": "cpu"}},
     "host.keys: expected a list of strings (TVM's type 'Array<str>'), got 'cpu'"),
    ({"kind": "cuda", "arch": "sm_80", "host": json.dumps(X86 | {"keys": "cpu"})},
     "host.keys: expected a list of strings (TVM's type 'Array<str>'), got 'cpu'"),
    ({"kind": "composite", "host": X86, "devices": [{"kind": "cuda", "libs": "cublas"}]},
     "devices[0].libs: expected a list of strings (TVM's type 'Array<str>'), got 'cublas'"),
]  # fmt: skip
WRONG_TYPE_IDS = [
    "keys", "max_num_threads", "libs", "fast-math", "opt-level", "tag", "model", "num-cores-null",
    "mattr-null", "cuda-mcpu-beside-arch", "host", "host-json", "composite-device",
]  # fmt: skip


@pytest.mark.parametrize(("config", "message"), WRONG_TYPES, ids=WRONG_TYPE_IDS)
def test_an_option_of_a_type_tvm_refuses_is_refused(config: object, message: str) -> None:
    # each was dropped, and the target read as if it had not been given
    assert _messages(config) == [message]


def test_every_option_of_a_wrong_type_is_refused_with_the_other_problems() -> None:
    # the audit's: TVM refuses both; hetsim took it as an H100
    config = {"kind": "cuda", "arch": "sm_90", "max_num_threads": "1024", "keys": "gpu"}
    assert _messages(config) == [
        "max_num_threads: expected an integer (TVM's type 'int'), got '1024'",
        "keys: expected a list of strings (TVM's type 'Array<str>'), got 'gpu'",
    ]
    config = {"kind": "composite", "host": X86 | {"keys": "cpu"}, "devices": [{"kind": "metal"}]}
    assert _messages(config) == [
        "devices[0].kind: expected a TVM kind that hetsim maps (composite, cuda, ext_dev, llvm), "
        "got 'metal'",
        "host.keys: expected a list of strings (TVM's type 'Array<str>'), got 'cpu'",
    ]


def test_a_value_hetsim_takes_is_refused_by_its_own_check_alone() -> None:
    # not twice: hetsim's check of a value it reads says more than TVM's type
    assert _messages(X86 | {"mattr": "+avx"}) == [
        "mattr: expected a list of strings matching '[+-]?[A-Za-z0-9_.-]+', got '+avx'"
    ]
    assert _messages({"tag": "nvidia/nvidia-h100", "arch": 90}) == [
        "arch: expected only host to override TVM tag 'nvidia/nvidia-h100', got 90"
    ]


def test_values_of_the_types_tvm_takes_are_read() -> None:
    # TVM takes 1 for a bool and a tuple for an array; feature.* it computes, of any type
    config = X86 | {"fast-math": 1, "keys": ("cpu",), "libs": [], "feature.has_avx": "yes"}
    assert Target.from_tvm(config) == Target("x86-cpu")


# --- against the real apache-tvm --------------------------------------------------------------


def test_the_option_types_are_those_tvm_gives_its_kinds() -> None:
    tvm = pytest.importorskip("tvm")
    registry: dict[str, str] = {}
    for kind in TVM_KINDS:
        for option, tvm_type in tvm.target.TargetKind.options_from_name(kind).items():
            if option not in ("kind", "host", "devices"):  # reading checks these
                assert registry.setdefault(str(option), str(tvm_type)) == str(tvm_type), option
    assert registry == TVM_OPTION_TYPES


@pytest.mark.parametrize(("config", "message"), WRONG_TYPES, ids=WRONG_TYPE_IDS)
def test_tvm_refuses_each_option_of_a_wrong_type(config: object, message: str) -> None:
    tvm = pytest.importorskip("tvm")
    option = message.split(":", 1)[0].rsplit(".", 1)[-1]
    tvm_type = re.search(r"TVM's type '([^']+)'", message).group(1)  # type: ignore[union-attr]
    with pytest.raises(
        Exception, match=re.escape(f"Option '{option}': expected type '{tvm_type}'")
    ):
        tvm.target.Target(config)


def test_an_export_as_tvm_gives_it_is_read_and_its_problems_said_in_its_terms() -> None:
    # export()'s Map holds TVM's Arrays (keys, devices): they are lists of strings and targets
    tvm = pytest.importorskip("tvm")
    jetson = tvm.target.Target("nvidia/jetson-agx-orin-64gb").export()
    assert Target.from_tvm(jetson) == Target("jetson-agx-orin")
    npu = {"kind": "ext_dev", "host": X86 | {"num-cores": 0}}
    config = {"kind": "composite", "host": X86, "devices": [{"kind": "cuda", "arch": "sm_80"}, npu]}
    assert _messages(tvm.target.Target(config).export()) == [
        "devices[1].host.num-cores: expected an integer >= 1, got 0"
    ]


# --- a kind given with a TVM tag, options of another kind, ints past 64 bits ------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        # TVM 0.27 reads {"tag": T, "kind": K} as kind K without T's options (an llvm CPU here),
        # which had read as T's device whatever K said
        ({"tag": "nvidia/nvidia-h100", "kind": "llvm"},
         "kind: expected 'cuda', the kind of TVM tag 'nvidia/nvidia-h100', got 'llvm'"),
        ({"tag": "arm/rasp4b", "kind": "cuda"},
         "kind: expected 'llvm', the kind of TVM tag 'arm/rasp4b', got 'cuda'"),
    ],
)  # fmt: skip
def test_a_kind_other_than_a_tvm_tag_s_own_is_refused(config: object, message: str) -> None:
    assert _messages(config) == [message]


LABEL = (
    "expected no kind beside TVM tag {!r}, or the tag's own options with it (TVM 0.27 applies a "
    "tag's options only to a config without a kind: beside one the tag is a label), got {}"
)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        # TVM 0.27 compiles these for the machine's GPU (else sm_50) and a plain llvm CPU; they
        # had read as the A100 and the Raspberry Pi 4
        ({"kind": "cuda", "tag": "nvidia/nvidia-a100"},
         "kind: " + LABEL.format("nvidia/nvidia-a100", "'cuda' without arch")),
        ({"kind": "llvm", "tag": "arm/rasp4b", "mcpu": "cortex-a72"},
         "kind: " + LABEL.format("arm/rasp4b", "'llvm' without mtriple, mattr")),
        ({"kind": "composite", "host": X86,
          "devices": [{"kind": "cuda", "tag": "nvidia/nvidia-h100"}]},
         "devices[0].kind: " + LABEL.format("nvidia/nvidia-h100", "'cuda' without arch")),
    ],
)  # fmt: skip
def test_a_tvm_tag_beside_its_kind_without_its_options_is_refused(
    config: object, message: str
) -> None:
    assert _messages(config) == [message]


def test_a_tvm_tag_beside_its_kind_with_its_options_reads_as_the_tag() -> None:
    # as TVM exports a Target made from {"tag": ...}: the kind, the tag and its options
    config = {"kind": "cuda", "tag": "nvidia/nvidia-a100", "arch": "sm_80", "keys": ["cuda", "gpu"]}
    assert [d.tag for d in Target.from_tvm(config).devices] == ["nvidia/a100"]


MCPU = (
    "mcpu: expected an arch to name a cuda target's GPU (TVM 0.27 compiles cuda for its arch, the "
    "machine's GPU or sm_50 without one, and does not read mcpu), got mcpu {!r} and no arch"
)


@pytest.mark.parametrize("mcpu", ["sm_80", "compute_90"])
def test_a_cuda_mcpu_without_an_arch_is_refused(mcpu: str) -> None:
    # it had read as the arch (sm_80: the A100), which TVM 0.27 does not read
    assert _messages({"kind": "cuda", "mcpu": mcpu}) == [MCPU.format(mcpu)]


def test_tvm_reads_a_tag_beside_its_kind_as_a_label_and_no_cuda_mcpu_as_the_arch() -> None:
    # the premise of the two refusals above, and of reading TVM's own exports as their tags
    tvm = pytest.importorskip("tvm")
    labelled = tvm.target.Target({"kind": "cuda", "tag": "nvidia/nvidia-a100"}).export()
    assert labelled["tag"] == "nvidia/nvidia-a100"
    assert labelled["arch"] != "sm_80"
    assert "l2_cache_size_bytes" not in labelled
    assert tvm.target.Target({"kind": "cuda", "mcpu": "sm_80"}).export()["arch"] != "sm_80"
    exported = tvm.target.Target({"tag": "nvidia/nvidia-a100"}).export()
    assert (exported["kind"], exported["arch"]) == ("cuda", "sm_80")
    assert [d.tag for d in Target.from_tvm(exported).devices] == ["nvidia/a100"]


def test_a_cuda_mcpu_beside_an_arch_is_unread_as_tvm_leaves_it() -> None:
    config = {"kind": "cuda", "arch": "sm_80", "mcpu": "sm_90"}
    assert [d.tag for d in Target.from_tvm(config).devices] == ["nvidia/a100"]


@pytest.mark.parametrize(
    ("config", "option"),
    [
        (X86 | {"march": "x86-64"}, "march"),  # no TVM 0.27 kind has it
        (X86 | {"workspace-byte-alignment": 4}, "workspace-byte-alignment"),
        (X86 | {"max_num_threads": 4}, "max_num_threads"),  # cuda's
        ({"kind": "cuda", "arch": "sm_89", "fast-math": True}, "fast-math"),  # llvm's
        ({"kind": "ext_dev", "opt-level": 3}, "opt-level"),
        ({"kind": "composite", "devices": [{"kind": "ext_dev"}], "jit": "orcjit"}, "jit"),
    ],
)
def test_a_codegen_option_of_another_kind_is_refused(config: dict[str, Any], option: str) -> None:
    messages = _messages(config)
    assert len(messages) == 1
    assert messages[0].startswith(f"{option}: unknown TVM option")


def test_an_int_option_past_64_bits_is_refused_as_tvm_refuses_it() -> None:
    assert _messages(X86 | {"num-cores": 2**70}) == [
        f"num-cores: expected an integer of at most 64 bits (TVM's type 'int'), got {2**70}"
    ]
    assert _messages(X86 | {"opt-level": 2**63}) == [
        f"opt-level: expected an integer of at most 64 bits (TVM's type 'int'), got {2**63}"
    ]


def test_cores_past_64_bits_have_no_tvm_form() -> None:
    with pytest.raises(TargetError, match=r"cores: expected at most 2\^63 - 1 cores"):
        Target({"kind": "x86-cpu", "cores": 2**63}).to_tvm()
    assert Target({"kind": "x86-cpu", "cores": 2**63 - 1}).to_tvm()["num-cores"] == 2**63 - 1


@pytest.mark.parametrize(
    "config",
    [
        X86 | {"march": "x86-64"},
        X86 | {"workspace-byte-alignment": 4},
        {"kind": "cuda", "arch": "sm_89", "fast-math": True},
        X86 | {"num-cores": 2**70},
    ],
)
def test_tvm_refuses_these_too(config: dict[str, Any]) -> None:
    tvm = pytest.importorskip("tvm")
    with pytest.raises(ValueError, match=r"Unknown config option|expected type 'int'"):
        tvm.target.Target(config)


def test_tvm_reads_a_kind_given_with_a_tag_as_that_kind() -> None:
    tvm = pytest.importorskip("tvm")
    exported = tvm.target.Target({"tag": "nvidia/nvidia-h100", "kind": "llvm"}).export()
    assert exported["kind"] == "llvm"
    assert "arch" not in exported


def test_a_board_whose_core_the_mtriple_refuses_is_named_by_its_model() -> None:
    # the input wrote no mcpu, yet the message named "mcpu: ... got 'cortex-a72'": the core
    # that BOARD_CPUS gives bcm2711
    assert _messages({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "model": "bcm2711"}) == [
        "model: expected a board with a core of kind x86-cpu (the mtriple is "
        "'x86_64-linux-gnu'), got 'bcm2711', whose core is 'cortex-a72'"
    ]


A100_EXPORTED = {  # the device options TVM 0.27's nvidia/nvidia-a100 exports, arch aside
    "max_num_threads": 1024, "registers_per_block": 65536, "thread_warp_size": 32,
    "max_shared_memory_per_block": 49152, "max_threads_per_block": 1024,
}  # fmt: skip


@pytest.mark.parametrize("l2", [None, 6_291_456])
def test_another_gpu_of_a_shipped_arch_is_refused_not_read_as_the_shipped_one(
    l2: int | None,
) -> None:
    # an A30's export (sm_80, no l2_cache_size_bytes) had read as the A100, with its 108 SMs
    # and 2039 GB/s
    config = {"kind": "cuda", "arch": "sm_80", **A100_EXPORTED}
    if l2 is not None:
        config["l2_cache_size_bytes"] = l2
    stated = "none" if l2 is None else str(l2)
    assert _messages(config) == [
        "arch: expected the sm_80 GPU hetsim ships, nvidia/a100 (its TVM tag states "
        "l2_cache_size_bytes 41943040), or a node without the device options TVM's tags write, "
        f"got one stating l2_cache_size_bytes {stated}: another sm_80 GPU (as TVM's "
        "nvidia/nvidia-a30 exports); describe it as a hetsim cuda device with its own figures"
    ]


def test_the_shipped_gpu_of_an_arch_still_reads_as_its_tag() -> None:
    exported = {"kind": "cuda", "arch": "sm_80", **A100_EXPORTED, "l2_cache_size_bytes": 41943040}
    assert [d.tag for d in Target.from_tvm(exported).devices] == ["nvidia/a100"]
    assert [d.tag for d in Target.from_tvm({"kind": "cuda", "arch": "sm_80"}).devices] == [
        "nvidia/a100"
    ]


def test_tvm_exports_the_a30_and_the_a100_so() -> None:
    tvm = pytest.importorskip("tvm")
    a30 = tvm.target.Target("nvidia/nvidia-a30").export()
    a100 = tvm.target.Target("nvidia/nvidia-a100").export()
    assert (
        {k: a30[k] for k in A100_EXPORTED} == {k: a100[k] for k in A100_EXPORTED} == A100_EXPORTED
    )
    assert "l2_cache_size_bytes" not in a30
    assert a100["l2_cache_size_bytes"] == 41943040
    with pytest.raises(TargetError, match=r"^arch: expected the sm_80 GPU hetsim ships"):
        Target.from_tvm(tvm.target.Target("nvidia/nvidia-a30"))
