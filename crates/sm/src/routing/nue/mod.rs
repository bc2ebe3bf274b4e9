//! `nue`: OpenSM's Nue routing (Domke, Hoefler, Matsuoka, "Routing on the
//! Dependency Graph: A New Approach to Deadlock-Free High-Performance
//! Routing", HPDC 2016), after `opensm/osm_ucast_nue.c` of OpenSM 3.3.23.
//! Written from a reading of that file; no code is taken from it.
//!
//! Nue routes on the complete channel dependency graph (cCDG): every
//! switch-to-switch channel is a vertex, every possible turn a dependency. The
//! destinations are split into virtual layers, one per VL; per layer, each
//! destination gets a Dijkstra run over the cCDG that only takes dependencies
//! keeping the layer's used dependencies acyclic, so every layer is free of
//! credit loops by construction, whatever the topology and however few VLs
//! (one included). The steps, as OpenSM takes them:
//!
//! 1. The network (`graph.rs`): switches in OpenSM's LID order, their cables in
//!    port order; every link weight starts at P² (P: the LIDs of all CA ports
//!    and switches), as in `sssp`.
//! 2. Layers: the CA ports (OpenSM's port-GUID table order) are dealt out
//!    round-robin over the `max_vls` layers (OpenSM's `distribute_lids_semi_randomly`,
//!    used when OpenSM is built without METIS, as Debian's 3.3.23 is: its
//!    binary has none of the METIS code's messages, and its debug log lists
//!    the layers dealt out this way).
//! 3. Per layer: all colours reset, then the escape paths (`escape.rs`): a
//!    spanning tree rooted at the switch most central to the layer's
//!    destinations, whose dependencies are coloured first.
//! 4. Per destination LID of the layer, in layer order (LMC > 0: each LID of a
//!    port in turn), the search (`search.rs`) from its switch, with a colour of
//!    its own: the routes (each switch leaves by the reverse of the link it
//!    was reached by), the fallback to the escape paths if the search gets
//!    stuck, then every link of every switch's route grows by the switch's
//!    LID count (its own and its CAs'), which steers later destinations away.
//! 5. Switch LIDs last (OpenSM's default `nue_include_switches FALSE`: they
//!    carry management traffic only and are not made deadlock-free): per
//!    switch, a plain Dijkstra tree under the current weights, layer 0.
//!
//! Per-path SLs: with more than one layer, every path toward a destination LID
//! gets the layer of that LID as its SL (OpenSM's `nue_get_vl_for_path`; the
//! SL2VL tables must map SL `i` to VL `i`, `ibnetsim check --vls N`). With one
//! layer there are none: any SL is deadlock-free, and OpenSM answers the
//! requested one.
//!
//! Option `max_vls` is OpenSM's `nue_max_num_vls`: the layers, 1..=15,
//! default 1 (OpenSM's default). OpenSM caps it at the VLs every switch port
//! operates (8 on ibsim) and uses 1 unless QoS is on; here the value is taken
//! as given, and OpenSM's 0 ("as many as the ports have") is refused with the
//! advice to name the number.
//!
//! Left out, deliberately: METIS partitioning of the destinations (Debian's
//! OpenSM is built without it, see step 2); `nue_include_switches TRUE`;
//! OpenSM's multicast part (the crate's multicast manager builds the trees);
//! `avoid_throttled_links` and unhealthy links (not modelled). One difference:
//! OpenSM's "infinite" distance is 2³¹ − 1, which path costs (P² per hop) pass
//! on fabrics of some tens of thousands of LIDs; here it is 2⁶⁴ − 1. OpenSM
//! counts a switch's LIDs in 8 bits; here they are not truncated.

mod escape;
mod graph;
mod search;

use ibnetsim_fabric::{Fabric, NodeId};

use self::escape::Escape;
use self::graph::{Colors, Graph, ESCAPE, NONE};
use self::search::Search;
use super::ucast::{opensm_key, unroutable};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::labels::PathLabels;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap, PortLid};
use crate::path_sl::PathSl;

/// Registry name.
pub const NAME: &str = "nue";

/// Layers unless `max_vls` says otherwise: OpenSM's `nue_max_num_vls` default.
pub const DEFAULT_MAX_VLS: u8 = 1;

