//! Small fabrics built by hand and a minimum-hop routing helper, so the data
//! plane can be tested without the routing engines.

use std::collections::VecDeque;

use ibnetsim_fabric::{Fabric, LinkSpec, LinkSpeed, LinkWidth, NodeId};
use ibnetsim_sim::{ClassConfig, PatternConfig, ProcessKind, SimConfig};
use ibnetsim_sm::{ForwardingTables, LidMap};

/// A fabric with its LIDs and forwarding tables.
pub struct Net {
    pub fabric: Fabric,
    pub lids: LidMap,
    pub tables: ForwardingTables,
}

/// 1x SDR with a cable of `m` metres.
pub fn sdr(m: f64) -> LinkSpec {
    LinkSpec { length_m: m, ..LinkSpec::default() }
}

/// `src` — sw0 — sw1 — … — sw{k-1} — `dst`: host links `host`, switch links `inter`.
pub fn chain(k: usize, host: LinkSpec, inter: LinkSpec) -> Fabric {
    let mut f = Fabric::new();
    let src = f.add_hca("src", 1).unwrap();
    let dst = f.add_hca("dst", 1).unwrap();
    let sws: Vec<NodeId> = (0..k).map(|i| f.add_switch(format!("sw{i}"), 4).unwrap()).collect();
    f.connect(src, 1, sws[0], 1, host).unwrap();
    for i in 1..k {
        f.connect(sws[i - 1], 2, sws[i], 3, inter).unwrap();
    }
    f.connect(dst, 1, sws[k - 1], 4, host).unwrap();
    f
}

/// Fills every LID of every CA port with the lowest-numbered port on a
/// shortest switch path (BFS), as a minhop engine without balancing would.
pub fn minhop_tables(f: &Fabric, lids: &LidMap) -> ForwardingTables {
    let mut t = ForwardingTables::new(f, lids.top_lid());
    for pl in lids.ca_ports(f) {
        let leaf = f.peer(pl.end.node, pl.end.port).unwrap();
        // Distance of every switch to the destination's leaf switch.
        let mut dist = vec![u32::MAX; f.num_nodes()];
        dist[leaf.node.index()] = 0;
        let mut q = VecDeque::from([leaf.node]);
        while let Some(s) = q.pop_front() {
            for (_, nb) in f.switch_neighbors(s) {
                if dist[nb.node.index()] == u32::MAX {
                    dist[nb.node.index()] = dist[s.index()] + 1;
                    q.push_back(nb.node);
                }
            }
        }
        for s in f.switches() {
            let port = if s == leaf.node {
                Some(leaf.port)
            } else {
                f.switch_neighbors(s)
                    .filter(|(_, nb)| dist[nb.node.index()] + 1 == dist[s.index()])
                    .map(|(p, _)| p)
                    .min()
            };
            if let Some(p) = port {
                for lid in pl.lids() {
                    t.set(s, lid, p);
                }
            }
        }
    }
    t
}

/// LIDs (LMC 0) and minhop tables.
pub fn routed(fabric: Fabric) -> Net {
    let lids = LidMap::assign(&fabric, 0).unwrap();
    let tables = minhop_tables(&fabric, &lids);
    Net { fabric, lids, tables }
}

/// A class sending fixed-size packets.
pub fn class(name: &str, sl: u8, load: f64, process: ProcessKind, payload: u32, pattern: PatternConfig) -> ClassConfig {
    ClassConfig { name: name.into(), sl, load, process, payload_bytes: payload, pattern, ..ClassConfig::default() }
}

/// `src` sends to `dst`.
pub fn pair(src: &str, dst: &str) -> PatternConfig {
    PatternConfig::FixedPairs { pairs: vec![(src.into(), dst.into())] }
}

/// A config with 256 B MTU, the given classes, and everything else default.
pub fn config(classes: Vec<ClassConfig>) -> SimConfig {
    let mut c = SimConfig { mtu_bytes: 256, ..SimConfig::default() };
    c.traffic.classes = classes;
    c
}

/// `src` —4x SDR— `sw0` (port 1, port 4) —1x SDR— `dst`: the switch
/// receives four times faster than it can send, so packets wait in it.
pub fn fast_to_slow() -> Fabric {
    let mut f = Fabric::new();
    let src = f.add_hca("src", 1).unwrap();
    let dst = f.add_hca("dst", 1).unwrap();
    let sw = f.add_switch("sw0", 4).unwrap();
    f.connect(src, 1, sw, 1, sdr4(1.0)).unwrap();
    f.connect(dst, 1, sw, 4, sdr(1.0)).unwrap();
    f
}

/// 4x SDR.
pub fn sdr4(m: f64) -> LinkSpec {
    LinkSpec { length_m: m, ..LinkSpec::new(LinkWidth::X4, LinkSpeed::Sdr) }
}

