//! Reachability, forwarding loops and route lengths of every CA-to-CA route,
//! and reachability of switch LIDs from every switch.
//!
//! A route is counted per (source CA port, destination LID) pair; it is
//! delivered, dropped (no LFT entry, an uncabled output port, or delivered to
//! a port that does not own the LID) or caught in a forwarding loop. Lengths
//! are in switch hops: the switches a delivered packet passes, so two hosts
//! on one switch are 1 hop apart and two cabled straight together 0. The
//! minimum is a BFS over the switch graph (OpenSM's min-hop tables count the
//! same thing), and a route's stretch is its length over that minimum.

use ibnetsim_fabric::{LinkEnd, NodeId};
use serde::Serialize;

use super::trace::{port_name, trace_route, Attach, DestTree, Fate, Net, RouteEnd, NONE};
use crate::lid::Lid;

/// Why a route does not deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DefectKind {
    /// A switch on the way has no LFT entry (OpenSM's `NO_PATH`, 255).
    NoPath,
    /// An LFT entry (or the source) names a port without a cable.
    Uncabled,
    /// The packet arrives at a port that does not own the LID.
    WrongNode,
    /// The packet comes back to a switch it has passed.
    Loop,
    /// A switch on the way has an entry the loaded dump leaves out
    /// ([`crate::routing::Routing::not_in_dump`]): the route is unknown, not
    /// known to fail.
    NotInDump,
}

impl DefectKind {
    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            DefectKind::NoPath => "no LFT entry",
            DefectKind::Uncabled => "uncabled port",
            DefectKind::WrongNode => "wrong node",
            DefectKind::Loop => "forwarding loop",
            DefectKind::NotInDump => "LFT entry not in the dump",
        }
    }

    fn of(end: &RouteEnd) -> Option<Self> {
        match end {
            RouteEnd::Delivered(_) => None,
            RouteEnd::NoPath(_) => Some(DefectKind::NoPath),
            RouteEnd::Uncabled(_) => Some(DefectKind::Uncabled),
            RouteEnd::WrongNode(_) => Some(DefectKind::WrongNode),
            RouteEnd::Loop(_) => Some(DefectKind::Loop),
        }
    }
}

/// One concrete route, named for people.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteExample {
    /// What is wrong with it, for a defect example.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<DefectKind>,
    /// Source port (`name/port`; a switch is `name/0`).
    pub src: String,
    /// Owner of the destination LID (`name/port`).
    pub dst: String,
    /// Destination LID.
    pub dlid: Lid,
    /// The hops, as [`super::Route::describe`] prints them.
    pub route: String,
}

impl RouteExample {
    fn new(net: &Net<'_>, src: LinkEnd, dlid: Lid) -> (Self, RouteEnd) {
        let r = trace_route(net.fabric, net.lids, net.tables, src, dlid);
        let dst = net.lids.owner(dlid).map(|p| port_name(net.fabric, p.end)).unwrap_or_else(|| "?".into());
        let ex = RouteExample {
            kind: DefectKind::of(&r.end),
            src: port_name(net.fabric, src),
            dst,
            dlid,
            route: r.describe(net.fabric),
        };
        (ex, r.end)
    }
}

/// Delivery counts over a set of (source, destination LID) pairs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Reachability {
    /// Destination LIDs examined.
    pub destination_lids: u64,
    /// Pairs examined.
    pub pairs: u64,
    /// Pairs whose packets arrive at the LID's owner.
    pub reachable_pairs: u64,
    /// Pairs dropped on the way: `no_path + uncabled + wrong_node` (loops apart).
    pub unreachable_pairs: u64,
    /// Dropped at a switch without an LFT entry.
    pub no_path_pairs: u64,
    /// Sent out of an uncabled port.
    pub uncabled_pairs: u64,
    /// Delivered to a port that does not own the LID.
    pub wrong_node_pairs: u64,
    /// Caught in a forwarding loop.
    pub loop_pairs: u64,
    /// Reaching a switch whose entry for the LID the loaded dump leaves out:
    /// neither delivered nor unreachable, unknown.
    pub not_in_dump_pairs: u64,
    /// Destination LIDs whose tables hold a forwarding loop anywhere, entered
    /// by a pair or not.
    pub lids_with_loops: u64,
    /// The first pair found of each defect kind.
    pub examples: Vec<RouteExample>,
}

impl Reachability {
    /// Whether every pair is delivered and no table loops.
    pub fn is_clean(&self) -> bool {
        self.reachable_pairs == self.pairs && self.lids_with_loops == 0
    }

