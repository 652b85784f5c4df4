"""Weight mapping between our :class:`~transformer_course.model.Transformer` and ``nn.Transformer``.

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

from .checks import check_array
from .masks import causal_mask
from .model import Transformer


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
        _copy_module(ours.norm3, theirs.norm3, to_torch)
    _copy_module(ours.feed_forward.linear1, theirs.linear1, to_torch)
    _copy_module(ours.feed_forward.linear2, theirs.linear2, to_torch)
    _copy_module(ours.norm1, theirs.norm1, to_torch)
    _copy_module(ours.norm2, theirs.norm2, to_torch)


@torch.no_grad()
def _copy_stacks(model: Transformer, ref: nn.Transformer, to_torch: bool) -> None:
    _check_pair(model, ref)
    for ours_stack, theirs_stack in ((model.encoder, ref.encoder), (model.decoder, ref.decoder)):
        for ours, theirs in zip(ours_stack.layers, theirs_stack.layers, strict=True):
            _copy_layer(ours, theirs, to_torch)
        if ours_stack.norm is not None:
            _copy_module(ours_stack.norm, theirs_stack.norm, to_torch)


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
    check_array("src", src, kind=torch.Tensor, ndim=2, shape="(B, S)")
    check_array("tgt", tgt, kind=torch.Tensor, ndim=2, shape="(B, T)")
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
    model._check_tokens("src", src, model.config.src_vocab_size)
    model._check_tokens("tgt", tgt, model.config.tgt_vocab_size)
    masks = torch_masks(src, tgt, model.config.pad_id)
    memory = ref.encoder(model.src_embed(src), src_key_padding_mask=masks["src_key_padding_mask"])
    hidden = ref.decoder(model.tgt_embed(tgt), memory, tgt_mask=masks["tgt_mask"],
                         tgt_key_padding_mask=masks["tgt_key_padding_mask"],
                         memory_key_padding_mask=masks["memory_key_padding_mask"])
    return memory, hidden
