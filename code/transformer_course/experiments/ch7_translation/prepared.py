"""The chapter's data, built once: a split of numbers, its sentence pairs, the segmenters and
vocabularies learned from the training pairs, and every set as padded ids."""

from __future__ import annotations

from dataclasses import dataclass

from .number_corpus import NumberSplit, ParallelCorpus, make_corpus
from .pipeline import EncodedPairs, Pipeline, build_pipeline

SETS = ("train", "validation", "validation_shapes", "test", "test_shapes")


@dataclass(frozen=True)
class TranslationData:
    """A split with its texts and ids (see :data:`SETS` for the set names)."""

    split: NumberSplit
    texts: dict[str, ParallelCorpus]
    pipeline: Pipeline
    pairs: dict[str, EncodedPairs]

    def validation(self) -> dict[str, EncodedPairs]:
        """The two validation sets, as ``recipe.train_translation`` checks them."""
        return {"uniform": self.pairs["validation"], "shapes": self.pairs["validation_shapes"]}


def prepare(split: NumberSplit, target: str | int = "morphemes", *, source_lang: str = "en",
            target_lang: str = "de", texts: dict[str, ParallelCorpus] | None = None,
            ) -> TranslationData:
    """Write out every number of ``split``, learn the segmenters on its training pairs, encode.

    Args:
        split: the numbers. target: the target segmentation ("morphemes", "words", or a BPE
            size; see ``pipeline.build_pipeline``). source_lang, target_lang: the languages.
        texts: the pairs of ``split`` if already written out (to try another segmentation
            without calling num2words again).
    """
    if texts is None:
        texts = {name: make_corpus(getattr(split, name), source_lang, target_lang)
                 for name in SETS}
    pipe = build_pipeline(texts["train"], target)
    return TranslationData(split, texts, pipe, {name: pipe.encode(texts[name])
                                                for name in SETS})
