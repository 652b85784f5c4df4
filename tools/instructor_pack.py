"""The instructor's pack: everything to teach from, offline, in one folder and one zip.

    python tools/instructor_pack.py BOOK OUT --student DIR --pdf FILE [--jobs N]
    (make pack: _build/pack and _build/instructor-pack.zip)

- ``site/`` and ``notebooks/``: the student edition (``make student``): the site and every
  chapter's notebook, without the solutions;
- ``book.pdf``: the whole book (``make pdf``);
- ``assignments/``: the students' assignment notebooks (``make assignments``: a stub and its
  visible tests per exercise with a checker), and ``RUBRICS.md`` for the exercises marked by hand;
- ``figures/``: every figure the chapters draw, as SVG and as 200-dpi PNG named by its glue key
  (``ch4-heatmap.svg``), each carrying the CC BY 4.0 licence in its metadata, and ``index.csv``
  with each figure's chapter, caption and attribution line. The chapters are run again for it
  (``tools/run_chapters.py``, in fresh kernels) with ``TRANSFORMER_COURSE_FIGURE_PACK`` set;
- ``slides/``: one reveal.js deck per chapter, its main path's figures and display equations in
  the order the page shows them, under the page's section headings, each with its key sentence
  and the page's paragraphs as speaker notes (a section with neither gets a slide of words, its
  first sentence); an equation too wide for the slide is shrunk to fit; reveal.js and MathJax are
  local copies, so a deck opens with no network (reveal.js from ``tools/npm_assets.py``, MathJax
  from the site's own ``_static/``).

Figure captions and equations are read from the built site's HTML, where every glued number is
filled in, so a slide says what the page says.
"""

from __future__ import annotations

import argparse
import csv
import html
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, Tag

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

import assignment_notebooks  # noqa: E402
import binder_links  # noqa: E402
import npm_assets  # noqa: E402
import toc_chapters  # noqa: E402

FIGURE_PACK_ENV = "TRANSFORMER_COURSE_FIGURE_PACK"  # transformer_course.notebook's
GLUE_FIGURE = re.compile(r"^```\{glue:figure\}\s+(\S+)\s*\n(?::[^\n]*\n)*", re.MULTILINE)
FIGURE_NAME = re.compile(r"^:name:\s*(\S+)", re.MULTILINE)
MAIN_PATH_ENDS = ("Summary", "Exercises", "Lab notes")  # the first of these headings ends it
LICENCE_URL = "https://creativecommons.org/licenses/by/4.0/"


@dataclass(frozen=True)
class Slide:
    """One slide: the section it belongs to, its HTML body (an image, an equation or nothing),
    its key sentence, and the speaker notes: the main path's paragraphs it stands for."""

    section: str
    body: str
    key: str = ""
    notes: tuple[str, ...] = ()


# a paragraph inside one of these is not main-path prose (a caption, a fold, a cell's output)
NOT_PROSE = ("figure", "details", "table", "aside", "nav")
NOT_PROSE_CLASSES = ("admonition", "cell", "cell_output", "output", "dropdown", "toggle",
                     "proof", "exercise", "solution")
MARKER = "\u2063"  # invisible: marks a link's place in a paragraph's text (sentence_citing)
SENTENCE_END = re.compile(rf"(?<=[.!?])\s+(?=(?:{MARKER}\s*)?[A-Z\"“(])")


def is_prose(tag: Tag) -> bool:
    """A main-path paragraph: not inside a figure, a fold, a table, a cell or an exercise."""
    return not any(parent.name in NOT_PROSE or set(parent.get("class", [])) & set(
        NOT_PROSE_CLASSES) for parent in tag.parents)


def first_sentence(text: str) -> str:
    """The paragraph's first sentence."""
    return SENTENCE_END.split(text, maxsplit=1)[0]


