"""Check a reader's set-up in one command: ``python -m transformer_course.check_setup``.

It imports what the chapters import, reads the package's stored data, trains a tiny Transformer
for a few steps and compares the course's attention with PyTorch's own, then prints the versions,
the CPU and one line per check. It exits with status 0 when every check passes, 1 otherwise, so an
instructor can ask a class to run it before the first lecture (README: "Check the set-up").
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import math
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata

# What the chapters import, beside the package's own dependencies; JupyterLab and jupytext (which
# opens book/*.md as notebooks) only where a notebook is opened locally (Colab has its own).
CHAPTER_MODULES = ("numpy", "torch", "pandas", "matplotlib", "seaborn", "num2words",
                   "tokenizers", "sacrebleu", "IPython")
LOCAL_ONLY = ("jupyterlab", "jupytext")
PARITY_TOLERANCE = 1e-5  # float32 rounding of a 16-wide layer is a few 1e-7


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, whether it passed, what was found."""

    name: str
    passed: bool
    detail: str


def _imports(names: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """(the modules that failed to import, {module: version} of those that did)."""
    missing, versions = [], {}
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError:
            missing.append(name)
        else:
            try:
                versions[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                versions[name] = str(getattr(module, "__version__", "?"))
    return missing, versions


def check_imports() -> Check:
    missing, versions = _imports(CHAPTER_MODULES)
    if missing:
        return Check("imports", False, f"cannot import {', '.join(missing)}: install the "
                                       "student set (README) into this environment")
    return Check("imports", True, ", ".join(f"{name} {version}"
                                            for name, version in versions.items()))


def check_stored_data() -> Check:
    """Every stored study's data file is where the package looks for it."""
    from transformer_course.stored import STUDIES

    absent = [study.name for study in STUDIES.values() if not study.path.is_file()]
    if absent:
        return Check("stored studies", False, f"missing data of {', '.join(absent)}: "
                                              "reinstall the package (pip install -e .)")
    return Check("stored studies", True, f"{len(STUDIES)} studies' data found")


def check_training() -> Check:
    """A tiny copy model trained for 40 steps: the loss must fall and stay finite."""
    import torch

    from transformer_course import Transformer, TransformerConfig, make_batch
    from transformer_course.core.loss import label_smoothed_loss

    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=16, num_heads=2,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                               dropout=0.0, max_len=16)
    model = Transformer(config)
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    data = torch.randint(3, 12, (32, 6))
    batch = make_batch(data, data)  # copy: the target is the source
    losses = []
    for _ in range(40):
        logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
        loss = label_smoothed_loss(logits, batch.tgt_out, 0.0)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    finite = all(math.isfinite(loss) for loss in losses)
    fell = losses[-1] < 0.75 * losses[0]
    return Check("a tiny training run", finite and fell,
                 f"loss {losses[0]:.2f} -> {losses[-1]:.2f} in {len(losses)} steps")


def check_parity() -> Check:
    """The course's multi-head attention against ``torch.nn.MultiheadAttention`` with the same
    weights, on this machine."""
    import torch
    from torch import nn

    from transformer_course import MultiHeadAttention
    from transformer_course.pytorch_parity import load_torch_mha_weights

    torch.manual_seed(0)
    ours, theirs = MultiHeadAttention(16, 4, dropout=0.0), nn.MultiheadAttention(
        16, 4, batch_first=True)
    load_torch_mha_weights(ours, theirs)
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        mine = ours(x, x, x)[0]
        reference = theirs(x, x, x, need_weights=False)[0]
    gap = (mine - reference).abs().max().item()
    return Check("attention equals PyTorch's", gap < PARITY_TOLERANCE,
                 f"largest difference {gap:.1e} (at most {PARITY_TOLERANCE:.0e} allowed)")


CHECKS: tuple[Callable[[], Check], ...] = (check_imports, check_stored_data, check_training,
                                           check_parity)


def run_checks() -> list[Check]:
    """Every check, in order; a check that raises counts as failed, with its error. The checks
    after a failed import are skipped: they need what is missing."""
    results = []
    try:  # the checks' models are tiny: one thread, so a busy machine cannot stall them
        import torch
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
    except ImportError:
        threads = None
    for check in CHECKS:
        try:
            results.append(check())
        except Exception as error:  # a broken install shows up as anything: report it
            results.append(Check(check.__name__.removeprefix("check_").replace("_", " "),
                                 False, f"{type(error).__name__}: {error}"))
        if check is check_imports and not results[-1].passed:
            break
    if threads is not None:
        torch.set_num_threads(threads)
    return results


def machine() -> str:
    """Python, the OS, the CPU and torch's kernel level, on one line."""
    line = f"Python {platform.python_version()} on {platform.system()} {platform.machine()}"
    try:
        import torch

        from transformer_course.claims import cpu_model
    except ImportError:
        return line
    return (f"{line}; CPU {cpu_model()} ({torch.backends.cpu.get_cpu_capability()}), "
            f"{torch.get_num_threads()} threads")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    print(machine())
    results = run_checks()
    for result in results:
        print(f"{'ok  ' if result.passed else 'FAIL'}  {result.name}: {result.detail}")
    missing = [name for name in LOCAL_ONLY if importlib.util.find_spec(name) is None]
    if missing:  # found, not imported: JupyterLab takes seconds to import
        print(f"note  not installed: {', '.join(missing)}; fine on Colab; to open the "
              "notebooks on this machine, install the student set (README)")
    ready = all(result.passed for result in results) and len(results) == len(CHECKS)
    print("Your set-up is ready." if ready else "Your set-up needs the fixes above.")
    return 0 if ready else 1


if __name__ == "__main__":
    sys.exit(main())
