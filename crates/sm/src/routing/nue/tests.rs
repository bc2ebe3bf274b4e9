use super::*;
use crate::analysis::CdgReport;
use crate::hops::SwitchHops;
use crate::routing::build_engine;
use crate::routing::testfab::{self, check_routes, RouteSls};
use ibnetsim_fabric::gen::{FatTreeParams, IrregularParams, MeshParams, RingParams};
use proptest::prelude::*;

fn engine(max_vls: u8) -> Nue {
    Nue { max_vls }
}

/// The credit-loop check of the CA-to-CA routes, SL `i` on VL `i`, each
/// route on the SL the engine gave it (SL 0 where it gave none).
fn cdg(f: &Fabric, lids: &LidMap, r: &Routing) -> CdgReport {
    testfab::credit_loops(f, lids, r, RouteSls::GivenOrZero, false)
}

/// Switch-to-CA routes longer than the fewest hops.
fn detours(f: &Fabric, lids: &LidMap, r: &Routing) -> Vec<(String, Lid, u16, u16)> {
    let hops = SwitchHops::compute(f);
    let mut out = Vec::new();
    for sw in f.switches() {
        for p in lids.ca_ports(f) {
            let want = hops.end_hops(f, sw, p.end).unwrap();
            let (mut at, mut got) = (sw, 1u16);
            while let Some(peer) = f.peer(at, r.tables.get(at, p.base).unwrap()) {
                if f.node(peer.node).kind.is_ca() {
                    break;
                }
                at = peer.node;
                got += 1;
                assert!(got < 64, "loop");
            }
            if got != want {
                out.push((f.node(sw).name.clone(), p.base, got, want));
            }
        }
    }
    out
}

#[test]
fn registered_with_max_vls_checked() {
    testfab::assert_max_vls_checked(NAME);
    let o = RoutingOptions { max_vls: Some(4), ..RoutingOptions::default() };
    assert!(build_engine(NAME, &o).is_ok());
}

#[test]
fn two_switches_with_two_cables_by_hand() {
    // a and b joined on ports 1 and 2, host a0 on a:3, b0 on b:3. LIDs: a0 1,
    // b0 2, a 3, b 4. P = 4 LIDs, so every link weighs 16; each switch
    // counts 2 LIDs (its own and its host's).
    //
    // Layer 0 holds a0 and b0. Betweenness (each host a leaf of its switch):
    // from a, b has two shortest paths (sigma 2) and a gets 1/2 * (1 + 1)
    // over each; with the host of a as a second source both end at 2, and the
    // same from b: a tie, so the root is a, first in LID order. Its tree takes
    // a:1 -> b:1 (port 1 first; port 2 is not cheaper).
    //
    // a0: b is reached over that link (weight 16; the one over port 2 ties
    // and loses), so b sends LID 1 out of port 1; the link a:1 -> b:1 then
    // weighs 16 + 2. b0: a is reached over b:1 -> a:1 (16; not yet grown),
    // so a sends LID 2 out of port 1; b:1 -> a:1 weighs 18.
    // Switch LIDs, plain trees: LID 3 (a): b's cheapest way in is a:2 -> b:2
    // (16 < 18), so b sends LID 3 out of port 2, and that link weighs 18;
    // LID 4 (b): likewise a sends it out of port 2.
    let f = testfab::two_switch_parallel(2, 1);
    let (lids, r) = testfab::routed(&engine(1), &f, 0);
    let (a, b) = (f.node_by_name("a").unwrap(), f.node_by_name("b").unwrap());
    let row = |sw| (1..=4).map(|lid| r.tables.get(sw, lid).unwrap()).collect::<Vec<_>>();
    assert_eq!(row(a), vec![3, 1, 0, 2]);
    assert_eq!(row(b), vec![1, 3, 2, 0]);
    assert!(r.path_sl.is_none());
    let (_, plan) = engine(1).route_plan(&f, &lids).unwrap();
    assert_eq!(plan.roots, vec![Some(a)]);
    assert_eq!(plan.layers, vec![vec![1, 2]]);
}

#[test]
fn ring_of_five_at_one_vl_needs_detours() {
    // On a ring of five switches every pair two hops apart has one shortest
    // path. The five clockwise ones give five clockwise turns, one at every
    // switch: a cycle. So with one VL at least one of them must go the long
    // way round (three hops), and likewise counter-clockwise: at least two
    // detours, and the CA-to-CA dependencies stay acyclic.
    let f = RingParams { switches: 5, hosts_per_switch: 1, link: Default::default() }.build().unwrap();
    let (lids, r) = testfab::routed(&engine(1), &f, 0);
    check_routes(&f, &lids, &r.tables).unwrap();
    let d = detours(&f, &lids, &r);
    assert!(d.len() >= 2, "{d:?}");
    assert!(d.iter().all(|&(_, _, got, want)| (want, got) == (3, 4)), "{d:?}");
    assert!(!cdg(&f, &lids, &r).has_cycle());
    // minhop's shortest paths close the cycle.
    let m = testfab::routed(&crate::routing::minhop::MinHop, &f, 0).1;
    assert!(detours(&f, &lids, &m).is_empty());
    assert!(cdg(&f, &lids, &m).has_cycle());
}

