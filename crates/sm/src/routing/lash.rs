//! `lash`: OpenSM's LAyered SHortest path routing (Skeie, Lysne, Theiss,
//! "Layered Shortest Path (LASH) Routing in Irregular System Area Networks",
//! IPDPS 2002), after OpenSM 3.3.23's `opensm/osm_ucast_lash.c`. Written from
//! a reading of that file; no code is taken from it.
//!
//! LASH routes switch to switch on minimum-hop paths and makes them free of
//! credit loops by putting each *pair of switches* (both directions together)
//! on one virtual layer, a layer being an SL that the SL2VL tables must map to
//! its own VL. Every route between the two switches' ports (CA ports and
//! switch port 0 alike) gets the pair's SL through [`PathSl`], as OpenSM's
//! `get_lash_sl` answers PathRecord queries. The steps, as OpenSM takes them:
//!
//! 1. Switches are numbered in OpenSM's switch-table order
//!    (`ucast::switch_table_order`); each switch lists its cables to
//!    switches in port order, one entry per cable (`osm_lash_process_switch`,
//!    `connect_switches` without mesh analysis).
//! 2. Paths (`shortest_path`, `generate_routing_func_for_mst`): for each
//!    switch `r` in turn, a breadth-first tree is grown from `r`, each switch
//!    adopting the not yet queued neighbours it meets in cable order. Every
//!    switch `a` of the tree whose entry for a descendant `d` is still empty
//!    then sends `d` toward the child whose subtree holds `d`, on its
//!    lowest-numbered cable to that child. The first tree that sets an entry
//!    keeps it. A tree's paths are shortest paths, so every route is minimal.
//!    All LIDs behind one switch share its route (all `2^LMC` LIDs of a port
//!    too: without mesh analysis OpenSM has one port per neighbour).
//! 3. Layers (`lash_core`): switch pairs `(i, j)`, `i < j`, in order. The
//!    paths `i → j` and `j → i` are added to layer 0, 1, … in turn, and stay
//!    in the first layer whose channel dependency graph (vertices: directed
//!    switch-to-switch channels; edges: consecutive channels of a path)
//!    keeps no cycle reachable from the two paths' first channels
//!    (`cycle_exists`). The layer was acyclic before, so that is the same as
//!    "the layer stays acyclic". A pair no layer takes opens a new one.
//! 4. Balancing (`balance_virtual_lanes`), when more than one layer is
//!    needed: starting from layer 0 as the fullest and the last layer as the
//!    emptiest, a pair of the fullest layer is drawn (a random row and
//!    column of the switch-pair matrix, then the first pair of that layer
//!    from there on, rows and columns wrapping), and moved to the emptiest
//!    layer if it closes no cycle there; otherwise it is marked tried. It
//!    stops when the fullest layer has tried as many pairs as it held, or
//!    when the fullest layer holds fewer than 6 more (ordered) pairs than
//!    the emptiest. Whenever the fullest or emptiest layer changes, the
//!    marks are cleared and the count of trials starts again. OpenSM's
//!    search for the emptiest layer starts at 9999 ordered pairs, so a
//!    layer holding that many or more is never the emptiest: on large
//!    fabrics balancing stops short (the 12-ary 3-tree ends at [72846,
//!    10000, 10502, 10000, 10000, 72844] in OpenSM and here); kept.
//! 5. SLs (`get_lash_sl`): a route from a port behind switch `s` (or switch
//!    `s` itself) to a LID behind switch `t` takes `lash_start_vl` plus the
//!    layer of `(s, t)`; within one switch it takes `lash_start_vl`. So the
//!    layering covers routes from and to switch LIDs as well: management
//!    traffic is credit-loop free too.
//!
//! The VLs available are `max_vls` (OpenSM: the smallest operational VL count
//! of any cabled switch port, 15 with its default `max_op_vls 5` on 15-VL
//! ports, 8 on VL0-7 hardware); the layers available are `max_vls -
//! lash_start_vl`. Needing more is an error: OpenSM stops at the first pair
//! that does not fit ("Lane requirements exceed available lanes", ERR 4D02);
//! here the layering is finished without a limit so the error can say how
//! many layers the fabric needs.
//!
//! Checked against OpenSM 3.3.23 on ibsim (`tests/test_opensm_live.py` and
//! docs/routing.md): the same tables, layer counts and per-path SLs.
//!
//! Where this differs from OpenSM, and why:
//! * Balancing draws its random row and column with glibc's `rand()`, which
//!   OpenSM never seeds for lash, so a fresh OpenSM draws glibc's seed-1
//!   sequence. `GlibcRandom` reproduces that generator: `seed` 0 or 1 gives
//!   OpenSM's first routing pass exactly; another seed is `srand` of its low
//!   32 bits.
//!   (A second sweep of a running OpenSM continues the sequence.)
//! * OpenSM's rollback of a refused pair (`remove_temp_depend_for_sp`) drops
//!   the pair's new dependencies but does not take back the use counts it
//!   added to dependencies that were already there; when balancing later
//!   moves pairs out of a layer, such dependencies can outlive their last
//!   path and even point at freed channels. Here the counts are exact, so a
//!   layer's graph is exactly its paths' dependencies. This can only change
//!   a balancing decision about a layer that pairs have left, i.e. with three
//!   layers or more.
//! * OpenSM's balancing spins for ever when the fullest layer has only tried
//!   pairs left but trials to go; here balancing stops and a note says so.
//! * A fabric whose switches are not all connected is an error (OpenSM
//!   would follow an unset route entry). OpenSM's `do_mesh_analysis` (off by
//!   default) is not modelled.
//!
//! Options used: `max_vls` (1..=15, default 15), `lash_start_vl` (default 0,
//! below `max_vls`), `seed` (balancing's random draws, above).

