//! Minimum hop counts: between switches, and from a switch to the port that
//! owns a LID.
//!
//! This is the information OpenSM keeps in each switch's "LID matrix"
//! (`osm_switch_t.hops`, filled by `osm_ucast_mgr_build_lid_matrices` in
//! `opensm/osm_ucast_mgr.c`): for every switch LID, the number of switch-to-switch
//! hops from each port, and the least of them. OpenSM relaxes that matrix by
//! repeated neighbour exchange; with unit hop weights (its default, no
//! `hop_weights_file`) that converges to plain BFS distances, which is how they
//! are computed here: one BFS over switch-to-switch links per switch.
//!
//! OpenSM's matrix has no rows for CA LIDs. A CA port's hop count is derived
//! from the switch it is cabled to, as `osm_switch_get_port_least_hops` in
//! `opensm/osm_switch.c` does: 1 from that switch, else the switch distance
//! plus one. [`SwitchHops::lid_hops`] follows that rule.
//!
//! Routing engines use these tables to find minimal ports; analysis uses them
//! for path stretch ([`SwitchHops::endpoint_distance`] is the minimal number of
//! links between two ports).

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId, PortNum};

use crate::lid::{Lid, LidMap};

/// Distance of a switch pair with no switch-only path between them.
pub const UNREACHABLE: u16 = u16::MAX;

/// All-pairs switch-to-switch hop counts of a fabric.
#[derive(Debug, Clone)]
pub struct SwitchHops {
    /// Dense switch index → node, in node order.
    switches: Vec<NodeId>,
    /// Node index → dense switch index, `u32::MAX` for a CA.
    index: Vec<u32>,
    /// Row-major `n × n`: `dist[from * n + to]`, [`UNREACHABLE`] when disconnected.
    dist: Vec<u16>,
}

impl SwitchHops {
    /// Computes every switch's distance to every other switch, counting only
    /// links whose both ends are switches (a CA never forwards).
    pub fn compute(fabric: &Fabric) -> Self {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let mut index = vec![u32::MAX; fabric.num_nodes()];
        for (i, s) in switches.iter().enumerate() {
            index[s.index()] = i as u32;
        }
        let n = switches.len();
        // Parallel links add nothing to distances, so each neighbour is kept once.
        let adjacency: Vec<Vec<u32>> = switches
            .iter()
            .map(|&s| {
                let mut peers: Vec<u32> =
                    fabric.switch_neighbors(s).map(|(_, peer)| index[peer.node.index()]).collect();
                peers.sort_unstable();
                peers.dedup();
                peers
            })
            .collect();
        let mut dist = vec![UNREACHABLE; n * n];
        let mut queue: Vec<u32> = Vec::with_capacity(n);
        for from in 0..n {
            let row = &mut dist[from * n..(from + 1) * n];
            row[from] = 0;
            queue.clear();
            queue.push(from as u32);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head] as usize;
                head += 1;
                let next = row[u] + 1;
                for &v in &adjacency[u] {
                    if row[v as usize] == UNREACHABLE {
                        row[v as usize] = next;
                        queue.push(v);
                    }
                }
            }
        }
        SwitchHops { switches, index, dist }
    }

    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.switches.len()
    }

    /// The switches, in node order; position `i` is dense index `i`.
    pub fn switches(&self) -> &[NodeId] {
        &self.switches
    }

    /// Dense index of a switch, `None` for a CA.
    #[inline]
    pub fn index_of(&self, node: NodeId) -> Option<usize> {
        match self.index.get(node.index()) {
            Some(&i) if i != u32::MAX => Some(i as usize),
            _ => None,
        }
    }

    /// Hop count between two switches by dense index, [`UNREACHABLE`] if none.
    #[inline]
    pub fn by_index(&self, from: usize, to: usize) -> u16 {
        self.dist[from * self.switches.len() + to]
    }

    /// Hop counts from one switch (dense index) to every switch.
    #[inline]
    pub fn row(&self, from: usize) -> &[u16] {
        let n = self.switches.len();
        &self.dist[from * n..(from + 1) * n]
    }

    /// Switch-to-switch hops between two switches; `None` if either is not a
    /// switch or no switch-only path joins them.
    pub fn distance(&self, from: NodeId, to: NodeId) -> Option<u16> {
        let d = self.by_index(self.index_of(from)?, self.index_of(to)?);
        (d != UNREACHABLE).then_some(d)
    }

    /// OpenSM's per-port entry `hops[lid][port]`: hops from switch `sw` to switch
    /// `to` when leaving by `port`. `None` when the port does not lead to a
    /// switch, or that switch cannot reach `to`.
    pub fn port_hops(&self, fabric: &Fabric, sw: NodeId, port: PortNum, to: NodeId) -> Option<u16> {
        self.index_of(sw)?;
        let peer = fabric.peer(sw, port)?;
        self.distance(peer.node, to).map(|d| d + 1)
    }

    /// Least hops from switch `sw` to the owner of `lid`, counted as OpenSM does
    /// (`osm_switch_get_port_least_hops`): 0 to the switch's own LID, the switch
    /// distance to another switch's LID, and one more than the distance to a CA
    /// port's switch (1 when the CA is cabled to `sw`). `None` if `sw` is not a
    /// switch, the LID is unassigned, or no path exists.
    pub fn lid_hops(&self, fabric: &Fabric, lids: &LidMap, sw: NodeId, lid: Lid) -> Option<u16> {
        let owner = lids.owner(lid)?;
        self.end_hops(fabric, sw, owner.end)
    }

    /// Least hops from switch `sw` to the port `end` (a switch's port 0 or a CA port).
    pub fn end_hops(&self, fabric: &Fabric, sw: NodeId, end: LinkEnd) -> Option<u16> {
        self.index_of(sw)?;
        if fabric.node(end.node).kind.is_switch() {
            return self.distance(sw, end.node);
        }
        let attached = attachment(fabric, end)?;
        self.distance(sw, attached.node).map(|d| d + 1)
    }

    /// Minimal number of links a packet crosses from port `a` to port `b`, each a
    /// CA port or a switch's port 0: the switch-to-switch distance plus one link
    /// for each CA end. `None` when no path exists through switches. This is the
    /// denominator of path stretch.
    pub fn endpoint_distance(&self, fabric: &Fabric, a: LinkEnd, b: LinkEnd) -> Option<u16> {
        if a == b {
            return Some(0);
        }
        let (sa, ea) = self.switch_of(fabric, a)?;
        let (sb, eb) = self.switch_of(fabric, b)?;
        self.distance(sa, sb).map(|d| d + ea + eb)
    }

    /// The switch a port enters the fabric at, and the links to get there.
    fn switch_of(&self, fabric: &Fabric, end: LinkEnd) -> Option<(NodeId, u16)> {
        if fabric.node(end.node).kind.is_switch() {
            Some((end.node, 0))
        } else {
            attachment(fabric, end).map(|sw| (sw.node, 1))
        }
    }
}

