// Forms on every page: a form.api-form posts typed JSON to the API, then goes to the new page
// or shows the server's validation message in place; the deletion dialog; forms the browser
// posts itself carry the CSRF token; after Back the run form's parameter panel is reloaded
// when it no longer matches the algorithm shown.
import { api, csrfToken, readJSON } from "./api.js";

// Extra fields a page's script adds to the JSON of a form of a data-kind (runs_table.js adds
// the ticked runs to "from-runs").
export const formKinds = {};

function setPath(obj, path, value) {
  const keys = path.split(".");
  let node = obj;
  keys.slice(0, -1).forEach((k) => { node = node[k] = node[k] || {}; });
  node[keys[keys.length - 1]] = value;
}

// The value of a field as its data-type says; undefined leaves it out (the server's default).
function fieldValue(el) {
  const type = el.dataset.type;
  if (type === "bool") return el.checked;
  const raw = el.value.trim();
  if (type === "tags") return raw.split(",").map((t) => t.trim()).filter((t) => t !== "");
  if (raw === "") return el.dataset.nullable ? null : el.dataset.blank === "send" ? "" : undefined;
  if (type === "int") return Number.parseInt(raw, 10);
  if (type === "float") return Number(raw);
  return raw;
}

function formJSON(form) {
  const body = {};
  const each = {};
  form.querySelectorAll("[name][data-type]").forEach((el) => {
    if (el.disabled) return;
    const value = fieldValue(el);
    if (value === undefined) return;
    setPath(el.dataset.each ? each : body, el.name, value);
  });
  if (formKinds[form.dataset.kind]) formKinds[form.dataset.kind](body);
  if (form.dataset.kind === "comparison") {
    body.runs = [...form.querySelectorAll("input[data-algorithm]:checked")].map((box) => {
      const run = { algorithm: box.dataset.algorithm, ...each };
      if (box.dataset.k === "unused") delete run.k;
      return run;
    });
  }
  return body;
}

// ``worded``: the messages already name the form's controls (the upload form), so the
// field names of ``loc`` are not put before them.
export function showError(form, status, payload, worded) {
  const box = form.querySelector(".form-error");
  if (!box) return;
  box.replaceChildren();
  const head = document.createElement("strong");
  const heads = { 413: "Too large: ", 422: "Refused: ", 503: "Busy: " };
  head.textContent = heads[status] || `Error ${status}: `;
  box.append(head);
  const detail = payload && payload.detail;
  if (Array.isArray(detail)) {
    const list = document.createElement("ul");
    detail.forEach((err) => {
      const item = document.createElement("li");
      const where = worded ? "" : (err.loc || []).filter((p) => p !== "body").join(" → ");
      item.textContent = (where ? where + ": " : "") + err.msg;
      list.append(item);
    });
    box.append(list);
  } else {
    box.append(document.createTextNode(detail || "the server refused the request"));
  }
  box.hidden = false;
}

export function clearError(form) {
  const box = form.querySelector(".form-error");
  if (box) { box.hidden = true; box.replaceChildren(); }
}

async function submitJSON(form) {
  const button = form.querySelector("button[type=submit]");
  const note = form.querySelector(".actions .progress-text");
  if (form.dataset.kind === "comparison" && !form.querySelector("input[data-algorithm]:checked")) {
    showError(form, 422, { detail: "choose at least one algorithm" });
    return;
  }
  clearError(form);
  button.disabled = true;
  if (note) note.textContent = "Sending…";
  // data-method: POST (the default), PATCH, or DELETE (no body); data-redirect: where to go
  // after, "{id}" the answer's id, blank for this page again.
  const method = (form.dataset.method || "POST").toUpperCase();
  try {
    const body = method === "DELETE" ? undefined : formJSON(form);
    const response = await api(form.getAttribute("action"), { method, body });
    const payload = await readJSON(response);
    const redirect = form.dataset.redirect || "";
    const needsId = redirect.includes("{id}");
    if (response.ok && (!needsId || (payload && payload.id !== undefined))) {
      if (note) note.textContent = "Done; opening…";
      if (redirect) window.location.assign(needsId ? redirect.replace("{id}", payload.id) : redirect);
      else window.location.reload();
      return;
    }
    showError(form, response.status, payload);
  } catch (err) {
    showError(form, 0, { detail: "the server could not be reached: " + err.message });
  } finally {
    button.disabled = false;
    if (note && note.textContent === "Sending…") note.textContent = "";
  }
}

// A button with data-delete opens the page's confirmation dialog, which names what goes.
function openDeleteDialog(button) {
  const dialog = document.getElementById("confirm-delete");
  if (!dialog) return;
  const form = dialog.querySelector("form");
  form.setAttribute("action", button.dataset.delete);
  form.dataset.redirect = button.dataset.after || "";
  dialog.querySelector(".confirm-text").textContent = button.dataset.confirm;
  clearError(form);
  dialog.showModal();
}

// Back to a page whose form the browser restored: the algorithm list may show another
// algorithm than the parameter panel (loaded for the first one) was built for. Reload the
// panel for what the controls now say, so the form never sends one algorithm's parameters
// with another. The cross-validation form's panel ("cv-") is kept in step the same way.
function resyncRunForm() {
  ["run", "cv"].forEach((name) => {
    const select = document.getElementById(`${name}-algorithm`);
    const panel = document.querySelector(`#${name}-params [data-algorithm]`);
    if (!select || !panel || !window.htmx) return;
    const objective = document.getElementById(`${name}-objective`);
    const stale = panel.dataset.algorithm !== select.value
      || (objective && panel.dataset.objective !== objective.value);
    if (stale) window.htmx.trigger(select, "change");
  });
}

document.addEventListener("submit", (e) => {
  const form = e.target;
  if (form.matches("form.api-form:not([data-upload])")) {
    e.preventDefault();
    submitJSON(form);
    return;
  }
  // A form the browser itself posts (sign-out): the token as a field.
  const token = csrfToken();
  if (!token || e.defaultPrevented || form.method !== "post" || form.querySelector('input[name="csrf_token"]')) return;
  const field = document.createElement("input");
  Object.assign(field, { type: "hidden", name: "csrf_token", value: token });
  form.append(field);
});
document.addEventListener("click", (e) => {
  const del = e.target.closest("[data-delete]");
  if (del) openDeleteDialog(del);
  const close = e.target.closest("[data-act=close-dialog]");
  if (close) close.closest("dialog").close();
});
window.addEventListener("pageshow", resyncRunForm);
resyncRunForm();
