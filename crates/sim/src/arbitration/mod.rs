//! Output VL arbitration: which VL a port transmits next.
//!
//! VL15 always goes first (strict priority, IBA 7.6.9); the data VLs are then
//! chosen by a [`VlArbiter`]: `iba` ([`iba_vlarb`], the two-table weighted
//! scheme of IBA 7.6.9) or `round-robin` ([`round_robin`], packet by packet).
//! An arbiter sees which VL slots have a packet that may start now (data
//! present, and credits for the whole packet) and picks one; its per-port state
//! lives in [`VlArbState`]. Dispatch is a `match`, no trait objects.

pub mod iba_vlarb;
pub mod round_robin;

use crate::error::SimError;
use crate::qos::VlArbConfig;

pub use iba_vlarb::IbaVlArb;
pub use round_robin::RoundRobinVlArb;

/// A compiled VLArbitration table, weights and limit in 64-byte blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlArbTable {
    /// High-priority `(VL slot, weight in blocks)`.
    pub high: Vec<(u8, u16)>,
    /// Low-priority `(VL slot, weight in blocks)`.
    pub low: Vec<(u8, u16)>,
    /// High-priority blocks after which a ready low-priority packet goes first;
    /// `None` = unbounded (`LimitOfHighPriority` 255).
    pub high_limit_blocks: Option<u32>,
}

impl VlArbTable {
    /// Whether some entry gives data VL `slot` a turn (a weight above 0); a
    /// VL no entry names is never sent (IBA 7.6.9).
    pub fn serves(&self, slot: u8) -> bool {
        self.high.iter().chain(&self.low).any(|&(v, w)| v == slot && w > 0)
    }

    /// Compiles an IBA table (data VL numbers are slot numbers).
    pub fn from_config(c: &VlArbConfig) -> Self {
        let conv = |t: &Vec<(u8, u8)>| t.iter().map(|&(vl, w)| (vl, w as u16)).collect();
        VlArbTable {
            high: conv(&c.high),
            low: conv(&c.low),
            high_limit_blocks: match c.limit_of_high_priority {
                255 => None,
                // 0 means "one packet": any positive count reaches it.
                0 => Some(1),
                l => Some(l as u32 * 4096 / crate::credits::CREDIT_BYTES),
            },
        }
    }
}

/// "No current entry" (before the first packet of a table).
pub const NO_ENTRY: u8 = u8::MAX;

/// Per-port arbitration state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlArbState {
    /// Current entry of the high table.
    pub high_idx: u8,
    /// Blocks left in the current high entry's weight (≤ 0: exhausted).
    pub high_rem: i32,
    /// Current entry of the low table.
    pub low_idx: u8,
    /// Blocks left in the current low entry's weight.
    pub low_rem: i32,
    /// High-priority blocks sent since a low-priority packet last went.
    pub high_sent: u32,
    /// Next slot for round robin.
    pub rr_next: u8,
}

impl Default for VlArbState {
    fn default() -> Self {
        VlArbState { high_idx: NO_ENTRY, high_rem: 0, low_idx: NO_ENTRY, low_rem: 0, high_sent: 0, rr_next: 0 }
    }
}

/// The VL arbitration policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlArbiter {
    /// IBA two-table weighted arbitration.
    Iba(IbaVlArb),
    /// Packet-by-packet round robin over data VLs.
    RoundRobin(RoundRobinVlArb),
}

impl VlArbiter {
    /// Whether this arbiter ever sends data VL `slot` of a port with `table`:
    /// the IBA arbiter only what the table names, round robin every VL.
    pub fn serves(&self, table: &VlArbTable, slot: u8) -> bool {
        match self {
            VlArbiter::Iba(_) => table.serves(slot),
            VlArbiter::RoundRobin(_) => true,
        }
    }

    /// Registry names.
    pub const NAMES: &'static [&'static str] = &[IbaVlArb::NAME, RoundRobinVlArb::NAME];

    /// The arbiter called `name`; the error lists the valid names.
    pub fn from_name(name: &str, key: &str) -> Result<Self, SimError> {
        match name {
            IbaVlArb::NAME => Ok(VlArbiter::Iba(IbaVlArb)),
            RoundRobinVlArb::NAME => Ok(VlArbiter::RoundRobin(RoundRobinVlArb)),
            _ => Err(SimError::config(
                key,
                format!("unknown VL arbiter '{name}' (known: {})", Self::NAMES.join(", ")),
            )),
        }
    }

    /// Picks the data VL slot to send from. `ready` has bit `s` set when slot
    /// `s` can start a packet now; `blocks(s)` is that packet's size in blocks.
    /// The choice is committed to `state` (the caller sends that packet).
    #[inline]
    pub fn pick(
        &self,
        table: &VlArbTable,
        state: &mut VlArbState,
        ready: u16,
        data_slots: u8,
        blocks: impl Fn(u8) -> u16,
    ) -> Option<u8> {
        if ready == 0 {
            return None;
        }
        match self {
            VlArbiter::Iba(a) => a.pick(table, state, ready, blocks),
            VlArbiter::RoundRobin(a) => a.pick(state, ready, data_slots),
        }
    }
}
