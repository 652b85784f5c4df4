"""The fresh virtual environments two pipeline tests run chapters in: the student set as pinned
(tests/test_student_edition.py) and the student set on the oldest torch the package accepts
(tests/test_oldest_torch.py).

Each is mostly a download (the oldest torch is PyPI's Linux build, about 3.5 GB with its CUDA
libraries), minutes in which a test worker would wait on the network while the other cores run
chapters. So `make check` starts building both in the background before pytest starts
(``python tests/fresh_envs.py --start``), into ``_build/fresh-envs/<name>``, and each test's fixture
waits for its environment there, then installs the package as it is now into it (``--no-deps``:
seconds); a prepared environment serves one session. Where no build was started (pytest run by
hand), the fixture builds the environment itself, in the test's temporary folder.

    python tests/fresh_envs.py --start            # both, in the background; returns at once
    python tests/fresh_envs.py student            # one, in the foreground (what --start runs)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PREPARED = REPO / "_build" / "fresh-envs"
STUDENT_SET = REPO / "requirements-student.txt"
NAMES = ("student", "old-torch")
WAIT_SECONDS = 2400  # a build started in the background may still be downloading


def torch_floor() -> str:
    """The lowest torch release pyproject.toml admits ("2.5")."""
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (floor,) = [re.fullmatch(r"torch>=(\d+\.\d+)", d).group(1) for d in dependencies
                if d.startswith("torch")]
    return floor


def _requirements(name: str, folder: Path) -> list[list[str]]:
    """The pip installs that make environment ``name``, one argument list each."""
    if name == "student":
        return [["-r", str(STUDENT_SET)]]
    # the floor's newest patch release of torch and the student set's other pins (its sympy pin
    # is torch's to choose; its jupytext reads the chapters)
    rest = folder / "requirements.txt"
    rest.write_text("\n".join(
        line for line in STUDENT_SET.read_text().splitlines()
        if not line.startswith(("torch", "sympy", "--extra-index-url", "#"))) + "\n")
    return [[f"torch=={torch_floor()}.*"], ["-r", str(rest)]]


def environ(**extra: str) -> dict[str, str]:
    """The environment for a process of a fresh environment: this one's, ``extra`` added, with
    bytecode written. pip installs without compiling (:func:`pip`), so each module is compiled
    when first imported; a ``PYTHONDONTWRITEBYTECODE`` inherited from the shell (this machine
    sets it) would make every process compile them again: importing torch, matplotlib, pandas
    and seaborn took 14-15 s each time here, 5.5 s once their bytecode was written."""
    env = {**os.environ, **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def python_of(folder: Path) -> Path:
    """The interpreter of the environment built in ``folder``."""
    return folder / "venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def pip(folder: Path) -> list[str]:
    """pip of the environment in ``folder``, quiet, with no bytecode written ahead (a run
    compiles only what it imports, once, if its environment lets it: :func:`environ`; a minute
    less here)."""
    return [str(python_of(folder)), "-m", "pip", "install", "--quiet", "--retries", "0",
            "--no-compile"]


def build(name: str, folder: Path) -> None:
    """Environment ``name`` without the course's package, in ``folder``; RuntimeError with pip's
    output when an install fails."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True, timeout=300)
    for args in _requirements(name, folder):
        done = subprocess.run(pip(folder) + args, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def start() -> None:
    """Build every environment into :data:`PREPARED` in the background, anew."""
    for name in NAMES:
        folder = PREPARED / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        log = (folder / "build.log").open("w")
        subprocess.Popen([sys.executable, __file__, name, "--into", str(folder)], stdout=log,
                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO,
                         start_new_session=True)
        (folder / "started").touch()
        print(f"fresh_envs: building {name} in the background into {folder}")


def prepared_or_built(name: str, scratch: Path, package: Path) -> Path:
    """The interpreter of environment ``name`` with the package at ``package`` installed: the one
    `make check` started in the background (waited for), else one built now in ``scratch``."""
    folder = PREPARED / name
    if (folder / "started").is_file():
        deadline = time.monotonic() + WAIT_SECONDS
        while not (folder / "done").is_file() and not (folder / "failed").is_file():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the background build of {name} took over {WAIT_SECONDS} s")
            time.sleep(2)
        if (folder / "failed").is_file():
            raise RuntimeError(f"the background build of {name} failed:\n"
                               f"{(folder / 'build.log').read_text()[-3000:]}")
        # used once: a later session builds its own, with the pins as they are then
        (folder / "started").unlink()
    else:
        folder = scratch
        build(name, folder)
    done = subprocess.run(pip(folder) + ["--no-deps", "--no-build-isolation", "--force-reinstall",
                                         str(package)], capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"pip install of the package failed:\n{done.stderr[-3000:]}")
    return python_of(folder)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", choices=NAMES)
    parser.add_argument("--into", type=Path, help="the folder to build in")
    parser.add_argument("--start", action="store_true", help="build all in the background")
    args = parser.parse_args(argv)
    if args.start:
        start()
        return 0
    if args.name is None:
        parser.error("name an environment, or --start")
    folder = args.into or PREPARED / args.name
    try:
        build(args.name, folder)
    except BaseException:  # whatever stops it, the waiting fixture must learn that it stopped
        (folder / "failed").touch()
        raise
    (folder / "done").touch()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
