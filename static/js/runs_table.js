// The runs table: ticks kept while HTMX swaps the table (a sort, a filter, another page), and
// Compare offered for two or more ticked runs of one data set.
import { formKinds } from "./forms.js";

// Ticks are kept while HTMX swaps the table (a sort, a filter, another page), so runs can be
// picked from several views of it: run id -> its data set.
const ticked = new Map();

function tickedRuns() {
  return [...ticked].map(([id, dataset]) => ({ id, dataset }));
}

function tickRun(box) {
  if (box.checked) ticked.set(Number(box.value), box.dataset.dataset);
  else ticked.delete(Number(box.value));
}

function restoreTicks() {
  document.querySelectorAll("#runs-table input.tick").forEach((box) => { box.checked = ticked.has(Number(box.value)); });
  updateCompareBar();
}

// Compare is offered only for two or more ticked runs of one data set (the API refuses
// others too, saying why).
function updateCompareBar() {
  const form = document.getElementById("compare-ticked");
  if (!form) return;
  const runs = tickedRuns();
  const datasets = new Set(runs.map((r) => r.dataset));
  const note = form.querySelector(".tick-note");
  const button = form.querySelector("button[type=submit]");
  button.disabled = !(runs.length >= 2 && datasets.size === 1);
  if (datasets.size > 1) note.textContent = `The ticked runs are on ${datasets.size} data sets: tick runs of one data set to compare them.`;
  else if (runs.length === 1) note.textContent = "1 run ticked: tick at least one more of the same data set.";
  else if (runs.length) note.textContent = `${runs.length} runs of one data set ticked (${runs.map((r) => `#${r.id}`).join(", ")}).`;
  else note.textContent = "Tick two or more runs of one data set to compare them.";
}

formKinds["from-runs"] = (body) => { body.run_ids = tickedRuns().map((r) => r.id); };
document.addEventListener("change", (e) => {
  if (e.target.matches("#runs-table input.tick")) { tickRun(e.target); updateCompareBar(); }
});
document.body.addEventListener("htmx:afterSettle", restoreTicks);
document.querySelectorAll("#runs-table input.tick:checked").forEach(tickRun);  // restored by the browser
updateCompareBar();
