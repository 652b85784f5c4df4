"""What chapter 6's page (training) glues and checks: the numbers, tables and figures its prose
quotes, and the claims it makes of them.

The chapter computes in the cells a reader sees and calls these functions from its hidden cells,
one call where each hidden cell stood, so the bookkeeping behind the prose is package code that
ruff lints and a student's notebook does not show.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from transformer_course import calibration
from transformer_course.claims import claim, claim_float, claim_trained, observe
from transformer_course.core.batching import Batch
from transformer_course.core.model import TransformerConfig, count_parameters
from transformer_course.core.schedule import peak_lr
from transformer_course.core.training import Metrics, TrainConfig, TrainResult
from transformer_course.experiments.ch6_training import recipes
from transformer_course.experiments.ch6_training.ablations import order_free_accuracy, sweep_table
from transformer_course.experiments.ch6_training.stored_runs import (
    BUDGET,
    SweepReading,
    final_losses,
    read_sweep,
    steps_beside_draws,
    steps_span_text,
    steps_text,
    sweep_numbers,
    uniform_numbers,
    warmup_numbers,
)
from transformer_course.experiments.ch6_training.task_training import (
    EXTRA_OUTPUT_TOKENS,
    output_limit,
)
from transformer_course.experiments.ch6_training.tasks import (
    TaskConfig,
    TaskData,
    length_probabilities,
    to_text,
)
from transformer_course.figures.architecture import plot_architecture
from transformer_course.notebook import glue_figure, glue_number, glue_table, glue_text
from transformer_course.paper import BASE_STEPS, TABLE3
from transformer_course.stored import studies_table


def chapter_map() -> None:
    """The opening figure (fig-ch6-map): the architecture, the output probabilities highlighted."""
    here = "training: the output's probabilities against the next token"
    glue_figure("ch6-map", plot_architecture(highlight=["output"], here=here))


def held_out(copy_task: TaskConfig, validation: TaskData, test: TaskData) -> None:
    """The copy task's numbers: the held-out sets' sizes, and the lab note on keeping them out
    of training (how many sequences there are, how many short ones a batch draws)."""
    glue_number("ch6-validation", len(validation))
    glue_number("ch6-test", len(test))
    glue_number("ch6-symbols", copy_task.num_symbols)
    glue_number("ch6-min-len", copy_task.min_len)
    glue_number("ch6-max-len", copy_task.max_len)
    glue_number("ch6-num-sequences", sum(copy_task.num_symbols ** n for n in
                                         range(copy_task.min_len, copy_task.max_len + 1)))
    glue_number("ch6-shortest-count", copy_task.num_symbols ** copy_task.min_len)
    shortest_share = length_probabilities(copy_task, copy_task.length_power)[0]
    glue_number("ch6-shortest-per-batch",
                recipes.FAST_TRAINING.batch_size * shortest_share.item())


def one_batch(batch: Batch) -> None:
    """The batch table (tbl-ch6-batch) and the sentence on its sizes B, S and T."""
    columns = {"encoder input": batch.src, "decoder input": batch.tgt_in,
               "labels": batch.tgt_out}
    batch_table = pd.DataFrame({
        name: [f"`{to_text(row, show_pad=True)}`" for row in rows]
        for name, rows in columns.items()})
    glue_table("ch6-batch", batch_table)
    glue_number("ch6-batch-B", batch.src.shape[0])
    glue_number("ch6-batch-S", batch.src.shape[1])
    glue_number("ch6-batch-T", batch.tgt_in.shape[1])


def smallest_loss(floor: float) -> None:
    """The sentence on the loss floor, the entropy of the smoothed target."""
    glue_number("ch6-floor", floor)


def recipe_settings(copy_task: TaskConfig, copy_config: TransformerConfig,
                    recipe: TrainConfig) -> None:
    """The recipe's settings the copy-task section and the lab note on the departures quote, and
    the claims they make of them."""
    d_k = copy_config.d_model // copy_config.num_heads
    settings = {"enc-layers": copy_config.num_encoder_layers, "d-ff": copy_config.d_ff,
                "dec-layers": copy_config.num_decoder_layers,
                "d-model": copy_config.d_model, "heads": copy_config.num_heads,
                "d-k": d_k, "sqrt-d-k": d_k ** 0.5, "batch-size": recipe.batch_size,
                "warmup": recipe.warmup, "lr-scale": recipe.lr_scale,
                "eval-every": recipe.eval_every, "steps": recipe.steps}
    for key, value in settings.items():
        glue_number(f"ch6-{key}", value)
    peak = peak_lr(copy_config.d_model, recipe.warmup, recipe.lr_scale)
    glue_number("ch6-peak", peak)
    glue_number("ch6-peak-ratio", peak / recipes.PAPER_PEAK_LR)
    formula_ratio = peak_lr(copy_config.d_model, recipe.warmup) / recipes.PAPER_PEAK_LR
    glue_number("ch6-formula-ratio", formula_ratio)
    # Algebra, exact on any CPU: "most of that factor is the paper's own formula".
    claim("most of the factor is the paper's formula (the scale adds less than 1.5x)",
          1 < peak / recipes.PAPER_PEAK_LR / formula_ratio < 1.5,
          scale_part=peak / recipes.PAPER_PEAK_LR / formula_ratio)
    glue_number("ch6-beta1", recipe.betas[0])
    glue_number("ch6-length-power", copy_task.length_power)
    length_share = length_probabilities(copy_task, copy_task.length_power)  # P(n)
    glue_number("ch6-length-count", len(length_share))
    glue_number("ch6-longest-share", 100 * length_share[-1].item())
    # The settings the prose states (here and in the lab note on the departures), exact on any CPU.
    claim("beta_2 and epsilon are the paper's",
          recipe.betas[1] == 0.98 and recipe.adam_eps == 1e-9,
          betas=recipe.betas, eps=recipe.adam_eps)
    claim("beta_1 is not the paper's", recipe.betas[0] != recipes.PAPER_BETA_1,
          beta_1=recipe.betas[0])
    claim("no dropout, unlike the paper", copy_config.dropout == 0 != recipes.PAPER_DROPOUT,
          dropout=copy_config.dropout)
    claim("lengths weighted by n^2", copy_task.length_power == 2, power=copy_task.length_power)
    claim("one layer per stack",
          copy_config.num_encoder_layers == copy_config.num_decoder_layers == 1,
          layers=(copy_config.num_encoder_layers, copy_config.num_decoder_layers))
    claim("training stops at the first check with every validation sequence right",
          recipe.stop_early and recipe.target_accuracy == 1, target=recipe.target_accuracy)


def copy_run(copy_model: nn.Module, copy_result: TrainResult, copy_steps: int | None,
             final_loss: float, floor: float, step: int, loss: float) -> None:
    """The copy run: the sentence after it, the training-curve figure's caption
    (fig-ch6-copy-curves) and the lab note on the loop cell, whose last ``step`` and ``loss``
    are passed in."""
    glue_number("ch6-params", count_parameters(copy_model))
    glue_number("ch6-copy-steps", copy_steps)
    glue_number("ch6-copy-seconds-timed", copy_result.reached_seconds)
    glue_number("ch6-copy-final-loss", final_loss)
    # "got every validation sequence right after N steps" and "about a hundred steps" (a run that
    # never got there is NaN, which fails)
    claim_trained("ch6-copy-steps", "the copy run gets every validation sequence right in about a "
                  "hundred steps (50 to 200)", copy_steps, low=50, high=200)
    # An identity on any CPU: the loop cell and train_on_task do the same operations in the same
    # order in this process, so step by step they give the same bits (the lab notes' claim).
    claim("the loop cell's loss is the recipe run's at the same step",
          copy_result.losses[step - 1] == loss, loop=loss, run=copy_result.losses[step - 1])
    glue_number("ch6-loop-steps", step)
    # The figure's caption: the loss ends "just above the floor". Above it on any CPU: the floor is
    # the target's entropy, the least cross-entropy any model can reach (Gibbs' inequality), and
    # the float32 loss (about 0.5) rounds within a few times 6e-8 of its exact value.
    claim_float("the loss stays above the floor", final_loss > floor - 1e-6, floor=floor,
                final_loss=final_loss)
    claim_trained("ch6-copy-loss-above-floor", "the final loss is just above the floor (by less "
                  "than 0.05)", final_loss - floor, high=0.05, floor=floor, final_loss=final_loss)
    gaps = [e.metrics.token_accuracy - e.metrics.sequence_accuracy
            for e in copy_result.evaluations]
    # the caption: "whole-sequence accuracy lags far behind token accuracy"
    claim_trained("ch6-copy-largest-gap", "whole-sequence accuracy lags far behind token accuracy "
                  "(by more than 0.3 at some check)", max(gaps), low=0.3)


def copy_test(copy_model: nn.Module, copy_config: TransformerConfig, copy_metrics: Metrics,
              test_batch: Batch, test: TaskData, wrong: list[int]) -> None:
    """The copy model on the test set: the paragraph after the decoding cell."""
    glue_number("ch6-copy-test-seq", 100 * copy_metrics.sequence_accuracy)
    glue_number("ch6-extra-tokens", EXTRA_OUTPUT_TOKENS)
    glue_number("ch6-model-max-len", copy_config.max_len)
    claim("the model's positions limit the output first",
          output_limit(copy_model, test_batch) == copy_config.max_len,
          limit=output_limit(copy_model, test_batch), max_len=copy_config.max_len)
    glue_number("ch6-copy-test-tok", 100 * copy_metrics.token_accuracy)
    claim("the printed wrong sequences are the ones the accuracy counts",
          len(wrong) == round((1 - copy_metrics.sequence_accuracy) * len(test)),
          wrong=len(wrong), accuracy=copy_metrics.sequence_accuracy)
    # "Greedy decoding gets X% of the test sequences exactly right", nearly every one
    claim_trained("ch6-copy-test-seq", "greedy decoding gets nearly every test sequence right "
                  "(at least 99%)", 100 * copy_metrics.sequence_accuracy, low=99.0)


def untrained_scores(untrained_metrics: Metrics) -> None:
    """The untrained model on the test set: the sentence after the before-and-after cell."""
    glue_number("ch6-untrained-seq", 100 * untrained_metrics.sequence_accuracy)
    glue_number("ch6-untrained-tok", 100 * untrained_metrics.token_accuracy)
    # "Untrained, greedy decoding gets 0% of the test sequences right and few of the tokens" (a
    # random model's argmax outcomes, so they count as trained: a one-ulp change could flip them)
    claim_trained("ch6-untrained-seq", "the untrained model gets no test sequence right (below "
                  "0.5%, shown as 0%)", 100 * untrained_metrics.sequence_accuracy, high=0.5)
    claim_trained("ch6-untrained-tok", "the untrained model gets few tokens right (below 20%)",
                  100 * untrained_metrics.token_accuracy, high=20.0)


def copy_seeds(runs: dict[int, TrainResult], seed_rows: list[dict[str, Any]],
               recipe: TrainConfig) -> None:
    """The recipe's three seeds: the sentence after their cell and the lab note's table
    (tbl-ch6-copy-seeds)."""
    # "Every seed got all validation sequences right" (within the recipe's budget): the slowest
    # seed's steps, NaN (which fails) if one never got there
    steps_each = [np.nan if r.reached_step is None else r.reached_step for r in runs.values()]
    claim_trained("ch6-copy-slowest-seed", "every seed gets all validation sequences right within "
                  "the recipe's budget", np.max(steps_each), high=recipe.steps)
    # a seed that never got there counts as the whole budget (a reader's run goes on)
    reached = [r.reached_step or recipe.steps for r in runs.values()]
    fastest, slowest = min(reached), max(reached)
    test_accuracy = [100 * row["sequence_accuracy"] for row in seed_rows]
    glue_table("ch6-copy-seeds", pd.DataFrame({
        "seed": [str(seed) for seed in runs],
        "steps to 100% on validation": [r.reached_step for r in runs.values()],
        "test sequences right (%)": [f"{a:.1f}" for a in test_accuracy]}))
    glue_number("ch6-copy-median-seconds-timed",
                statistics.median(r.reached_seconds for r in runs.values()))
    glue_number("ch6-copy-min-steps", fastest)
    glue_number("ch6-copy-max-steps", slowest)
    glue_number("ch6-copy-spread", slowest - fastest)
    glue_number("ch6-copy-test-min", min(test_accuracy))
    glue_text("ch6-copy-test-text", "every test sequence right" if min(test_accuracy) == 100
              else f"at least {min(test_accuracy):.1f}% of the test sequences right")
    # "every seed scored at least X%" (glued): nearly every sequence, by the worst seed
    claim_trained("ch6-copy-test-min", "every seed gets nearly every test sequence right (at least "
                  "98%)", min(test_accuracy), low=98.0, test_accuracy=test_accuracy)


def length_generalisation(copy_task: TaskConfig, longer: TaskData,
                          by_length: list[pd.DataFrame],
                          by_position: list[np.ndarray]) -> int:
    """Longer than anything in training: the paragraph under the length figure (fig-ch6-length).
    Returns the longest trained length, which the figure shades.

    Args:
        by_length: per seed, the share of sequences right at each length.
        by_position: per seed, (positions,), the share of symbols right at each position.
    """
    glue_number("ch6-longer", len(longer))
    glue_number("ch6-longer-min", int(longer.lengths.min()))
    glue_number("ch6-longer-max", int(longer.lengths.max()))
    L = copy_task.max_len
    sequence = pd.DataFrame({seed: table.set_index("length")["sequence accuracy"]
                             for seed, table in enumerate(by_length)})  # lengths x seeds
    symbols = np.stack(by_position)  # (seeds, positions)
    shares = {  # % of sequences (or of symbols) right, over the three seeds
        "trained-min": 100 * sequence.loc[:L].min().min(),
        "next-min": 100 * sequence.loc[L + 1].min(),
        "next-max": 100 * sequence.loc[L + 1].max(),
        "two-max": 100 * sequence.loc[L + 2:].max().max(),
        "three-max": 100 * sequence.loc[L + 3:].max().max(),
        "symbols-trained-min": 100 * symbols[:, :L].min(),
        "symbols-next-min": 100 * symbols[:, L].min(),
        "symbols-next-max": 100 * symbols[:, L].max(),
        "symbols-late-max": 100 * symbols[:, L + 1:].max()}
    for key, value in {**shares, "chance": 100 / copy_task.num_symbols}.items():
        glue_number(f"ch6-len-{key}", value)
    # the two ends in words where a share is all or nothing ("every time", not "at least 100.0%")
    trained_min, three_max = shares["trained-min"], shares["three-max"]
    glue_text("ch6-len-trained-text", "every time" if trained_min == 100
              else f"at least {trained_min:.1f}% of the time")
    glue_text("ch6-len-three-text", "never" if three_max == 0 else f"at most {three_max:.1f}%")
    # The prose below, for every seed: trained lengths fine, the first longer length partly,
    # two longer rarely, three longer hardly ever; symbols at trained positions mostly right, from
    # the second untrained position mostly wrong. (How much of the first longer length the worst
    # seed keeps is quoted, not claimed: over the calibrated draws it ranges too widely.)
    for key, text, bounds in (
            ("trained-min", "every trained length copied at least 90% of the time", {"low": 90.0}),
            ("next-max", "one symbol longer: some sequences survive, but not all (10 to 95% "
             "for the best seed)", {"low": 10.0, "high": 95.0}),
            ("two-max", "two or more longer: rarely (at most 20%)", {"high": 20.0}),
            ("three-max", "from three longer on: hardly ever (below 5%)", {"high": 5.0}),
            ("symbols-trained-min", "symbols at trained positions mostly right (at least 70%)",
             {"low": 70.0}),
            ("symbols-late-max", "from the second untrained position mostly wrong (below 50%)",
             {"high": 50.0})):
        claim_trained(f"ch6-len-{key}", text, shares[key], **bounds)
    return L


def departures(stored: pd.DataFrame, budget: TrainConfig, runs: dict[int, TrainResult],
               recipe: TrainConfig) -> SweepReading:
    """What the departures from the paper buy: the stored sweep's numbers the page quotes, this
    page's recipe runs beside their calibrated draws and the paper's Table 3 rows. Returns the
    sweep as the page reads it."""
    claim("the stored runs' budget is this page's", budget.steps == BUDGET,
          budget=budget.steps, stored_budget=BUDGET)
    glue_number("ch6-budget", budget.steps)
    # Every number the page quotes of the stored sweep (study ch6-ablation-sweep), read off it by
    # the package; what the prose says of them is checked there, as data, whenever the study is
    # made (stored_runs.ablation_sweep_claims).
    reading = read_sweep(stored)
    for key, value in sweep_numbers(reading, budget.steps).items():
        (glue_text if isinstance(value, str) else glue_number)(key, value)
    recipe_steps = reading.recipe_steps
    # This page's recipe runs (seeds 0-2, live) are another draw than the sweep's: their median
    # seed is shown beside its calibrated draws, not compared with the sweep's.
    live_median = np.median([r.reached_step or np.inf for r in runs.values()])
    observe("ch6-copy-median-steps", live_median if np.isfinite(live_median) else None)
    glue_text("ch6-copy-median-steps", steps_text(live_median, recipe.steps))
    glue_text("ch6-copy-median-draws", calibration.span_text("ch6-copy-median-steps", "g"))
    glue_number("ch6-sweep-base-median", recipe_steps.median())
    paper_base, paper_dropout = TABLE3["base"], TABLE3["P_drop = 0"]
    glue_number("ch6-paper-base-bleu", paper_base.bleu)
    glue_number("ch6-paper-base-ppl", paper_base.perplexity)
    glue_number("ch6-paper-base-m", paper_base.params_millions)
    glue_number("ch6-paper-base-steps", BASE_STEPS)
    glue_number("ch6-paper-nodrop-bleu", paper_dropout.bleu)
    glue_number("ch6-paper-nodrop-ppl", paper_dropout.perplexity)
    glue_number("ch6-paper-dropout-gain", paper_base.bleu - paper_dropout.bleu)
    return reading


def reversal_run(rev_task: TaskConfig, rev_result: TrainResult, rev_metrics: Metrics,
                 recipe: TrainConfig) -> None:
    """The reversal run: the task's lengths and the paragraph after the run."""
    glue_number("ch6-rev-min-len", rev_task.min_len)
    glue_number("ch6-rev-max-len", rev_task.max_len)
    glue_number("ch6-rev-steps", rev_result.steps)
    glue_number("ch6-rev-seconds-timed", rev_result.seconds)
    glue_number("ch6-rev-greedy-seq", 100 * rev_metrics.sequence_accuracy)
    glue_number("ch6-rev-greedy-tok", 100 * rev_metrics.token_accuracy)
    # "the model got every validation sequence right" (within the recipe's budget; NaN, which
    # fails, if it never did)
    claim_trained("ch6-rev-steps", "the reversal model gets every validation sequence right within "
                  "the recipe's budget", rev_result.reached_step, high=recipe.steps)


