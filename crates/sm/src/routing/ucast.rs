//! OpenSM's unicast manager: the step that turns hop tables into linear
//! forwarding tables, shared by `minhop`, `updn` and `dor`.
//!
//! An engine only says which ports of a switch lie on its chosen paths toward
//! each destination switch ([`PathSet`]); how one of those ports is picked for
//! each LID follows OpenSM 3.3 exactly (`ucast_mgr_build_lfts` and
//! `ucast_mgr_process_port` in `opensm/osm_ucast_mgr.c`,
//! `osm_switch_recommend_path` in `opensm/osm_switch.c`), with OpenSM's default
//! options (no `port_shifting`, no `scatter_ports`, no routing-order or
//! port-profile-ignore files, unit hop weights):
//!
//! * Destination order. Switches are sorted by the number of CA links they
//!   have, most first (ties in OpenSM's switch-table order, see
//!   [`opensm_key`]); each contributes its CA ports in port order. Every other
//!   port with a LID (switch port 0, CA ports not cabled to a switch) follows in
//!   port-GUID table order. With LMC > 0 the whole list is walked once per LID
//!   offset: every port's base LID first, then every port's base + 1, …
//! * Port choice. Among the candidate ports, the one carrying the fewest routes
//!   so far wins; ties go to the first one met, scanning from `start_from` and
//!   wrapping. `start_from` is 1 for a port's base LID and one past the port
//!   chosen for the previous LID of the same port otherwise, so that the LIDs of
//!   one port leave by different ports.
//! * LMC spreading (LMC > 0). For each destination port the switch remembers
//!   which remote nodes its LIDs were already sent to and how often. A candidate
//!   leading to a system (system image GUID) none of them went to is preferred;
//!   failing that, one leading to an unused node; failing that, the least-loaded
//!   port, ties broken by fewest LIDs already forwarded to that remote node.
//! * Mixed-radix LMC spreading (engines whose [`PathSet::lmc_stride`] says so,
//!   i.e. `updn`). For offsets above 0 the remote-node preference is replaced
//!   by a fixed neighbour: the one `offset / stride` places after the base
//!   LID's among the candidate neighbours; among that neighbour's ports
//!   (parallel cables) the least-loaded one wins as above.
//! * Counting. A route counts toward its port's load unless the destination is
//!   a switch (OpenSM's `port_profile_switch_nodes` defaults to off).
//! * `dor` mode. Only ports that lead to the same neighbour as the first
//!   candidate port (in port order, always scanning from port 1) are
//!   considered, so the lowest-numbered dimension is taken first and parallel
//!   cables of that dimension share the load.
//!
//! OpenSM would also keep an existing, still-minimal LFT entry read back from a
//! switch; a modelled fabric starts with empty tables, so that step never
//! applies. Where OpenSM writes `OSM_NO_PATH`, this module returns
//! [`SmError::Unroutable`] instead.

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId, PortNum};
use rustc_hash::FxHashMap;

use crate::error::SmError;
use crate::hops::{attachment, SwitchHops};
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};

/// The paths an engine allows, per destination switch (all by dense switch
/// index, see [`SwitchHops::index_of`]).
pub(crate) trait PathSet {
    /// Whether switch `sw` has any path toward switch `dst` (`sw != dst`).
    fn reachable(&self, sw: usize, dst: usize) -> bool;
    /// Whether the hop from `sw` to its neighbour `peer` starts one of the
    /// engine's paths from `sw` to `dst`. OpenSM's equivalent is "the port's hop
    /// count equals the least hop count".
    fn on_path(&self, sw: usize, peer: usize, dst: usize) -> bool;
    /// With LMC > 0: `None` for OpenSM's spreading of a port's LIDs; `Some(g)`
    /// for mixed-radix spreading, where LID offset `o` at `sw` takes the
    /// neighbour `o / g` places after the base LID's, in the order of the
    /// candidate neighbours. `g` is how many ways earlier switches may already
    /// have split the offsets of packets arriving at `sw` (see `updn`).
    fn lmc_stride(&self, _sw: usize, _dst: usize) -> Option<u32> {
        None
    }
    /// Whether a LID a switch has no path to may be left empty (OpenSM's
    /// `OSM_NO_PATH`) instead of failing the build: `dnup`, whose rule keeps
    /// some switches from reaching others, as in OpenSM. Only switch LIDs, and
    /// any LID at a switch without CAs (no route passes through such an
    /// entry); a switch with CAs that cannot reach a CA still fails the build.
    fn leaves_unreachable_entries(&self) -> bool {
        false
    }
}

