// The teaching page: ← and → step the decisions (HTMX loads each step's panel), and the
// buttons that queue the run again (recording candidate scores, or a what-if saved as a run).
import { api, readJSON, refusal } from "./api.js";

// Each key moves from the step the previous key asked for, not from the step on screen (which
// may still be loading). One step loads at a time; when it has come, the newest step asked
// for is loaded next: eight quick presses land exactly eight steps on.
let teachTarget = null;
let loading = false;

function stepFromURL() {
  const raw = new URLSearchParams(window.location.search).get("step");
  return raw !== null && /^-?\d+$/.test(raw) ? Number(raw) : null;
}

function stepURL(panel, step) {
  return `/teach/${panel.dataset.run}?step=${step}${panel.dataset.query || ""}`;
}

// HTMX swaps in the panel of ``url``; ``push`` records the step in the history.
function loadPanel(url, push) {
  const panel = document.getElementById("teach-panel");
  if (!panel || !window.htmx) return Promise.resolve();
  loading = true;
  return window.htmx.ajax("GET", url, { source: panel, target: "#teach-panel", swap: "outerHTML" })
    .then(() => { if (push) history.pushState({ teachStep: true }, "", url); })
    .catch(() => { teachTarget = null; })
    .finally(() => { loading = false; });
}

function shownStep() {
  const counter = document.querySelector("#teach-panel [data-step]");
  return counter ? Number(counter.dataset.step) : null;
}

function pump() {
  const panel = document.getElementById("teach-panel");
  if (loading || teachTarget === null || !panel) return;
  if (teachTarget === shownStep()) { teachTarget = null; return; }
  loadPanel(stepURL(panel, teachTarget), true).then(pump);
}

function teachKey(e) {
  const panel = document.getElementById("teach-panel");
  const delta = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
  if (!panel || !delta || e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.target.closest("input, select, textarea")) return;
  const counter = panel.querySelector("[data-step]");
  if (!counter) return;
  e.preventDefault();
  const from = teachTarget ?? Number(counter.dataset.step);
  const to = Math.min(Math.max(from + delta, 0), Number(panel.dataset.last));
  if (to === from) return;
  teachTarget = to;
  pump();
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
if (document.getElementById("teach-panel")) {
  document.addEventListener("keydown", teachKey);
  // Back and Forward: show the step the address now names (entries made by the keys, by
  // HTMX's links, or the page's first load, which has no state of its own).
  window.addEventListener("popstate", () => {
    if (document.getElementById("teach-panel") && stepFromURL() !== null) {
      teachTarget = null;
      loadPanel(window.location.pathname + window.location.search, false);
    }
  });
}
