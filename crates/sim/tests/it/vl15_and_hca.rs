//! VL15 (management) goes first everywhere and is not flow controlled; the
//! HCA serves its SL send queues by priority.

use ibnetsim_sim::{ClassConfig, ProcessKind, Simulation};

use crate::common::*;

#[test]
fn vl15_has_strict_priority_over_congested_data() {
    // h0 and h1 overload the link to h2 with data; h1 also sends 64 B
    // management packets to h2 on VL15.
    let net = routed(star(3));
    let mut c = config(vec![
        class("data0", 0, 1.0, ProcessKind::Bernoulli, 256, pair("h0", "h2")),
        class("data1", 0, 1.0, ProcessKind::Bernoulli, 256, pair("h1", "h2")),
        ClassConfig { vl15: true, ..class("mgmt", 0, 0.01, ProcessKind::Poisson, 64, pair("h1", "h2")) },
    ]);
    c.warmup_ns = 100_000.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(5_100_000_000).unwrap();
    let r = sim.results();
    let mgmt = &r.classes[2].latency;
    // Zero load: 5 000 + 80 000 + 100 000 + 5 000 + 90 B · 4 000 = 550 000 ps.
    // At most one data packet (1 128 000 ps) ahead of it at the HCA link, the
    // crossbar input and the switch output: < 550 000 + 3 · 1 128 000.
    // (The HCA link is always busy with data, so some wait is almost certain.)
    assert!(mgmt.count > 30, "{}", mgmt.count);
    assert!(mgmt.min_ps.unwrap() >= 550_000, "{mgmt:?}");
    assert!(mgmt.max_ps.unwrap() < 550_000 + 3 * 1_128_000, "{mgmt:?}");
    // The data queues grow without bound.
    assert!(r.classes[1].latency.mean_ps.unwrap() > 500_000_000.0, "{:?}", r.classes[1].latency);
    let p = port(&r, "sw", 3);
    assert!(p.vl_utilization[1] > 0.001, "VL15 slot used: {:?}", p.vl_utilization);
    assert_eq!(r.vl_of_slot, vec![0, 15]);
}

#[test]
fn vl15_without_room_is_dropped_not_blocked() {
    // Three hosts send VL15 at full rate to a fourth: the switch's VL15 input
    // buffers (one packet each) overflow, and packets are discarded.
    let net = routed(star(4));
    let mk = |n: &str, s: &str| ClassConfig { vl15: true, ..class(n, 0, 1.0, ProcessKind::Bernoulli, 256, pair(s, "h3")) };
    let mut c = config(vec![mk("a", "h0"), mk("b", "h1"), mk("c", "h2")]);
    c.switch.vl15_buffer_bytes = 320;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(2_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let overflow = r.drops.iter().find(|(n, _)| n == "vl15_overflow").unwrap().1;
    assert!(overflow > 1000, "{overflow}");
    assert_eq!(r.dropped, overflow);
    // The link to h3 carries VL15 all the time.
    let p = port(&r, "sw", 4);
    assert!(p.vl_utilization[1] > 0.99, "{:?}", p.vl_utilization);
    // Hosts are never held back by credits on VL15: their links stay busy.
    assert!(port(&r, "h0", 1).utilization > 0.99);
}

#[test]
fn hca_serves_sl_queues_by_priority() {
    // h0 offers 0.6 on SL1 and 0.6 on SL0, both on VL0, to h1; SL1 is served
    // first, so it gets all it offers and SL0 the remaining 0.4.
    let net = routed(star(2));
    let mut c = config(vec![
        class("low", 0, 0.6, ProcessKind::Poisson, 256, pair("h0", "h1")),
        class("high", 1, 0.6, ProcessKind::Poisson, 256, pair("h0", "h1")),
    ]);
    c.hca.sl_priority = vec![1];
    c.warmup_ns = 200_000.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(20_200_000_000).unwrap();
    let r = sim.results();
    let (lo, hi) = (&r.classes[0], &r.classes[1]);
    assert!((hi.accepted_fraction - 0.6).abs() < 0.02, "high {}", hi.accepted_fraction);
    assert!((lo.accepted_fraction - 0.4).abs() < 0.02, "low {}", lo.accepted_fraction);
    assert!(r.injection_queue.total_packets > 1000, "the low SL queue grows");
    // Per-SL results mirror the classes.
    assert_eq!(r.sls.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), vec!["SL0", "SL1"]);
    assert_eq!(r.sls[1].delivered_packets, hi.delivered_packets);
}

#[test]
fn a_vl15_packet_is_dropped_exactly_when_it_would_overfill_the_buffer() {
    // src —4x— sw0 —1x— dst without output buffers; VL15 buffers of 320 B =
    // 5 credits; seven VL15 packets of 30 B (56 B on the wire, 1 credit)
    // leave src back to back, one every 56 ns. Packet 1 is routed at 125 ns
    // and leaves the input then (the 1x link takes it until 349 ns); packet
    // 2 leaves at 349 ns. At 336 ns packet 7 finds packets 2–6 in the
    // buffer: 5 + 1 credits > 5, so it is dropped — the only one (at 5 of 5
    // it would still fit).
    let net = routed(fast_to_slow());
    let mgmt = ClassConfig { vl15: true, ..class("mad", 0, 0.0, ProcessKind::Poisson, 30, pair("src", "dst")) };
    let mut c = config(vec![mgmt]);
    c.switch.output_buffer_bytes = 0;
    c.switch.vl15_buffer_bytes = 320;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    for _ in 0..7 {
        sim.inject(0, 0, 0, 1).unwrap();
    }
    sim.run(10_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let overflow = r.drops.iter().find(|(n, _)| n == "vl15_overflow").unwrap().1;
    assert_eq!((overflow, r.delivered), (1, 6));
}
