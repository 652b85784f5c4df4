"""Regenerate ``measured.json``, chapter 7's precomputed tables, from the package's own functions.

    python -m transformer_course.experiments.ch7_translation.measure \\
        [--only TABLE3_SHORT,FRENCH] [--seeds 0,1,2] [--out PATH]

One function per table (see :data:`TABLES`) returns exactly what ``measured.json`` stores under
that name: the same keys, rounding and units; :func:`stored` reads the file back. ``--only``
recomputes the tables it names and keeps the others as stored; the file is rewritten after each
table. The whole file costs about 1.2 CPU-hours on one thread (72 CPU-minutes when last made, in
two processes of one thread each: ``--only`` and ``--out``, then the tables merged); a table's
cost is in its function's docstring.

Every run: the chapter's split (``data.split_numbers()``, seed 0), model (``recipe.model_config``)
and training (``recipe.RECIPE`` with the table's budget) unless a table says otherwise, seeds 0,
1, 2, one torch thread. Exact match in %, per seed. Seconds are CPU seconds of the training loop
on a shared 2-core machine (they vary by about 20 % with the load; steps do not). Training is
deterministic on one machine (same steps, same losses on every rerun), but matrix kernels may
round differently on another CPU: accuracies then move by a few hundredths, steps to target by
at most a check.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from transformer_course.core.model import Transformer
from transformer_course.core.training import TrainConfig, TrainResult
from transformer_course.notebook import set_threads
from transformer_course.stored import record_environment

from . import corpus, data, metrics, recipe, studies, translate
from .corpus import TranslationData
from .studies import TABLE3_VARIANTS, Variant

SEEDS = (0, 1, 2)
SHORT_STEPS, FULL_STEPS = 200, 600  # a budget where the baseline is not at its ceiling; the recipe
TEST_SETS = ("test", "test_shapes")
SEGMENTATIONS: tuple[str | int, ...] = ("morphemes", 60, 100, 200, 400)  # int: a BPE size
SCHEDULE_VARIANTS = tuple(
    Variant(f"{decay} {peak_lr:g}", f"{decay} schedule, peak {peak_lr:g}",
            train_changes={"decay": decay, "peak_lr": peak_lr})
    for peak_lr in (3e-3, 6e-3) for decay in ("linear", "inverse_sqrt", "constant"))
BEAM_BUDGETS = (150, 200)  # steps: models stopped before the recipe's ceiling
FRENCH_BUDGETS = (300, 600)  # steps: the exercise's suggested solution, and the recipe
DIGIT_PLACE = 100_000  # the extrapolation fixes add numbers per leading (hundred-thousands) digit
ADDED_ZERO_RATE = 0.3  # the added numbers are drawn like the training numbers (split_numbers)
MEASURED_PATH = Path(__file__).with_name("measured.json")


def stored(path: Path = MEASURED_PATH) -> dict[str, Any]:
    """The tables ``measured.json`` holds (name -> table)."""
    return json.loads(path.read_text(encoding="utf-8"))


def write(tables: Mapping[str, Any], path: Path = MEASURED_PATH) -> None:
    """Store ``tables`` as JSON (sorted keys: the same tables give the same bytes)."""
    path.write_text(json.dumps(tables, indent=1, sort_keys=True) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class ExtrapolationCell:
    """One row of EXTRAPOLATION: train below ``bound``; with ``per_digit`` numbers of each
    leading digit unseen below the bound added to training (0: none); scored greedily, by
    groups and, with ``beam``, by beam search."""

    bound: int
    per_digit: int = 0
    beam: bool = True


EXTRAPOLATION_CELLS = (
    ExtrapolationCell(200_000), ExtrapolationCell(100_000), ExtrapolationCell(100_000, 1),
    ExtrapolationCell(100_000, 10), ExtrapolationCell(100_000, 100),
    ExtrapolationCell(200_000, 1), ExtrapolationCell(200_000, 10),
    ExtrapolationCell(500_000, beam=False),  # nothing breaks there: greedy and groups only
)


# -- helpers -------------------------------------------------------------------------------------

def _round(value: float | None, digits: int) -> float | None:
    """``value`` rounded, or None where there is none (e.g. a target never reached)."""
    return None if value is None else round(float(value), digits)


def _german(german: TranslationData | None) -> TranslationData:
    """The chapter's data (``corpus.prepare(data.split_numbers())``) unless given."""
    return german or corpus.prepare(data.split_numbers())