use std::collections::VecDeque;

use ibnetsim_fabric::{Fabric, NodeId, PortNum};
use rustc_hash::FxHashMap;

use super::ucast::{switch_table_order, unroutable};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::labels::PathLabels;
use crate::lft::ForwardingTables;
use crate::lid::LidMap;
use crate::path_sl::PathSl;

/// Registry name.
pub const NAME: &str = "lash";

/// VLs available unless `max_vls` says otherwise (see the module docs).
pub const DEFAULT_MAX_VLS: u8 = 15;

/// OpenSM's `balance_limit`: balancing stops once the fullest layer holds
/// fewer than this many more ordered switch pairs than the emptiest.
const BALANCE_LIMIT: i64 = 6;

/// OpenSM's `MAX_INT`, the start of its search for the emptiest layer: a
/// layer holding this many ordered pairs or more is never found emptiest.
const OSM_MAX_INT: u32 = 9999;

/// No entry (OpenSM's `NONE`).
const NONE: u32 = u32::MAX;

/// The lash engine.
#[derive(Debug, Clone)]
pub struct Lash {
    /// VLs available, 1..=15.
    pub max_vls: u8,
    /// First VL (SL) used; layers are `start_vl ..= max_vls - 1`.
    pub start_vl: u8,
    /// Seed of glibc's `rand()` for balancing (0 and 1: OpenSM's own draws).
    pub seed: u64,
}

impl Default for Lash {
    fn default() -> Self {
        Lash { max_vls: DEFAULT_MAX_VLS, start_vl: 0, seed: 0 }
    }
}

/// Registry constructor.
pub(crate) fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    let max_vls = options.max_vls.unwrap_or(DEFAULT_MAX_VLS);
    if !(1..=15).contains(&max_vls) {
        return Err(SmError::option(
            "max_vls",
            format!("{max_vls} VLs is out of range; lash uses one data VL per layer, and IBA ports have 1..=15"),
        ));
    }
    let start_vl = options.lash_start_vl.unwrap_or(0);
    if start_vl >= max_vls {
        return Err(SmError::option(
            "lash_start_vl",
            format!(
                "start VL {start_vl} leaves no layer below the {max_vls} VLs available (max_vls); \
                 give a start VL below {max_vls} (OpenSM refuses this too: \"Start VL too high\", ERR 4D03)"
            ),
        ));
    }
    Ok(Box::new(Lash { max_vls, start_vl, seed: options.seed }))
}

impl RoutingEngine for Lash {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        Ok(self.route_plan(fabric, lids)?.0)
    }
}

