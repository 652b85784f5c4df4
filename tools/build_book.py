"""Build the book: re-execute only the chapters an edit touched, in parallel, then run Sphinx.

``make book`` runs this. For every notebook chapter in ``_toc.yml`` (``toc_chapters.py``):

1. **What its execution depends on.** jupyter-cache keys a notebook on its code cells alone, so this
   adds the rest: the modules its code cells import (``ast``), followed through the import graph of
   the code folders given as INPUTs (grimp), together with their parent packages (Python runs those
   too) and the non-Python files in their package folders (data, assets); the pin files given
   as INPUTs; and the execution settings of ``_config.yml`` that can change an output (timeout,
   allow_errors, run_in_temp). One fingerprint of those per chapter is kept beside the execution
   cache (``_build/.jupyter_cache.chapters.json``). When a chapter's fingerprint changes, its
   records are removed from the jupyter-cache, so it re-executes; the other chapters keep theirs.
2. **Execution, in parallel.** Every chapter that has no cached execution for its current cells
   runs in a worker process of this tool (nbclient, as jupyter-cache's own executors run it, in
   a temporary folder when ``run_in_temp`` is set), one worker per core and the longest chapters
   first: by this build folder's last measurement of each, else by the book's own record
   (``_execution_seconds.yml`` beside ``_toc.yml``, which a clean build needs: a long chapter
   started last leaves the other workers idle while it runs). This process then stores each
   executed notebook in the jupyter-cache MyST-NB reads, through jupyter-cache's public
   ``cache_notebook_bundle``, one at a time: MyST-NB then finds each of them there ("Using
   cached notebook") and executes nothing. Each chapter is still one kernel, single-threaded by
   its own ``setup_notebook()``. A chapter that raises fails the build here with its traceback
   (the others are still cached).
3. **The site.** ``jupyter-book build --all -W -n --keep-going`` into a fresh ``_build/html``, its
   output also written to ``_build/build.log``, exactly as before: every build that does anything
   reads every page, so a warning fails every build, not only the first. Only when nothing the
   site is made from has changed since the last *successful* build (``_build/.site-inputs``: the
   book folder, the INPUTs, the installed packages) and nothing was executed is Sphinx skipped.

Usage: python tools/build_book.py [--jobs N] BOOK [INPUT ...]
  BOOK: the folder holding _config.yml and _toc.yml.
  INPUT: a folder of importable code (its packages and top-level modules are what chapters may
    import) or a file every chapter depends on (pins).
  --jobs N: parallel chapter executions (default: one per core); 0 leaves execution to MyST-NB,
    one chapter at a time as Sphinx reads it (the serial build, for comparison).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lean_jsonschema  # noqa: E402
import toc_chapters  # noqa: E402
from kernels import unix_socket_kernel  # noqa: E402

FORMAT = 1  # bump when what a fingerprint covers changes: every chapter then re-executes
PREFIX = "build_book:"
STRICT_ENV = "TRANSFORMER_COURSE_STRICT"  # transformer_course.claims.STRICT_ENV
EXECUTION_SETTINGS = "_config.yml's execute settings"  # their digest joins every fingerprint
EXPECTED_SECONDS = "_execution_seconds.yml"  # the book's record of each chapter's seconds
# How jupyter-cache reads a chapter as MyST-NB does: MyST Markdown through MyST-NB's own reader
# plugin, notebooks as they are.
READ_DATA = {".md": {"name": "myst_nb_md", "type": "plugin"},
             ".ipynb": {"name": "nbformat", "type": "plugin"}}
# Folders that are never code nor site inputs (build outputs, caches, tool state).
SKIPPED_DIRS = {"__pycache__", "_build", "notebooks", "node_modules"}
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".egg-info")
# How the chapter workers start: None is the platform's default, which every platform supports
# ("fork" on Linux before Python 3.14: the workers start at once with what this process imported;
# "spawn" on macOS and Windows; "forkserver" on Linux from 3.14). Everything a worker is sent is
# picklable and everything it runs importable, so any start method works: tests/test_build_book.py
# runs the parallel path under "spawn".
START_METHOD: str | None = None
JUPYTER_BOOK = lean_jsonschema.then("from jupyter_book.cli.main import main; sys.exit(main())")


def usable_cores() -> int:
    """How many CPUs this process may run on: ``os.process_cpu_count()`` (Python 3.13+), else its
    CPU affinity where the platform has one (Linux), else ``os.cpu_count()``; at least 1."""
    if hasattr(os, "process_cpu_count"):
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def emit(message: str) -> None:
    print(f"{PREFIX} {message}", flush=True)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def shown(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` (the book) where it is inside it, else absolute: how files
    are named in messages and stamps."""
    path = Path(os.path.abspath(path))
    try:
        return path.relative_to(Path(os.path.abspath(base))).as_posix()
    except ValueError:
        return path.as_posix()


