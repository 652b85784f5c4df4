"""Build another edition of the book from the executions `make book` cached: the student site, or
the whole book as one PDF.

``make student`` and ``make pdf`` run this after ``make book``. Each edition is a Sphinx build of
its own (Jupyter Book's configuration and table of contents, warnings as errors) into its own
folder with its own doctrees, reading every chapter's outputs from the execution cache of the
site (``_build/.jupyter_cache``), so nothing is executed again:

- ``student``: the HTML site built with the Sphinx tag ``student`` (``student_edition.py`` drops
  every solution) into ``OUT/html``, and every chapter's readable notebook without its solutions
  (the site's ``.ipynb`` downloads) copied into ``OUT/notebooks``.
- ``pdf``: Sphinx's ``singlehtml`` build (all chapters on one page, numbered as on the site) into
  ``OUT/singlehtml``, printed by headless Chromium (``print_pdf.py``) into ``OUT/book.pdf``, with
  a bookmark for each chapter and section.
- ``student-pdf``: the same for the student edition (no solutions), into
  ``BOOK/_build/student-pdf/book.pdf``.

An edition is rebuilt only when the site was rebuilt since (``make book``'s stamp of what the
site is made from, ``_build/.site-inputs``, which covers the chapters, the configuration, the
tools and the static files), or with ``--force``.

Usage: python tools/build_edition.py {student,pdf,student-pdf} [BOOK] [--out OUT]
         [--chromium PATH] [--force]
  BOOK: the folder holding _config.yml and _toc.yml (default: .).
  OUT: where the edition goes (default: BOOK/_build/EDITION).
  PATH: the Chromium or Chrome that prints the PDF (default: $CHROMIUM, else
    tools/find_browser.sh finds one).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_book  # noqa: E402
import lean_jsonschema  # noqa: E402
import toc_chapters  # noqa: E402

EDITIONS = {"student": ("html", ["student"], "html"), "pdf": ("singlehtml", [], "singlehtml"),
            "student-pdf": ("singlehtml", ["student"], "singlehtml")}


def sphinx_build(book: Path, edition: str, out: Path, log: Path) -> int:
    """Build ``edition`` of ``book`` with Sphinx into ``out``; its output goes to stdout and
    ``log``. Returns Sphinx's status (0: built without a warning)."""
    lean_jsonschema.load()
    from jupyter_book.sphinx import build_sphinx

    builder, tags, folder = EDITIONS[edition]
    site = out / folder
    if site.exists():
        shutil.rmtree(site)  # as `make book`: nothing from an earlier build lingers
    book = book.resolve()
    overrides = {
        "external_toc_path": (book / "_toc.yml").as_posix(),
        "latex_individualpages": False,
        "nitpicky": True,
        # the site's execution cache (build_book.py fills it): nothing re-executes
        "nb_execution_cache_path": str(build_book.Settings.of(book).cache.resolve()),
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    captured = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text: str) -> int:
            sys.__stdout__.write(text)
            captured.write(text)
            return len(text)

    tee = Tee()
    with contextlib.redirect_stdout(tee), contextlib.redirect_stderr(tee):
        result = build_sphinx(book, site, noconfig=True, path_config=str(book / "_config.yml"),
                              confoverrides=overrides, doctreedir=out / ".doctrees",
                              builder=builder, tags=tags, warningiserror=True, keep_going=True,
                              freshenv=True)
    log.write_text(captured.getvalue(), encoding="utf-8")
    return result if isinstance(result, int) else 1


def copy_notebooks(book: Path, out: Path) -> list[Path]:
    """Copy every chapter's readable notebook from the student site into ``out/notebooks``."""
    notebooks = out / "notebooks"
    if notebooks.exists():
        shutil.rmtree(notebooks)
    notebooks.mkdir(parents=True)
    copied = []
    for chapter in toc_chapters.chapters(book, notebooks_only=True):
        download = out / "html" / "_sources" / Path(chapter).with_suffix(".ipynb")
        copied.append(Path(shutil.copy2(download, notebooks / download.name)))
    return copied


def find_chromium() -> str:
    """$CHROMIUM, else what tools/find_browser.sh finds."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    found = subprocess.run([str(Path(__file__).with_name("find_browser.sh")), sys.executable],
                           capture_output=True, text=True, check=True)
    return found.stdout.strip().splitlines()[-1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("edition", choices=sorted(EDITIONS))
    parser.add_argument("book", type=Path, nargs="?", default=Path("."))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--chromium", default=None)
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    args = parser.parse_args(argv)
    if not (args.book / "_config.yml").is_file():
        parser.error(f"no _config.yml in {args.book}")
    out = (args.out or args.book / "_build" / args.edition).resolve()
    site_stamp = args.book / "_build" / ".site-inputs"
    stamp = out / ".site-inputs"
    current = f"{args.edition} {site_stamp.read_text().strip()}" if site_stamp.is_file() else ""
    outputs = [out / "html" / "index.html", out / "notebooks"] if args.edition == "student" \
        else [out / "book.pdf"]
    if current and not args.force and stamp.is_file() and stamp.read_text().strip() == current \
            and all(path.exists() for path in outputs):
        print(f"build_edition: the {args.edition} edition in {out} is current (the site has not "
              "changed since it was built)")
        return 0
    stamp.unlink(missing_ok=True)
    started = time.perf_counter()
    status = sphinx_build(args.book, args.edition, out, out / "build.log")
    if status != 0:
        print(f"build_edition: the {args.edition} edition failed to build (log: "
              f"{out / 'build.log'})", file=sys.stderr)
        return status
    if args.edition == "student":
        copied = copy_notebooks(args.book, out)
        print(f"build_edition: {out / 'html'} and {len(copied)} notebooks in "
              f"{out / 'notebooks'}, in {time.perf_counter() - started:.1f} s")
    else:
        from print_pdf import print_pdf, single_page

        # singlehtml writes its page where the root document sits (book/index.html) but links
        # its assets and images as if it sat at the top (_static/...): move it there
        page = single_page(out / "singlehtml")
        moved = out / "singlehtml" / "index.html"
        relative = page.relative_to(out / "singlehtml").as_posix()
        moved.write_text(page.read_text(encoding="utf-8").replace(f'href="{relative}#', 'href="#'),
                         encoding="utf-8")
        if page != moved:
            page.unlink()
        pages = print_pdf(out / "singlehtml", out / "book.pdf",
                          args.chromium or find_chromium())
        print(f"build_edition: {out / 'book.pdf'} ({pages} pages), in "
              f"{time.perf_counter() - started:.1f} s")
    if current:
        stamp.write_text(current + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
