"""The attention explorer: the trained model and its attention maps, live in the reader's browser.

- ``export``: a trained Transformer as a compact, deterministic JSON payload (and back).
- ``html``: self-contained HTML for the attention viewer and the live translator.
- ``explorer.js``, ``explorer.css``: the JavaScript forward pass, greedy decoding and viewer.
"""
