"""Fixtures for the target tests: tag folders of the test's own, registered and then removed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hetsim.target import add_tag_dir, remove_tag_dir

SMALL_TAGS = {
    "test/cpu.yaml": "description: a test CPU\nkind: arm-cpu\ncores: 2\nfreq_ghz: 1.0\n",
    "test/npu.yaml": "description: a test NPU\nkind: npu\nflops_per_cycle: 512\n",
    "test/fast-vm.yaml": "description: a fast VM\nkind: vm\ndispatch_us: 0.1\n",
    "test/soc.yaml": (
        "description: a test platform\n"
        "kind: hetero\n"
        "host: test/cpu\n"
        "executor: test/fast-vm\n"
        "devices:\n"
        "  - name: vdevice0\n"
        "    kind: hetero\n"
        "    host: {tag: test/cpu, freq_ghz: 0.5}\n"
        "    executor: graph\n"
        "    runtime: crt\n"
        "    link: {bandwidth_gbps: 8, latency_us: 2}\n"
        "    devices:\n"
        "      - {tag: test/npu, name: npu}\n"
        "  - cuda\n"
    ),
    "test/soc-fast.toml": 'description = "the test platform, faster"\ntag = "test/soc"\n'
    "[devices.vdevice0.host]\nfreq_ghz = 2.0\n",
}


@pytest.fixture
def tag_folder(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], Path]]:
    """Write tag files (relative path -> text) into a fresh folder and register it."""
    folders: list[Path] = []

    def make(files: dict[str, str], *, register: bool = True) -> Path:
        folder = tmp_path / f"tags{len(folders)}"
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        folders.append(folder)
        if register:
            add_tag_dir(folder)
        return folder

    yield make
    for folder in folders:
        remove_tag_dir(folder)


@pytest.fixture
def small_tags(tag_folder: Callable[[dict[str, str]], Path]) -> Path:
    """The folder of SMALL_TAGS, registered."""
    return tag_folder(SMALL_TAGS)
