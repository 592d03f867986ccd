#!/usr/bin/env python3
"""Regenerate BENCHMARKS.md's tables and benchmarks.svg from criterion's output.

    cargo bench -p serve-command-bench
    python3 scripts/bench_report.py [--criterion DIR] [--snapshot FILE] [--compare FILE]

Reads every `<criterion>/**/new/benchmark.json` and the `estimates.json` beside
it (the median time per iteration), and rewrites the part of BENCHMARKS.md
between the `bench-report` markers: the machine, each contender's median
throughput per input, and the goal ratios with pass/fail. Draws the chart
(throughput per contender and input) as `benchmarks.svg` next to it.

The event direction (`bench/benches/events.rs`: `events_decode/`,
`events_encode/`, `events_stream/`) has goal rows and tables of its own, left
out when criterion's output has none of its groups (an older run).

`--snapshot FILE` saves this run's medians as JSON; `--compare FILE` (repeatable,
most recent first) adds an earlier run's ratios as a column, and a median column
on which the verdict is given, to see whether the ratios are stable.
Python 3 standard library only.
"""

import argparse
import html
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "BENCHMARKS.md"
CHART = ROOT / "benchmarks.svg"
START = "<!-- bench-report:start (scripts/bench_report.py writes this part) -->"
END = "<!-- bench-report:end -->"

DECODE = ["from_slice", "serde_json", "sonic_rs", "simd_json", "value_path", "tagged_derive", "ignored_any_floor"]
ENCODE = ["write_line", "serde_json", "sonic_rs", "copy", "to_line", "to_json_to_writer", "floor"]
ENCODE_V2 = ["write_line", "serde_json", "sonic_rs", "copy"]
# The encoders the other JSON libraries give, each through a flat derive.
ENCODE_PEERS = ("serde_json", "sonic_rs")
# Where nothing needs escaping: write_line against copying the line.
CLEAN = ("ascii_1mib", "prose_1mib")
STREAM = ["command_reader", "read_until_serde_json", "split_ignored_any_floor"]
INPUTS = ["small", "noisy", "ascii_1mib", "code_1mib", "prose_1mib", "escaped_1mib"]
STREAM_INPUTS = ["small_32mib"]
# The other JSON libraries, each through a flat derive: the "fastest peer".
PEERS = ("serde_json", "sonic_rs", "simd_json")
LABELS = {
    "small": "small lines",
    "noisy": "noisy lines",
    "ascii_1mib": "1 MiB ASCII prompt",
    "code_1mib": "1 MiB pasted code",
    "prose_1mib": "1 MiB CJK/Cyrillic/Greek prose",
    "escaped_1mib": "1 MiB dense mix (escapes, non-ASCII)",
}

# The event direction (bench/benches/events.rs): the crate's `Event` against
# the `#[serde(tag = "event")]` enum a user would derive, with serde_json and
# with sonic-rs.
EVENT_DECODE = ["from_slice", "serde_json", "sonic_rs"]
EVENT_ENCODE = ["write_line", "serde_json", "sonic_rs", "copy"]
EVENT_STREAM = ["event_reader", "read_until_serde_json"]
EVENT_INPUTS = ["deltas", "tool_result_1mib", "jobs_snapshot_1000"]
EVENT_STREAM_INPUTS = ["deltas_32mib"]
# The derive's two encoders and decoders: the "fastest peer" of the events.
EVENT_PEERS = ("serde_json", "sonic_rs")
EVENT_LABELS = {
    "deltas": "stream of small deltas",
    "tool_result_1mib": "1 MiB tool_result",
    "jobs_snapshot_1000": "jobs_snapshot of 1,000 jobs",
}

