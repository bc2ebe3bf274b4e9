//! Duato's condition for paper 002's fully adaptive switches: the escape
//! channels' dependency graph, with routes from every switch, must be
//! acyclic. The `fa` engine's up*/down* escape passes; the same check on
//! minimal routing with no real escape (minhop's entries read as escape
//! options) finds the ring's credit loop.

use ibnetsim_fabric::gen::IrregularParams;
use ibnetsim_fabric::{Fabric, LinkSpec, NodeId};
use ibnetsim_sm::analysis::{analyze, AnalysisOptions, AnalysisReport, SlView};
use ibnetsim_sm::{RoutingOptions, SmConfig, Subnet, SubnetManager};

/// Six switches in a ring, one host each (`h{i}` on port 3 of `s{i}`).
fn ring6() -> Fabric {
    let mut f = Fabric::new();
    let s: Vec<NodeId> = (0..6).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
    for i in 0..6 {
        f.connect(s[i], 2, s[(i + 1) % 6], 1, LinkSpec::default()).unwrap();
    }
    for (i, &sw) in s.iter().enumerate() {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(sw, 3, h, 1, LinkSpec::default()).unwrap();
    }
    f
}

fn configure(f: &Fabric, engine: &str, lmc: u8) -> Subnet {
    let config = SmConfig { routing_engine: engine.into(), lmc, options: RoutingOptions::default(), ..SmConfig::default() };
    SubnetManager::new(config).configure(f).unwrap()
}

fn check(f: &Fabric, s: &Subnet, escape_offsets: Vec<u16>) -> AnalysisReport {
    let options = AnalysisOptions { escape_offsets, ..AnalysisOptions::default() };
    analyze(f, &s.lids, &s.tables, &SlView::default(), &options).unwrap()
}

#[test]
fn fa_on_a_ring_has_credit_loops_but_an_acyclic_escape_network() {
    let f = ring6();
    let s = configure(&f, "fa", 1);
    let r = check(&f, &s, vec![0]);
    // Minimal routes around a 6-ring (offset 1) close a loop on one VL ...
    assert!(r.credit_loops.has_cycle(), "{r}");
    // ... up*/down* (offset 0) cannot.
    let e = r.escape.as_ref().unwrap();
    assert!(!e.has_cycle() && e.switch_lids, "{r}");
    assert!(!r.has_defects(), "{r}");
    let text = r.to_string();
    assert!(text.contains("credit loops (every LID routed alone): CYCLE"), "{text}");
    assert!(text.contains("escape channels (Duato's condition for fully adaptive switches): none"), "{text}");
    assert!(text.ends_with("verdict: ok"), "{text}");
}

#[test]
fn minimal_routing_without_an_escape_fails_the_check() {
    // minhop at LMC 1 read as if offset 0 were an escape: the "escape" is
    // minimal routing, and a 6-ring's minimal routes close a cycle.
    let f = ring6();
    let s = configure(&f, "minhop", 1);
    let r = check(&f, &s, vec![0]);
    let e = r.escape.as_ref().unwrap();
    assert!(e.has_cycle(), "{r}");
    // The cycle goes all the way round: six channels, one per ring link,
    // all in one direction.
    let cycle = e.cycle.as_ref().unwrap();
    assert_eq!(cycle.len(), 6, "{r}");
    let forward = cycle.iter().all(|c| c.from.ends_with("/2"));
    let backward = cycle.iter().all(|c| c.from.ends_with("/1"));
    assert!(forward || backward, "{cycle:?}");
    assert!(r.has_defects());
    assert!(r.to_string().contains("escape channels (Duato's condition for fully adaptive switches): CYCLE"));
}

#[test]
fn the_escape_network_of_fa_is_acyclic_on_the_papers_irregular_networks() {
    // Paper 002's networks: 8-port switches, 4 switch links and 4 hosts each.
    for (switches, seed) in [(16, 0), (16, 1), (32, 2), (64, 3)] {
        let f = IrregularParams::with_links_per_switch(switches, 8, 4, 4, seed).build().unwrap();
        let s = configure(&f, "fa", 1);
        let r = check(&f, &s, vec![0]);
        assert!(!r.escape.as_ref().unwrap().has_cycle(), "{switches} switches, seed {seed}: {r}");
        assert!(!r.has_defects(), "{switches} switches, seed {seed}: {r}");
        // Checking offset 1 (the adaptive entries) as if it were the escape
        // shows why the escape is needed.
        let adaptive_only = check(&f, &s, vec![1]);
        assert!(adaptive_only.escape.unwrap().has_cycle(), "{switches} switches, seed {seed}");
    }
}
