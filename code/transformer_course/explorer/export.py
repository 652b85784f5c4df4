"""A trained Transformer as a compact, deterministic payload for the in-page JavaScript model.

The payload is plain JSON: the configuration the forward pass needs, and every parameter tensor
(named as in ``model.state_dict()``, tied matrices stored once under one name with the others
listed as aliases) concatenated little-endian into one base64 string. Three precisions:

- "float32": the weights as trained (4 bytes a parameter);
- "float16": rounded to half precision (2 bytes);
- "int8": every matrix row rounded to 255 levels, symmetric about zero, with the row's float32
  scale (about 1 byte), vectors (biases, LayerNorm) kept in float32.

:func:`model_from_payload` rebuilds a Python model with exactly the exported (rounded) weights, so
the page and Python can be compared number for number; how far rounding moves the model's outputs
is the chapter's to measure.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import torch

from transformer_course.core.batching import BOS_ID, EOS_ID
from transformer_course.core.checks import check_instance, check_int
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.core.positional import BASE

DTYPES = ("float32", "float16", "int8")
BYTES = {"float32": "<f4", "float16": "<f2", "int8": "i1"}  # each dtype's layout in the payload


def _encode(values: np.ndarray, dtype: str) -> tuple[bytes, str, bytes]:
    """A tensor's bytes (little-endian), the dtype they are in, and its int8 row scales."""
    if dtype == "int8" and values.ndim == 2:
        peak = np.abs(values).max(axis=1, keepdims=True)
        scales = np.where(peak > 0, peak / 127.0, 1.0).astype("<f4")  # (rows, 1)
        levels = np.clip(np.rint(values / scales.astype(np.float64)), -127, 127)
        return levels.astype(np.int8).tobytes(), "int8", scales.tobytes()
    kind = "float16" if dtype == "float16" else "float32"
    return values.astype(BYTES[kind]).tobytes(), kind, b""


def page_config(c: TransformerConfig, bos_id: int = BOS_ID, eos_id: int = EOS_ID,
                ) -> dict[str, Any]:
    """What the page's forward pass (explorer.js) needs to know of a model's configuration."""
    return {"d_model": c.d_model, "num_heads": c.num_heads, "d_ff": c.d_ff,
            "num_encoder_layers": c.num_encoder_layers,
            "num_decoder_layers": c.num_decoder_layers, "norm_first": c.norm_first,
            "layer_norm_eps": c.layer_norm_eps, "positional": c.positional, "base": BASE,
            "scaled": c.scaled_attention, "pad_id": c.pad_id, "bos_id": bos_id,
            "eos_id": eos_id, "max_len": c.max_len, "src_vocab_size": c.src_vocab_size,
            "tgt_vocab_size": c.tgt_vocab_size}


def export_model(model: Transformer, *, dtype: str = "float16", bos_id: int = BOS_ID,
                 eos_id: int = EOS_ID) -> dict[str, Any]:
    """The payload of ``model`` (see the module docstring); the same model gives the same bytes.

    Args:
        model: a trained :class:`Transformer`. dtype: "float32", "float16" or "int8".
        bos_id, eos_id: the ids greedy decoding starts and stops with.
    """
    check_instance("model", model, Transformer)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}; got {dtype!r}")
    c = model.config
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        check_int(name, value, low=0, high=c.tgt_vocab_size - 1)
    tensors: dict[str, dict[str, Any]] = {}
    aliases: dict[str, str] = {}
    seen: dict[int, str] = {}
    data = bytearray()
    for name, tensor in model.state_dict(keep_vars=True).items():
        if not isinstance(tensor, torch.nn.Parameter):
            continue  # buffers (the sinusoidal table) are recomputed by the page
        if id(tensor) in seen:
            aliases[name] = seen[id(tensor)]
            continue
        seen[id(tensor)] = name
        raw, kind, scales = _encode(tensor.detach().cpu().double().numpy(), dtype)
        entry: dict[str, Any] = {"shape": list(tensor.shape), "dtype": kind}
        if scales:
            data += bytes(-len(data) % 4)  # float32 scales start on a 4-byte boundary
            entry["scales"] = len(data)
            data += scales
        data += bytes(-len(data) % 4)
        entry["offset"] = len(data)
        data += raw
        tensors[name] = entry
    return {"config": page_config(c, bos_id, eos_id), "dtype": dtype, "tensors": tensors,
            "aliases": aliases, "data": base64.b64encode(bytes(data)).decode("ascii")}


def payload_json(payload: dict[str, Any]) -> str:
    """The payload as compact JSON with sorted keys (byte-identical for the same model)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def model_from_payload(payload: dict[str, Any]) -> Transformer:
    """A float32 :class:`Transformer` in eval mode holding exactly the payload's weights."""
    check_instance("payload", payload, dict)
    missing = {"config", "dtype", "tensors", "data"} - set(payload)
    if missing:
        raise ValueError(f"payload must come from export_model; missing keys {sorted(missing)}")
    c = payload["config"]
    config = TransformerConfig(
        c["src_vocab_size"], c["tgt_vocab_size"], d_model=c["d_model"], num_heads=c["num_heads"],
        num_encoder_layers=c["num_encoder_layers"], num_decoder_layers=c["num_decoder_layers"],
        d_ff=c["d_ff"], dropout=0.0, max_len=c["max_len"], norm_first=c["norm_first"],
        positional=c["positional"], scaled_attention=c["scaled"], pad_id=c["pad_id"],
        layer_norm_eps=c["layer_norm_eps"],
        share_embeddings="output_projection.weight" in payload.get("aliases", {}))
    model = Transformer(config)
    data = base64.b64decode(payload["data"])
    state = model.state_dict()
    names = {**{n: n for n in payload["tensors"]}, **payload.get("aliases", {})}
    for name, source in names.items():
        entry = payload["tensors"][source]
        shape, count = entry["shape"], int(np.prod(entry["shape"]))
        values = np.frombuffer(data, dtype=BYTES[entry["dtype"]], count=count,
                               offset=entry["offset"])
        values = values.astype(np.float64).reshape(shape)
        if entry["dtype"] == "int8":
            scales = np.frombuffer(data, dtype="<f4", count=shape[0], offset=entry["scales"])
            values = values * scales.astype(np.float64)[:, None]
        state[name] = torch.from_numpy(values.astype(np.float32))
    model.load_state_dict(state)
    return model.eval()
