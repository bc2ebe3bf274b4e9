//! Adaptive selection by credits spreads a flow over the paths of the
//! destination's LMC LIDs; deterministic routing keeps the DLID's path.
//!
//! `a0, a1` on `s0`; `b0, b1` on `s3`; two disjoint middle switches `s1`, `s2`.
//! LMC 1: a destination's base LID is routed via `s1`, base + 1 via `s2`.
//! `a0 → b0` and `a1 → b1` at 90 % load each share `s0 → s1` under
//! deterministic routing (at most 50 % each), but adaptive selection can use
//! both middle switches.

use ibnetsim_sim::{PathBits, PatternConfig, ProcessKind, SimConfig, Simulation};

use crate::common::*;

fn flows(selection: &str, path_bits: PathBits) -> SimConfig {
    let mut c = config(vec![
        class("x", 0, 0.9, ProcessKind::Poisson, 256, pair("a0", "b0")),
        class("y", 0, 0.9, ProcessKind::Poisson, 256, pair("a1", "b1")),
    ]);
    for k in &mut c.traffic.classes {
        k.path_bits = path_bits;
    }
    c.selection = selection.into();
    c.warmup_ns = 200_000.0;
    c
}

fn accepted(c: &SimConfig) -> (f64, f64, f64, f64) {
    let net = diamond();
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.run(6_200_000_000).unwrap();
    let r = sim.results();
    let u1 = port(&r, "s0", 1).utilization;
    let u2 = port(&r, "s0", 2).utilization;
    (r.classes[0].accepted_fraction, r.classes[1].accepted_fraction, u1, u2)
}

#[test]
fn deterministic_shares_one_path() {
    let (x, y, u1, u2) = accepted(&flows("deterministic", PathBits::Base));
    assert!(x < 0.52 && y < 0.52 && x + y > 0.97, "{x} {y}");
    assert!(u1 > 0.99 && u2 == 0.0, "{u1} {u2}");
}

#[test]
fn adaptive_by_credits_uses_both_paths() {
    let (x, y, u1, u2) = accepted(&flows("adaptive-by-credits", PathBits::Base));
    assert!(x > 0.87 && y > 0.87, "{x} {y}");
    assert!((u1 - u2).abs() < 0.2 && u1 + u2 > 1.75, "{u1} {u2}");
}

#[test]
fn random_path_bits_spread_deterministic_routing() {
    // Each packet picks s1 or s2 at random at the source. At speedup 1 the
    // crossbar outputs take one packet at a time, so s0 behaves as a 2×2
    // input-queued switch with random destinations, which head-of-line
    // blocking saturates at 75 % (Karol, Hluchyj, Morgan 1987).
    let (x, y, u1, u2) = accepted(&flows("deterministic", PathBits::Random));
    assert!((0.72..0.78).contains(&x) && (0.72..0.78).contains(&y), "{x} {y}");
    assert!((u1 - u2).abs() < 0.05, "{u1} {u2}");
    // A crossbar twice as fast as the links lets the output buffers absorb
    // the conflicts.
    let mut c = flows("deterministic", PathBits::Random);
    c.switch.speedup = 2.0;
    let (x, y, _, _) = accepted(&c);
    assert!(x > 0.85 && y > 0.85, "{x} {y}");
}

