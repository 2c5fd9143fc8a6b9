// Saved lessons: the lesson page's "Copy" button, and the /teach import form, which posts the
// file to the API (the CSRF token goes as a header, which a plain multipart form cannot
// carry) and opens the imported lesson, or shows why the file was refused.
import { headersFor, readJSON, refusal } from "./api.js";

document.querySelectorAll("[data-copy]").forEach((button) => {
  button.addEventListener("click", async () => {
    const field = document.getElementById(button.dataset.copy);
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      button.textContent = "Copied";
    } catch (_) {
      button.textContent = "Selected: copy it";
    }
  });
});

const form = document.getElementById("lesson-import");
if (form) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const box = form.querySelector(".form-error");
    const body = new FormData();
    body.append("file", form.querySelector("input[type=file]").files[0]);
    const response = await fetch(form.dataset.api, { method: "POST", body, headers: headersFor("POST") });
    const payload = await readJSON(response);
    if (response.ok && payload) {
      window.location.assign(payload.page_url);
      return;
    }
    box.hidden = false;
    box.textContent = `Refused: ${refusal(payload, response.status)}`;
  });
}
