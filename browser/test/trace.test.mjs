// `serve-command trace --html`, opened in a real headless Chromium: what a
// person sees on the page of each recording. The expected words come from
// `serve-command trace` itself (text and --format jsonl), never from here.
//
//   SERVE_COMMAND=target/debug/serve-command CHROMIUM=/usr/bin/chromium npm test
//
// BENCH_RUNS (default 5): page loads per large page, whose medians the test
// prints (BENCHMARKS.md has them). SCREENSHOT=docs/trace-html.png: the
// README's picture, from the tap recording's page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";
import { writeTurns } from "../sessions.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const bin = path.resolve(root, process.env.SERVE_COMMAND ?? "target/debug/serve-command");
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";
// FIREFOX=/usr/bin/firefox-esr runs the same tests in Firefox (WebDriver
// BiDi), by hand: CI runs Chromium.
const firefox = process.env.FIREFOX;
const runs = Number(process.env.BENCH_RUNS ?? 5);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "trace-html-"));
let browser;

before(async () => {
  browser = await puppeteer.launch(
    firefox
      ? { browser: "firefox", executablePath: firefox, defaultViewport: { width: 1100, height: 1000 } }
      : {
          executablePath: chromium,
          // As root (CI) Chromium needs --no-sandbox.
          args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
          defaultViewport: { width: 1100, height: 1000 },
        },
  );
});
after(async () => {
  await browser?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function run(args, input, cwd) {
  const r = spawnSync(bin, args, { input, cwd, maxBuffer: 1 << 30, encoding: "utf8" });
  assert.equal(r.status, 0, `${bin} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

// A log in the format `trace` reads, from `> COMMAND` and `< EVENT` lines
// (as tests/cli_trace.rs writes them: no times).
function log(lines) {
  let c = 0, e = 0;
  return lines.map((l) => {
    const dir = l.startsWith("> ") ? "command" : "event";
    const n = dir === "command" ? ++c : ++e;
    return JSON.stringify({ dir, n, line: l.slice(2) }) + "\n";
  }).join("");
}

// The command and event lines of a log, in order, as records.
const records = (file) => fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
  .filter((r) => r.dir === "command" || r.dir === "event");

async function open(file) {
  const html = file.replace(/\.jsonl$/, ".html");
  // From its directory: the page's title is the log's name.
  run(["trace", "--html", path.basename(html), path.basename(file)], undefined, path.dirname(file));
  const page = await browser.newPage();
  await page.goto("file://" + html);
  await page.waitForSelector("body[data-ready]", { timeout: 60000 });
  return { page, html };
}

// Selects record `i` with a click where it is drawn (after bringing it into
// view), and returns the detail shown.
async function clickRecord(page, i, strip = false) {
  await page.evaluate((i) => window.traceView.select(i), i);
  await page.waitForFunction((i) => document.querySelector("#detail")?.dataset.record === String(i), {}, i);
  // Another record first, so that the click is what selects it.
  await page.evaluate((i) => window.traceView.select(i === 0 ? 1 : 0, false), i);
  await new Promise((r) => setTimeout(r, 50));
  const [x, y] = await page.evaluate((i, strip) => [window.traceView.xOf(i), strip ? document.querySelector("#timeline").getBoundingClientRect().top + 12 : window.traceView.yOf(i)], i, strip);
  await armShown(page);
  await page.mouse.click(x, y);
  const selected = await page.evaluate(() => window.__shown);
  return page.evaluate((selected) => ({
    selected,
    head: document.querySelector("#detail h2").textContent,
    said: document.querySelector("#said").textContent,
    raw: document.querySelector("#raw").textContent,
    latency: document.querySelector("#latency").textContent,
    flags: document.querySelector("#detail .flags")?.textContent ?? "",
  }), selected);
}

// After this, `window.__shown` is a promise of the next record shown (-1 if
// none is within 10 s) and `window.__clicked` of the time from the next
// mousedown on the timeline to it, in ms.
const armShown = (page) => page.evaluate(() => {
  let start = NaN;
  document.querySelector("#timeline").addEventListener("mousedown", () => { start = performance.now(); }, { once: true, capture: true });
  window.__shown = new Promise((r) => {
    document.addEventListener("trace:shown", (e) => r(e.detail), { once: true });
    setTimeout(() => r(-1), 10000);
  });
  window.__clicked = window.__shown.then(() => performance.now() - start);
});

// What the summary says: per kind, its count and the words listed.
const summary = (page) => page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#summary details")].map((d) => [
  d.id.replace("sum-", ""), { count: Number(d.dataset.count), listed: [...d.querySelectorAll("li a")].map((a) => [a.getAttribute("href"), a.textContent]) },
])));

// The colour drawn at (x, y) of the timeline, CSS pixels from its corner.
const pixel = (page, x, y) => page.evaluate((x, y) => {
  const c = document.querySelector("#timeline"), r = window.devicePixelRatio || 1;
  return [...c.getContext("2d").getImageData(Math.round(x * r), Math.round(y * r), 1, 1).data.slice(0, 3)];
}, x, y);
const rgb = (page, v) => page.evaluate((v) => {
  const s = getComputedStyle(document.documentElement).getPropertyValue(v).trim();
  return [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16));
}, v);

// The session of tests/cli_trace.rs's refused_lines_approvals_and_events_that_fit_no_rule,
// with what it still owes at the end (a prompt queued, a request unanswered).
const MISFITS = [
  '> {"command":"nap"}',
  "> ",
  '> {"command":"prompt","content":"a"}',
  '< {"event":"command_error","error":"unknown command: nap"}',
  '< {"event":"agent_step","step":1}',
  '< {"event":"approval_requested","id":"a1","tool_name":"shell","detail":"d","body":null}',
  '> {"command":"approval","id":"a1","allow":false}',
  '< {"event":"approval_resolved","id":"a1","outcome":"rejected"}',
  '< {"event":"agent_finished","answer":"done"}',
  '< {"event":"agent_finished","answer":"done"}',
  '< {"event":"jobs_snapshot","request_id":"zz","jobs":[]}',
  "< engine 1.0 ready",
  '< {"event":"agent_step"}',
  '< {"event":"session_error","error":"disk full"}',
  '< {"event":"command_error","error":"unknown command: x"}',
  '> {"command":"jobs_snapshot","request_id":"j1"}',
  '> {"command":"prompt","content":"b"}',
  '< {"event":"agent_step","step":1}',
  '> {"command":"prompt","content":"c"}',
];

test("misfits: lanes, each violation marked and in the summary, refused/unreadable/owed, the exact line on a click", async () => {
  const file = path.join(work, "misfits.jsonl");
  fs.writeFileSync(file, log(MISFITS));
  const said = run(["trace", file]);
  const text = said.split("\n").map((l) => l.trim());
  const jsonl = run(["trace", "--format", "jsonl", file]).split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const lines = records(file);
  const { page } = await open(file);

  const labels = await page.$$eval(".labels div", (ds) => ds.map((d) => d.textContent));
  assert.deepEqual(labels.slice(1, 4), ["work: turns, compactions", "requests and replies", "commands"]);
  assert.match(await page.$eval("#axis-note", (e) => e.textContent), /line order/);

  // Every violation trace finds is counted, listed in trace's own words,
  // and drawn in the violation's colour in the top strip.
  const violations = jsonl.filter((r) => r.violation);
  assert.ok(violations.length >= 3);
  const s = await summary(page);
  assert.equal(s.violations.count, violations.length);
  assert.equal(s.violations.listed.length, violations.length);
  const red = await rgb(page, "--violation");
  for (const [href, words] of s.violations.listed) {
    assert.ok(text.some((l) => l && words.startsWith(l)), `not a line of trace: ${words}`);
    const i = Number(href.slice(2));
    const d = await clickRecord(page, i, true);
    assert.equal(d.selected, i);
    assert.match(d.flags, /violation/);
    const n = Number(/^event (\d+)/.exec(d.head)[1]);
    assert.equal(d.raw, lines.filter((r) => r.dir === "event")[n - 1].line);
    assert.ok(violations.some((v) => v.n === n && d.said.includes(v.violation)));
    const x = await page.evaluate((i) => window.traceView.xOf(i) - document.querySelector("#timeline").getBoundingClientRect().left, i);
    assert.deepEqual(await pixel(page, x - 5, 5), red, "the violation's mark");
  }
  // Refused: `nap`. Unreadable: agent_step with no step. Not an event: the
  // banner. Owed: the request, the running turn and the queued prompt.
  assert.equal(s.refused.count, 1);
  assert.match(s.refused.listed[0][1], /^command 1: refused/);
  assert.equal(s.unreadable.count, 1);
  assert.equal(s["not-events"].count, 1);
  const owed = jsonl.at(-1).owed;
  const expected = [...owed.refused, ...owed.requests, ...owed.steers, ...owed.goals, ...(owed.running ? [owed.running] : []), ...owed.queued]
    .map((n) => `command ${n}`).concat(owed.approvals.map((n) => `event ${n}`));
  assert.equal(expected.length, 3);
  assert.deepEqual(s.owed.listed.map((l) => l[1].split(":")[0]).sort(), expected.sort());
  assert.equal(await page.$eval("#owed pre", (e) => e.textContent), said.slice(said.indexOf("\nowed:") + 1));

  // Each event, clicked where it is drawn: its exact line, the words of
  // trace, its lane.
  const events = lines.filter((r) => r.dir === "event");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].dir !== "event") continue;
    const d = await clickRecord(page, i);
    assert.equal(d.selected, i);
    const n = lines[i].n;
    assert.equal(d.raw, events[n - 1].line);
    const a = jsonl[n - 1];
    if (a.answers) assert.match(d.said, new RegExp(`answers command ${a.answers}`));
    if (a.turn) assert.match(d.said, new RegExp(`in the turn of command ${a.turn}`));
    const lane = await page.evaluate((i) => window.traceView.laneOf(i), i);
    assert.equal(lane, a.turn ? 0 : a.answers || a.event === "approval_requested" ? 1 : 3, `lane of event ${n}`);
  }
  await page.close();
});

test("a tap recording against the mock engine: times, latency, the stats table", async () => {
  const file = path.join(work, "wire.jsonl");
  const r = spawnSync(bin, ["tap", "--log", file, "--", bin, "mock-engine", "--delay", "20"], {
    input: fs.readFileSync(path.join(root, "examples/session.jsonl")),
  });
  assert.equal(r.status, 0, String(r.stderr));
  const stats = run(["trace", "--stats", "--format", "jsonl", file]).split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const jsonl = run(["trace", "--format", "jsonl", file]).split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const lines = records(file);
  const { page } = await open(file);
  assert.match(await page.$eval("#axis-note", (e) => e.textContent), /recording's time/);
  const rows = await page.$$eval("#stats-table tr", (trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual([...new Set(rows.map((r) => r[0]))], stats.filter((s) => s.kind).map((s) => s.kind));
  for (const k of stats.filter((s) => s.kind)) {
    const row = rows.find((r) => r[0] === k.kind && r[1] === "end");
    assert.equal(row[2], String(k.end.count));
    assert.equal(row[3], k.end.p50_ms === null ? "-" : k.end.p50_ms.toFixed(3) + " ms");
  }
  // The turn of command 12: its first delta's latency since the prompt.
  const i = lines.findIndex((r) => r.dir === "event" && jsonl[r.n - 1].turn === 12 && JSON.parse(r.line).event === "assistant_delta");
  const d = await clickRecord(page, i);
  const e = lines[d.selected];
  assert.equal(d.raw, e.line, "the exact line of the record selected");
  const prompt = lines.find((r) => r.dir === "command" && r.n === 12);
  if (d.selected === i) {
    assert.equal(d.latency, `Latency: ${((e.t_us - prompt.t_us) / 1000).toFixed(3)} ms since command 12, the command of its turn.`);
  }
  if (process.env.SCREENSHOT) {
    // The README's picture: this page, down to the selected line.
    const bottom = await page.$eval("#detail", (e) => e.getBoundingClientRect().bottom + 8);
    await page.screenshot({ path: path.resolve(root, process.env.SCREENSHOT), clip: { x: 0, y: 0, width: 1100, height: bottom } });
  }
  await page.close();
});

test("replay --html: the recording and this run aligned by command, a planted difference under its command", async () => {
  // Recorded against an engine whose second turn streams and finishes;
  // replayed against one whose second turn fails.
  const finishing = path.join(work, "finishing.jsonl"), failing = path.join(work, "failing.jsonl");
  fs.writeFileSync(finishing, '{"deltas":["Hel","lo"]}\n{"deltas":["a","b"]}\n');
  fs.writeFileSync(failing, '{"deltas":["Hel","lo"]}\n{"fail":"provider error"}\n');
  const file = path.join(work, "recorded.jsonl"), html = path.join(work, "replay.html");
  const prompts = '{"command":"prompt","content":"one"}\n{"command":"prompt","content":"two"}\n';
  const tap = spawnSync(bin, ["tap", "--log", file, "--", bin, "mock-engine", "--delay", "20", "--script", finishing], { input: prompts });
  assert.equal(tap.status, 0, String(tap.stderr));
  const r = spawnSync(bin, ["replay", "--html", html, file, "--", bin, "mock-engine", "--delay", "10", "--script", failing], { encoding: "utf8" });
  assert.equal(r.status, 1, r.stderr);
  const report = r.stdout;
  const page = await browser.newPage();
  await page.goto("file://" + html);
  await page.waitForSelector("body[data-ready]", { timeout: 60000 });
  assert.deepEqual(await page.evaluate(() => Object.keys(window.traceViews)), ["-recorded", "-replayed"]);
  const items = await page.$$eval("#differences li.difference", (lis) => lis.map((li) => [li.querySelector("a")?.dataset.command, li.querySelector("pre").textContent]));
  assert.equal(items.length, 1);
  assert.equal(items[0][0], "2");
  assert.equal(items[0][1] + "\n", report.slice(0, report.indexOf("replay: ")));
  assert.match(items[0][1], /^command 2 \(prompt\), its turn:/);
  // Marked at command 2 in both timelines, which put it at the same place.
  const xs = [];
  for (const sfx of ["-recorded", "-replayed"]) {
    const x = await page.evaluate((sfx) => window.traceViews[sfx].xOfCommand(2) - document.querySelector("#timeline" + sfx).getBoundingClientRect().left, sfx);
    xs.push(x);
    const colour = await page.evaluate((sfx, x) => {
      const c = document.querySelector("#timeline" + sfx), k = window.devicePixelRatio || 1;
      return [...c.getContext("2d").getImageData(Math.round((x - 6) * k), Math.round(4 * k), 1, 1).data.slice(0, 3)];
    }, sfx, x);
    assert.deepEqual(colour, [0xb4, 0x53, 0x09], `the difference's mark in ${sfx}`);
  }
  assert.ok(Math.abs(xs[0] - xs[1]) < 1, `command 2 at ${xs[0]} and ${xs[1]}`);
  // Its link selects command 2 in both.
  await page.click("#differences a[data-command='2']");
  for (const sfx of ["-recorded", "-replayed"]) {
    await page.waitForFunction((sfx) => document.querySelector("#detail" + sfx + " h2")?.textContent === "command 2: prompt", { timeout: 10000 }, sfx);
  }
  await page.close();
});

// First paint, the timeline drawn, and a click's answer, on the page of a
// log of `turns` turns; medians of `runs` loads.
async function large(turns) {
  const file = path.join(work, `turns-${turns}.jsonl`);
  const violations = writeTurns(file, turns);
  const html = file.replace(/\.jsonl$/, ".html");
  const t0 = Date.now();
  run(["trace", "--html", html, file]);
  const build = Date.now() - t0;
  const logSize = fs.statSync(file).size, pageSize = fs.statSync(html).size;
  assert.ok(pageSize <= logSize, `the page (${pageSize} bytes) is larger than the log (${logSize})`);
  const samples = [];
  for (let k = 0; k < runs; k++) {
    const page = await browser.newPage();
    await page.evaluateOnNewDocument(() => {
      window.__long = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: "longtask", buffered: true });
    });
    await page.goto("file://" + html, { timeout: 120000 });
    await page.waitForSelector("body[data-ready]", { timeout: 120000 });
    const s = await page.evaluate(() => ({
      paint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN,
      ready: window.traceReady,
    }));
    const count = await page.$eval("#sum-violations", (d) => Number(d.dataset.count));
    assert.equal(count, violations.length);
    // A click on the timeline, zoomed out on the whole session: the time
    // from the click to the line shown.
    const [x, y] = await page.evaluate(() => {
      const r = document.querySelector("#timeline").getBoundingClientRect();
      return [r.left + r.width * 0.6, r.top + 26 + 44 * 2 + 22];
    });
    await armShown(page);
    await page.mouse.click(x, y);
    s.click = await page.evaluate(() => window.__clicked);
    const raw = await page.$eval("#raw", (e) => e.textContent);
    assert.match(raw, /^\{"command":"prompt"/);
    s.long = Math.max(0, ...(await page.evaluate(() => window.__long)));
    samples.push(s);
    await page.close();
  }
  const median = (k) => samples.map((s) => s[k]).sort((a, b) => a - b)[samples.length >> 1];
  const m = { turns, logSize, pageSize, build, paint: median("paint"), ready: median("ready"), click: median("click"), long: median("long") };
  console.log(`turns ${turns}: log ${(logSize / 1e6).toFixed(1)} MB, page ${(pageSize / 1e6).toFixed(1)} MB, trace --html ${build} ms; ` +
    `medians of ${runs}: first paint ${m.paint.toFixed(0)} ms, timeline drawn ${m.ready.toFixed(0)} ms, click ${m.click.toFixed(1)} ms, longest task ${m.long.toFixed(0)} ms`);
  return m;
}

test("10,000 turns: smaller than the log, a click answered within 200 ms", async () => {
  const m = await large(10000);
  assert.ok(m.click < 200, `click ${m.click} ms`);
  assert.ok(m.long < 200, `a task blocked the page for ${m.long} ms`);
  assert.ok(m.ready < 5000, `drawn after ${m.ready} ms`);
});

test("100,000 turns: smaller than the log, drawn within 5 s, a click answered within 200 ms", async () => {
  const m = await large(100000);
  assert.ok(m.paint < 5000, `first paint after ${m.paint} ms`);
  assert.ok(m.ready < 5000, `drawn after ${m.ready} ms`);
  assert.ok(m.click < 200, `click ${m.click} ms`);
  assert.ok(m.long < 200, `a task blocked the page for ${m.long} ms`);
});
