// standalone.js: graph.js in a page of its own, with no kernel behind it (viz/export.py).
//
// In a notebook, graph.js talks to Python through anywidget's model: get/set/save_changes, and
// "change:<name>" events when Python answers. Here a PageModel stands in for it. Everything
// Python would have computed is already in the page, as JSON written by export.py:
//   states     one `graph` object per layout saved (which scopes are collapsed), nodes and
//              edges written once for all and named here by their index
//   requests   the collapsed scopes graph.js may ask for (sorted, one per line) -> a state
//   start      the state, step and selected node the page opens with
// Collapsing a scope asks for a layout: the page looks it up in `requests` instead of asking
// Python. Layout stays in Python (layout.py) so that the page and the widget draw the same boxes.
// export.py joins this file after graph.js in one module: `graphWidget` is graph.js's default
// export.

class PageModel {
  constructor(data, report) {
    this.data = data;
    this.report = report; // report(n): a layout this page did not save was asked for; null: found
    this.values = {
      graph: this.stateGraph(data.start.state),
      step: data.start.step,
      selected: data.start.selected,
      collapsed: data.states[data.start.state].shown,
    };
    this.changed = new Set();
    this.handlers = new Map();
  }

  // One saved layout as the graph object graph.js expects (what widget.py would send).
  stateGraph(i) {
    const { shared, nodes, edges, states } = this.data;
    const own = states[i].graph;
    const graph = {
      ...shared,
      ...own,
      nodes: own.nodes.map((k) => nodes[k]),
      edges: own.edges.map((k) => edges[k]),
    };
    // nodes hidden in collapsed scopes come as indices too: {box: [node, ...]} and [node, ...]
    if (own.layout) {
      const hidden = {};
      for (const [box, ks] of Object.entries(own.layout.hidden)) for (const k of ks) hidden[nodes[k].id] = box;
      graph.layout = { ...own.layout, hidden };
    }
    if (own.hidden_nodes) {
      const about = (n) => [n.id, { label: n.label, kind: n.kind, op: n.op, name: n.name }]; // as view.py sends
      graph.hidden_nodes = Object.fromEntries(own.hidden_nodes.map((k) => about(nodes[k])));
    }
    return graph;
  }

  get(name) {
    return this.values[name];
  }

  set(name, value) {
    this.values[name] = value;
    this.changed.add(name);
  }

  on(name, fn) {
    if (!this.handlers.has(name)) this.handlers.set(name, []);
    this.handlers.get(name).push(fn);
  }

  off(name, fn) {
    const fns = this.handlers.get(name) || [];
    this.handlers.set(
      name,
      fns.filter((f) => f !== fn),
    );
  }

  emit(name) {
    for (const fn of this.handlers.get(name) || []) fn();
  }

  // graph.js calls this after set(): here "Python" answers at once, from the saved states.
  save_changes() {
    const changed = [...this.changed];
    this.changed.clear();
    if (changed.includes("collapsed")) this.relayout();
    for (const name of changed) if (name !== "collapsed") this.emit(`change:${name}`);
  }

  relayout() {
    const key = [...this.values.collapsed].sort().join("\n");
    const i = this.data.requests[key];
    if (i === undefined) {
      // not saved (export.py keeps the max_layouts layouts nearest the start): keep the view
      this.values.collapsed = this.values.graph.layout.groups.filter((g) => g.collapsed).map((g) => g.scope);
      this.report(this.data.states.length);
      return;
    }
    this.report(null);
    this.values.graph = this.stateGraph(i);
    this.values.collapsed = this.data.states[i].shown;
    const hidden = this.values.graph.layout.hidden;
    if (this.values.selected && hidden[this.values.selected]) this.values.selected = null;
    this.emit("change:graph");
  }
}

// Every graph of the page: a div of class agl-export whose data-graph names the script element holding its JSON.
for (const el of document.querySelectorAll(".agl-export[data-graph]")) {
  const data = JSON.parse(document.getElementById(el.dataset.graph).textContent);
  el.replaceChildren(); // the text shown to a browser that cannot run this script
  const view = document.createElement("div");
  const message = document.createElement("div");
  message.className = "agl-export-message";
  message.hidden = true;
  el.append(view, message);
  const model = new PageModel(data, (saved) => {
    message.hidden = saved === null;
    if (saved === null) return;
    message.textContent =
      `This page saved ${saved} layouts of this graph (the ones nearest its first view), ` +
      "not this combination of open and closed scopes. Export it again with a larger " +
      "max_layouts (save_html(..., max_layouts=...) or --max-layouts), or open it in a notebook.";
  });
  graphWidget.render({ model, el: view });
}
