"""A chapter's executed notebook made readable wherever Jupyter runs, with that execution's values.

The site renders MyST that Jupyter cannot: glue roles and directives (numbers and tables computed
by the chapter), numbered references, exercises and solutions, included source. A notebook that
kept them would show ``{glue:text}`` roles where the page shows numbers. :func:`readable_notebook`
rewrites every Markdown cell into plain Markdown: a glued number becomes its text (formatted as
MyST-NB formats it), a glued table its Markdown, a figure directive its numbered caption (the
figure itself is the output of the cell above it), a reference its number or title, a citation
its author-year text ("Vaswani et al. (2017)", from the book's ``.bib``), an exercise or solution a
headed block, an included function its source. Code cells and outputs are kept.
For the student edition, :func:`without_solutions` first drops every solution: ``{solution}``
blocks, and everything from a ``{solution-start}`` to its ``{solution-end}``, code cells included.

Anything left that still looks like MyST (a role or directive this module does not know) is an
error, so a new construct in a chapter fails the build instead of reaching a reader raw.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from citations import ROLES as CITE_ROLES
from citations import Cited, citation_text
from exercise_difficulty import LEVELS, difficulty, estimate_text, minutes
from myst_nb.core.variables import format_plain_text

ROLE = re.compile(r"\{(?P<name>[a-z][a-z:-]*)\}`(?P<text>[^`]*)`")
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z][a-z:-]*)\}[ \t]*(?P<arg>.*)$")
OPTION = re.compile(r"^:(?P<key>[a-z_-]+):[ \t]*(?P<value>.*)$")
TARGET = re.compile(r"^\([A-Za-z0-9_.:-]+\)=[ \t]*$")  # a MyST label line, (fig-x)=
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$")  # "text <target>"


class UnreadableMySTError(ValueError):
    """A role or directive :func:`readable_markdown` does not know how to write as Markdown."""


@dataclass(frozen=True)
class SiteFacts:
    """What the built site knows and a notebook cannot work out: numbers, titles, files."""

    numbers: Mapping[str, str]  # label -> "Figure 4.2", "Table 7.1", "Exercise 3.2"
    titles: Mapping[str, str]  # label or docname ("book/04_x") -> its title
    glued: Mapping[str, Mapping[str, Any]]  # glue key -> mime bundle of that execution
    docname: str  # the chapter being rewritten, "book/04_positional_encoding"
    read_include: Callable[[str, Mapping[str, str]], str] = field(
        default=lambda path, options: Path(path).read_text())  # literalinclude's text
    summary: str = ""  # the {chapter-facts} line: reading and run time (tools/chapter_facts.py)
    costs: Mapping[str, str] = field(default_factory=dict)  # docname -> {chapter-cost} text
    works: Mapping[str, Cited] = field(default_factory=dict)  # bib key -> authors and year
    # docnames of the pages that are notebooks too ({doc} links to them); None: every page
    notebooks: frozenset[str] | None = None
    tags: frozenset[str] = frozenset()  # the build's Sphinx tags ("student"), for {only}


def _explicit(text: str) -> tuple[str | None, str]:
    """``"words <target>"`` -> ("words", "target"); ``"target"`` -> (None, "target")."""
    match = EXPLICIT.match(text)
    return (match["text"], match["target"]) if match else (None, text.strip())


def _lookup(table: Mapping[str, str], key: str, what: str) -> str:
    if key not in table:
        raise UnreadableMySTError(f"no {what} for {key!r}")
    return table[key]


def _role(name: str, text: str, facts: SiteFacts) -> str:
    """One inline role as plain Markdown."""
    if name == "glue:text":
        key, _, spec = text.rpartition(":") if ":" in text else (text, "", "s")
        bundle = _lookup(facts.glued, key, "glued value")
        return format_plain_text(bundle["text/plain"], spec or "s")
    if name == "numref":
        words, label = _explicit(text)
        number = _lookup(facts.numbers, label, "number")
        return words.replace("%s", number.split(" ", 1)[-1]) if words else number
    if name in ("ref", "doc"):
        words, target = _explicit(text)
        if name == "doc":
            docname = str(Path(facts.docname).parent / target)
            title = words or _lookup(facts.titles, docname, "title")
            if facts.notebooks is not None and docname not in facts.notebooks:
                return title  # a page of the site only (the references): no notebook to open
            return f"[{title}]({Path(target).name}.ipynb)"
        return words or _lookup(facts.titles, target, "title")
    if name in CITE_ROLES:
        try:
            return citation_text(name, text, facts.works)
        except (KeyError, ValueError) as error:  # a key not in the .bib, malformed targets
            raise UnreadableMySTError(f"citation {text!r} in {facts.docname}: {error}") from error
    if name == "chapter-cost":
        return _lookup(facts.costs, str(Path(facts.docname).parent / text.strip()), "cost")
    raise UnreadableMySTError(f"role {{{name}}} in {facts.docname}")


def readable_inline(text: str, facts: SiteFacts) -> str:
    """Every role in ``text`` replaced by its Markdown."""
    return ROLE.sub(lambda role: _role(role["name"], role["text"], facts), text)


def _split_options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's leading ``:key: value`` lines, and the rest (a blank line after them
    dropped)."""
    options: dict[str, str] = {}
    while body and OPTION.match(body[0]):
        match = OPTION.match(body[0])
        options[match["key"]] = match["value"].strip()
        body = body[1:]
    return options, body[1:] if body and not body[0].strip() else body


