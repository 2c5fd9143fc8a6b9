// FoBa Lab's own JavaScript: as little as the interactions need.
//  1. figures: render the Plotly figure JSON the server embeds (<script data-plot="id">);
//  2. forms: post typed JSON to the API, or upload a CSV with progress, then go to the new page
//     or show the server's validation message in place (the upload form also proposes the
//     target, says the task before the upload, and marks the controls a refusal names);
//  3. the runs table's ticks (Compare for runs of one data set) and the deletion dialog;
//  4. the run page: a finished run's figures fetched as JSON and the trace player (slider,
//     play/pause, keys, the step in the URL; charts follow it); a running run followed
//     through its trace API, only the events after the last one seen at each poll.
// Everything else (polling, fragments, the teaching mode's keys) is HTMX attributes.
"use strict";

// CSRF: on a server with an API_KEY the page carries its session's token (<meta name=csrf-token>).
// Every write this page makes sends it: fetch and XMLHttpRequest as a header, plain forms as
// the field csrf_token (HTMX sends it from the hx-headers of <body>).
(function () {
  const meta = document.querySelector('meta[name="csrf-token"]');
  const token = meta && meta.content;
  if (!token) return;
  const SAFE = ["GET", "HEAD", "OPTIONS"];
  const sameOrigin = (url) => new URL(url, window.location.href).origin === window.location.origin;
  const nativeFetch = window.fetch.bind(window);
  window.fetch = (input, init = {}) => {
    const method = (init.method || (input instanceof Request ? input.method : "GET")).toUpperCase();
    const url = input instanceof Request ? input.url : String(input);
    if (SAFE.includes(method) || !sameOrigin(url)) return nativeFetch(input, init);
    const headers = new Headers(init.headers || (input instanceof Request ? input.headers : undefined));
    headers.set("X-CSRF-Token", token);
    return nativeFetch(input, { ...init, headers });
  };
  const open = XMLHttpRequest.prototype.open;
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    this.csrfNeeded = !SAFE.includes(String(method).toUpperCase()) && sameOrigin(url);
    return open.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (body) {
    if (this.csrfNeeded) this.setRequestHeader("X-CSRF-Token", token);
    return send.call(this, body);
  };
  // A form the browser itself posts (not one a script sends, which called preventDefault).
  document.addEventListener("submit", (e) => {
    const form = e.target;
    if (e.defaultPrevented || form.method !== "post" || form.querySelector('input[name="csrf_token"]')) return;
    const field = document.createElement("input");
    Object.assign(field, { type: "hidden", name: "csrf_token", value: token });
    form.append(field);
  });
})();

