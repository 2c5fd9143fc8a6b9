// The stability page: while its half samples run, poll the study's JSON and update the
// progress in place (the page is loaded again when none is active); a click on a heatmap
// cell opens that feature's "why not" answer at that k.
(function () {
  "use strict";
  const POLL_MS = 1000;

  function setupLive(section) {
    const setup = JSON.parse(document.getElementById(section.dataset.stabilityLive).textContent);
    const el = {
      done: section.querySelector(".parts-done"),
      bar: section.querySelector(".progress .bar"),
      progress: section.querySelector(".progress"),
      pct: section.querySelector(".pct"),
      status: document.getElementById("st-status"),
    };
    let shown = null;

    async function poll() {
      const response = await fetch(setup.url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`stability: ${response.status}`);
      const study = await response.json();
      const pct = Math.round(100 * study.progress);
      el.done.textContent = String(study.parts_done);
      el.bar.style.width = `${pct}%`;
      el.progress.setAttribute("aria-valuenow", String(pct));
      el.pct.textContent = `${pct}%`;
      if (el.status) el.status.querySelector(".badge").textContent = study.status;
      if (study.status !== "queued" && study.status !== "running") { window.location.reload(); return; }
      // New half samples done: reload every tenth of the work, so the figures follow.
      const step = Math.floor(study.parts_done / Math.max(1, Math.ceil(setup.total / 10)));
      if (shown === null) shown = step;
      else if (step > shown) { window.location.reload(); return; }
      setTimeout(tick, POLL_MS);
    }

    function tick() {
      poll().catch(() => setTimeout(tick, 3 * POLL_MS));
    }
    setTimeout(tick, POLL_MS);
  }

  function setupWhyNot(tries) {
    const tag = document.getElementById("st-why");
    const chart = document.getElementById("chart-stability-heatmap");
    if (!tag || !chart) return;
    const why = JSON.parse(tag.textContent);
    if (!why.enabled) return;
    if (typeof chart.on !== "function") {  // app.js has not drawn it yet
      if (tries < 100) setTimeout(() => setupWhyNot(tries + 1), 100);
      return;
    }
    chart.style.cursor = "pointer";
    chart.on("plotly_click", (event) => {
      const point = event.points && event.points[0];
      if (!point) return;
      const query = new URLSearchParams({ feature: String(point.customdata), k: String(point.x), method: why.method });
      window.location.assign(`${why.base}?${query}`);
    });
  }

  function init() {
    document.querySelectorAll("[data-stability-live]").forEach(setupLive);
    setupWhyNot(0);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
