"""The built site (``make book``) is complete, offline and free of rendering leftovers.

Generic over ``_toc.yml``: every listed page is checked, so new chapters are covered unedited.
Nothing here skips: without a built site every test fails with "run make book first".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from site_utils import (
    BUILD_LOG,
    HTML,
    REPO,
    book_config,
    element_ids,
    glue_figures,
    glue_json_path,
    html_path,
    is_remote,
    parse_html,
    resolve_local,
    site_pages,
    source_path,
    strip_ansi,
    toc_docnames,
)

DOCNAMES = toc_docnames()
pytestmark = pytest.mark.usefixtures("built_site")
OBJECT_REPR = re.compile(r"<[\w.]+ (object )?at 0x[0-9a-fA-F]+>")  # e.g. <...Line2D at 0x7f..>
IMAGE_MIMES = ("image/png", "image/jpeg", "image/svg+xml")


def _rel(path: Path) -> str:
    return str(path.relative_to(HTML)) if path.is_relative_to(HTML) else str(path)


def test_last_build_succeeded_without_warnings() -> None:
    """The log of the last `make book` ends in success and has no warning (glue ones included)."""
    assert BUILD_LOG.is_file(), f"no build log at {BUILD_LOG}: run make book first"
    log = strip_ansi(BUILD_LOG.read_text(errors="replace"))
    warnings = [line for line in log.splitlines() if "WARNING:" in line or "ERROR:" in line]
    assert not warnings, "the last build warned:\n" + "\n".join(warnings)
    assert "build succeeded" in log, "the last build did not succeed: run make book"


@pytest.mark.parametrize("docname", DOCNAMES)
def test_page_exists(docname: str) -> None:
    """Every page listed in _toc.yml was built."""
    page = html_path(docname)
    assert page.is_file(), f"{docname} is in _toc.yml but {page} is missing"


def test_root_redirects_to_an_existing_page() -> None:
    """The site's index.html forwards to the root page, which exists (or is the root page)."""
    if DOCNAMES[0] == "index":
        assert html_path("index").is_file()
        return
    refresh = parse_html(HTML / "index.html").find("meta", attrs={"http-equiv": "Refresh"})
    assert refresh is not None, "index.html has no redirect"
    target = refresh["content"].split("url=", 1)[1]
    assert (HTML / target).is_file(), f"index.html redirects to missing {target}"
    assert target == DOCNAMES[0] + ".html"


@pytest.mark.parametrize("docname", DOCNAMES)
def test_glued_figures_are_rendered(docname: str) -> None:
    """Each {glue:figure} shows its glued image (or table) inside the element named by :name:."""
    figures = glue_figures(source_path(docname).read_text())
    if not figures:
        assert "{glue:figure}" not in source_path(docname).read_text()
        return
    unnamed = [f"line {f.line}: {f.key}" for f in figures if f.name is None]
    assert not unnamed, f"{docname}: glue:figure without :name: ({', '.join(unnamed)})"
    glued = json.loads(glue_json_path(docname).read_text()) \
        if glue_json_path(docname).is_file() else {}
    page = html_path(docname)
    soup = parse_html(page)
    for figure in figures:
        element = soup.find(id=figure.name)
        assert element is not None, f"{docname}: no element with id {figure.name!r}"
        data = glued.get(figure.key.split("::")[-1], {}).get("data", {})
        assert data or "::" in figure.key, f"{docname}: key {figure.key!r} was never glued"
        if any(mime in data for mime in IMAGE_MIMES) or "::" in figure.key:
            images = element.find_all("img")
            assert images, f"{docname}: #{figure.name} ({figure.key}) holds no <img>"
            for image in images:
                target, _ = resolve_local(page, image["src"])
                assert target.is_file(), f"{docname}: #{figure.name} image {image['src']} missing"
        else:
            assert element.get_text(strip=True), f"{docname}: #{figure.name} is empty"


def test_every_image_resolves() -> None:
    """Every <img> on every page points to an existing local file (or inline data)."""
    broken = []
    for page in site_pages():
        for image in parse_html(page).find_all("img"):
            src = image.get("src", "")
            if src.startswith("data:"):
                if len(src) < 30:
                    broken.append(f"{_rel(page)}: empty inline image")
                continue
            if not src or is_remote(src) or not resolve_local(page, src)[0].is_file():
                broken.append(f"{_rel(page)}: {src!r}")
    assert not broken, "broken images:\n" + "\n".join(broken)


