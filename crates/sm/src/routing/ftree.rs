//! `ftree`: fat-tree routing after OpenSM's `ftree` engine
//! (`opensm/osm_ucast_ftree.c`, Zahavi et al.).
//!
//! `minhop` and `updn` balance each switch on its own, per destination switch,
//! so on a k-ary n-tree whole spine layers end up idle. `ftree` balances the
//! whole tree at once: each destination gets its own path down from the top.
//!
//! * Ranking (`fabric_rank_from_hcas`, `fabric_rerank_using_root`). Switches
//!   with CAs are leaves; the switches farthest (in hops) from every leaf are
//!   the roots; every switch is then ranked by its hop distance from the
//!   roots. A fat tree needs every switch with CAs at the deepest rank, no
//!   cable between two switches of one rank, and, rank by rank, the same
//!   number of up and down neighbours and of cables to each
//!   (`fabric_validate_topology`); otherwise the engine fails with
//!   [`SmError::Unsupported`] saying which rule is broken.
//! * Port groups. A switch's cables are grouped by the switch at their other
//!   end; groups toward a lower rank are "up", toward a higher rank "down".
//!   Groups, leaves and a leaf's CA ports are ordered by switch index
//!   (OpenSM's switch-table order) and port number, so a fabric always gets
//!   the same tables.
//! * Destinations (`fabric_route_to_cns`). Leaf by leaf, each CA port's LID is
//!   routed "down by going up" (`fabric_route_downgoing_by_going_up`): from the
//!   switch the route has reached, the up group that carries the fewest
//!   down-going routes so far (ties: the parent carrying fewer, then the
//!   lower index) becomes the main path; the parent points its entry down to
//!   this switch, and the climb continues from the parent. The other parents
//!   get a down route too (not counted), unless they already have one as
//!   short. At every switch of the climb, routes are set "up by going down"
//!   (`fabric_route_upgoing_by_going_down`): each descendant without a route as
//!   short points up toward it. A leaf with fewer CA ports than the fullest
//!   leaf routes the missing ones as dummies (counters only, no entries), as
//!   OpenSM does, so that a partly populated tree keeps its balance.
//! * Switch LIDs (`fabric_route_to_switches`) are routed the same way but not
//!   counted. Up*/down* cannot reach every switch of a multi-rooted tree (a
//!   middle switch is no descendant of a root it is not cabled to); OpenSM
//!   leaves those entries empty unless `connect_roots` is set. Here every such
//!   entry takes a minimum-hop port toward the switch (the lowest-numbered
//!   one), and the notes count them. Packets to CA LIDs never use them.
//!
//! On a full k-ary n-tree every switch then sends exactly one destination down
//! each of its up cables, so uniform traffic loads every link at most 1
//! (throughput bound 1.0), and all CA routes are minimal and up*/down*
//! (deadlock-free). Differences from OpenSM: LMC > 0 is routed (each LID
//! offset as its own round of destinations, all base LIDs first), where
//! OpenSM's ftree refuses LMC > 0; links within a rank (OpenSM's sibling
//! groups), root and CN/IO GUID files, reverse hops and the tuple indexing of
//! switches are not implemented; a non-fat-tree is an error here, where OpenSM
//! falls back to `minhop`. Options used: none.

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId, PortNum};

use super::ucast::switch_table_order;
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::hops::SwitchHops;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};

/// Registry name.
pub const NAME: &str = "ftree";

/// The fat-tree engine.
#[derive(Debug, Clone, Default)]
pub struct FatTree;

/// Registry constructor.
pub(crate) fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    if !options.roots.is_empty() {
        return Err(SmError::option("roots", format!("'{NAME}' finds the roots itself (the switches farthest from the CAs); drop --root")));
    }
    Ok(Box::new(FatTree))
}

const NO_HOPS: u16 = u16::MAX;

/// The cables from a switch to one neighbouring switch.
#[derive(Debug, Clone)]
struct Group {
    /// Index of the switch at the other end.
    remote: usize,
    /// (local port, remote port), in local port order.
    ports: Vec<(PortNum, PortNum)>,
    /// Down-going routes (toward this switch) assigned over the group, per port.
    down: Vec<u32>,
    /// Up-going routes (away from this switch) assigned over the group, per port.
    up: Vec<u32>,
}

