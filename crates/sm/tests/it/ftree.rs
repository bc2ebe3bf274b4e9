//! `ftree` on generated k-ary n-trees (issue 12): complete, loop-free,
//! minimal up*/down* routes, no credit loop, and a uniform-traffic throughput
//! bound of 1.0, where `minhop` leaves spine layers idle.

use std::time::Instant;

use ibnetsim_fabric::gen::{switch_level, FatTreeParams};
use ibnetsim_fabric::Fabric;
use ibnetsim_sm::analysis::{analyze, uniform_loads, AnalysisOptions, LoadLids, SlView};
use ibnetsim_sm::{RoutingOptions, SmConfig, SmError, Subnet, SubnetManager};

fn configure(f: &Fabric, engine: &str) -> Result<Subnet, SmError> {
    let config = SmConfig { routing_engine: engine.into(), lmc: 0, options: RoutingOptions::default(), ..SmConfig::default() };
    SubnetManager::new(config).configure(f)
}

fn bound(f: &Fabric, s: &Subnet) -> f64 {
    uniform_loads(f, &s.lids, &s.tables, LoadLids::Base).unwrap().max_scale()
}

/// Every entry for a CA LID that leads down (to a higher level) is followed
/// by entries that lead down: no route turns up after going down.
fn assert_up_then_down(f: &Fabric, s: &Subnet, what: &str) {
    let level = |n| switch_level(f.node(n)).unwrap();
    for ca in s.lids.ca_ports(f) {
        for lid in ca.lids() {
            for sw in f.switches() {
                let port = s.tables.get(sw, lid).unwrap();
                let next = f.peer(sw, port).unwrap().node;
                if f.node(next).kind.is_switch() && level(next) > level(sw) {
                    let after = f.peer(next, s.tables.get(next, lid).unwrap()).unwrap().node;
                    assert!(
                        !f.node(after).kind.is_switch() || level(after) > level(next),
                        "{what}: LID {lid} turns up at {} after coming down from {}",
                        f.node(next).name,
                        f.node(sw).name
                    );
                }
            }
        }
    }
}

fn check_tree(k: u8, n: u8) {
    let what = format!("{k}-ary {n}-tree");
    let f = FatTreeParams::new(k, n).build().unwrap();
    let t = Instant::now();
    let s = configure(&f, "ftree").unwrap_or_else(|e| panic!("{what}: {e}"));
    let took = t.elapsed();
    let hosts = f.cas().count() as u64;
    let r = analyze(&f, &s.lids, &s.tables, &SlView::default(), &AnalysisOptions::default()).unwrap();
    assert_eq!(r.paths.reach.pairs, hosts * (hosts - 1), "{what}");
    assert_eq!(r.paths.reach.reachable_pairs, r.paths.reach.pairs, "{what}: {r}");
    assert_eq!(r.paths.reach.lids_with_loops, 0, "{what}: {r}");
    assert_eq!(r.paths.non_minimal_pairs, 0, "{what}: {r}");
    assert!(r.credit_loops.cycle.is_none(), "{what}: {r}");
    assert!(!r.has_defects(), "{what}: {r}");
    assert_up_then_down(&f, &s, &what);
    let ftree = bound(&f, &s);
    assert!((ftree - 1.0).abs() < 1e-9, "{what}: throughput bound {ftree}");
    // Deterministic.
    let again = configure(&f, "ftree").unwrap();
    assert_eq!(again.tables, s.tables, "{what}");
    let minhop = bound(&f, &configure(&f, "minhop").unwrap());
    eprintln!("{what}: ftree bound {ftree:.4} (minhop {minhop:.4}), routed in {took:.2?}; notes: {:?}", s.notes);
}

#[test]
fn binary_trees_reach_full_throughput() {
    for n in 2..=4 {
        check_tree(2, n);
    }
}

#[test]
fn four_ary_trees_reach_full_throughput() {
    for n in 2..=4 {
        check_tree(4, n);
    }
}

#[test]
fn four_ary_five_tree_reaches_full_throughput() {
    check_tree(4, 5);
}

