// The teaching page: the trace player (player.js) steps through the frames the page holds
// (<script type=application/json id=teach-frames>, built once per run on the server:
// views/teach.py), and each frame's panel is drawn here: the candidates chart, the narrated
// decision, the support, the timeline. No step asks the server; a what-if (other k or nu) is
// one HTMX request that brings new frames. Also the buttons that queue the run again,
// "Predict first" (teach_predict.js), "why not this feature?" (a chip or a bar asks
// /runs/{id}/why-not) and the presentation mode (present.js).
import { api, readJSON, refusal } from "./api.js";
import { plot } from "./figures.js";
import { init } from "./player.js";
import { presentation, presentOn } from "./present.js";
import { predictOn, predictor } from "./teach_predict.js";
import { drawGeometry } from "./geometry.js";

const TIMELINE_SPAN = 80;  // ticks either side of the current step
let player = null;
let predict = null;

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

// In presentation mode the chart takes the height left under its top, so that nothing that
// matters is below the fold (figures.js grows a figure with the page's type: undone here).
function fitScreen(chart, fig) {
  if (!document.documentElement.classList.contains("present") || !fig.layout.height) return fig;
  const k = parseFloat(getComputedStyle(document.documentElement).fontSize) / 16;
  const grow = k > 1.05 ? Math.min(k, 1.3) : 1;
  const room = window.innerHeight - chart.getBoundingClientRect().top - 12;
  const height = Math.max(220, Math.floor(Math.min(fig.layout.height * grow, room) / grow));
  return { data: fig.data, layout: { ...fig.layout, height } };
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
      plot(chart, fitScreen(chart, narrow(chart, t.figure))).then(() => barsAskWhyNot(panel, chart, data));
    } else {
      chart.hidden = true;
      if (window.Plotly) Plotly.purge(chart);
      delete chart.dataset.whyNot;  // purge removed the click listener
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
      const chip = el(whyNotAsked(panel) ? "button" : "span", `chip${added ? " added" : ""}${truth.has(j) ? " true" : ""}`,
        `${added ? "+ " : ""}${name}${truth.has(j) ? " ★" : ""}`);
      if (whyNotAsked(panel)) whyNotChip(chip, j, name);
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
    if (predict) predict.frame(f, index, data);
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
  if (predict) predict.destroy();
  predict = predictor(panel, () => player);
  const presenting = document.documentElement.classList.contains("present");
  panel.querySelectorAll("[data-present]").forEach((b) => b.setAttribute("aria-pressed", String(presenting)));
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

// ---------------------------------------------------------------- why not this feature? (#23)
// A support chip (a button) or a bar of the candidates chart asks the run page's endpoint,
// GET /runs/{id}/why-not?feature=IDX, and its answer (partials/why_not.html) replaces
// #why-not-answer in the narration. Not on a what-if: the answer judges the stored run.
function whyNotAsked(panel) {
  return Boolean(panel.querySelector("#why-not-answer"));
}

function askWhyNot(panel, feature) {
  const target = panel.querySelector("#why-not-answer");
  if (!target || !window.htmx) return;
  htmx.ajax("GET", `/runs/${panel.dataset.run}/why-not?feature=${feature}`, { target: "#why-not-answer", swap: "outerHTML" });
}

function whyNotChip(chip, feature, name) {
  chip.type = "button";
  chip.dataset.whyNot = String(feature);
  chip.title = `Why ${name}, or why not? (in the run's answer)`;
}

function barsAskWhyNot(panel, chart, data) {
  if (!whyNotAsked(panel) || chart.dataset.whyNot || !chart.on) return;
  chart.dataset.whyNot = "1";
  chart.on("plotly_click", (event) => {
    const name = event.points && event.points[0] && event.points[0].y;
    const feature = data.names.indexOf(name);
    if (feature >= 0) askWhyNot(panel, feature);
  });
}

document.addEventListener("click", (e) => {
  const chip = e.target.closest("button[data-why-not]");
  const panel = document.getElementById("teach-panel");
  if (chip && panel && panel.contains(chip)) askWhyNot(panel, Number(chip.dataset.whyNot));
});

// ---------------------------------------------------------------- presentation mode (#27)
// html.present (app.css): full screen, large type, chart and narration side by side; the
// step is drawn again so that the chart fits the new room.
presentation({
  apply(on) {
    document.documentElement.classList.toggle("present", on);
    document.documentElement.classList.toggle("present-teach", on);
    if (player) player.show(player.index());
  },
});

// Entering or leaving full screen (or turning the projector) changes the room: fit again.
let refit = null;
window.addEventListener("resize", () => {
  if (!document.documentElement.classList.contains("present")) return;
  clearTimeout(refit);
  refit = setTimeout(() => { if (player) player.show(player.index()); }, 150);
});

// A what-if keeps "Predict first" and the presentation mode in the URL it pushes.
document.body.addEventListener("htmx:configRequest", (e) => {
  if (!e.target.closest?.(".what-if")) return;
  if (predictOn()) e.detail.parameters.predict = "1";
  if (presentOn()) e.detail.parameters.present = "1";
});

setup();
// A what-if (the form's hx-get) swaps in a panel with new frames.
document.body.addEventListener("htmx:afterSettle", (e) => {
  if (e.target.id === "teach-panel" || e.target.querySelector?.("#teach-frames")) setup();
});