impl Group {
    fn down_total(&self) -> u32 {
        self.down.iter().sum()
    }

    fn up_total(&self) -> u32 {
        self.up.iter().sum()
    }

    /// The first port with the fewest routes by `count`.
    fn least(count: &[u32]) -> usize {
        let mut best = 0;
        for (i, &c) in count.iter().enumerate() {
            if c < count[best] {
                best = i;
            }
        }
        best
    }
}

#[derive(Debug, Clone)]
struct Sw {
    node: NodeId,
    rank: u32,
    up: Vec<Group>,
    down: Vec<Group>,
    /// (switch port, CA port) in switch port order.
    cas: Vec<(PortNum, LinkEnd)>,
    /// Main-path down routes this switch carries (tie-break between parents).
    down_load: u32,
}

/// The ranked fabric and the routing state of one run.
struct Tree {
    sws: Vec<Sw>,
    leaf_rank: u32,
    /// Per destination: hops from each switch (NO_HOPS: no route yet).
    hops: Vec<u16>,
    /// Destination being routed; `None` for a dummy (counters only).
    lid: Option<Lid>,
    tables: ForwardingTables,
}

fn unsupported(reason: String) -> SmError {
    SmError::Unsupported { engine: NAME.to_string(), reason }
}

impl Tree {
    /// Ranks and groups the switches, or says why the fabric is no fat tree.
    fn build(fabric: &Fabric, top_lid: Lid) -> Result<Self, SmError> {
        let order = switch_table_order(fabric);
        if order.is_empty() {
            return Err(unsupported("the fabric has no switches".into()));
        }
        let mut index = vec![usize::MAX; fabric.num_nodes()];
        for (i, &s) in order.iter().enumerate() {
            index[s.index()] = i;
        }
        let name = |i: usize| fabric.node(order[i]).name.clone();
        // Switch neighbours (loopback cables ignored, as OpenSM does) and CA ports.
        let mut nbrs: Vec<Vec<(PortNum, usize, PortNum)>> = vec![Vec::new(); order.len()];
        let mut cas: Vec<Vec<(PortNum, LinkEnd)>> = vec![Vec::new(); order.len()];
        for (i, &s) in order.iter().enumerate() {
            for (p, _) in fabric.node(s).connected_ports() {
                let Some(peer) = fabric.peer(s, p) else { continue };
                if fabric.node(peer.node).kind.is_switch() {
                    if peer.node != s {
                        nbrs[i].push((p, index[peer.node.index()], peer.port));
                    }
                } else {
                    cas[i].push((p, peer));
                }
            }
        }
        for ca in fabric.cas() {
            for (p, _) in fabric.node(ca).connected_ports() {
                if let Some(peer) = fabric.peer(ca, p).filter(|e| !fabric.node(e.node).kind.is_switch()) {
                    return Err(unsupported(format!(
                        "CA '{}' port {p} is cabled to CA '{}', not to a switch",
                        fabric.node(ca).name,
                        fabric.node(peer.node).name
                    )));
                }
            }
        }
        let leaves: Vec<usize> = (0..order.len()).filter(|&i| !cas[i].is_empty()).collect();
        if leaves.is_empty() {
            return Err(unsupported("no switch has a CA, so there are no leaf switches".into()));
        }
        let bfs = |from: &[usize]| {
            let mut dist = vec![u32::MAX; order.len()];
            let mut queue = std::collections::VecDeque::new();
            for &s in from {
                dist[s] = 0;
                queue.push_back(s);
            }
            while let Some(s) = queue.pop_front() {
                for &(_, r, _) in &nbrs[s] {
                    if dist[r] == u32::MAX {
                        dist[r] = dist[s] + 1;
                        queue.push_back(r);
                    }
                }
            }
            dist
        };
        let from_leaves = bfs(&leaves);
        if let Some(i) = from_leaves.iter().position(|&d| d == u32::MAX) {
            return Err(unsupported(format!("switch '{}' is not connected to any switch with CAs", name(i))));
        }
        let height = *from_leaves.iter().max().expect("a switch");
        let roots: Vec<usize> = (0..order.len()).filter(|&i| from_leaves[i] == height).collect();
        let rank = bfs(&roots);
        let leaf_rank = *rank.iter().max().expect("a switch");
        for &l in &leaves {
            if rank[l] != leaf_rank {
                return Err(unsupported(format!(
                    "switch '{}' has CAs but is {} hops below the roots, while the leaves are {leaf_rank} hops below: CAs must all hang off the bottom rank",
                    name(l),
                    rank[l]
                )));
            }
        }
        let mut sws = Vec::with_capacity(order.len());
        for (i, &node) in order.iter().enumerate() {
            let (mut up, mut down): (Vec<Group>, Vec<Group>) = (Vec::new(), Vec::new());
            let mut by_remote = nbrs[i].clone();
            by_remote.sort_by_key(|&(p, r, _)| (r, p));
            for (p, r, rp) in by_remote {
                if rank[r] == rank[i] {
                    return Err(unsupported(format!(
                        "switches '{}' and '{}' are cabled but both {} hops below the roots: a fat tree has no links within a rank",
                        name(i),
                        name(r),
                        rank[i]
                    )));
                }
                let list = if rank[r] < rank[i] { &mut up } else { &mut down };
                match list.last_mut() {
                    Some(g) if g.remote == r => {
                        g.ports.push((p, rp));
                        g.down.push(0);
                        g.up.push(0);
                    }
                    _ => list.push(Group { remote: r, ports: vec![(p, rp)], down: vec![0], up: vec![0] }),
                }
            }
            sws.push(Sw { node, rank: rank[i], up, down, cas: std::mem::take(&mut cas[i]), down_load: 0 });
        }
        // OpenSM's fabric_validate_topology: switches of one rank look alike.
        let mut reference: Vec<Option<usize>> = vec![None; leaf_rank as usize + 1];
        for (i, s) in sws.iter().enumerate() {
            let Some(r) = reference[s.rank as usize] else {
                reference[s.rank as usize] = Some(i);
                continue;
            };
            let t = &sws[r];
            let cables = |groups: &[Group], want: Option<&Group>| {
                want.is_some_and(|w| groups.iter().any(|g| g.ports.len() != w.ports.len()))
            };
            let what = if s.up.len() != t.up.len() {
                Some(format!("{} and {} switches above", t.up.len(), s.up.len()))
            } else if s.rank != leaf_rank && s.down.len() != t.down.len() {
                Some(format!("{} and {} switches below", t.down.len(), s.down.len()))
            } else if cables(&s.up, t.up.first()) || (s.rank != leaf_rank && cables(&s.down, t.down.first())) {
                Some("different numbers of cables to their neighbours".to_string())
            } else {
                None
            };
            if let Some(what) = what {
                return Err(unsupported(format!(
                    "switches '{}' and '{}' are both {} hops below the roots but have {what}: not a regular fat tree",
                    fabric.node(t.node).name,
                    fabric.node(s.node).name,
                    s.rank
                )));
            }
        }
        Ok(Tree { hops: vec![NO_HOPS; sws.len()], sws, leaf_rank, lid: None, tables: ForwardingTables::new(fabric, top_lid) })
    }