/// The nue engine.
#[derive(Debug, Clone)]
pub struct Nue {
    /// Virtual layers (VLs) the destinations are split over, 1..=15.
    pub max_vls: u8,
}

impl Default for Nue {
    fn default() -> Self {
        Nue { max_vls: DEFAULT_MAX_VLS }
    }
}

/// Registry constructor.
pub(crate) fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    let max_vls = options.max_vls.unwrap_or(DEFAULT_MAX_VLS);
    if max_vls == 0 {
        return Err(SmError::option(
            "max_vls",
            "0 (OpenSM's nue_max_num_vls 0: as many layers as the ports' VLs) is not modelled; give the number of layers, 1..=15 (ibsim's ports run 8)",
        ));
    }
    if max_vls > 15 {
        return Err(SmError::option("max_vls", format!("{max_vls} virtual layers is out of range; nue uses one data VL per layer, and IBA ports have 1..=15")));
    }
    Ok(Box::new(Nue { max_vls }))
}

/// What a run found besides the tables: kept for the tests.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// Per layer, the CA port LIDs routed in it, in routing order.
    pub layers: Vec<Vec<Lid>>,
    /// Per layer, the escape tree's root switch.
    pub roots: Vec<Option<NodeId>>,
    /// LIDs whose search fell back to the escape paths.
    pub fallbacks: Vec<Lid>,
}

impl RoutingEngine for Nue {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        Ok(self.route_plan(fabric, lids)?.0)
    }
}

impl Nue {
    pub(crate) fn route_plan(&self, fabric: &Fabric, lids: &LidMap) -> Result<(Routing, Plan), SmError> {
        let g = Graph::new(fabric, lids);
        let mut tables = ForwardingTables::new(fabric, lids.top_lid());
        // OpenSM's port_guid_tbl order: the order destinations are dealt out.
        let mut ports: Vec<&PortLid> = lids.ports().iter().collect();
        ports.sort_by_key(|p| opensm_key(fabric.node(p.end.node).port_guid(p.end.port)));
        let total: u64 = ports.iter().map(|p| p.count() as u64).sum();
        let mut weight = vec![total.saturating_mul(total); g.links.len()];
        for node in &g.nodes {
            if let Some(p) = lids.of_port(node.sw, 0) {
                for lid in p.lids() {
                    tables.set(node.sw, lid, 0);
                }
            }
        }
        let layers = usize::from(self.max_vls);
        let mut dests: Vec<Vec<&PortLid>> = vec![Vec::new(); layers];
        let mut next = 0;
        for &p in &ports {
            if !fabric.node(p.end.node).kind.is_ca() {
                continue;
            }
            dests[next].push(p);
            next = (next + 1) % layers;
        }
        // Which switch each CA port hangs off, and by which port.
        let attach = |p: &PortLid| -> Option<(u32, u8)> {
            let peer = fabric.peer(p.end.node, p.end.port)?;
            let n = *g.node_of.get(peer.node.index())?;
            (n != NONE).then_some((n, peer.port))
        };
        let mut colors = Colors::new(&g, 4 + total as usize);
        let mut escape = Escape::new(&g);
        let mut search = Search::new(&g);
        let mut layer_of = vec![0u8; lids.top_lid() as usize + 1];
        let mut plan = Plan::default();
        for (vl, ds) in dests.iter().enumerate() {
            plan.layers.push(Vec::new());
            if ds.is_empty() {
                plan.roots.push(None);
                continue;
            }
            colors.reset();
            let mut at: Vec<(u32, u8)> = Vec::with_capacity(ds.len());
            for p in ds {
                at.push(attach(p).ok_or_else(|| not_at_a_switch(fabric, p))?);
            }
            let switches: Vec<u32> = at.iter().map(|a| a.0).collect();
            let root = escape.mark(&g, &weight, &mut colors, &switches).ok_or_else(|| detached(fabric, &g, &escape))?;
            plan.roots.push(Some(g.nodes[root as usize].sw));
            let mut color = ESCAPE + 1;
            for (p, &(dest, ca_port)) in ds.iter().zip(&at) {
                for lid in p.lids() {
                    if search.route(&g, &weight, &mut colors, &escape, dest, color) {
                        plan.fallbacks.push(lid);
                    }
                    color += 1;
                    apply(&g, &search.used, dest, Some(ca_port), lid, &mut tables);
                    add_weights(&g, &search.used, dest, &mut weight);
                    layer_of[lid as usize] = vl as u8;
                    plan.layers[vl].push(lid);
                }
            }
        }
        for n in 0..g.nodes.len() as u32 {
            let Some(p) = lids.of_port(g.nodes[n as usize].sw, 0) else { continue };
            for lid in p.lids() {
                escape.tree(&g, &weight, n);
                if let Some(v) = escape.dist.iter().position(|&d| d == graph::INF) {
                    return Err(unroutable(fabric, g.nodes[v].sw, lid, p.end));
                }
                escape.paths_to(&g, n, &mut search.used);
                apply(&g, &search.used, n, None, lid, &mut tables);
                add_weights(&g, &search.used, n, &mut weight);
            }
        }
        let mut notes = vec![format!(
            "nue: {} virtual layer(s) (max_vls); CA LIDs per layer: {:?}; escape-path fallbacks: {}",
            self.max_vls,
            plan.layers.iter().map(Vec::len).collect::<Vec<_>>(),
            plan.fallbacks.len()
        )];
        let path_sl = if self.max_vls > 1 {
            notes.push(format!(
                "nue: path SLs are layers: map SL i to VL i on {0} or more data VLs (`ibnetsim check --vls {0}`), or layers merge",
                self.max_vls
            ));
            PathSl::from_fn(lids, |_, dlid| lids.owner(dlid).map(|_| layer_of[dlid as usize]))
        } else {
            PathSl::none()
        };
        Ok((Routing { tables, notes, labels: PathLabels::default(), path_sl, not_in_dump: Vec::new(), sl2vl: None }, plan))
    }
}

