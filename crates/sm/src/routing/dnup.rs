//! `dnup`: down/up routing after OpenSM 3.3.23's `opensm/osm_ucast_dnup.c`.
//!
//! Up*/down* turned over: the switches are ranked from the leaves instead of
//! from roots. Every switch with a CA (or router) cabled to it is a leaf,
//! rank 0; the others take their BFS distance from the nearest leaf
//! (`dnup_subn_rank`). A move from a switch to a higher-ranked one (away from
//! the leaves) is "down" in OpenSM's naming, to a lower-ranked one "up", and
//! between equal ranks "equal"; a path may never go up and then down. On a
//! fat tree that is the usual up-then-down through the spines, without having
//! to name the roots.
//!
//! Per destination switch, OpenSM fills its hop tables with a BFS that runs
//! *backwards*, from the destination (`dnup_bfs_by_node`), and this module
//! repeats it step for step, because its order decides which ports count as
//! minimal:
//!
//! * the destination starts with 0 hops and direction "down"; switches are
//!   taken from a FIFO queue, their ports scanned from 1 up;
//! * the step from `u` to a neighbour is refused when `u` was reached by an
//!   "up" step and the step would be "down" (reversed, that path would go up
//!   and then down); OpenSM's `connect_roots` relaxation is off by default and
//!   not modelled;
//! * otherwise the neighbour's port back to `u` gets `u`'s least hop count + 1
//!   if that is less than what the port has, and the neighbour is queued with
//!   the step's direction unless it is queued already (a switch leaves the
//!   queue unmarked, so a later, shorter path can queue it again, and its
//!   direction is the one of the step that last queued it);
//! * a port is on a path when its hop count equals the switch's least one.
//!
//! The tables are then built by OpenSM's unicast manager as for `minhop`
//! ([`super::ucast`]). A fabric without a single leaf switch cannot be routed
//! (OpenSM's "No leaf switches found"). A LID that a switch has no legal
//! path to is left empty, as OpenSM leaves it, and counted in the routing's
//! notes: the top switches of a fat tree cannot reach each other without
//! going down and then up, and a switch that only leads toward the leaves
//! cannot reach the CAs beyond them. No route passes through such an entry.
//! A leaf switch that cannot reach a CA is a host pair without a route: that
//! fails the build, naming the LID. Options used: none.

use ibnetsim_fabric::{Fabric, PortNum};

use super::ucast::{build_lfts, switch_table_order, PathSet};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::hops::SwitchHops;
use crate::lft::ForwardingTables;
use crate::lid::LidMap;

/// Registry name.
pub const NAME: &str = "dnup";

/// A hop count no path has (OpenSM's `OSM_NO_PATH`).
const NO_PATH: u8 = u8::MAX;

/// The down/up engine.
#[derive(Debug, Clone, Default)]
pub struct DnUp;

/// Registry constructor.
pub(crate) fn build(_options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    Ok(Box::new(DnUp))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Up,
    Down,
    Equal,
}

/// OpenSM's `dnup_get_dir`: two rank-0 switches cabled together count as
/// equal, like any two of a rank.
fn direction(cur_rank: u32, rem_rank: u32) -> Dir {
    match cur_rank.cmp(&rem_rank) {
        std::cmp::Ordering::Less => Dir::Down,
        std::cmp::Ordering::Greater => Dir::Up,
        std::cmp::Ordering::Equal => Dir::Equal,
    }
}

/// A switch-to-switch cable seen from one end: the local port, the neighbour
/// (dense switch index) and the neighbour's port.
#[derive(Debug, Clone, Copy)]
struct Cable {
    port: PortNum,
    peer: usize,
    peer_port: PortNum,
}

/// Each switch's cables to other switches, in port order.
fn cables(fabric: &Fabric, hops: &SwitchHops) -> Vec<Vec<Cable>> {
    hops.switches()
        .iter()
        .map(|&s| {
            fabric
                .switch_neighbors(s)
                .map(|(port, end)| Cable { port, peer: hops.index_of(end.node).expect("a switch"), peer_port: end.port })
                .collect()
        })
        .collect()
}