def sentence_citing(paragraph: Tag, target: str) -> str:
    """The sentence of ``paragraph`` that links to ``#target`` ('' if none does)."""
    link = paragraph.find("a", href=lambda h: h is not None and h.endswith(f"#{target}"))
    if link is None:
        return ""
    link.insert_before(MARKER)
    sentences = SENTENCE_END.split(_text(paragraph))
    link.previous_sibling.extract()
    return " ".join(next(s for s in sentences if MARKER in s).replace(MARKER, " ").split())


def figure_keys(source: Path) -> dict[str, str]:
    """The page's glued figures: figure name (``fig-ch4-heatmap``) -> glue key."""
    keys = {}
    for match in GLUE_FIGURE.finditer(source.read_text(encoding="utf-8")):
        name = FIGURE_NAME.search(match.group(0))
        keys[name.group(1) if name else match.group(1)] = match.group(1)
    return keys


def _text(tag: Tag) -> str:
    """The tag's text on one line, without Sphinx's "#" permalinks."""
    for link in tag.select("a.headerlink"):
        link.decompose()
    return " ".join(tag.get_text(" ").split())


def read_article(page: Path) -> Tag:
    """The built page's article (its content, without the theme's frame)."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    return soup.select_one("article.bd-article")


def figure_captions(article: Tag, keys: dict[str, str]) -> dict[str, str]:
    """Each glued figure's numbered caption as the page shows it, by glue key ('' if none)."""
    captions = {}
    for name, key in keys.items():
        figure = article.find("figure", id=name)
        caption = figure.find("figcaption") if figure else None
        captions[key] = _text(caption) if caption else ""
    return captions


def main_path_slides(article: Tag, keys: dict[str, str]) -> tuple[str, list[Slide]]:
    """The chapter's title and its main path as slides, in page order, from the built page's
    article (glued numbers filled in, captions numbered): each figure and display equation a
    slide, and a slide of words for a section with neither. A slide's key sentence is the one
    that cites its figure, else its section's first; its notes are the paragraphs since the
    slide before it (a section's last slide takes the rest of the section's; a figure with none
    before it, the paragraph that cites it)."""
    title = _text(article.find("h1"))
    captions = figure_captions(article, keys)
    citing: dict[str, tuple[str, str]] = {}  # figure -> (the sentence, its paragraph)
    for paragraph in filter(is_prose, article.find_all("p")):
        for name in keys:
            if name not in citing and (sentence := sentence_citing(paragraph, name)):
                citing[name] = (sentence, _text(paragraph))
    slides: list[Slide] = []
    section, section_key, section_start, pending = title, "", 0, []

    def close_section() -> None:
        if len(slides) == section_start and pending:  # words only: one slide of them
            slides.append(Slide(section, "", section_key, tuple(pending)))
        elif pending:
            last = slides[-1]
            slides[-1] = Slide(last.section, last.body, last.key, last.notes + tuple(pending))
        pending.clear()

    for tag in article.find_all(["h2", "figure", "div", "p"]):
        if tag.name == "h2":
            close_section()
            section, section_key, section_start = _text(tag), "", len(slides)
            if section.startswith(MAIN_PATH_ENDS):
                break
        elif tag.name == "p" and is_prose(tag) and _text(tag):
            pending.append(_text(tag))
            section_key = section_key or first_sentence(pending[-1])
        elif tag.name == "figure" and tag.get("id") in keys:
            key = keys[tag["id"]]
            sentence, paragraph = citing.get(tag["id"], ("", ""))
            # a figure with no prose before it takes, as its notes, the paragraph citing it
            notes = tuple(pending) or ((paragraph,) if paragraph else ())
            slides.append(Slide(section, (
                f'<img src="../figures/{key}.svg" alt="{html.escape(tag.img.get("alt", ""))}">'
                f'<p class="caption">{html.escape(captions[key])}</p>'),
                sentence or section_key, notes))
            pending.clear()
        elif tag.name == "div" and "math" in tag.get("class", []) and not tag.find_parent(
                ["figure", "details"]):
            slides.append(Slide(section, f'<div class="equation">{html.escape(_text(tag))}</div>',
                                section_key, tuple(pending)))
            pending.clear()
    else:
        close_section()
    return title, slides


