//! Multicast forwarding tables (MFTs): one spanning tree per multicast group.
//!
//! A multicast group is a multicast LID (MLID, `0xC000..=0xFFFE`; `0xFFFF` is
//! the permissive LID) and the CA ports that joined it (OpenSM's
//! MCMemberRecord joins; senders must be members too). A switch's MFT maps an
//! MLID to a *set* of output ports. [`MulticastTables`] keeps those sets
//! sparsely: a switch has one entry per group whose tree passes through it, so
//! the cost grows with the groups, never with the 16 k multicast LIDs.
//!
//! # How a group is routed
//! As OpenSM's multicast manager does (`opensm/osm_mcast_mgr.c`):
//! - **Root.** For every switch, the largest hop count to the switches the
//!   members are cabled to (`mcast_mgr_compute_max_hops`); the root is the switch
//!   where that is least. Ties go to the first switch in OpenSM's
//!   `sw_guid_tbl` order ([`crate::dump::opensm_switch_order`]), as
//!   `mcast_mgr_find_optimal_switch` keeps the first best switch.
//! - **Tree.** From the root down (`mcast_mgr_branch`), each switch splits the
//!   members it must reach by output port (`mcast_mgr_subdivide`): a member
//!   cabled to this switch goes out on its own cable; any other goes out on the
//!   *lowest-numbered* port whose neighbour switch is one hop closer to the
//!   member's switch (`osm_switch_recommend_mcast_path`, no load balancing).
//!   Each neighbour then does the same for its share. Because every switch picks
//!   the lowest port among shortest ones by hop counts alone, two branches never
//!   meet again, so the union is a tree.
//! - **Entries.** A switch on the tree gets the port towards its parent (except
//!   the root), the ports towards its children and the ports to member CAs.
//! - A group with fewer than two member ports gets no entries ("nothing to
//!   do", as in `mcast_mgr_build_spanning_tree`).
//!
//! # What the data plane does
//! A packet whose DLID is an MLID arrives at a switch on port `i` (from a
//! member CA or from a neighbour on the tree) and is replicated to every port
//! of [`MulticastTables::get`] **except `i`**: that exclusion is the data
//! plane's job, as on a real switch (see [`PortSet::without`]). A switch with
//! no entry for the MLID drops the packet. A CA port receiving the packet
//! delivers it; a CA with two member ports receives one copy per port. The
//! sender's own port never receives its packet back.

use std::fmt;

use ibnetsim_fabric::{Fabric, NodeId, PortNum};

use crate::dump::opensm_switch_order;
use crate::error::SmError;
use crate::hops::{SwitchHops, UNREACHABLE};
use crate::lid::Lid;

/// First multicast LID (IBA: `0xC000..=0xFFFE` are multicast).
pub const MULTICAST_LID_BASE: Lid = 0xC000;

/// Last multicast LID (`0xFFFF` is the permissive LID).
pub const MULTICAST_LID_TOP: Lid = 0xFFFE;

/// A set of port numbers `0..=255`, as one MFT entry's port mask.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortSet {
    bits: [u64; 4],
}

impl PortSet {
    /// The empty set.
    pub const EMPTY: PortSet = PortSet { bits: [0; 4] };

    /// An empty set.
    pub fn new() -> Self {
        PortSet::EMPTY
    }

    /// Adds `port`; returns whether it was absent.
    #[inline]
    pub fn insert(&mut self, port: PortNum) -> bool {
        let (w, b) = (port as usize / 64, 1u64 << (port % 64));
        let absent = self.bits[w] & b == 0;
        self.bits[w] |= b;
        absent
    }

    /// Removes `port`; returns whether it was present.
    #[inline]
    pub fn remove(&mut self, port: PortNum) -> bool {
        let (w, b) = (port as usize / 64, 1u64 << (port % 64));
        let present = self.bits[w] & b != 0;
        self.bits[w] &= !b;
        present
    }

    /// Whether `port` is in the set.
    #[inline]
    pub fn contains(&self, port: PortNum) -> bool {
        self.bits[port as usize / 64] & (1u64 << (port % 64)) != 0
    }

    /// The set without `port`: the ports a packet that arrived on `port` is
    /// replicated to.
    #[inline]
    pub fn without(mut self, port: PortNum) -> Self {
        self.remove(port);
        self
    }

    /// Number of ports in the set.
    #[inline]
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bits == [0; 4]
    }

    /// The ports, in ascending order.
    pub fn iter(&self) -> PortSetIter {
        PortSetIter { bits: self.bits, word: 0 }
    }
}

