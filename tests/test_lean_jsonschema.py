"""The tools import jsonschema without its IRI grammar (tools/lean_jsonschema.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import lean_jsonschema  # noqa: E402

REPORT = "print('rfc3987_syntax' in sys.modules); import rfc3987_syntax; print('importable')"


def run(program: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True, timeout=120)
    return done.stdout.split()


def test_a_tool_process_loads_jsonschema_without_the_grammar_which_stays_importable():
    pytest.importorskip("rfc3987_syntax")  # installed with JupyterLab, as in `make check`
    assert run(f"import sys; import jsonschema; {REPORT}") == ["True", "importable"]
    assert run(lean_jsonschema.then(f"import jsonschema; {REPORT}")) == ["False", "importable"]
