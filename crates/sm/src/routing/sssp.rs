//! `sssp`: OpenSM's single-source-shortest-path routing, the path half of
//! `dfsssp` (Domke, Hoefler, Nagel, "Deadlock-free oblivious routing for
//! arbitrary topologies", IPDPS 2011), as `opensm/osm_ucast_dfsssp.c` runs it
//! when configured as `sssp`. Written from a reading of that file; no code is
//! taken from it.
//!
//! The engine sees the fabric as a multigraph of switches: one directed edge
//! per switch-to-switch cable and direction (parallel cables stay apart,
//! loopback cables are left out), each with a weight. Every weight starts at
//! P², where P counts every LID of the subnet (each CA port's `2^LMC` and each
//! switch's own), so that a path one hop longer never looks cheaper than a
//! shorter one however the weights grow. Then, for each destination LID in
//! turn:
//!
//! 1. a Dijkstra run from the destination over the switches finds, for every
//!    switch, a cheapest path to the destination (for a CA port the run starts
//!    at its switch, across a CA cable of weight 1); each switch's table entry
//!    for the LID is the port its path leaves by;
//! 2. every edge of those paths is made heavier by the number of LIDs whose
//!    packets will use it: a switch's path adds the switch's own LID count
//!    (its CA ports' LIDs plus its own) to every edge on the way. Later
//!    destinations therefore avoid the channels earlier ones load: routes are
//!    balanced over all destinations at once, not per switch as in `minhop`.
//!
//! Order of destinations (OpenSM's `port_order_list`): switches sorted by that
//! LID count, most first (ties in OpenSM's switch-table order, see
//! [`super::ucast::switch_table_order`]); the CA ports of each in switch port
//! order; then the switches' own LIDs in the same switch order, last because
//! they carry management traffic only. With LMC > 0 each LID of a port gets
//! its own Dijkstra run right after the previous one, so the weights the first
//! LID added push the next one onto other channels where there are any: the
//! LIDs of one port get disjoint paths as far as the fabric allows. A switch's
//! own LID is 0 at that switch, and is routed and weighted like any other.
//!
//! Tie-breaks, as in OpenSM. A switch's cables are relaxed in port order and
//! a path is only replaced by a strictly cheaper one. Which of several
//! equally distant switches is settled first is decided by OpenSM's 4-ary
//! heap (`complib/cl_heap.c`): all switches enter it at infinity in
//! switch-table order (a destination CA last), and keys are lowered in place;
//! [`ClHeap`] repeats its moves exactly, so equal-cost choices fall the same
//! way. One deliberate difference: OpenSM's "infinity" is 2^31 − 1, which
//! path costs (P² per hop) pass on fabrics of some 10,000 LIDs and more; here
//! it is 2^64 − 1. OpenSM's options `cn_guid_file`/`io_guid_file` (routing
//! compute nodes before I/O nodes) and `avoid_throttled_links` are not
//! modelled; a disconnected switch is an error here as there (OpenSM's
//! "detached and inaccessible switches").
//!
//! Like `minhop`, the paths are not deadlock-free on fabrics with cycles;
//! `dfsssp` adds the virtual layers that make them so. Options used: none.

use std::cmp::Reverse;

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId, PortNum};
use rustc_hash::FxHashMap;

use super::cl_heap::ClHeap;
use super::ucast::{switch_table_order, unroutable};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};

/// Registry name.
pub const NAME: &str = "sssp";

/// The sssp engine.
#[derive(Debug, Clone, Default)]
pub struct Sssp;

/// Registry constructor.
pub(crate) fn build(_options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    Ok(Box::new(Sssp))
}

impl RoutingEngine for Sssp {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let run = route_paths(fabric, lids)?;
        Ok(Routing::unicast(run.tables, Vec::new()))
    }
}

const NONE: u32 = u32::MAX;

/// One directed switch-to-switch edge, stored at the switch it leaves
/// (OpenSM's `link_t`): relaxing it from `from` reaches `to`, whose packets
/// then leave `to` by `to_port` toward `from`. Its weight is thus the load of
/// the channel out of `to_port` of `to`.
#[derive(Debug, Clone, Copy)]
struct Edge {
    to: u32,
    to_port: PortNum,
}

