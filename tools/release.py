"""Releases: one version number, the frozen launch target a tag's buttons open, and the assets
a release carries (CONTRIBUTING.md, "Cutting a release").

The version lives in ``pyproject.toml``; ``CITATION.cff`` and the newest heading of
``CHANGELOG.md`` repeat it, and :func:`check_versions` fails when they disagree. The site shows it
in its footer (``launch_site.py``). A build made with ``COURSE_RELEASE=v<version>`` in its
environment (the publishing workflow sets it for a version tag) points every Binder and Colab
button at the launch branch ``launch-v<version>``, which the workflow writes once for that tag and
never again, so a term's notebooks never move.

    python tools/release.py check [TAG]     the three numbers agree (and match TAG, v<version>)
    python tools/release.py assets BOOK OUT the release's files, from the built editions, in OUT
    python tools/release.py verify BOOK     BOOK/_build/release and the launch branch, checked
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RELEASE_ENV = "COURSE_RELEASE"  # the tag a release build is made for: "v1.0.0"
LAUNCH_PREFIX = "launch-"  # no slash: Binder and Colab read a branch name with none


def version(repo: Path = REPO) -> str:
    """The course's version, from ``pyproject.toml`` ("1.0.0")."""
    return tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"]


def _cited_version(repo: Path) -> str | None:
    found = re.search(r"^version:\s*\"?([^\s\"]+)", (repo / "CITATION.cff").read_text("utf-8"),
                      re.MULTILINE)
    return found.group(1) if found else None


def _changelog_version(repo: Path) -> str | None:
    found = re.search(r"^## \[?v?(\d[^\]\s]*)", (repo / "CHANGELOG.md").read_text("utf-8"),
                      re.MULTILINE)
    return found.group(1) if found else None


def check_versions(repo: Path = REPO, tag: str | None = None) -> str:
    """The version, after checking that ``CITATION.cff`` and the newest entry of
    ``CHANGELOG.md`` give the same one (and ``tag``, when given, is ``v`` and it); ValueError
    naming each that differs."""
    number = version(repo)
    others = {"CITATION.cff": _cited_version(repo), "CHANGELOG.md": _changelog_version(repo)}
    if tag is not None:
        others[f"the tag {tag}"] = tag.removeprefix("v") if tag.startswith("v") else tag
    wrong = [f"{name} says {value}" for name, value in others.items() if value != number]
    if wrong:
        raise ValueError(f"pyproject.toml says version {number}, but " + "; ".join(wrong))
    return number


def release_tag() -> str | None:
    """The tag this build is a release of (``$COURSE_RELEASE``), checked against the version;
    None for an ordinary build."""
    tag = os.environ.get(RELEASE_ENV) or None
    if tag is not None:
        check_versions(REPO, tag)
    return tag


def launch_branch(tag: str) -> str:
    """The branch a release's buttons open: ``launch-v1.0.0``."""
    return LAUNCH_PREFIX + tag


def zip_folder(folder: Path, archive: Path, top: str) -> Path:
    """``folder`` zipped into ``archive``, its files under ``top/``."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, f"{top}/{path.relative_to(folder).as_posix()}")
    return archive


def assets(book: Path, out: Path) -> list[Path]:
    """The files a release carries, from the built editions of ``book`` (``make pack``, ``make
    student-pdf``): the instructor's pack, the student edition (site and notebooks) as a zip,
    and the book and the student edition as PDFs, each named with the version, into ``out``."""
    number = version(book)
    build = book / "_build"
    needed = {build / "instructor-pack.zip": "make pack",
              build / "student" / "html" / "index.html": "make student",
              build / "pdf" / "book.pdf": "make pdf",
              build / "student-pdf" / "book.pdf": "make student-pdf"}
    for path, command in needed.items():
        if not path.is_file():
            raise FileNotFoundError(f"{path} is not built: run `{command}` first")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    name = f"transformer-course-{number}"
    return [
        Path(shutil.copy2(build / "instructor-pack.zip", out / f"{name}-instructor-pack.zip")),
        zip_folder(build / "student", out / f"{name}-student-edition.zip",
                   f"{name}-student-edition"),
        Path(shutil.copy2(build / "pdf" / "book.pdf", out / f"{name}.pdf")),
        Path(shutil.copy2(build / "student-pdf" / "book.pdf", out / f"{name}-student.pdf")),
    ]


LAUNCH_LINK = re.compile(r'href="(https://(?:mybinder\.org/v2/gh|colab\.research\.google\.com/github)'
                         r'/[^"]+)"')
SOLUTION_MARK = "Solution to Exercise"  # sphinx-exercise's title of a solution


def launch_links(site: Path) -> list[str]:
    """Every Binder and Colab link on the pages of ``site`` (a built HTML folder), its
    ``student/`` edition's included."""
    return [link for page in sorted(site.rglob("*.html"))
            for link in LAUNCH_LINK.findall(page.read_text(encoding="utf-8", errors="replace"))]


