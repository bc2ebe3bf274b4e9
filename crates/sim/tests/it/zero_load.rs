//! Zero-load latency equals the analytic sum of `switch/mod.rs` to the picosecond.
//!
//! One source sends to one destination along a chain of switches with
//! Bernoulli arrivals: packets follow each other at least one packet time
//! apart along a single path of equal links, so none ever waits and every
//! packet's latency must be exactly the zero-load latency (min = max).

use ibnetsim_sim::{CrossbarKind, ProcessKind, SimConfig, Simulation};

use crate::common::*;

fn run(net: &Net, c: &SimConfig) -> (u64, u64, u64) {
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.run(2_000_000_000).unwrap();
    let r = sim.results();
    let l = &r.classes[0].latency;
    let n = &r.classes[0].network_latency;
    assert!(l.count > 300, "too few packets: {}", l.count);
    assert_eq!((n.min_ps, n.max_ps), (l.min_ps, l.max_ps), "no packet may wait at the source");
    (l.min_ps.unwrap(), l.max_ps.unwrap(), l.count)
}

fn base(output_buffers: bool, crossbar: CrossbarKind) -> SimConfig {
    let mut c = config(vec![class("a", 0, 0.3, ProcessKind::Bernoulli, 256, pair("src", "dst"))]);
    c.switch.output_buffer_bytes = if output_buffers { 2048 } else { 0 };
    c.switch.crossbar = crossbar;
    c
}

#[test]
fn one_two_three_switches_equal_links() {
    // 1x SDR: 4 ns/B. Wire 282 B → ser(W) = 1 128 000 ps; ser(H = 20 B) = 80 000 ps;
    // 1 m of cable = 5 000 ps; routing 100 ns = 100 000 ps.
    // latency = k·(5 000 + 80 000 + 100 000) + 5 000 + 1 128 000
    let expected = [1_318_000u64, 1_503_000, 1_688_000];
    for (k, &want) in (1..=3).zip(&expected) {
        for ob in [true, false] {
            for xb in [CrossbarKind::Multiplexed, CrossbarKind::PerVl] {
                let net = routed(chain(k, sdr(1.0), sdr(1.0)));
                let (min, max, _) = run(&net, &base(ob, xb));
                assert_eq!((min, max), (want, want), "k={k} output_buffers={ob} {xb:?}");
            }
        }
    }
}

#[test]
fn cables_arbitration_delay_and_speedup() {
    // Two switches, 20 m cables (100 ns), routing 100 ns + arbitration 20 ns,
    // speedup 2 (does not change zero-load latency with equal links):
    // 2·(100 000 + 80 000 + 120 000) + 100 000 + 1 128 000 = 1 828 000.
    let net = routed(chain(2, sdr(20.0), sdr(20.0)));
    let mut c = base(true, CrossbarKind::Multiplexed);
    c.switch.arbitration_delay_ns = 20.0;
    c.switch.speedup = 2.0;
    let (min, max, _) = run(&net, &c);
    assert_eq!((min, max), (1_828_000, 1_828_000));
}

#[test]
fn extra_headers_lengthen_the_packet() {
    // 8 extra header bytes: wire 290 B → ser 1 160 000; one switch:
    // 185 000 + 5 000 + 1 160 000 = 1 350 000.
    let net = routed(chain(1, sdr(1.0), sdr(1.0)));
    let mut c = base(true, CrossbarKind::Multiplexed);
    c.extra_header_bytes = 8;
    let (min, max, _) = run(&net, &c);
    assert_eq!((min, max), (1_350_000, 1_350_000));
}

#[test]
fn header_bytes_set_the_wire_size_and_when_routing_starts() {
    // No headers (as flit-level models): wire = payload 256 B → ser 1 024 000;
    // the switch routes once the first byte is in: 5 000 + 0 + 100 000, then
    // 5 000 + 1 024 000 to the sink: 1 134 000.
    // A 12 B header (shorter than LRH+BTH): routing after 12 B (48 000 ps):
    // 5 000 + 48 000 + 100 000 + 5 000 + 268 · 4 000 = 1 230 000.
    // 26 B (the IBA default) gives the 1 318 000 of the test above.
    let net = routed(chain(1, sdr(1.0), sdr(1.0)));
    for (header, want) in [(0, 1_134_000), (12, 1_230_000), (26, 1_318_000)] {
        let mut c = base(true, CrossbarKind::Multiplexed);
        c.header_bytes = header;
        let (min, max, _) = run(&net, &c);
        assert_eq!((min, max), (want, want), "header_bytes = {header}");
    }
}