# (figure, group, numerator, denominator, goal, comparison): the ratio is
# time(numerator) / time(denominator); a tuple stands for the fastest
# (least time) of those contenders. ">=" goals are "x times faster".
FLOOR_GOALS = {
    "small": 1.5,
    "noisy": 1.5,
    "ascii_1mib": 1.3,
    "code_1mib": 2.0,
    "prose_1mib": 2.0,
    "escaped_1mib": 2.0,
}
GOALS = (
    [
        (f"{LABELS[n]}: decode vs the fastest of serde_json, sonic-rs, simd-json", f"decode/{n}", PEERS, "from_slice", 1.0, ">=")
        for n in INPUTS
    ]
    + [
        (f"{LABELS[n]}: decode time vs the IgnoredAny floor", f"decode/{n}", "from_slice", "ignored_any_floor", g, "<=")
        for n, g in FLOOR_GOALS.items()
    ]
    + [
        ("32 MiB of small lines: CommandReader vs read_until + serde_json derive", "stream/small_32mib", "read_until_serde_json", "command_reader", 2.0, ">="),
        ("32 MiB of small lines: CommandReader time vs split on LF + IgnoredAny", "stream/small_32mib", "command_reader", "split_ignored_any_floor", 1.5, "<="),
        ("small lines: decode vs the Value path", "decode/small", "value_path", "from_slice", 3.5, ">="),
        ("small lines: decode vs the tagged-derive enum", "decode/small", "tagged_derive", "from_slice", 2.0, ">="),
        ("small lines: encode (write_line) vs going through to_json", "encode/small", "to_json_to_writer", "write_line", 3.0, ">="),
    ]
    + [
        (f"{LABELS[n]}: encode (write_line) vs the fastest of serde_json, sonic-rs", f"encode/{n}", ENCODE_PEERS, "write_line", 1.0, ">=")
        for n in INPUTS
    ]
    + [
        (f"{LABELS[n]}: v2 encode (write_line) vs the fastest of serde_json, sonic-rs", f"encode_v2/{n}", ENCODE_PEERS, "write_line", 1.0, ">=")
        for n in INPUTS
    ]
    + [
        (f"{LABELS[n]}: {rev}encode time vs copying the finished line", f"{group}/{n}", "write_line", "copy", 1.5, "<=")
        for group, rev in (("encode", ""), ("encode_v2", "v2 "))
        for n in CLEAN
    ]
    + [
        # The goal against the peers measured paired in the same rounds
        # (`encode_paired/`), where the separate figures swing most: sonic-rs
        # is the faster peer there.
        (f"{LABELS[n]}: {rev}encode (write_line) vs sonic-rs, paired in the same rounds", f"encode_paired/{n}", f"{rev}sonic_rs over write_line", None, 1.0, ">=")
        for rev in ("", "v2 ")
        for n in ("small", "noisy") + CLEAN
    ]
    + [
        (f"{LABELS[n]}: {rev}encode time vs copying the finished line, paired", f"encode_paired/{n}", f"{rev}write_line over copy", None, 1.5, "<=")
        for rev in ("", "v2 ")
        for n in CLEAN
    ]
    + [
        (f"{LABELS[n]}: v2 decode time vs v1 on the same text", f"v2/{n}", "v2 from_slice", "v1 from_slice", 1.05, "<=")
        for n in INPUTS
    ]
    + [
        ("small lines: v2 decode time vs v1, paired in the same rounds", "v2_paired/small", "v2 over v1", None, 1.05, "<="),
        ("prompt with a 1 MiB PNG: v2 decode time vs base64 decode + one copy", "v2/image_1mib", "v2 from_slice", "base64 decode + copy", 1.02, "<="),
        ("1 MiB of one escape-dense phrase repeated: v2 decode time vs the IgnoredAny floor", "decode/dense_1mib", "from_slice", "ignored_any_floor", 1.5, "<="),
    ]
)
# The event goals: rows of the same table, shown only when a run has the
# group (`goals_table` skips the others, so an older run reports as before).
EVENT_GOALS = (
    [
        (f"events, {EVENT_LABELS[n]}: decode (from_slice) vs the fastest of serde_json, sonic-rs", f"events_decode/{n}", EVENT_PEERS, "from_slice", 1.0, ">=")
        for n in EVENT_INPUTS
    ]
    + [
        (f"events, {EVENT_LABELS[n]}: encode (write_line) vs the fastest of serde_json, sonic-rs", f"events_encode/{n}", EVENT_PEERS, "write_line", 1.0, ">=")
        for n in EVENT_INPUTS
    ]
    + [
        ("events, 32 MiB of deltas: EventReader vs read_until + serde_json derive", "events_stream/deltas_32mib", "read_until_serde_json", "event_reader", 2.0, ">="),
    ]
)
# Shown beside the goals, without a goal of their own.
INFO = [
    ("noisy lines: decode vs the Value path", "decode/noisy", "value_path", "from_slice"),
    ("noisy lines: decode vs the tagged-derive enum", "decode/noisy", "tagged_derive", "from_slice"),
    ("1 MiB ASCII prompt: encode (write_line) vs to_json", "encode/ascii_1mib", "to_json_to_writer", "write_line"),
    ("1 MiB escaped prompt: encode (write_line) vs to_json", "encode/escaped_1mib", "to_json_to_writer", "write_line"),
] + [
    # The floors under "vs copying the finished line" for a safe encoder
    # behind `io::Write` (`encode_floors` in the bench).
    (f"{LABELS[n]}: {floor} over copy (floor, paired)", f"encode_paired/{n}", f"floor: {floor} over copy", None)
    for n in CLEAN
    for floor in ("through an 8 KiB buffer", "piece by piece")
] + [
    # The first floor timed alone, as "vs copying the finished line" is.
    (f"{LABELS[n]}: through an 8 KiB buffer over copy (floor, separate)", f"encode/{n}", "through an 8 KiB buffer", "copy")
    for n in CLEAN
] + [
    # The same text with its paragraph breaks made spaces: nothing escaped.
    (f"{LABELS['prose_1mib']} as one paragraph (nothing escaped): encode time vs copying the finished line", "encode/prose_1mib", "write_line, one paragraph", "copy, one paragraph"),
]


