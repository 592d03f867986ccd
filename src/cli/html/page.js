// serve-command trace --html: draws the session from the columns the trace
// wrote (src/cli/html/mod.rs says what each holds). No network: everything
// is in this page.
"use strict";
(async function () {
  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };
  // Between the steps below, the page answers: no step blocks it long.
  // (A message, not setTimeout, which nested waits at least 4 ms.)
  const channel = new MessageChannel(), waiting = [];
  channel.port1.onmessage = () => waiting.shift()();
  const tick = () => new Promise((r) => { waiting.push(r); channel.port2.postMessage(0); });

  // One run's view: its elements are those whose id ends in `sfx`. With
  // `opts.marks` (replay --html: the differences, each under its command)
  // the axis is the commands' order, command k at k in every view.
  async function view(sfx, opts) {
  const $ = (id) => document.getElementById(id + sfx);
  const meta = JSON.parse($("meta").textContent);
  const marks = opts.marks, aligned = !!marks;
  const COMMAND = 1, OWED = 32, IDLE = 64, FLAGGED = 2 | 4 | 8 | 16 | 32;
  // The marks of what stands out: flag, name, symbol, colour, words.
  const MARKS = [
    [2, "violations", "✕", "--violation", "violation: the event fits no rule of the serve loop"],
    [4, "refused", "R", "--refused", "refused command line"],
    [8, "unreadable", "?", "--unreadable", "unreadable event: names an event but does not decode"],
    [16, "not-events", "!", "--notevent", "not an event"],
    [32, "owed", "…", "--owed", "still owed at the end"],
  ];
  const css = getComputedStyle(document.documentElement);
  const colour = (v) => css.getPropertyValue(v).trim();
  const N = meta.records;
  const fmt = (n) => n.toLocaleString("en-US");
  const ms = (x) => (Math.round(x * 1000) / 1000).toFixed(3) + " ms";

  // The header, the summary and the stats come from the metadata alone:
  // they are painted before the columns are inflated.
  $("facts").textContent = `${fmt(meta.commands)} command lines and ${fmt(meta.events)} event lines, attributed by the model of the serve loop (what serve-command trace prints).`;
  $("axis-note").textContent = aligned
    ? "The axis is the order of the command lines: command k at k in both runs, what came between two commands spread between them (by time, or by line where there are none)."
    : meta.untimed
    ? `No times on this page (${meta.untimed}): the axis is line order, one step a record.`
    : "The axis is the recording's time, in milliseconds since it began.";
  const summary = $("summary");
  for (const f of meta.flagged) {
    const mark = MARKS.find((m) => m[0] === f.flag);
    const words = f.count === 1 ? f.name.replace(/s$/, "") : f.name;
    const head = el("summary", {}, el("span", { className: "sym " + mark[1], textContent: mark[2] }), `${fmt(f.count)} ${words}`);
    if (f.count === 0) head.classList.add("zero");
    const box = el("details", { id: "sum-" + mark[1] + sfx }, head);
    box.dataset.count = f.count;
    if (f.count) {
      const list = el("ol");
      for (const [i, said] of f.listed) list.append(el("li", {}, el("a", { href: "#r" + i, textContent: said })));
      box.append(list);
      if (f.count > f.listed.length) box.append(el("p", { textContent: `the first ${f.listed.length} listed; "next" walks all of them` }));
      const next = el("button", { textContent: "next " + mark[1].replace("-", " ") + " →" });
      next.addEventListener("click", () => walk(f.flag, 1));
      box.append(next);
    }
    summary.append(box);
  }
  const legend = $("legend");
  const swatch = (c, words) => legend.append(el("span", {}, el("span", { className: "swatch", style: `background:${c}` }), words));
  swatch(colour("--turn"), "turn (bar: first event to its end; ticks: agent_step)");
  swatch(colour("--compaction"), "compaction");
  swatch(colour("--delta"), "run of deltas (one span, its count)");
  swatch(colour("--command"), "command ▼");
  swatch(colour("--reply"), "reply or event of the work ●");
  swatch(colour("--stray"), "event attributed to nothing ◆");
  legend.append(el("span", { textContent: "dashed bar: running at the end" }));
  for (const m of MARKS) legend.append(el("span", {}, el("span", { className: "sym " + m[1], textContent: m[2] }), m[4]));
  statsTable();
  $("owed").append(el("h2", { textContent: "Owed at the end" }), el("pre", { textContent: meta.owed }));

  await tick();
  // The columns.
  // Fed to the browser's inflater 16 KiB at a time: one chunk of a large
  // page inflates in one task, the whole of it would block the page.
  async function inflate(b64, size) {
    const bytes = new Uint8Array(await (await fetch("data:application/octet-stream;base64," + b64)).arrayBuffer());
    const stream = new DecompressionStream("deflate");
    const writer = stream.writable.getWriter();
    const fed = (async () => {
      for (let i = 0; i < bytes.length; i += 16384) {
        await writer.write(bytes.subarray(i, i + 16384));
        await tick();
      }
      await writer.close();
    })();
    const reader = stream.readable.getReader();
    let out = new Uint8Array(size || 1 << 16), at = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (at + value.length > out.length) {
        const grown = new Uint8Array(Math.max(out.length * 2, at + value.length));
        grown.set(out.subarray(0, at));
        out = grown;
      }
      out.set(value, at);
      at += value.length;
    }
    await fed;
    return at === out.length ? out.buffer : out.buffer.slice(0, at);
  }
  performance.mark("trace:inflate");
  const pieces = [...document.getElementsByClassName("index" + sfx)].map((e) => e.textContent);
  const buf = await inflate(pieces.join(""), meta.index_bytes);
  performance.mark("trace:inflated");
  await tick();
  const L = meta.layout;
  const T = new Float64Array(buf, L.t, N);
  const NUM = new Uint32Array(buf, L.n, N);
  const ANS = new Int32Array(buf, L.answers, N);
  const TURN = new Int32Array(buf, L.turn, N);
  const SPANS = new Uint32Array(buf, L.spans, meta.spans * 4);
  const RUNS = new Uint32Array(buf, L.runs, meta.runs * 3);
  const CODE = new Uint16Array(buf, L.code, N);
  const FL = new Uint8Array(buf, L.flags, N);
  const LANE = new Uint8Array(buf, L.lane, N);
  const names = meta.names;
  const isDelta = names.map((n) => n.endsWith("_delta"));
  const isStep = names.map((n) => n === "agent_step");
  // The axis: ms since the recording began, or the record's place.
  const X = new Float64Array(N);
  for (let i = 0; i < N; i++) X[i] = meta.untimed ? i : T[i] / 1000;
  if (aligned) {
    // Command k at k; a record after it at k + its share of the way to
    // the next command (or to the last record).
    const at = Float64Array.from(X);
    let k = 0, a = -1, b = 0;
    const next = (k) => { for (let j = (k ? a : -1) + 1; j < N; j++) if (FL[j] & COMMAND) return j; return N; };
    b = next(0);
    for (let i = 0; i < N; i++) {
      if (i === b) { k++; a = i; b = next(k); }
      const from = a < 0 ? at[0] : at[a], to = b < N ? at[b] : at[N - 1] + (at[N - 1] - from) / 19 + 1e-9;
      X[i] = k + (to > from ? Math.min(0.95, (at[i] - from) / (to - from)) : 0) - (a < 0 ? 1 : 0);
    }
  }
  const cmdRec = new Uint32Array(meta.commands), evRec = new Uint32Array(meta.events);
  for (let i = 0; i < N; i++) (FL[i] & COMMAND ? cmdRec : evRec)[NUM[i] - 1] = i;
  performance.mark("trace:columns");
  await tick();
  const lo = N ? X[0] : 0, hi = N ? X[N - 1] : 1;
  const pad = Math.max((hi - lo) * 0.01, meta.untimed || aligned ? 1 : 0.05);
  const full = [lo - pad, hi + pad];
  let v0 = full[0], v1 = full[1], sel = -1;

  // Binary searches on X: the first record at or after x, after x.
  const lower = (x) => { let a = 0, b = N; while (a < b) { const m = (a + b) >> 1; if (X[m] < x) a = m + 1; else b = m; } return a; };
  const upper = (x) => { let a = 0, b = N; while (a < b) { const m = (a + b) >> 1; if (X[m] <= x) a = m + 1; else b = m; } return a; };

  const canvas = $("timeline");
  const ctx = canvas.getContext("2d");
  const STRIP = 26, LANE_H = 44, AXIS = 24, H = STRIP + 4 * LANE_H + AXIS;
  const laneTop = (k) => STRIP + k * LANE_H;
  let W = 0;
  const px = (x) => ((x - v0) / (v1 - v0)) * W;
  const C = {
    turn: colour("--turn"), compaction: colour("--compaction"), delta: colour("--delta"), command: colour("--command"),
    reply: colour("--reply"), stray: colour("--stray"),
  };
  const markOf = (f) => MARKS.find((m) => f & m[0]);
  let queued = false;
  const redraw = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; draw(); }); } };

  function draw() {
    const dpr = window.devicePixelRatio || 1;
    W = canvas.clientWidth;
    if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
      canvas.width = Math.round(W * dpr);
      canvas.height = Math.round(H * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = "#fafafa";
    for (let k = 0; k < 4; k += 2) ctx.fillRect(0, laneTop(k), W, LANE_H);
    const i0 = lower(v0), i1 = upper(v1);
    const detail = i1 - i0 <= 3000;
    drawSpans(detail);
    drawRuns(detail);
    if (detail) drawRecords(i0, i1);
    else if (i1 - i0 > 40000 && agg) drawBuckets();
    else drawDensity(i0, i1);
    if (!(i1 - i0 > 40000 && agg)) drawFlags(i0, i1, detail);
    if (marks) drawMarks();
    if (sel >= 0) {
      const x = px(X[sel]);
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 1;
      ctx.setLineDash([3, 3]);
      ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, laneTop(4)); ctx.stroke();
      ctx.setLineDash([]);
      const y = laneTop(LANE[sel]) + LANE_H / 2;
      ctx.strokeRect(x - 7, y - 9, 14, 18);
    }
    drawAxis();
    $("range").textContent = aligned
      ? `commands ${fmt(Math.max(1, Math.ceil(v0)))} to ${fmt(Math.min(meta.commands, Math.floor(v1)))} (${fmt(i1 - i0)} records)`
      : meta.untimed
      ? `records ${fmt(Math.max(0, Math.ceil(v0)))} to ${fmt(Math.min(N - 1, Math.floor(v1)))} (${fmt(i1 - i0)} shown)`
      : `${ms(Math.max(v0, 0))} to ${ms(v1)} (${fmt(i1 - i0)} records${detail ? "" : ", aggregated: zoom in to see each"})`;
  }

  // Turns and compactions: bars, merged where they share a pixel.
  function drawSpans(detail) {
    const n = meta.spans;
    let a = 0, b = n;
    const first = lower(v0);
    while (a < b) { const m = (a + b) >> 1; if (SPANS[m * 4 + 1] < first) a = m + 1; else b = m; }
    // Spans never overlap; their ends rise with their starts, but for a
    // compaction inside a turn: step back a little.
    a = Math.max(0, a - 2);
    const y = laneTop(0) + 8, h = LANE_H - 16;
    let runX = -1, runEnd = -1, runKind = -1;
    const flush = () => {
      if (runX < 0) return;
      ctx.fillStyle = runKind & 1 ? C.compaction : C.turn;
      ctx.fillRect(runX, y, Math.max(1, runEnd - runX), h);
    };
    for (let s = a; s < n; s++) {
      const start = SPANS[s * 4], end = SPANS[s * 4 + 1], k = SPANS[s * 4 + 2], kind = SPANS[s * 4 + 3];
      if (X[start] > v1) break;
      if (X[end] < v0) continue;
      const x0 = Math.max(-2, px(X[start])), x1 = Math.min(W + 2, Math.max(px(X[end]), x0 + 1));
      if (detail || kind >= 2) {
        flush(); runX = -1;
        ctx.fillStyle = kind & 1 ? C.compaction : C.turn;
        ctx.fillRect(x0, y, Math.max(2, x1 - x0), h);
        ctx.strokeStyle = "#1e3a8a";
        ctx.setLineDash(kind >= 2 ? [4, 3] : []);
        ctx.strokeRect(x0, y, Math.max(2, x1 - x0), h);
        ctx.setLineDash([]);
        if (detail && x1 - x0 > 70) {
          ctx.fillStyle = "#1e3a8a";
          ctx.font = "11px system-ui, sans-serif";
          ctx.fillText(`${kind & 1 ? "compaction" : "turn"} of command ${k}${kind >= 2 ? ", running at the end" : ""}`, Math.max(x0, 0) + 3, y + 11);
        }
        continue;
      }
      if (runX >= 0 && x0 <= runEnd + 1 && (kind & 1) === runKind) runEnd = Math.max(runEnd, x1);
      else { flush(); runX = x0; runEnd = x1; runKind = kind & 1; }
    }
    flush();
  }

  // Runs of deltas: one span each, with its count when there is room.
  function drawRuns(detail) {
    const n = meta.runs;
    let a = 0, b = n;
    const first = lower(v0);
    while (a < b) { const m = (a + b) >> 1; if (RUNS[m * 3 + 1] < first) a = m + 1; else b = m; }
    const y = laneTop(0) + LANE_H - 14;
    ctx.fillStyle = C.delta;
    ctx.font = "10px system-ui, sans-serif";
    let lastX = -10;
    for (let r = a; r < n; r++) {
      const start = RUNS[r * 3], end = RUNS[r * 3 + 1], count = RUNS[r * 3 + 2];
      if (X[start] > v1) break;
      const x0 = px(X[start]), x1 = Math.max(px(X[end]), x0 + 2);
      if (!detail && x1 < lastX + 1) continue;
      lastX = x1;
      ctx.fillRect(x0, y, x1 - x0, 4);
      if (detail && x1 - x0 > 24) ctx.fillText(`${count} ${names[CODE[start]]}`, x0, y - 2);
    }
  }

  // Each record: a marker in its lane, joined to what it answers.
  function drawRecords(i0, i1) {
    ctx.lineWidth = 1;
    for (let i = i0; i < i1; i++) {
      const k = ANS[i] >= 0 ? ANS[i] : TURN[i];
      if (k < 1 || FL[i] & COMMAND || k > cmdRec.length) continue;
      const c = cmdRec[k - 1];
      // A turn's events join its command only through its first event.
      if (ANS[i] < 0 && i > 0 && TURN[i - 1] === k) continue;
      ctx.strokeStyle = ANS[i] >= 0 ? "rgba(21,128,61,.55)" : "rgba(30,58,138,.35)";
      ctx.beginPath();
      ctx.moveTo(px(X[c]), laneTop(2) + LANE_H / 2);
      ctx.lineTo(px(X[i]), laneTop(LANE[i]) + LANE_H / 2);
      ctx.stroke();
    }
    for (let i = i0; i < i1; i++) {
      const x = px(X[i]), lane = LANE[i], y = laneTop(lane) + LANE_H / 2, f = FL[i], code = CODE[i];
      if (f & COMMAND) {
        ctx.fillStyle = f & IDLE ? "#9ca3af" : f & FLAGGED ? colour(markOf(f)[3]) : C.command;
        ctx.beginPath(); ctx.moveTo(x - 5, y - 6); ctx.lineTo(x + 5, y - 6); ctx.lineTo(x, y + 4); ctx.fill();
      } else if (isDelta[code] && !(f & FLAGGED)) {
        continue;
      } else if (isStep[code]) {
        ctx.fillStyle = "#1e3a8a";
        ctx.fillRect(x - 0.5, laneTop(0) + 4, 1.5, LANE_H - 8);
      } else if (lane === 3) {
        ctx.fillStyle = f & FLAGGED ? colour(markOf(f)[3]) : C.stray;
        ctx.beginPath(); ctx.moveTo(x, y - 6); ctx.lineTo(x + 6, y); ctx.lineTo(x, y + 6); ctx.lineTo(x - 6, y); ctx.fill();
      } else {
        ctx.fillStyle = f & FLAGGED ? colour(markOf(f)[3]) : C.reply;
        ctx.beginPath(); ctx.arc(x, y, 4, 0, 7); ctx.fill();
      }
    }
  }

  // Too many records to tell apart: per pixel and lane, how many.
  function drawDensity(i0, i1) {
    const counts = new Uint32Array(4 * (W + 1));
    for (let i = i0; i < i1; i++) {
      const p = px(X[i]) | 0;
      if (p >= 0 && p <= W) counts[LANE[i] * (W + 1) + p]++;
    }
    densityBars(counts);
  }
  function densityBars(counts) {
    const fills = [C.reply, C.reply, C.command, C.stray];
    for (let lane = 0; lane < 4; lane++) {
      ctx.fillStyle = fills[lane];
      ctx.globalAlpha = lane === 0 ? 0.5 : 0.8;
      const top = laneTop(lane);
      for (let p = 0; p <= W; p++) {
        const c = counts[lane * (W + 1) + p];
        if (!c) continue;
        const h = Math.min(LANE_H - 4, 3 + 4 * Math.log2(c));
        ctx.fillRect(p, top + LANE_H - 2 - h, 1, h);
      }
    }
    ctx.globalAlpha = 1;
  }

  // Many records in view: the page's buckets (counted once, a step at a
  // time) instead of the records, per pixel and lane, and the marks.
  const B = 16384;
  let agg = null;
  async function aggregate() {
    const counts = new Uint32Array(4 * B), flags = new Uint8Array(B), span = full[1] - full[0];
    for (let a = 0; a < N; a += 100000) {
      for (let i = a, end = Math.min(N, a + 100000); i < end; i++) {
        const b = Math.min(B - 1, (((X[i] - full[0]) / span) * B) | 0);
        counts[LANE[i] * B + b]++;
        flags[b] |= FL[i] & FLAGGED;
      }
      await tick();
    }
    agg = { counts, flags, span };
  }
  function drawBuckets() {
    const counts = new Uint32Array(4 * (W + 1)), flags = new Uint8Array(W + 1);
    const b0 = Math.max(0, Math.floor(((v0 - full[0]) / agg.span) * B)), b1 = Math.min(B, Math.ceil(((v1 - full[0]) / agg.span) * B));
    for (let b = b0; b < b1; b++) {
      const p = px(full[0] + ((b + 0.5) / B) * agg.span) | 0;
      if (p < 0 || p > W) continue;
      for (let lane = 0; lane < 4; lane++) counts[lane * (W + 1) + p] += agg.counts[lane * B + b];
      flags[p] |= agg.flags[b];
    }
    densityBars(counts);
    ctx.font = "bold 12px system-ui, sans-serif";
    ctx.textAlign = "center";
    let last = -100;
    for (let p = 0; p <= W; p++) {
      if (!flags[p] || p - last < 9) continue;
      last = p;
      drawFlag(p, flags[p]);
    }
    ctx.textAlign = "start";
  }

  // One flagged record's (or pixel's) symbol at `x` in the top strip, in
  // its colour, and a faint rule down through the lanes.
  function drawFlag(x, flags) {
    const m = markOf(flags);
    ctx.fillStyle = colour(m[3]);
    ctx.fillRect(x - 7, 3, 14, 18);
    ctx.globalAlpha = 0.35;
    ctx.fillRect(x - 1, STRIP, 2, laneTop(4) - STRIP);
    ctx.globalAlpha = 1;
    ctx.fillStyle = "#fff";
    ctx.fillText(m[2], x, 16);
  }

  // What stands out: each flagged record's symbol in the top strip (one
  // per pixel when aggregated), and a rule down through the lanes.
  function drawFlags(i0, i1, detail) {
    ctx.font = "bold 12px system-ui, sans-serif";
    ctx.textAlign = "center";
    let last = -100;
    for (let i = i0; i < i1; i++) {
      const f = FL[i];
      if (!(f & FLAGGED)) continue;
      const x = px(X[i]);
      if (!detail && x - last < 9) continue;
      last = x;
      drawFlag(x, f);
    }
    ctx.textAlign = "start";
  }

  // replay --html: each difference under its command, in both views; a
  // crossing (not compared) greyed.
  function drawMarks() {
    ctx.font = "bold 12px system-ui, sans-serif";
    ctx.textAlign = "center";
    for (const m of marks) {
      if (!m.command || m.command > meta.commands) continue;
      const x = px(m.command);
      if (x < -10 || x > W + 10) continue;
      ctx.fillStyle = m.crossed ? "#6b7280" : "#b45309";
      ctx.globalAlpha = 0.18;
      ctx.fillRect(x - 4, STRIP, 8, laneTop(4) - STRIP);
      ctx.globalAlpha = 1;
      ctx.fillRect(x - 8, 2, 16, 20);
      ctx.fillStyle = "#fff";
      ctx.fillText(m.crossed ? "⋈" : "Δ", x, 16);
    }
    ctx.textAlign = "start";
  }

  function drawAxis() {
    const top = laneTop(4);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, top, W, AXIS);
    ctx.strokeStyle = "#999";
    ctx.beginPath(); ctx.moveTo(0, top + 0.5); ctx.lineTo(W, top + 0.5); ctx.stroke();
    const span = v1 - v0, raw = span / Math.max(1, W / 110);
    const p10 = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = Math.max(aligned ? 1 : 0, [1, 2, 5, 10].map((m) => m * p10).find((s) => s >= raw));
    ctx.fillStyle = "#444";
    ctx.font = "11px system-ui, sans-serif";
    for (let x = Math.ceil(v0 / step) * step; x <= v1; x += step) {
      const p = px(x);
      ctx.fillRect(p, top, 1, 5);
      const label = aligned ? (Number.isInteger(+x.toFixed(6)) && x > 0 ? `command ${Math.round(x)}` : "") : meta.untimed ? fmt(Math.round(x)) : (step >= 1000 ? (x / 1000).toFixed(step >= 10000 ? 0 : 1) + " s" : (+x.toFixed(3)) + " ms");
      ctx.fillText(label, p + 2, top + 16);
    }
  }

  // Zoom and pan.
  function zoom(factor, at) {
    const c = at === undefined ? (v0 + v1) / 2 : at;
    const minSpan = meta.untimed ? 4 : aligned ? 0.5 : 0.01;
    let a = c - (c - v0) * factor, b = c + (v1 - c) * factor;
    if (b - a < minSpan) { a = c - minSpan / 2; b = c + minSpan / 2; }
    setView(a, b);
  }
  function setView(a, b, echo = true) {
    const span = Math.min(b - a, full[1] - full[0]);
    if (a < full[0]) { a = full[0]; b = a + span; }
    if (b > full[1]) { b = full[1]; a = b - span; }
    v0 = a; v1 = b;
    redraw();
    if (echo && opts.onView) opts.onView(sfx, a, b);
  }
  $("zoom-in").addEventListener("click", () => zoom(0.5));
  $("zoom-out").addEventListener("click", () => zoom(2));
  $("zoom-all").addEventListener("click", () => setView(full[0], full[1]));
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoom(Math.pow(1.0015, e.deltaY), v0 + ((e.clientX - r.left) / W) * (v1 - v0));
  }, { passive: false });
  let drag = null;
  canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, v0, v1, shift: e.shiftKey, moved: false }; });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (drag.moved && !drag.shift) {
      const d = (dx / W) * (drag.v1 - drag.v0);
      setView(drag.v0 - d, drag.v1 - d);
    }
  });
  window.addEventListener("mouseup", (e) => {
    if (!drag) return;
    const r = canvas.getBoundingClientRect(), d = drag;
    drag = null;
    const at = (cx) => d.v0 + ((cx - r.left) / W) * (d.v1 - d.v0);
    if (d.moved && d.shift) setView(Math.min(at(d.x), at(e.clientX)), Math.max(at(d.x), at(e.clientX)));
    else if (!d.moved && e.target === canvas) pick(e.clientX - r.left, e.clientY - r.top);
  });
  canvas.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      e.preventDefault();
      const i = Math.max(0, Math.min(N - 1, sel + (e.key === "ArrowRight" ? 1 : -1)));
      select(i, true);
    } else if (e.key === "+" || e.key === "=") zoom(0.5);
    else if (e.key === "-") zoom(2);
    else if (e.key === "0") setView(full[0], full[1]);
  });
  window.addEventListener("resize", redraw);

  // A click: the nearest record of the lane clicked (in the top strip, the
  // nearest flagged one) within a few pixels; else the turn under it.
  function pick(x, y) {
    const lane = y < STRIP ? -1 : Math.floor((y - STRIP) / LANE_H);
    if (lane > 3) return;
    const at = v0 + (x / W) * (v1 - v0), tol = (6 / W) * (v1 - v0);
    const a = lower(at - tol), b = Math.min(upper(at + tol), a + 50000);
    let best = -1, bestD = Infinity;
    for (let i = a; i < b; i++) {
      if (lane < 0 ? !(FL[i] & FLAGGED) : LANE[i] !== lane) continue;
      const d = Math.abs(X[i] - at);
      if (d < bestD) { best = i; bestD = d; }
    }
    if (best < 0 && lane === 0) {
      const i = Math.min(lower(at), N - 1);
      for (let s = 0, n = meta.spans; s < n; s++) {
        if (SPANS[s * 4] <= i && SPANS[s * 4 + 1] >= i) { best = SPANS[s * 4]; break; }
        if (SPANS[s * 4] > i) break;
      }
    }
    if (best >= 0) select(best, false);
  }

  // The words and raw lines, a block at a time.
  const cache = new Map();
  async function words(i) {
    const b = Math.floor(i / meta.block);
    if (!cache.has(b)) {
      cache.set(b, inflate(document.getElementById(`b${sfx}-${b}`).textContent).then((buf) => JSON.parse(new TextDecoder().decode(buf))));
      if (cache.size > 16) cache.delete(cache.keys().next().value);
    }
    const w = await cache.get(b);
    return [w[2 * (i % meta.block)], w[2 * (i % meta.block) + 1]];
  }

  // Walks to the next (or previous) record with `flag` from the selection.
  function walk(flag, dir) {
    for (let i = sel + dir; i >= 0 && i < N; i += dir) if (FL[i] & flag) return select(i, true);
    for (let i = dir > 0 ? 0 : N - 1; i !== sel && i >= 0 && i < N; i += dir) if (FL[i] & flag) return select(i, true);
  }

  let shown = 0;
  async function select(i, reveal) {
    sel = i;
    const ticket = ++shown;
    if (reveal && (X[i] < v0 || X[i] > v1 || upper(v1) - lower(v0) > 3000)) {
      const a = X[Math.max(0, i - 150)], b = X[Math.min(N - 1, i + 150)];
      const m = Math.max((b - a) * 0.1, meta.untimed || aligned ? 2 : 0.5);
      setView(a - m, b + m);
    }
    redraw();
    const [said, raw] = await words(i);
    if (ticket !== shown) return;
    const d = $("detail");
    d.replaceChildren();
    const isCommand = FL[i] & COMMAND;
    d.append(el("h2", { textContent: `${isCommand ? "command" : "event"} ${NUM[i]}: ${names[CODE[i]]}` }));
    d.dataset.record = i;
    const marks = MARKS.filter((m) => FL[i] & m[0]);
    if (marks.length) {
      const p = el("p", { className: "flags" });
      for (const m of marks) p.append(el("span", { className: "sym " + m[1], textContent: m[2] }), m[4] + " ");
      d.append(p);
    }
    d.append(el("p", { textContent: "Attribution: " }, el("span", { id: "said" + sfx, textContent: said })));
    d.append(el("p", { textContent: "The line, as it crossed:" }), el("pre", { id: "raw" + sfx, textContent: raw }));
    d.append(el("p", { id: "latency" + sfx, textContent: latency(i) }));
    if (!meta.untimed) d.append(el("p", { textContent: `At ${ms(T[i] / 1000)} into the recording.` }));
    document.dispatchEvent(new CustomEvent("trace:shown" + sfx, { detail: i }));
  }

  function latency(i) {
    if (meta.untimed) return "Latency: the recording has no times.";
    if (FL[i] & COMMAND) {
      const n = NUM[i];
      for (let j = i + 1, end = Math.min(N, i + 200000); j < end; j++) {
        if (!(FL[j] & COMMAND) && (ANS[j] === n || TURN[j] === n)) {
          return `First answer: event ${NUM[j]} (${names[CODE[j]]}), ${ms(X[j] - X[i])} after it.`;
        }
      }
      return FL[i] & OWED ? "Nothing answered it: still owed at the end." : "No event answers it.";
    }
    const k = ANS[i] >= 0 ? ANS[i] : TURN[i];
    if (k < 1 || k > cmdRec.length) return "Latency: it answers no command.";
    const how = ANS[i] >= 0 ? "the command it answers" : "the command of its turn";
    return `Latency: ${ms(X[i] - X[cmdRec[k - 1]])} since command ${k}, ${how}.`;
  }

  function statsTable() {
    const box = $("stats");
    box.append(el("h2", { textContent: "Stats (what trace --stats prints)" }));
    const kinds = meta.stats.filter((s) => s.kind);
    if (meta.untimed || !kinds.length && !meta.stats.length) {
      box.append(el("p", { textContent: meta.untimed ? "None: the records have no times." : "No command lines." }));
      return;
    }
    const table = el("table", { id: "stats-table" + sfx });
    const row = (cells, tag) => table.append(el("tr", {}, ...cells.map((c) => el(tag, { textContent: c }))));
    row(["kind", "measure", "count", "p50", "p95", "p99", "max", "sent", "owed"], "th");
    const t = (v) => (v === null ? "-" : v.toFixed(3) + " ms");
    for (const k of kinds) {
      for (const [key, label] of [["first", "first"], ["first_delta", "first delta"], ["end", "end"]]) {
        const m = k[key];
        if (!m) continue;
        row([k.kind, label, String(m.count), t(m.p50_ms), t(m.p95_ms), t(m.p99_ms), t(m.max_ms), String(k.sent), k.owed.join(", ") || "-"], "td");
      }
    }
    box.append(table);
    const stalls = meta.stats.filter((s) => s.stall).map((s) => s.stall);
    box.append(el("p", { textContent: `Stalls (gaps between a turn's events over the threshold): ${stalls.length || "none"}` }));
    if (stalls.length) {
      const list = el("ol");
      for (const s of stalls.slice(0, 200)) list.append(el("li", { textContent: `the turn of command ${s.turn}: ${s.gap_ms.toFixed(3)} ms from event ${s.after} to event ${s.before}` }));
      box.append(list);
    }
  }

  function fromHash() {
    const m = /^#r(\d+)$/.exec(location.hash);
    if (m && +m[1] < N && !sfx) select(+m[1], true);
  }
  window.addEventListener("hashchange", fromHash);
  if (N > 40000) await aggregate();
  draw();
  performance.mark("trace:drawn");
  await tick();
  fromHash();
  // For a test, as a person would point: where a record is drawn.
  return {
    records: N,
    xOf: (i) => canvas.getBoundingClientRect().left + px(X[i]),
    yOf: (i) => canvas.getBoundingClientRect().top + laneTop(LANE[i]) + LANE_H / 2,
    xOfCommand: (n) => canvas.getBoundingClientRect().left + px(X[cmdRec[n - 1]]),
    recordOfCommand: (n) => cmdRec[n - 1],
    laneOf: (i) => LANE[i],
    flags: (i) => FL[i],
    name: (i) => names[CODE[i]],
    n: (i) => NUM[i],
    view: () => [v0, v1],
    select: (i, reveal = true) => select(i, reveal),
    setView: (a, b) => setView(a, b, false),
  };
  }

  // Every view of the page: one for trace --html, the recording's and this
  // run's for replay --html, zoomed and panned together.
  const differences = document.getElementById("differences-data");
  const marks = differences ? JSON.parse(differences.textContent) : null;
  const views = {};
  const onView = (from, a, b) => { for (const [sfx, v] of Object.entries(views)) if (sfx !== from) v.setView(a, b); };
  for (const meta of document.querySelectorAll("script.meta")) {
    const sfx = meta.id.slice("meta".length);
    views[sfx] = await view(sfx, { marks, onView: marks ? onView : null });
  }
  window.traceViews = views;
  window.traceView = Object.values(views)[0];
  for (const a of document.querySelectorAll("#differences a[data-command]")) {
    a.addEventListener("click", (e) => {
      e.preventDefault();
      for (const v of Object.values(views)) v.select(v.recordOfCommand(+a.dataset.command), true);
    });
  }
  document.body.dataset.ready = "1";
  window.traceReady = performance.now();
  document.dispatchEvent(new Event("trace:ready"));
})();