#[test]
fn switch_lid_routes_are_complete() {
    // Up*/down* does not reach every switch LID of a multi-rooted tree; the
    // rest take minimum-hop ports, and the engine says how many.
    let f = FatTreeParams::new(2, 3).build().unwrap();
    let s = configure(&f, "ftree").unwrap();
    let options = AnalysisOptions { cdg_switch_lids: true, ..AnalysisOptions::default() };
    let r = analyze(&f, &s.lids, &s.tables, &SlView::default(), &options).unwrap();
    assert_eq!(r.paths.reach.lids_with_loops, 0, "{r}");
    // Those minimum-hop routes leave up*/down*: with management traffic to
    // switches in the graph, the check finds a credit loop (CA traffic alone has none).
    assert!(r.credit_loops.cycle.is_some(), "{r}");
    assert!(s.notes.iter().any(|n| n.contains("switch-to-switch routes have no up*/down* path")), "{:?}", s.notes);
    for sw in f.switches() {
        for other in f.switches() {
            let lid = s.lids.switch_lid(other).unwrap();
            assert!(s.tables.get(sw, lid).is_some_and(|p| p != 255), "{} to {}", f.node(sw).name, f.node(other).name);
        }
    }
}

#[test]
fn non_fat_trees_are_unsupported() {
    use ibnetsim_fabric::gen::{IrregularParams, MeshParams};
    let torus = MeshParams::new(&[4, 4], true, 1).build().unwrap();
    let e = configure(&torus, "ftree").err().unwrap();
    assert!(matches!(e, SmError::Unsupported { .. }), "{e}");
    assert!(e.to_string().starts_with("routing engine 'ftree' cannot route this fabric: "), "{e}");
    for seed in 0..5 {
        let f = IrregularParams::with_links_per_switch(16, 8, 4, 4, seed).build().unwrap();
        let e = configure(&f, "ftree").err().unwrap();
        assert!(matches!(e, SmError::Unsupported { .. }), "seed {seed}: {e}");
    }
}

/// Spines S0, S1 above leaves L0, L1, every leaf cabled to every spine by
/// two cables: L0 ports 3, 4 to S0 ports 1, 2 and ports 5, 6 to S1 ports 1,
/// 2; L1 ports 3, 4 to S0 ports 3, 4 and ports 5, 6 to S1 ports 3, 4. One
/// host on L0 (h0, port 1), two on L1 (h10, h11, ports 1, 2). Switches are
/// created in that order, so the switch table (by GUID) is S0, S1, L0, L1.
fn two_spines_two_leaves() -> Fabric {
    use ibnetsim_fabric::LinkSpec;
    let mut f = Fabric::new();
    let [s0, s1, l0, l1] = ["S0", "S1", "L0", "L1"].map(|n| f.add_switch(n, 6).unwrap());
    for (leaf, base) in [(l0, 1), (l1, 3)] {
        for k in 0..2 {
            f.connect(leaf, 3 + k, s0, base + k, LinkSpec::default()).unwrap();
            f.connect(leaf, 5 + k, s1, base + k, LinkSpec::default()).unwrap();
        }
    }
    for (leaf, name, port) in [(l0, "h0", 1), (l1, "h10", 1), (l1, "h11", 2)] {
        let h = f.add_hca(name, 1).unwrap();
        f.connect(leaf, port, h, 1, LinkSpec::default()).unwrap();
    }
    f
}

#[test]
fn two_spines_two_leaves_by_hand() {
    // Worked by hand from OpenSM's ftree rules (module docs of the engine):
    // destinations leaf by leaf, a leaf short of the fullest one's 2 CAs
    // routes a dummy; the main path climbs the up group with the fewest
    // counted down routes (ties: the parent carrying fewer, then the lower
    // index) and takes its least-used cable (ties: the first); other parents
    // get a down route over their least-used cable; the parent then routes
    // up to every other descendant without a route, over the least-used
    // cable of that child's group.
    //
    // h0: L0's groups tie at 0: S0 is main (cable 0: S0 port 1), S1 port 1
    //   (its cable 0). S0 routes L1 up over cable 0 of S0-L1 (L1 port 3).
    // dummy of L0: S0's group now counts 1, S1's 0: S1 is main; S1 routes L1
    //   up over S1-L1 cable 0 (counted, L1 has CAs).
    // h10: L1's groups tie at 0, and S0 and S1 each carry 1 main route: S0
    //   is main (S0 port 3); S0 routes L0 up over S0-L0 cable 0 (L0 port 3);
    //   S1 takes its cable 0 to L1 (port 3).
    // h11: S0's group counts 1, S1's 0: S1 is main over cable 0 (S1 port 3);
    //   S1 routes L0 up over S1-L0 cable 0 (L0 port 5); S0 gets down route
    //   over its least-used cable to L1, cable 1 (S0 port 4).
    let f = two_spines_two_leaves();
    let s = configure(&f, "ftree").unwrap();
    let id = |n: &str| f.node_by_name(n).unwrap();
    for (host, want) in [("h0", [1, 3, 1, 1]), ("h10", [3, 1, 3, 3]), ("h11", [5, 2, 4, 3])] {
        let lid = s.lids.of_port(id(host), 1).unwrap().base;
        let got = ["L0", "L1", "S0", "S1"].map(|sw| s.tables.get(id(sw), lid).unwrap());
        assert_eq!(got, want, "{host}: ports of L0, L1, S0, S1");
    }
    // Each spine's LID is reached from the other spine only down and up
    // again: those two entries take minimum-hop ports.
    assert_eq!(
        s.notes,
        [
            "fat tree of 2 ranks: 2 root switches, 2 leaf switches, at most 2 CA ports per leaf",
            "2 switch-to-switch routes have no up*/down* path and take minimum-hop ports (OpenSM's connect_roots); routes to CA LIDs do not use them",
        ]
    );
}

