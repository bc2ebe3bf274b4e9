//! VL arbitration tables of output ports (IBA 7.6.9, attribute
//! `VLArbitrationTable` 14.2.5.9, and `PortInfo:VLHighLimit` 14.2.5.6).
//!
//! Each output port has a high-priority and a low-priority table of up to 64
//! `(VL, weight)` entries. The data plane walks a table round-robin; an entry
//! may send packets of its VL while its weight, in units of 64 bytes, is not
//! used up (a started packet always completes), and entries of weight 0 are
//! skipped. `LimitOfHighPriority` (`VLHighLimit`) bounds how many bytes the
//! high table may send, in units of 4096, before one low-table packet gets a
//! turn when one is ready: 0 means a single high packet, 255 means no bound. A
//! low packet may always go when no high packet is ready.
//!
//! A port may implement fewer entries (`PortInfo:VLArbitrationHighCap` /
//! `LowCap`); we keep that capacity per port, 64 unless set otherwise.
//!
//! With `qos FALSE` OpenSM writes no VLArbitration table (osm_qos.c returns
//! before touching ports), so ports keep the reset contents IBA leaves to the
//! vendor. We model that as "no priority": every data VL once in the low
//! table, each with OpenSM's own default low-table weight of 4 (256 bytes, so
//! one packet per turn for any MTU), and an empty high table. With `qos TRUE`
//! the tables come from [`super::QosConfig::apply`], whose defaults are
//! OpenSM's (`OSM_DEFAULT_QOS_VLARB_HIGH`/`LOW` in include/opensm/osm_base.h).

use std::sync::Arc;

use ibnetsim_fabric::{Fabric, NodeId, PortNum};
use rustc_hash::FxHashMap;

use super::{fold_vl, PortLayout};
use crate::error::SmError;

/// Most entries a high or low table can hold (two 32-entry MAD blocks each).
pub const VLARB_MAX_ENTRIES: usize = 64;

/// Entries in one VLArbitrationTable MAD block (`IB_NUM_VL_ARB_ELEMENTS_IN_BLOCK`).
const BLOCK_ENTRIES: usize = 32;

/// `LimitOfHighPriority` value that lets the high table send without bound.
pub const HIGH_LIMIT_UNLIMITED: u8 = 255;

/// Bytes per unit of `LimitOfHighPriority`.
pub const HIGH_LIMIT_UNIT_BYTES: u64 = 4096;

/// Bytes per unit of an entry's weight.
pub const WEIGHT_UNIT_BYTES: u32 = 64;

/// OpenSM's weight for each data VL of its default low table, used for the QoS-off model.
const DEFAULT_LOW_WEIGHT: u8 = 4;

/// The arbitration settings of one output port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct VlArbConfig {
    /// High-priority table: `(VL, weight)` entries in table order.
    pub high: Vec<(u8, u8)>,
    /// Low-priority table.
    pub low: Vec<(u8, u8)>,
    /// `LimitOfHighPriority`: 4096-byte units of high traffic before a low packet may go (255 = unlimited).
    pub limit_of_high_priority: u8,
}

/// How many entries a port's tables can hold (`VLArbitrationHighCap` / `LowCap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlArbCap {
    /// Entries of the high table (0..=64).
    pub high: u8,
    /// Entries of the low table (0..=64).
    pub low: u8,
}

impl Default for VlArbCap {
    fn default() -> Self {
        VlArbCap { high: VLARB_MAX_ENTRIES as u8, low: VLARB_MAX_ENTRIES as u8 }
    }
}

impl VlArbConfig {
    /// No priority: every one of `data_vls` VLs once in the low table with weight 4.
    pub fn uniform(data_vls: u8) -> Self {
        VlArbConfig {
            high: Vec::new(),
            low: (0..data_vls).map(|vl| (vl, DEFAULT_LOW_WEIGHT)).collect(),
            limit_of_high_priority: 0,
        }
    }