    fn add(&mut self, kind: Option<DefectKind>, count: u64, net: &Net<'_>, src: impl FnOnce() -> LinkEnd, dlid: Lid) {
        self.pairs += count;
        let Some(kind) = kind else {
            self.reachable_pairs += count;
            return;
        };
        *match kind {
            DefectKind::NoPath => &mut self.no_path_pairs,
            DefectKind::Uncabled => &mut self.uncabled_pairs,
            DefectKind::WrongNode => &mut self.wrong_node_pairs,
            DefectKind::Loop => &mut self.loop_pairs,
            DefectKind::NotInDump => &mut self.not_in_dump_pairs,
        } += count;
        if !matches!(kind, DefectKind::Loop | DefectKind::NotInDump) {
            self.unreachable_pairs += count;
        }
        if !self.examples.iter().any(|e| e.kind == Some(kind)) {
            let (mut ex, end) = RouteExample::new(net, src(), dlid);
            let traced = match (DefectKind::of(&end), kind) {
                (Some(DefectKind::NoPath), DefectKind::NotInDump) => Some(kind),
                (k, _) => k,
            };
            debug_assert_eq!(traced, Some(kind), "tree and trace disagree: {}", ex.route);
            // The trace sees a missing entry; the dump says why it is missing.
            ex.kind = Some(kind);
            self.examples.push(ex);
        }
    }
}

/// `unlisted`: the sorted `(switch, LID)` entries a dump leaves out.
fn kind_of(f: Fate, net: &Net<'_>, d: Lid, unlisted: &[(NodeId, Lid)]) -> Option<DefectKind> {
    match f {
        Fate::Reached(_) => None,
        Fate::NoPath(s) if unlisted.binary_search(&(net.switches[s as usize], d)).is_ok() => Some(DefectKind::NotInDump),
        Fate::NoPath(_) => Some(DefectKind::NoPath),
        Fate::Uncabled(_) => Some(DefectKind::Uncabled),
        Fate::Wrong(_) => Some(DefectKind::WrongNode),
        Fate::Loop(_) => Some(DefectKind::Loop),
    }
}

/// A delivered route longer than the shortest one, with both lengths.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StretchExample {
    /// The route.
    #[serde(flatten)]
    pub route: RouteExample,
    /// Its switch hops.
    pub hops: u32,
    /// The fewest switch hops between the two ports.
    pub min_hops: u32,
}

/// Reachability and lengths of the CA-to-CA routes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PathReport {
    /// Delivery counts.
    #[serde(flatten)]
    pub reach: Reachability,
    /// Shortest delivered route, in switch hops (0 when nothing is delivered).
    pub min_hops: u32,
    /// Mean over delivered pairs.
    pub mean_hops: f64,
    /// Longest delivered route.
    pub max_hops: u32,
    /// `hop_histogram[h]`: delivered pairs of `h` switch hops.
    pub hop_histogram: Vec<u64>,
    /// Delivered pairs longer than the shortest path between their ports.
    pub non_minimal_pairs: u64,
    /// `non_minimal_pairs` over delivered pairs.
    pub non_minimal_fraction: f64,
    /// Mean of (route hops / minimum hops) over delivered pairs.
    pub mean_stretch: f64,
    /// Largest stretch.
    pub max_stretch: f64,
    /// A pair with the largest stretch, when some route is not minimal.
    pub worst_stretch: Option<StretchExample>,
}

/// Hop distances between switches (dense indices), by BFS.
pub(crate) struct SwitchGraph {
    start: Vec<u32>,
    adj: Vec<u32>,
}

impl SwitchGraph {
    pub fn new(net: &Net<'_>) -> Self {
        let mut start = Vec::with_capacity(net.switches.len() + 1);
        let mut adj = Vec::new();
        start.push(0);
        for &s in &net.switches {
            let first = adj.len();
            for (_, peer) in net.fabric.switch_neighbors(s) {
                let t = net.sw_index[peer.node.index()];
                if !adj[first..].contains(&t) {
                    adj.push(t);
                }
            }
            start.push(adj.len() as u32);
        }
        SwitchGraph { start, adj }
    }

    /// Links from every switch to `root`, `u16::MAX` where disconnected.
    pub fn distances_to(&self, root: u32, dist: &mut Vec<u16>, queue: &mut Vec<u32>) {
        dist.clear();
        dist.resize(self.start.len() - 1, u16::MAX);
        queue.clear();
        dist[root as usize] = 0;
        queue.push(root);
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head];
            head += 1;
            let du = dist[u as usize];
            for &v in &self.adj[self.start[u as usize] as usize..self.start[u as usize + 1] as usize] {
                if dist[v as usize] == u16::MAX {
                    dist[v as usize] = du + 1;
                    queue.push(v);
                }
            }
        }
    }
}

/// Accumulates hop statistics.
#[derive(Default)]
struct Lengths {
    hist: Vec<u64>,
    sum_hops: u64,
    delivered: u64,
    non_minimal: u64,
    stretch_sum: f64,
    worst: Option<(f64, LinkEnd, Lid, u32, u32)>,
}

