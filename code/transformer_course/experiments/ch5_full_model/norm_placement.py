"""Post-norm against pre-norm at initialisation: how large each layer's output and gradient are.

One random batch, one cross-entropy loss on random targets, no training: a forward hook on every
encoder and decoder layer records the RMS of the residual stream the layer hands on, and after
the backward pass the norm of the loss gradient with respect to that layer's parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn.functional as F

from transformer_course.core.model import Transformer, TransformerConfig

COLUMNS = ("stack", "norm", "layer", "hidden RMS", "gradient norm")


@dataclass(frozen=True)
class DepthConfig:
    """Sizes of the deep, narrow model and the random batch that probe it."""

    num_layers: int = 12  # N, layers in the encoder and in the decoder
    d_model: int = 64  # model width
    num_heads: int = 4  # h
    d_ff: int = 256  # feed-forward width
    vocab_size: int = 100  # source and target vocabulary (id 0, padding, is never drawn)
    batch: int = 8  # B, sentences in the batch
    src_len: int = 16  # S, source length
    tgt_len: int = 16  # T, target length (the decoder reads T tokens and predicts the next T)
    seed: int = 0  # seeds the weights; the batch uses seed + 1


def layer_profile(norm_first: bool, config: DepthConfig = DepthConfig()) -> pd.DataFrame:
    """Per-layer output RMS and parameter-gradient norm of a freshly initialised model.

    Args:
        norm_first: False for the paper's post-norm layers, True for pre-norm.
        config: model sizes, batch sizes and seed.

    Returns:
        One row per layer, encoder layers 1..N then decoder layers 1..N, with the columns
        stack, norm ("post-norm" / "pre-norm"), layer, hidden RMS, gradient norm.
    """
    torch.manual_seed(config.seed)
    model = Transformer(TransformerConfig(
        config.vocab_size, config.vocab_size, d_model=config.d_model, num_heads=config.num_heads,
        d_ff=config.d_ff, dropout=0.0, num_encoder_layers=config.num_layers,
        num_decoder_layers=config.num_layers,
        max_len=max(512, config.src_len, config.tgt_len),
        norm_first=norm_first))
    layers = {(stack, i + 1): layer for stack in ("encoder", "decoder")
              for i, layer in enumerate(getattr(model, stack))}
    outputs: dict[tuple[str, int], torch.Tensor] = {}
    handles = [layer.register_forward_hook(
        lambda module, args, out, key=key: outputs.update({key: out.detach()}))
        for key, layer in layers.items()]
    generator = torch.Generator().manual_seed(config.seed + 1)
    src = torch.randint(1, config.vocab_size, (config.batch, config.src_len),
                        generator=generator)  # (B, S)
    tgt = torch.randint(1, config.vocab_size, (config.batch, config.tgt_len + 1),
                        generator=generator)  # (B, T + 1)
    try:
        logits = model(src, tgt[:, :-1])  # (B, T, V)
        F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten()).backward()
    finally:
        for handle in handles:
            handle.remove()
    norm = "pre-norm" if norm_first else "post-norm"
    rows = [{"stack": stack, "norm": norm, "layer": i,
             "hidden RMS": outputs[stack, i].pow(2).mean().sqrt().item(),
             "gradient norm": _grad_norm(layer)}
            for (stack, i), layer in layers.items()]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _grad_norm(module: torch.nn.Module) -> float:
    """The norm of all of ``module``'s parameter gradients, as one vector."""
    return torch.cat([p.grad.flatten() for p in module.parameters()]).norm().item()


def gradient_growth(profile: pd.DataFrame, stack: str = "decoder") -> float:
    """Gradient norm of the last layer of ``stack`` divided by that of its first layer.

    Args:
        profile: one :func:`layer_profile` table (one norm placement).
    """
    grads = profile[profile["stack"] == stack].set_index("layer")["gradient norm"]
    return float(grads.loc[grads.index.max()] / grads.loc[grads.index.min()])