/// `dnup_subn_rank`: leaves (switches with a non-switch neighbour) are rank 0,
/// the others their BFS distance from the leaves; `u32::MAX` for a switch no
/// leaf reaches. `Err` when there is no leaf at all.
fn ranks(fabric: &Fabric, hops: &SwitchHops, cables: &[Vec<Cable>]) -> Result<Vec<u32>, SmError> {
    let mut rank = vec![u32::MAX; hops.num_switches()];
    let mut queue = std::collections::VecDeque::new();
    for s in switch_table_order(fabric) {
        let i = hops.index_of(s).expect("a switch");
        let leaf = fabric.node(s).connected_ports().any(|(p, _)| fabric.peer(s, p).is_some_and(|e| !fabric.node(e.node).kind.is_switch()));
        if leaf {
            rank[i] = 0;
            queue.push_back(i);
        }
    }
    if queue.is_empty() {
        return Err(SmError::Unsupported {
            engine: NAME.into(),
            reason: "no switch has a CA cabled to it, so there is no leaf to rank the switches from (OpenSM: \"No leaf switches found\")".into(),
        });
    }
    while let Some(u) = queue.pop_front() {
        for c in &cables[u] {
            if rank[c.peer] > rank[u] + 1 {
                rank[c.peer] = rank[u] + 1;
                queue.push_back(c.peer);
            }
        }
    }
    Ok(rank)
}

/// The hop tables of every destination switch under the down/up rule.
struct DnUpPaths {
    n: usize,
    /// `least[dst * n + sw]`: the switch's least hop count toward `dst`.
    least: Vec<u8>,
    /// `on[dst * n + sw]`: bit `k` set when `sw`'s k-th cable (in port order)
    /// is on a path toward `dst`.
    on: Vec<u64>,
    cables: Vec<Vec<Cable>>,
}

impl DnUpPaths {
    fn compute(cables: Vec<Vec<Cable>>, rank: &[u32]) -> Self {
        let n = cables.len();
        let mut least = vec![NO_PATH; n * n];
        let mut on = vec![0u64; n * n];
        // Per-port hop counts of the destination being filled, by switch and
        // cable index (a port with no switch behind it never gets one).
        let mut port_hops: Vec<Vec<u8>> = cables.iter().map(|c| vec![NO_PATH; c.len()]).collect();
        // Cable index at `peer` of each (switch, cable): the port the BFS sets.
        let back: Vec<Vec<usize>> = cables
            .iter()
            .enumerate()
            .map(|(s, cs)| {
                cs.iter()
                    .map(|c| cables[c.peer].iter().position(|b| b.peer == s && b.peer_port == c.port).expect("a cable has two ends"))
                    .collect()
            })
            .collect();
        let mut dir = vec![Dir::Down; n];
        let mut queued = vec![false; n];
        let mut queue = std::collections::VecDeque::new();
        for dst in 0..n {
            port_hops.iter_mut().for_each(|h| h.fill(NO_PATH));
            let row = &mut least[dst * n..(dst + 1) * n];
            row[dst] = 0;
            dir[dst] = Dir::Down;
            queue.push_back(dst);
            while let Some(u) = queue.pop_front() {
                queued[u] = false;
                let current = dir[u];
                for (k, c) in cables[u].iter().enumerate() {
                    let next = direction(rank[u], rank[c.peer]);
                    if current == Dir::Up && next == Dir::Down {
                        continue;
                    }
                    let via = row[u].saturating_add(1);
                    let slot = &mut port_hops[c.peer][back[u][k]];
                    if via < *slot {
                        *slot = via;
                        row[c.peer] = row[c.peer].min(via);
                        if !queued[c.peer] {
                            dir[c.peer] = next;
                            queued[c.peer] = true;
                            queue.push_back(c.peer);
                        }
                    }
                }
            }
            for (s, hs) in port_hops.iter().enumerate() {
                if s == dst || row[s] == NO_PATH {
                    continue;
                }
                on[dst * n + s] = hs.iter().enumerate().filter(|&(_, &h)| h == row[s]).fold(0u64, |m, (k, _)| m | 1 << k);
            }
        }
        DnUpPaths { n, least, on, cables }
    }
}

impl PathSet for DnUpPaths {
    fn reachable(&self, sw: usize, dst: usize) -> bool {
        self.least[dst * self.n + sw] != NO_PATH
    }

