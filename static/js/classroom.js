// The classroom pages. Phones: a refused vote (an old question, too many votes) is said in
// words rather than silently dropped. Lecturer: keys for the projector (n next, r reveal,
// a vote again, p presentation mode). Live updates come from HTMX polling; nothing here polls.

document.addEventListener("htmx:responseError", (event) => {
  const box = document.getElementById("class-error");
  if (!box) return;
  let detail = "That did not work; try again.";
  try { detail = JSON.parse(event.detail.xhr.responseText).detail || detail; } catch { /* HTML */ }
  box.textContent = detail;
  box.hidden = false;
  window.setTimeout(() => { box.hidden = true; }, 5000);
});

const KEYS = { n: "c-next", ArrowRight: "c-next", r: "c-reveal", a: "c-again" };

document.addEventListener("keydown", (event) => {
  if (!document.querySelector(".classroom")) return;
  if (event.target instanceof HTMLInputElement || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "p") {
    const url = new URL(window.location.href);
    if (url.searchParams.has("present")) url.searchParams.delete("present");
    else url.searchParams.set("present", "true");
    window.location.assign(url.toString());
    return;
  }
  const button = KEYS[event.key] && document.getElementById(KEYS[event.key]);
  if (button) { event.preventDefault(); button.click(); }
});
