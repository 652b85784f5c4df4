"""Storing a trained model small: every matrix in 8-bit integers with one scale per row.

A row w of a weight matrix is kept as round(w / s) in int8 with s = max|w| / 127, so each weight
is off by at most s / 2. Vectors (biases, LayerNorm) stay in float32: they are few. The file is
a JSON header (name, shape, kind, offset of every tensor) and the raw bytes after it, a layout a
browser reads as easily as Python. A stored model *is* its int8 weights: the chapter's scores are
measured on them, and the page's in-browser model runs them.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import torch
from torch import nn

MAGIC = b"TC8\0"


def quantise(weight: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(R, C) float -> int8 (R, C) and float32 scales (R,), the row's max|w| / 127."""
    w = weight.detach().float().cpu().numpy()
    scale = np.abs(w).max(axis=1) / 127
    scale[scale == 0] = 1.0
    return np.round(w / scale[:, None]).astype(np.int8), scale.astype(np.float32)


def save(model: nn.Module, path: Path) -> None:
    """Write ``model``'s state (a tied matrix once) to ``path`` in the layout above."""
    header, blobs, offset, seen = [], [], 0, {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) in seen:
            header.append({"name": name, "same_as": seen[id(tensor)]})
            continue
        seen[id(tensor)] = name
        if tensor.dim() == 2:
            values, scale = quantise(tensor)
            parts, kind = [values.tobytes(), scale.tobytes()], "int8_rows"
        else:
            parts, kind = [tensor.detach().float().cpu().numpy().tobytes()], "float32"
        header.append({"name": name, "shape": list(tensor.shape), "kind": kind,
                       "offset": offset})
        for part in parts:
            part += b"\0" * (-len(part) % 4)  # float32 arrays start on a 4-byte boundary
            blobs.append(part)
            offset += len(part)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    path.write_bytes(MAGIC + struct.pack("<I", len(text)) + text + b"".join(blobs))


def load_state(path: Path) -> dict[str, torch.Tensor]:
    """The float32 state dict stored at ``path`` (int8 rows times their scales)."""
    data = path.read_bytes()
    (length,) = struct.unpack("<I", data[4:8])
    header, body = json.loads(data[8:8 + length]), memoryview(data)[8 + length:]
    state: dict[str, torch.Tensor] = {}
    for entry in header:
        if "same_as" in entry:
            state[entry["name"]] = state[entry["same_as"]]
            continue
        shape, start = entry["shape"], entry["offset"]
        if entry["kind"] == "int8_rows":
            rows, cols = shape
            values = np.frombuffer(body, np.int8, rows * cols, start).reshape(rows, cols)
            start += rows * cols + (-(rows * cols) % 4)
            scale = np.frombuffer(body, np.float32, rows, start)
            array = values.astype(np.float32) * scale[:, None]
        else:
            array = np.frombuffer(body, np.float32, int(np.prod(shape)), start).reshape(shape)
        state[entry["name"]] = torch.from_numpy(array.copy())
    return state
