"""The launch branch: what the publishing workflow deploys to GitHub Pages and pushes to the branch
the Binder and Colab buttons read (``launch_branch`` in ``_config.yml``).

    python tools/launch_branch.py BOOK OUT      (make launch-branch: _build/launch-branch)

It holds, for one commit:

- the built site (``BOOK/_build/html``), whose ``_sources/`` hold each chapter's readable,
  executed notebook;
- the student edition (``BOOK/_build/student/html``, ``make student``) under ``student/``, whose
  ``_sources/`` hold the notebooks without solutions that its buttons open;
- Binder's environment: ``binder/`` (runtime, pins, ``postBuild``), the reader's pins, the
  package's source (``pyproject.toml``, ``code/``, README and licences) and JupyterLab's settings
  (``.jupyter/``). Binder's image build installs the pins and the package and executes no
  chapter: the notebooks it opens were executed by the site's build.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

BINDER_ENVIRONMENT = ("binder", "requirements.txt", "pyproject.toml", "README.md", "LICENSE",
                      "LICENSE-CONTENT.md", "code", ".jupyter")
LEFT_OUT = shutil.ignore_patterns("*.egg-info", "__pycache__", "*.pyc", ".ipynb_checkpoints")


def write_launch_branch(book: Path, out: Path, with_student: bool = True) -> Path:
    """Write the launch branch's files for the book in ``book`` into ``out`` (replaced);
    ``with_student=False`` leaves the student edition out (tests of Binder's part)."""
    site, student = book / "_build" / "html", book / "_build" / "student" / "html"
    needed = ((site, "make book"),) + (((student, "make student"),) if with_student else ())
    for built, command in needed:
        if not (built / "index.html").is_file():
            raise FileNotFoundError(f"{built} is not built: run `{command}` first")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(site, out, ignore=LEFT_OUT)
    if with_student:
        shutil.copytree(student, out / "student", ignore=LEFT_OUT)
    for name in BINDER_ENVIRONMENT:
        source = book / name
        if source.is_dir():
            shutil.copytree(source, out / name, ignore=LEFT_OUT)
        else:
            shutil.copy2(source, out / name)  # keeps postBuild's executable bit
    (out / ".nojekyll").touch()  # GitHub Pages serves _sources/, _static/ and .jupyter/ as they are
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", type=Path, help="the folder holding _config.yml and _build/")
    parser.add_argument("out", type=Path, help="the folder to write (replaced)")
    args = parser.parse_args()
    print(write_launch_branch(args.book.resolve(), args.out.resolve()))


if __name__ == "__main__":
    main()