/// The switch graph.
struct Graph {
    /// Vertex → switch, in switch-table order.
    switches: Vec<NodeId>,
    /// Node index → vertex, [`NONE`] for CAs.
    vertex: Vec<u32>,
    /// Edges of vertex `v`: `edges[start[v]..start[v + 1]]`, in port order.
    start: Vec<usize>,
    edges: Vec<Edge>,
    /// LIDs whose packets enter the fabric at each switch: its own and those
    /// of its CA ports (OpenSM's `num_hca`).
    lids_at: Vec<u64>,
}

impl Graph {
    fn new(fabric: &Fabric, lids: &LidMap) -> Self {
        let switches = switch_table_order(fabric);
        let mut vertex = vec![NONE; fabric.num_nodes()];
        for (v, s) in switches.iter().enumerate() {
            vertex[s.index()] = v as u32;
        }
        let mut start = Vec::with_capacity(switches.len() + 1);
        let mut edges = Vec::new();
        let mut lids_at = Vec::with_capacity(switches.len());
        for &s in &switches {
            start.push(edges.len());
            let mut n = lids.of_port(s, 0).map_or(1, |p| p.count() as u64);
            for (port, _) in fabric.node(s).connected_ports() {
                let Some(peer) = fabric.peer(s, port) else { continue };
                if fabric.node(peer.node).kind.is_ca() {
                    n += lids.of_port(peer.node, peer.port).map_or(0, |p| p.count() as u64);
                } else if peer.node != s {
                    edges.push(Edge { to: vertex[peer.node.index()], to_port: peer.port });
                }
            }
            lids_at.push(n);
        }
        start.push(edges.len());
        Graph { switches, vertex, start, edges, lids_at }
    }

    fn out(&self, v: u32) -> std::ops::Range<usize> {
        self.start[v as usize]..self.start[v as usize + 1]
    }
}

/// Where a destination port is: its switch (a vertex) and, for a CA port, the
/// switch port it is cabled to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub vertex: u32,
    /// `None` for the switch's own port 0.
    pub ca_port: Option<PortNum>,
}

/// The result of the path computation, kept for `dfsssp`.
pub(crate) struct Paths {
    pub tables: ForwardingTables,
    /// Indices into `lids.ports()` in the order they were routed.
    pub order: Vec<usize>,
}

/// One Dijkstra run's state, reused between runs.
struct Run {
    dist: Vec<u64>,
    /// Edge index that settled each vertex, [`NONE`] for the start.
    via: Vec<u32>,
    port: Vec<PortNum>,
    done: Vec<bool>,
    settled: Vec<u32>,
    carried: Vec<u64>,
    /// Element 0 is a destination CA, element `v + 1` switch `v` (OpenSM's `adj_list`).
    heap: ClHeap,
}

/// Distance of a switch not reached (yet).
const INF: u64 = u64::MAX;

impl Run {
    fn new(n: usize) -> Self {
        Run {
            dist: vec![INF; n],
            via: vec![NONE; n],
            port: vec![0; n],
            done: vec![false; n],
            settled: Vec::with_capacity(n),
            carried: vec![0; n],
            heap: ClHeap::new(n + 1),
        }
    }

