//! `trace --html`: one self-contained page of a recording, its timeline
//! drawn from the same attribution `trace` prints.
//!
//! The trace hands each record to [`Page`] as it reads it: its time, its
//! line, its label or attribution, and the words the text format writes
//! for it. The page holds, per record, a few numbers (columns: time, `n`,
//! what it answers, its turn, its name, its flags, its lane), compressed
//! (zlib) and inflated by the browser's own `DecompressionStream`; the
//! words and raw lines go in blocks of [`BLOCK`] records, each compressed
//! alone and inflated only when one of its records is selected. The
//! script and style are `page.js` and `page.css`, included at build time.

use base64::Engine as _;
use serde_json::{json, Value};
use serve_command::v2::serve::record::Wire;
use serve_command::v2::serve::{Attribution, Owed};
use std::collections::HashMap;
use std::io::{self, Write};

const TEMPLATE: &str = include_str!("page.html");
/// One run's view: its lanes, summary, detail, stats and data.
const VIEW: &str = include_str!("view.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// Records per block of words and raw lines.
const BLOCK: usize = 4096;
/// Flagged records whose words the summary lists, per kind of flag (all
/// are counted, and the page walks every one from its columns).
const LISTED: usize = 500;

/// A record's flags (one byte each).
const COMMAND: u8 = 1;
const VIOLATION: u8 = 2;
const REFUSED: u8 = 4;
const UNREADABLE: u8 = 8;
const NOT_EVENT: u8 = 16;
const OWED: u8 = 32;
/// A blank command line, or one the engine never read: owed nothing.
const IDLE: u8 = 64;

/// The lanes, top to bottom: the work (turns, compactions), requests and
/// their replies, the commands, and events attributed to nothing.
const WORK: u8 = 0;
const REPLIES: u8 = 1;
const COMMANDS: u8 = 2;
const STRAY: u8 = 3;

/// What the summary counts, each with its flag, in the page's order.
const FLAGGED: [(&str, u8); 5] = [
    ("violations", VIOLATION),
    ("refused", REFUSED),
    ("unreadable", UNREADABLE),
    ("not events", NOT_EVENT),
    ("owed", OWED),
];

/// A page being built, a record at a time.
pub struct Page {
    title: String,
    /// Why the axis is line order, once a record has no time (or one
    /// before the last).
    untimed: Option<String>,
    now: f64,
    t: Vec<f64>,
    n: Vec<u32>,
    answers: Vec<i32>,
    turn: Vec<i32>,
    code: Vec<u16>,
    flags: Vec<u8>,
    lane: Vec<u8>,
    names: Vec<String>,
    codes: HashMap<String, u16>,
    /// Each command line's and each event line's record, by `n` - 1.
    commands: Vec<u32>,
    events: Vec<u32>,
    /// Turns and compactions: first record, last record, command `n`,
    /// kind (0 a turn, 1 a compaction; +2 when still running at the end).
    spans: Vec<[u32; 4]>,
    open_turns: HashMap<u64, usize>,
    compaction: Option<usize>,
    /// Runs of one kind of delta in one turn: first record, last record,
    /// count; and the run going on (its name's code and turn).
    runs: Vec<[u32; 3]>,
    run: Option<(u16, i32)>,
    /// The words and raw lines of the block being filled, and the blocks
    /// done (compressed, base64).
    block: Vec<String>,
    blocks: Vec<String>,
    /// Up to [`LISTED`] flagged records per flag: the record and its words.
    listed: [Vec<(u32, String)>; 5],
}

impl Page {
    pub fn new(title: String) -> Page {
        Page {
            title,
            untimed: None,
            now: 0.0,
            t: Vec::new(),
            n: Vec::new(),
            answers: Vec::new(),
            turn: Vec::new(),
            code: Vec::new(),
            flags: Vec::new(),
            lane: Vec::new(),
            names: Vec::new(),
            codes: HashMap::new(),
            commands: Vec::new(),
            events: Vec::new(),
            spans: Vec::new(),
            open_turns: HashMap::new(),
            compaction: None,
            runs: Vec::new(),
            run: None,
            block: Vec::new(),
            blocks: Vec::new(),
            listed: Default::default(),
        }
    }

    /// The next record's time in microseconds (`at`: its line in the log).
    pub fn time(&mut self, t_us: Option<u64>, at: u64) {
        if self.untimed.is_some() {
            return;
        }
        match t_us {
            None => self.untimed = Some(format!("line {at} of the log has no time")),
            // Exact below 2^53 us (285 years).
            #[allow(clippy::cast_precision_loss)]
            Some(t) if !self.t.is_empty() && (t as f64) < self.now => {
                self.untimed = Some(format!("line {at}'s time is before the last record's"));
            }
            #[allow(clippy::cast_precision_loss)]
            Some(t) => self.now = t as f64,
        }
    }

    fn code_of(&mut self, name: &str) -> u16 {
        if let Some(&code) = self.codes.get(name) {
            return code;
        }
        let code = u16::try_from(self.names.len()).unwrap_or(u16::MAX);
        self.names.push(name.to_owned());
        self.codes.insert(name.to_owned(), code);
        code
    }

    /// Adds a record; returns its index.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        n: u64,
        name: &str,
        answers: Option<u64>,
        turn: Option<u64>,
        flags: u8,
        lane: u8,
        said: String,
        line: &Wire,
    ) -> u32 {
        let i = u32::try_from(self.t.len()).unwrap_or(u32::MAX);
        let code = self.code_of(name);
        let int = |k: Option<u64>| k.map_or(-1, |k| i32::try_from(k).unwrap_or(i32::MAX));
        self.t.push(self.now);
        self.n.push(u32::try_from(n).unwrap_or(u32::MAX));
        self.answers.push(int(answers));
        self.turn.push(int(turn));
        self.code.push(code);
        self.flags.push(flags);
        self.lane.push(lane);
        for (k, (_, flag)) in FLAGGED.iter().enumerate() {
            if flags & flag != 0 && self.listed[k].len() < LISTED {
                self.listed[k].push((i, said.clone()));
            }
        }
        self.block.push(said);
        self.block.push(match line {
            Wire::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Wire::TooLong => "(longer than the tap's line limit: the log holds no line)".to_owned(),
        });
        if self.block.len() == 2 * BLOCK {
            self.seal();
        }
        i
    }

    fn seal(&mut self) {
        let words = serde_json::to_vec(&self.block).unwrap_or_default();
        self.blocks.push(pack(&words));
        self.block.clear();
    }

    /// Command line `n`: `label` is its name, or `refused`, `blank` or
    /// `not read`; `said` the text format's words.
    pub fn command(&mut self, n: u64, label: &str, said: String, line: &Wire) {
        let flags = COMMAND
            | match label {
                "refused" => REFUSED,
                "blank" | "not read" => IDLE,
                _ => 0,
            };
        let i = self.push(n, label, None, None, flags, COMMANDS, said, line);
        self.commands.push(i);
    }

    /// An event line, as the model attributed it; `said` the text
    /// format's words, to which the page adds its turn, and for a line
    /// that is not an event (of which the text says no more) what the
    /// model made of it.
    pub fn event(&mut self, a: &Attribution, mut said: String, line: &Wire) {
        if a.event.is_none() {
            if let Some(name) = &a.unreadable {
                said += &format!(" (it names {name}, unreadable)");
            }
            if let Some(reason) = &a.violation {
                said += &format!(", attributed to nothing: {reason}");
            }
        }
        if let Some(turn) = a.turn {
            said += &format!(" (in the turn of command {turn})");
        }
        let name = a
            .event
            .or(a.unreadable.as_deref())
            .unwrap_or("not an event");
        let mut flags = 0;
        if a.violation.is_some() {
            flags |= VIOLATION;
        }
        if a.unreadable.is_some() {
            flags |= UNREADABLE;
        } else if a.event.is_none() {
            flags |= NOT_EVENT;
        }
        let compaction = name.starts_with("compaction_");
        let lane = if a.turn.is_some() || (compaction && a.answers.is_some()) {
            WORK
        } else if a.answers.is_some() || name == "approval_requested" {
            REPLIES
        } else {
            STRAY
        };
        let i = self.push(a.n, name, a.answers, a.turn, flags, lane, said, line);
        self.events.push(i);
        // Turns and compactions.
        if let Some(k) = a.turn {
            let span = *self.open_turns.entry(k).or_insert_with(|| {
                self.spans
                    .push([i, i, u32::try_from(k).unwrap_or(u32::MAX), 0]);
                self.spans.len() - 1
            });
            self.spans[span][1] = i;
            if matches!(name, "agent_finished" | "turn_failed" | "agent_aborted") {
                self.open_turns.remove(&k);
            }
        }
        if compaction {
            let k = a
                .answers
                .map_or(0, |k| u32::try_from(k).unwrap_or(u32::MAX));
            if name == "compaction_started" {
                self.spans.push([i, i, k, 1]);
                self.compaction = Some(self.spans.len() - 1);
            } else if let Some(span) = self.compaction.take() {
                self.spans[span][1] = i;
            }
        }
        // Runs of deltas.
        let code = self.code[i as usize];
        let turn = self.turn[i as usize];
        if name.ends_with("_delta") {
            match (self.run, self.runs.last_mut()) {
                (Some(run), Some(last)) if run == (code, turn) => {
                    last[1] = i;
                    last[2] += 1;
                }
                _ => {
                    self.runs.push([i, i, 1]);
                    self.run = Some((code, turn));
                }
            }
        } else {
            self.run = None;
        }
    }

    /// Writes the page of this one run (as [`Page::view`] makes it).
    pub fn finish(
        self,
        owed: &Owed,
        owed_words: &str,
        stats: Option<&[u8]>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let title = self.title.clone();
        let view = self.view("", "", owed, owed_words, stats);
        write_page(out, &title, "", &[view])
    }

    /// This run's view, its element ids ending in `sfx`, under `heading`
    /// (HTML): what is still owed (its `n`s, and the text format's words),
    /// and the `--stats` figures as `--format jsonl` writes them (`None`
    /// when the records have no times).
    pub fn view(
        mut self,
        sfx: &str,
        heading: &str,
        owed: &Owed,
        owed_words: &str,
        stats: Option<&[u8]>,
    ) -> String {
        let owed_records: Vec<u32> = owed
            .commands()
            .filter_map(|k| self.commands.get(usize::try_from(k).ok()?.checked_sub(1)?))
            .chain(
                owed.approvals
                    .iter()
                    .filter_map(|&k| self.events.get(usize::try_from(k).ok()?.checked_sub(1)?)),
            )
            .copied()
            .collect();
        let mut cache = None;
        for &i in &owed_records {
            self.flags[i as usize] |= OWED;
            let k = FLAGGED.len() - 1;
            if self.listed[k].len() < LISTED {
                let words = self.said(i, &mut cache);
                self.listed[k].push((i, words));
            }
        }
        for &span in self.open_turns.values().chain(&self.compaction) {
            self.spans[span][3] += 2;
        }
        self.spans.sort_unstable();
        if !self.block.is_empty() {
            self.seal();
        }
        let records = self.t.len();
        let mut index = Vec::with_capacity(records * 24 + self.spans.len() * 16);
        let mut layout = serde_json::Map::new();
        let mut column = |name: &str, bytes: Vec<u8>, index: &mut Vec<u8>| {
            // Each column starts on an 8-byte boundary, for typed arrays.
            while index.len() % 8 != 0 {
                index.push(0);
            }
            layout.insert(name.to_owned(), json!(index.len()));
            index.extend(bytes);
        };
        column("t", le(&self.t, |x| x.to_le_bytes()), &mut index);
        column("n", le(&self.n, |x| x.to_le_bytes()), &mut index);
        column(
            "answers",
            le(&self.answers, |x| x.to_le_bytes()),
            &mut index,
        );
        column("turn", le(&self.turn, |x| x.to_le_bytes()), &mut index);
        let spans: Vec<u32> = self.spans.iter().flatten().copied().collect();
        column("spans", le(&spans, |x| x.to_le_bytes()), &mut index);
        let runs: Vec<u32> = self.runs.iter().flatten().copied().collect();
        column("runs", le(&runs, |x| x.to_le_bytes()), &mut index);
        column("code", le(&self.code, |x| x.to_le_bytes()), &mut index);
        column("flags", self.flags.clone(), &mut index);
        column("lane", self.lane.clone(), &mut index);
        let counts: Vec<Value> = FLAGGED
            .iter()
            .zip(&self.listed)
            .map(|((name, flag), listed)| {
                let count = self.flags.iter().filter(|&&f| f & flag != 0).count();
                json!({"name": name, "flag": flag, "count": count, "listed": listed})
            })
            .collect();
        let stats: Vec<Value> = stats
            .unwrap_or_default()
            .split(|&b| b == b'\n')
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect();
        let meta = json!({
            "title": self.title,
            "records": records,
            "commands": self.commands.len(),
            "events": self.events.len(),
            "untimed": self.untimed,
            "names": self.names,
            "spans": self.spans.len(),
            "runs": self.runs.len(),
            "layout": layout,
            "index_bytes": index.len(),
            "block": BLOCK,
            "flagged": counts,
            "owed": owed_words,
            "stats": stats,
        });
        // In a script element: no `</script>`, nor `<!--`.
        let meta = meta.to_string().replace('<', "\\u003c");
        // A script element a block, and the columns in pieces of 256 KiB:
        // the parser takes each in a short task.
        let index: String = pack(&index)
            .as_bytes()
            .chunks(1 << 18)
            .map(|piece| {
                let piece = String::from_utf8_lossy(piece);
                format!("<script class=\"index{sfx}\" type=\"text/plain\">{piece}</script>\n")
            })
            .collect();
        let blocks: String = (self.blocks.iter().enumerate())
            .map(|(k, b)| format!("<script id=\"b{sfx}-{k}\" type=\"text/plain\">{b}</script>\n"))
            .collect();
        VIEW.replace("{{sfx}}", sfx)
            .replace("{{heading}}", heading)
            .replace("{{axis}}", if sfx.is_empty() { "time" } else { "commands" })
            .replace("{{meta}}", &meta)
            .replace("{{index}}", &index)
            .replace("{{blocks}}", &blocks)
    }

    /// The words of record `i`, from its block (`cache`: the last block
    /// inflated).
    fn said(&self, i: u32, cache: &mut Option<(usize, Vec<String>)>) -> String {
        let (block, at) = (i as usize / BLOCK, i as usize % BLOCK);
        if block >= self.blocks.len() {
            return self.block.get(2 * at).cloned().unwrap_or_default();
        }
        if cache.as_ref().map(|c| c.0) != Some(block) {
            let words = base64::engine::general_purpose::STANDARD
                .decode(&self.blocks[block])
                .ok()
                .and_then(|z| miniz_oxide::inflate::decompress_to_vec_zlib(&z).ok())
                .and_then(|w| serde_json::from_slice::<Vec<String>>(&w).ok());
            *cache = Some((block, words.unwrap_or_default()));
        }
        cache
            .as_ref()
            .and_then(|(_, words)| words.get(2 * at).cloned())
            .unwrap_or_default()
    }
}