def walk_files(root: Path) -> list[Path]:
    """Every file under ``root`` (symlinks followed), build outputs, caches and hidden entries
    left out, in a stable order."""
    found, seen = [], set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        key = (os.stat(folder).st_dev, os.stat(folder).st_ino)
        if key in seen:  # a symlink back up the tree
            dirs[:] = []
            continue
        seen.add(key)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS
                         and not d.endswith(SKIPPED_SUFFIXES))
        found += [Path(folder) / f for f in sorted(files)
                  if not f.startswith(".") and not f.endswith(SKIPPED_SUFFIXES)]
    return found


# --- what a chapter imports -----------------------------------------------------------------

def imported_names(source: str) -> set[str] | None:
    """Dotted names a piece of Python may import: ``import a.b`` gives ``a.b``; ``from a import
    b`` gives ``a`` and ``a.b`` (``b`` may be a submodule); ``importlib.import_module("x")`` and
    ``__import__("x")`` give ``x``. None when that cannot be told (the code does not parse, or
    imports a name it computes): the caller then assumes everything.

    Args:
        source: Python source; IPython magics are allowed (they are translated first).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        from IPython.core.inputtransformer2 import TransformerManager

        try:
            tree = ast.parse(TransformerManager().transform_cell(source))
        except SyntaxError:
            return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names
                         if alias.name != "*")
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if called in ("import_module", "__import__"):
                first = node.args[0] if node.args else None
                if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                    return None
                names.add(first.value)
    return names


def read_notebook(path: Path) -> Any:
    """The chapter as MyST-NB reads it (what the cache hashes), through the reader of
    ``READ_DATA`` that jupyter-cache will use too."""
    from jupyter_cache.readers import get_reader

    return get_reader(READ_DATA[Path(path).suffix])(str(path))


def notebook_imports(notebook: Any) -> list[str] | None:
    """Sorted names the notebook's code cells import; None when that cannot be told."""
    names: set[str] = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        found = imported_names(cell.source)
        if found is None:
            return None
        names |= found
    return sorted(names)


# --- the code folders and their import graph ------------------------------------------------