def deck(title: str, slides: list[Slide], course: str, source: str) -> str:
    """A reveal.js deck: a title slide, the slides, and a closing slide with the attribution."""
    sections = [f"<section><h1>{html.escape(title)}</h1><p>{html.escape(course)}</p></section>"]
    sections += [f"<section><h3>{html.escape(s.section)}</h3>"
                 + (f'<p class="key">{html.escape(s.key)}</p>' if s.key else "") + s.body
                 + ('<aside class="notes">' + "".join(f"<p>{html.escape(n)}</p>" for n in s.notes)
                    + "</aside>" if s.notes else "") + "</section>" for s in slides]
    sections.append(f"<section><p>{html.escape(course)}: {html.escape(source)}</p>"
                    f'<p>Text and figures: <a href="{LICENCE_URL}">CC BY 4.0</a>.</p></section>')
    body = "\n".join(sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<link rel="stylesheet" href="assets/reveal.js/dist/reveal.css">
<link rel="stylesheet" href="assets/reveal.js/dist/theme/white.css">
<style>
.reveal img {{ max-height: 46vh; max-width: 90%; }}
.reveal p.key {{ font-size: 0.6em; }}
.reveal p.caption {{ font-size: 0.42em; text-align: left; }}
.reveal .equation {{ font-size: 0.9em; }}
.reveal h3 {{ font-size: 1.1em; }}
.reveal h3 mjx-container {{ text-transform: none; }}  /* the theme's capitals would change d */
</style>
<script>
// an equation wider than its slide is shrunk to fit, each time its slide is shown (a hidden slide
// has no width to measure) and again once the fonts MathJax asked for have loaded (the width
// measured before that is the fallback font's)
function fitEquations(slide) {{
  for (const box of (slide ? slide.querySelectorAll(".equation") : [])) {{
    const math = box.querySelector("mjx-container");
    if (!math || !box.clientWidth) continue;
    math.dataset.scale ??= parseFloat(math.style.fontSize || "100");  // MathJax sets its own
    math.style.fontSize = `${{math.dataset.scale}}%`;
    if (math.scrollWidth > box.clientWidth) {{
      math.style.fontSize =
        `${{Math.floor(95 * math.dataset.scale * box.clientWidth / math.scrollWidth) / 100}}%`;
    }}
  }}
}}
document.fonts.addEventListener("loadingdone", () => fitEquations(
  window.Reveal && Reveal.isReady() ? Reveal.getCurrentSlide() : null));
window.MathJax = {{ tex: {{ inlineMath: [["\\\\(", "\\\\)"]] }}, startup: {{ pageReady() {{
  return MathJax.startup.defaultPageReady().then(() => fitEquations(
    window.Reveal && Reveal.isReady() ? Reveal.getCurrentSlide() : null));
}} }} }};
</script>
<script defer src="../site/_static/mathjax/tex-chtml.js"></script>
</head>
<body>
<div class="reveal"><div class="slides">
{body}
</div></div>
<script src="assets/reveal.js/dist/reveal.js"></script>
<script src="assets/reveal.js/dist/plugin/notes.js"></script>
<script>
Reveal.initialize({{ hash: true, slideNumber: true, plugins: [RevealNotes] }});
for (const event of ["ready", "slidechanged"]) {{
  Reveal.on(event, (e) => fitEquations(e.currentSlide));
}}
</script>
</body>
</html>
"""


def run_for_figures(book: Path, chapters: list[Path], figures: Path, jobs: int) -> None:
    """Run the chapters again (fresh kernels) with the figure export on."""
    done = subprocess.run([sys.executable, str(TOOLS / "run_chapters.py"), "--jobs", str(jobs),
                           "--set", f"{FIGURE_PACK_ENV}={figures}", *map(str, chapters)], cwd=book,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"a chapter failed while exporting its figures:\n{done.stdout}"
                           f"\n{done.stderr[-3000:]}")


def write_pack(book: Path, out: Path, student: Path, pdf: Path, jobs: int = 1,
               only: list[Path] | None = None) -> Path:
    """Write the pack for the book in ``book`` into ``out`` (replaced); return the zip's path.
    ``only``: the chapters (``book/04_positional_encoding.md``) whose figures and slides to make
    (tests); every chapter by default."""
    chapters = only or toc_chapters.chapters(book, notebooks_only=True)
    for needed in (student / "html" / "index.html", student / "notebooks", pdf):
        if not needed.exists():
            raise FileNotFoundError(f"{needed} is missing: run `make student` and `make pdf`")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(student / "html", out / "site")
    shutil.copytree(student / "notebooks", out / "notebooks")
    shutil.copy2(pdf, out / "book.pdf")
    assignment_notebooks.write_release(out / "assignments")
    shutil.copy2(assignment_notebooks.RUBRICS, out / "assignments")
    run_for_figures(book, chapters, out / "figures", jobs)

    config = binder_links.load_config(book)
    course = config.get("title", "Attention, executed")
    source = str(config["repository"]["url"])
    rows = []
    # fetched once into the build folder (its stamp makes later packs skip the download)
    reveal = npm_assets.fetch("reveal.js", book / "_build" / "npm" / "reveal.js")
    shutil.copytree(reveal, out / "slides" / "assets" / "reveal.js",
                    ignore=shutil.ignore_patterns(".version"))
    site = book / "_build" / "html"
    for chapter in chapters:
        keys = figure_keys(book / chapter)
        article = read_article(site / chapter.with_suffix(".html"))
        title, slides = main_path_slides(article, keys)
        (out / "slides" / f"{chapter.stem}.html").write_text(deck(title, slides, course, source),
                                                            encoding="utf-8")
        for key, caption in figure_captions(article, keys).items():
            rows.append({"svg": f"{key}.svg", "png": f"{key}.png", "chapter": title,
                         "caption": caption,
                         "attribution": f'"{course}" ({source}), {title}. CC BY 4.0 '
                                        f"({LICENCE_URL})"})
    missing = [row["svg"] for row in rows if not (out / "figures" / row["svg"]).is_file()]
    if missing:
        raise RuntimeError(f"figures the pages show but no run exported: {missing}")
    with open(out / "figures" / "index.csv", "w", newline="", encoding="utf-8") as index:
        writer = csv.DictWriter(index, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (out / "README.txt").write_text(README.format(course=course, source=source),
                                    encoding="utf-8")
    archive = out.with_name("instructor-pack.zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(out.rglob("*")):
            if path.is_file():
                zipped.write(path, Path("instructor-pack") / path.relative_to(out))
    return archive


README = """{course}: the instructor's pack ({source})

site/index.html     the student edition of the site (no solutions); opens from disk, offline
notebooks/          every chapter as a notebook without solutions, for students to run
book.pdf            the whole book, with the solutions
assignments/        one notebook per exercise with a checker, for students: a stub to fill in
                    and its tests (grade the handed-in notebooks with `make grade` in the
                    course's repository); RUBRICS.md: how to mark the other exercises
figures/            every figure as SVG and 200-dpi PNG; index.csv gives each one's chapter,
                    caption and the attribution line to use with it
slides/*.html       one slide deck per chapter (reveal.js): its figures and equations in page
                    order, each with its key sentence, and a slide of words for a section
                    with neither; open in a browser, arrow keys to move, F for full screen,
                    S for the speaker view with the page's paragraphs as notes

Text and figures are licensed CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/),
code MIT: attribute as index.csv says.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--student", type=Path, required=True, help="make student's output")
    parser.add_argument("--pdf", type=Path, required=True, help="make pdf's book.pdf")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(write_pack(args.book.resolve(), args.out.resolve(), args.student.resolve(),
                     args.pdf.resolve(), args.jobs))


if __name__ == "__main__":
    main()
