//! `updn`: up*/down* routing, deadlock-free on any topology.
//!
//! Follows OpenSM's engine (`opensm/osm_ucast_updn.c`):
//!
//! * Roots. Given by [`RoutingOptions::roots`] (names, descriptions or GUIDs,
//!   resolved with [`Fabric::resolve`], or the path of a root GUID file as
//!   OpenSM's `root_guid_file` option takes it, see [`crate::guid_files`]), or found automatically by OpenSM's
//!   `updn_find_root_nodes_by_min_hop`: for each switch, a histogram of the hop
//!   distances to every CA port (each CA counted at the distance to the switch
//!   it is cabled to); a switch is a root when exactly one bar holds more than
//!   90 % of the CA ports and no other bar more than 5 %. This picks the spines
//!   of a fat tree.
//! * Ranks. A multi-source BFS from the roots (`updn_subn_rank`): rank 0 for
//!   roots, then hop distance.
//! * Orientation (`updn_get_dir`). A hop toward a lower rank is "up". Between
//!   equal ranks, the hop toward the *smaller* node GUID is "up" (OpenSM: "bigger
//!   == UP direction" for the BFS that walks from the destination backwards, so
//!   a packet moving from the bigger to the smaller GUID goes up). A legal route
//!   never goes up after going down.
//!
//! Where this engine deliberately departs from OpenSM, and why:
//!
//! * OpenSM calls a hop between two roots "up" in both directions (a
//!   self-described hack). That makes the orientation cyclic, and up*/down*
//!   is deadlock-free only for an acyclic one, so root-to-root hops are
//!   oriented by GUID like any other equal-rank hop.
//! * Hop counts are those of OpenSM's search (`updn_bfs_by_node`, see
//!   `OsmSearch`), which remembers one direction per switch. A switch queued
//!   again takes the new step's direction while its least hop count may
//!   still come from a route starting up, and passes that count to switches
//!   that would enter it going down: down-then-up routes, and credit loops on
//!   some irregular fabrics. Here a switch passes its count down only if it
//!   has a down candidate, and a switch some route enters going down keeps
//!   only its down candidates; where OpenSM's routes are legal, the
//!   candidates (and tables) are OpenSM's. A destination for which that
//!   leaves a switch without a candidate, or a switch with CA ports
//!   unreached, gets exact per-phase lengths instead (see [`UpDownPaths`]).
//! * When the histogram test finds no root, OpenSM gives up on updn and falls
//!   back to minhop, which is not deadlock-free. Here the switch of smallest
//!   eccentricity (then smallest total distance, then smallest GUID) becomes
//!   the single root; the same happens when the automatically found roots leave
//!   some CA-attached switch without a legal route to a LID. A single root
//!   always gives every switch a legal route to every LID.
//! * With several roots, some switches may have no legal route to some LIDs
//!   (OpenSM's documentation: no LID route between spine switches). OpenSM
//!   leaves those entries empty. Such a switch never carries CA traffic for that
//!   LID (no legal route passes through it), so here it gets a minimum-hop entry
//!   for the traffic it originates itself, and [`Routing::notes`] says how many.
//!   If the switch has CA ports, CA traffic would need the missing route, and the
//!   result is [`SmError::Unroutable`].
//!
//! * With LMC > 0, OpenSM spreads the LIDs of a port at each switch on its
//!   own, preferring a remote system or node the port's other LIDs did not
//!   go to. Two such splits in a row can undo each other: on a 2-ary 3-tree
//!   the four LIDs of a host reach only two of the four top switches from a
//!   remote leaf. Here offsets are spread mixed-radix instead (a D-mod-k rule
//!   for any up*/down* graph, see `UpDownPaths::set_strides`), which gives
//!   every remote leaf of a k-ary n-tree `2^LMC` distinct top switches.
//!
//! Port choice among legal ports is otherwise OpenSM's balancing
//! ([`super::ucast`]). Options used: `roots`.

use ibnetsim_fabric::{Fabric, NodeId};

use super::ucast::{build_lfts_offsets, switch_table_order, PathSet};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::guid_files;
use crate::hops::{attachment, SwitchHops, UNREACHABLE};
use crate::lft::ForwardingTables;
use crate::lid::LidMap;

/// The up*/down* engine.
#[derive(Debug, Clone, Default)]
pub struct UpDn {
    /// Roots as the user gave them; empty means automatic.
    pub roots: Vec<String>,
}

/// Registry constructor.
pub(crate) fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    Ok(Box::new(UpDn::from_options(options)?))
}

/// The up*/down* routes of every port's base LID and every switch LID, as
/// [`UpDn`] routes them; the entries of the other LIDs are left
/// [`crate::lft::NO_PATH`]. Engines that use up*/down* as an escape function
/// (`fa`) fill those.
pub(crate) struct BaseLidRoutes {
    /// The tables, base LIDs and switch LIDs filled.
    pub tables: ForwardingTables,
    /// The roots used.
    pub roots: Vec<NodeId>,
    /// Their names, for notes (long lists cut after eight names).
    pub root_names: String,
    /// `updn`'s notes (how the roots were chosen, min-hop fallback entries).
    pub notes: Vec<String>,
}

/// How the roots were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RootSource {
    Given,
    Histogram,
    Centre,
}

impl RoutingEngine for UpDn {
    fn name(&self) -> &'static str {
        "updn"
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        self.route_and_roots(fabric, lids).map(|(routing, _)| routing)
    }
}

impl UpDn {
    /// The engine for `options` (uses `roots`), validating them.
    pub(crate) fn from_options(options: &RoutingOptions) -> Result<Self, SmError> {
        if let Some(bad) = options.roots.iter().find(|r| r.trim().is_empty()) {
            return Err(SmError::option("roots", format!("empty root name {bad:?}; give switch names or GUIDs")));
        }
        Ok(UpDn { roots: options.roots.clone() })
    }

    /// Routes only LID offset 0 of every port (the base LIDs) and the switch
    /// LIDs. Those entries are exactly the ones [`RoutingEngine::route`]
    /// gives at the same LMC: the table builder routes offset 0 of every port
    /// before any higher offset, and the higher offsets never change it.
    pub(crate) fn route_base_lids(&self, fabric: &Fabric, lids: &LidMap) -> Result<BaseLidRoutes, SmError> {
        let (routing, roots) = self.route_offsets(fabric, lids, 1)?;
        let hops = SwitchHops::compute(fabric);
        let root_names = names(&hops, fabric, &roots);
        let roots = roots.into_iter().map(|r| hops.switches()[r]).collect();
        Ok(BaseLidRoutes { tables: routing.tables, roots, root_names, notes: routing.notes })
    }

    /// Routes, returning the roots used (dense switch indices) with the tables.
    fn route_and_roots(&self, fabric: &Fabric, lids: &LidMap) -> Result<(Routing, Vec<usize>), SmError> {
        self.route_offsets(fabric, lids, u32::MAX)
    }

    /// [`Self::route_and_roots`] for the LID offsets `0..offset_count` of every port.
    fn route_offsets(&self, fabric: &Fabric, lids: &LidMap, offset_count: u32) -> Result<(Routing, Vec<usize>), SmError> {
        let hops = SwitchHops::compute(fabric);
        if hops.num_switches() == 0 {
            let routing = Routing::unicast(
                ForwardingTables::new(fabric, lids.top_lid()),
                vec!["updn: the fabric has no switches, nothing to route".into()],
            );
            return Ok((routing, Vec::new()));
        }
        let (roots, source) = self.choose_roots(fabric, lids, &hops)?;
        let how = match source {
            RootSource::Given => "given",
            RootSource::Histogram => "found by OpenSM's hop-histogram test",
            RootSource::Centre => "centre switch; OpenSM's hop-histogram test found no root",
        };
        match route_with_roots(fabric, lids, &hops, &roots, how, offset_count) {
            Err(err @ SmError::Unroutable { .. }) if source == RootSource::Histogram => {
                // A single root always routes everything, so only a detached CA can fail again.
                let how = format!(
                    "centre switch; the roots found by OpenSM's hop-histogram test ({}) leave CA traffic \
                     without a legal route: {err}",
                    names(&hops, fabric, &roots)
                );
                let centre = centre_switch(fabric, &hops);
                let routing = route_with_roots(fabric, lids, &hops, &[centre], &how, offset_count).map_err(|_| err)?;
                Ok((routing, vec![centre]))
            }
            other => other.map(|routing| (routing, roots)),
        }
    }