    /// Cheapest paths from every switch to `t` under `weight`, as OpenSM's
    /// `dijkstra` finds them: every switch enters the heap at infinity in
    /// switch-table order, then the destination CA (if it is one); the start
    /// gets key 0; each vertex taken from the heap relaxes its edges in port
    /// order, replacing a path only by a strictly cheaper one.
    fn dijkstra(&mut self, g: &Graph, weight: &[u64], t: Target) {
        let n = self.dist.len();
        self.dist.fill(INF);
        self.via.fill(NONE);
        self.done.fill(false);
        self.settled.clear();
        self.heap.clear();
        for v in 0..n as u32 {
            self.heap.insert(INF, v + 1);
        }
        let start = match t.ca_port {
            Some(_) => {
                self.heap.insert(INF, 0);
                0
            }
            None => {
                self.dist[t.vertex as usize] = 0;
                self.done[t.vertex as usize] = true;
                t.vertex + 1
            }
        };
        self.heap.set_key(start, 0);
        while let Some((d, element)) = self.heap.pop() {
            if d == INF {
                // Not reachable (OpenSM still pops these, without effect).
                continue;
            }
            if element == 0 {
                // The CA's one cable, of weight 1, to its switch.
                let s = t.vertex as usize;
                self.dist[s] = 1;
                self.port[s] = t.ca_port.expect("a CA destination");
                self.heap.set_key(t.vertex + 1, 1);
                continue;
            }
            let v = element - 1;
            self.done[v as usize] = true;
            self.settled.push(v);
            for e in g.out(v) {
                let Edge { to, to_port } = g.edges[e];
                let nd = d + weight[e];
                if !self.done[to as usize] && nd < self.dist[to as usize] {
                    self.dist[to as usize] = nd;
                    self.via[to as usize] = e as u32;
                    self.port[to as usize] = to_port;
                    self.heap.set_key(to + 1, nd);
                }
            }
        }
    }

    /// OpenSM's `update_weights`: every switch's path adds the switch's LID
    /// count to each edge it crosses. Summed bottom-up over the tree of paths.
    fn add_weights(&mut self, g: &Graph, weight: &mut [u64], from_of: &[u32]) {
        for &v in &self.settled {
            self.carried[v as usize] = g.lids_at[v as usize];
        }
        for &v in self.settled.iter().rev() {
            let e = self.via[v as usize];
            if e != NONE {
                weight[e as usize] += self.carried[v as usize];
                let parent = from_of[e as usize];
                self.carried[parent as usize] += self.carried[v as usize];
            }
        }
    }
}

/// Routes every LID of `lids` as OpenSM's sssp does (see the module docs).
pub(crate) fn route_paths(fabric: &Fabric, lids: &LidMap) -> Result<Paths, SmError> {
    let g = Graph::new(fabric, lids);
    let n = g.switches.len();
    let mut tables = ForwardingTables::new(fabric, lids.top_lid());
    let ports = lids.ports();
    let total: u64 = ports.iter().map(|p| p.count() as u64).sum();
    let mut weight = vec![total * total; g.edges.len()];
    let mut from_of = vec![0u32; g.edges.len()];
    for v in 0..n as u32 {
        for e in g.out(v) {
            from_of[e] = v;
        }
    }
    let order = port_order(fabric, lids, &g);
    // Every switch answers its own LIDs on port 0.
    for &s in &g.switches {
        if let Some(p) = lids.of_port(s, 0) {
            for lid in p.lids() {
                tables.set(s, lid, 0);
            }
        }
    }
    let mut run = Run::new(n);
    for &i in &order {
        let p = &ports[i];
        let t = target(fabric, &g, p.end).ok_or_else(|| unroutable(fabric, g.switches[0], p.base, p.end))?;
        for lid in p.lids() {
            run.dijkstra(&g, &weight, t);
            if let Some(v) = (0..n).find(|&v| run.dist[v] == INF) {
                return Err(unroutable(fabric, g.switches[v], lid, p.end));
            }
            for v in 0..n {
                if v as u32 != t.vertex || t.ca_port.is_some() {
                    tables.set(g.switches[v], lid, run.port[v]);
                }
            }
            run.add_weights(&g, &mut weight, &from_of);
        }
    }
    // CA ports cabled to no switch are in no order list: OpenSM leaves them unrouted.
    if order.len() < ports.len() && n > 0 {
        let mut routed = vec![false; ports.len()];
        order.iter().for_each(|&i| routed[i] = true);
        let p = &ports[routed.iter().position(|r| !r).expect("a port is unrouted")];
        return Err(unroutable(fabric, g.switches[0], p.base, p.end));
    }
    Ok(Paths { tables, order })
}

fn target(fabric: &Fabric, g: &Graph, end: LinkEnd) -> Option<Target> {
    if fabric.node(end.node).kind.is_switch() {
        return Some(Target { vertex: g.vertex[end.node.index()], ca_port: None });
    }
    let sw = fabric.peer(end.node, end.port).filter(|e| fabric.node(e.node).kind.is_switch())?;
    Some(Target { vertex: g.vertex[sw.node.index()], ca_port: Some(sw.port) })
}

