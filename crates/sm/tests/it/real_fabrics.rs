//! The routing engines and the analysis on real fabrics from shared/data:
//! every engine reaches every CA LID without loops, up*/down* is free of credit
//! loops, minhop reproduces the credit loops ibutils documents for
//! `RhinoBased512Nodes.topo` and `IS3-loop.topo` (the latter only with the
//! switches' own routes in the graph), the real routing dumps check clean and
//! defects planted in one are found where they were planted, and the
//! 1,944-host fat tree is routed clean by minhop and updn but runs out of LIDs
//! at LMC 5.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use ibnetsim_fabric::io::{read_topology, Topology};
use ibnetsim_fabric::{Fabric, LinkEnd, NodeId};
use ibnetsim_sm::analysis::{analyze, trace_route, AnalysisOptions, AnalysisReport, DefectKind, SlView};
use ibnetsim_sm::{ForwardingTables, Lid, LidMap, RoutingOptions, SmConfig, SmError, Subnet, SubnetManager};

use crate::common::data_dir;

fn load(dir: &Path, rel: &str) -> Topology {
    read_topology(&dir.join("topologies").join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn route_and_check(topo: &Topology, engine: &str, file: Option<(&Path, Option<&Path>)>) -> AnalysisReport {
    let options = RoutingOptions {
        file: file.map(|f| f.0.to_path_buf()),
        file_key: file.and_then(|f| f.1.map(Path::to_path_buf)),
        topology_lids: topo.lids.clone(),
        ..RoutingOptions::default()
    };
    let config = SmConfig { routing_engine: engine.into(), lmc: 0, options, ..SmConfig::default() };
    let subnet = SubnetManager::new(config).configure(&topo.fabric).unwrap_or_else(|e| panic!("{engine}: {e}"));
    analyze(&topo.fabric, &subnet.lids, &subnet.tables, &SlView::modulo(1).unwrap(), &AnalysisOptions::default())
        .unwrap()
}

fn configure(topo: &Topology, engine: &str, lmc: u8) -> Subnet {
    let config = SmConfig {
        routing_engine: engine.into(),
        lmc,
        options: RoutingOptions::default(),
        ..SmConfig::default()
    };
    SubnetManager::new(config).configure(&topo.fabric).unwrap_or_else(|e| panic!("{engine}: {e}"))
}

fn assert_complete(r: &AnalysisReport, what: &str) {
    assert!(r.paths.reach.pairs > 0, "{what}: no pairs checked");
    assert_eq!(r.paths.reach.unreachable_pairs, 0, "{what}: {r}");
    assert_eq!(r.paths.reach.loop_pairs, 0, "{what}: {r}");
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn engines_route_every_real_fabric_completely_and_updn_has_no_credit_loop() {
    let Some(dir) = data_dir() else { return };
    for rel in [
        "ibutils/IS3-loop.topo",
        "ibutils/4-ary-2-tree.topo",
        "ibutils/RhinoBased512Nodes.topo",
        "ibutils/subnet.lst",
        "ib_flit_sim_small/is1_3l_32n/is1_3l_32n.topo",
        "ibsim/net.2sw2path4hca",
    ] {
        let topo = load(&dir, rel);
        for engine in ["minhop", "updn"] {
            let r = route_and_check(&topo, engine, None);
            assert_complete(&r, &format!("{rel} {engine}"));
            if engine == "minhop" {
                assert_eq!(r.paths.non_minimal_pairs, 0, "{rel}: minhop must be minimal");
            } else {
                assert!(r.credit_loops.cycle.is_none(), "{rel}: updn credit loop: {r}");
            }
        }
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn minhop_on_rhino_512_has_the_credit_loop_ibutils_describes() {
    // ibutils says only that this fabric "have credit loops" (its
    // ibmgtsim/tests/README): no cycle is spelled out. What it means is what
    // ibdm's CrdLoopAnalyze checks, CA-to-CA routes only; so the reported
    // cycle must be one of those routes' dependencies, checked here against
    // the cables and the forwarding tables rather than the graph code.
    let Some(dir) = data_dir() else { return };
    let topo = load(&dir, "ibutils/RhinoBased512Nodes.topo");
    let f = &topo.fabric;
    let minhop = configure(&topo, "minhop", 0);
    let r = analyze(f, &minhop.lids, &minhop.tables, &SlView::modulo(1).unwrap(), &AnalysisOptions::default()).unwrap();
    assert_complete(&r, "RhinoBased512Nodes minhop");
    assert!(!r.credit_loops.switch_lids, "CA-to-CA routes only, as CrdLoopAnalyze");
    assert!(r.has_defects());
    let cycle = r.credit_loops.cycle.as_ref().expect("minhop on RhinoBased512Nodes has a credit loop");
    assert!(cycle.len() >= 2);
    let end = |s: &str| {
        let (name, port) = s.rsplit_once('/').unwrap_or_else(|| panic!("{s}: not node/port"));
        let node = f.node_by_name(name).unwrap_or_else(|| panic!("{name}: no such node"));
        LinkEnd { node, port: port.parse().unwrap() }
    };
    for (i, step) in cycle.iter().enumerate() {
        let (from, to) = (end(&step.from), end(&step.to));
        assert_eq!(f.peer(from.node, from.port), Some(to), "step {i}: {} -> {} is not a cable", step.from, step.to);
        assert_eq!(step.vl, 0, "one data VL");
        let owner = minhop.lids.owner(step.dlid).unwrap_or_else(|| panic!("LID {:#x} has no owner", step.dlid));
        assert!(f.node(owner.end.node).kind.is_ca(), "step {i}: LID {:#x} is not a CA's", step.dlid);
        // The dependency: routes to that LID enter `to` and leave by the
        // next channel of the cycle.
        let next = end(&cycle[(i + 1) % cycle.len()].from);
        assert_eq!(next.node, to.node, "step {i}: the cycle does not continue where the channel ends");
        assert!(f.node(to.node).kind.is_switch());
        assert_eq!(minhop.tables.get(to.node, step.dlid), Some(next.port), "step {i}: LFT of {} for LID {:#x}", f.node(to.node).name, step.dlid);
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn real_dumps_check_clean() {
    let Some(dir) = data_dir() else { return };
    let t = dir.join("topologies");
    let osm = load(&dir, "ibutils/subnet.lst");
    let r = route_and_check(&osm, "file", Some((&t.join("ibutils/osm.fdbs"), None)));
    assert_complete(&r, "osm.fdbs");
    assert_eq!(r.paths.reach.pairs, 6, "3 CA ports, 6 ordered pairs");

    let small = load(&dir, "ib_flit_sim_small/is1_3l_32n/is1_3l_32n.topo");
    let f = t.join("ib_flit_sim_small/is1_3l_32n/is1_3l_32n.fdbs");
    let r = route_and_check(&small, "file", Some((&f, Some(&f.with_extension("fdbs.ini")))));
    assert_complete(&r, "is1_3l_32n");
    assert_eq!(r.paths.reach.pairs, 992);
    assert_eq!(r.paths.max_hops, 5);

    let big = load(&dir, "is4_3l_1944n/is4_3l_1944n.topo");
    let f = t.join("is4_3l_1944n/is4_3l_1944n.fdbs");
    let r = route_and_check(&big, "file", Some((&f, Some(&f.with_extension("fdbs.ini")))));
    assert_complete(&r, "is4_3l_1944n");
    assert_eq!(r.paths.reach.pairs, 1944 * 1943);
    assert_eq!(r.paths.max_hops, 5);
    assert_eq!(r.paths.non_minimal_pairs, 0);
    assert!(r.credit_loops.cycle.is_none(), "the fat tree's own tables have no credit loop");
}

fn owner(subnet: &Subnet, fabric: &Fabric, lid: Lid) -> String {
    let p = subnet.lids.owner(lid).unwrap_or_else(|| panic!("LID {lid:#x} has no owner"));
    fabric.node(p.end.node).name.clone()
}

/// ibutils' credit-loop demo: hosts on SW1, SW2 and SW3; SW1 cabled to the
/// chassis leaf L1, SW3 to leaf L2 and SW2 to both, so SW2 closes a cycle
/// L1 - SW2 - L2 - spine - L1 beside the chassis' own spines. Minimal CA-to-CA
/// routes never turn from a spine back down into SW2 (that is 4 hops where 2
/// do), so the loop closes only through a route a spine switch sends itself.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn is3_loop_minhop_credit_loop_through_sw2_and_a_spine_updn_clean() {
    let Some(dir) = data_dir() else { return };
    let topo = load(&dir, "ibutils/IS3-loop.topo");
    let f = &topo.fabric;
    let with_switches = AnalysisOptions { cdg_switch_lids: true, ..AnalysisOptions::default() };
    let one_vl = SlView::modulo(1).unwrap();
    let minhop = configure(&topo, "minhop", 0);

    // CA-to-CA routes only (what ibdm's CrdLoopAnalyze checks): no cycle.
    let ca_only = analyze(f, &minhop.lids, &minhop.tables, &one_vl, &AnalysisOptions::default()).unwrap();
    assert_complete(&ca_only, "IS3-loop minhop");
    assert!(ca_only.credit_loops.cycle.is_none(), "{ca_only}");
    assert!(!ca_only.credit_loops.switch_lids);

    let r = analyze(f, &minhop.lids, &minhop.tables, &one_vl, &with_switches).unwrap();
    assert!(r.has_defects());
    assert!(r.credit_loops.switch_lids);
    assert_eq!(r.credit_loops.cyclic_sccs, 1, "{r}");
    assert_eq!(r.credit_loops.channels_in_cycles, 10, "{r}");
    let steps: Vec<(&str, &str, u8, Lid)> = r
        .credit_loops
        .cycle
        .as_ref()
        .expect("a cycle is reported")
        .iter()
        .map(|s| (s.from.as_str(), s.to.as_str(), s.vl, s.dlid))
        .collect();
    assert_eq!(
        steps,
        [
            ("SW4/leaf1/U1/13", "SW4/spine2/U3/3", 0, 0x19),
            ("SW4/spine2/U3/2", "SW4/leaf2/U1/13", 0, 0x0d),
            ("SW4/leaf2/U1/7", "SW2/U1/19", 0, 0x01),
            ("SW2/U1/13", "SW4/leaf1/U1/7", 0, 0x2c),
        ],
        "{r}"
    );
    // The LIDs: a host of SW3, a host of SW2, a host of SW1, and spine2 itself.
    let names: Vec<String> = [0x19, 0x0d, 0x01, 0x2c].iter().map(|&l| owner(&minhop, f, l)).collect();
    assert_eq!(names, ["H-3-1/U1", "H-2-1/U1", "H-1/U1", "SW4/spine2/U3"]);
    // The turn that CA routes never make: spine2's own packets for H-2-1
    // go down to leaf2 and on to SW2 (either leaf is 2 hops from SW2).
    let spine2 = f.node_by_name("SW4/spine2/U3").unwrap();
    let route = trace_route(f, &minhop.lids, &minhop.tables, LinkEnd { node: spine2, port: 0 }, 0x0d);
    assert_eq!(route.describe(f), "SW4/spine2/U3/2 -> SW4/leaf2/U1/7 -> SW2/U1/1 -> H-2-1/U1/1");

    let updn = configure(&topo, "updn", 0);
    let r = analyze(f, &updn.lids, &updn.tables, &one_vl, &with_switches).unwrap();
    assert_complete(&r, "IS3-loop updn");
    assert!(r.credit_loops.cycle.is_none() && !r.has_defects(), "{r}");
}

/// Shortest switch path from `a` to `b` avoiding `avoid`, by BFS.
fn switch_path(f: &Fabric, a: NodeId, b: NodeId, avoid: &[NodeId]) -> Vec<NodeId> {
    let mut prev: HashMap<NodeId, NodeId> = HashMap::from([(a, a)]);
    let mut queue = VecDeque::from([a]);
    while let Some(x) = queue.pop_front() {
        if x == b {
            let mut path = vec![b];
            while *path.last().unwrap() != a {
                path.push(prev[path.last().unwrap()]);
            }
            path.reverse();
            return path;
        }
        for (_, peer) in f.switch_neighbors(x) {
            if !avoid.contains(&peer.node) && !prev.contains_key(&peer.node) {
                prev.insert(peer.node, x);
                queue.push_back(peer.node);
            }
        }
    }
    panic!("no switch path from {} to {}", f.node(a).name, f.node(b).name)
}

/// The lowest-numbered port of `from` cabled to `to`, and the port it arrives at.
fn port_to(f: &Fabric, from: NodeId, to: NodeId) -> (u8, u8) {
    f.switch_neighbors(from).find(|(_, e)| e.node == to).map(|(p, e)| (p, e.port)).expect("neighbours")
}

/// OpenSM's own tables for the `subnet.lst` fabric, with defects planted by
/// hand: the check must find each, naming the LID and the switches.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn defects_planted_in_osm_fdbs_are_found_where_they_were_planted() {
    let Some(dir) = data_dir() else { return };
    let topo = load(&dir, "ibutils/subnet.lst");
    let f = &topo.fabric;
    let options = RoutingOptions {
        file: Some(dir.join("topologies/ibutils/osm.fdbs")),
        topology_lids: topo.lids.clone(),
        ..RoutingOptions::default()
    };
    let subnet = SubnetManager::new(SmConfig {
        routing_engine: "file".into(),
        lmc: 0,
        options,
        ..SmConfig::default()
    }).configure(f).unwrap();
    let check = |tables: &ForwardingTables| {
        analyze(f, &subnet.lids, tables, &SlView::default(), &AnalysisOptions::default()).unwrap()
    };
    assert!(!check(&subnet.tables).has_defects());
    // The three CA ports: (port, LID, the switch it is cabled to).
    let cas: Vec<(LinkEnd, Lid, NodeId)> =
        subnet.lids.ca_ports(f).map(|p| (p.end, p.base, f.peer(p.end.node, p.end.port).unwrap().node)).collect();
    assert_eq!(cas.len(), 3);
    let name = |n: NodeId| f.node(n).name.clone();

    // 1. Forwarding loop: the second switch on the route from CA 0 to CA 1
    //    sends CA 1's LID back to the first.
    let (src, dlid) = (cas[0].0, cas[1].1);
    let route = trace_route(f, &subnet.lids, &subnet.tables, src, dlid);
    assert!(route.hops.len() >= 3, "CA 0 to CA 1 crosses two switches: {}", route.describe(f));
    let (x, y) = (route.hops[1], route.hops[2].node);
    let mut looped = subnet.tables.clone();
    let (back, _) = port_to(f, y, x.node);
    looped.set(y, dlid, back);
    let r = check(&looped);
    assert!(r.has_defects());
    assert_eq!(r.paths.reach.lids_with_loops, 1, "{r}");
    assert!(r.paths.reach.loop_pairs >= 1, "{r}");
    assert_eq!(r.paths.reach.unreachable_pairs, 0, "{r}");
    let ex = r.paths.reach.examples.iter().find(|e| e.kind == Some(DefectKind::Loop)).expect("a loop example");
    assert_eq!(ex.dlid, dlid);
    let src_name = format!("{}/{}", name(src.node), src.port);
    let want = format!("{src_name} -> {}/{} -> {}/{back} -> {} again (forwarding loop)", name(x.node), x.port, name(y), name(x.node));
    assert_eq!(ex.route, want, "{r}");

    // 2. Credit loop: a ring of switches through the three CA switches (or,
    //    for a switch with a single uplink, through the switch above it),
    //    every CA LID routed clockwise around it. Each route now runs on the
    //    ring, and the three sources between them make every turn of it.
    let entry = |home: NodeId| -> (NodeId, Option<u8>) {
        let mut up: Vec<NodeId> = f.switch_neighbors(home).map(|(_, e)| e.node).collect();
        up.dedup();
        match up[..] {
            [only] => (only, Some(port_to(f, only, home).0)),
            _ => (home, None),
        }
    };
    let entries: Vec<(NodeId, Option<u8>)> = cas.iter().map(|c| entry(c.2)).collect();
    let (ea, eb, ec) = (entries[0].0, entries[1].0, entries[2].0);
    assert!(ea != eb && eb != ec && ea != ec, "the CAs enter the fabric at three switches");
    let p1 = switch_path(f, ea, eb, &[ec]);
    let p2 = switch_path(f, eb, ec, &p1.iter().copied().filter(|&s| s != eb).collect::<Vec<_>>());
    let used: Vec<NodeId> = p1.iter().chain(&p2).copied().filter(|&s| s != ea).collect();
    let p3 = switch_path(f, ec, ea, &used);
    let ring: Vec<NodeId> = p1.iter().chain(&p2[1..]).chain(&p3[1..p3.len() - 1]).copied().collect();
    let mut clockwise = subnet.tables.clone();
    for (i, &s) in ring.iter().enumerate() {
        let (out, _) = port_to(f, s, ring[(i + 1) % ring.len()]);
        for (&(_, lid, _), &(e, stub)) in cas.iter().zip(&entries) {
            match (s == e, stub) {
                (false, _) => clockwise.set(s, lid, out),
                (true, Some(down)) => clockwise.set(s, lid, down),
                (true, None) => {}
            }
        }
    }
    let r = check(&clockwise);
    assert_eq!(r.paths.reach.reachable_pairs, 6, "{r}");
    assert_eq!(r.paths.reach.lids_with_loops, 0, "{r}");
    let k = &r.credit_loops;
    assert_eq!((k.cyclic_sccs, k.channels_in_cycles), (1, ring.len() as u64), "{r}");
    let links: Vec<(String, String)> = (0..ring.len())
        .map(|i| {
            let (a, b) = (ring[i], ring[(i + 1) % ring.len()]);
            let (pa, pb) = port_to(f, a, b);
            (format!("{}/{pa}", name(a)), format!("{}/{pb}", name(b)))
        })
        .collect();
    let cycle = k.cycle.as_ref().expect("the ring is reported");
    let start = links.iter().position(|l| l.0 == cycle[0].from).expect("the cycle starts on the ring");
    let got: Vec<(String, String)> = cycle.iter().map(|s| (s.from.clone(), s.to.clone())).collect();
    let want: Vec<(String, String)> = links[start..].iter().chain(&links[..start]).cloned().collect();
    assert_eq!(got, want, "{r}");
    let ca_lids: Vec<Lid> = cas.iter().map(|c| c.1).collect();
    assert!(cycle.iter().all(|s| s.vl == 0 && ca_lids.contains(&s.dlid)), "{r}");
    assert!(r.has_defects());
}

/// The 1,944-host fat tree routed by our own engines (not its shipped
/// tables): complete, minimal and free of credit loops.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn is4_1944_hosts_routed_by_minhop_and_updn_is_clean() {
    let Some(dir) = data_dir() else { return };
    let topo = load(&dir, "is4_3l_1944n/is4_3l_1944n.topo");
    for engine in ["minhop", "updn"] {
        let r = route_and_check(&topo, engine, None);
        assert_complete(&r, engine);
        assert_eq!(r.paths.reach.pairs, 1944 * 1943, "{engine}");
        assert_eq!(r.paths.max_hops, 5, "{engine}");
        assert_eq!(r.paths.non_minimal_pairs, 0, "{engine}: {r}");
        assert!(r.credit_loops.cycle.is_none(), "{engine}: {r}");
        assert!(!r.has_defects() && !r.has_warnings(), "{engine}: {r}");
    }
}

/// 1,944 CA ports at LMC 5 need (1,944 + 1) · 32 + 270 − 1 = 62,509 LIDs, more
/// than the 49,151 unicast LIDs; LMC 4 needs 31,389 and fits.
#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn is4_1944_hosts_at_lmc_5_run_out_of_lids() {
    let Some(dir) = data_dir() else { return };
    let topo = load(&dir, "is4_3l_1944n/is4_3l_1944n.topo");
    let config = SmConfig {
        routing_engine: "minhop".into(),
        lmc: 5,
        options: RoutingOptions::default(),
        ..SmConfig::default()
    };
    let err = SubnetManager::new(config).configure(&topo.fabric).unwrap_err();
    assert!(
        matches!(err, SmError::LmcTooLarge { lmc: 5, needed: 62_509, max: 49_151, fits: Some(4) }),
        "{err:?}"
    );
    assert!(err.to_string().ends_with("use LMC 4 or lower (the --lmc option, or `lmc` in a scenario)"), "{err}");
    assert_eq!(LidMap::assign(&topo.fabric, 4).unwrap().top_lid(), 31_389);
}

/// Without the data the tests that need it are ignored (and reported as
/// such); under `CI=true` its absence is a failure.
#[cfg(not(shared_data))]
#[test]
fn shared_data_is_present_under_ci() {
    assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "CI=true but shared/data is not beside the repository");
}
