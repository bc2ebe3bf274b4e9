//! The papers' networks, generated and routed: Kim et al.'s 5-port
//! irregular networks (paper 000), Martínez et al.'s 8- to 64-switch
//! networks (paper 002), and dimension-order routing on a hypercube.

use ibnetsim_fabric::gen::{HypercubeParams, IrregularParams};
use ibnetsim_fabric::{Fabric, LinkEnd};
use ibnetsim_sm::analysis::{analyze, trace_route, AnalysisOptions, AnalysisReport, SlView};
use ibnetsim_sm::{RoutingOptions, SmConfig, Subnet, SubnetManager};

fn configure(f: &Fabric, engine: &str) -> Subnet {
    let config = SmConfig {
        routing_engine: engine.into(),
        lmc: 0,
        options: RoutingOptions::default(),
        ..SmConfig::default()
    };
    SubnetManager::new(config).configure(f).unwrap_or_else(|e| panic!("{engine}: {e}"))
}

fn check(f: &Fabric, s: &Subnet) -> AnalysisReport {
    analyze(f, &s.lids, &s.tables, &SlView::default(), &AnalysisOptions::default()).unwrap()
}

/// Switch-to-switch links of each switch.
fn degrees(f: &Fabric) -> Vec<usize> {
    f.switches().map(|s| f.switch_neighbors(s).count()).collect()
}

fn assert_complete(r: &AnalysisReport, hosts: u64, what: &str) {
    assert_eq!(r.paths.reach.pairs, hosts * (hosts - 1), "{what}");
    assert_eq!(r.paths.reach.reachable_pairs, r.paths.reach.pairs, "{what}: {r}");
    assert_eq!(r.paths.reach.lids_with_loops, 0, "{what}: {r}");
}

#[test]
fn kim_30_switch_5_port_networks() {
    // Paper 000: 5-port switches with one HCA each, so at most 4 switch links.
    // The 30-switch network's cycle count is not in the text; 18 independent
    // cycles (47 links) keeps about the 15-switch network's 23 links per 15 switches.
    for seed in 0..5 {
        let f = IrregularParams::with_independent_cycles(30, 5, 18, 1, seed).build().unwrap();
        assert_eq!((f.switches().count(), f.cas().count()), (30, 30));
        let d = degrees(&f);
        assert_eq!(d.iter().sum::<usize>(), 2 * 47, "seed {seed}");
        assert!(d.iter().all(|&x| (1..=4).contains(&x)), "seed {seed}: {d:?}");
        f.check_connected().unwrap();
        for engine in ["updn", "minhop"] {
            let r = check(&f, &configure(&f, engine));
            assert_complete(&r, 30, &format!("seed {seed} {engine}"));
            if engine == "updn" {
                assert!(!r.has_defects(), "seed {seed}: {r}");
            } else {
                assert_eq!(r.paths.non_minimal_pairs, 0, "seed {seed}: {r}");
            }
        }
    }
}

#[test]
fn martinez_2003_networks_route_clean_with_updn() {
    // Paper 002 (Table 1): (switches, links between switches); 6 links on
    // 10-port switches, 4 on 8-port ones, 4 hosts each, ten topologies a size.
    for (n, links) in [(8u32, 6u32), (16, 6), (32, 4), (64, 4)] {
        let ports = if links == 6 { 10 } else { 8 };
        for seed in 0..10 {
            let f = IrregularParams::with_links_per_switch(n, ports, links, 4, seed).build().unwrap();
            let what = format!("({n}, {links}) seed {seed}");
            assert_eq!(f.cas().count() as u32, 4 * n, "{what}");
            assert!(degrees(&f).iter().all(|&d| d as u32 == links), "{what}");
            let r = check(&f, &configure(&f, "updn"));
            assert_complete(&r, 4 * n as u64, &what);
            assert!(!r.has_defects(), "{what}: {r}");
        }
    }
}

#[test]
fn dor_on_a_hypercube_is_minimal_deadlock_free_and_dimension_ordered() {
    let f = HypercubeParams::new(4, 1).build().unwrap();
    let s = configure(&f, "dor");
    let r = check(&f, &s);
    assert_complete(&r, 16, "4-cube");
    assert_eq!(r.paths.non_minimal_pairs, 0, "{r}");
    assert!(!r.has_defects() && r.credit_loops.cycle.is_none(), "{r}");
    // h0 to h15 crosses all four dimensions, lowest first (dimension i on port i + 1).
    let (h0, h15) = (f.node_by_name("h0").unwrap(), f.node_by_name("h15").unwrap());
    let lid = s.lids.of_port(h15, 1).unwrap().base;
    let route = trace_route(&f, &s.lids, &s.tables, LinkEnd { node: h0, port: 1 }, lid);
    let ports: Vec<u8> = route.hops[1..route.hops.len() - 1].iter().map(|h| h.port).collect();
    assert_eq!(ports, [1, 2, 3, 4], "{}", route.describe(&f));
}
