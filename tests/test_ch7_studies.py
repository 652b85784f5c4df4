"""Chapter 7's studies: the pieces that need no long training run."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_course import paper
from transformer_course.experiments.ch7_translation import (
    number_corpus,
    prepared,
    stored_tables,
    studies,
)


@pytest.fixture(scope="module")
def small():
    split = number_corpus.split_numbers(train=300, validation=30, test=30, seed=2)
    return prepared.prepare(split), prepared.prepare(split, 60)


def test_prepared_sets_are_encoded_from_the_training_vocabulary(small):
    morphemes, bpe = small
    assert set(morphemes.pairs) == set(prepared.SETS) == set(morphemes.texts)
    assert len(morphemes.pairs["train"]) == 300 and len(morphemes.validation()) == 2
    assert len(bpe.pipeline.target_vocab) == 63  # the 60 symbols and the three specials
    assert 0 < studies.tokens_per_target(bpe) and studies.tokens_per_target(morphemes) > 0


def test_links_for_morphemes_and_bpe_pieces(small):
    morphemes, bpe = small
    links, kinds, positions = studies.links_for(morphemes, "test")
    assert [len(x) for x in links] == [len(p) for p in positions]
    pieces = studies.links_for(bpe, "test")
    per_morpheme = studies.links_for(bpe, "test", per_morpheme=True)
    assert per_morpheme[0] == links and per_morpheme[1] == kinds  # the same items
    assert all(k == "piece" for row in pieces[1] for k in row)
    assert all(max(p) < len(ln) for p, ln in zip(per_morpheme[2], pieces[0], strict=True))


def test_the_group_rule_of_german_numbers():
    assert studies.group_rule_holds([1, 45, 999, 1000, 1001, 21_000, 101_000, 101_001, 999_999])


def test_adding_training_numbers_keeps_the_split_clean():
    split = number_corpus.extrapolation_split(500, train=200, validation=20, test=50, high=999)
    extra = split.test[:5]
    grown = studies.add_training_numbers(split, extra)
    assert np.isin(extra, grown.train).all() and not np.isin(extra, grown.test).any()
    assert len(grown.test) == 45


def test_every_variant_stands_beside_a_row_of_the_papers_table3():
    assert set(studies.PAPER_TABLE3) == {v.name for v in studies.TABLE3_VARIANTS}
    rows = [row for row in studies.PAPER_TABLE3.values() if row is not None]
    assert len(rows) == len(studies.TABLE3_VARIANTS) - 1  # "no positional encoding" is not
    assert all(row in paper.TABLE3.values() for row in rows)


def test_precomputed_measurements_cover_the_chapter():
    tables = stored_tables.stored()
    assert set(tables) == set(stored_tables.TABLES)
    assert [row["seed"] for row in tables["MAIN"]] == [0, 1, 2]
    assert all(row["test"]["exact_match"] >= 99 and row["test_shapes"]["exact_match"] >= 99
               for row in tables["MAIN"])
    names = {v.name for v in studies.TABLE3_VARIANTS}
    assert set(tables["TABLE3_SHORT"]) == names == set(tables["TABLE3_FULL"])
    assert set(tables["SCHEDULES"]) == {v.name for v in stored_tables.SCHEDULE_VARIANTS}
    assert set(tables["SEGMENTATION_FULL"]) == {str(t) for t in stored_tables.SEGMENTATIONS}
    assert all(len(v["exact_uniform"]) == 3 for v in tables["TABLE3_SHORT"].values())
