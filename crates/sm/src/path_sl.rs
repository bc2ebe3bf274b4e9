//! Per-path service levels: the SL a routing engine wants each (source,
//! destination) pair to use.
//!
//! Some routing engines are deadlock-free only because different paths use
//! different virtual lanes. OpenSM's `lash`, `dfsssp` and `torus-2QoS` give
//! each (source LID, destination LID) pair its own SL through the engine's
//! `path_sl` callback (`struct osm_routing_engine` in
//! `include/opensm/osm_opensm.h`), which the SA returns in PathRecords; the
//! SL2VL tables then map those SLs onto the VL layers. [`PathSl`] is that
//! callback's answer, computed once: [`PathSl::none`] (the default) says the
//! engine has no opinion and the traffic class's own SL is used; a table gives
//! an SL per pair, with "none" allowed for single pairs.
//!
//! The table has one row per source *port* (every LID of a port, base LID and
//! path-bits offsets alike, reads the same row) and one column per destination
//! LID, one byte each with [`NO_SL`] for "none": `ports × (top LID + 1)` bytes,
//! about 1 MB for a thousand LMC-0 endpoints.

use crate::lid::{Lid, LidMap};

/// Table byte for a pair without an SL of its own.
pub const NO_SL: u8 = 0xFF;

/// Per-(source, destination) service levels chosen by a routing engine.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PathSl {
    table: Option<SlTable>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct SlTable {
    /// For each LID, the row of the port that owns it (`u32::MAX`: none).
    row_of: Vec<u32>,
    /// Number of destination LIDs per row: top LID + 1.
    width: usize,
    /// Row-major SLs, [`NO_SL`] where unset.
    sl: Vec<u8>,
}

impl PathSl {
    /// No per-path SLs: every packet uses its traffic class's SL.
    pub fn none() -> Self {
        PathSl::default()
    }

    /// An empty table (every pair "none") for the ports and LIDs of `lids`:
    /// a row for every port that owns LIDs, a column for every LID up to the top.
    pub fn table(lids: &LidMap) -> Self {
        let width = lids.top_lid() as usize + 1;
        let mut row_of = vec![u32::MAX; width];
        for (row, p) in lids.ports().iter().enumerate() {
            for lid in p.lids() {
                row_of[lid as usize] = row as u32;
            }
        }
        let rows = lids.ports().len();
        PathSl { table: Some(SlTable { row_of, width, sl: vec![NO_SL; rows * width] }) }
    }

    /// A table filled by `sl(source base LID, destination LID)` for every port
    /// with LIDs and every LID up to the top; `None` leaves a pair unset.
    ///
    /// # Panics
    /// If `sl` returns an SL above 15.
    pub fn from_fn(lids: &LidMap, mut sl: impl FnMut(Lid, Lid) -> Option<u8>) -> Self {
        let mut t = PathSl::table(lids);
        for p in lids.ports() {
            for dlid in 1..=lids.top_lid() {
                if let Some(v) = sl(p.base, dlid) {
                    t.set(p.base, dlid, v);
                }
            }
        }
        t
    }

    /// Whether there is no table (the engine gives no per-path SLs).
    pub fn is_none(&self) -> bool {
        self.table.is_none()
    }

    /// The SL of the path from `slid` to `dlid`: `None` when there is no table,
    /// no port owns `slid`, `dlid` is beyond the table, or the pair is unset.
    /// Any LID of the source port reads the same row as its base LID.
    #[inline]
    pub fn get(&self, slid: Lid, dlid: Lid) -> Option<u8> {
        let t = self.table.as_ref()?;
        let row = *t.row_of.get(slid as usize)?;
        if row == u32::MAX || dlid as usize >= t.width {
            return None;
        }
        match t.sl[row as usize * t.width + dlid as usize] {
            NO_SL => None,
            v => Some(v),
        }
    }

    /// Sets the SL of the path from `slid` (any LID of the source port) to
    /// `dlid`; `None` unsets it.
    ///
    /// # Panics
    /// If there is no table (use [`PathSl::table`]), no port owns `slid`,
    /// `dlid` is beyond the table, or `sl` is above 15: all are engine bugs.
    pub fn set(&mut self, slid: Lid, dlid: Lid, sl: impl Into<Option<u8>>) {
        let sl = sl.into();
        if let Some(v) = sl {
            assert!(v <= 15, "SL {v} for LID {slid:#x} -> {dlid:#x} is not an IBA SL (0..=15)");
        }
        let t = self.table.as_mut().expect("PathSl::set on PathSl::none(); build it with PathSl::table");
        let row = t.row_of.get(slid as usize).copied().unwrap_or(u32::MAX);
        assert!(row != u32::MAX, "no port owns source LID {slid:#x}");
        assert!((dlid as usize) < t.width, "destination LID {dlid:#x} is beyond the table");
        t.sl[row as usize * t.width + dlid as usize] = sl.unwrap_or(NO_SL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::{Fabric, LinkSpec};

    /// s with h0, h1 on ports 1, 2. LMC 1: h0 = 2..=3, h1 = 4..=5, s = 6.
    fn lids() -> LidMap {
        let mut f = Fabric::new();
        let s = f.add_switch("s", 4).unwrap();
        for i in 0..2 {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(s, i + 1, h, 1, LinkSpec::default()).unwrap();
        }
        LidMap::assign(&f, 1).unwrap()
    }

    #[test]
    fn none_by_default() {
        let p = PathSl::default();
        assert!(p.is_none());
        assert_eq!(p, PathSl::none());
        assert_eq!(p.get(2, 4), None);
    }

    #[test]
    fn set_and_get_per_source_port() {
        let lids = lids();
        let mut p = PathSl::table(&lids);
        assert!(!p.is_none());
        assert_eq!(p.get(2, 4), None);
        p.set(2, 4, 3);
        p.set(3, 5, 7); // h0's second LID: the same row as its base LID 2.
        p.set(4, 2, 0);
        p.set(6, 2, 15);
        assert_eq!(p.get(2, 4), Some(3));
        assert_eq!(p.get(3, 4), Some(3));
        assert_eq!(p.get(2, 5), Some(7));
        assert_eq!(p.get(4, 2), Some(0));
        assert_eq!(p.get(5, 2), Some(0));
        assert_eq!(p.get(4, 3), None);
        assert_eq!(p.get(6, 2), Some(15));
        // Unowned source LIDs and destinations beyond the table.
        assert_eq!(p.get(1, 4), None);
        assert_eq!(p.get(0x7, 4), None);
        assert_eq!(p.get(2, 0x7), None);
        assert_eq!(p.get(0xbfff, 0xbfff), None);
        p.set(2, 4, None);
        assert_eq!(p.get(2, 4), None);
    }

    #[test]
    fn from_fn_fills_every_pair() {
        let lids = lids();
        let p = PathSl::from_fn(&lids, |s, d| (s != d).then_some(((s + d) % 16) as u8));
        assert_eq!(p.get(2, 4), Some(6));
        assert_eq!(p.get(3, 5), Some(7));
        assert_eq!(p.get(4, 4), None);
        assert_eq!(p.get(6, 1), Some(7));
    }

    #[test]
    #[should_panic(expected = "not an IBA SL")]
    fn sl_above_15_panics() {
        PathSl::table(&lids()).set(2, 4, 16);
    }

    #[test]
    #[should_panic(expected = "no port owns source LID 0x1")]
    fn unowned_source_panics() {
        PathSl::table(&lids()).set(1, 4, 1);
    }
}