    /// Points switch `sw`'s entry for the current destination at `port`.
    fn set(&mut self, sw: usize, port: PortNum, hops: u16) {
        self.hops[sw] = hops;
        if let Some(lid) = self.lid {
            self.tables.set(self.sws[sw].node, lid, port);
        }
    }

    /// Whether `sw` already has a route no longer than `hops`.
    fn has_as_short(&self, sw: usize, hops: u16) -> bool {
        self.hops[sw] != NO_HOPS && self.hops[sw] <= hops
    }

    /// Routes up toward `sw` from every descendant of `sw` (except through
    /// `prev`) that has no route as short; true when the subtree holds CAs.
    fn up_by_going_down(&mut self, sw: usize, prev: Option<usize>, hops: u16) -> bool {
        let mut created = !self.sws[sw].cas.is_empty();
        let mut order: Vec<usize> = (0..self.sws[sw].down.len()).collect();
        order.sort_by_key(|&g| (self.sws[sw].down[g].up_total(), self.sws[sw].down[g].remote));
        for g in order {
            let group = &self.sws[sw].down[g];
            let child = group.remote;
            if Some(child) == prev || self.has_as_short(child, hops + 1) {
                continue;
            }
            let p = Group::least(&group.up);
            let child_port = group.ports[p].1;
            self.set(child, child_port, hops + 1);
            if self.up_by_going_down(child, None, hops + 1) {
                created = true;
                self.sws[sw].down[g].up[p] += 1;
            }
        }
        created
    }

