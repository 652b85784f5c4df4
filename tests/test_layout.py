"""The package's layout rules: the core imports nothing from the rest of the package (checked by
import-linter), and exports every public name of its modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from transformer_course import core

ROOT = Path(__file__).resolve().parents[1]


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


def test_core_all_lists_every_public_name_of_the_core_modules() -> None:
    """Every public class and function defined in a core module (checks aside) is exported."""
    import inspect

    missing = []
    for module_name in ("attention", "masks", "multihead", "positional", "model", "batching",
                        "schedule", "loss", "training", "decoding", "kv_cache"):
        module = getattr(core, module_name)
        for name, value in vars(module).items():
            if (not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
                    and value.__module__ == module.__name__ and name not in core.__all__):
                missing.append(f"{module_name}.{name}")
    assert not missing, f"public core names not re-exported: {missing}"
