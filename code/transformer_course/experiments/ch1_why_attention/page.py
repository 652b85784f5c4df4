"""What Chapter 1's page (why attention) glues and checks: its figures, tables and numbers, and
the claims its prose makes about them. The chapter calls these functions from its hidden cells,
each near the prose it backs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import torch

from transformer_course.claims import claim, claim_float
from transformer_course.experiments.ch1_why_attention import complexity, recurrence, threads
from transformer_course.experiments.ch1_why_attention.recurrence import ElmanRNN
from transformer_course.figures import ch1_why_attention as plots
from transformer_course.figures.architecture import plot_architecture
from transformer_course.notebook import glue_figure, glue_number, glue_table, glue_text
from transformer_course.stored import studies_table

# The three timed layers: the key of their glued numbers, and their name in the measurements.
NAMES = {"rnn": "recurrent (nn.RNN)", "lstm": "recurrent (nn.LSTM)",
         "att": "self-attention (MultiHeadAttention)"}


def architecture_map() -> None:
    """Figure 1.1 (`ch1-map`): the architecture, the attention blocks highlighted."""
    here = "attention, the mechanism that replaces recurrence"
    glue_figure("ch1-map", plot_architecture(highlight=["attention"], here=here))


def opening(shown: dict[str, Any]) -> None:
    """The weight of "fünf" on "five" in the opening map, and the masked translation of Table 1.1
    (`ch1-masked`); ``shown`` is the stored study `ch7-opening-map`."""
    first = shown["weights"][0]  # the row of the first German token
    five = shown["source"].index("five")
    glue_number("ch1-fuenf-on-five", first[five])
    # What the prose says about the stored map is checked as data, once, not at every build:
    # opening_map.data_claims, run by tests/test_stored.py and by the study's own command.
    words = " ".join(shown["source"][1:-1])
    masked = " ".join(w if w != "five" else "(five masked)" for w in shown["source"][1:-1])
    glue_table("ch1-masked", pd.DataFrame({
        "English input": [words, masked],
        "German output": [shown["translation"], shown["masked_translation"]]}))


def state_size(long_input: torch.Tensor, last_state: torch.Tensor) -> None:
    """The numbers of the fixed-size state paragraph: ``long_input`` (B, T, input_size),
    ``last_state`` (B, hidden)."""
    glue_number("ch1-state-T", long_input.shape[1])
    glue_number("ch1-input-floats", long_input.numel())
    glue_number("ch1-state-floats", last_state.numel())


def time_figure(times: pd.DataFrame) -> None:
    """The forward-time figure (`ch1-time-fig-timed`)."""
    glue_figure("ch1-time-fig-timed", plots.plot_forward_times(times))


def timing(times: pd.DataFrame, lengths: list[int]) -> None:
    """The one-thread timing paragraph and the lab note on timing: times at the longest length,
    parameter counts, growth exponents, and the words chosen from them."""
    median_ms = times.pivot(index="length", columns="layer", values="median_s") * 1e3
    parameters = times.groupby("layer")["parameters"].first()
    names = NAMES
    exponent = {}  # growth exponent p in time ~ n^p between the two longest lengths
    for key, layer in names.items():
        glue_number(f"ch1-{key}-ms-long-timed", median_ms.loc[lengths[-1], layer])
        glue_number(f"ch1-{key}-params", parameters[layer])
        ratio = median_ms.loc[lengths[-1], layer] / median_ms.loc[lengths[-2], layer]
        exponent[key] = np.log(ratio) / np.log(lengths[-1] / lengths[-2])
        glue_number(f"ch1-{key}-exponent-timed", exponent[key])
    glue_number("ch1-long-n", lengths[-1])
    glue_number("ch1-mid-n", lengths[-2])
    # Timings are this machine's result: the words below are chosen from them, nothing is checked.
    rank = list(median_ms.loc[lengths[-1]].sort_values(ascending=False).index).index(names["att"])
    glue_text("ch1-att-rank-timed", ("the slowest", "the middle one", "the fastest")[rank])
    steeper = exponent["att"] > max(exponent["rnn"], exponent["lstm"])
    glue_text("ch1-att-growth-timed", "faster than" if steeper else "no faster than")


def gradient_figure(decay: recurrence.GradientDecay,
                    config: recurrence.GradientDecayConfig) -> None:
    """The sizes of the gradient measurement and its figure (`ch1-grad-fig`)."""
    for key, value in (("seeds", config.num_seeds), ("width", config.d_model),
                       ("positions", config.seq_len), ("heads", config.num_heads)):
        glue_number(f"ch1-grad-{key}", value)
    glue_figure("ch1-grad-fig", plots.plot_gradient_decay(decay))


def gradient_decay(decay: recurrence.GradientDecay,
                   config: recurrence.GradientDecayConfig) -> None:
    """The numbers read off the gradient figure: per-step factors, near and far gradients, and
    the spectral radius of the recurrent weights (the same draws as the measurement)."""
    far = config.seq_len - 1
    geometric_mean = lambda norms: np.exp(np.log(norms).mean(axis=0))  # noqa: E731
    rnn_mean, att_mean = geometric_mean(decay.recurrent), geometric_mean(decay.attention)
    glue_number("ch1-grad-far", far)
    for key, norms in (("rnn", decay.recurrent), ("att", decay.attention)):
        glue_number(f"ch1-{key}-factor", recurrence.per_step_factor(norms, decay.distances))
    glue_number("ch1-rnn-near", rnn_mean[1])
    glue_number("ch1-rnn-far", rnn_mean[far])
    glue_number("ch1-att-near", att_mean[1])
    glue_number("ch1-att-far", att_mean[far])
    radii = []
    for seed in range(config.num_seeds):  # the same draws as inside measure_gradient_decay
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            w_hh = ElmanRNN(config.d_model, config.d_model).w_hh.detach()
        radii.append(torch.linalg.eigvals(w_hh).abs().max().item())
    glue_number("ch1-whh-radius", np.mean(radii))


def table1(counted: pd.DataFrame, table_config: complexity.Table1Config) -> None:
    """Table 1.2 (`ch1-table1`): the paper's Table 1 with our counts, one row per layer type."""
    glue_table("ch1-table1", complexity.format_table1(counted, table_config))


