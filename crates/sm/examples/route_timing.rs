//! Times the routing engines on a fabric of the size the project targets:
//! a 3-level folded Clos of 294 switches and 2016 hosts, and a random
//! irregular fabric of 300 switches and 2100 hosts, and the generator's
//! 4-ary 5-tree (1280 switches, 1024 hosts). `ftree` refuses the irregular one.
//!
//! Run with `cargo run --release -p ibnetsim-sm --example route_timing`.
//! This is a measurement, not a test: it prints wall-clock times.

use std::time::Instant;

use ibnetsim_fabric::{Fabric, LinkSpec, NodeId, NodeKind};
use ibnetsim_sm::routing::build_engine;
use ibnetsim_sm::{LidMap, RoutingOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `pods` pods of `per_pod` leaves and `per_pod` aggregation switches
/// (complete bipartite), `hosts` per leaf, `per_pod` groups of `cores` cores;
/// aggregation switch j of every pod is cabled to every core of group j.
fn fat_tree(pods: u32, per_pod: u32, hosts: u32, cores: u32) -> Fabric {
    let mut f = Fabric::new();
    let ports = (hosts + per_pod).max(per_pod + cores).max(pods) as u8;
    let core: Vec<Vec<NodeId>> = (0..per_pod)
        .map(|j| (0..cores).map(|c| f.add_switch(format!("core{j}_{c}"), ports).unwrap()).collect())
        .collect();
    for p in 0..pods {
        let leaves: Vec<NodeId> = (0..per_pod).map(|l| f.add_switch(format!("leaf{p}_{l}"), ports).unwrap()).collect();
        let aggs: Vec<NodeId> = (0..per_pod).map(|a| f.add_switch(format!("agg{p}_{a}"), ports).unwrap()).collect();
        for (l, &leaf) in leaves.iter().enumerate() {
            for (a, &agg) in aggs.iter().enumerate() {
                f.connect(leaf, hosts + 1 + a as u32, agg, 1 + l as u32, LinkSpec::default()).unwrap();
            }
            for h in 0..hosts {
                let ca = f.add_hca(format!("h{p}_{l}_{h}"), 1).unwrap();
                f.connect(leaf, 1 + h, ca, 1, LinkSpec::default()).unwrap();
            }
        }
        for (a, &agg) in aggs.iter().enumerate() {
            for (c, &cs) in core[a].iter().enumerate() {
                f.connect(agg, per_pod + 1 + c as u32, cs, 1 + p, LinkSpec::default()).unwrap();
            }
        }
    }
    f
}

/// `n` switches with `links` switch ports each (random, connected), `hosts` hosts each.
fn irregular(n: usize, links: u32, hosts: u32, seed: u64) -> Fabric {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut f = Fabric::new();
    let sw: Vec<NodeId> = (0..n).map(|i| f.add_node(NodeKind::Switch, format!("s{i}"), (links + hosts) as u8, None).unwrap()).collect();
    let mut used = vec![0u32; n];
    let join = |f: &mut Fabric, a: usize, b: usize, used: &mut [u32]| {
        if a != b && used[a] < links && used[b] < links && !f.switch_neighbors(sw[a]).any(|(_, p)| p.node == sw[b]) {
            f.connect(sw[a], used[a] + 1, sw[b], used[b] + 1, LinkSpec::default()).unwrap();
            used[a] += 1;
            used[b] += 1;
        }
    };
    for i in 1..n {
        let j = rng.random_range(0..i);
        join(&mut f, i, j, &mut used);
    }
    for _ in 0..n * links as usize {
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        join(&mut f, a, b, &mut used);
    }
    for (i, &s) in sw.iter().enumerate() {
        for h in 0..hosts {
            let ca = f.add_hca(format!("h{i}_{h}"), 1).unwrap();
            f.connect(s, links + 1 + h, ca, 1, LinkSpec::default()).unwrap();
        }
    }
    f
}

fn main() {
    let fabrics = [
        ("fat tree 8 pods x 14, 18 hosts/leaf", fat_tree(8, 14, 18, 5)),
        ("irregular 300 x 8 links, 7 hosts", irregular(300, 8, 7, 1)),
        ("4-ary 5-tree", ibnetsim_fabric::gen::FatTreeParams::new(4, 5).build().unwrap()),
    ];
    for (name, f) in &fabrics {
        let switches = f.switches().count();
        let hosts = f.cas().count();
        println!("{name}: {switches} switches, {hosts} hosts, {} links", f.links().len());
        for lmc in [0u8, 2] {
            let lids = LidMap::assign(f, lmc).unwrap();
            for engine in ["minhop", "updn", "dor", "ftree"] {
                let e = build_engine(engine, &RoutingOptions::default()).unwrap();
                let start = Instant::now();
                let r = match e.route(f, &lids) {
                    Ok(r) => r,
                    Err(err) => {
                        println!("  {engine:7} lmc {lmc}: {err}");
                        continue;
                    }
                };
                let took = start.elapsed();
                println!("  {engine:7} lmc {lmc}: {:8.1} ms  ({} LIDs){}", took.as_secs_f64() * 1e3, lids.top_lid(), r.notes.first().map(|n| format!("  [{n}]")).unwrap_or_default());
            }
        }
    }
}
