//! Path-length statistics counted by hand on a fabric where several sources
//! share a switch (so their routes are counted together).

use ibnetsim_fabric::{Fabric, LinkSpec, NodeId};
use ibnetsim_sm::analysis::{analyze, AnalysisOptions, SlView};
use ibnetsim_sm::{ForwardingTables, LidMap, SmConfig, SubnetManager};

#[test]
fn two_switches_with_two_hosts_each() {
    // a0, a1 on switch a; b0, b1 on switch b; a and b cabled. Of the 12
    // ordered host pairs, 4 stay on one switch (1 switch on the way) and 8
    // cross (2 switches): mean (4 + 16) / 12 = 5/3, all minimal.
    let mut f = Fabric::new();
    let a = f.add_switch("a", 4).unwrap();
    let b = f.add_switch("b", 4).unwrap();
    f.connect(a, 1, b, 1, LinkSpec::default()).unwrap();
    for (sw, name) in [(a, "a"), (b, "b")] {
        for i in 0..2u32 {
            let h = f.add_hca(format!("{name}{i}"), 1).unwrap();
            f.connect(sw, 2 + i, h, 1, LinkSpec::default()).unwrap();
        }
    }
    let subnet = SubnetManager::new(SmConfig { routing_engine: "minhop".into(), ..SmConfig::default() }).configure(&f).unwrap();
    let r = analyze(&f, &subnet.lids, &subnet.tables, &SlView::default(), &AnalysisOptions::default()).unwrap();
    let p = &r.paths;
    assert_eq!(p.reach.pairs, 12);
    assert_eq!(p.hop_histogram, vec![0, 4, 8]);
    assert_eq!((p.min_hops, p.max_hops, p.non_minimal_pairs), (1, 2, 0));
    assert!((p.mean_hops - 5.0 / 3.0).abs() < 1e-12, "{}", p.mean_hops);
    assert!((p.mean_stretch - 1.0).abs() < 1e-12, "{}", p.mean_stretch);
    // Every route minimal: the largest stretch is 1, and no example is given.
    assert_eq!(p.max_stretch, 1.0);
    assert_eq!(p.worst_stretch, None);
}

/// Switches a, b, c cabled in a triangle (a1-b1, b2-c1, c2-a2), host h{x}
/// on port 3 of switch x.
fn triangle() -> (Fabric, [NodeId; 3]) {
    let mut f = Fabric::new();
    let s = ["a", "b", "c"].map(|n| f.add_switch(n, 4).unwrap());
    for (x, px, y, py) in [(0, 1, 1, 1), (1, 2, 2, 1), (2, 2, 0, 2)] {
        f.connect(s[x], px, s[y], py, LinkSpec::default()).unwrap();
    }
    for (i, n) in ["ha", "hb", "hc"].iter().enumerate() {
        let h = f.add_hca(*n, 1).unwrap();
        f.connect(s[i], 3, h, 1, LinkSpec::default()).unwrap();
    }
    (f, s)
}

