// The teaching page's Geometry card (templates/partials/teach_geometry.html): for a
// least-squares run, each frame's "geometry" (app/web/charts/geometry.py) drawn with Plotly:
// each candidate's cosine with the residual (the pick highlighted), or each selected column's
// deletion cost against the bar nu x delta, and a 3-D view of y, the fit and the span of the
// selected columns. teach.js calls drawGeometry on every frame the player shows; the card is a
// <details>, so it can be hidden (remembered in localStorage), and is drawn when opened.

const BLUE = "#0072B2", VERMILLION = "#D55E00", GREEN = "#009E73", GREY = "#b9b9b9", INK = "#222";
const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
const CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
const OPEN_KEY = "foba-geometry-open";
const HEIGHT = 360;
let last = null;  // the frame shown, drawn again when the card is opened

const fmt = (x) => (x === null || x === undefined ? "–" : Number(x).toPrecision(3).replace(/\.?0+(e|$)/, "$1"));
const angle = (c) => `${Math.round((Math.acos(Math.min(Math.abs(c), 1)) * 180) / Math.PI)}°`;

function base(title) {
  return {
    title: { text: title, font: { size: 15 }, x: 0, xanchor: "left" },
    font: { family: FONT, size: 13, color: INK },
    margin: { l: 90, r: 20, t: 48, b: 90 },
    height: HEIGHT,
    showlegend: true,
    legend: { orientation: "h", yanchor: "top", y: -0.25, x: 0 },
    plot_bgcolor: "white",
    paper_bgcolor: "white",
    uirevision: "geometry",
  };
}

// One bar trace per role (others, the pick): colour, hatching and a legend entry say which.
function bars(labels, values, texts, hovers, pick, colour, names) {
  const traces = [];
  [[false, names[0], GREY], [true, names[1], colour]].forEach(([isPick, name, c]) => {
    const idx = labels.map((_, i) => i).filter((i) => (i === pick) === isPick);
    if (!idx.length) return;
    traces.push({
      type: "bar", orientation: "h", name,
      y: idx.map((i) => labels[i]), x: idx.map((i) => values[i]),
      text: idx.map((i) => texts[i]), textposition: "outside", cliponaxis: false,
      hovertext: idx.map((i) => hovers[i]), hoverinfo: "text",
      marker: { color: c, line: { color: isPick ? "#333" : c, width: 1.5 }, ...(isPick ? { pattern: { shape: "/" } } : {}) },
    });
  });
  return traces;
}

function forwardFigure(fw, names, step) {
  const labels = fw.candidates.map((j) => names[j] ?? `feature ${j}`);
  const n = fw.numbers;
  const values = n.cos.map(Math.abs);
  const texts = n.cos.map((c) => angle(c));
  const hovers = labels.map((name, i) =>
    `${name}<br>cosine ${fmt(n.cos[i])} (angle ${angle(n.cos[i])})<br>one-coordinate drop ${fmt(n.drop[i])}` +
    `<br>refitted drop ${fmt(n.refit_drop[i])}<br>|gradient| ${fmt(n.gradient[i])}`);
  const pick = fw.candidates.indexOf(fw.chosen);
  const shown = fw.candidates.length < fw.n_candidates ? ` (best ${fw.candidates.length} of ${fw.n_candidates})` : "";
  const layout = base(`Step ${step}: |cosine| with the residual${shown}`);
  layout.xaxis = { title: { text: "|cosine| (label: the angle)" }, range: [0, 1.12], gridcolor: "#eee", zeroline: false };
  layout.yaxis = { type: "category", categoryorder: "array", categoryarray: labels, autorange: "reversed", automargin: true };
  return { data: bars(labels, values, texts, hovers, pick, BLUE, ["other candidates", "chosen"]), layout };
}

function deletionFigure(de, names, step) {
  const labels = de.columns.map((j) => names[j] ?? `feature ${j}`);
  const hovers = labels.map((name, i) =>
    `${name}<br>cost ${fmt(de.cost[i])}<br>without refit ${fmt(de.no_refit[i])}<br>with refit ${fmt(de.refit[i])}<br>coefficient ${fmt(de.coef[i])}`);
  const pick = de.columns.indexOf(de.chosen);
  const colour = de.removed ? VERMILLION : GREEN;
  const pickName = de.removed ? "deleted" : "cheapest deletion (kept)";
  const data = bars(labels, de.cost, de.cost.map(fmt), hovers, pick, colour, ["other selected columns", pickName]);
  const layout = base(`Step ${step}: the cost of each deletion`);
  const top = Math.max(...de.cost, de.bar || 0) * 1.25 || 1;
  layout.xaxis = { title: { text: "Objective increase" }, range: [0, top], gridcolor: "#eee", zeroline: false };
  layout.yaxis = { type: "category", categoryorder: "array", categoryarray: labels, autorange: "reversed", automargin: true };
  if (de.bar !== null && de.bar !== undefined) {
    layout.shapes = [{ type: "line", xref: "x", yref: "paper", x0: de.bar, x1: de.bar, y0: 0, y1: 1, line: { color: INK, width: 2, dash: "dash" } }];
    layout.annotations = [{ xref: "x", yref: "paper", x: de.bar, y: 1, yanchor: "bottom", text: `ν × δ = ${fmt(de.bar)}`, showarrow: false, font: { size: 12 } }];
  }
  return { data, layout };
}

