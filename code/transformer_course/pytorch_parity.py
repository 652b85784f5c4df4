"""Our modules beside PyTorch's own: weight copying and mask translation for the parity checks.

- ``nn.MultiheadAttention``: :func:`load_torch_mha_weights` copies its packed projections into our
  :class:`MultiHeadAttention`; :func:`mask_from_torch` turns its masks (True = blocked) into ours
  (True = may attend).
- ``nn.Transformer``: :func:`to_torch_transformer` and :func:`load_from_torch_transformer` copy the
  encoder and decoder weights across; :func:`torch_reference_outputs` runs its stacks on our
  embeddings.

``torch.nn.Transformer`` holds only the two stacks: no embeddings, positions or output layer. It
takes already-embedded inputs and masks in the opposite convention (True = blocked). So the
comparison is: embed with our model, run both stacks, compare the hidden states.

Final LayerNorm: ``nn.Transformer`` builds its own stacks with a final LayerNorm each. Our post-norm
model (the paper) has none, so :func:`to_torch_transformer` passes ``nn.Transformer`` its own
``custom_encoder``/``custom_decoder`` stacks with ``norm=None`` whenever our config has
``final_norm`` off; a default ``nn.Transformer`` matches our config with ``final_norm=True``.
"""

from __future__ import annotations

import torch
from torch import nn

from .core.checks import Shapes, check_instance, check_token_ids
from .core.masks import causal_mask, combine_masks
from .core.model import Transformer
from .core.multihead import MultiHeadAttention


