//! Test fabrics and route checks shared by the routing engines' unit tests.
//!
//! The real generators and analysis live elsewhere; these are deliberately
//! small and independent of them, so that an engine bug cannot hide behind a
//! checker written with the same assumptions.

use ibnetsim_fabric::{Fabric, LinkSpec, NodeId, NodeKind, PortNum};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::hops::SwitchHops;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};

/// Switches `a` and `b` joined by `links` parallel cables on ports 1..=links of
/// both; `hosts` HCAs on each (`a0`.., `b0`..) on the following ports. Nodes
/// are created a, b, a-hosts, b-hosts, so LIDs are a0.., b0.., a, b.
pub fn two_switch_parallel(links: u32, hosts: u32) -> Fabric {
    let mut f = Fabric::new();
    let a = f.add_switch("a", 8).unwrap();
    let b = f.add_switch("b", 8).unwrap();
    for p in 1..=links {
        f.connect(a, p, b, p, LinkSpec::default()).unwrap();
    }
    for (sw, name) in [(a, "a"), (b, "b")] {
        for i in 0..hosts {
            let h = f.add_hca(format!("{name}{i}"), 1).unwrap();
            f.connect(sw, links + 1 + i, h, 1, LinkSpec::default()).unwrap();
        }
    }
    f
}

/// Ring s0-s1-s2-s3-s0 (port 1 clockwise, to s_i+1; port 2 counter-clockwise),
/// one host h_i per switch on port 3. LIDs at LMC 0: h0..h3 = 1..4, s0..s3 = 5..8.
pub fn ring4() -> Fabric {
    let mut f = Fabric::new();
    let s: Vec<NodeId> = (0..4).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
    for i in 0..4 {
        f.connect(s[i], 1, s[(i + 1) % 4], 2, LinkSpec::default()).unwrap();
    }
    for (i, &sw) in s.iter().enumerate() {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(sw, 3, h, 1, LinkSpec::default()).unwrap();
    }
    f
}

/// The host called `{prefix}{i}`.
pub fn host(f: &Fabric, prefix: &str, i: usize) -> NodeId {
    f.node_by_name(&format!("{prefix}{i}")).unwrap()
}

/// A random connected fabric: a random spanning tree over `switches` switches,
/// `extra` more random switch links (parallel cables and loopback cables from
/// a switch to itself allowed), and 0 to `max_hosts` HCAs per switch, a quarter
/// of them dual-ported with the second port on a random switch. GUIDs are
/// random, so that GUID order and node order differ.
pub fn random_connected(seed: u64, switches: usize, extra: usize, max_hosts: u32) -> Fabric {
    const PORTS: u8 = 24;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut f = Fabric::new();
    let mut next_port = vec![1u32; switches];
    let mut guids = std::collections::HashSet::new();
    let mut guid = |rng: &mut ChaCha8Rng| loop {
        let g = rng.random::<u64>() & !0xff;
        if g != 0 && guids.insert(g) {
            return g;
        }
    };
    let sw: Vec<NodeId> = (0..switches)
        .map(|i| f.add_node(NodeKind::Switch, format!("s{i}"), PORTS, Some(guid(&mut rng))).unwrap())
        .collect();
    let link = |f: &mut Fabric, next: &mut [u32], a: usize, b: usize| {
        let pb = next[b] + u32::from(a == b);
        if next[a] <= PORTS as u32 && pb <= PORTS as u32 {
            f.connect(sw[a], next[a], sw[b], pb, LinkSpec::default()).unwrap();
            next[a] += 1;
            next[b] += 1;
        }
    };
    for i in 1..switches {
        let j = rng.random_range(0..i);
        link(&mut f, &mut next_port, i, j);
    }
    for _ in 0..extra {
        if switches < 2 {
            break;
        }
        let a = rng.random_range(0..switches);
        let b = rng.random_range(0..switches);
        if a != b || rng.random_ratio(1, 8) {
            link(&mut f, &mut next_port, a, b);
        }
    }
    let mut h = 0;
    for (i, &s) in sw.iter().enumerate() {
        for _ in 0..rng.random_range(0..=max_hosts) {
            if next_port[i] > PORTS as u32 {
                break;
            }
            let dual = rng.random_ratio(1, 4);
            let ca = f.add_node(NodeKind::Hca, format!("h{h}"), 1 + u8::from(dual), Some(guid(&mut rng))).unwrap();
            f.connect(s, next_port[i], ca, 1, LinkSpec::default()).unwrap();
            next_port[i] += 1;
            h += 1;
            let j = rng.random_range(0..switches);
            if dual && next_port[j] <= PORTS as u32 {
                f.connect(sw[j], next_port[j], ca, 2, LinkSpec::default()).unwrap();
                next_port[j] += 1;
            }
        }
    }
    f
}