    /// The roots (dense switch indices) and where they came from.
    fn choose_roots(&self, fabric: &Fabric, lids: &LidMap, hops: &SwitchHops) -> Result<(Vec<usize>, RootSource), SmError> {
        if !self.roots.is_empty() {
            let mut roots = Vec::with_capacity(self.roots.len());
            for r in &self.roots {
                let path = std::path::Path::new(r);
                let nodes = if path.is_file() {
                    // A name that is both would be read one way silently; make the user say which.
                    if let Ok(n) = fabric.resolve(r) {
                        return Err(SmError::option(
                            "roots",
                            format!(
                                "'{r}' names both node '{}' and a file; give the node by GUID ({:#018x}) \
                                 or the file as ./{r}",
                                fabric.node(n).name,
                                fabric.node(n).guid
                            ),
                        ));
                    }
                    let listed = guid_files::read_root_guids(path)?;
                    guid_files::root_switches(fabric, &listed)?
                } else {
                    let node = fabric.resolve(r).map_err(|_| {
                        SmError::option(
                            "roots",
                            format!("no switch is named or has GUID '{r}', and no file has that path"),
                        )
                    })?;
                    vec![node]
                };
                for node in nodes {
                    let idx = hops.index_of(node).ok_or_else(|| {
                        SmError::option("roots", format!("'{r}' is a channel adapter; up*/down* roots must be switches"))
                    })?;
                    if !roots.contains(&idx) {
                        roots.push(idx);
                    }
                }
            }
            return Ok((roots, RootSource::Given));
        }
        let found = histogram_roots(fabric, lids, hops);
        if found.is_empty() {
            Ok((vec![centre_switch(fabric, hops)], RootSource::Centre))
        } else {
            Ok((found, RootSource::Histogram))
        }
    }
}

/// Switch names for a note; long lists are cut after eight names.
fn names(hops: &SwitchHops, fabric: &Fabric, idx: &[usize]) -> String {
    const SHOWN: usize = 8;
    let mut s = idx.iter().take(SHOWN).map(|&i| fabric.node(hops.switches()[i]).name.as_str()).collect::<Vec<_>>().join(", ");
    if idx.len() > SHOWN {
        s.push_str(&format!(", … ({} in all)", idx.len()));
    }
    s
}

/// OpenSM's `updn_find_root_nodes_by_min_hop`, in switch-table order.
fn histogram_roots(fabric: &Fabric, lids: &LidMap, hops: &SwitchHops) -> Vec<usize> {
    // IB_SUBNET_PATH_HOPS_MAX: longer distances are left out of the histogram.
    const MAX_HOPS: usize = 64;
    let n = hops.num_switches();
    let mut cas_per_sw = vec![0u32; n];
    let mut cas_num = 0u32;
    for p in lids.ca_ports(fabric) {
        if let Some(sw) = attachment(fabric, p.end) {
            cas_per_sw[hops.index_of(sw.node).expect("attachment is a switch")] += 1;
            cas_num += 1;
        }
    }
    let thd1 = cas_num as f64 * 0.9;
    let thd2 = cas_num as f64 * 0.05;
    let mut roots = Vec::new();
    for sw in switch_table_order(fabric) {
        let s = hops.index_of(sw).expect("switch");
        let mut hist = [0u32; MAX_HOPS];
        for (t, &cas) in cas_per_sw.iter().enumerate() {
            let d = hops.by_index(s, t) as usize;
            if cas > 0 && d < MAX_HOPS {
                hist[d] += cas;
            }
        }
        let over1 = hist.iter().filter(|&&h| h as f64 > thd1).count();
        let over2 = hist.iter().filter(|&&h| h as f64 > thd2).count();
        if over1 == 1 && over2 == 1 {
            roots.push(s);
        }
    }
    roots
}

/// The switch of smallest eccentricity, then smallest total distance, then smallest GUID.
fn centre_switch(fabric: &Fabric, hops: &SwitchHops) -> usize {
    (0..hops.num_switches())
        .min_by_key(|&s| {
            let row = hops.row(s);
            let ecc = row.iter().map(|&d| d as u32).max().unwrap_or(0);
            let total: u64 = row.iter().map(|&d| d as u64).sum();
            (ecc, total, fabric.node(hops.switches()[s]).guid)
        })
        .expect("at least one switch")
}

/// Ranks (BFS distance from the nearest root) of every switch; `u32::MAX` where
/// no switch path leads to a root.
fn ranks(hops: &SwitchHops, roots: &[usize]) -> Vec<u32> {
    (0..hops.num_switches())
        .map(|s| roots.iter().map(|&r| hops.by_index(r, s)).min().filter(|&d| d != UNREACHABLE).map_or(u32::MAX, u32::from))
        .collect()
}

fn route_with_roots(
    fabric: &Fabric,
    lids: &LidMap,
    hops: &SwitchHops,
    roots: &[usize],
    how: &str,
    offset_count: u32,
) -> Result<Routing, SmError> {
    let mut paths = UpDownPaths::compute(fabric, hops, roots);
    if lids.lmc() > 0 && offset_count > 1 {
        paths.set_strides(fabric);
    }
    let tables = build_lfts_offsets(fabric, lids, hops, &paths, false, offset_count).map_err(|err| match err {
        // Say why when a path exists but none is legal: the user can pick other roots.
        SmError::Unroutable { switch, lid, target } => {
            let legal_only = fabric
                .node_by_name(&switch)
                .zip(lids.owner(lid))
                .is_some_and(|(sw, owner)| hops.end_hops(fabric, sw, owner.end).is_some());
            let target = if legal_only {
                format!("{target}; no legal up*/down* route with roots {}", names(hops, fabric, roots))
            } else {
                target
            };
            SmError::Unroutable { switch, lid, target }
        }
        other => other,
    })?;
    let max_rank = paths.key.iter().map(|k| k.0).filter(|&r| r != u32::MAX).max().unwrap_or(0);
    let mut notes = vec![format!("updn roots ({how}): {}; max rank {max_rank}", names(hops, fabric, roots))];
    if let Some(note) = paths.fallback_note(fabric, lids, hops, offset_count) {
        notes.push(note);
    }
    Ok(Routing::unicast(tables, notes))
}

/// The legal paths toward every destination switch: OpenSM's search made
/// legal (`opensm_destination`), or, where that fails, exact per-phase lengths:
///
/// For destination `t`, `down[s]` is the length of the shortest all-down path
/// from `s` to `t`. A switch's LFT entry serves every packet that reaches it,
/// whatever hop brought the packet there, so a switch that some route enters
/// by a down hop must itself route down. Such switches are *forced*: their
/// route length is `down[s]` and their candidate ports are down hops along
/// shortest all-down paths. Every other switch may also go up: its length is
/// `len[s] = min(down[s], 1 + len[p])` over up-neighbours `p`, and its candidates
/// are the up hops and down hops achieving it. A down hop's target is entered
/// going down, so it is forced; forcing only lengthens routes, so repeating
/// "compute lengths, force the targets of down candidates" reaches a fixpoint.
/// At the fixpoint, every hop of every route lowers the remaining length by
/// one (no loops), down hops only lead to forced switches (no up after down),
/// and any choice among the candidates keeps both properties.
struct UpDownPaths<'a> {
    n: usize,
    hops: &'a SwitchHops,
    /// Per switch, (rank, GUID): a hop to a smaller key is up.
    key: Vec<(u32, u64)>,
    /// `len[t * n + s]`: route length from `s` to `t`; [`UNREACHABLE`] if no legal route.
    len: Vec<u16>,
    /// `down[t * n + s]`: shortest all-down path length.
    down: Vec<u16>,
    /// `forced[t * n + s]`: `s` must route down toward `t`.
    forced: Vec<bool>,
    /// Switches with CA ports: they must have legal routes (no min-hop fallback).
    has_ca: Vec<bool>,
    /// Distinct switch neighbours of each switch, sorted: `nb[nb_start[s]..nb_start[s + 1]]`.
    nb: Vec<u32>,
    nb_start: Vec<usize>,
    /// Per destination: its rows follow OpenSM's search ([`OsmSearch`]) rather than
    /// the exact per-phase lengths.
    osm_row: Vec<bool>,
    /// `cand[t * nb.len() + nb_start[s] + i]`: in an OpenSM row, whether the hop
    /// from `s` to `nb[nb_start[s] + i]` starts a route toward `t`.
    cand: Vec<bool>,
    /// `stride[t * n + s]`: the mixed-radix LMC stride (see [`Self::set_strides`]);
    /// empty at LMC 0.
    stride: Vec<u8>,
}

