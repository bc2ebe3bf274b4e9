//! `torus-2QoS`: OpenSM's dimension-order routing for 2D/3D tori and meshes,
//! deadlock-free through datelines encoded in the path SL, with two QoS levels.
//!
//! Follows `opensm/osm_torus.c` and `man/torus-2QoS.8.in` of OpenSM 3.3.23:
//!
//! - **Input**: a `torus-2QoS.conf` ([`super::torus_conf`]) giving the radix of
//!   each dimension, ring or open, and a seed: links from one switch fixing
//!   the +/- direction of each dimension. The seed switch sits at coordinate
//!   `-dateline` (mod radix) of each dimension; the dateline of a ring lies
//!   between coordinates radix-1 and 0.
//! - **Routes** (`lft_port`): X first, then Y, then Z. In a ring a packet goes
//!   the shorter way round, ties going the way that does not cross the dateline
//!   (`ring_dir_idx`); in an open dimension, straight towards the destination.
//!   The LFT of a switch lists, per destination switch (in the order
//!   switches were placed), its own LID (port 0) and the LIDs of its CAs, in
//!   `port_order` (default: ascending port); parallel cables of one direction
//!   take those LIDs in turn, CA and switch LIDs counted apart (`torus_lft`).
//!   Every LID of a port (LMC > 0) gets its base LID's port, as in OpenSM.
//! - **Path SLs** (`torus_path_sl`): bit d of the SL is set when the shorter
//!   way round dimension d's ring wraps, i.e. the path crosses its dateline
//!   (computed for open dimensions too, where it has no effect, as OpenSM
//!   does). Bit 3 is the QoS level; paths get level 0 (OpenSM's answer without
//!   a QoS policy hint).
//! - **SL2VL** (`sl2vl_entry`): on a switch port pointing along dimension d,
//!   VL bit 0 is SL bit d (the dateline VL), VL bit 1 marks a turn from a higher
//!   to a lower dimension (used only by routes around failures), VL bit 2 the
//!   QoS level; on a port to a CA or the switch itself, and on CA ports, the VL
//!   is the QoS level. [`sl2vl_tables`] builds them for 8 switch data VLs, as
//!   OpenSM does when every switch port operates 8.
//!
//! Why it is deadlock-free on a ring: a path that wraps uses VL 1 on all its
//! hops of that ring, one that does not uses VL 0 and never crosses the
//! dateline link, so VL 0 channels form a line; and VL 1 paths, each shorter
//! than half the ring, all contain the dateline link, so some link of the ring
//! carries no VL 1 path and VL 1 channels form a line too.
//!
//! Not implemented: OpenSM routes around a missing switch or broken links
//! (with the turn VL); this engine routes complete tori and meshes only and
//! refuses anything else, naming what is missing. Multicast spanning trees
//! are not built by the engine. With parallel cables the turn taking follows
//! our placement order, which may differ from OpenSM's.
//!
//! Options used: `torus_config` (required).

use std::collections::VecDeque;
use ibnetsim_fabric::{Fabric, NodeId, PortNum};

use super::torus_conf::{TorusConf, PORT_ORDER_LEN};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::labels::PathLabels;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};
use crate::path_sl::PathSl;
use crate::qos::{Sl2VlMap, Sl2VlTables};

/// Registry name, OpenSM's.
pub const NAME: &str = "torus-2QoS";

/// Data VLs the SL2VL tables assume on every port (OpenSM needs 8 on switch
/// ports for both QoS levels; fewer drop VL bits from the top).
pub const DATA_VLS: u8 = 8;

/// The torus-2QoS engine, with its configuration.
#[derive(Debug, Clone)]
pub struct Torus2Qos {
    conf: TorusConf,
}

/// Registry constructor: reads the `torus-2QoS.conf`.
pub(crate) fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    let path = options.torus_config.as_ref().ok_or_else(|| {
        SmError::option(
            "torus_config",
            format!("the '{NAME}' engine needs its torus-2QoS.conf (radices and seed links): give it with --torus-config FILE, or torus_config in a scenario's [routing]"),
        )
    })?;
    Ok(Box::new(Torus2Qos { conf: TorusConf::read(path)? }))
}

impl Torus2Qos {
    /// The engine for a parsed configuration.
    pub fn new(conf: TorusConf) -> Self {
        Torus2Qos { conf }
    }

    /// Places every switch of `fabric` in the torus.
    pub fn place(&self, fabric: &Fabric) -> Result<Torus, SmError> {
        Torus::discover(fabric, &self.conf)
    }
}

impl RoutingEngine for Torus2Qos {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let t = self.place(fabric)?;
        let tables = t.lfts(fabric, lids, &self.conf.port_order)?;
        let path_sl = t.path_sl(fabric, lids);
        let notes = vec![format!(
            "{NAME}: {} {}x{}x{} from seed switch '{}' at ({},{},{})",
            if t.mesh.iter().zip(t.radix).all(|(&m, r)| m || r == 1) { "mesh" } else { "torus" },
            t.radix[0],
            t.radix[1],
            t.radix[2],
            fabric.node(t.switches[0]).name,
            t.coord[0][0],
            t.coord[0][1],
            t.coord[0][2],
        )];
        let sl2vl = t.sl2vl_tables(fabric)?;
        Ok(Routing { tables, notes, labels: PathLabels::default(), path_sl, not_in_dump: Vec::new(), sl2vl: Some(sl2vl) })
    }
}

