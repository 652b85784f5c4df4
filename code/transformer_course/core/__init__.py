"""The Transformer of "Attention Is All You Need" (Vaswani et al., 2017), and nothing else.

This subpackage imports nothing from the rest of ``transformer_course`` (a test holds it to that),
so it can be read, and lifted out, on its own. Modules, in the order of the paper:

- ``attention``: scaled dot-product attention (section 3.2.1), in NumPy and PyTorch.
- ``masks``: padding and causal masks.
- ``multihead``: multi-head attention (section 3.2.2).
- ``positional``: sinusoidal and learned positional encodings (section 3.5).
- ``model``: embeddings, encoder and decoder layers, the encoder-decoder (section 3, Figure 1).
- ``batching``: padding, shifted targets and masks for teacher forcing.
- ``schedule``: the learning-rate schedule (section 5.3).
- ``loss``: label smoothing (section 5.4).
- ``training``: one training step, the loop, held-out metrics.
- ``decoding``: greedy decoding and beam search with a length penalty (section 6.1).
- ``checks``: the argument checks of the functions and classes a reader calls directly.
"""

from .attention import (
    attention,
    naive_softmax,
    scaled_dot_product_attention,
    scaled_dot_product_attention_numpy,
    softmax,
)
from .batching import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    Batch,
    make_batch,
    pad_sequences,
    shift_targets,
    trim_batch,
    wrap_sources,
)
from .decoding import (
    beam_search,
    cached_step_function,
    greedy_decode,
    length_penalty,
    model_step_function,
    sequence_log_prob,
    smallest_lead,
)
from .kv_cache import DecoderCache, KVCache, cached_attention, decode_with_cache
from .loss import label_smoothed_loss, loss_floor, smoothed_targets
from .masks import (
    causal_mask,
    combine_masks,
    decoder_self_attention_mask,
    padding_mask_from_lengths,
    padding_mask_from_tokens,
)
from .model import (
    ConfiguredLayer,
    DecoderLayer,
    Embeddings,
    EncoderLayer,
    PositionwiseFeedForward,
    Residual,
    Transformer,
    TransformerConfig,
    count_parameters,
    stack_norm,
    xavier_init,
)
from .multihead import MultiHeadAttention
from .positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    sinusoidal_encoding,
    sinusoidal_encoding_numpy,
    sinusoidal_frequencies,
    sinusoidal_wavelengths,
)
from .schedule import noam_lr, peak_lr
from .training import (
    Evaluation,
    Metrics,
    TrainConfig,
    TrainResult,
    accuracies,
    evaluate,
    evaluate_decoding,
    make_optimizer,
    teacher_forced_loss,
    train,
    train_step,
)

__all__ = [
    "accuracies", "attention", "Batch", "beam_search", "BOS_ID", "cached_attention",
    "cached_step_function", "ConfiguredLayer",
    "causal_mask", "combine_masks", "count_parameters", "decoder_self_attention_mask",
    "decode_with_cache", "DecoderCache", "DecoderLayer", "Embeddings", "EncoderLayer", "EOS_ID",
    "evaluate", "evaluate_decoding", "Evaluation", "stack_norm", "greedy_decode", "KVCache",
    "label_smoothed_loss", "LearnedPositionalEmbedding", "length_penalty", "loss_floor",
    "make_batch", "make_optimizer", "Metrics", "model_step_function", "MultiHeadAttention",
    "naive_softmax", "noam_lr", "PAD_ID", "pad_sequences", "padding_mask_from_lengths",
    "padding_mask_from_tokens", "peak_lr", "PositionwiseFeedForward", "Residual",
    "scaled_dot_product_attention", "scaled_dot_product_attention_numpy", "sequence_log_prob",
    "shift_targets", "sinusoidal_encoding", "sinusoidal_encoding_numpy",
    "sinusoidal_frequencies", "sinusoidal_wavelengths", "SinusoidalPositionalEncoding",
    "smallest_lead", "smoothed_targets", "softmax", "teacher_forced_loss", "train", "train_step",
    "TrainConfig", "TrainResult", "Transformer", "TransformerConfig", "trim_batch",
    "wrap_sources", "xavier_init",
]