/// OpenSM's destination order (see the module docs): indices into `lids.ports()`.
fn port_order(fabric: &Fabric, lids: &LidMap, g: &Graph) -> Vec<usize> {
    let ports = lids.ports();
    let index: FxHashMap<LinkEnd, usize> = ports.iter().enumerate().map(|(i, p)| (p.end, i)).collect();
    let mut sorted: Vec<u32> = (0..g.switches.len() as u32).collect();
    // glibc's qsort merge-sorts tables this size: stable, so ties keep table order.
    sorted.sort_by_key(|&v| Reverse(g.lids_at[v as usize]));
    let mut taken = vec![false; ports.len()];
    let mut order = Vec::with_capacity(ports.len());
    for &v in &sorted {
        let s = g.switches[v as usize];
        for (port, _) in fabric.node(s).connected_ports() {
            let Some(peer) = fabric.peer(s, port) else { continue };
            if let Some(&i) = index.get(&peer).filter(|_| fabric.node(peer.node).kind.is_ca()) {
                if !std::mem::replace(&mut taken[i], true) {
                    order.push(i);
                }
            }
        }
    }
    for &v in &sorted {
        if let Some(&i) = index.get(&LinkEnd { node: g.switches[v as usize], port: 0 }) {
            order.push(i);
        }
    }
    order
}