/// The recurrence of `switch/mod.rs`, link by link, for a chain whose host
/// links have serialization `sh` per byte and switch links `ss`.
fn recurrence(k: usize, ps_per_byte: &[u64], prop: u64, delay: u64, w: u64, speedup: f64, output_buffers: bool) -> u64 {
    let h = 20;
    let mut t_in = 0u64; // start of the packet on the link into the next switch
    for i in 0..k {
        let (si, so) = (ps_per_byte[i], ps_per_byte[i + 1]);
        let t_x = t_in + prop + si * h + delay;
        let tail = t_in + prop + si * w;
        let t_out = if output_buffers {
            let xend = (t_x + ((so * w) as f64 / speedup).ceil() as u64).max(tail);
            t_x.max(xend.saturating_sub(so * w))
        } else {
            t_x.max(tail.saturating_sub(so * w))
        };
        t_in = t_out;
    }
    t_in + prop + ps_per_byte[k] * w
}

/// Latency of one packet injected into an idle fabric.
fn single(net: &Net, c: &SimConfig) -> u64 {
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.inject(1_000, 0, 0, 1).unwrap();
    sim.run(100_000_000).unwrap();
    let r = sim.results();
    let l = &r.classes[0].latency;
    assert_eq!(l.count, 1);
    assert_eq!(l.min_ps, r.classes[0].network_latency.min_ps);
    l.min_ps.unwrap()
}

#[test]
fn mixed_rates_follow_the_recurrence() {
    // Hand check of k = 1 with 4x links (1 ns/B): routed at 5 000 + 20 000 +
    // 100 000 = 125 000, out immediately, delivered at 125 000 + 5 000 + 282 000.
    assert_eq!(recurrence(1, &[1_000, 1_000], 5_000, 100_000, 282, 1.0, true), 412_000);
    // Hand check of k = 2, 4x host links around a 1x switch link. sw0 (4x in,
    // 1x out) sends at t_x = 125 000. sw1 gets the header at 125 000 + 5 000 +
    // 80 000, routed at 310 000; the tail is in at 125 000 + 5 000 + 1 128 000
    // = 1 258 000 and the 4x output needs 282 000, so it starts at 976 000 and
    // the sink has it at 976 000 + 5 000 + 282 000 = 1 263 000.
    assert_eq!(recurrence(2, &[1_000, 4_000, 1_000], 5_000, 100_000, 282, 1.0, true), 1_263_000);
    for k in 1..=3 {
        for ob in [true, false] {
            for speedup in [1.0, 1.5] {
                let net = routed(chain(k, sdr4(1.0), sdr(1.0)));
                let mut c = base(ob, CrossbarKind::PerVl);
                c.traffic.classes[0].load = 0.0;
                c.switch.speedup = speedup;
                let mut rates = vec![1_000u64];
                rates.extend(std::iter::repeat(4_000).take(k - 1));
                rates.push(1_000);
                let want = recurrence(k, &rates, 5_000, 100_000, 282, speedup, ob);
                assert_eq!(single(&net, &c), want, "k={k} output_buffers={ob} speedup={speedup}");
            }
        }
    }
}

#[test]
fn single_packet_matches_the_closed_form() {
    let net = routed(chain(3, sdr(1.0), sdr(1.0)));
    let mut c = base(true, CrossbarKind::Multiplexed);
    c.traffic.classes[0].load = 0.0;
    assert_eq!(single(&net, &c), 1_688_000);
}