/// Port groups of a switch: `2d` points to -d, `2d + 1` to +d, [`SRCSINK`] holds
/// port 0 and the ports cabled to CAs.
const GROUPS: usize = 7;
/// The group of a switch's own port and its CA ports.
const SRCSINK: usize = 6;

/// Switches placed at torus coordinates, with their ports grouped by direction.
#[derive(Debug, Clone)]
pub struct Torus {
    /// Radix per dimension.
    pub radix: [u32; 3],
    /// Open dimensions.
    pub mesh: [bool; 3],
    /// Switches in the order they were placed (the seed switch first).
    pub switches: Vec<NodeId>,
    /// Coordinates, parallel to `switches`.
    pub coord: Vec<[u32; 3]>,
    /// Port groups, parallel to `switches`; each ascending.
    groups: Vec<[Vec<PortNum>; GROUPS]>,
    /// Index into `switches` by node index (`usize::MAX`: not a switch).
    index: Vec<usize>,
}

fn unsupported(reason: String) -> SmError {
    SmError::Unsupported { engine: NAME.to_string(), reason }
}

fn dir_name(g: usize) -> String {
    format!("{}{}", if g % 2 == 1 { '+' } else { '-' }, ['x', 'y', 'z'][g / 2])
}

/// Which way round a ring of `count` from `src` to `dst`: +1, -1 or 0; the
/// shorter way, a tie going the way that does not wrap (`ring_dir_idx`).
fn ring_dir(src: u32, dst: u32, count: u32) -> i32 {
    if src == dst {
        return 0;
    }
    let (direct, wrap) = path_lengths(src, dst, count);
    match (dst > src, direct <= wrap) {
        (true, true) | (false, false) => 1,
        _ => -1,
    }
}

/// Lengths of the direct path and the path that wraps (`get_pathlen`).
fn path_lengths(src: u32, dst: u32, count: u32) -> (u32, u32) {
    let (s, l) = if dst > src { (src, dst) } else { (dst, src) };
    (l - s, s + count - l)
}

/// Whether the shorter way from `src` to `dst` wraps round (`use_vl1`).
fn wraps(src: u32, dst: u32, count: u32) -> bool {
    let (direct, wrap) = path_lengths(src, dst, count);
    direct > wrap
}

