"""What the page of Chapter 3 (multi-head attention) glues and checks.

Each function backs one figure, table or paragraph of the chapter: it glues the numbers the prose
quotes (with :mod:`transformer_course.notebook`'s glue helpers) and checks the claims the prose
makes (with :mod:`transformer_course.claims`). The chapter calls them from its hidden cells, each
where the old cell stood; the code a reader is meant to read stays in the chapter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from transformer_course import calibration
from transformer_course.claims import claim, claim_float, claim_trained, observe
from transformer_course.experiments.ch3_multi_head_attention import head_rates
from transformer_course.experiments.ch3_multi_head_attention import head_specialisation as hs
from transformer_course.figures.architecture import plot_architecture
from transformer_course.notebook import glue_figure, glue_number, glue_table, glue_text
from transformer_course.stored import studies_table

THRESHOLD, WINDOW = 0.95, 25  # "learned": the mean batch accuracy of 25 steps reaches 95%
SHARED = 0.5  # a head leads on its own job's token by less than this: the heads share the work


def architecture_map() -> None:
    """Figure 3.1 (``ch3-map``): the Transformer with the attention blocks highlighted."""
    here = "multi-head attention: every attention block is one"
    glue_figure("ch3-map", plot_architecture(highlight=["attention"], here=here))


def parameter_counts(ours_8: int, ours_1: int, torch_8: int, formula: int) -> None:
    """The paragraph under the count at d_model = 512: the same count whatever h is."""
    glue_number("ch3-params-ours", ours_8)
    glue_number("ch3-params-one-head", ours_1)
    glue_number("ch3-params-torch", torch_8)
    glue_number("ch3-params-formula", formula)
    claim("the same parameter count with 8 heads, one head, in PyTorch and by the formula",
          ours_8 == ours_1 == torch_8 == formula, ours_8=ours_8, ours_1=ours_1,
          torch_8=torch_8, formula=formula)


def task_example(task: hs.LookupTask, config: hs.LookupConfig, example: hs.LookupBatch) -> None:
    """The task's description (sizes of task and model) and Table ``tbl-ch3-task-example``: one
    sequence of ``example`` (a batch of one) with its targets."""
    for key, value in (("seq-len", task.seq_len),
                       ("num-values", task.num_values),
                       ("heads", config.num_heads), ("width", config.d_model)):
        glue_number(f"ch3-{key}", value)
    glue_table("ch3-task-example", pd.DataFrame(
        {"token": hs.token_labels(task, example.tokens[0]),
         "target": ["–"] + example.targets[0, 1:].tolist()},
        index=pd.Index(range(task.seq_len), name="position t")).T)


def splits(task: hs.LookupTask, config: hs.LookupConfig, seeds: Sequence[int],
           held_out: hs.LookupBatch, accuracies: Sequence[float], jobs: Sequence[hs.HeadJobs],
           seed_table: pd.DataFrame) -> tuple[pd.Series, list[float], int]:
    """The paragraphs on the two-head runs ("Every run learns the task ...", the calibration
    paragraph after it) and Table ``tbl-ch3-seeds`` (``seed_table``, one row per seed).

    Returns each run's clean split (a bool Series), each run's separation (how cleanly the weaker
    head keeps to its job) and the index of the least clean run.
    """
    glue_number("ch3-threshold-pct", 100 * THRESHOLD)
    glue_number("ch3-curve-window", WINDOW)
    for key, value in (("num-seeds", len(seeds)), ("last-seed", seeds[-1]),
                       ("steps", config.training.steps),
                       ("batch", config.training.batch_size)):
        glue_number(f"ch3-{key}", value)
    glue_number("ch3-held-out", held_out.tokens.shape[0])
    glue_number("ch3-clean-own", hs.CLEAN_OWN)
    glue_number("ch3-clean-other", hs.CLEAN_OTHER)
    glue_number("ch3-chance", 100 / task.num_values)
    glue_table("ch3-seeds", seed_table.round(3))
    clean = seed_table["clean split"]
    glue_number("ch3-clean-count", int(clean.sum()))
    glue_number("ch3-min-accuracy", seed_table["accuracy (%)"].min())
    head1_prev = sum(j.prev_head == 0 for j, c in zip(jobs, clean, strict=True) if c)
    glue_number("ch3-head1-prev-count", head1_prev)
    # how cleanly the weaker head of each run keeps to its job
    separation = [j.separation for j in jobs]
    worst = int(np.argmin(separation))  # the least clean run
    glue_number("ch3-worst-seed", seeds[worst])
    glue_number("ch3-worst-accuracy", 100 * accuracies[worst])
    w_jobs = jobs[worst]
    for key, value in (("own-prev", w_jobs.prev_own), ("other-prev", w_jobs.prev_other),
                       ("own-marked", w_jobs.marked_own),
                       ("other-marked", w_jobs.marked_other)):
        glue_number(f"ch3-worst-{key}", value)
    # "Every run learns the task": the lowest held-out accuracy, in %
    claim_trained("ch3-min-accuracy", "every run learns the task (held-out accuracy at least 99 %)",
                  100 * min(accuracies), low=99.0, accuracies=np.array(accuracies))
    # "In ... of 8 runs the two heads split the two lookups cleanly" and "a split is the usual
    # outcome": most runs (in a calibrated run all 8 split, so "not all" is no claim)
    claim_trained("ch3-clean-count", "in most runs the two heads split the lookups cleanly",
                  int(clean.sum()), low=len(seeds) // 2 + 1)
    # "Which head takes which job depends on the initial weights": among the clean runs, both
    # assignments occur (the count of the rarer one; no single seed's assignment is relied on)
    claim_trained("ch3-rarer-assignment", "among the clean runs, head 1 took the previous-token "
                  "job in some and head 2 in others",
                  min(head1_prev, int(clean.sum()) - head1_prev),
                  low=1, head1_prev=head1_prev, clean_runs=int(clean.sum()))
    # The least clean run: whether its heads share the work is this run's outcome, not a claim
    # (in a calibrated run it split cleanly too). The sentence is chosen from the
    # data, and the page shows how often each outcome came up in the calibration.
    observe("ch3-worst-separation", separation[worst])
    glue_text("ch3-worst-verdict",
              "but its heads share the work" if separation[worst] < SHARED
              else "and in this run even it splits cleanly" if clean.iloc[worst]
              else "and its heads keep mostly, if not cleanly, to one job each")
    drawn_worst = calibration.beside("ch3-worst-separation", separation[worst])
    drawn_clean = calibration.beside("ch3-clean-count", int(clean.sum()))
    glue_number("ch3-calib-runs", len(drawn_worst.values))
    glue_number("ch3-calib-shared", sum(v < SHARED for v in drawn_worst.values))
    glue_number("ch3-calib-all-clean", sum(v == len(seeds) for v in drawn_clean.values))
    return clean, separation, worst


def shown_run(task: hs.LookupTask, config: hs.LookupConfig, seeds: Sequence[int],
              held_out: hs.LookupBatch, batch_accuracy: np.ndarray, jobs: Sequence[hs.HeadJobs],
              ) -> tuple[list[int], int, torch.Tensor]:
    """The paragraph before Figure ``fig-ch3-maps``: the run it shows, chosen by a rule fixed in
    advance, and the untrained heads ("untrained maps are not evidence of anything").

    Args:
        batch_accuracy: (runs, steps), each run's accuracy on its batch at every step.

    Returns each run's steps to learn (the budget + 1 for a run that never learned), the index
    of the shown run and its untrained model's weights on ``held_out``, (B, h, T, T).
    """
    # The shown run, by a rule fixed before looking: the run whose two-head model took the
    # median number of steps to learn the task (the lower of the middle two; ties: lower seed).
    steps_two = [hs.first_step_reaching(a, THRESHOLD, WINDOW) for a in batch_accuracy]
    # "long enough for every run of both models to learn the task": the last two-head run to
    # learn did so within the budget (a run that never learned counts as NaN and fails)
    claim_trained("ch3-steps-two-max", "every two-head run learned within the budget",
                  None if None in steps_two else max(steps_two), high=config.training.steps,
                  steps_two=steps_two)
    # a run that never passed the threshold counts as passing it after the budget
    steps_two = [config.training.steps + 1 if s is None else s for s in steps_two]
    by_speed = sorted(range(len(seeds)), key=lambda i: (steps_two[i], seeds[i]))
    shown = by_speed[(len(seeds) - 1) // 2]
    glue_number("ch3-shown-seed", seeds[shown])
    glue_number("ch3-shown-steps", steps_two[shown])
    # "a typical one": the shown run splits cleanly (its margin inside the clean thresholds)
    claim_trained("ch3-shown-clean-margin", "the shown run (median steps to learn) is a clean one",
                  jobs[shown].clean_margin, low=0.0, shown_seed=seeds[shown])
    untrained = hs.build_lookup_model(task, config, seed=seeds[shown])
    _, untrained_w = hs.evaluate_lookup_model(untrained, held_out)
    # every run's untrained heads, for "untrained maps are not evidence of anything"
    before = np.array([hs.lookup_shares(hs.evaluate_lookup_model(
        hs.build_lookup_model(task, config, seed=s), held_out)[1], held_out.anchors)
        for s in seeds])  # (runs, h, 2)
    glue_number("ch3-untrained-max", before.max())
    glue_number("ch3-uniform-share", 1 / task.seq_len)
    # "Before training, the heads of every run put at most ... on either key": seeded weights,
    # no training, so only rounding (and a draw's one-ulp nudge of the weights) moves these
    # averages of softmax weights, by float32 eps (6e-8) times a few dozen operations per
    # weight, about 1e-6; the bound 0.25 lies 0.15 above the value
    claim_float("untrained heads look nowhere special", before.max() < 0.25,
                untrained_max=before.max())
    return steps_two, shown, untrained_w


def map_anchor(anchor_n: int) -> None:
    """Figure ``fig-ch3-maps``'s caption: the position of the marked token."""
    glue_number("ch3-map-anchor", anchor_n)