def mirror_weights(even: float, per_head: torch.Tensor) -> None:
    """The weight each head puts on the mirrored position: the paragraph after its cell.

    Args:
        even: the weight even attention would put there; per_head: (h,).
    """
    glue_number("ch6-rev-mirror-even", even)
    for head, weight in enumerate(per_head.tolist()):
        glue_number(f"ch6-rev-mirror-head{head + 1}", weight)
    # "both heads draw the same anti-diagonal", with nearly all their weight
    claim("the model has two heads", len(per_head) == 2, heads=len(per_head))
    claim_trained("ch6-rev-mirror-min", "both heads put most of their weight (above 0.8) on the "
                  "mirrored position", per_head.min(), low=0.8, per_head=per_head)


def interventions(intervened: pd.DataFrame, right: dict[str, Metrics]) -> None:
    """The interventions on the reversal model's heads: their table
    (tbl-ch6-rev-interventions) and the paragraph after it."""
    glue_table("ch6-rev-interventions", intervened)
    correct = {name: 100 * m.sequence_accuracy for name, m in right.items()}
    for key, name in (("ko1", "head 1 knocked out"), ("ko2", "head 2 knocked out"),
                      ("both", "both knocked out"), ("diag", "head 1 copying's diagonal"),
                      ("ideal1", "head 1 ideal anti-diagonal"),
                      ("ideal2", "head 2 ideal anti-diagonal"),
                      ("alone", "head 1 ideal, head 2 out")):
        glue_number(f"ch6-rev-int-{key}", correct[name])
    # The prose: the ideal pattern in either head keeps the model right, copying's diagonal
    # wrecks it; both heads out: nothing; either alone: many. (How many each head alone keeps, and
    # which keeps more, is quoted, not claimed: over the calibrated draws it ranges too widely.)
    alone = [correct["head 1 knocked out"], correct["head 2 knocked out"]]  # the other head alone
    for key, text, value, bounds in (
            ("ideal-vs-none", "the ideal anti-diagonal in either head leaves the model as good "
             "(within 0.5 points)", min(correct["head 1 ideal anti-diagonal"],
                                        correct["head 2 ideal anti-diagonal"]) - correct["none"],
             {"low": -0.5}),
            ("diag", "copying's diagonal wrecks it (below 25%)",
             correct["head 1 copying's diagonal"], {"high": 25.0}),
            ("both", "both heads knocked out: below 1%", correct["both knocked out"],
             {"high": 1.0}),
            ("alone-min", "either head alone still reverses many sequences (above 10%)",
             min(alone), {"low": 10.0}),
            ("ideal-alone", "head 1 with the ideal pattern on its own reverses most sequences "
             "(above 50%)", correct["head 1 ideal, head 2 out"], {"low": 50.0})):
        claim_trained(f"ch6-rev-int-{key}", text, value, **bounds)


