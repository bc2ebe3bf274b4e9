//! `dfsssp`: OpenSM's deadlock-free single-source-shortest-path routing
//! (Domke, Hoefler, Nagel, IPDPS 2011), after `opensm/osm_ucast_dfsssp.c`
//! (`dfsssp_remove_deadlocks` and `get_dfsssp_sl`). Written from a reading of
//! that file; no code is taken from it.
//!
//! The forwarding tables are exactly `sssp`'s ([`super::sssp`]). Deadlock
//! freedom comes from virtual layers: every (source LID, destination LID)
//! path is put in one layer, each layer is used on its own VL, and the
//! channel dependency graph (CDG) of each layer's paths is kept acyclic.
//! The per-path layer is returned as the path's SL ([`PathSl`]), to be mapped
//! SL `i` → VL `i` by the SL2VL tables (OpenSM's users configure that
//! identity; `ibnetsim check --vls 15` is it).
//!
//! The steps, as OpenSM takes them:
//!
//! 1. Every path between two different ports (CA ports and switch port 0, all
//!    LIDs of each) starts in layer 0. Its CDG edges are the consecutive
//!    pairs of switch-to-switch channels it crosses; each edge remembers
//!    which paths made it. Channels from or to a CA are left out (a CA never
//!    holds one channel while waiting for another), and so are paths *from* a
//!    switch's port 0: OpenSM walks a path from the source port's peer, which
//!    port 0 has none of, so such paths contribute nothing and stay in layer 0.
//! 2. For layer 0, 1, … up to the next-to-last allowed: while the layer's CDG
//!    has a cycle, take the edge of that cycle carried by the fewest of the
//!    layer's paths (the first such edge going round from where the search
//!    closed the cycle), delete it, and move every path of this layer that
//!    uses it to the next layer. Deleting only the weakest edge leaves the
//!    moved paths' other edges in place; they disappear once they lie on a
//!    cycle with no path of the layer left, which is OpenSM's rule too.
//! 3. If the last allowed layer still has a cycle, routing fails
//!    ([`SmError::Unsupported`], naming `max_vls`).
//! 4. Balancing (when fewer layers are needed than allowed): each spare VL
//!    goes in turn to the layer with the most paths per VL so far; layer `l`
//!    then owns the consecutive SLs from the sum of the earlier layers' VL
//!    counts, and each path of a layer with several SLs gets one of them at
//!    random (OpenSM draws at each PathRecord query with `rand()`; here one
//!    draw per (source port, destination LID) from the `seed` option, so a
//!    run is reproducible). A layer's SLs share its acyclic CDG, so any split
//!    is still deadlock-free.
//!
//! All LIDs of a source port share one row of [`PathSl`]; OpenSM's table has a
//! row per source LID, but the LIDs of one port enter the fabric at the same
//! switch and so follow the same channels to every destination LID, and get
//! the same layer (only the random split could differ). Pairs of LIDs of the
//! same port get layer 0, as in OpenSM.
//!
//! The cycle search is OpenSM's, so the same cycles are broken in the same
//! order: a layer's channels are filed in a binary search tree by OpenSM's
//! channel ID (switch LID, port, peer switch LID, peer port) as paths reach
//! them (destination ports in routing order, then source ports, then LIDs);
//! the depth-first search starts at the tree's root, takes each channel's
//! first dependency (in the order they were added) to an unsearched channel,
//! restarts at the first unsearched channel of the tree's pre-order, and
//! after each broken cycle goes on from the channel where the cycle closed,
//! with its marks left as they were. OpenSM's walk round a cycle takes each
//! channel's first dependency back to a marked channel and assumes it comes
//! round; should it not (OpenSM would loop there for ever), the rest of that
//! layer is searched by a plain depth-first search and a note says so (never
//! seen on the test fabrics). OpenSM skips switches whose port 0 does not
//! report SL2VL support; every modelled switch does. Its multicast part is
//! not modelled here (the crate's multicast manager builds the trees).
//!
//! Options used: `max_vls`, the layers (VLs) allowed, 1..=15, default 15:
//! OpenSM takes the smallest operational VL count of all switch ports, which
//! with its default `max_op_vls 5` on ports capable of 15 data VLs is 15 (8
//! on ports that support VL0-7 only). `seed` for the split of a layer over its
//! SLs.

use ibnetsim_fabric::{Fabric, NodeId, PortNum};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use super::sssp::{route_paths, switch_channels};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::labels::PathLabels;
use crate::lid::{Lid, LidMap};
use crate::path_sl::PathSl;

/// Registry name.
pub const NAME: &str = "dfsssp";

