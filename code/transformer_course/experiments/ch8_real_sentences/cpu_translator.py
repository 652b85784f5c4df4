"""Train a Spanish-to-English translator on your own CPU: a recipe spent for CPU minutes.

The stored translator (``stored_models.py``) follows the paper's recipe on a GPU: batches of about
24,000 pieces, a third of its 2,500 steps warming up. That spends tokens the way a GPU has them to
spend; on a laptop's cores the same run needs about ten hours. :data:`CPU` spends them for CPU
time instead, and was chosen on the validation books (the test books took no part):

- the same data, split and 8,000-piece BPE as the stored translator, and its width (d_model 256,
  4 heads, d_ff 1024);
- 2 + 2 layers, no dropout, label smoothing 0.1;
- batches of about 4,000 pieces, so that the model takes six times the steps for its tokens;
- pre-norm (Xiong et al., 2020), so that a warm-up of 4 % of the steps, to 1e-3, is stable
  (post-norm with it learned nothing), then linear decay to 0.

    python -m transformer_course.experiments.ch8_real_sentences.cpu_translator

trains it with a progress bar and prints the validation BLEU at each check (about 40 minutes on
2 cores). ``--store`` also scores the test books at every check, after training, and writes study
``ch8-cpu-translator``; ``python -m bench --only cpu-translation`` does the same and prints it.
"""

from __future__ import annotations

import lzma
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from transformer_course.core.checks import check_instance, check_int, check_number
from transformer_course.core.model import Transformer, TransformerConfig, count_parameters
from transformer_course.core.training import TrainConfig, train
from transformer_course.stored import DataClaim, data_claim, declare

from . import data
from .models import translator_config
from .progress import NoTarget, Progress
from .stored_models import bleu, translate


@dataclass(frozen=True)
class Recipe:
    """The CPU translator and how it trains: Adam (0.9, 0.98, 1e-9) with linear warm-up to
    ``peak_lr``, then linear decay to 0 at the last step."""

    layers: int = 2  # encoder layers, and as many decoder layers
    dropout: float = 0.0
    norm_first: bool = True  # pre-norm
    batch_tokens: int = 4000  # padded pieces per batch (source or target, the longer)
    steps: int = 1440
    warmup: int = 58  # 4 % of the steps
    peak_lr: float = 1e-3
    label_smoothing: float = 0.1
    checks: int = 6  # validation checks, evenly spaced (a check before the first step too)
    check_verses: int = 300  # validation verses (spread through its books) scored at a check
    distilled: bool = False  # learn the stored translator's English (:func:`distill`) instead

    def __post_init__(self) -> None:
        for name in ("layers", "batch_tokens", "steps", "checks", "check_verses"):
            check_int(name, getattr(self, name))
        check_int("warmup", self.warmup, low=0)
        check_number("peak_lr", self.peak_lr, low=0, low_open=True)
        for name in ("dropout", "label_smoothing"):
            check_number(name, getattr(self, name), 0, 1, high_open=True)
        if self.checks > self.steps:
            raise ValueError(f"checks must be at most steps={self.steps}; got {self.checks}")


CPU = Recipe()
DISTILLED = Path(__file__).with_name("distilled.txt.xz")
STUDY = declare(__file__, "ch8-cpu-translator", (8,), "cpu_translator.json",
                "about 40 minutes on 2 cores (2 threads)", args="--store")


@dataclass(frozen=True)
class Check:
    """The translator at one check: steps taken, seconds of training so far (checks excluded),
    pieces read, and greedy sacreBLEU on the checked validation verses."""

    step: int
    seconds: float
    tokens: int
    validation_bleu: float


@dataclass
class Run:
    """A trained CPU translator: the model (eval mode), its checks (step 0 first), the model's
    weights at each check (for scoring afterwards), and the training loss at every step."""

    model: Transformer
    checks: list[Check]
    states: list[dict[str, torch.Tensor]]
    losses: list[float]


def model_config(vocab_size: int, recipe: Recipe) -> TransformerConfig:
    """The stored translator's shape (``models.translator_config``), with the recipe's depth,
    dropout and norm placement."""
    return translator_config(vocab_size, dropout=recipe.dropout, layers=recipe.layers,
                             norm_first=recipe.norm_first)


