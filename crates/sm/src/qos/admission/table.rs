//! One output port's slot budget and its two arbitration tables, as the
//! admission control of paper 001 §4.2 fills them.
//!
//! Entries are kept at fixed positions (0..64): an entry once given to an SL
//! keeps its index while any connection holds weight in it, so accepting or
//! releasing one connection touches only that connection's entries. A free
//! position has weight 0, which IBA arbitration skips.

use super::{BE_SL, CH_SL};
use crate::qos::vlarb::VLARB_MAX_ENTRIES;

/// Slots of a frame: 64 entries × weight 255, each unit 64 bytes.
pub const FRAME_SLOTS: u32 = (VLARB_MAX_ENTRIES as u32) * MAX_WEIGHT as u32;

/// Largest weight of an IBA arbitration entry.
pub const MAX_WEIGHT: u8 = 255;

/// Slots a connection of mean bandwidth `bw_bps` needs on a link of `link_bps`:
/// ⌈bw / link × 16320⌉ (paper 001 §4.2), in exact integer arithmetic.
///
/// # Panics
/// If `link_bps` is 0 (no link: the caller checks).
pub fn slots_for(bw_bps: u64, link_bps: u64) -> u32 {
    assert!(link_bps > 0, "slots_for on a link of rate 0");
    let n = (bw_bps as u128 * FRAME_SLOTS as u128).div_ceil(link_bps as u128);
    n.min(u32::MAX as u128) as u32
}

/// High- or low-priority table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Priority {
    /// The high-priority table (DBTS).
    High,
    /// The low-priority table (DB, BE, CH).
    Low,
}

impl Priority {
    /// `high` or `low`.
    pub fn name(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Low => "low",
        }
    }
}

/// A VL arbitration table with entries at fixed positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArbTable {
    /// `(VL, weight)` per position; weight 0 is a free position (VL reset to 0).
    entries: [(u8, u8); VLARB_MAX_ENTRIES],
}

impl Default for ArbTable {
    fn default() -> Self {
        ArbTable { entries: [(0, 0); VLARB_MAX_ENTRIES] }
    }
}

impl ArbTable {
    /// Positions with weight 0.
    pub fn free_entries(&self) -> usize {
        self.entries.iter().filter(|e| e.1 == 0).count()
    }

    /// Positions in use.
    pub fn used_entries(&self) -> usize {
        VLARB_MAX_ENTRIES - self.free_entries()
    }

    /// Sum of the weights.
    pub fn total_weight(&self) -> u32 {
        self.entries.iter().map(|e| e.1 as u32).sum()
    }

    /// `(VL, weight)` at every position up to the last used one, free ones as `(0, 0)`.
    pub fn entries(&self) -> &[(u8, u8)] {
        let n = self.entries.iter().rposition(|e| e.1 != 0).map_or(0, |i| i + 1);
        &self.entries[..n]
    }

    /// Where `slots` of `vl` would go: first the room left in entries already
    /// serving `vl` (in position order), then new entries of up to 255 at the
    /// lowest free positions. `Err(new entries needed)` when they do not fit.
    fn plan(&self, vl: u8, slots: u32) -> Result<Vec<(u8, u8)>, usize> {
        let (grants, left) = self.plan_upto(vl, slots);
        if left == 0 {
            return Ok(grants);
        }
        let in_free: u32 = grants.iter().filter(|g| self.entries[g.0 as usize].1 == 0).map(|g| g.1 as u32).sum();
        Err((left + in_free).div_ceil(MAX_WEIGHT as u32) as usize)
    }

    /// As much of `slots` as the table holds, in [`Self::plan`]'s order, and the
    /// slots left over.
    fn plan_upto(&self, vl: u8, slots: u32) -> (Vec<(u8, u8)>, u32) {
        let mut left = slots;
        let mut grants = Vec::new();
        for (i, &(v, w)) in self.entries.iter().enumerate() {
            if left == 0 {
                break;
            }
            if w != 0 && v == vl && w < MAX_WEIGHT {
                let take = left.min((MAX_WEIGHT - w) as u32);
                grants.push((i as u8, take as u8));
                left -= take;
            }
        }
        for (i, &(_, w)) in self.entries.iter().enumerate() {
            if left == 0 {
                break;
            }
            if w == 0 {
                let take = left.min(MAX_WEIGHT as u32);
                grants.push((i as u8, take as u8));
                left -= take;
            }
        }
        (grants, left)
    }

    fn apply(&mut self, vl: u8, grants: &[(u8, u8)]) {
        for &(i, amount) in grants {
            let e = &mut self.entries[i as usize];
            debug_assert!(e.1 == 0 || e.0 == vl);
            *e = (vl, e.1 + amount);
        }
    }

    fn remove(&mut self, grants: &[(u8, u8)]) {
        for &(i, amount) in grants {
            let e = &mut self.entries[i as usize];
            e.1 -= amount;
            if e.1 == 0 {
                e.0 = 0;
            }
        }
    }
}

/// What a port lacks for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortfall {
    /// Not enough unreserved slots in the frame.
    Bandwidth {
        /// Slots the connection needs here.
        needed: u32,
        /// Slots still free for DB/DBTS.
        free: u32,
    },
    /// Enough slots, but not enough free table entries.
    Entries {
        /// The table.
        priority: Priority,
        /// New entries the connection needs.
        needed: usize,
        /// Free entries.
        free: usize,
    },
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shortfall::Bandwidth { needed, free } => write!(f, "bandwidth: needs {needed} slots, {free} free"),
            Shortfall::Entries { priority, needed, free } => {
                write!(f, "table entries: needs {needed} new {} entries, {free} free", priority.name())
            }
        }
    }
}

