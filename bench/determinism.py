"""Do two builds execute the chapters alike? Compare their executed notebooks output by output.

Every code cell's execution count and outputs must be identical, byte for byte (images included),
except the glued values whose key ends in ``TIMED_SUFFIX`` (wall-clock measurements, different on
every run by nature); the glue data MyST-NB extracted (``<page>.glue.json``) likewise. Cell ids,
notebook metadata and execution times are not outputs and are not compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from transformer_course.notebook import TIMED_SUFFIX

TIMED = "<timed: not compared>"


def _glue_name(output: dict[str, Any]) -> str | None:
    return ((output.get("metadata") or {}).get("scrapbook") or {}).get("name")


def _joined_streams(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive outputs of one stream joined into one: where the kernel's flushes split the
    printed text (one build may hold a line as two stream outputs) is not a difference."""
    joined: list[dict[str, Any]] = []
    for output in outputs:
        if output.get("output_type") != "stream":
            joined.append(output)
            continue
        output = {**output, "text": _text(output.get("text", ""))}
        previous = joined[-1] if joined else {}
        if previous.get("output_type") == "stream" and previous.get("name") == output["name"]:
            joined[-1] = {**previous, "text": previous["text"] + output["text"]}
        else:
            joined.append(output)
    return joined


def comparable_cells(notebook: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The code cells' sources, execution counts and outputs (streams joined, timed glue masked);
    and how many outputs were masked."""
    cells, masked = [], 0
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        outputs = []
        for output in _joined_streams(cell.get("outputs", [])):
            name = _glue_name(output)
            if name and name.endswith(TIMED_SUFFIX):
                output, masked = {"glue": name, "data": TIMED}, masked + 1
            outputs.append(output)
        source = cell.get("source", "")
        cells.append({"source": "".join(source) if isinstance(source, list) else source,
                      "execution_count": cell.get("execution_count"), "outputs": outputs})
    return cells, masked


def comparable_glue(glue: dict[str, Any]) -> dict[str, Any]:
    return {key: TIMED if key.endswith(TIMED_SUFFIX) else value for key, value in glue.items()}


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(map(str, value))
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _what_differs(x: dict[str, Any], y: dict[str, Any]) -> str:
    """Which part of two comparable cells differs, with the first differing text."""
    if x["source"] != y["source"]:
        return "source differs"
    if x["execution_count"] != y["execution_count"]:
        return f"execution count {x['execution_count']} against {y['execution_count']}"
    if len(x["outputs"]) != len(y["outputs"]):
        return f"{len(x['outputs'])} outputs against {len(y['outputs'])}"
    for number, (a, b) in enumerate(zip(x["outputs"], y["outputs"], strict=True), start=1):
        if a == b:
            continue
        data_a, data_b = a.get("data") or {}, b.get("data") or {}
        for key in sorted(set(data_a) | set(data_b)) or ["text"]:
            first, second = _text(data_a.get(key, a.get(key))), _text(data_b.get(key, b.get(key)))
            if first != second:
                at = next((i for i, (p, q) in enumerate(zip(first, second, strict=False))
                           if p != q),
                          min(len(first), len(second)))
                return (f"output {number} ({key}) differs at character {at}: "
                        f"{first[max(0, at - 30):at + 20]!r} against "
                        f"{second[max(0, at - 30):at + 20]!r}")
        return f"output {number} differs"
    return "differs"


def compare_executed(first: Path, second: Path) -> dict[str, Any]:
    """Compare two ``_build/jupyter_execute`` folders.

    Returns: ``notebooks`` compared, ``outputs`` compared, ``timed`` outputs left out, and
    ``differences``, one line each (empty when the builds executed identically).
    """
    names = sorted({p.relative_to(first).as_posix() for p in first.rglob("*.ipynb")}
                   | {p.relative_to(second).as_posix() for p in second.rglob("*.ipynb")})
    differences: list[str] = []
    outputs = timed = 0
    for name in names:
        a, b = first / name, second / name
        if not (a.is_file() and b.is_file()):
            differences.append(f"{name}: only in {first if a.is_file() else second}")
            continue
        cells_a, masked = comparable_cells(json.loads(a.read_text(encoding="utf-8")))
        cells_b, _ = comparable_cells(json.loads(b.read_text(encoding="utf-8")))
        timed += masked
        outputs += sum(len(cell["outputs"]) for cell in cells_a) - masked
        if len(cells_a) != len(cells_b):
            differences.append(f"{name}: {len(cells_a)} code cells against {len(cells_b)}")
            continue
        for index, (x, y) in enumerate(zip(cells_a, cells_b, strict=True)):
            if x != y:
                differences.append(f"{name}: code cell {index + 1}: {_what_differs(x, y)}")
        glue_a, glue_b = (a.with_name(a.stem + ".glue.json"), b.with_name(b.stem + ".glue.json"))
        glue_name = name[: -len(".ipynb")] + ".glue.json"
        if glue_a.is_file() != glue_b.is_file():
            differences.append(f"{glue_name}: only one build has it")
        elif glue_a.is_file():
            x = comparable_glue(json.loads(glue_a.read_text(encoding="utf-8")))
            y = comparable_glue(json.loads(glue_b.read_text(encoding="utf-8")))
            keys = sorted(k for k in x.keys() | y.keys() if x.get(k) != y.get(k))
            if keys:
                differences.append(f"{glue_name}: glued values differ: {', '.join(keys)}")
    return {"notebooks": len(names), "outputs": outputs, "timed": timed,
            "differences": differences}
