// graph.js: the live graph widget of autograd_lab, in plain JavaScript (read me, learner!).
//
// widget.py sends one JSON object, `graph`: the snapshot's nodes, edges and backward events, and a
// layout computed in Python (a box for every visible node, a polyline for every edge, a frame for
// every scope). This file draws it as SVG and replays the computation one step at a time:
//   step 0            before the forward pass: only the leaf tensors have values
//   steps 1..F        forward: the F op nodes compute their results, in creation order
//   steps F+1..F+E    backward: the engine's events in its real order
//                       run         a node starts, holding the gradient of its output
//                       send        it passes a gradient on to one of its inputs
//                       accumulate  a leaf's .grad is added to
// Traits shared with Python: graph (Python -> here), step, selected, collapsed (both ways).
// Controls: the buttons and slider; a play speed; "next node", which skips the sends; and keys once
// the widget has the focus (a click on it): ← → a step, Shift+← → a node, Space play, Esc unpin.
// A compiled function's graph (viz/compiled.py) adds two optional parts: `clusters`, fused
// kernels drawn as orange frames that collapse to one box, and `memory`, a memory plan: each
// step shows which values are alive (teal) or already freed (grey), and a bar of the live bytes.
// Big graphs: the search box finds nodes by label, variable or op (Enter: the next one), and
// `repeats` (viz/repeats.py), blocks the model applies N times, are drawn once, as one box "×N".
// No libraries, no build step, nothing fetched: anywidget loads this file as an ES module.

const SVG_NS = "http://www.w3.org/2000/svg"; // an XML name, not a download
// The colours of the static picture (svg.py): tensors are filled boxes, ops white and rounded.
const ROLES = {
  // role: [fill, border, what the legend says]
  input: ["#dbeafe", "#2563eb", "input (leaf)"],
  parameter: ["#ede9fe", "#7c3aed", "parameter"],
  output: ["#dcfce7", "#16a34a", "output (root)"],
  intermediate: ["#ffffff", "#6b7280", "op (intermediate)"],
};
const SAVED = "#d97706"; // an amber border: some op saved this value for its backward
const FUSED = ["#ffedd5", "#ea580c"]; // a fused kernel (compile): orange, unlike a module's scope
const ALIVE = "#0d9488"; // the memory plan: a value alive after this step
const LINE_H = 15; // layout.py sized each box for lines of 12px monospace, 15px apart
const PAD_Y = 6;
// Play speeds, in steps a second: slow enough to read a caption, fast enough for 5,981 steps
const SPEEDS = [1, 2, 5, 20, 60];
const DEFAULT_SPEED = 2;
const MIN_FIT = 0.75; // "fit" never shrinks text below 75% (12px -> 9px): it scrolls instead
const NARROW = 1024; // a widget this wide or narrower puts the inspector below the drawing
const EDGE_SPREAD = 10; // pixels between the parallel lines of an input used twice (x * x)
const KEYS = ["ArrowRight", "ArrowLeft", " ", "Escape"]; // the widget's own keys (onKey)

// ---- small helpers ---------------------------------------------------------------------------

function svg(tag, attrs = {}, parent = null, text = null) {
  return element(document.createElementNS(SVG_NS, tag), attrs, parent, text);
}

function html(tag, attrs = {}, parent = null, text = null) {
  return element(document.createElement(tag), attrs, parent, text);
}