def table1_in_words(counted: pd.DataFrame, table_config: complexity.Table1Config) -> None:
    """The counts that "Read in plain words" quotes from Table 1.2, and its claim that
    attention's chain does not grow with n."""
    n = table_config.n
    glue_number("ch1-n", n)
    glue_number("ch1-2n", 2 * n)
    glue_number("ch1-d", table_config.d)
    table_keys = (("att", "self-attention"), ("rnn", "recurrent"), ("lstm", "LSTM"),
                  ("conv", "convolutional"), ("dil", "dilated convolutional"),
                  ("res", "restricted self-attention"))
    for key, kind in table_keys:
        glue_number(f"ch1-{key}-flops", counted.loc[kind, "flops"])
        glue_number(f"ch1-{key}-seq", counted.loc[kind, "sequential_n"])
        glue_number(f"ch1-{key}-seq2", counted.loc[kind, "sequential_2n"])
        glue_number(f"ch1-{key}-path", counted.loc[kind, "path_length"])
        glue_number(f"ch1-{key}-ratio", counted.loc[kind, "flops_per_term"])
    chain_growth = counted["sequential_2n"] - counted["sequential_n"]
    per_step = {kind: chain_growth[kind] / n for kind in ("recurrent", "LSTM")}
    glue_number("ch1-rnn-per-step", per_step["recurrent"])
    glue_number("ch1-lstm-per-step", per_step["LSTM"])
    glue_number("ch1-rnn-over-att", counted.loc["recurrent", "flops"]
                / counted.loc["self-attention", "flops"])
    claim("attention's chain of dependent operations does not grow with n",
          counted.loc["self-attention", "sequential_n"]
          == counted.loc["self-attention", "sequential_2n"],
          at_n=counted.loc["self-attention", "sequential_n"],
          at_2n=counted.loc["self-attention", "sequential_2n"])