// A segment from ``from`` (the origin) to ``to``, named at its tip, or at its middle (mid).
function arrow(name, to, from, colour, width, dash, mid) {
  const start = from || [0, 0, 0];
  const half = start.map((v, i) => (v + to[i]) / 2);
  return {
    type: "scatter3d", mode: "lines+markers+text", name,
    x: [start[0], half[0], to[0]], y: [start[1], half[1], to[1]], z: [start[2], half[2], to[2]],
    line: { color: colour, width, dash: dash || "solid" },
    marker: { size: [0, 0, 4], color: colour },
    text: mid ? ["", name, ""] : ["", "", name], textposition: mid ? "middle left" : "top center",
    textfont: { color: colour, size: 13 },
    hovertemplate: `${name}: (%{x:.3f}, %{y:.3f}, %{z:.3f})<extra></extra>`,
  };
}

function viewFigure(view) {
  const data = [];
  if (view.span === 2) {
    data.push({ type: "mesh3d", name: "span of the selected columns", x: [-1, 1, 1, -1], y: [-1, -1, 1, 1], z: [0, 0, 0, 0],
      i: [0, 0], j: [1, 2], k: [2, 3], color: GREEN, opacity: 0.15, hoverinfo: "name", showlegend: true });
  } else {
    data.push({ type: "scatter3d", mode: "lines", name: "span of the selected column", x: [-1.1, 1.1], y: [0, 0], z: [0, 0],
      line: { color: GREEN, width: 3, dash: "dot" }, hoverinfo: "name" });
  }
  // The columns first, so y, the fit and the residual are drawn over them.
  view.columns.forEach((c) => {
    const trace = arrow(c.name, c.at, null, c.selected ? GREEN : "#8c8c8c", c.selected ? 4 : 3);
    trace.showlegend = false;
    trace.hovertemplate = `${c.name}${c.selected ? " (selected)" : ""}: ${fmt(c.inside)} of its length lies in this view<extra></extra>`;
    data.push(trace);
  });
  data.push(arrow("y", view.y, null, INK, 8), arrow("fit", view.fit, null, BLUE, 8), arrow("residual", view.y, view.fit, VERMILLION, 5, "dash", true));
  const axis = (title) => ({ title: { text: title }, range: [-1.1, 1.1], zeroline: true, showspikes: false });
  const layout = base("y, the fit and the selected columns' span");
  layout.margin = { l: 24, r: 8, t: 40, b: 40 };
  layout.height = HEIGHT + 80;
  // The legend sits under the scene, outside its domain: drawn over it, it hid the e1 axis.
  layout.legend = { orientation: "h", y: 0, yanchor: "top", x: 0 };
  layout.scene = { xaxis: axis("e1"), yaxis: axis("e2"), zaxis: axis("e3"), aspectmode: "cube", camera: { eye: { x: 1.2, y: -1.9, z: 1.05 } } };
  return { data, layout };
}

function show(node, fig) {
  node.hidden = !fig;
  if (!fig) { Plotly.purge(node); return; }
  node.style.height = `${fig.layout.height}px`;
  Plotly.react(node, fig.data, fig.layout, CONFIG);
}

export function drawGeometry(panel, f, data) {
  const card = panel.querySelector("#geometry-card");
  if (!card) return;
  last = { panel, f, data };
  if (!card.dataset.ready) setupCard(card);
  if (!card.open || !window.Plotly) return;
  const q = (s) => card.querySelector(s);
  const g = f.geometry;
  const doc = data.geometry || {};
  // The document's note (no geometry for this run, or only for its first steps) where a
  // frame has none; else why this step has nothing to draw.
  const note = g ? "" : doc.note || "Nothing to draw at this step: it neither adds nor deletes a column, and its support has more than two columns for the 3-D view.";
  q(".geometry-note").hidden = !note;
  q(".geometry-note").textContent = note;
  const choice = g && (g.forward ? forwardFigure(g.forward, data.names, f.step) : g.deletion ? deletionFigure(g.deletion, data.names, f.step) : null);
  show(q("#chart-geometry-choice"), choice);
  q(".geometry-choice-text").textContent = g ? (g.forward || g.deletion || {}).sentence || "" : "";
  const view = g && g.view;
  show(q("#chart-geometry-3d"), view ? viewFigure(view) : null);
  q(".geometry-view-text").textContent = view ? view.sentence : (g ? "The 3-D view is drawn while the support has one or two columns." : "");
  q(".geometry-axes").replaceChildren(...(view ? view.axes.map((text, i) => {
    const li = document.createElement("li");
    li.textContent = `e${i + 1}: ${text}`;
    return li;
  }) : []));
  card.dataset.step = String(f.step);  // which frame the card shows (tests, and a reader's devtools)
}

function setupCard(card) {
  card.dataset.ready = "1";
  try {
    if (window.localStorage.getItem(OPEN_KEY) === "0") card.open = false;
  } catch { /* private mode */ }
  card.addEventListener("toggle", () => {
    try { window.localStorage.setItem(OPEN_KEY, card.open ? "1" : "0"); } catch { /* private mode */ }
    if (card.open && last) drawGeometry(last.panel, last.f, last.data);
  });
}