def greedy_trap(found: dict[str, float]) -> None:
    """The hand-made case where greedy decoding is wrong: the probabilities the prose derives."""
    # The prose derives both probabilities by hand from the table. Each is the exp of a sum of two
    # float32 logs (each within 2^-24 relative of the table's), so it is within a few times 6e-8
    # of the product, far inside 1e-6.
    claim_float("greedy's sequence has probability 0.24, beam's 0.36",
                abs(found["greedy"] - 0.6 * 0.4) < 1e-6
                and abs(found["beam, k=2"] - 0.4 * 0.9) < 1e-6, found=found)


def beam_outputs(beam_metrics: Metrics, differ: int, rev_test: TaskData) -> None:
    """Beam search on the reversal model: the sentence after its cell."""
    glue_number("ch6-rev-beam-seq", 100 * beam_metrics.sequence_accuracy)
    # "it returns the same output as greedy decoding for all but N of the test sequences"
    claim_trained("ch6-rev-beam-differ", "beam search returns greedy's output for nearly every "
                  "test sequence (all but 3 at most)", differ, high=3)
    glue_text("ch6-rev-beam-same", f"every one of the {len(rev_test):,}" if differ == 0
              else f"all but {differ} of the {len(rev_test):,}")


def beam_confidence(top2: torch.Tensor, eps: float, V: int) -> None:
    """How sure the reversal model is at each step: the paragraph that closes the beam section.

    Args:
        top2: (steps, 2), the two largest probabilities at every step that chose a token.
    """
    glue_number("ch6-rev-top1-median", top2[:, 0].median())
    glue_number("ch6-rev-top1-min", top2[:, 0].min())
    glue_number("ch6-rev-top2-max", top2[:, 1].max())
    glue_number("ch6-rev-top2-median", top2[:, 1].median())
    # "the chosen token had probability X, about the 0.908 that label smoothing trains towards,
    # and the runner-up Y" at the median step (the least sure step's are quoted, not claimed)
    claim_trained("ch6-rev-top2-median", "at the median step the runner-up is far less likely "
                  "(below 0.1)", top2[:, 1].median(), high=0.1)
    claim_trained("ch6-rev-top1-off-target", "the median chosen probability is about the smoothed "
                  "target (within 0.02)", abs(top2[:, 0].median() - (1 - eps + eps / V)),
                  high=0.02, median=top2[:, 0].median(), target=1 - eps + eps / V)


