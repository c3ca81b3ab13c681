"""The seed scenario end to end: the ONNX light ResNet-50 on arm-riscv-soc, through the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

from hetsim.api import simulate  # noqa: E402
from hetsim.cli import main  # noqa: E402
from hetsim.models import light_model_path  # noqa: E402
from tests.models.test_light_models import ATOL, RTOL, _feeds  # noqa: E402


def test_resnet50_runs_on_all_three_processors_with_the_shipped_output() -> None:
    path = light_model_path("resnet50")
    model = onnx.load(str(path))
    result = simulate("resnet50", "arm-riscv-soc", inputs=_feeds(model))
    expected = numpy_helper.to_array(
        onnx.load_tensor(str(path.with_name(f"{path.stem}_output_0.pb")))
    )
    (output,) = result.outputs.values()
    np.testing.assert_allclose(output, expected, rtol=RTOL, atol=ATOL)
    assert list(result.processors) == ["host", "vdevice0/host", "vdevice0/npu"]
    assert all(s.busy_us > 0 for s in result.processors.values())
    assert all(s.bytes > 0 for s in result.links.values())


def test_hetsim_run_reports_levels_for_a_partition_policy(capsys) -> None:
    code = main(["run", "cnn", "--target", "arm-riscv-soc", "--partition", "cost", "--json"])
    assert code == 0
    run = json.loads(capsys.readouterr().out)
    assert set(run["processors"]) == {"host", "vdevice0/host", "vdevice0/npu"}
    assert run["extra"]["levels"]["vdevice0"]["host"] == "vdevice0/host"