/// The switch port a CA port is cabled to; `None` if the port is uncabled or
/// cabled to another CA.
pub fn attachment(fabric: &Fabric, end: LinkEnd) -> Option<LinkEnd> {
    let peer = fabric.peer(end.node, end.port)?;
    fabric.node(peer.node).kind.is_switch().then_some(peer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::LinkSpec;

    /// s0 - s1 - s2 in a line, s3 alone; h0 on s0, h2 on s2.
    fn line() -> Fabric {
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..4).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
        f.connect(s[0], 1, s[1], 1, LinkSpec::default()).unwrap();
        f.connect(s[1], 2, s[2], 1, LinkSpec::default()).unwrap();
        // A parallel link must not change anything.
        f.connect(s[1], 3, s[2], 2, LinkSpec::default()).unwrap();
        let h0 = f.add_hca("h0", 1).unwrap();
        let h2 = f.add_hca("h2", 1).unwrap();
        f.connect(s[0], 4, h0, 1, LinkSpec::default()).unwrap();
        f.connect(s[2], 4, h2, 1, LinkSpec::default()).unwrap();
        f
    }

    #[test]
    fn bfs_distances_on_a_line() {
        let f = line();
        let h = SwitchHops::compute(&f);
        let id = |n: &str| f.node_by_name(n).unwrap();
        assert_eq!(h.distance(id("s0"), id("s0")), Some(0));
        assert_eq!(h.distance(id("s0"), id("s2")), Some(2));
        assert_eq!(h.distance(id("s2"), id("s0")), Some(2));
        assert_eq!(h.distance(id("s0"), id("s3")), None);
        assert_eq!(h.distance(id("h0"), id("s0")), None);
        assert_eq!(h.by_index(0, 3), UNREACHABLE);
    }

    #[test]
    fn per_port_and_lid_hops_follow_opensm() {
        let f = line();
        let h = SwitchHops::compute(&f);
        let lids = LidMap::assign(&f, 0).unwrap();
        let id = |n: &str| f.node_by_name(n).unwrap();
        // Both parallel ports of s1 reach s2 in one hop; port 1 goes away from it.
        assert_eq!(h.port_hops(&f, id("s1"), 2, id("s2")), Some(1));
        assert_eq!(h.port_hops(&f, id("s1"), 3, id("s2")), Some(1));
        assert_eq!(h.port_hops(&f, id("s1"), 1, id("s2")), Some(3));
        assert_eq!(h.port_hops(&f, id("s0"), 4, id("s2")), None, "port 4 leads to a CA");
        // LIDs: h0 = 1, h2 = 2, then s0..s3 = 3..6.
        assert_eq!(h.lid_hops(&f, &lids, id("s0"), 1), Some(1));
        assert_eq!(h.lid_hops(&f, &lids, id("s0"), 2), Some(3));
        assert_eq!(h.lid_hops(&f, &lids, id("s0"), 3), Some(0));
        assert_eq!(h.lid_hops(&f, &lids, id("s0"), 5), Some(2));
        assert_eq!(h.lid_hops(&f, &lids, id("s0"), 6), None);
        assert_eq!(h.lid_hops(&f, &lids, id("s0"), 7), None, "unassigned LID");
    }

    #[test]
    fn endpoint_distance_counts_links() {
        let f = line();
        let h = SwitchHops::compute(&f);
        let id = |n: &str| f.node_by_name(n).unwrap();
        let h0 = LinkEnd { node: id("h0"), port: 1 };
        let h2 = LinkEnd { node: id("h2"), port: 1 };
        let s1 = LinkEnd { node: id("s1"), port: 0 };
        assert_eq!(h.endpoint_distance(&f, h0, h2), Some(4));
        assert_eq!(h.endpoint_distance(&f, h0, s1), Some(2));
        assert_eq!(h.endpoint_distance(&f, h0, h0), Some(0));
        let s3 = LinkEnd { node: id("s3"), port: 0 };
        assert_eq!(h.endpoint_distance(&f, h0, s3), None);
    }
}
