//! Trace replay: messages read from a text file, sent at the times it gives.
//!
//! Format (docs/formats.md "Traffic traces"): one message per line,
//!
//! ```text
//! # time_ns  source  destination  bytes  sl
//! 0          h0      h1           256    0
//! 1500.5     h1:1    h0           4096   2
//! ```
//!
//! whitespace separated; `#` starts a comment (whole line or trailing); blank
//! lines are skipped. `time_ns` is a non-negative decimal number of
//! nanoseconds, multiplied by the trace's `time_scale` and rounded to the
//! picosecond; source and destination are hosts as the fabric names them
//! (`node`, or `node:port` for a CA with several cabled ports); `bytes` is the
//! message payload (> 0), split by the HCA into MTU-sized packets, the last one
//! shorter; `sl` is 0..=15. Messages must be in non-decreasing time order: an
//! out-of-order line is an error rather than silently sorted, since it usually
//! means a badly merged file (`sort -g -k1,1` fixes a file whose order does not
//! matter).
//!
//! The file is parsed once into a compact [`Message`] array; the simulation
//! keeps a cursor per trace and one pending event for its next message, so a
//! long trace costs 24 bytes per message and nothing in the event queue.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::engine::{Time, MAX_TIME_PS, PS_PER_NS};
use crate::error::SimError;

fn one() -> f64 {
    1.0
}

/// One trace in the config (a `traffic.traces` entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Name in results; empty = the file name without directory and extension.
    #[serde(default)]
    pub name: String,
    /// Path of the trace file (relative paths are relative to the working directory).
    pub file: String,
    /// Factor applied to every time in the file (paper 003's time compression:
    /// 0.5 replays the trace twice as fast).
    #[serde(default = "one")]
    pub time_scale: f64,
}

impl TraceConfig {
    /// The name results use.
    pub fn display_name(&self) -> String {
        if !self.name.is_empty() {
            return self.name.clone();
        }
        let p = std::path::Path::new(&self.file);
        p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| self.file.clone())
    }
}

/// One message of a parsed trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Generation time, scaled, in picoseconds.
    pub at: Time,
    /// Payload bytes.
    pub bytes: u32,
    /// Source host index.
    pub src: u32,
    /// Destination host index.
    pub dst: u32,
    /// Service level.
    pub sl: u8,
}

/// A parsed trace and its replay cursor.
#[derive(Debug, Clone)]
pub struct Trace {
    /// Class whose statistics its packets count in.
    pub class: u8,
    /// The messages, in time order.
    pub messages: Vec<Message>,
    /// Index of the next message to send.
    pub next: usize,
    /// Distinct `(sl, source host)` pairs, to know which links' capacity the
    /// offered fraction is relative to.
    pub senders: Vec<(u8, u32)>,
}

impl Trace {
    /// A trace of `messages` counting in class `class`.
    pub fn new(class: u8, messages: Vec<Message>) -> Self {
        let mut senders: Vec<(u8, u32)> = messages.iter().map(|m| (m.sl, m.src)).collect();
        senders.sort_unstable();
        senders.dedup();
        Trace { class, messages, next: 0, senders }
    }

    /// Time of the next message, if any is left.
    #[inline]
    pub fn due(&self) -> Option<Time> {
        self.messages.get(self.next).map(|m| m.at)
    }
}

