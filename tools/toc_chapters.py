"""The book's pages, in ``_toc.yml`` order, and which of them are notebooks.

Used by ``make notebooks`` and by the Binder/download tests, so that everything that walks the
chapters follows the table of contents rather than a file-name pattern.

Usage: python tools/toc_chapters.py [--notebooks] [BOOK_DIR]
  prints one source path per line, relative to BOOK_DIR (default: the current folder);
  --notebooks keeps only the pages that execute (a kernelspec in their front matter).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

SUFFIXES = (".md", ".ipynb")
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|\Z)", re.DOTALL)


def toc_files(book: Path) -> list[str]:
    """Docnames (``book/01_x``) listed in ``book/_toc.yml``, root first, in reading order.

    Args:
        book: the folder holding ``_toc.yml``.
    """
    toc_path = Path(book) / "_toc.yml"
    if not toc_path.is_file():
        raise ValueError(f"book: expected a folder holding _toc.yml, got {book}")
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8")) or {}
    if "root" not in toc:
        raise ValueError(f"book: {toc_path} has no 'root' entry")
    names = [str(toc["root"])]
    _collect(toc, names)
    return names


def _collect(node: Any, names: list[str]) -> None:
    """Append every ``file:`` below ``node`` (parts, chapters, sections) in order."""
    if isinstance(node, dict):
        if "file" in node:
            names.append(str(node["file"]))
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key) or []:
                _collect(child, names)
    elif isinstance(node, list):
        for child in node:
            _collect(child, names)


def source_path(book: Path, docname: str) -> Path:
    """The source file of ``docname`` (``.md`` or ``.ipynb``), relative to ``book``.

    Args:
        book: the folder holding ``_toc.yml``.
        docname: a ``file:`` entry of the table of contents, with or without its suffix.
    """
    stem = docname[: -len(Path(docname).suffix)] if docname.endswith(SUFFIXES) else docname
    for suffix in SUFFIXES:
        candidate = Path(stem + suffix)
        if (Path(book) / candidate).is_file():
            return candidate
    raise ValueError(f"docname: no {' or '.join(SUFFIXES)} file for {docname!r} in {book}")


def is_notebook(path: Path) -> bool:
    """Whether the page at ``path`` executes: an ``.ipynb``, or MyST with a kernelspec header.

    Args:
        path: a page's source file.
    """
    path = Path(path)
    if path.suffix == ".ipynb":
        return True
    match = FRONT_MATTER.match(path.read_text(encoding="utf-8"))
    if not match:
        return False
    meta = yaml.safe_load(match.group(1)) or {}
    return isinstance(meta, dict) and "kernelspec" in meta


def chapters(book: Path, notebooks_only: bool = False) -> list[Path]:
    """Source files of the pages in ``_toc.yml`` order, relative to ``book``.

    Args:
        book: the folder holding ``_toc.yml``.
        notebooks_only: keep only the pages that execute.
    """
    paths = [source_path(book, name) for name in toc_files(book)]
    if notebooks_only:
        paths = [path for path in paths if is_notebook(Path(book) / path)]
    return paths


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", nargs="?", default=".", type=Path)
    parser.add_argument("--notebooks", action="store_true", help="only pages that execute")
    args = parser.parse_args(argv)
    for path in chapters(args.book, notebooks_only=args.notebooks):
        print(path.as_posix())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
