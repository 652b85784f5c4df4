"""Write the bytecode of what the book's build imports, once, at install time.

The Makefile installs the pins without compiling them (``pip --no-compile``): compiling every
module took about a minute of a two-minute install, mostly for modules nothing here imports.
Without this step the first chapter kernels of a build would compile torch's modules themselves,
about 11 s each, two at once, inside the chapters' own times. Importing the course's package
(every module, so every library a chapter uses) and the build's own tools writes that bytecode
here instead (26-36 s on a fresh environment here); a module imported later is compiled when
first imported.

    python tools/compile_imports.py
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

BUILD_TOOLS = (  # what the build and its kernels import besides the course's package
    "torch._dynamo",  # imported by the first optimizer a chapter builds
    "seaborn",  # imported by notebook.setup_notebook
    "ipykernel.kernelapp",
    "jupyter_book.cli.main",
    "myst_nb.sphinx_ext",
    "sphinx.application",
    "sphinx_book_theme",
    "nbclient",
    "jupytext",
)


def main() -> None:
    if sys.dont_write_bytecode:
        print("compile_imports: PYTHONDONTWRITEBYTECODE is set, nothing would be written",
              file=sys.stderr)
        sys.exit(1)
    start = time.perf_counter()
    import transformer_course

    names = [m.name for m in pkgutil.walk_packages(transformer_course.__path__,
                                                   "transformer_course.")]
    for name in (*names, *BUILD_TOOLS):
        importlib.import_module(name)
    print(f"compile_imports: {len(names) + len(BUILD_TOOLS)} modules and what they import, "
          f"in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
