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

  let HALF_TABLE = null;  // every binary16 value, decoded once, for browsers without Float16Array

  function halves(bytes) {  // little-endian binary16 -> Float64Array
    const count = bytes.length / 2;
    if (typeof Float16Array === "function") {
      return Float64Array.from(new Float16Array(bytes.buffer, bytes.byteOffset, count));
    }
    if (!HALF_TABLE) {
      HALF_TABLE = new Float64Array(65536);
      for (let h = 0; h < 65536; h++) HALF_TABLE[h] = halfToFloat(h);
    }
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) out[i] = HALF_TABLE[bytes[2 * i] | (bytes[2 * i + 1] << 8)];
    return out;
  }

  /** {name: {shape, data: Float64Array}} from the exported payload: each tensor float32,
   *  float16, or int8 rows with a float32 scale per row (see explorer/export.py). */
  function loadTensors(payload) {
    const bytes = base64ToBytes(payload.data);
    const tensors = {};
    for (const [name, entry] of Object.entries(payload.tensors)) {
      const count = entry.shape.reduce((a, b) => a * b, 1);
      const at = bytes.byteOffset + entry.offset;
      let data;
      if (entry.dtype === "float16") {
        data = halves(bytes.subarray(entry.offset, entry.offset + 2 * count));
      } else if (entry.dtype === "float32") {
        data = Float64Array.from(new Float32Array(bytes.buffer, at, count));
      } else {  // int8 levels times the row's scale
        const levels = new Int8Array(bytes.buffer, at, count);
        const scales = new Float32Array(bytes.buffer, bytes.byteOffset + entry.scales,
                                        entry.shape[0]);
        const cols = count / entry.shape[0];
        data = new Float64Array(count);
        for (let i = 0; i < count; i++) data[i] = levels[i] * scales[Math.floor(i / cols)];
      }
      tensors[name] = {shape: entry.shape, data};
    }
    for (const [alias, name] of Object.entries(payload.aliases || {})) {
      tensors[alias] = tensors[name];
    }
    return tensors;
  }

  // ------------------------------------------------------------------- small dense algebra
  // A matrix is {rows, cols, data: Float64Array} in row-major order; a row is a Float64Array.
  function matrix(rows, cols, data) {
    return {rows, cols, data: data || new Float64Array(rows * cols)};
  }

  function rowOf(m, i) { return m.data.subarray(i * m.cols, (i + 1) * m.cols); }

  /** x (d_in,) -> W x + b, with W (d_out, d_in) as torch's nn.Linear stores it. */
  function linearRow(x, weight, bias) {
    const [dOut, dIn] = weight.shape;
    const y = new Float64Array(dOut);
    for (let o = 0; o < dOut; o++) {
      let sum = bias ? bias.data[o] : 0;
      const w = o * dIn;
      for (let k = 0; k < dIn; k++) sum += x[k] * weight.data[w + k];
      y[o] = sum;
    }
    return y;
  }

  function addRows(a, b) {
    const y = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) y[i] = a[i] + b[i];
    return y;
  }

  function layerNormRow(x, weight, bias, eps) {  // biased variance, as torch's LayerNorm
    let mean = 0, variance = 0;
    for (let k = 0; k < x.length; k++) mean += x[k];
    mean /= x.length;
    for (let k = 0; k < x.length; k++) variance += (x[k] - mean) ** 2;
    const scale = 1 / Math.sqrt(variance / x.length + eps);
    const y = new Float64Array(x.length);
    for (let k = 0; k < x.length; k++) y[k] = (x[k] - mean) * scale * weight.data[k] + bias.data[k];
    return y;
  }

  /** One query row against `count` cached keys and values (arrays of rows), per head: the
   *  concatenated head outputs (d_model,) and each head's weights (count,). */
  function attendRow(q, keys, values, count, heads, scale) {
    const dModel = q.length, dk = dModel / heads;
    const out = new Float64Array(dModel);
    const weights = [];
    for (let h = 0; h < heads; h++) {
      const off = h * dk, w = new Float64Array(count);
      let peak = -Infinity;
      for (let j = 0; j < count; j++) {
        let s = 0;
        for (let m = 0; m < dk; m++) s += q[off + m] * keys[j][off + m];
        w[j] = s * scale;
        peak = Math.max(peak, w[j]);
      }
      let total = 0;
      for (let j = 0; j < count; j++) { w[j] = Math.exp(w[j] - peak); total += w[j]; }
      for (let j = 0; j < count; j++) w[j] /= total;
      for (let j = 0; j < count; j++) {
        for (let m = 0; m < dk; m++) out[off + m] += w[j] * values[j][off + m];
      }
      weights.push(w);
    }
    return {out, weights};
  }

  // ----------------------------------------------------------------------------- the model
  function sinusoidalRow(pos, dModel, base) {  // PE(pos) of section 3.5, computed in float64
    const row = new Float64Array(dModel);
    for (let k = 0; k < dModel; k++) {
      const angle = pos / Math.pow(base, (2 * Math.floor(k / 2)) / dModel);
      row[k] = k % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
    return row;
  }

  /** (positions, d_model) sinusoidal encodings, as a matrix. */
  function sinusoidalEncoding(positions, dModel, base) {
    const pe = matrix(positions, dModel);
    for (let pos = 0; pos < positions; pos++) pe.data.set(sinusoidalRow(pos, dModel, base),
                                                          pos * dModel);
    return pe;
  }

  function stackRows(rows) {
    const m = matrix(rows.length, rows.length ? rows[0].length : 0);
    rows.forEach((r, i) => m.data.set(r, i * m.cols));
    return m;
  }

  /** The course's Transformer (transformer_course.core.model) for one sequence at a time. The
   *  decoder runs position by position with cached keys and values, which gives the same
   *  numbers as re-running the whole prefix: position t depends on positions <= t only. */
  class Transformer {
    constructor(payload, tensors) {  // tensors: already loaded (see loadTensors), or none
      this.c = payload.config;
      this.t = tensors || loadTensors(payload);
    }

    embedRow(prefix, token, pos) {  // sqrt(d_model) E[x_t] + PE_t; prefix: "src_embed", ...
      const c = this.c, d = c.d_model;
      const table = this.t[prefix + ".token.weight"].data;
      const x = new Float64Array(d);
      const scale = Math.sqrt(d);
      for (let k = 0; k < d; k++) x[k] = table[token * d + k] * scale;
      if (c.positional === "sinusoidal") return addRows(x, sinusoidalRow(pos, d, c.base));
      if (c.positional === "learned") {
        const learned = this.t[prefix + ".positional.embedding.weight"].data;
        return addRows(x, learned.subarray(pos * d, (pos + 1) * d));
      }
      return x;
    }

    lin(name, x, bias = true) {
      return linearRow(x, this.t[name + ".weight"], bias ? this.t[name + ".bias"] : null);
    }

    /** One sub-layer in its residual connection: post-norm (the paper) or pre-norm. */
    residual(prefix, x, sublayer) {
      const norm = y => layerNormRow(y, this.t[prefix + ".norm.weight"],
                                     this.t[prefix + ".norm.bias"], this.c.layer_norm_eps);
      return this.c.norm_first ? addRows(x, sublayer(norm(x))) : norm(addRows(x, sublayer(x)));
    }

    feedForward(prefix, x) {
      const hidden = this.lin(prefix + ".linear1", x).map(v => Math.max(0, v));
      return this.lin(prefix + ".linear2", hidden);
    }

    finalNorm(name, x) {
      const w = this.t[name + ".weight"];
      return w ? layerNormRow(x, w, this.t[name + ".bias"], this.c.layer_norm_eps) : x;
    }

    scale() { return this.c.scaled ? 1 / Math.sqrt(this.c.d_model / this.c.num_heads) : 1; }

    /** src: token ids (no padding) -> memory (S, d_model) and the encoder's self-attention
     *  weights, per layer a list of h (S, S) matrices. */
    encode(src) {
      const c = this.c;
      let xs = src.map((token, pos) => this.embedRow("src_embed", token, pos));
      const maps = [];
      for (let l = 0; l < c.num_encoder_layers; l++) {
        const p = "encoder." + l;
        const inputs = c.norm_first
          ? xs.map(x => layerNormRow(x, this.t[p + ".sublayers.0.norm.weight"],
                                     this.t[p + ".sublayers.0.norm.bias"], c.layer_norm_eps))
          : xs;
        const keys = inputs.map(x => this.lin(p + ".self_attn.w_k", x));
        const values = inputs.map(x => this.lin(p + ".self_attn.w_v", x));
        const rows = [];
        xs = xs.map((x, i) => {
          x = this.residual(p + ".sublayers.0", x, y => {
            const a = attendRow(this.lin(p + ".self_attn.w_q", y), keys, values, keys.length,
                                c.num_heads, this.scale());
            rows.push(a.weights);
            return this.lin(p + ".self_attn.w_o", a.out);
          });
          return this.residual(p + ".sublayers.1", x, y => this.feedForward(p + ".feed_forward", y));
        });
        maps.push(headMatrices(rows, c.num_heads, src.length));
      }
      return {memory: stackRows(xs.map(x => this.finalNorm("encoder_norm", x))), maps};
    }

    /** A decoder ready to read target tokens one at a time against `memory`. */
    startDecoding(memory) {
      const c = this.c, mem = Array.from({length: memory.rows}, (_, i) => rowOf(memory, i));
      const layers = [];
      for (let l = 0; l < c.num_decoder_layers; l++) {
        const p = "decoder." + l + ".cross_attn";
        layers.push({keys: [], values: [], selfRows: [], crossRows: [],
                     crossKeys: mem.map(m => this.lin(p + ".w_k", m)),
                     crossValues: mem.map(m => this.lin(p + ".w_v", m))});
      }
      return {layers, position: 0, sourceLength: memory.rows};
    }

    /** Masked self-attention for one new position z: its key and value are appended to the
     *  cached ones of the positions before it (which is the causal mask), then its query attends
     *  to them all. Returns the output (d_model,) and each head's weights. */
    attendCached(prefix, z, cache) {
      cache.keys.push(this.lin(prefix + ".w_k", z));
      cache.values.push(this.lin(prefix + ".w_v", z));
      const a = attendRow(this.lin(prefix + ".w_q", z), cache.keys, cache.values,
                          cache.keys.length, this.c.num_heads, this.scale());
      return {out: this.lin(prefix + ".w_o", a.out), weights: a.weights};
    }

    /** Feed the next target token; returns the logits (V,) for the token after it. */
    step(state, token) {
      const c = this.c;
      let y = this.embedRow("tgt_embed", token, state.position);
      state.layers.forEach((cache, l) => {
        const p = "decoder." + l;
        y = this.residual(p + ".sublayers.0", y, z => {
          const a = this.attendCached(p + ".self_attn", z, cache);
          cache.selfRows.push(a.weights);
          return a.out;
        });
        y = this.residual(p + ".sublayers.1", y, z => {
          const a = attendRow(this.lin(p + ".cross_attn.w_q", z), cache.crossKeys,
                              cache.crossValues, cache.crossKeys.length, c.num_heads,
                              this.scale());
          cache.crossRows.push(a.weights);
          return this.lin(p + ".cross_attn.w_o", a.out);
        });
        y = this.residual(p + ".sublayers.2", y, z => this.feedForward(p + ".feed_forward", z));
      });
      state.position += 1;
      return linearRow(this.finalNorm("decoder_norm", y), this.t["output_projection.weight"],
                       null);
    }

    /** The weights recorded so far: per layer, h matrices (T, T) (self) and (T, S) (cross). */
    decoderMaps(state) {
      const h = this.c.num_heads, T = state.position;
      return {self: state.layers.map(c => headMatrices(c.selfRows, h, T)),
              cross: state.layers.map(c => headMatrices(c.crossRows, h, state.sourceLength))};
    }

    /** tgt: the decoder's input ids (BOS first) -> logits (T, V) and the attention weights. */
    decode(tgt, memory) {
      const state = this.startDecoding(memory);
      const logits = stackRows(tgt.map(token => this.step(state, token)));
      return {logits, ...this.decoderMaps(state)};
    }

    /** Greedy decoding as transformer_course.core.greedy_decode: the most probable next
     *  token (never padding), until EOS or max_len positions (BOS included). */
    greedy(src, maxLen) {
      const c = this.c;
      const {memory, maps} = this.encode(src);
      const state = this.startDecoding(memory);
      const out = [c.bos_id];
      const stepLogits = [];
      while (out.length < maxLen) {
        const row = this.step(state, out[out.length - 1]);
        stepLogits.push(Array.from(row));
        let best = -1;
        for (let v = 0; v < row.length; v++) {
          if (v !== c.pad_id && (best < 0 || row[v] > row[best])) best = v;
        }
        out.push(best);
        if (best === c.eos_id) break;
      }
      // Row t of each map is the query that chose out[t + 1] (the last token is never read).
      return {tokens: out, stepLogits, encoder: maps, ...this.decoderMaps(state)};
    }
  }

  /** Rows of per-head weights (one entry per query: h arrays) -> h matrices (T, cols), each row
   *  padded with zeros past its own length (a causal row sees fewer keys). */
  function headMatrices(rows, heads, cols) {
    return Array.from({length: heads}, (_, h) => {
      const m = matrix(rows.length, cols);
      rows.forEach((r, i) => m.data.set(r[h], i * cols));
      return m;
    });
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


  /** The number that English words name, read loosely: hyphens, commas and "and" are ignored,
   *  so that "forty five" and "forty-five" both give 45. unknown: the words that are not number
   *  words (then value is null). */
  function readEnglish(text) {
    const words = text.toLowerCase().split(/[\s,-]+/).filter(Boolean);
    const unknown = [];
    let total = 0, current = 0;
    for (const word of words) {
      if (word === "and") continue;
      if (ONES.includes(word)) current += ONES.indexOf(word);
      else if (TENS.indexOf(word) > 1) current += 10 * TENS.indexOf(word);
      else if (word === "hundred") current *= 100;
      else if (word === "thousand") { total += current * 1000; current = 0; }
      else unknown.push(word);
    }
    return {value: unknown.length || !words.length ? null : total + current, unknown,
            loose: words.filter(w => w !== "and").join(" ")};
  }

  /** What the live translator makes of typed text when its model was trained on the English
   *  numbers low..high as num2words writes them: {words} to translate, or {refused: kind,
   *  message} (kind: "empty", "unknown", "range" or "form") saying why not. */
  function trainedInput(text, low, high) {
    const typed = text.trim().toLowerCase().replace(/\s+/g, " ");
    const range = low.toLocaleString("en-US") + " to " + high.toLocaleString("en-US");
    const trained = " The model was trained only on English numbers from " + range +
      ", in digits or written out as its training sentences write them (\"forty-five\", " +
      "\"one thousand, two hundred and thirty-four\"); it would answer anything else with a " +
      "confident guess, so it is not asked.";
    if (!typed) return {refused: "empty", message: "Type a number." + trained};
    let n;
    if (/^\d+$|^\d{1,3}(,\d{3})+$/.test(typed)) {
      n = Number(typed.replace(/,/g, ""));
    } else {
      const read = readEnglish(typed);
      if (read.unknown.length || /[^a-z ,-]/.test(typed)) {
        const odd = read.unknown.length ? read.unknown : typed.match(/[^a-z ,-]+/g);
        return {refused: "unknown", message: "\u201c" + odd.join("\u201d, \u201c") +
                "\u201d never appears in the training sentences." + trained};
      }
      n = read.value;
      if (n >= low && n <= high && englishNumber(n) !== typed) {
        const same = readEnglish(englishNumber(n)).loose === read.loose;
        return {refused: "form", message: same
          ? "The training sentences write this number \u201c" + englishNumber(n) +
            "\u201d, never \u201c" + typed + "\u201d." + trained
          : "\u201c" + typed + "\u201d is not a number as the training sentences write one." +
            trained};
      }
    }
    if (!(n >= low && n <= high)) {
      return {refused: "range", message: (n > 999999 ? "That number" : "\u201c" + typed +
              "\u201d") + " is outside the numbers the model was trained on." + trained};
    }
    return {words: englishNumber(n)};
  }


  // --------------------------------------------------------------------------- the viewer
  // A perceptually ordered colour scale (viridis, sampled), from 0 (dark) to 1 (yellow).
  const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
                   [31, 158, 137], [53, 183, 121], [110, 206, 88], [181, 222, 43],
                   [253, 231, 37]];

  function rgbOf(value) {
    const x = Math.min(1, Math.max(0, value)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(x)), f = x - i;
    return VIRIDIS[i].map((c, k) => Math.round(c + f * (VIRIDIS[i + 1][k] - c)));
  }

  function colour(value) { return "rgb(" + rgbOf(value).join(",") + ")"; }

  /** WCAG relative luminance of an sRGB colour given as 0..255 channels. */
  function luminance(rgb) {
    const [r, g, b] = rgb.map(c => {
      const s = c / 255;
      return s <= 0.04045 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }

  /** The text colour, black or white, that contrasts more with the cell's colour: at least
   *  4.58:1 whatever the weight (WCAG AA asks 4.5:1; near-black would leave 4.35:1 midway). */
  function textColour(value) {
    const l = luminance(rgbOf(value));
    return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff";
  }

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
  /** Mount the live translator. spec: {payload, source: {vocab: {word: id}, pattern, bos,
   *  eos, wrap}, target: {tokens: [id -> text], join}, examples: [numbers], maxLen}. The
   *  source is lower-cased and cut into every match of `pattern`, in order. */
  function mountTranslator(root, spec) {
    const started = performance.now();
    const model = new Transformer(spec.payload);
    root.classList.add("ae-translator");
    root.innerHTML = "";
    const range = spec.source.numbers ? spec.source.numbers.map(n => n.toLocaleString("en-US"))
                                      : ["0", "999,999"];
    const input = element("input", {type: "text", value: String(spec.examples[0]),
      "aria-label": "an English number from " + range[0] + " to " + range[1] +
                    ", in digits or in words",
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
      let words;
      if (spec.source.numbers) {  // refuse what the model was not trained on
        const checked = trainedInput(text, spec.source.numbers[0], spec.source.numbers[1]);
        if (checked.refused) {
          const error = new Error(checked.message);
          error.refused = checked.refused;
          throw error;
        }
        words = checked.words;
      } else {
        const trimmed = text.trim();
        words = /^\d+$/.test(trimmed) ? englishNumber(Number(trimmed)) : trimmed;
      }
      const pieces = words.toLowerCase().match(new RegExp(spec.source.pattern, "g")) || [];
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
        output.classList.add("ae-refusal");
        root.dataset.refused = error.refused || "vocabulary";
        delete root.dataset.translation;
        delete root.dataset.tokens;
        viewerRoot.innerHTML = "";
        viewer = null;
        return null;
      }
      output.classList.remove("ae-refusal");
      delete root.dataset.refused;
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
    Transformer, loadTensors, englishNumber, trainedInput, sinusoidalEncoding, halfToFloat,
    halves, colour, textColour, base64ToBytes, linearRow, attendRow, element,
    mountViewer, mountTranslator, mountAll,
  };
})();