impl Torus {
    fn discover(fabric: &Fabric, conf: &TorusConf) -> Result<Torus, SmError> {
        let file = conf.path.display();
        let fsw: Vec<NodeId> = fabric.switches().collect();
        let mut index = vec![usize::MAX; fabric.num_nodes()];
        for (i, &s) in fsw.iter().enumerate() {
            index[s.index()] = i;
        }
        let name = |i: usize| fabric.node(fsw[i]).name.as_str();
        let nbrs: Vec<Vec<usize>> = fsw
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let mut v: Vec<usize> = fabric.switch_neighbors(s).map(|(_, e)| index[e.node.index()]).filter(|&j| j != i).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let common = |a: usize, b: usize, except: usize| -> Vec<usize> {
            nbrs[a].iter().copied().filter(|x| *x != except && nbrs[b].binary_search(x).is_ok()).collect()
        };
        let by_guid = |guid: u64, line: usize| -> Result<usize, SmError> {
            fabric.node_by_guid(guid).map(|n| index[n.index()]).filter(|&i| i != usize::MAX).ok_or_else(|| {
                unsupported(format!("{file}:{line}: no switch has node GUID {guid:#x}"))
            })
        };
        let radix = conf.radix;
        let total: u64 = radix.iter().map(|&r| r as u64).product();
        if total != fsw.len() as u64 {
            return Err(unsupported(format!(
                "{file} describes {}x{}x{} = {total} switches but the fabric has {}; this engine routes only complete tori and meshes (OpenSM also routes around missing switches)",
                radix[0],
                radix[1],
                radix[2],
                fsw.len()
            )));
        }
        // The first seed whose switches are all in the fabric, as OpenSM picks.
        let seed = conf
            .seeds
            .iter()
            .find(|s| s.links.iter().flatten().flatten().all(|l| by_guid(l.from, l.line).is_ok() && by_guid(l.to, l.line).is_ok()))
            .ok_or_else(|| {
                let l = conf.seeds.iter().flat_map(|s| s.links.iter().flatten().flatten()).next();
                match l {
                    Some(l) => by_guid(l.from, l.line).and_then(|_| by_guid(l.to, l.line)).err().unwrap_or_else(|| unsupported(format!("{file}: every seed names a switch the fabric lacks"))),
                    None => unsupported(format!("{file}: every seed names a switch the fabric lacks")),
                }
            })?;
        let mut origin: Option<usize> = None;
        let mut frame0: [Option<usize>; 6] = [None; 6];
        for d in 0..3 {
            let given = seed.links[d];
            if radix[d] > 1 && given.iter().all(Option::is_none) {
                return Err(unsupported(format!("{file}: the seed gives no {0}p_link or {0}m_link; every dimension of radix > 1 needs one", ['x', 'y', 'z'][d])));
            }
            if radix[d] == 4 && !conf.mesh[d] && given.iter().any(Option::is_none) {
                return Err(unsupported(format!("{file}: the {0} dimension is a ring of 4, whose directions its 4-cycles cannot tell apart: give both {0}p_link and {0}m_link from the seed switch", ['x', 'y', 'z'][d])));
            }
            for (sign, l) in given.iter().enumerate() {
                let Some(l) = l else { continue };
                let (a, b) = (by_guid(l.from, l.line)?, by_guid(l.to, l.line)?);
                if *origin.get_or_insert(a) != a {
                    return Err(unsupported(format!("{file}:{}: every link of a seed must start at the same switch", l.line)));
                }
                if nbrs[a].binary_search(&b).is_err() {
                    return Err(unsupported(format!("{file}:{}: switches '{}' and '{}' are not cabled to each other", l.line, name(a), name(b))));
                }
                if radix[d] > 1 {
                    frame0[2 * d + sign] = Some(b);
                }
            }
        }
        let Some(o) = origin else {
            return Err(unsupported(format!("{file}: the seed has no links")));
        };
        // The seed switch's other neighbours: the one perpendicular to every
        // other dimension's seed neighbour but not to its own dimension's is
        // that dimension's opposite direction.
        let perp = |a: usize, b: usize| !common(a, b, o).is_empty();
        for &u in &nbrs[o] {
            if frame0.contains(&Some(u)) {
                continue;
            }
            let fits: Vec<usize> = (0..3)
                .filter(|&d| radix[d] > 1)
                .filter(|&d| {
                    let own = [frame0[2 * d], frame0[2 * d + 1]];
                    own.iter().filter(|x| x.is_some()).count() == 1
                        && own.iter().flatten().all(|&k| !perp(u, k))
                        && (0..3).filter(|&e| e != d && radix[e] > 1).all(|e| [frame0[2 * e], frame0[2 * e + 1]].iter().flatten().all(|&k| perp(u, k)))
                })
                .collect();
            match fits[..] {
                [d] => {
                    let g = if frame0[2 * d].is_none() { 2 * d } else { 2 * d + 1 };
                    frame0[g] = Some(u);
                }
                _ => {
                    return Err(unsupported(format!(
                        "cannot tell which direction the cable from seed switch '{}' to '{}' points in; check the radices and seed links of {file}",
                        name(o),
                        name(u)
                    )))
                }
            }
        }
        // Spread the directions: the +v neighbour of B = S+u is the common
        // neighbour of B and S+v other than S; B's remaining neighbour is B+u.
        let canon = |v: i64, r: u32| v.rem_euclid(r as i64) as u32;
        let c0 = [0, 1, 2].map(|d| canon(-(seed.dateline[d] as i64), radix[d]));
        let mut frame: Vec<Option<[Option<usize>; 6]>> = vec![None; fsw.len()];
        let mut coord: Vec<Option<[u32; 3]>> = vec![None; fsw.len()];
        frame[o] = Some(frame0);
        coord[o] = Some(c0);
        let mut order = vec![o];
        let mut queue = VecDeque::from([o]);
        while let Some(s) = queue.pop_front() {
            let fs = frame[s].expect("queued switches have frames");
            let cs = coord[s].expect("queued switches have coordinates");
            for u in 0..6 {
                let Some(b) = fs[u] else { continue };
                if frame[b].is_some() {
                    continue;
                }
                let mut fb: [Option<usize>; 6] = [None; 6];
                fb[u ^ 1] = Some(s);
                for v in (0..6).filter(|v| v / 2 != u / 2) {
                    let Some(c) = fs[v] else { continue };
                    match common(b, c, s)[..] {
                        [x] => fb[v] = Some(x),
                        _ => {
                            return Err(unsupported(format!(
                                "'{}' and '{}' ({} and {} of '{}') do not close one square with it; is {file} right about this fabric?",
                                name(b),
                                name(c),
                                dir_name(u),
                                dir_name(v),
                                name(s)
                            )))
                        }
                    }
                }
                let rest: Vec<usize> = nbrs[b].iter().copied().filter(|x| !fb.contains(&Some(*x))).collect();
                if rest.len() > 1 {
                    return Err(unsupported(format!("'{}' has more neighbours than a {}x{}x{} torus allows; is {file} right about this fabric?", name(b), radix[0], radix[1], radix[2])));
                }
                fb[u] = rest.first().copied();
                let mut cb = cs;
                let d = u / 2;
                cb[d] = canon(cs[d] as i64 + if u % 2 == 1 { 1 } else { -1 }, radix[d]);
                frame[b] = Some(fb);
                coord[b] = Some(cb);
                order.push(b);
                queue.push_back(b);
            }
        }
        if let Some(i) = (0..fsw.len()).find(|&i| coord[i].is_none()) {
            return Err(unsupported(format!("switch '{}' is not reached from the seed of {file}; this engine routes only complete tori and meshes", name(i))));
        }
        let mut at = std::collections::HashMap::new();
        for &i in &order {
            if let Some(j) = at.insert(coord[i].expect("placed"), i) {
                let c = coord[i].expect("placed");
                return Err(unsupported(format!("'{}' and '{}' both land at ({},{},{}); is {file} right about this fabric?", name(j), name(i), c[0], c[1], c[2])));
            }
        }
        let switches: Vec<NodeId> = order.iter().map(|&i| fsw[i]).collect();
        let coord: Vec<[u32; 3]> = order.iter().map(|&i| coord[i].expect("placed")).collect();
        let mut placed_index = vec![usize::MAX; fabric.num_nodes()];
        for (k, s) in switches.iter().enumerate() {
            placed_index[s.index()] = k;
        }
        let mut t = Torus { radix, mesh: conf.mesh, switches, coord, groups: Vec::new(), index: placed_index };
        t.groups = t.group_ports(fabric)?;
        Ok(t)
    }