impl<'a> UpDownPaths<'a> {
    fn compute(fabric: &Fabric, hops: &'a SwitchHops, roots: &[usize]) -> Self {
        let n = hops.num_switches();
        let rank = ranks(hops, roots);
        let key: Vec<(u32, u64)> = (0..n).map(|s| (rank[s], fabric.node(hops.switches()[s]).guid)).collect();
        let neighbours: Vec<Vec<u32>> = hops
            .switches()
            .iter()
            .map(|&sw| {
                let mut v: Vec<u32> = fabric
                    .switch_neighbors(sw)
                    .map(|(_, peer)| hops.index_of(peer.node).expect("switch") as u32)
                    .filter(|&p| p as usize != hops.index_of(sw).expect("switch"))
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let has_ca: Vec<bool> = hops
            .switches()
            .iter()
            .map(|&sw| {
                fabric.node(sw).connected_ports().any(|(p, _)| fabric.peer(sw, p).is_some_and(|e| fabric.node(e.node).kind.is_ca()))
            })
            .collect();
        let mut nb_start = Vec::with_capacity(n + 1);
        nb_start.push(0);
        for v in &neighbours {
            nb_start.push(nb_start.last().unwrap() + v.len());
        }
        let nb: Vec<u32> = neighbours.concat();
        let slots = nb.len();
        let mut paths = UpDownPaths {
            n,
            hops,
            key,
            len: vec![UNREACHABLE; n * n],
            down: vec![UNREACHABLE; n * n],
            forced: vec![false; n * n],
            has_ca,
            nb,
            nb_start,
            osm_row: vec![false; n],
            cand: vec![false; n * slots],
            stride: Vec::new(),
        };
        let mut search = OsmSearch::new(fabric, &paths);
        let mut scratch = Scratch::new(n);
        for t in 0..n {
            if !paths.opensm_destination(t, &mut search) {
                paths.destination(t, &neighbours, &mut scratch);
            }
        }
        paths
    }

    /// Fills the rows of destination `t` from OpenSM's search, made legal:
    /// a switch that some route enters by a down hop keeps only its down
    /// candidates. Returns `false`, leaving the rows alone, when that leaves
    /// such a switch without a candidate or when the search misses a switch
    /// with CA ports that has a path; [`Self::destination`] then fills them.
    fn opensm_destination(&mut self, t: usize, search: &mut OsmSearch) -> bool {
        let (n, slots) = (self.n, self.nb.len());
        search.run(self, t);
        let least = &search.least;
        let cand = &mut self.cand[t * slots..(t + 1) * slots];
        // The switch owning each slot, and the neighbour the slot leads to.
        let owners = || (0..n).flat_map(|s| (self.nb_start[s]..self.nb_start[s + 1]).map(move |i| (s, i)));
        for (s, i) in owners() {
            cand[i] = s != t && least[s] != OSM_NO_PATH && search.hop[i] == least[s];
        }
        // One pass suffices: dropping up candidates never adds a down one.
        let forced = &mut search.forced;
        forced.fill(false);
        for (s, i) in owners() {
            let p = self.nb[i] as usize;
            if cand[i] && self.key[p] > self.key[s] {
                forced[p] = true;
            }
        }
        for (s, i) in owners() {
            if forced[s] {
                cand[i] &= self.key[self.nb[i] as usize] > self.key[s];
            }
        }
        for s in (0..n).filter(|&s| s != t) {
            let stuck = forced[s] && !cand[self.nb_start[s]..self.nb_start[s + 1]].iter().any(|&c| c);
            let missed = least[s] == OSM_NO_PATH && self.has_ca[s] && self.hops.by_index(s, t) != UNREACHABLE;
            if stuck || missed {
                return false;
            }
        }
        let row = &mut self.len[t * n..(t + 1) * n];
        for (l, &h) in row.iter_mut().zip(least) {
            *l = if h == OSM_NO_PATH { UNREACHABLE } else { u16::from(h) };
        }
        self.osm_row[t] = true;
        true
    }

    #[inline]
    fn is_up(&self, from: usize, to: usize) -> bool {
        self.key[to] < self.key[from]
    }

    #[inline]
    fn is_down(&self, from: usize, to: usize) -> bool {
        self.key[to] > self.key[from]
    }

    /// Fills the rows of destination `t`.
    fn destination(&mut self, t: usize, neighbours: &[Vec<u32>], sc: &mut Scratch) {
        let n = self.n;
        let row = t * n..(t + 1) * n;
        // Shortest all-down paths: BFS from t backwards over down hops.
        let down = &mut sc.down;
        down.fill(UNREACHABLE);
        down[t] = 0;
        sc.queue.clear();
        sc.queue.push(t as u32);
        let mut head = 0;
        while head < sc.queue.len() {
            let x = sc.queue[head] as usize;
            head += 1;
            for &y in &neighbours[x] {
                let y = y as usize;
                if self.key[x] > self.key[y] && down[y] == UNREACHABLE {
                    down[y] = down[x] + 1;
                    sc.queue.push(y as u32);
                }
            }
        }
        let forced = &mut sc.forced;
        forced.fill(false);
        forced[t] = true;
        let len = &mut sc.len;
        loop {
            // Lengths for the current forced set: bucket queue over increasing length.
            len.copy_from_slice(down);
            for b in sc.buckets.iter_mut() {
                b.clear();
            }
            for (s, &l) in len.iter().enumerate() {
                if l != UNREACHABLE {
                    sc.buckets[l as usize].push(s as u32);
                }
            }
            let mut k = 0;
            while k < sc.buckets.len() {
                let mut i = 0;
                while i < sc.buckets[k].len() {
                    let p = sc.buckets[k][i] as usize;
                    i += 1;
                    if len[p] as usize != k {
                        continue;
                    }
                    for &y in &neighbours[p] {
                        let y = y as usize;
                        // y -> p is an up hop.
                        if self.key[p] < self.key[y] && !forced[y] && len[y] as usize > k + 1 && k + 1 < sc.buckets.len() {
                            len[y] = (k + 1) as u16;
                            sc.buckets[k + 1].push(y as u32);
                        }
                    }
                }
                k += 1;
            }
            // Force the targets of down candidates, and theirs, transitively.
            let mut changed = false;
            sc.stack.clear();
            for s in 0..n {
                if s == t || len[s] == UNREACHABLE {
                    continue;
                }
                if forced[s] {
                    sc.stack.push(s as u32);
                    continue;
                }
                for &p in &neighbours[s] {
                    let p = p as usize;
                    if self.key[p] > self.key[s] && down[p] != UNREACHABLE && down[p] + 1 == len[s] && !forced[p] {
                        forced[p] = true;
                        changed = true;
                        sc.stack.push(p as u32);
                    }
                }
            }
            while let Some(x) = sc.stack.pop() {
                let x = x as usize;
                for &p in &neighbours[x] {
                    let p = p as usize;
                    if self.key[p] > self.key[x] && down[p] != UNREACHABLE && down[p] + 1 == down[x] && !forced[p] {
                        forced[p] = true;
                        changed = true;
                        sc.stack.push(p as u32);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        self.len[row.clone()].copy_from_slice(len);
        self.down[row.clone()].copy_from_slice(down);
        self.forced[row].copy_from_slice(forced);
    }

    /// Strides for spreading the `2^LMC` LIDs of a port, a D-mod-k rule
    /// generalised to any up*/down* graph. Toward destination `t`, `g(s)` is
    /// how many ways the offsets of packets reaching `s` may already have been
    /// split: 1 where routes start (a switch with CAs starts its own hosts'
    /// routes, so it is given 1 too), and `max g(p) · m(p)` over the switches
    /// `p` that have `s` among their `m(p)` candidate neighbours. Offset `o`
    /// then leaves `s` to the candidate `o / g(s)` places after the base LID's
    /// (mod `m(s)`): packets that arrive together differ in `o / g(s)` and
    /// part, and on a k-ary n-tree the `2^LMC` routes from a leaf to a remote
    /// host climb to as many different top switches (up to `k^(n-1)`).
    /// OpenSM's rule, kept by `minhop`, alternates per switch independently,
    /// so on trees of three levels two splits can undo each other.
    fn set_strides(&mut self, fabric: &Fabric) {
        // Offsets are below 2^7: any stride from 128 up means "never move".
        const CAP: u32 = 128;
        let n = self.n;
        let mut stride = vec![1u8; n * n];
        let mut g = vec![1u32; n];
        let mut order: Vec<usize> = Vec::with_capacity(n);
        let mut peers: Vec<usize> = Vec::new();
        for t in 0..n {
            let row = t * n;
            g.fill(1);
            order.clear();
            order.extend((0..n).filter(|&s| s != t && self.len[row + s] != UNREACHABLE));
            // Every candidate hop lowers the remaining length by one, so
            // predecessors come first in decreasing length.
            order.sort_unstable_by_key(|&s| std::cmp::Reverse(self.len[row + s]));
            for &s in &order {
                if self.has_ca[s] {
                    g[s] = 1;
                }
                stride[row + s] = g[s].min(CAP) as u8;
                peers.clear();
                for (_, peer) in fabric.switch_neighbors(self.hops.switches()[s]) {
                    let p = self.hops.index_of(peer.node).expect("switch");
                    if !peers.contains(&p) && self.on_path(s, p, t) {
                        peers.push(p);
                    }
                }
                let through = (g[s] * peers.len() as u32).min(CAP);
                for &p in &peers {
                    g[p] = g[p].max(through);
                }
            }
        }
        self.stride = stride;
    }

    /// Describes the min-hop fallback entries, if any, among the LID offsets `0..offset_count`.
    fn fallback_note(&self, fabric: &Fabric, lids: &LidMap, hops: &SwitchHops, offset_count: u32) -> Option<String> {
        let n = self.n;
        // LIDs whose packets are delivered by each switch.
        let mut lids_at = vec![0u64; n];
        for p in lids.ports() {
            let sw = if fabric.node(p.end.node).kind.is_switch() { Some(p.end.node) } else { attachment(fabric, p.end).map(|e| e.node) };
            if let Some(i) = sw.and_then(|s| hops.index_of(s)) {
                lids_at[i] += p.count().min(offset_count) as u64;
            }
        }
        let mut entries = 0u64;
        let mut example = None;
        for (t, &at) in lids_at.iter().enumerate() {
            for s in 0..n {
                if s != t && self.len[t * n + s] == UNREACHABLE && hops.by_index(s, t) != UNREACHABLE && at > 0 {
                    entries += at;
                    example.get_or_insert((s, t));
                }
            }
        }
        let (s, t) = example?;
        Some(format!(
            "updn: {entries} forwarding entries have no legal up*/down* route and use a minimum-hop port; \
             only traffic the switch itself sends uses them (e.g. {} toward {})",
            fabric.node(hops.switches()[s]).name,
            fabric.node(hops.switches()[t]).name
        ))
    }
}

/// OpenSM's "no path" hop count.
const OSM_NO_PATH: u8 = 0xff;

/// OpenSM's `updn_bfs_by_node` for one destination switch, with its hop
/// counts kept per neighbour (parallel cables always get the same count) and
/// one change, so that every route stays legal: a switch passes its count on
/// to a switch that would enter it by a down hop only if one of its
/// least-hop candidates is itself a down hop.
///
/// OpenSM's search remembers one direction per switch: the one of the step
/// that queued it, and a switch reached again after leaving the queue is
/// queued again with the new step's direction. Its least hop count, which it
/// passes on, may still come from a route that starts by going up; passing it
/// on to a switch below then allows down-then-up routes (the credit loops of
/// OpenSM 3.3.23 on some irregular fabrics).
struct OsmSearch {
    /// Per switch, its neighbours in port order, each once:
    /// (neighbour, slot of the neighbour in `nb`, slot of this switch in the neighbour's).
    by_port: Vec<Vec<(u32, u32, u32)>>,
    /// Hop count through each neighbour slot (OpenSM's `hops[lid][port]`).
    hop: Vec<u8>,
    /// Least hop count per switch (OpenSM's `hops[lid][0]`).
    least: Vec<u8>,
    /// Direction of the step that last queued each switch: `true` for one a
    /// packet takes downward (OpenSM's `UP`, the search walking backwards).
    down_from: Vec<bool>,
    queued: Vec<bool>,
    queue: std::collections::VecDeque<u32>,
    forced: Vec<bool>,
}

impl OsmSearch {
    fn new(fabric: &Fabric, paths: &UpDownPaths) -> Self {
        let n = paths.n;
        let slot = |s: usize, p: usize| {
            let start = paths.nb_start[s];
            (start + paths.nb[start..paths.nb_start[s + 1]].binary_search(&(p as u32)).expect("neighbour")) as u32
        };
        let by_port = (0..n)
            .map(|s| {
                let mut v: Vec<(u32, u32, u32)> = Vec::new();
                for (_, peer) in fabric.switch_neighbors(paths.hops.switches()[s]) {
                    let p = paths.hops.index_of(peer.node).expect("switch");
                    // A second cable to the same neighbour finds its count already set.
                    if p != s && !v.iter().any(|e| e.0 as usize == p) {
                        v.push((p as u32, slot(s, p), slot(p, s)));
                    }
                }
                v
            })
            .collect();
        OsmSearch {
            by_port,
            hop: vec![OSM_NO_PATH; paths.nb.len()],
            least: vec![OSM_NO_PATH; n],
            down_from: vec![false; n],
            queued: vec![false; n],
            queue: std::collections::VecDeque::with_capacity(n),
            forced: vec![false; n],
        }
    }

    fn run(&mut self, paths: &UpDownPaths, t: usize) {
        self.hop.fill(OSM_NO_PATH);
        self.least.fill(OSM_NO_PATH);
        self.queued.fill(false);
        self.least[t] = 0;
        // The destination is queued without being marked, as in OpenSM.
        self.down_from[t] = true;
        self.queue.clear();
        self.queue.push_back(t as u32);
        while let Some(u) = self.queue.pop_front() {
            let u = u as usize;
            self.queued[u] = false;
            let cur = self.least[u];
            let may_enter_down = self.down_from[u]
                && (u == t || self.by_port[u].iter().any(|&(p, i, _)| self.hop[i as usize] == cur && paths.is_down(u, p as usize)));
            for &(v, _, back) in &self.by_port[u] {
                let v = v as usize;
                // The packet's hop v -> u.
                let down = paths.is_down(v, u);
                if down && !may_enter_down {
                    continue;
                }
                let h = cur.saturating_add(1);
                if h < self.hop[back as usize] {
                    self.hop[back as usize] = h;
                    self.least[v] = self.least[v].min(h);
                    if !self.queued[v] {
                        self.down_from[v] = down;
                        self.queued[v] = true;
                        self.queue.push_back(v as u32);
                    }
                }
            }
        }
    }
}

/// Per-destination work arrays, reused across destinations.
struct Scratch {
    down: Vec<u16>,
    len: Vec<u16>,
    forced: Vec<bool>,
    queue: Vec<u32>,
    stack: Vec<u32>,
    buckets: Vec<Vec<u32>>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Scratch {
            down: vec![UNREACHABLE; n],
            len: vec![UNREACHABLE; n],
            forced: vec![false; n],
            queue: Vec::with_capacity(n),
            stack: Vec::with_capacity(n),
            // A route never visits a switch twice, so lengths stay below n.
            buckets: vec![Vec::new(); n + 1],
        }
    }
}

impl PathSet for UpDownPaths<'_> {
    fn reachable(&self, sw: usize, dst: usize) -> bool {
        self.len[dst * self.n + sw] != UNREACHABLE || (!self.has_ca[sw] && self.hops.by_index(sw, dst) != UNREACHABLE)
    }

    fn on_path(&self, sw: usize, peer: usize, dst: usize) -> bool {
        let row = dst * self.n;
        let l = self.len[row + sw];
        if l == UNREACHABLE {
            // Min-hop fallback for a switch no legal route starts from.
            let d = self.hops.by_index(sw, dst);
            return d != UNREACHABLE && self.hops.by_index(peer, dst) == d - 1;
        }
        if self.osm_row[dst] {
            let start = self.nb_start[sw];
            let i = self.nb[start..self.nb_start[sw + 1]].binary_search(&(peer as u32)).ok();
            return i.is_some_and(|i| self.cand[dst * self.nb.len() + start + i]);
        }
        let down_peer = self.down[row + peer];
        if self.forced[row + sw] {
            return self.is_down(sw, peer) && down_peer != UNREACHABLE && down_peer + 1 == self.down[row + sw];
        }
        if self.is_up(sw, peer) {
            let lp = self.len[row + peer];
            lp != UNREACHABLE && lp + 1 == l
        } else {
            self.is_down(sw, peer) && down_peer != UNREACHABLE && down_peer + 1 == l
        }
    }

    fn lmc_stride(&self, sw: usize, dst: usize) -> Option<u32> {
        // The min-hop fallback entries keep OpenSM's spreading.
        match self.stride.get(dst * self.n + sw) {
            Some(&g) if self.len[dst * self.n + sw] != UNREACHABLE => Some(g as u32),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::minhop::MinHop;
    use crate::routing::testfab::{self, check_routes, host, trace, two_switch_parallel};
    use crate::routing::build_engine;
    use ibnetsim_fabric::{LinkSpec, NodeId};
    use proptest::prelude::*;

    fn updn(roots: &[&str]) -> UpDn {
        UpDn { roots: roots.iter().map(|r| r.to_string()).collect() }
    }

    /// A ring of `n` switches s0..; port 1 to the next, port 2 to the previous;
    /// host h{i} on port 3 of s{i}.
    fn ring(n: usize) -> Fabric {
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..n).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
        for i in 0..n {
            f.connect(s[i], 1, s[(i + 1) % n], 2, LinkSpec::default()).unwrap();
        }
        for (i, &sw) in s.iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, 3, h, 1, LinkSpec::default()).unwrap();
        }
        f
    }

    /// Independent check: ranks by BFS from `roots`, then every hop of the route
    /// from `from` to `lid` must keep "no up after down" under (rank, GUID).
    /// Every base-LID route from every switch is a legal up*/down* route.
    fn all_legal(f: &Fabric, lids: &LidMap, tables: &ForwardingTables, roots: &[NodeId]) {
        for sw in f.switches() {
            for p in lids.ports() {
                legal(f, lids, tables, roots, sw, p.base).unwrap();
            }
        }
    }

    fn legal(f: &Fabric, lids: &LidMap, tables: &ForwardingTables, roots: &[NodeId], from: NodeId, lid: u16) -> Result<(), String> {
        let mut rank = std::collections::HashMap::new();
        let mut queue: std::collections::VecDeque<NodeId> = roots.iter().copied().collect();
        for &r in roots {
            rank.insert(r, 0u32);
        }
        while let Some(x) = queue.pop_front() {
            for (_, peer) in f.switch_neighbors(x) {
                if !rank.contains_key(&peer.node) {
                    rank.insert(peer.node, rank[&x] + 1);
                    queue.push_back(peer.node);
                }
            }
        }
        let key = |n: NodeId| (rank[&n], f.node(n).guid);
        let path = trace(f, lids, tables, from, lid)?;
        let mut went_down = false;
        for w in path.windows(2) {
            let up = key(w[1].0) < key(w[0].0);
            if up && went_down {
                return Err(format!("LID {lid} from {}: up after down: {path:?}", f.node(from).name));
            }
            went_down |= !up;
        }
        Ok(())
    }

    fn has_ca(f: &Fabric, sw: NodeId) -> bool {
        f.node(sw).connected_ports().any(|(p, _)| f.node(f.peer(sw, p).unwrap().node).kind.is_ca())
    }

    fn root_nodes(f: &Fabric, roots: &[usize]) -> Vec<NodeId> {
        let sw: Vec<NodeId> = f.switches().collect();
        roots.iter().map(|&r| sw[r]).collect()
    }

    #[test]
    fn takes_the_longer_legal_route_when_the_shortest_is_illegal() {
        // Root s0: ranks s0 0, s1 and s4 1, s2 and s3 2. s4 -> s3 -> s2 is the
        // shortest way to h2, but s4 -> s3 goes down (rank 1 to 2) and s3 -> s2
        // goes up (equal rank, toward the smaller GUID). The legal route is
        // s4 -> s0 -> s1 -> s2: up, down, down.
        let f = ring(5);
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, roots) = updn(&["s0"]).route_and_roots(&f, &lids).unwrap();
        assert_eq!(roots, vec![0]);
        let id = |n: &str| f.node_by_name(n).unwrap();
        let h2 = lids.of_port(id("h2"), 1).unwrap().base;
        let path: Vec<(String, u8)> =
            trace(&f, &lids, &r.tables, id("s4"), h2).unwrap().into_iter().map(|(n, p)| (f.node(n).name.clone(), p)).collect();
        let want = [("s4", 1), ("s0", 1), ("s1", 1), ("s2", 3)];
        assert_eq!(path, want.map(|(n, p)| (n.to_string(), p)));
        // Min-hop takes the two-hop route the other way round.
        let m = MinHop.route(&f, &lids).unwrap();
        assert_eq!(m.tables.get(id("s4"), h2), Some(2));
        // s2 -> s3 is down, s3 -> s4 up: s2 reaches h4 through s1 and s0 instead.
        let h4 = lids.of_port(id("h4"), 1).unwrap().base;
        assert_eq!(trace(&f, &lids, &r.tables, id("s2"), h4).unwrap().len(), 4);
        assert_eq!(r.tables.get(id("s2"), h4), Some(2));
        // s3 -> s2 -> s1 (up, up) is legal and shortest.
        let h1 = lids.of_port(id("h1"), 1).unwrap().base;
        assert_eq!(r.tables.get(id("s3"), h1), Some(2));
        assert_eq!(r.notes[0], "updn roots (given): s0; max rank 2");
        check_routes(&f, &lids, &r.tables).unwrap();
    }

    #[test]
    fn a_switch_entered_going_down_keeps_routing_down() {
        // Roots r < u < s (GUIDs follow creation order); a1, a2, t have rank 1.
        let mut f = Fabric::new();
        let [r, u, s, a1, a2, t] = ["r", "u", "s", "a1", "a2", "t"].map(|n| f.add_switch(n, 4).unwrap());
        for (x, px, y, py) in [(r, 1, s, 1), (u, 1, s, 2), (s, 3, a1, 1), (a1, 2, a2, 1), (a2, 2, t, 1), (u, 2, a2, 3), (u, 3, t, 2)] {
            f.connect(x, px, y, py, LinkSpec::default()).unwrap();
        }
        let ht = f.add_hca("ht", 1).unwrap();
        f.connect(t, 3, ht, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let lid = lids.of_port(ht, 1).unwrap().base;
        // Toward t, OpenSM's search reaches s first from u (2 hops, s -> u
        // is up) and remembers s as a switch whose route starts going up, so
        // it never passes s's count on to r (r -> s is down). s keeps its
        // shortest route, and r, found by no search (OpenSM reaches it only
        // through its root-to-root hack, see the module docs) and without
        // hosts, gets a min-hop entry for its own traffic, and a note.
        let rt = updn(&["r", "u", "s"]).route(&f, &lids).unwrap();
        assert_eq!(rt.tables.get(s, lid), Some(2));
        assert_eq!(rt.tables.get(r, lid), Some(1));
        assert!(rt.notes[1].starts_with("updn: 4 forwarding entries"), "{:?}", rt.notes);
        // r has no legal route to u's LID at all (r can only go down, to s,
        // and s -> u is up), nor u to r's (u -> s is down, s -> r up). If r
        // and u have no LIDs (a loaded LID map may leave switches out), r's
        // entries toward t's two LIDs are left.
        let no_ru: Vec<_> = lids.ports().iter().filter(|p| p.end.node != u && p.end.node != r).cloned().collect();
        let rt = updn(&["r", "u", "s"]).route(&f, &LidMap::from_entries(&f, 0, no_ru).unwrap()).unwrap();
        assert!(rt.notes[1].starts_with("updn: 2 forwarding entries"), "{:?}", rt.notes);
        assert!(rt.notes[1].ends_with("(e.g. r toward t)"), "{:?}", rt.notes);
        // A host on r: the search leaves a switch with CA ports without a
        // route, so the rows toward t are the exact ones. r reaches t only
        // down through s, so s must route down too: s-a1-a2-t (down, down,
        // down), 3 hops. Without that, r -> s -> u would go up after down.
        let hr = f.add_hca("hr", 1).unwrap();
        f.connect(r, 4, hr, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let no_u = LidMap::from_entries(&f, 0, lids.ports().iter().filter(|p| p.end.node != u).cloned().collect()).unwrap();
        let (rt, roots) = updn(&["r", "u", "s"]).route_and_roots(&f, &no_u).unwrap();
        assert_eq!(rt.tables.get(s, lid), Some(3), "s must go down to a1");
        assert_eq!(rt.tables.get(u, lid), Some(3));
        let path: Vec<NodeId> = trace(&f, &no_u, &rt.tables, r, lid).unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(path, vec![r, s, a1, a2, t]);
        legal(&f, &no_u, &rt.tables, &root_nodes(&f, &roots), r, lid).unwrap();
        // Min-hop sends s's traffic for t through u.
        assert_eq!(MinHop.route(&f, &lids).unwrap().tables.get(s, lid), Some(2));
        // With u's LID, CA traffic from r would need a route no search finds: an error naming the roots.
        let err = updn(&["r", "u", "s"]).route(&f, &lids).unwrap_err().to_string();
        assert_eq!(
            err,
            "LID 0x0004 (u port 0; no legal up*/down* route with roots r, u, s) is unreachable from switch 'r'"
        );
    }

    /// Root Y over w, u and Z (rank 1), x under u and t under w (rank 2);
    /// also w-u, u-Z and x-t. GUIDs follow creation order: Y < Z < w < u < x < t,
    /// so w -> t, x -> t, u -> x, Y -> anything and Z -> u are down hops,
    /// u -> w up. Switch ports in the order listed; `w_first` cables t's port
    /// 1 to w (else to x); `z_to_u_first` cables Z's port 1 to u (else to Y).
    /// Hosts h0.. on t's ports 3...
    fn search_order_fabric(w_first: bool, z_to_u_first: bool, hosts: u32) -> Fabric {
        let mut f = Fabric::new();
        let [y, z, w, u, x, t] = ["Y", "Z", "w", "u", "x", "t"].map(|n| f.add_switch(n, 6).unwrap());
        let (tw, tx) = if w_first { (1, 2) } else { (2, 1) };
        let (zy, zu) = if z_to_u_first { (2, 1) } else { (1, 2) };
        for (a, pa, b, pb) in [(t, tw, w, 3), (t, tx, x, 2), (w, 1, y, 1), (w, 2, u, 2), (y, 2, u, 1), (y, 3, z, zy), (u, 3, x, 1), (u, 4, z, zu)] {
            f.connect(a, pa, b, pb, LinkSpec::default()).unwrap();
        }
        for i in 0..hosts {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(t, 3 + i, h, 1, LinkSpec::default()).unwrap();
        }
        f
    }

    #[test]
    fn a_switch_first_reached_by_a_route_going_up_passes_nothing_down() {
        // Worked from updn_bfs_by_node (OpenSM 3.3.23; checked against it on
        // ibsim). The search walks back from t: w and x (1 hop), then w
        // reaches Y (2) and u (2, by u -> w, which goes up), then x reaches
        // u again (u -> x, down; u is still queued, so it keeps the direction
        // of its first step), then Y reaches Z (3, Z -> Y). u was queued by a
        // route starting up, so it never passes its count to Z (Z -> u would
        // go down): Z's only candidate is Y, and nobody enters u going down,
        // so u keeps both w and x. The exact per-phase lengths would also let
        // Z go down through u (3 hops) and then hold u to x.
        let f = search_order_fabric(true, false, 2);
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = updn(&["Y"]).route(&f, &lids).unwrap();
        let id = |n: &str| f.node_by_name(n).unwrap();
        let lid = |h: &str| lids.of_port(id(h), 1).unwrap().base;
        // u alternates between its two candidates (w on port 2, x on port 3);
        // Z sends both hosts' traffic up to Y (port 1).
        assert_eq!([lid("h0"), lid("h1")].map(|l| r.tables.get(id("u"), l)), [Some(2), Some(3)]);
        assert_eq!([lid("h0"), lid("h1")].map(|l| r.tables.get(id("Z"), l)), [Some(1), Some(1)]);
        all_legal(&f, &lids, &r.tables, &[id("Y")]);
        check_routes(&f, &lids, &r.tables).unwrap();
    }

    #[test]
    fn an_up_candidate_is_dropped_where_a_route_enters_going_down() {
        // As above with t reaching x first: u is queued by x (u -> x, down)
        // and then also gets 2 hops through w (u -> w, up). Queued going
        // down, OpenSM's u passes its count to Z (Z -> u, down, 3 hops, as
        // many as through Y); with Z's port 1 to u, Z's packets for h0 go to
        // u, and u's first candidate is w: OpenSM 3.3.23 routes Z -> u -> w ->
        // t, down then up. Here u, entered going down, keeps only x.
        let f = search_order_fabric(false, true, 1);
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = updn(&["Y"]).route(&f, &lids).unwrap();
        let id = |n: &str| f.node_by_name(n).unwrap();
        let h0 = lids.of_port(id("h0"), 1).unwrap().base;
        let path: Vec<&str> = trace(&f, &lids, &r.tables, id("Z"), h0).unwrap().into_iter().map(|(n, _)| f.node(n).name.as_str()).collect();
        assert_eq!(path, ["Z", "u", "x", "t"]);
        all_legal(&f, &lids, &r.tables, &[id("Y")]);
    }

    #[test]
    fn a_switch_queued_again_going_down_does_not_pass_on_a_count_from_going_up() {
        // Root R over Y and P; P over v, d, e and t; also Y-v, Y-c, v-c, c-d,
        // d-e, e-t. GUIDs follow creation order, so among rank 2 (v < c < d
        // < e < t) c -> d -> e -> t all go down, and c -> v goes up. Worked
        // from updn_bfs_by_node walking back from t (checked against OpenSM
        // 3.3.23 on ibsim): e (1 hop, t's port 1) queues d (2) before P (1)
        // queues v (2, v -> P goes up, so v can pass its count only to
        // switches it would leave upward); d queues c (3, c -> d goes down);
        // v, processed, gives c a second 3 through v. Then c reaches v (4,
        // v -> c goes down) after v left the queue: OpenSM queues v again as
        // if its route went down, and v passes its 2 hops, which go up
        // through P, to Y (Y -> v goes down): 3 hops, as many as through R.
        // With Y's port 1 to v, OpenSM 3.3.23 routes Y -> v -> P -> t, down
        // then up. Here v, with no down candidate, passes nothing down.
        let mut f = Fabric::new();
        let [r, y, p, v, c, d, e, t] = ["R", "Y", "P", "v", "c", "d", "e", "t"].map(|n| f.add_switch(n, 6).unwrap());
        for (a, pa, b, pb) in [
            (r, 1, y, 2),
            (r, 2, p, 1),
            (y, 1, v, 1),
            (y, 3, c, 1),
            (p, 2, v, 2),
            (p, 3, d, 2),
            (p, 4, e, 2),
            (p, 5, t, 2),
            (v, 3, c, 2),
            (c, 3, d, 1),
            (d, 3, e, 1),
            (e, 3, t, 1),
        ] {
            f.connect(a, pa, b, pb, LinkSpec::default()).unwrap();
        }
        let h = f.add_hca("h0", 1).unwrap();
        f.connect(t, 3, h, 1, LinkSpec::default()).unwrap();
        let hops = SwitchHops::compute(&f);
        let paths = UpDownPaths::compute(&f, &hops, &[hops.index_of(r).unwrap()]);
        let i = |n: NodeId| hops.index_of(n).unwrap();
        let ti = i(t);
        assert!(paths.osm_row[ti]);
        assert_eq!([y, v, c].map(|n| paths.len[ti * paths.n + i(n)]), [3, 2, 3]);
        // Y's 3 hops are through R only; c keeps both its candidates.
        assert!(paths.on_path(i(y), i(r), ti) && !paths.on_path(i(y), i(v), ti));
        assert!(paths.on_path(i(c), i(d), ti) && paths.on_path(i(c), i(v), ti));
        let lids = LidMap::assign(&f, 0).unwrap();
        let rt = updn(&["R"]).route(&f, &lids).unwrap();
        let h0 = lids.of_port(h, 1).unwrap().base;
        assert_eq!(rt.tables.get(y, h0), Some(2));
        all_legal(&f, &lids, &rt.tables, &[r]);
    }

    #[test]
    fn roots_by_guid_and_errors_name_the_root() {
        let f = ring(5);
        let lids = LidMap::assign(&f, 0).unwrap();
        let guid = format!("{:#018x}", f.node(f.node_by_name("s3").unwrap()).guid);
        let (r, roots) = updn(&[&guid]).route_and_roots(&f, &lids).unwrap();
        assert_eq!(roots, vec![3]);
        assert_eq!(r.notes[0], "updn roots (given): s3; max rank 2");
        let err = updn(&["s9"]).route(&f, &lids).unwrap_err().to_string();
        assert_eq!(err, "invalid option 'roots': no switch is named or has GUID 's9', and no file has that path");
        let err = updn(&["h1"]).route(&f, &lids).unwrap_err().to_string();
        assert_eq!(err, "invalid option 'roots': 'h1' is a channel adapter; up*/down* roots must be switches");
        let opts = RoutingOptions { roots: vec![" ".into()], ..Default::default() };
        assert!(build_engine("updn", &opts).is_err());
    }

    #[test]
    fn roots_from_a_root_guid_file() {
        let f = ring(5);
        let lids = LidMap::assign(&f, 0).unwrap();
        let guid = |n: &str| f.node(f.node_by_name(n).unwrap()).guid;
        let dir = std::env::temp_dir().join(format!("ibnetsim-updn-roots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // As opensm-updn-roots.dump writes them ("0x%" PRIx64), and a hand-written root_guid_file.
        let dump = dir.join("opensm-updn-roots.dump");
        std::fs::write(&dump, format!("{:#x}\n{:#x}\n", guid("s3"), guid("s1"))).unwrap();
        let hand = dir.join("roots.txt");
        std::fs::write(&hand, format!("# spine\n{:#018x} s1\n\n{:#x}   # s3\n", guid("s1"), guid("s3"))).unwrap();
        let hops = SwitchHops::compute(&f);
        for (file, order) in [(&dump, vec![3, 1]), (&hand, vec![1, 3])] {
            let (roots, how) = updn(&[file.to_str().unwrap()]).choose_roots(&f, &lids, &hops).unwrap();
            assert_eq!((roots, how), (order, RootSource::Given), "file order: {}", file.display());
        }
        // A file and a name together, each root once.
        let (roots, _) = updn(&[dump.to_str().unwrap(), "s0", "s1"]).choose_roots(&f, &lids, &hops).unwrap();
        assert_eq!(roots, vec![3, 1, 0]);
        // Routing from a file's roots is routing from the same roots by name.
        let one = dir.join("one");
        std::fs::write(&one, format!("{:#x}\n", guid("s3"))).unwrap();
        let (r, roots) = updn(&[one.to_str().unwrap()]).route_and_roots(&f, &lids).unwrap();
        assert_eq!(roots, vec![3]);
        assert_eq!(r.tables, updn(&["s3"]).route(&f, &lids).unwrap().tables);
        // Errors name file and line.
        let bad = dir.join("bad");
        std::fs::write(&bad, format!("{:#x}\n0xdead\n", guid("s1"))).unwrap();
        let err = updn(&[bad.to_str().unwrap()]).route(&f, &lids).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}:2: GUID 0x000000000000dead is not a switch of this fabric (is the file for another fabric?)", bad.display())
        );
        // A value that is a node name and a file path is refused, not guessed.
        let cwd_name = dir.join("s2");
        std::fs::write(&cwd_name, "0x1\n").unwrap();
        let mut g = Fabric::new();
        let a = g.add_switch(cwd_name.to_str().unwrap(), 4).unwrap();
        let h = g.add_hca("h", 1).unwrap();
        g.connect(a, 1, h, 1, LinkSpec::default()).unwrap();
        let err = updn(&[cwd_name.to_str().unwrap()]).route(&g, &LidMap::assign(&g, 0).unwrap()).unwrap_err().to_string();
        assert!(err.contains("names both node") && err.ends_with(&format!("or the file as ./{}", cwd_name.display())), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_histogram_leaves_out_cas_no_path_leads_to() {
        // Switch a with 19 hosts, switch b with one, no cable between them:
        // 20 CA ports, thresholds 18 (90 %) and 1 (5 %). From a, 19 CA ports
        // are at distance 0 and b's is unreachable, left out as OpenSM leaves
        // out distances past IB_SUBNET_PATH_HOPS_MAX: a is a root. From b,
        // one CA port at distance 0 is not more than 18: b is none.
        let mut f = Fabric::new();
        let a = f.add_switch("a", 20).unwrap();
        let b = f.add_switch("b", 4).unwrap();
        for (sw, count) in [(a, 19u32), (b, 1)] {
            for i in 0..count {
                let h = f.add_hca(format!("{}{i}", f.node(sw).name), 1).unwrap();
                f.connect(sw, 1 + i, h, 1, LinkSpec::default()).unwrap();
            }
        }
        let lids = LidMap::assign(&f, 0).unwrap();
        let hops = SwitchHops::compute(&f);
        assert_eq!(hops.by_index(0, 1), UNREACHABLE);
        assert_eq!(histogram_roots(&f, &lids, &hops), vec![0]);
    }

    #[test]
    fn a_root_needs_no_other_distance_over_5_percent() {
        // Switches a and b cabled, `on_a` hosts on a and one on b. With 12 on
        // a (13 CA ports: thresholds 11.7 and 0.65), a sees 12 at distance 0
        // and 1 at distance 1, b the mirror image: one bar over 90 % but a
        // second over 5 %, so neither is a root. With 20 on a (21: 18.9 and
        // 1.05) the single far host is within 5 %: both are roots.
        for (on_a, want) in [(12u32, vec![]), (20, vec![0, 1])] {
            let mut f = Fabric::new();
            let a = f.add_switch("a", 24).unwrap();
            let b = f.add_switch("b", 4).unwrap();
            f.connect(a, 24, b, 4, LinkSpec::default()).unwrap();
            for (sw, count) in [(a, on_a), (b, 1)] {
                for i in 0..count {
                    let h = f.add_hca(format!("{}{i}", f.node(sw).name), 1).unwrap();
                    f.connect(sw, 1 + i, h, 1, LinkSpec::default()).unwrap();
                }
            }
            let lids = LidMap::assign(&f, 0).unwrap();
            assert_eq!(histogram_roots(&f, &lids, &SwitchHops::compute(&f)), want, "{on_a} hosts on a");
        }
    }

    #[test]
    fn the_histogram_stops_below_64_hops() {
        // A line of 65 switches s0..s64, one host at each end: 2 CA ports,
        // 90 % of them is 1.8. Only s32 has both at one distance (32 hops): it
        // is the one root. From s0 and s64 the far host is 64 hops away, past
        // OpenSM's histogram (IB_SUBNET_PATH_HOPS_MAX = 64 bars, 0..63).
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..65).map(|i| f.add_switch(format!("s{i}"), 3).unwrap()).collect();
        for w in s.windows(2) {
            f.connect(w[0], 1, w[1], 2, LinkSpec::default()).unwrap();
        }
        for (i, &sw) in [s[0], s[64]].iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, 3, h, 1, LinkSpec::default()).unwrap();
        }
        let lids = LidMap::assign(&f, 0).unwrap();
        let hops = SwitchHops::compute(&f);
        assert_eq!(hops.by_index(0, 64), 64);
        assert_eq!(histogram_roots(&f, &lids, &hops), vec![32]);
    }

    #[test]
    fn ring_has_no_histogram_root_and_uses_the_centre() {
        // Each switch sees 20 % of the hosts at 0 hops: no bar over 90 %.
        let f = ring(5);
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, roots) = UpDn::default().route_and_roots(&f, &lids).unwrap();
        // Every switch has eccentricity 2 and total distance 6; s0 has the smallest GUID.
        assert_eq!(roots, vec![0]);
        assert_eq!(r.notes[0], "updn roots (centre switch; OpenSM's hop-histogram test found no root): s0; max rank 2");
    }

    #[test]
    fn a_line_without_histogram_roots_is_rooted_in_its_middle() {
        // s0 - s1 - s2 - s3 - s4, a host on each: no switch sees 90 % of the
        // 5 hosts at one distance. Eccentricities 4, 3, 2, 3, 4: s2 is the root,
        // and the ends are 2 hops below it.
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..5).map(|i| f.add_switch(format!("s{i}"), 3).unwrap()).collect();
        for w in s.windows(2) {
            f.connect(w[0], 1, w[1], 2, LinkSpec::default()).unwrap();
        }
        for (i, &sw) in s.iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, 3, h, 1, LinkSpec::default()).unwrap();
        }
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, roots) = UpDn::default().route_and_roots(&f, &lids).unwrap();
        assert_eq!(roots, vec![2]);
        assert_eq!(r.notes[0], "updn roots (centre switch; OpenSM's hop-histogram test found no root): s2; max rank 2");
        check_routes(&f, &lids, &r.tables).unwrap();
    }

    #[test]
    fn fat_tree_roots_are_the_cores() {
        let f = testfab::fat_tree(2, 2, 2, 1);
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, roots) = UpDn::default().route_and_roots(&f, &lids).unwrap();
        let names: Vec<&str> = roots.iter().map(|&i| f.node(f.switches().nth(i).unwrap()).name.as_str()).collect();
        // A core sees every leaf two hops away; an aggregation switch sees half at 1 and half at 3.
        assert_eq!(names, vec!["core0_0", "core1_0"]);
        assert!(r.notes[0].starts_with("updn roots (found by OpenSM's hop-histogram test): core0_0, core1_0"), "{:?}", r.notes);
        // The two cores share no legal route (down to a leaf, then up again):
        // their LIDs get min-hop entries on switches without hosts, and the note says so.
        assert!(r.notes.iter().any(|n| n.contains("forwarding entries have no legal up*/down* route")), "{:?}", r.notes);
        check_routes(&f, &lids, &r.tables).unwrap();
        let rn = root_nodes(&f, &roots);
        for sw in f.switches().filter(|&s| has_ca(&f, s)) {
            for p in lids.ports() {
                legal(&f, &lids, &r.tables, &rn, sw, p.base).unwrap();
            }
        }
        // Leaves are ranked 2: host-to-host routes go leaf-agg-(core-agg-)leaf, all minimal.
        let hops = SwitchHops::compute(&f);
        for sw in f.switches().filter(|&s| has_ca(&f, s)) {
            for p in lids.ca_ports(&f) {
                let len = trace(&f, &lids, &r.tables, sw, p.base).unwrap().len() as u16;
                assert_eq!(len, hops.end_hops(&f, sw, p.end).unwrap());
            }
        }
    }

    #[test]
    fn lmc2_spreads_over_parallel_links() {
        let f = two_switch_parallel(2, 4);
        let lids = LidMap::assign(&f, 2).unwrap();
        let r = updn(&["a"]).route(&f, &lids).unwrap();
        let a = f.node_by_name("a").unwrap();
        for (i, want) in [(0, [1, 2, 1, 2]), (1, [2, 1, 2, 1]), (2, [1, 2, 1, 2]), (3, [2, 1, 2, 1])] {
            let got: Vec<u8> = lids.of_port(host(&f, "b", i), 1).unwrap().lids().map(|l| r.tables.get(a, l).unwrap()).collect();
            assert_eq!(got, want, "b{i}");
        }
        check_routes(&f, &lids, &r.tables).unwrap();
    }

    #[test]
    fn root_lists_are_cut_after_eight_names() {
        // Eight names are shown in full; from nine on, the first eight and the count.
        let f = ring(10);
        let hops = SwitchHops::compute(&f);
        let eight = (0..8).map(|i| format!("s{i}")).collect::<Vec<_>>().join(", ");
        assert_eq!(names(&hops, &f, &(0..8).collect::<Vec<_>>()), eight);
        assert_eq!(names(&hops, &f, &(0..9).collect::<Vec<_>>()), format!("{eight}, … (9 in all)"));
        assert_eq!(names(&hops, &f, &[3]), "s3");
    }

    #[test]
    fn lmc_offsets_split_where_routes_start_though_a_neighbour_routes_elsewhere() {
        // Root R over m1 and m2, both over t (host ht) and q; s (host hs) hangs
        // off R and q. Ranks: R 0; m1, m2, s 1; t, q 2. Toward t, q climbs to
        // m1 or m2 (two candidates); s climbs to R (s -> q is down, and q has
        // no way down to t), so no route toward t passes through q. At q the
        // offsets are not split yet (g = 1): ht's two LIDs (LMC 1) leave q by
        // different ports.
        let mut f = Fabric::new();
        let [r, t, m1, m2, q, s] = ["R", "t", "m1", "m2", "q", "s"].map(|n| f.add_switch(n, 3).unwrap());
        for (x, px, y, py) in [(r, 1, m1, 1), (r, 2, m2, 1), (r, 3, s, 1), (m1, 2, t, 1), (m2, 2, t, 2), (m1, 3, q, 1), (m2, 3, q, 2), (s, 2, q, 3)] {
            f.connect(x, px, y, py, LinkSpec::default()).unwrap();
        }
        for (sw, name) in [(t, "ht"), (s, "hs")] {
            let h = f.add_hca(name, 1).unwrap();
            f.connect(sw, 3, h, 1, LinkSpec::default()).unwrap();
        }
        let lids = LidMap::assign(&f, 1).unwrap();
        let rt = updn(&["R"]).route(&f, &lids).unwrap();
        let ht = lids.of_port(f.node_by_name("ht").unwrap(), 1).unwrap();
        let mut at_q: Vec<u8> = ht.lids().map(|l| rt.tables.get(q, l).unwrap()).collect();
        at_q.sort_unstable();
        assert_eq!(at_q, [1, 2], "q spreads ht's LIDs over m1 and m2");
        check_routes(&f, &lids, &rt.tables).unwrap();
    }

    #[test]
    fn a_switch_without_a_legal_route_does_not_split_its_neighbours_offsets() {
        // Roots R and z. R over m1 and m2, both over t (host ht, LMC 1) and
        // over q and q2; z is cabled to q and q2 only.
        // Ranks: R, z 0; m1, m2, q, q2 1; t 2. Toward t, q climbs to m1 or
        // m2 (q -> m1 is up: same rank, smaller GUID); z has only down hops,
        // to q and q2, which have no way down to t: z has no legal route and
        // takes a minimum-hop entry (it has no hosts). Its own packets are no
        // route that others' offsets split along, so at q ht's two LIDs still
        // leave by different ports. z has no LID here (t has no legal route
        // to z either; a loaded LID map may leave a switch out).
        let mut f = Fabric::new();
        let [r, t, m1, m2, q, q2, z] = ["R", "t", "m1", "m2", "q", "q2", "z"].map(|n| f.add_switch(n, 4).unwrap());
        for (x, px, y, py) in [(r, 1, m1, 1), (r, 2, m2, 1), (m1, 2, t, 1), (m2, 2, t, 2), (m1, 3, q, 1), (m2, 3, q, 2), (m1, 4, q2, 1), (m2, 4, q2, 2), (z, 1, q, 3), (z, 2, q2, 3)] {
            f.connect(x, px, y, py, LinkSpec::default()).unwrap();
        }
        let h = f.add_hca("ht", 1).unwrap();
        f.connect(t, 3, h, 1, LinkSpec::default()).unwrap();
        let all = LidMap::assign(&f, 1).unwrap();
        let lids = LidMap::from_entries(&f, 1, all.ports().iter().filter(|p| p.end.node != z).cloned().collect()).unwrap();
        let rt = updn(&["R", "z"]).route(&f, &lids).unwrap();
        assert!(rt.notes[1].contains("no legal up*/down* route"), "{:?}", rt.notes);
        let ht = lids.of_port(h, 1).unwrap();
        let mut at_q: Vec<u8> = ht.lids().map(|l| rt.tables.get(q, l).unwrap()).collect();
        at_q.sort_unstable();
        assert_eq!(at_q, [1, 2], "q spreads ht's LIDs over m1 and m2");
    }

    #[test]
    fn no_switches_no_tables() {
        let mut f = Fabric::new();
        let a = f.add_hca("a", 1).unwrap();
        let b = f.add_hca("b", 1).unwrap();
        f.connect(a, 1, b, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = UpDn::default().route(&f, &lids).unwrap();
        assert!(r.tables.lft(a).is_none());
    }

    #[test]
    fn base_lid_routes_are_those_of_the_full_run() {
        for (seed, lmc) in [(1u64, 0u8), (2, 1), (3, 2), (4, 3)] {
            let f = testfab::random_connected(seed, 10, 12, 2);
            let lids = LidMap::assign(&f, lmc).unwrap();
            for engine in [UpDn::default(), updn(&["s3"])] {
                let (full, roots) = engine.route_and_roots(&f, &lids).unwrap();
                let base = engine.route_base_lids(&f, &lids).unwrap();
                assert_eq!(base.roots, root_nodes(&f, &roots));
                assert_eq!(base.notes[0], full.notes[0]);
                for sw in f.switches() {
                    for p in lids.ports() {
                        for lid in p.lids() {
                            let want = if lid == p.base { full.tables.get(sw, lid) } else { None };
                            assert_eq!(base.tables.get(sw, lid), want, "seed {seed} LMC {lmc} LID {lid}");
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn random_fabrics_get_legal_loop_free_routes(
            seed in any::<u64>(), switches in 1usize..16, extra in 0usize..20, lmc in 0u8..3, root in proptest::option::of(any::<prop::sample::Index>()),
        ) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            let lids = LidMap::assign(&f, lmc).unwrap();
            let engine = match root {
                Some(i) => UpDn { roots: vec![format!("s{}", i.index(switches))] },
                None => UpDn::default(),
            };
            let (r, roots) = engine.route_and_roots(&f, &lids).unwrap();
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            let rn = root_nodes(&f, &roots);
            let fallback = r.notes.iter().any(|n| n.contains("forwarding entries have no legal up*/down* route"));
            // One root: every switch has a legal route to everything.
            prop_assert!(roots.len() > 1 || !fallback, "{:?}", r.notes);
            for sw in f.switches() {
                if fallback && !has_ca(&f, sw) {
                    continue;
                }
                for p in lids.ports() {
                    for lid in p.lids() {
                        legal(&f, &lids, &r.tables, &rn, sw, lid).map_err(TestCaseError::fail)?;
                    }
                }
            }
        }
    }
}