def training(steps: int, seed: int = 0) -> TrainConfig:
    """The recipe with a budget of ``steps``: schedule to zero at the last step, the recipe's
    warm-up (a tiny budget, as in the tests, warms up for half of it)."""
    return replace(recipe.RECIPE, steps=steps, warmup=min(recipe.RECIPE.warmup, steps // 2),
                   seed=seed)


def train(prepared: TranslationData, steps: int, seed: int) -> tuple[Transformer, TrainResult]:
    """The chapter's model trained on ``prepared`` with :func:`training`."""
    config = recipe.model_config(len(prepared.pipeline.source_vocab),
                                 len(prepared.pipeline.target_vocab))
    return recipe.train_translation(config, training(steps, seed), prepared.pairs["train"],
                                    prepared.validation())


def exact(outputs: Sequence[str], prepared: TranslationData, set_name: str) -> float:
    """Exact match (%) of ``outputs`` on one set, rounded to 0.01."""
    return _round(100 * metrics.exact_match(outputs, list(prepared.texts[set_name].target)), 2)


def family(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``studies.run_variants`` rows grouped by variant: per seed, validation exact match (%),
    perplexity, step to 99 % and CPU seconds; the parameter count."""
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        cell = table.setdefault(row["variant"], {key: [] for key in (
            "exact_uniform", "exact_shapes", "perplexity", "reached_step", "cpu_s")})
        cell["exact_uniform"].append(_round(row["exact_uniform"], 2))
        cell["exact_shapes"].append(_round(row["exact_shapes"], 2))
        cell["perplexity"].append(_round(row["perplexity"], 3))
        cell["reached_step"].append(row["reached_step"])
        cell["cpu_s"].append(_round(row["cpu_s"], 1))
        cell["params"] = row["params"]
    return table


# -- the tables ----------------------------------------------------------------------------------

def variant_table(german: TranslationData | None = None, *, variants: Sequence[Variant],
                  steps: int, seeds: Sequence[int] = SEEDS) -> dict[str, dict[str, Any]]:
    """``studies.run_variants`` on the chapter's data with a budget of ``steps`` (see
    :func:`family`). About 15 CPU s a run at 200 steps, 45 at 600 (checks included)."""
    german = _german(german)
    base = recipe.model_config(len(german.pipeline.source_vocab),
                               len(german.pipeline.target_vocab))
    return family(studies.run_variants(german, base, training(steps), variants, seeds))


def table3_short(german: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
                 variants: Sequence[Variant] = TABLE3_VARIANTS, steps: int = SHORT_STEPS,
                 ) -> dict[str, dict[str, Any]]:
    """TABLE3_SHORT: Table 3's variants at a 200-step budget (24 runs, about 5 CPU-minutes)."""
    return variant_table(german, variants=variants, steps=steps, seeds=seeds)


def table3_full(german: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
                variants: Sequence[Variant] = TABLE3_VARIANTS, steps: int = FULL_STEPS,
                ) -> dict[str, dict[str, Any]]:
    """TABLE3_FULL: Table 3's variants, 600 steps (24 runs, about 15 CPU-minutes)."""
    return variant_table(german, variants=variants, steps=steps, seeds=seeds)


def schedules(german: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
              variants: Sequence[Variant] = SCHEDULE_VARIANTS, steps: int = FULL_STEPS,
              ) -> dict[str, dict[str, Any]]:
    """SCHEDULES: three decays at two peak rates, 600 steps (18 runs, about 12 CPU-minutes)."""
    return variant_table(german, variants=variants, steps=steps, seeds=seeds)


def _segmented(german: TranslationData, target: str | int) -> TranslationData:
    """The chapter's data with another target segmentation (the same texts)."""
    if target == "morphemes":
        return german
    return corpus.prepare(german.split, target, texts=german.texts)


def segmentation_short(german: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
                       targets: Sequence[str | int] = SEGMENTATIONS, steps: int = SHORT_STEPS,
                       ) -> dict[str, dict[str, Any]]:
    """SEGMENTATION_SHORT: the recipe at 200 steps for each target segmentation, keyed by
    ``str(target)``, with the mean target tokens per training pair (15 runs, about 3
    CPU-minutes)."""
    german = _german(german)
    table = {}
    for target in targets:
        prepared = _segmented(german, target)
        base = recipe.model_config(len(prepared.pipeline.source_vocab),
                                   len(prepared.pipeline.target_vocab))
        rows = studies.run_variants(prepared, base, training(steps), [Variant(str(target), "")],
                                    seeds)
        table[str(target)] = {**family(rows)[str(target)],
                              "tokens_per_target": _round(studies.tokens_per_target(prepared), 2)}
    return table


def segmentation_full(german: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
                      targets: Sequence[str | int] = SEGMENTATIONS, steps: int = FULL_STEPS,
                      ) -> dict[str, dict[str, Any]]:
    """SEGMENTATION_FULL: the recipe (600 steps) for each target segmentation: step and CPU
    seconds to 99 %, test exact match, and the last decoder layer's alignment on the test set,
    strict (per morpheme) and per piece, with the best head by the strict score (15 runs, about
    10 CPU-minutes)."""
    german = _german(german)
    table = {}
    for target in targets:
        prepared = _segmented(german, target)
        cell: dict[str, list[Any]] = {key: [] for key in (
            "reached_step", "reached_cpu_s", "test_exact", "test_shapes_exact",
            "align_strict_layer2", "align_pieces_layer2", "align_strict_best_head")}
        for seed in seeds:
            model, result = train(prepared, steps, seed)
            cell["reached_step"].append(result.reached_step)
            cell["reached_cpu_s"].append(_round(result.reached_cpu_seconds, 1))
            for name in TEST_SETS:
                outputs = translate.decode(model, prepared.pipeline, prepared.pairs[name])
                cell[f"{name}_exact"].append(exact(outputs, prepared, name))
            strict = studies.alignment_on(model, prepared, "test", per_morpheme=True)
            pieces = studies.alignment_on(model, prepared, "test")
            cell["align_strict_layer2"].append(_round(strict.per_layer[-1], 3))
            cell["align_pieces_layer2"].append(_round(pieces.per_layer[-1], 3))
            layer, head, score = strict.best_head()
            cell["align_strict_best_head"].append([layer, head, _round(score, 3)])
        table[str(target)] = cell
    return table


def main_run(german: TranslationData, seed: int, steps: int = FULL_STEPS) -> dict[str, Any]:
    """One row of MAIN: ``studies.main_run`` (the recipe with ``seed``: step and seconds, CPU and
    wall, to 99 %, training seconds, greedy test scores), rounded, with the greedy errors, the
    outputs beam search (4, 0.6) changes on each test set, and the test set's alignment per
    decoder layer (heads averaged), per head, and per morpheme kind in the last layer."""
    german = _german(german)
    model, _, run = studies.main_run(german, seed, training(steps))
    row: dict[str, Any] = {
        "seed": seed, "reached_step": run["reached_step"],
        "reached_cpu_s": _round(run["reached_cpu_s"], 1),
        "reached_wall_s": _round(run["reached_wall_s"], 1),
        "train_cpu_s": _round(run["cpu_s"], 1), "train_wall_s": _round(run["wall_s"], 1)}
    wrong, changed = [], []
    for name in TEST_SETS:
        row[name] = {key: _round(value, 2) for key, value in run[name].items()}
        comparison, greedy, _ = studies.beam_against_greedy(model, german, name)
        texts = german.texts[name]
        wrong += [(n, out, ref) for n, out, ref in zip(texts.numbers, greedy, texts.target,
                                                       strict=True) if out != ref]
        changed.append(comparison.changed)
    scores = studies.alignment_on(model, german, "test")
    row.update(wrong=wrong, beam_changed=changed,
               align_per_layer=[_round(x, 3) for x in scores.per_layer.tolist()],
               align_per_head=[[_round(x, 3) for x in layer] for layer in scores.per_head.tolist()],
               align_kinds_layer2={kind: [_round(x, 2) for x in by_head[-1].tolist()]
                                   for kind, by_head in scores.kinds.items()})
    return row


def main_runs(german: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
              steps: int = FULL_STEPS) -> list[dict[str, Any]]:
    """MAIN: :func:`main_run` for each seed (3 runs, about 2.5 CPU-minutes with beam search)."""
    german = _german(german)
    return [main_run(german, seed, steps) for seed in seeds]


def numbers_above(split: data.NumberSplit, bound: int, per_digit: int) -> np.ndarray:
    """``per_digit`` numbers at or above ``bound`` for each leading digit there, drawn like the
    training numbers (zero rate 0.3) from outside the test sets; seeded by ``per_digit``."""
    pool = np.setdiff1d(np.arange(bound, data.MAX_NUMBER + 1),
                        np.union1d(split.test, split.test_shapes), assume_unique=True)
    digits = sorted({int(x) // DIGIT_PLACE for x in range(bound, data.MAX_NUMBER + 1, DIGIT_PLACE)})
    rng = np.random.default_rng([7, per_digit])
    return np.concatenate([data.draw_numbers(pool[pool // DIGIT_PLACE == digit], per_digit, rng,
                                             ADDED_ZERO_RATE) for digit in digits])


def extrapolation_data(cell: ExtrapolationCell, **sizes: int) -> tuple[TranslationData, int]:
    """The data of one cell and how many numbers above the bound it adds to training: those of
    :func:`numbers_above`, in place of as many training numbers drawn at random (seeded by
    ``per_digit``), so the training size is unchanged. ``sizes``: ``extrapolation_split``'s
    train, validation and test sizes (the chapter's by default)."""
    split = data.extrapolation_split(cell.bound, **sizes)
    if not cell.per_digit:
        return corpus.prepare(split), 0
    extra = numbers_above(split, cell.bound, cell.per_digit)
    keep = np.random.default_rng(cell.per_digit).choice(split.train, len(split.train) - len(extra),
                                                         replace=False)
    grown = studies.add_training_numbers(replace(split, train=np.sort(keep)), extra)
    return corpus.prepare(grown), len(extra)


def extrapolation_scores(model: Transformer, prepared: TranslationData, beam: bool = True,
                         ) -> dict[str, Any]:
    """Exact match on each test set: greedy, by groups (``studies.german_by_groups``) and, with
    ``beam``, beam search (4, 0.6) with (changed, fixed, broken) against greedy."""
    values: dict[str, Any] = {}
    for name in TEST_SETS:
        if beam:
            comparison, greedy, beamed = studies.beam_against_greedy(model, prepared, name)
            values[f"{name}_beam"] = exact(beamed, prepared, name)
            values[f"{name}_beam_changed_fixed_broken"] = (
                comparison.changed, comparison.fixed, comparison.broken)
        else:
            greedy = translate.decode(model, prepared.pipeline, prepared.pairs[name])
        values[f"{name}_greedy"] = exact(greedy, prepared, name)
        groups = studies.german_by_groups(model, prepared, list(prepared.texts[name].numbers))
        values[f"{name}_groups"] = exact(groups, prepared, name)
    return values


def extrapolation(*, seeds: Sequence[int] = SEEDS,
                  cells: Sequence[ExtrapolationCell] = EXTRAPOLATION_CELLS,
                  steps: int = FULL_STEPS, sizes: Mapping[str, int] | None = None,
                  ) -> dict[str, dict[str, list[Any]]]:
    """EXTRAPOLATION: the recipe trained below a bound (``data.extrapolation_split``) and tested
    above it, per cell (see :class:`ExtrapolationCell`); keys "<bound> bounded" and
    "<bound> +<k>/digit (<numbers added>)" (24 runs, about 18 CPU-minutes). ``sizes``: the
    split's sizes (tests only)."""
    table: dict[str, dict[str, list[Any]]] = {}
    for cell in cells:
        prepared, added = extrapolation_data(cell, **(sizes or {}))
        key = (f"{cell.bound} +{cell.per_digit}/digit ({added})" if cell.per_digit
               else f"{cell.bound} bounded")
        for seed in seeds:
            model, _ = train(prepared, steps, seed)
            for name, value in extrapolation_scores(model, prepared, cell.beam).items():
                table.setdefault(key, {}).setdefault(name, []).append(value)
    return table


def beam_short_budget(german: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
                      budgets: Sequence[int] = BEAM_BUDGETS) -> dict[str, dict[str, list[Any]]]:
    """BEAM_SHORT_BUDGET: models trained for a short budget, greedy against beam search (4, 0.6)
    on each test set: exact match, (changed, fixed, broken), the same for a beam without
    length penalty (alpha 0), and the numbers whose beam output, and whose greedy output, is
    empty; keys
    "<steps> steps <set>" (6 runs, about 2.5 CPU-minutes)."""
    german = _german(german)
    table: dict[str, dict[str, list[Any]]] = {}
    for steps in budgets:
        for seed in seeds:
            model, _ = train(german, steps, seed)
            for name in TEST_SETS:
                refs = list(german.texts[name].target)
                comparison, greedy, beamed = studies.beam_against_greedy(model, german, name)
                no_penalty = translate.decode(model, german.pipeline, german.pairs[name],
                                              method="beam", alpha=0.0)
                plain = metrics.compare_decoders(greedy, no_penalty, refs)
                cell = table.setdefault(f"{steps} steps {name}", {key: [] for key in (
                    "greedy", "beam", "changed_fixed_broken", "alpha0_changed_fixed_broken",
                    "beam_empty", "greedy_empty")})
                cell["greedy"].append(exact(greedy, german, name))
                cell["beam"].append(exact(beamed, german, name))
                cell["changed_fixed_broken"].append(
                    (comparison.changed, comparison.fixed, comparison.broken))
                cell["alpha0_changed_fixed_broken"].append((plain.changed, plain.fixed,
                                                            plain.broken))
                numbers = german.texts[name].numbers
                cell["beam_empty"].append([int(n) for n, out in zip(numbers, beamed, strict=True)
                                           if not out])
                cell["greedy_empty"].append([int(n) for n, out in zip(numbers, greedy,
                                                                      strict=True) if not out])
    return table


def french(prepared: TranslationData | None = None, *, seeds: Sequence[int] = SEEDS,
           budgets: Sequence[int] = FRENCH_BUDGETS) -> dict[str, dict[str, list[Any]]]:
    """FRENCH: the exercise, English -> French words (``corpus.prepare(split, "words",
    target_lang="fr")``) with the recipe at each budget: test exact match, word BLEU on the
    test set, step to 99 %, and the test set's wrong outputs as (number, output, reference)
    (6 runs, about 3.5 CPU-minutes)."""
    prepared = prepared or corpus.prepare(data.split_numbers(), "words", target_lang="fr")
    table = {}
    for steps in budgets:
        cell: dict[str, list[Any]] = {key: [] for key in (
            "test_exact", "test_shapes_exact", "word_bleu", "reached_step", "test_wrong")}
        for seed in seeds:
            model, result = train(prepared, steps, seed)
            for name in TEST_SETS:
                outputs = translate.decode(model, prepared.pipeline, prepared.pairs[name])
                cell[f"{name}_exact"].append(exact(outputs, prepared, name))
                if name == "test":
                    refs = list(prepared.texts[name].target)
                    cell["word_bleu"].append(_round(metrics.word_bleu(outputs, refs), 2))
                    cell["test_wrong"].append([
                        [int(n), out, ref] for n, out, ref in zip(
                            prepared.texts[name].numbers, outputs, refs, strict=True)
                        if out != ref])
            cell["reached_step"].append(result.reached_step)
        table[f"{steps} steps"] = cell
    return table


def uniform_draw(*, seeds: Sequence[int] = SEEDS, steps: int = FULL_STEPS,
                 sizes: Mapping[str, int] | None = None, small: int = 999,
                 ) -> dict[str, list[Any]]:
    """UNIFORM_DRAW: the recipe trained on numbers drawn uniformly from the training pool
    (``data.split_numbers(zero_rate=data.UNIFORM)``, the chapter's Exercise 7.4), per seed:
    exact match on each validation set at the end, on the uniform test set, how many of the
    numbers 1 .. ``small`` it gets wrong, and its output for 45 (3 runs, about 1.5 CPU-minutes;
    one validation check, at the end). ``sizes``: the split's sizes (tests only)."""
    prepared = corpus.prepare(data.split_numbers(zero_rate=data.UNIFORM, **(sizes or {})))
    below = data.make_corpus(list(range(1, small + 1)))
    below_pairs = prepared.pipeline.encode(below)
    table: dict[str, list[Any]] = {key: [] for key in (
        "validation_uniform", "validation_shapes", "test_exact", "small_wrong", "out_45")}
    config = recipe.model_config(len(prepared.pipeline.source_vocab),
                                 len(prepared.pipeline.target_vocab))
    for seed in seeds:
        model, result = recipe.train_translation(
            config, replace(training(steps, seed), eval_every=steps), prepared.pairs["train"],
            prepared.validation())
        by_set = result.evaluations[-1].metrics.by_set
        table["validation_uniform"].append(_round(100 * by_set["uniform"], 2))
        table["validation_shapes"].append(_round(100 * by_set["shapes"], 2))
        test = translate.decode(model, prepared.pipeline, prepared.pairs["test"])
        table["test_exact"].append(exact(test, prepared, "test"))
        outputs = translate.decode(model, prepared.pipeline, below_pairs)
        table["small_wrong"].append(sum(out != ref for out, ref in zip(
            outputs, below.target, strict=True)))
        table["out_45"].append(outputs[44] if small >= 45 else None)
    return table


def below_bound(*, seeds: Sequence[int] = SEEDS, steps: int = FULL_STEPS, bound: int = 100_000,
                sizes: Mapping[str, int] | None = None, example: int = 612_345,
                ) -> dict[str, list[Any]]:
    """BELOW_100000: what the models of EXTRAPOLATION's "100000 bounded" row (trained below
    100,000; one validation check, at the end) write above the bound, per seed: greedy exact
    match on the uniform test set, the share of its outputs with no "tausend" (one group
    only), and the output for ``example`` (3 runs, about 1 CPU-minute). ``sizes``: the
    split's sizes (tests only)."""
    prepared, _ = extrapolation_data(ExtrapolationCell(bound), **(sizes or {}))
    table: dict[str, list[Any]] = {key: [] for key in (
        "test_greedy", "no_tausend", "example", "example_output")}
    for seed in seeds:
        model, _ = recipe.train_translation(
            recipe.model_config(len(prepared.pipeline.source_vocab),
                                len(prepared.pipeline.target_vocab)),
            replace(training(steps, seed), eval_every=steps), prepared.pairs["train"],
            prepared.validation())
        greedy = translate.decode(model, prepared.pipeline, prepared.pairs["test"])
        table["test_greedy"].append(exact(greedy, prepared, "test"))
        table["no_tausend"].append(_round(100 * np.mean(["tausend" not in out
                                                         for out in greedy]), 2))
        table["example"].append(example)
        table["example_output"].append(
            translate.translate(model, prepared.pipeline, example).greedy)
    return table


# -- the file ------------------------------------------------------------------------------------

TABLES: dict[str, Callable[..., Any]] = {  # measured.json's tables
    "TABLE3_SHORT": table3_short, "TABLE3_FULL": table3_full,
    "SEGMENTATION_SHORT": segmentation_short, "SCHEDULES": schedules,
    "SEGMENTATION_FULL": segmentation_full, "MAIN": main_runs, "EXTRAPOLATION": extrapolation,
    "BEAM_SHORT_BUDGET": beam_short_budget, "FRENCH": french, "UNIFORM_DRAW": uniform_draw,
    "BELOW_100000": below_bound,
}
# the tables that do not train on the chapter's data
OWN_DATA = ("EXTRAPOLATION", "FRENCH", "UNIFORM_DRAW", "BELOW_100000")


def main(argv: Sequence[str] | None = None) -> None:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course.experiments.ch7_translation.measure",
        description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(TABLES),
                        help="tables to recompute, comma-separated (default: all); the others "
                             "are kept as stored")
    parser.add_argument("--seeds", default="0,1,2", help="seeds, comma-separated")
    parser.add_argument("--out", type=Path, default=MEASURED_PATH,
                        help="file to write (default: the package's measured.json)")
    args = parser.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    if seeds != SEEDS and args.out.resolve() == MEASURED_PATH.resolve():
        parser.error("measured.json holds seeds 0,1,2: other seeds need --out")
    set_threads(1)
    tables = stored()
    german = corpus.prepare(data.split_numbers())
    for name in args.only.split(","):
        start = time.process_time()
        own = name in OWN_DATA
        tables[name] = TABLES[name](seeds=seeds) if own else TABLES[name](german, seeds=seeds)
        write(tables, args.out)
        print(f"{name}: {time.process_time() - start:.0f} CPU s, written to {args.out}",
              file=sys.stderr, flush=True)
    record_environment(args.out)


if __name__ == "__main__":
    main()