/// Parses trace `text` read from `file`; `resolve` maps a host name to its
/// index. Errors are [`SimError::Parse`] with origin `file:line`.
pub fn parse(
    text: &str,
    file: &str,
    time_scale: f64,
    resolve: &dyn Fn(&str) -> Result<u32, String>,
) -> Result<Vec<Message>, SimError> {
    let mut hosts: HashMap<&str, u32> = HashMap::new();
    let mut messages = Vec::new();
    let mut prev: Option<(f64, usize)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |msg: String| SimError::Parse { origin: format!("{file}:{line}"), msg };
        let content = raw.split('#').next().unwrap_or("");
        let f: Vec<&str> = content.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() != 5 {
            return Err(err(format!(
                "expected 5 fields 'time_ns source destination bytes sl', got {}: '{}'",
                f.len(),
                content.trim()
            )));
        }
        let t: f64 = f[0].parse().map_err(|_| err(format!("time '{}' is not a number of nanoseconds", f[0])))?;
        if !t.is_finite() || t < 0.0 {
            return Err(err(format!("time {} ns must be a finite number >= 0", f[0])));
        }
        if let Some((pt, pl)) = prev {
            if t < pt {
                return Err(err(format!(
                    "time {t} ns is earlier than {pt} ns on line {pl}; messages must be in time order (sort -g -k1,1)"
                )));
            }
        }
        prev = Some((t, line));
        let ps = (t * PS_PER_NS as f64 * time_scale).round();
        if ps > MAX_TIME_PS as f64 {
            return Err(err(format!("time {t} ns (× time_scale {time_scale}) is too late to simulate")));
        }
        let mut ends = [0u32; 2];
        for (k, name) in [f[1], f[2]].into_iter().enumerate() {
            ends[k] = match hosts.get(name) {
                Some(&h) => h,
                None => {
                    let h = resolve(name).map_err(|m| err(format!("host '{name}': {m}")))?;
                    hosts.insert(name, h);
                    h
                }
            };
        }
        let [src, dst] = ends;
        if src == dst {
            return Err(err(format!("source '{}' and destination '{}' are the same host", f[1], f[2])));
        }
        let bytes: u64 = f[3].parse().map_err(|_| err(format!("bytes '{}' is not a whole number", f[3])))?;
        if bytes == 0 || bytes > u32::MAX as u64 {
            return Err(err(format!("bytes must be 1..={}, got {bytes}", u32::MAX)));
        }
        let sl: u32 = f[4].parse().map_err(|_| err(format!("SL '{}' is not a whole number", f[4])))?;
        if sl > 15 {
            return Err(err(format!("SL {sl} is not 0..=15")));
        }
        messages.push(Message { at: ps as Time, bytes: bytes as u32, src, dst, sl: sl as u8 });
    }
    if messages.is_empty() {
        return Err(SimError::Parse { origin: file.to_string(), msg: "the trace has no messages".into() });
    }
    Ok(messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(s: &str) -> Result<u32, String> {
        let (n, port) = s.split_once(':').unwrap_or((s, "1"));
        match (n.strip_prefix('h').and_then(|n| n.parse::<u32>().ok()), port) {
            (Some(h), "1") if h < 4 => Ok(h),
            _ => Err(format!("unknown node '{n}'")),
        }
    }

    #[test]
    fn parses_comments_blank_lines_and_scale() {
        let text = "# a trace\n\n0 h0 h1 256 0\n  1500.5\th1:1  h0 4096 2   # trailing\n1500.5 h2 h3 1 15\n";
        let m = parse(text, "t.trace", 2.0, &resolve).unwrap();
        assert_eq!(
            m,
            vec![
                Message { at: 0, bytes: 256, src: 0, dst: 1, sl: 0 },
                Message { at: 3_001_000, bytes: 4096, src: 1, dst: 0, sl: 2 },
                Message { at: 3_001_000, bytes: 1, src: 2, dst: 3, sl: 15 },
            ]
        );
        let t = Trace::new(4, m);
        assert_eq!(t.senders, vec![(0, 0), (2, 1), (15, 2)]);
        assert_eq!(t.due(), Some(0));
        assert_eq!(std::mem::size_of::<Message>(), 24);
    }

    #[test]
    fn every_error_names_file_and_line() {
        let cases = [
            ("0 h0 h1 256\n", "t:1: expected 5 fields"),
            ("0 h0 h1 256 0\nsoon h0 h1 256 0\n", "t:2: time 'soon'"),
            ("-1 h0 h1 256 0\n", "t:1: time -1 ns must be a finite number >= 0"),
            ("NaN h0 h1 256 0\n", "t:1: time NaN"),
            ("10 h0 h1 256 0\n# c\n5 h0 h1 256 0\n", "t:3: time 5 ns is earlier than 10 ns on line 1"),
            ("0 h0 h9 256 0\n", "t:1: host 'h9': unknown node 'h9'"),
            ("0 h0 h1 0 0\n", "t:1: bytes must be 1..="),
            ("0 h0 h1 -5 0\n", "t:1: bytes '-5'"),
            ("0 h0 h1 99999999999 0\n", "t:1: bytes must be 1..="),
            ("0 h0 h1 256 16\n", "t:1: SL 16 is not 0..=15"),
            ("0 h0 h1 256 x\n", "t:1: SL 'x'"),
            ("0 h0 h0:1 256 0\n", "t:1: source 'h0' and destination 'h0:1' are the same host"),
            ("# nothing\n\n", "t: the trace has no messages"),
        ];
        for (text, want) in cases {
            let e = parse(text, "t", 1.0, &resolve).unwrap_err();
            assert!(matches!(e, SimError::Parse { .. }));
            let e = e.to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn name_defaults_to_the_file_stem() {
        let c = |name: &str| TraceConfig { name: name.into(), file: "dir/io-trace.txt".into(), time_scale: 1.0 };
        assert_eq!(c("").display_name(), "io-trace");
        assert_eq!(c("disk").display_name(), "disk");
    }
}