def ablation_tables(fair: pd.DataFrame, same_rate: pd.DataFrame, sweep: pd.DataFrame,
                    selection: pd.DataFrame, budget: TrainConfig) -> None:
    """The ablation tables: every variant at its best rate (tbl-ch6-fair), at the recipe's
    (tbl-ch6-ablations) and the whole sweep (tbl-ch6-sweep, tbl-ch6-sweep-selection)."""
    glue_table("ch6-fair", fair)
    glue_table("ch6-ablations", same_rate)
    glue_table("ch6-sweep", sweep_table(sweep, budget.steps))
    glue_table("ch6-sweep-selection", sweep_table(selection, budget.steps))
    # (the numbers the prose below quotes of the sweep were glued with the sweep's first table,
    # and what it says of them is checked on the study's data: stored_runs.ablation_sweep_claims)
    paper_smoothing = TABLE3["eps_ls = 0"]
    glue_number("ch6-paper-nols-ppl", paper_smoothing.perplexity)
    glue_number("ch6-paper-nols-bleu", paper_smoothing.bleu)


def bag_of_symbols(bag_row: dict[str, Any], bag_result: TrainResult,
                   test: TaskData) -> float:
    """The live run without positions: the paragraph after it. Returns its share of test
    sequences in the right order (%), which the sorting exercise compares with."""
    length_right, same_bag = order_free_accuracy(bag_row["outputs"], test)
    bag_same, bag_seq = 100 * same_bag, 100 * bag_row["sequence_accuracy"]
    glue_number("ch6-bag-live-same", bag_same)
    glue_number("ch6-bag-live-seq", bag_seq)
    # This run is a new draw of the stored study's seed 0, not a replay of it. What the prose says
    # of it: it never gets every validation sequence right, and it learns the bag, not the order.
    best_check = 100 * max(e.metrics.sequence_accuracy for e in bag_result.evaluations)
    claim_trained("ch6-bag-best-validation", "without positions this run never gets every "
                  "validation sequence right either (at best below 50% at a check)", best_check,
                  high=50.0)
    claim_trained("ch6-bag-live-same", "this run: many outputs hold the right bag of symbols "
                  "(above 10%)", bag_same, low=10.0)
    claim_trained("ch6-bag-order-share", "this run: of the outputs with the right bag, few are in "
                  "the right order (at most one in ten)", 100 * bag_seq / max(bag_same, 0.1),
                  high=10.0, same_symbols=bag_same, right_order=bag_seq)
    claim_trained("ch6-bag-live-seq", "this run: few outputs are in the right order (below 6%)",
                  bag_seq, high=6.0)
    return bag_seq


