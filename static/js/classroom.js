// The classroom pages. Phones: a refused vote (an old question, too many votes) is said in
// words rather than silently dropped. Lecturer: keys for the projector (n next, r reveal,
// a vote again, p presentation mode: present.js, full screen, Esc leaves). Live updates come
// from HTMX polling; nothing here polls.
import { presentation } from "./present.js";

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
  const button = KEYS[event.key] && document.getElementById(KEYS[event.key]);
  if (button) { event.preventDefault(); button.click(); }
});

// The lecturer's presentation mode: the session's grid takes the screen (classroom.css); the
// controls' posts come back in it (their hidden "present" field).
const classroom = document.querySelector(".classroom");
if (classroom) {
  presentation({
    apply(on) {
      classroom.classList.toggle("present", on);
      document.querySelectorAll('.controls input[name="present"]').forEach((input) => { input.value = on ? "true" : ""; });
    },
  });
}
