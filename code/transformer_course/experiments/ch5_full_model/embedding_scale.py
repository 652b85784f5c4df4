"""The scale of a shared embedding at initialisation: one number for the inputs and the logits.

With weight tying (Vaswani et al., 2017, section 3.4) one (V, d_model) matrix E is the input
embedding, multiplied by sqrt(d_model), and the output layer, logits = h E^T. A post-norm decoder
hands the output layer LayerNorm-ed states h, whose entries have RMS 1 at initialisation, so a
logit h . E_v has standard deviation about sqrt(d_model) * RMS(E): the RMS of the scaled input
embedding. How E is initialised therefore sets both at once. Xavier-uniform (the package's
``Transformer.reset_parameters``) gives RMS(E) = sqrt(2 / (V + d_model)), a scale that depends on
the vocabulary size; a normal initialisation with standard deviation d_model^-0.5 gives both
numbers 1 whatever V is.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import torch

from transformer_course.core.checks import check_choice
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.core.positional import sinusoidal_encoding

INITS = ("xavier", "normal")  # the package's Xavier-uniform, or N(0, 1 / d_model)


def _rms(x: torch.Tensor) -> float:
    return x.double().pow(2).mean().sqrt().item()


@torch.no_grad()
def embedding_scale(vocab_size: int, d_model: int, init: str = "xavier", *, seed: int = 0,
                    batch: int = 8, length: int = 16) -> dict[str, float | int | str]:
    """Measure a freshly initialised tied model: its scaled input embeddings and its logits.

    Builds a post-norm Transformer of width ``d_model`` (one layer per stack, shared vocabulary
    of ``vocab_size``), initialises the shared matrix as ``init`` says, and decodes ``batch``
    random target rows of ``length`` tokens against random sources.

    Returns:
        {"V", "d_model", "init", "embedding RMS" (RMS of sqrt(d_model) E), "encoding RMS" (RMS
        of the positional encoding's first ``length`` rows), "logit std" (standard deviation of
        the output logits), "hidden RMS" (RMS of the decoder output fed to the output layer)}.
    """
    check_choice("init", init, INITS)  # any other name would silently measure Xavier
    torch.manual_seed(seed)
    config = TransformerConfig(vocab_size, vocab_size, d_model=d_model, num_heads=2,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=2 * d_model,
                               dropout=0.0, max_len=length)
    model = Transformer(config).eval()
    shared = model.output_projection.weight  # (V, d_model), also both embeddings
    if init == "normal":
        torch.nn.init.normal_(shared, std=d_model ** -0.5)
    tokens = torch.randint(1, vocab_size, (2, batch, length))  # 0 is padding
    hidden = model.decode(tokens[1], model.encode(tokens[0]))  # (batch, length, d_model)
    logits = model.project(hidden)  # (batch, length, V)
    return {"V": vocab_size, "d_model": d_model, "init": init,
            "embedding RMS": _rms(shared * model.tgt_embed.scale),
            "encoding RMS": _rms(sinusoidal_encoding(length, d_model)),
            "logit std": logits.double().std().item(), "hidden RMS": _rms(hidden)}


def embedding_scales(sizes: Sequence[tuple[int, int]], inits: Sequence[str] = INITS,
                     seed: int = 0) -> pd.DataFrame:
    """:func:`embedding_scale` for every (V, d_model) in ``sizes`` and every ``init``, as rows."""
    return pd.DataFrame([embedding_scale(V, d, init, seed=seed)
                         for V, d in sizes for init in inits])