#[test]
fn a_single_spine_reaches_every_switch_lid_up_and_down() {
    // One spine S over leaves L0, L1, one host each: every switch LID is
    // reached up*/down* (a leaf climbs to S, S goes down to a leaf), so no
    // minimum-hop entry is needed and the notes say nothing of them.
    use ibnetsim_fabric::LinkSpec;
    let mut f = Fabric::new();
    let [s, l0, l1] = ["S", "L0", "L1"].map(|n| f.add_switch(n, 4).unwrap());
    for (i, leaf) in [l0, l1].into_iter().enumerate() {
        f.connect(leaf, 2, s, 1 + i as u32, LinkSpec::default()).unwrap();
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(leaf, 1, h, 1, LinkSpec::default()).unwrap();
    }
    let subnet = configure(&f, "ftree").unwrap();
    assert_eq!(subnet.notes, ["fat tree of 2 ranks: 1 root switches, 2 leaf switches, at most 1 CA ports per leaf"]);
    for (from, to, port) in [(l0, l1, 2), (l1, l0, 2), (s, l0, 1), (s, l1, 2), (l0, s, 2), (l1, s, 2)] {
        let lid = subnet.lids.switch_lid(to).unwrap();
        assert_eq!(subnet.tables.get(from, lid), Some(port), "{} -> {}", f.node(from).name, f.node(to).name);
    }
}

#[test]
fn a_switch_lid_climbs_first_the_group_its_leaf_used_least() {
    // Spines S0, S1; leaf L0 with hosts h0, h1, h2 (ports 1-3), leaf L1 with
    // one (port 1); each leaf's port 4 goes to S0, port 5 to S1. L0's CAs
    // take main paths S0, S1, S0 (fewest counted routes in L0's groups, ties
    // to the parent carrying fewer, then S0). L1's real CA and its two
    // dummies: S1 (S0 carries 2, S1 1), S0, S1, so each spine carries 3.
    // L0's switch LID is then routed from L0 up its group with the fewest
    // counted routes, S1 (1 against 2; the spines' loads tie): S1 reaches L1
    // first, so L1's entry for L0's LID goes up to S1.
    use ibnetsim_fabric::LinkSpec;
    let mut f = Fabric::new();
    let [s0, s1, l0, l1] = ["S0", "S1", "L0", "L1"].map(|n| f.add_switch(n, 5).unwrap());
    for (i, leaf) in [l0, l1].into_iter().enumerate() {
        f.connect(leaf, 4, s0, 1 + i as u32, LinkSpec::default()).unwrap();
        f.connect(leaf, 5, s1, 1 + i as u32, LinkSpec::default()).unwrap();
    }
    for (leaf, name, port) in [(l0, "h0", 1), (l0, "h1", 2), (l0, "h2", 3), (l1, "h3", 1)] {
        let h = f.add_hca(name, 1).unwrap();
        f.connect(leaf, port, h, 1, LinkSpec::default()).unwrap();
    }
    let s = configure(&f, "ftree").unwrap();
    let lid = |n: &str| s.lids.of_port(f.node_by_name(n).unwrap(), 1).unwrap().base;
    // L1 reaches h0, h1, h2 through the spine each came down from; L0 reaches h3 through S1.
    let up = ["h0", "h1", "h2"].map(|h| s.tables.get(l1, lid(h)).unwrap());
    assert_eq!(up, [4, 5, 4]);
    assert_eq!(s.tables.get(l0, lid("h3")), Some(5));
    let l0_lid = s.lids.switch_lid(l0).unwrap();
    assert_eq!(s.tables.get(l1, l0_lid), Some(5), "L1 -> L0's LID");
    assert_eq!((s.tables.get(s0, l0_lid), s.tables.get(s1, l0_lid)), (Some(1), Some(1)));
}