/// Sort key reproducing the order of OpenSM's GUID-keyed tables
/// (`sw_guid_tbl`, `port_guid_tbl`). They are `cl_qmap`s keyed by the GUID in
/// network byte order and compared as host integers, so on the little-endian
/// hosts OpenSM runs on the order is that of the byte-swapped GUID. For GUIDs
/// that differ only in their second-lowest byte (generated fabrics under 255
/// nodes) this is plain GUID order.
pub(crate) fn opensm_key(guid: u64) -> u64 {
    guid.swap_bytes()
}

/// Switches in OpenSM's switch-table order.
pub(crate) fn switch_table_order(fabric: &Fabric) -> Vec<NodeId> {
    let mut switches: Vec<NodeId> = fabric.switches().collect();
    switches.sort_by_key(|&s| opensm_key(fabric.node(s).guid));
    switches
}

/// Indices into `lids.ports()` in the order OpenSM routes them
/// (`sort_ports_by_switch_load` then `add_port_to_order_list`).
pub(crate) fn port_order(fabric: &Fabric, lids: &LidMap) -> Vec<usize> {
    let ports = lids.ports();
    let by_end: FxHashMap<LinkEnd, usize> = ports.iter().enumerate().map(|(i, p)| (p.end, i)).collect();
    let is_ca_peer = |sw: NodeId, p: PortNum| fabric.peer(sw, p).filter(|e| fabric.node(e.node).kind.is_ca());
    let mut switches = switch_table_order(fabric);
    // `qsort` in glibc merge-sorts (stable) for tables this size; a stable sort keeps table order on ties.
    switches.sort_by_key(|&s| {
        std::cmp::Reverse(fabric.node(s).connected_ports().filter(|&(p, _)| is_ca_peer(s, p).is_some()).count())
    });
    let mut flagged = vec![false; ports.len()];
    let mut order = Vec::with_capacity(ports.len());
    for s in switches {
        for (p, _) in fabric.node(s).connected_ports() {
            if let Some(&i) = is_ca_peer(s, p).and_then(|end| by_end.get(&end)) {
                if !flagged[i] {
                    flagged[i] = true;
                    order.push(i);
                }
            }
        }
    }
    let mut rest: Vec<usize> = (0..ports.len()).filter(|&i| !flagged[i]).collect();
    rest.sort_by_key(|&i| opensm_key(fabric.node(ports[i].end.node).port_guid(ports[i].end.port)));
    order.extend(rest);
    order
}

/// Where a destination port is, seen from the switches.
#[derive(Clone, Copy)]
enum Target {
    /// Port 0 of the switch with this dense index.
    Switch(usize),
    /// A CA port cabled to port `port` of switch `sw`.
    Ca { sw: usize, port: PortNum },
    /// A CA port cabled to no switch: no switch can forward to it.
    Detached,
}

struct Dest {
    base: Lid,
    count: u32,
    target: Target,
    end: LinkEnd,
}

/// A switch port cabled to another switch.
#[derive(Clone, Copy)]
struct SwPort {
    port: PortNum,
    peer: usize,
    peer_node: NodeId,
    peer_port: PortNum,
    peer_sys: u64,
}

/// One remote node a destination port's LIDs were sent toward
/// (OpenSM's `struct osm_remote_node`).
#[derive(Clone, Copy, Default)]
struct Remote {
    node: u32,
    port: PortNum,
    sys: u64,
    forwarded_to: u32,
}

/// Fills the forwarding table of every switch for every LID of `lids`.
pub(crate) fn build_lfts(
    fabric: &Fabric,
    lids: &LidMap,
    hops: &SwitchHops,
    paths: &dyn PathSet,
    dor: bool,
) -> Result<ForwardingTables, SmError> {
    build_lfts_offsets(fabric, lids, hops, paths, dor, u32::MAX)
}

