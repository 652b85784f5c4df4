"""tools/release.py: one version number, a release build's buttons on its own launch branch, and
the files a release carries."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from site_utils import REPO, strip_ansi, throwaway_book

sys.path.insert(0, str(REPO / "tools"))
import release  # noqa: E402


def test_the_version_is_one_number_where_it_is_given(tmp_path: Path) -> None:
    number = release.check_versions(REPO)
    assert number == release.version(REPO) and re.fullmatch(r"\d+\.\d+\.\d+", number)
    for name in ("pyproject.toml", "CITATION.cff", "CHANGELOG.md"):
        shutil.copy(REPO / name, tmp_path / name)
    assert release.check_versions(tmp_path, f"v{number}") == number
    with pytest.raises(ValueError):
        release.check_versions(tmp_path, "v0.0.1")  # a tag of another version
    cff = tmp_path / "CITATION.cff"
    cff.write_text(cff.read_text().replace(f"version: {number}", "version: 9.9.9"))
    with pytest.raises(ValueError):
        release.check_versions(tmp_path)


def test_a_release_build_opens_its_own_launch_branch_and_shows_its_version(
        tmp_path: Path) -> None:
    """A one-chapter book built as for the tag v<version>: its page's Binder and Colab buttons
    open the release's own launch branch, not the rolling one (the site's own buttons, built
    for main, open the rolling one: test_binder.py), and its footer gives the version."""
    number = release.version()
    rolling = yaml.safe_load((REPO / "_config.yml").read_text())["sphinx"]["config"][
        "launch_branch"]
    book = throwaway_book(tmp_path / "book", "# A chapter\n\n```{code-cell} ipython3\n1 + 1\n```\n")
    env = {**os.environ, release.RELEASE_ENV: f"v{number}"}
    done = subprocess.run(["make", "-C", str(REPO), "book", f"BOOK={book}"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, strip_ansi(done.stdout + done.stderr)[-3000:]
    page = (book / "_build" / "html" / "book" / "01_canary.html").read_text()
    links = release.LAUNCH_LINK.findall(page)
    assert len(links) == 2, links  # Binder and Colab
    assert all(f"/launch-v{number}" in link and f"/{rolling}" not in link for link in links), \
        links
    assert f"Version {number}" in page


def test_a_release_build_refuses_a_tag_of_another_version(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(release.RELEASE_ENV, raising=False)
    assert release.release_tag() is None  # an ordinary build
    monkeypatch.setenv(release.RELEASE_ENV, f"v{release.version()}")
    assert release.release_tag() == f"v{release.version()}"
    monkeypatch.setenv(release.RELEASE_ENV, "v0.0.1")
    with pytest.raises(ValueError):  # what launch_site's config-inited hook calls: the build stops
        release.release_tag()


def test_the_assets_are_the_pack_the_student_zip_and_both_pdfs(tmp_path: Path) -> None:
    """From stand-ins of the built editions: each asset is there, named with the version, and
    the student zip holds the edition's site and notebooks under one folder."""
    book = tmp_path / "book"
    for name in ("pyproject.toml", "CITATION.cff", "CHANGELOG.md"):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(tmp_path, book, ignore=shutil.ignore_patterns("book"))
    built = book / "_build"
    for path, text in {"instructor-pack.zip": "pack", "student/html/index.html": "<html>",
                       "student/notebooks/01_a.ipynb": "{}", "pdf/book.pdf": "%PDF full",
                       "student-pdf/book.pdf": "%PDF student"}.items():
        (built / path).parent.mkdir(parents=True, exist_ok=True)
        (built / path).write_text(text)
    with pytest.raises(FileNotFoundError):
        release.assets(tmp_path, tmp_path / "out")  # nothing built there
    made = release.assets(book, tmp_path / "out")
    number = release.version()
    names = sorted(p.name for p in made)
    assert names == sorted(f"transformer-course-{number}{end}" for end in (
        "-instructor-pack.zip", "-student-edition.zip", ".pdf", "-student.pdf"))
    assert (tmp_path / "out" / f"transformer-course-{number}-student.pdf").read_text() == \
        "%PDF student"
    with zipfile.ZipFile(tmp_path / "out" / f"transformer-course-{number}-student-edition.zip") \
            as archive:
        top = f"transformer-course-{number}-student-edition"
        assert sorted(archive.namelist()) == [f"{top}/html/index.html",
                                              f"{top}/notebooks/01_a.ipynb"]


def test_the_launch_target_check_finds_a_button_on_another_branch(tmp_path: Path) -> None:
    binder = "https://mybinder.org/v2/gh/o/r/{b}?urlpath=lab/tree/_sources/a.ipynb"
    colab = "https://colab.research.google.com/github/o/r/blob/{b}/_sources/a.ipynb"
    page = '<a href="{}">Binder</a><a href="{}">Colab</a>'
    (tmp_path / "student").mkdir()
    (tmp_path / "a.html").write_text(page.format(binder.format(b="launch-v1.0.0"),
                                                 colab.format(b="launch-v1.0.0")))
    (tmp_path / "student" / "a.html").write_text(page.format(binder.format(b="launch-v1.0.0"),
                                                             colab.format(b="launch-v1.0.0")))
    assert release.check_launch_target(tmp_path, "launch-v1.0.0") == 4
    with pytest.raises(ValueError):
        release.check_launch_target(tmp_path, "launch-v1.0.1")
    (tmp_path / "student" / "a.html").write_text(page.format(binder.format(b="gh-pages"),
                                                             colab.format(b="launch-v1.0.0")))
    with pytest.raises(ValueError):  # the student edition's Binder button left on the rolling one
        release.check_launch_target(tmp_path, "launch-v1.0.0")
    with pytest.raises(ValueError):  # no buttons at all
        release.check_launch_target(tmp_path / "student" / "none", "launch-v1.0.0")
