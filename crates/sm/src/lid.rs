//! LID assignment with LMC.
//!
//! Every cabled CA port gets `2^LMC` consecutive LIDs starting at a base LID
//! aligned to `2^LMC` (IBA 7.11.1); the low LMC bits of a DLID select one of the
//! port's paths. Switches answer on port 0 with a single LID (LMC 0 on switch
//! port 0, OpenSM's default without `lmc_esp0`). CA ports are numbered first, in
//! node and port order, so a generated fabric's hosts get LIDs 1, 2, 3, … at
//! LMC 0; switches follow.

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId, PortNum};
use rustc_hash::FxHashMap;

use crate::error::SmError;

/// A local identifier.
pub type Lid = u16;

/// Highest unicast LID (0xC000 and above are multicast).
pub const MAX_UNICAST_LID: Lid = 0xBFFF;

/// The LIDs of one port: `base .. base + 2^lmc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortLid {
    /// The port (a switch's is port 0).
    pub end: LinkEnd,
    /// First LID, aligned to `2^lmc`.
    pub base: Lid,
    /// LID mask control of this port.
    pub lmc: u8,
}

impl PortLid {
    /// Number of LIDs of the port.
    pub fn count(&self) -> u32 {
        1u32 << self.lmc
    }

    /// All LIDs of the port.
    pub fn lids(&self) -> impl Iterator<Item = Lid> {
        let base = self.base as u32;
        (base..base + self.count()).map(|l| l as Lid)
    }
}

/// The LID assignment of a subnet.
#[derive(Debug, Clone)]
pub struct LidMap {
    lmc: u8,
    ports: Vec<PortLid>,
    /// For each LID, the index in `ports` of its owner, or `u32::MAX`.
    owner: Vec<u32>,
    by_end: FxHashMap<LinkEnd, u32>,
}

impl LidMap {
    /// Assigns LIDs: CA ports first (aligned to `2^lmc`), then one LID per switch.
    pub fn assign(fabric: &Fabric, lmc: u8) -> Result<Self, SmError> {
        if lmc > 7 {
            return Err(SmError::option("lmc", format!("{lmc} is out of range; IBA allows LMC 0..=7")));
        }
        let ca_ports = fabric.ca_ports();
        let per_port = 1u64 << lmc;
        let switches: Vec<NodeId> = fabric.switches().collect();
        // The first aligned base is 2^lmc, because LID 0 is reserved.
        let needed = |lmc: u8| (ca_ports.len() as u64 + 1) * (1u64 << lmc) + switches.len() as u64 - 1;
        if needed(lmc) > MAX_UNICAST_LID as u64 {
            let fits = (0..lmc).rev().find(|&l| needed(l) <= MAX_UNICAST_LID as u64);
            return Err(SmError::LmcTooLarge { lmc, needed: needed(lmc), max: MAX_UNICAST_LID as u64, fits });
        }
        let mut entries = Vec::with_capacity(ca_ports.len() + switches.len());
        let mut next = per_port as u32;
        for end in ca_ports {
            entries.push(PortLid { end, base: next as Lid, lmc });
            next += per_port as u32;
        }
        for sw in switches {
            entries.push(PortLid { end: LinkEnd { node: sw, port: 0 }, base: next as Lid, lmc: 0 });
            next += 1;
        }
        Self::from_entries(fabric, lmc, entries)
    }

    /// LIDs numbered as OpenSM 3.3.23's LID manager numbers a fresh subnet
    /// (`osm_lid_mgr.c`, no `guid2lid` cache, ports reporting LID 0): the SM's
    /// own port first (`lid_mgr_process_our_sm_node`), here the first node of
    /// the fabric (ibsim runs the SM on the first node of its net file), then
    /// every port in OpenSM's port-GUID table order (see
    /// `routing::ucast::opensm_key`). Each takes the lowest free LIDs:
    /// `2^lmc` of them for a CA port, aligned, and one for a switch's port 0
    /// (OpenSM's default `lmc_esp0 FALSE`). Alignment skips LIDs for good,
    /// as OpenSM's `lid_mgr_find_free_lid_range` moves its free range past
    /// them. With these LIDs the tables compare with OpenSM's dumps entry for
    /// entry, without its `guid2lid` file.
    pub fn assign_opensm(fabric: &Fabric, lmc: u8) -> Result<Self, SmError> {
        if lmc > 7 {
            return Err(SmError::option("lmc", format!("{lmc} is out of range; IBA allows LMC 0..=7")));
        }
        let mut ports: Vec<(LinkEnd, u32)> = fabric.switches().map(|sw| (LinkEnd { node: sw, port: 0 }, 1)).collect();
        ports.extend(fabric.ca_ports().into_iter().map(|end| (end, 1u32 << lmc)));
        let guid = |end: LinkEnd| fabric.node(end.node).port_guid(end.port);
        let sm = ports.iter().position(|(end, _)| end.node.index() == 0);
        let first = sm.map(|i| ports.remove(i));
        ports.sort_by_key(|&(end, _)| crate::routing::ucast::opensm_key(guid(end)));
        let mut next: u32 = 1;
        let mut entries = Vec::with_capacity(ports.len() + 1);
        for (end, count) in first.into_iter().chain(ports) {
            let base = if count > 1 && next & (count - 1) != 0 { (next + count) & !(count - 1) } else { next };
            if base + count - 1 > MAX_UNICAST_LID as u32 {
                return Err(SmError::LmcTooLarge { lmc, needed: (base + count - 1) as u64, max: MAX_UNICAST_LID as u64, fits: None });
            }
            entries.push(PortLid { end, base: base as Lid, lmc: if count > 1 { lmc } else { 0 } });
            next = base + count;
        }
        Self::from_entries(fabric, lmc, entries)
    }