    /// Bytes the high table may send before a waiting low packet goes, or
    /// `None` when unlimited.
    pub fn high_limit_bytes(&self) -> Option<u64> {
        match self.limit_of_high_priority {
            HIGH_LIMIT_UNLIMITED => None,
            n => Some(n as u64 * HIGH_LIMIT_UNIT_BYTES),
        }
    }

    /// Checks entry VLs against the port's data VLs and table lengths against its capacity.
    pub fn check(&self, data_vls: u8, cap: VlArbCap) -> Result<(), String> {
        for (name, table, cap) in [("high", &self.high, cap.high), ("low", &self.low, cap.low)] {
            if table.len() > cap as usize {
                return Err(format!("the {name} table has {} entries but the port holds {cap}", table.len()));
            }
            if let Some((i, &(vl, _))) = table.iter().enumerate().find(|(_, &(vl, _))| vl >= data_vls) {
                return Err(format!(
                    "{name} table entry {i} names VL {vl}, but the port operates {data_vls} data VLs (0..={})",
                    data_vls - 1
                ));
            }
        }
        Ok(())
    }
}

/// The entries OpenSM writes into a port for a configured table.
///
/// `vlarb_update` (osm_qos.c) sends block 0 with `min(cap, 32)` entries and,
/// when `cap > 32`, block 1 with `cap % 32` entries, zero-filling the rest of
/// each block; every VL is masked to the port's operational VLs. For a port of
/// capacity 64 that second length is 0, so entries 32..63 reach the port as
/// `0:0` (weight 0, skipped). We reproduce that, dropping the zero padding,
/// which arbitration skips anyway.
pub(crate) fn opensm_entries(table: &[(u8, u8)], cap: u8, data_vls: u8) -> Vec<(u8, u8)> {
    let cap = cap as usize;
    let block0 = cap.min(BLOCK_ENTRIES);
    let block1 = if cap > BLOCK_ENTRIES { cap % BLOCK_ENTRIES } else { 0 };
    table
        .iter()
        .enumerate()
        .filter(|&(i, _)| i < block0 || (i >= BLOCK_ENTRIES && i - BLOCK_ENTRIES < block1))
        .map(|(_, &(vl, w))| (fold_vl(vl, data_vls), w))
        .collect()
}

/// The VL arbitration settings of every port of a fabric, deduplicated.
#[derive(Debug, Clone)]
pub struct VlArbTables {
    layout: Arc<PortLayout>,
    pool: Vec<VlArbConfig>,
    dedup: FxHashMap<VlArbConfig, u32>,
    ix: Vec<u32>,
    caps: Vec<VlArbCap>,
}

impl VlArbTables {
    /// Every port with `data_vls` data VLs and no priority ([`VlArbConfig::uniform`]).
    pub fn uniform(fabric: &Fabric, data_vls: u8) -> Result<Self, SmError> {
        Ok(Self::with_layout(Arc::new(PortLayout::uniform(fabric, data_vls)?)))
    }

    /// Every port gets [`VlArbConfig::uniform`] for its own data VLs, capacity 64.
    pub(crate) fn with_layout(layout: Arc<PortLayout>) -> Self {
        let slots = layout.num_slots();
        let mut t = VlArbTables {
            layout,
            pool: Vec::new(),
            dedup: FxHashMap::default(),
            ix: vec![0; slots],
            caps: vec![VlArbCap::default(); slots],
        };
        let mut by_vls = [u32::MAX; 16];
        for n in 0..t.layout.num_nodes() as u32 {
            for p in 0..=t.layout.num_ports(NodeId(n)) {
                let slot = t.layout.slot(NodeId(n), p);
                let vls = t.layout.data_vls(NodeId(n), p);
                if by_vls[vls as usize] == u32::MAX {
                    by_vls[vls as usize] = t.intern(VlArbConfig::uniform(vls));
                }
                t.ix[slot] = by_vls[vls as usize];
            }
        }
        t
    }