def test_no_bare_figure_or_object_reprs() -> None:
    """No '<Figure size ...>' text (a figure glued or shown as text) nor '<... at 0x...>' reprs."""
    found = []
    for page in site_pages():
        raw = page.read_text(encoding="utf-8")
        text = parse_html(page).get_text()
        if "<Figure size" in text or "&lt;Figure size" in raw:
            found.append(f"{_rel(page)}: <Figure size ...>")
        for output in parse_html(page).select(".cell_output"):
            found += [f"{_rel(page)}: {m}" for m in OBJECT_REPR.findall(output.get_text())]
    assert not found, "figure/object reprs in the site:\n" + "\n".join(found)


CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # control characters and tab, not newline


def control_characters(text: str) -> list[str]:
    """Lines of a MyST source holding a control character or a tab: what a Python string left
    behind where it meant a backslash ("\\times" written unescaped becomes a tab and "imes")."""
    return [f"line {number}: {line.strip()[:80]!r}"
            for number, line in enumerate(text.split("\n"), start=1)
            if CONTROL.search(line)]


@pytest.mark.parametrize("docname", DOCNAMES)
def test_sources_hold_no_control_characters(docname: str) -> None:
    """No tab or control character in a page's source (math would render "n imes n")."""
    found = control_characters(source_path(docname).read_text(encoding="utf-8"))
    assert not found, f"{docname}: control characters or tabs:\n" + "\n".join(found)


@pytest.mark.parametrize("docname", DOCNAMES)
def test_glue_roles_rendered(docname: str) -> None:
    """No raw {glue...} role text and no system messages (failed roles) left on the page."""
    soup = parse_html(html_path(docname))
    article = soup.select_one("article") or soup
    problems = [f"system message: {tag.get_text(' ', strip=True)[:120]}"
                for tag in article.select(".system-message, .problematic")]
    for text in article.find_all(string=re.compile(r"\{glue")):
        if not text.find_parent(["pre", "code", "script", "style"]):
            problems.append(f"raw role text: {text.strip()[:120]}")
    assert not problems, f"{docname}:\n" + "\n".join(problems)


def test_internal_links_and_anchors_resolve() -> None:
    """Every relative href/src resolves to a file, and every #fragment to an id in that file."""
    broken = []
    for page in site_pages():
        soup = parse_html(page)
        refs = [(tag.name, tag.get("href")) for tag in soup.find_all(["a", "link"], href=True)]
        refs += [(tag.name, tag.get("src")) for tag in soup.find_all(src=True)]
        for tag, url in refs:
            if not url or is_remote(url) or url.startswith(("data:", "mailto:", "javascript:")):
                continue
            target, fragment = resolve_local(page, url)
            if not target.is_file():
                broken.append(f"{_rel(page)}: <{tag}> {url} -> missing {target}")
            elif fragment and target.suffix == ".html" and fragment not in element_ids(target):
                broken.append(f"{_rel(page)}: <{tag}> {url} -> no id {fragment!r}")
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def test_no_remote_resources() -> None:
    """Pages load nothing from the internet: no http(s) src, <link href>, or CSS url()."""
    remote = []
    stylesheets = set()
    for page in site_pages():
        soup = parse_html(page)
        for tag in soup.find_all(src=True):
            if is_remote(tag["src"]):
                remote.append(f"{_rel(page)}: <{tag.name} src={tag['src']}>")
        for tag in soup.find_all(srcset=True):
            if any(is_remote(part.split()[0]) for part in tag["srcset"].split(",") if part):
                remote.append(f"{_rel(page)}: <{tag.name} srcset={tag['srcset']}>")
        for tag in soup.find_all("link", href=True):
            if is_remote(tag["href"]):
                remote.append(f"{_rel(page)}: <link href={tag['href']}>")
            elif "stylesheet" in tag.get("rel", []):
                stylesheets.add(resolve_local(page, tag["href"])[0])
        for style in soup.find_all("style"):
            remote += [f"{_rel(page)}: <style> {u}" for u in _remote_css_urls(style.get_text())]
    for sheet in sorted(stylesheets):
        remote += [f"{_rel(sheet)}: {u}" for u in _remote_css_urls(sheet.read_text())]
    assert not remote, "remote resources (the site must work offline):\n" + "\n".join(remote)


