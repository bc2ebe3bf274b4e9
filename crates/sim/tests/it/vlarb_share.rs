//! A congested output shares its link among VLs as the VLArbitration tables say.
//!
//! `h0` (SL0 → VL0) and `h1` (SL1 → VL1) both send to `h2` at full rate
//! through one switch, so its port 3 is oversubscribed twice and every VL
//! always has a packet ready; the share of the link each VL gets follows the
//! table. Packets are 282 B = 5 credits. The base switch has a multiplexed
//! crossbar at twice the link rate (paper 001 §5.1): at speedup 1 a shared
//! crossbar output is itself the bottleneck and its round robin, not the VL
//! arbiter, would decide the share.

use ibnetsim_sim::{CrossbarKind, ProcessKind, SimConfig, Simulation, VlArbConfig, VlArbitrationConfig};

use crate::common::*;

fn congested(table: VlArbConfig, load0: f64) -> SimConfig {
    let mut c = config(vec![
        class("a", 0, load0, ProcessKind::Bernoulli, 256, pair("h0", "h2")),
        class("b", 1, 1.0, ProcessKind::Bernoulli, 256, pair("h1", "h2")),
    ]);
    c.data_vls = 2;
    c.warmup_ns = 500_000.0;
    c.switch.speedup = 2.0;
    c.vl_arbitration = VlArbitrationConfig::Iba(table);
    c
}

/// Busy fractions of VL0 and VL1 on the congested link.
fn shares(c: &SimConfig) -> (f64, f64) {
    let net = routed(star(3));
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.run(10_500_000_000).unwrap();
    let r = sim.results();
    let p = port(&r, "sw", 3);
    (p.vl_utilization[0], p.vl_utilization[1])
}

type Edit = Box<dyn Fn(&mut SimConfig)>;

fn modes() -> Vec<(&'static str, Edit)> {
    vec![
        ("multiplexed, output buffers, speedup 2", Box::new(|c: &mut SimConfig| c.switch.crossbar = CrossbarKind::Multiplexed)),
        (
            "per-VL crossbar, output buffers, speedup 1",
            Box::new(|c: &mut SimConfig| {
                c.switch.crossbar = CrossbarKind::PerVl;
                c.switch.speedup = 1.0;
            }),
        ),
        ("no output buffers", Box::new(|c: &mut SimConfig| c.switch.output_buffer_bytes = 0)),
    ]
}

#[test]
fn weights_two_to_one() {
    // VL0 weight 10 credits = 2 packets per turn, VL1 weight 5 = 1 packet.
    let t = VlArbConfig { high: vec![], low: vec![(0, 10), (1, 5)], limit_of_high_priority: 0 };
    for (name, m) in modes() {
        let mut c = congested(t.clone(), 1.0);
        m(&mut c);
        let (a, b) = shares(&c);
        assert!(a + b > 0.995, "{name}: link not saturated: {a} + {b}");
        assert!((a / b - 2.0).abs() < 0.01, "{name}: VL0/VL1 = {a}/{b}");
    }
}

#[test]
fn weight_rounds_up_to_whole_packets() {
    // Weight 6 credits with 5-credit packets still sends 2 packets a turn (the
    // second starts with 1 credit left and finishes), weight 1 sends 1.
    let t = VlArbConfig { high: vec![], low: vec![(0, 6), (1, 1)], limit_of_high_priority: 0 };
    let (a, b) = shares(&congested(t, 1.0));
    assert!((a / b - 2.0).abs() < 0.01, "VL0/VL1 = {a}/{b}");
}

fn high_low(limit: u8) -> VlArbConfig {
    VlArbConfig { high: vec![(0, 255)], low: vec![(1, 255)], limit_of_high_priority: limit }
}

#[test]
fn limit_of_high_priority_zero_alternates() {
    for (name, m) in modes() {
        let mut c = congested(high_low(0), 1.0);
        m(&mut c);
        let (a, b) = shares(&c);
        assert!((a / b - 1.0).abs() < 0.01, "{name}: VL0/VL1 = {a}/{b}");
    }
}

#[test]
fn limit_of_high_priority_one_is_4096_bytes() {
    // 4096 B = 64 credits: 12 packets make 60, the 13th starts below the limit
    // and finishes; then one low packet. VL0 gets 13/14 of the link.
    let (a, b) = shares(&congested(high_low(1), 1.0));
    assert!((a / b - 13.0).abs() < 0.15, "VL0/VL1 = {a}/{b}");
    let (a, b) = shares(&congested(high_low(2), 1.0));
    // 128 credits: 25 packets (120) start below, the 26th at 125 as well: 26:1.
    assert!((a / b - 26.0).abs() < 0.3, "VL0/VL1 = {a}/{b}");
}

#[test]
fn unbounded_high_priority_starves_low_only_while_high_is_ready() {
    let (a, b) = shares(&congested(high_low(255), 1.0));
    assert!(a > 0.995 && b < 0.001, "VL0 {a}, VL1 {b}");
    // High priority at 30 % load: low gets the rest, whenever no high packet is ready.
    let (a, b) = shares(&congested(high_low(255), 0.3));
    assert!((a - 0.3).abs() < 0.02 && (a + b) > 0.995, "VL0 {a}, VL1 {b}");
}

#[test]
fn multiplexed_crossbar_at_speedup_one_is_the_bottleneck() {
    // The shared crossbar output alternates between the two inputs, so the
    // link sends what the crossbar delivers: 1:1 whatever the table says.
    let t = VlArbConfig { high: vec![], low: vec![(0, 10), (1, 5)], limit_of_high_priority: 0 };
    let mut c = congested(t, 1.0);
    c.switch.speedup = 1.0;
    let (a, b) = shares(&c);
    assert!((a / b - 1.0).abs() < 0.01 && a + b > 0.995, "VL0/VL1 = {a}/{b}");
}

#[test]
fn round_robin_arbiter_shares_equally() {
    let mut c = congested(VlArbConfig::default(), 1.0);
    c.vl_arbitration = VlArbitrationConfig::RoundRobin;
    let (a, b) = shares(&c);
    assert!((a / b - 1.0).abs() < 0.01, "VL0/VL1 = {a}/{b}");
}