@dataclass
class Code:
    """The importable code under the INPUT folders, and the pins."""

    roots: list[Path]
    pins: list[Path]
    files: dict[str, Path] = field(default_factory=dict)  # module -> .py or __init__.py
    packages: set[str] = field(default_factory=set)  # modules that are packages
    graph: Any = None  # grimp's ImportGraph of the packages (None when there are none)

    @classmethod
    def load(cls, inputs: Iterable[Path]) -> Code:
        """Index the modules under the folders in ``inputs``; files in ``inputs`` are pins."""
        inputs = [Path(p) for p in inputs]
        code = cls(roots=[p for p in inputs if p.is_dir()], pins=[p for p in inputs if p.is_file()])
        top_packages = []
        for root in code.roots:
            for entry in sorted(root.iterdir()):
                if entry.name.startswith(".") or entry.name in code.files:
                    continue
                if entry.is_file() and entry.suffix == ".py" and entry.stem.isidentifier():
                    code.files.setdefault(entry.stem, entry)
                elif entry.is_dir() and (entry / "__init__.py").is_file() \
                        and entry.name.isidentifier():
                    top_packages.append(entry.name)
                    code.index_package(entry.name, entry)
        if top_packages:
            import grimp

            saved = list(sys.path)
            sys.path[:0] = [str(Path(root).resolve()) for root in code.roots]  # grimp looks there
            try:
                code.graph = grimp.build_graph(*top_packages, include_external_packages=True,
                                               cache_dir=None)
            finally:
                sys.path[:] = saved
        return code

    def index_package(self, name: str, folder: Path) -> None:
        self.files[name] = folder / "__init__.py"
        self.packages.add(name)
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith(".") or entry.name == "__pycache__":
                continue
            if entry.is_dir() and (entry / "__init__.py").is_file():
                self.index_package(f"{name}.{entry.name}", entry)
            elif entry.suffix == ".py" and entry.name != "__init__.py":
                self.files[f"{name}.{entry.stem}"] = entry

    def resolve(self, names: Iterable[str]) -> set[str]:
        """The modules of ours that importing ``names`` runs: each name's known prefixes."""
        found = set()
        for name in names:
            parts = name.split(".")
            found.update(m for i in range(1, len(parts) + 1)
                         if (m := ".".join(parts[:i])) in self.files)
        return found

    def direct_imports(self, module: str) -> set[str]:
        """Modules of ours that ``module`` imports."""
        if self.graph is not None and module in self.graph.modules:
            return self.resolve(self.graph.find_modules_directly_imported_by(module))
        names = imported_names(self.files[module].read_text(encoding="utf-8"))
        return set(self.files) if names is None else self.resolve(names)

    def closure(self, names: Iterable[str] | None) -> set[str]:
        """Every module of ours that importing ``names`` runs (None: all of them)."""
        if names is None:
            return set(self.files)
        todo, seen = list(self.resolve(names)), set()
        while todo:
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            parts = module.split(".")
            todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # parent packages
            todo += self.direct_imports(module)
        return seen

    def dependency_files(self, modules: set[str]) -> list[Path]:
        """The files behind ``modules``: their sources, and for each package the files in its
        folder that no module stands for (data, assets, non-package subfolders)."""
        files = {self.files[m] for m in modules}
        for package in modules & self.packages:
            folder = self.files[package].parent
            for path in walk_files(folder):
                inner = path.relative_to(folder).parts
                # a subpackage's files, and sibling modules, are covered only if imported
                if len(inner) > 1 and self.is_package_dir(folder, inner[:-1]):
                    continue
                if len(inner) == 1 and path.suffix == ".py":
                    continue
                files.add(path)
        return sorted(files) + sorted(self.pins)

    @staticmethod
    def is_package_dir(folder: Path, parts: tuple[str, ...]) -> bool:
        return any((folder.joinpath(*parts[:i]) / "__init__.py").is_file()
                   for i in range(1, len(parts) + 1))