/// One switch `sw` with `n` hosts `h0..h{n-1}` on ports 1..=n.
pub fn star(n: u32) -> Fabric {
    let mut f = Fabric::new();
    let s = f.add_switch("sw", n.max(2) as u8).unwrap();
    for i in 0..n {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(h, 1, s, i + 1, sdr(1.0)).unwrap();
    }
    f
}

/// A ring of `n` switches `s0..`, each with one host `h<i>` on port 3;
/// port 1 goes clockwise (to `s<i+1>` port 2).
pub fn ring(n: u32) -> Fabric {
    let mut f = Fabric::new();
    let hosts: Vec<NodeId> = (0..n).map(|i| f.add_hca(format!("h{i}"), 1).unwrap()).collect();
    let sws: Vec<NodeId> = (0..n).map(|i| f.add_switch(format!("s{i}"), 3).unwrap()).collect();
    for i in 0..n as usize {
        f.connect(sws[i], 1, sws[(i + 1) % n as usize], 2, sdr(1.0)).unwrap();
        f.connect(hosts[i], 1, sws[i], 3, sdr(1.0)).unwrap();
    }
    f
}

/// Results of the port `node:port`.
pub fn port<'a>(r: &'a ibnetsim_sim::SimResults, node: &str, port: u8) -> &'a ibnetsim_sim::metrics::PortResult {
    r.ports.iter().find(|p| p.node == node && p.port == port).expect("port in results")
}

/// A small irregular network: 5 switches in a ring with two chords, two hosts
/// per switch (`h0..h9`), minhop tables.
pub fn small_irregular() -> Net {
    let mut f = Fabric::new();
    let sws: Vec<NodeId> = (0..5).map(|i| f.add_switch(format!("s{i}"), 6).unwrap()).collect();
    let mut next_port = [1u32; 5];
    let mut link = |f: &mut Fabric, a: usize, b: usize| {
        f.connect(sws[a], next_port[a], sws[b], next_port[b], sdr(2.0)).unwrap();
        next_port[a] += 1;
        next_port[b] += 1;
    };
    for i in 0..5 {
        link(&mut f, i, (i + 1) % 5);
    }
    link(&mut f, 0, 2);
    link(&mut f, 1, 3);
    for i in 0..10u32 {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(h, 1, sws[(i / 2) as usize], 5 + i % 2, sdr(1.0)).unwrap();
    }
    routed(f)
}

/// Uniform traffic at `load` with `payload` bytes.
pub fn uniform(load: f64, process: ProcessKind, payload: u32) -> SimConfig {
    config(vec![class("u", 0, load, process, payload, PatternConfig::Uniform)])
}

/// The fabric of [`diamond`] with every link `link`: `a0, a1` on ports 3, 4
/// of `s0`, `b0, b1` on those of `s3`; `s0:1-s1:1`, `s0:2-s2:1`,
/// `s1:2-s3:1`, `s2:2-s3:2`.
pub fn diamond_fabric(link: LinkSpec) -> Fabric {
    let mut f = Fabric::new();
    let s: Vec<_> = (0..4).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
    f.connect(s[0], 1, s[1], 1, link).unwrap();
    f.connect(s[0], 2, s[2], 1, link).unwrap();
    f.connect(s[1], 2, s[3], 1, link).unwrap();
    f.connect(s[2], 2, s[3], 2, link).unwrap();
    for (name, sw, port) in [("a0", 0, 3), ("a1", 0, 4), ("b0", 3, 3), ("b1", 3, 4)] {
        let h = f.add_hca(name, 1).unwrap();
        f.connect(h, 1, s[sw], port, link).unwrap();
    }
    f
}

/// `a0, a1` on `s0`; `b0, b1` on `s3`; two disjoint middle switches `s1`
/// (via port 1 of `s0`) and `s2` (port 2). LMC 1: a destination's base LID is
/// routed via `s1`, base + 1 via `s2`.
pub fn diamond() -> Net {
    let f = diamond_fabric(sdr(1.0));
    let s: Vec<NodeId> = (0..4).map(|i| f.node_by_name(&format!("s{i}")).unwrap()).collect();
    let lids = LidMap::assign(&f, 1).unwrap();
    let mut t = ForwardingTables::new(&f, lids.top_lid());
    for (name, sw, port) in [("a0", 0, 3), ("a1", 0, 4), ("b0", 3, 3), ("b1", 3, 4)] {
        let h = f.node_by_name(name).unwrap();
        let base = lids.of_port(h, 1).unwrap().base;
        for (k, lid) in [base, base + 1].into_iter().enumerate() {
            // Path via s1 (k = 0) or s2 (k = 1).
            let mid = 1 + k;
            t.set(s[sw], lid, port);
            t.set(s[3 - sw], lid, mid as u8);
            t.set(s[mid], lid, if sw == 0 { 1 } else { 2 });
        }
    }
    Net { fabric: f, lids, tables: t }
}
