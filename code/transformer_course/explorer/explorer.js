/* The attention explorer: the course's Transformer, forward pass and greedy decoding, in plain
 * JavaScript, and an accessible viewer for attention maps. No dependencies, no network: the page
 * carries the weights. Written from the paper's equations (Vaswani et al., 2017) to match
 * transformer_course.core exactly; the test suite compares the two in headless Chromium.
 *
 * Defines window.AttentionExplorer once, however many viewers a page holds.
 */
(function () {
  "use strict";
  if (window.AttentionExplorer) return;

  // ---------------------------------------------------------------- weights from the page
  function base64ToBytes(text) {
    const raw = atob(text);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  function halfToFloat(h) {  // IEEE 754 binary16 -> number
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x3ff;
    if (exponent === 0) return sign * Math.pow(2, -14) * (fraction / 1024);
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * Math.pow(2, exponent - 15) * (1 + fraction / 1024);
  }

  /** {name: {shape, data: Float64Array}} from the exported payload (float16 or float32). */
  function loadTensors(payload) {
    const bytes = base64ToBytes(payload.data);
    const view = new DataView(bytes.buffer);
    const size = payload.dtype === "float16" ? 2 : 4;
    const tensors = {};
    for (const [name, [offset, shape]] of Object.entries(payload.tensors)) {
      const count = shape.reduce((a, b) => a * b, 1);
      const data = new Float64Array(count);
      for (let i = 0; i < count; i++) {
        const at = (offset + i) * size;
        data[i] = size === 2 ? halfToFloat(view.getUint16(at, true))
                             : view.getFloat32(at, true);
      }
      tensors[name] = {shape, data};
    }
    for (const [alias, name] of Object.entries(payload.aliases || {})) {
      tensors[alias] = tensors[name];
    }
    return tensors;
  }

  // ------------------------------------------------------------------- small dense algebra
  // A matrix is {rows, cols, data: Float64Array} in row-major order.
  function matrix(rows, cols, data) {
    return {rows, cols, data: data || new Float64Array(rows * cols)};
  }

  /** x (n, d_in) -> x W^T + b, with W (d_out, d_in) as torch's nn.Linear stores it. */
  function linear(x, weight, bias) {
    const [dOut, dIn] = weight.shape;
    const y = matrix(x.rows, dOut);
    for (let i = 0; i < x.rows; i++) {
      for (let o = 0; o < dOut; o++) {
        let sum = bias ? bias.data[o] : 0;
        const w = o * dIn, r = i * dIn;
        for (let k = 0; k < dIn; k++) sum += x.data[r + k] * weight.data[w + k];
        y.data[i * dOut + o] = sum;
      }
    }
    return y;
  }

  function add(a, b) {
    const y = matrix(a.rows, a.cols);
    for (let i = 0; i < y.data.length; i++) y.data[i] = a.data[i] + b.data[i];
    return y;
  }

  function relu(x) {
    const y = matrix(x.rows, x.cols);
    for (let i = 0; i < y.data.length; i++) y.data[i] = Math.max(0, x.data[i]);
    return y;
  }

  function layerNorm(x, weight, bias, eps) {  // over the last dimension, biased variance
    const y = matrix(x.rows, x.cols);
    for (let i = 0; i < x.rows; i++) {
      let mean = 0, variance = 0;
      for (let k = 0; k < x.cols; k++) mean += x.data[i * x.cols + k];
      mean /= x.cols;
      for (let k = 0; k < x.cols; k++) variance += (x.data[i * x.cols + k] - mean) ** 2;
      const scale = 1 / Math.sqrt(variance / x.cols + eps);
      for (let k = 0; k < x.cols; k++) {
        const j = i * x.cols + k;
        y.data[j] = (x.data[j] - mean) * scale * weight.data[k] + bias.data[k];
      }
    }
    return y;
  }

  /** Row-wise softmax of scores where allowed(i, j); a row with nothing allowed is all zero. */
  function maskedSoftmax(scores, allowed) {
    const w = matrix(scores.rows, scores.cols);
    for (let i = 0; i < scores.rows; i++) {
      let peak = -Infinity;
      for (let j = 0; j < scores.cols; j++) {
        if (allowed(i, j)) peak = Math.max(peak, scores.data[i * scores.cols + j]);
      }
      if (peak === -Infinity) continue;
      let total = 0;
      for (let j = 0; j < scores.cols; j++) {
        if (!allowed(i, j)) continue;
        const e = Math.exp(scores.data[i * scores.cols + j] - peak);
        w.data[i * scores.cols + j] = e;
        total += e;
      }
      for (let j = 0; j < scores.cols; j++) w.data[i * scores.cols + j] /= total;
    }
    return w;
  }

  // ----------------------------------------------------------------------------- the model
  function sinusoidalEncoding(positions, dModel, base) {  // (positions, d_model), eq. of 3.5
    const pe = matrix(positions, dModel);
    for (let pos = 0; pos < positions; pos++) {
      for (let k = 0; k < dModel; k++) {
        const angle = pos / Math.pow(base, (2 * Math.floor(k / 2)) / dModel);
        pe.data[pos * dModel + k] = k % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
      }
    }
    return pe;
  }

  class Transformer {
    constructor(payload) {
      this.c = payload.config;
      this.t = loadTensors(payload);
    }

    embed(side, tokens) {  // sqrt(d_model) E[x_t] + PE_t
      const c = this.c, table = this.t[side + "_embed.token.weight"];
      const x = matrix(tokens.length, c.d_model);
      const pe = c.positional === "sinusoidal" ? sinusoidalEncoding(tokens.length, c.d_model,
                                                                      c.base) : null;
      const learned = this.t[side + "_embed.positional.embedding.weight"];
      const scale = Math.sqrt(c.d_model);
      for (let t = 0; t < tokens.length; t++) {
        for (let k = 0; k < c.d_model; k++) {
          let v = table.data[tokens[t] * c.d_model + k] * scale;
          if (pe) v += pe.data[t * c.d_model + k];
          if (c.positional === "learned") v += learned.data[t * c.d_model + k];
          x.data[t * c.d_model + k] = v;
        }
      }
      return x;
    }

    /** Multi-head attention from x_q (T_q, d) to x_kv (T_k, d); returns output and the
     *  per-head weights (h matrices (T_q, T_k)). */
    attention(prefix, xq, xkv, allowed) {
      const c = this.c, t = this.t, h = c.num_heads, dk = c.d_model / h;
      const q = linear(xq, t[prefix + ".w_q.weight"], t[prefix + ".w_q.bias"]);
      const k = linear(xkv, t[prefix + ".w_k.weight"], t[prefix + ".w_k.bias"]);
      const v = linear(xkv, t[prefix + ".w_v.weight"], t[prefix + ".w_v.bias"]);
      const scale = c.scaled ? 1 / Math.sqrt(dk) : 1;
      const concat = matrix(xq.rows, c.d_model);
      const weights = [];
      for (let head = 0; head < h; head++) {
        const off = head * dk;
        const scores = matrix(xq.rows, xkv.rows);
        for (let i = 0; i < xq.rows; i++) {
          for (let j = 0; j < xkv.rows; j++) {
            let s = 0;
            for (let m = 0; m < dk; m++) {
              s += q.data[i * c.d_model + off + m] * k.data[j * c.d_model + off + m];
            }
            scores.data[i * xkv.rows + j] = s * scale;
          }
        }
        const w = maskedSoftmax(scores, allowed);
        weights.push(w);
        for (let i = 0; i < xq.rows; i++) {
          for (let m = 0; m < dk; m++) {
            let s = 0;
            for (let j = 0; j < xkv.rows; j++) {
              s += w.data[i * xkv.rows + j] * v.data[j * c.d_model + off + m];
            }
            concat.data[i * c.d_model + off + m] = s;
          }
        }
      }
      return {out: linear(concat, t[prefix + ".w_o.weight"], t[prefix + ".w_o.bias"]),
              weights};
    }

    /** One sub-layer in its residual connection: post-norm (the paper) or pre-norm. */
    residual(prefix, x, sublayer) {
      const norm = y => layerNorm(y, this.t[prefix + ".norm.weight"],
                                  this.t[prefix + ".norm.bias"], this.c.layer_norm_eps);
      return this.c.norm_first ? add(x, sublayer(norm(x))) : norm(add(x, sublayer(x)));
    }

    feedForward(prefix, x) {
      const t = this.t;
      return linear(relu(linear(x, t[prefix + ".linear1.weight"], t[prefix + ".linear1.bias"])),
                    t[prefix + ".linear2.weight"], t[prefix + ".linear2.bias"]);
    }

    finalNorm(name, x) {
      const w = this.t[name + ".weight"];
      return w ? layerNorm(x, w, this.t[name + ".bias"], this.c.layer_norm_eps) : x;
    }

    /** src: token ids (no padding) -> memory (S, d_model) and the encoder's weights. */
    encode(src) {
      let x = this.embed("src", src);
      const maps = [];
      const all = () => true;
      for (let l = 0; l < this.c.num_encoder_layers; l++) {
        const p = "encoder." + l;
        x = this.residual(p + ".sublayers.0", x, y => {
          const a = this.attention(p + ".self_attn", y, y, all);
          maps.push(a.weights);
          return a.out;
        });
        x = this.residual(p + ".sublayers.1", x, y => this.feedForward(p + ".feed_forward", y));
      }
      return {memory: this.finalNorm("encoder_norm", x), maps};
    }

    /** tgt: the decoder's input ids (BOS first) -> logits (T, V) and the attention weights. */
    decode(tgt, memory) {
      let y = this.embed("tgt", tgt);
      const self = [], cross = [];
      const causal = (i, j) => j <= i, all = () => true;
      for (let l = 0; l < this.c.num_decoder_layers; l++) {
        const p = "decoder." + l;
        y = this.residual(p + ".sublayers.0", y, z => {
          const a = this.attention(p + ".self_attn", z, z, causal);
          self.push(a.weights);
          return a.out;
        });
        y = this.residual(p + ".sublayers.1", y, z => {
          const a = this.attention(p + ".cross_attn", z, memory, all);
          cross.push(a.weights);
          return a.out;
        });
        y = this.residual(p + ".sublayers.2", y, z => this.feedForward(p + ".feed_forward", z));
      }
      y = this.finalNorm("decoder_norm", y);
      return {logits: linear(y, this.t["output_projection.weight"], null), self, cross};
    }

    /** Greedy decoding as transformer_course.core.greedy_decode: the most probable next
     *  token (never padding), until EOS or max_len positions (BOS included). */
    greedy(src, maxLen) {
      const c = this.c;
      const {memory, maps} = this.encode(src);
      const out = [c.bos_id];
      const stepLogits = [];
      while (out.length < maxLen) {
        const {logits} = this.decode(out, memory);
        const row = logits.data.subarray((out.length - 1) * logits.cols, out.length * logits.cols);
        stepLogits.push(Array.from(row));
        let best = -1;
        for (let v = 0; v < row.length; v++) {
          if (v !== c.pad_id && (best < 0 || row[v] > row[best])) best = v;
        }
        out.push(best);
        if (best === c.eos_id) break;
      }
      // The maps of the output as the decoder read it: row t is the query that chose out[t + 1].
      const last = this.decode(out.slice(0, -1), memory);
      return {tokens: out, stepLogits, encoder: maps, self: last.self, cross: last.cross};
    }
  }

  // ------------------------------------------------------------------------ English numbers
  const ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                "seventeen", "eighteen", "nineteen"];
  const TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                "ninety"];

  function below100(n) {
    if (n < 20) return ONES[n];
    return TENS[Math.floor(n / 10)] + (n % 10 ? "-" + ONES[n % 10] : "");
  }

  function below1000(n) {
    if (n < 100) return below100(n);
    const rest = n % 100;
    return ONES[Math.floor(n / 100)] + " hundred" + (rest ? " and " + below100(rest) : "");
  }

  /** An integer 0 .. 999,999 in English words, as num2words(n, lang="en") writes it. */
  function englishNumber(n) {
    if (!Number.isInteger(n) || n < 0 || n > 999999) {
      throw new RangeError("n must be an integer from 0 to 999,999; got " + n);
    }
    if (n < 1000) return below1000(n);
    const rest = n % 1000;
    const head = below1000(Math.floor(n / 1000)) + " thousand";
    if (!rest) return head;
    return head + (rest >= 100 ? ", " : " and ") + below1000(rest);
  }


  // --------------------------------------------------------------------------- the viewer
  // A perceptually ordered colour scale (viridis, sampled), from 0 (dark) to 1 (yellow).
  const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
                   [31, 158, 137], [53, 183, 121], [110, 206, 88], [181, 222, 43],
                   [253, 231, 37]];

  function colour(value) {
    const x = Math.min(1, Math.max(0, value)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(x)), f = x - i;
    const rgb = VIRIDIS[i].map((c, k) => Math.round(c + f * (VIRIDIS[i + 1][k] - c)));
    return "rgb(" + rgb.join(",") + ")";
  }

  function textColour(value) { return value > 0.6 ? "#111" : "#fff"; }

  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }

  function legend() {
    const stops = VIRIDIS.map((c, i) => "rgb(" + c.join(",") + ") " +
                              (100 * i / (VIRIDIS.length - 1)).toFixed(0) + "%");
    return element("div", {class: "ae-legend", "aria-hidden": "true"}, [
      element("span", {text: "weight 0"}),
      element("span", {class: "ae-legend-bar",
                       style: "background: linear-gradient(to right, " + stops.join(", ") + ")"}),
      element("span", {text: "1"}),
    ]);
  }

  /** Mount an attention viewer in `root`.
   *  spec: {title, maps: [{label, heads: [[row, ...], ...]}], queries: [labels],
   *         keys: [labels], queryName, keyName}. Each map holds h heads of (T_q, T_k) weights. */
  function mountViewer(root, spec) {
    root.classList.add("ae-viewer");
    root.innerHTML = "";
    const state = {map: 0, head: 0, row: null};
    const caption = element("p", {class: "ae-readout", "aria-live": "polite"});
    const mapSelect = element("select", {"aria-label": "layer", onchange: () => {
      state.map = Number(mapSelect.value);
      state.head = Math.min(state.head, spec.maps[state.map].heads.length - 1);
      draw();
    }}, spec.maps.map((m, i) => element("option", {value: String(i), text: m.label})));
    const headBox = element("span", {class: "ae-heads", role: "radiogroup",
                                     "aria-label": "head"});
    const table = element("table", {class: "ae-map"});
    root.appendChild(element("div", {class: "ae-controls"}, [
      element("label", {text: "Layer "}, [mapSelect]), headBox]));
    root.appendChild(table);
    root.appendChild(legend());
    root.appendChild(caption);

    function weights() { return spec.maps[state.map].heads[state.head]; }

    function describe(row) {
      if (row === null) {
        caption.textContent = "Hover over or focus a " + (spec.queryName || "query") +
                              " token to read where it looks.";
        return;
      }
      const w = weights()[row];
      let best = 0;
      w.forEach((v, j) => { if (v > w[best]) best = j; });
      caption.textContent = (spec.queryName || "query") + " \u201c" + spec.queries[row] +
        "\u201d looks most at \u201c" + spec.keys[best] + "\u201d (" + w[best].toFixed(2) +
        "); " + spec.keys.map((k, j) => k + " " + w[j].toFixed(2)).join(", ");
    }

    function select(row) {
      state.row = row;
      table.querySelectorAll("tr[data-row]").forEach(tr => {
        tr.classList.toggle("ae-active", Number(tr.dataset.row) === row);
      });
      describe(row);
    }

    function draw() {
      headBox.innerHTML = "";
      spec.maps[state.map].heads.forEach((_, i) => {
        const button = element("button", {type: "button", role: "radio",
          "aria-checked": String(i === state.head), class: i === state.head ? "ae-on" : "",
          text: "head " + (i + 1), onclick: () => { state.head = i; draw(); }});
        headBox.appendChild(button);
      });
      table.innerHTML = "";
      const head = element("tr", {}, [element("th", {scope: "col",
        text: (spec.queryName || "query") + " \u2193 / " + (spec.keyName || "key") + " \u2192"})]);
      spec.keys.forEach(k => head.appendChild(element("th", {scope: "col", text: k})));
      table.appendChild(element("thead", {}, [head]));
      const body = element("tbody");
      weights().forEach((row, i) => {
        const label = element("th", {scope: "row", tabindex: "0", text: spec.queries[i],
          onfocus: () => select(i), onmouseenter: () => select(i),
          onkeydown: event => {
            const next = event.key === "ArrowDown" ? i + 1 : event.key === "ArrowUp" ? i - 1 : i;
            if (next !== i && next >= 0 && next < spec.queries.length) {
              event.preventDefault();
              body.querySelectorAll("th[scope=row]")[next].focus();
            }
          }});
        const tr = element("tr", {"data-row": String(i), onmouseenter: () => select(i)}, [label]);
        row.forEach((v, j) => {
          tr.appendChild(element("td", {style: "background:" + colour(v) + ";color:" +
            textColour(v), title: spec.queries[i] + " \u2192 " + spec.keys[j] + ": " +
            v.toFixed(3), "data-weight": v.toFixed(6), text: v >= 0.995 ? "1" : v.toFixed(2)
              .replace(/^0/, "")}));
        });
        body.appendChild(tr);
      });
      table.appendChild(body);
      select(state.row === null ? null : Math.min(state.row, spec.queries.length - 1));
    }

    draw();
    return {
      state,
      setMap(i) { state.map = i; mapSelect.value = String(i); draw(); },
      setHead(i) { state.head = i; draw(); },
      select,
    };
  }

  // ------------------------------------------------------------------------ the translator
  /** Mount the live translator. spec: {payload, source: {vocab: {word: id}, split, bos, eos,
   *  wrap}, target: {tokens: [id -> text], join}, examples: [numbers], maxLen, noscript}. */
  function mountTranslator(root, spec) {
    const started = performance.now();
    const model = new Transformer(spec.payload);
    root.classList.add("ae-translator");
    root.innerHTML = "";
    const input = element("input", {type: "text", value: String(spec.examples[0]),
      "aria-label": "an English number, in digits (0 to 999999) or in words",
      size: "44", onkeydown: event => { if (event.key === "Enter") run(); }});
    const examples = element("span", {class: "ae-examples"}, spec.examples.map(n =>
      element("button", {type: "button", text: String(n),
                         onclick: () => { input.value = String(n); run(); }})));
    const output = element("p", {class: "ae-output", "aria-live": "polite"});
    const viewerRoot = element("div");
    root.appendChild(element("div", {class: "ae-controls"}, [
      element("label", {text: "English: "}, [input]),
      element("button", {type: "button", text: "Translate", onclick: () => run()}),
      element("span", {text: " or try "}), examples]));
    root.appendChild(output);
    root.appendChild(viewerRoot);
    let viewer = null;

    function sourceIds(text) {
      const trimmed = text.trim();
      const words = /^\d+$/.test(trimmed) ? englishNumber(Number(trimmed)) : trimmed;
      const pieces = words.toLowerCase().split(new RegExp(spec.source.split))
        .filter(p => p.length > 0);
      const unknown = pieces.filter(p => !(p in spec.source.vocab));
      if (unknown.length) throw new Error("not in the vocabulary: " + unknown.join(", "));
      const ids = pieces.map(p => spec.source.vocab[p]);
      return {words, pieces, ids: spec.source.wrap ? [spec.source.bos, ...ids, spec.source.eos]
                                                   : ids,
              labels: spec.source.wrap ? ["<s>", ...pieces, "</s>"] : pieces};
    }

    function run() {
      let source;
      try {
        source = sourceIds(input.value);
      } catch (error) {
        output.textContent = error.message;
        return null;
      }
      const t0 = performance.now();
      const result = model.greedy(source.ids, spec.maxLen);
      const seconds = (performance.now() - t0) / 1000;
      const pieces = result.tokens.slice(1).map(id => spec.target.tokens[id]);
      const ended = pieces[pieces.length - 1] === "</s>";
      const text = (ended ? pieces.slice(0, -1) : pieces).join(spec.target.join);
      output.textContent = source.words + " \u2192 " + text + "  (" +
        (1000 * seconds).toFixed(1) + " ms in this page)";
      const maps = result.cross.map((heads, l) => ({
        label: "decoder layer " + (l + 1) + ", cross-attention",
        heads: heads.map(w => Array.from({length: w.rows}, (_, i) =>
          Array.from(w.data.subarray(i * w.cols, (i + 1) * w.cols))))}));
      const state = viewer ? {map: viewer.state.map, head: viewer.state.head} : {map: 0, head: 0};
      viewer = mountViewer(viewerRoot, {maps, queries: pieces, keys: source.labels,
                                        queryName: "German", keyName: "English"});
      viewer.setMap(Math.min(state.map, maps.length - 1));
      viewer.setHead(state.head);
      root.dataset.translation = text;
      root.dataset.tokens = JSON.stringify(result.tokens);
      return {source, result, text};
    }

    const first = run();
    root.dataset.firstTranslationMs = (performance.now() - started).toFixed(1);
    return {model, run, input, get viewer() { return viewer; }, first};
  }

  /** Mount every viewer and translator whose data sits in a <script type="application/json">
   *  beside its container (class ae-mount, data-kind viewer|translator). */
  function mountAll(scope) {
    (scope || document).querySelectorAll(".ae-mount:not([data-mounted])").forEach(root => {
      const data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
      const target = element("div");
      root.appendChild(target);
      root.dataset.mounted = "true";
      root.explorer = root.dataset.kind === "translator" ? mountTranslator(target, data)
                                                         : mountViewer(target, data);
    });
  }

  window.AttentionExplorer = {
    Transformer, loadTensors, englishNumber, sinusoidalEncoding, halfToFloat, colour,
    mountViewer, mountTranslator, mountAll,
  };
})();