def fingerprint(files: list[Path], base: Path, extra: dict[str, str] | None = None,
                ) -> tuple[str, dict[str, str]]:
    """One digest over ``files`` (names relative to ``base``, and contents) and the ``extra``
    named digests, and each one's own digest."""
    each = {shown(path, base): sha256(path.read_bytes()) for path in files} | (extra or {})
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0".encode())
    for name, value in sorted(each.items()):
        digest.update(f"{name}\0{value}\0".encode())
    return digest.hexdigest(), each


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Human-readable differences between two ``fingerprint`` file maps."""
    changed = [f"{n} changed" for n in sorted(before.keys() & after.keys())
               if before[n] != after[n]]
    added = [f"{n} is new" for n in sorted(after.keys() - before.keys())]
    gone = [f"{n} is gone" for n in sorted(before.keys() - after.keys())]
    return changed + added + gone


# --- the book ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    """The execution settings of ``_config.yml`` (Jupyter Book's defaults where unset)."""

    mode: str
    cache: Path
    timeout: int
    allow_errors: bool
    in_temp: bool
    exclude: tuple[str, ...]

    @classmethod
    def of(cls, book: Path) -> Settings:
        config = yaml.safe_load((book / "_config.yml").read_text()) or {}
        execute = config.get("execute") or {}
        mode = execute.get("execute_notebooks", "auto")
        cache = execute.get("cache") or ""
        return cls(mode="off" if mode is False else str(mode),
                   cache=(book / cache) if cache else book / "_build" / ".jupyter_cache",
                   timeout=int(execute.get("timeout", 30)),
                   allow_errors=bool(execute.get("allow_errors", False)),
                   in_temp=bool(execute.get("run_in_temp", False)),
                   exclude=tuple(execute.get("exclude_patterns") or ()))

    def digest(self) -> str:
        """A digest of the settings that can change what an execution outputs (a cell that
        times out, an error kept as an output, the folder a chapter runs in)."""
        return sha256(json.dumps([self.timeout, self.allow_errors, self.in_temp]).encode())


class Cache:
    """The jupyter-cache MyST-NB reads, opened only when something has to be looked up there
    (importing it costs seconds; a no-change build never does)."""

    def __init__(self, path: Path):
        self.path = path
        self.opened = None

    @property
    def jc(self) -> Any:
        if self.opened is None:
            from jupyter_cache import get_cache

            self.opened = get_cache(str(self.path))
        return self.opened

    def has_executed(self, hashkey: str | None) -> bool:
        """Whether the cache still holds the execution stored under ``hashkey`` (no import)."""
        return bool(hashkey) and (self.path / "executed" / hashkey / "base.ipynb").is_file()

    def match(self, notebook: Any) -> Any:
        """The cache record executed from ``notebook``'s cells, or None."""
        try:
            return self.jc.match_cache_notebook(notebook)
        except KeyError:
            return None

    def purge(self, path: Path, notebook: Any) -> tuple[int, float | None]:
        """Remove every cached execution of the chapter at ``path``, and any execution of its
        current cells cached under another name; return how many, and the longest one's
        seconds (None when there was none)."""
        if not (self.path / "global.db").is_file():
            return 0, None
        uri = str(Path(path).absolute())
        records = {r.pk: r for r in self.jc.list_cache_records() if r.uri == uri}
        if (record := self.match(notebook)) is not None:
            records[record.pk] = record
        for pk in sorted(records):
            self.jc.remove_cache(pk)
        seconds = [r.data.get("execution_seconds") for r in records.values()]
        return len(records), max((s for s in seconds if s is not None), default=None)


@dataclass
class Chapter:
    path: Path  # the source, inside the book
    name: str  # relative to the book: how messages and the stamp name it
    source_hash: str
    previous: dict  # its entry in the stamp (empty when none)
    imports: list[str] | None = None
    fingerprint: str = ""
    files: dict[str, str] = field(default_factory=dict)
    hashkey: str | None = None
    seconds: float | None = None
    notebook: Any = None

    def read(self) -> Any:
        if self.notebook is None:
            self.notebook = read_notebook(self.path)
        return self.notebook

    def entry(self) -> dict:
        return {"source": self.source_hash, "imports": self.imports,
                "fingerprint": self.fingerprint, "files": self.files, "hashkey": self.hashkey,
                "seconds": self.seconds}


def load_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == FORMAT else {}


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps({"format": FORMAT, **data}, indent=1, sort_keys=True) + "\n")
    temporary.replace(path)


def excluded(path: Path, patterns: Iterable[str]) -> bool:
    posix = PurePosixPath(Path(path).as_posix())
    return any(posix.match(pattern) for pattern in patterns)


def plan(book: Path, inputs: list[Path], settings: Settings, cache: Cache,
         stamp: dict) -> tuple[list[Chapter], list[Chapter]]:
    """Fingerprint every notebook chapter, purge the cache of those whose fingerprint changed,
    and return (every chapter, those to execute)."""
    code = Code.load(inputs)
    chapters, to_run = [], []
    previous = stamp.get("chapters", {})
    for relative in toc_chapters.chapters(book, notebooks_only=True):
        path = book / relative
        chapter = Chapter(path=path, name=Path(relative).as_posix(),
                          source_hash=sha256(path.read_bytes()),
                          previous=previous.get(Path(relative).as_posix(), {}))
        chapters.append(chapter)
        known = chapter.previous.get("source") == chapter.source_hash
        chapter.imports = chapter.previous.get("imports") if known \
            else notebook_imports(chapter.read())
        modules = code.closure(chapter.imports)
        chapter.fingerprint, chapter.files = fingerprint(
            code.dependency_files(modules), book, {EXECUTION_SETTINGS: settings.digest()})
        chapter.seconds = chapter.previous.get("seconds")
        if excluded(path, settings.exclude):
            continue
        if chapter.previous.get("fingerprint") != chapter.fingerprint:
            why = changes(chapter.previous.get("files", {}), chapter.files) \
                if chapter.previous else ["no record of the code it last ran against"]
            removed, seconds = cache.purge(path, chapter.read())
            chapter.seconds = chapter.seconds if chapter.seconds is not None else seconds
            shown_why = "; ".join(why[:4]) + (f"; {len(why) - 4} more" if len(why) > 4 else "")
            dropped = f"; {removed} cached execution(s) dropped" if removed else ""
            emit(f"{chapter.name}: re-executes: {shown_why}{dropped}")
        elif known and cache.has_executed(chapter.previous.get("hashkey")):
            chapter.hashkey = chapter.previous["hashkey"]
            continue
        record = cache.match(chapter.read()) if (cache.path / "global.db").is_file() else None
        if record is not None:
            chapter.hashkey = record.hashkey
            chapter.seconds = record.data.get("execution_seconds", chapter.seconds)
        else:
            to_run.append(chapter)
    return chapters, to_run