/// Layers allowed unless `max_vls` says otherwise (see the module docs).
pub const DEFAULT_MAX_VLS: u8 = 15;

/// The dfsssp engine.
#[derive(Debug, Clone)]
pub struct Dfsssp {
    /// Virtual layers (VLs) the paths may be spread over, 1..=15.
    pub max_vls: u8,
    /// Seed of the split of a layer over several SLs.
    pub seed: u64,
}

impl Default for Dfsssp {
    fn default() -> Self {
        Dfsssp { max_vls: DEFAULT_MAX_VLS, seed: 0 }
    }
}

/// Registry constructor.
pub(crate) fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    let max_vls = options.max_vls.unwrap_or(DEFAULT_MAX_VLS);
    if !(1..=15).contains(&max_vls) {
        return Err(SmError::option(
            "max_vls",
            format!("{max_vls} virtual layers is out of range; dfsssp uses one data VL per layer, and IBA ports have 1..=15"),
        ));
    }
    Ok(Box::new(Dfsssp { max_vls, seed: options.seed }))
}

/// The layer assignment, before and after balancing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layers {
    /// Layers the paths needed (1 on a fabric whose paths form no cycle).
    pub needed: u8,
    /// (source LID, destination LID) pairs in each needed layer before balancing.
    pub pairs: Vec<u64>,
    /// First SL of each needed layer, and how many SLs it got.
    pub sls: Vec<(u8, u8)>,
}

impl RoutingEngine for Dfsssp {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let (routing, _) = self.route_layers(fabric, lids)?;
        Ok(routing)
    }
}

/// The paths leaving one source switch toward one destination LID: they share
/// every switch-to-switch channel, so they move between layers together.
struct Group {
    /// Channels crossed, in order.
    channels: Vec<u32>,
    /// Source LIDs behind the switch: the (source, destination) pairs it stands for.
    pairs: u64,
}

/// One dependency between two channels in one layer's CDG.
struct Edge {
    to: u32,
    /// Groups that put it there (some may have moved on since).
    groups: Vec<u32>,
    /// Pairs of this layer still using it (OpenSM's `num_pairs - removed`).
    live: u64,
    removed: bool,
}

/// One layer's channel dependency graph.
#[derive(Default)]
struct Cdg {
    /// Per channel, its outgoing edges in the order they were added.
    out: FxHashMap<u32, Vec<u32>>,
    /// Channels in the order a path first reached them.
    seen: Vec<u32>,
    edges: Vec<Edge>,
    edge_of: FxHashMap<(u32, u32), u32>,
    /// OpenSM keeps a layer's channels in an unbalanced binary search tree
    /// keyed by channel ID, filled as paths reach them; its pre-order is where
    /// the cycle search looks for the next unvisited channel.
    tree: FxHashMap<u32, (u32, u32)>,
    root: Option<u32>,
}

/// No channel (an empty child in the tree).
const NO_CHANNEL: u32 = u32::MAX;

/// Search marks (OpenSM's UNKNOWN, GRAY, BLACK).
const GRAY: u8 = 1;
const BLACK: u8 = 2;

/// The cycle search's state in one layer, kept between searches as OpenSM
/// keeps it in the graph's nodes.
#[derive(Default)]
struct Search {
    status: FxHashMap<u32, u8>,
    pre: FxHashMap<u32, u32>,
}

impl Search {
    fn status(&self, c: u32) -> u8 {
        self.status.get(&c).copied().unwrap_or(0)
    }
}

impl Cdg {
    fn add(&mut self, gid: u32, g: &Group, keys: &[u64]) {
        for &c in &g.channels {
            if let std::collections::hash_map::Entry::Vacant(v) = self.out.entry(c) {
                v.insert(Vec::new());
                self.seen.push(c);
                self.tree_insert(c, keys);
            }
        }
        for w in g.channels.windows(2) {
            let e = *self.edge_of.entry((w[0], w[1])).or_insert_with(|| {
                self.edges.push(Edge { to: w[1], groups: Vec::new(), live: 0, removed: false });
                let e = (self.edges.len() - 1) as u32;
                self.out.get_mut(&w[0]).expect("channel added").push(e);
                e
            });
            let edge = &mut self.edges[e as usize];
            edge.groups.push(gid);
            edge.live += g.pairs;
        }
    }

    fn tree_insert(&mut self, c: u32, keys: &[u64]) {
        self.tree.insert(c, (NO_CHANNEL, NO_CHANNEL));
        let Some(mut at) = self.root else {
            self.root = Some(c);
            return;
        };
        loop {
            let (left, right) = self.tree[&at];
            let slot = if keys[c as usize] < keys[at as usize] { left } else { right };
            if slot == NO_CHANNEL {
                let node = self.tree.get_mut(&at).expect("tree node");
                if keys[c as usize] < keys[at as usize] {
                    node.0 = c;
                } else {
                    node.1 = c;
                }
                return;
            }
            at = slot;
        }
    }

