// The wallboard reads GET /v2/report/live/ (server-sent events) with fetch and a stream reader,
// because an EventSource cannot send the X-Api-Key header, and shows each event's orders. The key
// is kept in this tab's sessionStorage only, so a reload reconnects and closing the tab forgets it.
"use strict";
(() => {
  const STREAM = "/v2/report/live/";
  const KEY = "wallboard.apiKey";
  // A rate at NEAR of its limit or more is near it; at the limit or more, over it.
  const NEAR = 0.8;
  const STATES = ["available", "ringing", "on-call", "wrap-up", "paused"];
  const $ = (id) => document.getElementById(id);

  let controller = null;
  let retryTimer = null;
  let backoff = 1000;
  // skew: the browser's clock minus the server's, from each event's at, so that the time in a
  // state is counted on the server's clock.
  let skew = 0;

  function setStatus(text, error) {
    const s = $("status");
    s.textContent = text;
    s.classList.toggle("error", !!error);
  }

  function connected(on) {
    $("connect").querySelector("button[type=submit]").hidden = on;
    $("key").disabled = on;
    $("disconnect").hidden = !on;
  }

  function stop() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (controller) controller.abort();
    controller = null;
  }

  function later(key, why, retryAfter) {
    const wait = retryAfter ? Math.max(1000, Number(retryAfter) * 1000) : backoff;
    backoff = Math.min(backoff * 2, 30000);
    setStatus(why + ": connecting again in " + Math.round(wait / 1000) + " s", true);
    retryTimer = setTimeout(() => connect(key), wait);
  }

  async function connect(key) {
    stop();
    controller = new AbortController();
    const signal = controller.signal;
    connected(true);
    setStatus("Connecting…");
    let res;
    try {
      res = await fetch(STREAM, { headers: { "X-Api-Key": key, Accept: "text/event-stream" }, cache: "no-store", signal });
    } catch (e) {
      if (!signal.aborted) later(key, "The gateway cannot be reached");
      return;
    }
    if (!res.ok) {
      let message = res.status + " " + res.statusText;
      try {
        const env = await res.json();
        if (env && env.message) message = env.message;
      } catch (e) { /* not an envelope: the status says it */ }
      if (res.status === 401 || res.status === 403) {
        // The key will not do: ask for another one.
        sessionStorage.removeItem(KEY);
        connected(false);
        setStatus(message, true);
        return;
      }
      later(key, message, res.headers.get("Retry-After"));
      return;
    }
    setStatus("Connected: waiting for the figures…");
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          dispatch(block);
        }
      }
    } catch (e) {
      if (signal.aborted) return;
    }
    if (!signal.aborted) later(key, "The stream ended");
  }

  // dispatch reads one event of the stream: its name and data lines; comments are keep-alives.
  function dispatch(block) {
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    if (name !== "live" || data.length === 0) return;
    const ev = JSON.parse(data.join("\n"));
    backoff = 1000;
    skew = Date.now() - Date.parse(ev.at);
    render(ev.orders);
    setStatus("Live: figures of " + new Date(Date.parse(ev.at)).toLocaleTimeString());
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function percent(rate) {
    return (rate * 100).toFixed(1) + " %";
  }

  // level is how close rate is to limit: "over", "near" or "".
  function level(rate, limit) {
    if (!(limit > 0)) return "";
    if (rate >= limit) return "over";
    if (rate >= NEAR * limit) return "near";
    return "";
  }

  function figure(label, value, cls, name) {
    const f = el("div", "figure" + (cls ? " " + cls : ""));
    f.dataset.figure = name;
    f.append(el("span", "label", label), el("span", "value", value));
    return f;
  }

  function duration(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const pad = (n) => String(n).padStart(2, "0");
    return (h > 0 ? h + ":" + pad(m) : String(m)) + ":" + pad(s % 60);
  }

  function tick() {
    const now = Date.now() - skew;
    for (const cell of document.querySelectorAll("[data-since]")) {
      cell.textContent = duration(now - Date.parse(cell.dataset.since));
    }
  }

  function render(orders) {
    const main = $("orders");
    const cards = [];
    for (const o of orders) {
      const card = el("section", "order");
      card.dataset.order = o.orderId;
      card.append(el("h2", "", "Order " + o.orderId));
      const d = o.dialing;
      if (d) {
        const figures = el("div", "figures");
        figures.append(
          figure("Calls in flight", String(d.callsInFlight), "", "callsInFlight"),
          figure("Dial level", d.dialLevel.toFixed(2), "", "dialLevel"),
          figure("Answer rate, 15 min", percent(d.answerRate15m), "", "answerRate15m"),
          figure("Abandon rate, 15 min", percent(d.abandonRate15m), level(d.abandonRate15m, d.maxAbandonRate), "abandonRate15m"),
          figure("Abandon rate, " + d.abandonWindow, percent(d.abandonRateWindow), level(d.abandonRateWindow, d.maxAbandonRate), "abandonRateWindow"),
          figure("Abandon limit", percent(d.maxAbandonRate), "", "maxAbandonRate"));
        card.append(figures);
      }
      const summary = el("div", "summary");
      const counts = o.agentsByState || {};
      for (const s of STATES.concat(Object.keys(counts).filter((s) => !STATES.includes(s)))) {
        if (counts[s]) summary.append(el("span", "chip state-" + s, s + " " + counts[s]));
      }
      card.append(summary);
      if (o.agents.length === 0) {
        card.append(el("p", "empty", "No agent logged in."));
      } else {
        const table = el("table");
        const head = el("tr");
        head.append(el("th", "", "Agent"), el("th", "", "State"), el("th", "", "For"));
        table.append(head);
        for (const a of o.agents) {
          const row = el("tr");
          row.dataset.user = a.userId;
          row.dataset.state = a.state;
          const state = el("td", "state state-" + a.state, a.state + (a.pauseReason ? " (" + a.pauseReason + ")" : ""));
          const since = el("td", "since");
          since.dataset.since = a.since;
          row.append(el("td", "", "#" + a.userId), state, since);
          table.append(row);
        }
        card.append(table);
      }
      cards.push(card);
    }
    if (cards.length === 0) cards.push(el("p", "empty", "No order is being worked now."));
    main.replaceChildren(...cards);
    tick();
  }

  $("connect").addEventListener("submit", (e) => {
    e.preventDefault();
    const key = $("key").value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY, key);
    connect(key);
  });
  $("disconnect").addEventListener("click", () => {
    stop();
    sessionStorage.removeItem(KEY);
    connected(false);
    $("orders").replaceChildren();
    setStatus("Not connected: enter an API key.");
  });
  setInterval(tick, 1000);
  const saved = sessionStorage.getItem(KEY);
  if (saved) {
    $("key").value = saved;
    connect(saved);
  }
})();
