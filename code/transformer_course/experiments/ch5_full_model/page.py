"""What chapter 5's page (the full model) glues and checks: the numbers, tables and figures its
prose quotes, and the claims it makes of them.

The chapter computes in the cells a reader sees and calls these functions from its hidden cells,
one call where each hidden cell stood, so the bookkeeping behind the prose is package code that
ruff lints and a student's notebook does not show.
"""

from __future__ import annotations

import pandas as pd
import torch

from transformer_course import calibration
from transformer_course.claims import claim, claim_float, claim_trained
from transformer_course.core.model import Transformer
from transformer_course.experiments.ch5_full_model import norm_warmup
from transformer_course.experiments.ch5_full_model.norm_placement import (
    DepthConfig,
    gradient_growth,
)
from transformer_course.experiments.ch5_full_model.residual_path import ResidualProbe
from transformer_course.experiments.ch7_translation.recipe import RECIPE as CH7_RECIPE
from transformer_course.figures import ch5_full_model as model_plots
from transformer_course.figures.architecture import plot_architecture
from transformer_course.notebook import glue_figure, glue_number, glue_table, glue_text
from transformer_course.paper import TABLE3
from transformer_course.stored import studies_table


def chapter_map() -> None:
    """The opening figure (fig-ch5-map): the architecture, this chapter's parts highlighted."""
    here = "Add & Norm and the feed-forward; then all of it assembled"
    glue_figure("ch5-map", plot_architecture(highlight=["add_norm", "feed_forward"], here=here))


def residual_reach(gradients: pd.DataFrame, probe: ResidualProbe, reach: pd.DataFrame) -> None:
    """The residual-gradient figure (fig-ch5-residual-grad), its table (tbl-ch5-reach) and the
    paragraph after them: the first layer's share of the last layer's gradient, with and
    without the residual additions.

    Args:
        gradients: one row per seed, norm placement, residual switch and layer.
        reach: the first layer's gradient / the last layer's, rows (norm, residual), one column
            per seed.
    """
    glue_figure("ch5-residual-grad", model_plots.plot_residual_gradients(
        gradients[gradients["seed"] == 0]))
    glue_number("ch5-res-layers", probe.num_layers)
    glue_number("ch5-res-width", probe.d_model)
    median = reach.median(axis=1)
    for (norm, residual), value in median.items():
        glue_number(f"ch5-reach-{norm}-{residual}", value)
    glue_number("ch5-reach-without-max", reach.xs("without", level="residual").max().max())
    glue_number("ch5-reach-with-min", reach.xs("with", level="residual").min().min())
    shown = reach.map("{:.3f}".format).reset_index()
    shown.columns = ["layers", "residual"] + [f"seed {s}" for s in reach.columns]
    shown["median"] = median.map("{:.3f}".format).to_numpy()
    glue_table("ch5-reach", shown)
    # prose: "with them the first layer keeps" a far larger share, every seed and placement, and
    # "never more than" (glued) without them. No training: seeded weights (the generator's draws
    # are the same on any CPU) and one backward pass. Rounding moves each gradient norm by
    # float32's 2^-24 times the depth (24 layers) times the sums' lengths (at most 128 terms),
    # well under 1e-3 relative, and so does a one-ulp move of every weight; the ratios sit 5x
    # apart and the largest "without" well below 0.1, so neither claim is near a rounding error.
    with_, without = reach.xs("with", level="residual"), reach.xs("without", level="residual")
    claim_float("with residuals the first layer keeps a far larger share of the gradient (4x), "
                "every seed and placement", (with_ > 4 * without).all().all(),
                smallest_with=with_.min().min(), largest_without=without.max().max())
    claim_float("without residuals, never more than 0.1 of the last layer's gradient",
                without.max().max() < 0.1, largest_without=without.max().max())