def length_weights(rerun: pd.DataFrame, stored: pd.DataFrame, recipe_steps: pd.Series,
                   copy_steps: int | None, budget: TrainConfig) -> None:
    """The solution of the exercise on the length weights: the stored uniform-length runs, this
    page's run of seed 0 beside its calibrated draws (tbl-ch6-uniform-draws)."""
    again = rerun.iloc[0]  # this page's run of seed 0, live
    # A new draw of the stored study's seed 0, not a replay: within a 150-step budget one seed's
    # stopping step carries no claim, so the page shows it beside the calibrated draws of the same
    # run (and of the recipe's seed 0, the copy run above), claiming nothing.
    rerun_steps = again["first_step_at_target"]  # NaN: not within the budget
    observe("ch6-uniform-rerun-steps", None if np.isnan(rerun_steps) else rerun_steps)
    glue_number("ch6-uniform-rerun-seed", int(again["seed"]))
    glue_text("ch6-uniform-rerun-steps", steps_text(rerun_steps, budget.steps))
    glue_table("ch6-uniform-draws", steps_beside_draws({
        "seed 0, the recipe": ("ch6-copy-steps", copy_steps),
        "seed 0, uniform lengths": ("ch6-uniform-rerun-steps", rerun_steps)}, budget.steps))
    glue_text("ch6-uniform-rerun-draws", steps_span_text("ch6-uniform-rerun-steps",
                                                       budget.steps))
    glue_number("ch6-calibration-draws", len(calibration.draws()))
    # Stored against stored: the uniform runs (study ch6-uniform-lengths) beside the recipe's runs
    # of the sweep (ch6-ablation-sweep, factor 1); what the prose says of them is checked on both
    # studies' data (stored_runs.uniform_lengths_claims).
    for key, value in uniform_numbers(stored, recipe_steps).items():
        (glue_text if isinstance(value, str) else glue_number)(key, value)