    /// Builds a map from given LIDs (as read from a dump or a topology file),
    /// checking that they are in range, aligned, non-overlapping and belong to
    /// existing ports.
    pub fn from_entries(fabric: &Fabric, lmc: u8, entries: Vec<PortLid>) -> Result<Self, SmError> {
        let max = entries.iter().map(|p| p.base as u32 + p.count() - 1).max().unwrap_or(0);
        if max > MAX_UNICAST_LID as u32 {
            return Err(SmError::option("lid", format!("LID {max:#x} is beyond the unicast range 0x0001-0xbfff")));
        }
        let mut owner = vec![u32::MAX; max as usize + 1];
        let mut by_end = FxHashMap::default();
        for (i, p) in entries.iter().enumerate() {
            let node = fabric.node(p.end.node);
            let what = format!("{} port {}", node.name, p.end.port);
            if p.end.port > node.num_ports || (node.kind.is_switch() != (p.end.port == 0)) {
                return Err(SmError::option("lid", format!("{what} cannot own a LID")));
            }
            if p.base == 0 || (p.base as u32) & (p.count() - 1) != 0 {
                return Err(SmError::option(
                    "lid",
                    format!("base LID {:#x} of {what} is not a non-zero multiple of 2^LMC = {}", p.base, p.count()),
                ));
            }
            if by_end.insert(p.end, i as u32).is_some() {
                return Err(SmError::option("lid", format!("{what} is given LIDs twice")));
            }
            for lid in p.lids() {
                let slot = &mut owner[lid as usize];
                if *slot != u32::MAX {
                    let other = &entries[*slot as usize];
                    let on = &fabric.node(other.end.node).name;
                    return Err(SmError::option(
                        "lid",
                        format!("LID {lid:#x} is given to both {what} and {on} port {}", other.end.port),
                    ));
                }
                *slot = i as u32;
            }
        }
        Ok(LidMap { lmc, ports: entries, owner, by_end })
    }

    /// LMC of CA ports.
    pub fn lmc(&self) -> u8 {
        self.lmc
    }

    /// All ports with LIDs.
    pub fn ports(&self) -> &[PortLid] {
        &self.ports
    }