def spread(values: Sequence[float] | pd.Series) -> str:  # median (lowest–highest), in %
    """A share per run as the knock-out table shows it."""
    v = 100 * np.asarray(values)
    return f"{np.median(v):.1f} ({v.min():.1f}–{v.max():.1f})"


def knockouts(probe: hs.LookupBatch, responses: dict[tuple[int, str], hs.LookupResponse],
              seeds: Sequence[int], clean: pd.Series, separation: Sequence[float],
              worst: int) -> None:
    """Table ``tbl-ch3-knockouts`` (the clean runs), the paragraph after it and Table
    ``tbl-ch3-knockout-seeds`` (every run), from ``responses``: (seed, head removed) -> response.
    """
    glue_number("ch3-probe-size", probe.tokens.shape[0])
    conditions = ["none", "x[t-1] head", "marked head"]
    ko = pd.DataFrame(
        [{"seed": s, "removed": c, "accuracy": r.accuracy, "prev": r.responds_prev,
          "marked": r.responds_marked} for (s, c), r in responses.items()])
    ko_clean = ko[ko.seed.isin([s for s, c in zip(seeds, clean, strict=True) if c])]
    ko_summary = pd.DataFrame(
        [{"head removed": c,
          "accuracy (%)": spread(ko_clean[ko_clean.removed == c].accuracy),
          "changes with x[t-1] (%)": spread(ko_clean[ko_clean.removed == c].prev),
          "changes with marked (%)": spread(ko_clean[ko_clean.removed == c].marked)}
         for c in conditions]).set_index("head removed")
    glue_table("ch3-knockouts", ko_summary)
    ko_wide = ko.pivot(index="seed", columns="removed", values=["accuracy", "prev", "marked"])
    ko_seeds = pd.DataFrame({
        "split": ["clean" if c else "shared" for c in clean],
        "x[t-1] head out: accuracy": 100 * ko_wide["accuracy", "x[t-1] head"],
        "x[t-1] head out: x[t-1]": 100 * ko_wide["prev", "x[t-1] head"],
        "x[t-1] head out: marked": 100 * ko_wide["marked", "x[t-1] head"],
        "marked head out: accuracy": 100 * ko_wide["accuracy", "marked head"],
        "marked head out: x[t-1]": 100 * ko_wide["prev", "marked head"],
        "marked head out: marked": 100 * ko_wide["marked", "marked head"]},
        index=pd.Index(seeds, name="seed"))
    glue_table("ch3-knockout-seeds", ko_seeds.round(1))
    by = {c: ko_clean[ko_clean.removed == c] for c in conditions}
    intact = ko[ko.removed == "none"][["accuracy", "prev", "marked"]].to_numpy()
    glue_number("ch3-ko-intact-min", 100 * intact.min())
    ko_own_max = max(by["x[t-1] head"].prev.max(), by["marked head"].marked.max())
    ko_other_min = min(by["x[t-1] head"].marked.min(), by["marked head"].prev.min())
    ko_acc_max = max(by["x[t-1] head"].accuracy.max(), by["marked head"].accuracy.max())
    glue_number("ch3-ko-own-max", 100 * ko_own_max)
    glue_number("ch3-ko-other-min", 100 * ko_other_min)
    glue_number("ch3-ko-acc-max", 100 * ko_acc_max)
    # Table caption: "With no head removed every run scores at least ... on all three" (in %)
    claim_trained("ch3-ko-intact-min", "the intact models are accurate and read both tokens",
                  100 * intact.min(), low=98.0)
    # "removing the head ... leaves a model whose answer ignores the previous token (it changes
    # in at most ... % of queries)", and the reverse for the marked-token head
    claim_trained("ch3-ko-own-max", "removing a head silences the token its map points at",
                  100 * ko_own_max, high=8.0)
    # "but still follows the marked token (at least ... %)", and the reverse
    claim_trained("ch3-ko-other-min", "removing a head leaves the other head's token heard (the "
                  "answer follows it at least half the time)", 100 * ko_other_min, low=50.0)
    # "with either head gone, accuracy falls to at most ... %, near guessing"
    claim_trained("ch3-ko-acc-max", "with either head gone, accuracy falls near guessing",
                  100 * ko_acc_max, high=30.0)
    # the least clean run: how far each knock-out leaves the answer following each token
    w_ko = ko[(ko.seed == seeds[worst]) & (ko.removed != "none")]
    w_rates = w_ko[["prev", "marked"]].to_numpy()
    glue_number("ch3-ko-worst-min", 100 * w_rates.min())
    glue_number("ch3-ko-worst-max", 100 * w_rates.max())
    # this run's outcome, not a claim (in a calibrated run where the least clean run split cleanly,
    # its knock-outs silenced a token as the clean runs' do); the sentence is chosen from the data
    observe("ch3-ko-worst-min", 100 * w_rates.min())
    observe("ch3-ko-worst-max", 100 * w_rates.max())
    partial = 0.2 < w_rates.min() and w_rates.max() < 0.9  # no token silenced, none fully heard
    glue_text("ch3-ko-worst-verdict",
              ("Only part of the time, then: both heads carry some of both lookups"
               + (", as their shares suggested." if separation[worst] < SHARED else "."))
              if partial
              else "So at least one of its lookups rests on one head, as in a clean run.")