    fn on_path(&self, sw: usize, peer: usize, dst: usize) -> bool {
        let bits = self.on[dst * self.n + sw];
        self.cables[sw].iter().enumerate().any(|(k, c)| c.peer == peer && bits & (1 << k) != 0)
    }

    fn leaves_unreachable_entries(&self) -> bool {
        true
    }
}

impl RoutingEngine for DnUp {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let hops = SwitchHops::compute(fabric);
        if hops.num_switches() == 0 {
            let tables = ForwardingTables::new(fabric, lids.top_lid());
            return Ok(Routing::unicast(tables, vec!["dnup: the fabric has no switches, nothing to route".into()]));
        }
        let cables = cables(fabric, &hops);
        if let Some((s, c)) = cables.iter().enumerate().find(|(_, c)| c.len() > 64) {
            return Err(SmError::Unsupported {
                engine: NAME.into(),
                reason: format!("switch '{}' has {} switch-to-switch cables, more than the 64 this engine tracks", fabric.node(hops.switches()[s]).name, c.len()),
            });
        }
        let rank = ranks(fabric, &hops, &cables)?;
        let paths = DnUpPaths::compute(cables, &rank);
        let tables = build_lfts(fabric, lids, &hops, &paths, false)?;
        let top = rank.iter().filter(|&&r| r != u32::MAX).max().copied().unwrap_or(0);
        let mut notes = vec![format!("dnup: switches ranked from {} leaf switches, highest rank {top}", rank.iter().filter(|&&r| r == 0).count())];
        let holes = paths.least.iter().filter(|&&h| h == NO_PATH).count();
        if holes > 0 {
            // Never silent: `check` lists the switch LIDs among unreachable switch pairs.
            notes.push(format!(
                "dnup: {holes} (switch, destination switch) pairs have no down/up path, and their LIDs are left empty, as \
                 OpenSM leaves them (e.g. between the top switches of a fat tree); every switch with CAs reaches every CA"
            ));
        }
        Ok(Routing::unicast(tables, notes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze, AnalysisOptions, SlView};
    use crate::routing::minhop::MinHop;
    use crate::routing::testfab::{self, trace};
    use ibnetsim_fabric::gen::IrregularParams;
    use ibnetsim_fabric::{LinkSpec, NodeId};

    /// Cyclic components of the channel dependency graph of the CA routes, one VL.
    fn credit_loops(f: &Fabric, lids: &LidMap, r: &Routing) -> u64 {
        let view = SlView::modulo(1).unwrap();
        analyze(f, lids, &r.tables, &view, &AnalysisOptions::default()).unwrap().credit_loops.cyclic_sccs
    }

    /// Leaves `a`, `b`, `l` with one host each. The short way from `a` to `b`
    /// runs through the leaf `l` between `p` and `q` (4 hops: away from the
    /// leaves, toward them, away again); the legal one is the chain `a` – `r1`
    /// – `r2` – `r3` – `r4` – `b` (5 hops), whose ranks are 1, 2, 2, 1.
    fn valley() -> Fabric {
        let mut f = Fabric::new();
        let sw: Vec<NodeId> = ["a", "b", "l", "p", "q", "r1", "r2", "r3", "r4"].iter().map(|n| f.add_switch(*n, 8).unwrap()).collect();
        let [a, b, l, p, q, r1, r2, r3, r4] = sw[..] else { unreachable!() };
        let mut next = vec![1u8; sw.len()];
        let mut cable = |f: &mut Fabric, x: NodeId, y: NodeId| {
            let (px, py) = (next[x.index()], next[y.index()]);
            f.connect(x, px as u32, y, py as u32, LinkSpec::default()).unwrap();
            next[x.index()] += 1;
            next[y.index()] += 1;
        };
        for (x, y) in [(a, p), (p, l), (l, q), (q, b), (a, r1), (r1, r2), (r2, r3), (r3, r4), (r4, b)] {
            cable(&mut f, x, y);
        }
        for (i, leaf) in [a, b, l].into_iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(h, 1, leaf, 7, LinkSpec::default()).unwrap();
        }
        f
    }

    fn node(f: &Fabric, name: &str) -> NodeId {
        f.node_by_name(name).unwrap()
    }