def layer_norm(summed: torch.Tensor, norm: torch.nn.LayerNorm, gap: float) -> None:
    """The LayerNorm figure (fig-ch5-layer-norm) and the paragraph after it: one token's features
    before and after the first LayerNorm, and the formula against ``nn.LayerNorm``.

    Args:
        summed: (B, S, d_model), what the first encoder sub-layer hands to its LayerNorm.
        gap: the largest difference between the formula and ``norm``.
    """
    token = 2  # the third source token of the first sentence
    before = pd.Series(summed[0, token].detach().numpy())
    after = pd.Series(norm(summed)[0, token].detach().numpy())
    glue_figure("ch5-layer-norm", model_plots.plot_layer_norm(before, after))
    glue_number("ch5-ln-mean-before", before.mean())
    glue_number("ch5-ln-std-before", before.std(ddof=0))
    glue_number("ch5-ln-mean-after", round(after.mean(), 6) + 0.0)  # no "-0.00"
    glue_number("ch5-ln-std-after", after.std(ddof=0))
    # prose: "leave with mean 0.00 and standard deviation 1.00". An identity up to rounding: 64
    # outputs of size at most about 4, each within a few float32 ulps (2^-24 relative), give a
    # mean within about 1e-6 of 0; the standard deviation is 1 / sqrt(1 + eps / var)
    # (eps = 1e-5), within 1e-5 of 1, plus rounding.
    claim_float("after LayerNorm: mean 0 and standard deviation 1 (to rounding)",
                abs(after.mean()) < 1e-5 and abs(after.std(ddof=0) - 1) < 1e-3,
                mean=after.mean(), std=after.std(ddof=0))
    # prose: the features "had" another scale. No training: the input's spread is set by seeded
    # weights (the same draws on any CPU); rounding moves it by about 1e-6, the claim asks it to
    # be more than 0.1 from 1.
    claim_float("the token's features change scale in LayerNorm",
                abs(before.std(ddof=0) - 1) > 0.1, std_before=before.std(ddof=0))
    # prose: the formula against nn.LayerNorm, "rounding". Two orders of the same float32 sums of
    # 64 terms, on values of size at most about 4 (an ulp there is 5e-7): a few ulps apart,
    # within 1e-5.
    claim_float("the formula matches nn.LayerNorm to rounding", gap < 1e-5,
                largest_difference=gap)


def position_wise(moved: torch.Tensor) -> None:
    """The feed-forward network's intervention: only the perturbed position moves.

    Args:
        moved: (S,), the largest change of each position's output.
    """
    # An identity: each position is computed on its own, so the others' outputs are unchanged
    # to the bit on any CPU.
    claim("only the perturbed position's output moves",
          moved[3] > 0 and (moved[torch.arange(6) != 3] == 0).all(), moved=moved.detach())


def feed_forward_share(ffns: list[torch.nn.Module], in_ffn: int, layer_share: float,
                       model_share: float) -> None:
    """The paragraph on the feed-forward networks' share of the base model's parameters."""
    glue_number("ch5-ffn-count", len(ffns))
    glue_number("ch5-ffn-params-m", in_ffn / 1e6)
    glue_number("ch5-ffn-layer-pct", 100 * layer_share)
    glue_number("ch5-ffn-model-pct", 100 * model_share)


def residual_stream() -> None:
    """The residual-stream figure (fig-ch5-stream): one encoder layer, one lane per position."""
    glue_figure("ch5-stream", model_plots.plot_residual_stream(positions=4))


def shared_saving(saving: int, untied: int) -> None:
    """The sentence on what sharing one matrix saves at base size."""
    glue_number("ch5-shared-saving", saving)
    glue_number("ch5-shared-saving-pct", 100 * saving / untied)


def parameter_counts(counts: pd.DataFrame, V: int) -> None:
    """The parameter counts against Table 3: the table (tbl-ch5-params), the paragraph after the
    count and the lab note on the remainder.

    Args:
        counts: one row per model ("base", "big"), the hidden cell's columns of counts.
        V: the shared vocabulary's size.
    """
    for name, row in counts.iterrows():
        glue_number(f"ch5-paper-{name}-m", TABLE3[name].params_millions)
        glue_number(f"ch5-params-{name}-err", row["difference (%)"])
        glue_number(f"ch5-params-{name}-gap", abs(row["Table 3"] - row["total (ours)"]))
        glue_number(f"ch5-v-{name}", row["V that would match"])
    base_row = counts.loc["base"]
    glue_number("ch5-base-encoder-m", base_row["encoder"] / 1e6)
    glue_number("ch5-base-embedding-m", base_row["embedding (shared)"] / 1e6)
    millions = {"embedding (shared)": "embedding (M)", "encoder": "encoder (M)",
                "decoder": "decoder (M)", "total (ours)": "ours (M)",
                "Table 3": "Table 3 (M)"}
    shown = pd.DataFrame({"model": counts.index})
    for column, header in millions.items():
        shown[header] = [f"{n / 1e6:.2f}" for n in counts[column]]
    shown["Table 3 (M)"] = [f"{n / 1e6:.0f}" for n in counts["Table 3"]]
    shown["off by (%)"] = [f"{x:+.1f}" for x in counts["difference (%)"]]
    shown["V to match"] = [f"{v:,.0f}" for v in counts["V that would match"]]
    glue_table("ch5-params", shown)
    # Counts, exact on any CPU. The prose: base below the paper's count, big above; so the
    # base row needs more than 37,000 tokens and the big row fewer: no single V explains both.
    differences = counts["difference (%)"]
    claim("base below the paper's count, big above",
          differences["base"] < 0 < differences["big"], differences=differences.to_dict())
    V_needed = counts["V that would match"]
    claim("no single V explains both rows", V_needed["big"] < V < V_needed["base"],
          V_needed=V_needed.to_dict())
    claim("the base encoder about as large as the shared embedding (within 5%)",
          abs(base_row["encoder"] / base_row["embedding (shared)"] - 1) < 0.05,
          encoder=base_row["encoder"], embedding=base_row["embedding (shared)"])


