"""Train the chapter's stored models and score them: the study ``ch8-stored-models``.

Three parts, each its own process so that they can share one machine (a GPU is mostly idle with
models this small, so they run side by side on one). The stored study was made on one H100 with
(``M=transformer_course.experiments.ch8_real_sentences.stored_models``)::

    python -m $M translator --device cuda --dropout 0.1 --out r/d01 --steps 2500 \\
        --batch-tokens 24000 --checks 8 --eval-limit 300 &
    python -m $M translator --device cuda --dropout 0.3 --out r/d03 --steps 2500 \\
        --batch-tokens 24000 --checks 8 --eval-limit 300 &
    python -m $M writer --device cuda --out r/w --steps 5000 --batch-tokens 12000 --checks 10 &
    wait
    python -m $M translator --device cuda --dropout 0.1 --seed 1 --out r/d01s1 --steps 2500 \\
        --batch-tokens 24000 --checks 1 --eval-limit 100   # and --dropout 0.3 into r/d03s1
    python -m $M select r/d01 r/d03 --writer r/w --replicates r/d01s1 r/d03s1 --device cuda

On a CPU leave out ``--device cuda``: one translator's 2,500 steps (107 million tokens) then take
about 10 hours on 2 cores, at about 3,000 tokens a second.

``select`` keeps the translator with the higher validation BLEU (the test books play no part in
the choice) and writes the stored files beside this module: ``translator.bin``, ``writer.bin``
(weights, ``weights.py``) and ``stored_models.json`` (scores, curves, outputs, samples), with its
environment record. The BPE (``bpe.json``) is learned first, on the training books, by whichever
part runs first.

The translator follows the paper's recipe (section 5): Adam (0.9, 0.98, 1e-9), the warm-up
schedule (the paper warms up for 4,000 steps; a run of fewer than 12,000 steps warms up for a
third of them, to the paper's peak rate, and decays as the paper does), label smoothing 0.1,
dropout on every sub-layer and on the embeddings, batches of about ``--batch-tokens`` tokens of
similar lengths, the average of the last five checkpoints, and beam search of width 4 with length
penalty 0.6 (section 6.1).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path
from typing import Any

import sacrebleu
import torch
from torch import nn

from transformer_course.core.batching import pad_sequences, wrap_sources
from transformer_course.core.decoding import beam_search, greedy_decode
from transformer_course.core.model import Transformer, count_parameters
from transformer_course.core.training import TrainConfig, evaluate, teacher_forced_loss, train
from transformer_course.stored import (
    DataClaim,
    check_data_claims,
    data_claim,
    declare,
    load,
    record_environment,
)

from . import data, weights
from .models import DecoderOnly, sample, translator_config, writer_config
from .progress import NoTarget

HERE = Path(__file__).parent
STUDY = declare(__file__, "ch8-stored-models", (8,), "stored_models.json",
                "about 4 GPU-minutes (H100); about 10 hours on a 2-core CPU",
                args="{translator,writer,select} (its docstring)",
                companions=("bpe.json", "translator.bin", "writer.bin"))
WARMUP = 4000
BEAM, ALPHA = 4, 0.6
EVAL_BATCH = 256
OUTPUT_EXTRA = 10  # pieces an output may run past 1.5 times its source
SAMPLE_PROMPTS = ("", "In the beginning", "Jesus said to them,")
SAMPLE_SETTINGS = ((0.7, 40), (1.0, 40))  # (temperature, top-k)


def bpe() -> Any:
    """The stored BPE, learned on the training books' English and Spanish if not there yet."""
    if not data.BPE.exists():
        train_set = data.split_by_book(data.load_verses())["train"]
        tokenizer = data.train_bpe([v.english for v in train_set] + [v.spanish for v in train_set])
        tokenizer.save(str(data.BPE))
    return data.load_bpe()


def autocast(device: str) -> Any:
    """bfloat16 matrix products on a GPU; nothing on a CPU (float32 throughout)."""
    return torch.autocast("cuda", torch.bfloat16, enabled=device.startswith("cuda"))


@torch.no_grad()
def output_limit(source_length: int, max_len: int) -> int:
    """The longest output, BOS included, for a source of ``source_length`` (BOS and EOS
    included): half as long again plus 10, at most the model's ``max_len``."""
    return min(int(source_length * 1.5) + OUTPUT_EXTRA, max_len)


