// The one way our scripts talk to the server: api() sends JSON and asks for JSON, and every
// write carries the session's CSRF token (<meta name=csrf-token>, present on a server with an
// API_KEY). HTMX requests get the token from the hx-headers of <body>; forms the browser
// posts itself get it as the field csrf_token (forms.js).

const meta = document.querySelector('meta[name="csrf-token"]');
const SAFE = ["GET", "HEAD", "OPTIONS"];

export function csrfToken() {
  return (meta && meta.content) || "";
}

// The headers of a request with this method: Accept JSON, and the token for a write.
export function headersFor(method, extra = {}) {
  const headers = { Accept: "application/json", ...extra };
  if (!SAFE.includes(method.toUpperCase()) && csrfToken()) headers["X-CSRF-Token"] = csrfToken();
  return headers;
}

// fetch() for our API: ``body`` (an object or a JSON string) is sent as JSON.
export function api(url, { method = "GET", body, signal, headers = {} } = {}) {
  const init = { method, signal, headers: headersFor(method, headers) };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  return fetch(url, init);
}

export function parseJSON(text) {
  try { return JSON.parse(text); } catch (_) { return null; }
}

// The answer's JSON (null when it is not JSON).
export async function readJSON(response) {
  return parseJSON(await response.text());
}

// Why the server refused, in a line (the first validation message, or the detail).
export function refusal(payload, status) {
  const detail = payload && payload.detail;
  if (Array.isArray(detail)) return (detail[0] && detail[0].msg) || String(status);
  return detail || String(status);
}