impl Lengths {
    fn add(&mut self, hops: u32, min: u32, count: u64, src: impl FnOnce() -> LinkEnd, dlid: Lid) {
        if self.hist.len() <= hops as usize {
            self.hist.resize(hops as usize + 1, 0);
        }
        self.hist[hops as usize] += count;
        self.sum_hops += hops as u64 * count;
        self.delivered += count;
        let stretch = if min == 0 { 1.0 } else { hops as f64 / min as f64 };
        self.stretch_sum += stretch * count as f64;
        if hops > min {
            self.non_minimal += count;
            let worse = match self.worst {
                None => true,
                Some(w) => stretch > w.0,
            };
            if worse {
                self.worst = Some((stretch, src(), dlid, hops, min));
            }
        }
    }

    fn finish(self, net: &Net<'_>, reach: Reachability) -> PathReport {
        let n = self.delivered.max(1) as f64;
        PathReport {
            reach,
            min_hops: self.hist.iter().position(|&c| c > 0).unwrap_or(0) as u32,
            mean_hops: self.sum_hops as f64 / n,
            max_hops: self.hist.len().saturating_sub(1) as u32,
            non_minimal_pairs: self.non_minimal,
            non_minimal_fraction: self.non_minimal as f64 / n,
            mean_stretch: if self.delivered == 0 { 0.0 } else { self.stretch_sum / n },
            max_stretch: self.worst.map_or(if self.delivered == 0 { 0.0 } else { 1.0 }, |w| w.0),
            worst_stretch: self.worst.map(|(_, src, dlid, hops, min_hops)| StretchExample {
                route: RouteExample::new(net, src, dlid).0,
                hops,
                min_hops,
            }),
            hop_histogram: self.hist,
        }
    }
}

/// Routes from every CA port to every LID in `dlids` (CA LIDs; others skipped).
pub(crate) fn ca_paths(net: &Net<'_>, dlids: &[Lid], unlisted: &[(NodeId, Lid)]) -> PathReport {
    let graph = SwitchGraph::new(net);
    let mut tree = DestTree::new(net.switches.len());
    let mut reach = Reachability::default();
    let mut len = Lengths::default();
    // Destinations grouped by the switch they hang off, so one BFS serves the group.
    let mut order: Vec<(u32, Lid, u32)> = dlids
        .iter()
        .filter_map(|&d| {
            let e = net.endpoint_of(d)?;
            let t = match net.endpoints[e as usize].attach {
                Attach::Switch(t) => t,
                _ => NONE,
            };
            Some((t, d, e))
        })
        .collect();
    order.sort_unstable();
    let (mut dist, mut queue, mut dist_root) = (Vec::new(), Vec::new(), NONE);
    for &(t, d, dst) in &order {
        if t != dist_root && t != NONE {
            graph.distances_to(t, &mut dist, &mut queue);
            dist_root = t;
        }
        tree.build(net, d);
        reach.destination_lids += 1;
        reach.lids_with_loops += u64::from(tree.has_loop);
        for s in 0..net.switches.len() as u32 {
            let at = net.attached(s);
            let count = at.len() as u64 - u64::from(t == s);
            if count == 0 {
                continue;
            }
            let fate = tree.fate[s as usize];
            let first_src = || {
                let e = *at.iter().find(|&&e| e != dst).expect("a source other than the destination");
                net.endpoints[e as usize].end
            };
            reach.add(kind_of(fate, net, d, unlisted), count, net, first_src, d);
            if let Fate::Reached(h) = fate {
                // A switch delivers only to a port cabled to a switch, which
                // the BFS from that switch reaches; the fallback never applies.
                let min = match dist.get(s as usize) {
                    Some(&m) if t != NONE && m != u16::MAX => m as u32 + 1,
                    _ => h as u32,
                };
                len.add(h as u32, min, count, first_src, d);
            }
        }
        let dst_end = net.endpoints[dst as usize].end;
        for &i in &net.direct {
            let e = &net.endpoints[i as usize];
            if i == dst {
                continue;
            }
            let kind = match e.attach {
                Attach::Switch(_) => continue,
                Attach::Uncabled => Some(DefectKind::Uncabled),
                Attach::Ca(peer) if peer == dst_end => None,
                Attach::Ca(_) => Some(DefectKind::WrongNode),
            };
            reach.add(kind, 1, net, || e.end, d);
            if kind.is_none() {
                len.add(0, 0, 1, || e.end, d);
            }
        }
    }
    len.finish(net, reach)
}

/// Routes from every switch to every other switch's LID.
pub(crate) fn switch_paths(net: &Net<'_>, unlisted: &[(NodeId, Lid)]) -> Reachability {
    let mut tree = DestTree::new(net.switches.len());
    let mut reach = Reachability::default();
    for (t, d) in net.switch_lids() {
        tree.build(net, d);
        reach.destination_lids += 1;
        reach.lids_with_loops += u64::from(tree.has_loop);
        for s in 0..net.switches.len() as u32 {
            if s != t {
                let src = || LinkEnd { node: net.switches[s as usize], port: 0 };
                reach.add(kind_of(tree.fate[s as usize], net, d, unlisted), 1, net, src, d);
            }
        }
    }
    reach
}
