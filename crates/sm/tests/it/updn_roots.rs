//! up*/down*'s automatic roots follow OpenSM's hop-histogram test, whose
//! thresholds are shares of all CA ports (more than 90 % at one distance,
//! no more than 5 % at any other).

use ibnetsim_fabric::{Fabric, LinkSpec};
use ibnetsim_sm::{SmConfig, SubnetManager};

#[test]
fn spines_are_roots_though_one_host_in_21_is_farther_from_them() {
    // Spines s0, s1; leaves l0..l3 cabled to both, 5 hosts each; below l0
    // one more switch t with one host: 21 CA ports. From either spine 20 of
    // them hang off a switch 1 hop away (more than 90 %: 18.9) and one off a
    // switch 2 hops away (not more than 5 %: 1.05), so both spines are roots.
    // From a leaf or t, no distance holds 90 % of them.
    let mut f = Fabric::new();
    let spines: Vec<_> = (0..2).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
    for l in 0..4u32 {
        let leaf = f.add_switch(format!("l{l}"), 8).unwrap();
        for (k, &s) in spines.iter().enumerate() {
            f.connect(s, l + 1, leaf, k as u32 + 1, LinkSpec::default()).unwrap();
        }
        for h in 0..5u32 {
            let host = f.add_hca(format!("h{l}{h}"), 1).unwrap();
            f.connect(leaf, 3 + h, host, 1, LinkSpec::default()).unwrap();
        }
    }
    let l0 = f.node_by_name("l0").unwrap();
    let t = f.add_switch("t", 2).unwrap();
    f.connect(l0, 8, t, 1, LinkSpec::default()).unwrap();
    let extra = f.add_hca("x", 1).unwrap();
    f.connect(t, 2, extra, 1, LinkSpec::default()).unwrap();
    let subnet = SubnetManager::new(SmConfig { routing_engine: "updn".into(), ..SmConfig::default() }).configure(&f).unwrap();
    assert!(
        subnet.notes.iter().any(|n| n.starts_with("updn roots (found by OpenSM's hop-histogram test): s0, s1;")),
        "{:?}",
        subnet.notes
    );
}
