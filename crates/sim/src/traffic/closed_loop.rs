//! Closed-loop sources: each sending host keeps at most `window` messages
//! outstanding, and the next message leaves `gap_ns` after one completes
//! (ib_flit_sim's generator is the `window = 1` case: it waits for its
//! previous message). A message is complete when its last packet has been
//! delivered or, with `transport.ack` set, when the acknowledgement of it is
//! back at the source (see `hca/transport.rs`). At time 0 every source sends
//! `window` messages at once. Destinations come from the class's pattern;
//! messages larger than the MTU are split into MTU-sized packets.

use serde::{Deserialize, Serialize};

use super::{PathBits, PatternConfig, Source};
use crate::engine::Time;

/// One closed-loop class (`[[traffic.closed_loop]]`); in results it is one
/// more class, after the traces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClosedLoopConfig {
    /// Name used in results.
    pub name: String,
    /// Service level 0..=15.
    pub sl: u8,
    /// Destinations of the messages (the pattern decides which hosts send).
    pub pattern: PatternConfig,
    /// Messages a source keeps outstanding, at least 1.
    pub window: u32,
    /// Payload bytes per message (split into packets of at most the MTU).
    pub message_bytes: u32,
    /// Nanoseconds between a message's completion and the next message.
    pub gap_ns: f64,
    /// Choice of DLID path bits (per message).
    pub path_bits: PathBits,
}

impl Default for ClosedLoopConfig {
    fn default() -> Self {
        ClosedLoopConfig {
            name: "closed-loop".into(),
            sl: 0,
            pattern: PatternConfig::Uniform,
            window: 1,
            message_bytes: 2048,
            gap_ns: 0.0,
            path_bits: PathBits::Base,
        }
    }
}

/// One sending host of a closed-loop class.
#[derive(Debug, Clone)]
pub struct ClosedLoopSource {
    /// Host, class and random stream (for destinations and path bits).
    pub src: Source,
    /// Most messages outstanding.
    pub window: u32,
    /// Payload bytes per message.
    pub message_bytes: u32,
    /// Gap after a completion.
    pub gap_ps: Time,
    /// Messages outstanding now.
    pub outstanding: u32,
    /// Most messages ever outstanding at once.
    pub peak_outstanding: u32,
    /// Messages sent.
    pub sent: u64,
}
