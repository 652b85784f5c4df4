"""The registry of stored studies: runs too slow for every build, kept as data beside their code.

A page's number or figure is either *live* (computed by the page's own execution, on the reader's
machine when a reader runs it) or *stored* (read from one of the studies below). Each stored
study has one data file, the one command that regenerates it, what that costs, and an
environment record beside the data (``<stem>.environment.json``: CPU, torch's kernel level,
versions, threads; :func:`transformer_course.claims.environment`), written by that command.
Pages name the study whenever they quote it ("the stored sweep, ``ch2-lr-sweep``") and list
their studies in a lab note (:func:`studies_table`).

Each study is declared once, beside the code that makes it (``STUDY = declare(__file__, ...)`` in
its module: the file, the chapters, the cost; the command is that module's), read with one
loader (:func:`load`), and collected into :data:`STUDIES`.

A sentence a page says about stored data holds exactly, on any CPU, for as long as the data is
the same, so it is checked once, as data, not at every build: each study names the function that
checks its pages' sentences (:meth:`StoredStudy.data_claims`, a list of :class:`DataClaim`).
``tests/test_stored.py`` runs them all, and each regeneration command runs its own study's
(:func:`check_data_claims`) after writing the data, so new data that no longer bears the prose
out is caught where it is made.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .calibration import CALIBRATION_PATH
from .claims import ClaimError, environment

PACKAGE = Path(__file__).resolve().parent
EXPERIMENTS = PACKAGE / "experiments"


def load(path: Path) -> Any:
    """A stored study's data file: a CSV as a pandas DataFrame, a JSON file as what it holds."""
    if path.suffix == ".csv":
        import pandas as pd

        return pd.read_csv(path)
    return json.loads(path.read_text(encoding="utf-8"))


def environment_path(data: Path) -> Path:
    """Where the environment record of the data file ``data`` lies: ``<stem>.environment.json``."""
    return data.with_name(f"{data.stem}.environment.json")


@dataclass(frozen=True)
class DataClaim:
    """A sentence a page says about stored data, and whether the data bears it out."""

    text: str  # the sentence, or its gist
    holds: bool
    numbers: dict[str, Any] = field(default_factory=dict)  # the values it rests on

    def __str__(self) -> str:
        shown = ", ".join(f"{name} = {value!r:.200}" for name, value in self.numbers.items())
        return f"{self.text!r}" + (f" ({shown})" if shown else "")


def data_claim(text: str, holds: Any, **numbers: Any) -> DataClaim:
    """A :class:`DataClaim`: ``text`` the page's sentence, ``holds`` whether the stored data
    bears it out, ``numbers`` the values it rests on."""
    return DataClaim(text, bool(holds), numbers)


@dataclass(frozen=True)
class StoredStudy:
    """One stored study: its data file, the command that remakes it and what that costs."""

    name: str  # how pages cite it, "ch2-lr-sweep"
    chapters: tuple[int, ...]  # the chapters that read it
    path: Path  # the data file
    command: str  # regenerates the file and its environment record
    cost: str  # on one thread of the machine it was made on
    companions: tuple[Path, ...] = ()  # other files the command writes (stored models, a BPE)
    claims: str = ""  # "module:function" returning the DataClaims its pages rest on

    def load(self) -> Any:
        """The study's data (:func:`load`)."""
        return load(self.path)

    def data_claims(self) -> list[DataClaim]:
        """The sentences the pages say about this study's data, each checked on the data."""
        if not self.claims:
            return []
        module, _, function = self.claims.partition(":")
        return list(getattr(importlib.import_module(module), function)())

    def environment(self) -> dict[str, Any]:
        """The environment the data was made in, as recorded beside it."""
        return json.loads(environment_path(self.path).read_text(encoding="utf-8"))

    def made_on(self) -> str:
        """Where the data was made, short enough for a table column: CPU, torch's kernel level,
        torch's version and threads ("Intel Xeon (AVX512), torch 2.13.0, 1 thread")."""
        env = self.environment()
        if "gpu" in env:  # trained and scored on a GPU (the record's CPU only ran Python)
            return f"{env['gpu']}, torch {env['torch'].split('+')[0]}"
        threads = env["threads"]
        software = (f"torch {env['torch'].split('+')[0]}, "
                    f"{threads} thread{'s' if threads != 1 else ''}")
        by_machine: dict[str, list[str]] = {}  # a file made in parts: which part where
        for part, machine in env.get("machines", {}).items():
            by_machine.setdefault(_short_cpu(machine), []).append(part)
        if len(by_machine) > 1:  # parts named by chapter ("07_translation"): "chapter 7"
            return "; ".join(
                f"{machine}: chapter{'s' if len(parts) > 1 else ''} "
                + ", ".join(part.split("_")[0].lstrip("0") for part in parts)
                for machine, parts in by_machine.items()) + f"; {software}"
        return f"{_short_cpu(machine_of(env))}, {software}"


