"""tools/binder_links.py: launch URLs and the README badge from _config.yml alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import binder_links  # noqa: E402

CONFIG = {
    "repository": {"url": "https://github.com/org/course", "branch": "dev", "path_to_book": ""},
    "launch_buttons": {"binderhub_url": "https://hub.example/", "notebook_interface": "jupyterlab"},
}


def test_launch_url_is_binders_github_form() -> None:
    assert binder_links.launch_url(CONFIG, "book/01_x.md") == (
        "https://hub.example/v2/gh/org/course/dev?urlpath=lab/tree/book/01_x.md")
    assert binder_links.launch_url(CONFIG) == "https://hub.example/v2/gh/org/course/dev?urlpath=lab/tree"


def test_launch_url_honours_path_to_book_and_classic() -> None:
    config = {"repository": dict(CONFIG["repository"], path_to_book="site/"),
              "launch_buttons": dict(CONFIG["launch_buttons"], notebook_interface="classic")}
    assert binder_links.launch_url(config, "book/a.md").endswith("?urlpath=tree/site/book/a.md")


def test_real_config_names_one_github_repository() -> None:
    config = binder_links.load_config(ROOT)
    org, repo, branch = binder_links.repository(config)
    assert config["repository"]["url"] == f"https://github.com/{org}/{repo}"
    assert binder_links.badge(config).endswith(
        f"/v2/gh/{org}/{repo}/{branch}?urlpath=lab/tree/book)")


def test_readme_badge_is_inserted_then_replaced() -> None:
    text = "# Title\n\nBody.\n"
    once = binder_links.updated_readme(text, CONFIG)
    assert once.startswith("# Title\n\n" + binder_links.badge_block(CONFIG))
    assert once.endswith("Body.\n")
    moved = dict(CONFIG, repository=dict(CONFIG["repository"], branch="main"))
    twice = binder_links.updated_readme(once, moved)
    assert twice.count(binder_links.BADGE_START) == 1 and "/course/main?" in twice
    assert "/course/dev?" not in twice


def test_check_mode_passes_on_the_committed_readme() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "binder_links.py"), "--check",
                             str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("bad, argument", [
    ({"repository": {"url": "https://gitlab.com/a/b", "branch": "m"}}, "repository"),
    ({"repository": {"url": "https://github.com/a", "branch": "m"}}, "repository"),
    ({"repository": {"url": "https://github.com/a/b", "branch": ""}}, "repository"),
])
def test_repository_rejects_what_binder_links_cannot_use(bad: dict, argument: str) -> None:
    with pytest.raises(ValueError, match=argument):
        binder_links.repository(bad)


def test_launch_url_rejects_a_bad_hub_or_interface() -> None:
    with pytest.raises(ValueError, match="launch_buttons"):
        binder_links.launch_url(dict(CONFIG, launch_buttons={"binderhub_url": ""}))
    with pytest.raises(ValueError, match="launch_buttons"):
        binder_links.launch_url(dict(CONFIG, launch_buttons={
            "binderhub_url": "https://hub.example", "notebook_interface": "retro"}))
    with pytest.raises(ValueError, match="book"):
        binder_links.load_config(Path("/nonexistent"))