def _crossing(cheap_below: pd.Series, other: pd.Series, text: str) -> int:
    """The length where two counts are equal; checks the claim (``text``) that `cheap_below`
    is cheaper below it and dearer above it. Counts are exact: no margin."""
    equal = [n for n in cheap_below.index if cheap_below[n] == other[n]]
    at = equal[0] if equal else 0
    below, above = cheap_below.index < at, cheap_below.index > at
    claim(text, len(equal) == 1 and (cheap_below[below] < other[below]).all()
          and (cheap_below[above] > other[above]).all(), equal_at=equal)
    return int(at)


def flops_by_length(counted: pd.DataFrame, table_config: complexity.Table1Config) -> None:
    """The FLOPs-against-length figure (`ch1-flops-fig`), the lengths where the counts cross,
    and the lab note's claims about them."""
    n = table_config.n
    flop_lengths = [2**i for i in range(4, 13)]  # 16 .. 4096
    flops = complexity.flops_by_length(flop_lengths, d=512)
    glue_figure("ch1-flops-fig", plots.plot_flops_by_length(flops, d=512))

    by_layer = flops.pivot(index="length", columns="layer", values="flops")
    attention_only = by_layer["self-attention (attention only)"]
    full_layer = by_layer["self-attention layer (with projections)"]
    rnn_layer, lstm_layer = by_layer["recurrent (nn.RNN)"], by_layer["recurrent (nn.LSTM)"]
    crossings = (
        _crossing(attention_only, rnn_layer, "the attention operation is cheaper than nn.RNN "
                  "below one length and dearer above it"),
        _crossing(attention_only, lstm_layer, "the attention operation is cheaper than the "
                  "LSTM below one length and dearer above it"),
        _crossing(full_layer, lstm_layer, "the full layer is cheaper than the LSTM below one "
                  "length and dearer above it"))
    glue_number("ch1-cross-att-rnn", crossings[0])
    glue_number("ch1-cross-att-lstm", crossings[1])
    glue_number("ch1-cross-full-lstm", crossings[2])
    glue_number("ch1-mha-flops", full_layer[64])
    glue_number("ch1-proj-share", 100 * (1 - attention_only[64] / full_layer[64]))
    claim("the full layer does more arithmetic than nn.RNN at every length in the figure",
          (full_layer > rnn_layer).all())
    claim("the recurrent curves (one position, times n) equal Table 1's whole-layer counts",
          rnn_layer[n] == counted.loc["recurrent", "flops"]
          and lstm_layer[n] == counted.loc["LSTM", "flops"])
    d_table = 512  # the crossings the prose names: d, 4d and 2d
    claim("the counts cross at n = d, 4d and 2d",
          crossings == (d_table, 4 * d_table, 2 * d_table), crossings=crossings)
    glue_number("ch1-flops-longest", flop_lengths[-1])


def gain_factors(factors: dict[float, float]) -> None:
    """The per-step factor at each recurrent gain, quoted by the solution of Exercise 1.2."""
    for gain, factor in factors.items():
        glue_number(f"ch1-gain-{gain:.0f}-factor", factor)


def dilution(levels: dict[int, float]) -> None:
    """The attention gradient's level at n = 64 and 128, quoted by the solution of
    Exercise 1.3."""
    glue_number("ch1-level-64", levels[64])
    glue_number("ch1-level-128", levels[128])
    glue_number("ch1-level-ratio", levels[64] / levels[128])