    /// Routes down toward `sw` from its parents and, recursively, their
    /// ancestors; `main` marks the counted main path.
    fn down_by_going_up(&mut self, sw: usize, prev: Option<usize>, main: bool, hops: u16) -> bool {
        let mut created = self.up_by_going_down(sw, prev, hops);
        if self.sws[sw].up.is_empty() {
            return created;
        }
        let mut order: Vec<usize> = (0..self.sws[sw].up.len()).collect();
        let sws = &self.sws;
        order.sort_by_key(|&g| {
            let group = &sws[sw].up[g];
            (group.down_total(), sws[group.remote].down_load, group.remote)
        });
        for (i, &g) in order.iter().enumerate() {
            let group = &self.sws[sw].up[g];
            let parent = group.remote;
            let p = Group::least(&group.down);
            let parent_port = group.ports[p].1;
            let is_main = main && i == 0;
            if is_main {
                let group = &mut self.sws[sw].up[g];
                group.down[p] += 1;
                self.sws[parent].down_load += 1;
                if !self.has_as_short(parent, hops + 1) {
                    self.set(parent, parent_port, hops + 1);
                }
            } else {
                if self.has_as_short(parent, hops + 1) {
                    continue;
                }
                self.set(parent, parent_port, hops + 1);
            }
            created |= self.down_by_going_up(parent, Some(sw), is_main, hops + 1);
        }
        created
    }

    /// Starts a destination: clears the per-destination state.
    fn start(&mut self, lid: Option<Lid>) {
        self.hops.fill(NO_HOPS);
        self.lid = lid;
    }
}