    /// Sorts every switch's ports into direction groups, checking that each
    /// cable joins torus neighbours and that no direction is missing.
    fn group_ports(&self, fabric: &Fabric) -> Result<Vec<[Vec<PortNum>; GROUPS]>, SmError> {
        let mut all = Vec::with_capacity(self.switches.len());
        for (k, &s) in self.switches.iter().enumerate() {
            let mut groups: [Vec<PortNum>; GROUPS] = Default::default();
            groups[SRCSINK].push(0);
            let cs = self.coord[k];
            let show = |c: [u32; 3]| format!("({},{},{})", c[0], c[1], c[2]);
            for (p, _) in fabric.node(s).connected_ports() {
                let peer = fabric.peer(s, p).expect("a connected port has a peer");
                if !fabric.node(peer.node).kind.is_switch() {
                    groups[SRCSINK].push(p);
                    continue;
                }
                let cb = self.coord[self.index[peer.node.index()]];
                let g = self.direction(cs, cb).ok_or_else(|| {
                    unsupported(format!(
                        "the cable from '{}' {} port {p} to '{}' {} port {} does not join torus neighbours",
                        fabric.node(s).name,
                        show(cs),
                        fabric.node(peer.node).name,
                        show(cb),
                        peer.port
                    ))
                })?;
                groups[g].push(p);
            }
            for (g, ports) in groups.iter().enumerate().take(6) {
                let d = g / 2;
                let exists = self.radix[d] > 1
                    && (!self.mesh[d] || if g % 2 == 1 { cs[d] + 1 < self.radix[d] } else { cs[d] > 0 });
                if exists && ports.is_empty() {
                    return Err(unsupported(format!(
                        "'{}' {} has no cable in the {} direction; this engine routes only complete tori and meshes (OpenSM also routes around missing links)",
                        fabric.node(s).name,
                        show(cs),
                        dir_name(g)
                    )));
                }
            }
            all.push(groups);
        }
        Ok(all)
    }

    /// The group of a cable from coordinates `a` to `b`, if they are neighbours.
    fn direction(&self, a: [u32; 3], b: [u32; 3]) -> Option<usize> {
        let differ: Vec<usize> = (0..3).filter(|&d| a[d] != b[d]).collect();
        let [d] = differ[..] else { return None };
        let r = self.radix[d];
        if self.mesh[d] {
            if b[d] == a[d] + 1 {
                Some(2 * d + 1)
            } else if b[d] + 1 == a[d] {
                Some(2 * d)
            } else {
                None
            }
        } else if b[d] == (a[d] + 1) % r {
            Some(2 * d + 1)
        } else if (b[d] + 1) % r == a[d] {
            Some(2 * d)
        } else {
            None
        }
    }

    /// The coordinates of switch `s`.
    pub fn coord_of(&self, s: NodeId) -> Option<[u32; 3]> {
        self.index.get(s.index()).filter(|&&k| k != usize::MAX).map(|&k| self.coord[k])
    }

    /// The group a packet at `a` for the switch at `b` leaves by: the first
    /// dimension that differs, the way [`ring_dir`] says (straight on in an
    /// open dimension).
    fn next_group(&self, a: [u32; 3], b: [u32; 3]) -> usize {
        let d = (0..3).find(|&d| a[d] != b[d]).expect("distinct switches differ somewhere");
        let plus = if self.mesh[d] { b[d] > a[d] } else { ring_dir(a[d], b[d], self.radix[d]) > 0 };
        2 * d + usize::from(plus)
    }

    fn lfts(&self, fabric: &Fabric, lids: &LidMap, port_order: &[u32]) -> Result<ForwardingTables, SmError> {
        let mut tables = ForwardingTables::new(fabric, lids.top_lid());
        // The destination ports of every switch, in port_order, with their LIDs.
        let mut dests: Vec<Vec<(PortNum, bool, Vec<Lid>)>> = Vec::with_capacity(self.switches.len());
        for (k, &d) in self.switches.iter().enumerate() {
            let n = fabric.node(d).num_ports as u32 + 1;
            if let Some(&p) = port_order.iter().take(n as usize).find(|&&p| p >= n) {
                return Err(unsupported(format!("port_order lists port {p}, but switch '{}' has only ports 0-{}", fabric.node(d).name, n - 1)));
            }
            let mut v = Vec::new();
            for &p in port_order.iter().take(PORT_ORDER_LEN) {
                let Ok(p) = PortNum::try_from(p) else { continue };
                if !self.groups[k][SRCSINK].contains(&p) {
                    continue;
                }
                let end = if p == 0 { Some(ibnetsim_fabric::LinkEnd { node: d, port: 0 }) } else { fabric.peer(d, p) };
                let Some(pl) = end.and_then(|e| lids.of_port(e.node, e.port)) else { continue };
                v.push((p, p != 0, pl.lids().collect()));
            }
            dests.push(v);
        }
        for (k, &s) in self.switches.iter().enumerate() {
            // Turn taking over parallel cables: CA and switch LIDs counted apart.
            let mut turn = [[0usize; 2]; 6];
            for (j, list) in dests.iter().enumerate() {
                for (p, ca, dlids) in list {
                    let out = if j == k {
                        *p
                    } else {
                        let g = self.next_group(self.coord[k], self.coord[j]);
                        let ports = &self.groups[k][g];
                        let c = &mut turn[g][usize::from(*ca)];
                        let out = ports[*c % ports.len()];
                        *c += 1;
                        out
                    };
                    for &l in dlids {
                        tables.set(s, l, out);
                    }
                }
            }
        }
        Ok(tables)
    }

