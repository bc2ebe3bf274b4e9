//! Errors of the data plane. Building a simulation validates everything and
//! names the offending config key; after that, a run fails only on deadlock (or,
//! in debug builds, on a broken conservation invariant, which is a bug).

use std::fmt;

/// One blocked (link, VL) channel of a deadlock cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedChannel {
    /// Transmitting node name.
    pub from_node: String,
    /// Transmitting port.
    pub from_port: u8,
    /// Receiving node name.
    pub to_node: String,
    /// Receiving port.
    pub to_port: u8,
    /// Virtual lane (15 for management).
    pub vl: u8,
}

impl fmt::Display for BlockedChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} -> {}:{} VL{}", self.from_node, self.from_port, self.to_node, self.to_port, self.vl)
    }
}

/// A data VL of an output port that packets wait for, but that the port's VL
/// arbitration tables never name: starvation, not a deadlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StarvedVl {
    /// Node name.
    pub node: String,
    /// Output port.
    pub port: u8,
    /// The VL no table entry serves.
    pub vl: u8,
    /// Packets waiting for it there (heads of buffers and their queues).
    pub packets: u64,
}

/// What the deadlock watchdog found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockReport {
    /// Simulated time at which the watchdog fired.
    pub time_ps: u64,
    /// Time of the last packet movement anywhere.
    pub last_progress_ps: u64,
    /// Since when the deadlocked buffers have held the same head packets (at
    /// the latest): `last_progress_ps` for a total stall.
    pub blocked_since_ps: u64,
    /// Other traffic kept moving: only part of the fabric is deadlocked.
    pub partial: bool,
    /// Buffers (input or output, per port and VL) in the deadlocked set.
    pub deadlocked_buffers: u64,
    /// Packets in the network (HCA send VL buffers, switch buffers, links).
    pub waiting_packets: u64,
    /// The cycle of blocked channels in wait-for order (each waits for the next,
    /// the last for the first). Empty when no cycle was found.
    pub cycle: Vec<BlockedChannel>,
    /// When no cycle was found: the VLs that packets wait for but no VL
    /// arbitration table serves, which explain the stall.
    pub starved: Vec<StarvedVl>,
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.starved.is_empty() {
            write!(f, "starvation at t = {} ps, not a deadlock: no packet has moved since t = {} ps; ", self.time_ps, self.last_progress_ps)?;
            for (i, s) in self.starved.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                let pk = if s.packets == 1 { "packet waits" } else { "packets wait" };
                write!(f, "{sep}VL{} at {}/{} ({} {pk})", s.vl, s.node, s.port, s.packets)?;
            }
            return write!(
                f,
                " is never sent, because that port's VL arbitration tables give it no entry with a weight above 0; \
                 add the VL to qos_vlarb_high or qos_vlarb_low, or map the SL to a VL the port serves (qos_sl2vl)"
            );
        }
        if self.partial {
            write!(
                f,
                "deadlock at t = {} ps, partial (other traffic still moves): {} buffers have been blocked on each other since t = {} ps or earlier ({} packets in the network)",
                self.time_ps, self.deadlocked_buffers, self.blocked_since_ps, self.waiting_packets
            )?;
        } else {
            write!(
                f,
                "deadlock at t = {} ps: no packet has moved since t = {} ps while {} wait",
                self.time_ps, self.last_progress_ps, self.waiting_packets
            )?;
        }
        if self.cycle.is_empty() {
            write!(f, "; no cycle of full buffers was found (the watchdog time may be too short)")
        } else {
            write!(f, "; cycle of blocked (link, VL) channels: ")?;
            for c in &self.cycle {
                write!(f, "{c} => ")?;
            }
            write!(f, "{}", self.cycle[0])
        }
    }
}

/// Everything that can go wrong building or running a simulation.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SimError {
    /// A configuration value (or the fabric/tables it refers to) is unusable.
    #[error("invalid simulation parameter '{key}': {msg}")]
    Config {
        /// Config key, dotted (`switch.input_buffer_bytes`, `traffic.classes[1].load`).
        key: String,
        /// What is wrong and what is expected.
        msg: String,
    },
    /// A configuration document that does not parse (syntax, unknown key, type).
    #[error("{origin}: {msg}")]
    Parse {
        /// File name or other origin of the text.
        origin: String,
        /// The parser's message, with line and column.
        msg: String,
    },
    /// The deadlock watchdog fired.
    #[error("{0}")]
    Deadlock(Box<DeadlockReport>),
    /// Packets were lost or invented: an internal error, checked in debug builds.
    #[error("packet conservation violated: generated {generated} != delivered {delivered} + dropped {dropped} + queued {queued}")]
    Conservation {
        /// Packets generated.
        generated: u64,
        /// Packets delivered.
        delivered: u64,
        /// Packets dropped.
        dropped: u64,
        /// Packets found in queues and on links.
        queued: u64,
    },
}

impl SimError {
    /// A config error for `key`.
    pub fn config(key: impl Into<String>, msg: impl Into<String>) -> Self {
        SimError::Config { key: key.into(), msg: msg.into() }
    }
}
