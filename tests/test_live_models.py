"""tools/live_models.py: chapter 8's models are written into a built site where a page loads them,
and only there."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import live_models  # tools/ is on sys.path (site_utils)

from transformer_course.experiments.ch8_real_sentences import in_browser


def _build(site: Path) -> SimpleNamespace:
    return SimpleNamespace(outdir=str(site), builder=SimpleNamespace(format="html"))


def test_models_are_written_only_where_a_page_loads_them(tmp_path: Path) -> None:
    site = tmp_path / "html"
    (site / "book").mkdir(parents=True)
    (site / "book" / "a.html").write_text("<p>no widget here</p>")
    live_models.write_models(_build(site), None)
    assert not (site / "_static").exists()

    spec = json.dumps({"base": in_browser.BASE})  # as the chapter's widgets name the folder
    (site / "book" / "b.html").write_text(f'<script type="application/json">{spec}</script>')
    live_models.write_models(_build(site), RuntimeError("the build failed"))
    assert not (site / "_static").exists()
    live_models.write_models(_build(site), None)
    folder = (site / "book" / in_browser.BASE).resolve()
    assert sorted(p.name for p in folder.iterdir()) == sorted(in_browser.assets())
    assert (folder / "translator.js").read_text(encoding="utf-8") == \
        in_browser.assets()["translator.js"]
