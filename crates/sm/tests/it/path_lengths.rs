//! Path-length statistics counted by hand on a fabric where several sources
//! share a switch (so their routes are counted together).

use ibnetsim_fabric::{Fabric, LinkSpec};
use ibnetsim_sm::analysis::{analyze, AnalysisOptions, SlView};
use ibnetsim_sm::{SmConfig, SubnetManager};

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
}