#[test]
fn uniform_traffic_on_the_diamond_conserves_packets() {
    let mut c = flows("adaptive-by-credits", PathBits::Random);
    c.traffic.classes[0].pattern = PatternConfig::Uniform;
    let net = diamond();
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(1_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    assert_eq!(sim.results().dropped, 0);
}

#[test]
fn adaptive_by_credits_takes_the_path_with_more_credits_when_both_are_free() {
    // 1x SDR, 1 m cables. a0 → b0 at 0 ns takes its base path (s0 port 1,
    // both options have full credits: the tie goes to the first). It leaves
    // s0 on [185, 1 313] ns and leaves s1's input buffer at 1 498 ns (s1
    // routes it at 370 ns, its tail is in at 1 318 ns, 1 128 ns per packet),
    // so its 5 credits are back at s0 at 1 503 ns. a1 → b1 at 1 200 ns is
    // routed at s0 at 1 385 ns: both ports are free, but port 1 is still 5
    // credits short, so the packet takes s2 (port 2). Each port then carried
    // exactly one packet of the same size.
    for output_buffers in [true, false] {
        let mut c = flows("adaptive-by-credits", PathBits::Base);
        c.warmup_ns = 0.0;
        for k in &mut c.traffic.classes {
            k.load = 0.0;
        }
        if !output_buffers {
            c.switch.output_buffer_bytes = 0;
        }
        let net = diamond();
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.inject(0, 0, 0, 2).unwrap();
        sim.inject(1_200_000, 1, 1, 3).unwrap();
        sim.run(10_000_000).unwrap();
        let r = sim.results();
        assert_eq!(r.delivered, 2, "output buffers: {output_buffers}");
        let (u1, u2) = (port(&r, "s0", 1).utilization, port(&r, "s0", 2).utilization);
        assert!(u1 > 0.0 && u1 == u2, "output buffers: {output_buffers}: s0 ports 1, 2 busy {u1}, {u2}");
    }
}

#[test]
fn adaptive_selection_passes_over_a_path_whose_vl_the_output_never_sends() {
    // With and without output buffers, two data VLs. At s0, SL0 leaving by
    // port 1 (toward s1) maps to VL1, which port 1's VLArbitration table
    // leaves out (only VL0 has weight); by port 2 (toward s2) it stays on VL0. One packet
    // a0 → b0 is routed at s0 at 185 ns with both links free and full
    // credits: the base path (port 1) would win the tie, but its VL is never
    // sent there, so the packet must take port 2 and arrive as on any
    // three-switch path at zero load: 3·(5 + 80 + 100) + 5 + 1 128 =
    // 1 688 ns (the sum of `zero_load::one_two_three_switches_equal_links`).
    // Before, it bid for port 1's VL1 and waited for good, though port 2 was
    // free (reported as a deadlock at the end of the run); with output
    // buffers it was buffered at port 1 on VL1 and starved there. Output
    // buffers leave the zero-load sum unchanged (`zero_load`).
    use ibnetsim_sim::{QosTables, Sl2VlMap, VlArbConfig, VlArbMap};
    for output_buffer_bytes in [0, 2048] {
        let net = diamond();
        let s0 = net.fabric.node_by_name("s0").unwrap();
        let mut c = flows("adaptive-by-credits", PathBits::Base);
        c.traffic.classes.truncate(1);
        c.traffic.classes[0].load = 0.0;
        c.warmup_ns = 0.0;
        c.data_vls = 2;
        c.switch.output_buffer_bytes = output_buffer_bytes;
        let only_vl0 = VlArbConfig { high: vec![], low: vec![(0, 10)], limit_of_high_priority: 0 };
        let sl2vl = Sl2VlMap::from_fn(&net.fabric, |n, _, out, _| u8::from(n == s0 && out == 1));
        let qos = QosTables { sl2vl, vlarb: VlArbMap { default: VlArbConfig::uniform(2), per_port: vec![((s0, 1), only_vl0)] } };
        let mut sim = Simulation::with_qos(&net.fabric, &net.lids, &net.tables, &c, qos).unwrap();
        sim.inject(0, 0, 0, 2).unwrap();
        sim.run(10_000_000).unwrap();
        let r = sim.results();
        let l = &r.classes[0].latency;
        assert_eq!((r.delivered, l.min_ps, l.max_ps), (1, Some(1_688_000), Some(1_688_000)), "output_buffer_bytes {output_buffer_bytes}");
        assert_eq!(port(&r, "s0", 1).utilization, 0.0);
        assert!(port(&r, "s0", 2).utilization > 0.0);
    }
}