/// glibc's `rand()` (`random_r` with its default 128-byte `TYPE_3` state),
/// the generator OpenSM's balancing draws from.
pub(crate) struct GlibcRandom {
    state: [u32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRandom {
    /// `srand(seed)`; seed 0 is taken as 1, as glibc does.
    pub(crate) fn new(seed: u32) -> Self {
        let seed = if seed == 0 { 1 } else { seed };
        let mut state = [0u32; 31];
        state[0] = seed;
        // glibc fills the state with the Park-Miller sequence (Schrage's method, 32-bit word).
        let mut word = i64::from(seed as i32);
        for s in state.iter_mut().skip(1) {
            let (hi, lo) = (word / 127_773, word % 127_773);
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *s = word as u32;
        }
        let mut r = GlibcRandom { state, front: 3, rear: 0 };
        // ... and discards the first 310 outputs.
        for _ in 0..310 {
            r.next();
        }
        r
    }

    /// The next `rand()`, 0..=2^31 − 1.
    pub(crate) fn next(&mut self) -> u32 {
        let v = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = v;
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        v >> 1
    }
}

/// The switches as LASH sees them.
struct Graph {
    /// LASH id → switch, in switch-table order.
    nodes: Vec<NodeId>,
    /// Node index → LASH id ([`NONE`] for CAs).
    id: Vec<u32>,
    /// Per switch, its cables to switches in port order: (peer id, port).
    links: Vec<Vec<(u32, PortNum)>>,
}

impl Graph {
    fn new(fabric: &Fabric) -> Self {
        let nodes = switch_table_order(fabric);
        let mut id = vec![NONE; fabric.num_nodes()];
        for (i, s) in nodes.iter().enumerate() {
            id[s.index()] = i as u32;
        }
        let links = nodes
            .iter()
            .map(|&s| {
                fabric
                    .node(s)
                    .connected_ports()
                    .filter_map(|(p, _)| {
                        let peer = fabric.peer(s, p)?;
                        let pid = id[peer.node.index()];
                        (pid != NONE).then_some((pid, p))
                    })
                    .collect()
            })
            .collect();
        Graph { nodes, id, links }
    }

    fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The switch a port's packets enter or leave the fabric at: the switch
    /// itself, or the switch a CA port is cabled to (OpenSM's
    /// `get_osm_switch_from_port`).
    fn switch_of(&self, fabric: &Fabric, node: NodeId, port: PortNum) -> Option<u32> {
        if fabric.node(node).kind.is_switch() {
            return Some(self.id[node.index()]);
        }
        let peer = fabric.peer(node, port)?;
        Some(self.id[peer.node.index()]).filter(|&i| i != NONE)
    }
}

/// Step 2 of the module docs: for each (switch, destination switch), the
/// index into the switch's `links` of the cable its route leaves by
/// ([`NONE`] on the diagonal). An unreachable switch is an error.
fn min_hop_routes(g: &Graph, fabric: &Fabric) -> Result<Vec<u32>, SmError> {
    let n = g.len();
    let mut out = vec![NONE; n * n];
    let mut parent = vec![NONE; n];
    let mut queue = VecDeque::with_capacity(n);
    for r in 0..n {
        parent.fill(NONE);
        parent[r] = r as u32;
        queue.push_back(r);
        let mut reached = 1;
        while let Some(s) = queue.pop_front() {
            for &(peer, _) in &g.links[s] {
                if parent[peer as usize] == NONE {
                    parent[peer as usize] = s as u32;
                    queue.push_back(peer as usize);
                    reached += 1;
                }
            }
        }
        if reached < n {
            let lost = (0..n).find(|&d| parent[d] == NONE).expect("an unreached switch");
            return Err(SmError::Unsupported {
                engine: NAME.into(),
                reason: format!(
                    "switch '{}' has no path to switch '{}': LASH routes between every pair of switches, so the switches must be connected",
                    fabric.node(g.nodes[r]).name,
                    fabric.node(g.nodes[lost]).name
                ),
            });
        }
        // Within one tree every (ancestor, descendant) pair is met once, so
        // walking up from each switch sets what OpenSM's recursion sets.
        for d in 0..n {
            let mut child = d;
            let mut a = parent[d] as usize;
            while child != r {
                let e = &mut out[a * n + d];
                if *e == NONE {
                    *e = g.links[a].iter().position(|&(p, _)| p as usize == child).expect("a tree edge is a cable") as u32;
                }
                child = a;
                a = parent[a] as usize;
            }
        }
    }
    Ok(out)
}

/// The switch-to-switch channels of the routes, and the routes as channels.
struct Channels {
    n: usize,
    /// Per channel, the switch it enters.
    to: Vec<u32>,
    /// `first[s * n + d]`: the channel a route from `s` to `d` starts on.
    first: Vec<u32>,
}

impl Channels {
    fn new(g: &Graph, out: &[u32]) -> Self {
        let n = g.len();
        let mut id: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let mut to = Vec::new();
        let mut first = vec![NONE; n * n];
        for s in 0..n {
            for d in 0..n {
                let link = out[s * n + d];
                if link == NONE {
                    continue;
                }
                let peer = g.links[s][link as usize].0;
                first[s * n + d] = *id.entry((s as u32, peer)).or_insert_with(|| {
                    to.push(peer);
                    to.len() as u32 - 1
                });
            }
        }
        Channels { n, to, first }
    }

    /// The channels of the route from switch `s` to switch `d`, into `buf`.
    fn path(&self, s: usize, d: usize, buf: &mut Vec<u32>) {
        buf.clear();
        let mut at = s;
        while at != d {
            let c = self.first[at * self.n + d];
            buf.push(c);
            at = self.to[c as usize] as usize;
        }
    }
}

/// One layer's channel dependency graph, with use counts so that a path can
/// be taken out again.
#[derive(Clone)]
struct Cdg {
    /// Per channel, its dependencies: (next channel, paths using it).
    deps: Vec<Vec<(u32, u32)>>,
}

impl Cdg {
    fn new(channels: usize) -> Self {
        Cdg { deps: vec![Vec::new(); channels] }
    }

    fn add(&mut self, path: &[u32]) {
        for w in path.windows(2) {
            let deps = &mut self.deps[w[0] as usize];
            match deps.iter_mut().find(|(to, _)| *to == w[1]) {
                Some(dep) => dep.1 += 1,
                None => deps.push((w[1], 1)),
            }
        }
    }

    fn remove(&mut self, path: &[u32]) {
        for w in path.windows(2) {
            let deps = &mut self.deps[w[0] as usize];
            let i = deps.iter().position(|(to, _)| *to == w[1]).expect("a dependency of a path in this layer");
            deps[i].1 -= 1;
            if deps[i].1 == 0 {
                deps.remove(i);
            }
        }
    }
}

/// Depth-first search state, reused between searches.
struct Dfs {
    /// Search number that last reached each channel.
    seen: Vec<u32>,
    on_path: Vec<bool>,
    epoch: u32,
    stack: Vec<(u32, usize)>,
}

impl Dfs {
    fn new(channels: usize) -> Self {
        Dfs { seen: vec![0; channels], on_path: vec![false; channels], epoch: 0, stack: Vec::new() }
    }

    /// Whether `cdg` has a cycle reachable from `starts` (OpenSM's
    /// `cycle_exists`, run from each start with the marks kept in between).
    fn cycle_from(&mut self, cdg: &Cdg, starts: [u32; 2]) -> bool {
        self.epoch += 1;
        let mut found = false;
        'starts: for s in starts {
            if self.seen[s as usize] == self.epoch {
                continue;
            }
            self.seen[s as usize] = self.epoch;
            self.on_path[s as usize] = true;
            self.stack.push((s, 0));
            while let Some(top) = self.stack.last_mut() {
                let (c, i) = *top;
                if let Some(&(next, _)) = cdg.deps[c as usize].get(i) {
                    top.1 += 1;
                    if self.on_path[next as usize] {
                        found = true;
                        break 'starts;
                    }
                    if self.seen[next as usize] != self.epoch {
                        self.seen[next as usize] = self.epoch;
                        self.on_path[next as usize] = true;
                        self.stack.push((next, 0));
                    }
                } else {
                    self.on_path[c as usize] = false;
                    self.stack.pop();
                }
            }
        }
        for (c, _) in self.stack.drain(..) {
            self.on_path[c as usize] = false;
        }
        found
    }
}

/// The layering of the switch pairs, for the notes and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Switches by LASH id (switch-table order).
    pub switches: Vec<NodeId>,
    /// Layers needed.
    pub needed: usize,
    /// Ordered switch pairs per layer after step 3 (OpenSM's `num_mst_in_lane`).
    pub before: Vec<u32>,
    /// The same after balancing.
    pub after: Vec<u32>,
    /// Layer of each ordered pair of LASH ids `s * n + d` (`u16::MAX` on the diagonal).
    pub layer: Vec<u16>,
    /// Balancing found only tried pairs in the fullest layer with trials to go.
    pub stalled: bool,
}

