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
//!   is the QoS level. [`Torus::sl2vl_tables`] builds them for 8 switch data
//!   VLs, as OpenSM does when every switch port operates 8.
//!
//! Why it is deadlock-free on a ring: a path that wraps uses VL 1 on all its
//! hops of that ring, one that does not uses VL 0 and never crosses the
//! dateline link, so VL 0 channels form a line; and VL 1 paths, each shorter
//! than half the ring, all contain the dateline link, so some link of the ring
//! carries no VL 1 path and VL 1 channels form a line too.
//!
//! - **Missing cables**: a ring may lack cables in one place; routes then go
//!   the long way round it (`ring_dir_path`), with unchanged SLs (a broken
//!   ring closes no loop). A ring broken in two places falls apart and is
//!   refused, as OpenSM refuses it (`routable_torus`); an open dimension is
//!   broken at its ends already, so it may lack none.
//!
//! - **Missing switches**: one, or several stacked in one z column (else
//!   refused, as OpenSM refuses them: "message deadlock"). A path whose
//!   turning switch is missing heads for it the short way as far as cables
//!   go, then turns early onto a later dimension (`lft_port`); the hop after
//!   the later y-to-x or z-to-x/y turn takes the turn VL (VL bit 1), which
//!   keeps the detours free of credit loops.
//!
//! Placement is ours, not OpenSM's case analysis of cubes: squares of
//! cables, and lines extended from the seed (see `Torus::discover`'s
//! rules); a fabric whose missing cables hide the squares placement needs is
//! refused. Multicast spanning trees are not built. With parallel cables the
//! turn taking follows our placement order, which differs from OpenSM's
//! (switch LIDs only; CA LIDs agree).
//!
//! Options used: `torus_config` (required).

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
        let mut notes = notes;
        if !t.missing.is_empty() {
            let at: Vec<String> = t.missing.iter().map(|c| format!("({},{},{})", c[0], c[1], c[2])).collect();
            notes.push(format!("{NAME}: no switch at {}: routes turn early around it, the hop after the turn on the turn VL", at.join(", ")));
        }
        if t.broken_rings > 0 {
            notes.push(format!("{NAME}: {} ring(s) broken once by missing cables or switches: routes go the long way round them", t.broken_rings));
        }
        let sl2vl = t.sl2vl_tables(fabric)?;
        Ok(Routing { tables, notes, labels: PathLabels::default(), path_sl, not_in_dump: Vec::new(), sl2vl: Some(sl2vl) })
    }
}

/// Port groups of a switch: `2d` points to -d, `2d + 1` to +d, [`SRCSINK`] holds
/// port 0 and the ports cabled to CAs.
const GROUPS: usize = 7;
/// The group of a switch's own port and its CA ports.
const SRCSINK: usize = 6;
/// One switch's ports by group, each ascending.
type PortGroups = [Vec<PortNum>; GROUPS];

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
    groups: Vec<PortGroups>,
    /// Index into `switches` by node index (`usize::MAX`: not a switch).
    index: Vec<usize>,
    /// Index into `switches` by coordinate, x fastest.
    by_coord: Vec<usize>,
    /// Coordinates without a switch.
    pub missing: Vec<[u32; 3]>,
    /// Rings (of dimensions that close) broken once by missing cables or switches.
    pub broken_rings: usize,
}