def depth_profile(depth: pd.DataFrame, depth_config: DepthConfig) -> None:
    """The post-norm/pre-norm probe: its two figures (fig-ch5-depth-grad, fig-ch5-depth-hidden)
    and the paragraphs under them.

    Args:
        depth: ``layer_profile``'s rows for both placements.
    """
    deepest = depth_config.num_layers
    glue_number("ch5-depth-layers", deepest)
    glue_number("ch5-depth-width", depth_config.d_model)
    for norm, tag in (("post-norm", "post"), ("pre-norm", "pre")):
        profile = depth[depth["norm"] == norm]
        glue_number(f"ch5-{tag}-dec-grad-ratio",
                    gradient_growth(profile, "decoder"))
        top = profile[(profile["stack"] == "encoder")
                      & (profile["layer"] == deepest)]
        glue_number(f"ch5-{tag}-enc-hidden", top["hidden RMS"].item())
    glue_figure("ch5-depth-grad", model_plots.plot_depth_profile(
        depth, "gradient norm", "parameter gradient norm"))
    glue_figure("ch5-depth-hidden", model_plots.plot_depth_profile(
        depth, "hidden RMS", "RMS of layer output"))


def warmup_study(warm_runs: pd.DataFrame, warm_table: pd.DataFrame) -> norm_warmup.Findings:
    """The stored warm-up study (tbl-ch5-warm) and the paragraphs around it; returns its
    findings, which the lab note's re-run sets beside."""
    study = norm_warmup.StudyConfig()
    rates = sorted(norm_warmup.PEAK_LRS)
    glue_table("ch5-warm", warm_table)
    glue_number("ch5-warm-layers", study.num_layers)
    glue_number("ch5-warm-width", study.d_model)
    glue_number("ch5-warm-steps", study.steps)
    glue_number("ch5-warm-warmup", round(study.warmup_fraction * study.steps))
    glue_number("ch5-warm-runs", len(warm_runs))
    glue_number("ch5-warm-num-rates", len(rates))
    glue_number("ch5-warm-lr-min", rates[0])
    glue_number("ch5-warm-lr-max", rates[-1])
    glue_number("ch5-warm-prefix", norm_warmup.PREFIX)
    claim("seeds 3-5 choose the rates and seeds 0-2 are compared",
          norm_warmup.SELECTION_SEEDS == (3, 4, 5) and norm_warmup.SEEDS == (0, 1, 2))
    claim("chapter 7's recipe peaks at 0.003", CH7_RECIPE.peak_lr == 3e-3,
          peak_lr=CH7_RECIPE.peak_lr)
    pre, pre_warm, warm, cold = (v.name for v in norm_warmup.VARIANTS)
    claim("the variants are pre-norm without and with warm-up, then post-norm with and without",
          [(v.norm_first, v.warmup) for v in norm_warmup.VARIANTS]
          == [(True, False), (True, True), (False, True), (False, False)])
    # What the prose below says of the stored study (every chosen rate inside the grid,
    # pre-norm learning in every seed, post-norm behind, the rates that fail) is checked on its
    # data, in the tests and whenever it is regenerated: norm_warmup.data_claims, from the same
    # findings.
    found = norm_warmup.findings(warm_runs)
    glue_number("ch5-warm-pre-worst", min(found.worst[pre], found.worst[pre_warm]))
    glue_number("ch5-warm-post-best", found.best[warm])
    glue_number("ch5-warm-cold-best", found.best[cold])
    glue_number("ch5-warm-cold-loss", found.loss[cold])
    glue_number("ch5-warm-warm-loss", found.loss[warm])
    glue_number("ch5-warm-pre-fails", found.fails_from(pre))
    glue_number("ch5-warm-cold-fails", found.fails_from(cold))
    return found


