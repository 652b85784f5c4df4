"""Reading a German number word back into its number, and sorting wrong outputs into classes.

An output is parsed morpheme by morpheme and then checked by writing the number out again with
``num2words``: only the canonical spelling counts as a number word.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .number_corpus import MAX_NUMBER, number_words
from .subwords import GermanMorphemes

DIGITS = {"ein": 1, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6,
          "sieben": 7, "acht": 8, "neun": 9}
STEMS = {"drei": 3, "vier": 4, "fünf": 5, "sech": 6, "sieb": 7, "acht": 8, "neun": 9}
PLACES = ("units", "tens", "hundreds", "thousands", "ten-thousands", "hundred-thousands")


def _tens(tokens: list[str]) -> int | None:
    """20 .. 90 from ["zwanzig"] or [stem, "zig" | "ßig"]."""
    if tokens == ["zwanzig"]:
        return 20
    if len(tokens) == 2 and tokens[0] in STEMS and tokens[1] in ("zig", "ßig"):
        return 10 * STEMS[tokens[0]]
    return None


def _below_hundred(tokens: list[str]) -> int | None:
    """0 .. 99 from the morphemes after "hundert" (or of a whole small number)."""
    if not tokens:
        return 0
    if len(tokens) == 1 and tokens[0] in DIGITS:
        return DIGITS[tokens[0]]
    teens = {("zehn",): 10, ("elf",): 11, ("zwölf",): 12}
    if tuple(tokens) in teens:
        return teens[tuple(tokens)]
    if len(tokens) == 2 and tokens[0] in STEMS and tokens[1] == "zehn":
        return 10 + STEMS[tokens[0]]
    if len(tokens) >= 3 and tokens[0] in DIGITS and tokens[1] == "und":
        tens = _tens(tokens[2:])
        return None if tens is None else DIGITS[tokens[0]] + tens
    return _tens(tokens)


def _group(tokens: list[str]) -> int | None:
    """0 .. 999 from the morphemes of one group."""
    if "hundert" in tokens:
        i = tokens.index("hundert")
        if i != 1 or tokens[0] not in DIGITS:
            return None
        rest = _below_hundred(tokens[2:])
        return None if rest is None else 100 * DIGITS[tokens[0]] + rest
    return _below_hundred(tokens)


def german_to_number(text: str) -> int | None:
    """The number 1 .. 999,999 that ``num2words`` writes as ``text`` in German, else None."""
    try:
        tokens = GermanMorphemes().split(text)
    except ValueError:
        return None
    if "tausend" in tokens:
        i = tokens.index("tausend")
        upper, lower = _group(tokens[:i]), _group(tokens[i + 1:])
        value = None if upper is None or lower is None else 1000 * upper + lower
    else:
        value = _group(tokens)
    if value is None or not 1 <= value <= MAX_NUMBER:
        return None
    return value if number_words(value, "de") == text else None


def classify_error(number: int, output: str) -> str:
    """What is wrong with ``output`` as the German for ``number``.

    Classes: "correct"; "not a number word" (no canonical spelling of any number);
    "wrong magnitude" (a number with another count of digits, e.g. a dropped group);
    "digits swapped" (the same digits in another order); "wrong <place> digit" (one place
    wrong, e.g. "wrong thousands digit"); "several digits wrong".
    """
    if output == number_words(number, "de"):
        return "correct"
    value = german_to_number(output)
    if value is None:
        return "not a number word"
    want, got = str(number), str(value)
    if len(want) != len(got):
        return "wrong magnitude"
    if sorted(want) == sorted(got):
        return "digits swapped"
    wrong = [PLACES[len(want) - 1 - i] for i, (a, b) in enumerate(zip(want, got, strict=True))
             if a != b]
    return f"wrong {wrong[0]} digit" if len(wrong) == 1 else "several digits wrong"


def error_classes(numbers: Sequence[int], outputs: Sequence[str]) -> Counter[str]:
    """How many outputs fall into each class of :func:`classify_error` ("correct" included)."""
    return Counter(classify_error(int(n), o) for n, o in zip(numbers, outputs, strict=True))
