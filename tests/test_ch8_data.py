"""Chapter 8's corpus, split, BPE, batches, stored weights and decoder-only model."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID
from transformer_course.core.kv_cache import KVCache
from transformer_course.experiments.ch8_real_sentences import data, extract, models, weights

PARALLEL_BOOKS = ("1Sam", "2Sam", "1Kgs", "2Kgs", "1Chr", "2Chr", "Matt", "Mark", "Luke", "John",
                  "Jude", "2Pet", "Isa", "Jer", "Ezra", "Neh")


@pytest.fixture(scope="module")
def verses():
    return data.load_verses()


@pytest.fixture(scope="module")
def sets(verses):
    return data.split_by_book(verses)


def test_held_out_books_are_whole_and_parallel_passages_stay_in_training(verses, sets):
    books = {name: {v.book for v in vs} for name, vs in sets.items()}
    assert books["test"] == set(data.TEST_BOOKS)
    assert books["validation"] == set(data.VALIDATION_BOOKS)
    assert not books["train"] & (books["test"] | books["validation"])
    assert set(PARALLEL_BOOKS) <= books["train"]
    assert sum(map(len, sets.values())) == len(verses)
    assert 900 <= len(sets["test"]) and 900 <= len(sets["validation"])


def test_the_text_is_clean(verses):
    for v in verses:
        for text in (v.english, v.spanish):
            assert text and text == text.strip() and "  " not in text
            assert not re.search(r"[<>]|&\w+;", text), text
    last = {}
    for v in verses:
        last[v.book] = v
    assert all(not re.search(r"(?i)escrita|enviada", last[b].spanish)
               for b in extract.EPISTLES_WITH_COLOPHONS if b in last)
    assert "Glossary" not in last["Rev"].english
    openings = [v.spanish.split()[0] for v in verses if v.verse == 1]
    assert not any(re.fullmatch(r"\W*[A-ZÁÉÍÓÚÑ]{2,}\W*", word) for word in openings)


def test_the_cleaner_turns_a_footnote_into_a_space_and_keeps_punctuation_tight():
    raw = ('<w lemma="x">God</w><note placement="foot">a note</note><w>created</w> '
           '<w>the</w> <w>earth</w> <note>n</note>. <title>Heading</title>“<w>Yes</w> ”')
    assert extract.clean(raw) == "God created the earth. “Yes”"


def test_the_bpe_round_trips_held_out_text_and_keeps_the_special_ids(sets):
    tokenizer = data.load_bpe()
    assert tokenizer.get_vocab_size() == data.BPE_SIZE
    assert [tokenizer.token_to_id(t) for t in data.SPECIAL_TOKENS[:3]] == [PAD_ID, BOS_ID, EOS_ID]
    for v in sets["test"][::25]:
        for text in (v.english, v.spanish):
            ids = tokenizer.encode(text, add_special_tokens=False).ids
            assert data.UNK_ID not in ids
            assert data.decode(tokenizer, torch.tensor([BOS_ID, *ids, EOS_ID, PAD_ID])) == text


def test_the_stored_bpe_is_what_the_training_books_give(sets):
    # chapter 8 says so; the learner is deterministic (a fixed merge order), so exact on any CPU
    texts = [v.english for v in sets["train"]] + [v.spanish for v in sets["train"]]
    assert data.train_bpe(texts).get_vocab() == data.load_bpe().get_vocab()


def test_token_batches_cover_every_row_once_per_epoch_within_the_budget():
    generator = torch.Generator().manual_seed(0)
    lengths = torch.randint(3, 60, (500,), generator=generator).tolist()
    stream = data.token_batches(lengths, 400, generator)
    seen: list[int] = []
    while len(seen) < len(lengths):
        rows = next(stream)
        assert len(rows) * max(lengths[r] for r in rows) <= 400 or len(rows) == 1
        seen += rows
    assert sorted(seen) == list(range(len(lengths)))


def test_pair_batches_count_the_labels_of_each_batch_they_give():
    generator = torch.Generator()
    src = [torch.arange(4, 4 + n) for n in torch.randint(1, 20, (60,), generator=generator)]
    tgt = [torch.arange(4, 4 + n) for n in torch.randint(1, 20, (60,), generator=generator)]
    pairs = data.Pairs(src, tgt, [""] * 60, [""] * 60)
    stream = data.pair_batches(pairs, 100, torch.Generator().manual_seed(1))
    for step in range(1, 6):
        batch = next(stream)
        labels = int((batch.tgt_out != PAD_ID).sum())  # the target's pieces and EOS
        pieces = int((batch.src != PAD_ID).sum()) - 2 * len(batch.src)  # less BOS and EOS
        assert stream.history[-1] - (stream.history[-2] if step > 1 else 0) == labels + pieces
        assert len(stream.history) == step and stream.tokens == stream.history[-1]


def test_stored_weights_are_within_half_a_step_of_the_originals(tmp_path):
    model = models.DecoderOnly(models.writer_config(300, layers=1))
    weights.save(model, tmp_path / "m.bin")
    state = weights.load_state(tmp_path / "m.bin")
    loaded = models.DecoderOnly(models.writer_config(300, layers=1))
    loaded.load_state_dict(state)
    for name, original in model.state_dict().items():
        restored = loaded.state_dict()[name]
        if original.dim() == 2:
            step = original.abs().amax(dim=1, keepdim=True) / 127
            assert ((restored - original).abs() <= step / 2 + 1e-7).all(), name
        else:
            assert torch.equal(restored, original), name
    assert loaded.output_projection.weight is loaded.embed.token.weight


def test_the_decoder_alone_is_causal_and_has_no_cross_attention():
    torch.manual_seed(0)
    model = models.DecoderOnly(models.writer_config(50, dropout=0.0, layers=2)).eval()
    assert not any("cross" in name for name, _ in model.named_parameters())
    tokens = torch.randint(3, 50, (2, 9))
    changed = tokens.clone()
    changed[:, 6:] = torch.randint(3, 50, (2, 3))
    with torch.no_grad():
        first, second = model(tokens), model(changed)
    torch.testing.assert_close(first[:, :6], second[:, :6])
    assert not torch.allclose(first[:, 6:], second[:, 6:])


def test_sampling_is_seeded_and_stops_at_eos():
    torch.manual_seed(0)
    model = models.DecoderOnly(models.writer_config(20, dropout=0.0, layers=1)).eval()
    draw = [models.sample(model, torch.tensor([BOS_ID]), 30, temperature=0.8, top_k=5,
                          generator=torch.Generator().manual_seed(3)) for _ in range(2)]
    assert torch.equal(draw[0], draw[1])
    assert draw[0][0] == BOS_ID and (EOS_ID not in draw[0][1:-1].tolist())
    assert len(draw[0]) <= 31


def test_sampling_with_the_cache_gives_the_tokens_of_recomputing_every_step():
    torch.manual_seed(0)
    model = models.DecoderOnly(models.writer_config(60, dropout=0.0, layers=2)).eval()
    prompt = torch.tensor([BOS_ID, 7, 9, 11])
    for seed in range(3):
        cached, recomputed = (models.sample(model, prompt, 40, temperature=1.5, eos_id=-1,
                                            generator=torch.Generator().manual_seed(seed),
                                            use_cache=use) for use in (True, False))
        assert len(cached) == len(prompt) + 40 and torch.equal(cached, recomputed)
    cache = [KVCache() for _ in model.layers]
    with torch.no_grad():
        for end in range(len(prompt), len(cached) + 1):
            torch.testing.assert_close(models.next_token_logits(model, cached[:end], cache),
                                       model(cached[None, :end])[0, -1])
    assert cache[0].length == len(cached)


def test_sampling_refuses_more_positions_than_the_model_reads():
    model = models.DecoderOnly(models.writer_config(20, dropout=0.0, layers=1)).eval()
    prompt = torch.tensor([BOS_ID] * 10)
    with pytest.raises(ValueError, match="max_new"):
        models.sample(model, prompt, model.config.max_len - 9)
    with pytest.raises(ValueError, match="prompt"):
        models.sample(model, prompt[None], 5)
    with pytest.raises(TypeError, match="max_new"):
        models.sample(model, prompt, 5.0)


@pytest.mark.pipeline
@pytest.mark.skipif(shutil.which("apt-get") is None or shutil.which("dpkg") is None,
                    reason="the extraction reads Debian packages")
def test_the_extraction_command_reproduces_the_shipped_corpus(tmp_path):
    """The docstring's commands, run: the file they write is the shipped one, byte for byte."""
    subprocess.run(["apt-get", "download", "sword-text-web=426.0-1", "sword-text-sparv=2.60-1"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=300)
    for deb in tmp_path.glob("sword-text-*.deb"):
        subprocess.run(["dpkg", "-x", str(deb), str(tmp_path / "sword")], check=True)
    out = tmp_path / "corpus.tsv.xz"
    subprocess.run([sys.executable, "-m", "transformer_course.experiments.ch8_real_sentences"
                    ".extract", str(tmp_path / "sword/usr/share/sword"), "--out", str(out)],
                   check=True, capture_output=True, timeout=600)
    assert out.read_bytes() == Path(extract.CORPUS).read_bytes()


def test_names_are_capitalised_words_inside_a_sentence():
    from transformer_course.experiments.ch8_real_sentences import analysis

    text = "And David said to Saul, “Go up to Gilgal.” Then Samuel went. “Who is Boaz?”"
    assert analysis.names(text) == ["David", "Saul", "Gilgal", "Samuel", "Boaz"]


def test_missed_words_fall_in_bands_by_training_count_and_capital():
    from transformer_course.experiments.ch8_real_sentences import analysis

    training = ["the"] * 100 + ["lamb"] * 5 + ["oxen", "Boaz went"]
    references = ["The lamb and the oxen saw Boaz and the Zuph", "the lamb"]
    hypotheses = ["the and and", "the lamb"]  # misses: the, lamb, oxen, saw, Boaz, Zuph, The
    shares = analysis.missed_words(hypotheses, references, training)
    assert [round(7 * shares[band]) for band in analysis.MISSED_BANDS] == [1, 1, 1, 1, 2, 1]
    assert analysis.common_misses_among(hypotheses, references, training, 1) == 1.0


def test_a_near_copy_shares_half_its_four_grams_with_one_training_text():
    from transformer_course.experiments.ch8_real_sentences import analysis

    held_out = ["Grace to you and peace from God our Father.", "A verse of its own words here.",
                "Grace to you all, my brothers, in the Lord."]
    training = ["To all in Rome: grace to you and peace from God our Father and the Lord.",
                "Grace to you all, friends."]
    found = analysis.near_copies(held_out, training)
    assert [(c.held_out, c.training, c.share) for c in found] == [(0, 0, 1.0)]
    assert [c.held_out for c in analysis.near_copies(held_out, training, share=0.1)] == [0, 2]


def test_recall_counts_each_reference_word_at_most_as_often_as_the_output_has_it():
    from transformer_course.experiments.ch8_real_sentences import analysis

    refs, hyps = ["the king and the king’s son"], ["the king went"]
    assert analysis.recall(hyps, refs, analysis.words) == 2 / 6
    assert analysis.recall(hyps, refs, lambda t: [w for w in analysis.words(t) if w == "the"]) \
        == 1 / 2


def test_word_order_counts_pairs_of_words_found_once_in_both():
    from transformer_course.experiments.ch8_real_sentences import analysis

    ref = "The king went up to the city of David."  # "the" twice: left out
    kept = analysis.word_order([ref], [ref])
    assert (kept.pairs_in_order, kept.verses_in_order) == (1.0, 1.0)
    backwards = analysis.word_order(["David of city the to up went king the"], [ref])
    assert (backwards.pairs_in_order, backwards.verses_in_order) == (0.0, 0.0)
    one_swap = analysis.word_order(["King the went to up the city of David", "no words shared"],
                                   [ref, "nothing here"])
    # king, went, up, to, city, of, david: 21 pairs, one (up, to) swapped; one verse counted
    assert one_swap.pairs_in_order == 20 / 21 and one_swap.verses_in_order == 0.0


def test_a_hidden_source_piece_gets_no_cross_attention():
    from transformer_course.experiments.ch8_real_sentences import analysis

    tokenizer, model = data.load_bpe(), analysis.translator()
    source = "Y dijo Dios: Sea la luz."
    seen, hidden = (analysis.read(model, tokenizer, source, hidden=h) for h in (None, 3))
    assert seen.cross[:, 3].max() > 0
    assert hidden.cross[:, 3].abs().max() == 0
    torch.testing.assert_close(hidden.cross.sum(dim=1), torch.ones(len(hidden.output_tokens)))


def test_the_greedy_margin_is_the_smallest_lead_of_each_choice_over_the_next_piece():
    """Recomputed without the key-value cache: at each step, run the whole prefix, take the most
    probable piece (what greedy decoding writes) and its lead over the second."""
    from transformer_course.core.masks import padding_mask_from_tokens
    from transformer_course.experiments.ch8_real_sentences import analysis

    tokenizer, model = data.load_bpe(), analysis.translator()
    source = "Y dijo Dios: Sea la luz."
    for hidden in (None, 2):
        ids = torch.tensor([analysis._source_ids(tokenizer, source)])
        mask = padding_mask_from_tokens(ids, PAD_ID)
        if hidden is not None:
            mask[0, 0, hidden] = False
        prefix, leads = [BOS_ID], []
        with torch.no_grad():
            while prefix[-1] != EOS_ID and len(prefix) < models.MAX_LEN:
                top = model(ids, torch.tensor([prefix]), mask)[0, -1].topk(2)
                leads.append(float(top.values[0] - top.values[1]))
                prefix.append(int(top.indices[0]))
        assert analysis.read(model, tokenizer, source, hidden).output == data.decode(
            tokenizer, torch.tensor(prefix))
        assert analysis.greedy_margin(model, tokenizer, source, hidden) == pytest.approx(
            min(leads), abs=1e-4)


def test_a_batch_of_verses_translates_as_each_verse_alone():
    """The masking test translates its verses together (padding masked); each output is the
    one that verse gets on its own, hidden piece or not."""
    from transformer_course.experiments.ch8_real_sentences import analysis

    tokenizer, model = data.load_bpe(), analysis.translator()
    sources = ["Y dijo Dios: Sea la luz.", "En el principio crió Dios los cielos y la tierra.",
               "Jesús lloró."]
    ids = [analysis._source_ids(tokenizer, source) for source in sources]
    hidden = [None, 2, 1]
    together = analysis._translate_all(model, ids, hidden)
    alone = [analysis.read(model, tokenizer, source, h).output
             for source, h in zip(sources, hidden, strict=True)]
    assert [data.decode(tokenizer, out) for out in together] == alone


def test_the_top_k_checker_passes_the_package_and_names_a_wrong_answer():
    from transformer_course.exercises import check_top_k_probabilities

    assert check_top_k_probabilities(models.next_token_probabilities).cases > 10

    def not_renormalised(logits, temperature, top_k):
        probs = torch.softmax(logits / temperature, -1)
        if top_k is not None:
            probs = torch.where(probs >= torch.topk(probs, top_k).values[-1], probs, 0.0)
        return probs

    def ties_dropped(logits, temperature, top_k):
        scaled = logits / temperature
        if top_k is not None:
            keep = torch.zeros_like(scaled, dtype=torch.bool)
            keep[torch.topk(scaled, top_k).indices] = True
            scaled = scaled.masked_fill(~keep, -torch.inf)
        return torch.softmax(scaled, -1)

    for wrong in (not_renormalised, ties_dropped):
        with pytest.raises(AssertionError, match="case"):
            check_top_k_probabilities(wrong)
    with pytest.raises(TypeError, match="fn"):
        check_top_k_probabilities("not a function")


def test_the_stored_studys_data_claims_read_the_file_they_are_given(tmp_path):
    """What the page says about the stored study is checked on the file named, so a
    regeneration that no longer bears a sentence out names that sentence."""
    import json

    from transformer_course.experiments.ch8_real_sentences import stored_models

    results = stored_models.STUDY.load()
    assert all(c.holds for c in stored_models.data_claims())
    results["scores"]["test_beam"]["bleu"] = results["scores"]["test_greedy"]["bleu"]
    path = tmp_path / "stored_models.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    failing = [c.text for c in stored_models.data_claims(path) if not c.holds]
    assert failing == ["beam search adds about a point of BLEU"]