    /// The first channel in the tree's pre-order not yet searched
    /// (OpenSM's `get_next_cdg_node`).
    fn next_unvisited(&self, st: &Search) -> Option<u32> {
        let mut stack: Vec<u32> = self.root.into_iter().collect();
        while let Some(c) = stack.pop() {
            if st.status(c) == 0 {
                return Some(c);
            }
            let (left, right) = self.tree[&c];
            if right != NO_CHANNEL {
                stack.push(right);
            }
            if left != NO_CHANNEL {
                stack.push(left);
            }
        }
        None
    }

    fn live_out(&self, c: u32) -> impl Iterator<Item = u32> + '_ {
        self.out[&c].iter().copied().filter(move |&e| !self.edges[e as usize].removed)
    }

    /// OpenSM's `search_cycle_in_channel_dep_graph`: a depth-first search
    /// from `start` that follows, at each channel, its first dependency to an
    /// unsearched channel, and stops at the first one back to a channel on
    /// the search path (returned). A channel with neither is finished; the
    /// search then backs up, or restarts at [`Cdg::next_unvisited`].
    fn search(&self, st: &mut Search, start: u32) -> Option<u32> {
        let mut cur = start;
        loop {
            st.status.insert(cur, GRAY);
            let mut next = None;
            for e in self.live_out(cur) {
                let to = self.edges[e as usize].to;
                match st.status(to) {
                    0 => {
                        next = Some(to);
                        break;
                    }
                    GRAY => return Some(to),
                    _ => {}
                }
            }
            match next {
                Some(n) => {
                    st.pre.insert(n, cur);
                    cur = n;
                }
                None => {
                    st.status.insert(cur, BLACK);
                    cur = match st.pre.remove(&cur) {
                        Some(p) => p,
                        None => self.next_unvisited(st)?,
                    };
                }
            }
        }
    }

    /// OpenSM's `get_weakest_link_in_cycle`: from `cycle`, follow each
    /// channel's first dependency to a searched-path channel round to
    /// `cycle` again, unmarking them, and return the dependency carrying the
    /// fewest of the layer's pairs (the first of equals). `None` if the walk
    /// does not close (OpenSM would not return).
    fn weakest_in_cycle(&self, st: &mut Search, cycle: u32) -> Option<u32> {
        let first_gray = |st: &Search, c: u32| self.live_out(c).find(|&e| st.status(self.edges[e as usize].to) == GRAY);
        let mut weakest = first_gray(st, cycle)?;
        let mut cur = self.edges[weakest as usize].to;
        for _ in 0..=self.out.len() {
            st.status.insert(cur, 0);
            if cur == cycle {
                return Some(weakest);
            }
            let e = first_gray(st, cur)?;
            if self.edges[e as usize].live < self.edges[weakest as usize].live {
                weakest = e;
            }
            cur = self.edges[e as usize].to;
        }
        None
    }

    fn remove(&mut self, g: &Group) {
        for w in g.channels.windows(2) {
            if let Some(&e) = self.edge_of.get(&(w[0], w[1])) {
                let edge = &mut self.edges[e as usize];
                edge.live = edge.live.saturating_sub(g.pairs);
            }
        }
    }

    /// A cycle of edges still present, listed from the channel where the
    /// search closed it. `black` marks channels already known to lie on no
    /// cycle; deleting edges never puts one back on a cycle, so it is kept
    /// between calls.
    fn find_cycle(&self, black: &mut FxHashMap<u32, bool>) -> Option<Vec<u32>> {
        // Gray: on the current search path.
        let mut gray: FxHashMap<u32, usize> = FxHashMap::default();
        let mut stack: Vec<(u32, usize)> = Vec::new();
        let mut path: Vec<u32> = Vec::new();
        for &start in &self.seen {
            if black.contains_key(&start) {
                continue;
            }
            gray.insert(start, 0);
            stack.push((start, 0));
            while let Some(top) = stack.last_mut() {
                let (v, i) = *top;
                let out = &self.out[&v];
                if i < out.len() {
                    top.1 += 1;
                    let e = out[i];
                    let edge = &self.edges[e as usize];
                    if edge.removed || black.contains_key(&edge.to) {
                        continue;
                    }
                    if let Some(&k) = gray.get(&edge.to) {
                        let mut cycle = path[k..].to_vec();
                        cycle.push(e);
                        return Some(cycle);
                    }
                    gray.insert(edge.to, stack.len());
                    path.push(e);
                    stack.push((edge.to, 0));
                } else {
                    black.insert(v, true);
                    gray.remove(&v);
                    stack.pop();
                    path.pop();
                }
            }
        }
        None
    }
}

