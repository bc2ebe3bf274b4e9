//! LFU path selection (paper 000 §3.3) decides at routing time: each packet
//! chooses once per switch the least used of its destination's paths, and
//! then waits for that path.
//!
//! Fabric: the diamond of `common::diamond` (`s0` reaches `s3` via `s1` on
//! port 1 or `s2` on port 2; LMC 1). Packets are injected one by one, so the
//! counts are exact.

use ibnetsim_sim::{CrossbarKind, PatternConfig, ProcessKind, SimConfig, Simulation};

use crate::common::*;

/// Host index (LID order) of the diamond's host `name`.
fn host(net: &Net, name: &str) -> usize {
    let mut bases: Vec<(u16, &str)> = ["a0", "a1", "b0", "b1"]
        .into_iter()
        .map(|n| (net.lids.of_port(net.fabric.node_by_name(n).unwrap(), 1).unwrap().base, n))
        .collect();
    bases.sort_unstable();
    bases.iter().position(|&(_, n)| n == name).unwrap()
}

/// Class 0: 256 B payloads a1 → b1; class 1: 1 B payloads a0 → b0; both
/// only by injection.
fn cfg(selection: &str) -> SimConfig {
    let mut c = config(vec![
        class("big", 0, 0.0, ProcessKind::Poisson, 256, pair("a1", "b1")),
        class("small", 0, 0.0, ProcessKind::Poisson, 1, pair("a0", "b0")),
    ]);
    c.selection = selection.into();
    c
}

#[test]
fn one_flow_alternates_between_the_two_paths() {
    let net = diamond();
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &cfg("lfu")).unwrap();
    let (a0, b0) = (host(&net, "a0"), host(&net, "b0"));
    for i in 0..101 {
        sim.inject(1_000 + i, 1, a0, b0).unwrap();
    }
    sim.run(1_000_000_000).unwrap();
    assert_eq!((sim.delivered(), sim.packets_alive()), (101, 0));
    // Ties go to the DLID's own entry (via s1), then the paths alternate.
    assert_eq!(sim.selection_count("s0", 1, 0), Some(51));
    assert_eq!(sim.selection_count("s0", 2, 0), Some(50));
    // What each middle switch forwarded is what its link from s0 carried.
    assert_eq!(sim.selection_count("s1", 2, 0), Some(51));
    assert_eq!(sim.selection_count("s2", 2, 0), Some(50));
    let b0_port = net.fabric.peer(net.fabric.node_by_name("b0").unwrap(), 1).unwrap().port;
    assert_eq!(sim.selection_count("s3", b0_port, 0), Some(101));
    // Equal packets: the links' busy times are in the same 51 : 50 ratio.
    let r = sim.results();
    let (u1, u2) = (port(&r, "s0", 1).utilization, port(&r, "s0", 2).utilization);
    assert!((u1 * 50.0 - u2 * 51.0).abs() < 1e-9 * u1, "{u1} {u2}");
    // Counters exist only for the routing-time policy.
    let det = Simulation::new(&net.fabric, &net.lids, &net.tables, &cfg("deterministic")).unwrap();
    assert_eq!(det.selection_count("s0", 1, 0), None);
    assert_eq!(sim.selection_count("s0", 9, 0), None);
    assert_eq!(sim.selection_count("a0", 1, 0), None);
}

#[test]
fn congested_packets_choose_once_per_switch() {
    // a0 and a1 both flood b0: its link carries half of what arrives, so heads
    // at s0 wait and are re-arbitrated many times. Re-choosing would count a
    // packet again; the counters must equal the packets, exactly.
    let net = diamond();
    let mut c = cfg("lfu");
    c.traffic.classes[0].pattern = pair("a1", "b0");
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    let (a0, a1, b0) = (host(&net, "a0"), host(&net, "a1"), host(&net, "b0"));
    for i in 0..200 {
        sim.inject(1_000 + i, 0, a1, b0).unwrap();
        sim.inject(1_000 + i, 1, a0, b0).unwrap();
    }
    sim.run(2_000_000_000).unwrap();
    assert_eq!((sim.delivered(), sim.packets_alive()), (400, 0));
    let at = |s: &str, p: u8| sim.selection_count(s, p, 0).unwrap();
    assert_eq!((at("s0", 1), at("s0", 2)), (200, 200));
    assert_eq!((at("s1", 2), at("s2", 2)), (200, 200));
    let b0_port = net.fabric.peer(net.fabric.node_by_name("b0").unwrap(), 1).unwrap().port;
    assert_eq!(at("s3", b0_port), 400);
    sim.check_conservation().unwrap();
}