def short_threads(best: pd.Series) -> None:
    """The best-case speed-ups at n = 32 (``best``, one per layer) and the words chosen from
    them, quoted by the solution of Exercise 1.4."""
    short_best = best
    for key, layer in NAMES.items():
        glue_number(f"ch1-short-{key}-best-timed", short_best[layer])
    # Timings are this machine's result: the words are chosen from them, nothing is checked.
    recurrent = [NAMES["rnn"], NAMES["lstm"]]
    if (short_best[recurrent] < 1).all():
        words = "lose speed with a second thread on this machine"
    elif (short_best[recurrent] < 1.1).all():
        words = "gain little or nothing on this machine"
    else:
        words = "gain something on this machine"
    glue_text("ch1-short-recurrent-words-timed", words)


def studies() -> None:
    """The table of the stored studies this page reads (`ch1-studies`)."""
    glue_table("ch1-studies", studies_table(1))


def thread_figures(scaling: pd.DataFrame) -> None:
    """The thread figures of the lab note and of the main text (`ch1-threads-fig-timed`,
    `ch1-speedup-fig-timed`)."""
    glue_figure("ch1-threads-fig-timed", plots.plot_thread_scaling(scaling))
    glue_figure("ch1-speedup-fig-timed", plots.plot_parallel_speedup(scaling))


def thread_numbers(scaling: pd.DataFrame, thread_config: threads.ThreadConfig) -> None:
    """The numbers and words of the lab note "A second thread" (also quoted in the main text):
    one and two threads at ``thread_config``'s length, per layer."""
    names = NAMES
    two = scaling[scaling["threads"] == 2].set_index("layer")
    one = scaling[scaling["threads"] == 1].set_index("layer")
    for key, layer in names.items():
        glue_number(f"ch1-{key}-best-timed", two.loc[layer, "best_case_speedup"])
        glue_number(f"ch1-{key}-busiest-timed", two.loc[layer, "cpu_busiest_ms"])
        glue_number(f"ch1-{key}-one-timed", one.loc[layer, "cpu_total_ms"])
        glue_number(f"ch1-{key}-wall-timed", two.loc[layer, "wall_speedup"])
        glue_number(f"ch1-{key}-cpu-growth-timed",
                    two.loc[layer, "cpu_total_ms"] / one.loc[layer, "cpu_total_ms"])
    glue_number("ch1-threads-n", thread_config.length)
    glue_number("ch1-threads-batch", thread_config.batch)
    best, wall = two["best_case_speedup"], two["wall_speedup"]
    recurrent = [names["rnn"], names["lstm"]]
    # Timings are this machine's result (a reader's, when a reader runs the page): nothing here
    # is checked, and the words the prose needs are chosen from the numbers.
    recurrent_best = best[recurrent]
    if (recurrent_best < 1).all():
        words = "get slower even in that best case"
    elif (recurrent_best < best[names["att"]]).all():
        words = "gain less than attention even in that best case"
    elif (recurrent_best >= best[names["att"]]).all():
        words = "gain at least as much as attention in that best case, on this machine"
    else:
        words = ("differ: one gains less than attention in that best case, the other at least "
                 "as much, on this machine")
    glue_text("ch1-recurrent-best-words-timed", words)
    if wall[names["att"]] > wall[recurrent].max():
        words = "On this run attention gained more, or lost less, than either recurrent layer"
    else:
        words = "On this run attention did not gain more than both recurrent layers"
    glue_text("ch1-wall-words-timed", words)


def elman(difference: torch.Tensor) -> None:
    """The lab note's check of our Elman layer against nn.RNN: ``difference`` is the largest
    difference over every state."""
    glue_number("ch1-elman-maxdiff", difference)
    # prose: "float32 rounding". A state is a tanh of sums of 48 float32 products, each rounded
    # at 2^-24 relative (6e-8), and every state is below 1 in size: 1e-5 is far above any
    # rounding of theirs, and far below any difference of the maths.
    claim_float("our Elman layer gives nn.RNN's states to float32 rounding", difference < 1e-5,
                difference=difference)


def paths_checked(checked: list[tuple[str, int]], disagree: list[tuple[str, int]]) -> None:
    """How many path lengths were checked against their closed forms, and how many disagree."""
    glue_number("ch1-paths-checked", len(checked))
    glue_number("ch1-paths-disagree", len(disagree))