impl Dfsssp {
    /// Routes and assigns layers; also returns the layer plan for the notes and tests.
    pub(crate) fn route_layers(&self, fabric: &Fabric, lids: &LidMap) -> Result<(Routing, Layers), SmError> {
        let paths = route_paths(fabric, lids)?;
        let tables = paths.tables;
        let ports = lids.ports();
        let is_switch = |n: NodeId| fabric.node(n).kind.is_switch();
        // Source LIDs of CA ports behind each switch; the switch a CA port is cabled to.
        let mut ca_lids_at: FxHashMap<NodeId, u64> = FxHashMap::default();
        let mut switch_of: Vec<Option<NodeId>> = vec![None; ports.len()];
        for (i, p) in ports.iter().enumerate() {
            if is_switch(p.end.node) {
                continue;
            }
            if let Some(peer) = fabric.peer(p.end.node, p.end.port).filter(|e| is_switch(e.node)) {
                *ca_lids_at.entry(peer.node).or_default() += p.count() as u64;
                switch_of[i] = Some(peer.node);
            }
        }
        // Source switches in OpenSM's port order (the first CA port of each).
        let mut sources: Vec<NodeId> = Vec::new();
        for &i in &paths.order {
            if let Some(s) = switch_of[i] {
                if !sources.contains(&s) {
                    sources.push(s);
                }
            }
        }
        // Channels get dense ids as paths reach them.
        let mut channel_id: FxHashMap<(NodeId, PortNum), u32> = FxHashMap::default();
        let mut groups: Vec<Group> = Vec::new();
        let mut group_of: FxHashMap<(NodeId, Lid), u32> = FxHashMap::default();
        let mut hops = Vec::new();
        // OpenSM's channel ID: switch LID, port, peer switch LID, peer port.
        let mut keys: Vec<u64> = Vec::new();
        let key_of = |(sw, port): (NodeId, PortNum)| {
            let peer = fabric.peer(sw, port).expect("a switch-to-switch channel");
            let lid = |n: NodeId| u64::from(lids.switch_lid(n).unwrap_or(0));
            (lid(sw) << 48) | (u64::from(port) << 32) | (lid(peer.node) << 16) | u64::from(peer.port)
        };
        // OpenSM's order: destination ports, then source ports, then LIDs.
        for &d in &paths.order {
            for &s in &sources {
                for dlid in ports[d].lids() {
                    switch_channels(fabric, &tables, s, dlid, &mut hops).ok_or_else(|| SmError::Unsupported {
                        engine: NAME.into(),
                        reason: format!("the sssp tables do not deliver LID {dlid:#06x} from '{}'", fabric.node(s).name),
                    })?;
                    // A path with one switch-to-switch channel has no
                    // dependency, but OpenSM still files the channel.
                    if hops.is_empty() {
                        continue;
                    }
                    let mut pairs = ca_lids_at[&s];
                    if switch_of[d] == Some(s) {
                        pairs -= ports[d].count() as u64;
                    }
                    let mut channels = Vec::with_capacity(hops.len());
                    for &h in &hops {
                        let next = channel_id.len() as u32;
                        let id = *channel_id.entry(h).or_insert(next);
                        if id == next {
                            keys.push(key_of(h));
                        }
                        channels.push(id);
                    }
                    group_of.insert((s, dlid), groups.len() as u32);
                    groups.push(Group { channels, pairs });
                }
            }
        }
        let (layer_of_group, needed, moved, unclosed) = self.assign(&groups, &keys)?;
        // Every pair between two different ports, before balancing.
        let total_lids: u64 = ports.iter().map(|p| p.count() as u64).sum();
        let all_pairs: u64 = ports.iter().map(|p| p.count() as u64 * (total_lids - p.count() as u64)).sum();
        let mut per_layer = moved;
        per_layer[0] = all_pairs - per_layer[1..].iter().sum::<u64>();
        let split = balance(&per_layer, self.max_vls);
        let mut first = Vec::with_capacity(split.len());
        let mut acc = 0u8;
        for &n in &split {
            first.push(acc);
            acc += n;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut path_sl = PathSl::table(lids);
        for (i, src) in ports.iter().enumerate() {
            for dlid in 1..=lids.top_lid() {
                let Some(dst) = lids.owner(dlid) else { continue };
                let layer = match switch_of[i] {
                    Some(s) if src.end != dst.end => group_of.get(&(s, dlid)).map_or(0, |&g| layer_of_group[g as usize]),
                    _ => 0,
                } as usize;
                let n = split[layer];
                path_sl.set(src.base, dlid, first[layer] + if n > 1 { rng.random_range(0..n) } else { 0 });
            }
        }
        let plan = Layers {
            needed,
            pairs: per_layer.clone(),
            sls: first.iter().zip(&split).map(|(&f, &n)| (f, n)).collect(),
        };
        let mut notes = vec![format!(
            "dfsssp: {needed} virtual layer(s) needed of {} allowed (max_vls); (source, destination) LID pairs per layer: {per_layer:?}",
            self.max_vls
        )];
        if split.iter().any(|&n| n > 1) {
            let spans: Vec<String> = plan
                .sls
                .iter()
                .enumerate()
                .map(|(l, &(f, n))| if n == 1 { format!("layer {l}: SL {f}") } else { format!("layer {l}: SLs {f}-{}", f + n - 1) })
                .collect();
            notes.push(format!("dfsssp: spare VLs balance the layers: {}", spans.join(", ")));
        }
        for l in unclosed {
            notes.push(format!(
                "dfsssp: in layer {l} OpenSM's walk round a cycle did not close (OpenSM would not return); \
                 the rest of that layer was searched plainly"
            ));
        }
        notes.push(format!(
            "dfsssp: path SLs are VLs: map SL i to VL i on {} or more data VLs (`ibnetsim check --vls {}`), or layers merge",
            acc, acc
        ));
        let routing = Routing { tables, notes, labels: PathLabels::default(), path_sl, not_in_dump: Vec::new(), sl2vl: None };
        Ok((routing, plan))
    }

    /// Steps 1-3 of the module docs: each group's layer, the layers needed, and
    /// the pairs moved into each layer.
    /// Also the layers where OpenSM's cycle walk did not close.
    #[allow(clippy::type_complexity)]
    fn assign(&self, groups: &[Group], keys: &[u64]) -> Result<(Vec<u8>, u8, Vec<u64>, Vec<usize>), SmError> {
        let max = self.max_vls as usize;
        let mut layer_of = vec![0u8; groups.len()];
        let mut moved = vec![0u64; max];
        let mut cdgs: Vec<Cdg> = (0..max).map(|_| Cdg::default()).collect();
        for (gid, g) in groups.iter().enumerate() {
            cdgs[0].add(gid as u32, g, keys);
        }
        let mut needed = 1u8;
        let mut unclosed = Vec::new();
        for l in 0..max {
            if cdgs[l].edges.is_empty() {
                break;
            }
            // OpenSM's search first; should its cycle walk not close (a case
            // OpenSM would not return from), a plain search for the rest of the layer.
            let mut st = Search::default();
            let mut start = cdgs[l].root;
            let mut black = FxHashMap::default();
            let mut plain = false;
            loop {
                let weakest = if plain {
                    let Some(cycle) = cdgs[l].find_cycle(&mut black) else { break };
                    let cdg = &cdgs[l];
                    let mut weakest = cycle[0];
                    for &e in &cycle[1..] {
                        if cdg.edges[e as usize].live < cdg.edges[weakest as usize].live {
                            weakest = e;
                        }
                    }
                    weakest
                } else {
                    let Some(from) = start else { break };
                    let Some(cycle) = cdgs[l].search(&mut st, from) else { break };
                    start = Some(cycle);
                    match cdgs[l].weakest_in_cycle(&mut st, cycle) {
                        Some(e) => e,
                        None => {
                            plain = true;
                            unclosed.push(l);
                            continue;
                        }
                    }
                };
                if l + 1 == max {
                    return Err(SmError::Unsupported {
                        engine: NAME.into(),
                        reason: format!(
                            "its paths need more than {max} virtual layers (one VL each) to be free of credit loops: \
                             allow more with the max_vls option (--max-vls, at most 15), or fall back with a chain such as 'dfsssp,updn'"
                        ),
                    });
                }
                needed = needed.max(l as u8 + 2);
                let cdg = &mut cdgs[l];
                cdg.edges[weakest as usize].removed = true;
                let riders = std::mem::take(&mut cdg.edges[weakest as usize].groups);
                for gid in riders {
                    if layer_of[gid as usize] as usize != l {
                        continue;
                    }
                    layer_of[gid as usize] = l as u8 + 1;
                    let g = &groups[gid as usize];
                    cdgs[l].remove(g);
                    cdgs[l + 1].add(gid, g, keys);
                    moved[l + 1] += g.pairs;
                }
            }
        }
        moved.truncate(needed as usize);
        Ok((layer_of, needed, moved, unclosed))
    }
}

/// OpenSM's balancing: how many VLs (SLs) each needed layer gets. Each spare
/// VL goes to the layer with the most pairs per VL so far, the first on ties.
fn balance(pairs: &[u64], max_vls: u8) -> Vec<u8> {
    let mut split = vec![1u8; pairs.len()];
    for _ in pairs.len()..max_vls as usize {
        let mut best = 0;
        let mut most = 0.0f64;
        for (l, &p) in pairs.iter().enumerate() {
            let avg = p as f64 / split[l] as f64;
            if most < avg {
                most = avg;
                best = l;
            }
        }
        split[best] += 1;
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::CdgReport;
    use crate::routing::testfab::{self, check_routes, sls_used, RouteSls};
    use crate::routing::sssp::Sssp;
    use ibnetsim_fabric::gen::{FatTreeParams, IrregularParams, MeshParams, RingParams};
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    fn engine(max_vls: u8) -> Dfsssp {
        Dfsssp { max_vls, seed: 1 }
    }

    /// The credit-loop check of the CA-to-CA routes with SL `i` on VL `i`,
    /// each route on the SL the engine gave it (or SL 0 on every route).
    fn cdg(f: &Fabric, lids: &LidMap, r: &Routing, per_path: bool) -> CdgReport {
        testfab::credit_loops(f, lids, r, if per_path { RouteSls::Given } else { RouteSls::Zero }, false)
    }

    #[test]
    fn registered_with_max_vls_checked() {
        testfab::assert_max_vls_checked(NAME);
    }

    #[test]
    fn tables_are_sssps() {
        let f = MeshParams::new(&[4, 4], true, 2).build().unwrap();
        let lids = LidMap::assign(&f, 1).unwrap();
        let r = engine(15).route(&f, &lids).unwrap();
        assert_eq!(r.tables, Sssp.route(&f, &lids).unwrap().tables);
        check_routes(&f, &lids, &r.tables).unwrap();
    }

    #[test]
    fn torus_needs_layers_and_gets_them() {
        // Layers needed, and the (source, destination) LID pairs in each.
        for (name, f, pairs) in [
            ("torus 4x4", MeshParams::new(&[4, 4], true, 2).build().unwrap(), vec![1862, 322, 70, 2]),
            ("ring 6", RingParams { switches: 6, hosts_per_switch: 1, link: LinkSpec::default() }.build().unwrap(), vec![126, 6]),
            ("torus 3x3x3", MeshParams::new(&[3, 3, 3], true, 1).build().unwrap(), vec![2605, 230, 27]),
        ] {
            let lids = LidMap::assign(&f, 0).unwrap();
            let (r, plan) = engine(15).route_layers(&f, &lids).unwrap();
            assert_eq!(plan.pairs, pairs, "{name}");
            assert_eq!(plan.needed as usize, pairs.len(), "{name}");
            check_routes(&f, &lids, &r.tables).unwrap();
            // One layer (every route on SL 0): the minimal routes close a credit loop.
            assert!(cdg(&f, &lids, &r, false).has_cycle(), "{name}");
            // The engine's SLs: none.
            let with = cdg(&f, &lids, &r, true);
            assert!(!with.has_cycle(), "{name}: {:?}", with.cycle);
            assert!(sls_used(&lids, &r).len() > 1, "{name}");
            // Balancing hands out all 15 VLs.
            assert_eq!(plan.sls.iter().map(|&(_, n)| n as u32).sum::<u32>(), 15, "{name}");
        }
    }

    #[test]
    fn ring4_needs_one_layer() {
        // sssp's tables on the 4-ring are worked out in sssp's tests; the
        // switch LIDs follow the same pattern. Paths crossing two switch
        // links: h0→h2 and h0→s2 (s0→s3→s2), h1→h3 and h1→s3 (s1→s2→s3),
        // h2→h0 and h2→s0 (s2→s1→s0), h3→h1 and h3→s1 (s3→s0→s1). Their
        // dependencies, clockwise (s3→s0)→(s0→s1) and (s1→s2)→(s2→s3),
        // counter-clockwise (s2→s1)→(s1→s0) and (s0→s3)→(s3→s2), close no
        // cycle: one layer.
        let f = testfab::ring4();
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, plan) = engine(1).route_layers(&f, &lids).unwrap();
        assert_eq!(plan, Layers { needed: 1, pairs: vec![8 * 7], sls: vec![(0, 1)] });
        assert_eq!(sls_used(&lids, &r), vec![0]);
        assert!(!cdg(&f, &lids, &r, true).has_cycle());
    }

    #[test]
    fn spare_vls_spread_one_layers_paths_over_its_sls() {
        // The 4-ring needs one layer (above); with 4 VLs allowed it gets SLs
        // 0-3, and each of its 8·8 (source, destination LID) entries draws
        // one of them. All four are used unless the 64 draws missed one,
        // which a uniform draw does with probability below 4·(3/4)^64 ≈ 10^-7.
        let f = testfab::ring4();
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, plan) = engine(4).route_layers(&f, &lids).unwrap();
        assert_eq!(plan.sls, vec![(0, 4)]);
        assert_eq!(sls_used(&lids, &r), vec![0, 1, 2, 3]);
    }