def execute_chapter(job: tuple[str, Any, int, bool, bool]) -> tuple[str, Any, float, str]:
    """Worker: execute one chapter's notebook, as jupyter-cache's executors do (nbclient, the
    notebook's own kernel, no per-cell timing), in a temporary folder or beside the source.

    Args:
        job: (the chapter's path, its notebook as MyST-NB reads it, the timeout per cell in
            seconds, whether errors are kept as outputs, whether to run in a temporary folder).

    Returns:
        (the path, the executed notebook or None, the seconds it took, the error or "").
    """
    import tempfile

    lean_jsonschema.load()
    from nbclient import NotebookClient

    path, notebook, timeout, allow_errors, in_temp = job
    folder = tempfile.mkdtemp() if in_temp else str(Path(path).parent)
    started = time.perf_counter()
    try:
        with unix_socket_kernel() as kernel:
            NotebookClient(notebook, km=kernel, timeout=timeout, allow_errors=allow_errors,
                           record_timing=False,
                           resources={"metadata": {"path": folder}}).execute()
    except Exception as error:  # a cell raised, timed out, or the kernel died: report it
        return path, None, 0.0, f"{type(error).__name__}: {error}"
    finally:
        if in_temp:
            shutil.rmtree(folder, ignore_errors=True)
    return path, notebook, time.perf_counter() - started, ""


def recorded_seconds(book: Path) -> dict[str, float]:
    """The book's record of each chapter's execution seconds (``_execution_seconds.yml``:
    {chapter path relative to the book: seconds}); empty when it has none."""
    path = book / EXPECTED_SECONDS
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def longest_first(chapters: list[Chapter], recorded: dict[str, float]) -> list[Chapter]:
    """The order to start ``chapters`` in: longest first, by this build's last measurement, else
    by ``recorded``; a chapter neither knows goes first, the largest source first (the best
    guess there is: it has the most to run)."""
    def estimate(chapter: Chapter) -> tuple[bool, float, int]:
        seconds = chapter.seconds if chapter.seconds is not None else recorded.get(chapter.name)
        return seconds is None, seconds or 0.0, chapter.path.stat().st_size

    return sorted(chapters, key=estimate, reverse=True)


