// The teaching page: the trace player (player.js) steps through the frames the page holds
// (<script type=application/json id=teach-frames>, built once per run on the server:
// views/teach.py), and each frame's panel is drawn here: the candidates chart, the narrated
// decision, the support, the timeline. No step asks the server; a what-if (other k or nu) is
// one HTMX request that brings new frames. Also the buttons that queue the run again.
import { api, readJSON, refusal } from "./api.js";
import { plot } from "./figures.js";
import { init } from "./player.js";
import { drawGeometry } from "./geometry.js";

const TIMELINE_SPAN = 80;  // ticks either side of the current step
let player = null;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function stepHref(panel, step) {
  return `/teach/${panel.dataset.run}?step=${step}${panel.dataset.query || ""}`;
}

// On a phone the chart's title breaks after "Step N:" and the bars leave room for their
// labels (the figure is the server's; only its layout is adapted here).
function wrap(text, perLine) {
  const lines = [];
  text.split(" ").forEach((word) => {
    const lastLine = lines[lines.length - 1];
    if (lastLine !== undefined && (lastLine + " " + word).length <= perLine && !lastLine.endsWith(":")) {
      lines[lines.length - 1] = `${lastLine} ${word}`;
    } else lines.push(word);
  });
  return lines;
}

function narrow(chart, fig) {
  const width = chart.parentElement.clientWidth;
  if (width >= 560) return fig;
  const layout = JSON.parse(JSON.stringify(fig.layout));
  const perLine = Math.max(20, Math.floor(width / 9));
  if (layout.title && layout.title.text) {
    const lines = wrap(layout.title.text, perLine);
    layout.title.text = lines.join("<br>");
    if (layout.margin) layout.margin.t = (layout.margin.t || 0) + 18 * (lines.length - 1);
  }
  if (layout.xaxis && layout.xaxis.title) layout.xaxis.title.font = { ...(layout.xaxis.title.font || {}), size: 12 };
  const range = layout.xaxis && layout.xaxis.range;
  if (range) range[1] = range[0] + (range[1] - range[0]) * 1.3;
  return { data: fig.data, layout };
}

// What the panel shows of one frame (frame.teach: views/teach.py, teach_frame).
function drawer(panel) {
  const q = (selector) => panel.querySelector(selector);
  const chart = q("#chart-candidates");
  const timeline = q(".timeline");
  return (f, index, data) => {
    const t = f.teach;
    // The candidates chart, or why there is none.
    if (t.figure) {
      chart.hidden = false;
      plot(chart, narrow(chart, t.figure));
    } else {
      chart.hidden = true;
      if (window.Plotly) Plotly.purge(chart);
    }
    q(".score-help").hidden = !(t.figure && t.score_help);
    q(".score-help").textContent = t.score_help ? `Score: ${t.score_help}.` : "";
    q(".chart-note").hidden = !t.chart_note;
    q(".chart-note").textContent = t.chart_note;
    // The narration: kind, sentence, facts, the support after the step.
    q(".narration").className = `card narration kind-${f.kind}`;
    q(".step-label").className = `badge step-label kind-${f.kind}`;
    q(".step-label").textContent = t.label;
    q(".sentence").textContent = t.sentence;
    q(".facts-table").replaceChildren(...t.facts.map(([label, value]) => {
      const row = el("tr");
      row.append(el("th", "", label), el("td", "num", value));
      return row;
    }));
    const truth = new Set(data.truth || []);
    const support = data.supports[f.support] || [];
    q(".support-count").textContent = support.length;
    const chips = support.map((j) => {
      const name = data.names[j] ?? `feature ${j}`;
      const added = name === t.added;
      const chip = el("span", `chip${added ? " added" : ""}${truth.has(j) ? " true" : ""}`,
        `${added ? "+ " : ""}${name}${truth.has(j) ? " ★" : ""}`);
      return chip;
    });
    if (t.removed) chips.push(el("span", "chip removed", `− ${t.removed}`));
    q(".support-chips").replaceChildren(...chips);
    // The same decision in the lesson's other runs.
    const links = q(".lesson-links");
    const same = (data.lesson || []).filter((o) => o.steps[index] !== null);
    links.hidden = !same.length;
    links.replaceChildren(...(same.length ? ["The same decision in "] : []), ...same.map((o) => {
      const a = el("a", "button", `${o.label} (step ${o.steps[index]}) →`);
      a.href = `/teach/${o.run}?step=${o.steps[index]}`;
      return a;
    }));
    // The timeline around the step; a tick is a link (it works without this script too).
    const lo = Math.max(0, index - TIMELINE_SPAN);
    const hi = Math.min(data.frames.length, index + TIMELINE_SPAN + 1);
    const ticks = data.frames.slice(lo, hi).map((g, i) => {
      const a = el("a", `tick kind-${g.kind}${lo + i === index ? " current" : ""}`, g.teach.tick);
      a.href = stepHref(panel, g.step);
      a.title = g.teach.title;
      a.dataset.index = lo + i;
      if (lo + i === index) a.setAttribute("aria-current", "step");
      return a;
    });
    if (lo > 0) ticks.unshift(el("span", "muted", "…"));
    if (hi < data.frames.length) ticks.push(el("span", "muted", "…"));
    timeline.replaceChildren(...ticks);
    // Links and the what-if form keep the step shown.
    const input = panel.querySelector(".what-if input[name=step]");
    if (input) input.value = f.step;
    panel.querySelectorAll("a[data-keep-step]").forEach((a) => {
      const url = new URL(a.href);
      url.searchParams.set("step", f.step);
      a.href = url.pathname + url.search;
    });
    drawGeometry(panel, f, data);  // the Geometry card (geometry.js)
  };
}

// (Re)starts the player on the panel's frames: at load, and after a what-if brought new ones.
function setup() {
  const panel = document.getElementById("teach-panel");
  const source = document.getElementById("teach-frames");
  if (player) { player.destroy(); player = null; }
  if (!panel || !source) return;
  const data = JSON.parse(source.textContent);
  const bar = panel.querySelector(".player-bar");
  player = init(bar, data, { onFrame: drawer(panel), autoplay: panel.dataset.play === "1" });
  panel.querySelector(".timeline").addEventListener("click", (e) => {
    const tick = e.target.closest("a[data-index]");
    if (!tick || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    player.show(Number(tick.dataset.index));
  });
}

// The same run again, recording the candidate scores (from the teaching mode of a run that
// did not), or a what-if saved as a run: the server builds it from the stored run with the
// changes (a what-if's k and nu), so nothing of the stored configuration is lost here.
async function rerun(button) {
  const note = button.parentElement.querySelector(".rerun-note");
  button.disabled = true;
  try {
    const response = await api(button.dataset.rerun, { method: "POST", body: button.dataset.changes || "{}" });
    const created = await readJSON(response);
    if (!response.ok) throw new Error(refusal(created, response.status));
    window.location.assign(`/teach/${created.id}?step=0`);
  } catch (err) {
    button.disabled = false;
    if (note) note.textContent = `Could not start it: ${err.message}`;
  }
}

document.addEventListener("click", (e) => {
  const button = e.target.closest("[data-rerun]");
  if (button) rerun(button);
});
setup();
// A what-if (the form's hx-get) swaps in a panel with new frames.
document.body.addEventListener("htmx:afterSettle", (e) => {
  if (e.target.id === "teach-panel" || e.target.querySelector?.("#teach-frames")) setup();
});