/// The switch-to-switch channels a packet for `lid` crosses from switch
/// `from`, as `(switch, output port)`, following `tables`; `None` if the
/// tables do not deliver it (for `dfsssp`, which routes only delivered tables).
pub(crate) fn switch_channels(
    fabric: &Fabric,
    tables: &ForwardingTables,
    from: NodeId,
    lid: Lid,
    out: &mut Vec<(NodeId, PortNum)>,
) -> Option<()> {
    out.clear();
    let mut cur = from;
    for _ in 0..=fabric.num_nodes() {
        let port = tables.get(cur, lid)?;
        if port == 0 {
            return Some(());
        }
        let peer = fabric.peer(cur, port)?;
        if !fabric.node(peer.node).kind.is_switch() {
            return Some(());
        }
        out.push((cur, port));
        cur = peer.node;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{uniform_loads, LoadLids};
    use crate::hops::SwitchHops;
    use crate::routing::minhop::MinHop;
    use crate::routing::testfab::{self, check_routes, ring4};
    use crate::routing::{build_engine, RoutingOptions};
    use ibnetsim_fabric::gen::{FatTreeParams, IrregularParams, MeshParams, RingParams};
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    fn route(f: &Fabric, lmc: u8) -> (LidMap, Routing) {
        testfab::routed(&Sssp, f, lmc)
    }

    fn max_load(f: &Fabric, lids: &LidMap, tables: &ForwardingTables) -> f64 {
        uniform_loads(f, lids, tables, LoadLids::Base).unwrap().max().map_or(0.0, |m| m.1)
    }

    /// The most loaded switch-to-switch channel.
    fn max_switch_load(f: &Fabric, lids: &LidMap, tables: &ForwardingTables) -> f64 {
        let loads = uniform_loads(f, lids, tables, LoadLids::Base).unwrap();
        let sw = |e: LinkEnd| f.node(e.node).kind.is_switch();
        (0..loads.loads.len())
            .map(|i| crate::analysis::DirLink(i as u32))
            .filter(|dl| sw(dl.from(f)) && sw(dl.to(f)))
            .map(|dl| loads.loads[dl.0 as usize])
            .fold(0.0, f64::max)
    }

    #[test]
    fn registered() {
        assert_eq!(build_engine(NAME, &RoutingOptions::default()).unwrap().name(), NAME);
    }

    #[test]
    fn ring_lfts_by_hand() {
        // P = 8 LIDs, so every edge starts at 64; every switch counts 2 LIDs
        // (its host and itself), so the order is h0..h3, then s0..s3.
        // "w(a→b)" is the weight of the channel a→b.
        //
        // h0 (LID 1): from s0 (distance 1), s1 and s3 at 65; s1, lowered
        // first, rises to the heap's root and s3 only ties it, so s1 is
        // settled first and offers s2 129; s3 only ties that, so s2 goes
        // through s1. Then w(s1→s0) += 4 (s1's and s2's LIDs), w(s2→s1) += 2,
        // w(s3→s0) += 2.
        // h1 (LID 2): s0 at 65 (w(s0→s1) = 64), s2 at 67 (w(s2→s1) = 66); s3
        // via s0 costs 65 + w(s3→s0) = 131, via s2 67 + 64 = 131: the first
        // offer stands, s3 goes through s0. w(s0→s1) += 4, w(s3→s0) += 2,
        // w(s2→s1) += 2.
        // h2 (LID 3): s1 and s3 at 65; s0 via s1 costs 65 + w(s0→s1) = 133,
        // via s3 65 + w(s0→s3) = 129: through s3. w(s0→s3) += 2,
        // w(s3→s2) += 4, w(s1→s2) += 2.
        // h3 (LID 4): s2 at 65 (w(s2→s3) = 64), s0 at 67 (w(s0→s3) = 66); s1
        // via s2 costs 65 + w(s1→s2) = 131, via s0 67 + w(s1→s0) = 135:
        // through s2.
        let f = ring4();
        let (lids, r) = route(&f, 0);
        check_routes(&f, &lids, &r.tables).unwrap();
        let row = |sw: &str| r.tables.lft(f.node_by_name(sw).unwrap()).unwrap().entries()[..5].to_vec();
        // Port 1 is clockwise (s_i to s_i+1), port 2 counter-clockwise, 3 the host.
        //                       LID: 0    1  2  3  4
        assert_eq!(row("s0"), vec![255, 3, 1, 2, 2]);
        assert_eq!(row("s1"), vec![255, 2, 3, 1, 1]);
        assert_eq!(row("s2"), vec![255, 2, 2, 3, 1]);
        assert_eq!(row("s3"), vec![255, 1, 1, 2, 3]);
        // Every switch reaches its own LID on port 0 and the others minimally.
        for (i, s) in ["s0", "s1", "s2", "s3"].iter().enumerate() {
            assert_eq!(r.tables.get(f.node_by_name(s).unwrap(), 5 + i as Lid), Some(0));
        }
        testfab::check_minimal(&f, &lids, &SwitchHops::compute(&f), &r.tables).unwrap();
        // The four two-hop routes use the eight directed ring channels once
        // each, so every channel carries one one-hop and one two-hop route:
        // 2 × 1/3 of a host's rate. minhop sends two of them the same way
        // round (s2→s3→s0 and s3→s0→s1), loading s3→s0 with three routes.
        // (Host links carry 1.0 either way.)
        assert!((max_switch_load(&f, &lids, &r.tables) - 2.0 / 3.0).abs() < 1e-9);
        assert!((max_switch_load(&f, &lids, &MinHop.route(&f, &lids).unwrap().tables) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn lmc_lids_of_one_port_take_disjoint_paths() {
        // Two switches, two parallel cables: the two LIDs of each remote host
        // leave by different cables, and the hosts' base LIDs alternate.
        let f = testfab::two_switch_parallel(2, 2);
        let (lids, r) = route(&f, 1);
        check_routes(&f, &lids, &r.tables).unwrap();
        let a = f.node_by_name("a").unwrap();
        for i in 0..2 {
            let ps: Vec<u8> = lids
                .of_port(testfab::host(&f, "b", i), 1)
                .unwrap()
                .lids()
                .map(|l| r.tables.get(a, l).unwrap())
                .collect();
            assert_eq!({ let mut s = ps.clone(); s.sort(); s }, vec![1, 2], "b{i}: {ps:?}");
        }
    }

    #[test]
    fn disconnected_switches_are_unroutable() {
        let mut f = Fabric::new();
        let s0 = f.add_switch("s0", 4).unwrap();
        let s1 = f.add_switch("s1", 4).unwrap();
        let bridge = f.add_hca("bridge", 2).unwrap();
        f.connect(s0, 1, bridge, 1, LinkSpec::default()).unwrap();
        f.connect(s1, 1, bridge, 2, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let err = Sssp.route(&f, &lids).unwrap_err();
        assert!(matches!(err, SmError::Unroutable { .. }), "{err}");
    }

    #[test]
    fn a_ca_pair_cabled_back_to_back_is_unroutable_by_name() {
        // A switch with host h0, and a0 – a1 cabled to each other only: a0's
        // and a1's ports are in no switch's order list, and the error names
        // the first of them (a0, LID order after h0).
        let mut f = Fabric::new();
        let s = f.add_switch("s", 4).unwrap();
        let h0 = f.add_hca("h0", 1).unwrap();
        f.connect(h0, 1, s, 1, LinkSpec::default()).unwrap();
        let a0 = f.add_hca("a0", 1).unwrap();
        let a1 = f.add_hca("a1", 1).unwrap();
        f.connect(a0, 1, a1, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        match Sssp.route(&f, &lids).unwrap_err() {
            SmError::Unroutable { target, lid, .. } => {
                assert_eq!((target.as_str(), lid), ("a0 port 1", lids.of_port(a0, 1).unwrap().base));
            }
            e => panic!("{e}"),
        }
    }

    /// Generated fabrics with the max channel load of sssp and minhop under
    /// uniform all-to-all traffic (base LIDs, LMC 0), as fractions of a
    /// link's rate. sssp is never worse except on "irregular 24", where it
    /// is 0.9 % higher (and ties on the 4x4 torus): balancing over all LIDs
    /// (switch LIDs included) is not the same as minimising the CA-to-CA
    /// maximum.
    fn fabrics() -> Vec<(&'static str, Fabric, f64, f64)> {
        vec![
            ("ring 6", RingParams { switches: 6, hosts_per_switch: 2, link: LinkSpec::default() }.build().unwrap(), 2.0, 24.0 / 11.0),
            ("mesh 4x4", MeshParams::new(&[4, 4], false, 2).build().unwrap(), 78.0 / 31.0, 80.0 / 31.0),
            ("torus 4x4", MeshParams::new(&[4, 4], true, 2).build().unwrap(), 46.0 / 31.0, 46.0 / 31.0),
            ("torus 3x3x3", MeshParams::new(&[3, 3, 3], true, 1).build().unwrap(), 1.0, 1.0),
            ("irregular 16", IrregularParams::with_links_per_switch(16, 8, 4, 4, 7).build().unwrap(), 164.0 / 63.0, 200.0 / 63.0),
            ("irregular 24", IrregularParams::with_links_per_switch(24, 8, 3, 4, 3).build().unwrap(), 88.0 / 19.0, 436.0 / 95.0),
            ("4-ary 2-tree", FatTreeParams::new(4, 2).build().unwrap(), 1.0, 1.0),
            ("4-ary 3-tree", FatTreeParams::new(4, 3).build().unwrap(), 88.0 / 63.0, 192.0 / 63.0),
        ]
    }

    #[test]
    fn generated_fabrics_are_complete_minimal_and_balanced() {
        for (name, f, want_sssp, want_minhop) in fabrics() {
            for lmc in [0, 1] {
                let (lids, r) = route(&f, lmc);
                check_routes(&f, &lids, &r.tables).unwrap_or_else(|e| panic!("{name} lmc {lmc}: {e}"));
                if lmc == 0 {
                    let hops = SwitchHops::compute(&f);
                    testfab::check_minimal(&f, &lids, &hops, &r.tables).unwrap_or_else(|e| panic!("{name}: {e}"));
                    let mh = MinHop.route(&f, &lids).unwrap();
                    let (s, m) = (max_load(&f, &lids, &r.tables), max_load(&f, &lids, &mh.tables));
                    assert!((s - want_sssp).abs() < 1e-9 && (m - want_minhop).abs() < 1e-9, "{name}: sssp {s} minhop {m}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn random_fabrics_route_completely(
            seed in any::<u64>(), switches in 1usize..12, extra in 0usize..12, lmc in 0u8..3,
        ) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            let (lids, r) = route(&f, lmc);
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            let again = Sssp.route(&f, &lids).unwrap();
            prop_assert_eq!(&again.tables, &r.tables);
        }
    }
}