def _quote(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in text.splitlines())


def _directive(name: str, arg: str, body: list[str], facts: SiteFacts) -> str:
    """One directive as plain Markdown."""
    options, content = _split_options(body)
    inner = readable_markdown("\n".join(content), facts).strip()
    if name == "glue:figure":
        caption = f"*{inner}*" if inner else ""
        label = options.get("name")
        head = f"**{_lookup(facts.numbers, label, 'number') if label else 'Figure'}** (shown above)"
        return f"{head}: {caption}" if caption else head
    if name == "glue:md":
        return str(_lookup(facts.glued, arg.strip(), "glued value")["text/markdown"]).strip()
    if name == "table":
        label = options.get("name")
        head = f"**{_lookup(facts.numbers, label, 'number')}.**" if label else "**Table.**"
        return f"{head} {readable_inline(arg.strip(), facts)}\n\n{inner}"
    if name == "exercise":
        label = options.get("label", "")
        number = facts.numbers.get(label, "Exercise")
        title = f" ({readable_inline(arg.strip(), facts)})" if arg.strip() else ""
        return f"**{number}**{title}{_difficulty(options.get('class', ''))}\n\n{inner}".strip()
    if name in ("solution", "solution-start"):
        target = arg.strip()
        return f"**Solution to {facts.numbers.get(target, 'the exercise')}**\n\n{inner}".strip()
    if name == "solution-end":
        return "*End of the solution.*"
    if name in ("important", "note", "tip", "warning"):
        return _quote(f"**{name.capitalize()}.** {inner}")
    if name == "admonition":
        return _quote(f"**{readable_inline(arg.strip(), facts)}.** {inner}")
    if name == "only":  # Sphinx's: kept when its tag expression ("student", "not student") holds
        words = arg.split()
        negated = words[:1] == ["not"]
        if len(words) != 1 + negated:
            raise UnreadableMySTError(f"{{only}} {arg.strip()!r} in {facts.docname}: one tag, or "
                                      "not and one tag")
        return inner if (words[-1] in facts.tags) != negated else ""
    if name == "chapter-facts":
        return facts.summary
    if name == "literalinclude":
        return f"```python\n{facts.read_include(arg.strip(), options).rstrip()}\n```"
    raise UnreadableMySTError(f"directive {{{name}}} in {facts.docname}")


