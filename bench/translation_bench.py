"""Chapter 7's recipe, timed: number words English -> German, one seed per repeat, one thread.

For each seed, ``studies.main_run`` trains the chapter's model for its fixed budget (600 steps)
and scores greedy decoding on both test sets. Reported per seed: training seconds (wall and CPU;
validation checks excluded), the step and seconds at which both validation sets first reach 99 %
(the chapter's stopping rule looks only at validation), and test exact match, BLEU on morphemes,
word BLEU and chrF (sacrebleu). The budget (issue 11): at least 99 % test exact match for every
seed within 60 s of training on one thread.
"""

from __future__ import annotations

from dataclasses import replace

from transformer_course.experiments.ch7_translation import number_corpus, prepared, recipe, studies
from transformer_course.notebook import set_threads

from .stats import format_table

TARGET = 99.0  # test exact match (%) every seed must reach
BUDGET_S = 60.0  # seconds of training on one thread


def run_translation_bench(*, quick: bool = False, repeats: int = 3) -> dict:
    """``repeats`` seeds of the chapter's recipe (quick: a tiny corpus and 20 steps)."""
    set_threads(1)
    split = (number_corpus.split_numbers(train=2000, validation=50, test=50) if quick
             else number_corpus.split_numbers())
    german = prepared.prepare(split)
    training = recipe.RECIPE
    if quick:
        training = replace(training, steps=20, warmup=10, eval_every=10)
    runs = []
    for seed in range(repeats):
        _, result, row = studies.main_run(german, seed, training)
        runs.append({**row, "steps": training.steps, "losses_first_last": (
            result.losses[0], result.losses[-1])})
    worst_exact = min(r[name]["exact_match"] for r in runs for name in ("test", "test_shapes"))
    return {"runs": runs, "threads": 1, "steps": training.steps, "target": TARGET,
            "budget_s": BUDGET_S, "worst_test_exact": worst_exact,
            "slowest_training_s": max(r["wall_s"] for r in runs),
            "all_reached": worst_exact >= TARGET, "train_size": len(split.train)}


def _maybe(value: float | None, spec: str, unit: str = "") -> str:
    return "never" if value is None else f"{value:{spec}}{unit}"


def render_translation(results: dict) -> str:
    rows = []
    for r in results["runs"]:
        for name in ("test", "test_shapes"):
            s = r[name]
            first = name == "test"
            rows.append([r["seed"] if first else "", name,
                         f"{r['wall_s']:.1f} s / {r['cpu_s']:.1f} s" if first else "",
                         (f"{_maybe(r['reached_step'], 'd')} | "
                          f"{_maybe(r['reached_wall_s'], '.1f', ' s')}") if first else "",
                         f"{s['exact_match']:.2f}", f"{s['bleu_subword']:.1f}",
                         f"{s['bleu_word']:.1f}", f"{s['chrf']:.1f}"])
    return (f"Translation, chapter 7's recipe ({results['steps']} steps, "
            f"{results['threads']} thread, {results['train_size']:,} training numbers; greedy "
            "decoding)\n"
            + format_table(["seed", "test set", "training wall / CPU",
                            "99 % validation: step | wall", "exact %", "BLEU morphemes",
                            "BLEU words", "chrF"], rows))