/// [`build_lfts`] for the LID offsets `0..offset_count` of every port only; the
/// entries of higher offsets stay [`crate::lft::NO_PATH`]. Offsets are routed
/// in increasing order and an offset's choices depend only on the offsets
/// before it, so the entries filled are exactly those [`build_lfts`] gives.
pub(crate) fn build_lfts_offsets(
    fabric: &Fabric,
    lids: &LidMap,
    hops: &SwitchHops,
    paths: &dyn PathSet,
    dor: bool,
    offset_count: u32,
) -> Result<ForwardingTables, SmError> {
    let ports = lids.ports();
    let dests: Vec<Dest> = port_order(fabric, lids)
        .into_iter()
        .map(|i| {
            let p = &ports[i];
            let target = match hops.index_of(p.end.node) {
                Some(t) => Target::Switch(t),
                None => match attachment(fabric, p.end) {
                    Some(sw) => Target::Ca { sw: hops.index_of(sw.node).expect("attachment is a switch"), port: sw.port },
                    None => Target::Detached,
                },
            };
            Dest { base: p.base, count: p.count(), target, end: p.end }
        })
        .collect();
    let max_count = dests.iter().map(|d| d.count).max().unwrap_or(1).min(offset_count);
    let lmc = lids.lmc() > 0;
    // Remote-node tracking, one slot per LID of each destination (at most one new remote per LID).
    let mut offsets = Vec::with_capacity(dests.len() + 1);
    offsets.push(0usize);
    for d in &dests {
        offsets.push(offsets.last().unwrap() + if lmc { d.count as usize } else { 0 });
    }
    let mut remotes = vec![Remote::default(); *offsets.last().unwrap()];
    let mut remote_len = vec![0u32; dests.len()];

    let mut tables = ForwardingTables::new(fabric, lids.top_lid());
    for (si, &sw) in hops.switches().iter().enumerate() {
        let node = fabric.node(sw);
        let sw_ports: Vec<SwPort> = fabric
            .switch_neighbors(sw)
            .map(|(port, peer)| SwPort {
                port,
                peer: hops.index_of(peer.node).expect("switch neighbour"),
                peer_node: peer.node,
                peer_port: peer.port,
                peer_sys: fabric.node(peer.node).system_guid,
            })
            .collect();
        // OpenSM's `num_ports` counts port 0 too.
        let num_ports = node.num_ports as u32 + 1;
        let has_ca = node.connected_ports().any(|(p, _)| fabric.peer(sw, p).is_some_and(|e| !fabric.node(e.node).kind.is_switch()));
        let mut counts = vec![0u32; num_ports as usize];
        remote_len.fill(0);
        for offset in 0..max_count {
            for (di, d) in dests.iter().enumerate() {
                if offset >= d.count {
                    continue;
                }
                let lid = (d.base as u32 + offset) as Lid;
                let dst = match d.target {
                    Target::Switch(t) if t == si => {
                        tables.set(sw, lid, 0);
                        continue;
                    }
                    Target::Ca { sw: t, port } if t == si => Ok(port),
                    Target::Switch(t) | Target::Ca { sw: t, .. } => Err(t),
                    Target::Detached => return Err(unroutable(fabric, sw, lid, d.end)),
                };
                let port = match dst {
                    Ok(port) => port,
                    Err(t) => {
                        if !paths.reachable(si, t) {
                            if paths.leaves_unreachable_entries() && (matches!(d.target, Target::Switch(_)) || !has_ca) {
                                continue;
                            }
                            return Err(unroutable(fabric, sw, lid, d.end));
                        }
                        let start_from = if offset > 0 && !dor {
                            // One past the port of the previous LID; OSM_NO_PATH (255) wraps as in OpenSM.
                            tables.lft(sw).expect("switch table").entries()[lid as usize - 1] as u32 + 1
                        } else {
                            1
                        };
                        let used = &remotes[offsets[di]..offsets[di] + remote_len[di] as usize];
                        let mut choice =
                            Choice { sw_ports: &sw_ports, num_ports, counts: &counts, used, lmc, dor, only_peer: None };
                        if let Some(g) = paths.lmc_stride(si, t).filter(|_| offset > 0 && !dor) {
                            let base_port = tables.lft(sw).expect("switch table").entries()[d.base as usize];
                            choice.lmc = false;
                            choice.only_peer = stride_peer(&sw_ports, paths, si, t, base_port, offset / g.max(1));
                        }
                        match choice.recommend(paths, si, t, start_from) {
                            Some(p) => p,
                            None => return Err(unroutable(fabric, sw, lid, d.end)),
                        }
                    }
                };
                tables.set(sw, lid, port);
                if matches!(d.target, Target::Switch(_)) {
                    continue;
                }
                counts[port as usize] += 1;
                if lmc {
                    let (rnode, rport, rsys) = match sw_ports.iter().find(|p| p.port == port) {
                        Some(p) => (p.peer_node, p.peer_port, p.peer_sys),
                        None => {
                            let peer = d.end;
                            (peer.node, peer.port, fabric.node(peer.node).system_guid)
                        }
                    };
                    let slots = &mut remotes[offsets[di]..offsets[di + 1]];
                    let len = remote_len[di] as usize;
                    // `find_and_add_remote_sys`: dor tells remotes apart by port too.
                    let found = slots[..len].iter().position(|r| r.node == rnode.0 && (!dor || r.port == rport));
                    let i = match found {
                        Some(i) => i,
                        None => {
                            slots[len] = Remote { node: rnode.0, port: rport, sys: rsys, forwarded_to: 0 };
                            remote_len[di] += 1;
                            len
                        }
                    };
                    slots[i].forwarded_to += 1;
                }
            }
        }
    }
    Ok(tables)
}

