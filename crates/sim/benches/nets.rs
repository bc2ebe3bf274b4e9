//! Networks for the benchmarks (shared by `benches/sim.rs` and
//! `examples/bench.rs`): a seeded random regular switch graph with up*/down*
//! routing, and a 2D mesh with dimension-order routing. Built here because the
//! topology generators and routing engines live in other crates.

#![allow(dead_code)]

use std::collections::VecDeque;

use ibnetsim_fabric::{Fabric, LinkSpec, NodeId};
use ibnetsim_sm::{ForwardingTables, LidMap};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `n` switches with `degree` inter-switch links each (a random regular graph,
/// at most one link between two switches, connected) and `hosts` hosts per
/// switch; ports 1..=degree go to switches, the rest to hosts.
pub fn random_regular(n: usize, degree: usize, hosts: usize, seed: u64, spec: LinkSpec) -> Fabric {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let edges = loop {
        // Configuration model: pair up stubs, retry on self-loops and duplicates.
        let mut stubs: Vec<usize> = (0..n).flat_map(|s| std::iter::repeat(s).take(degree)).collect();
        stubs.shuffle(&mut rng);
        let mut edges: Vec<(usize, usize)> = stubs.chunks(2).map(|c| (c[0].min(c[1]), c[0].max(c[1]))).collect();
        edges.sort_unstable();
        let simple = edges.iter().all(|&(a, b)| a != b) && edges.windows(2).all(|w| w[0] != w[1]);
        if simple && connected(n, &edges) {
            break edges;
        }
    };
    let mut f = Fabric::new();
    let sw: Vec<NodeId> = (0..n).map(|i| f.add_switch(format!("s{i}"), (degree + hosts) as u8).unwrap()).collect();
    let mut next = vec![1u32; n];
    for (a, b) in edges {
        f.connect(sw[a], next[a], sw[b], next[b], spec).unwrap();
        next[a] += 1;
        next[b] += 1;
    }
    for (i, &s) in sw.iter().enumerate() {
        for h in 0..hosts {
            let hca = f.add_hca(format!("h{}", i * hosts + h), 1).unwrap();
            f.connect(hca, 1, s, (degree + h + 1) as u32, spec).unwrap();
        }
    }
    f
}

fn connected(n: usize, edges: &[(usize, usize)]) -> bool {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a].push(b);
        adj[b].push(a);
    }
    let mut seen = vec![false; n];
    let mut q = VecDeque::from([0]);
    seen[0] = true;
    while let Some(x) = q.pop_front() {
        for &y in &adj[x] {
            if !seen[y] {
                seen[y] = true;
                q.push_back(y);
            }
        }
    }
    seen.iter().all(|&s| s)
}

/// A `kx × ky` mesh; switch ports 1 +x, 2 −x, 3 +y, 4 −y, hosts from port 5.
pub fn mesh(kx: usize, ky: usize, hosts: usize, spec: LinkSpec) -> Fabric {
    let mut f = Fabric::new();
    let id = |x: usize, y: usize| y * kx + x;
    let sw: Vec<NodeId> = (0..kx * ky).map(|i| f.add_switch(format!("s{i}"), (4 + hosts) as u8).unwrap()).collect();
    for y in 0..ky {
        for x in 0..kx {
            if x + 1 < kx {
                f.connect(sw[id(x, y)], 1, sw[id(x + 1, y)], 2, spec).unwrap();
            }
            if y + 1 < ky {
                f.connect(sw[id(x, y)], 3, sw[id(x, y + 1)], 4, spec).unwrap();
            }
        }
    }
    for (i, &s) in sw.iter().enumerate() {
        for h in 0..hosts {
            let hca = f.add_hca(format!("h{}", i * hosts + h), 1).unwrap();
            f.connect(hca, 1, s, (5 + h) as u32, spec).unwrap();
        }
    }
    f
}

fn leaf_of(f: &Fabric, lids: &LidMap) -> Vec<(u16, u16, NodeId, u8)> {
    lids.ca_ports(f)
        .map(|pl| {
            let leaf = f.peer(pl.end.node, pl.end.port).unwrap();
            (pl.base, pl.count() as u16, leaf.node, leaf.port)
        })
        .collect()
}

/// Lowest port among the minimal paths: on [`mesh`] this is dimension-order
/// (X then Y) routing.
pub fn lowest_minimal(f: &Fabric, lids: &LidMap) -> ForwardingTables {
    let mut t = ForwardingTables::new(f, lids.top_lid());
    for (base, count, leaf, port) in leaf_of(f, lids) {
        let mut dist = vec![u32::MAX; f.num_nodes()];
        dist[leaf.index()] = 0;
        let mut q = VecDeque::from([leaf]);
        while let Some(s) = q.pop_front() {
            for (_, nb) in f.switch_neighbors(s) {
                if dist[nb.node.index()] == u32::MAX {
                    dist[nb.node.index()] = dist[s.index()] + 1;
                    q.push_back(nb.node);
                }
            }
        }
        for s in f.switches() {
            let p = if s == leaf {
                port
            } else {
                f.switch_neighbors(s).filter(|(_, nb)| dist[nb.node.index()] + 1 == dist[s.index()]).map(|(p, _)| p).min().unwrap()
            };
            for lid in base..base + count {
                t.set(s, lid, p);
            }
        }
    }
    t
}

/// Up*/down* routing (deadlock-free) with root switch 0, as OpenSM's `updn`
/// computes it: a breadth-first search backwards from each destination that
/// may go up and then only down, each switch routed towards the switch it was
/// first reached from.
pub fn updn(f: &Fabric, lids: &LidMap) -> ForwardingTables {
    let switches: Vec<NodeId> = f.switches().collect();
    let root = switches[0];
    let mut level = vec![u32::MAX; f.num_nodes()];
    level[root.index()] = 0;
    let mut q = VecDeque::from([root]);
    while let Some(s) = q.pop_front() {
        for (_, nb) in f.switch_neighbors(s) {
            if level[nb.node.index()] == u32::MAX {
                level[nb.node.index()] = level[s.index()] + 1;
                q.push_back(nb.node);
            }
        }
    }
    // `a` is above `b` when it is nearer the root (ties by index).
    let above = |a: NodeId, b: NodeId| (level[a.index()], a.0) < (level[b.index()], b.0);
    let mut t = ForwardingTables::new(f, lids.top_lid());
    for (base, count, leaf, port) in leaf_of(f, lids) {
        // Backwards from the destination: "rising" (the forward path still
        // descends) may continue either way; once it steps down (the forward
        // path ascends there) it must keep stepping down.
        let mut seen = vec![false; f.num_nodes()];
        let mut q: VecDeque<(NodeId, bool)> = VecDeque::from([(leaf, true)]);
        seen[leaf.index()] = true;
        for lid in base..base + count {
            t.set(leaf, lid, port);
        }
        while let Some((x, rising)) = q.pop_front() {
            for (_, nb) in f.switch_neighbors(x) {
                let y = nb.node;
                if seen[y.index()] {
                    continue;
                }
                let y_above = above(y, x);
                if !rising && y_above {
                    continue;
                }
                seen[y.index()] = true;
                for lid in base..base + count {
                    t.set(y, lid, nb.port);
                }
                q.push_back((y, rising && y_above));
            }
        }
    }
    t
}
