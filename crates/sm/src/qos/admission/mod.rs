//! Bandwidth reservation and VL arbitration tables computed per connection,
//! after Alfaro, Sánchez and Duato, "A Strategy to Compute the InfiniBand
//! Arbitration Tables" (UCLM TR DIAB-01-02-20, 2001; paper 001 here).
//!
//! The subnet manager sees connection requests (source CA, destination CA,
//! traffic class, mean bandwidth) and, for each, reserves *slots* on every
//! output port of the connection's path (the source CA port included) and
//! writes them into the port's VL arbitration table. The scheme (§4 of 001):
//!
//! - **Classes and SLs.** DBTS and DB connections are split by mean bandwidth
//!   into four bands (≤ 64 kb/s, ≤ 1.55 Mb/s, ≤ 64 Mb/s, above), each an SL
//!   with its own VL. DBTS goes to the high-priority table, DB, BE and CH to
//!   the low one. Our SL numbering ([`sl_of`]): DB bands are SL 0–3 (the SLs
//!   §5.2 of the paper simulates), DBTS bands SL 4–7, BE SL 8, CH SL 9; SL *i*
//!   uses VL *i*, so ports operate 15 data VLs (IBA allows 1, 2, 4, 8 or 15;
//!   the paper asks for "at least 11").
//! - **Frame.** A table of 64 entries of weight 255, each weight unit being
//!   64 bytes, is a frame of [`FRAME_SLOTS`] = 16320 slots. A connection of
//!   mean bandwidth B on a link of rate B_link needs
//!   ⌈B / B_link × 16320⌉ slots ([`slots_for`]). Every weight is computed
//!   against that same frame, so accepting a connection never changes the
//!   entries of earlier ones.
//! - **Entries.** The connections of one SL share a table entry until its
//!   weight reaches 255, then take the next free entry ([`table`]).
//! - **BE and CH.** Before any connection, each port's low table holds BE
//!   entries worth a configurable share of the frame (20 % in the paper) and
//!   one CH entry of weight 1. The BE share is not available to DB/DBTS.
//! - **Admission.** A connection is accepted only if every output port on its
//!   path has both the slots and the table entries; otherwise it is rejected
//!   at the first port that lacks them and whatever it reserved upstream is
//!   released ([`Admission::admit`]).
//!   [`EntryLimit::None`] lets only the slots refuse, as the paper's "the
//!   number of table entries is not a limitation [...], but only the
//!   available bandwidth" reads (what the table cannot hold is counted as
//!   overflow); [`EntryLimit::Vl`] does too but refuses a connection whose
//!   VL would have no entry on a port (never served there, it would starve);
//!   [`SourcePort::Unchecked`] admits on switch ports only.
//!
//! Choices the paper leaves open, and ours:
//! - The link rate is the signalling rate (2.5 Gb/s per SDR lane), as the
//!   paper's Table 1 uses; [`RateBasis::Data`] divides by the rate after
//!   encoding instead.
//! - How DBTS bandwidth and DB bandwidth share a port is not said (the paper
//!   evaluates DB only). We charge both to one budget per port, the frame
//!   minus the BE share, since both are carried by the same link; the high
//!   and low tables each have their own 64 entries.
//! - `LimitOfHighPriority` is not given; we program 255 (no bound), so
//!   reserved DBTS traffic is never held behind DB. It is a parameter.
//! - SLs 10–15 are unused by the scheme and map to the BE VL, so stray
//!   traffic is carried as best effort rather than dropped.
//! - BE and CH requests reserve nothing (they use the BE/CH entries set up
//!   front); they are accepted whenever the route exists.
//!
//! [`setup`] is the paper's connection-setup experiment (§5.2): random
//! connections spread evenly over the four SLs until N are established or
//! an SL runs out of retries.
//! docs/qos.md ("Why our counts differ from the paper's") measures how each
//! of these choices moves the paper's Tables 2–4.

pub mod control;
pub mod setup;
pub mod table;

#[cfg(test)]
mod tests;

pub use control::{
    Admission, AdmissionConfig, ConnId, Connection, Decision, EntryLimit, PortUsage, RateBasis, Rejection, SourcePort,
};
pub use setup::{run_setup, Established, SetupParams, SetupReport, SlOrder, StopRule, PAPER_BANDS_BPS, PAPER_TEXT_BANDS_BPS};
pub use table::{max_be_slots, slots_for, ArbTable, PortState, Priority, Reservation, Shortfall, FRAME_SLOTS, MAX_WEIGHT};

use super::Sl2VlMap;

/// Traffic classes of Pelissier (Hot Interconnects 2000), used by paper 001 §4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrafficClass {
    /// Dedicated bandwidth, time sensitive: high-priority table.
    Dbts,
    /// Dedicated bandwidth: low-priority table.
    Db,
    /// Best effort: the reserved BE entries of the low table.
    Be,
    /// Challenged: the single weight-1 CH entry of the low table.
    Ch,
}

impl TrafficClass {
    /// Parses `DBTS`, `DB`, `BE` or `CH` (any case).
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_uppercase().as_str() {
            "DBTS" => Some(TrafficClass::Dbts),
            "DB" => Some(TrafficClass::Db),
            "BE" => Some(TrafficClass::Be),
            "CH" => Some(TrafficClass::Ch),
            _ => None,
        }
    }

    /// The upper-case name.
    pub fn name(self) -> &'static str {
        match self {
            TrafficClass::Dbts => "DBTS",
            TrafficClass::Db => "DB",
            TrafficClass::Be => "BE",
            TrafficClass::Ch => "CH",
        }
    }

    /// True for the classes that reserve bandwidth.
    pub fn reserves(self) -> bool {
        matches!(self, TrafficClass::Dbts | TrafficClass::Db)
    }
}

/// Upper bounds (inclusive, bit/s) of bandwidth bands 0, 1 and 2; band 3 is above.
pub const BAND_LIMITS_BPS: [u64; 3] = [64_000, 1_550_000, 64_000_000];

/// SL of BE traffic.
pub const BE_SL: u8 = 8;
/// SL of CH traffic.
pub const CH_SL: u8 = 9;
/// Data VLs the scheme needs ports to operate (SLs 0–9 on VLs 0–9, IBA's next count is 15).
pub const DATA_VLS: u8 = 15;

/// Bandwidth band 0..=3 of a mean bandwidth (§4.1: ≤ 64 kb/s, ≤ 1.55 Mb/s, ≤ 64 Mb/s, above).
pub fn band(bw_bps: u64) -> u8 {
    BAND_LIMITS_BPS.iter().position(|&lim| bw_bps <= lim).unwrap_or(3) as u8
}

/// The SL of a connection: DB bands 0–3, DBTS bands 4–7, BE 8, CH 9.
pub fn sl_of(class: TrafficClass, bw_bps: u64) -> u8 {
    match class {
        TrafficClass::Db => band(bw_bps),
        TrafficClass::Dbts => 4 + band(bw_bps),
        TrafficClass::Be => BE_SL,
        TrafficClass::Ch => CH_SL,
    }
}

/// The SL2VL table every port gets: SL *i* → VL *i* for SLs 0–9, the rest → the BE VL.
pub fn sl2vl() -> Sl2VlMap {
    let mut m = [BE_SL; 16];
    for (sl, vl) in m.iter_mut().enumerate().take(CH_SL as usize + 1) {
        *vl = sl as u8;
    }
    m
}

/// The table an SL's VL is arbitrated in: DBTS SLs in the high one.
pub fn priority_of_sl(sl: u8) -> Priority {
    if (4..8).contains(&sl) {
        Priority::High
    } else {
        Priority::Low
    }
}