    #[test]
    fn each_spare_vl_goes_to_the_layer_with_the_most_pairs_per_vl() {
        // 10 and 6 pairs, 4 VLs: the first spare goes to layer 0 (10 > 6),
        // the second to layer 1 (10/2 = 5 < 6).
        assert_eq!(balance(&[10, 6], 4), vec![2, 2]);
        // 126 and 6 over 15: layer 0 takes all 13 spares, since 126/13 ≈
        // 9.7 > 6 still before the last.
        assert_eq!(balance(&[126, 6], 15), vec![14, 1]);
        // Ties go to the first layer; no spare VL, no change.
        assert_eq!(balance(&[3, 3], 3), vec![2, 1]);
        assert_eq!(balance(&[1, 2, 3], 3), vec![1, 1, 1]);
    }

    #[test]
    fn ring6_by_hand() {
        // Six switches sw0..sw5, port 1 clockwise (to sw_i+1), port 2 back;
        // h_i on sw_i. LIDs h0..h5 = 1..6, sw0..sw5 = 7..12. sssp sends the
        // two-hop LIDs the only minimal way and splits the antipodes:
        // clockwise sw1→h4, sw1→sw4, sw2→sw5, sw3→sw0, sw4→h1, sw5→sw2;
        // counter-clockwise sw0→h3, sw0→sw3, sw2→h5, sw3→h0, sw4→sw1, sw5→h2.
        let f = RingParams { switches: 6, hosts_per_switch: 1, link: LinkSpec::default() }.build().unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let row = |s: &str| r_tables_row(&f, &lids, s);
        assert_eq!(row("sw0"), vec![3, 1, 1, 2, 2, 2, 0, 1, 1, 2, 2, 2]);
        assert_eq!(row("sw1"), vec![2, 3, 1, 1, 1, 2, 2, 0, 1, 1, 1, 2]);
        assert_eq!(row("sw2"), vec![2, 2, 3, 1, 1, 2, 2, 2, 0, 1, 1, 1]);
        // Clockwise dependency e_i = (i→i+1)→(i+1→i+2) carries the two
        // two-hop pairs of h_i (to h_i+2 and sw_i+2) plus the clockwise
        // antipode pairs crossing it: e0 3, e1 4, e2 5, e3 4, e4 4, e5 4.
        // Counter-clockwise f_i = (i→i-1)→(i-1→i-2): f0 4, f1 3, f2 4, f3 4,
        // f4 4, f5 5. Each direction is a cycle; its weakest edge (e0, f1)
        // goes, and its pairs move to layer 1: h0→h2, h0→sw2, h5→sw2 and
        // h1→h5, h1→sw5, h2→h5. Layer 1 then holds e0, e5, f1, f2: no cycle.
        let (r, plan) = engine(2).route_layers(&f, &lids).unwrap();
        assert_eq!(plan, Layers { needed: 2, pairs: vec![12 * 11 - 6, 6], sls: vec![(0, 1), (1, 1)] });
        let mut on_1 = Vec::new();
        for s in lids.ports() {
            for d in 1..=12 {
                if r.path_sl.get(s.base, d) == Some(1) {
                    on_1.push((s.base, d));
                }
            }
        }
        assert_eq!(on_1, vec![(1, 3), (1, 9), (2, 6), (2, 12), (3, 6), (6, 9)]);
        assert!(!cdg(&f, &lids, &r, true).has_cycle());
        assert!(cdg(&f, &lids, &r, false).has_cycle());
    }