/// Spread between the two small packets' latencies (ps) and how many packets
/// went through `s1`, after one big packet a1 → b1 and, 300 ns later, two
/// small ones a0 → b0.
fn big_then_two_small(selection: &str) -> (u64, Option<u32>) {
    let net = diamond();
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &cfg(selection)).unwrap();
    let (a0, a1, b0, b1) = (host(&net, "a0"), host(&net, "a1"), host(&net, "b0"), host(&net, "b1"));
    sim.inject(1_000, 0, a1, b1).unwrap();
    sim.inject(300_000, 1, a0, b0).unwrap();
    sim.inject(300_000, 1, a0, b0).unwrap();
    sim.run(1_000_000_000).unwrap();
    assert_eq!(sim.delivered(), 3);
    let l = &sim.results().classes[1].latency;
    (l.max_ps.unwrap() - l.min_ps.unwrap(), sim.selection_count("s1", 2, 0))
}

#[test]
fn a_pinned_packet_waits_for_its_port_when_the_other_frees_first() {
    // At s0 the big packet takes port 1 (tie → first) and occupies its link
    // for 282 B × 4 ns = 1128 ns. The first small packet takes port 2 (least
    // used), the second port 1 again (tie): it is pinned there and waits for
    // the big packet although port 2 is free again 108 ns later.
    let (spread, via_s1) = big_then_two_small("lfu");
    assert_eq!(via_s1, Some(2));
    // The second small packet starts 27 B × 4 ns = 108 ns after the first on
    // the a0 link, so it reaches s0 about 600 ns before the link to s1 frees.
    assert!(spread > 108_000 + 500_000, "{spread}");
    // Choosing at arbitration time it takes the free port 2 instead.
    let (spread, _) = big_then_two_small("adaptive-by-credits");
    assert!(spread < 108_000 + 100_000, "{spread}");
}

#[test]
fn uniform_traffic_balances_every_vl_in_every_switch_mode() {
    // Each switch's decisions among its two middle links alternate per VL, so
    // at s0 and s3 the two counters of every VL differ by at most one, with
    // or without output buffers, multiplexed or per-VL crossbar; the debug
    // check that no movable head is left waiting runs after every arbitration.
    let net = diamond();
    for (output_buffer_bytes, crossbar) in
        [(0, CrossbarKind::Multiplexed), (1024, CrossbarKind::Multiplexed), (0, CrossbarKind::PerVl), (8192, CrossbarKind::PerVl)]
    {
        let mut c = uniform(0.9, ProcessKind::Poisson, 200);
        c.traffic.classes.push(class("x", 1, 0.3, ProcessKind::Poisson, 64, PatternConfig::Uniform));
        c.data_vls = 2;
        c.selection = "lfu".into();
        c.switch.output_buffer_bytes = output_buffer_bytes;
        c.switch.crossbar = crossbar;
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.run(300_000_000).unwrap();
        sim.check_conservation().unwrap();
        let r = sim.results();
        assert!(r.delivered > 1000 && r.dropped == 0, "{} {}", r.delivered, r.dropped);
        for s in ["s0", "s3"] {
            let mut routed = 0;
            for vl in 0..2 {
                let (a, b) = (sim.selection_count(s, 1, vl).unwrap(), sim.selection_count(s, 2, vl).unwrap());
                assert!(a.abs_diff(b) <= 1, "{s} VL {vl}: {a} {b}");
                routed += a + b;
            }
            assert!(routed > 300, "{s}: {routed}");
        }
    }
}
