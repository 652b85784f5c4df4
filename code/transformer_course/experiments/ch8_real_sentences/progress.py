"""What the chapter's live training runs share: a progress bar over the steps, and where each
check's line goes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any


class Progress:
    """A tqdm bar over ``total`` steps when ``show``, else none; :meth:`say` writes a check's
    line under the bar (or through ``report``; nowhere when ``report`` is None)."""

    def __init__(self, total: int, show: bool, report: Callable[[str], Any] | None) -> None:
        self.bar = None
        if show:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=total, unit="step")
        self.report = report

    def say(self, line: str) -> None:
        if self.report is not None:
            (self.bar.write if self.bar is not None else self.report)(line)

    def over(self, batches: Iterable[Any]) -> Iterator[Any]:
        """``batches``, the bar moving one step for each."""
        for batch in batches:
            if self.bar is not None:
                self.bar.update()
            yield batch

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class NoTarget:
    """A check's record for ``core.train`` when a run has no accuracy target to reach."""

    sequence_accuracy = 0.0