    #[test]
    fn leaves_rank_zero_and_the_rest_by_distance() {
        let f = valley();
        let hops = SwitchHops::compute(&f);
        let rank = ranks(&f, &hops, &cables(&f, &hops)).unwrap();
        let of = |n: &str| rank[hops.index_of(node(&f, n)).unwrap()];
        let got: Vec<u32> = ["a", "b", "l", "p", "q", "r1", "r2", "r3", "r4"].iter().map(|n| of(n)).collect();
        assert_eq!(got, vec![0, 0, 0, 1, 1, 1, 2, 2, 1]);
    }

    #[test]
    fn the_short_way_through_a_leaf_is_refused_for_the_legal_longer_one() {
        let f = valley();
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = DnUp.route(&f, &lids).unwrap();
        let to_b = lids.of_port(node(&f, "h1"), 1).unwrap().base;
        let path: Vec<String> = trace(&f, &lids, &r.tables, node(&f, "a"), to_b).unwrap().iter().map(|&(n, _)| f.node(n).name.clone()).collect();
        assert_eq!(path, ["a", "r1", "r2", "r3", "r4", "b"]);
        // minhop takes the 4-hop way through l.
        let m = MinHop.route(&f, &lids).unwrap();
        let short: Vec<String> = trace(&f, &lids, &m.tables, node(&f, "a"), to_b).unwrap().iter().map(|&(n, _)| f.node(n).name.clone()).collect();
        assert_eq!(short, ["a", "p", "l", "q", "b"]);
        // p leads only toward the leaves a and l: it cannot reach h1 and keeps
        // an empty entry, which no route uses; the notes say so.
        assert_eq!(r.tables.get(node(&f, "p"), to_b), None);
        assert!(r.notes.iter().any(|n| n.contains("left empty")), "{:?}", r.notes);
        // Every host reaches every other host, and the routes close no credit loop.
        for src in ["a", "b", "l"] {
            for h in ["h0", "h1", "h2"] {
                trace(&f, &lids, &r.tables, node(&f, src), lids.of_port(node(&f, h), 1).unwrap().base).unwrap();
            }
        }
        assert_eq!(credit_loops(&f, &lids, &r), 0);
    }

    #[test]
    fn fat_trees_route_every_ca_and_stay_free_of_credit_loops() {
        let f = testfab::fat_tree(4, 2, 2, 2);
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = DnUp.route(&f, &lids).unwrap();
        for sw in f.switches() {
            for p in lids.ports().iter().filter(|p| !f.node(p.end.node).kind.is_switch()) {
                trace(&f, &lids, &r.tables, sw, p.base).unwrap();
            }
        }
        assert_eq!(credit_loops(&f, &lids, &r), 0);
    }