pub(crate) fn unroutable(fabric: &Fabric, sw: NodeId, lid: Lid, end: LinkEnd) -> SmError {
    SmError::Unroutable {
        switch: fabric.node(sw).name.clone(),
        lid,
        target: format!("{} port {}", fabric.node(end.node).name, end.port),
    }
}

/// Mixed-radix LMC spreading: the candidate neighbour `shift` places after
/// the one the base LID leaves to, candidates in order of their first port.
/// `None` (no restriction) when there is no other neighbour to move to.
fn stride_peer(
    sw_ports: &[SwPort],
    paths: &dyn PathSet,
    sw: usize,
    dst: usize,
    base_port: PortNum,
    shift: u32,
) -> Option<usize> {
    let mut peers: Vec<usize> = Vec::new();
    for p in sw_ports {
        if !peers.contains(&p.peer) && paths.on_path(sw, p.peer, dst) {
            peers.push(p.peer);
        }
    }
    let base = sw_ports.iter().find(|p| p.port == base_port)?.peer;
    let i = peers.iter().position(|&p| p == base)?;
    (peers.len() > 1).then(|| peers[(i + shift as usize) % peers.len()])
}

/// The state `osm_switch_recommend_path` reads for one switch and one LID.
struct Choice<'a> {
    sw_ports: &'a [SwPort],
    num_ports: u32,
    counts: &'a [u32],
    used: &'a [Remote],
    lmc: bool,
    dor: bool,
    /// Consider only ports to this neighbour (mixed-radix LMC spreading).
    only_peer: Option<usize>,
}

