"""A trained Transformer as a compact, deterministic payload for the in-page JavaScript model.

The payload is plain JSON: the configuration the forward pass needs, and every parameter tensor
(named as in ``model.state_dict()``, tied matrices stored once under one name with the others
listed as aliases) concatenated little-endian into one base64 string, in float32 or float16.
:func:`model_from_payload` rebuilds a Python model with exactly the exported (rounded) weights, so
the page and Python can be compared number for number.
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

DTYPES = {"float32": np.float32, "float16": np.float16}


def export_model(model: Transformer, *, dtype: str = "float16", bos_id: int = BOS_ID,
                 eos_id: int = EOS_ID) -> dict[str, Any]:
    """The payload of ``model`` (see the module docstring); the same model gives the same bytes.

    Args:
        model: a trained :class:`Transformer`. dtype: "float16" (half the size) or "float32".
        bos_id, eos_id: the ids greedy decoding starts and stops with.
    """
    check_instance("model", model, Transformer)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {tuple(DTYPES)}; got {dtype!r}")
    c = model.config
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        check_int(name, value, low=0, high=c.tgt_vocab_size - 1)
    tensors: dict[str, list[Any]] = {}
    aliases: dict[str, str] = {}
    seen: dict[int, str] = {}
    chunks: list[np.ndarray] = []
    offset = 0
    for name, tensor in model.state_dict(keep_vars=True).items():
        if not isinstance(tensor, torch.nn.Parameter):
            continue  # buffers (the sinusoidal table) are recomputed by the page
        if id(tensor) in seen:
            aliases[name] = seen[id(tensor)]
            continue
        seen[id(tensor)] = name
        values = tensor.detach().cpu().double().numpy().astype(DTYPES[dtype]).ravel()
        tensors[name] = [offset, list(tensor.shape)]
        chunks.append(values.astype(values.dtype.newbyteorder("<")))
        offset += values.size
    data = np.concatenate(chunks).tobytes() if chunks else b""
    config = {"d_model": c.d_model, "num_heads": c.num_heads, "d_ff": c.d_ff,
              "num_encoder_layers": c.num_encoder_layers,
              "num_decoder_layers": c.num_decoder_layers, "norm_first": c.norm_first,
              "layer_norm_eps": c.layer_norm_eps, "positional": c.positional, "base": BASE,
              "scaled": c.scaled_attention, "pad_id": c.pad_id, "bos_id": bos_id,
              "eos_id": eos_id, "max_len": c.max_len, "src_vocab_size": c.src_vocab_size,
              "tgt_vocab_size": c.tgt_vocab_size}
    return {"config": config, "dtype": dtype, "tensors": tensors, "aliases": aliases,
            "data": base64.b64encode(data).decode("ascii")}


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
    values = np.frombuffer(base64.b64decode(payload["data"]),
                           dtype=np.dtype(DTYPES[payload["dtype"]]).newbyteorder("<"))
    state = model.state_dict()
    names = {**{n: n for n in payload["tensors"]}, **payload.get("aliases", {})}
    for name, source in names.items():
        offset, shape = payload["tensors"][source]
        size = int(np.prod(shape))
        state[name] = torch.from_numpy(values[offset:offset + size].astype(np.float32)
                                       .reshape(shape))
    model.load_state_dict(state)
    return model.eval()
