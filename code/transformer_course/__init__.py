"""Shared code for "Attention, executed", an executable course on the Transformer.

Every chapter imports from here and the test suite checks all of it. Modules, in course order:

Infrastructure
- ``notebook``: set-up for a chapter (seeds, threads, plot style) and glue helpers.
- ``checks``: argument checks shared by every public function.
- ``timing``: median wall-clock timing for the measured figures.

1. Why attention
- ``recurrence``: a recurrent layer stepped by hand; gradients against distance.
- ``paths``: maximum path lengths by breadth-first search.
- ``complexity``: the paper's Table 1 by counting (FLOPs, sequential operations).

2. Scaled dot-product attention
- ``attention``: softmax and attention in NumPy and PyTorch (explicit and fused paths).
- ``masks``: causal and padding masks.
- ``attention_stats``: why scores are scaled; what attention costs.
- ``attention_exercises``: checks for the chapter's coding exercises.

3. Multi-head attention
- ``multihead``: the module, a NumPy version, weight copying from ``nn.MultiheadAttention``.
- ``head_specialisation``: a two-lookup task and a tiny model whose heads learn it.

4. Positional encoding
- ``positional``: sinusoidal encodings and learned position embeddings.
- ``relative_position``: shifts as rotations; similarity against offset.
- ``order``: what attention knows about word order.
- ``position_extrapolation``: a trained test on positions longer than any seen.

5. The full model
- ``model``: the encoder-decoder Transformer and its configuration.
- ``torch_reference``: weight mapping to and from ``nn.Transformer``.
- ``trace``: a shape trace through every sub-layer, by forward hooks.
- ``norm_placement``: post-norm against pre-norm through depth.
- ``model_exercises``: checks for the chapter's coding exercises.

6. Training
- ``tasks``: synthetic copy, reverse and sort tasks from seeded generators.
- ``batching``: padding, masks, teacher forcing with shifted targets.
- ``training``: the paper's schedule, label smoothing, the training loop, held-out accuracy.
- ``decoding``: batched greedy and beam search.
- ``ablations``: retrain with one ingredient removed.
- ``recipes``: the training recipes, defined once (chapter 6 and the benchmarks).
- ``training_exercises``: checks for the chapter's coding exercises.

``plots``: one function per figure, a module per chapter.
"""

__version__ = "0.1.0"
