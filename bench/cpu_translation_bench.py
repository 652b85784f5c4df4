"""Chapter 8's CPU translator, timed: Spanish to English on this machine's cores.

It trains ``cpu_translator.CPU`` (torch's default threads: every core) with a validation check
at every sixth of its steps, then scores greedy decoding on all the test books at each check
(nothing is chosen on them). Printed: minutes of training (checks excluded), tokens read,
validation and test sacreBLEU at each check. The budget (issue 42): a check with at least 15
test BLEU within 45 minutes of training on the course's 2-core machine; the aim is 20. Not in
the default run (about 40 minutes): ``python -m bench --only cpu-translation``. Its run on the
course's machine is stored as study ``ch8-cpu-translator``.
"""

from __future__ import annotations

import math
from dataclasses import replace

from transformer_course.experiments.ch8_real_sentences import cpu_translator

from .stats import format_table

TARGET_BLEU = 15.0  # test BLEU, greedy
AIM_BLEU = 20.0
BUDGET_MINUTES = 45.0  # of training
QUICK = replace(cpu_translator.CPU, steps=4, warmup=1, checks=2, check_verses=4,
                batch_tokens=500)


def minutes_to(results: dict, bleu: float) -> float:
    """Minutes of training at the first check whose test BLEU reaches ``bleu`` (inf: none)."""
    return next((c["seconds"] / 60 for c in results["checks"] if c["test_bleu"] >= bleu),
                math.inf)


def run_cpu_translation_bench(*, quick: bool = False) -> dict:
    """The recipe's run (quick: 4 small batches, 4 validation and 4 test verses) with its test
    BLEU at every check."""
    record = cpu_translator.study(QUICK if quick else cpu_translator.CPU,
                                  test_limit=4 if quick else None)
    return {**record, "target_bleu": TARGET_BLEU, "aim_bleu": AIM_BLEU,
            "budget_minutes": BUDGET_MINUTES, "minutes_to_target": minutes_to(record, TARGET_BLEU),
            "minutes_to_aim": minutes_to(record, AIM_BLEU)}


def render_cpu_translation(results: dict) -> str:
    rows = [[c["step"], f"{c['seconds'] / 60:.1f}", f"{c['tokens'] / 1e6:.2f}",
             f"{c['validation_bleu']:.1f}", f"{c['test_bleu']:.1f}"] for c in results["checks"]]
    recipe = results["recipe"]
    return (f"CPU translator, chapter 8 ({recipe['layers']} + {recipe['layers']} layers, "
            f"{recipe['steps']} steps of about {recipe['batch_tokens']:,} padded pieces, "
            f"{results['threads']} threads; greedy sacreBLEU, validation on "
            f"{recipe['check_verses']} verses, test on every test verse scored)\n"
            + format_table(["step", "minutes", "tokens (M)", "validation BLEU", "test BLEU"],
                           rows))