function element(node, attrs, parent, text) {
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// Numbers as layout.py (and PyTorch) print them: "7." for a whole float, else 4 significant digits.
function num(x, integer = false) {
  if (typeof x !== "number") return String(x); // "nan", "inf", "-inf" arrive as strings
  if (integer) return String(Math.trunc(x));
  if (Number.isInteger(x) && Math.abs(x) < 1e6) return `${x}.`;
  const strip = (s) => s.replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
  const [mantissa, exp] = x.toExponential(3).split("e"); // Python's format(x, ".4g") from here
  const e = Number(exp);
  if (e >= -4 && e < 4) return strip(x.toFixed(3 - e));
  return `${strip(mantissa)}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

const isInteger = (dtype) => /^(int|uint|bool)/.test(dtype || "");
const shapeText = (shape) => (shape && shape.length ? `[${shape.join(", ")}]` : "scalar");
const valuesText = (v, integer) =>
  Array.isArray(v) ? `[${v.map((x) => valuesText(x, integer)).join(", ")}]` : num(v, integer);

// A tensor summary in one short line, exactly as layout.py measured it: values when few, else stats.
function summaryText(s, dtype, maxNumbers = 4) {
  if (!s) return "";
  if (s.values != null && s.numel <= maxNumbers) {
    const text = valuesText(s.values, isInteger(dtype));
    // as layout.py's summary_text: [[0.25, 0.25], [0.25, 0.25]] would overflow the box it sized
    if (text.length <= 6 * maxNumbers) return text;
  }
  if (s.mean == null) return shapeText(s.shape);
  return `${shapeText(s.shape)} mean ${num(s.mean)}`;
}

// The long form, for the tooltip and inspector: values when shipped, always the statistics.
function summaryLines(s, dtype) {
  if (!s) return ["—"];
  const integer = isInteger(dtype);
  const lines = [];
  if (s.values == null) lines.push(`${shapeText(s.shape)}: ${s.numel} elements, too many to show`);
  else if (s.shape.length === 2) lines.push(...s.values.map((row) => valuesText(row, integer)));
  else lines.push(valuesText(s.values, integer));
  if (s.numel > 1 && s.mean != null) {
    lines.push(`min ${num(s.min)}  max ${num(s.max)}`, `mean ${num(s.mean)}  norm ${num(s.norm)}`);
  }
  return lines;
}

const flat = (v) => (Array.isArray(v) ? v.flatMap(flat) : [v]);
// 6 significant digits like graph.py's summaries; NaN and infinities as the strings it uses
function round6(x) {
  if (Number.isFinite(x)) return Number(x.toPrecision(6));
  return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
}

// Gradients that reach one node add up. With both values at hand the sum is exact; a big tensor
// ships only statistics, so its latest part stands in until the node runs with the true sum.
function addSummaries(a, b) {
  if (!a || a.values == null || b.values == null || a.numel !== b.numel) return b;
  const add = (x, y) => (Array.isArray(x) ? x.map((v, i) => add(v, y[i])) : round6(Number(x) + Number(y)));
  const values = add(a.values, b.values);
  const xs = flat(values).map(Number);
  const sum = (f) => xs.reduce((total, x) => total + f(x), 0);
  return {
    shape: b.shape,
    numel: b.numel,
    values,
    min: round6(Math.min(...xs)),
    max: round6(Math.max(...xs)),
    mean: round6(sum((x) => x) / xs.length),
    norm: round6(Math.sqrt(sum((x) => x * x))),
  };
}

// Play, pause and step icons, drawn rather than typed so that every font shows them.
const ICONS = {
  first: "M3 3h2v10H3zM13 3v10L6 8z",
  back: "M3 3h2v10H3zM14 3v10L7 8z",
  play: "M4 2v12l10-6z",
  pause: "M4 3h3v10H4zM9 3h3v10H9z",
  forward: "M2 3v10l7-5zM11 3h2v10h-2z",
  last: "M3 3v10l7-5zM11 3h2v10h-2z",
  prevnode: "M15 3v10L9 8zM8 3v10L2 8z",
  nextnode: "M1 3v10l6-5zM8 3v10l6-5z",
};

// ---- replaying the computation up to a step --------------------------------------------------

// Everything the picture shows at `step`, replayed from step 0 (cheap: one pass over the events).
function replay(g, step) {
  const F = g.forward.length;
  const box = (id) => g.layout.hidden[id] || id; // a hidden node shows up as its scope's box
  const s = {
    done: new Set(), // nodes whose value exists at this step
    grad: new Map(), // node -> the gradient it shows
    flow: new Map(), // edge -> the gradient that went back along it
    active: null, // the node this step is about (framed in red)
    activeEdges: [], // the edge a gradient is travelling along now
    forwardEdges: [], // the inputs of the op computing now
    caption: "",
  };
  for (const n of g.nodes) if (n.kind === "tensor" && !g.producer[n.id]) s.done.add(n.id);

  // forward: each op in turn computes its output (a fused kernel: every op inside it at once)
  for (let i = 0; i < Math.min(step, F); i++) {
    const op = g.forward[i];
    s.done.add(box(op));
    for (const out of g.outputs[op] || []) s.done.add(out);
    for (const member of g.members[op] || []) s.done.add(member);
  }
  if (step === 0) {
    s.caption = "Step 0: before the forward pass, only the leaf tensors have values. Press play or step.";
  }
  if (step >= 1 && step <= F) {
    const op = g.forward[step - 1];
    s.active = box(op);
    s.forwardEdges = g.layout.edges.filter((e) => e.target === s.active).flatMap(edgeKeys); // its inputs
    s.caption = `Forward ${step}/${F}: ${g.onScreen(op)} computes ${summaryText(g.value(op)) || "its output"}`;
    if (g.kernelOf[op]) s.caption += ` (one kernel runs all of ${g.kernelOf[op].label})`;
  }

  // backward: gradients arrive (send), add up in a buffer, are used (run), land in .grad (accumulate)
  const buffer = new Map(); // gradients received by a node that has not run yet
  const parts = new Map(); // ... and each part, to show the sum being formed
  const acc = new Map(); // a leaf's .grad
  let sent = new Map(); // since the running node started: how many sends went along each edge
  for (let j = 0; j < step - F; j++) {
    const ev = g.events[j];
    const last = j === step - F - 1;
    const gtext = summaryText(ev.grad);
    let caption = "";
    if (ev.kind === "send") {
      const target = ev.target;
      buffer.set(target, addSummaries(buffer.get(target), ev.grad));
      parts.set(target, [...(parts.get(target) || []), ev.grad]);
      if (!acc.has(target)) s.grad.set(box(target), buffer.get(target));
      // the forward edge input -> op, walked backwards; x * x has two, one for each gradient
      const pair = `${box(target)}>${box(ev.node)}`;
      const k = Math.min(sent.get(pair) || 0, (g.edgeCount[pair] || 1) - 1);
      sent.set(pair, k + 1);
      const key = `${pair}#${k}`;
      s.flow.set(key, ev.grad);
      caption = `${g.onScreen(ev.node)} sends gradient ${gtext} to ${g.label(target)}`;
      const p = parts.get(target);
      if (p.length > 1) {
        const sum = `${p.map((x) => summaryText(x)).join(" + ")} = ${summaryText(buffer.get(target))}`;
        caption += `, where gradients add up: ${sum}`;
      }
      if (last) s.activeEdges = [key];
    } else if (ev.kind === "run") {
      s.grad.set(box(ev.node), acc.get(ev.node) || ev.grad);
      buffer.delete(ev.node);
      parts.delete(ev.node);
      sent = new Map();
      for (const out of g.outputs[ev.node] || []) {
        if (!s.grad.has(out)) s.grad.set(out, ev.grad); // the root's seed gradient (ones)
        s.flow.set(`${box(ev.node)}>${out}#0`, ev.grad);
      }
      caption = g.isOp(ev.node)
        ? `${g.onScreen(ev.node)} runs with the gradient of its output, ${gtext}`
        : `AccumulateGrad of ${g.label(ev.node)} runs with ${gtext}`;
    } else if (ev.kind === "accumulate") {
      acc.set(ev.node, addSummaries(acc.get(ev.node), ev.grad));
      s.grad.set(box(ev.node), acc.get(ev.node));
      const leaf = g.label(ev.node);
      caption = `${leaf}.grad += ${gtext}, so ${leaf}.grad = ${summaryText(acc.get(ev.node))}`;
    }
    if (last) {
      s.active = box(ev.kind === "send" ? ev.target : ev.node);
      s.caption = `Backward ${j + 1}/${g.events.length}: ${caption}`;
    }
  }
  if (step === F && F > 0) {
    s.caption += "  ·  the forward pass is done" + (g.events.length ? ", backward comes next" : "");
  }
  return s;
}

// An edge's key, "source>target#k": k counts the lines of an input used k times (x * x: #0, #1).
const edgeKeys = (e) => Array.from({ length: e.count || 1 }, (_, k) => `${e.source}>${e.target}#${k}`);