    /// The settings of output port `port` of `node` (a switch's port 0 included).
    #[inline]
    pub fn get(&self, node: NodeId, port: PortNum) -> &VlArbConfig {
        &self.pool[self.ix[self.layout.slot(node, port)] as usize]
    }

    /// Replaces the settings of one port, after checking VLs and capacity.
    pub fn set(&mut self, node: NodeId, port: PortNum, config: VlArbConfig) -> Result<(), SmError> {
        self.layout.check_port("vlarb", node, port)?;
        let slot = self.layout.slot(node, port);
        config.check(self.layout.data_vls(node, port), self.caps[slot]).map_err(|m| self.err(node, port, m))?;
        self.put(slot, config);
        Ok(())
    }

    /// Table capacity of one port.
    pub fn capacity(&self, node: NodeId, port: PortNum) -> VlArbCap {
        self.caps[self.layout.slot(node, port)]
    }

    /// Declares that a port holds fewer entries (IBA lets a port implement 0..=64 per table).
    /// Fails if a capacity exceeds 64 or the current tables no longer fit.
    pub fn set_capacity(&mut self, node: NodeId, port: PortNum, cap: VlArbCap) -> Result<(), SmError> {
        self.layout.check_port("vlarb", node, port)?;
        if cap.high as usize > VLARB_MAX_ENTRIES || cap.low as usize > VLARB_MAX_ENTRIES {
            return Err(self.err(
                node,
                port,
                format!("capacity high {} / low {} is beyond IBA's 64 entries per table", cap.high, cap.low),
            ));
        }
        let slot = self.layout.slot(node, port);
        self.get(node, port).check(self.layout.data_vls(node, port), cap).map_err(|m| self.err(node, port, m))?;
        self.caps[slot] = cap;
        Ok(())
    }

    fn err(&self, node: NodeId, port: PortNum, msg: String) -> SmError {
        SmError::option("vlarb", format!("'{}' port {port}: {msg}", self.layout.name(node)))
    }

    /// The most data VLs any port operates.
    pub fn data_vls(&self) -> u8 {
        self.layout.max_data_vls()
    }

    /// Operational data VLs of one port.
    pub fn port_data_vls(&self, node: NodeId, port: PortNum) -> u8 {
        self.layout.data_vls(node, port)
    }

    /// The port layout.
    pub fn layout(&self) -> &Arc<PortLayout> {
        &self.layout
    }

    /// Distinct settings in the pool (including ones no longer referenced).
    pub fn pool_len(&self) -> usize {
        self.pool.len()
    }

    fn intern(&mut self, config: VlArbConfig) -> u32 {
        if let Some(&i) = self.dedup.get(&config) {
            return i;
        }
        let i = self.pool.len() as u32;
        self.pool.push(config.clone());
        self.dedup.insert(config, i);
        i
    }