def _difficulty(classes: str) -> str:
    """An exercise's difficulty and time classes (``difficulty-2 minutes-15``) as the site shows
    them: stars, a word and the estimate (``exercise_difficulty.py``)."""
    level = difficulty(classes.split())
    if level is None:
        return ""
    return (f" {'★' * level}{'☆' * (len(LEVELS) - level)} {LEVELS[level]}"
            f"{estimate_text(minutes(classes.split()))}")


def _closing_line(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the directive opened at ``lines[start]`` with ``fence``
    (len(lines) when it is never closed)."""
    closing = re.compile(rf"{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
    return next((j for j in range(start + 1, len(lines)) if closing.fullmatch(lines[j])),
                len(lines))


def without_solutions(text: str, inside: bool = False) -> tuple[str, bool]:
    """``text`` (MyST) without its solutions, and whether it ends inside a gated solution.

    A ``{solution}`` directive goes whole; a ``{solution-start}`` directive and everything after
    it goes, up to and including its ``{solution-end}`` directive, which may come in a later cell
    (pass the returned flag as ``inside`` for the next cell).

    Args:
        text: a Markdown cell's source, or a whole MyST Markdown file.
        inside: whether ``text`` starts inside a gated solution.
    """
    lines, kept, i = text.splitlines(), [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        name = opening["name"] if opening else ""
        if inside or name in ("solution", "solution-start"):
            if name in ("solution", "solution-start", "solution-end"):
                i = _closing_line(lines, i, opening["fence"])
                inside = name == "solution-start" or (inside and name == "solution")
            i += 1
            continue
        kept.append(lines[i])
        i += 1
    return "\n".join(kept).strip("\n"), inside


def notebook_without_solutions(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` (MyST Markdown cells) without its solutions: their Markdown, and
    the code cells between a ``{solution-start}`` and its ``{solution-end}``."""
    kept, inside = [], False
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            source, after = without_solutions(cell.source, inside)
            if source.strip():
                kept.append(nbformat.from_dict({**copy.deepcopy(cell), "source": source}))
            inside = after
        elif not inside:
            kept.append(copy.deepcopy(cell))
    stripped = copy.deepcopy(notebook)
    stripped.cells = kept
    return stripped


def readable_markdown(text: str, facts: SiteFacts) -> str:
    """A Markdown cell's MyST as plain Markdown (directives, roles and label lines)."""
    lines, out, i = text.splitlines(), [], 0
    plain: list[str] = []
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            if not TARGET.match(lines[i]):
                plain.append(lines[i])
            i += 1
            continue
        out.append(readable_inline("\n".join(plain), facts))
        plain = []
        end = _closing_line(lines, i, opening["fence"])
        out.append(_directive(opening["name"], opening["arg"], lines[i + 1:end], facts))
        i = end + 1
    out.append(readable_inline("\n".join(plain), facts))
    return "\n".join(out).strip("\n")


def readable_notebook(notebook: nbformat.NotebookNode, facts: SiteFacts,
                      first_cells: Sequence[nbformat.NotebookNode] = (), *,
                      solutions: bool = True) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with every Markdown cell readable, ``first_cells`` in front, and
    without its solutions unless ``solutions``."""
    readable = copy.deepcopy(notebook) if solutions else notebook_without_solutions(notebook)
    for cell in readable.cells:
        if cell.cell_type == "markdown":
            cell.source = readable_markdown(cell.source, facts)
    readable.cells = [*first_cells, *readable.cells]
    return readable


def leftover_myst(notebook: nbformat.NotebookNode) -> list[str]:
    """Roles and directive fences still in the Markdown cells (fenced code aside)."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            text = re.sub(r"^```python\n.*?^```$", "", cell.source, flags=re.DOTALL | re.MULTILINE)
            found += [m[0] for m in ROLE.finditer(text)]
            found += [line for line in text.splitlines() if FENCE.match(line)]
    return found
