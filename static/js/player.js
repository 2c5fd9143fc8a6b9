// The finished run's page: its figures fetched as JSON (one compressed document) and the
// trace player (slider, play/pause, keys, the step in the URL; the charts follow it).
import { api } from "./api.js";
import { plot } from "./figures.js";

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
  section.payload = payload;  // kept to draw again in presentation mode
  setupPlayer(section, payload.frames);
}

function stepFromURL() {
  const raw = new URLSearchParams(window.location.search).get("step");
  return raw !== null && /^-?\d+$/.test(raw) ? Number(raw) : null;
}

function setupPlayer(section, data) {
  const frames = data.frames;
  if (!frames.length) return;
  const slider = section.querySelector(".slider");
  slider.max = frames.length - 1;
  const playButton = section.querySelector("[data-act=play]");
  const speed = section.querySelector("[data-act=speed]");
  const stepCharts = (section.dataset.stepCharts || "").split(" ").map((id) => document.getElementById(id)).filter(Boolean);
  const sizeChart = document.getElementById(section.dataset.sizeChart);
  const text = { no: section.querySelector(".step-no"), kind: section.querySelector(".step-kind"), desc: section.querySelector(".step-desc") };
  const chips = section.querySelector(".support-chips");
  const indexOfStep = new Map(frames.map((f, i) => [f.step, i]));
  let timer = null;

  function show(i, remember = true) {
    const f = frames[i];
    slider.value = i;
    text.no.textContent = `Step ${f.step} of ${frames[frames.length - 1].step}`;
    text.kind.textContent = data.kinds[f.kind] || f.kind;  // the server's names (charts/kinds.py)
    text.kind.className = `step-kind badge kind-${f.kind}`;
    text.desc.textContent = f.text;
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
    if (remember) {
      const url = new URL(window.location.href);
      url.searchParams.set("step", f.step);
      history.replaceState(null, "", url);
    }
  }

  function pause() {
    clearInterval(timer);
    timer = null;
    playButton.textContent = "▶ Play";
    playButton.setAttribute("aria-label", "Play");
  }

  function play() {
    if (Number(slider.value) >= frames.length - 1) show(0);
    playButton.textContent = "❚❚ Pause";
    playButton.setAttribute("aria-label", "Pause");
    timer = setInterval(() => {
      const next = Number(slider.value) + 1;
      if (next >= frames.length) { pause(); return; }
      show(next);
    }, Number(speed.value));
  }

  function nextDeletion(i) {
    for (let n = i + 1; n < frames.length; n++) if (frames[n].kind === "remove" || frames[n].kind === "swap") return n;
    return i;
  }

  function act(name) {
    const i = Number(slider.value);
    if (name === "play") { timer ? pause() : play(); return; }
    if (name === "present") {
      // Large type and the charts only, for a projector; the charts are drawn again so that
      // their text grows with the page's.
      const on = document.documentElement.classList.toggle("present");
      section.querySelector("[data-act=present]").setAttribute("aria-pressed", String(on));
      Promise.all(Object.entries(section.payload.figures).map(([key, fig]) => {
        const target = document.getElementById(FIGURE_DIVS[key]);
        // Drawn again for the new type size, then fitted to the columns it now has.
        return target ? plot(target, fig).then(() => Plotly.Plots.resize(target)) : null;
      })).then(() => {
        show(i, false);
        section.dataset.drawn = on ? "present" : "normal";  // the charts fit the new mode
      });
      return;
    }
    const target = {
      first: 0,
      prev: Math.max(i - 1, 0),
      next: Math.min(i + 1, frames.length - 1),
      last: frames.length - 1,
      deletion: nextDeletion(i),
    }[name];
    if (target === undefined) return;
    pause();
    show(target);
  }

  section.addEventListener("click", (e) => {
    const name = e.target.closest("[data-act]")?.dataset.act;
    if (name && name !== "speed") act(name);
  });
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, select, textarea")) return;
    const name = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last", " ": "play", d: "deletion", p: "present" }[e.key];
    if (!name) return;
    e.preventDefault();
    act(name);
  });
  slider.addEventListener("input", () => { pause(); show(Number(slider.value)); });
  speed.addEventListener("change", () => { if (timer) { pause(); play(); } });
  const asked = stepFromURL();
  const start = asked !== null && indexOfStep.has(asked) ? indexOfStep.get(asked) : frames.length - 1;
  show(start, asked !== null);
  if (asked !== null && !indexOfStep.has(asked)) {
    text.no.textContent += ` (there is no step ${asked}; showing the last)`;
  }
}

document.querySelectorAll("[data-figures]").forEach((section) => {
  loadRunFigures(section).catch((err) => {
    section.querySelector(".step-no").textContent = `The charts could not be loaded: ${err.message}. Reload the page to try again.`;
  });
});
