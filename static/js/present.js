// Presentation mode for a projector (issue 27), on the teaching page and the class session:
// full screen where the Fullscreen API is available, larger type, the site's nav and
// secondary text hidden (each page's CSS says what ``apply`` hides). Kept in the URL
// (?present=1), so a link opens in it; Esc leaves (in full screen the browser takes the Esc
// key and leaves full screen: that leaves the mode too).
//
//   const mode = presentation({ apply(on) { ... }, buttons: "[data-present]", key: "p" });
//   mode.set(true | false), mode.on()
//
// ``apply(on)`` switches the page's classes and redraws what depends on the size; the
// buttons matching ``buttons`` toggle the mode (aria-pressed follows); ``key`` toggles it
// from the keyboard.

const PARAM = "present";

export function presentOn() {
  const value = new URLSearchParams(window.location.search).get(PARAM);
  return value === "1" || value === "true";
}

function keepInURL(on) {
  const url = new URL(window.location.href);
  if (on) url.searchParams.set(PARAM, "1");
  else url.searchParams.delete(PARAM);
  history.replaceState(history.state, "", url);
}

export function presentation({ apply, buttons = "[data-present]", key = "p" }) {
  let on = false;
  let fullscreen = false;  // we asked for full screen: leaving it leaves the mode

  function set(value, { askFullscreen = false } = {}) {
    on = Boolean(value);
    apply(on);
    document.querySelectorAll(buttons).forEach((b) => b.setAttribute("aria-pressed", String(on)));
    keepInURL(on);
    const root = document.documentElement;
    if (on && askFullscreen && document.fullscreenEnabled && !document.fullscreenElement) {
      // Needs a user's gesture: a click or a key, not a page load.
      root.requestFullscreen().then(() => { fullscreen = true; }).catch(() => { fullscreen = false; });
    } else if (!on && document.fullscreenElement) {
      fullscreen = false;
      document.exitFullscreen().catch(() => {});
    }
  }

  document.addEventListener("click", (e) => {
    if (e.target.closest(buttons)) set(!on, { askFullscreen: true });
  });
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, select, textarea")) return;
    if (e.key === "Escape" && on) { e.preventDefault(); set(false); return; }
    if (key && e.key === key) { e.preventDefault(); set(!on, { askFullscreen: true }); }
  });
  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement && fullscreen && on) { fullscreen = false; set(false); }
  });
  if (presentOn()) set(true);
  return { set: (value) => set(value, { askFullscreen: value }), on: () => on };
}