// Lookups the replay needs, built once per graph (of a hidden node, only its label and kind).
function index(graph) {
  const g = { ...graph }; // the model's own object stays as Python sent it
  const byId = Object.fromEntries(g.nodes.map((n) => [n.id, n]));
  g.byId = byId;
  g.producer = {};
  g.outputs = {};
  for (const e of g.edges) {
    if (byId[e.target] && byId[e.target].kind === "tensor") {
      g.producer[e.target] = e.source; // an op's output drawn as its own tensor node (a root)
      (g.outputs[e.source] = g.outputs[e.source] || []).push(e.target);
    }
  }
  g.clusters = g.clusters || {};
  g.kernelOf = {}; // the node whose step runs a fused kernel -> its cluster
  for (const c of Object.values(g.clusters)) if (c.node) g.kernelOf[c.node] = c;
  g.members = {}; // a fused kernel's node -> the ops drawn inside it (computed with it)
  for (const n of g.nodes) if (n.fused_into) (g.members[n.fused_into] = g.members[n.fused_into] || []).push(n.id);
  const about = (id) => byId[id] || (g.hidden_nodes || {})[id] || { label: id, kind: "op" };
  g.label = (id) => about(id).label;
  g.isOp = (id) => about(id).kind === "op";
  // what a caption calls a node: its label on screen, and for an op the class too, so that two
  // Adds are told apart: "d = Add (AddBackward0)"
  g.onScreen = (id) => {
    const n = about(id);
    return n.kind === "op" && n.op && n.op !== n.label ? `${n.label} (${n.op})` : n.label;
  };
  g.edgeCount = {};
  for (const e of g.layout.edges) g.edgeCount[`${e.source}>${e.target}`] = e.count || 1;
  // the steps that are about a node: every forward step, and backward's runs and accumulates
  // (not the sends in between): what "next node" moves along
  const F = g.forward.length;
  g.nodeSteps = [0, ...g.forward.map((_, i) => i + 1)];
  g.events.forEach((ev, j) => ev.kind !== "send" && g.nodeSteps.push(F + j + 1));
  if (g.nodeSteps[g.nodeSteps.length - 1] !== g.n_steps) g.nodeSteps.push(g.n_steps);
  g.value = (id) => byId[id] && byId[id].value;
  g.repeats = g.repeats || [];
  g.repeatNamed = Object.fromEntries(g.repeats.map((r) => [r.name, r]));
  // the largest gradient sent: edge widths are relative to it
  const norm = (ev) => (ev.grad && typeof ev.grad.norm === "number" ? ev.grad.norm : 0);
  g.maxNorm = g.events.reduce((m, ev) => Math.max(m, norm(ev)), 1e-30);
  return g;
}

// ---- the view --------------------------------------------------------------------------------

