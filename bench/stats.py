"""The budget table. (Repeated measurements are summarised by ``notebook.Timing``.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """One row of the budget table: a measured figure against its limit."""

    figure: str
    measured: float | None
    limit: float | None  # None: derived from measurements this run did not make
    unit: str
    note: str = ""

    @property
    def met(self) -> bool | None:
        return None if self.measured is None else self.measured <= self.limit

    def as_row(self) -> list[str]:
        shown = "not measured" if self.measured is None else f"{self.measured:.3g} {self.unit}"
        limit = "n/a" if self.limit is None else f"<= {self.limit:g} {self.unit}"
        verdict = {True: "met", False: "MISSED", None: "n/a"}[self.met]
        return [self.figure, shown.strip(), limit.strip(), verdict, self.note]


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table with aligned columns."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
