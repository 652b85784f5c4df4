"""The registry of stored studies: runs too slow for every build, kept as data beside their code.

A page's number or figure is either *live* (computed by the page's own execution, on the reader's
machine when a reader runs it) or *stored* (read from one of the studies below). Each stored
study has one data file, the one command that regenerates it, what that costs, and an
environment record beside the data (``<stem>.environment.json``: CPU, torch's kernel level,
versions, threads; :func:`transformer_course.claims.environment`), written by that command.
Pages name the study whenever they quote it ("the stored sweep, ``ch2-lr-sweep``") and list
their studies in a lab note (:func:`studies_table`).

A sentence a page says about stored data holds exactly, on any CPU, for as long as the data is
the same, so it is checked once, as data, not at every build: each study names the function that
checks its pages' sentences (:meth:`StoredStudy.data_claims`, a list of :class:`DataClaim`).
``tests/test_stored.py`` runs them all, and each regeneration command runs its own study's
(:func:`check_data_claims`) after writing the data, so new data that no longer bears the prose
out is caught where it is made.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .calibration import CALIBRATION_PATH
from .claims import ClaimError, environment

EXPERIMENTS = Path(__file__).with_name("experiments")


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
        cpu = " ".join(word for word in env["cpu"].replace("(R)", "").replace("(TM)", "").split()
                       if word not in ("CPU", "Processor"))
        threads = env["threads"]
        return (f"{cpu} ({env['cpu_capability']}), torch {env['torch'].split('+')[0]}, "
                f"{threads} thread{'s' if threads != 1 else ''}")


def _study(name: str, chapters: tuple[int, ...], relative: str, module: str, args: str,
           cost: str, companions: tuple[str, ...] = (), claims: str = "") -> StoredStudy:
    """A study made by ``python -m transformer_course.experiments.<module> <args>``; ``claims``
    names its data claims' function as ``"<module under experiments>:<function>"``."""
    command = f"python -m transformer_course.experiments.{module}" + (f" {args}" if args else "")
    return StoredStudy(name, chapters, EXPERIMENTS / relative, command, cost,
                       tuple(EXPERIMENTS / c for c in companions),
                       f"transformer_course.experiments.{claims}" if claims else "")


STUDIES: dict[str, StoredStudy] = {study.name: study for study in (
    _study("ch2-lr-sweep", (2,), "ch2_scaled_dot_product_attention/lr_sweep.csv",
           "ch2_scaled_dot_product_attention.lr_sweep", "", "about 5 CPU-minutes",
           claims="ch2_scaled_dot_product_attention.lr_sweep:data_claims"),
    _study("ch3-head-rates", (3,), "ch3_multi_head_attention/head_rates.csv",
           "ch3_multi_head_attention.head_rates", "", "about 1 CPU-minute",
           claims="ch3_multi_head_attention.head_rates:data_claims"),
    _study("ch5-norm-warmup", (5,), "ch5_full_model/norm_warmup.csv",
           "ch5_full_model.norm_warmup", "--jobs 2", "about 27 CPU-minutes",
           claims="ch5_full_model.norm_warmup:data_claims"),
    _study("ch6-uniform-lengths", (6,), "ch6_training/uniform_lengths.csv",
           "ch6_training.stored_runs", "uniform-lengths", "about 10 CPU-seconds",
           claims="ch6_training.stored_runs:uniform_lengths_claims"),
    _study("ch6-ablation-sweep", (6,), "ch6_training/ablation_sweep.csv",
           "ch6_training.stored_runs", "ablation-sweep", "about 7 CPU-minutes",
           claims="ch6_training.stored_runs:ablation_sweep_claims"),
    _study("ch6-warmup-runs", (6,), "ch6_training/warmup_runs.csv",
           "ch6_training.stored_runs", "warmup", "about 1 CPU-minute",
           claims="ch6_training.stored_runs:warmup_runs_claims"),
    _study("ch7-opening-map", (1, 7), "ch7_translation/opening_map.json",
           "ch7_translation.opening_map", "", "about 1 CPU-minute",
           claims="ch7_translation.opening_map:data_claims"),
    _study("ch7-measured", (7,), "ch7_translation/measured.json",
           "ch7_translation.measure", "", "about 1.2 CPU-hours",
           claims="ch7_translation.measure:data_claims"),
    _study("ch8-stored-models", (8,), "ch8_real_sentences/stored_models.json",
           "ch8_real_sentences.stored_models", "translator | writer | select (its docstring)",
           "about 4 GPU-minutes (H100); about 10 hours on a 2-core CPU",
           tuple(f"ch8_real_sentences/{name}" for name in ("bpe.json", "translator.bin",
                                                           "writer.bin")),
           claims="ch8_real_sentences.stored_models:data_claims"),
    _study("ch8-cpu-translator", (8,), "ch8_real_sentences/cpu_translator.json",
           "ch8_real_sentences.cpu_translator", "--store",
           "about 40 minutes on 2 cores (2 threads)",
           claims="ch8_real_sentences.cpu_translator:data_claims"),
    _study("ch8-small-writer", (8,), "ch8_real_sentences/small_writer.json",
           "ch8_real_sentences.small_writer", "", "about 3 CPU-minutes",
           claims="ch8_real_sentences.small_writer:data_claims"),
    # Every trained statistic the chapters claim something about, on this CPU and 20 simulated
    # others (calibration.py); made by the repository's benchmark, not by the package.
    StoredStudy("calibration", (2, 3, 4, 5, 6, 7, 8), CALIBRATION_PATH,
                "python -m bench.calibration",
                "about 2 CPU-hours (chapters 2 to 8, 21 runs each)"),
)}


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


def record_environment(path: Path) -> Path:
    """Write this process's environment beside the data file ``path`` (its study's record);
    every regeneration command calls this after writing its data."""
    record = environment_path(path)
    record.write_text(json.dumps({"recorded": True, **environment()}, indent=1, sort_keys=True)
                      + "\n", encoding="utf-8")
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
             "remade by": remade_by(s.command),
             "cost (one thread)": s.cost.removeprefix("about ")}
            for s in STUDIES.values() if chapter is None or chapter in s.chapters]
    return pd.DataFrame(rows)
