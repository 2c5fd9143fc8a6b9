// The CSV upload form: the file sent with progress (XMLHttpRequest, for its upload events),
// then the new data set's page, or the server's refusal in place. Before the upload the form
// reads the file's first 64 KB: it proposes the target (a column named like one, else the
// last) and says which task the target's values make. After a refusal it opens and marks the
// controls the server's answer names (ctx.options), and fills the positive-class choice when
// the target has more than two classes. The classes the server names stay offered for that
// target (the sample may hold fewer: a file sorted by class), so a class chosen once is sent.
// Cells that mean missing are the Missing-value tokens field's (as the server reads them).
// The server words its messages for the form (X-Wording: form).
import { csrfToken, parseJSON } from "./api.js";
import { clearError, showError } from "./forms.js";

const DELIMITERS = [",", ";", "\t", "|"];
const TARGET_NAMES = ["target", "y", "label", "class", "outcome", "response"];
const MAX_CODED_CLASSES = 10; // as app.ingest.problems: a few integers may be class labels
const SAMPLE_BYTES = 65536;
const SAMPLE_ROWS = 2000;
const MAX_SAMPLE_BYTES = 16 * 1024 * 1024; // a header line longer than this is not previewed
// The form's encodings as the browser's TextDecoder names them.
const WEB_ENCODINGS = { "latin-1": "iso-8859-1", cp1252: "windows-1252", "mac-roman": "macintosh",
  cp1250: "windows-1250", cp1251: "windows-1251", "utf-16": "utf-16le" };

