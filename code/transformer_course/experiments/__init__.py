"""What the chapters measure, one subpackage per chapter, each built on ``transformer_course.core``.

- ``ch1_why_attention``: a recurrent layer stepped by hand (``recurrence``), maximum path lengths
  by breadth-first search (``paths``), the paper's Table 1 by counting (``complexity``), what a
  second thread does for each layer (``threads``).
- ``ch2_scaled_dot_product_attention``: why scores are scaled and what attention costs
  (``attention_stats``), additive against dot-product attention as d_k grows
  (``score_functions``), each score function at its own best learning rate (``lr_sweep``, stored
  as ``lr_sweep.csv``).
- ``ch3_multi_head_attention``: multi-head attention in NumPy (``numpy_heads``); a two-lookup task
  whose heads specialise (``head_specialisation``).
- ``ch4_positional_encoding``: shifts as rotations (``relative_position``), what attention knows
  about order (``order``), positions past the training length (``position_extrapolation``).
- ``ch5_full_model``: a shape trace by forward hooks (``trace``), post-norm against pre-norm
  through depth (``norm_placement``).
- ``ch6_training``: synthetic tasks (``tasks``), training on them (``task_training``), ablations
  (``ablations``), the recipes (``recipes``).
- ``ch7_translation``: number words from ``num2words`` split by number (``number_corpus``),
  morphemes and BPE (``subwords``), the tokenised corpus (``pipeline``) and the split prepared
  as ids (``prepared``), the 400-step recipe (``recipe``), decoding a number (``translate``), the
  attention map chapter 1 opens with (``opening_map``), exact match, BLEU and chrF
  (``metrics``), errors (``errors``), gold alignments and their scores (``alignment``), the
  studies (``studies``) and their precomputed tables (``stored_tables.json``, written and read
  by ``stored_tables``), and what the page glues and checks (``page``).
"""