    /// The switch a LID's packets enter or leave the fabric at.
    fn switch_of(&self, fabric: &Fabric, lids: &LidMap, lid: Lid) -> Option<usize> {
        let end = lids.owner(lid)?.end;
        let sw = if fabric.node(end.node).kind.is_switch() { end.node } else { fabric.peer(end.node, end.port)?.node };
        self.index.get(sw.index()).copied().filter(|&k| k != usize::MAX)
    }

    /// The SL of every (source, destination) pair: bit d when dimension d's
    /// shorter way round wraps.
    pub fn path_sl(&self, fabric: &Fabric, lids: &LidMap) -> PathSl {
        let top = lids.top_lid() as usize;
        let sw: Vec<Option<usize>> = (0..=top).map(|l| if l == 0 { None } else { self.switch_of(fabric, lids, l as Lid) }).collect();
        PathSl::from_fn(lids, |s, d| {
            let (a, b) = (self.coord[sw[s as usize]?], self.coord[sw[d as usize]?]);
            Some((0..3).map(|k| u8::from(wraps(a[k], b[k], self.radix[k])) << k).sum())
        })
    }

    /// The direction (dimension) a port of placed switch `k` points in, if any.
    fn port_dim(&self, k: usize, port: PortNum) -> Option<usize> {
        (0..6).find(|&g| self.groups[k][g].contains(&port)).map(|g| g / 2)
    }

    /// OpenSM's SL2VL tables for this torus, every port at [`DATA_VLS`] data VLs.
    pub fn sl2vl_tables(&self, fabric: &Fabric) -> Result<Sl2VlTables, SmError> {
        let ca_map: Sl2VlMap = std::array::from_fn(|sl| endport_vl(sl as u8, DATA_VLS));
        let mut t = Sl2VlTables::uniform(fabric, DATA_VLS)?;
        t.set_all_cas(&ca_map)?;
        for (k, &s) in self.switches.iter().enumerate() {
            let ports = fabric.node(s).num_ports;
            let dims: Vec<Option<usize>> = (0..=ports).map(|p| self.port_dim(k, p)).collect();
            for i in 0..=ports {
                for o in 0..=ports {
                    let map: Sl2VlMap = std::array::from_fn(|sl| switch_vl(dims[i as usize], dims[o as usize], sl as u8, DATA_VLS));
                    t.set_pair(s, i, o, &map)?;
                }
            }
        }
        Ok(t)
    }
}

/// OpenSM's `sl2vl_entry` for a switch: the VL of SL `sl` from a port pointing
/// along `input` to one pointing along `output` (`None`: a CA port or port 0).
pub fn switch_vl(input: Option<usize>, output: Option<usize>, sl: u8, data_vls: u8) -> u8 {
    let Some(od) = output else { return endport_vl(sl, data_vls) };
    let mut vl = 0;
    if data_vls >= 2 {
        vl |= (sl >> od) & 1;
    }
    if data_vls >= 4 && input.is_some_and(|id| id > od) {
        vl |= 2;
    }
    if data_vls >= 8 {
        vl |= ((sl >> 3) & 1) << 2;
    }
    vl
}