/// Iterator over a [`PortSet`], ascending.
#[derive(Debug, Clone)]
pub struct PortSetIter {
    bits: [u64; 4],
    word: usize,
}

impl Iterator for PortSetIter {
    type Item = PortNum;

    fn next(&mut self) -> Option<PortNum> {
        while self.word < 4 {
            let w = &mut self.bits[self.word];
            if *w != 0 {
                let b = w.trailing_zeros();
                *w &= *w - 1;
                return Some((self.word * 64 + b as usize) as PortNum);
            }
            self.word += 1;
        }
        None
    }
}

impl IntoIterator for PortSet {
    type Item = PortNum;
    type IntoIter = PortSetIter;

    fn into_iter(self) -> PortSetIter {
        self.iter()
    }
}

impl IntoIterator for &PortSet {
    type Item = PortNum;
    type IntoIter = PortSetIter;

    fn into_iter(self) -> PortSetIter {
        self.iter()
    }
}

impl FromIterator<PortNum> for PortSet {
    fn from_iter<I: IntoIterator<Item = PortNum>>(iter: I) -> Self {
        let mut s = PortSet::new();
        for p in iter {
            s.insert(p);
        }
        s
    }
}

impl fmt::Debug for PortSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// A multicast group: an MLID and the CA ports that joined it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MulticastGroup {
    /// The multicast LID, `0xC000..=0xFFFE`.
    pub mlid: Lid,
    /// Member CA ports, `(CA, port)`; each must be cabled to a switch.
    pub members: Vec<(NodeId, PortNum)>,
}

/// A multicast group as a user writes it (`[[multicast]]` style configs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MulticastGroupConfig {
    /// The multicast LID, `0xC000..=0xFFFE`.
    pub mlid: u16,
    /// Members: a CA by name, description or GUID (see [`Fabric::resolve`]),
    /// optionally `name:port`. A port GUID names that port. Without a port,
    /// the CA must have exactly one cabled port.
    pub members: Vec<String>,
}

impl MulticastGroupConfig {
    /// Resolves the member names against `fabric`. Membership itself (CA
    /// ports cabled to a switch, MLID range) is checked by [`MulticastTables::build`].
    pub fn resolve(&self, fabric: &Fabric) -> Result<MulticastGroup, SmError> {
        let members = self.members.iter().map(|m| resolve_member(fabric, self.mlid, m)).collect::<Result<_, _>>()?;
        Ok(MulticastGroup { mlid: self.mlid, members })
    }
}

fn resolve_member(fabric: &Fabric, mlid: Lid, what: &str) -> Result<(NodeId, PortNum), SmError> {
    let err = |reason: String| SmError::Multicast { mlid, member: Some(what.to_string()), reason };
    // A node name wins, even one containing ':'; then `name:port`.
    if fabric.node_by_name(what).is_none() {
        if let Some((node, port)) = what.rsplit_once(':') {
            if let (Ok(n), Ok(p)) = (fabric.resolve(node), port.trim().parse::<PortNum>()) {
                return Ok((n, p));
            }
        }
    }
    let n = fabric.resolve(what).map_err(|e| err(e.to_string()))?;
    let node = fabric.node(n);
    // A port GUID names its port (a CA's node GUID is not a port GUID).
    let hex = what.strip_prefix("0x").or_else(|| what.strip_prefix("0X"));
    if let Some(g) = hex.and_then(|h| u64::from_str_radix(h, 16).ok()) {
        if g != node.guid {
            if let Some(p) = (1..=node.num_ports).find(|&p| node.port_guid(p) == g) {
                return Ok((n, p));
            }
        }
    }
    if node.kind.is_switch() {
        // Let `build` report it as a switch, with the port it would have used.
        return Ok((n, 0));
    }
    let cabled: Vec<PortNum> = node.connected_ports().map(|(p, _)| p).collect();
    match cabled.as_slice() {
        [one] => Ok((n, *one)),
        [] => Err(err(format!("{} has no cabled port", node.name))),
        many => Err(err(format!(
            "{} has {} cabled ports ({}); name one as '{}:<port>'",
            node.name,
            many.len(),
            many.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
            node.name
        ))),
    }
}

/// The MFTs of every switch: per switch, a sorted list of (MLID, ports).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MulticastTables {
    /// Groups by ascending MLID, members sorted and deduplicated.
    groups: Vec<MulticastGroup>,
    /// Root switch of each group's tree (`None` below two member ports).
    roots: Vec<Option<NodeId>>,
    /// By node index; empty for CAs and for switches on no tree. Sorted by MLID.
    entries: Vec<Vec<(Lid, PortSet)>>,
}

