//! Properties of the topology generators over many parameter sets: random
//! irregular fabrics are connected, simple, within their port limits and of
//! exactly the requested degree or link count; the regular generators are
//! checked by hand-worked cases in their own modules.

use ibnetsim_fabric::gen::{FatTreeParams, GeneratorSpec, HypercubeParams, IrregularParams, MeshParams};
use ibnetsim_fabric::{Fabric, NodeId};
use proptest::prelude::*;

/// Checks the invariants of an irregular fabric and returns each switch's
/// switch-link count and the number of switch links.
fn check_irregular(f: &Fabric, p: &IrregularParams) -> (Vec<u32>, usize) {
    let n = p.switches;
    let ports = p.switch_ports as u32;
    let h = p.hosts_per_switch as u32;
    assert_eq!(f.switches().count() as u32, n);
    assert_eq!(f.cas().count() as u32, n * h);
    let mut pairs = Vec::new();
    let mut degree = vec![0u32; n as usize];
    for s in 0..n {
        let node = f.node(NodeId(s));
        assert_eq!(node.num_ports as u32, ports);
        let mut hosts = 0;
        for (port, _) in node.connected_ports() {
            let peer = f.peer(NodeId(s), port).unwrap();
            if f.node(peer.node).kind.is_switch() {
                assert!(port as u32 <= ports - h, "sw{s}: switch link on host port {port}");
                assert_ne!(peer.node, NodeId(s), "sw{s}: self-link");
                degree[s as usize] += 1;
                if s < peer.node.0 {
                    pairs.push((s, peer.node.0));
                }
            } else {
                assert!(port as u32 > ports - h, "sw{s}: host on switch-link port {port}");
                hosts += 1;
            }
        }
        assert_eq!(hosts, h, "sw{s}");
    }
    let links = pairs.len();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), links, "two links between one pair of switches");
    f.check_connected().unwrap();
    (degree, links)
}

fn regular_params() -> impl Strategy<Value = IrregularParams> {
    (2u32..48, 1u32..12, 0u8..5, 0u8..3, any::<u64>())
        .prop_filter("valid L", |&(n, l, ..)| l < n && (n * l) % 2 == 0 && (l >= 2 || n == 2))
        .prop_map(|(n, l, h, extra, seed)| IrregularParams::with_links_per_switch(n, (l as u8) + h + extra, l, h, seed))
}

fn total_params() -> impl Strategy<Value = IrregularParams> {
    (2u32..40, 2u32..8, 0u8..3)
        .prop_flat_map(|(n, d, h)| {
            let max = (n * (n - 1) / 2).min(n * d / 2);
            (Just(n), Just(d), Just(h), (n - 1)..=max, any::<u64>())
        })
        .prop_map(|(n, d, h, e, seed)| IrregularParams::with_total_links(n, d as u8 + h, e, h, seed))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn links_per_switch_gives_exact_degree(p in regular_params()) {
        let f = p.build().unwrap();
        let (degree, links) = check_irregular(&f, &p);
        let l = p.links_per_switch.unwrap();
        prop_assert!(degree.iter().all(|&d| d == l), "{degree:?}");
        prop_assert_eq!(links as u32, p.switches * l / 2);
    }

    #[test]
    fn total_links_gives_exact_count(p in total_params()) {
        let f = p.build().unwrap();
        let (degree, links) = check_irregular(&f, &p);
        prop_assert_eq!(links as u32, p.total_links.unwrap());
        let max = (p.switch_ports - p.hosts_per_switch) as u32;
        prop_assert!(degree.iter().all(|&d| (1..=max).contains(&d)), "{degree:?}");
    }

    #[test]
    fn same_seed_same_links(p in regular_params()) {
        let ends = |f: &Fabric| f.links().iter().map(|l| l.ends).collect::<Vec<_>>();
        prop_assert_eq!(ends(&p.build().unwrap()), ends(&p.build().unwrap()));
    }
}

#[test]
fn paper_sizes_and_large_fabrics() {
    // Paper 002's largest network, and fabrics well beyond the papers.
    for (n, ports, l, h) in [(64, 10, 6, 4), (1000, 10, 6, 4), (1500, 8, 3, 2), (1200, 4, 2, 1)] {
        let p = IrregularParams::with_links_per_switch(n, ports, l, h, 11);
        let (degree, links) = check_irregular(&p.build().unwrap(), &p);
        assert!(degree.iter().all(|&d| d == l));
        assert_eq!(links as u32, n * l / 2);
    }
    for (n, ports, e, h) in [(1000, 8, 1500, 2), (1000, 5, 999, 1)] {
        let p = IrregularParams::with_total_links(n, ports, e, h, 11);
        assert_eq!(check_irregular(&p.build().unwrap(), &p).1 as u32, e);
    }
}

#[test]
fn regular_generators_from_toml() {
    let cases: [(&str, usize, usize); 4] = [
        ("kind = \"mesh\"\ndims = [8, 8]\ntorus = true\nhosts_per_switch = 1", 64, 64 * 2 + 64),
        ("kind = \"mesh\"\ndims = [4, 4, 4]\nhosts_per_switch = 2", 64, 144 + 128),
        ("kind = \"hypercube\"\ndimension = 6\nhosts_per_switch = 2", 64, 192 + 128),
        ("kind = \"fat_tree\"\nk = 4\nn = 3", 48, 128 + 64),
    ];
    for (text, switches, links) in cases {
        let spec: GeneratorSpec = toml::from_str(text).unwrap();
        let f = spec.build().unwrap();
        assert_eq!(f.switches().count(), switches, "{text}");
        assert_eq!(f.links().len(), links, "{text}");
        f.check_connected().unwrap();
    }
    let direct = [
        MeshParams::new(&[8, 8], true, 1).build().unwrap().links().len(),
        HypercubeParams::new(6, 2).build().unwrap().links().len(),
        FatTreeParams::new(4, 3).build().unwrap().links().len(),
    ];
    assert_eq!(direct, [192, 320, 192]);
}