/// The VL of SL `sl` on an end port (CA, switch port 0, switch port to a CA): the QoS level.
pub fn endport_vl(sl: u8, data_vls: u8) -> u8 {
    if data_vls >= 2 {
        (sl >> 3) & 1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze, AnalysisOptions, CdgReport, PathSl as RouteSl, SlView};
    use crate::routing::testfab::{check_routes, trace};
    use crate::routing::{build_engine, testfab};
    use ibnetsim_fabric::gen::MeshParams;
    use ibnetsim_fabric::LinkEnd;
    use proptest::prelude::*;
    use std::path::Path;

    fn guid(f: &Fabric, i: usize) -> String {
        format!("{:#x}", f.node(f.node_by_name(&format!("sw{i}")).unwrap()).guid)
    }

    /// A generated torus (`torus`) or mesh with `dims`, and a configuration
    /// seeded at sw0 with its +d (and -d for rings of 4) neighbours, plus `extra` lines.
    fn fabric_and_engine(dims: &[u32], torus: bool, hosts: u8, extra: &str) -> (Fabric, Torus2Qos) {
        let f = MeshParams::new(dims, torus, hosts).build().unwrap();
        let mut r = [1u32; 3];
        r[..dims.len()].copy_from_slice(dims);
        let mut text = format!("{} {} {} {}\n", if torus { "torus" } else { "mesh" }, r[0], r[1], r[2]);
        let mut stride = 1;
        for (d, &n) in dims.iter().enumerate() {
            let c = ['x', 'y', 'z'][d];
            text += &format!("{c}p_link {} {}\n", guid(&f, 0), guid(&f, stride));
            if torus && n == 4 {
                text += &format!("{c}m_link {} {}\n", guid(&f, 0), guid(&f, stride * (n as usize - 1)));
            }
            stride *= n as usize;
        }
        text += extra;
        (f, Torus2Qos::new(TorusConf::parse(&text, Path::new("t.conf")).unwrap()))
    }

    fn lid_of_host(f: &Fabric, lids: &LidMap, i: usize) -> Lid {
        lids.of_port(f.node_by_name(&format!("h{i}")).unwrap(), 1).unwrap().base
    }

    fn sw(f: &Fabric, i: usize) -> NodeId {
        f.node_by_name(&format!("sw{i}")).unwrap()
    }

    /// The switches a route from sw`from` to host `to` passes, by index.
    fn route(f: &Fabric, lids: &LidMap, r: &Routing, from: usize, to: usize) -> Vec<String> {
        trace(f, lids, &r.tables, sw(f, from), lid_of_host(f, lids, to)).unwrap().into_iter().map(|(n, p)| format!("{}:{p}", f.node(n).name)).collect()
    }

    fn sl(f: &Fabric, lids: &LidMap, r: &Routing, from: usize, to: usize) -> u8 {
        r.path_sl.get(lid_of_host(f, lids, from), lid_of_host(f, lids, to)).unwrap()
    }

    /// Credit-loop check of the CA routes with the engine's SLs and SL2VL
    /// tables, or with SL 0 everywhere and SL i on VL i.
    fn cdg(f: &Fabric, lids: &LidMap, r: &Routing, engine_sls: bool) -> CdgReport {
        let per_path = |src: LinkEnd, dlid: Lid| {
            let base = lids.of_port(src.node, src.port).unwrap().base;
            r.path_sl.get(base, dlid).expect("every pair has an SL")
        };
        let tables = r.sl2vl.as_ref().unwrap();
        let view = if engine_sls {
            SlView::with_tables(tables).with_path_sl(RouteSl::PerPair(&per_path))
        } else {
            SlView::modulo(1).unwrap().with_path_sl(RouteSl::Fixed(0))
        };
        analyze(f, lids, &r.tables, &view, &AnalysisOptions::default()).unwrap().credit_loops
    }

    #[test]
    fn ring_direction_and_dateline_worked_by_hand() {
        // Ring of 5: from 0, coordinates 1 and 2 lie ahead, 3 and 4 behind, and
        // the way to 3 and 4 crosses the dateline (between 4 and 0).
        assert_eq!([1, 2, 3, 4].map(|d| ring_dir(0, d, 5)), [1, 1, -1, -1]);
        assert_eq!([1, 2, 3, 4].map(|d| wraps(0, d, 5)), [false, false, true, true]);
        // Ring of 4: 0 to 2 and 2 to 0 are ties, taken without wrapping.
        assert_eq!((ring_dir(0, 2, 4), ring_dir(2, 0, 4), wraps(0, 2, 4), wraps(2, 0, 4)), (1, -1, false, false));
        assert_eq!((ring_dir(3, 0, 4), wraps(3, 0, 4), ring_dir(0, 3, 4), wraps(0, 3, 4)), (1, true, -1, true));
    }

    #[test]
    fn five_by_three_torus_ports_and_sls_by_hand() {
        // sw(x + 5y), port 1 = +x, 2 = -x, 3 = +y, 4 = -y, 5 = host h(x + 5y).
        let (f, e) = fabric_and_engine(&[5, 3], true, 1, "");
        let (lids, r) = testfab::routed(&e, &f, 0);
        check_routes(&f, &lids, &r.tables).unwrap();
        // (0,0) to (3,0): the short way is -x over the dateline: sw0, sw4, sw3.
        assert_eq!(route(&f, &lids, &r, 0, 3), ["sw0:2", "sw4:2", "sw3:5"]);
        assert_eq!(sl(&f, &lids, &r, 0, 3), 1);
        // (0,0) to (2,0): +x, no dateline.
        assert_eq!(route(&f, &lids, &r, 0, 2), ["sw0:1", "sw1:1", "sw2:5"]);
        assert_eq!(sl(&f, &lids, &r, 0, 2), 0);
        // (1,0) to (3,2): +x twice, then y 0 -> 2 of 3 the short way, -y over the y dateline.
        assert_eq!(route(&f, &lids, &r, 1, 13), ["sw1:1", "sw2:1", "sw3:4", "sw13:5"]);
        assert_eq!(sl(&f, &lids, &r, 1, 13), 2);
        // (4,2) to (1,1): x 4 -> 1 wraps (+x), y 2 -> 1 does not (-y): SL 1.
        assert_eq!(route(&f, &lids, &r, 14, 6), ["sw14:1", "sw10:1", "sw11:4", "sw6:5"]);
        assert_eq!(sl(&f, &lids, &r, 14, 6), 1);
        // A switch's own LID leaves by port 0; its host's by the host port.
        assert_eq!(r.tables.get(sw(&f, 7), lids.switch_lid(sw(&f, 7)).unwrap()), Some(0));
        assert_eq!(r.tables.get(sw(&f, 7), lid_of_host(&f, &lids, 7)), Some(5));
        // Switch LIDs follow the same routes as their hosts.
        assert_eq!(r.tables.get(sw(&f, 0), lids.switch_lid(sw(&f, 3)).unwrap()), Some(2));
        assert_eq!(r.notes, ["torus-2QoS: torus 5x3x1 from seed switch 'sw0' at (0,0,0)"]);
    }

    #[test]
    fn the_dateline_option_moves_the_origin() {
        // x_dateline 1 puts sw0 at x = -1 = 4: sw1 is at 0, so the dateline lies
        // between sw0 and sw1. sw0 -> sw3 (x 4 -> 2) no longer crosses it: SL 0,
        // same ports; sw1 -> sw0 (0 -> 4) does.
        let (f, e) = fabric_and_engine(&[5, 3], true, 1, "x_dateline 1\n");
        let (lids, r) = testfab::routed(&e, &f, 0);
        assert_eq!(route(&f, &lids, &r, 0, 3), ["sw0:2", "sw4:2", "sw3:5"]);
        assert_eq!((sl(&f, &lids, &r, 0, 3), sl(&f, &lids, &r, 1, 0), sl(&f, &lids, &r, 0, 1)), (0, 1, 1));
        assert_eq!(r.notes, ["torus-2QoS: torus 5x3x1 from seed switch 'sw0' at (4,0,0)"]);
    }

    #[test]
    fn four_ring_ties_go_without_wrapping() {
        let (f, e) = fabric_and_engine(&[4, 4], true, 1, "");
        let (lids, r) = testfab::routed(&e, &f, 0);
        check_routes(&f, &lids, &r.tables).unwrap();
        // x 0 -> 2: tie, +x; x 2 -> 0: tie, -x; x 3 -> 1: tie, -x.
        assert_eq!(route(&f, &lids, &r, 0, 2), ["sw0:1", "sw1:1", "sw2:5"]);
        assert_eq!(route(&f, &lids, &r, 2, 0), ["sw2:2", "sw1:2", "sw0:5"]);
        assert_eq!(route(&f, &lids, &r, 3, 1), ["sw3:2", "sw2:2", "sw1:5"]);
        // (3,3) to (0,0): +x over the dateline, then +y over it: SL 3.
        assert_eq!(route(&f, &lids, &r, 15, 0), ["sw15:1", "sw12:3", "sw0:5"]);
        assert_eq!(sl(&f, &lids, &r, 15, 0), 3);
    }

    #[test]
    fn sl2vl_by_hand() {
        // SL 9 = QoS level 1, x dateline: leaving along x from a y port it also
        // takes the turn VL: 1 | 2 | 4.
        assert_eq!(switch_vl(Some(1), Some(0), 9, 8), 7);
        // Straight on along y with SL 2 (y dateline): VL 1; SL 1 says nothing of y: VL 0.
        assert_eq!((switch_vl(Some(1), Some(1), 2, 8), switch_vl(Some(1), Some(1), 1, 8)), (1, 0));
        // x to y is a legal turn; from a host, no turn VL.
        assert_eq!((switch_vl(Some(0), Some(1), 2, 8), switch_vl(None, Some(0), 1, 8)), (1, 1));
        // To a host or port 0, and on CAs: the QoS level.
        assert_eq!((switch_vl(Some(2), None, 15, 8), endport_vl(7, 8), endport_vl(8, 8)), (1, 0, 1));
        // With 2 data VLs only the dateline bit survives; with 1, nothing.
        assert_eq!((switch_vl(Some(1), Some(0), 9, 2), switch_vl(Some(1), Some(0), 9, 1)), (1, 0));
        // In the tables: sw0 of the 5x3 torus, +y port 3 in, +x port 1 out.
        let (f, e) = fabric_and_engine(&[5, 3], true, 1, "");
        let (_, r) = testfab::routed(&e, &f, 0);
        let t = r.sl2vl.unwrap();
        let s0 = sw(&f, 0);
        assert_eq!(t.table(s0, 3, 1), &[0, 1, 0, 1, 0, 1, 0, 1, 4, 5, 4, 5, 4, 5, 4, 5].map(|v| v | 2));
        assert_eq!(t.table(s0, 5, 3), &[0, 0, 1, 1, 0, 0, 1, 1, 4, 4, 5, 5, 4, 4, 5, 5]);
        assert_eq!(t.table(s0, 1, 5), &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
        let h0 = f.node_by_name("h0").unwrap();
        assert_eq!(t.table(h0, 0, 1), &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn meshes_route_straight_and_lmc_lids_follow_the_base() {
        let (f, e) = fabric_and_engine(&[5, 3], false, 1, "");
        let (lids, r) = testfab::routed(&e, &f, 2);
        check_routes(&f, &lids, &r.tables).unwrap();
        // (0,0) to (3,0) in a mesh: +x all the way; the SL still says the ring
        // would wrap (OpenSM computes it the same), which the mesh never uses.
        assert_eq!(route(&f, &lids, &r, 0, 3), ["sw0:1", "sw1:1", "sw2:1", "sw3:5"]);
        assert_eq!(sl(&f, &lids, &r, 0, 3), 1);
        let p = lids.of_port(f.node_by_name("h3").unwrap(), 1).unwrap();
        assert_eq!(p.lids().map(|l| r.tables.get(sw(&f, 0), l).unwrap()).collect::<Vec<_>>(), [1, 1, 1, 1]);
    }

    #[test]
    fn three_d_torus_goes_x_then_y_then_z() {
        let (f, e) = fabric_and_engine(&[3, 3, 3], true, 1, "");
        let (lids, r) = testfab::routed(&e, &f, 0);
        check_routes(&f, &lids, &r.tables).unwrap();
        // sw(x + 3y + 9z); ports 5/6 = +z/-z, host on 7. (0,0,0) to (1,2,2):
        // +x, then y 0 -> 2 the short way (-y, over the dateline), then z likewise.
        assert_eq!(route(&f, &lids, &r, 0, 25), ["sw0:1", "sw1:4", "sw7:6", "sw25:7"]);
        assert_eq!(sl(&f, &lids, &r, 0, 25), 6);
    }

    #[test]
    fn credit_loops_need_the_engine_sls() {
        let (f, e) = fabric_and_engine(&[5, 5], true, 1, "");
        let (lids, r) = testfab::routed(&e, &f, 0);
        let with = cdg(&f, &lids, &r, true);
        assert_eq!(with.cyclic_sccs, 0, "{:?}", with.cycle);
        assert_eq!(with.vls_used, [0, 1]);
        // All on one VL, the rings of 5 close loops: the check can fail.
        assert!(cdg(&f, &lids, &r, false).cyclic_sccs > 0);
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        let msg = |dims: &[u32], torus: bool, extra: &str, edit: &dyn Fn(&mut Fabric)| {
            let (mut f, e) = fabric_and_engine(dims, torus, 1, extra);
            edit(&mut f);
            let lids = LidMap::assign(&f, 0).unwrap();
            e.route(&f, &lids).err().map(|e| e.to_string()).unwrap_or_default()
        };
        // A fabric with a switch fewer than the configuration says.
        let f33 = MeshParams::new(&[3, 3], true, 1).build().unwrap();
        let conf = format!("torus 3 4 1\nxp_link {} {}\nyp_link {} {}\n", guid(&f33, 0), guid(&f33, 1), guid(&f33, 0), guid(&f33, 3));
        let e = Torus2Qos::new(TorusConf::parse(&conf, Path::new("t.conf")).unwrap());
        let err = e.route(&f33, &LidMap::assign(&f33, 0).unwrap()).unwrap_err().to_string();
        assert!(err.starts_with("routing engine 'torus-2QoS' cannot route this fabric: t.conf describes 3x4x1 = 12 switches but the fabric has 9"), "{err}");
        // A ring of 4 with only its + seed link.
        let f44 = MeshParams::new(&[4, 4], true, 1).build().unwrap();
        let conf = format!("torus 4 4 1\nxp_link {} {}\nyp_link {} {}\nym_link {} {}\n", guid(&f44, 0), guid(&f44, 1), guid(&f44, 0), guid(&f44, 4), guid(&f44, 0), guid(&f44, 12));
        let e = Torus2Qos::new(TorusConf::parse(&conf, Path::new("t.conf")).unwrap());
        let err = e.route(&f44, &LidMap::assign(&f44, 0).unwrap()).unwrap_err().to_string();
        assert!(err.contains("the x dimension is a ring of 4"), "{err}");
        // A seed GUID no switch has.
        let err = msg(&[3, 3], true, "next_seed\n", &|_| {});
        assert_eq!(err, "");
        let e = Torus2Qos::new(TorusConf::parse("torus 3 3 1\nxp_link 0x1 0x2\n", Path::new("t.conf")).unwrap());
        let err = e.route(&f33, &LidMap::assign(&f33, 0).unwrap()).unwrap_err().to_string();
        assert_eq!(err, "routing engine 'torus-2QoS' cannot route this fabric: t.conf:2: no switch has node GUID 0x1");
        // A torus configured as a mesh: the wrap cables join no mesh neighbours.
        let conf = format!("mesh 3 3 1\nxp_link {} {}\nyp_link {} {}\n", guid(&f33, 0), guid(&f33, 1), guid(&f33, 0), guid(&f33, 3));
        let e = Torus2Qos::new(TorusConf::parse(&conf, Path::new("t.conf")).unwrap());
        let err = e.route(&f33, &LidMap::assign(&f33, 0).unwrap()).unwrap_err().to_string();
        assert!(err.contains("does not join torus neighbours") || err.contains("more neighbours"), "{err}");
        // A mesh configured as a torus: the ring has no wrap cable.
        let f53 = MeshParams::new(&[5, 3], false, 1).build().unwrap();
        let conf = format!("torus 5 3 1\nxp_link {} {}\nyp_link {} {}\n", guid(&f53, 0), guid(&f53, 1), guid(&f53, 0), guid(&f53, 5));
        let e = Torus2Qos::new(TorusConf::parse(&conf, Path::new("t.conf")).unwrap());
        let err = e.route(&f53, &LidMap::assign(&f53, 0).unwrap()).unwrap_err().to_string();
        assert!(err.contains("has no cable in the"), "{err}");
        // No configuration at all.
        let err = build_engine("torus-2qos", &RoutingOptions::default()).err().unwrap().to_string();
        assert!(err.starts_with("invalid option 'torus_config': the 'torus-2QoS' engine needs its torus-2QoS.conf"), "{err}");
        let o = RoutingOptions { torus_config: Some("t.conf".into()), ..RoutingOptions::default() };
        let err = build_engine("minhop", &o).err().unwrap().to_string();
        assert_eq!(err, "invalid option 'torus_config': is the configuration of the 'torus-2QoS' engine only, not of 'minhop'");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn tori_and_meshes_are_complete_loop_free_and_credit_loop_free(
            dims in prop::collection::vec(2u32..7, 2..=3),
            torus in any::<bool>(),
            hosts in 1u8..3,
            lmc in 0u8..2,
        ) {
            prop_assume!(dims.iter().product::<u32>() <= 150);
            let (f, e) = fabric_and_engine(&dims, torus, hosts, "");
            let (lids, r) = testfab::routed(&e, &f, lmc);
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            let c = cdg(&f, &lids, &r, true);
            prop_assert_eq!(c.cyclic_sccs, 0, "{:?}", c.cycle);
            // Minimal: DOR on a complete torus takes the shortest way in every dimension.
            let hops = crate::hops::SwitchHops::compute(&f);
            testfab::check_minimal(&f, &lids, &hops, &r.tables).map_err(TestCaseError::fail)?;
        }
    }
}