impl MulticastTables {
    /// No groups.
    pub fn new() -> Self {
        MulticastTables::default()
    }

    /// Validates `groups` and routes each on its own spanning tree (see the
    /// module docs). Errors name the group and, where it is one member's fault,
    /// the member: an MLID outside `0xC000..=0xFFFE`, an MLID given twice, a
    /// group without members, a member that is not a CA port cabled to a switch,
    /// or member switches that no switch-only path joins. A member given twice
    /// counts once.
    pub fn build(fabric: &Fabric, groups: Vec<MulticastGroup>) -> Result<Self, SmError> {
        let mut groups = groups;
        groups.sort_by_key(|g| g.mlid);
        for pair in groups.windows(2) {
            if pair[0].mlid == pair[1].mlid {
                return Err(group_err(pair[1].mlid, None, "the MLID is given to two groups"));
            }
        }
        for g in &mut groups {
            validate(fabric, g)?;
        }
        if groups.is_empty() {
            return Ok(MulticastTables::new());
        }
        let hops = SwitchHops::compute(fabric);
        let order = opensm_switch_order(fabric);
        let mut tables = MulticastTables {
            roots: Vec::with_capacity(groups.len()),
            entries: vec![Vec::new(); fabric.num_nodes()],
            groups: Vec::new(),
        };
        for g in &groups {
            let root = route_group(fabric, &hops, &order, g, &mut tables.entries)?;
            tables.roots.push(root);
        }
        tables.groups = groups;
        Ok(tables)
    }

    /// The ports of switch `sw` for `mlid`: `None` when `sw` is not on the
    /// group's tree (or is a CA, or no group has `mlid`).
    #[inline]
    pub fn get(&self, sw: NodeId, mlid: Lid) -> Option<PortSet> {
        let row = self.entries.get(sw.index())?;
        row.binary_search_by_key(&mlid, |e| e.0).ok().map(|i| row[i].1)
    }

    /// Every entry of switch `sw`, by ascending MLID (empty for a CA).
    pub fn entries(&self, sw: NodeId) -> &[(Lid, PortSet)] {
        self.entries.get(sw.index()).map_or(&[], |r| r.as_slice())
    }

    /// The groups, by ascending MLID, with their members sorted and deduplicated.
    pub fn groups(&self) -> &[MulticastGroup] {
        &self.groups
    }

    /// The group with `mlid`.
    pub fn group(&self, mlid: Lid) -> Option<&MulticastGroup> {
        self.groups.binary_search_by_key(&mlid, |g| g.mlid).ok().map(|i| &self.groups[i])
    }

