//! `ftree` on generated k-ary n-trees (issue 12): complete, loop-free,
//! minimal up*/down* routes, no credit loop, and a uniform-traffic throughput
//! bound of 1.0, where `minhop` leaves spine layers idle.

use std::time::Instant;

use ibnetsim_fabric::gen::{switch_level, FatTreeParams};
use ibnetsim_fabric::Fabric;
use ibnetsim_sm::analysis::{analyze, uniform_loads, AnalysisOptions, LoadLids, SlView};
use ibnetsim_sm::{RoutingOptions, SmConfig, SmError, Subnet, SubnetManager};

fn configure(f: &Fabric, engine: &str) -> Result<Subnet, SmError> {
    let config = SmConfig { routing_engine: engine.into(), lmc: 0, options: RoutingOptions::default(), ..SmConfig::default() };
    SubnetManager::new(config).configure(f)
}

fn bound(f: &Fabric, s: &Subnet) -> f64 {
    uniform_loads(f, &s.lids, &s.tables, LoadLids::Base).unwrap().max_scale()
}

/// Every entry for a CA LID that leads down (to a higher level) is followed
/// by entries that lead down: no route turns up after going down.
fn assert_up_then_down(f: &Fabric, s: &Subnet, what: &str) {
    let level = |n| switch_level(f.node(n)).unwrap();
    for ca in s.lids.ca_ports(f) {
        for lid in ca.lids() {
            for sw in f.switches() {
                let port = s.tables.get(sw, lid).unwrap();
                let next = f.peer(sw, port).unwrap().node;
                if f.node(next).kind.is_switch() && level(next) > level(sw) {
                    let after = f.peer(next, s.tables.get(next, lid).unwrap()).unwrap().node;
                    assert!(
                        !f.node(after).kind.is_switch() || level(after) > level(next),
                        "{what}: LID {lid} turns up at {} after coming down from {}",
                        f.node(next).name,
                        f.node(sw).name
                    );
                }
            }
        }
    }
}

fn check_tree(k: u8, n: u8) {
    let what = format!("{k}-ary {n}-tree");
    let f = FatTreeParams::new(k, n).build().unwrap();
    let t = Instant::now();
    let s = configure(&f, "ftree").unwrap_or_else(|e| panic!("{what}: {e}"));
    let took = t.elapsed();
    let hosts = f.cas().count() as u64;
    let r = analyze(&f, &s.lids, &s.tables, &SlView::default(), &AnalysisOptions::default()).unwrap();
    assert_eq!(r.paths.reach.pairs, hosts * (hosts - 1), "{what}");
    assert_eq!(r.paths.reach.reachable_pairs, r.paths.reach.pairs, "{what}: {r}");
    assert_eq!(r.paths.reach.lids_with_loops, 0, "{what}: {r}");
    assert_eq!(r.paths.non_minimal_pairs, 0, "{what}: {r}");
    assert!(r.credit_loops.cycle.is_none(), "{what}: {r}");
    assert!(!r.has_defects(), "{what}: {r}");
    assert_up_then_down(&f, &s, &what);
    let ftree = bound(&f, &s);
    assert!((ftree - 1.0).abs() < 1e-9, "{what}: throughput bound {ftree}");
    // Deterministic.
    let again = configure(&f, "ftree").unwrap();
    assert_eq!(again.tables, s.tables, "{what}");
    let minhop = bound(&f, &configure(&f, "minhop").unwrap());
    eprintln!("{what}: ftree bound {ftree:.4} (minhop {minhop:.4}), routed in {took:.2?}; notes: {:?}", s.notes);
}

#[test]
fn binary_trees_reach_full_throughput() {
    for n in 2..=4 {
        check_tree(2, n);
    }
}

#[test]
fn four_ary_trees_reach_full_throughput() {
    for n in 2..=4 {
        check_tree(4, n);
    }
}

#[test]
fn four_ary_five_tree_reaches_full_throughput() {
    check_tree(4, 5);
}

#[test]
fn switch_lid_routes_are_complete() {
    // Up*/down* does not reach every switch LID of a multi-rooted tree; the
    // rest take minimum-hop ports, and the engine says how many.
    let f = FatTreeParams::new(2, 3).build().unwrap();
    let s = configure(&f, "ftree").unwrap();
    let options = AnalysisOptions { cdg_switch_lids: true, ..AnalysisOptions::default() };
    let r = analyze(&f, &s.lids, &s.tables, &SlView::default(), &options).unwrap();
    assert_eq!(r.paths.reach.lids_with_loops, 0, "{r}");
    // Those minimum-hop routes leave up*/down*: with management traffic to
    // switches in the graph, the check finds a credit loop (CA traffic alone has none).
    assert!(r.credit_loops.cycle.is_some(), "{r}");
    assert!(s.notes.iter().any(|n| n.contains("switch-to-switch routes have no up*/down* path")), "{:?}", s.notes);
    for sw in f.switches() {
        for other in f.switches() {
            let lid = s.lids.switch_lid(other).unwrap();
            assert!(s.tables.get(sw, lid).is_some_and(|p| p != 255), "{} to {}", f.node(sw).name, f.node(other).name);
        }
    }
}

#[test]
fn non_fat_trees_are_unsupported() {
    use ibnetsim_fabric::gen::{IrregularParams, MeshParams};
    let torus = MeshParams::new(&[4, 4], true, 1).build().unwrap();
    let e = configure(&torus, "ftree").err().unwrap();
    assert!(matches!(e, SmError::Unsupported { .. }), "{e}");
    assert!(e.to_string().starts_with("routing engine 'ftree' cannot route this fabric: "), "{e}");
    for seed in 0..5 {
        let f = IrregularParams::with_links_per_switch(16, 8, 4, 4, seed).build().unwrap();
        let e = configure(&f, "ftree").err().unwrap();
        assert!(matches!(e, SmError::Unsupported { .. }), "seed {seed}: {e}");
    }
}
