//! The routing engines and the analysis on real fabrics from shared/data:
//! every engine reaches every CA LID without loops, up*/down* is free of credit
//! loops, minhop reproduces the credit loops ibutils documents for
//! `RhinoBased512Nodes.topo`, and the real routing dumps check clean.

use std::path::Path;

use ibnetsim_fabric::io::{read_topology, Topology};
use ibnetsim_sm::analysis::{analyze, AnalysisOptions, AnalysisReport, SlView};
use ibnetsim_sm::{RoutingOptions, SmConfig, SubnetManager};

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
    let config = SmConfig { routing_engine: engine.into(), lmc: 0, options };
    let subnet = SubnetManager::new(config).configure(&topo.fabric).unwrap_or_else(|e| panic!("{engine}: {e}"));
    analyze(&topo.fabric, &subnet.lids, &subnet.tables, &SlView::modulo(1).unwrap(), &AnalysisOptions::default())
        .unwrap()
}

fn assert_complete(r: &AnalysisReport, what: &str) {
    assert!(r.paths.reach.pairs > 0, "{what}: no pairs checked");
    assert_eq!(r.paths.reach.unreachable_pairs, 0, "{what}: {r}");
    assert_eq!(r.paths.reach.loop_pairs, 0, "{what}: {r}");
}

#[test]
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
fn minhop_on_rhino_512_has_the_credit_loop_ibutils_describes() {
    let Some(dir) = data_dir() else { return };
    let topo = load(&dir, "ibutils/RhinoBased512Nodes.topo");
    let r = route_and_check(&topo, "minhop", None);
    let cycle = r.credit_loops.cycle.as_ref().expect("minhop on RhinoBased512Nodes has a credit loop");
    assert!(cycle.len() >= 2);
    assert!(r.has_defects());
}

#[test]
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
