"""Fetch pinned front-end packages from the npm registry, checked against their sha512, without
npm: the browser tests' axe-core and the instructor pack's reveal.js.

    python tools/npm_assets.py NAME DEST      (NAME: axe-core or reveal.js)

axe-playwright-python bundles an older axe-core (4.12), which misses rules of the current one
(``label-content-name-mismatch`` among them), so the browser tests run the release pinned here;
`make test` fetches it into ``.venv/axe-core``. The slide decks of `make pack` use reveal.js
(fetched into ``_build/npm/reveal.js``, then copied into the pack). Each package's files keep
their paths inside the package, with its licence beside them; a stamp (``.version``) makes a
second fetch of the same release, with every file there, a no-op.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Asset:
    version: str
    integrity: str  # `npm view <name>@<version> dist.integrity`
    files: tuple[str, ...]  # inside the package folder of the tarball

    def tarball(self, name: str) -> str:
        return f"https://registry.npmjs.org/{name}/-/{name}-{self.version}.tgz"


ASSETS = {
    "axe-core": Asset("4.14.1", "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r"
                      "76ASyFNNtuFooJpZe37OgudVGtQ==", ("axe.min.js", "LICENSE")),
    "reveal.js": Asset("6.0.2", "sha512-JYIg5D9aoxoaLeb84O+OvAwsKWdIavVgEDScxtYEXFCT6t6TQrhNtSgog"
                       "cjdCpdLsWglhJn3zyE3fUOwiH5KEg==",
                       ("dist/reveal.js", "dist/reveal.css", "dist/theme/white.css",
                        "dist/plugin/notes.js", "LICENSE")),
}


def fetch(name: str, dest: Path) -> Path:
    """Write the pinned release of ``name`` into ``dest`` (unless it is there); return ``dest``."""
    asset = ASSETS[name]
    stamp = dest / ".version"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == f"{name}@{asset.version}" and all(
            (dest / relative).is_file() for relative in asset.files):
        return dest
    url = asset.tarball(name)
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != asset.integrity:
        raise RuntimeError(f"{url}: sha512 {digest}, expected {asset.integrity}")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for relative in asset.files:
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(f"package/{relative}").read())
    stamp.write_text(f"{name}@{asset.version}", encoding="utf-8")
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(ASSETS))
    parser.add_argument("dest", type=Path, help="the folder to write the package's files into")
    args = parser.parse_args()
    print(fetch(args.name, args.dest))


if __name__ == "__main__":
    main()