def _remote_css_urls(css: str) -> list[str]:
    urls = re.findall(r"url\(\s*['\"]?([^'\")\s]+)", css)
    urls += re.findall(r"@import\s+['\"]([^'\"]+)", css)
    return [url for url in urls if is_remote(url)]


def test_mathjax_is_served_locally() -> None:
    """Pages with math load MathJax from _static/mathjax (sphinx-mathjax-offline), which exists."""
    for page in site_pages():
        soup = parse_html(page)
        scripts = [tag["src"] for tag in soup.find_all("script", src=True)
                   if "mathjax" in tag["src"].lower()]
        if soup.select(".math"):
            assert scripts, f"{_rel(page)} has math but loads no MathJax"
        for src in scripts:
            target, _ = resolve_local(page, src)
            assert target.is_file() and target.is_relative_to(HTML / "_static" / "mathjax"), \
                f"{_rel(page)}: MathJax from {src}"


def test_outside_links_only_to_repository_or_in_prose() -> None:
    """Links off the site outside a page's article go only to the repository, Binder or Colab."""
    config = book_config()
    allowed = [config.get("repository", {}).get("url", "")]
    allowed += [config.get("launch_buttons", {}).get(f"{name}_url", "")
                for name in ("binderhub", "colab")]
    allowed = [url.rstrip("/") for url in allowed if url]
    stray = []
    for page in site_pages():
        soup = parse_html(page)
        prose = soup.select_one("article")
        for link in soup.find_all("a", href=True):
            href = link["href"]
            if not is_remote(href) or any(parent is prose for parent in link.parents):
                continue
            if not any(href == url or href.startswith(url + "/") for url in allowed):
                stray.append(f"{_rel(page)}: {href} ({urlsplit(href).netloc})")
    assert not stray, "outside links that are not the repository/Binder/Colab:\n" + "\n".join(stray)


def test_no_script_twice_on_a_page() -> None:
    """No page carries the same script twice (a repeated inline `const` is a browser error).

    Exempt: scripts marked ``data-repeat-safe``, which the attention explorer writes into each of
    its outputs so that every notebook output stands alone (in JupyterLab too). They define the
    library once (``if (window.AttentionExplorer) return;``) and mount only unmounted viewers;
    tests/test_explorer.py drives such a page and fails on any console error."""
    repeated = []
    for page in site_pages():
        seen = set()
        for script in parse_html(page).find_all("script"):
            key = (script.get("src"), script.get_text().strip(), script.get("type"))
            if key in seen and (key[0] or key[1]) and not script.has_attr("data-repeat-safe"):
                repeated.append(f"{_rel(page)}: {key[0] or key[1][:80]}")
            seen.add(key)
    assert not repeated, "scripts included twice:\n" + "\n".join(repeated)


def test_no_stray_pages() -> None:
    """Every page of the site is in _toc.yml (or is one of Sphinx's own: index, search...)."""
    expected = {docname + ".html" for docname in DOCNAMES}
    expected |= {"index.html", "genindex.html", "search.html", "py-modindex.html"}
    stray = [_rel(page) for page in site_pages() if _rel(page) not in expected]
    assert not stray, f"pages not in _toc.yml (stale or unlisted): {stray}"


def test_every_work_in_the_bibliography_is_cited_and_listed() -> None:
    """The references page lists every entry of the book's .bib files: it lists only the works a
    page cites, so an entry that no page cites would drop out of it unnoticed."""
    from pybtex.database import parse_file

    keys = [key for name in book_config().get("bibtex_bibfiles", [])
            for key in parse_file(str(REPO / name)).entries]
    listed = [entry for page in site_pages()
              for entry in parse_html(page).select("div.citation[id]")]
    assert keys and len(listed) == len(keys), (len(listed), len(keys))
