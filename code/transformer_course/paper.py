"""The paper's own numbers, in one place: A. Vaswani, N. Shazeer, N. Parmar, J. Uszkoreit,
L. Jones, A. N. Gomez, L. Kaiser and I. Polosukhin, "Attention Is All You Need", NeurIPS 2017,
arXiv:1706.03762 (version 7). Chapters and experiments read them from here, never retype them.

Tables 1-3 and the hyper-parameters of sections 5 and 6, as the paper prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Table 1: complexity per layer, sequential operations and maximum path length, for sequence
# length n, width d, kernel size k and neighbourhood r. (Section 4 gives O(n/k) layers, and so
# path length, for contiguous kernels; the table lists the dilated O(log_k(n)).)
TABLE1 = {
    "self-attention": ("O(n²·d)", "O(1)", "O(1)"),
    "recurrent": ("O(n·d²)", "O(n)", "O(n)"),
    "convolutional": ("O(k·n·d²)", "O(1)", "O(log_k(n))"),
    "restricted self-attention": ("O(r·n·d)", "O(1)", "O(n/r)"),
}

# Section 5: training.
ADAM_BETAS = (0.9, 0.98)
ADAM_EPS = 1e-9
WARMUP_STEPS = 4000
DROPOUT = 0.1  # P_drop of the base model (0.3 for the big one on English-German)
LABEL_SMOOTHING = 0.1  # epsilon_ls
BATCH_TOKENS = 25_000  # about this many source and as many target tokens per batch
GPUS = "8 NVIDIA P100"
BASE_STEPS, BASE_HOURS, BASE_SECONDS_PER_STEP = 100_000, 12, 0.4
BIG_STEPS, BIG_DAYS, BIG_SECONDS_PER_STEP = 300_000, 3.5, 1.0

# Section 6.1: decoding and checkpoint averaging.
BEAM_SIZE = 4
LENGTH_PENALTY_ALPHA = 0.6
AVERAGED_CHECKPOINTS = {"base": 5, "big": 20}  # the last ones, written 10 minutes apart

# Table 2: BLEU on newstest2014 and training cost in FLOPs.
TABLE2 = {  # model: (English-German BLEU, English-French BLEU, training FLOPs)
    "Transformer (base model)": (27.3, 38.1, 3.3e18),
    "Transformer (big)": (28.4, 41.8, 2.3e19),
}


@dataclass(frozen=True)
class Table3Row:
    """One row of Table 3: English-German development set (newstest2013), beam search without
    checkpoint averaging. The changes are against the base model."""

    row: str  # the row as the table labels it
    changes: str  # what differs from the base model
    perplexity: float  # per word-piece
    bleu: float
    params_millions: float | None = None  # printed only where the change alters the count


# Table 3, the rows the course compares with (the base model is h 8, N 6, d_model 512, d_ff 2048,
# P_drop 0.1, eps_ls 0.1, 100K steps).
TABLE3 = {
    "base": Table3Row("base", "none", 4.92, 25.8, 65),
    "h = 1": Table3Row("(A)", "h = 1, d_k = d_v = 512", 5.29, 24.9),
    "h = 4": Table3Row("(A)", "h = 4, d_k = d_v = 128", 5.00, 25.5),
    "h = 16": Table3Row("(A)", "h = 16, d_k = d_v = 32", 4.91, 25.8),
    "h = 32": Table3Row("(A)", "h = 32, d_k = d_v = 16", 5.01, 25.4),
    "N = 2": Table3Row("(C)", "N = 2", 6.11, 23.7, 36),
    "N = 4": Table3Row("(C)", "N = 4", 5.19, 25.3, 50),
    "N = 8": Table3Row("(C)", "N = 8", 4.88, 25.5, 80),
    "P_drop = 0": Table3Row("(D)", "P_drop = 0.0", 5.77, 24.6),
    "P_drop = 0.2": Table3Row("(D)", "P_drop = 0.2", 4.95, 25.5),
    "eps_ls = 0": Table3Row("(D)", "eps_ls = 0.0", 4.67, 25.3),
    "eps_ls = 0.2": Table3Row("(D)", "eps_ls = 0.2", 5.47, 25.7),
    "learned positions": Table3Row("(E)", "positional embedding instead of sinusoids",
                                   4.92, 25.7),
    "big": Table3Row("big", "N 6, d_model 1024, d_ff 4096, h 16, P_drop 0.3, 300K steps",
                     4.33, 26.4, 213),
}

# Table 3's model sizes, for counting parameters (base and big).
BASE_MODEL = {"d_model": 512, "num_heads": 8, "num_encoder_layers": 6,
              "num_decoder_layers": 6, "d_ff": 2048}
BIG_MODEL = {"d_model": 1024, "num_heads": 16, "num_encoder_layers": 6,
             "num_decoder_layers": 6, "d_ff": 4096}
SHARED_VOCABULARY = 37_000  # byte-pair encoding shared by English and German (section 5.1)
