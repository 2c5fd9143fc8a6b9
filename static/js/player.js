// The trace player: one module for every page that steps through a run's decisions (the run
// page, the teaching page, later the classroom). It steps through frames computed once on the
// server; stepping never asks the server for anything.
//
//   import { init } from "./player.js";
//   const player = init(container, data, { onFrame(frame, index, data) { ... } });
//
// ``container``: an empty element; the player puts its controls in it (first, previous,
// play/pause, next, last, next deletion, a step slider, a speed choice 0.5x-4x), the step
// counter ("Step 12 of 30", its number in [data-step]) and, at the steps after the answer was
// found, the sentence saying so. Options:
//   onFrame(frame, index, data)  draws the page's part of a frame (charts, narration, ...)
//   start    "first" or "last": the frame shown when the URL names no step
//            (default: container.dataset.start, else "last")
//   url      true: the step shown is kept in the URL (?step=N, history.replaceState) and the
//            URL's step is the one shown first, so a link reproduces the view
//   keys     true: ← → Home End, space (play/pause) and d (next deletion) on the document
//   autoplay true: start playing at once
// Returns { show(index), play(), pause(), index(), destroy() }; destroy() stops the timer and
// removes the document's listeners (call it before a new init on the same container).
//
// ``data``: the frames document built by app/web/charts/player.py (``player_frames``):
//   names     ["x0", ...]                feature names by column
//   kinds     {kind: short name}         the kinds' names (app/web/charts/kinds.py)
//   supports  [[0, 3], ...]              distinct supports (sorted columns)
//   frames    [{step, kind, text, objective, size, support, teach?}, ...]
//             step: the event's step number; kind: add|remove|check|swap|iterate|stop;
//             text: one line on what it did; objective and size after it; support: an index
//             into supports (the support after it); teach: the teaching panel (views/teach.py)
//   answer    null or {step, k, text}: the path went on past its answer, found at ``step``;
//             ``text`` is shown at every frame after that step
// Pages may add their own keys to the document (the teaching page adds truth and lesson).

const SPEEDS = [["0.5", "0.5×"], ["1", "1×"], ["2", "2×"], ["4", "4×"]];
const BASE_MS = 1000;  // one step a second at 1x
const SPEED_KEY = "foba-player-speed";

function stepFromURL() {
  const raw = new URLSearchParams(window.location.search).get("step");
  return raw === null ? null : raw;
}

function element(tag, attrs = {}, text = "") {
  const el = document.createElement(tag);
  Object.entries(attrs).forEach(([key, value]) => el.setAttribute(key, value));
  if (text) el.textContent = text;
  return el;
}

function button(act, label, title, cls = "") {
  const b = element("button", { type: "button", "data-act": act, title, "aria-label": title }, label);
  if (cls) b.className = cls;
  return b;
}

function savedSpeed() {
  try {
    const value = window.localStorage.getItem(SPEED_KEY);
    return SPEEDS.some(([v]) => v === value) ? value : "1";
  } catch {
    return "1";
  }
}

function buildControls(container, count) {
  const bar = element("div", { class: "player-controls" });
  const playButton = button("play", "▶ Play", "Play / pause (space)", "primary play");
  const slider = element("input", { type: "range", class: "slider", min: "0", max: String(count - 1), step: "1", "aria-label": "Step" });
  const speed = element("select", { "data-act": "speed", "aria-label": "Play speed" });
  SPEEDS.forEach(([value, label]) => speed.append(element("option", { value }, label)));
  speed.value = savedSpeed();
  const speedLabel = element("label", { class: "speed" }, "speed ");
  speedLabel.append(speed);
  bar.append(
    button("first", "«", "First step (Home)"),
    button("prev", "‹ Prev", "Previous step (←)"),
    playButton,
    button("next", "Next ›", "Next step (→)"),
    button("last", "»", "Last step (End)"),
    button("deletion", "next deletion", "Next deletion (d)"),
    slider,
    speedLabel,
  );
  const status = element("p", { class: "player-status", "aria-live": "polite" });
  const counter = element("strong", { class: "step-no" });
  const answer = element("span", { class: "player-answer" });
  answer.hidden = true;
  status.append(counter, " ", answer);
  container.replaceChildren(bar, status);
  return { playButton, slider, speed, counter, answer };
}