@torch.no_grad()
def load_torch_mha_weights(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy the weights of a ``torch.nn.MultiheadAttention`` (same d_model and heads) into ours."""
    check_instance("ours", ours, MultiHeadAttention)
    if not isinstance(theirs, nn.MultiheadAttention):
        raise TypeError(f"theirs must be a torch.nn.MultiheadAttention; "
                        f"got {type(theirs).__name__}")
    if (theirs.embed_dim, theirs.num_heads) != (ours.d_model, ours.num_heads):
        raise ValueError(f"theirs must have embed_dim={ours.d_model} and num_heads="
                         f"{ours.num_heads}; got {theirs.embed_dim} and {theirs.num_heads}")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs must use one packed in_proj_weight (kdim = vdim = embed_dim)")
    has_bias = theirs.in_proj_bias is not None
    if has_bias != (ours.w_q.bias is not None):
        raise ValueError(f"theirs has bias={has_bias} but ours has "
                         f"bias={ours.w_q.bias is not None}")
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3, dim=0)  # each (d_model, d_model)
    for layer, w in zip((ours.w_q, ours.w_k, ours.w_v), (w_q, w_k, w_v), strict=True):
        layer.weight.copy_(w)
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    if has_bias:
        b_q, b_k, b_v = theirs.in_proj_bias.chunk(3)  # each (d_model,)
        for layer, b in zip((ours.w_q, ours.w_k, ours.w_v), (b_q, b_k, b_v), strict=True):
            layer.bias.copy_(b)
        ours.w_o.bias.copy_(theirs.out_proj.bias)


def mask_from_torch(attn_mask: torch.Tensor | None = None,
                    key_padding_mask: torch.Tensor | None = None) -> torch.Tensor | None:
    """Turn ``nn.MultiheadAttention``'s boolean masks (True = blocked) into ours (True = allowed).

    Args:
        attn_mask: boolean (T_q, T_k); True = this query may NOT attend to this key.
        key_padding_mask: boolean (B, T_k); True = this key is padding.

    Returns:
        a boolean (B or 1, T_q or 1, T_k) mask in our convention, or None if both are None.
    """
    ours, shapes = [], Shapes()
    if attn_mask is not None:
        shapes.tensor("attn_mask", attn_mask, "T_q T_k", dtype="bool")
        ours.append(~attn_mask[None])  # (1, T_q, T_k)
    if key_padding_mask is not None:
        shapes.tensor("key_padding_mask", key_padding_mask, "B T_k", dtype="bool")
        ours.append(~key_padding_mask[:, None, :])  # (B, 1, T_k)
    return combine_masks(*ours)


def _check_pair(model: Transformer, ref: nn.Transformer) -> None:
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a transformer_course Transformer; "
                        f"got {type(model).__name__}")
    if not isinstance(ref, nn.Transformer):
        raise TypeError(f"ref must be a torch.nn.Transformer; got {type(ref).__name__}")
    c = model.config
    enc, dec = ref.encoder.layers, ref.decoder.layers
    relu = all(layer.activation is nn.functional.relu or isinstance(layer.activation, nn.ReLU)
               for layer in (*enc, *dec))
    theirs = (ref.d_model, ref.nhead, len(enc), len(dec), enc[0].linear1.out_features,
              enc[0].norm_first, relu)
    ours = (c.d_model, c.num_heads, c.num_encoder_layers, c.num_decoder_layers, c.d_ff,
            c.norm_first, True)
    names = ("d_model", "num_heads", "num_encoder_layers", "num_decoder_layers", "d_ff",
             "norm_first", "ReLU activation")
    for name, a, b in zip(names, ours, theirs, strict=True):
        if a != b:
            raise ValueError(f"ref must match model in {name}: model has {a}, ref has {b}")
    for stack in ("encoder", "decoder"):
        has_norm = getattr(ref, stack).norm is not None
        if has_norm != c.has_final_norm:
            raise ValueError(f"ref.{stack} has a final norm: {has_norm}, model has final_norm="
                             f"{c.has_final_norm}; build the model with final_norm={has_norm}")


def _copy_mha(ours: nn.Module, theirs: nn.MultiheadAttention, to_torch: bool) -> None:
    pairs = [(theirs.out_proj.weight, ours.w_o.weight), (theirs.out_proj.bias, ours.w_o.bias)]
    for their_p, our_ps in ((theirs.in_proj_weight, (ours.w_q.weight, ours.w_k.weight,
                                                     ours.w_v.weight)),
                            (theirs.in_proj_bias, (ours.w_q.bias, ours.w_k.bias, ours.w_v.bias))):
        if to_torch:
            their_p.copy_(torch.cat(our_ps, dim=0))  # (3 d_model, ...) packed q, k, v
        else:
            for p, chunk in zip(our_ps, their_p.chunk(3, dim=0), strict=True):
                p.copy_(chunk)
    for their_p, our_p in pairs:
        (their_p if to_torch else our_p).copy_(our_p if to_torch else their_p)


def _copy_module(ours: nn.Module, theirs: nn.Module, to_torch: bool) -> None:
    dst, src = (theirs, ours) if to_torch else (ours, theirs)
    dst.weight.copy_(src.weight)
    dst.bias.copy_(src.bias)


def _copy_layer(ours: nn.Module, theirs: nn.Module, to_torch: bool) -> None:
    _copy_mha(ours.self_attn, theirs.self_attn, to_torch)
    if hasattr(theirs, "multihead_attn"):
        _copy_mha(ours.cross_attn, theirs.multihead_attn, to_torch)
        _copy_module(ours.sublayers[2].norm, theirs.norm3, to_torch)
    _copy_module(ours.feed_forward.linear1, theirs.linear1, to_torch)
    _copy_module(ours.feed_forward.linear2, theirs.linear2, to_torch)
    _copy_module(ours.sublayers[0].norm, theirs.norm1, to_torch)
    _copy_module(ours.sublayers[1].norm, theirs.norm2, to_torch)


@torch.no_grad()
def _copy_stacks(model: Transformer, ref: nn.Transformer, to_torch: bool) -> None:
    _check_pair(model, ref)
    for ours, theirs in ((model.encoder, ref.encoder), (model.decoder, ref.decoder)):
        for our_layer, their_layer in zip(ours, theirs.layers, strict=True):
            _copy_layer(our_layer, their_layer, to_torch)
    if model.config.has_final_norm:
        _copy_module(model.encoder_norm, ref.encoder.norm, to_torch)
        _copy_module(model.decoder_norm, ref.decoder.norm, to_torch)


def to_torch_transformer(model: Transformer) -> nn.Transformer:
    """An ``nn.Transformer`` (batch_first) holding a copy of ``model``'s encoder/decoder weights.

    Without a final norm in ``model``, the returned stacks are built with ``norm=None``.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a transformer_course Transformer; "
                        f"got {type(model).__name__}")
    c = model.config
    layer_kwargs = dict(d_model=c.d_model, nhead=c.num_heads, dim_feedforward=c.d_ff,
                        dropout=c.dropout, layer_norm_eps=c.layer_norm_eps, batch_first=True,
                        norm_first=c.norm_first)
    param = next(model.parameters())
    factory = dict(device=param.device, dtype=param.dtype)

    def final_norm() -> nn.LayerNorm | None:
        return nn.LayerNorm(c.d_model, eps=c.layer_norm_eps, **factory) if c.has_final_norm \
            else None

    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**layer_kwargs, **factory),
                                    c.num_encoder_layers, norm=final_norm(),
                                    enable_nested_tensor=False)
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**layer_kwargs, **factory),
                                    c.num_decoder_layers, norm=final_norm())
    ref = nn.Transformer(d_model=c.d_model, nhead=c.num_heads, custom_encoder=encoder,
                         custom_decoder=decoder, batch_first=True, **factory)
    _copy_stacks(model, ref, to_torch=True)
    return ref.train(model.training)


