// The finished run's page: its figures and the player's frames fetched as JSON (one compressed
// document), then the trace player (player.js) with the charts following its step, and the
// presentation mode (p).
import { api } from "./api.js";
import { plot } from "./figures.js";
import { init } from "./player.js";

const FIGURE_DIVS = { path: "chart-path", objective_step: "chart-objective-step", objective_size: "chart-objective-size", coef: "chart-coef", roc: "chart-roc" };

// A finished run's page holds no chart data: fetch it (one compressed JSON document).
async function loadRunFigures(section) {
  const response = await api(section.dataset.figures);
  if (!response.ok) throw new Error(`the figures could not be loaded (${response.status})`);
  const payload = await response.json();
  await Promise.all(Object.entries(payload.figures).map(([key, fig]) => {
    const target = document.getElementById(FIGURE_DIVS[key]);
    return target ? plot(target, fig) : null;
  }));
  const player = init(section.querySelector(".player-bar"), payload.frames, { onFrame: drawer(section) });
  setupPresentation(section, payload, player);
}

// What the run page shows of a frame: the kind and its line, the support, the charts' cursor.
function drawer(section) {
  const stepCharts = (section.dataset.stepCharts || "").split(" ").map((id) => document.getElementById(id)).filter(Boolean);
  const sizeChart = document.getElementById(section.dataset.sizeChart);
  const kind = section.querySelector(".step-kind");
  const desc = section.querySelector(".step-desc");
  const chips = section.querySelector(".support-chips");
  return (f, _index, data) => {
    kind.textContent = data.kinds[f.kind] || f.kind;  // the server's names (charts/kinds.py)
    kind.className = `step-kind badge kind-${f.kind}`;
    desc.textContent = f.text;
    const support = data.supports[f.support] || [];
    chips.replaceChildren(...support.map((j) => {
      const chip = document.createElement("span");
      chip.className = "chip";
      chip.textContent = data.names[j] ?? `feature ${j}`;
      return chip;
    }));
    if (!support.length) chips.textContent = "(empty)";
    const update = { "shapes[0].x0": f.step, "shapes[0].x1": f.step, "shapes[1].x0": f.step + 0.5 };
    stepCharts.forEach((gd) => { if (gd.layout) Plotly.relayout(gd, update); });
    if (sizeChart && sizeChart.data && f.objective !== null) {
      Plotly.restyle(sizeChart, { x: [[f.size]], y: [[f.objective]] }, [sizeChart.data.length - 1]);
    }
  };
}

// Large type and the charts only, for a projector; the charts are drawn again so that their
// text grows with the page's, then fitted to the columns they now have.
function setupPresentation(section, payload, player) {
  const toggle = () => {
    const on = document.documentElement.classList.toggle("present");
    section.querySelector("[data-act=present]").setAttribute("aria-pressed", String(on));
    Promise.all(Object.entries(payload.figures).map(([key, fig]) => {
      const target = document.getElementById(FIGURE_DIVS[key]);
      return target ? plot(target, fig).then(() => Plotly.Plots.resize(target)) : null;
    })).then(() => {
      player.show(player.index());
      section.dataset.drawn = on ? "present" : "normal";  // the charts fit the new mode
    });
  };
  section.querySelector("[data-act=present]").addEventListener("click", toggle);
  document.addEventListener("keydown", (e) => {
    if (e.key !== "p" || e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, select, textarea")) return;
    e.preventDefault();
    toggle();
  });
}

document.querySelectorAll("[data-figures]").forEach((section) => {
  loadRunFigures(section).catch((err) => {
    section.querySelector(".step-desc").textContent = `The charts could not be loaded: ${err.message}. Reload the page to try again.`;
  });
});
