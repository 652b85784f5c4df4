"""Sphinx extension: the book's citations, author-year in round brackets, and their plain text.

The pages cite the works in ``references.bib`` with sphinxcontrib-bibtex's roles: ``{cite:t}``
for "Vaswani et al. (2017)", ``{cite:p}`` for "(Vaswani et al., 2017)", with optional text before
and after a key as the extension defines it (``{cite:p}`{RoPE;}su2024roformer``,
``{cite:t}`vaswani2017attention{section 3}```). sphinxcontrib-bibtex's own ``author_year`` style
puts years in square brackets; this registers the same style with round ones (and "; " between
the works of one citation) as ``author_year_round``, the name ``_config.yml`` selects.

:func:`citation_text` writes the same citations as plain text, for the downloaded notebooks
(``readable_notebook.py``), from the entries :func:`read_bibliography` reads with pybtex.

The references page's entries are a list: docutils marks the list ``role="list"`` and each entry
``role="doc-biblioentry"``, a role DPUB-ARIA 1.1 deprecated and axe-core does not accept as a
list's item (a critical violation); :func:`listed_entries` makes each entry a ``listitem``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sphinxcontrib.bibtex.citation_target import parse_citation_targets
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

STYLE_NAME = "author_year_round"
LEFT, RIGHT, BETWEEN = "(", ")", "; "  # brackets, and what separates two works in one citation
ROLES = ("cite:p", "cite:t")  # the roles the notebooks' text supports


def _round() -> BracketStyle:
    return BracketStyle(left=LEFT, right=RIGHT, sep=BETWEEN)


@dataclass
class RoundAuthorYearStyle(AuthorYearReferenceStyle):
    """sphinxcontrib-bibtex's author-year referencing style with round brackets."""

    bracket_textual: BracketStyle = field(default_factory=_round)
    bracket_parenthetical: BracketStyle = field(default_factory=_round)
    bracket_author: BracketStyle = field(default_factory=_round)
    bracket_label: BracketStyle = field(default_factory=_round)
    bracket_year: BracketStyle = field(default_factory=_round)


@dataclass(frozen=True)
class Cited:
    """What a citation shows of a work: its authors as a citation names them, and its year."""

    authors: str  # "Vaswani et al.", "Jain and Wallace", "Post"
    year: str


def _surname(person: Any, text_backend: Any) -> str:
    """A pybtex person's surname as a citation shows it ("van Merriënboer"), LaTeX decoded."""
    from pybtex.richtext import Text

    return Text.from_latex(" ".join(person.prelast_names + person.last_names)).render(
        text_backend)


def read_bibliography(paths: Iterable[Path]) -> dict[str, Cited]:
    """Every entry of the ``.bib`` files at ``paths``: key -> what a citation shows of it. One
    author: the surname; two: both, joined by "and"; more: the first and "et al." (as the site).

    Args:
        paths: BibTeX files (UTF-8).
    """
    from pybtex.backends.plaintext import Backend
    from pybtex.database import parse_file

    # one backend for every name: pybtex's render_as("text") looks its plugin up through the
    # installed packages' entry points on every call (about 27 ms each)
    text_backend, cited = Backend(), {}
    for path in paths:
        for key, entry in parse_file(str(path), bib_format="bibtex").entries.items():
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            names = [_surname(person, text_backend) for person in people]
            if len(names) > 2:
                authors = f"{names[0]} et al."
            else:
                authors = " and ".join(names) or entry.fields.get("title", key)
            cited[key] = Cited(authors, entry.fields.get("year", "n.d."))
    return cited


def citation_text(role: str, targets: str, works: Mapping[str, Cited]) -> str:
    """A ``{cite:p}`` or ``{cite:t}`` role as plain text, as the site renders it.

    Args:
        role: ``"cite:p"`` or ``"cite:t"``.
        targets: the role's text: keys separated by commas, each with optional ``{pre}`` text
            before it and ``{post}`` text after it. The site lists the works of one citation in
            the order of the references page (by author), this in the order given: write the
            keys in that order.
        works: key -> :class:`Cited` (:func:`read_bibliography`).

    Raises:
        KeyError: a key that ``works`` does not hold.
        ValueError: another role, or targets sphinxcontrib-bibtex cannot parse.
    """
    if role not in ROLES:
        raise ValueError(f"role: expected one of {ROLES}; got {role!r}")
    parts = []
    for target in parse_citation_targets(targets):
        work = works[target.key]
        if role == "cite:p":
            inner = ", ".join(filter(None, [work.authors, work.year, target.post]))
            parts.append(" ".join(filter(None, [target.pre, inner])))
        else:
            inner = " ".join(filter(None, [target.pre,
                                           ", ".join(filter(None, [work.year, target.post]))]))
            parts.append(f"{work.authors} {LEFT}{inner}{RIGHT}")
    text = BETWEEN.join(parts)
    return f"{LEFT}{text}{RIGHT}" if role == "cite:p" else text


def bibliography_files(app: Any) -> list[Path]:
    """The ``.bib`` files the build reads (``bibtex_bibfiles``, relative to the configuration)."""
    return [Path(app.confdir) / name for name in app.config.bibtex_bibfiles or []]


ENTRY_ROLE = 'role="doc-biblioentry"'


def listed_entries(body: str) -> str:
    """A page's HTML with every bibliography entry a ``listitem`` of its list."""
    return body.replace(ENTRY_ROLE, 'role="listitem"')


def _list_the_entries(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                      doctree: Any) -> None:
    if ENTRY_ROLE in context.get("body", ""):
        context["body"] = listed_entries(context["body"])


def setup(app: Any) -> dict[str, Any]:
    """Register the round-bracket author-year style (before sphinxcontrib-bibtex looks it up)
    and the entries' list role."""
    register_plugin("sphinxcontrib.bibtex.style.referencing", STYLE_NAME, RoundAuthorYearStyle)
    app.connect("html-page-context", _list_the_entries)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