    fn r_tables_row(f: &Fabric, lids: &LidMap, s: &str) -> Vec<u8> {
        let t = Sssp.route(f, lids).unwrap().tables;
        t.lft(f.node_by_name(s).unwrap()).unwrap().entries()[1..].to_vec()
    }

    #[test]
    fn weakest_dependency_of_the_cycle_moves_up() {
        // Channels 0..3. Path group 0 (2 pairs) crosses 3, 0, 1; group 1 (1
        // pair) crosses 1, 2, 0. Dependencies 3→0 and 0→1 carry 2 pairs, 1→2
        // and 2→0 carry 1: the cycle 0→1→2→0. The search starts at channel 3
        // (the tree's root, filed first), goes 3, 0, 1, 2 and closes the
        // cycle at 0; going round from 0, 0→1 (2) is beaten by 1→2 (1), which
        // 2→0 only ties. 1→2 goes and group 1 moves to layer 1, where its
        // dependencies form no cycle.
        let groups = vec![Group { channels: vec![3, 0, 1], pairs: 2 }, Group { channels: vec![1, 2, 0], pairs: 1 }];
        let keys = [40, 20, 30, 10];
        let (layer_of, needed, moved, unclosed) = engine(15).assign(&groups, &keys).unwrap();
        assert_eq!((layer_of, needed, moved, unclosed), (vec![0, 1], 2, vec![0, 1], vec![]));
        let e = engine(1).assign(&groups, &keys).err().unwrap().to_string();
        assert!(e.contains("more than 1 virtual layers"), "{e}");
    }