def translate(model: Transformer, pairs: data.Pairs, tokenizer: Any, device: str,
              beam: int = 1, alpha: float = 0.0) -> list[str]:
    """English for every source of ``pairs``: greedy, or a beam of ``beam`` (in float32: the
    decoder's cache holds float32 keys and values)."""
    model.eval()
    rows = sorted(range(len(pairs)), key=lambda i: len(pairs.src[i]))
    out: dict[int, str] = {}
    for start in range(0, len(rows), EVAL_BATCH // beam):
        chunk = rows[start:start + EVAL_BATCH // beam]
        batch = pairs.batch(chunk, device)
        max_len = output_limit(batch.src.shape[1], model.config.max_len)
        if beam == 1:
            ids = greedy_decode(model, batch.src, max_len, 1, 2, src_mask=batch.src_mask,
                                pad_id=0)
        else:
            ids = beam_search(model, batch.src, max_len, 1, 2, beam_size=beam, alpha=alpha,
                              src_mask=batch.src_mask, pad_id=0)
        out.update((i, data.decode(tokenizer, row)) for i, row in zip(chunk, ids.cpu(),
                                                                       strict=True))
    return [out[i] for i in range(len(pairs))]


def scores(hypotheses: list[str], references: list[str]) -> dict[str, Any]:
    """sacreBLEU's BLEU and chrF (default settings) with their signatures."""
    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    refs = [list(references)]
    return {"bleu": bleu.corpus_score(hypotheses, refs).score,
            "chrf": chrf.corpus_score(hypotheses, refs).score,
            "bleu_signature": str(bleu.get_signature()),
            "chrf_signature": str(chrf.get_signature())}


def bleu(hypotheses: list[str], references: list[str]) -> float:
    """sacreBLEU's BLEU alone, as :func:`scores` computes it."""
    return sacrebleu.metrics.BLEU().corpus_score(hypotheses, [list(references)]).score


def average(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The mean of checkpoints (the paper's last-five average)."""
    return {name: sum(s[name].float() for s in states) / len(states) for name in states[0]}


def run_translator(args: argparse.Namespace) -> None:
    """Train one translator; write its checkpoint and record into ``args.out``."""
    torch.manual_seed(args.seed)
    tokenizer, device = bpe(), args.device
    sets = data.split_by_book(data.load_verses())
    train_pairs = data.pairs(tokenizer, sets["train"], max_tokens=data.MAX_TRAIN_TOKENS)
    held = {name: data.pairs(tokenizer, sets[name]) for name in ("validation", "test")}
    config = translator_config(tokenizer.get_vocab_size(), dropout=args.dropout)
    model = Transformer(config).to(device)
    stream = data.pair_batches(train_pairs, args.batch_tokens,
                               torch.Generator().manual_seed(args.seed), device)

    def loss_fn(m: nn.Module, batch: Any, cfg: TrainConfig) -> torch.Tensor:
        with autocast(device):
            return teacher_forced_loss(m, batch, cfg)

    steps = args.steps
    eval_every = max(steps // args.checks, 1)
    held_out = held["validation"].batch(range(min(512, len(held["validation"]))), device)
    curve: list[dict[str, Any]] = []
    last_states: list[dict[str, torch.Tensor]] = []

    def check(m: Transformer) -> Any:
        with autocast(device):
            metrics = evaluate(m, held_out)
        point = {"tokens": stream.tokens, "validation_loss": metrics.loss}
        for name, pairs in held.items():
            few = pairs.spread(args.eval_limit)
            point[f"{name}_bleu"] = bleu(translate(m, few, tokenizer, device), few.tgt_text)
        curve.append(point)
        last_states.append({k: v.detach().clone() for k, v in m.state_dict().items()})
        del last_states[:-5]
        print(json.dumps(point), flush=True)
        return metrics

    # the paper's schedule; a run too short for its 4,000 warm-up steps warms up for a third of
    # its steps to the paper's peak rate, (d_model * 4000)^-0.5, and decays as the paper's does
    warmup = min(WARMUP, steps // 3)
    peak = None if warmup == WARMUP else (config.d_model * WARMUP) ** -0.5
    training = TrainConfig(steps=steps, warmup=warmup, peak_lr=peak, label_smoothing=0.1,
                           seed=args.seed, eval_every=eval_every, target_accuracy=None)
    result = train(model, stream, training, loss_fn=loss_fn, check=check)
    for point, evaluation in zip(curve, result.evaluations, strict=True):
        point.update(step=evaluation.step, seconds=evaluation.seconds)
    final = {name: bleu(translate(model, few, tokenizer, device), few.tgt_text)
             for name, few in ((n, p.spread(args.eval_limit)) for n, p in held.items())}
    model.load_state_dict(average(last_states))
    args.out.mkdir(parents=True, exist_ok=True)
    weights.save(model, args.out / "translator.bin")
    (args.out / "record.json").write_text(json.dumps({
        "kind": "translator", "dropout": args.dropout, "seed": args.seed, "steps": steps,
        "batch_tokens": args.batch_tokens, "warmup": warmup, "peak_lr": peak,
        "parameters": count_parameters(model),
        "train_pairs": len(train_pairs), "seconds": result.seconds, "device": device_name(device),
        "curve": curve, "final_checkpoint_bleu": final, "eval_limit": args.eval_limit,
        "losses": result.losses[::max(steps // 200, 1)]}, indent=1))


def run_writer(args: argparse.Namespace) -> None:
    """Train the decoder-only language model on the training books' English."""
    torch.manual_seed(args.seed)
    tokenizer, device = bpe(), args.device
    sets = data.split_by_book(data.load_verses())
    texts = {name: [v.english for v in sets[name]] for name in sets}
    ids = {name: [t for t in data.encode(tokenizer, texts[name])
                  if len(t) < data.MAX_TRAIN_TOKENS or name != "train"] for name in texts}
    model = DecoderOnly(writer_config(tokenizer.get_vocab_size(), dropout=args.dropout)).to(device)

    def make(rows: list[int], device: str) -> tuple[torch.Tensor, int]:
        seqs = [ids["train"][r] for r in rows]  # then BOS, the verse, EOS, padding
        return wrap_sources(pad_sequences(seqs)).to(device), sum(
            len(ids["train"][r]) + 1 for r in rows)

    def loss_fn(m: nn.Module, tokens: torch.Tensor, cfg: TrainConfig) -> torch.Tensor:
        with autocast(device):
            logits = m(tokens[:, :-1])
        return nn.functional.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten(),
                                           ignore_index=0)

    lengths = [len(t) + 2 for t in ids["train"]]
    generator = torch.Generator().manual_seed(args.seed)
    stream = data.Counted(make, data.token_batches(lengths, args.batch_tokens, generator), device)
    steps = args.steps
    curve: list[dict[str, Any]] = []
    best: dict[str, Any] = {"perplexity": math.inf}

    def check(m: DecoderOnly) -> Any:
        point = {"tokens": stream.tokens,
                 "validation_perplexity": perplexity(m, ids["validation"], device),
                 "samples": samples(m, tokenizer, device)}
        curve.append(point)
        if point["validation_perplexity"] < best["perplexity"]:
            best.update(perplexity=point["validation_perplexity"], check=len(curve) - 1,
                        state={k: v.detach().clone() for k, v in m.state_dict().items()})
        print(json.dumps(point)[:300], flush=True)
        return NoTarget()

    training = TrainConfig(steps=steps, warmup=args.warmup, peak_lr=args.peak_lr,
                           label_smoothing=0.0, seed=args.seed,
                           eval_every=max(steps // args.checks, 1), target_accuracy=None)
    result = train(model, stream, training, loss_fn=loss_fn, check=check)
    for point, evaluation in zip(curve, result.evaluations, strict=True):
        point.update(step=evaluation.step, seconds=evaluation.seconds)
    model.load_state_dict(best["state"])  # early stopping on the validation books
    args.out.mkdir(parents=True, exist_ok=True)
    weights.save(model, args.out / "writer.bin")
    (args.out / "record.json").write_text(json.dumps({
        "kind": "writer", "dropout": args.dropout, "seed": args.seed, "steps": steps,
        "batch_tokens": args.batch_tokens, "warmup": args.warmup, "peak_lr": args.peak_lr,
        "parameters": count_parameters(model), "train_verses": len(ids["train"]),
        "kept_check": best["check"],
        "seconds": result.seconds, "device": device_name(device), "curve": curve,
        "losses": result.losses[::max(steps // 200, 1)]}, indent=1))


@torch.no_grad()
def perplexity(model: DecoderOnly, seqs: list[torch.Tensor], device: str,
               batch: int = EVAL_BATCH) -> float:
    """exp(mean next-token cross-entropy) over every token and EOS of ``seqs``, in batches of
    ``batch`` sequences of similar length."""
    was_training = model.training
    model.eval()
    by_length = sorted(seqs, key=len)  # batches of similar lengths: little padding
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(by_length), batch):
            chunk = by_length[start:start + batch]
            tokens = wrap_sources(pad_sequences(chunk)).to(device)  # BOS, verse, EOS, padding
            logits = model(tokens[:, :-1]).float()
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten(),
                                               ignore_index=0, reduction="sum")
            total += float(loss)
            count += int((tokens[:, 1:] != 0).sum())
    model.train(was_training)
    return math.exp(total / count)


def samples(model: DecoderOnly, tokenizer: Any, device: str, seed: int = 0) -> list[dict]:
    """One sample per prompt and setting, each from its own seeded generator."""
    was_training = model.training
    model.eval()
    out = []
    for prompt in SAMPLE_PROMPTS:
        start = torch.tensor([1] + tokenizer.encode(prompt, add_special_tokens=False).ids
                             if prompt else [1], device=device)
        for temperature, top_k in SAMPLE_SETTINGS:
            generator = torch.Generator(device=device).manual_seed(seed)
            ids = sample(model, start, 60, temperature=temperature, top_k=top_k,
                         generator=generator)
            out.append({"prompt": prompt, "temperature": temperature, "top_k": top_k,
                        "text": data.decode(tokenizer, ids.cpu())})
    model.train(was_training)
    return out


def device_name(device: str) -> str:
    """The GPU's name, or "cpu"."""
    return torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"


def select(args: argparse.Namespace) -> None:
    """Keep the translator with the best validation BLEU; score it on the test books; write the
    stored files; check what the chapter says about them."""
    tokenizer = bpe()
    records = [(json.loads((d / "record.json").read_text()), d) for d in args.runs]
    device = args.device
    sets = data.split_by_book(data.load_verses())
    held = {name: data.pairs(tokenizer, sets[name]).spread(args.eval_limit)
            for name in ("validation", "test")}
    candidates = []
    for record, folder in records:
        model = load_translator(folder / "translator.bin", record["dropout"], device)
        hyps = translate(model, held["validation"], tokenizer, device)
        candidates.append((bleu(hyps, held["validation"].tgt_text), record, folder, model))
    _, chosen, folder, model = max(candidates, key=lambda c: c[0])
    decoded = {f"{name}_{how}": translate(model, held[name], tokenizer, device, beam=beam,
                                          alpha=alpha)
               for name in held for how, beam, alpha in (("greedy", 1, 0.0),
                                                          ("beam", BEAM, ALPHA))}
    writer_record = json.loads((args.writer / "record.json").read_text())
    writer = DecoderOnly(writer_config(tokenizer.get_vocab_size())).to(device)
    writer.load_state_dict(weights.load_state(args.writer / "writer.bin"))
    test_ids = data.encode(tokenizer, [v.english for v in sets["test"]])
    results = {
        "candidates": [{"dropout": r["dropout"], "validation_bleu": b}
                       for b, r, _, _ in candidates],
        "translator": chosen,
        "candidate_records": [r for _, r, _, _ in candidates],
        "replicates": replicates(args.replicates),
        "scores": {key: scores(hyps, held[key.split("_")[0]].tgt_text)
                   for key, hyps in decoded.items()},
        "outputs": {key: hyps for key, hyps in decoded.items() if key.startswith("test")},
        "writer": writer_record,
        "writer_test_perplexity": perplexity(writer, test_ids, device),
        "writer_samples": samples(writer, tokenizer, device),
    }
    for name in ("translator.bin",):
        shutil.copy(folder / name, args.into / name)
    shutil.copy(args.writer / "writer.bin", args.into / "writer.bin")
    (args.into / STUDY.path.name).write_text(json.dumps(results, indent=1, ensure_ascii=False))
    record_gpu(record_environment(args.into / STUDY.path.name), device)
    print(json.dumps(results["scores"], indent=1))
    if (args.into / STUDY.path.name).resolve() == STUDY.path.resolve():
        check_data_claims("ch8-stored-models")  # what the page says about it still holds


def data_claims(path: Path = STUDY.path) -> list[DataClaim]:
    """What chapter 8 says about the stored study ``ch8-stored-models``, checked on its data."""
    from . import analysis  # which reads this module's files

    results = load(path)
    sets = data.split_by_book(data.load_verses())
    refs = [v.english for v in sets["test"]]
    curves = analysis.dropout_curves(results)
    early = {str(d): b for d, b in curves.early_bleu.items()}
    greedy, beam = results["scores"]["test_greedy"]["bleu"], results["scores"]["test_beam"]["bleu"]
    exact = analysis.exact_matches(results["outputs"]["test_greedy"], refs)
    errors = analysis.errors(results, sets)
    kinds = errors.kinds["greedy"]
    writer = results["writer"]
    curve, kept = writer["curve"], writer["kept_check"]
    by_dropout = analysis.final_bleu(results)
    train_english = [v.english for v in sets["train"]]
    missed = analysis.missed_words(results["outputs"]["test_greedy"], refs, train_english)
    rare_and_names = sum(missed[band] for band in analysis.MISSED_BANDS[2:5])
    top50 = analysis.common_misses_among(results["outputs"]["test_greedy"], refs, train_english,
                                         50)
    translator_curve = results["translator"]["curve"]
    best_loss_tokens = analysis.lowest_validation_loss_tokens(results["translator"])
    return [
        # figure "BLEU against tokens" and the paragraph after it
        data_claim("dropout 0.3 starts slower (at the third check)",
                   curves.early_bleu[0.3] < curves.early_bleu[0.1] - 5, **early),
        data_claim("both end within 1.5 BLEU of each other", curves.final_gap < 1.5,
                   gap=curves.final_gap),
        data_claim("the curve is still rising at the end",
                   curves.last_bleu > curves.fourth_last_bleu, last=curves.last_bleu,
                   fourth_last=curves.fourth_last_bleu),
        data_claim("BLEU below 5 for the first quarter of the run, in both runs",
                   curves.first_quarter_best < 5, best=curves.first_quarter_best),
        # "How good is it?"
        data_claim("few greedy outputs match their reference exactly", exact < 0.1, exact=exact),
        data_claim("15 BLEU or more on the test books", greedy >= 15, greedy=greedy),
        data_claim("beam search adds about a point of BLEU", 0.5 < beam - greedy < 2,
                   greedy=greedy, beam=beam),
        # "What goes wrong"
        data_claim("most of the words the outputs miss are common words",
                   missed[analysis.MISSED_BANDS[0]] > 0.5, common=missed[analysis.MISSED_BANDS[0]]),
        data_claim("rare words and names are under a tenth of the missed words",
                   rare_and_names < 0.1, rare_and_names=rare_and_names),
        data_claim("about half of the missed common words are among the 50 most frequent",
                   0.4 < top50 < 0.6, top50=top50),
        data_claim("common words fare worse than names",
                   kinds.common_recall < kinds.name_recall, common=kinds.common_recall,
                   names=kinds.name_recall),
        data_claim("rare words are almost never found, common words mostly",
                   kinds.rare_recall < 0.05 < 0.5 < kinds.common_recall,
                   rare=kinds.rare_recall, common=kinds.common_recall),
        data_claim("rare names fare far worse than names",
                   kinds.rare_name_recall < kinds.name_recall - 0.25,
                   rare_names=kinds.rare_name_recall, names=kinds.name_recall),
        data_claim("beam outputs are shorter than greedy ones, both a little short",
                   errors.kinds["beam"].length_ratio < kinds.length_ratio < 1,
                   beam=errors.kinds["beam"].length_ratio, greedy=kinds.length_ratio),
        data_claim("90 % or more of shared-word pairs in the reference's order, against about "
                   "half for a shuffled output", errors.order.pairs_in_order > 0.9
                   and abs(errors.shuffled.pairs_in_order - 0.5) < 0.05,
                   order=errors.order, shuffled=errors.shuffled),
        data_claim("about half the verses (40-75 %) keep every such pair in order",
                   0.4 < errors.order.verses_in_order < 0.75, order=errors.order),
        data_claim("most names in the references are frequent ones (100+ times in training)",
                   errors.frequent_names > 0.5, share=errors.frequent_names),
        data_claim('in Ruth 1:2 and 1:3 Elimelech becomes "Elkittites" and "Elaseth"',
                   "Elkittites" in errors.ruth[2] and "Elaseth" in errors.ruth[3]
                   and "Elimelech" not in errors.ruth[2] + errors.ruth[3], ruth=errors.ruth),
        # "The decoder alone"
        data_claim("the kept check is the one with the lowest validation perplexity",
                   kept == analysis.best_check(curve), kept=kept),
        data_claim("validation perplexity rises after it (overfitting)",
                   curve[-1]["validation_perplexity"]
                   > 1.3 * curve[kept]["validation_perplexity"],
                   kept=curve[kept]["validation_perplexity"],
                   last=curve[-1]["validation_perplexity"]),
        data_claim("the translator overfits too, later: its validation loss was lowest at a "
                   "check before the last, after more tokens than the writer's lowest",
                   translator_curve[-1]["validation_loss"]
                   > min(p["validation_loss"] for p in translator_curve)
                   and best_loss_tokens > curve[kept]["tokens"],
                   best_loss_tokens=best_loss_tokens, writer_best=curve[kept]["tokens"]),
        # lab note "The stored study"
        data_claim("the two dropout rates' seeds overlap on validation BLEU",
                   min(by_dropout[0.1]) < max(by_dropout[0.3]),
                   **{str(d): b for d, b in by_dropout.items()}),
    ]


def replicates(folders: list[Path]) -> list[dict[str, Any]]:
    """Other seeds of the candidates: their settings and their last checkpoint's BLEU."""
    records = [json.loads((folder / "record.json").read_text()) for folder in folders]
    return [{key: r[key] for key in ("dropout", "seed", "steps", "final_checkpoint_bleu",
                                     "eval_limit")}
            for r in records]


def record_gpu(record: Path, device: str) -> None:
    """Add the GPU, if one trained and scored the models, to the environment record."""
    if device.startswith("cuda"):
        env = json.loads(record.read_text())
        env["gpu"] = device_name(device)
        record.write_text(json.dumps(env, indent=1, sort_keys=True) + "\n")


def load_translator(path: Path, dropout: float = 0.1, device: str = "cpu") -> Transformer:
    """A stored translator (int8 weights, ``weights.py``), in eval mode."""
    model = Transformer(translator_config(data.load_bpe().get_vocab_size(), dropout=dropout))
    model.load_state_dict(weights.load_state(path))
    return model.to(device).eval()


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = True  # a GPU's float32 products in TF32
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = parser.add_subparsers(dest="part", required=True)
    # defaults: the stored study's runs
    for name, batch_tokens, steps in (("translator", 24000, 2500), ("writer", 12000, 5000)):
        p = parts.add_parser(name)
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--device", default="cpu")
        p.add_argument("--dropout", type=float, default=0.1)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--batch-tokens", type=int, default=batch_tokens)
        p.add_argument("--steps", type=int, default=steps)
        p.add_argument("--checks", type=int, default=12)
        p.add_argument("--eval-limit", type=int, default=None)
        if name == "writer":
            p.add_argument("--warmup", type=int, default=1000)
            p.add_argument("--peak-lr", type=float, default=1e-3)
    p = parts.add_parser("select")
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--writer", type=Path, required=True)
    p.add_argument("--replicates", type=Path, nargs="*", default=[])
    p.add_argument("--into", type=Path, default=HERE)
    p.add_argument("--device", default="cpu")
    p.add_argument("--eval-limit", type=int, default=None)
    args = parser.parse_args()
    {"translator": run_translator, "writer": run_writer, "select": select}[args.part](args)


if __name__ == "__main__":
    main()