def one_head(config: hs.LookupConfig, seeds: Sequence[int], held_out: hs.LookupBatch,
             models: Sequence[hs.LookupModel], one_models: Sequence[hs.LookupModel],
             one_batch_accuracy: np.ndarray,
             one_evaluated: Sequence[tuple[float, torch.Tensor]],
             one_shares: Sequence[np.ndarray], steps_two: Sequence[int],
             seed_table: pd.DataFrame) -> None:
    """The section "One head of the same width", its lab note ("One head against two, run by
    run") and Table ``tbl-ch3-one-head``.

    Args:
        one_batch_accuracy: (runs, steps). one_evaluated: (accuracy, weights) per run.
        one_shares: (2,) per run, the single head's shares on the two keys.
    """
    steps_one = [hs.first_step_reaching(a, THRESHOLD, WINDOW) for a in one_batch_accuracy]
    # "Both models were trained until every run had learned": the last one-head run to learn
    # did so within the budget (a run that never learned counts as NaN and fails)
    claim_trained("ch3-steps-one-max", "every one-head run learned within the budget",
                  None if None in steps_one else max(steps_one), high=config.training.steps,
                  steps_one=steps_one)
    steps_one = [config.training.steps + 1 if s is None else s for s in steps_one]
    one_accuracy = [100 * a for a, _ in one_evaluated]
    compare = pd.DataFrame({
        "two heads: steps to learn": steps_two,
        "one head: steps to learn": steps_one,
        "two heads: loss": [hs.lookup_loss(m, held_out) for m in models],
        "one head: loss": [hs.lookup_loss(m, held_out) for m in one_models],
        "one head: accuracy (%)": one_accuracy,
        "one head: share on x[t-1]": [s[0] for s in one_shares],
        "one head: share on marked": [s[1] for s in one_shares]},
        index=pd.Index(seeds, name="seed"))
    glue_table("ch3-one-head", compare.round(4))
    glue_number("ch3-lr", config.training.peak_lr)
    glue_number("ch3-one-acc-min", min(one_accuracy))
    glue_number("ch3-one-acc-median", np.median(one_accuracy))
    glue_number("ch3-two-acc-median", seed_table["accuracy (%)"].median())
    faster = np.array(steps_two) < np.array(steps_one)
    glue_number("ch3-two-faster-count", int(faster.sum()))
    glue_number("ch3-steps-two-median", np.median(steps_two))
    glue_number("ch3-steps-one-median", np.median(steps_one))
    glue_number("ch3-steps-two-max", max(steps_two))
    glue_number("ch3-steps-one-max", max(steps_one))
    glue_number("ch3-one-share-min", min(min(s) for s in one_shares))
    glue_number("ch3-one-share-max", max(max(s) for s in one_shares))
    worse = compare["one head: loss"] > compare["two heads: loss"]
    glue_number("ch3-one-worse-count", int(worse.sum()))
    # "every run scores above 90 % on held-out sequences": the lowest one-head run, in %
    one_acc_bound = 90.0
    glue_number("ch3-one-acc-bound", one_acc_bound)
    claim_trained("ch3-one-acc-min", "the single head learns the task too: every run above 90 % "
                  "held out", min(one_accuracy), low=one_acc_bound,
                  one_accuracy=np.array(one_accuracy))
    # "two heads passed 95 % first in ... of 8 runs": most runs
    claim_trained("ch3-two-faster-count", "two heads learned first in most runs",
                  int(faster.sum()), low=len(seeds) // 2 + 1)
    # "after a median of ... steps against ...": the one-head median minus the two-head median
    claim_trained("ch3-median-steps-gap", "two heads learned after fewer steps (median over runs)",
                  np.median(steps_one) - np.median(steps_two), low=1.0,
                  steps_two=np.median(steps_two), steps_one=np.median(steps_one))
    # "In every run its weight is split between the two keys, between ... and ... on each"
    claim_trained("ch3-one-share-min", "the single head splits its weight between the two keys "
                  "in every run (at least 0.2 on each)", min(min(s) for s in one_shares),
                  low=0.2, share_max=max(max(s) for s in one_shares))
    # lab note: "in ... of 8 runs the one-head model ends with the higher loss": most runs
    claim_trained("ch3-one-worse-count",
                  "the one-head model ends with the higher loss in most runs",
                  int(worse.sum()), low=len(seeds) // 2 + 1)
    # lab note: the median loss ratio, this run's beside the calibrated runs' (no claim)
    loss_ratio = (compare["one head: loss"] / compare["two heads: loss"]).median()
    glue_number("ch3-one-loss-ratio", loss_ratio)
    observe("ch3-one-loss-ratio", loss_ratio)
    drawn_ratio = calibration.beside("ch3-one-loss-ratio", loss_ratio)
    glue_number("ch3-ratio-runs", len(drawn_ratio.values))
    for key, value in zip(("low", "high"), drawn_ratio.span(), strict=True):
        glue_number(f"ch3-ratio-{key}", value)


def learning_rates(task: hs.LookupTask, config: hs.LookupConfig, seeds: Sequence[int]) -> None:
    """The paragraph "Was that the learning rate?" and Table ``tbl-ch3-head-rates``, from the
    stored study ``ch3-head-rates``."""
    # study ch3-head-rates: head_rates.sweep(), stored (seeds 8-11); what the prose says about it
    # is checked on the data by head_rates.data_claims (tests/test_stored.py, and its command)
    rates = head_rates.summary(head_rates.stored())
    glue_number("ch3-rates-count", len(rates.rates))
    glue_number("ch3-rates-min", rates.rates[0])
    glue_number("ch3-rates-max", rates.rates[-1])
    chosen_on = head_rates.SELECTION_SEEDS
    claim("the sweep's seeds run in one step", list(chosen_on) == list(
        range(chosen_on[0], chosen_on[-1] + 1)), seeds=chosen_on)
    glue_text("ch3-rates-seeds", f"{chosen_on[0]}–{chosen_on[-1]}")
    glue_number("ch3-rates-num-seeds", len(chosen_on))
    for heads, key in ((1, "one"), (2, "two")):
        glue_number(f"ch3-rate-{key}", rates.best[heads])
        glue_number(f"ch3-rate-{key}-steps", rates.best_steps(heads))
    glue_table("ch3-head-rates", rates.table())
    # "on other seeds ... with the chapter's task, sizes, budget and definition of 'learned'"
    claim("the sweep's seeds are not the chapter's; its task, model, training and 'learned' are "
          "the chapter's", not set(chosen_on) & set(seeds)
          and (head_rates.TASK, head_rates.CONFIG) == (task, config)
          and (head_rates.THRESHOLD, head_rates.WINDOW) == (THRESHOLD, WINDOW))


def loop_exercise(largest_difference: float) -> None:
    """Exercise ch3-ex-loop's solution: how closely the loop agrees with the reshape."""
    glue_number("ch3-loop-diff", largest_difference)


def four_heads(four_seeds: Sequence[int], four_shares: Sequence[np.ndarray],
               doing: Sequence[np.ndarray]) -> None:
    """Exercise ch3-ex-heads's solution: four heads for two lookups.

    Args:
        four_shares: (4, 2) per run. doing: (2,) per run, the heads on each job's key.
    """
    glue_number("ch3-four-duplicated", sum(int(d.max() >= 2) for d in doing))
    glue_number("ch3-four-runs", len(four_seeds))
    # "Both jobs are taken in every run: for each key some head puts at least 0.4 of its weight
    # on it": the weakest job's strongest head, over both runs
    taken = 0.4
    four_jobs_min = min(s.max(axis=0).min() for s in four_shares)
    glue_number("ch3-four-taken", taken)
    glue_number("ch3-four-jobs-min", four_jobs_min)
    claim_trained("ch3-four-jobs-min", "both jobs are taken in every run (for each job's token "
                  "some head puts at least 0.4 of its weight on it)", four_jobs_min, low=taken,
                  doing=[d.tolist() for d in doing])


def agreement(hand_vs_numpy: float, numpy_vs_module: float, weights_diff: float) -> None:
    """The lab note "The hand computation, the NumPy function and the module agree"."""
    glue_number("ch3-hand-vs-numpy", hand_vs_numpy)
    glue_number("ch3-numpy-vs-module", numpy_vs_module)
    glue_number("ch3-numpy-vs-module-weights", weights_diff)
    # "rounding, nothing more": float64, entries of order 1, each output a chain of four sums of
    # at most 8 products (projection, scores, weighted average, output projection), so rounding
    # moves it by a few dozen times 2^-53 (about 1e-16), some 1e-15 at most; 1e-12 leaves a
    # factor of several hundred
    claim_float("the cell-by-cell steps, the NumPy function and the module agree to rounding",
                max(hand_vs_numpy, numpy_vs_module, weights_diff) < 1e-12,
                hand_vs_numpy=hand_vs_numpy, numpy_vs_module=numpy_vs_module,
                weights_diff=weights_diff)


def torch_parity(torch_diffs: dict[str, float]) -> None:
    """The lab note "Matching torch.nn.MultiheadAttention": the largest differences of the
    outputs, the per-head and averaged weights and the input gradients (keys out, heads, avg,
    grad)."""
    for key, value in torch_diffs.items():
        glue_number(f"ch3-torch-diff-{key}", value)
    # "the same numbers to rounding": float32 (2^-24, about 6e-8). An output is four chained sums
    # of at most 16 products of inputs up to about 3 and weights up to about 0.5, so the two
    # implementations' different summation orders can differ by about 16 x 3 x 0.5 x 6e-8 per
    # stage, some 1e-5 at worst; 1e-4 leaves a factor of 10. A gradient entry sums a few hundred
    # such terms of size up to about 7 (300 x 7 x 6e-8, about 1e-4 at worst); 1e-3 leaves 10.
    claim_float("our module matches torch.nn.MultiheadAttention to rounding, masks included",
                max(torch_diffs["out"], torch_diffs["heads"], torch_diffs["avg"]) < 1e-4
                and torch_diffs["grad"] < 1e-3, **torch_diffs)


def stored_studies(config: hs.LookupConfig) -> None:
    """Table ``tbl-ch3-head-rates``'s caption (the budget + 1) and Table
    ``tbl-ch3-stored-studies``: the stored study the page reads."""
    glue_number("ch3-budget-plus-one", config.training.steps + 1)
    glue_table("ch3-stored-studies", studies_table(3))