    #[test]
    fn the_plain_search_finds_the_cycle_past_a_channel_without_dependencies() {
        // The fallback search (`find_cycle`) on paths 0→1, 1→2, 2→0 and 2→3:
        // dependencies 0→1 (edge 0), 1→2 (edge 1), 2→0 (edge 2), 2→3 (edge
        // 3), and channel 3 depends on nothing. Depth first from channel 0,
        // the first channel reached: 0, 1, 2, then 2's first dependency
        // closes the cycle at 0, so edges 0, 1, 2. With 2→0 removed only a
        // path is left: no cycle, and every channel is marked finished.
        let groups = [vec![0, 1], vec![1, 2], vec![2, 0], vec![2, 3]];
        let mut cdg = Cdg::default();
        for (gid, ch) in groups.iter().enumerate() {
            cdg.add(gid as u32, &Group { channels: ch.clone(), pairs: 1 }, &[0, 1, 2, 3]);
        }
        let mut black = FxHashMap::default();
        assert_eq!(cdg.find_cycle(&mut black), Some(vec![0, 1, 2]));
        cdg.edges[2].removed = true;
        let mut black = FxHashMap::default();
        assert_eq!(cdg.find_cycle(&mut black), None);
        let mut finished: Vec<u32> = black.keys().copied().collect();
        finished.sort_unstable();
        assert_eq!(finished, vec![0, 1, 2, 3]);
    }

