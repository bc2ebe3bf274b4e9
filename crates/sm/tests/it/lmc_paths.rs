//! LMC end to end: on k-ary n-trees routed with LMC 1 and 2, the `2^LMC` LIDs
//! of a host are reached from a leaf in another subtree through as many
//! different top-level switches. This is what LMC is for (IBA 7.11.1:
//! multiple paths to one port). updn's mixed-radix spreading achieves it on
//! every tree tested; minhop keeps OpenSM's per-switch spreading
//! (`osm_switch_recommend_path`), which achieves it on 2-level trees and
//! 4-ary 3-trees but not on a 2-ary 3-tree at LMC 2.

use std::collections::BTreeSet;

use ibnetsim_fabric::gen::{switch_level, FatTreeParams};
use ibnetsim_fabric::{Fabric, LinkEnd, NodeId};
use ibnetsim_sm::analysis::trace_route;
use ibnetsim_sm::{RoutingOptions, SmConfig, Subnet, SubnetManager};

fn configure(f: &Fabric, engine: &str, lmc: u8) -> Subnet {
    let config = SmConfig {
        routing_engine: engine.into(),
        lmc,
        options: RoutingOptions::default(),
        ..SmConfig::default()
    };
    SubnetManager::new(config).configure(f).unwrap_or_else(|e| panic!("{engine} LMC {lmc}: {e}"))
}

/// The top-level (level 0) switches the route from `src` to each LID of `dst` passes.
fn tops(f: &Fabric, s: &Subnet, src: NodeId, dst: NodeId) -> Vec<Vec<String>> {
    let lids = s.lids.of_port(dst, 1).expect("host port 1 has LIDs");
    lids.lids()
        .map(|lid| {
            let r = trace_route(f, &s.lids, &s.tables, LinkEnd { node: src, port: 1 }, lid);
            assert!(r.delivered(), "{}", r.describe(f));
            r.hops
                .iter()
                .filter(|h| switch_level(f.node(h.node)) == Some(0))
                .map(|h| f.node(h.node).name.clone())
                .collect()
        })
        .collect()
}

/// For hosts of the first and of the last top-level subtree (every route
/// between them climbs to level 0), both ways: how many different top
/// switches the `2^LMC` LIDs of the destination are reached through.
fn distinct_tops(f: &Fabric, s: &Subnet, k: u32, n: u32) -> Vec<(String, String, usize)> {
    let hosts = k.pow(n);
    let per_subtree = hosts / k;
    let host = |i: u32| f.node_by_name(&format!("h{i}")).unwrap();
    let mut out = Vec::new();
    for a in [0, per_subtree - 1] {
        for b in [hosts - per_subtree, hosts - 1] {
            for (from, to) in [(host(a), host(b)), (host(b), host(a))] {
                let t = tops(f, s, from, to);
                assert!(t.iter().all(|p| p.len() == 1), "one top switch per route: {t:?}");
                let distinct: BTreeSet<&String> = t.iter().map(|p| &p[0]).collect();
                out.push((f.node(from).name.clone(), f.node(to).name.clone(), distinct.len()));
            }
        }
    }
    out
}

#[test]
fn updn_lids_of_a_host_cross_different_top_switches() {
    for (k, n) in [(4u8, 2u8), (4, 3), (2, 3), (2, 4)] {
        let f = FatTreeParams::new(k, n).build().unwrap();
        for lmc in [1u8, 2] {
            let s = configure(&f, "updn", lmc);
            for (from, to, got) in distinct_tops(&f, &s, k as u32, n as u32) {
                assert_eq!(got, 1 << lmc, "updn LMC {lmc} {k}-ary {n}-tree, {from} to the LIDs of {to}");
            }
        }
    }
}

#[test]
fn minhop_spreads_like_opensm_and_aliases_on_a_2_ary_3_tree() {
    for (k, n) in [(4u8, 2u8), (4, 3), (2, 3)] {
        let f = FatTreeParams::new(k, n).build().unwrap();
        for lmc in [1u8, 2] {
            let s = configure(&f, "minhop", lmc);
            for (from, to, got) in distinct_tops(&f, &s, k as u32, n as u32) {
                // OpenSM's per-switch spreading: the leaf alternates LIDs
                // 0,1,2,3 over its two uplinks, and each level-1 switch
                // alternates all four again, so LIDs 0 and 2 (1 and 3) meet
                // at the same level-1 switch and leave it by the same port.
                let want = if (k, n, lmc) == (2, 3, 2) { 2 } else { 1 << lmc };
                assert_eq!(got, want, "minhop LMC {lmc} {k}-ary {n}-tree, {from} to the LIDs of {to}");
            }
        }
    }
}
