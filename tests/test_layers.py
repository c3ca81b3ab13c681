"""The layer rule: each hetsim package imports only from the packages listed as below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hetsim"
CORE = {"errors", "units", "located", "memo"}
MODEL_BRANCH = {"ir": CORE, "kernels": CORE | {"ir"}}
MODEL_BRANCH["frontend"] = MODEL_BRANCH["kernels"] | {"kernels"}
MODEL_BRANCH["models"] = MODEL_BRANCH["frontend"] | {"frontend"}
MODELS = set(MODEL_BRANCH) | {"models"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "units": set(),
    "located": {"errors"},
    "memo": set(),
    **MODEL_BRANCH,
}
ALLOWED["target"] = CORE
ALLOWED["platform"] = ALLOWED["target"] | {"target"}
ALLOWED["cost"] = ALLOWED["platform"] | {"platform"} | MODELS
ALLOWED["partition"] = ALLOWED["cost"] | {"cost"}
ALLOWED["runtime"] = ALLOWED["partition"] | {"partition"}
ALLOWED["sim"] = ALLOWED["runtime"] | {"runtime"}
ALLOWED["report"] = ALLOWED["sim"] | {"sim"}
TOP = ALLOWED["report"] | {"report"}
ALLOWED["api"] = TOP
ALLOWED["calibrate"] = TOP | {"api"}
ALLOWED["sweep"] = TOP | {"api"}
ALLOWED["compare"] = TOP | {"api"}
ALLOWED["cli"] = TOP | {"api", "sweep", "calibrate", "compare"}
ALLOWED["__init__"] = TOP | {"api"}
ALLOWED["__main__"] = {"cli"}


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    package = ("hetsim", *path.relative_to(PACKAGE).with_suffix("").parts[:-1])
    if path.name == "__init__.py":
        package = ("hetsim", *path.relative_to(PACKAGE).parts[:-1])
    base = package[: len(package) - node.level + 1]
    return ".".join((*base, node.module)) if node.module else ".".join(base)


def _imported_layers(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node) if node.level else node.module or ""
            modules |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    parts = [m.split(".") for m in modules]
    return {p[1] for p in parts if p[0] == "hetsim" and len(p) > 1 and p[1] in ALLOWED}


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_module_imports_only_lower_layers(path: Path) -> None:
    layer = _layer(path)
    assert layer in ALLOWED, f"{layer} is not in the layer table of tests/test_layers.py"
    upward = {m.removesuffix(".py") for m in _imported_layers(path)} - ALLOWED[layer] - {layer}
    assert not upward, f"{path.relative_to(PACKAGE)} imports upward: {sorted(upward)}"