impl Plan {
    /// The layer of the pair of switches `(a, b)`, `None` for one switch.
    #[cfg(test)]
    pub fn layer_of(&self, a: NodeId, b: NodeId) -> Option<u16> {
        let n = self.switches.len();
        let i = self.switches.iter().position(|&s| s == a)?;
        let j = self.switches.iter().position(|&s| s == b)?;
        Some(self.layer[i * n + j]).filter(|&l| l != u16::MAX)
    }
}

/// Steps 3 and 4 of the module docs.
struct Layering<'a> {
    ch: &'a Channels,
    cdgs: Vec<Cdg>,
    layer: Vec<u16>,
    count: Vec<u32>,
    dfs: Dfs,
    p1: Vec<u32>,
    p2: Vec<u32>,
}

impl<'a> Layering<'a> {
    fn new(ch: &'a Channels) -> Self {
        let n = ch.n;
        Layering {
            ch,
            cdgs: Vec::new(),
            layer: vec![u16::MAX; n * n],
            count: Vec::new(),
            dfs: Dfs::new(ch.to.len()),
            p1: Vec::new(),
            p2: Vec::new(),
        }
    }

    /// Puts both routes between `s` and `d` in layer `l`; `false` (and
    /// nothing changed) if that would close a cycle there.
    fn try_add(&mut self, s: usize, d: usize, l: usize) -> bool {
        self.ch.path(s, d, &mut self.p1);
        self.ch.path(d, s, &mut self.p2);
        let cdg = &mut self.cdgs[l];
        cdg.add(&self.p1);
        cdg.add(&self.p2);
        if self.dfs.cycle_from(cdg, [self.p1[0], self.p2[0]]) {
            cdg.remove(&self.p1);
            cdg.remove(&self.p2);
            return false;
        }
        true
    }

    fn set_layer(&mut self, s: usize, d: usize, l: usize) {
        let n = self.ch.n;
        self.layer[s * n + d] = l as u16;
        self.layer[d * n + s] = l as u16;
    }

    /// Step 3: every pair in the first layer that takes it.
    fn assign(&mut self) -> usize {
        let n = self.ch.n;
        let channels = self.ch.to.len();
        self.cdgs.push(Cdg::new(channels));
        self.count.push(0);
        for s in 0..n {
            for d in s + 1..n {
                let l = match (0..self.cdgs.len()).find(|&l| self.try_add(s, d, l)) {
                    Some(l) => l,
                    None => {
                        // A new layer: two routes of one pair share no
                        // channel, and a minimal route none twice, so no cycle.
                        self.cdgs.push(Cdg::new(channels));
                        self.count.push(0);
                        let l = self.cdgs.len() - 1;
                        let ok = self.try_add(s, d, l);
                        debug_assert!(ok, "one pair alone closed a cycle");
                        l
                    }
                };
                self.count[l] += 2;
                self.set_layer(s, d, l);
            }
        }
        self.cdgs.len()
    }

    /// The first pair of layer `l` not yet tried, from row `s0` and column
    /// `d0` on, rows and columns wrapping (OpenSM's scan of `virtual_location`).
    fn find(&self, s0: usize, d0: usize, l: u16, tried: &[bool]) -> Option<(usize, usize)> {
        let n = self.ch.n;
        for r in 0..n {
            let s = (s0 + r) % n;
            for c in 0..n {
                let d = (d0 + c) % n;
                if self.layer[s * n + d] == l && !tried[s * n + d] {
                    return Some((s, d));
                }
            }
        }
        None
    }

    /// Step 4: moves pairs from the fullest layer to the emptiest. Returns
    /// whether it stalled where OpenSM would spin.
    fn balance(&mut self, rng: &mut GlibcRandom) -> bool {
        let n = self.ch.n;
        let layers = self.cdgs.len();
        if layers == 1 {
            return false;
        }
        // OpenSM starts from these, not from the counts.
        let (mut max, mut min) = (0usize, layers - 1);
        let mut trials = i64::from(self.count[max]);
        let mut tried = vec![false; n * n];
        loop {
            let s0 = rng.next() as usize % n;
            let d0 = rng.next() as usize % n;
            let Some((s, d)) = self.find(s0, d0, max as u16, &tried) else { return true };
            if self.try_add(s, d, min) {
                self.count[max] -= 2;
                self.count[min] += 2;
                self.ch.path(s, d, &mut self.p1);
                self.ch.path(d, s, &mut self.p2);
                self.cdgs[max].remove(&self.p1);
                self.cdgs[max].remove(&self.p2);
                self.set_layer(s, d, min);
            } else {
                tried[s * n + d] = true;
                tried[d * n + s] = true;
                trials -= 2;
            }
            if trials == 0 || i64::from(self.count[max]) - i64::from(self.count[min]) < BALANCE_LIMIT {
                return false;
            }
            let (old_max, old_min) = (max, min);
            let (mut least, mut most) = (OSM_MAX_INT, 0);
            for l in 0..layers {
                if self.count[l] < least {
                    least = self.count[l];
                    min = l;
                }
                if self.count[l] > most {
                    most = self.count[l];
                    max = l;
                }
            }
            // Marks only ever sit in the fullest layer; OpenSM clears them
            // (and restarts the trials) when either end changes.
            if old_min != min || old_max != max {
                trials = i64::from(self.count[max]);
                tried.fill(false);
            }
        }
    }
}