def load(criterion):
    """{group: {function: {"ns": median ns per iteration, "bytes": bytes per iteration}}}"""
    runs = {}
    for bench in Path(criterion).glob("**/new/benchmark.json"):
        meta = json.loads(bench.read_text())
        est = json.loads((bench.parent / "estimates.json").read_text())
        runs.setdefault(meta["group_id"], {})[meta["function_id"]] = {
            "ns": est["median"]["point_estimate"],
            "bytes": (meta.get("throughput") or {}).get("Bytes"),
        }
    return runs


def mib_s(entry):
    return entry["bytes"] / (entry["ns"] / 1e9) / (1 << 20)


def fmt_tp(v):
    return f"{v / 1024:.2f} GiB/s" if v >= 1024 else f"{v:.0f} MiB/s"


def fmt_time(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.2f} µs"


def ratio(runs, group, num, den):
    """time(num) / time(den); a tuple of contenders stands for the fastest.
    With no `den`, `num`'s value is a ratio already (`v2_paired/`,
    `encode_paired/`)."""
    g = runs.get(group, {})
    if den is None:
        return g[num]["ns"] if num in g else None

    def time(who):
        names = who if isinstance(who, tuple) else (who,)
        times = [g[n]["ns"] for n in names if n in g]
        return min(times) if len(times) == len(names) else None

    t_num, t_den = time(num), time(den)
    if t_num is None or t_den is None:
        return None
    return t_num / t_den