    /// CA ports with LIDs, in assignment order: the traffic endpoints.
    pub fn ca_ports<'a>(&'a self, fabric: &'a Fabric) -> impl Iterator<Item = &'a PortLid> + 'a {
        self.ports.iter().filter(move |p| fabric.node(p.end.node).kind.is_ca())
    }

    /// Highest LID in use: forwarding tables have `top_lid + 1` entries.
    pub fn top_lid(&self) -> Lid {
        (self.owner.len() - 1) as Lid
    }

    /// The port that owns `lid`.
    #[inline]
    pub fn owner(&self, lid: Lid) -> Option<&PortLid> {
        match self.owner.get(lid as usize) {
            Some(&i) if i != u32::MAX => Some(&self.ports[i as usize]),
            _ => None,
        }
    }

    /// The LIDs of a port.
    pub fn of_port(&self, node: NodeId, port: PortNum) -> Option<&PortLid> {
        self.by_end.get(&LinkEnd { node, port }).map(|&i| &self.ports[i as usize])
    }

    /// A switch's LID (port 0).
    pub fn switch_lid(&self, sw: NodeId) -> Option<Lid> {
        self.of_port(sw, 0).map(|p| p.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::{LinkSpec, NodeKind};

    fn star(hosts: u32) -> Fabric {
        let mut f = Fabric::new();
        let s = f.add_switch("s", 8).unwrap();
        for i in 0..hosts {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(s, i + 1, h, 1, LinkSpec::default()).unwrap();
        }
        f
    }

    #[test]
    fn lmc0_hosts_first_then_switch() {
        let f = star(3);
        let m = LidMap::assign(&f, 0).unwrap();
        let bases: Vec<Lid> = m.ports().iter().map(|p| p.base).collect();
        assert_eq!(bases, vec![1, 2, 3, 4]);
        assert_eq!(m.switch_lid(NodeId(0)), Some(4));
        assert_eq!(m.top_lid(), 4);
    }

    #[test]
    fn lmc2_bases_are_aligned() {
        let f = star(3);
        let m = LidMap::assign(&f, 2).unwrap();
        let bases: Vec<Lid> = m.ports().iter().map(|p| p.base).collect();
        assert_eq!(bases, vec![4, 8, 12, 16]);
        assert_eq!(m.owner(13).unwrap().end.node, f.node_by_name("h2").unwrap());
        assert!(m.owner(3).is_none());
        assert_eq!(m.owner(16).unwrap().lmc, 0);
    }

    #[test]
    fn opensm_numbers_the_sm_first_then_by_byte_swapped_guid_with_alignment_gaps() {
        // Worked from osm_lid_mgr.c. The switch (the first node) is the SM:
        // LID 1. The CA ports follow in OpenSM's port-GUID table order, which
        // compares GUIDs byte-swapped, lowest byte first: h1's port GUID
        // 0x0300 (low byte 00), then h2's 0x0101 and h0's 0x0201 (low byte
        // 01 for both, then 01 before 02).
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 8, Some(0x1000)).unwrap();
        for (i, node_guid) in [0x0200u64, 0x02ff, 0x0100].into_iter().enumerate() {
            let h = f.add_node(NodeKind::Hca, format!("h{i}"), 1, Some(node_guid)).unwrap();
            f.connect(s, i as u32 + 1, h, 1, LinkSpec::default()).unwrap();
        }
        let at = |m: &LidMap, h: &str| m.of_port(f.node_by_name(h).unwrap(), 1).unwrap().base;
        let m = LidMap::assign_opensm(&f, 0).unwrap();
        assert_eq!(m.switch_lid(s), Some(1));
        assert_eq!([at(&m, "h1"), at(&m, "h2"), at(&m, "h0")], [2, 3, 4]);
        // LMC 2: blocks of 4, aligned; the LIDs skipped to align (2, 3) stay
        // unused, as OpenSM's free range moves past them.
        let m = LidMap::assign_opensm(&f, 2).unwrap();
        assert_eq!(m.switch_lid(s), Some(1));
        assert_eq!([at(&m, "h1"), at(&m, "h2"), at(&m, "h0")], [4, 8, 12]);
        assert!(m.owner(2).is_none() && m.owner(3).is_none());
    }

    #[test]
    fn lmc_too_large() {
        assert!(matches!(LidMap::assign(&star(1), 8), Err(SmError::InvalidOption { .. })));
    }

    #[test]
    fn lid_space_runs_out_at_a_valid_lmc() {
        // 1,000 hosts, 8 on each of 125 switches. At LMC 5 the LIDs run to
        // 1,001 blocks of 32 (the first, holding LID 0, unused) plus 125
        // switch LIDs, less one: 32,156. At LMC 6: 64,188 > 49,151.
        let mut f = Fabric::new();
        for s in 0..125 {
            let sw = f.add_switch(format!("s{s}"), 8).unwrap();
            for p in 1..=8u8 {
                let h = f.add_hca(format!("h{s}-{p}"), 1).unwrap();
                f.connect(sw, p as u32, h, 1, LinkSpec::default()).unwrap();
            }
        }
        assert_eq!(LidMap::assign(&f, 5).unwrap().top_lid(), 32 * 1001 + 124);
        let err = LidMap::assign(&f, 6).unwrap_err();
        assert!(matches!(err, SmError::LmcTooLarge { lmc: 6, needed: 64_188, max: 0xbfff, fits: Some(5) }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "LMC 6 needs 64188 unicast LIDs but only 49151 exist (0x0001-0xbfff); \
             use LMC 5 or lower (the --lmc option, or `lmc` in a scenario)"
        );
    }

    #[test]
    fn overlapping_entries_are_rejected() {
        let f = star(2);
        let e = vec![
            PortLid { end: LinkEnd { node: NodeId(1), port: 1 }, base: 4, lmc: 2 },
            PortLid { end: LinkEnd { node: NodeId(2), port: 1 }, base: 5, lmc: 0 },
        ];
        let err = LidMap::from_entries(&f, 2, e).unwrap_err().to_string();
        assert!(err.contains("LID 0x5 is given to both"), "{err}");
    }
}