class GraphView {
  constructor(model, el) {
    this.model = model;
    this.timer = null;
    // focusable, so that the arrow keys reach it (a click on the drawing focuses it)
    this.root = html("div", { class: "agl-widget", tabindex: "0", "aria-label": "graph widget" }, el);
    this.speed = DEFAULT_SPEED;
    this.buildToolbar();
    this.caption = html("div", { class: "agl-caption" }, this.root);
    // what this drawing cannot show (a PyTorch graph whose backward ran unwatched: from_torch.py)
    this.note = html("div", { class: "agl-note", hidden: "" }, this.root);
    // the memory plan's live bytes after this step, as a bar (shown for graphs that have a plan)
    this.memBar = html("div", { class: "agl-membar", hidden: "" }, this.root);
    this.memFill = html("div", { class: "agl-membar-fill" }, html("div", { class: "agl-membar-track" }, this.memBar));
    this.memText = html("span", { class: "agl-membar-text" }, this.memBar);
    const main = html("div", { class: "agl-main" }, this.root);
    this.canvas = html("div", { class: "agl-canvas" }, main);
    this.inspector = html("div", { class: "agl-inspector", hidden: "" }, main);
    this.legend = html("div", { class: "agl-legend" }, this.root);
    this.tooltip = html("div", { class: "agl-tooltip", hidden: "" }, this.root);
    this.root.addEventListener("keydown", (e) => this.onKey(e));
    // A notebook moves the focus to itself on a click in a cell (Notebook 7 does): take it back,
    // so that ← → step this widget. Buttons and the slider keep the focus they get themselves.
    this.root.addEventListener("click", (e) => {
      if (!e.target.closest("button, input, select")) this.root.focus({ preventScroll: true });
    });
    // ...and the notebook's own shortcuts for these keys (← → move between cells in Notebook 7)
    // must not act while this widget has the focus: JupyterLab and Notebook 7 skip their
    // shortcuts for a key pressed inside an element marked data-lm-suppress-shortcuts. They
    // listen before us, so the mark is set for our keys only, as each key goes down.
    this.onAnyKey = (e) => {
      const ours = KEYS.includes(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey && this.root.contains(e.target);
      if (ours) this.root.setAttribute("data-lm-suppress-shortcuts", "true");
      else this.root.removeAttribute("data-lm-suppress-shortcuts");
    };
    window.addEventListener("keydown", this.onAnyKey, true);
    // a narrow widget puts the inspector below the drawing; "fit" follows the width
    this.resizer = new ResizeObserver(() => this.resized());
    this.resizer.observe(this.root);

    this.listeners = [
      ["change:graph", () => this.draw()],
      ["change:step", () => this.update()],
      ["change:selected", () => (this.update(), this.applySearch())],
    ];
    for (const [name, fn] of this.listeners) model.on(name, fn);
    this.draw();
  }

  destroy() {
    this.pause();
    window.removeEventListener("keydown", this.onAnyKey, true);
    this.resizer.disconnect();
    for (const [name, fn] of this.listeners) this.model.off(name, fn);
  }

  // The model's step, and a way to move it (Python hears about it through save_changes).
  get step() {
    return this.model.get("step");
  }

  go(step) {
    const clamped = Math.max(0, Math.min(this.g.n_steps, step));
    if (clamped !== this.step) {
      this.model.set("step", clamped);
      this.model.save_changes();
    }
  }

  select(id) {
    this.model.set("selected", id);
    this.model.save_changes();
  }

  // ---- the controls: buttons, slider, legend

  buildToolbar() {
    const bar = html("div", { class: "agl-toolbar" }, this.root);
    const button = (name, title, action) => {
      const attrs = { class: `agl-btn agl-${name}`, title, "aria-label": title, type: "button" };
      const b = html("button", attrs, bar);
      const icon = svg("svg", { viewBox: "0 0 16 16", width: 14, height: 14 }, b);
      b.path = svg("path", { d: ICONS[name] }, icon);
      b.addEventListener("click", action);
      return b;
    };
    button("first", "Back to step 0", () => this.go(0));
    button("back", "Step back", () => this.go(this.step - 1));
    this.playButton = button("play", "Play", () => (this.timer ? this.pause() : this.play()));
    button("forward", "Step forward", () => this.go(this.step + 1));
    button("last", "Jump to the last step", () => this.go(this.g.n_steps));
    // node by node: skip the sends, one step per node that runs (a 2,000-node graph has ~6,000 steps)
    button("prevnode", "Previous node (Shift+←)", () => this.goNode(-1));
    button("nextnode", "Next node (Shift+→): skips the gradients it sends", () => this.goNode(1));
    const slider = { class: "agl-slider", type: "range", min: 0, value: 0, "aria-label": "step" };
    this.slider = html("input", slider, bar);
    this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
    this.stepLabel = html("span", { class: "agl-step" }, bar);
    const speed = html("select", { class: "agl-speed", "aria-label": "play speed", title: "Play speed" }, bar);
    for (const n of SPEEDS) {
      const option = html("option", { value: n }, speed, `${n} step${n > 1 ? "s" : ""}/s`);
      option.selected = n === DEFAULT_SPEED;
    }
    speed.addEventListener("change", () => {
      this.speed = Number(speed.value);
      if (this.timer) this.play(); // the new speed at once
    });
    // full size (scroll to see the rest) or shrunk to fit the width (to see all of a big graph)
    const title = "Fit to the width (text stays readable: never below 75%, then scroll), or full size";
    this.zoom = html("button", { class: "agl-btn agl-zoom", type: "button", title }, bar, "fit");
    this.zoom.addEventListener("click", () => {
      this.fit = !this.fit;
      this.zoom.textContent = this.fit ? "100%" : "fit";
      this.scale();
      this.follow();
    });
    this.buildSearch(bar);
  }

  // The drawing's size: full size, or shrunk to the canvas's width but never below MIN_FIT, so a
  // 2,000-node chain stays a row of readable boxes to scroll along rather than a hairline.
  scale() {
    if (!this.picture) return;
    const { width, height } = this.g.layout;
    const room = this.canvas.clientWidth;
    const k = this.fit && room > 0 ? Math.max(MIN_FIT, Math.min(1, room / width)) : 1;
    this.picture.setAttribute("width", width * k);
    this.picture.setAttribute("height", height * k);
    this.canvas.dataset.scale = k.toFixed(3);
  }

  resized() {
    const narrow = this.root.clientWidth <= NARROW;
    this.root.classList.toggle("agl-narrow", narrow);
    this.scale();
  }

  // Keep the node this step is about in view: scroll the canvas (never the page) to it.
  follow() {
    const id = this.state && this.state.active;
    if (!id) return;
    const el = this.nodeEls.get(id);
    const target = el ? el.node : this.canvas.querySelector(`.agl-collapsed[data-id="${CSS.escape(id)}"]`);
    if (target) this.scrollTo(target);
  }

  // Scroll the canvas (never the page) so that `target` is in view, centred if it was not.
  scrollTo(target) {
    const view = this.canvas.getBoundingClientRect();
    const box = target.getBoundingClientRect();
    const margin = 16;
    const outside =
      box.left < view.left + margin ||
      box.right > view.right - margin ||
      box.top < view.top + margin ||
      box.bottom > view.bottom - margin;
    if (!outside) return;
    const dx = box.left + box.width / 2 - (view.left + view.width / 2);
    const dy = box.top + box.height / 2 - (view.top + view.height / 2);
    this.canvas.scrollBy({ left: dx, top: dy, behavior: "instant" });
  }

  // The next (or previous) step that is about a node: a forward step, a run or an accumulate.
  goNode(direction) {
    const steps = this.g.nodeSteps;
    const next =
      direction > 0 ? steps.find((k) => k > this.step) : [...steps].reverse().find((k) => k < this.step);
    this.go(next === undefined ? (direction > 0 ? this.g.n_steps : 0) : next);
  }

  // The legend: what the colours, frames and edges mean, for what this graph has on screen.
  fillLegend() {
    this.legend.replaceChildren();
    const entry = (style, text, cls = "agl-swatch") => {
      const item = html("span", { class: "agl-legend-item" }, this.legend);
      html("span", { class: cls, style }, item);
      item.append(text);
    };
    const nodes = this.g.nodes;
    const roles = new Set(nodes.map((n) => (n.kind === "op" ? "intermediate" : n.role)));
    for (const [role, [fill, stroke, text]] of Object.entries(ROLES)) {
      if (roles.has(role)) entry(`background:${fill};border-color:${stroke}`, text);
    }
    if (nodes.some((n) => n.is_saved)) entry(`border-color:${SAVED};border-width:2.5px`, "saved for backward");
    const plain = (gr) => !this.g.clusters[gr.scope] && !this.g.repeatNamed[gr.scope]; // a module's scope
    if (this.g.layout.groups.some((gr) => gr.collapsed && plain(gr))) {
      entry("background:#f1f5f9;border-color:#64748b;border-style:dashed", "collapsed scope (click to open)");
    }
    if (this.g.layout.groups.some((gr) => gr.collapsed && this.g.repeatNamed[gr.scope])) {
      entry("background:#f1f5f9;border-color:#64748b;box-shadow:3px -3px 0 #cbd5e1", "×N: a block repeated N times, drawn once (click to open)");
    }
    if (Object.keys(this.g.clusters).length) entry(`background:${FUSED[0]};border-color:${FUSED[1]}`, "fused kernel");
    if (this.g.memory) {
      entry(`border-color:${ALIVE};border-width:2.5px`, "alive");
      entry("background:#e5e7eb;border-color:#9ca3af;border-style:dashed", "freed");
    }
    this.markLegend(entry);
    entry("background:#fee2e2;border-color:#dc2626;border-width:2.5px", "red frame: this step's node");
    if (this.g.forward.length) entry("background:#2563eb", "blue: inputs of the op computing now", "agl-swatch-edge");
    if (this.g.events.length) {
      entry("background:#dc2626", "red: the gradient going back now", "agl-swatch-edge");
      entry("background:#c2410c;opacity:0.6", "gradient that went back (thicker = larger |grad|)", "agl-swatch-edge");
    }
    const hint = html("span", { class: "agl-legend-item agl-hint" }, this.legend);
    hint.append("hover: details · click: inspect, then ← →: step, Shift+← →: node by node · click a scope's title: collapse/expand · find: lights up matches, Enter: the next one");
  }

  play() {
    if (this.step >= this.g.n_steps) this.go(0); // replay from the start
    const tick = () => (this.step >= this.g.n_steps ? this.pause() : this.go(this.step + 1));
    clearInterval(this.timer);
    this.timer = setInterval(tick, 1000 / this.speed);
    this.playButton.path.setAttribute("d", ICONS.pause);
    this.playButton.title = "Pause";
  }

  pause() {
    clearInterval(this.timer);
    this.timer = null;
    if (this.playButton) {
      this.playButton.path.setAttribute("d", ICONS.play);
      this.playButton.title = "Play";
    }
  }

  onKey(e) {
    const moves = { ArrowRight: 1, ArrowLeft: -1 };
    if (e.ctrlKey || e.metaKey || e.altKey) return; // the browser's and the notebook's keys
    if (e.target.closest("input, select") && e.key !== "Escape") return; // the slider's own keys
    if (e.key === " " && e.target.closest("button")) return; // Space presses a focused button
    if (e.key in moves && e.shiftKey) this.goNode(moves[e.key]);
    else if (e.key in moves) this.go(this.step + moves[e.key]);
    else if (e.key === " ") this.timer ? this.pause() : this.play();
    else if (e.key === "Escape") this.select(null);
    else return;
    e.preventDefault();
    e.stopPropagation(); // the notebook must not act on these keys too
  }

  // ---- drawing the graph (once per layout) -----------------------------------------------------

  draw() {
    this.g = index(this.model.get("graph"));
    const { layout } = this.g;
    const { width, height } = layout;
    this.slider.max = this.g.n_steps;
    this.fillLegend();
    this.memBar.hidden = !this.g.memory;
    this.note.hidden = !this.g.note;
    this.note.textContent = (this.g.note || "").split("; ").join("\n"); // one fact a line
    this.canvas.replaceChildren();
    const size = { width, height, viewBox: `0 0 ${width} ${height}` };
    const picture = (this.picture = svg("svg", { class: "agl-svg", ...size }, this.canvas));
    const defs = svg("defs", {}, picture);
    for (const kind of ["plain", "grad", "active", "forward"]) {
      // arrowheads of a fixed size, whatever the width of the line; at a line's start they turn round
      const size = { viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8 };
      const attrs = { id: `agl-arrow-${kind}-${this.uid()}`, ...size, markerUnits: "userSpaceOnUse" };
      const marker = svg("marker", { ...attrs, orient: "auto-start-reverse" }, defs);
      svg("path", { d: "M0 0L10 5L0 10z", class: `agl-arrow-${kind}` }, marker);
    }
    const groups = svg("g", { class: "agl-groups" }, picture);
    const edges = svg("g", { class: "agl-edges" }, picture);
    const nodes = svg("g", { class: "agl-nodes" }, picture);
    for (const group of layout.groups) this.drawGroup(group, groups);
    this.edgeEls = new Map();
    for (const e of layout.edges) {
      // an input used twice (x * x) is two lines side by side: two gradients go back, and add up
      edgeKeys(e).forEach((key, k) => {
        const dy = (k - ((e.count || 1) - 1) / 2) * EDGE_SPREAD;
        const d = "M" + e.points.map(([x, y]) => `${x} ${y + dy}`).join("L");
        this.edgeEls.set(key, svg("path", { d, class: "agl-edge", "data-key": key }, edges));
      });
      if (e.count > 1) {
        // "×2" above the lines near their start, clear of the box they go into
        const [[x0, y0], [x1, y1]] = e.points;
        const y = Math.min(y0, y1) - ((e.count - 1) / 2) * EDGE_SPREAD - 4;
        svg("text", { x: x0 + Math.min(24, (x1 - x0) / 2), y, class: "agl-edge-count" }, edges, `×${e.count}`);
      }
    }
    this.nodeEls = new Map();
    for (const n of this.g.nodes) if (layout.nodes[n.id]) this.drawNode(n, layout.nodes[n.id], nodes);
    this.drawRepeats();
    this.drawMarks(svg("g", { class: "agl-marks" }, picture));
    this.scale();
    this.update();
    this.applySearch();
  }

  // ---- marks: what a diff found, where a cell failed (viz/marks.py) --------------------------------

  // A frame in the mark's colour around each marked node (its scope's box when it is collapsed
  // inside one), the mark's letters above its right corner, the mark's text on hover.
  drawMarks(parent) {
    const { layout } = this.g;
    for (const [id, mark] of Object.entries(this.g.marks || {})) {
      const b = layout.nodes[(layout.hidden || {})[id] || id];
      if (!b) continue;
      const attrs = { "data-id": id, "data-kind": mark.kind, transform: `translate(${b.x - 5},${b.y - 5})` };
      const frame = svg("g", { class: `agl-mark agl-mark-${mark.kind}`, ...attrs }, parent);
      svg("rect", { width: b.w + 10, height: b.h + 10, rx: 10 }, frame);
      if (mark.letters) svg("text", { x: b.w + 10, y: -3 }, frame, mark.letters);
      svg("title", {}, frame, mark.text);
    }
  }

  // One legend entry per kind of mark the graph has (the colours of graph.css's .agl-mark-*).
  markLegend(entry) {
    const kinds = new Set(Object.values(this.g.marks || {}).map((m) => m.kind));
    const legend = {
      added: ["#15803d", "dashed", "+ added: only in this graph"],
      removed: ["#dc2626", "dashed", "− removed: only in the other graph"],
      changed: ["#c026d3", "dashed", "changed: S inputs, V value, G gradient"],
      failed: ["#b91c1c", "solid", "✗ the op the cell failed in"],
    };
    for (const [kind, [colour, style, text]] of Object.entries(legend)) {
      if (kinds.has(kind)) entry(`border-color:${colour};border-style:${style};border-width:2.5px`, text);
    }
  }

  // The mark's row in a node's tooltip and inspector: [heading, text], or null.
  markFacts(n) {
    const mark = (this.g.marks || {})[n.id];
    if (!mark) return null;
    const heading = { added: "added", removed: "removed", changed: "differs", failed: "failed here" };
    return [heading[mark.kind] || mark.kind, mark.text];
  }

  // The step of the op a cell failed in says so, with the error, instead of "computes its output".
  failedCaption(s, step) {
    const n = this.g.byId[s.active];
    const mark = n && n.failed && (this.g.marks || {})[n.id];
    return mark ? `Forward ${step}/${this.g.forward.length}: ${mark.text}` : null;
  }

  uid() {
    // marker ids must be unique in the page: two views of one widget may be on screen
    this._uid = this._uid || Math.random().toString(36).slice(2, 8);
    return this._uid;
  }

  drawNode(n, b, parent) {
    const [fill, stroke] = ROLES[n.role] || ROLES.intermediate;
    const where = { transform: `translate(${b.x},${b.y})`, "data-id": n.id, "data-role": n.role };
    const node = svg("g", { class: `agl-node agl-${n.kind}`, ...where }, parent);
    svg("rect", { class: "agl-halo", x: -4, y: -4, width: b.w + 8, height: b.h + 8, rx: 10 }, node);
    const border = n.is_saved ? { stroke: SAVED, "stroke-width": 2.5 } : { stroke };
    const rx = n.kind === "op" ? 8 : 0;
    svg("rect", { class: "agl-box", width: b.w, height: b.h, rx, fill, ...border }, node);
    // line i of the box's text, centred, where layout.py measured it (baseline 11px below its top)
    const line = (i, cls, text) => svg("text", { x: b.w / 2, y: PAD_Y + LINE_H * i + 11, class: cls }, node, text);
    // the memory plan's note ("buf 2 · freed after %7") is the bottom line, where layout.py put it
    const note = n.memory && n.memory.note;
    if (note) svg("text", { x: b.w / 2, y: b.h - PAD_Y - LINE_H + 11, class: "agl-memory" }, node, note);
    // a box sized for two lines has no room for a gradient: the tooltip and inspector show it
    const roomy = b.h >= 2 * PAD_Y + (note ? 4 : 3) * LINE_H - 1;
    const parts = {
      label: line(0, "agl-label", n.label),
      value: line(1, "agl-value", ""),
      grad: roomy ? line(2, "agl-grad", "") : null,
    };
    node.addEventListener("mouseenter", (e) => this.showTooltip(n, e));
    node.addEventListener("mousemove", (e) => this.moveTooltip(e));
    node.addEventListener("mouseleave", () => (this.tooltip.hidden = true));
    node.addEventListener("click", () => this.select(this.model.get("selected") === n.id ? null : n.id));
    this.nodeEls.set(n.id, { node, ...parts });
  }

  // An expanded scope is a dashed frame whose title collapses it; a collapsed one is a single box.
  // A fused kernel (a cluster) is orange and titled with its ops; opened, it shows them.
  drawGroup(group, parent) {
    const where = { "data-id": group.id, transform: `translate(${group.x},${group.y})` };
    const cluster = this.g.clusters[group.scope];
    const cls = `agl-group${group.collapsed ? " agl-collapsed" : ""}${cluster ? " agl-fused" : ""}`;
    const frame = svg("g", { class: cls, ...where }, parent);
    if (group.collapsed || !group.outline) {
      svg("rect", { class: "agl-group-box", width: group.w, height: group.h, rx: 6 }, frame);
    } else groupOutline(group, frame);
    const name = cluster ? cluster.label : group.scope;
    if (group.collapsed) {
      const x = group.w / 2;
      const count = cluster ? `${cluster.ops.length} ops in one kernel` : `${group.count} nodes`;
      svg("text", { x, y: PAD_Y + 11, class: cluster ? "agl-value" : "agl-label" }, frame, name);
      svg("text", { x, y: PAD_Y + LINE_H + 11, class: "agl-value" }, frame, count);
      const inside = cluster ? ` (${cluster.ops.join(" → ")})` : "";
      svg("title", {}, frame, `${name}: ${count}${inside}, collapsed. Click to expand.`);
    } else {
      // the title in the top left corner of its first column, where svg.py writes it
      const [x0, y0] = group.outline ? group.outline[0][0] : [group.x, group.y];
      const at = { x: x0 - group.x + 6, y: y0 - group.y + 11, class: "agl-group-title" };
      const title = svg("text", at, frame, `▾ ${name}`);
      svg("title", {}, title, `${cluster ? name : "scope " + name}: click to collapse its ${group.count} nodes`);
    }
    const handle = group.collapsed ? frame : frame.querySelector("text");
    handle.classList.add("agl-toggle");
    handle.addEventListener("click", (e) => {
      e.stopPropagation();
      if (this.g.repeatNamed[group.scope]) this.setFolded(group.scope, false);
      else this.toggle(group);
    });
  }

  // Collapse or expand a scope: JS changes `collapsed`, Python sends a new layout.
  toggle(group) {
    const inside = (p) => p.startsWith(group.scope + "/");
    let collapsed = this.model.get("collapsed").filter((p) => !inside(p));
    if (group.collapsed) {
      collapsed = collapsed.filter((p) => p !== group.scope);
      // a big scope opens one level at a time: its sub-scopes stay collapsed (like layout.expand)
      const child = (p) => inside(p) && !p.slice(group.scope.length + 1).includes("/");
      if (group.count > (this.g.max_nodes || 200)) collapsed.push(...(this.g.scopes || []).filter(child));
    } else {
      collapsed.push(group.scope);
    }
    this.model.set("collapsed", collapsed);
    this.model.save_changes();
  }

  // ---- repeated blocks: drawn once as "×N" ----------------------------------------------------------

  // A folded repeat is a collapsed scope named "block0 … block11 ×12" (Python folded its nodes
  // into it): drawn as a stack of cards. An opened one's first block gets a "fold ×N" handle.
  drawRepeats() {
    for (const frame of this.canvas.querySelectorAll(".agl-group")) {
      const scope = frame.dataset.id.slice("scope:".length);
      const folded = this.g.repeatNamed[scope];
      if (folded && frame.classList.contains("agl-collapsed")) {
        frame.classList.add("agl-repeat");
        const box = frame.querySelector(".agl-group-box");
        for (const k of [2, 1]) {
          // two cards peeking out behind the box: "more of the same"
          const card = box.cloneNode();
          card.setAttribute("class", "agl-group-box agl-repeat-card");
          card.setAttribute("transform", `translate(${3 * k},${-3 * k})`);
          frame.insertBefore(card, box);
        }
        const what = folded.kind === "calls" ? "calls of one module" : "identical blocks";
        const each = `${folded.each} ${folded.kind === "calls" ? "ops" : "nodes"} each`;
        frame.querySelector("title").textContent =
          `${folded.count} ${what} (${each}), drawn once: ${folded.scopes.join(", ")}. Click to open.`;
        continue;
      }
      const opened = this.g.repeats.find((r) => !r.folded && r.scopes[0] === scope);
      if (!opened) continue;
      // the handle that folds it again: after the first block's title (above its box when
      // collapsed), at the left, where no later block's frame can lie over it
      const title = frame.querySelector(".agl-group-title");
      // (its first child: the text on screen, not its <title>) in 11px monospace: 6.6px a letter
      const x = title ? 6 + title.firstChild.textContent.length * 6.7 + 10 : 0;
      const y = title ? 11 : -4;
      const attrs = { x, y, class: "agl-fold agl-toggle", "data-repeat": opened.name };
      const fold = svg("text", attrs, frame, `fold ×${opened.count}`);
      svg("title", {}, fold, `Fold the ${opened.count} repeats back into one box: ${opened.name}`);
      fold.addEventListener("click", (e) => {
        e.stopPropagation();
        this.setFolded(opened.name, true);
      });
    }
  }

  // Fold or open a repeat: JS changes `folded`, Python sends a new layout.
  setFolded(name, fold) {
    const folded = this.model.get("folded").filter((n) => n !== name);
    if (fold) folded.push(name);
    this.model.set("folded", folded);
    this.model.save_changes();
  }

  // ---- search: find nodes by label, variable name or op -------------------------------------------

  buildSearch(bar) {
    const attrs = {
      class: "agl-search",
      type: "search",
      placeholder: "find a node…",
      "aria-label": "find nodes by name, variable or op",
      title: "Find nodes by label, variable name or op (e.g. w1, tanh, MulBackward0). Enter: next match, Shift+Enter: previous, Esc: clear",
      // the notebook's shortcuts (a, b, d d, ...) must not act on what is typed here
      "data-lm-suppress-shortcuts": "true",
    };
    this.searchBox = html("input", attrs, bar);
    this.searchCount = html("span", { class: "agl-search-count", "aria-live": "polite" }, bar);
    this.query = "";
    this.matchAt = -1;
    this.searchBox.addEventListener("input", () => {
      this.query = this.searchBox.value.trim().toLowerCase();
      this.matchAt = -1;
      this.applySearch();
    });
    this.searchBox.addEventListener("keydown", (e) => {
      if (e.key === "Enter") this.nextMatch(e.shiftKey ? -1 : 1);
      else if (e.key === "Escape") {
        this.searchBox.value = "";
        this.query = "";
        this.applySearch();
      } else return;
      e.preventDefault();
      e.stopPropagation(); // Esc here clears the search, it does not unpin the inspector
    });
  }

  // Every node whose label, variable name or op contains the query, hidden ones too, in the
  // graph's order (forward creation order: "n2" before "n10").
  matches() {
    if (!this.query) return [];
    const hidden = this.g.hidden_nodes || {};
    const all = [...this.g.nodes.map((n) => [n.id, n]), ...Object.entries(hidden)];
    const hit = (n) => [n.label, n.name, n.op].some((t) => t && String(t).toLowerCase().includes(this.query));
    const order = (id) => Number(id.slice(1));
    return all.filter(([, n]) => hit(n)).map(([id]) => id).sort((a, b) => order(a) - order(b));
  }

  // Matching boxes lit, the rest dimmed; a match inside a collapsed scope or folded repeat lights
  // up the box that stands for it.
  applySearch() {
    const found = this.matches();
    this.found = found;
    const lit = new Set(found.map((id) => (this.g.layout.hidden || {})[id] || id));
    const searching = Boolean(this.query);
    this.root.classList.toggle("agl-searching", searching);
    for (const [id, el] of this.nodeEls) {
      el.node.classList.toggle("agl-match", searching && lit.has(id));
      el.node.classList.toggle("agl-dim", searching && !lit.has(id));
    }
    for (const frame of this.canvas.querySelectorAll(".agl-group.agl-collapsed")) {
      frame.classList.toggle("agl-match", searching && lit.has(frame.dataset.id));
      frame.classList.toggle("agl-dim", searching && !lit.has(frame.dataset.id));
    }
    const at = found.indexOf(this.model.get("selected"));
    if (!searching) this.searchCount.textContent = "";
    else if (!found.length) this.searchCount.textContent = "no match";
    else if (at >= 0) this.searchCount.textContent = `${at + 1} of ${found.length}`;
    else this.searchCount.textContent = `${found.length} match${found.length > 1 ? "es" : ""}`;
  }

  // Enter: select the next match (Python opens the scopes and repeats around a hidden one).
  nextMatch(direction) {
    const found = this.found || [];
    if (!found.length) return;
    const at = found.indexOf(this.model.get("selected"));
    const from = at >= 0 ? at : this.matchAt;
    this.matchAt = (from + direction + found.length) % found.length;
    if (from < 0 && direction < 0) this.matchAt = found.length - 1;
    this.reveal = found[this.matchAt];
    this.select(this.reveal);
  }

  // Scroll the match just selected into view once it has a box (after Python's new layout).
  revealSearched() {
    const el = this.reveal && this.nodeEls.get(this.reveal);
    if (!el) return;
    this.reveal = null;
    this.scrollTo(el.node);
  }

  // ---- showing one step (every time the step or the selection changes) ----------------------------

  update() {
    const g = this.g;
    const step = this.step;
    const s = (this.state = replay(g, step));
    this.slider.value = step;
    this.stepLabel.textContent = `step ${step} / ${g.n_steps}`;
    this.caption.textContent = this.failedCaption(s, step) || s.caption;
    const selected = this.model.get("selected");
    for (const [id, el] of this.nodeEls) {
      const n = g.byId[id];
      const done = s.done.has(id);
      el.value.textContent = n.failed ? "✗ failed" : done ? summaryText(n.value, n.dtype) || shapeText(n.shape) : "?";
      const grad = s.grad.get(id);
      if (el.grad) el.grad.textContent = grad ? `grad ${summaryText(grad, n.dtype)}` : "";
      el.node.classList.toggle("agl-pending", !done);
      el.node.classList.toggle("agl-active", s.active === id);
      el.node.classList.toggle("agl-selected", selected === id);
    }
    for (const frame of this.canvas.querySelectorAll(".agl-collapsed")) {
      frame.classList.toggle("agl-active", s.active === frame.dataset.id);
    }
    this.showMemory(step, s);
    for (const [key, path] of this.edgeEls) {
      const grad = s.flow.get(key);
      const norm = grad && typeof grad.norm === "number" ? grad.norm : 0;
      const active = s.activeEdges.includes(key);
      const forward = s.forwardEdges.includes(key);
      path.classList.toggle("agl-has-grad", Boolean(grad));
      path.classList.toggle("agl-active-edge", active);
      path.classList.toggle("agl-forward-edge", forward);
      path.style.strokeWidth = grad ? (1.5 + 4.5 * Math.sqrt(norm / g.maxNorm)).toFixed(2) : "";
      const kind = active ? "active" : forward ? "forward" : grad ? "grad" : "plain";
      // data flows forward (arrow at the end); a gradient went back (arrow at the start)
      const back = grad && kind !== "forward";
      path.setAttribute(back ? "marker-start" : "marker-end", `url(#agl-arrow-${kind}-${this.uid()})`);
      path.removeAttribute(back ? "marker-end" : "marker-start");
    }
    this.showInspector(selected);
    this.follow();
    this.revealSearched();
  }

  // The memory plan after this step: alive values framed, freed ones greyed, the live bytes.
  showMemory(step, s) {
    const mem = this.g.memory;
    if (!mem) return;
    const at = mem.at_step[step];
    const now = at >= 0 ? mem.steps[at] : null;
    const alive = new Set(now ? now.alive : []);
    const freed = new Set(mem.steps.slice(0, at + 1).flatMap((k) => k.freed));
    for (const [id, el] of this.nodeEls) {
      const done = s.done.has(id);
      el.node.classList.toggle("agl-mem-alive", done && alive.has(id));
      el.node.classList.toggle("agl-mem-freed", done && freed.has(id));
    }
    for (const frame of this.canvas.querySelectorAll(".agl-fused.agl-collapsed")) {
      const kernel = this.g.clusters[frame.dataset.id.slice("scope:".length)]; // what it made
      const done = s.done.has(frame.dataset.id);
      frame.classList.toggle("agl-mem-alive", done && alive.has(kernel.node));
      frame.classList.toggle("agl-mem-freed", done && freed.has(kernel.node));
    }
    const live = now ? now.live_bytes : 0;
    this.memFill.style.width = `${mem.peak_bytes ? (100 * live) / mem.peak_bytes : 0}%`;
    const after = now ? ` after ${now.label}` : " (nothing computed yet)";
    this.memText.textContent = `memory plan: ${now ? now.live : "0 B"} live${after} · planned peak ${mem.peak}, eager ${mem.eager_peak}`;
  }

  // ---- tooltip and inspector -------------------------------------------------------------------

  // The facts about a node at the current step, as [heading, text] rows.
  // `long`: every value and statistic (the inspector); short: one line each (the tooltip).
  facts(n, long) {
    const s = this.state;
    const text = (x) => (long ? summaryLines(x, n.dtype).join("\n") : summaryText(x, n.dtype, 8));
    const rows = [n.kind === "op" ? ["op", n.op] : ["tensor", `${n.role}${n.name ? " " + n.name : ""}`]];
    rows.push(["shape", `${shapeText(n.shape)} ${n.dtype}`]);
    if (!s.done.has(n.id)) rows.push(["value", "not computed yet (step forward)"]);
    else if (n.value) rows.push(["value", text(n.value)]);
    else if (n.fused_into || (n.memory && n.memory.in_registers)) {
      rows.push(["value", "kept in registers by the fused kernel: never written to memory, so never seen"]);
    } else rows.push(["value", "not recorded (make the graph inside `with record():` to keep every value)"]);
    const grad = s.grad.get(n.id);
    rows.push(["grad", grad ? text(grad) : "none yet"]);
    // the formula, and once the op has run its value in this pass: "1 - tanh(x)² = 0.5"
    if (n.derivative) rows.push(["local derivative", (s.done.has(n.id) && n.derivative_value) || n.derivative]);
    if (n.saved && n.saved.length) {
      rows.push(["saves for backward", n.saved.map((t) => `${t.name} ${shapeText(t.shape)}`).join(", ")]);
    }
    if (n.is_saved) rows.push(["saved", "an op saved this value for its backward"]);
    if (n.fused) rows.push(["fused kernel of", n.fused.join(" → ")]);
    if (n.fused_into) rows.push(["fused", "inside a fused kernel: computed with it, kept in registers"]);
    const m = n.memory;
    if (m && m.in_registers) rows.push(["memory", "in registers (never written to memory)"]);
    else if (m) {
      const reuse = m.reused_from ? `, reuses buffer ${m.buffer} of ${m.reused_from}` : "";
      rows.push(["memory", `${m.value}: ${m.bytes} bytes, ${m.note}${reuse}`]);
    }
    if (n.scope) rows.push(["scope", n.scope]);
    const marked = this.markFacts(n);
    if (marked) rows.unshift(marked); // first: it is why this node is framed
    rows.push(["id", n.id]);
    return rows;
  }

  showTooltip(n, e) {
    this.tooltip.replaceChildren();
    html("div", { class: "agl-tip-title" }, this.tooltip, n.label);
    for (const [k, v] of this.facts(n, false)) {
      if (k === "id" || k === "saved") continue;
      const row = html("div", { class: "agl-tip-row" }, this.tooltip);
      html("b", {}, row, `${k}: `);
      row.append(v);
    }
    this.tooltip.hidden = false;
    this.moveTooltip(e);
  }

  // Below and right of the pointer; above it where there is no room below, so that it stays
  // inside the widget (a notebook's output clips what sticks out: the last rows would be lost).
  moveTooltip(e) {
    const box = this.root.getBoundingClientRect();
    const [w, h] = [this.tooltip.offsetWidth, this.tooltip.offsetHeight];
    const [px, py] = [e.clientX - box.left, e.clientY - box.top];
    const x = Math.min(px + 14, box.width - w - 4);
    let y = py + 14;
    if (y + h > box.height - 4) y = py - 14 - h; // flip above the pointer
    if (y < 0) y = Math.max(0, box.height - h - 4); // taller than the room above too: as low as fits
    this.tooltip.style.left = `${Math.max(0, x)}px`;
    this.tooltip.style.top = `${y}px`;
    this.tooltip.classList.toggle("agl-above", y < py);
  }

  showInspector(id) {
    const n = id && this.g.byId[id];
    this.inspector.hidden = !n;
    if (!n) return;
    this.inspector.replaceChildren();
    const head = html("div", { class: "agl-inspector-head" }, this.inspector);
    html("span", { class: "agl-inspector-title" }, head, n.label);
    const attrs = { class: "agl-btn agl-close", type: "button", title: "Close (Esc)" };
    const close = html("button", attrs, head, "×");
    close.addEventListener("click", () => this.select(null));
    for (const [k, v] of this.facts(n, true)) {
      html("div", { class: "agl-key" }, this.inspector, k);
      html("div", { class: "agl-val" }, this.inspector, v);
      if (k === "value" && this.state.done.has(n.id)) heatmap(n.value, this.inspector);
      if (k === "grad") heatmap(this.state.grad.get(n.id), this.inspector);
    }
  }
}

// An expanded scope's outline from layout.py: it steps from column to column around its own
// boxes (one polygon, or several where it splits), so that it never covers a box or a
// collapsed scope beside it, as its bounding rectangle would. Points are page coordinates;
// the frame is translated to the group's corner.
function groupOutline(group, frame) {
  for (const polygon of group.outline) {
    const points = polygon.map(([x, y]) => `${x - group.x},${y - group.y}`).join(" ");
    svg("polygon", { class: "agl-group-box", points }, frame);
  }
}

// A small picture of a 1-D or 2-D tensor: one cell per element, blue below zero, red above.
function heatmap(s, parent) {
  if (!s || s.values == null || s.numel < 2 || s.shape.length > 2) return;
  const rows = s.shape.length === 2 ? s.values : [s.values];
  const cols = rows[0].length;
  const cell = Math.max(6, Math.min(18, Math.floor(220 / Math.max(cols, rows.length))));
  const big = Math.max(1e-30, ...flat(rows).map((v) => Math.abs(Number(v)) || 0));
  const [width, height] = [cols * cell + 1, rows.length * cell + 1];
  const pic = svg("svg", { class: "agl-heatmap", width, height }, parent);
  svg("rect", { width, height, fill: "#d1d5db" }, pic); // shows as a grid between the cells
  rows.forEach((row, i) =>
    row.forEach((v, j) => {
      const t = Math.min(1, Math.abs(Number(v)) / big) || 0;
      const [r, g, b] = Number(v) < 0 ? [1 - t, 1 - 0.6 * t, 1] : [1, 1 - 0.7 * t, 1 - t];
      const fill = `rgb(${(255 * r) | 0},${(255 * g) | 0},${(255 * b) | 0})`;
      const rect = svg("rect", { x: j * cell + 1, y: i * cell + 1, width: cell - 1, height: cell - 1, fill }, pic);
      svg("title", {}, rect, `[${s.shape.length === 2 ? `${i}, ${j}` : j}] = ${num(Number(v))}`);
    }),
  );
}

// anywidget calls render once per view of the widget; what it returns cleans up after the view.
export default {
  render({ model, el }) {
    const view = new GraphView(model, el);
    return () => view.destroy();
  },
};
