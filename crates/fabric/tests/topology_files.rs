//! Every topology file in the shared test data loads, with the node and link
//! counts that the data's README (and the files' own structure) give.
//!
//! The data is found through `IBNETSIM_SHARED_DATA` or as `shared/data` in an
//! ancestor of this crate (the repository is cloned beside `shared/`). When it
//! is missing the tests are skipped, except under `CI=true`, where that fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ibnetsim_fabric::io::{
    parse_netfile, read_topology, read_topology_with, write_netfile, ReadOptions, Topology, TopologyFormat,
};
use ibnetsim_fabric::{Fabric, LinkEnd, LinkSpeed, LinkWidth, NodeId};

fn shared_data() -> Option<PathBuf> {
    let found = match std::env::var_os("IBNETSIM_SHARED_DATA") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_dir()),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().map(|a| a.join("shared/data")).find(|p| p.is_dir()),
    };
    if found.is_none() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true but the shared test data is missing");
        eprintln!("shared test data not found; skipping");
    }
    found
}

fn load(rel: &str) -> Option<Topology> {
    let p = shared_data()?.join("topologies").join(rel);
    Some(read_topology(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// (switches, channel adapters, links)
fn counts(f: &Fabric) -> (usize, usize, usize) {
    (f.switches().count(), f.cas().count(), f.links().len())
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn ibsim_examples() {
    let cases = [
        ("ibsim/net", (2, 2, 4)),
        ("ibsim/net.1", (1, 2, 2)),
        ("ibsim/net.2sw2path", (2, 2, 4)),
        ("ibsim/net.2sw2path4hca", (2, 4, 6)),
        ("ibsim/net.2sw2path4hca2port", (2, 2, 6)),
    ];
    for (rel, want) in cases {
        let Some(t) = load(rel) else { return };
        assert_eq!(t.format, TopologyFormat::NetFile, "{rel}");
        assert_eq!(counts(&t.fabric), want, "{rel}");
        t.fabric.check_connected().unwrap();
        // No w= in these files: the 1x SDR default.
        assert!(t.fabric.links().iter().all(|l| (l.spec.width, l.spec.speed) == (LinkWidth::X1, LinkSpeed::Sdr)));
    }
    let t = load("ibsim/net.2sw2path4hca2port").unwrap();
    let f = &t.fabric;
    let hca1 = f.node_by_name("Hca1").unwrap();
    let sw1 = f.node_by_name("Switch1").unwrap();
    assert_eq!(f.peer(hca1, 2), Some(LinkEnd { node: sw1, port: 2 }));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn ibnetdiscover_capture() {
    let Some(t) = load("ibnetdiscover-sample/ibnetdiscover.out") else { return };
    let f = &t.fabric;
    assert_eq!(counts(f), (1, 2, 2));
    let sw = f.node_by_name("S-0008f10500200134").unwrap();
    let node1 = f.resolve("node1").unwrap();
    let node2 = f.resolve("node2").unwrap();
    assert_eq!(f.node(sw).guid, 0x0008_f105_0020_0134);
    assert_eq!(f.node(sw).system_guid, 0x0008_f105_0020_0135);
    assert_eq!(f.node(node2).guid, 0x001e_0bff_ff4c_afc0);
    // node2 is LID 3 on switch port 4, node1 LID 8 on port 5; the switch is LID 1.
    assert_eq!(f.peer(sw, 4), Some(LinkEnd { node: node2, port: 1 }));
    assert_eq!(f.peer(sw, 5), Some(LinkEnd { node: node1, port: 1 }));
    let mut lids = t.lids.clone();
    lids.sort();
    let mut want = vec![(sw, 0, 1, 0), (node1, 1, 8, 0), (node2, 1, 3, 0)];
    want.sort();
    assert_eq!(lids, want);
    assert!(f.links().iter().all(|l| (l.spec.width, l.spec.speed) == (LinkWidth::X4, LinkSpeed::Fdr)));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn opensm_subnet_lst() {
    let Some(t) = load("ibutils/subnet.lst") else { return };
    let f = &t.fabric;
    assert_eq!(t.format, TopologyFormat::SubnetLst);
    assert_eq!(counts(f), (62, 3, 172));
    // 61 MT43132 8-port switches and one MT47396 with Ports:18 (hex: 24 ports),
    // whose port PN:17 (hex: 23) is cabled.
    let big: Vec<NodeId> = f.switches().filter(|&s| f.node(s).num_ports != 8).collect();
    assert_eq!(big.len(), 1);
    assert_eq!(f.node(big[0]).num_ports, 24);
    assert_eq!(f.node(big[0]).description, "MT47396 Infiniscale-III Mellanox Technologies");
    assert!(f.link_at(big[0], 23).is_some());
    assert!(f.links().iter().all(|l| (l.spec.width, l.spec.speed) == (LinkWidth::X4, LinkSpeed::Sdr)));
    f.check_connected().unwrap();
    // osm.fdbs routes exactly the LIDs that subnet.lst assigns (62 switches + 3 CA ports).
    let lids: BTreeSet<u16> = t.lids.iter().map(|l| l.2).collect();
    assert_eq!((t.lids.len(), lids.len()), (65, 65));
    let fdbs = std::fs::read_to_string(shared_data().unwrap().join("topologies/ibutils/osm.fdbs")).unwrap();
    let first_switch: BTreeSet<u16> = fdbs
        .lines()
        .skip(2)
        .take_while(|l| !l.contains("dump_ucast_routes"))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|h| u16::from_str_radix(h.trim_start_matches("0x"), 16).ok())
        .collect();
    assert_eq!(lids, first_switch);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn ibdm_topologies() {
    let cases = [
        ("ibutils/4-ary-2-tree.topo", (8, 16, 32)),
        // Two host links and one leaf-to-spine link fewer; H-10 and H-15 are never named.
        ("ibutils/4-ary-2-tree-missing-sw-link.topo", (8, 14, 29)),
        // 3 MTS2400 + MTS14400 with leaves 3-12 removed (2 leaf + 6 spine ASICs);
        // 60 cables + 2 leaves x 12 internal uplinks.
        ("ibutils/IS3-loop.topo", (11, 36, 84)),
        // 12 MTS14400 x 18 ASICs; 512 host cables + 512 inter-chassis cables (each
        // listed from both ends) + 12 x 144 internal links.
        ("ibutils/RhinoBased512Nodes.topo", (216, 512, 2752)),
        ("ib_flit_sim_small/is1_1l_8n/is1_1l_8n.topo", (1, 8, 8)),
        ("ib_flit_sim_small/is1_3l_32n/is1_3l_32n.topo", (20, 32, 96)),
        // 108 MTS3600 + 3 MIS5600 x 54 ASICs; 3888 cables + 3 x 648 internal links.
        ("is4_3l_1944n/is4_3l_1944n.topo", (270, 1944, 5832)),
    ];
    for (rel, want) in cases {
        let Some(t) = load(rel) else { return };
        assert_eq!(t.format, TopologyFormat::Ibdm, "{rel}");
        assert_eq!(counts(&t.fabric), want, "{rel}");
        if !rel.contains("missing") {
            t.fabric.check_connected().unwrap_or_else(|e| panic!("{rel}: {e}"));
        }
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn rhino_cable_tags() {
    let Some(t) = load("ibutils/RhinoBased512Nodes.topo") else { return };
    let f = &t.fabric;
    let spec = |host: &str| {
        let h = f.node_by_name(host).unwrap();
        let l = f.link(f.link_at(h, 1).unwrap()).spec;
        (l.width, l.speed)
    };
    assert_eq!(spec("H-1/U1"), (LinkWidth::X8, LinkSpeed::Ddr));
    assert_eq!(spec("H-2/U1"), (LinkWidth::X12, LinkSpeed::Sdr));
    assert_eq!(spec("H-3/U1"), (LinkWidth::X4, LinkSpeed::Sdr));
}

/// `**.<name>.pktfwd.fdbIndex = <row>` → names.
fn fdbs_ini_switches(path: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("**.")?.split_once(".pktfwd.fdbIndex").map(|(n, _)| n.to_string()))
        .collect()
}

fn omnet_switch_names(f: &Fabric) -> BTreeSet<String> {
    f.switches().map(|s| f.node(s).name.replace(['/', '-'], "_")).collect()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn names_match_ib_flit_sim() {
    let Some(data) = shared_data() else { return };
    let dir = data.join("topologies/is4_3l_1944n");
    let t = read_topology(&dir.join("is4_3l_1944n.topo")).unwrap();
    let f = &t.fabric;
    let want = fdbs_ini_switches(&dir.join("is4_3l_1944n.fdbs.ini"));
    assert_eq!(want.len(), 270);
    assert!(want.contains("SW_2_0_U1") && want.contains("SWS_0_leaf1_U1"));
    assert_eq!(omnet_switch_names(f), want);
    // Hosts are H-n/U1 and hang off leaf ports P1..P18.
    let h1 = f.node_by_name("H-1/U1").unwrap();
    let sw = f.node_by_name("SW-2-0/U1").unwrap();
    assert_eq!(f.peer(sw, 1), Some(LinkEnd { node: h1, port: 1 }));
    // SW-2-0 P19 is chassis SWS_0 connector L1/P1, which is leaf1's port 1.
    let leaf = f.node_by_name("SWS_0/leaf1/U1").unwrap();
    assert_eq!(f.peer(sw, 19), Some(LinkEnd { node: leaf, port: 1 }));
    // One system GUID per chassis.
    let chassis: BTreeSet<u64> =
        f.switches().filter(|&s| f.node(s).name.starts_with("SWS_")).map(|s| f.node(s).system_guid).collect();
    assert_eq!(chassis.len(), 3);
    // Chassis-internal links are QDR (tagged -10G- in MIS5600.ibnl); host cables keep IBDM's 4x SDR.
    let spine = f.node_by_name("SWS_0/spine1/U1").unwrap();
    assert_eq!(f.link(f.link_at(spine, 1).unwrap()).spec.speed, LinkSpeed::Qdr);
    assert_eq!(f.link(f.link_at(h1, 1).unwrap()).spec.speed, LinkSpeed::Sdr);

    let dir = data.join("topologies/ib_flit_sim_small/is1_3l_32n");
    let t = read_topology(&dir.join("is1_3l_32n.topo")).unwrap();
    assert_eq!(omnet_switch_names(&t.fabric), fdbs_ini_switches(&dir.join("is1_3l_32n.fdbs.ini")));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn ibnl_lookup_order_and_builtin_fallback() {
    let Some(data) = shared_data() else { return };
    // A copy of the 4-ary-2-tree outside the data folder has no ibnl/ beside it
    // and must load from the built-in netlists alone.
    let dir = std::env::temp_dir().join(format!("ibnetsim-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let topo = dir.join("tree.topo");
    std::fs::copy(data.join("topologies/ibutils/4-ary-2-tree.topo"), &topo).unwrap();
    let t = read_topology(&topo).unwrap();
    assert_eq!(counts(&t.fabric), (8, 16, 32));

    // An .ibnl next to the .topo wins over the built-in one: make MTS800 a 10-port box.
    let ports: String = (1..=10).map(|p| format!("  {p} -> P{p}\n")).collect();
    let custom = format!("TOPSYSTEM MTS800\nNODE SW 10 X U1\n{ports}");
    std::fs::write(dir.join("mine.ibnl"), &custom).unwrap();
    let t = read_topology(&topo).unwrap();
    assert!(t.fabric.switches().all(|s| t.fabric.node(s).num_ports == 10));
    std::fs::remove_file(dir.join("mine.ibnl")).unwrap();

    // Caller directories come before the built-in library.
    let extra = dir.join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(extra.join("c.ibnl"), "TOPSYSTEM Cougar\nNODE CA 4 X U1\n 1 -> P1\n").unwrap();
    let t = read_topology_with(&topo, &ReadOptions { ibnl_dirs: vec![extra.clone()], ..Default::default() }).unwrap();
    assert!(t.fabric.cas().all(|h| t.fabric.node(h).num_ports == 4));

    // An unknown type names the file, the line, the type and the places searched.
    std::fs::write(&topo, "MTS800 S\n   P1 -> Gizmo G P1\n").unwrap();
    let e = read_topology_with(&topo, &ReadOptions { ibnl_dirs: vec![extra.clone()], ..Default::default() }).unwrap_err().to_string();
    let want = format!(
        "{}:2: unknown system type 'Gizmo': no TOPSYSTEM of that name; looked in {}/*.ibnl, {}/ibnl/*.ibnl, {}/*.ibnl, the built-in library (",
        topo.display(),
        dir.display(),
        dir.display(),
        extra.display()
    );
    assert!(e.starts_with(&want), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Node-by-node, port-by-port equality (link ids and end order may differ).
fn assert_same_fabric(a: &Fabric, b: &Fabric) {
    assert_eq!(a.num_nodes(), b.num_nodes());
    assert_eq!(a.links().len(), b.links().len());
    for id in a.ids() {
        let (x, y) = (a.node(id), b.node(id));
        assert_eq!(
            (x.kind, &x.name, x.num_ports, x.guid, x.system_guid, &x.description),
            (y.kind, &y.name, y.num_ports, y.guid, y.system_guid, &y.description)
        );
        for p in 1..=x.num_ports {
            assert_eq!(a.peer(id, p), b.peer(id, p), "{} port {p}", x.name);
            if let (Some(la), Some(lb)) = (a.link_at(id, p), b.link_at(id, p)) {
                assert_eq!(a.link(la).spec, b.link(lb).spec);
            }
        }
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn real_fabrics_survive_a_netfile_round_trip() {
    for rel in [
        "ibnetdiscover-sample/ibnetdiscover.out",
        "ibutils/subnet.lst",
        "is4_3l_1944n/is4_3l_1944n.topo",
        "ibutils/IS3-loop.topo",
    ] {
        let Some(t) = load(rel) else { return };
        let mut out = Vec::new();
        write_netfile(&t.fabric, Some(&t.lids), &mut out).unwrap();
        let back = parse_netfile(std::str::from_utf8(&out).unwrap(), None).unwrap();
        assert_same_fabric(&t.fabric, &back.fabric);
        let (mut l1, mut l2): (Vec<(NodeId, u8, u16, u8)>, _) = (t.lids.clone(), back.lids.clone());
        l1.sort();
        l2.sort();
        assert_eq!(l1, l2, "{rel}");
    }
}

/// Without the data the tests that need it are ignored (and reported as
/// such); under `CI=true` its absence is a failure.
#[cfg(not(shared_data))]
#[test]
fn shared_data_is_present_under_ci() {
    assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "CI=true but shared/data is not beside the repository");
}
