"""Extract the chapter's parallel corpus from two SWORD modules, once; the result is shipped.

English: the World English Bible (module ``engWEB2015eb``, Debian package ``sword-text-web``);
Spanish: the Reina-Valera 1909 (module ``spaRV1909eb``, package ``sword-text-sparv``). Both are in
the public domain. The text written here is *derived from* the World English Bible (its markup,
notes and glossary removed), and "World English Bible" is a trademark, so the file never carries
that name as its title.

Regenerate ``corpus.tsv.xz`` (needs Debian's package archive and ``pip install pysword==0.2.8``)::

    mkdir sword && cd sword
    apt-get download sword-text-web=426.0-1 sword-text-sparv=2.60-1
    for f in sword-text-*.deb; do dpkg -x "$f" .; done
    python -m transformer_course.experiments.ch8_real_sentences.extract usr/share/sword

What the cleaning removes, and why (each seen in the modules):

- Strong's tags around words (``<w lemma=..>``), poetry lines, paragraph markers: markup only.
- Footnotes and their references (WEB): the notes are not in the Spanish. A footnote sits
  between two words without a space ("God<note>..</note>created"), so it becomes a space.
- Non-canonical headings; Song of Songs' speaker labels (WEB only).
- WEB's glossary, stored after Revelation 22:21.
- RV1909 writes a chapter's first word in capitals ("EN el principio", "Y FUERON acabados",
  after a psalm's title too): the first all-capital word of a chapter's first verse is
  lower-cased after its first letter. Where the first word is short, RV1909 capitalises the
  second as well ("LA SEGUNDA suerte"); that second word stays as it is (10 chapters),
  and "Y FUERON" becomes "Y Fueron". The stored models were trained on this text, so it stays.
- RV1909's colophons after the last verse of Romans to Hebrews ("Fué escrita de Corinto ..."):
  not in the English.
- Chapters whose two modules hold different numbers of verses (the modules number verses
  differently in places: WEB follows NRSVA, RV1909 the KJV), and the chapter after each: there
  a verse has moved across the chapter boundary ("Jonah 1:17" is NRSVA's "Jonah 2:1"), so every
  verse of the next chapter would pair with its neighbour's translation.
"""

from __future__ import annotations

import argparse
import functools
import html
import lzma
import re
from pathlib import Path

ENGLISH, SPANISH = "engWEB2015eb", "spaRV1909eb"
CORPUS = Path(__file__).with_name("corpus.tsv.xz")
EPISTLES_WITH_COLOPHONS = ("Rom", "1Cor", "2Cor", "Gal", "Eph", "Phil", "Col", "1Thess", "2Thess",
                           "1Tim", "2Tim", "Titus", "Phlm", "Heb")
_DROPPED_ELEMENTS = re.compile(
    r"<note\b.*?</note>|<title\b(?![^>]*canonical=\"true\")[^>]*>.*?</title>"
    r"|<speaker\b.*?</speaker>", re.S)
_TAG = re.compile(r"<[^>]+>")
_SPACE_BEFORE_CLOSING = re.compile(r"\s+([,.;:!?)\]’”])")
_SPACE_AFTER_OPENING = re.compile(r"([(\[‘“¡¿])\s+")
_CAPITALISED_WORD = re.compile(r"\b([A-ZÁÉÍÓÚÑÜ])([A-ZÁÉÍÓÚÑÜ]+)\b")
_COLOPHON = re.compile(r"(Amén\.)\s+[^.]*\b(?i:escrita|enviada)\b.*$", re.S)


def clean(raw: str) -> str:
    """One verse's OSIS markup as plain text on one line."""
    text = _DROPPED_ELEMENTS.sub(" ", raw)
    text = html.unescape(_TAG.sub(" ", text))
    text = " ".join(text.split())
    text = _SPACE_BEFORE_CLOSING.sub(r"\1", text)
    return _SPACE_AFTER_OPENING.sub(r"\1", text)


def _chapter(bible, book: str, chapter: int, verses: int) -> list[str]:
    return [clean(bible.get(books=[book], chapters=[chapter], verses=[v], clean=False))
            for v in range(1, verses + 1)]


def _decompressing_each_block_once(bible):
    """``bible`` with its blocks' decompression remembered. pysword (0.2.8) decompresses a
    verse's whole compressed block (a book or more) again for every verse it reads, which made
    the extraction take minutes; the text it returns is the same."""
    bible._decompressed_text = functools.lru_cache(maxsize=4)(bible._decompressed_text)
    return bible


def extract(sword_root: Path) -> tuple[list[tuple[str, int, int, str, str]], list[str]]:
    """Every verse pair of the chapters both modules number alike: (book, chapter, verse,
    English, Spanish), in canonical order; and the chapters dropped ("Num 12")."""
    from pysword.modules import SwordModules  # the extraction's own need, not the package's

    modules = SwordModules(str(sword_root))
    modules.parse_modules()
    english, spanish = (_decompressing_each_block_once(modules.get_bible_from_module(name))
                        for name in (ENGLISH, SPANISH))
    english_books = {book.osis_name: book for testament in
                     english.get_structure().get_books().values() for book in testament}
    pairs, dropped = [], []
    for testament in spanish.get_structure().get_books().values():
        for book in testament:  # the 66 books of the Spanish; the English has them all
            en_book, mismatch = english_books[book.osis_name], False
            for chapter in range(1, book.num_chapters + 1):
                es = _chapter(spanish, book.osis_name, chapter, book.chapter_lengths[chapter - 1])
                en = _chapter(english, book.osis_name, chapter,
                              en_book.chapter_lengths[chapter - 1])
                after_mismatch, mismatch = mismatch, (sum(map(bool, en)) != sum(map(bool, es))
                                                      or len(en) != len(es))
                if mismatch or after_mismatch:  # after: shifted by the verse that crossed over
                    dropped.append(f"{book.osis_name} {chapter}")
                    continue
                es[0] = _CAPITALISED_WORD.sub(lambda m: m[1] + m[2].lower(), es[0], count=1)
                if chapter == book.num_chapters:
                    if book.osis_name in EPISTLES_WITH_COLOPHONS:
                        es[-1] = _COLOPHON.sub(r"\1", es[-1])
                    if book.osis_name == "Rev":  # WEB's glossary follows the last verse
                        en[-1] = en[-1][:en[-1].index("Amen.") + len("Amen.")]
                pairs += [(book.osis_name, chapter, verse, e, s)
                          for verse, (e, s) in enumerate(zip(en, es, strict=True), 1) if e and s]
    return pairs, dropped


def write(pairs: list[tuple[str, int, int, str, str]], path: Path = CORPUS) -> None:
    """The pairs as tab-separated lines, xz-compressed (byte-identical for the same pairs)."""
    lines = "".join(f"{b}\t{c}\t{v}\t{e}\t{s}\n" for b, c, v, e, s in pairs)
    path.write_bytes(lzma.compress(lines.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sword_root", type=Path, help="the folder holding mods.d/ and modules/")
    parser.add_argument("--out", type=Path, default=CORPUS)
    args = parser.parse_args()
    pairs, dropped = extract(args.sword_root)
    write(pairs, args.out)
    print(f"{len(pairs)} verse pairs written to {args.out}; {len(dropped)} chapters dropped "
          f"(verse numbering differs): {', '.join(dropped)}")


if __name__ == "__main__":
    main()
