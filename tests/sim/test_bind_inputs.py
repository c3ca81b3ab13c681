"""Binding what a caller hands `run_program` and `bind`: a program compiled for another
platform, metas or costs that miss a tensor or an op, a hand-written BRANCH_SHAPE on a dim the
run does not bind. Each was a KeyError from inside the binders; each is a `SimulationError`
naming what is missing, found when binding fails (nothing is checked per instruction)."""

from __future__ import annotations

import dataclasses

import pytest

from hetsim.api import platform_of
from hetsim.errors import SimulationError
from hetsim.ir import Graph
from hetsim.kernels import propagate
from hetsim.models import load_model
from hetsim.partition.costs import op_costs
from hetsim.runtime import BranchShape, VmProgram, compile_vm, place
from hetsim.sim import run_program


def mlp_on_h100() -> tuple[VmProgram, Graph]:
    platform = platform_of("x86-h100")
    model = load_model("mlp")
    return compile_vm(model, platform, place(model, platform)), model


def test_a_program_run_on_another_platform_names_what_it_lacks() -> None:
    program, model = mlp_on_h100()
    with pytest.raises(
        SimulationError,
        match=r"^bind: program of level \(root\) of mlp: expected platform arm-riscv-soc to "
        r"have 'host.mem--gpu0.mem', which the program names, got none \(a program compiled "
        r"for another platform\?\)$",
    ):
        run_program(program, platform_of("arm-riscv-soc"), propagate(model), is_functional=False)


def test_metas_without_a_tensor_are_named() -> None:
    program, _ = mlp_on_h100()
    with pytest.raises(
        SimulationError,
        match=r"^bind: expected a Meta for every tensor of graph mlp \(as "
        r"hetsim.kernels.propagate gives them\), got none for 'fc1'$",
    ):
        run_program(program, platform_of("x86-h100"), {}, is_functional=False)


def test_costs_without_an_op_are_named() -> None:
    program, model = mlp_on_h100()
    metas = propagate(model)
    costs = op_costs(program.ops, metas)
    del costs["fc2"]
    with pytest.raises(
        SimulationError,
        match=r"^bind: program of level \(root\) of mlp: expected a Cost for every op "
        r"\(costs=\), got none for op 'fc2'$",
    ):
        run_program(program, platform_of("x86-h100"), metas, costs=costs, is_functional=False)


@pytest.mark.parametrize(
    ("branch", "message"),
    [
        (
            BranchShape("seq", ">=", 4, 0),
            r"^BRANCH_SHAPE seq >=: expected a size for dim 'seq' \(bind it with dims=\), got "
            r"dims \[\]$",
        ),
        (
            BranchShape("seq", "=>", 4, 0),
            r"^BRANCH_SHAPE seq =>: expected a test in \['!=', '<', '<=', '==', '>', '>='\], "
            r"got '=>'$",
        ),
        (
            BranchShape("seq", ">=", "4", 0),  # type: ignore[arg-type]
            r"^BRANCH_SHAPE seq >=: expected an integer value to compare the dim with, got '4'$",
        ),
        (
            BranchShape("seq", ">=", 4, 99),
            r"^BRANCH_SHAPE seq >=: expected a target in the program's code \[0, 23\), got 99$",
        ),
    ],
)
def test_a_hand_written_branch_the_run_cannot_decide_is_named(
    branch: BranchShape, message: str
) -> None:
    program, model = mlp_on_h100()
    program = dataclasses.replace(program, code=(branch, *program.code))
    dims = {"seq": 8} if "dim 'seq'" not in message else {}
    with pytest.raises(SimulationError, match=message):
        run_program(
            program, platform_of("x86-h100"), propagate(model), dims=dims, is_functional=False
        )


def test_hand_written_code_that_does_not_end_with_ret_is_refused() -> None:
    # the interpreter ran past the end of the code: IndexError
    program, model = mlp_on_h100()
    program = dataclasses.replace(program, code=program.code[:-1])
    with pytest.raises(
        SimulationError,
        match=r"^program of level \(root\) of mlp: expected code that ends with RET, got SYNC$",
    ):
        run_program(program, platform_of("x86-h100"), propagate(model), is_functional=False)