    #[test]
    fn the_notes_count_the_switch_pairs_without_a_down_up_path() {
        // Leaves l0, l1 (a host each, rank 0) under spines s0, s1 (rank 1).
        // A spine reaches the other spine only down to a leaf and up again,
        // which the rule refuses: exactly 2 ordered pairs (s0 → s1, s1 → s0)
        // have no path; every leaf reaches everything through a spine.
        let mut f = Fabric::new();
        let sw: Vec<NodeId> = ["l0", "l1", "s0", "s1"].iter().map(|n| f.add_switch(*n, 4).unwrap()).collect();
        for (leaf, lp) in [(sw[0], 1), (sw[1], 2)] {
            for (spine, sp) in [(sw[2], 1), (sw[3], 2)] {
                f.connect(leaf, sp, spine, lp, LinkSpec::default()).unwrap();
            }
        }
        for (i, &leaf) in sw[..2].iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(h, 1, leaf, 4, LinkSpec::default()).unwrap();
        }
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = DnUp.route(&f, &lids).unwrap();
        let holes: Vec<&String> = r.notes.iter().filter(|n| n.contains("have no down/up path")).collect();
        assert_eq!(holes.len(), 1, "{:?}", r.notes);
        assert!(holes[0].starts_with("dnup: 2 (switch, destination switch) pairs"), "{}", holes[0]);
        // The ring: every switch a leaf, every pair reachable, no such note.
        let ring = testfab::ring4();
        let lids = LidMap::assign(&ring, 0).unwrap();
        let r = DnUp.route(&ring, &lids).unwrap();
        assert!(!r.notes.iter().any(|n| n.contains("have no down/up path")), "{:?}", r.notes);
    }

    #[test]
    fn a_switch_may_have_64_switch_cables_but_not_65() {
        // A hub cabled to k edge switches, a host on each edge switch: the
        // hub's cables to switches are k, and the engine tracks 64 per switch.
        let star = |k: u32| {
            let mut f = Fabric::new();
            let hub = f.add_switch("hub", 65).unwrap();
            for i in 0..k {
                let e = f.add_switch(format!("e{i}"), 2).unwrap();
                f.connect(hub, i + 1, e, 1, LinkSpec::default()).unwrap();
                let h = f.add_hca(format!("h{i}"), 1).unwrap();
                f.connect(h, 1, e, 2, LinkSpec::default()).unwrap();
            }
            f
        };
        let f = star(64);
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = DnUp.route(&f, &lids).unwrap();
        let h63 = lids.of_port(node(&f, "h63"), 1).unwrap().base;
        assert_eq!(trace(&f, &lids, &r.tables, node(&f, "e0"), h63).unwrap().len(), 3);
        let f = star(65);
        let lids = LidMap::assign(&f, 0).unwrap();
        let e = DnUp.route(&f, &lids).unwrap_err().to_string();
        assert!(e.contains("switch 'hub' has 65 switch-to-switch cables"), "{e}");
    }

    #[test]
    fn where_every_switch_is_a_leaf_it_routes_as_minhop() {
        // Every step is between equal ranks, so nothing is refused: the
        // tables are minhop's, credit loops included.
        for seed in [1, 5, 9] {
            let f = IrregularParams::with_links_per_switch(16, 8, 4, 2, seed).build().unwrap();
            let lids = LidMap::assign(&f, 0).unwrap();
            let (d, m) = (DnUp.route(&f, &lids).unwrap(), MinHop.route(&f, &lids).unwrap());
            for sw in f.switches() {
                assert_eq!(d.tables.lft(sw).unwrap().entries(), m.tables.lft(sw).unwrap().entries(), "seed {seed}");
            }
        }
        let ring = testfab::ring4();
        let lids = LidMap::assign(&ring, 0).unwrap();
        let (d, m) = (DnUp.route(&ring, &lids).unwrap(), MinHop.route(&ring, &lids).unwrap());
        assert_eq!(credit_loops(&ring, &lids, &d), credit_loops(&ring, &lids, &m));
    }

    #[test]
    fn a_fabric_without_leaf_switches_or_with_a_stranded_host_is_refused() {
        let mut f = Fabric::new();
        let s0 = f.add_switch("s0", 4).unwrap();
        let s1 = f.add_switch("s1", 4).unwrap();
        f.connect(s0, 1, s1, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let e = DnUp.route(&f, &lids).unwrap_err().to_string();
        assert!(e.contains("no switch has a CA cabled to it"), "{e}");
        // Leaves a, m, b on a line a – x – m – y – b: from a, the way to b
        // goes away from the leaves (x), toward them (m), away again (y), and
        // there is no other: h2 has no route from a.
        let mut g = Fabric::new();
        let a = g.add_switch("a", 4).unwrap();
        let x = g.add_switch("x", 4).unwrap();
        let m = g.add_switch("m", 4).unwrap();
        let y = g.add_switch("y", 4).unwrap();
        let b = g.add_switch("b", 4).unwrap();
        for (u, pu, v, pv) in [(a, 1, x, 1), (x, 2, m, 1), (m, 2, y, 1), (y, 2, b, 1)] {
            g.connect(u, pu, v, pv, LinkSpec::default()).unwrap();
        }
        for (i, leaf) in [a, m, b].into_iter().enumerate() {
            let h = g.add_hca(format!("h{i}"), 1).unwrap();
            g.connect(h, 1, leaf, 4, LinkSpec::default()).unwrap();
        }
        let lids = LidMap::assign(&g, 0).unwrap();
        let e = DnUp.route(&g, &lids).unwrap_err().to_string();
        assert!(e.contains("is unreachable from switch"), "{e}");
    }
}
