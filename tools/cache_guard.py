"""Invalidate the book's execution cache when the package's code changes.

jupyter-cache keys a notebook on its cells alone, so editing ``code/`` would leave stale outputs in
the cache. Before every build, this hashes the package's files (and the pins that shape its
behaviour); if the hash differs from the one stored beside the cache, the cache is deleted and every
chapter re-executes.

Usage: python tools/cache_guard.py CACHE_DIR PATH [PATH ...]
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

SUFFIXES = {".py", ".txt", ".toml", ".cfg", ".json", ".yml", ".yaml"}


def fingerprint(paths: list[Path]) -> str:
    """SHA-256 over the relative names and contents of every source file under ``paths``."""
    digest = hashlib.sha256()
    for root in paths:
        files = [root] if root.is_file() else sorted(
            p for p in root.rglob("*")
            if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts
            and not any(part.endswith(".egg-info") for part in p.parts))
        for path in files:
            digest.update(str(path).encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cache = Path(argv[0])
    sources = [Path(p) for p in argv[1:]]
    missing = [str(p) for p in sources if not p.exists()]
    if missing:
        print(f"cache_guard: no such path: {', '.join(missing)}", file=sys.stderr)
        return 2
    stamp = cache.parent / (cache.name + ".code-hash")
    current = fingerprint(sources)
    previous = stamp.read_text().strip() if stamp.exists() else None
    if previous != current:
        if cache.exists():
            shutil.rmtree(cache)
            print(f"cache_guard: code changed, cleared {cache}: chapters will re-execute")
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(current + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