#[test]
fn one_detour_in_a_triangle() {
    // Min-hop tables, but a sends hc's LID the long way, through b (port 1):
    // ha -> hc passes a, b, c (3 switches) where 2 would do, a stretch of
    // 3/2. The other 5 ordered pairs pass 2 switches each. Mean hops
    // (5·2 + 3)/6 = 13/6; mean stretch (5·1 + 3/2)/6 = 13/12.
    let (f, s) = triangle();
    let mut subnet = SubnetManager::new(SmConfig { routing_engine: "minhop".into(), ..SmConfig::default() }).configure(&f).unwrap();
    let hc = subnet.lids.of_port(f.node_by_name("hc").unwrap(), 1).unwrap().base;
    assert_eq!(subnet.tables.get(s[0], hc), Some(2), "min-hop goes straight to c");
    subnet.tables.set(s[0], hc, 1);
    let r = analyze(&f, &subnet.lids, &subnet.tables, &SlView::default(), &AnalysisOptions::default()).unwrap();
    let p = &r.paths;
    assert_eq!((p.reach.destination_lids, p.reach.pairs, p.reach.reachable_pairs), (3, 6, 6));
    // The switch LIDs, from each of the other two switches: 3 LIDs, 6 pairs.
    let sw = &r.switch_paths;
    assert_eq!((sw.destination_lids, sw.pairs, sw.reachable_pairs, sw.lids_with_loops), (3, 6, 6, 0));
    assert_eq!(p.hop_histogram, vec![0, 0, 5, 1]);
    assert_eq!((p.min_hops, p.max_hops, p.non_minimal_pairs), (2, 3, 1));
    assert!((p.mean_hops - 13.0 / 6.0).abs() < 1e-12, "{}", p.mean_hops);
    assert!((p.non_minimal_fraction - 1.0 / 6.0).abs() < 1e-12, "{}", p.non_minimal_fraction);
    assert!((p.mean_stretch - 13.0 / 12.0).abs() < 1e-12, "{}", p.mean_stretch);
    assert_eq!(p.max_stretch, 1.5);
    let w = p.worst_stretch.as_ref().expect("a non-minimal route");
    assert_eq!((w.route.src.as_str(), w.route.dst.as_str(), w.route.dlid, w.hops, w.min_hops), ("ha/1", "hc/1", hc, 3, 2));
}

#[test]
fn empty_tables_deliver_nothing_and_have_no_lengths() {
    // No LFT entries: all 6 ordered host pairs stop at their first switch
    // (no path), and every length statistic is 0.
    let (f, _) = triangle();
    let lids = LidMap::assign(&f, 0).unwrap();
    let tables = ForwardingTables::new(&f, lids.top_lid());
    let r = analyze(&f, &lids, &tables, &SlView::default(), &AnalysisOptions::default()).unwrap();
    let p = &r.paths;
    assert_eq!((p.reach.pairs, p.reach.reachable_pairs, p.reach.no_path_pairs, p.reach.unreachable_pairs), (6, 0, 6, 6));
    assert_eq!(p.reach.destination_lids, 3);
    // Nor does any switch reach another switch's LID: 3 LIDs, 6 pairs.
    let sw = &r.switch_paths;
    assert_eq!((sw.destination_lids, sw.pairs, sw.reachable_pairs, sw.no_path_pairs), (3, 6, 0, 6));
    assert!(p.hop_histogram.is_empty(), "{:?}", p.hop_histogram);
    assert_eq!((p.min_hops, p.max_hops, p.non_minimal_pairs), (0, 0, 0));
    assert_eq!((p.mean_hops, p.mean_stretch, p.max_stretch, p.non_minimal_fraction), (0.0, 0.0, 0.0, 0.0));
    assert_eq!(p.worst_stretch, None);
}

#[test]
fn a_loop_in_a_switch_lids_tables_is_counted() {
    // Min-hop tables, but a and b send c's switch LID to each other (a port 1,
    // b port 1): of the 6 switch-to-switch-LID pairs, a -> c and b -> c loop,
    // the other 4 arrive; one LID's tables hold a loop. CA routes do not use
    // those entries and stay clean.
    let (f, s) = triangle();
    let mut subnet = SubnetManager::new(SmConfig { routing_engine: "minhop".into(), ..SmConfig::default() }).configure(&f).unwrap();
    let c = subnet.lids.switch_lid(s[2]).unwrap();
    subnet.tables.set(s[0], c, 1);
    subnet.tables.set(s[1], c, 1);
    let r = analyze(&f, &subnet.lids, &subnet.tables, &SlView::default(), &AnalysisOptions::default()).unwrap();
    let sw = &r.switch_paths;
    assert_eq!((sw.destination_lids, sw.pairs, sw.reachable_pairs, sw.loop_pairs, sw.lids_with_loops), (3, 6, 4, 2, 1));
    assert_eq!(sw.unreachable_pairs, 0, "a loop is not counted as unreachable");
    assert!(r.paths.reach.is_clean());
}