#[test]
fn one_packet_buffers_on_long_cables_are_limited_by_the_credit_round_trip() {
    // src —100 m— sw0 —100 m— sw1 —100 m— dst, 1x SDR, input buffers of one
    // 256 B packet (282 B = 5 credits of 320 B). A packet that starts into a
    // switch at t has its header routed at t + 500 (cable) + 80 (20 B) + 100
    // (routing) ns, leaves it by t + 680 + 1 128 ns, and its credits are
    // back upstream 500 ns later: the next packet can start at t + 2 308 ns.
    // Throughput: 1 128 / (1 128 + 2·500 + 180) = 0.48873… of the link.
    let net = routed(chain(2, sdr(100.0), sdr(100.0)));
    let mut c = config(vec![class("a", 0, 1.0, ProcessKind::Bernoulli, 256, pair("src", "dst"))]);
    c.switch.input_buffer_bytes = 320;
    c.warmup_ns = 100_000.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(2_100_000_000).unwrap();
    let r = sim.results();
    let want = 1_128.0 / (1_128.0 + 2.0 * 500.0 + 180.0);
    let got = r.classes[0].accepted_fraction;
    // 2 ms hold 866 round trips: the window's edges cost at most one packet.
    assert!((got - want).abs() < 0.002, "accepted {got}, the credit round trip allows {want}");
}

#[test]
fn an_output_head_ready_sooner_than_a_pending_wake_leaves_on_time() {
    // One switch, per-VL crossbar, output buffers; inputs hA at 1x (VL0) and
    // hB at 4x (VL1), output to dst at 12x (3 B/ns: 282 B in 94 ns). A
    // packet may leave an output buffer only once its tail can no longer be
    // overtaken: a (injected at 0) is routed at 185 ns but its tail is in at
    // 1 133 ns, so it may start at 1 133 − 94 = 1 039 ns; b (injected at
    // 200 ns) has its tail in at 487 ns and may start at 393 ns, before a's
    // wake-up: it must not wait for a. b: 393 + 5 + 94 = 492 ns, latency
    // 292 ns; a: 1 039 + 5 + 94 = 1 138 ns.
    use ibnetsim_fabric::{LinkSpec, LinkSpeed, LinkWidth};
    let spec = |w| LinkSpec { length_m: 1.0, ..LinkSpec::new(w, LinkSpeed::Sdr) };
    let mut f = ibnetsim_fabric::Fabric::new();
    let sw = f.add_switch("sw", 3).unwrap();
    for (name, port, w) in [("ha", 1, LinkWidth::X1), ("hb", 2, LinkWidth::X4), ("dst", 3, LinkWidth::X12)] {
        let h = f.add_hca(name, 1).unwrap();
        f.connect(h, 1, sw, port, spec(w)).unwrap();
    }
    let net = routed(f);
    let mut c = config(vec![
        class("a", 0, 0.0, ProcessKind::Poisson, 256, pair("ha", "dst")),
        class("b", 1, 0.0, ProcessKind::Poisson, 256, pair("hb", "dst")),
    ]);
    c.data_vls = 2;
    c.switch.crossbar = CrossbarKind::PerVl;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(0, 0, 0, 2).unwrap();
    sim.inject(200_000, 1, 1, 2).unwrap();
    sim.run(10_000_000).unwrap();
    let r = sim.results();
    assert_eq!((r.classes[0].latency.max_ps, r.classes[1].latency.max_ps), (Some(1_138_000), Some(292_000)));
}

/// Latencies of two packets sent back to back by `src` at 1 µs through one
/// switch whose input buffers hold one packet, with the switch's credit
/// updates every `period_ns` (0: at once).
fn two_packets_through_a_one_packet_buffer(period_ns: f64) -> (u64, u64) {
    let net = routed(chain(1, sdr(1.0), sdr(1.0)));
    let mut c = base(true, CrossbarKind::Multiplexed);
    c.traffic.classes[0].load = 0.0;
    c.switch.input_buffer_bytes = 320;
    c.switch.credit_update_ns = period_ns;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(1_000, 0, 0, 1).unwrap();
    sim.inject(1_000, 0, 0, 1).unwrap();
    sim.run(100_000_000).unwrap();
    let l = &sim.results().classes[0].latency;
    assert_eq!(l.count, 2);
    (l.min_ps.unwrap(), l.max_ps.unwrap())
}