function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1048576) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1048576).toFixed(1)} MB`;
}

// One line into fields; quotes as in RFC 4180.
function splitLine(line, delimiter) {
  const fields = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c !== '"') field += c;
      else if (line[i + 1] === '"') { field += '"'; i++; } else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === delimiter) { fields.push(field); field = ""; } else field += c;
  }
  fields.push(field);
  return fields;
}

function decodeSample(bytes, encoding) {
  let label = WEB_ENCODINGS[encoding] || encoding;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) label = "utf-16le";
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) label = "utf-16be";
  try { return new TextDecoder(label).decode(bytes); } catch (_) { return new TextDecoder().decode(bytes); }
}

async function readSample(form, file) {
  // A 20,000-column header is ~130 KB: read on (x4 each time) until the header line is whole,
  // or the target list would be empty (issue 25); MAX_SAMPLE_BYTES bounds it.
  let size = SAMPLE_BYTES;
  let bytes = new Uint8Array(await file.slice(0, size).arrayBuffer());
  while (file.size > size && size < MAX_SAMPLE_BYTES && !bytes.includes(10) && !bytes.includes(13)) {
    size *= 4;
    bytes = new Uint8Array(await file.slice(0, size).arrayBuffer());
  }
  const text = decodeSample(bytes, form.querySelector("[name=encoding]").value).replace(/^\uFEFF/, "");
  let lines = text.split(/\r\n|\n|\r/);
  if (file.size > size) lines = lines.slice(0, -1); // the last line may be cut
  lines = lines.filter((line) => line.trim() !== "");
  const decimal = form.querySelector("[name=decimal]").value;
  const given = form.querySelector("[name=delimiter]").value.trim();
  const choices = decimal === "," ? DELIMITERS.filter((d) => d !== ",") : DELIMITERS;
  const first = lines[0] || "";
  const delimiter = given === "tab" || given === "\\t" ? "\t" : given
    || choices.reduce((best, d) => (splitLine(first, d).length > splitLine(first, best).length ? d : best), choices[0]);
  const header = splitLine(first, delimiter).map((c) => c.trim());
  if (header.length > 1 && header[0] === "") header[0] = "rownames"; // R's row names
  if (header.length > 1 && header[header.length - 1] === "") header.pop(); // a trailing delimiter
  const rows = lines.slice(1, SAMPLE_ROWS + 1).map((line) => splitLine(line, delimiter));
  return { header, rows, decimal };
}

function proposeTarget(form, header, keep) {
  const select = form.querySelector("select[name=target]");
  const why = form.querySelector(".target-why");
  const named = header.find((c) => TARGET_NAMES.includes(c.toLowerCase()));
  select.replaceChildren(...header.map((c) => new Option(c, c)));
  const wanted = [keep, select.dataset.default].find((c) => c && header.includes(c));
  if (wanted) { select.value = wanted; why.textContent = ""; return; }
  select.value = named || header[header.length - 1] || "";
  why.textContent = named ? `Proposed: a column named ${named}.` : "Proposed: the last column.";
}

function readNumber(text, decimal) {
  let t = text.trim();
  if (decimal === ",") { if (t.includes(".")) return NaN; t = t.replace(",", "."); }
  return t === "" ? NaN : Number(t);
}

// The tokens that mean missing, lower-cased, as the server reads the field (app.ingest.upload).
function naTokens(form) {
  const text = (form.querySelector("[name=na_values]") || { value: "" }).value.trim();
  let tokens = [];
  if (text.startsWith("[")) { try { tokens = JSON.parse(text).map(String); } catch (_) { tokens = []; } } else tokens = text.split(",");
  return new Set(["", ...tokens.map((t) => t.trim().toLowerCase())]);
}

function showClasses(form, classes) {
  const box = form.querySelector(".positive-class");
  const select = box.querySelector("select");
  if (!classes) { box.hidden = true; select.value = ""; return; }
  const chosen = select.value;
  select.replaceChildren(new Option("choose the class to predict", ""), ...classes.map((c) => new Option(c, c)));
  if (classes.includes(chosen)) select.value = chosen;
  box.hidden = false;
}

// What the target's values in the sample make, said before the upload.
function inferTask(form) {
  const sample = form.sample;
  const out = form.querySelector(".task-guess");
  if (!sample) return;
  const target = form.querySelector("select[name=target]").value;
  const j = sample.header.indexOf(target);
  const na = naTokens(form);
  const values = j < 0 ? [] : sample.rows.map((r) => (r[j] || "").trim()).filter((v) => !na.has(v.toLowerCase()));
  if (!values.length) { out.textContent = ""; showClasses(form, null); return; }
  const numeric = values.every((v) => !Number.isNaN(readNumber(v, sample.decimal)));
  const keys = numeric ? values.map((v) => readNumber(v, sample.decimal)) : values;
  const distinct = [...new Set(keys)].sort((a, b) => (numeric ? a - b : String(a).localeCompare(String(b))));
  const told = form.serverClasses && form.serverClasses.target === target ? form.serverClasses.classes : [];
  const labels = told.length ? told : distinct.map(String); // the server read the whole file
  const forced = form.querySelector("[name=task]").value;
  const seen = told.length ? "in the file" : `in the first ${sample.rows.length} rows`;
  const integers = numeric && keys.every((v) => Number.isInteger(v));
  const coded = integers && labels.length >= 3 && labels.length <= MAX_CODED_CLASSES && 2 * labels.length <= values.length;
  let classes = null;
  let text;
  if (!numeric && forced === "regression") text = "Regression needs a numeric target; this one holds text.";
  else if (coded && !forced) {
    classes = labels;
    text = `${labels.length} distinct integers ${seen} (${labels.join(", ")}): class labels or a quantity? Choose regression under Task, or the class to predict below.`;
  } else if (told.length && forced !== "regression") {
    classes = labels;
    text = `${labels.length} classes ${seen} (${labels.slice(0, 6).join(", ")}${labels.length > 6 ? ", …" : ""}): choose the positive class below.`;
  } else if (labels.length === 1) text = `The target holds the single value ${labels[0]} ${seen}: it must vary.`;
  else if (labels.length === 2) text = `Classification: ${labels.join(" / ")} (${seen}).`;
  else if (numeric && forced !== "classification") text = `Regression: a numeric target with ${labels.length} values ${seen}.`;
  else {
    classes = labels;
    text = `${labels.length} classes ${seen} (${labels.slice(0, 6).join(", ")}${labels.length > 6 ? ", …" : ""}): choose the positive class below.`;
  }
  showClasses(form, classes);
  const positive = form.querySelector("[name=positive_class]").value;
  if (classes && positive) text = `Classification: ${positive} against the ${classes.length - 1} other classes.`;
  out.textContent = text;
}

async function sampleFile(form, keepTarget) {
  const file = form.querySelector("input[type=file]").files[0];
  if (!file) return;
  form.sample = await readSample(form, file);
  if (!keepTarget) form.serverClasses = null; // another file: what the server said is moot
  proposeTarget(form, form.sample.header, keepTarget);
  inferTask(form);
}

// After a refusal: open and mark every control the answer names as a fix.
function markFixes(form, payload) {
  form.querySelectorAll(".field.attention").forEach((f) => f.classList.remove("attention"));
  const detail = payload && Array.isArray(payload.detail) ? payload.detail : [];
  detail.forEach((err) => {
    const options = (err.ctx && err.ctx.options) || {};
    const names = Object.keys(options);
    const at = (err.loc || [])[1];
    if (at && at !== "file" && !names.includes(at)) names.push(at);
    names.forEach((name) => {
      const field = form.querySelector(`[data-field="${name}"]`);
      if (!field) return;
      field.classList.add("attention");
      const section = field.closest("details");
      if (section) section.open = true;
    });
    if (options.positive_class) {
      form.serverClasses = { target: form.querySelector("select[name=target]").value, classes: options.positive_class.map(String) };
      inferTask(form);
    }
  });
}

function setupUpload(form) {
  const input = form.querySelector("input[type=file]");
  const zone = form.querySelector(".dropzone");
  const name = form.querySelector(".file-name");
  const chosen = () => {
    const file = input.files[0];
    if (!file) return;
    name.textContent = `${file.name} (${sizeText(file.size)})`;
    clearError(form);
    form.querySelectorAll(".field.attention").forEach((f) => f.classList.remove("attention"));
    sampleFile(form).catch(() => {});
  };
  input.addEventListener("change", chosen);
  ["dragenter", "dragover"].forEach((t) => zone.addEventListener(t, (e) => { e.preventDefault(); zone.classList.add("over"); }));
  ["dragleave", "drop"].forEach((t) => zone.addEventListener(t, () => zone.classList.remove("over")));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    if (e.dataTransfer.files.length) { input.files = e.dataTransfer.files; chosen(); }
  });
  ["target", "task", "positive_class", "na_values"].forEach((n) => form.querySelector(`[name=${n}]`).addEventListener("change", () => inferTask(form)));
  form.querySelector("select[name=target]").addEventListener("change", () => { form.querySelector(".target-why").textContent = ""; });
  ["decimal", "encoding", "delimiter"].forEach((n) => form.querySelector(`[name=${n}]`).addEventListener("change", () => {
    sampleFile(form, form.querySelector("select[name=target]").value).catch(() => {});
  }));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData();
    for (const [key, value] of new FormData(form).entries()) {
      if (value !== "" && !(value instanceof File && !value.name)) data.append(key, value);
      else if (key === "na_values") data.append(key, "[]"); // blank: only empty cells are missing
    }
    const bar = form.querySelector(".upload-progress");
    const note = form.querySelector(".progress-text");
    const button = form.querySelector("button[type=submit]");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.getAttribute("action"));
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-Wording", "form");
    if (csrfToken()) xhr.setRequestHeader("X-CSRF-Token", csrfToken());
    xhr.upload.onprogress = (ev) => {
      if (!ev.lengthComputable) return;
      bar.hidden = false;
      bar.value = ev.loaded / ev.total;
      note.textContent = `Uploading: ${sizeText(ev.loaded)} of ${sizeText(ev.total)}`;
    };
    xhr.upload.onload = () => { note.textContent = "Checking the file…"; };
    xhr.onload = () => {
      button.disabled = false;
      const payload = parseJSON(xhr.responseText);
      if (xhr.status === 201 && payload) {
        note.textContent = "Stored; opening…";
        window.location.assign(`/datasets/${payload.id}`);
        return;
      }
      bar.hidden = true;
      note.textContent = "";
      const wait = xhr.getResponseHeader("Retry-After");
      if (xhr.status === 503 && payload && wait) payload.detail += ` (about ${wait} s)`;
      showError(form, xhr.status, payload, true);
      markFixes(form, payload);
    };
    xhr.onerror = () => {
      button.disabled = false;
      bar.hidden = true;
      showError(form, 0, { detail: "the upload was interrupted" });
    };
    clearError(form);
    button.disabled = true;
    xhr.send(data);
  });
}

document.querySelectorAll("form[data-upload]").forEach(setupUpload);