def sort_without_positions(sort_seq: float, sort_budget: TrainConfig, bag_seq: float) -> None:
    """The solution of the exercise on sorting without positions: the sentence after its run."""
    glue_number("ch6-sort-nopos-seq", sort_seq)
    glue_number("ch6-sort-steps", sort_budget.steps)
    # "removing positions breaks the task that needs the order, not the one that needs only the
    # bag": it sorts far more than copying got right in this page's run (ch6-bag-live-seq, below
    # 6%: above 20% is more than three times that)
    claim_trained("ch6-sort-nopos-seq", "without positions, sorting works where copying did not "
                  "(above 20%)", sort_seq, low=20.0, copy=bag_seq)


def loss_formula(difference: float) -> None:
    """The lab note on the loss against its formula: the sentence after its cell."""
    glue_number("ch6-loss-diff", difference)
    # Float: the same sums in another order. Each loss is a mean of sums of V products of
    # float32 numbers below 10, so each rounds within a few times 2^-24 of its size (about 2):
    # far below 1e-5.
    claim_float("the package's loss is the formula's to float precision", difference < 1e-5,
                difference=difference)


def warmup_study(budget: TrainConfig, warm: pd.DataFrame) -> None:
    """The stored warm-up runs: the numbers of the figure (fig-ch6-warmup) and the paragraph
    after it."""
    glue_number("ch6-wu-steps", budget.steps)
    # What the prose says of the stored warm-up runs (study ch6-warmup-runs) is checked on the
    # study's data (stored_runs.warmup_runs_claims); here its numbers are read off it.
    for key, value in warmup_numbers(warm).items():
        glue_number(key, value)


