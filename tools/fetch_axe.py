"""Fetch the pinned axe-core release from the npm registry for the browser tests.

    python tools/fetch_axe.py DEST      (make test does this: DEST is .venv/axe-core)

axe-playwright-python bundles an older axe-core (4.12), which misses rules of the current one
(``label-content-name-mismatch`` among them), so the tests run the release pinned here instead.
The tarball is checked against the registry's sha512 before ``axe.min.js`` is written to
``DEST/axe.min.js``; no npm is needed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import tarfile
import urllib.request
from pathlib import Path

VERSION = "4.14.1"
TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{VERSION}.tgz"
INTEGRITY = ("sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe"
             "37OgudVGtQ==")  # `npm view axe-core@4.14.1 dist.integrity`


def fetch(dest: Path) -> Path:
    """Write the pinned ``axe.min.js`` (and its licence) into ``dest``; return its path."""
    target = dest / "axe.min.js"
    if target.is_file() and f"axe v{VERSION}" in target.read_text(encoding="utf-8")[:200]:
        return target
    with urllib.request.urlopen(TARBALL, timeout=120) as response:
        data = response.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != INTEGRITY:
        raise RuntimeError(f"{TARBALL}: sha512 {digest}, expected {INTEGRITY}")
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for name in ("axe.min.js", "LICENSE"):
            (dest / name).write_bytes(tar.extractfile(f"package/{name}").read())
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="the folder to write axe.min.js into")
    print(fetch(parser.parse_args().dest))


if __name__ == "__main__":
    main()