def check_launch_target(site: Path, branch: str) -> int:
    """The number of launch links in ``site``; ValueError when there are none or one opens
    another branch than ``branch``."""
    links = launch_links(site)
    elsewhere = [link for link in links if not re.search(rf"/{re.escape(branch)}[?/]", link)]
    if not links or elsewhere:
        raise ValueError(f"{len(links)} launch links in {site}, {len(elsewhere)} of them not on "
                         f"{branch}: {elsewhere[:3]}")
    return len(links)


def _count(outline: list) -> int:
    """Bookmarks in a pypdf outline (an entry, or the list of the entry before's children)."""
    return sum(_count(entry) if isinstance(entry, list) else 1 for entry in outline)


def verify(book: Path) -> list[str]:
    """What ``make release-dry-run`` built, checked: the release's files (a student PDF without
    solutions and a full one with them, both with bookmarks) and the launch branch, whose every
    button opens the release's own. Returns one line per check; ValueError on the first
    failure."""
    import pypdfium2
    from pypdf import PdfReader

    tag = release_tag()
    if tag is None:
        raise ValueError(f"set {RELEASE_ENV}=v{version(book)}: verify checks a release build")
    out, number = book / "_build" / "release", version(book)
    name = f"transformer-course-{number}"
    said = []
    for pdf, solutions in ((out / f"{name}.pdf", True), (out / f"{name}-student.pdf", False)):
        reader, document = PdfReader(pdf), pypdfium2.PdfDocument(pdf)
        text = " ".join(page.get_textpage().get_text_range() for page in document)
        document.close()
        if not reader.outline or (SOLUTION_MARK in text) != solutions:
            raise ValueError(f"{pdf.name}: {len(reader.outline)} bookmarks; solutions: "
                             f"{SOLUTION_MARK in text}, expected {solutions}")
        said.append(f"{pdf.name}: {len(reader.pages)} pages, {_count(reader.outline)} bookmarks")
    with zipfile.ZipFile(out / f"{name}-student-edition.zip") as archive:
        names = archive.namelist()
    if not any(n.endswith("/html/index.html") for n in names) or not any(
            n.endswith(".ipynb") for n in names):
        raise ValueError(f"the student zip lacks its site or its notebooks: {names[:5]}")
    said.append(f"{name}-student-edition.zip: {len(names)} files")
    with zipfile.ZipFile(out / f"{name}-instructor-pack.zip") as archive:
        said.append(f"{name}-instructor-pack.zip: {len(archive.namelist())} files")
    branch = launch_branch(tag)
    links = check_launch_target(book / "_build" / "launch-branch", branch)
    said.append(f"_build/launch-branch: all {links} Binder and Colab links open {branch}")
    return said


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="the version numbers agree")
    check.add_argument("tag", nargs="?", help="the tag being released, v<version>")
    made = commands.add_parser("assets", help="collect the release's files")
    made.add_argument("book", type=Path)
    made.add_argument("out", type=Path)
    checked = commands.add_parser("verify", help="check the release's files and launch branch")
    checked.add_argument("book", type=Path)
    args = parser.parse_args(argv)
    if args.command == "verify":
        for line in verify(args.book.resolve()):
            print(f"release: {line}")
        return 0
    if args.command == "check":
        try:
            print(f"version {check_versions(REPO, args.tag)}")
        except ValueError as error:
            print(f"release: {error}", file=sys.stderr)
            return 1
        return 0
    for path in assets(args.book.resolve(), args.out.resolve()):
        print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