def train_cpu_translator(recipe: Recipe = CPU, seed: int = 0, *, progress: bool = False,
                         report: Callable[[str], Any] | None = print,
                         device: str = "cpu") -> Run:
    """Train :data:`CPU` (or ``recipe``) on the training books, Spanish to English, with a
    validation check before the first step and ``recipe.checks`` after, each passed to
    ``report`` as a line. ``progress``: a progress bar over the steps."""
    check_instance("recipe", recipe, Recipe)
    check_int("seed", seed, low=0)
    tokenizer = data.load_bpe()
    sets = data.split_by_book(data.load_verses())
    if recipe.distilled:
        sets["train"] = [replace(verse, english=english) for verse, english in zip(
            sets["train"], lzma.decompress(DISTILLED.read_bytes()).decode().splitlines(),
            strict=True)]
    train_pairs = data.pairs(tokenizer, sets["train"], max_tokens=data.MAX_TRAIN_TOKENS)
    checked = data.pairs(tokenizer, sets["validation"]).spread(recipe.check_verses)
    torch.manual_seed(seed)
    model = Transformer(model_config(tokenizer.get_vocab_size(), recipe)).to(device)
    stream = data.pair_batches(train_pairs, recipe.batch_tokens,
                               torch.Generator().manual_seed(seed), device)
    shown = Progress(recipe.steps, progress, report)
    checks: list[Check] = []
    states: list[dict[str, torch.Tensor]] = []
    clock = {"training": 0.0, "since": time.perf_counter()}

    def check(m: nn.Module) -> Any:
        clock["training"] += time.perf_counter() - clock["since"]
        score = bleu(translate(m, checked, tokenizer, device), checked.tgt_text)
        m.train()
        point = Check(len(stream.history), round(clock["training"], 1), stream.tokens, score)
        checks.append(point)
        states.append({k: v.detach().cpu().clone() for k, v in m.state_dict().items()})
        shown.say(f"step {point.step}: {point.seconds / 60:.1f} min of training, "
                  f"{point.tokens / 1e6:.2f} M pieces read, validation BLEU {score:.1f}")
        clock["since"] = time.perf_counter()
        return NoTarget()

    check(model)
    training = TrainConfig(steps=recipe.steps, warmup=recipe.warmup, peak_lr=recipe.peak_lr,
                           decay="linear", label_smoothing=recipe.label_smoothing, seed=seed,
                           eval_every=recipe.steps // recipe.checks, target_accuracy=None)
    result = train(model, shown.over(stream), training, check=check)  # the Transformer's own loss
    shown.close()
    model.eval()
    return Run(model, checks, states, result.losses)


def bleu_on_test_books(run: Run, device: str = "cpu",
                        limit: int | None = None) -> list[float]:
    """Greedy sacreBLEU on the test books (``limit`` verses spread through them; all if None)
    of the model at each of ``run``'s checks."""
    tokenizer = data.load_bpe()
    test = data.pairs(tokenizer, data.split_by_book(data.load_verses())["test"]).spread(limit)
    model = Transformer(run.model.config).to(device)
    out = []
    for state in run.states:
        model.load_state_dict(state)
        out.append(bleu(translate(model, test, tokenizer, device), test.tgt_text))
    return out


def distill(device: str = "cpu", path: Path = DISTILLED) -> None:
    """The stored translator's English for every training verse (beam 4, length penalty 0.6),
    one line each, in the training books' order: sequence-level distillation's targets
    (Kim and Rush, 2016)."""
    from .analysis import translator

    tokenizer = data.load_bpe()
    train_pairs = data.pairs(tokenizer, data.split_by_book(data.load_verses())["train"])
    model = translator().to(device)
    english = translate(model, train_pairs, tokenizer, device, beam=4, alpha=0.6)
    path.write_bytes(lzma.compress("\n".join(english).encode() + b"\n"))


def study(recipe: Recipe = CPU, seed: int = 0, *, test_limit: int | None = None,
          progress: bool = False) -> dict[str, Any]:
    """Train ``recipe`` on this machine (torch's threads as set), then score the test books
    (``test_limit`` verses; all if None) at every check: the record study ``ch8-cpu-translator``
    stores and ``python -m bench --only cpu-translation`` prints."""
    start = time.perf_counter()
    run = train_cpu_translator(recipe, seed, progress=progress)
    test = bleu_on_test_books(run, limit=test_limit)
    return {"recipe": asdict(recipe), "seed": seed, "threads": torch.get_num_threads(),
            "parameters": count_parameters(run.model),
            "seconds": round(time.perf_counter() - start, 1),
            "checks": [{**asdict(check), "test_bleu": bleu}
                       for check, bleu in zip(run.checks, test, strict=True)],
            "losses": run.losses[::max(recipe.steps // 100, 1)]}


def stored() -> dict[str, Any]:
    """Study ch8-cpu-translator: :data:`CPU`'s run on the course's 2-core machine (its checks
    with test BLEU); under ``"choice"`` the runs the recipe was chosen by, and under
    ``"shorter"`` the first CPU run, of 1,200 steps."""
    return STUDY.load()


def choice_runs(study: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The study's choice runs by their letter ("A" the starting point)."""
    return {row["run"]: row for row in study["choice"]["runs"]}


def post_norm_bleu(study: dict[str, Any]) -> float:
    """Validation BLEU of the choice run that differs from the starting point in post-norm."""
    return choice_runs(study)["K"]["validation_bleu"]


def seed_spread(study: dict[str, Any]) -> float:
    """The larger gap between two seeds of one choice run (A and L; H and M)."""
    bleu = {name: row["validation_bleu"] for name, row in choice_runs(study).items()}
    return max(abs(bleu["A"] - bleu["L"]), abs(bleu["H"] - bleu["M"]))


def choice_table(study: dict[str, Any]) -> Any:
    """The choice runs as a table: what each changed, its steps, tokens and validation BLEU."""
    import pandas as pd

    return pd.DataFrame([{
        "run": row["run"], "changed from run A": row["changes"], "seed": row["seed"],
        "steps": f"{row['recipe']['steps']:,}", "tokens (M)": f"{row['tokens'] / 1e6:.1f}",
        "validation BLEU": f"{row['validation_bleu']:.1f}"} for row in study["choice"]["runs"]])


def data_claims() -> list[DataClaim]:
    """What chapter 8 says about study ch8-cpu-translator, checked on its data (and on the
    stored GPU translator's record, study ch8-stored-models, which the figure sets beside it)."""
    from .analysis import stored as stored_models

    study = stored()
    runs = choice_runs(study)
    bleu = {name: row["validation_bleu"] for name, row in runs.items()}
    spread = seed_spread(study)
    last = study["checks"][-1]
    gpu = stored_models()
    first = gpu["translator"]["curve"][0]
    gpu_bleu = gpu["scores"]["test_greedy"]["bleu"]
    return [
        data_claim("the CPU run reached at least 15 test BLEU within 45 minutes of training",
                   last["seconds"] <= 45 * 60 and last["test_bleu"] >= 15,
                   minutes=last["seconds"] / 60, bleu=last["test_bleu"]),
        data_claim("the run is the recipe as the package states it",
                   study["recipe"] == asdict(CPU), recipe=study["recipe"]),
        data_claim("post-norm with the short warm-up learned nothing (validation BLEU under 1)",
                   bleu["K"] < 1, post_norm=bleu["K"]),
        data_claim("the GPU run's first check, past every token the CPU run read, scored under 1",
                   first["tokens"] > last["tokens"] and first["test_bleu"] < 1,
                   gpu_tokens=first["tokens"], cpu_tokens=last["tokens"]),
        data_claim("the big run ends higher", gpu_bleu > last["test_bleu"], gpu=gpu_bleu,
                   cpu=last["test_bleu"]),
        data_claim("smaller batches helped and bigger ones hurt, at the same tokens, each by "
                   "more than the seeds' spread", bleu["D"] - spread > bleu["A"]
                   > bleu["E"] + spread, spread=spread, **{k: bleu[k] for k in "ADE"}),
        data_claim("without dropout it did better, by more than the seeds' spread",
                   bleu["F"] - spread > bleu["A"], spread=spread, **{k: bleu[k] for k in "AF"}),
        data_claim("1e-3 did best of the rates tried, its lead over 2e-3 within the spread",
                   bleu["A"] > max(bleu[k] for k in "BCN") and bleu["A"] - bleu["B"] < spread,
                   spread=spread, **{k: bleu[k] for k in "ABCN"}),
        data_claim("the first CPU run, 1,200 steps of the same recipe, ended lower",
                   study["shorter"]["recipe"]["steps"] == 1200
                   and study["shorter"]["checks"][-1]["test_bleu"] < last["test_bleu"],
                   shorter=study["shorter"]["checks"][-1]["test_bleu"], run=last["test_bleu"]),
        data_claim("the 2 + 2-layer runs were given more steps than the others",
                   all(runs[k]["recipe"]["steps"] > runs["A"]["recipe"]["steps"]
                       for k in "GPQ"), steps={k: runs[k]["recipe"]["steps"] for k in "AGPQ"}),
        data_claim("distilled targets helped, on both seeds",
                   bleu["H"] > bleu["A"] and bleu["M"] > bleu["L"],
                   **{k: bleu[k] for k in "AHLM"}),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    """Train :data:`CPU` here, with a progress bar; ``--store``: as study ch8-cpu-translator,
    the test books scored at every check after training."""
    import argparse
    import json
    import sys

    from transformer_course.stored import record_environment

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", action="store_true", help=f"write {STUDY.path.name}")
    args = parser.parse_args(argv)
    if not args.store:
        run = train_cpu_translator(CPU, args.seed, progress=True)
        print(f"trained in {run.checks[-1].seconds / 60:.1f} min; validation BLEU "
              f"{run.checks[-1].validation_bleu:.1f}")
        return
    record = study(CPU, args.seed, progress=True)
    STUDY.path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {STUDY.path} and {record_environment(STUDY.path).name}", file=sys.stderr)


if __name__ == "__main__":
    main()