(function () {
  const PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  const rendered = new WeakSet();

  // ---------------------------------------------------------------- figures

  // Chart text grows with the page's type (which grows with the screen, for projectors).
  function scaled(layout) {
    const k = parseFloat(getComputedStyle(document.documentElement).fontSize) / 16;
    if (!(k > 1.05)) return layout;
    const grow = (font) => { if (font && font.size) font.size = Math.round(font.size * k); };
    [layout.font, layout.title && layout.title.font, layout.legend && layout.legend.font].forEach(grow);
    (layout.annotations || []).forEach((a) => grow(a.font));
    if (layout.height) layout.height = Math.round(layout.height * Math.min(k, 1.3));
    return layout;
  }

  function renderFigures(root) {
    if (!window.Plotly) return Promise.resolve();
    const jobs = [];
    (root || document).querySelectorAll('script[type="application/json"][data-plot]').forEach((tag) => {
      if (rendered.has(tag)) return;
      rendered.add(tag);
      const target = document.getElementById(tag.dataset.plot);
      if (!target) return;
      jobs.push(plot(target, JSON.parse(tag.textContent)));
    });
    return Promise.all(jobs);
  }

  // ---------------------------------------------------------------- JSON forms

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
    if (form.dataset.kind === "from-runs") {
      body.run_ids = tickedRuns().map((r) => r.id);
    }
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
  function showError(form, status, payload, worded) {
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

  function clearError(form) {
    const box = form.querySelector(".form-error");
    if (box) { box.hidden = true; box.replaceChildren(); }
  }

  function parseJSON(text) {
    try { return JSON.parse(text); } catch (_) { return null; }
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
    const init = { method, headers: { Accept: "application/json" } };
    if (method !== "DELETE") {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(formJSON(form));
    }
    try {
      const response = await fetch(form.getAttribute("action"), init);
      const payload = parseJSON(await response.text());
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

  // ---------------------------------------------------------------- CSV upload
  // Before the upload the form reads the file's first 64 KB: it proposes the target (a column
  // named like one, else the last) and says which task the target's values make. After a
  // refusal it opens and marks the controls the server's answer names (ctx.options), and
  // fills the positive-class choice when the target has more than two classes. The server
  // words its messages for the form (X-Wording: form).

  const DELIMITERS = [",", ";", "\t", "|"];
  const TARGET_NAMES = ["target", "y", "label", "class", "outcome", "response"];
  const NA = new Set(["", "na", "n/a", "nan", "null", "none"]);
  const SAMPLE_BYTES = 65536;
  const SAMPLE_ROWS = 2000;
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
    const bytes = new Uint8Array(await file.slice(0, SAMPLE_BYTES).arrayBuffer());
    const text = decodeSample(bytes, form.querySelector("[name=encoding]").value).replace(/^\uFEFF/, "");
    let lines = text.split(/\r\n|\n|\r/);
    if (file.size > SAMPLE_BYTES) lines = lines.slice(0, -1); // the last line may be cut
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
    const j = sample.header.indexOf(form.querySelector("select[name=target]").value);
    const values = j < 0 ? [] : sample.rows.map((r) => (r[j] || "").trim()).filter((v) => !NA.has(v.toLowerCase()));
    if (!values.length) { out.textContent = ""; showClasses(form, null); return; }
    const numeric = values.every((v) => !Number.isNaN(readNumber(v, sample.decimal)));
    const keys = numeric ? values.map((v) => readNumber(v, sample.decimal)) : values;
    const distinct = [...new Set(keys)].sort((a, b) => (numeric ? a - b : String(a).localeCompare(String(b))));
    const labels = distinct.map(String);
    const forced = form.querySelector("[name=task]").value;
    const seen = `in the first ${sample.rows.length} rows`;
    let classes = null;
    let text;
    if (!numeric && forced === "regression") text = "Regression needs a numeric target; this one holds text.";
    else if (labels.length === 1) text = `The target holds the single value ${labels[0]} ${seen}: it must vary.`;
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
      if (options.positive_class) showClasses(form, options.positive_class);
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
    ["target", "task", "positive_class"].forEach((n) => form.querySelector(`[name=${n}]`).addEventListener("change", () => inferTask(form)));
    form.querySelector("select[name=target]").addEventListener("change", () => { form.querySelector(".target-why").textContent = ""; });
    ["decimal", "encoding", "delimiter"].forEach((n) => form.querySelector(`[name=${n}]`).addEventListener("change", () => {
      sampleFile(form, form.querySelector("select[name=target]").value).catch(() => {});
    }));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const data = new FormData();
      for (const [key, value] of new FormData(form).entries()) {
        if (value !== "" && !(value instanceof File && !value.name)) data.append(key, value);
      }
      const bar = form.querySelector(".upload-progress");
      const note = form.querySelector(".progress-text");
      const button = form.querySelector("button[type=submit]");
      const xhr = new XMLHttpRequest();
      xhr.open("POST", form.getAttribute("action"));
      xhr.setRequestHeader("Accept", "application/json");
      xhr.setRequestHeader("X-Wording", "form");
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

  // ---------------------------------------------------------------- trace player

  const KIND_NAMES = { add: "addition", remove: "deletion", check: "backward check", swap: "swap", iterate: "iteration", stop: "stop" };
  const FIGURE_DIVS = { path: "chart-path", objective_step: "chart-objective-step", objective_size: "chart-objective-size", coef: "chart-coef", roc: "chart-roc" };

  function plot(target, fig) {
    const layout = scaled(JSON.parse(JSON.stringify(fig.layout)));
    // Plotly's autosize (on every relayout, e.g. the player's cursor) measures the
    // container: pin its height to the figure's, or it collapses to the CSS minimum.
    if (layout.height) target.style.height = `${layout.height}px`;
    return Plotly.react(target, fig.data, layout, PLOT_CONFIG).then(() => clearTitle(target));
  }

  // A legend that wraps onto more rows than the layout planned for (a narrow column, larger
  // type) grows upwards into the title: move the plot down by exactly the overlap.
  function clearTitle(gd) {
    const title = gd.querySelector(".gtitle");
    const legend = gd.querySelector(".legend");
    if (!title || !legend || !gd.layout.margin) return null;
    const overlap = title.getBoundingClientRect().bottom + 4 - legend.getBoundingClientRect().top;
    if (overlap <= 0) return null;
    const height = (gd.layout.height || gd.getBoundingClientRect().height) + overlap;
    gd.style.height = `${height}px`;
    return Plotly.relayout(gd, { "margin.t": gd.layout.margin.t + overlap, height });
  }

  // A finished run's page holds no chart data: fetch it (one compressed JSON document).
  async function loadRunFigures(section) {
    const response = await fetch(section.dataset.figures, { headers: { Accept: "application/json" } });
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
      text.kind.textContent = KIND_NAMES[f.kind] || f.kind;
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

  // ---------------------------------------------------------------- live run

  const LIVE_POLL_MS = 1000;
  const TRACE_PAGE = 1000;

  // The running run's page follows its trace: each poll asks only for the events after the
  // last one it has, and the two charts are drawn here from the events (the server sends the
  // layouts and the event kinds' markers, so the look is the same as the finished page's).
  function setupLive(section) {
    const setup = JSON.parse(document.getElementById(section.dataset.live).textContent);
    const truth = new Set(setup.truth);
    const events = [];
    let after = -1;
    let attempt = null;
    const el = {
      title: section.querySelector(".live-title"),
      bar: section.querySelector(".progress .bar"),
      progress: section.querySelector(".progress"),
      pct: section.querySelector(".pct"),
      steps: section.querySelector(".steps"),
      chips: section.querySelector(".support-chips"),
      cancel: section.querySelector("[data-act=cancel]"),
      note: section.querySelector(".cancel-note"),
      status: document.getElementById("run-status"),
    };

    const value = (v) => (typeof v === "number" ? v : null);  // "nan" / "inf" arrive as strings
    const label = (j) => { const n = setup.names[j] ?? `feature ${j}`; return truth.has(j) ? `${n} ★` : n; };

    // One marker trace for the events of ``kind`` that ``keep`` accepts, at (xs(e), ys(e)).
    function markers(style, kind, xs, ys, keep = () => true) {
      const picks = events.filter((e) => e.kind === kind && keep(e));
      return {
        type: "scatter", mode: "markers", name: style.label,
        x: picks.map(xs), y: picks.map(ys),
        marker: { color: style.color, symbol: style.symbol, size: 10, line: { width: 1.5, color: style.color } },
        hoverinfo: "x+y",
      };
    }

    // Bars while each feature is selected, in rows ordered by first admission.
    function pathFigure() {
      const order = [];
      const open = new Map();
      const segments = new Map();
      events.forEach((e) => {
        const out = e.kind === "remove" ? e.feature : e.kind === "swap" ? e.feature_out : null;
        if (out !== null && open.has(out)) { segments.get(out).push([open.get(out), e.step]); open.delete(out); }
        if (e.kind === "add" || e.kind === "swap") {
          if (!segments.has(e.feature)) { segments.set(e.feature, []); order.push(e.feature); }
          open.set(e.feature, e.step);
        }
      });
      const last = events.length ? events[events.length - 1].step : 0;
      const rows = order.slice(0, setup.max_rows);
      const rowOf = new Map(rows.map((j) => [j, label(j)]));
      const bx = [];
      const by = [];
      rows.forEach((j) => {
        const segs = [...segments.get(j), ...(open.has(j) ? [[open.get(j), last + 0.5]] : [])];
        segs.forEach(([a, b]) => { bx.push(a, b, null); by.push(rowOf.get(j), rowOf.get(j), null); });
      });
      const onRow = (e) => rowOf.has(e.feature);
      const data = [
        { type: "scatter", mode: "lines", name: "in the support", x: bx, y: by, line: { color: setup.bar, width: 10 }, opacity: 0.55, hoverinfo: "skip" },
        markers(setup.styles.add, "add", (e) => e.step, (e) => rowOf.get(e.feature), onRow),
        markers(setup.styles.remove, "remove", (e) => e.step, (e) => rowOf.get(e.feature), onRow),
      ];
      const layout = JSON.parse(JSON.stringify(setup.layouts.path));
      layout.height = Math.max(300, Math.min(1500, 150 + 26 * rows.length)) + 40;
      layout.yaxis.categoryarray = rows.map((j) => rowOf.get(j));
      layout.xaxis.range = [-0.5, last + 0.5];
      return { data, layout, support: [...open.keys()] };
    }

    function objectiveFigure() {
      const xs = events.map((e) => e.step);
      const ys = events.map((e) => value(e.objective));
      const data = [
        { type: "scatter", mode: "lines", name: "objective after the step", x: xs, y: ys, line: { color: "#555", width: 2 } },
        markers(setup.styles.add, "add", (e) => e.step, (e) => value(e.objective)),
        markers(setup.styles.remove, "remove", (e) => e.step, (e) => value(e.objective)),
      ];
      return { data, layout: JSON.parse(JSON.stringify(setup.layouts.objective)) };
    }

    function draw(page) {
      const pct = Math.round(page.progress * 100);
      el.bar.style.width = `${(page.progress * 100).toFixed(1)}%`;
      el.progress.setAttribute("aria-valuenow", String(pct));
      el.pct.textContent = `${pct}%`;
      el.title.textContent = page.status === "queued" ? "Waiting for a worker" : "Running";
      if (el.status) el.status.innerHTML = `<span class="badge status-${page.status}">${page.status}</span>`;
      if (page.cancel_requested) { el.cancel.hidden = true; el.note.hidden = false; }
      if (!events.length) return;
      const path = pathFigure();
      el.steps.textContent = `${events.length} steps recorded · ${path.support.length} features selected now`;
      el.chips.replaceChildren(...path.support.map((j) => {
        const chip = document.createElement("span");
        chip.className = "chip";
        chip.textContent = setup.names[j] ?? `feature ${j}`;
        return chip;
      }));
      if (!path.support.length) el.chips.textContent = "(none)";
      const p = document.getElementById("chart-path");
      const o = document.getElementById("chart-objective-step");
      if (p) plot(p, path);
      if (o) plot(o, objectiveFigure());
    }

    async function poll() {
      let page;
      do {
        const response = await fetch(`${setup.trace_url}?after=${after}&limit=${TRACE_PAGE}`, { headers: { Accept: "application/json" } });
        if (!response.ok) throw new Error(`trace: ${response.status}`);
        page = await response.json();
        if (attempt !== null && page.attempt !== attempt) { events.length = 0; after = -1; attempt = page.attempt; continue; }
        attempt = page.attempt;
        events.push(...page.events);
        after = page.next_after;
      } while (page.events.length === TRACE_PAGE);
      draw(page);
      if (page.complete) { window.location.reload(); return; }
      setTimeout(tick, LIVE_POLL_MS);
    }

    function tick() {
      poll().catch(() => setTimeout(tick, 3 * LIVE_POLL_MS));  // a busy server: try again later
    }

    el.cancel.addEventListener("click", async () => {
      el.cancel.disabled = true;
      const response = await fetch(el.cancel.dataset.url, { method: "POST", headers: { Accept: "application/json" } });
      if (response.ok) { el.cancel.hidden = true; el.note.hidden = false; } else { el.cancel.disabled = false; }
    });
    tick();
  }

  // ---------------------------------------------------------------- live cross-validation

  // A cross-validation's page while its folds run: the study's JSON is polled and the folds
  // done, the progress and each fold's status are updated in place; once no fold is active
  // the page is loaded again, with the curve.
  function setupCVLive(section) {
    const setup = JSON.parse(document.getElementById(section.dataset.cvLive).textContent);
    const badge = (status) => `<span class="badge status-${status}">${status}</span>`;
    const el = {
      done: section.querySelector(".folds-done"),
      bar: section.querySelector(".progress .bar"),
      progress: section.querySelector(".progress"),
      pct: section.querySelector(".pct"),
      status: document.getElementById("cv-status"),
    };

    function draw(study) {
      const work = study.folds.reduce((sum, f) => sum + (f.status === "done" ? 1 : f.progress), 0);
      const pct = Math.round((100 * work) / study.folds_total);
      el.done.textContent = String(study.folds_done);
      el.bar.style.width = `${pct}%`;
      el.progress.setAttribute("aria-valuenow", String(pct));
      el.pct.textContent = `${pct}%`;
      if (el.status) el.status.innerHTML = badge(study.status);
      study.folds.forEach((f) => {
        const chip = section.querySelector(`[data-fold="${f.fold}"] .badge`);
        if (chip) chip.outerHTML = badge(f.status);
      });
    }

    async function poll() {
      const response = await fetch(setup.url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`cross-validation: ${response.status}`);
      const study = await response.json();
      draw(study);
      if (study.status !== "queued" && study.status !== "running") { window.location.reload(); return; }
      setTimeout(tick, LIVE_POLL_MS);
    }

    function tick() {
      poll().catch(() => setTimeout(tick, 3 * LIVE_POLL_MS));
    }
    tick();
  }

  // ---------------------------------------------------------------- teaching keys

  // ← and → step the teaching mode. Each key moves from the step the previous key asked for,
  // not from the step on screen (which may still be loading), and a newer request aborts an
  // older one: eight quick presses land exactly eight steps on.
  let teachTarget = null;
  let teachRequest = null;

  async function loadTeachStep(run, step, push = true, given = null) {
    if (teachRequest) teachRequest.abort();
    const request = new AbortController();
    teachRequest = request;
    const panel = document.getElementById("teach-panel");
    const url = given || `/teach/${run}?step=${step}${panel ? panel.dataset.query || "" : ""}`;
    try {
      const response = await fetch(url, { headers: { "HX-Request": "true", "HX-Target": "teach-panel" }, signal: request.signal });
      const html = await response.text();
      const current = document.getElementById("teach-panel");
      if (!current || request !== teachRequest) return;
      current.outerHTML = html;
      const fresh = document.getElementById("teach-panel");
      if (window.htmx) window.htmx.process(fresh);
      renderFigures(fresh);
      if (push) history.pushState({ teachStep: step }, "", url);
      if (teachTarget === step) teachTarget = null;
    } catch (err) {
      if (err.name !== "AbortError") teachTarget = null;
    }
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
    loadTeachStep(panel.dataset.run, to);
  }

  // The same run again, recording the candidate scores (from the teaching mode of a run that
  // did not), or a what-if saved as a run: the server builds it from the stored run with the
  // changes (a what-if's k and nu), so nothing of the stored configuration is lost here.
  async function rerunWithScores(button) {
    const note = button.parentElement.querySelector(".rerun-note");
    button.disabled = true;
    try {
      const response = await fetch(button.dataset.rerun, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: button.dataset.changes || "{}",
      });
      const created = await response.json();
      if (!response.ok) throw new Error((created.detail && (created.detail[0]?.msg || created.detail)) || response.status);
      window.location.assign(`/teach/${created.id}?step=0`);
    } catch (err) {
      button.disabled = false;
      if (note) note.textContent = `Could not start it: ${err.message}`;
    }
  }

  // ---------------------------------------------------------------- forms after Back

  // Back to a page whose form the browser restored: the algorithm list may show another
  // algorithm than the parameter panel (loaded for the first one) was built for. Reload the
  // panel for what the controls now say, so the form never sends one algorithm's parameters
  // with another.
  // The cross-validation form's panel ("cv-") is kept in step the same way.
  function resyncRunForm() {
    ["run", "cv"].forEach((form) => {
      const select = document.getElementById(`${form}-algorithm`);
      const panel = document.querySelector(`#${form}-params [data-algorithm]`);
      if (!select || !panel || !window.htmx) return;
      const objective = document.getElementById(`${form}-objective`);
      const stale = panel.dataset.algorithm !== select.value
        || (objective && panel.dataset.objective !== objective.value);
      if (stale) window.htmx.trigger(select, "change");
    });
  }

  // ---------------------------------------------------------------- runs table, deletions

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

  // ---------------------------------------------------------------- wiring

  function init() {
    document.querySelectorAll("form[data-upload]").forEach(setupUpload);
    document.addEventListener("submit", (e) => {
      const form = e.target.closest("form.api-form:not([data-upload])");
      if (!form) return;
      e.preventDefault();
      submitJSON(form);
    });
    renderFigures(document);
    document.querySelectorAll("[data-figures]").forEach((section) => {
      loadRunFigures(section).catch((err) => {
        section.querySelector(".step-no").textContent = `The charts could not be loaded: ${err.message}. Reload the page to try again.`;
      });
    });
    document.querySelectorAll("[data-live]").forEach(setupLive);
    document.querySelectorAll("[data-cv-live]").forEach(setupCVLive);
    document.body.addEventListener("htmx:afterSettle", () => renderFigures(document));
    window.addEventListener("pageshow", resyncRunForm);
    document.addEventListener("click", (e) => {
      const button = e.target.closest("[data-rerun]");
      if (button) rerunWithScores(button);
      const del = e.target.closest("[data-delete]");
      if (del) openDeleteDialog(del);
      const close = e.target.closest("[data-act=close-dialog]");
      if (close) close.closest("dialog").close();
    });
    document.addEventListener("change", (e) => {
      if (e.target.matches("#runs-table input.tick")) { tickRun(e.target); updateCompareBar(); }
    });
    document.body.addEventListener("htmx:afterSettle", restoreTicks);
    document.querySelectorAll("#runs-table input.tick:checked").forEach(tickRun);  // restored by the browser
    updateCompareBar();
    if (document.getElementById("teach-panel")) {
      document.addEventListener("keydown", teachKey);
      // Back and Forward: show the step the address now names (entries made by the keys,
      // by HTMX's links, or the page's first load, which has no state of its own).
      window.addEventListener("popstate", () => {
        const panel = document.getElementById("teach-panel");
        const step = stepFromURL();
        if (panel && step !== null) {
          teachTarget = null;
          loadTeachStep(panel.dataset.run, step, false, window.location.pathname + window.location.search);
        }
      });
    }
    resyncRunForm();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
  window.fobaLab = { renderFigures };
})();