def stored_studies() -> None:
    """The lab note's table of the stored studies this page reads (tbl-ch6-stored-studies)."""
    glue_table("ch6-stored-studies", studies_table(6))


def warmup_rerun(again: pd.Series, warm: pd.DataFrame, setting: str) -> None:
    """The lab note's re-run of one stored warm-up run: the paragraph after it, this run beside
    its calibrated draws and the study's seeds."""
    # A new draw of the stored study's seed 0, not a replay. What the study says of every run at
    # the paper's peak holds for it too; its final loss and test tokens are shown beside the same
    # run's calibrated draws and the study's seeds, claiming nothing.
    glue_number("ch6-wu-rerun-seq", 100 * again["sequence_accuracy"])
    claim_trained("ch6-wu-rerun-seq", "this run too gets few of the test sequences right (below "
                  "2%)", 100 * again["sequence_accuracy"], high=2.0)
    for key, value, spec in (("loss", again["losses"][-1], ".3f"),
                             ("tok", 100 * again["token_accuracy"], ".1f")):
        observe(f"ch6-wu-rerun-{key}", value)
        glue_number(f"ch6-wu-rerun-{key}", value)
        glue_text(f"ch6-wu-rerun-{key}-draws", calibration.span_text(f"ch6-wu-rerun-{key}", spec))
    seed_losses = final_losses(warm, setting)  # study ch6-warmup-runs, seeds 0-2
    glue_number("ch6-wu-seeds-loss-min", seed_losses.min())
    glue_number("ch6-wu-seeds-loss-max", seed_losses.max())