/// A 3-level folded Clos: `pods` pods of `per_pod` leaves and `per_pod`
/// aggregation switches (complete bipartite inside a pod), `hosts` HCAs per
/// leaf, and `per_pod` groups of `cores` core switches; aggregation switch j
/// of every pod is cabled to every core of group j.
pub fn fat_tree(pods: u32, per_pod: u32, hosts: u32, cores: u32) -> Fabric {
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

/// The hops a packet for `lid` takes from switch `from`: each `(switch, output
/// port)` until it is delivered. Errors name the missing entry, a dead or
/// wrong end, or a loop.
pub fn trace(f: &Fabric, lids: &LidMap, tables: &ForwardingTables, from: NodeId, lid: Lid) -> Result<Vec<(NodeId, PortNum)>, String> {
    let owner = lids.owner(lid).ok_or_else(|| format!("LID {lid} has no owner"))?.end;
    let name = |n: NodeId| f.node(n).name.clone();
    let mut path = Vec::new();
    let mut cur = from;
    loop {
        let port = tables.get(cur, lid).ok_or_else(|| format!("{} has no entry for LID {lid}", name(cur)))?;
        path.push((cur, port));
        if port == 0 {
            return if owner.node == cur { Ok(path) } else { Err(format!("{} sends LID {lid} to its port 0", name(cur))) };
        }
        let peer = f.peer(cur, port).ok_or_else(|| format!("{} port {port} (LID {lid}) is not cabled", name(cur)))?;
        if peer == owner {
            return Ok(path);
        }
        if f.node(peer.node).kind.is_ca() {
            return Err(format!("LID {lid} from {} ends at the wrong CA {}", name(from), name(peer.node)));
        }
        cur = peer.node;
        if path.len() > f.num_nodes() {
            return Err(format!("LID {lid} loops from {}: {:?}", name(from), path));
        }
    }
}

/// Every switch reaches every assigned LID, without loops, ending at its owner.
pub fn check_routes(f: &Fabric, lids: &LidMap, tables: &ForwardingTables) -> Result<(), String> {
    assert_eq!(tables.top_lid(), lids.top_lid());
    for sw in f.switches() {
        for p in lids.ports() {
            for lid in p.lids() {
                trace(f, lids, tables, sw, lid)?;
            }
        }
    }
    Ok(())
}

/// Every route is as short as the BFS hop count says it can be.
pub fn check_minimal(f: &Fabric, lids: &LidMap, hops: &SwitchHops, tables: &ForwardingTables) -> Result<(), String> {
    for sw in f.switches() {
        for p in lids.ports() {
            let want = hops.end_hops(f, sw, p.end).expect("connected");
            for lid in p.lids() {
                let path = trace(f, lids, tables, sw, lid)?;
                // A path of k entries crosses k - 1 switch links, plus the CA link if any.
                let got = (path.len() - 1) as u16 + u16::from(f.node(p.end.node).kind.is_ca());
                if got != want {
                    return Err(format!(
                        "LID {lid} from {}: {got} hops, minimum is {want}: {path:?}",
                        f.node(sw).name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The SLs an engine's per-path SLs use between every pair of LID owners, sorted.
pub fn sls_used(lids: &LidMap, r: &crate::routing::Routing) -> Vec<u8> {
    let mut used = [false; 16];
    for s in lids.ports() {
        for d in lids.ports().iter().flat_map(|p| p.lids()) {
            used[r.path_sl.get(s.base, d).unwrap() as usize] = true;
        }
    }
    (0..16).filter(|&i| used[i as usize]).collect()
}

/// `engine`'s routing of `f` on LIDs assigned at `lmc`, with the LIDs.
pub fn routed(engine: &dyn crate::routing::RoutingEngine, f: &Fabric, lmc: u8) -> (LidMap, crate::routing::Routing) {
    let lids = LidMap::assign(f, lmc).unwrap();
    let r = engine.route(f, &lids).unwrap();
    (lids, r)
}

/// Which SL each CA-to-CA route takes in [`credit_loops`].
pub enum RouteSls {
    /// The engine's path SL; every route must have one.
    Given,
    /// The engine's path SL where it gives one, else SL 0.
    GivenOrZero,
    /// SL 0 on every route.
    Zero,
}

/// The credit-loop check with SL `i` on VL `i`, the routes on the SLs
/// `sls` says, CA-to-CA routes or, with `switch_lids`, management routes from
/// and to switches too.
pub fn credit_loops(f: &Fabric, lids: &LidMap, r: &crate::routing::Routing, sls: RouteSls, switch_lids: bool) -> crate::analysis::CdgReport {
    use crate::analysis::{analyze, AnalysisOptions, PathSl, SlView};
    let sl = |src: ibnetsim_fabric::LinkEnd, dlid: Lid| {
        let base = lids.of_port(src.node, src.port).unwrap().base;
        match sls {
            RouteSls::Given => r.path_sl.get(base, dlid).expect("every pair has an SL"),
            RouteSls::GivenOrZero => r.path_sl.get(base, dlid).unwrap_or(0),
            RouteSls::Zero => 0,
        }
    };
    let view = SlView::modulo(15).unwrap().with_path_sl(PathSl::PerPair(&sl));
    let options = AnalysisOptions { cdg_switch_lids: switch_lids, ..AnalysisOptions::default() };
    analyze(f, lids, &r.tables, &view, &options).unwrap().credit_loops
}

/// `name` is registered and refuses `max_vls` 0 and 16, naming the option.
pub fn assert_max_vls_checked(name: &str) {
    use crate::routing::{build_engine, RoutingOptions};
    assert_eq!(build_engine(name, &RoutingOptions::default()).unwrap().name(), name);
    for bad in [0, 16] {
        let o = RoutingOptions { max_vls: Some(bad), ..RoutingOptions::default() };
        let e = build_engine(name, &o).err().unwrap().to_string();
        assert!(e.starts_with("invalid option 'max_vls'"), "{e}");
    }
}