    #[test]
    fn too_few_layers_is_an_error_naming_the_option() {
        let f = MeshParams::new(&[4, 4], true, 2).build().unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let e = engine(1).route(&f, &lids).unwrap_err().to_string();
        assert_eq!(
            e,
            "routing engine 'dfsssp' cannot route this fabric: its paths need more than 1 virtual layers (one VL each) \
             to be free of credit loops: allow more with the max_vls option (--max-vls, at most 15), or fall back \
             with a chain such as 'dfsssp,updn'"
        );
    }

    #[test]
    fn trees_need_one_layer() {
        for f in [FatTreeParams::new(4, 2).build().unwrap(), FatTreeParams::new(2, 3).build().unwrap()] {
            let lids = LidMap::assign(&f, 0).unwrap();
            let (r, plan) = engine(4).route_layers(&f, &lids).unwrap();
            assert_eq!(plan.needed, 1);
            assert_eq!(plan.sls, vec![(0, 4)]);
            assert!(!cdg(&f, &lids, &r, true).has_cycle());
            // With one VL allowed every path is on SL 0.
            let (r, plan) = engine(1).route_layers(&f, &lids).unwrap();
            assert_eq!((plan.needed, sls_used(&lids, &r)), (1, vec![0]));
        }
    }

    #[test]
    fn irregular_fabrics_are_credit_loop_free() {
        for seed in 0..4 {
            let f = IrregularParams::with_links_per_switch(16, 8, 4, 4, seed).build().unwrap();
            for lmc in [0, 1] {
                let lids = LidMap::assign(&f, lmc).unwrap();
                let (r, plan) = engine(15).route_layers(&f, &lids).unwrap();
                check_routes(&f, &lids, &r.tables).unwrap();
                assert!(!cdg(&f, &lids, &r, true).has_cycle(), "seed {seed} lmc {lmc}: {plan:?}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn random_fabrics_are_complete_and_credit_loop_free(
            seed in any::<u64>(), switches in 1usize..12, extra in 0usize..14, lmc in 0u8..2,
        ) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            let lids = LidMap::assign(&f, lmc).unwrap();
            let r = engine(15).route(&f, &lids).unwrap();
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            let report = cdg(&f, &lids, &r, true);
            prop_assert!(!report.has_cycle(), "{:?}", report.cycle);
        }
    }
}