impl RoutingEngine for FatTree {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let mut t = Tree::build(fabric, lids.top_lid())?;
        let leaves: Vec<usize> = (0..t.sws.len()).filter(|&i| t.sws[i].rank == t.leaf_rank).collect();
        let most = leaves.iter().map(|&l| t.sws[l].cas.len()).max().unwrap_or(0);
        // CA LIDs: every offset in turn, leaf by leaf, dummies after each leaf's real CAs.
        for offset in 0..1u32 << lids.lmc() {
            for &leaf in &leaves {
                for c in 0..t.sws[leaf].cas.len() {
                    let (port, end) = t.sws[leaf].cas[c];
                    let Some(pl) = lids.of_port(end.node, end.port) else { continue };
                    if offset >= pl.count() {
                        continue;
                    }
                    let lid = pl.base + offset as Lid;
                    t.start(Some(lid));
                    t.set(leaf, port, 1);
                    t.down_by_going_up(leaf, None, true, 1);
                    if let Some(sw) = (0..t.sws.len()).find(|&s| t.hops[s] == NO_HOPS) {
                        return Err(unsupported(format!(
                            "switch '{}' has no up*/down* route to LID {lid:#06x} ({} port {})",
                            fabric.node(t.sws[sw].node).name,
                            fabric.node(end.node).name,
                            end.port
                        )));
                    }
                }
                for _ in t.sws[leaf].cas.len()..most {
                    t.start(None);
                    t.set(leaf, 0, 1);
                    t.down_by_going_up(leaf, None, true, 1);
                }
            }
        }
        // Switch LIDs: up*/down* where it reaches, uncounted; minimum hops elsewhere.
        let mut outside = 0usize;
        let mut switch_hops: Option<SwitchHops> = None;
        for target in 0..t.sws.len() {
            let node = t.sws[target].node;
            let Some(lid) = lids.switch_lid(node) else { continue };
            t.start(Some(lid));
            t.set(target, 0, 0);
            t.down_by_going_up(target, None, false, 0);
            for sw in 0..t.sws.len() {
                if t.hops[sw] != NO_HOPS {
                    continue;
                }
                let hops = switch_hops.get_or_insert_with(|| SwitchHops::compute(fabric));
                let from = t.sws[sw].node;
                let d = hops.distance(from, node).expect("connected");
                let port = fabric
                    .switch_neighbors(from)
                    .find(|&(_, peer)| hops.distance(peer.node, node) == Some(d - 1))
                    .map(|(p, _)| p)
                    .expect("a neighbour one hop closer");
                t.tables.set(from, lid, port);
                outside += 1;
            }
        }
        let roots = t.sws.iter().filter(|s| s.rank == 0).count();
        let mut notes = vec![format!(
            "fat tree of {} ranks: {roots} root switches, {} leaf switches, at most {most} CA ports per leaf",
            t.leaf_rank + 1,
            leaves.len()
        )];
        if outside > 0 {
            notes.push(format!(
                "{outside} switch-to-switch routes have no up*/down* path and take minimum-hop ports (OpenSM's connect_roots); routes to CA LIDs do not use them"
            ));
        }
        Ok(Routing::unicast(t.tables, notes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testfab::{self, check_routes, trace};
    use crate::routing::build_engine;
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    fn route(f: &Fabric, lmc: u8) -> Result<(LidMap, Routing), SmError> {
        let lids = LidMap::assign(f, lmc).unwrap();
        let r = FatTree.route(f, &lids)?;
        Ok((lids, r))
    }

    /// A ring of `n` switches, `hosts_on[i]` HCAs on switch i.
    fn ring(n: usize, hosts_on: &[u32]) -> Fabric {
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..n).map(|i| f.add_switch(format!("s{i}"), 8).unwrap()).collect();
        for i in 0..n {
            f.connect(s[i], 1, s[(i + 1) % n], 2, LinkSpec::default()).unwrap();
        }
        for (i, &h) in hosts_on.iter().enumerate() {
            for j in 0..h {
                let ca = f.add_hca(format!("h{i}_{j}"), 1).unwrap();
                f.connect(s[i], 3 + j, ca, 1, LinkSpec::default()).unwrap();
            }
        }
        f
    }

    #[test]
    fn registered() {
        assert_eq!(build_engine(NAME, &RoutingOptions::default()).unwrap().name(), NAME);
        let roots = RoutingOptions { roots: vec!["s0".into()], ..RoutingOptions::default() };
        let e = build_engine(NAME, &roots).err().unwrap().to_string();
        assert!(e.starts_with("invalid option 'roots'"), "{e}");
    }

    #[test]
    fn ring_with_hosts_everywhere_is_unsupported() {
        let err = route(&ring(4, &[1, 1, 1, 1]), 0).err().unwrap();
        assert!(matches!(err, SmError::Unsupported { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "routing engine 'ftree' cannot route this fabric: switches 's0' and 's1' are cabled but both 0 hops below the roots: a fat tree has no links within a rank"
        );
    }

    #[test]
    fn hosts_above_the_bottom_rank_are_unsupported() {
        // A line s0 - s1 - s2 with hosts on s0 and s1: s2 is the root (farthest
        // from every host), s1 one hop below, s0 two: s1's host hangs off a middle rank.
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..3).map(|i| f.add_switch(format!("s{i}"), 8).unwrap()).collect();
        f.connect(s[0], 1, s[1], 2, LinkSpec::default()).unwrap();
        f.connect(s[1], 1, s[2], 2, LinkSpec::default()).unwrap();
        for (i, &sw) in s.iter().take(2).enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, 3, h, 1, LinkSpec::default()).unwrap();
        }
        let err = route(&f, 0).err().unwrap().to_string();
        assert!(err.contains("switch 's1' has CAs but is 1 hops below the roots, while the leaves are 2 hops below"), "{err}");
        // Hosts on both ends of a ring: two roots cabled to each other.
        let err = route(&ring(4, &[1, 1, 0, 0]), 0).err().unwrap().to_string();
        assert!(err.contains("a fat tree has no links within a rank"), "{err}");
    }