    /// Sets a slot without checks (callers have folded and truncated the tables).
    pub(crate) fn put(&mut self, slot: usize, config: VlArbConfig) {
        self.ix[slot] = self.intern(config);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    fn star() -> (Fabric, NodeId, NodeId) {
        let mut f = Fabric::new();
        let s = f.add_switch("s", 3).unwrap();
        let h = f.add_hca("h", 1).unwrap();
        f.connect(s, 1, h, 1, LinkSpec::default()).unwrap();
        (f, s, h)
    }

    #[test]
    fn uniform_is_every_vl_once_in_low() {
        let (f, s, h) = star();
        let t = VlArbTables::uniform(&f, 3).unwrap();
        let want = VlArbConfig { high: vec![], low: vec![(0, 4), (1, 4), (2, 4)], limit_of_high_priority: 0 };
        assert_eq!(t.get(s, 0), &want);
        assert_eq!(t.get(s, 3), &want);
        assert_eq!(t.get(h, 1), &want);
        assert_eq!(t.pool_len(), 1);
        assert_eq!(t.capacity(s, 2), VlArbCap { high: 64, low: 64 });
        assert_eq!(t.data_vls(), 3);
    }

    #[test]
    fn high_limit_in_bytes() {
        let mut c = VlArbConfig::uniform(1);
        assert_eq!(c.high_limit_bytes(), Some(0));
        c.limit_of_high_priority = 2;
        assert_eq!(c.high_limit_bytes(), Some(8192));
        c.limit_of_high_priority = 255;
        assert_eq!(c.high_limit_bytes(), None);
    }

    #[test]
    fn set_validates_vls_and_capacity() {
        let (f, s, h) = star();
        let mut t = VlArbTables::uniform(&f, 4).unwrap();
        let ok = VlArbConfig { high: vec![(3, 0), (0, 255)], low: vec![(1, 1)], limit_of_high_priority: 255 };
        t.set(s, 2, ok.clone()).unwrap();
        assert_eq!(t.get(s, 2), &ok);
        assert_eq!(t.get(s, 1), &VlArbConfig::uniform(4));

        let bad = VlArbConfig { high: vec![], low: vec![(0, 1), (4, 1)], limit_of_high_priority: 0 };
        assert_eq!(
            t.set(s, 1, bad).unwrap_err().to_string(),
            "invalid option 'vlarb': 's' port 1: low table entry 1 names VL 4, but the port operates 4 data VLs (0..=3)"
        );
        let long = VlArbConfig { high: vec![(0, 1); 65], low: vec![], limit_of_high_priority: 0 };
        assert!(t
            .set(s, 1, long)
            .unwrap_err()
            .to_string()
            .contains("the high table has 65 entries but the port holds 64"));
        assert!(t.set(h, 0, ok.clone()).unwrap_err().to_string().contains("port 0 does not exist on 'h'"));

        t.set_capacity(s, 3, VlArbCap { high: 1, low: 8 }).unwrap();
        assert!(t
            .set(s, 3, ok.clone())
            .unwrap_err()
            .to_string()
            .contains("the high table has 2 entries but the port holds 1"));
        let e = t.set_capacity(s, 2, VlArbCap { high: 1, low: 8 }).unwrap_err().to_string();
        assert!(e.contains("the high table has 2 entries but the port holds 1"), "{e}");
        assert!(t
            .set_capacity(s, 2, VlArbCap { high: 65, low: 8 })
            .unwrap_err()
            .to_string()
            .contains("beyond IBA's 64"));
        assert_eq!(t.capacity(s, 2), VlArbCap::default());
    }

    #[test]
    fn opensm_block_writes() {
        let table: Vec<(u8, u8)> = (0..40).map(|i| ((i % 15) as u8, i as u8 + 1)).collect();
        // Capacity 8: the first 8 entries, VLs masked to 4 data VLs.
        assert_eq!(opensm_entries(&table, 8, 4), vec![(0, 1), (1, 2), (2, 3), (3, 4), (0, 5), (1, 6), (2, 7), (3, 8)]);
        // Capacity 40: both blocks in full.
        assert_eq!(opensm_entries(&table, 40, 15).len(), 40);
        // Capacity 64: OpenSM's second block length is 64 % 32 = 0.
        let w = opensm_entries(&table, 64, 15);
        assert_eq!(w.len(), 32);
        assert_eq!(w[31], (1, 32));
        assert!(opensm_entries(&table, 0, 15).is_empty());
    }

    proptest! {
        /// Each port answers with what was last set on it, whatever the sharing.
        #[test]
        fn get_returns_last_set(ops in prop::collection::vec((0..=3u8, 0..3u8, 0..=255u8), 0..30)) {
            let (f, s, _) = star();
            let mut t = VlArbTables::uniform(&f, 2).unwrap();
            let mut naive = vec![VlArbConfig::uniform(2); 4];
            for &(port, vl, w) in &ops {
                let c = VlArbConfig { high: vec![(vl % 2, w)], low: vec![(0, w)], limit_of_high_priority: vl };
                t.set(s, port, c.clone()).unwrap();
                naive[port as usize] = c;
            }
            for p in 0..=3u8 {
                prop_assert_eq!(t.get(s, p), &naive[p as usize]);
            }
        }
    }
}
