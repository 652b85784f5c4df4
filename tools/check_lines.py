"""Count the lines of argument checks against the lines that compute, per module.

A statement inside a function counts as a check when it raises, when it calls a check helper
(a name starting with ``check_``/``_check_``, or ``Shapes(...)``, ``shapes.tensor``/``.mask``), or
when it is an ``if``/``for`` whose body holds nothing but checks; the bodies of check helpers
(functions named ``check_*``/``_check_*``) count as checks. Every other line of a function body
computes. Docstrings, comments, blank lines and ``def`` lines count as neither.

Usage: python tools/check_lines.py FILE [FILE ...]   (prints one line per file)
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

CHECK_METHODS = {"tensor", "mask"}


@dataclass(frozen=True)
class LineCount:
    """Non-blank code lines of a module's function bodies, split into checks and computation."""

    checks: int
    compute: int


def _is_check_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Subscript):  # shapes.tensor(...)["B"]
        return _is_check_call(func.value)
    if isinstance(func, ast.Name):
        return func.id.startswith(("check_", "_check_")) or func.id == "Shapes"
    if isinstance(func, ast.Attribute):
        if func.attr.startswith(("check_", "_check_")):
            return True
        return func.attr in CHECK_METHODS and (
            _is_check_call(func.value) or (isinstance(func.value, ast.Name)
                                           and func.value.id == "shapes"))
    return False


def _value_is_check(value: ast.AST | None) -> bool:
    if value is None:
        return False
    if isinstance(value, ast.Subscript):
        return _value_is_check(value.value)
    if isinstance(value, ast.Attribute):  # shapes.tensor(...).values()
        return _value_is_check(value.value)
    return _is_check_call(value)


def is_check(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` only checks arguments."""
    if isinstance(stmt, ast.Raise):
        return True
    if isinstance(stmt, ast.Expr):
        return _is_check_call(stmt.value)
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "Shapes":
            return True
        return _value_is_check(stmt.value)
    if isinstance(stmt, ast.If):
        return all(is_check(s) for s in stmt.body) and all(is_check(s) for s in stmt.orelse)
    if isinstance(stmt, ast.For):
        return all(is_check(s) for s in stmt.body) and not stmt.orelse
    return False


def _code_lines(stmt: ast.stmt, source: list[str]) -> set[int]:
    """The line numbers of ``stmt`` that hold code (not blank, not only a comment)."""
    last = stmt.end_lineno or stmt.lineno
    return {n for n in range(stmt.lineno, last + 1)
            if source[n - 1].strip() and not source[n - 1].strip().startswith("#")}


def _body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    return body


def count_lines(path: Path) -> LineCount:
    """Check and compute lines of every function body in the module at ``path``."""
    text = Path(path).read_text()
    source = text.splitlines()
    tree = ast.parse(text)
    checks: set[int] = set()
    compute: set[int] = set()
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    nested = {id(inner) for f in functions for inner in ast.walk(f)
              if inner is not f and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)}
    for function in functions:
        if id(function) in nested:
            continue  # counted with the function that holds it
        helper = function.name.startswith(("check_", "_check_"))
        for stmt in _body(function):
            (checks if helper or is_check(stmt) else compute).update(_code_lines(stmt, source))
    return LineCount(len(checks), len(compute - checks))


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for name in argv:
        count = count_lines(Path(name))
        print(f"{name}: {count.checks} check lines, {count.compute} compute lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