    #[test]
    fn irregular_ranks_are_unsupported() {
        // Leaves l0, l1 under spine a; l2 under spines a and b: a has three
        // switches below, b one.
        let mut f = Fabric::new();
        let a = f.add_switch("a", 8).unwrap();
        let b = f.add_switch("b", 8).unwrap();
        let l: Vec<NodeId> = (0..3).map(|i| f.add_switch(format!("l{i}"), 8).unwrap()).collect();
        for (i, &leaf) in l.iter().enumerate() {
            f.connect(a, 1 + i as u32, leaf, 1, LinkSpec::default()).unwrap();
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(leaf, 3, h, 1, LinkSpec::default()).unwrap();
        }
        f.connect(b, 1, l[2], 2, LinkSpec::default()).unwrap();
        let err = route(&f, 0).err().unwrap().to_string();
        assert_eq!(
            err,
            "routing engine 'ftree' cannot route this fabric: switches 'a' and 'b' are both 0 hops below the roots but have 3 and 1 switches below: not a regular fat tree"
        );
    }

    #[test]
    fn a_ring_with_one_leaf_is_a_tree() {
        // Hosts on s0 only: s2 is the root, both ways round lead to it.
        let f = ring(4, &[2, 0, 0, 0]);
        let (lids, r) = route(&f, 0).unwrap();
        check_routes(&f, &lids, &r.tables).unwrap();
    }

    #[test]
    fn two_level_tree_spreads_destinations_over_spines() {
        // 2 spines (core), 2 leaves with 2 hosts each: each host's LID comes
        // down from a different spine.
        let f = testfab::fat_tree(1, 2, 2, 1);
        let (lids, r) = route(&f, 0).unwrap();
        check_routes(&f, &lids, &r.tables).unwrap();
        let leaf = f.node_by_name("leaf0_1").unwrap();
        let spines: Vec<NodeId> = (0..2)
            .map(|h| {
                let lid = lids.of_port(f.node_by_name(&format!("h0_0_{h}")).unwrap(), 1).unwrap().base;
                trace(&f, &lids, &r.tables, leaf, lid).unwrap()[1].0
            })
            .collect();
        assert_ne!(spines[0], spines[1]);
    }

    #[test]
    fn lmc_and_partly_populated_leaves_route() {
        let mut f = testfab::fat_tree(2, 2, 2, 2);
        // Drop nothing but add a third host on one leaf: leaves differ in CA count.
        let leaf = f.node_by_name("leaf0_0").unwrap();
        let h = f.add_hca("extra", 1).unwrap();
        let free = (1..=f.node(leaf).num_ports as u32).find(|&p| f.peer(leaf, p as u8).is_none());
        if let Some(p) = free {
            f.connect(leaf, p, h, 1, LinkSpec::default()).unwrap();
        }
        for lmc in [0, 2] {
            let (lids, r) = route(&f, lmc).unwrap();
            check_routes(&f, &lids, &r.tables).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// On random fabrics the engine either refuses with Unsupported or
        /// gives complete, loop-free, deterministic tables.
        #[test]
        fn random_fabrics_route_or_are_unsupported(
            seed in any::<u64>(), switches in 1usize..10, extra in 0usize..6, lmc in 0u8..2,
        ) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            if f.cas().count() == 0 {
                return Ok(());
            }
            match route(&f, lmc) {
                Err(SmError::Unsupported { .. }) => {}
                Err(e) => prop_assert!(false, "{e}"),
                Ok((lids, r)) => {
                    check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
                    let again = FatTree.route(&f, &lids).unwrap();
                    prop_assert_eq!(&again.tables, &r.tables);
                }
            }
        }
    }
}
