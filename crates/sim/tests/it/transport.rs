//! The transport layer and the HCA's hook points: replies sent from the
//! delivery hook, closed-loop sources with their window, message completion
//! times, and a delay applied at the injection hook. Every expected time is
//! worked by hand from the zero-load formula of `switch/mod.rs`.

use ibnetsim_sim::mechanism::injection_delay;
use ibnetsim_sim::{AckMode, ClosedLoopConfig, GapDistribution, PatternConfig, ProcessKind, SimConfig, Simulation};

use crate::common::*;

/// Zero-load latency through one switch with 1 m 1x SDR links and 100 ns
/// routing: 5 000 + 80 000 + 100 000 + 5 000 + ser(wire) at 4 ns/B.
fn one_switch_latency(wire_bytes: u64) -> u64 {
    190_000 + 4_000 * wire_bytes
}

/// `src` — sw0 — `dst` with a class `a` of 256 B packets that generates
/// nothing on its own (load 0): packets come from `inject`.
fn quiet() -> (Net, SimConfig) {
    (routed(chain(1, sdr(1.0), sdr(1.0))), config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, pair("src", "dst"))]))
}

fn class_named<'a>(r: &'a ibnetsim_sim::SimResults, name: &str) -> &'a ibnetsim_sim::metrics::FlowResult {
    r.classes.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no class '{name}'"))
}

