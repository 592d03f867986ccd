// The sessions the browser test opens that it writes itself: a tap log of
// many turns, as `serve-command tap --log` writes one against an engine
// that streams each answer in a few deltas.
import fs from "node:fs";

const record = (t, dir, n, line, rest) =>
  JSON.stringify({ t_ms: Math.floor(t / 1000), t_us: t, dir, n, line, verdict: dir, ...rest, violations: [] }) + "\n";

// Writes a log of `turns` turns to `file`: each a prompt, then agent_step,
// three assistant_deltas, assistant_message and agent_finished, 40 ms apart;
// a turn lasts 240 ms, and the next prompt comes 120 ms after it; every 10,000th turn's agent_finished comes
// twice, the second a violation. Returns the violations' event numbers.
export function writeTurns(file, turns) {
  const fd = fs.openSync(file, "w");
  let t = 1000, commands = 0, events = 0, chunk = "";
  const violations = [];
  const text = "The fixture's path is relative to the crate root.";
  for (let k = 1; k <= turns; k++) {
    commands++;
    chunk += record(t, "command", commands, JSON.stringify({ command: "prompt", content: `turn ${k}: why does this test fail?`, submission_id: `sub-${k}` }), {});
    const c = commands;
    const event = (line) => {
      t += 40000;
      events++;
      chunk += record(t, "event", events, JSON.stringify(line), { answers: null, turn: c });
    };
    event({ event: "agent_step", step: 1 });
    for (let d = 0; d < 3; d++) event({ event: "assistant_delta", content: text.slice(d * 17, d * 17 + 17) });
    event({ event: "assistant_message", content: text });
    event({ event: "agent_finished", answer: "done" });
    if (k % 10000 === 0) {
      event({ event: "agent_finished", answer: "done" });
      violations.push(events);
    }
    t += 120000;
    if (chunk.length > 1 << 20) { fs.writeSync(fd, chunk); chunk = ""; }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  return violations;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  writeTurns(process.argv[2], Number(process.argv[3]));
}