/// Writes the routes toward `lid` (at switch `dest`, behind its port
/// `ca_port` for a CA) into the tables: each switch leaves by the far port of
/// the link it was reached by.
fn apply(g: &Graph, used: &[u32], dest: u32, ca_port: Option<u8>, lid: Lid, tables: &mut ForwardingTables) {
    for (v, node) in g.nodes.iter().enumerate() {
        let l = used[v];
        if l == NONE {
            if v as u32 == dest {
                if let Some(port) = ca_port {
                    tables.set(node.sw, lid, port);
                }
            }
            continue;
        }
        tables.set(node.sw, lid, g.links[l as usize].peer_port);
    }
}

/// OpenSM's `update_network_link_weights`: every switch's route adds the
/// switch's LID count to each link on it.
fn add_weights(g: &Graph, used: &[u32], dest: u32, weight: &mut [u64]) {
    for (v, node) in g.nodes.iter().enumerate() {
        if v as u32 == dest {
            continue;
        }
        let mut at = v;
        // A route is at most one link per switch long; the bound only guards
        // against a broken table.
        for _ in 0..g.nodes.len() {
            let l = used[at];
            if l == NONE {
                break;
            }
            weight[l as usize] += node.terminals;
            at = g.links[l as usize].from as usize;
            if at as u32 == dest {
                break;
            }
        }
    }
}

/// A CA port with LIDs but no switch at the other end of its cable.
fn not_at_a_switch(fabric: &Fabric, p: &PortLid) -> SmError {
    SmError::Unsupported {
        engine: NAME.into(),
        reason: format!(
            "{} port {} (LID {}) is cabled to no switch, and nue routes from a destination's switch; cable it to a switch",
            fabric.node(p.end.node).name,
            p.end.port,
            p.base
        ),
    }
}

/// OpenSM's "detached and inaccessible switches" error.
fn detached(fabric: &Fabric, g: &Graph, escape: &Escape) -> SmError {
    let lost: Vec<&str> = g
        .nodes
        .iter()
        .zip(&escape.dist)
        .filter(|(_, &d)| d == graph::INF)
        .map(|(n, _)| fabric.node(n.sw).name.as_str())
        .take(5)
        .collect();
    SmError::Unsupported {
        engine: NAME.into(),
        reason: format!("switches {lost:?} cannot be reached from the others; cable the fabric together or route its parts apart"),
    }
}

#[cfg(test)]
mod tests;