impl Choice<'_> {
    /// The port for one LID toward switch `dst`, or `None` if no port is on a path.
    fn recommend(&self, paths: &dyn PathSet, sw: usize, dst: usize, start_from: u32) -> Option<PortNum> {
        let mut least_paths = u32::MAX;
        let mut least_paths_other_sys = u32::MAX;
        let mut least_paths_other_nodes = u32::MAX;
        let mut least_forwarded_to = u32::MAX;
        let mut best_port: PortNum = 0;
        let mut best_port_other_sys: PortNum = 0;
        let mut best_port_other_node: PortNum = 0;
        let mut port_found = false;
        let mut first_remote: Option<NodeId> = None;

        // OpenSM scans i = start_from .. start_from + num_ports, port = i % num_ports.
        let begin = (start_from % self.num_ports) as PortNum;
        let split = self.sw_ports.partition_point(|p| p.port < begin);
        let scan = self.sw_ports[split..].iter().chain(&self.sw_ports[..split]);
        for p in scan {
            if self.only_peer.is_some_and(|q| q != p.peer) || !paths.on_path(sw, p.peer, dst) {
                continue;
            }
            let check_count = self.counts[p.port as usize];
            // `Some(forwarded_to)` where OpenSM's `p_remote_guid` is non-null (LMC > 0 only).
            let mut remote: Option<u32> = None;
            if self.dor {
                match first_remote {
                    None => first_remote = Some(p.peer_node),
                    Some(first) if first != p.peer_node => continue,
                    Some(_) => {}
                }
                if self.lmc {
                    let hit = self.used.iter().find(|r| r.node == p.peer_node.0 && r.port == p.peer_port);
                    remote = Some(hit.map_or(0, |r| r.forwarded_to));
                }
            } else if self.lmc {
                let same_sys = self.used.iter().find(|r| r.sys == p.peer_sys);
                if same_sys.is_none() {
                    if check_count < least_paths_other_sys {
                        least_paths_other_sys = check_count;
                        best_port_other_sys = p.port;
                        least_forwarded_to = 0;
                    }
                } else {
                    let same_node = self.used.iter().find(|r| r.node == p.peer_node.0);
                    if same_node.is_none() && check_count < least_paths_other_nodes {
                        least_paths_other_nodes = check_count;
                        best_port_other_node = p.port;
                        least_forwarded_to = 0;
                    }
                    remote = same_node.map(|r| r.forwarded_to);
                }
            }
            if check_count < least_paths {
                port_found = true;
                best_port = p.port;
                least_paths = check_count;
                if let Some(f) = remote {
                    least_forwarded_to = least_forwarded_to.min(f);
                }
            } else if let Some(f) = remote {
                if check_count == least_paths && f < least_forwarded_to {
                    least_forwarded_to = f;
                    best_port = p.port;
                }
            }
        }
        if !port_found {
            return None;
        }
        if self.lmc && best_port != 0 {
            if best_port_other_sys != 0 {
                best_port = best_port_other_sys;
            } else if best_port_other_node != 0 {
                best_port = best_port_other_node;
            }
        }
        Some(best_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testfab::{self, check_routes};
    use crate::routing::{RoutingOptions, ENGINES};
    use crate::subnet::{SmConfig, SubnetManager};
    use ibnetsim_fabric::{LinkSpec, NodeKind};

    /// OpenSM's view when every port has the least hop count to the target.
    struct AllOnPath;

    impl PathSet for AllOnPath {
        fn reachable(&self, _sw: usize, _dst: usize) -> bool {
            true
        }
        fn on_path(&self, _sw: usize, _peer: usize, _dst: usize) -> bool {
            true
        }
    }

    /// Port `port` cabled to port `peer_port` of node `node` in system `sys`.
    fn cabled(port: PortNum, node: u32, peer_port: PortNum, sys: u64) -> SwPort {
        SwPort { port, peer: node as usize, peer_node: NodeId(node), peer_port, peer_sys: sys }
    }

    fn used(node: u32, port: PortNum, sys: u64, forwarded_to: u32) -> Remote {
        Remote { node, port, sys, forwarded_to }
    }

    /// `osm_switch_recommend_path` for LID offset > 0 (`routing_for_lmc`),
    /// scanning from port 1, on a switch with ports 1..=3 and these counts.
    fn recommend_lmc(ports: &[SwPort], counts: &[u32], used: &[Remote], dor: bool) -> Option<PortNum> {
        let choice = Choice { sw_ports: ports, num_ports: 4, counts, used, lmc: true, dor, only_peer: None };
        choice.recommend(&AllOnPath, 0, 9, 1)
    }

    // The cases below are worked from OpenSM 3.3.23's osm_switch_recommend_path
    // (osm_switch.c), its non-shifting branch, for one destination port whose
    // earlier LIDs went toward the `used` remote nodes.

    #[test]
    fn lmc_prefers_another_node_of_the_used_system_over_fewer_paths() {
        // Both neighbours are in system 7; node 1 already carries this
        // destination's base LID. Port 1 (to node 1) has fewer paths, but
        // OpenSM keeps the other node of the system: best_port_other_node = 2.
        let ports = [cabled(1, 1, 1, 7), cabled(2, 2, 1, 7)];
        assert_eq!(recommend_lmc(&ports, &[0, 0, 5, 0], &[used(1, 1, 7, 1)], false), Some(2));
        // Another system wins over another node of a used one, whatever its paths.
        let ports = [cabled(1, 1, 1, 7), cabled(2, 2, 1, 7), cabled(3, 3, 1, 8)];
        assert_eq!(recommend_lmc(&ports, &[0, 0, 1, 9], &[used(1, 1, 7, 1)], false), Some(3));
    }

    #[test]
    fn lmc_among_used_nodes_takes_the_least_forwarded_to_on_equal_paths() {
        // Every neighbour's node is used: at equal path counts the node this
        // destination was forwarded to least often wins (port 2: once).
        let ports = [cabled(1, 1, 1, 7), cabled(2, 2, 1, 7)];
        let both = [used(1, 1, 7, 2), used(2, 1, 7, 1)];
        assert_eq!(recommend_lmc(&ports, &[0, 3, 3, 0], &both, false), Some(2));
        // Fewer paths still come first.
        assert_eq!(recommend_lmc(&ports, &[0, 2, 3, 0], &both, false), Some(1));
    }

    #[test]
    fn lmc_under_dor_tells_parallel_links_apart_by_remote_port() {
        // dor: ports 1 and 2 both reach node 1 (its ports 5 and 6). The
        // destination went twice through 1/5 and once through 1/6: at equal
        // paths OpenSM matches the remote by node *and* port and takes port 2.
        let ports = [cabled(1, 1, 5, 7), cabled(2, 1, 6, 7)];
        let remotes = [used(1, 5, 7, 2), used(1, 6, 7, 1)];
        assert_eq!(recommend_lmc(&ports, &[0, 4, 4, 0], &remotes, true), Some(2));
        // A remote port not used yet counts as forwarded to 0 times.
        assert_eq!(recommend_lmc(&ports, &[0, 4, 4, 0], &remotes[..1], true), Some(2));
    }

    #[test]
    fn opensm_table_order_is_byte_swapped_guid_order() {
        let mut keys = [0x0000_0000_0001_0000u64, 0x0000_0000_0000_0200, 0x0100_0000_0000_0100];
        keys.sort_by_key(|&g| opensm_key(g));
        // The lowest byte weighs most (all 0 here), then the next one (0, 1, 2).
        assert_eq!(keys, [0x0000_0000_0001_0000, 0x0100_0000_0000_0100, 0x0000_0000_0000_0200]);
    }

    #[test]
    fn destinations_by_switch_load_then_port_guid() {
        let mut f = Fabric::new();
        // GUIDs chosen so that GUID order and OpenSM's table order differ for the switches.
        let a = f.add_node(NodeKind::Switch, "a", 8, Some(0x0001_0000)).unwrap();
        let b = f.add_node(NodeKind::Switch, "b", 8, Some(0x0000_0200)).unwrap();
        let c = f.add_node(NodeKind::Switch, "c", 8, Some(0x0000_0100)).unwrap();
        f.connect(a, 1, b, 1, LinkSpec::default()).unwrap();
        f.connect(b, 2, c, 1, LinkSpec::default()).unwrap();
        let hca = |f: &mut Fabric, name: &str, guid: u64, ports: u8| f.add_node(NodeKind::Hca, name, ports, Some(guid)).unwrap();
        let ha = hca(&mut f, "ha", 0x0500, 1);
        let hb1 = hca(&mut f, "hb1", 0x0600, 1);
        let hb2 = hca(&mut f, "hb2", 0x0700, 2);
        let hc = hca(&mut f, "hc", 0x0800, 1);
        f.connect(a, 2, ha, 1, LinkSpec::default()).unwrap();
        f.connect(b, 5, hb1, 1, LinkSpec::default()).unwrap();
        f.connect(b, 3, hb2, 1, LinkSpec::default()).unwrap();
        // hb2's second port is cabled to hc, not to a switch.
        f.connect(hb2, 2, hc, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let order: Vec<String> = port_order(&f, &lids)
            .into_iter()
            .map(|i| {
                let e = lids.ports()[i].end;
                format!("{}/{}", f.node(e.node).name, e.port)
            })
            .collect();
        // b has two CA links, a one, c none; b's CAs in b's port order (hb2 on
        // port 3 before hb1 on port 5). Then the rest by swapped port GUID,
        // lowest byte first: a (1_00_00), c (01_00), b (02_00), hc/1 (08_01), hb2/2 (07_02).
        assert_eq!(order, ["hb2/1", "hb1/1", "ha/1", "a/0", "c/0", "b/0", "hc/1", "hb2/2"]);
    }

    #[test]
    fn every_registered_engine_configures_a_fat_tree() {
        let f = testfab::fat_tree(3, 3, 3, 2);
        for info in ENGINES.iter().filter(|e| ["minhop", "updn", "dor"].contains(&e.name)) {
            for lmc in [0, 1] {
                let config = SmConfig {
                    routing_engine: info.name.into(),
                    lmc,
                    options: RoutingOptions::default(),
                    ..SmConfig::default()
                };
                let subnet = SubnetManager::new(config).configure(&f).unwrap();
                assert_eq!(subnet.engine, info.name);
                check_routes(&f, &subnet.lids, &subnet.tables).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            }
        }
    }
}