/// What one connection holds on one port; give it back to [`PortState::release`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// The table.
    pub priority: Priority,
    /// Slots reserved.
    pub slots: u32,
    /// `(position, weight)` added to the table.
    pub grants: Vec<(u8, u8)>,
    /// Slots reserved beyond what the table's entries hold (only with
    /// [`PortState::reserve_slots_only`]).
    pub overflow: u32,
}

/// One output port: slots reserved against its budget, and its two tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortState {
    /// The high-priority table.
    pub high: ArbTable,
    /// The low-priority table.
    pub low: ArbTable,
    /// Slots reserved by DB/DBTS connections.
    pub reserved: u32,
    /// Slots DB/DBTS may reserve: the frame minus the BE share.
    pub budget: u32,
    /// Of `reserved`, the slots no table entry holds because the table was
    /// full ([`Self::reserve_slots_only`]); 0 under the IBA table limit.
    pub overflow: u32,
}

impl PortState {
    /// A port with no connection: `be_slots` of BE entries (255 each, the last
    /// one the remainder) then one CH entry of weight 1, all in the low table.
    ///
    /// # Panics
    /// If the BE and CH entries do not fit in 64 (callers check `be_slots`
    /// against [`max_be_slots`]).
    pub fn new(be_slots: u32) -> Self {
        assert!(be_slots <= max_be_slots(), "BE share of {be_slots} slots leaves no entry for CH");
        let mut low = ArbTable::default();
        let mut pos = 0;
        let mut left = be_slots;
        while left > 0 {
            let w = left.min(MAX_WEIGHT as u32);
            low.entries[pos] = (BE_SL, w as u8);
            left -= w;
            pos += 1;
        }
        low.entries[pos] = (CH_SL, 1);
        PortState { high: ArbTable::default(), low, reserved: 0, budget: FRAME_SLOTS - be_slots, overflow: 0 }
    }

    /// Slots still free for DB/DBTS.
    pub fn free_slots(&self) -> u32 {
        self.budget - self.reserved
    }

    /// The table of `priority`.
    pub fn table(&self, priority: Priority) -> &ArbTable {
        match priority {
            Priority::High => &self.high,
            Priority::Low => &self.low,
        }
    }

    fn table_mut(&mut self, priority: Priority) -> &mut ArbTable {
        match priority {
            Priority::High => &mut self.high,
            Priority::Low => &mut self.low,
        }
    }

    /// Reserves `slots` for `vl` in the `priority` table, or says what is missing
    /// (bandwidth is checked first) and changes nothing.
    pub fn try_reserve(&mut self, priority: Priority, vl: u8, slots: u32) -> Result<Reservation, Shortfall> {
        if slots > self.free_slots() {
            return Err(Shortfall::Bandwidth { needed: slots, free: self.free_slots() });
        }
        let table = self.table_mut(priority);
        let grants = match table.plan(vl, slots) {
            Ok(g) => g,
            Err(needed) => return Err(Shortfall::Entries { priority, needed, free: table.free_entries() }),
        };
        table.apply(vl, &grants);
        self.reserved += slots;
        Ok(Reservation { priority, slots, grants, overflow: 0 })
    }

    /// Like [`Self::try_reserve`] but only the slot budget can refuse: what
    /// the 64 entries cannot hold is counted in [`Self::overflow`] instead of
    /// a table entry. This is paper 001's accounting taken literally ("the
    /// number of table entries is not a limitation [...], but only the
    /// available bandwidth"); the tables then under-state the reservation.
    pub fn reserve_slots_only(&mut self, priority: Priority, vl: u8, slots: u32) -> Result<Reservation, Shortfall> {
        if slots > self.free_slots() {
            return Err(Shortfall::Bandwidth { needed: slots, free: self.free_slots() });
        }
        let table = self.table_mut(priority);
        let (grants, overflow) = table.plan_upto(vl, slots);
        table.apply(vl, &grants);
        self.reserved += slots;
        self.overflow += overflow;
        Ok(Reservation { priority, slots, grants, overflow })
    }

    /// Like [`Self::reserve_slots_only`], but refused for entries when `vl`
    /// has no entry in the table and no entry is free: a VL without an entry
    /// is never served ([`super::EntryLimit::Vl`]).
    pub fn reserve_slots_with_entry(&mut self, priority: Priority, vl: u8, slots: u32) -> Result<Reservation, Shortfall> {
        if slots > self.free_slots() {
            return Err(Shortfall::Bandwidth { needed: slots, free: self.free_slots() });
        }
        let table = match priority {
            Priority::High => &self.high,
            Priority::Low => &self.low,
        };
        if slots > 0 && table.free_entries() == 0 && !table.entries.iter().any(|&(v, w)| v == vl && w > 0) {
            return Err(Shortfall::Entries { priority, needed: 1, free: 0 });
        }
        self.reserve_slots_only(priority, vl, slots)
    }

    /// Gives back what [`Self::try_reserve`] took.
    pub fn release(&mut self, r: &Reservation) {
        self.table_mut(r.priority).remove(&r.grants);
        self.reserved -= r.slots;
        self.overflow -= r.overflow;
    }
}

/// Most BE slots that leave one entry for CH: 63 full entries.
pub const fn max_be_slots() -> u32 {
    (VLARB_MAX_ENTRIES as u32 - 1) * MAX_WEIGHT as u32
}
