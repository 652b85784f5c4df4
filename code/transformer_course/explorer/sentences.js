/* Chapter 8's two stored models in the reader's browser: the Spanish-to-English translator and
 * the decoder-only writer. Plain JavaScript on top of the attention explorer's forward pass
 * (explorer.js, which must be on the page first); no network, no dependencies.
 *
 * - BPE: the course's tokenizer (bpe.json), run as Hugging Face `tokenizers` runs it: NFC, a
 *   "▁" before every word (Metaspace), each punctuation mark its own piece, then the merges in
 *   rank order; decoding turns "▁" back into spaces.
 * - loadStored: the int8 file format of experiments/ch8_real_sentences/weights.py, each weight
 *   rounded to float32 exactly as Python rounds it.
 * - DecoderOnly: the writer, the explorer's decoder without cross-attention.
 * - The weights (several MB) are not in the page: a reader's click loads them from the site's
 *   _static/ch8/ folder, as <script> files, which also works from file://.
 *
 * Defines window.LiveSentences once, however many widgets a page holds.
 */
(function () {
  "use strict";
  if (window.LiveSentences) return;
  const AE = window.AttentionExplorer;
  const MARK = "\u2581";
  const PUNCTUATION = /[\p{P}!-\/:-@\[-`{-~]/u;  // Unicode punctuation, and ASCII's symbols

  // ----------------------------------------------------------------------------- tokenizer
  class BPE {
    /** spec: {tokens: [piece by id], merges: [[left, right] by rank], special: [names]}. */
    constructor(spec) {
      this.tokens = spec.tokens;
      this.ids = new Map(spec.tokens.map((piece, id) => [piece, id]));
      this.ranks = new Map(spec.merges.map(([a, b], rank) => [a + " " + b, rank]));
      this.special = new Set(spec.special.map(name => this.ids.get(name)));
      this.unk = this.ids.get("<unk>");
    }

    /** The pre-tokens of a text: "▁" for each space and before the first word, cut before
     *  every "▁", and each punctuation character cut out on its own. */
    static words(text) {
      let marked = text.normalize("NFC").replace(/ /g, MARK);
      if (!marked) return [];
      if (!marked.startsWith(MARK)) marked = MARK + marked;
      const words = [];
      for (const chunk of marked.split(new RegExp("(?=" + MARK + ")"))) {
        let current = "";
        for (const ch of chunk) {
          if (PUNCTUATION.test(ch)) {
            if (current) words.push(current);
            words.push(ch);
            current = "";
          } else {
            current += ch;
          }
        }
        if (current) words.push(current);
      }
      return words;
    }

    /** One pre-token's pieces: characters, then the lowest-ranked adjacent pair merged until
     *  none is left (a character outside the vocabulary is "<unk>" and merges with nothing). */
    pieces(word) {
      const symbols = Array.from(word, ch => (this.ids.has(ch) ? ch : null));
      for (;;) {
        let best = -1, bestRank = Infinity;
        for (let i = 0; i + 1 < symbols.length; i++) {
          if (symbols[i] === null || symbols[i + 1] === null) continue;
          const rank = this.ranks.get(symbols[i] + " " + symbols[i + 1]);
          if (rank !== undefined && rank < bestRank) { best = i; bestRank = rank; }
        }
        if (best < 0) break;
        symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
      }
      return symbols.map(s => (s === null ? "<unk>" : s));
    }

    /** text -> {pieces, ids}, no BOS or EOS. */
    encode(text) {
      const pieces = BPE.words(text).flatMap(word => this.pieces(word));
      return {pieces, ids: pieces.map(p => (p === "<unk>" ? this.unk : this.ids.get(p)))};
    }

    /** ids -> text: special tokens dropped, "▁" read as a space (none before the first). */
    decode(ids) {
      return ids.filter(id => !this.special.has(id)).map((id, i) => {
        const piece = this.tokens[id];
        return i === 0 ? piece.split(MARK).join("") : piece.split(MARK).join(" ");
      }).join("");
    }
  }

  // ------------------------------------------------------------------------- stored weights
  /** A stored model (weights.py's layout: "TC8\0", the header's length, a JSON header, then
   *  each tensor's bytes) -> {name: {shape, data: Float32Array}}. An int8 row times its scale,
   *  stored as float32, is the float32 product Python computes. */
  function loadStored(base64) {
    const bytes = AE.base64ToBytes(base64);
    if (String.fromCharCode(...bytes.subarray(0, 3)) !== "TC8" || bytes[3] !== 0) {
      throw new Error("not a stored model (weights.py's format)");
    }
    const length = new DataView(bytes.buffer).getUint32(4, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
    const body = 8 + length;
    const tensors = {};
    for (const entry of header.filter(e => !e.same_as)) {
      const count = entry.shape.reduce((a, b) => a * b, 1), at = body + entry.offset;
      let data;
      if (entry.kind === "int8_rows") {
        const [rows, cols] = entry.shape;
        const levels = new Int8Array(bytes.buffer, at, count);
        const scales = new Float32Array(bytes.buffer, at + count + (-count & 3), rows);
        data = new Float32Array(count);
        for (let r = 0; r < rows; r++) {
          for (let k = r * cols; k < (r + 1) * cols; k++) data[k] = levels[k] * scales[r];
        }
      } else {
        data = new Float32Array(bytes.buffer, at, count);
      }
      tensors[entry.name] = {shape: entry.shape, data};
    }
    for (const entry of header.filter(e => e.same_as)) tensors[entry.name] = tensors[entry.same_as];
    return tensors;
  }

  // -------------------------------------------------------------------------- the writer
  /** The decoder alone (experiments/ch8_real_sentences/models.py's DecoderOnly): N layers of
   *  causal self-attention and feed-forward, a final LayerNorm, the tied output layer. Reads one
   *  token at a time with cached keys and values, as the explorer's decoder does. */
  class DecoderOnly extends AE.Transformer {
    start() {
      return {position: 0, layers: Array.from({length: this.c.num_decoder_layers},
                                              () => ({keys: [], values: []}))};
    }

    /** Feed the next token; returns the logits (V,) of the token after it. */
    step(state, token) {
      let y = this.embedRow("embed", token, state.position);
      state.layers.forEach((cache, l) => {
        const p = "layers." + l;
        y = this.residual(p + ".sublayers.0", y,
                          z => this.attendCached(p + ".self_attn", z, cache).out);
        y = this.residual(p + ".sublayers.1", y, z => this.feedForward(p + ".feed_forward", z));
      });
      state.position += 1;
      return AE.linearRow(this.finalNorm("norm", y), this.t["output_projection.weight"], null);
    }
  }

  /** softmax(logits / temperature) over the topK largest logits (ties with the k-th kept), 0
   *  elsewhere; topK null keeps them all. As models.next_token_probabilities. */
  function nextTokenProbabilities(logits, temperature, topK) {
    const z = Float64Array.from(logits, v => v / temperature);
    if (topK) {
      const kth = Array.from(z).sort((a, b) => b - a)[topK - 1];
      for (let v = 0; v < z.length; v++) if (z[v] < kth) z[v] = -Infinity;
    }
    let peak = -Infinity, total = 0;
    for (const v of z) peak = Math.max(peak, v);
    const p = z.map(v => Math.exp(v - peak));
    for (const v of p) total += v;
    return p.map(v => v / total);
  }

  /** A seeded generator of uniform numbers in [0, 1) (mulberry32): the page's draws repeat
   *  for a seed, but they are not PyTorch's, so the page's samples differ from Python's. */
  function uniforms(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function draw(probabilities, uniform) {
    let u = uniform(), last = 0;
    for (let v = 0; v < probabilities.length; v++) {
      if (probabilities[v] > 0) last = v;
      u -= probabilities[v];
      if (u < 0) return v;
    }
    return last;
  }

  // ------------------------------------------------------------------------ loading files
  const loading = {};

  function loadScript(url) {
    if (!loading[url]) {
      loading[url] = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = url;
        script.onload = resolve;
        script.onerror = () => { delete loading[url]; reject(new Error(url)); };
        document.head.appendChild(script);
      });
    }
    return loading[url];
  }

  /** Load the named assets (each a script that sets window.CourseAssets[name]). */
  async function assets(spec, names) {
    await Promise.all(names.map(name => loadScript(spec.base + name + ".js")));
    return names.map(name => window.CourseAssets[name]);
  }

  function megabytes(bytes) { return (bytes / 1e6).toFixed(1) + " MB"; }

  /** The words of `text` (letters only) that `seen` (a Set) does not hold. */
  function unseen(text, seen) {
    const words = text.normalize("NFC").match(/\p{L}+/gu) || [];
    return [...new Set(words.filter(w => !seen.has(w)))];
  }

  /** A message for the input's words the training verses never use, and characters the
   *  tokenizer does not know (empty when there are none). */
  function honesty(text, tokenizer, seen, language) {
    const parts = [];
    const words = unseen(text, seen);
    const them = words.length === 1 ? "it" : "them";
    if (words.length) {
      parts.push("\u201c" + words.join("\u201d, \u201c") + "\u201d never appear" +
        (words.length === 1 ? "s" : "") + " in the " + language + " training verses: the " +
        "model sees only pieces of " + them + ", so what it makes of " + them + " is a guess.");
    }
    const odd = [...new Set(text.normalize("NFC"))].filter(ch => ch !== " " &&
                                                             !tokenizer.ids.has(ch));
    if (odd.length) {
      parts.push("The characters \u201c" + odd.join("\u201d, \u201c") + "\u201d never " +
        "appear in the training text; the model cannot see them (\u201c<unk>\u201d).");
    }
    return parts.join(" ");
  }

  function loadGate(root, label, bytes, onLoad) {
    const note = AE.element("p", {class: "ls-status", "aria-live": "polite",
      text: "The model's weights are not part of this page: " + megabytes(bytes) +
            " load when you ask."});
    const button = AE.element("button", {type: "button", class: "ls-load",
      text: "Load the " + label + " (" + megabytes(bytes) + ")"});
    button.addEventListener("click", async () => {
      button.disabled = true;
      note.textContent = "Loading " + megabytes(bytes) + "\u2026";
      const started = performance.now();
      try {
        await onLoad(started);
        button.remove();
        note.remove();
      } catch (error) {
        button.disabled = false;
        note.textContent = "The model's files did not load (" + error.message + "). They " +
          "come with the built course site, in _static/ch8/; a notebook does not carry " +
          "them, and its Python cells above run the same model.";
        root.dataset.failed = "true";
      }
    });
    root.appendChild(AE.element("div", {class: "ae-controls"}, [button]));
    root.appendChild(note);
  }

  // ------------------------------------------------------------------------ the two widgets
  /** What each widget loads and builds: its model's file and class, the language its input
   *  words are checked against, its widget, and the timing it records after the first run. */
  const KINDS = {
    translator: {file: "translator", Model: AE.Transformer, language: "spanish",
                 widget: translatorWidget, timing: "firstTranslationMs"},
    writer: {file: "writer", Model: DecoderOnly, language: "english",
             widget: writerWidget, timing: "firstSampleMs"},
  };

  /** Mount a widget of `kind` ("translator" or "writer") in `root`: a button that loads the
   *  tokenizer and the stored model, then the widget, run once on its first example. spec: as
   *  translatorWidget or writerWidget reads it, plus {base, bytes, config}. */
  function mountModel(root, kind, spec) {
    const k = KINDS[kind];
    root.classList.add("ls-" + kind);
    loadGate(root, kind, spec.bytes, async started => {
      const [bpe, weights] = await assets(spec, ["bpe", k.file]);
      const tokenizer = new BPE(bpe);
      const seen = new Set(bpe.seen[k.language].split("\n"));
      const model = new k.Model({config: spec.config}, loadStored(weights));
      root.dataset.loadMs = (performance.now() - started).toFixed(1);
      const widget = k.widget(root, spec, tokenizer, model, seen);
      widget.run();
      root.dataset[k.timing] = (performance.now() - started).toFixed(1);
      root.widget = widget;
    });
  }

  // ------------------------------------------------------------------------ the translator
  /** spec: {maxExtra, examples: [{label, spanish, english}], checks} (and mountModel's). */
  function translatorWidget(root, spec, tokenizer, model, seen) {
    const c = spec.config;
    const input = AE.element("input", {type: "text", size: "60",
      value: spec.examples[0].spanish, "aria-label": "Spanish text to translate",
      onkeydown: e => { if (e.key === "Enter") run(); }});
    const examples = AE.element("span", {class: "ae-examples"}, spec.examples.map(ex =>
      AE.element("button", {type: "button", text: ex.label,
                            onclick: () => { input.value = ex.spanish; run(); }})));
    const output = AE.element("p", {class: "ae-output", "aria-live": "polite"});
    const reference = AE.element("p", {class: "ls-reference"});
    const warning = AE.element("p", {class: "ls-warning"});
    const viewerRoot = AE.element("div", {class: "ls-scroll"});
    let viewer = null;
    root.appendChild(AE.element("div", {class: "ae-controls"}, [
      AE.element("label", {text: "Spanish: "}, [input]),
      AE.element("button", {type: "button", text: "Translate", onclick: () => run()}),
      AE.element("span", {text: " or a verse from the test books: "}), examples]));
    root.appendChild(output);
    root.appendChild(warning);
    root.appendChild(reference);
    root.appendChild(viewerRoot);

    function run() {
      const text = input.value.trim().replace(/\s+/g, " ");
      const encoded = tokenizer.encode(text);
      if (!encoded.ids.length) {
        output.textContent = "Type a Spanish sentence.";
        return null;
      }
      const src = [c.bos_id, ...encoded.ids, c.eos_id];
      const maxLen = Math.min(Math.floor(1.5 * src.length) + spec.maxExtra, c.max_len);
      const t0 = performance.now();
      const result = model.greedy(src, maxLen);
      const ms = performance.now() - t0;
      const english = tokenizer.decode(result.tokens);
      output.textContent = english + "  (" + (ms / 1000).toFixed(2) + " s in this page)";
      const note = honesty(text, tokenizer, seen, "Spanish");
      warning.textContent = note ? "\u26a0 " + note : "";
      const example = spec.examples.find(ex => ex.spanish === text);
      reference.textContent = example ? "The reference translation: " + example.english : "";
      const pieces = result.tokens.slice(1).map(id => tokenizer.tokens[id]);
      const maps = result.cross.map((heads, l) => ({
        label: "decoder layer " + (l + 1) + ", cross-attention",
        heads: heads.map(w => Array.from({length: w.rows}, (_, i) =>
          Array.from(w.data.subarray(i * w.cols, (i + 1) * w.cols))))}));
      const shown = viewer ? viewer.state : {map: maps.length - 1, head: 0};  // last layer first
      viewer = AE.mountViewer(viewerRoot, {maps, queries: pieces,
                                           keys: ["<s>", ...encoded.pieces, "</s>"],
                                           queryName: "English", keyName: "Spanish"});
      viewer.setMap(Math.min(shown.map, maps.length - 1));
      viewer.setHead(shown.head);
      root.dataset.tokens = JSON.stringify(result.tokens);
      root.dataset.translation = english;
      return english;
    }

    return {run, input, tokenizer, model};
  }

  // ---------------------------------------------------------------------------- the writer
  /** spec: {maxNew, prompt, temperatures, topKs, checks} (and mountModel's). */
  function writerWidget(root, spec, tokenizer, model, seen) {
    const c = spec.config;
    let seed = 0;
    const input = AE.element("input", {type: "text", size: "40", value: spec.prompt,
      "aria-label": "the English opening the writer continues",
      onkeydown: e => { if (e.key === "Enter") run(); }});
    const temperature = AE.element("select", {"aria-label": "temperature"},
      spec.temperatures.map(t => AE.element("option", {value: String(t), text: String(t)})));
    temperature.value = String(spec.temperatures[0]);
    const topK = AE.element("select", {"aria-label": "top-k"}, spec.topKs.map(k =>
      AE.element("option", {value: String(k || 0),
                            text: k === 1 ? "1 (greedy)" : k ? String(k) : "all"})));
    topK.value = String(spec.topKs[0] || 0);
    const output = AE.element("p", {class: "ae-output", "aria-live": "polite"});
    const warning = AE.element("p", {class: "ls-warning"});
    const table = AE.element("table", {class: "ls-next"});
    const caption = AE.element("p", {class: "ls-status", text: "The five likeliest next " +
      "pieces after the opening, at this temperature and top-k (\u2581 starts a word):"});
    root.appendChild(AE.element("div", {class: "ae-controls"}, [
      AE.element("label", {text: "Opening: "}, [input]),
      AE.element("label", {text: "temperature "}, [temperature]),
      AE.element("label", {text: "top-k "}, [topK]),
      AE.element("button", {type: "button", text: "Write", onclick: () => run()}),
      AE.element("button", {type: "button", text: "Another sample",
                            onclick: () => { seed += 1; run(); }})]));
    root.appendChild(output);
    root.appendChild(warning);
    root.appendChild(caption);
    root.appendChild(table);

    /** The writer's tokens after BOS and the opening, with the next-token probabilities of
     *  the first step. */
    function write(ids, t, k, uniform) {
      const state = model.start();
      let logits = null;
      for (const id of [c.bos_id, ...ids]) logits = model.step(state, id);
      const first = nextTokenProbabilities(logits, t, k);
      const out = [];
      let probabilities = first;
      while (out.length < spec.maxNew) {
        const token = draw(probabilities, uniform);
        out.push(token);
        if (token === c.eos_id) break;
        probabilities = nextTokenProbabilities(model.step(state, token), t, k);
      }
      return {tokens: out, first};
    }

    function run() {
      const text = input.value.trim().replace(/\s+/g, " ");
      const encoded = tokenizer.encode(text);
      const t = Number(temperature.value), k = Number(topK.value) || null;
      const t0 = performance.now();
      const result = write(encoded.ids, t, k, uniforms(seed));
      const ms = performance.now() - t0;
      output.textContent = tokenizer.decode([...encoded.ids, ...result.tokens]) + "  (" +
        (ms / 1000).toFixed(2) + " s in this page, sample " + (seed + 1) + ")";
      const note = honesty(text, tokenizer, seen, "English");
      warning.textContent = note ? "\u26a0 " + note : "";
      const ranked = Array.from(result.first.keys()).sort((a, b) => result.first[b] -
                                                                   result.first[a]).slice(0, 5);
      table.innerHTML = "";
      table.appendChild(AE.element("tr", {}, [AE.element("th", {scope: "col", text: "piece"}),
        AE.element("th", {scope: "col", text: "probability"})]));
      for (const id of ranked) {
        table.appendChild(AE.element("tr", {}, [AE.element("td", {text: tokenizer.tokens[id]}),
          AE.element("td", {text: result.first[id].toFixed(3)})]));
      }
      root.dataset.tokens = JSON.stringify([...encoded.ids, ...result.tokens]);
      return result;
    }

    return {run, write, input, tokenizer, model};
  }

  /** Mount every widget whose data sits in a <script type="application/json"> beside its
   *  container (class ls-mount, data-kind translator|writer). */
  function mountAll(scope) {
    (scope || document).querySelectorAll(".ls-mount:not([data-mounted])").forEach(root => {
      const data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
      const target = AE.element("div");
      root.appendChild(target);
      root.dataset.mounted = "true";
      mountModel(target, root.dataset.kind, data);
    });
  }

  window.LiveSentences = {
    BPE, loadStored, DecoderOnly, nextTokenProbabilities, uniforms, draw, unseen, honesty,
    mountModel, mountAll,
  };
})();
