"""A Jupyter kernel that talks over Unix sockets, for the tools that run chapters side by side."""
from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def unix_socket_kernel() -> Iterator[Any]:
    """A ``jupyter_client`` KernelManager (python3) whose sockets are files in a temporary
    folder of its own, shut down on leaving.

    Not TCP: jupyter_client picks a free port by binding and releasing it, and another kernel
    starting at the same moment (``make check`` starts many side by side) can take it first;
    the kernel then dies before it replies to ``kernel_info``.
    """
    from jupyter_client.manager import KernelManager

    with tempfile.TemporaryDirectory(prefix="kernel-") as folder:
        kernel = KernelManager(kernel_name="python3", transport="ipc",
                               ip=str(Path(folder) / "socket"))
        try:
            yield kernel
        finally:  # nbclient leaves a kernel it did not start running: a pool worker that runs
            # many chapters would keep one per chapter, each holding its memory
            if kernel.has_kernel:
                kernel.shutdown_kernel(now=True)