impl Lash {
    /// Routes and layers; also returns the layering for the notes and tests.
    pub(crate) fn route_plan(&self, fabric: &Fabric, lids: &LidMap) -> Result<(Routing, Plan), SmError> {
        let g = Graph::new(fabric);
        let n = g.len();
        let out = min_hop_routes(&g, fabric)?;
        let ch = Channels::new(&g, &out);
        let mut lay = Layering::new(&ch);
        let needed = if n > 1 {
            lay.assign()
        } else {
            // No switch pair to layer: everything stays within one switch.
            lay.count.push(0);
            1
        };
        let available = usize::from(self.max_vls - self.start_vl);
        if needed > available {
            return Err(SmError::Unsupported {
                engine: NAME.into(),
                reason: format!(
                    "its switch-to-switch paths ({n} switches) need {needed} layers (one VL each) to be free of credit loops, \
                     and only {available} are available (max_vls {}, lash_start_vl {}): allow more with the max_vls option \
                     (--max-vls, at most 15) or a lower lash_start_vl, or fall back with a chain such as 'lash,updn'",
                    self.max_vls, self.start_vl
                ),
            });
        }
        let before = lay.count.clone();
        let mut rng = GlibcRandom::new(self.seed as u32);
        let stalled = if n > 1 { lay.balance(&mut rng) } else { false };

        // Forwarding tables (OpenSM's `populate_fwd_tbls`).
        let mut tables = ForwardingTables::new(fabric, lids.top_lid());
        for p in lids.ports() {
            let Some(t) = g.switch_of(fabric, p.end.node, p.end.port) else {
                let sw = g.nodes.first().copied().unwrap_or(p.end.node);
                return Err(unroutable(fabric, sw, p.base, p.end));
            };
            let local = if fabric.node(p.end.node).kind.is_switch() {
                0
            } else {
                fabric.peer(p.end.node, p.end.port).expect("cabled to its switch").port
            };
            for (s, &node) in g.nodes.iter().enumerate() {
                let port = if s as u32 == t { local } else { g.links[s][out[s * n + t as usize] as usize].1 };
                for lid in p.lids() {
                    tables.set(node, lid, port);
                }
            }
        }

        // Per-path SLs (OpenSM's `get_lash_sl`).
        let mut path_sl = PathSl::table(lids);
        for src in lids.ports() {
            let s = g.switch_of(fabric, src.end.node, src.end.port).expect("every port was routed");
            for dst in lids.ports() {
                let t = g.switch_of(fabric, dst.end.node, dst.end.port).expect("every port was routed");
                let layer = if s == t { 0 } else { lay.layer[s as usize * n + t as usize] as u8 };
                for dlid in dst.lids() {
                    path_sl.set(src.base, dlid, self.start_vl + layer);
                }
            }
        }

        let after = lay.count.clone();
        let last = self.start_vl as usize + needed - 1;
        let sls = if needed == 1 { format!("SL {}", self.start_vl) } else { format!("SLs {}-{last}", self.start_vl) };
        let mut notes = vec![format!(
            "lash: {needed} layer(s) needed of {available} available (max_vls {}, lash_start_vl {}), on {sls}; \
             ordered switch pairs per layer {before:?}, after balancing {after:?}",
            self.max_vls, self.start_vl
        )];
        if stalled {
            notes.push(
                "lash: balancing stopped with only tried pairs left in the fullest layer (OpenSM would not return here)".into(),
            );
        }
        notes.push(format!(
            "lash: path SLs are VLs: map SL i to VL i on {} or more data VLs (`ibnetsim check --vls {}`), or layers merge",
            last + 1,
            last + 1
        ));
        let plan = Plan { switches: g.nodes.clone(), needed, before, after, layer: lay.layer, stalled };
        let routing = Routing { tables, notes, labels: PathLabels::default(), path_sl, not_in_dump: Vec::new(), sl2vl: None };
        Ok((routing, plan))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::CdgReport;
    use crate::hops::SwitchHops;
    use crate::lid::Lid;
    use crate::routing::minhop::MinHop;
    use crate::routing::testfab::{self, check_minimal, check_routes, sls_used, RouteSls};
    use crate::routing::build_engine;
    use ibnetsim_fabric::gen::{FatTreeParams, IrregularParams, MeshParams, RingParams};
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    fn engine(max_vls: u8, start_vl: u8) -> Lash {
        Lash { max_vls, start_vl, seed: 0 }
    }

    /// The credit-loop check with SL `i` on VL `i`, each route on the SL
    /// `r` gave it (`None`: every route on SL 0), CA-to-CA routes or, with
    /// `switch_lids`, management routes from and to switches too.
    fn cdg(f: &Fabric, lids: &LidMap, r: &Routing, per_path: bool, switch_lids: bool) -> CdgReport {
        testfab::credit_loops(f, lids, r, if per_path { RouteSls::Given } else { RouteSls::Zero }, switch_lids)
    }

    /// Complete, loop-free, minimal, and free of credit loops with the
    /// engine's SLs, management routes included.
    fn assert_sound(name: &str, f: &Fabric, lids: &LidMap, r: &Routing) {
        check_routes(f, lids, &r.tables).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_minimal(f, lids, &SwitchHops::compute(f), &r.tables).unwrap_or_else(|e| panic!("{name}: {e}"));
        for switch_lids in [false, true] {
            let report = cdg(f, lids, r, true, switch_lids);
            assert!(!report.has_cycle(), "{name} (switch LIDs {switch_lids}): {:?}", report.cycle);
        }
    }

    #[test]
    fn glibc_rand_sequence() {
        // glibc: the first rand() values of an unseeded program (srand(1)).
        let mut r = GlibcRandom::new(0);
        let first: Vec<u32> = (0..5).map(|_| r.next()).collect();
        assert_eq!(first, vec![1804289383, 846930886, 1681692777, 1714636915, 1957747793]);
        let mut r = GlibcRandom::new(1);
        assert_eq!(r.next(), 1804289383);
        // srand(42) in glibc starts 71876166, 708592740.
        let mut r = GlibcRandom::new(42);
        assert_eq!((r.next(), r.next()), (71876166, 708592740));
    }

    #[test]
    fn registered_with_options_checked() {
        assert_eq!(build_engine(NAME, &RoutingOptions::default()).unwrap().name(), NAME);
        for bad in [0, 16] {
            let o = RoutingOptions { max_vls: Some(bad), ..RoutingOptions::default() };
            let e = build_engine(NAME, &o).err().unwrap().to_string();
            assert!(e.starts_with("invalid option 'max_vls'"), "{e}");
        }
        let o = RoutingOptions { max_vls: Some(4), lash_start_vl: Some(4), ..RoutingOptions::default() };
        let e = build_engine(NAME, &o).err().unwrap().to_string();
        assert_eq!(
            e,
            "invalid option 'lash_start_vl': start VL 4 leaves no layer below the 4 VLs available (max_vls); \
             give a start VL below 4 (OpenSM refuses this too: \"Start VL too high\", ERR 4D03)"
        );
    }

    #[test]
    fn ring4_by_hand() {
        // testfab::ring4: s0..s3 (LASH ids 0..3, GUID order), port 1 to
        // s_i+1, port 2 to s_i-1, h_i on port 3; LIDs h0..h3 = 1..4, s0..s3 = 5..8.
        // Paths (osm_ucast_lash.c, shortest_path and
        // generate_routing_func_for_mst): the tree from s0 adopts s1 then s3
        // (cable order), s1 adopts s2, so s0 → s2 goes by s1; the tree from s1
        // adopts s2 and s0, s2 adopts s3: s1 → s3 by s2; likewise s2 → s0 by
        // s3 and s3 → s1 by s0. Every antipodal route turns clockwise.
        let f = testfab::ring4();
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, plan) = engine(15, 0).route_plan(&f, &lids).unwrap();
        let row = |s: &str| r.tables.lft(f.node_by_name(s).unwrap()).unwrap().entries()[1..=8].to_vec();
        assert_eq!(row("s0"), vec![3, 1, 1, 2, 0, 1, 1, 2]);
        assert_eq!(row("s1"), vec![2, 3, 1, 1, 2, 0, 1, 1]);
        assert_eq!(row("s2"), vec![1, 2, 3, 1, 1, 2, 0, 1]);
        assert_eq!(row("s3"), vec![1, 1, 2, 3, 1, 1, 2, 0]);
        // Layers (lash_core), pairs in order. (0,1), (0,2), (0,3), (1,2) go
        // to layer 0, whose dependencies are then c01→c12 and c23→c30
        // (c_ab: channel s_a → s_b). (1,3) adds c12→c23 and c30→c01, closing
        // c01→c12→c23→c30→c01: layer 1. (2,3) is one hop each way: layer 0.
        // Ordered pairs: layer 0 10, layer 1 2.
        assert_eq!(plan.needed, 2);
        assert_eq!(plan.before, vec![10, 2]);
        // Balancing (balance_virtual_lanes): fullest layer 0, emptiest 1.
        // glibc's first draws 1804289383 % 4 = 3 and 846930886 % 4 = 2 pick
        // (s3, s2), which is in layer 0 and single-hop: it moves to layer 1.
        // Now 8 - 4 < 6: balancing stops.
        assert_eq!(plan.after, vec![8, 4]);
        let s = |i: usize| f.node_by_name(&format!("s{i}")).unwrap();
        let layers: Vec<(usize, usize, u16)> =
            (0..4).flat_map(|a| (a + 1..4).map(move |b| (a, b))).map(|(a, b)| (a, b, plan.layer_of(s(a), s(b)).unwrap())).collect();
        assert_eq!(layers, vec![(0, 1, 0), (0, 2, 0), (0, 3, 0), (1, 2, 0), (1, 3, 1), (2, 3, 1)]);
        // get_lash_sl: the switches' pair layer, for CA and switch LIDs alike; 0 within a switch.
        let sl_row = |src: Lid| (1..=8).map(|d| r.path_sl.get(src, d).unwrap()).collect::<Vec<_>>();
        assert_eq!(sl_row(1), vec![0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(sl_row(2), vec![0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(sl_row(3), vec![0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(sl_row(8), vec![0, 1, 1, 0, 0, 1, 1, 0]);
        assert_eq!(
            r.notes[0],
            "lash: 2 layer(s) needed of 15 available (max_vls 15, lash_start_vl 0), on SLs 0-1; \
             ordered switch pairs per layer [10, 2], after balancing [8, 4]"
        );
        assert_sound("ring4", &f, &lids, &r);
        // On one SL the same routes close the clockwise credit loop.
        assert!(cdg(&f, &lids, &r, false, false).has_cycle());
        // lash_start_vl shifts every SL.
        let (r3, _) = engine(5, 3).route_plan(&f, &lids).unwrap();
        assert_eq!(sls_used(&lids, &r3), vec![3, 4]);
        assert_eq!(r3.tables, r.tables);
        // Another seed draws other pairs: still two layers, still sound.
        let (r7, p7) = Lash { seed: 7, ..engine(15, 0) }.route_plan(&f, &lids).unwrap();
        assert_eq!((p7.needed, p7.before.clone()), (2, vec![10, 2]));
        assert_sound("ring4 seed 7", &f, &lids, &r7);
    }

    #[test]
    fn too_few_layers_is_an_error_naming_the_layers_needed() {
        let f = testfab::ring4();
        let lids = LidMap::assign(&f, 0).unwrap();
        for (e, opts) in [(engine(1, 0), "max_vls 1, lash_start_vl 0"), (engine(4, 3), "max_vls 4, lash_start_vl 3")] {
            let err = e.route(&f, &lids).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "routing engine 'lash' cannot route this fabric: its switch-to-switch paths (4 switches) need 2 layers \
                     (one VL each) to be free of credit loops, and only 1 are available ({opts}): allow more with the \
                     max_vls option (--max-vls, at most 15) or a lower lash_start_vl, or fall back with a chain such as 'lash,updn'"
                )
            );
        }
        // The count goes on past the limit.
        let t = MeshParams::new(&[4, 4], true, 2).build().unwrap();
        let tl = LidMap::assign(&t, 0).unwrap();
        let err = engine(1, 0).route(&t, &tl).unwrap_err().to_string();
        assert!(err.contains("(16 switches) need 2 layers (one VL each) to be free of credit loops, and only 1 are available"), "{err}");
        // A chain falls back, as with dfsssp.
        let o = RoutingOptions { max_vls: Some(1), ..RoutingOptions::default() };
        let chain = build_engine("lash,minhop", &o).unwrap();
        let r = chain.route(&f, &lids).unwrap();
        assert_eq!(chain.name(), "minhop");
        assert!(r.path_sl.is_none());
        assert!(r.notes[0].starts_with("routing chain 'lash,minhop': routed with 'minhop' after 'lash' failed: routing engine 'lash' cannot route this fabric: its switch-to-switch paths (4 switches) need 2 layers"), "{}", r.notes[0]);
        let chain = build_engine("lash,minhop", &RoutingOptions::default()).unwrap();
        assert!(!chain.route(&f, &lids).unwrap().path_sl.is_none());
        assert_eq!(chain.name(), "lash");
    }

    /// A tree of switches: root r; r0, r1 below it; r00, r01, r10, r11 below
    /// those, two hosts on each of the four bottom switches.
    fn switch_tree() -> Fabric {
        let mut f = Fabric::new();
        let r = f.add_switch("r", 8).unwrap();
        for i in 0..2u32 {
            let mid = f.add_switch(format!("r{i}"), 8).unwrap();
            f.connect(r, i + 1, mid, 1, LinkSpec::default()).unwrap();
            for j in 0..2u32 {
                let leaf = f.add_switch(format!("r{i}{j}"), 8).unwrap();
                f.connect(mid, j + 2, leaf, 1, LinkSpec::default()).unwrap();
                for h in 0..2u32 {
                    let host = f.add_hca(format!("h{i}{j}{h}"), 1).unwrap();
                    f.connect(leaf, h + 2, host, 1, LinkSpec::default()).unwrap();
                }
            }
        }
        f
    }

    #[test]
    fn one_switch_and_parallel_cables() {
        // One switch: every route stays on it, SL lash_start_vl.
        let mut f = Fabric::new();
        let sw = f.add_switch("sw", 4).unwrap();
        for i in 0..2u32 {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, i + 1, h, 1, LinkSpec::default()).unwrap();
        }
        let lids = LidMap::assign(&f, 0).unwrap();
        let (r, plan) = engine(4, 2).route_plan(&f, &lids).unwrap();
        assert_eq!((plan.needed, plan.before.clone()), (1, vec![0]));
        assert_eq!(sls_used(&lids, &r), vec![2]);
        check_routes(&f, &lids, &r.tables).unwrap();
        // Two switches with three parallel cables: OpenSM's lash (without
        // mesh analysis) takes the lowest-numbered one for every LID.
        let f = testfab::two_switch_parallel(3, 2);
        let lids = LidMap::assign(&f, 1).unwrap();
        let (r, plan) = engine(15, 0).route_plan(&f, &lids).unwrap();
        assert_eq!((plan.needed, plan.before.clone()), (1, vec![2]));
        let a = f.node_by_name("a").unwrap();
        for p in ["b0", "b1"] {
            let h = f.node_by_name(p).unwrap();
            for lid in lids.of_port(h, 1).unwrap().lids() {
                assert_eq!(r.tables.get(a, lid), Some(1), "{p} LID {lid}");
            }
        }
        assert_sound("two switches", &f, &lids, &r);
    }

    #[test]
    fn switches_that_are_not_all_connected_are_named() {
        // a – b cabled, c on its own, a host on each. The first tree, grown
        // from a (the first in switch-table order), reaches b but not c.
        let mut f = Fabric::new();
        let a = f.add_switch("a", 4).unwrap();
        let b = f.add_switch("b", 4).unwrap();
        let c = f.add_switch("c", 4).unwrap();
        f.connect(a, 1, b, 1, LinkSpec::default()).unwrap();
        for (i, s) in [a, b, c].into_iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(h, 1, s, 4, LinkSpec::default()).unwrap();
        }
        let lids = LidMap::assign(&f, 0).unwrap();
        let e = engine(15, 0).route(&f, &lids).unwrap_err().to_string();
        assert!(e.contains("switch 'a' has no path to switch 'c'"), "{e}");
    }

    #[test]
    fn trees_need_one_layer() {
        // A tree of switches has no cycle to close; neither has the 4-ary
        // 2-tree's layering. The 2-ary 3-tree needs a second layer: LASH
        // layers every switch pair, and the minimal paths between switches
        // of the upper ranks go down and up again.
        for (name, f, needed) in [
            ("switch tree", switch_tree(), 1),
            ("4-ary 2-tree", FatTreeParams::new(4, 2).build().unwrap(), 1),
            ("2-ary 3-tree", FatTreeParams::new(2, 3).build().unwrap(), 2),
        ] {
            let lids = LidMap::assign(&f, 0).unwrap();
            let (r, plan) = engine(15, 0).route_plan(&f, &lids).unwrap();
            let n = f.switches().count() as u32;
            assert_eq!(plan.needed, needed, "{name}");
            if needed == 1 {
                assert_eq!((plan.before.clone(), plan.after.clone()), (vec![n * (n - 1)], vec![n * (n - 1)]), "{name}");
                assert_eq!(sls_used(&lids, &r), vec![0], "{name}");
            } else {
                assert_eq!((plan.before.clone(), plan.after.clone()), (vec![118, 14], vec![68, 64]), "{name}");
            }
            assert_sound(name, &f, &lids, &r);
        }
    }

    #[test]
    fn rings_tori_and_irregular_fabrics_where_minhop_deadlocks() {
        // Layers needed, ordered switch pairs per layer before and after
        // balancing (LMC 0). The 3x3x3 torus needs one: its rings have no
        // two-hop minimal path, and the breadth-first trees happen to turn
        // in one consistent order. minhop closes a credit loop on every one.
        let ring = |n| RingParams { switches: n, hosts_per_switch: 1, link: LinkSpec::default() }.build().unwrap();
        let cases: Vec<(String, Fabric)> = vec![
            ("ring 6".into(), ring(6)),
            ("ring 8".into(), ring(8)),
            ("torus 4x4".into(), MeshParams::new(&[4, 4], true, 2).build().unwrap()),
            ("torus 3x3x3".into(), MeshParams::new(&[3, 3, 3], true, 1).build().unwrap()),
        ]
        .into_iter()
        .chain((0..4).map(|seed| {
            (format!("irregular 16/4/4 seed {seed}"), IrregularParams::with_links_per_switch(16, 8, 4, 4, seed).build().unwrap())
        }))
        .collect();
        let mut seen = Vec::new();
        for (name, f) in &cases {
            for lmc in [0, 1] {
                let lids = LidMap::assign(f, lmc).unwrap();
                let (r, plan) = engine(15, 0).route_plan(f, &lids).unwrap();
                assert_sound(name, f, &lids, &r);
                assert_eq!(sls_used(&lids, &r).len(), plan.needed, "{name}");
                assert_eq!(plan.after.iter().sum::<u32>(), plan.before.iter().sum::<u32>(), "{name}");
                assert!(!plan.stalled, "{name}");
                let minhop = MinHop.route(f, &lids).unwrap();
                let minhop = Routing::unicast(minhop.tables, Vec::new());
                assert!(cdg(f, &lids, &minhop, false, false).has_cycle(), "{name}: minhop has no credit loop");
                if lmc == 0 {
                    seen.push((name.clone(), plan.needed, plan.before, plan.after));
                }
            }
        }
        let got: Vec<String> = seen.iter().map(|(n, l, b, a)| format!("{n}: {l} {b:?} {a:?}")).collect();
        assert_eq!(
            got,
            [
                "ring 6: 3 [24, 4, 2] [12, 10, 8]",
                "ring 8: 4 [44, 8, 2, 2] [18, 14, 12, 12]",
                "torus 4x4: 2 [192, 48] [122, 118]",
                "torus 3x3x3: 1 [702] [702]",
                "irregular 16/4/4 seed 0: 3 [182, 56, 2] [82, 80, 78]",
                "irregular 16/4/4 seed 1: 2 [190, 50] [122, 118]",
                "irregular 16/4/4 seed 2: 2 [196, 44] [122, 118]",
                "irregular 16/4/4 seed 3: 2 [196, 44] [122, 118]",
            ]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn random_fabrics_are_complete_minimal_and_credit_loop_free(
            seed in any::<u64>(), switches in 1usize..12, extra in 0usize..14, lmc in 0u8..2, rseed in 0u64..4,
        ) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            let lids = LidMap::assign(&f, lmc).unwrap();
            let (r, plan) = Lash { seed: rseed, ..engine(15, 0) }.route_plan(&f, &lids).unwrap();
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            check_minimal(&f, &lids, &SwitchHops::compute(&f), &r.tables).map_err(TestCaseError::fail)?;
            for switch_lids in [false, true] {
                let report = cdg(&f, &lids, &r, true, switch_lids);
                prop_assert!(!report.has_cycle(), "{:?} {:?}", report.cycle, plan);
            }
        }

        #[test]
        fn irregular_generator_fabrics_are_credit_loop_free(seed in any::<u64>(), switches in 4u32..20, links in 3u32..6) {
            let built = IrregularParams::with_links_per_switch(switches, 8, links.min(switches - 1), 2, seed).build();
            prop_assume!(built.is_ok());
            let f = built.unwrap();
            let lids = LidMap::assign(&f, 0).unwrap();
            let r = engine(15, 0).route(&f, &lids).unwrap();
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            let report = cdg(&f, &lids, &r, true, true);
            prop_assert!(!report.has_cycle(), "{:?}", report.cycle);
        }
    }
}
