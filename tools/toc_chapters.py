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

import yaml
from sphinx_external_toc.api import GlobItem, UrlItem
from sphinx_external_toc.parsing import MalformedError, parse_toc_yaml

SUFFIXES = (".md", ".ipynb")
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|\Z)", re.DOTALL)


def toc_files(book: Path) -> list[str]:
    """Docnames (``book/01_x``) listed in ``book/_toc.yml``, root first, in reading order, globs
    expanded and URLs left out. The one reader of the table of contents: the Makefile, the Binder
    tests and the site tests all go through it.

    Args:
        book: the folder holding ``_toc.yml``.
    """
    toc_path = Path(book) / "_toc.yml"
    if not toc_path.is_file():
        raise ValueError(f"book: expected a folder holding _toc.yml, got {book}")
    try:
        site_map = parse_toc_yaml(toc_path)
    except MalformedError as error:
        raise ValueError(f"book: {toc_path} is not a valid table of contents: {error}") from error
    names: list[str] = []

    def visit(docname: str) -> None:
        names.append(docname)
        for tree in site_map[docname].subtrees:
            for item in tree.items:
                if isinstance(item, GlobItem):
                    matches = sorted({str(p.relative_to(book).with_suffix(""))
                                      for s in SUFFIXES for p in Path(book).glob(str(item) + s)})
                    names.extend(m for m in matches if m not in names)
                elif not isinstance(item, UrlItem):
                    visit(str(item))

    visit(site_map.root.docname)
    return names


def numbered_files(book: Path) -> list[str]:
    """Docnames of the chapters: the pages of the root's numbered parts (``numbered:`` in
    ``_toc.yml``), in reading order. A part without numbers (the references) holds no chapters.

    Args:
        book: the folder holding ``_toc.yml``.
    """
    names = toc_files(book)  # checks the table of contents
    site_map = parse_toc_yaml(Path(book) / "_toc.yml")
    numbered = set()
    for tree in site_map[site_map.root.docname].subtrees:
        if tree.numbered:
            numbered.update(str(item) for item in tree.items
                            if not isinstance(item, (GlobItem, UrlItem)))
            numbered.update(name for item in tree.items if isinstance(item, GlobItem)
                            for name in names if Path(name).match(str(item)))
    return [name for name in names if name in numbered]


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