    /// The root switch of the group's tree; `None` for an unknown MLID or a
    /// group of fewer than two member ports (which has no tree).
    pub fn root(&self, mlid: Lid) -> Option<NodeId> {
        self.groups.binary_search_by_key(&mlid, |g| g.mlid).ok().and_then(|i| self.roots[i])
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Number of (switch, MLID) entries over all switches.
    pub fn num_entries(&self) -> usize {
        self.entries.iter().map(Vec::len).sum()
    }
}

fn group_err(mlid: Lid, member: Option<String>, reason: impl Into<String>) -> SmError {
    SmError::Multicast { mlid, member, reason: reason.into() }
}

/// Checks the MLID and members, sorting and deduplicating the members.
fn validate(fabric: &Fabric, g: &mut MulticastGroup) -> Result<(), SmError> {
    if !(MULTICAST_LID_BASE..=MULTICAST_LID_TOP).contains(&g.mlid) {
        return Err(group_err(g.mlid, None, "the MLID is outside the multicast range 0xc000-0xfffe"));
    }
    if g.members.is_empty() {
        return Err(group_err(g.mlid, None, "the group has no members"));
    }
    g.members.sort_unstable();
    g.members.dedup();
    for &(n, p) in &g.members {
        if n.index() >= fabric.num_nodes() {
            return Err(group_err(g.mlid, Some(format!("node #{}", n.0)), "no such node in the fabric"));
        }
        let node = fabric.node(n);
        let member = Some(format!("{}:{p}", node.name));
        if node.kind.is_switch() {
            return Err(group_err(g.mlid, member, format!("{} is a switch; members are CA ports", node.name)));
        }
        if p == 0 || p > node.num_ports {
            return Err(group_err(g.mlid, member, format!("{} has ports 1..={}", node.name, node.num_ports)));
        }
        match fabric.peer(n, p) {
            None => return Err(group_err(g.mlid, member, format!("port {p} of {} is not cabled", node.name))),
            Some(peer) if !fabric.node(peer.node).kind.is_switch() => {
                let other = &fabric.node(peer.node).name;
                return Err(group_err(g.mlid, member, format!("port {p} of {} is cabled to CA {other}, not to a switch", node.name)));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Builds one group's tree into `entries`; returns its root.
fn route_group(
    fabric: &Fabric,
    hops: &SwitchHops,
    order: &[NodeId],
    g: &MulticastGroup,
    entries: &mut [Vec<(Lid, PortSet)>],
) -> Result<Option<NodeId>, SmError> {
    if g.members.len() < 2 {
        return Ok(None);
    }
    // Each member's switch (dense index) and the switch port its cable lands on.
    let attach: Vec<(usize, PortNum)> = g
        .members
        .iter()
        .map(|&(n, p)| {
            let peer = fabric.peer(n, p).expect("validated: cabled to a switch");
            (hops.index_of(peer.node).expect("validated: a switch"), peer.port)
        })
        .collect();
    let mut member_switches: Vec<usize> = attach.iter().map(|a| a.0).collect();
    member_switches.sort_unstable();
    member_switches.dedup();

    let mut root = None;
    let mut best = UNREACHABLE;
    for &sw in order {
        let s = hops.index_of(sw).expect("a switch");
        let worst = member_switches.iter().map(|&m| hops.by_index(s, m)).max().unwrap_or(0);
        if worst < best {
            best = worst;
            root = Some(s);
        }
    }
    let Some(root) = root else {
        let names: Vec<&str> = member_switches.iter().map(|&m| fabric.node(hops.switches()[m]).name.as_str()).collect();
        return Err(group_err(
            g.mlid,
            None,
            format!("no switch reaches all of the members' switches ({}) over switch links", names.join(", ")),
        ));
    };

    // Depth-first from the root: (switch, port towards the parent, members to reach).
    let mut on_tree = vec![false; hops.num_switches()];
    let mut stack: Vec<(usize, Option<PortNum>, Vec<usize>)> = vec![(root, None, (0..attach.len()).collect())];
    while let Some((s, up, members)) = stack.pop() {
        let sw = hops.switches()[s];
        assert!(!on_tree[s], "multicast tree of MLID {:#06x} reaches {} twice", g.mlid, fabric.node(sw).name);
        on_tree[s] = true;
        let mut ports = PortSet::new();
        if let Some(p) = up {
            ports.insert(p);
        }
        // Members by output port, ports ascending.
        let mut branches: Vec<(PortNum, Vec<usize>)> = Vec::new();
        for m in members {
            let (target, ca_port) = attach[m];
            if target == s {
                ports.insert(ca_port);
                continue;
            }
            let want = hops.by_index(s, target) - 1;
            let (port, _) = fabric
                .switch_neighbors(sw)
                .find(|(_, peer)| hops.index_of(peer.node).is_some_and(|t| hops.by_index(t, target) == want))
                .expect("the root reaches every member switch, so does each switch on a shortest path");
            match branches.iter_mut().find(|b| b.0 == port) {
                Some(b) => b.1.push(m),
                None => branches.push((port, vec![m])),
            }
        }
        for (port, list) in branches {
            ports.insert(port);
            let peer = fabric.peer(sw, port).expect("a neighbour");
            stack.push((hops.index_of(peer.node).expect("a switch"), Some(peer.port), list));
        }
        entries[sw.index()].push((g.mlid, ports));
    }
    Ok(Some(hops.switches()[root]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testfab;
    use ibnetsim_fabric::gen::{FatTreeParams, IrregularParams};
    use ibnetsim_fabric::{LinkSpec, NodeKind};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn n(f: &Fabric, name: &str) -> NodeId {
        f.node_by_name(name).unwrap_or_else(|| panic!("no node {name}"))
    }

    fn ports(p: &[PortNum]) -> Option<PortSet> {
        Some(p.iter().copied().collect())
    }

    fn group(mlid: Lid, members: &[(NodeId, PortNum)]) -> MulticastGroup {
        MulticastGroup { mlid, members: members.to_vec() }
    }

    /// Floods one packet from member `src` along the MFT ports, each switch
    /// sending on every port of its entry but the arrival port. Returns the CA
    /// ports reached; errors on a switch reached twice (a loop or a second
    /// path), a switch without an entry, an arrival port not in the entry, or
    /// an uncabled port.
    fn flood(f: &Fabric, t: &MulticastTables, mlid: Lid, src: (NodeId, PortNum)) -> Result<Vec<(NodeId, PortNum)>, String> {
        let first = f.peer(src.0, src.1).ok_or("source port not cabled")?;
        let mut seen = vec![false; f.num_nodes()];
        let mut queue = vec![(first.node, first.port)];
        let mut got = Vec::new();
        while let Some((sw, arrival)) = queue.pop() {
            let name = &f.node(sw).name;
            if std::mem::replace(&mut seen[sw.index()], true) {
                return Err(format!("{name} is reached twice"));
            }
            let entry = t.get(sw, mlid).ok_or_else(|| format!("{name} has no entry for {mlid:#x}"))?;
            if !entry.contains(arrival) {
                return Err(format!("{name}: arrival port {arrival} is not in its entry {entry:?}"));
            }
            for p in entry.without(arrival) {
                let peer = f.peer(sw, p).ok_or_else(|| format!("{name} port {p} is not cabled"))?;
                if f.node(peer.node).kind.is_ca() {
                    got.push((peer.node, peer.port));
                } else {
                    queue.push((peer.node, peer.port));
                }
            }
        }
        Ok(got)
    }

    /// From every member, the flood reaches every other member exactly once,
    /// no one else, and never a switch twice; the tree has one inter-switch
    /// edge fewer than switches.
    fn check_group(f: &Fabric, t: &MulticastTables, mlid: Lid) -> Result<(), String> {
        let g = t.group(mlid).ok_or("no such group")?;
        for &src in &g.members {
            let mut got = flood(f, t, mlid, src)?;
            got.sort_unstable();
            let want: Vec<_> = g.members.iter().copied().filter(|&m| m != src).collect();
            if got != want {
                return Err(format!("from {src:?}: reached {got:?}, members {want:?}"));
            }
        }
        let on_tree: Vec<NodeId> = f.switches().filter(|&s| t.get(s, mlid).is_some()).collect();
        let switch_ports: usize = on_tree
            .iter()
            .map(|&s| t.get(s, mlid).unwrap().iter().filter(|&p| f.node(f.peer(s, p).unwrap().node).kind.is_switch()).count())
            .sum();
        if switch_ports != 2 * (on_tree.len() - 1) {
            return Err(format!("{} switches on the tree but {switch_ports} inter-switch ports", on_tree.len()));
        }
        Ok(())
    }

    #[test]
    fn port_set_basics() {
        let mut s = PortSet::new();
        assert!(s.is_empty());
        assert_eq!(s.len(), 0);
        for p in [255, 0, 64, 63, 7] {
            assert!(s.insert(p));
        }
        assert!(!s.insert(64));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 7, 63, 64, 255]);
        assert_eq!(s.len(), 5);
        assert!(s.contains(255) && s.contains(0) && !s.contains(65) && !s.contains(128));
        let t = s.without(63);
        assert!(s.contains(63), "without works on a copy");
        assert_eq!(t.len(), 4);
        assert!(s.remove(0) && !s.remove(0));
        assert_eq!(format!("{:?}", ports(&[3, 1]).unwrap()), "{1, 3}");
        assert_eq!((&t).into_iter().count(), 4);
        assert_eq!(PortSet::default(), PortSet::EMPTY);
    }

    /// s0 port 1 - port 1 s1 port 2 - port 1 s2; members h0 on s0 port 2 and
    /// h1 on s2 port 3; h2, not a member, on s1 port 3.
    #[test]
    fn line_of_three_switches() {
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..3).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
        f.connect(s[0], 1, s[1], 1, LinkSpec::default()).unwrap();
        f.connect(s[1], 2, s[2], 1, LinkSpec::default()).unwrap();
        for (i, &(sw, p)) in [(s[0], 2), (s[2], 3), (s[1], 3)].iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, p, h, 1, LinkSpec::default()).unwrap();
        }
        let (h0, h1) = (n(&f, "h0"), n(&f, "h1"));
        let t = MulticastTables::build(&f, vec![group(0xC001, &[(h1, 1), (h0, 1)])]).unwrap();
        // The middle switch is one hop from both ends: the root.
        assert_eq!(t.root(0xC001), Some(s[1]));
        assert_eq!(t.get(s[1], 0xC001), ports(&[1, 2]));
        assert_eq!(t.get(s[0], 0xC001), ports(&[1, 2]));
        assert_eq!(t.get(s[2], 0xC001), ports(&[1, 3]));
        assert_eq!(t.get(n(&f, "h2"), 0xC001), None);
        assert_eq!(t.get(s[1], 0xC000), None);
        assert_eq!(t.num_entries(), 3);
        assert_eq!(t.groups()[0].members, vec![(h0, 1), (h1, 1)], "members sorted");
        check_group(&f, &t, 0xC001).unwrap();
    }

    /// 4-ary 2-tree: roots sw0..sw3 (down port v+1 to leaf sw{4+v}), leaves
    /// sw4..sw7 (up port 5 + root index, hosts on ports 1..=4).
    #[test]
    fn two_level_fat_tree() {
        let f = FatTreeParams::new(4, 2).build().unwrap();
        let members = [(n(&f, "h0"), 1), (n(&f, "h5"), 1), (n(&f, "h15"), 1), (n(&f, "h1"), 1)];
        let t = MulticastTables::build(&f, vec![group(0xC000, &members)]).unwrap();
        // Roots are one hop from every leaf; the first in GUID order wins.
        assert_eq!(t.root(0xC000), Some(n(&f, "sw0")));
        assert_eq!(t.get(n(&f, "sw0"), 0xC000), ports(&[1, 2, 4]));
        assert_eq!(t.get(n(&f, "sw4"), 0xC000), ports(&[1, 2, 5]));
        assert_eq!(t.get(n(&f, "sw5"), 0xC000), ports(&[2, 5]));
        assert_eq!(t.get(n(&f, "sw7"), 0xC000), ports(&[4, 5]));
        for idle in ["sw1", "sw2", "sw3", "sw6"] {
            assert_eq!(t.get(n(&f, idle), 0xC000), None, "{idle}");
        }
        check_group(&f, &t, 0xC000).unwrap();

        // Members on one leaf only: that leaf is the root and the whole tree.
        let t = MulticastTables::build(&f, vec![group(0xC000, &[(n(&f, "h8"), 1), (n(&f, "h11"), 1)])]).unwrap();
        assert_eq!(t.root(0xC000), Some(n(&f, "sw6")));
        assert_eq!(t.get(n(&f, "sw6"), 0xC000), ports(&[1, 4]));
        assert_eq!(t.num_entries(), 1);
        check_group(&f, &t, 0xC000).unwrap();
    }

    /// Two switches, a member on each: both are one hop from the farthest
    /// member switch, so OpenSM's switch order decides.
    #[test]
    fn root_ties_follow_opensm_switch_order() {
        let build = |guids: [u64; 2]| {
            let mut f = Fabric::new();
            let a = f.add_node(NodeKind::Switch, "a", 4, Some(guids[0])).unwrap();
            let b = f.add_node(NodeKind::Switch, "b", 4, Some(guids[1])).unwrap();
            f.connect(a, 1, b, 1, LinkSpec::default()).unwrap();
            for (i, sw) in [a, b].into_iter().enumerate() {
                let h = f.add_hca(format!("h{i}"), 1).unwrap();
                f.connect(sw, 2, h, 1, LinkSpec::default()).unwrap();
            }
            let t = MulticastTables::build(&f, vec![group(0xC000, &[(n(&f, "h0"), 1), (n(&f, "h1"), 1)])]).unwrap();
            check_group(&f, &t, 0xC000).unwrap();
            assert_eq!(t.get(a, 0xC000), ports(&[1, 2]));
            assert_eq!(t.get(b, 0xC000), ports(&[1, 2]));
            f.node(t.root(0xC000).unwrap()).name.clone()
        };
        assert_eq!(build([0x100, 0x200]), "a");
        // OpenSM's sw_guid_tbl compares network-order GUIDs as host integers:
        // 0x0200 sorts before 0x0101 on a little-endian machine.
        assert_eq!(build([0x0101, 0x0200]), "b");
    }

    #[test]
    fn storage_is_sparse_in_the_mlid_range() {
        let f = testfab::fat_tree(2, 2, 2, 2);
        let hosts: Vec<(NodeId, PortNum)> = f.cas().map(|h| (h, 1)).collect();
        let t = MulticastTables::build(
            &f,
            vec![group(MULTICAST_LID_TOP, &hosts), group(MULTICAST_LID_BASE, &hosts[..2])],
        )
        .unwrap();
        let low: Vec<NodeId> = f.switches().filter(|&s| t.get(s, 0xC000).is_some()).collect();
        let high: Vec<NodeId> = f.switches().filter(|&s| t.get(s, 0xFFFE).is_some()).collect();
        assert_eq!(t.num_entries(), low.len() + high.len());
        for s in f.switches() {
            let e = t.entries(s);
            assert!(e.len() <= 2);
            assert!(e.windows(2).all(|w| w[0].0 < w[1].0), "sorted by MLID");
            assert_eq!(t.get(s, 0xC001), None);
            assert_eq!(t.get(s, 0xFFFF), None);
        }
        // Every switch hosting members of the big group is on its tree.
        assert!(high.len() >= f.switches().filter(|&s| f.node(s).name.starts_with("leaf")).count());
        assert_eq!(t.groups().iter().map(|g| g.mlid).collect::<Vec<_>>(), vec![0xC000, 0xFFFE]);
        check_group(&f, &t, 0xC000).unwrap();
        check_group(&f, &t, 0xFFFE).unwrap();
        assert!(!t.is_empty());
        assert!(MulticastTables::new().is_empty());
        assert_eq!(MulticastTables::build(&f, vec![]).unwrap(), MulticastTables::default());
    }

    #[test]
    fn single_member_groups_have_no_tree() {
        let f = testfab::two_switch_parallel(1, 2);
        let a0 = testfab::host(&f, "a", 0);
        // A member given twice counts once.
        let t = MulticastTables::build(&f, vec![group(0xC000, &[(a0, 1), (a0, 1)])]).unwrap();
        assert_eq!(t.groups()[0].members, vec![(a0, 1)]);
        assert_eq!(t.root(0xC000), None);
        assert_eq!(t.num_entries(), 0);
        assert!(!t.is_empty());
    }

    #[test]
    fn dual_ported_ca_gets_a_copy_per_member_port() {
        let mut f = testfab::two_switch_parallel(1, 1);
        let (a, b) = (n(&f, "a"), n(&f, "b"));
        let d = f.add_hca("d", 2).unwrap();
        f.connect(a, 5, d, 1, LinkSpec::default()).unwrap();
        f.connect(b, 5, d, 2, LinkSpec::default()).unwrap();
        let t = MulticastTables::build(&f, vec![group(0xC000, &[(d, 1), (d, 2), (n(&f, "b0"), 1)])]).unwrap();
        check_group(&f, &t, 0xC000).unwrap();
        assert_eq!(flood(&f, &t, 0xC000, (d, 1)).unwrap().len(), 2);
    }

    fn err(f: &Fabric, groups: Vec<MulticastGroup>) -> String {
        MulticastTables::build(f, groups).unwrap_err().to_string()
    }

    #[test]
    fn bad_groups_are_errors_naming_group_and_member() {
        let mut f = testfab::two_switch_parallel(1, 2);
        let (a, a0, a1) = (n(&f, "a"), testfab::host(&f, "a", 0), testfab::host(&f, "a", 1));
        let x = f.add_hca("x", 2).unwrap();
        let y = f.add_hca("y", 1).unwrap();
        f.connect(x, 1, y, 1, LinkSpec::default()).unwrap();
        for mlid in [0xBFFF, 0xFFFF, 0x0001] {
            let e = err(&f, vec![group(mlid, &[(a0, 1)])]);
            assert_eq!(e, format!("multicast group {mlid:#06x}: the MLID is outside the multicast range 0xc000-0xfffe"));
        }
        assert_eq!(
            err(&f, vec![group(0xC002, &[(a0, 1)]), group(0xC002, &[(a1, 1)])]),
            "multicast group 0xc002: the MLID is given to two groups"
        );
        assert_eq!(err(&f, vec![group(0xC000, &[])]), "multicast group 0xc000: the group has no members");
        assert_eq!(
            err(&f, vec![group(0xC000, &[(a0, 1), (a, 0)])]),
            "multicast group 0xc000, member 'a:0': a is a switch; members are CA ports"
        );
        assert_eq!(err(&f, vec![group(0xC000, &[(a0, 2)])]), "multicast group 0xc000, member 'a0:2': a0 has ports 1..=1");
        assert_eq!(
            err(&f, vec![group(0xC000, &[(x, 2)])]),
            "multicast group 0xc000, member 'x:2': port 2 of x is not cabled"
        );
        assert_eq!(
            err(&f, vec![group(0xC000, &[(x, 1)])]),
            "multicast group 0xc000, member 'x:1': port 1 of x is cabled to CA y, not to a switch"
        );
        assert_eq!(
            err(&f, vec![group(0xC000, &[(NodeId(99), 1)])]),
            "multicast group 0xc000, member 'node #99': no such node in the fabric"
        );
    }

    #[test]
    fn switch_islands_joined_by_a_ca_cannot_share_a_tree() {
        let mut f = Fabric::new();
        let a = f.add_switch("a", 4).unwrap();
        let b = f.add_switch("b", 4).unwrap();
        let bridge = f.add_hca("bridge", 2).unwrap();
        f.connect(a, 1, bridge, 1, LinkSpec::default()).unwrap();
        f.connect(b, 1, bridge, 2, LinkSpec::default()).unwrap();
        let e = err(&f, vec![group(0xC000, &[(bridge, 1), (bridge, 2)])]);
        assert_eq!(e, "multicast group 0xc000: no switch reaches all of the members' switches (a, b) over switch links");
    }

    #[test]
    fn config_members_resolve_by_name_port_and_guid() {
        let mut f = testfab::two_switch_parallel(1, 2);
        let (a, b) = (n(&f, "a"), n(&f, "b"));
        let d = f.add_hca("d", 2).unwrap();
        f.connect(a, 5, d, 1, LinkSpec::default()).unwrap();
        f.connect(b, 5, d, 2, LinkSpec::default()).unwrap();
        let guid = |name: &str| format!("{:#x}", f.node(n(&f, name)).guid);
        let cfg = |members: Vec<String>| MulticastGroupConfig { mlid: 0xC123, members };
        let g = cfg(vec!["a0".into(), "d:2".into(), guid("b1"), format!("{:#x}", f.node(d).port_guid(1))])
            .resolve(&f)
            .unwrap();
        assert_eq!(g.mlid, 0xC123);
        assert_eq!(g.members, vec![(n(&f, "a0"), 1), (d, 2), (n(&f, "b1"), 1), (d, 1)]);
        let e = cfg(vec!["d".into()]).resolve(&f).unwrap_err().to_string();
        assert_eq!(e, "multicast group 0xc123, member 'd': d has 2 cabled ports (1, 2); name one as 'd:<port>'");
        let e = cfg(vec!["nosuch".into()]).resolve(&f).unwrap_err().to_string();
        assert!(e.starts_with("multicast group 0xc123, member 'nosuch': "), "{e}");
        assert!(e.contains("nosuch"), "{e}");
        // A switch resolves, and `build` rejects it by name.
        let g = cfg(vec!["a".into()]).resolve(&f).unwrap();
        assert!(err(&f, vec![g]).contains("a is a switch"));
    }

    /// Up to two random groups of a fabric's CA ports.
    fn random_groups(f: &Fabric, seed: u64) -> Vec<MulticastGroup> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ends = f.ca_ports();
        let mut mlids = vec![MULTICAST_LID_BASE, MULTICAST_LID_TOP, 0xC000 + rng.random_range(1..0x3FFE)];
        mlids.truncate(2);
        mlids
            .into_iter()
            .map(|mlid| {
                let members: Vec<(NodeId, PortNum)> =
                    ends.iter().filter(|_| rng.random_ratio(1, 2)).map(|e| (e.node, e.port)).collect();
                group(mlid, &members)
            })
            .filter(|g| !g.members.is_empty())
            .collect()
    }

    fn check_random(f: &Fabric, seed: u64) -> Result<(), TestCaseError> {
        let groups = random_groups(f, seed);
        let t = MulticastTables::build(f, groups.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for g in t.groups() {
            if g.members.len() >= 2 {
                check_group(f, &t, g.mlid).map_err(|e| TestCaseError::fail(format!("{:#x}: {e}", g.mlid)))?;
            } else {
                prop_assert!(f.switches().all(|s| t.get(s, g.mlid).is_none()));
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random connected fabrics with parallel and loopback cables, dual-ported
        /// CAs and random GUIDs.
        #[test]
        fn floods_reach_every_member_once_on_random_fabrics(
            seed in any::<u64>(), switches in 1usize..12, extra in 0usize..12, hosts in 1u32..4, groups in any::<u64>(),
        ) {
            let f = testfab::random_connected(seed, switches, extra, hosts);
            check_random(&f, groups)?;
        }

        /// The papers' random irregular networks.
        #[test]
        fn floods_reach_every_member_once_on_irregular_networks(
            seed in any::<u64>(), big in any::<bool>(), groups in any::<u64>(),
        ) {
            let switches = if big { 16 } else { 8 };
            let f = IrregularParams::with_links_per_switch(switches, 8, 4, 4, seed).build().unwrap();
            check_random(&f, groups)?;
        }
    }
}
