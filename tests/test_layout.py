"""The package's layout rules: the core imports nothing from the rest, and the top level re-exports
the core's public API. The import rule is import-linter's contract in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import transformer_course
from transformer_course import core

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "code" / "transformer_course"


def _contract() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = config["contracts"]
    return contract


def _lint_imports(workdir: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    """Run import-linter in ``workdir`` (which holds the pyproject.toml) on the package found on
    ``pythonpath``, without its cache."""
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint), "--no-cache"], cwd=workdir, capture_output=True, text=True,
                          env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"})


def test_core_imports_nothing_from_the_rest_of_the_package() -> None:
    result = _lint_imports(ROOT, ROOT / "code")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_the_contract_forbids_every_sibling_of_the_core() -> None:
    """A new top-level module or subpackage must be added to the contract's forbidden list."""
    siblings = {f"transformer_course.{p.stem}" for p in PACKAGE.iterdir()
                if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    siblings.discard("transformer_course.core")
    assert set(_contract()["forbidden_modules"]) == siblings
    assert _contract()["source_modules"] == ["transformer_course.core"]


@pytest.mark.parametrize("name", core.__all__)
def test_the_top_level_re_exports_the_core_api(name: str) -> None:
    assert getattr(transformer_course, name) is getattr(core, name)


def test_core_all_lists_every_public_name_of_the_core_modules() -> None:
    """Every public class and function defined in a core module (checks aside) is exported."""
    import inspect

    missing = []
    for module_name in ("attention", "masks", "multihead", "positional", "model", "batching",
                        "schedule", "loss", "training", "decoding"):
        module = getattr(core, module_name)
        for name, value in vars(module).items():
            if (not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
                    and value.__module__ == module.__name__ and name not in core.__all__):
                missing.append(f"{module_name}.{name}")
    assert not missing, f"public core names not re-exported: {missing}"