def decoding_figure() -> None:
    """The decoding figure (fig-ch5-decoding): the greedy loop and its key-value cache."""
    glue_figure("ch5-decoding", model_plots.plot_decoding_cache(steps=4))


def cached_decoding(model: Transformer, src: torch.Tensor, src_mask: torch.Tensor,
                    output: torch.Tensor, uncached: torch.Tensor) -> None:
    """The sentence after the decoding cell: cached and uncached decoding give the same tokens.

    Args:
        src: (B, S) source ids; src_mask: (B, 1, S).
        output, uncached: (B, L) greedy outputs with and without the cache.
    """
    # prose: both ways give "the same tokens unless two scores tie to rounding". The cache only
    # reorders float32 sums (at most 256 terms, logits of size a few units): the two ways'
    # logits differ by about 1e-6, and an argmax can change only where the chosen token leads
    # the runner-up by less. The claim asks every step's lead (on the uncached logits) to exceed
    # 1e-3 as well, so equality here is not luck near a tie, on this CPU or any other.
    with torch.no_grad():
        logits = model.project(model.decode(uncached[:, :-1], model.encode(src, src_mask),
                                            src_mask))  # (B, steps, V): each step's scores
    top_two = logits.topk(2, dim=-1).values
    lead = (top_two[..., 0] - top_two[..., 1]).min().item()
    claim_float("cached and uncached decoding give identical outputs, far from a tie",
                torch.equal(uncached, output) and lead > 1e-3, cached=output, uncached=uncached,
                smallest_lead=lead)


def seed_ratios(seeds: pd.DataFrame) -> None:
    """The answer to the exercise on seeds and depths: the range of each ratio.

    Args:
        seeds: rows (layers, seed), columns "post-norm" and "pre-norm".
    """
    for layers in (12, 24):
        post_norm = seeds.loc[layers, "post-norm"]
        glue_number(f"ch5-seeds-post{layers}-min", post_norm.min())
        glue_number(f"ch5-seeds-post{layers}-max", post_norm.max())
    glue_number("ch5-seeds-pre-min", seeds["pre-norm"].min())
    glue_number("ch5-seeds-pre-max", seeds["pre-norm"].max())


def scale_table(scales: pd.DataFrame, V: int) -> None:
    """The lab note on one scale for the inputs and the logits: its table (tbl-ch5-scales) and
    the paragraph after it.

    Args:
        scales: ``embedding_scales``' rows, one per vocabulary size and initialisation.
        V: the paper's shared vocabulary's size.
    """
    shown = scales.assign(init=scales["init"].map(
        {"xavier": "Xavier-uniform (ours)", "normal": "N(0, 1 / d_model)"}))
    measured = ["embedding RMS", "encoding RMS", "logit std"]
    shown[measured] = shown[measured].map("{:.3f}".format)
    shown["V"] = shown["V"].map("{:,}".format)
    glue_table("ch5-scales", shown.drop(columns="hidden RMS").rename(columns={
        "embedding RMS": "RMS of √d_model E (inputs)", "encoding RMS": "RMS of PE",
        "logit std": "std of logits (outputs)"}))
    by = scales.set_index(["V", "init"])
    for vocab in (13, V):
        glue_number(f"ch5-scale-xavier-{vocab}", by.loc[(vocab, "xavier"), "embedding RMS"])
    glue_number("ch5-pe-rms", by["encoding RMS"].iloc[0])
    normal = by.xs("normal", level="init")
    glue_number("ch5-scale-normal-min", normal[["embedding RMS", "logit std"]].min().min())
    glue_number("ch5-scale-normal-max", normal[["embedding RMS", "logit std"]].max().max())
    # prose: "the two sides agree to within a third in every row"; with N(0, 1/d) "both stay
    # between" (glued) about 1; Xavier's "follow the vocabulary", above the encoding at 13
    # tokens, far below it at 37,000. No training: seeded initialisations (the generator's draws
    # are the same on any CPU) and one forward pass; each RMS or std is a mean over thousands of
    # float32 values, which rounding (or a one-ulp move of every weight) changes by about 1e-6
    # relative, while every bound below lies at least 0.03 from its value.
    ratio = scales["logit std"] / scales["embedding RMS"]
    claim_float("the two sides agree to within a third in every row (ratio 0.75-1.33)",
                ratio.between(0.75, 1.33).all(), ratio=ratio.to_numpy())
    normal_values = normal[["embedding RMS", "logit std"]].stack()
    claim_float("with N(0, 1/d_model) both stay about 1 at every size (0.75-1.25)",
                normal_values.between(0.75, 1.25).all(), values=normal_values.to_numpy())
    xavier = by.xs("xavier", level="init")["embedding RMS"]
    claim_float("Xavier: above the encoding at 13 tokens, far below it (4x) at 37,000",
                xavier[13] > by["encoding RMS"].iloc[0] > 4 * xavier[V],
                xavier_13=xavier[13], encoding=by["encoding RMS"].iloc[0],
                xavier_37000=xavier[V])


