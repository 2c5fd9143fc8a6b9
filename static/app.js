// FoBa Lab's own JavaScript: as little as the interactions need.
//  1. figures: render the Plotly figure JSON the server embeds (<script data-plot="id">);
//  2. forms: post typed JSON to the API, or upload a CSV with progress, then go to the new page
//     or show the server's validation message in place;
//  3. the trace player on the run page (slider, play/pause, step; charts follow the slider).
// Everything else (polling, fragments, the teaching mode's keys) is HTMX attributes.
"use strict";

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
      const fig = JSON.parse(tag.textContent);
      const layout = scaled(fig.layout);
      // Plotly's autosize (on every relayout, e.g. the player's cursor) measures the
      // container: pin its height to the figure's, or it collapses to the CSS minimum.
      if (layout.height) target.style.height = `${layout.height}px`;
      jobs.push(Plotly.react(target, fig.data, layout, PLOT_CONFIG));
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
    if (raw === "") return el.dataset.nullable ? null : undefined;
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
    if (form.dataset.kind === "comparison") {
      body.runs = [...form.querySelectorAll("input[data-algorithm]:checked")].map((box) => {
        const run = { algorithm: box.dataset.algorithm, ...each };
        if (box.dataset.k === "unused") delete run.k;
        return run;
      });
    }
    return body;
  }

  function showError(form, status, payload) {
    const box = form.querySelector(".form-error");
    if (!box) return;
    box.replaceChildren();
    const head = document.createElement("strong");
    head.textContent = status === 413 ? "Too large: " : status === 422 ? "Refused: " : `Error ${status}: `;
    box.append(head);
    const detail = payload && payload.detail;
    if (Array.isArray(detail)) {
      const list = document.createElement("ul");
      detail.forEach((err) => {
        const item = document.createElement("li");
        const where = (err.loc || []).filter((p) => p !== "body").join(" → ");
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
    try {
      const response = await fetch(form.getAttribute("action"), {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(formJSON(form)),
      });
      const payload = parseJSON(await response.text());
      if (response.ok && payload && payload.id !== undefined) {
        if (note) note.textContent = "Done; opening…";
        window.location.assign(form.dataset.redirect.replace("{id}", payload.id));
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

  const DELIMITERS = [",", ";", "\t", "|"];

  function sizeText(bytes) {
    if (bytes < 1024) return `${bytes} bytes`;
    if (bytes < 1048576) return `${(bytes / 1024).toFixed(1)} KB`;
    return `${(bytes / 1048576).toFixed(1)} MB`;
  }

  function headerColumns(line) {
    const delimiter = DELIMITERS.reduce((best, d) => (line.split(d).length > line.split(best).length ? d : best), ",");
    return line.split(delimiter).map((c) => c.trim().replace(/^"(.*)"$/, "$1")).filter((c) => c !== "");
  }

  async function fillTargets(form, file) {
    const select = form.querySelector("select[name=target]");
    const text = await file.slice(0, 65536).text();
    const columns = headerColumns(text.replace(/^\uFEFF/, "").split(/\r?\n/)[0] || "");
    const wanted = select.dataset.default;
    select.replaceChildren(...columns.map((c) => new Option(c, c)));
    select.value = columns.includes(wanted) ? wanted : columns[columns.length - 1] || "";
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
      fillTargets(form, file).catch(() => {});
    };
    input.addEventListener("change", chosen);
    ["dragenter", "dragover"].forEach((t) => zone.addEventListener(t, (e) => { e.preventDefault(); zone.classList.add("over"); }));
    ["dragleave", "drop"].forEach((t) => zone.addEventListener(t, () => zone.classList.remove("over")));
    zone.addEventListener("drop", (e) => {
      e.preventDefault();
      if (e.dataTransfer.files.length) { input.files = e.dataTransfer.files; chosen(); }
    });
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
        showError(form, xhr.status, payload);
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

  function setupPlayer(section) {
    const data = JSON.parse(document.getElementById(section.dataset.player).textContent);
    const frames = data.frames;
    const slider = section.querySelector(".slider");
    const playButton = section.querySelector("[data-act=play]");
    const speed = section.querySelector("[data-act=speed]");
    const stepCharts = (section.dataset.stepCharts || "").split(" ").map((id) => document.getElementById(id)).filter(Boolean);
    const sizeChart = document.getElementById(section.dataset.sizeChart);
    const text = { no: section.querySelector(".step-no"), kind: section.querySelector(".step-kind"), desc: section.querySelector(".step-desc") };
    const chips = section.querySelector(".support-chips");
    let timer = null;

    function show(i) {
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

    section.addEventListener("click", (e) => {
      const act = e.target.closest("[data-act]")?.dataset.act;
      const i = Number(slider.value);
      if (act === "play") { timer ? pause() : play(); return; }
      if (!["first", "prev", "next", "last"].includes(act)) return;
      pause();
      show({ first: 0, prev: Math.max(i - 1, 0), next: Math.min(i + 1, frames.length - 1), last: frames.length - 1 }[act]);
    });
    slider.addEventListener("input", () => { pause(); show(Number(slider.value)); });
    speed.addEventListener("change", () => { if (timer) { pause(); play(); } });
    show(frames.length - 1);
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
    renderFigures(document).then(() => {
      document.querySelectorAll("[data-player]").forEach(setupPlayer);
    });
    document.body.addEventListener("htmx:afterSettle", () => renderFigures(document));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
  window.fobaLab = { renderFigures };
})();