def execute(chapters: list[Chapter], cache: Cache, settings: Settings, jobs: int,
            recorded: dict[str, float]) -> list[str]:
    """Execute ``chapters`` into the cache, ``jobs`` at a time, longest first (``longest_first``).
    Returns one message per chapter that failed."""
    import multiprocessing

    from jupyter_cache.base import CacheBundleIn

    order = longest_first(chapters, recorded)
    by_path = {str(c.path.absolute()): c for c in order}
    work = [(path, c.read(), settings.timeout, settings.allow_errors, settings.in_temp)
            for path, c in by_path.items()]
    workers = max(1, min(jobs, len(work)))
    emit(f"executing {len(work)} chapter(s), {workers} at a time, longest first: "
         + ", ".join(c.name for c in order))
    failures = []
    context = multiprocessing.get_context(START_METHOD)
    with context.Pool(workers) as pool:
        for path, executed, seconds, error in pool.imap_unordered(execute_chapter, work,
                                                                   chunksize=1):
            chapter = by_path[path]
            if executed is None:
                failures.append(f"{chapter.name}: executing the chapter failed:\n{error}")
                continue
            # stored here, one at a time: the cache's store step is not safe to run in parallel
            record = cache.jc.cache_notebook_bundle(
                CacheBundleIn(executed, path, data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            chapter.hashkey, chapter.seconds = record.hashkey, seconds
            print(f"{chapter.path}: Executed notebook in {seconds:.2f} seconds [build_book]",
                  flush=True)
    return failures


# --- the site ------------------------------------------------------------------------------

def site_fingerprint(book: Path, inputs: list[Path]) -> str:
    """A digest of everything the site is made from: the book folder (pages, configuration,
    local extensions), the INPUTs, which packages are installed, and the release it is built
    for, if any (``$COURSE_RELEASE``)."""
    files = set(walk_files(book))
    for path in inputs:
        files.update(walk_files(path) if path.is_dir() else [path])
    digest, _ = fingerprint(sorted(files), book)
    installed = sorted(os.listdir(sysconfig.get_paths()["purelib"]))
    release = os.environ.get("COURSE_RELEASE", "")  # a release build's buttons (release.py)
    return sha256(f"{digest}\0{installed}\0{release}".encode())


def run_sphinx(book: Path, log: Path, lines: list[str]) -> int:
    """``jupyter-book build --all -W -n --keep-going BOOK`` into a fresh site; its output goes
    to stdout and, after ``lines``, to ``log``."""
    html = book / "_build" / "html"
    if html.exists():
        shutil.rmtree(html)  # pages dropped from _toc.yml must not linger
    command = [sys.executable, "-c", JUPYTER_BOOK, "build", "--all", "-W", "-n", "--keep-going",
               str(book)]  # `jupyter-book build ...`, without the import above
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, errors="replace")
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            out.write(line)
        return process.wait()


def build(book: Path, inputs: list[Path], jobs: int) -> int:
    lean_jsonschema.load()  # before the readers (MyST-NB, nbformat) import jsonschema
    build_dir = book / "_build"
    settings = Settings.of(book)
    cache = Cache(settings.cache)
    stamp_path = settings.cache.with_name(settings.cache.name + ".chapters.json")
    site_stamp = build_dir / ".site-inputs"
    log = build_dir / "build.log"
    lines: list[str] = []

    def say(message: str) -> None:
        emit(message)
        lines.append(f"{PREFIX} {message}")

    site = site_fingerprint(book, inputs)
    caching = settings.mode == "cache"
    executed, failures = [], []
    if caching:
        stamp = load_json(stamp_path)
        chapters, to_run = plan(book, inputs, settings, cache, stamp)
        # the fingerprints are recorded before executing: an edit made meanwhile re-executes
        write_json(stamp_path, {"chapters": {c.name: c.entry() for c in chapters}})
        if to_run and jobs > 0:
            started = time.perf_counter()
            failures = execute(to_run, cache, settings, jobs, recorded_seconds(book))
            executed = [c for c in to_run if c.hashkey]
            write_json(stamp_path, {"chapters": {c.name: c.entry() for c in chapters}})
            say(f"executed {len(executed)} of {len(to_run)} chapter(s) in "
                f"{time.perf_counter() - started:.1f} s with {min(jobs, len(to_run))} worker(s)")
        elif to_run:
            say(f"{len(to_run)} chapter(s) left to MyST-NB to execute (--jobs 0)")
        else:
            say(f"all {len(chapters)} chapter(s) have a cached execution of their current "
                "cells and code")
        if not to_run and site_stamp.is_file() and site_stamp.read_text().strip() == site \
                and (build_dir / "html" / "index.html").is_file():
            emit("nothing the site is made from changed since the last successful build: "
                 f"{build_dir / 'html'} is current ({log} is that build's log)")
            return 0
    site_stamp.unlink(missing_ok=True)  # until this build succeeds, the next one is full
    if failures:
        for failure in failures:
            say(failure)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("\n".join(lines) + "\n", encoding="utf-8")
        emit(f"{len(failures)} chapter(s) failed: the site was not built")
        return 1
    code = run_sphinx(book, log, lines)
    if code == 0:
        site_stamp.write_text(site + "\n")
    return code


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=usable_cores(),
                        help="parallel chapter executions (default: one per core; 0: none)")
    parser.add_argument("book", type=Path)
    parser.add_argument("inputs", nargs="*", type=Path)
    args = parser.parse_args(argv)
    missing = [str(p) for p in [args.book, *args.inputs] if not p.exists()]
    if missing:
        parser.error(f"no such path: {', '.join(missing)}")
    if args.jobs < 0:
        parser.error(f"--jobs must be 0 or more; got {args.jobs}")
    # Chapters executed by the build check their claims strictly: a claim that fails stops it
    # (transformer_course.claims; a reader's notebook only reports it).
    os.environ[STRICT_ENV] = "1"
    return build(args.book, args.inputs, args.jobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