def torch_match(results: pd.DataFrame) -> None:
    """The comparison with ``torch.nn.Transformer``: its table (tbl-ch5-torch-diffs) and the
    largest differences the chapter quotes.

    Args:
        results: one row per placement, PyTorch path and dtype, the largest encoder and decoder
            differences.
    """
    for dtype in ("float32", "float64"):
        glue_number(f"ch5-torch-max-{dtype}", results.loc[results["dtype"] == dtype,
                                                          ["encoder", "decoder"]].max().max())
    wide = results.pivot(index=["layers", "PyTorch path"], columns="dtype",
                         values=["encoder", "decoder"])
    wide.columns = [f"{part}, {dtype}" for part, dtype in wide.columns]
    glue_table("ch5-torch-diffs", wide.map(lambda v: f"{v:.1e}").reset_index())
    # prose: "rounding, not a different computation" (the test suite's tolerances). The same
    # operations in other orders, through 2 + 2 layers whose sums have at most 256 terms, on
    # LayerNorm-ed outputs of size at most about 4: a few ulps there, float32 5e-7 and float64
    # 9e-16 each, far inside 1e-5 and 1e-10; a different computation would differ by the
    # outputs' size.
    largest = results.groupby("dtype")[["encoder", "decoder"]].max().max(axis=1)
    claim_float("our model matches nn.Transformer to rounding (1e-5 in float32, 1e-10 in "
                "float64)", largest["float32"] < 1e-5 and largest["float64"] < 1e-10,
                largest=largest.to_dict())


def replay(variant: norm_warmup.Variant, peak_lr: float, seed: int, replayed: float,
           found: norm_warmup.Findings) -> None:
    """The lab note's re-run of one stored warm-up run's first steps: the paragraph after it,
    this run's loss beside its calibrated draws and the stored run's."""
    low, high = norm_warmup.REPLAY_BOUNDS
    glue_text("ch5-warm-replay-variant", variant.name)
    glue_number("ch5-warm-replay-lr", peak_lr)
    glue_number("ch5-warm-replay-seed", seed)
    glue_number("ch5-warm-replay-live", replayed)
    glue_number("ch5-warm-replay-stored", found.replayed_loss)
    glue_number("ch5-warm-replay-low", low)
    glue_number("ch5-warm-replay-high", high)
    # prose: "the claim is that it lies between" low and high: a trained number, this run's
    # draw, whose bounds contain every calibrated draw (study calibration) with room; the stored
    # run's value is shown beside it, not compared with it (the study's data claims check it).
    claim_trained("ch5-warm-replay-loss", f"re-run, the training loss at step "
                  f"{norm_warmup.PREFIX} lies between {low} and {high}", replayed, low=low,
                  high=high, stored=found.replayed_loss)
    drawn = calibration.beside("ch5-warm-replay-loss", replayed)
    lowest, highest = (f"{v:.4f}" for v in drawn.span())
    glue_number("ch5-warm-replay-runs", len(drawn.values))
    glue_text("ch5-warm-replay-drawn", f"was {lowest} in every one" if lowest == highest
              else f"lay between {lowest} and {highest}")


def stored_studies() -> None:
    """The lab note's table of the stored studies this page reads (tbl-ch5-stored-studies)."""
    glue_table("ch5-stored-studies", studies_table(5))


def trace_table(trace: pd.DataFrame, shown: pd.DataFrame) -> None:
    """The lab note's shape trace (tbl-ch5-trace) and its number of rows.

    Args:
        trace: every call ``shape_trace`` recorded; shown: the rows the table keeps.
    """
    glue_number("ch5-trace-rows", len(trace))
    # Keep each shape on one line (a non-breaking space after its commas).
    glue_table("ch5-trace", pd.DataFrame({
        "module": [f"`{name}`" for name in shown["module"]],
        **{column: shown[column].str.replace(r"(\d), ", "\\1,\u00a0", regex=True)
           for column in ("input shapes", "output shape")}}))