#[test]
fn the_destination_acknowledges_each_packet_through_the_fabric() {
    let (net, mut c) = quiet();
    c.transport.ack = AckMode::Packet;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.run(10_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    // The ACK is a packet of its own: 26 B of headers and a 4 B AETH.
    let acks = class_named(&r, "transport");
    assert_eq!((acks.generated_packets, acks.delivered_packets, acks.delivered_bytes), (1, 1, 30));
    let ack_latency = one_switch_latency(30);
    assert_eq!((acks.latency.min_ps, acks.latency.max_ps), (Some(ack_latency), Some(ack_latency)));
    // Any host may reply, so the ACK class's share is of both hosts' rate
    // (1x SDR: 0.25 B/ns each): 30 B in 10 µs of 0.5 B/ns = 0.006.
    assert!((acks.offered_fraction - 0.006).abs() < 1e-12 && (acks.accepted_fraction - 0.006).abs() < 1e-12, "{acks:?}");
    // The data packet's message completes when its ACK is back at the source.
    let data = class_named(&r, "a");
    let done = one_switch_latency(282) + ack_latency;
    assert_eq!(done, 1_628_000);
    assert_eq!((data.messages_completed, data.message_completion.max_ps), (1, Some(done)));
    // ib_flit_sim's message network latency stops at the last packet's
    // arrival: the ACK's way back is not in it.
    assert_eq!(data.message_network_latency.max_ps, Some(one_switch_latency(282)));
    assert_eq!((r.generated, r.delivered, r.transport.open_messages), (2, 2, 0));
}

#[test]
fn without_acknowledgements_no_reply_travels() {
    let (net, c) = quiet();
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.run(10_000_000).unwrap();
    let r = sim.results();
    assert!(r.classes.iter().all(|k| k.name != "transport"));
    assert_eq!((r.generated, r.delivered), (1, 1));
}

#[test]
fn message_acknowledgements_answer_whole_messages_on_their_sl() {
    // A 600 B trace-like message is three packets (256, 256, 88 B); with
    // ack = "message" one ACK answers all three, on SL 1 (VL 1 of 2).
    let (net, mut c) = quiet();
    c.data_vls = 2;
    c.transport.ack = AckMode::Message;
    c.transport.reply_sl = 1;
    c.traffic.closed_loop = vec![ClosedLoopConfig {
        name: "rpc".into(),
        pattern: pair("src", "dst"),
        message_bytes: 600,
        gap_ns: 1_000_000.0, // one message in the run
        ..ClosedLoopConfig::default()
    }];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(20_000_000).unwrap();
    let r = sim.results();
    let acks = class_named(&r, "transport");
    assert_eq!((acks.delivered_packets, acks.sl), (1, 1));
    let rpc = class_named(&r, "rpc");
    assert_eq!((rpc.generated_packets, rpc.delivered_packets, rpc.messages_completed), (3, 3, 1));
    // The three packets leave back to back: the last (114 B on the wire)
    // starts after 2 × 282 B and arrives one switch later; then the ACK.
    let last = 4_000 * 2 * 282 + one_switch_latency(114);
    assert_eq!(rpc.message_completion.max_ps, Some(last + one_switch_latency(30)));
    assert_eq!(rpc.message_network_latency.max_ps, Some(last), "first packet injected at 0 → last one in");
    assert_eq!(r.sls.iter().map(|s| s.sl).collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn a_closed_loop_source_waits_for_each_message_then_the_gap() {
    // Window 1, one-packet messages, 1 µs gap: a message every
    // L + gap = 1 318 000 + 1 000 000 ps, each completing L after it left.
    let (net, mut c) = quiet();
    c.traffic.classes.clear();
    c.traffic.closed_loop = vec![ClosedLoopConfig {
        name: "w1".into(),
        pattern: pair("src", "dst"),
        window: 1,
        message_bytes: 256,
        gap_ns: 1_000.0,
        ..ClosedLoopConfig::default()
    }];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    let cycle = 2_318_000;
    sim.run(10 * cycle).unwrap();
    let r = sim.results();
    let w1 = class_named(&r, "w1");
    // Messages k = 0..=9 complete at k·cycle + 1 318 000 ≤ 10·cycle; the 11th
    // has left at 10·cycle and is still on its way.
    assert_eq!(w1.messages_completed, 10);
    assert_eq!((w1.message_completion.min_ps, w1.message_completion.max_ps), (Some(1_318_000), Some(1_318_000)));
    assert_eq!((r.transport.closed_loop_peak_outstanding, r.transport.open_messages), (1, 1));
    assert_eq!(r.generated, 11);
}

/// Messages a window-1 source of one-packet messages completes in `cycles`
/// mean cycles (latency 1 318 000 ps + a 1 µs mean gap drawn by `gap`).
fn messages_with_gap(gap: GapDistribution, cycles: u64) -> u64 {
    let (net, mut c) = quiet();
    c.traffic.classes.clear();
    c.traffic.closed_loop = vec![ClosedLoopConfig {
        name: "g".into(),
        pattern: pair("src", "dst"),
        message_bytes: 256,
        gap_ns: 1_000.0,
        gap_distribution: gap,
        ..ClosedLoopConfig::default()
    }];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(cycles * 2_318_000).unwrap();
    class_named(&sim.results(), "g").messages_completed
}

#[test]
fn drawn_gaps_keep_their_mean() {
    // Constant: exactly one message per cycle (see the test above). Drawn
    // gaps of the same mean give the same rate on average: 2 000 cycles,
    // within 5 % (the mean of 2 000 exponential gaps has a 2.2 % standard
    // deviation, uniform ones 1.3 %; the seed is fixed, so this is not flaky).
    assert_eq!(messages_with_gap(GapDistribution::Constant, 2_000), 2_000);
    for gap in [GapDistribution::Exponential, GapDistribution::Uniform] {
        let n = messages_with_gap(gap, 2_000);
        assert!((1_900..=2_100).contains(&n), "{gap:?}: {n} messages");
        assert_ne!(n, 2_000, "{gap:?}: the gaps are drawn");
    }
}

#[test]
fn message_network_latency_leaves_out_the_wait_at_the_source() {
    // Window 2 of one-packet messages at time 0: the second waits at the
    // source while the first is serialized (282 B at 4 ns/B), then crosses
    // the switch as the first did, its output link freeing just in time
    // (185 000 + 1 128 000 ps for both).
    let (net, mut c) = quiet();
    c.traffic.classes.clear();
    c.traffic.closed_loop = vec![ClosedLoopConfig {
        name: "w2".into(),
        pattern: pair("src", "dst"),
        window: 2,
        message_bytes: 256,
        gap_ns: 1_000_000.0,
        ..ClosedLoopConfig::default()
    }];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(5_000_000).unwrap();
    let r = sim.results();
    let w2 = class_named(&r, "w2");
    let latency = one_switch_latency(282);
    assert_eq!(w2.messages_completed, 2);
    assert_eq!((w2.message_completion.min_ps, w2.message_completion.max_ps), (Some(latency), Some(1_128_000 + latency)));
    assert_eq!((w2.message_network_latency.min_ps, w2.message_network_latency.max_ps), (Some(latency), Some(latency)));
}

#[test]
fn closed_loop_sources_never_exceed_their_window() {
    // Eight hosts sending to each other with a window of 3 messages of two
    // packets and no gap: the fabric is saturated, so every source keeps its
    // window full, and never more (checked at many points of the run).
    let net = routed(star(8));
    let mut c = config(vec![]);
    c.traffic.closed_loop = vec![ClosedLoopConfig {
        name: "w3".into(),
        pattern: PatternConfig::Uniform,
        window: 3,
        message_bytes: 512,
        ..ClosedLoopConfig::default()
    }];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    for i in 1..=200u64 {
        sim.run(i * 250_000).unwrap();
        for s in 0..8 {
            let (outstanding, peak) = sim.closed_loop_outstanding(s).unwrap();
            assert!(outstanding <= 3 && peak <= 3, "source {s} at slice {i}: {outstanding} outstanding, peak {peak}");
        }
        assert!(sim.results().transport.open_messages <= 8 * 3);
    }
    let r = sim.results();
    assert_eq!(r.transport.closed_loop_peak_outstanding, 3);
    assert!(class_named(&r, "w3").messages_completed > 100);
    assert!(sim.closed_loop_outstanding(8).is_none());
    sim.check_conservation().unwrap();
}

#[test]
fn the_injection_hook_delays_a_packet_by_the_gap() {
    // Two packets generated together: without pacing the second leaves as
    // soon as the first has (one packet time later); with a 10 µs gap it
    // leaves 10 µs after the first.
    let latencies = |gap: Option<f64>| {
        let (net, mut c) = quiet();
        c.mechanisms.injection_delay = gap.map(|gap_ns| injection_delay::Options { gap_ns });
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.inject(0, 0, 0, 1).unwrap();
        sim.inject(0, 0, 0, 1).unwrap();
        sim.run(50_000_000).unwrap();
        let l = sim.results().classes[0].latency.clone();
        (l.min_ps.unwrap(), l.max_ps.unwrap())
    };
    assert_eq!(latencies(None), (1_318_000, 1_318_000 + 1_128_000));
    assert_eq!(latencies(Some(10_000.0)), (1_318_000, 1_318_000 + 10_000_000));
    assert_eq!(latencies(Some(0.5)), (1_318_000, 1_318_000 + 1_128_000), "a gap shorter than a packet time changes nothing");
}

#[test]
fn transport_and_closed_loop_keys_are_checked() {
    let (net, mut c) = quiet();
    c.traffic.closed_loop = vec![ClosedLoopConfig { window: 0, ..ClosedLoopConfig::default() }];
    let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap_err().to_string();
    assert!(e.contains("traffic.closed_loop[0].window"), "{e}");
    c.traffic.closed_loop = vec![ClosedLoopConfig { name: "a".into(), ..ClosedLoopConfig::default() }];
    let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap_err().to_string();
    assert!(e.contains("traffic.closed_loop[0].name") && e.contains("used twice"), "{e}");
    c.traffic.closed_loop.clear();
    c.transport.ack = AckMode::Packet;
    c.transport.reply_sl = 16;
    let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap_err().to_string();
    assert!(e.contains("transport.reply_sl"), "{e}");
    let e = SimConfig::from_toml("[transport]\nack = \"always\"\n", "t.toml").unwrap_err().to_string();
    assert!(e.contains("packet") && e.contains("message"), "{e}");
    let e = SimConfig::from_toml("[mechanisms.injection_delay]\ngap = 3\n", "t.toml").unwrap_err().to_string();
    assert!(e.contains("gap") && e.contains("line 2"), "{e}");
    let c = SimConfig::from_toml(
        "[transport]\nack = \"message\"\nreply_sl = 2\n[mechanisms.injection_delay]\ngap_ns = 40.0\n[[traffic.closed_loop]]\nname = \"rpc\"\nwindow = 4\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!((c.transport.ack, c.transport.reply_sl, c.traffic.closed_loop[0].window), (AckMode::Message, 2, 4));
    assert_eq!(c.mechanisms.injection_delay, Some(injection_delay::Options { gap_ns: 40.0 }));
}

#[test]
fn a_closed_loop_source_goes_on_after_a_lost_message() {
    // No retransmission: a message whose packet is dropped is given up, and
    // its closed-loop source sends the next one after its gap, as after a
    // completion. Here the switch has no route to dst, so every message is
    // lost at its first hop: one every (routing + gap) instead of one for
    // the whole run.
    let mut net = routed(fast_to_slow());
    let sw = net.fabric.node_by_name("sw0").unwrap();
    let dst = net.lids.of_port(net.fabric.node_by_name("dst").unwrap(), 1).unwrap().base;
    net.tables.set(sw, dst, ibnetsim_sm::NO_PATH);
    let mut c: SimConfig = config(vec![]);
    c.traffic.closed_loop = vec![ibnetsim_sim::ClosedLoopConfig {
        name: "rpc".into(),
        pattern: pair("src", "dst"),
        message_bytes: 256,
        gap_ns: 2_000.0,
        ..Default::default()
    }];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(100_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    // A message is generated, routed 125 ns later and dropped, and the next
    // leaves 2 µs after: one per 2.125 µs, 48 in 100 µs (the 48th dropped at
    // 47 × 2.125 + 0.125 = 100 µs).
    assert_eq!((r.transport.lost_messages, r.generated, r.dropped), (48, 48, 48));
    assert_eq!(r.classes[0].messages_completed, 0);
}