#[test]
fn a_root_routes_up_through_the_child_that_carries_fewer_up_routes() {
    // One root C over four middle switches P1, P2, Q1, Q2 (C ports 1-4, their
    // port 3); P1 and P2 over leaves A and B, Q1 and Q2 over X and Y (middle
    // port 1 to the first leaf, 2 to the second; leaf port 2 to the first
    // middle switch, 3 to the second); one host per leaf on port 1.
    // hA: A climbs P1 to C, which routes its other children up in order of
    // the up routes they carry, all 0, so by index: P2 (nothing below it
    // lacks a route), Q1 (X and Y point up to Q1, counted), Q2 (nothing
    // left). hB: B climbs P2 to C; now Q2 carries fewer up routes than Q1,
    // so X and Y point up to Q2.
    use ibnetsim_fabric::LinkSpec;
    let mut f = Fabric::new();
    let [c, p1, p2, q1, q2, a, b, x, y] = ["C", "P1", "P2", "Q1", "Q2", "A", "B", "X", "Y"].map(|n| f.add_switch(n, 4).unwrap());
    for (i, mid) in [p1, p2, q1, q2].into_iter().enumerate() {
        f.connect(c, 1 + i as u32, mid, 3, LinkSpec::default()).unwrap();
    }
    for (mids, leaves) in [([p1, p2], [a, b]), ([q1, q2], [x, y])] {
        for (m, &mid) in mids.iter().enumerate() {
            for (l, &leaf) in leaves.iter().enumerate() {
                f.connect(mid, 1 + l as u32, leaf, 2 + m as u32, LinkSpec::default()).unwrap();
            }
        }
    }
    for (leaf, name) in [(a, "hA"), (b, "hB"), (x, "hX"), (y, "hY")] {
        let h = f.add_hca(name, 1).unwrap();
        f.connect(leaf, 1, h, 1, LinkSpec::default()).unwrap();
    }
    let s = configure(&f, "ftree").unwrap();
    let lid = |n: &str| s.lids.of_port(f.node_by_name(n).unwrap(), 1).unwrap().base;
    for (dest, port) in [("hA", 2), ("hB", 3)] {
        let got = [x, y].map(|leaf| s.tables.get(leaf, lid(dest)).unwrap());
        assert_eq!(got, [port; 2], "X and Y toward {dest}");
    }
    assert_eq!((s.tables.get(c, lid("hA")), s.tables.get(c, lid("hB"))), (Some(1), Some(2)));
    // C routes P2 up to itself for hA before A's turn reaches P2, then A
    // gives P2 the shorter route straight down (port 1); P1 likewise for hB.
    assert_eq!((s.tables.get(p2, lid("hA")), s.tables.get(p1, lid("hB"))), (Some(1), Some(2)));
}

#[test]
fn unequal_cable_counts_are_unsupported() {
    // Spines S0, S1 over leaves L0, L1, but L0 has two cables to S0: S0 has
    // two cables to L0 and one to L1, S1 one to each. The spines are the
    // first pair of one rank found to differ.
    use ibnetsim_fabric::LinkSpec;
    let mut f = Fabric::new();
    let [s0, s1, l0, l1] = ["S0", "S1", "L0", "L1"].map(|n| f.add_switch(n, 4).unwrap());
    for (x, px, y, py) in [(l0, 2, s0, 1), (l0, 3, s0, 2), (l0, 4, s1, 1), (l1, 2, s0, 3), (l1, 3, s1, 2)] {
        f.connect(x, px, y, py, LinkSpec::default()).unwrap();
    }
    for (i, leaf) in [l0, l1].into_iter().enumerate() {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(leaf, 1, h, 1, LinkSpec::default()).unwrap();
    }
    let e = configure(&f, "ftree").err().unwrap();
    assert_eq!(
        e.to_string(),
        "routing engine 'ftree' cannot route this fabric: switches 'S0' and 'S1' are both 0 hops below the roots but have different numbers of cables to their neighbours: not a regular fat tree"
    );
}