#[test]
fn layers_deal_the_hosts_round_robin() {
    // ring4: hosts h0..h3 (LIDs 1..4) in port-GUID order, switches 5..8.
    // Two layers: h0, h2 in layer 0 and h1, h3 in layer 1; every path toward
    // a LID gets its layer as SL, whatever its source; switch LIDs layer 0.
    let f = testfab::ring4();
    let (lids, r) = testfab::routed(&engine(2), &f, 0);
    for src in lids.ports() {
        let sls: Vec<u8> = (1..=8).map(|d| r.path_sl.get(src.base, d).unwrap()).collect();
        assert_eq!(sls, vec![0, 1, 0, 1, 0, 0, 0, 0]);
    }
    // Three layers: h0 0, h1 1, h2 2, h3 0 again.
    let r = testfab::routed(&engine(3), &f, 0).1;
    assert_eq!((1..=4).map(|d| r.path_sl.get(1, d).unwrap()).collect::<Vec<_>>(), vec![0, 1, 2, 0]);
    // More layers than hosts: the last ones stay empty, with no escape tree.
    let (_, plan) = engine(6).route_plan(&f, &lids).unwrap();
    assert_eq!(plan.layers, vec![vec![1], vec![2], vec![3], vec![4], vec![], vec![]]);
    assert_eq!(plan.roots[4], None);
    assert!(r.notes.iter().any(|n| n.contains("--vls 3")), "{:?}", r.notes);
}

#[test]
fn every_lid_of_a_port_is_routed_and_spread() {
    // LMC 1 on two switches with two cables: the second LID of each host
    // is routed after the first has grown its links, so it takes the other
    // cable.
    let f = testfab::two_switch_parallel(2, 1);
    let (lids, r) = testfab::routed(&engine(1), &f, 1);
    check_routes(&f, &lids, &r.tables).unwrap();
    let b = f.node_by_name("b").unwrap();
    let a0 = lids.of_port(testfab::host(&f, "a", 0), 1).unwrap().base;
    assert_eq!((r.tables.get(b, a0), r.tables.get(b, a0 + 1)), (Some(1), Some(2)));
}

#[test]
fn regular_fabrics_are_credit_loop_free_at_one_vl() {
    let fabrics = [
        MeshParams { dims: vec![4, 4], torus: true, hosts_per_switch: 1, link: Default::default() }.build().unwrap(),
        FatTreeParams { k: 4, n: 3, link: Default::default() }.build().unwrap(),
        IrregularParams { switches: 16, switch_ports: 8, hosts_per_switch: 2, links_per_switch: Some(4), total_links: None, independent_cycles: None, seed: 3, link: Default::default() }.build().unwrap(),
    ];
    for f in &fabrics {
        for vls in [1, 2] {
            let (lids, r) = testfab::routed(&engine(vls), f, 0);
            check_routes(f, &lids, &r.tables).unwrap();
            assert!(!cdg(f, &lids, &r).has_cycle());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_fabrics_are_complete_and_credit_loop_free(
        seed in any::<u64>(), switches in 1usize..30, extra in 0usize..40, lmc in 0u8..2, vls in prop::sample::select(vec![1u8, 2, 4]),
    ) {
        let f = testfab::random_connected(seed, switches, extra, 3);
        let lids = LidMap::assign(&f, lmc).unwrap();
        let r = engine(vls).route(&f, &lids).unwrap();
        check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
        let report = cdg(&f, &lids, &r);
        prop_assert!(!report.has_cycle(), "{:?}", report.cycle);
        prop_assert_eq!(r.path_sl.is_none(), vls == 1);
    }
}

#[test]
fn small_and_broken_fabrics_route_or_say_why() {
    // One switch: every host one hop away, nothing to order.
    let mut f = Fabric::new();
    let s = f.add_switch("s", 4).unwrap();
    for i in 0..3 {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(s, i + 1, h, 1, Default::default()).unwrap();
    }
    for vls in [1, 4] {
        let (lids, r) = testfab::routed(&engine(vls), &f, 1);
        check_routes(&f, &lids, &r.tables).unwrap();
    }
    // Two islands: an error naming a switch that cannot be reached.
    let mut f = testfab::two_switch_parallel(1, 1);
    let c = f.add_switch("c", 4).unwrap();
    let h = f.add_hca("c0", 1).unwrap();
    f.connect(c, 1, h, 1, Default::default()).unwrap();
    let lids = LidMap::assign(&f, 0).unwrap();
    let e = engine(1).route(&f, &lids).err().unwrap().to_string();
    assert!(e.starts_with("routing engine 'nue' cannot route this fabric: switches [") && e.contains("cannot be reached"), "{e}");
    // Two hosts cabled to each other, no switch: no switch to start from.
    let mut f = Fabric::new();
    let a = f.add_hca("a", 1).unwrap();
    let b = f.add_hca("b", 1).unwrap();
    f.connect(a, 1, b, 1, Default::default()).unwrap();
    let lids = LidMap::assign(&f, 0).unwrap();
    let e = engine(1).route(&f, &lids).err().unwrap().to_string();
    assert_eq!(e, "routing engine 'nue' cannot route this fabric: a port 1 (LID 1) is cabled to no switch, and nue routes from a destination's switch; cable it to a switch");
}