def load_from_torch_transformer(model: Transformer, ref: nn.Transformer) -> None:
    """Copy ``ref``'s encoder/decoder weights into ``model`` (same sizes; in place).

    Embeddings and the output layer are left alone: ``nn.Transformer`` has none.
    """
    _copy_stacks(model, ref, to_torch=False)


def torch_masks(src: torch.Tensor, tgt: torch.Tensor, pad_id: int,
                ) -> dict[str, torch.Tensor]:
    """Masks in ``nn.Transformer``'s convention (True = blocked) for padded ``src``/``tgt``.

    Args:
        src: (B, S) ids. tgt: (B, T) ids. pad_id: the padding id.

    Returns:
        {"src_key_padding_mask": (B, S), "memory_key_padding_mask": (B, S),
        "tgt_key_padding_mask": (B, T), "tgt_mask": (T, T)}.
    """
    shapes = Shapes()
    shapes.tensor("src", src, "B S", dtype="int")
    shapes.tensor("tgt", tgt, "B T", dtype="int")
    src_pad = src == pad_id  # (B, S)
    return {"src_key_padding_mask": src_pad, "memory_key_padding_mask": src_pad,
            "tgt_key_padding_mask": tgt == pad_id,  # (B, T)
            "tgt_mask": ~causal_mask(tgt.shape[1], device=tgt.device)}  # (T, T)


def torch_reference_outputs(model: Transformer, ref: nn.Transformer, src: torch.Tensor,
                            tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Run ``ref``'s stacks on ``model``'s embeddings, with padding and causal masks.

    Args:
        src: (B, S) ids. tgt: (B, T) ids; ``model.config.pad_id`` marks padding in both.

    Returns:
        memory (B, S, d_model) and decoder hidden states (B, T, d_model), as ``nn.Transformer``
        computes them.
    """
    _check_pair(model, ref)
    shapes = Shapes()
    check_token_ids("src", src, model.config.src_vocab_size, "B S", shapes)
    check_token_ids("tgt", tgt, model.config.tgt_vocab_size, "B T", shapes)
    masks = torch_masks(src, tgt, model.config.pad_id)
    memory = ref.encoder(model.src_embed(src), src_key_padding_mask=masks["src_key_padding_mask"])
    hidden = ref.decoder(model.tgt_embed(tgt), memory, tgt_mask=masks["tgt_mask"],
                         tgt_key_padding_mask=masks["tgt_key_padding_mask"],
                         memory_key_padding_mask=masks["memory_key_padding_mask"])
    return memory, hidden