#[test]
fn periodic_credit_updates_delay_a_waiting_packet_by_at_most_one_period() {
    // The first packet: zero-load latency 1 318 000. It leaves the switch's
    // input buffer when its last byte has crossed, at 1 000 + 5 000 + 80 000 +
    // 100 000 + 1 128 000 = 1 314 000; its credits reach the source 5 000
    // later, when the second packet (waiting for them) starts: it arrives
    // 1 319 000 + 1 318 000 = 2 637 000, latency 2 636 000.
    assert_eq!(two_packets_through_a_one_packet_buffer(0.0), (1_318_000, 2_636_000));
    // Updates every 256 ns go out at multiples of 256 000 ps: the credits
    // freed at 1 314 000 leave at 1 536 000 and arrive at 1 541 000, so the
    // second packet starts 222 000 ps later (less than one period).
    assert_eq!(two_packets_through_a_one_packet_buffer(256.0), (1_318_000, 2_858_000));
    // Freed exactly at an update (period 1 314 ns): sent at once.
    assert_eq!(two_packets_through_a_one_packet_buffer(1_314.0), (1_318_000, 2_636_000));
    // Never more than one period later, whatever the period.
    for period in [1.0, 50.0, 100.0, 333.0, 1000.0, 5000.0] {
        let (_, second) = two_packets_through_a_one_packet_buffer(period);
        assert!(second >= 2_636_000 && second - 2_636_000 < (period * 1000.0) as u64, "period {period} ns: {second}");
    }
}

#[test]
fn the_next_head_waits_for_the_crossbar_transfer_at_speedup_2() {
    // src —4x— sw —1x— d1, sw —1x— d2; output buffers, speedup 2. a (to d1)
    // and b (to d2) are generated at 0; b follows a on the 4x link (1 ns/B,
    // 282 B each). a is routed at 5 + 20 + 100 = 125 ns and crosses at twice
    // the 1x output's rate, 1 128 / 2 = 564 ns, so the crossbar input is
    // busy until 689 ns (a's tail is in at 287 ns, earlier). a leaves on
    // d1's link at 125 ns: delivered at 125 + 5 + 1 128 = 1 258 ns. b is
    // routed at 282 + 5 + 20 + 100 = 407 ns but waits for the crossbar input
    // until 689 ns; its output link is free, so it leaves then: 689 + 5 +
    // 1 128 = 1 822 ns.
    let mut f = ibnetsim_fabric::Fabric::new();
    let hosts: Vec<_> = ["src", "d1", "d2"].iter().map(|n| f.add_hca(*n, 1).unwrap()).collect();
    let sw = f.add_switch("sw", 3).unwrap();
    f.connect(hosts[0], 1, sw, 1, sdr4(1.0)).unwrap();
    f.connect(hosts[1], 1, sw, 2, sdr(1.0)).unwrap();
    f.connect(hosts[2], 1, sw, 3, sdr(1.0)).unwrap();
    let net = routed(f);
    let mut c = base(true, CrossbarKind::Multiplexed);
    c.traffic.classes[0].load = 0.0;
    c.traffic.classes[0].pattern = pair("src", "d1");
    c.warmup_ns = 0.0;
    c.switch.speedup = 2.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.inject(0, 0, 0, 2).unwrap();
    sim.run(10_000_000).unwrap();
    let l = &sim.results().classes[0].latency;
    assert_eq!((l.count, l.min_ps, l.max_ps), (2, Some(1_258_000), Some(1_822_000)));
}

#[test]
fn throughput_per_switch_divides_by_the_switches_of_the_fabric() {
    // Two packets of 282 wire bytes cross a chain of two switches within a
    // 10 µs window (each arrives by about 1.5 µs): offered and accepted
    // traffic are 2·282 B / 10 000 ns / 2 switches = 0.0282 B/ns per switch.
    let net = routed(chain(2, sdr(1.0), sdr(1.0)));
    let mut c = base(true, CrossbarKind::Multiplexed);
    c.traffic.classes[0].load = 0.0;
    c.warmup_ns = 0.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.run(10_000_000).unwrap();
    let r = sim.results();
    assert_eq!(r.delivered, 2);
    for (what, v) in [
        ("offered", r.offered_bytes_per_ns_per_switch),
        ("accepted", r.accepted_bytes_per_ns_per_switch),
        ("class offered", r.classes[0].offered_bytes_per_ns_per_switch),
        ("class accepted", r.classes[0].accepted_bytes_per_ns_per_switch),
    ] {
        assert!((v - 0.0282).abs() < 1e-12, "{what}: {v}");
    }
}
