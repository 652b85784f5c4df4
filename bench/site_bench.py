"""Weight of each built page: its HTML and the images it shows; shared assets counted once."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from bs4 import BeautifulSoup


def _local(page: Path, ref: str | None) -> Path | None:
    if not ref or urlparse(ref).scheme or ref.startswith(("//", "data:", "#")):
        return None
    target = (page.parent / unquote(urlparse(ref).path)).resolve()
    return target if target.is_file() else None


def page_weights(html_dir: Path, pages: list[str]) -> dict:
    """Bytes per page (HTML + images) and of the shared CSS/JS the pages link, counted once.

    Args:
        html_dir: the built site (`_build/html`).
        pages: page paths without suffix, e.g. "book/index".
    """
    rows, shared = [], {}
    for name in pages:
        page = html_dir / f"{name}.html"
        if not page.is_file():
            raise FileNotFoundError(f"page {name!r} is not built: {page} is missing")
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        images = {p for img in soup.find_all("img") if (p := _local(page, img.get("src")))}
        for tag, attr in (("link", "href"), ("script", "src")):
            for el in soup.find_all(tag):
                if tag == "link" and "stylesheet" not in (el.get("rel") or []):
                    continue
                if (p := _local(page, el.get(attr))) is not None:
                    shared[str(p.relative_to(html_dir.resolve()))] = p.stat().st_size
        html_bytes = page.stat().st_size
        image_bytes = sum(p.stat().st_size for p in images)
        rows.append({"page": name, "html_bytes": html_bytes, "image_bytes": image_bytes,
                     "images": len(images), "own_bytes": html_bytes + image_bytes})
    return {"pages": rows, "shared_assets_bytes": sum(shared.values()),
            "shared_assets": len(shared)}