def machine_of(env: dict[str, Any]) -> str:
    """A recorded environment's CPU and torch's kernel level ("Intel(R) Xeon(R) (AVX512)")."""
    return f"{env['cpu']} ({env['cpu_capability']})"


def _short_cpu(machine: str) -> str:
    return " ".join(word for word in machine.replace("(R)", "").replace("(TM)", "").split()
                    if word not in ("CPU", "Processor"))


def declare(module_file: str, name: str, chapters: tuple[int, ...], file: str, cost: str, *,
            args: str = "", claims: str = "data_claims",
            companions: tuple[str, ...] = ()) -> StoredStudy:
    """Study ``name``, declared by the experiment module whose ``__file__`` is ``module_file``:
    its data ``file`` (and ``companions``) beside the module, regenerated by ``python -m
    <module> <args>`` at ``cost``; ``claims`` names the module's function that checks what the
    pages say about the data ("" for none)."""
    here = Path(module_file).resolve()
    module = ".".join(here.relative_to(PACKAGE.parent).with_suffix("").parts)
    command = f"python -m {module}" + (f" {args}" if args else "")
    return StoredStudy(name, chapters, here.with_name(file), command, cost,
                       tuple(here.with_name(c) for c in companions),
                       f"{module}:{claims}" if claims else "")


# The modules that declare studies (each a ``declare(__file__, ...)``), in page order. They are
# imported when the registry is first read: they import this module, so not before.
STUDY_MODULES = ("ch2_scaled_dot_product_attention.lr_sweep", "ch3_multi_head_attention.head_rates",
                 "ch5_full_model.norm_warmup", "ch6_training.stored_runs",
                 "ch7_translation.opening_map", "ch7_translation.stored_tables",
                 "ch8_real_sentences.stored_models", "ch8_real_sentences.cpu_translator",
                 "ch8_real_sentences.small_writer")

# Every trained statistic the chapters claim something about, on this CPU and 20 simulated others
# (calibration.py); made by the repository's benchmark, not by the package.
CALIBRATION = StoredStudy("calibration", (2, 3, 4, 5, 6, 7, 8), CALIBRATION_PATH,
                          "python -m bench.calibration",
                          "about 2 CPU-hours (chapters 2 to 8, 21 runs each)")


class Registry(Mapping[str, StoredStudy]):
    """Every stored study by name, collected from :data:`STUDY_MODULES` on first use."""

    @functools.cached_property
    def _studies(self) -> dict[str, StoredStudy]:
        found: dict[str, StoredStudy] = {}
        for name in STUDY_MODULES:
            module = importlib.import_module(f"{PACKAGE.name}.experiments.{name}")
            for value in vars(module).values():
                if isinstance(value, StoredStudy):
                    found.setdefault(value.name, value)
        return {**found, CALIBRATION.name: CALIBRATION}

    def __getitem__(self, name: str) -> StoredStudy:
        return self._studies[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._studies)

    def __len__(self) -> int:
        return len(self._studies)


STUDIES: Mapping[str, StoredStudy] = Registry()


def study(name: str) -> StoredStudy:
    """The stored study called ``name`` (see :data:`STUDIES`)."""
    if name not in STUDIES:
        raise ValueError(f"name must be one of {sorted(STUDIES)}; got {name!r}")
    return STUDIES[name]


def check_data_claims(name: str) -> None:
    """Raise :class:`~transformer_course.claims.ClaimError` listing every sentence the pages say
    about study ``name`` that its data no longer bears out (a regeneration command's last step)."""
    failing = [c for c in study(name).data_claims() if not c.holds]
    if failing:
        raise ClaimError(f"study {name}: {len(failing)} sentence(s) of the pages no longer hold "
                         "on the new data: " + "; ".join(str(c) for c in failing))


def record_environment(path: Path, **extra: Any) -> Path:
    """Write this process's environment beside the data file ``path`` (its study's record), with
    the fields ``extra``; every regeneration command calls this after writing its data."""
    record = environment_path(path)
    record.write_text(json.dumps({"recorded": True, **environment(), **extra}, indent=1,
                                 sort_keys=True) + "\n", encoding="utf-8")
    return record


def studies_table(chapter: int | None = None) -> Any:
    """The registry (or one chapter's studies) as a table narrow enough for a page: study, file,
    where it was made, the module that remakes it (``python -m
    transformer_course.experiments.chN_<chapter>.<module> [args]``) and its cost."""
    import pandas as pd

    prefix = "python -m transformer_course.experiments."

    def remade_by(command: str) -> str:  # "ch2_x.lr_sweep" -> "lr_sweep"; "bench.calibration"
        if command.startswith(prefix):
            return command.removeprefix(prefix).split(".", 1)[1]
        return command.removeprefix("python -m ")

    rows = [{"study": s.name, "file": s.path.name, "made on": s.made_on(),
             "remade by": f"`{remade_by(s.command)}`",  # code: the site's typography keeps "--"
             "cost": s.cost.removeprefix("about ")}
            for s in STUDIES.values() if chapter is None or chapter in s.chapters]
    return pd.DataFrame(rows)
