// Figures: the Plotly figure JSON the server embeds (<script type=application/json
// data-plot="id">) drawn into the element of that id, again after every HTMX swap.

const PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
const rendered = new WeakSet();

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

export function plot(target, fig) {
  const layout = scaled(JSON.parse(JSON.stringify(fig.layout)));
  // Plotly's autosize (on every relayout, e.g. the player's cursor) measures the
  // container: pin its height to the figure's, or it collapses to the CSS minimum.
  if (layout.height) target.style.height = `${layout.height}px`;
  return Plotly.react(target, fig.data, layout, PLOT_CONFIG).then(() => clearTitle(target));
}

export function renderFigures(root) {
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

renderFigures(document);
document.body.addEventListener("htmx:afterSettle", () => renderFigures(document));