/// Writes a page: `head` (HTML) above the `views`, and the script.
fn write_page(out: &mut impl Write, title: &str, head: &str, views: &[String]) -> io::Result<()> {
    let page = TEMPLATE
        .replace("{{title}}", &escape_html(title))
        .replace("{{style}}", STYLE)
        .replace("{{head}}", head);
    // The views and the script are written as they are: no placeholder in
    // them is filled.
    let (top, rest) = page.split_once("{{views}}").unwrap_or((&page, ""));
    let (middle, end) = rest.split_once("{{script}}").unwrap_or((rest, ""));
    out.write_all(top.as_bytes())?;
    for view in views {
        out.write_all(view.as_bytes())?;
    }
    out.write_all(middle.as_bytes())?;
    out.write_all(SCRIPT.as_bytes())?;
    out.write_all(end.as_bytes())
}

/// `replay --html`: the recording's view and this run's, aligned by
/// command, under the differences as the text report words them (each
/// `(command, words, crossed)`: crossings are noted, not counted).
pub fn write_replay(
    out: &mut impl Write,
    title: &str,
    report: &str,
    differences: &[(Option<u64>, String, bool)],
    recorded: String,
    replayed: String,
) -> io::Result<()> {
    let mut head = String::from("<section id=\"differences\"><h2>The differences</h2><ol>");
    for (command, words, crossed) in differences {
        let (class, word) = if *crossed {
            ("crossed", "crossed, not compared")
        } else {
            ("difference", "difference")
        };
        head += &format!(
            "<li class=\"{class}\"><span class=\"sym {class}\">{}</span>{word}",
            if *crossed { "⋈" } else { "Δ" }
        );
        match command {
            Some(n) => head += &format!(": <a href=\"#\" data-command=\"{n}\">command {n}</a>"),
            None => head += " (under no command)",
        }
        head += &format!("<pre>{}</pre></li>", escape_html(words));
    }
    if differences.is_empty() {
        head += "<li>none: the same conversation</li>";
    }
    let marks: Vec<Value> = differences
        .iter()
        .map(|(command, words, crossed)| json!({"command": command, "words": words, "crossed": crossed}))
        .collect();
    head += &format!(
        "</ol><h2>The report</h2><pre id=\"report\">{}</pre></section>\n<script id=\"differences-data\" type=\"application/json\">{}</script>",
        escape_html(report),
        serde_json::to_string(&marks).unwrap_or_default().replace('<', "\\u003c")
    );
    write_page(out, title, &head, &[recorded, replayed])
}

/// `bytes` compressed (zlib) and in base64.
fn pack(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(miniz_oxide::deflate::compress_to_vec_zlib(bytes, 6))
}

/// A column's values, little-endian.
fn le<T: Copy, const N: usize>(values: &[T], bytes: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| bytes(v)).collect()
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