def peer_table(runs, previous):
    """For every input, each peer's time over from_slice's (below 1.0: the
    peer is faster), and from_slice's over the floor, in the median of the
    runs given."""
    everyone = [runs] + previous
    cols = list(PEERS) + ["value_path", "tagged_derive"]
    rows = [
        "| input | `from_slice` | " + " | ".join(f"`{c}`" for c in cols) + " | `from_slice` / floor |",
        "|" + " --- |" * (len(cols) + 3),
    ]
    for name in INPUTS:
        group = f"decode/{name}"
        if group not in runs or "from_slice" not in runs[group]:
            continue
        tp = median([mib_s(r[group]["from_slice"]) for r in everyone if group in r and "from_slice" in r[group]])
        cells = [fmt_tp(tp)]
        for c in cols + ["ignored_any_floor"]:
            num, den = (c, "from_slice") if c != "ignored_any_floor" else ("from_slice", c)
            vals = [v for v in (ratio(r, group, num, den) for r in everyone) if v is not None]
            if not vals:
                cells.append("–")
                continue
            v = median(vals)
            slower = c in PEERS and v < 1.0
            cells.append(f"**{v:.2f}**" if slower else f"{v:.2f}")
        rows.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def encode_peer_table(runs, previous, kind):
    """For every input, write_line's throughput, then each contender's time
    over write_line's (below 1.0: the contender is faster), in the median of
    the runs given."""
    everyone = [runs] + previous
    cols = ENCODE[1:] if kind == "encode" else ENCODE_V2[1:]
    rows = [
        "| input | `write_line` | " + " | ".join(f"`{c}`" for c in cols) + " |",
        "|" + " --- |" * (len(cols) + 2),
    ]
    for name in INPUTS:
        group = f"{kind}/{name}"
        if group not in runs or "write_line" not in runs[group]:
            continue
        tp = median([mib_s(r[group]["write_line"]) for r in everyone if group in r and "write_line" in r[group]])
        cells = [fmt_tp(tp)]
        for c in cols:
            vals = [v for v in (ratio(r, group, c, "write_line") for r in everyone) if v is not None]
            if not vals:
                cells.append("–")
                continue
            v = median(vals)
            slower = c in ENCODE_PEERS and v < 1.0
            cells.append(f"**{v:.2f}**" if slower else f"{v:.2f}")
        rows.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def event_table(runs, previous, kind, ours, cols):
    """For every event input, `ours`'s throughput, then each contender's time
    over `ours`'s (above 1.0: ours is faster; **bold**: a peer is faster), in
    the median of the runs given."""
    everyone = [runs] + previous
    rows = [
        f"| input | `{ours}` | " + " | ".join(f"`{c}`" for c in cols) + " |",
        "|" + " --- |" * (len(cols) + 2),
    ]
    for name in EVENT_INPUTS:
        group = f"{kind}/{name}"
        if group not in runs or ours not in runs[group]:
            continue
        tp = median([mib_s(r[group][ours]) for r in everyone if group in r and ours in r[group]])
        cells = [fmt_tp(tp)]
        for c in cols:
            vals = [v for v in (ratio(r, group, c, ours) for r in everyone) if v is not None]
            if not vals:
                cells.append("–")
                continue
            v = median(vals)
            slower = c in EVENT_PEERS and v < 1.0
            cells.append(f"**{v:.2f}**" if slower else f"{v:.2f}")
        rows.append(f"| {EVENT_LABELS[name]} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def event_sections(runs, previous):
    """The event direction's tables, or nothing when this run has none of
    its groups."""
    if not any(g.startswith("events_") for g in runs):
        return []
    return [
        "### Events: decode, every input against both peers",
        "",
        "`Event::from_slice`'s median throughput, then each contender's time over "
        "`from_slice`'s (above 1.0: `from_slice` is faster; **bold**: a peer is faster): "
        "`serde_json` and `sonic_rs` decode the `#[serde(tag = \"event\")]` enum a user "
        "would derive, each line into the owned event; the median of the runs above.",
        "",
        event_table(runs, previous, "events_decode", "from_slice", EVENT_DECODE[1:]),
        "",
        "### Events: encode, every input against both peers",
        "",
        "`Event::write_line`'s median throughput (into a reused `Vec`), then each "
        "contender's time over `write_line`'s: the same derive written by serde_json and "
        "sonic-rs into the same `Vec` (the same bytes, checked), and `copy` of the "
        "finished lines; the median of the runs above.",
        "",
        event_table(runs, previous, "events_encode", "write_line", EVENT_ENCODE[1:]),
        "",
        "### Events: median throughput (median time per iteration), this run",
        "",
        table(runs, "events_decode", EVENT_DECODE, EVENT_INPUTS),
        "",
        table(runs, "events_encode", EVENT_ENCODE, EVENT_INPUTS),
        "",
        "32 MiB of the deltas through a `BufReader` (8 KiB buffer): `EventReader`, and a "
        "`read_until` loop decoding each line into the derive with serde_json.",
        "",
        table(runs, "events_stream", EVENT_STREAM, EVENT_STREAM_INPUTS),
        "",
    ]


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def machine():
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load_avg = Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        load_avg = ["?"]
    return {
        "cpus": os.cpu_count(),
        "model": model,
        "rustc": sh("rustc", "--version"),
        "os": platform.platform(),
        "load": " ".join(load_avg),
    }


def table(runs, kind, contenders, inputs):
    head = "| input | " + " | ".join(f"`{c}`" for c in contenders) + " |"
    rows = [head, "|" + " --- |" * (len(contenders) + 1)]
    for name in inputs:
        g = runs.get(f"{kind}/{name}")
        if not g:
            continue
        cells = []
        for c in contenders:
            e = g.get(c)
            cells.append(f"{fmt_tp(mib_s(e))} ({fmt_time(e['ns'])})" if e else "–")
        size = next(iter(g.values()))["bytes"]
        rows.append(f"| `{name}` ({size:,} B) | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def goals_table(runs, previous):
    """This run's ratios, then each earlier run's; with earlier runs, the
    verdict is on the median of all of them."""
    everyone = [runs] + previous
    names = ["this run"] + [f"run {len(previous) - k}" for k in range(len(previous))]
    if previous:
        names.append("median")
    rows = [
        "| figure | goal | " + " | ".join(names) + " | pass |",
        "| --- | --- |" + " --- |" * len(names) + " --- |",
    ]

    def ratios(group, num, den):
        vals = [ratio(r, group, num, den) for r in everyone]
        known = [v for v in vals if v is not None]
        if previous:
            vals.append(median(known) if known else None)
        return vals

    def shown(vals):
        return " | ".join("–" if v is None else f"{v:.2f}x" for v in vals)

    present = set().union(*everyone)
    event_goals = [g for g in EVENT_GOALS if g[1] in present]
    for figure, group, num, den, goal, cmp in GOALS + event_goals:
        vals = ratios(group, num, den)
        judged = vals[-1]
        if judged is None:
            verdict = "?"
        else:
            ok = judged >= goal if cmp == ">=" else judged <= goal
            verdict = "pass" if ok else "**fail**"
        want = f"≥ {goal}x faster" if cmp == ">=" else f"≤ {goal}x"
        rows.append(f"| {figure} | {want} | {shown(vals)} | {verdict} |")
    for figure, group, num, den in INFO:
        rows.append(f"| {figure} | (no goal) | {shown(ratios(group, num, den))} | |")
    return "\n".join(rows)


def report(runs, previous, info):
    parts = [
        START,
        "",
        f"Machine: {info['cpus']} CPUs, `{info['model']}`, {info['os']}; `{info['rustc']}`; "
        f"load average when the report was written: {info['load']}.",
        "",
        "### Goals",
        "",
        "Ratios of median times per iteration, each within one run (`x faster` = the "
        "contender's time over ours). With several runs, the verdict is on their median.",
        "",
        goals_table(runs, previous),
        "",
        "### Decode: every class against every peer",
        "",
        "`from_slice`'s median throughput, then each contender's time over `from_slice`'s "
        "(above 1.0: `from_slice` is faster; **bold**: a peer is faster), and `from_slice`'s "
        "time over the IgnoredAny floor's; the median of the runs above.",
        "",
        peer_table(runs, previous),
        "",
        "### Decode: median throughput (median time per iteration), this run",
        "",
        table(runs, "decode", DECODE, INPUTS),
        "",
        "### Stream: median throughput (median time per iteration), this run",
        "",
        "32 MiB of small lines through a `BufReader` (8 KiB buffer); the floor splits "
        "the bytes on LF in memory and reads each line into `IgnoredAny`.",
        "",
        table(runs, "stream", STREAM, STREAM_INPUTS),
        "",
        "### Encode: every class against every peer",
        "",
        "`write_line`'s median throughput (into a reused `Vec`), then each contender's time "
        "over `write_line`'s (above 1.0: `write_line` is faster; **bold**: a peer is faster); "
        "`copy` copies the finished lines, the least an encoder can do; the median of the runs "
        "above. The seed revision, then the later one (`encode_v2`, the same commands).",
        "",
        encode_peer_table(runs, previous, "encode"),
        "",
        encode_peer_table(runs, previous, "encode_v2"),
        "",
        "### Encode: median throughput (median time per iteration), this run",
        "",
        "Bytes are those of the wire lines written; `floor` writes only the command's "
        "strings, escaped.",
        "",
        table(runs, "encode", ENCODE, INPUTS),
        "",
        table(runs, "encode_v2", ENCODE_V2, INPUTS),
        "",
        *event_sections(runs, previous),
        "![decode and encode throughput per contender and input](benchmarks.svg)",
        "",
        END,
    ]
    return "\n".join(parts)


COLORS = {
    "from_slice": "#1b7837", "write_line": "#1b7837",
    "value_path": "#8c6bb1", "to_line": "#5aae61",
    "tagged_derive": "#d6604d", "to_json_to_writer": "#8c6bb1",
    "ignored_any_floor": "#9e9e9e", "floor": "#9e9e9e",
    "serde_json": "#4575b4", "sonic_rs": "#fdae61", "simd_json": "#f46d43", "copy": "#9e9e9e",
    "command_reader": "#1b7837", "read_until_serde_json": "#4575b4",
    "split_ignored_any_floor": "#9e9e9e",
    "event_reader": "#1b7837",
}


def chart(runs):
    """Panels of horizontal bars, one panel per input, a row of panels for
    decode, encode and the stream; each panel has its own linear scale (the
    inputs differ by orders of magnitude), labelled in MiB/s or GiB/s."""
    pw, bar, gap, left, top, per_row = 320, 18, 5, 150, 30, 3
    rows = []
    for kind, contenders, inputs in [
        ("decode", DECODE, INPUTS),
        ("encode", ENCODE, INPUTS),
        ("stream", STREAM, STREAM_INPUTS),
        # Absent from an older run: no panel.
        ("events_decode", EVENT_DECODE, EVENT_INPUTS),
        ("events_encode", EVENT_ENCODE, EVENT_INPUTS),
        ("events_stream", EVENT_STREAM, EVENT_STREAM_INPUTS),
    ]:
        present = [n for n in inputs if f"{kind}/{n}" in runs]
        for k in range(0, len(present), per_row):
            rows.append((kind, contenders, present[k : k + per_row]))
    heights = [top + len(c) * (bar + gap) + 16 for _, c, _ in rows]
    width = 20 + per_row * (pw + 20)
    height = 40 + sum(heights)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="20" y="24" font-size="15" font-weight="bold">serve-command: median throughput '
        "per contender and input (longer is faster; each panel has its own scale)</text>",
    ]
    y0 = 40
    for (kind, contenders, present), ph in zip(rows, heights):
        for p, name in enumerate(present):
            g = runs[f"{kind}/{name}"]
            x0 = 20 + p * (pw + 20)
            out.append(f'<text x="{x0}" y="{y0 + top - 8}" font-size="12" font-weight="bold">{kind}/{name}</text>')
            best = max(mib_s(e) for e in g.values())
            span = pw - left - 64
            for i, c in enumerate(contenders):
                e = g.get(c)
                y = y0 + top + i * (bar + gap)
                out.append(f'<text x="{x0 + left - 6}" y="{y + bar * 0.75}" text-anchor="end">{html.escape(c)}</text>')
                if not e:
                    continue
                v = mib_s(e)
                w = max(1.0, span * v / best)
                out.append(f'<rect x="{x0 + left}" y="{y}" width="{w:.1f}" height="{bar}" fill="{COLORS.get(c, "#4575b4")}"/>')
                out.append(f'<text x="{x0 + left + w + 4:.1f}" y="{y + bar * 0.75}">{fmt_tp(v)}</text>')
        y0 += ph
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    default_dir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "criterion"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--criterion", default=str(default_dir), help="criterion's output directory")
    ap.add_argument("--snapshot", help="save this run's medians to this JSON file")
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        help="an earlier --snapshot, shown beside this run (repeatable; most recent first)",
    )
    ap.add_argument("--stdout", action="store_true", help="print the report instead of writing files")
    args = ap.parse_args()

    runs = load(args.criterion)
    if not runs:
        sys.exit(f"no criterion results under {args.criterion}: run `cargo bench -p serve-command-bench` first")
    previous = [json.loads(Path(f).read_text())["runs"] for f in args.compare]
    info = machine()
    text = report(runs, previous, info)
    if args.snapshot:
        Path(args.snapshot).write_text(json.dumps({"machine": info, "runs": runs}, indent=1))
    if args.stdout:
        print(text)
        return
    doc = REPORT.read_text() if REPORT.exists() else f"# Benchmarks\n\n{START}\n{END}\n"
    if START not in doc or END not in doc:
        sys.exit(f"{REPORT} lacks the bench-report markers")
    before, rest = doc.split(START, 1)
    after = rest.split(END, 1)[1]
    REPORT.write_text(before + text + after)
    CHART.write_text(chart(runs))
    print(f"wrote {REPORT.relative_to(ROOT)} and {CHART.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