fn unsupported(reason: String) -> SmError {
    SmError::Unsupported { engine: NAME.to_string(), reason }
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
    /// Places every switch at its coordinates (see the rules inside), then
    /// groups the ports and checks the rings.
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
        if fsw.len() as u64 > total {
            return Err(unsupported(format!(
                "{file} describes {}x{}x{} = {total} switches but the fabric has {}: check the radices",
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
        let mesh = conf.mesh;
        let cell = |c: [u32; 3]| (c[0] + radix[0] * (c[1] + radix[1] * c[2])) as usize;
        // One step from c along dimension d (s = +1 or -1); none off the end
        // of an open dimension or along a dimension of radix 1.
        let step = |c: [u32; 3], d: usize, s: i64| -> Option<[u32; 3]> {
            let r = radix[d] as i64;
            let v = c[d] as i64 + s;
            if r == 1 || (mesh[d] && !(0..r).contains(&v)) {
                return None;
            }
            let mut n = c;
            n[d] = v.rem_euclid(r) as u32;
            Some(n)
        };
        let adjacent = |a: [u32; 3], b: [u32; 3]| (0..3).any(|d| [1, -1].iter().any(|&s| step(a, d, s) == Some(b)));
        let mut at = vec![usize::MAX; total as usize];
        let mut coord: Vec<Option<[u32; 3]>> = vec![None; fsw.len()];
        let mut order: Vec<usize> = Vec::with_capacity(fsw.len());
        let place = |i: usize, c: [u32; 3], at: &mut Vec<usize>, coord: &mut Vec<Option<[u32; 3]>>, order: &mut Vec<usize>| -> Result<(), SmError> {
            match (coord[i], at[cell(c)]) {
                (Some(old), _) if old == c => Ok(()),
                (None, usize::MAX) => {
                    coord[i] = Some(c);
                    at[cell(c)] = i;
                    order.push(i);
                    Ok(())
                }
                _ => Err(unsupported(format!("the seed of {file} puts '{}' at ({},{},{}) twice or where another switch is; check its links", name(i), c[0], c[1], c[2]))),
            }
        };
        // The seed: its switch at -dateline in every dimension, its links' far ends one step away.
        let c0 = [0, 1, 2].map(|d| (-(seed.dateline[d] as i64)).rem_euclid(radix[d] as i64) as u32);
        let mut origin: Option<usize> = None;
        for d in 0..3 {
            let given = seed.links[d];
            if radix[d] > 1 && given.iter().all(Option::is_none) {
                return Err(unsupported(format!("{file}: the seed gives no {0}p_link or {0}m_link; every dimension of radix > 1 needs one", ['x', 'y', 'z'][d])));
            }
            if radix[d] == 4 && !mesh[d] && given.iter().any(Option::is_none) {
                return Err(unsupported(format!("{file}: the {0} dimension is a ring of 4, whose directions its 4-cycles cannot tell apart: give both {0}p_link and {0}m_link from the seed switch", ['x', 'y', 'z'][d])));
            }
            for (sign, l) in given.iter().enumerate() {
                let Some(l) = l else { continue };
                let (a, b) = (by_guid(l.from, l.line)?, by_guid(l.to, l.line)?);
                if *origin.get_or_insert(a) != a {
                    return Err(unsupported(format!("{file}:{}: every link of a seed must start at the same switch", l.line)));
                }
                // Like OpenSM, the seed places switches by GUID whether or not
                // the cable between them works; a wrong seed shows below as
                // cables joining switches that are not neighbours.
                place(a, c0, &mut at, &mut coord, &mut order)?;
                if radix[d] > 1 {
                    let c = step(c0, d, if sign == 1 { 1 } else { -1 }).ok_or_else(|| {
                        unsupported(format!("{file}:{}: the link leaves the open {} dimension at the seed switch; move the seed or its dateline", l.line, ['x', 'y', 'z'][d]))
                    })?;
                    place(b, c, &mut at, &mut coord, &mut order)?;
                }
            }
        }
        if origin.is_none() {
            return Err(unsupported(format!("{file}: the seed has no links")));
        }
        // Place the rest by two rules, the first whenever it can (a missing
        // cable only keeps a rule from firing; the checks below catch what
        // does not fit):
        // - squares: with A, B = A+u and C = A+v placed, B+v is the one
        //   unplaced common neighbour of B and C other than A;
        // - lines: with A and P = A-u placed, A+u is the one unplaced
        //   neighbour of A sharing no square with P (a common neighbour
        //   off A's line) whose placed neighbours all sit next to A+u and
        //   whose hop counts to the placed switches fit A+u's torus
        //   distances no worse than another free place next to A would.
        let torus_dist = |a: [u32; 3], b: [u32; 3]| -> u32 {
            (0..3)
                .map(|d| {
                    let diff = a[d].abs_diff(b[d]);
                    if mesh[d] {
                        diff
                    } else {
                        diff.min(radix[d] - diff)
                    }
                })
                .sum()
        };
        let bfs = |from: usize| -> Vec<u32> {
            let mut hops = vec![u32::MAX; fsw.len()];
            hops[from] = 0;
            let mut queue = std::collections::VecDeque::from([from]);
            while let Some(x) = queue.pop_front() {
                for &y in &nbrs[x] {
                    if hops[y] == u32::MAX {
                        hops[y] = hops[x] + 1;
                        queue.push_back(y);
                    }
                }
            }
            hops
        };
        let dirs: Vec<(usize, i64)> = (0..3).filter(|&d| radix[d] > 1).flat_map(|d| [(d, 1), (d, -1)]).collect();
        loop {
            let mut placed_any = false;
            let mut k = 0;
            while k < order.len() {
                let a = order[k];
                let ca = coord[a].expect("placed");
                for &(u, su) in &dirs {
                    for &(v, sv) in dirs.iter().filter(|&&(v, _)| v != u) {
                        let (Some(cb), Some(cc)) = (step(ca, u, su), step(ca, v, sv)) else { continue };
                        let Some(cd) = step(cb, v, sv) else { continue };
                        let (b, c) = (at[cell(cb)], at[cell(cc)]);
                        if b == usize::MAX || c == usize::MAX || at[cell(cd)] != usize::MAX {
                            continue;
                        }
                        let cands: Vec<usize> = common(b, c, a).into_iter().filter(|&x| coord[x].is_none()).collect();
                        if let [x] = cands[..] {
                            place(x, cd, &mut at, &mut coord, &mut order)?;
                            placed_any = true;
                        }
                    }
                }
                k += 1;
            }
            if placed_any {
                continue;
            }
            let mut line = None;
            'search: for &a in &order {
                let ca = coord[a].expect("placed");
                for &(u, s) in &dirs {
                    let (Some(cp), Some(ct)) = (step(ca, u, -s), step(ca, u, s)) else { continue };
                    let p = at[cell(cp)];
                    if p == usize::MAX || at[cell(ct)] != usize::MAX {
                        continue;
                    }
                    let cands: Vec<usize> = nbrs[a]
                        .iter()
                        .copied()
                        .filter(|&x| {
                            // A common neighbour on A's own line is no square
                            // (the far side of a ring of 4).
                            let off_line = |y: &usize| match coord[*y] {
                                Some(cy) => (0..3).any(|e| e != u && cy[e] != ca[e]),
                                None => true,
                            };
                            coord[x].is_none() && x != p && !common(x, p, a).iter().any(off_line)
                        })
                        .filter(|&x| nbrs[x].iter().all(|&y| match coord[y] {
                            Some(cy) => adjacent(cy, ct),
                            None => true,
                        }))
                        .collect();
                    // Missing cables hide squares, so a candidate must also fit
                    // A+u by its hop counts to the placed switches at least as
                    // well as any other free place next to A; of several, the
                    // best fitting one.
                    let misfit = |hops: &[u32], c: [u32; 3]| -> u64 {
                        order.iter().map(|&q| (hops[q] as i64 - torus_dist(c, coord[q].expect("placed")) as i64).unsigned_abs()).sum()
                    };
                    let free: Vec<[u32; 3]> =
                        dirs.iter().filter_map(|&(d, s2)| step(ca, d, s2)).filter(|&c| c != ct && at[cell(c)] == usize::MAX).collect();
                    let mut fits: Vec<(u64, usize)> = cands
                        .iter()
                        .filter_map(|&x| {
                            let hops = bfs(x);
                            let here = misfit(&hops, ct);
                            free.iter().all(|&c| misfit(&hops, c) >= here).then_some((here, x))
                        })
                        .collect();
                    fits.sort_unstable();
                    let pick = match fits[..] {
                        [] => None,
                        [(_, x)] => Some(x),
                        [(a, x), (b, _), ..] => (a < b).then_some(x),
                    };
                    if let Some(x) = pick {
                        line = Some((x, ct));
                        break 'search;
                    }
                }
            }
            match line {
                Some((x, c)) => place(x, c, &mut at, &mut coord, &mut order)?,
                None => break,
            }
        }
        if let Some(i) = (0..fsw.len()).find(|&i| coord[i].is_none()) {
            return Err(unsupported(format!(
                "switch '{}' could not be placed in the {}x{}x{} torus seeded by {file}; is the file right about this fabric, or are too many cables around it missing?",
                name(i),
                radix[0],
                radix[1],
                radix[2]
            )));
        }
        // Missing switches, as OpenSM allows them (rpt_torus_missing): one, or
        // several stacked in one z column (dimension-order routes turn early
        // around them, and the turn VL breaks the loops that makes); any
        // other pattern can deadlock.
        let missing: Vec<[u32; 3]> = (0..total as u32)
            .map(|c| [c % radix[0], c / radix[0] % radix[1], c / (radix[0] * radix[1])])
            .filter(|&c| at[cell(c)] == usize::MAX)
            .collect();
        let show = |c: [u32; 3]| format!("({},{},{})", c[0], c[1], c[2]);
        if let Some(&m0) = missing.first() {
            if let Some(&m) = missing.iter().find(|m| m[0] != m0[0] || m[1] != m0[1]) {
                return Err(unsupported(format!(
                    "switches are missing at {} and {}, which are not in one z column: routes around them could deadlock, so OpenSM refuses this torus too",
                    show(m0),
                    show(m)
                )));
            }
            if missing.len() > 1 {
                let present = |c: Option<[u32; 3]>| c.is_some_and(|c| at[cell(c)] != usize::MAX);
                if let Some(&m) = missing.iter().find(|&&m| present(step(m, 2, -1)) && present(step(m, 2, 1))) {
                    return Err(unsupported(format!(
                        "switches are missing at {} and elsewhere in its z column, not next to each other: routes around them could deadlock, so OpenSM refuses this torus too",
                        show(m)
                    )));
                }
            }
        }
        let switches: Vec<NodeId> = order.iter().map(|&i| fsw[i]).collect();
        let coord: Vec<[u32; 3]> = order.iter().map(|&i| coord[i].expect("placed")).collect();
        let mut placed_index = vec![usize::MAX; fabric.num_nodes()];
        for (k, s) in switches.iter().enumerate() {
            placed_index[s.index()] = k;
        }
        let mut by_coord = vec![usize::MAX; total as usize];
        for (k, c) in coord.iter().enumerate() {
            by_coord[cell(*c)] = k;
        }
        let mut t = Torus { radix, mesh, switches, coord, groups: Vec::new(), index: placed_index, by_coord, missing, broken_rings: 0 };
        (t.groups, t.broken_rings) = t.group_ports(fabric)?;
        Ok(t)
    }

    /// Sorts every switch's ports into direction groups, checking that each
    /// cable joins torus neighbours and that no direction is missing.
    /// Also counts the rings broken once.
    fn group_ports(&self, fabric: &Fabric) -> Result<(Vec<PortGroups>, usize), SmError> {
        let mut all = Vec::with_capacity(self.switches.len());
        for (k, &s) in self.switches.iter().enumerate() {
            let mut groups: PortGroups = Default::default();
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
            all.push(groups);
        }
        let mut broken = 0;
        // OpenSM's test (routable_torus): a ring may be broken in one place,
        // which routes then go round the long way; twice, it falls apart.
        // An open dimension is broken once by definition, at its ends.
        for d in 0..3 {
            let mut lines: std::collections::BTreeMap<[u32; 3], [u32; 2]> = Default::default();
            for (k, c) in self.coord.iter().enumerate() {
                let mut key = *c;
                key[d] = 0;
                let e = lines.entry(key).or_default();
                e[0] += u32::from(all[k][2 * d].is_empty());
                e[1] += u32::from(all[k][2 * d + 1].is_empty());
            }
            for (key, [minus, plus]) in lines {
                broken += usize::from(!self.mesh[d] && self.radix[d] > 1 && minus == 1 && plus == 1);
                if minus != plus || minus > 1 {
                    let at = match d {
                        0 => format!("y={} z={}", key[1], key[2]),
                        1 => format!("x={} z={}", key[0], key[2]),
                        _ => format!("x={} y={}", key[0], key[1]),
                    };
                    return Err(unsupported(format!(
                        "the {} ring at {at} is broken in more than one place (cables missing at {minus} switches towards -{0}, {plus} towards +{0}): its parts cannot reach each other; OpenSM refuses it too",
                        ['x', 'y', 'z'][d]
                    )));
                }
            }
        }
        Ok((all, broken))
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

    /// The group a packet at placed switch `k` for the switch at `b` leaves
    /// by (`lft_port`): the first dimension that differs, towards the switch
    /// where the path turns. If that switch is there, the shorter way round
    /// ([`ring_dir`]) when the ring is whole that way to it, else the other
    /// way (`next_hop_path`); if it is missing, the shorter way while a cable
    /// leads on (`next_hop_idx`). Where neither moves on, the path turns early
    /// onto a later dimension that differs. Z has no later dimension: its
    /// turning switch must be there.
    fn next_group(&self, k: usize, b: [u32; 3]) -> Option<usize> {
        let a = self.coord[k];
        let exists = |c: [u32; 3]| self.by_coord[(c[0] + self.radix[0] * (c[1] + self.radix[1] * c[2])) as usize] != usize::MAX;
        let group = |d: usize, s: i32| 2 * d + usize::from(s > 0);
        let hop = |d: usize| -> Option<usize> {
            let mut turn = a;
            turn[d] = b[d];
            let first = ring_dir(a[d], b[d], self.radix[d]);
            if first == 0 {
                return None;
            }
            if exists(turn) {
                [first, -first].into_iter().find(|&s| self.walks(k, d, s, turn)).map(|s| group(d, s))
            } else if d < 2 && !self.groups[k][group(d, first)].is_empty() {
                Some(group(d, first))
            } else {
                None
            }
        };
        let first = (0..3).find(|&d| a[d] != b[d])?;
        hop(first).or_else(|| (first + 1..3).filter(|&d| a[d] != b[d]).find_map(hop))
    }

    /// Whether going along dimension `d` in direction `s` from placed switch
    /// `k` reaches the switch at `to` before a missing cable or an end.
    fn walks(&self, k: usize, d: usize, s: i32, to: [u32; 3]) -> bool {
        let g = 2 * d + usize::from(s > 0);
        let mut cur = k;
        for _ in 0..self.radix[d] {
            if self.groups[cur][g].is_empty() {
                return false;
            }
            let mut c = self.coord[cur];
            c[d] = (c[d] as i64 + s as i64).rem_euclid(self.radix[d] as i64) as u32;
            if c == to {
                return true;
            }
            cur = self.by_coord[(c[0] + self.radix[0] * (c[1] + self.radix[1] * c[2])) as usize];
            if cur == usize::MAX {
                return false;
            }
        }
        false
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
                        let g = self.next_group(k, self.coord[j]).ok_or_else(|| {
                            unsupported(format!("no way from '{}' to '{}' along its rings", fabric.node(s).name, fabric.node(self.switches[j]).name))
                        })?;
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
        self.sl2vl_tables_with(fabric, DATA_VLS)
    }

    /// The tables OpenSM writes when the switches operate `data_vls` data VLs:
    /// fewer than 8 drop the QoS bit, fewer than 4 the turn bit too.
    pub fn sl2vl_tables_with(&self, fabric: &Fabric, data_vls: u8) -> Result<Sl2VlTables, SmError> {
        let data = data_vls;
        let ca_map: Sl2VlMap = std::array::from_fn(|sl| endport_vl(sl as u8, data));
        let mut t = Sl2VlTables::uniform(fabric, data)?;
        t.set_all_cas(&ca_map)?;
        for (k, &s) in self.switches.iter().enumerate() {
            let ports = fabric.node(s).num_ports;
            let dims: Vec<Option<usize>> = (0..=ports).map(|p| self.port_dim(k, p)).collect();
            for i in 0..=ports {
                for o in 0..=ports {
                    let map: Sl2VlMap = std::array::from_fn(|sl| switch_vl(dims[i as usize], dims[o as usize], sl as u8, data));
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
        let e = engine_for(&f, dims, torus, extra);
        (f, e)
    }

    fn engine_for(f: &Fabric, dims: &[u32], torus: bool, extra: &str) -> Torus2Qos {
        let mut r = [1u32; 3];
        r[..dims.len()].copy_from_slice(dims);
        let mut text = format!("{} {} {} {}\n", if torus { "torus" } else { "mesh" }, r[0], r[1], r[2]);
        let mut stride = 1;
        for (d, &n) in dims.iter().enumerate() {
            let c = ['x', 'y', 'z'][d];
            text += &format!("{c}p_link {} {}\n", guid(f, 0), guid(f, stride));
            if torus && n == 4 {
                text += &format!("{c}m_link {} {}\n", guid(f, 0), guid(f, stride * (n as usize - 1)));
            }
            stride *= n as usize;
        }
        text += extra;
        Torus2Qos::new(TorusConf::parse(&text, Path::new("t.conf")).unwrap())
    }

    /// The generator's `w × h` torus (sw(x + w·y); port 1 = +x, 2 = -x, 3 = +y,
    /// 4 = -y, 5 = host h(x + w·y)) without the + cables of `cut` (switch index,
    /// dimension).
    fn torus_cut(w: usize, h: usize, cut: &[(usize, usize)]) -> Fabric {
        torus_cut_without(w, h, cut, &[])
    }

    /// [`torus_cut`] without the switches `gone` (nor their cables and hosts).
    fn torus_cut_without(w: usize, h: usize, cut: &[(usize, usize)], gone: &[usize]) -> Fabric {
        let mut f = Fabric::new();
        let sw: Vec<Option<NodeId>> = (0..w * h).map(|i| (!gone.contains(&i)).then(|| f.add_switch(format!("sw{i}"), 5).unwrap())).collect();
        for i in 0..w * h {
            let (x, y) = (i % w, i / w);
            let plus = [(x + 1) % w + w * y, x + w * ((y + 1) % h)];
            for (d, &j) in plus.iter().enumerate() {
                if let (false, Some(a), Some(b)) = (cut.contains(&(i, d)), sw[i], sw[j]) {
                    f.connect(a, 2 * d as u32 + 1, b, 2 * d as u32 + 2, ibnetsim_fabric::LinkSpec::default()).unwrap();
                }
            }
        }
        for (i, s) in sw.iter().enumerate() {
            if let Some(s) = *s {
                let ca = f.add_hca(format!("h{i}"), 1).unwrap();
                f.connect(s, 5, ca, 1, ibnetsim_fabric::LinkSpec::default()).unwrap();
            }
        }
        f
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
        let conf = format!("torus 3 2 1\nxp_link {} {}\nyp_link {} {}\n", guid(&f33, 0), guid(&f33, 1), guid(&f33, 0), guid(&f33, 3));
        let e = Torus2Qos::new(TorusConf::parse(&conf, Path::new("t.conf")).unwrap());
        let err = e.route(&f33, &LidMap::assign(&f33, 0).unwrap()).unwrap_err().to_string();
        assert_eq!(err, "routing engine 'torus-2QoS' cannot route this fabric: t.conf describes 3x2x1 = 6 switches but the fabric has 9: check the radices");
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
        assert!(err.contains("does not join torus neighbours") || err.contains("could not be placed"), "{err}");
        // A ring broken twice falls apart: refused, as OpenSM does.
        let f = torus_cut(5, 3, &[(0, 0), (2, 0)]);
        let err = engine_for(&f, &[5, 3], true, "").route(&f, &LidMap::assign(&f, 0).unwrap()).unwrap_err().to_string();
        assert!(err.contains("the x ring at y=0 z=0 is broken in more than one place (cables missing at 2 switches towards -x, 2 towards +x)"), "{err}");
        // No configuration at all.
        let err = build_engine("torus-2qos", &RoutingOptions::default()).err().unwrap().to_string();
        assert!(err.starts_with("invalid option 'torus_config': the 'torus-2QoS' engine needs its torus-2QoS.conf"), "{err}");
        let o = RoutingOptions { torus_config: Some("t.conf".into()), ..RoutingOptions::default() };
        let err = build_engine("minhop", &o).err().unwrap().to_string();
        assert_eq!(err, "invalid option 'torus_config': is the configuration of the 'torus-2QoS' engine only, not of 'minhop'");
    }

    #[test]
    fn a_broken_ring_is_taken_the_long_way_round_with_the_same_sls() {
        // The cable sw0 (0,0) +x sw1 (1,0) is missing: (0,0) to (2,0), the
        // short way +x, goes -x round the ring instead; the SL stays the one
        // the coordinates give (0), and (1,0) to (0,0) goes +x over the
        // dateline (its SL, from the coordinates, stays 0 too: OpenSM's).
        let f = torus_cut(5, 3, &[(0, 0)]);
        let e = engine_for(&f, &[5, 3], true, "");
        let (lids, r) = testfab::routed(&e, &f, 0);
        check_routes(&f, &lids, &r.tables).unwrap();
        assert_eq!(route(&f, &lids, &r, 0, 2), ["sw0:2", "sw4:2", "sw3:2", "sw2:5"]);
        assert_eq!(route(&f, &lids, &r, 1, 0), ["sw1:1", "sw2:1", "sw3:1", "sw4:1", "sw0:5"]);
        assert_eq!((sl(&f, &lids, &r, 0, 2), sl(&f, &lids, &r, 1, 0)), (0, 0));
        assert_eq!(r.notes[1], "torus-2QoS: 1 ring(s) broken once by missing cables or switches: routes go the long way round them");
        // Other rows are untouched: (0,1) to (2,1) still +x.
        assert_eq!(route(&f, &lids, &r, 5, 7), ["sw5:1", "sw6:1", "sw7:5"]);
        // A broken ring closes no credit loop.
        let c = cdg(&f, &lids, &r, true);
        assert_eq!(c.cyclic_sccs, 0, "{:?}", c.cycle);
        // A mesh read as a torus is a torus with every ring broken at its dateline.
        let m = MeshParams::new(&[5, 3], false, 1).build().unwrap();
        let (lids, r) = testfab::routed(&engine_for(&m, &[5, 3], true, ""), &m, 0);
        check_routes(&m, &lids, &r.tables).unwrap();
        assert_eq!(route(&m, &lids, &r, 0, 4), ["sw0:1", "sw1:1", "sw2:1", "sw3:1", "sw4:5"]);
        assert_eq!(cdg(&m, &lids, &r, true).cyclic_sccs, 0);
    }

    #[test]
    fn a_missing_switch_is_passed_by_an_early_turn_on_the_turn_vl() {
        // The man page's 6x5 torus with T = (3,1) failed: from S = (1,1) to
        // D = (3,3) the path goes S-n-I-r-D, n = (2,1), I = (2,2), r = (3,2):
        // +x to n, where x cannot go on, an early +y turn to I, then the
        // illegal y-to-x turn at I onto r, and +y to D.
        let f = torus_cut_without(6, 5, &[], &[9]);
        let e = engine_for(&f, &[6, 5], true, "");
        let (lids, r) = testfab::routed(&e, &f, 0);
        check_routes(&f, &lids, &r.tables).unwrap();
        assert_eq!(route(&f, &lids, &r, 7, 21), ["sw7:1", "sw8:3", "sw14:1", "sw15:3", "sw21:5"]);
        // The missing switch breaks its x ring and its y ring.
        assert_eq!(
            r.notes[1..],
            [
                "torus-2QoS: no switch at (3,1,0): routes turn early around it, the hop after the turn on the turn VL",
                "torus-2QoS: 2 ring(s) broken once by missing cables or switches: routes go the long way round them"
            ]
        );
        // The hop after the illegal turn (I's +x port 1, entered from -y port 4) takes the turn VL.
        let t = r.sl2vl.as_ref().unwrap();
        let s = sl(&f, &lids, &r, 7, 21);
        assert_eq!((s, t.vl(sw(&f, 14), 4, 1, s)), (0, 2));
        // With it there is no credit loop; with only the dateline VLs (2 data
        // VLs, as OpenSM warns: "need 4" for a failed switch) there is.
        assert_eq!(cdg(&f, &lids, &r, true).cyclic_sccs, 0);
        let two = Routing { sl2vl: Some(e.place(&f).unwrap().sl2vl_tables_with(&f, 2).unwrap()), ..r.clone() };
        assert!(cdg(&f, &lids, &two, true).cyclic_sccs > 0);
        // Two missing switches not in one z column: refused, as by OpenSM.
        let f = torus_cut_without(6, 5, &[], &[9, 20]);
        let err = engine_for(&f, &[6, 5], true, "").route(&f, &LidMap::assign(&f, 0).unwrap()).unwrap_err().to_string();
        assert!(err.contains("switches are missing at (3,1,0) and (2,3,0), which are not in one z column"), "{err}");
    }

    /// The generator's torus with `dims` (dimension d on ports 2d+1/2d+2, the
    /// host on the next port) without the switches `gone`.
    fn torus_without(dims: &[usize], gone: &[usize]) -> Fabric {
        let n: usize = dims.iter().product();
        let host_port = 2 * dims.len() as u32 + 1;
        let mut f = Fabric::new();
        let sw: Vec<Option<NodeId>> =
            (0..n).map(|i| (!gone.contains(&i)).then(|| f.add_switch(format!("sw{i}"), host_port as u8).unwrap())).collect();
        let mut stride = 1;
        for (d, &r) in dims.iter().enumerate() {
            for i in 0..n {
                let x = i / stride % r;
                let j = i - x * stride + (x + 1) % r * stride;
                if let (Some(a), Some(b)) = (sw[i], sw[j]) {
                    f.connect(a, 2 * d as u32 + 1, b, 2 * d as u32 + 2, ibnetsim_fabric::LinkSpec::default()).unwrap();
                }
            }
            stride *= r;
        }
        for (i, s) in sw.iter().enumerate() {
            if let Some(s) = *s {
                let ca = f.add_hca(format!("h{i}"), 1).unwrap();
                f.connect(s, host_port, ca, 1, ibnetsim_fabric::LinkSpec::default()).unwrap();
            }
        }
        f
    }

    #[test]
    fn two_missing_cables_in_different_rings_leave_every_switch_in_place() {
        // Without the +x cables of sw4 (4,0) and sw29 (5,4) of the 6x5 torus,
        // squares cannot place every switch and the line rule must, by hop
        // counts; each switch belongs at its generator coordinates
        // (x + 6y), and each broken x ring is taken the long way round.
        let f = torus_cut(6, 5, &[(4, 0), (29, 0)]);
        let t = engine_for(&f, &[6, 5], true, "").place(&f).unwrap();
        for i in 0..30 {
            assert_eq!(t.coord_of(sw(&f, i)), Some([(i % 6) as u32, (i / 6) as u32, 0]), "sw{i}");
        }
        assert_eq!(t.broken_rings, 2);
        let (lids, r) = testfab::routed(&engine_for(&f, &[6, 5], true, ""), &f, 0);
        check_routes(&f, &lids, &r.tables).unwrap();
        assert_eq!(route(&f, &lids, &r, 4, 5), ["sw4:2", "sw3:2", "sw2:2", "sw1:2", "sw0:2", "sw5:5"]);
        // The same with the +y cable of sw6 (1,1) and the +x cable of sw9 (4,1) of the 5x5 torus.
        let f = torus_cut(5, 5, &[(6, 1), (9, 0)]);
        let t = engine_for(&f, &[5, 5], true, "").place(&f).unwrap();
        for i in 0..25 {
            assert_eq!(t.coord_of(sw(&f, i)), Some([(i % 5) as u32, (i / 5) as u32, 0]), "sw{i}");
        }
    }

    #[test]
    fn a_seed_that_places_a_switch_twice_is_refused() {
        // xp_link and yp_link both name sw1: it cannot be at (1,0) and (0,1).
        let f = MeshParams::new(&[3, 3], true, 1).build().unwrap();
        let conf = format!("torus 3 3 1\nxp_link {} {}\nyp_link {} {}\n", guid(&f, 0), guid(&f, 1), guid(&f, 0), guid(&f, 1));
        let e = Torus2Qos::new(TorusConf::parse(&conf, Path::new("t.conf")).unwrap());
        let err = e.route(&f, &LidMap::assign(&f, 0).unwrap()).unwrap_err().to_string();
        assert_eq!(err, "routing engine 'torus-2QoS' cannot route this fabric: the seed of t.conf puts 'sw1' at (0,1,0) twice or where another switch is; check its links");
    }

    #[test]
    fn port_order_may_name_a_switchs_last_port_but_not_one_past_it() {
        // The 3x3 torus's switches have ports 0-5 (5: the host). Naming port
        // 5 first changes nothing with one CA per switch; port 6 is no port.
        let (f, _) = fabric_and_engine(&[3, 3], true, 1, "");
        let (lids, plain) = testfab::routed(&engine_for(&f, &[3, 3], true, ""), &f, 0);
        let r = engine_for(&f, &[3, 3], true, "port_order 5\n").route(&f, &lids).unwrap();
        assert_eq!(r.tables, plain.tables);
        let err = engine_for(&f, &[3, 3], true, "port_order 6\n").route(&f, &lids).unwrap_err().to_string();
        assert_eq!(err, "routing engine 'torus-2QoS' cannot route this fabric: port_order lists port 6, but switch 'sw0' has only ports 0-5");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn tori_missing_a_switch_or_a_z_column_pair_are_routed_without_credit_loops(
            dims in prop::collection::vec(3usize..7, 2..=3),
            at in any::<prop::sample::Index>(),
            pair in any::<bool>(),
        ) {
            prop_assume!(!dims.contains(&4));
            let n: usize = dims.iter().product();
            // Not the seed switch nor its +x/+y/+z neighbours.
            let strides: Vec<usize> = (0..dims.len()).map(|d| dims[..d].iter().product()).collect();
            let g = at.index(n);
            prop_assume!(g != 0 && !strides.contains(&g));
            let mut gone = vec![g];
            if pair && dims.len() == 3 {
                let z = strides[2];
                let above = g - g / z % dims[2] * z + (g / z + 1) % dims[2] * z;
                prop_assume!(above != 0 && !strides.contains(&above));
                gone.push(above);
            }
            let f = torus_without(&dims, &gone);
            let e = engine_for(&f, &dims.iter().map(|&d| d as u32).collect::<Vec<_>>(), true, "");
            let lids = LidMap::assign(&f, 0).unwrap();
            let r = e.route(&f, &lids).map_err(|e| TestCaseError::fail(format!("{gone:?}: {e}")))?;
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            let c = cdg(&f, &lids, &r, true);
            prop_assert_eq!(c.cyclic_sccs, 0, "{:?}: {:?}", gone, c.cycle);
        }

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

        #[test]
        fn tori_missing_cables_route_around_them_or_refuse(
            w in 3usize..7,
            h in 3usize..7,
            cuts in prop::collection::vec((any::<prop::sample::Index>(), 0usize..2), 1..=2),
        ) {
            prop_assume!(w != 4 && h != 4);
            let mut cut: Vec<(usize, usize)> = cuts.iter().map(|(i, d)| (i.index(w * h), *d)).collect();
            cut.dedup();
            let f = torus_cut(w, h, &cut);
            let e = engine_for(&f, &[w as u32, h as u32], true, "");
            let lids = LidMap::assign(&f, 0).unwrap();
            // Two cables of one ring split it: refused, as OpenSM does. One
            // missing cable is always routed; two elsewhere may hide the
            // squares placement needs, and are then refused, never misrouted.
            let splits = cut.len() == 2 && cut[0].1 == cut[1].1 && if cut[0].1 == 0 { cut[0].0 / w == cut[1].0 / w } else { cut[0].0 % w == cut[1].0 % w };
            match e.route(&f, &lids) {
                Ok(r) => {
                    prop_assert!(!splits, "{:?} splits a ring but was routed", cut);
                    check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
                    let c = cdg(&f, &lids, &r, true);
                    prop_assert_eq!(c.cyclic_sccs, 0, "{:?}", c.cycle);
                }
                Err(err) => {
                    let err = err.to_string();
                    prop_assert!(cut.len() == 2, "{:?}: {}", cut, err);
                    prop_assert!(err.contains("broken in more than one place") == splits, "{:?}: {}", cut, err);
                }
            }
        }
    }
}