export function init(container, data, options = {}) {
  const frames = data.frames || [];
  const onFrame = options.onFrame || (() => {});
  const useURL = options.url !== false;
  if (!frames.length) {
    container.replaceChildren(element("p", { class: "muted" }, "No step recorded."));
    return { show() {}, play() {}, pause() {}, index: () => -1, destroy() {} };
  }
  const ui = buildControls(container, frames.length);
  const last = frames[frames.length - 1].step;
  let current = 0;
  let timer = null;
  let note = "";

  function show(i, remember = true) {
    current = Math.max(0, Math.min(i, frames.length - 1));
    const f = frames[current];
    ui.slider.value = current;
    const number = element("span", { "data-step": String(f.step) }, String(f.step));
    ui.counter.replaceChildren("Step ", number, ` of ${last}`);
    if (note) ui.counter.append(element("span", { class: "player-note" }, ` ${note}`));
    note = "";
    const past = data.answer && f.step > data.answer.step;
    ui.answer.hidden = !past;
    ui.answer.textContent = past ? data.answer.text : "";
    onFrame(f, current, data);
    if (remember && useURL) {
      const url = new URL(window.location.href);
      url.searchParams.set("step", f.step);
      history.replaceState(history.state, "", url);
    }
  }

  function pause() {
    clearInterval(timer);
    timer = null;
    ui.playButton.textContent = "▶ Play";
    ui.playButton.setAttribute("aria-label", "Play");
  }

  function play() {
    if (current >= frames.length - 1) show(0);
    ui.playButton.textContent = "❚❚ Pause";
    ui.playButton.setAttribute("aria-label", "Pause");
    clearInterval(timer);
    timer = setInterval(() => {
      if (current + 1 >= frames.length) { pause(); return; }
      show(current + 1);
    }, BASE_MS / Number(ui.speed.value));
  }

  function nextDeletion(i) {
    for (let n = i + 1; n < frames.length; n++) if (frames[n].kind === "remove" || frames[n].kind === "swap") return n;
    return i;
  }

  function act(name) {
    if (name === "play") { timer ? pause() : play(); return; }
    const target = {
      first: 0,
      prev: current - 1,
      next: current + 1,
      last: frames.length - 1,
      deletion: nextDeletion(current),
    }[name];
    if (target === undefined) return;
    pause();
    show(target);
  }

  function onClick(e) {
    const name = e.target.closest("[data-act]")?.dataset.act;
    if (name && name !== "speed") act(name);
  }

  function onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, select, textarea")) return;
    if (!container.isConnected) return;
    const name = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last", " ": "play", d: "deletion" }[e.key];
    if (!name) return;
    if (name === "play" && e.target.closest("button, a")) return;  // space presses a focused button
    e.preventDefault();
    act(name);
  }

  function onSlider() { pause(); show(Number(ui.slider.value)); }

  function onSpeed() {
    try { window.localStorage.setItem(SPEED_KEY, ui.speed.value); } catch { /* private mode */ }
    if (timer) play();
  }

  container.addEventListener("click", onClick);
  ui.slider.addEventListener("input", onSlider);
  ui.speed.addEventListener("change", onSpeed);
  if (options.keys !== false) document.addEventListener("keydown", onKey);

  // The first frame: the URL's step (a shared link), else the nearest step, saying so.
  const start = (options.start || container.dataset.start) === "first" ? 0 : frames.length - 1;
  const asked = useURL ? stepFromURL() : null;
  let first = start;
  if (asked !== null) {
    if (!/^\d+$/.test(asked)) {
      note = `(“${asked.slice(0, 40)}” is not a step number; showing step ${frames[start].step})`;
    } else {
      const step = Number(asked);
      const exact = frames.findIndex((f) => f.step === step);
      if (exact >= 0) first = exact;
      else {
        // The nearest frame at or before the step (iterations may be thinned), else the first.
        let near = 0;
        frames.forEach((f, i) => { if (f.step <= step) near = i; });
        first = near;
        note = `(there is no step ${step}; showing step ${frames[near].step})`;
      }
    }
  }
  show(first, asked !== null && note === "");
  if (options.autoplay) play();

  return {
    show: (i) => { pause(); show(i); },
    play,
    pause,
    index: () => current,
    destroy() {
      pause();
      container.removeEventListener("click", onClick);
      document.removeEventListener("keydown", onKey);
    },
  };
}
