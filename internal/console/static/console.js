// toolhost console: signs in with a token kept in sessionStorage (sent as
// an Authorization header, never in a URL), refreshes the views from
// /ui/view/NAME and follows /ui/calls for live calls. No inline script:
// the page's Content-Security-Policy allows this file only.
"use strict";
(function () {
  const key = "toolhost-token";
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem(key) || "";
  let refresher = null;

  function headers() {
    return token ? { Authorization: "Bearer " + token } : {};
  }

  // refusal reads the server's JSON-RPC error message, or the status.
  async function refusal(resp) {
    try {
      const body = await resp.json();
      if (body && body.error && body.error.message) return body.error.message;
    } catch (e) { /* not JSON */ }
    return resp.status + " " + resp.statusText;
  }

  function showSignIn(message) {
    $("signin").hidden = false;
    $("signout").hidden = true;
    $("signin-error").textContent = message || "";
    $("views").replaceChildren();
    $("who").textContent = "";
  }

  function parse(html) {
    return new DOMParser().parseFromString("<body>" + html + "</body>", "text/html").body;
  }

  async function fetchView(name) {
    const resp = await fetch("/ui/view/" + name, { headers: headers(), cache: "no-store" });
    if (!resp.ok) throw new Error(await refusal(resp));
    return parse(await resp.text());
  }

  async function signIn() {
    let all;
    try {
      all = await fetchView("all");
    } catch (e) {
      sessionStorage.removeItem(key);
      token = "";
      showSignIn("refused: " + e.message);
      return;
    }
    $("signin").hidden = true;
    if (token) $("signout").hidden = false;
    $("views").replaceChildren(...all.childNodes);
    const who = $("signed-in");
    if (who && who.dataset.identity) {
      const b = document.createElement("b");
      b.textContent = who.dataset.identity;
      $("who").replaceChildren("signed in as ", b);
    }
    start();
  }

  // refresh replaces the static views; the calls view is kept (live).
  async function refresh() {
    try {
      for (const name of ["tools", "chart", "breakers", "governor", "plans", "tasks"]) {
        const fresh = (await fetchView(name)).querySelector("section");
        const old = $("view-" + name);
        if (fresh && old) old.replaceWith(fresh);
      }
    } catch (e) {
      showSignIn("refused: " + e.message);
      stop();
    }
  }

  function filter() {
    const q = ($("calls-filter") || {}).value || "";
    for (const tr of document.querySelectorAll("#calls tbody tr")) {
      tr.hidden = q !== "" && !tr.textContent.includes(q);
    }
  }

  function addCall(c) {
    const tr = document.createElement("tr");
    tr.className = "outcome-" + c.outcome;
    for (const v of [c.time, c.tool, c.caller, c.outcome, String(c.attempts), c.duration_ms.toFixed(1) + " ms"]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    const body = document.querySelector("#calls tbody");
    if (!body) return;
    body.prepend(tr);
    while (body.rows.length > 200) body.deleteRow(body.rows.length - 1);
    filter();
  }

  let streamAbort = null;
  async function follow() {
    streamAbort = new AbortController();
    const live = $("calls-live");
    try {
      const resp = await fetch("/ui/calls", { headers: headers(), signal: streamAbort.signal });
      if (!resp.ok) throw new Error(await refusal(resp));
      if (live) live.textContent = "live";
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const msg = buf.slice(0, end);
          buf = buf.slice(end + 2);
          for (const line of msg.split("\n")) {
            if (line.startsWith("data: ")) addCall(JSON.parse(line.slice(6)));
          }
        }
      }
      if (live) live.textContent = "stream ended; reload to follow again";
    } catch (e) {
      if (live && e.name !== "AbortError") live.textContent = "not live: " + e.message;
    }
  }

  function start() {
    const form = $("calls-form");
    if (form) {
      form.addEventListener("submit", (ev) => { ev.preventDefault(); filter(); });
      $("calls-filter").addEventListener("input", filter);
    }
    if (!refresher) refresher = setInterval(refresh, 3000);
    if (!streamAbort) follow();
  }

  function stop() {
    if (refresher) clearInterval(refresher);
    refresher = null;
    if (streamAbort) streamAbort.abort();
    streamAbort = null;
  }

  function init() {
    $("signin-button").addEventListener("click", () => {
      token = $("token").value.trim();
      sessionStorage.setItem(key, token);
      $("token").value = "";
      signIn();
    });
    $("token").addEventListener("keydown", (ev) => { if (ev.key === "Enter") $("signin-button").click(); });
    $("signout").addEventListener("click", () => {
      sessionStorage.removeItem(key);
      token = "";
      stop();
      showSignIn("");
    });
    if (!$("signin").hidden) {
      if (token) signIn();
      return;
    }
    // The page came with its views: the request carried a token (or the
    // server needs none); a token entered before is used for the rest.
    if (token) $("signout").hidden = false;
    start();
  }

  init();
})();
