"""jsonschema, imported without compiling an IRI grammar that no tool here uses.

Where rfc3987-syntax is installed (JupyterLab brings it), jsonschema compiles that package's
Earley grammar for IRIs when it is first imported: about 2.5 s on an idle core and twice that on
a busy one, in every process that reads a notebook (nbformat validates with jsonschema) or builds
the book. The grammar serves only the "iri" formats, which none of the schemas these tools
validate uses. Hidden while jsonschema loads, the package is left out of its format checks and is
importable again afterwards. The chapters' kernels do the same
(``transformer_course.notebook._myst_nb_glue``).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load() -> None:
    """Import jsonschema without the IRI grammar; nothing if either is imported already."""
    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        import jsonschema  # noqa: F401
    finally:
        del sys.modules["rfc3987_syntax"]


def then(statement: str) -> str:
    """A ``python -c`` program that runs :func:`load`, then ``statement``."""
    return f"import sys; sys.path.append({str(HERE)!r}); import lean_jsonschema; " \
           f"lean_jsonschema.load(); {statement}"
