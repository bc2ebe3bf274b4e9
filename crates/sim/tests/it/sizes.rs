//! Payload sizes drawn per packet: the offered load follows the mean wire
//! size, the sizes follow the weights, every size keeps its own zero-load
//! latency and its own credits, and runs stay deterministic.

use ibnetsim_sim::{PatternConfig, ProcessKind, SimConfig, SimError, SimResults, Simulation, SizeConfig};

use crate::common::*;

/// Paper 002's two packet sizes, 32 B and 256 B, here one 32 B packet for
/// every three 256 B ones.
fn mix() -> SizeConfig {
    SizeConfig::Empirical { sizes: vec![(32, 1.0), (256, 3.0)] }
}

fn sized(load: f64, process: ProcessKind, size: SizeConfig, pattern: PatternConfig) -> SimConfig {
    let mut k = class("mix", 0, load, process, 256, pattern);
    k.payload_size = Some(size);
    config(vec![k])
}

fn run(net: &Net, c: &SimConfig, until_ps: u64) -> SimResults {
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.run(until_ps).unwrap();
    sim.check_conservation().unwrap();
    sim.results()
}

/// Packets of 58 and 282 wire bytes among `packets` that total `bytes`.
fn split_counts(packets: u64, bytes: u64) -> (u64, u64) {
    let big = (bytes - 58 * packets) / (282 - 58);
    assert_eq!(58 * (packets - big) + 282 * big, bytes, "every packet is 58 or 282 B on the wire");
    (packets - big, big)
}

#[test]
fn offered_load_and_size_histogram_follow_the_mix() {
    // 16 hosts on one switch, uniform destinations, 5 ms. The mean wire size
    // is (58 + 3·282)/4 = 226 B = 904 ns at 1x SDR, so each host offers
    // N ≈ 0.4 · 5 ms / 904 ns ≈ 2 212 packets, 35 400 in all. The offered
    // bytes are a compound sum of N packets: with Poisson arrivals their
    // relative standard deviation is sqrt(E[W²]) / (E[W] sqrt(N)) = 246 B /
    // (226 B · sqrt(35 400)) = 0.58 %; Bernoulli's binomial count (variance
    // N(1 − p) instead of N) only shrinks it. Five of them, 2.9 % of 0.4 =
    // 0.0116, would flag no correct run, while
    // timing arrivals by the largest packet (0.32), the smallest (1.56) or
    // the mean payload without headers (0.45) all fall far outside.
    let net = routed(star(16));
    for process in [ProcessKind::Poisson, ProcessKind::Bernoulli] {
        let r = run(&net, &sized(0.4, process, mix(), PatternConfig::Uniform), 5_000_000_000);
        let c = &r.classes[0];
        assert!((c.offered_fraction - 0.4).abs() < 0.0116, "{process:?}: offered {}", c.offered_fraction);
        assert!((r.offered_fraction - c.offered_fraction).abs() < 1e-12);
        // Every generated packet is one of the two sizes; the count of 32 B
        // ones is Binomial(N, 1/4): within 5 standard deviations.
        let n = c.generated_packets;
        let (small, _) = split_counts(n, c.generated_bytes);
        let sd = (n as f64 * 0.25 * 0.75).sqrt();
        assert!((small as f64 - n as f64 * 0.25).abs() < 5.0 * sd, "{process:?}: {small} of {n} are 32 B");
        // Below saturation nearly everything offered is carried.
        assert!((c.accepted_fraction - c.offered_fraction).abs() < 0.01, "{c:?}");
    }
}

/// 1x SDR, 1 m cables, 100 ns routing: through `k` switches a packet of `w`
/// wire bytes takes k·(5 000 + 80 000 + 100 000) + 5 000 + 4 000·w ps
/// (zero_load.rs).
fn zero_load(k: u64, w: u64) -> u64 {
    k * 185_000 + 5_000 + 4_000 * w
}

#[test]
fn each_size_keeps_its_zero_load_network_latency() {
    // One source, one destination, a chain of equal links. A packet may wait
    // at the source behind a longer one (the Bernoulli slot is the mean packet
    // time), but once on the wire none can be delayed: a follower's header
    // reaches a switch no earlier than its leader's tail leaves it. So every
    // network latency is at least its size's zero-load value, and their sum
    // equals the sum of those values only if every packet took exactly its own.
    for k in 1..=3u64 {
        let net = routed(chain(k as usize, sdr(1.0), sdr(1.0)));
        let r = run(&net, &sized(0.3, ProcessKind::Bernoulli, mix(), pair("src", "dst")), 1_000_000_000);
        let c = &r.classes[0];
        let l = &c.network_latency;
        assert!(l.count > 200 && l.count == c.delivered_packets, "{c:?}");
        let (small, big) = split_counts(c.delivered_packets, c.delivered_bytes);
        assert!(small > 20 && big > 20, "{small} {big}");
        assert_eq!((l.min_ps, l.max_ps), (Some(zero_load(k, 58)), Some(zero_load(k, 282))), "k={k}");
        let want = (small * zero_load(k, 58) + big * zero_load(k, 282)) as f64 / l.count as f64;
        assert!((l.mean_ps.unwrap() - want).abs() < 1e-6, "k={k}: mean {:?} != {want}", l.mean_ps);
    }
}

#[test]
fn uniform_sizes_keep_the_zero_load_latency_of_each_packet() {
    // Same argument with every payload 1..=256: the latencies must add up to
    // Σ (C + 4 000·w) = n·C + 4 000·(delivered wire bytes), C = zero_load(2, 0).
    let net = routed(chain(2, sdr(1.0), sdr(1.0)));
    let r = run(
        &net,
        &sized(0.2, ProcessKind::Bernoulli, SizeConfig::Uniform { min: 1, max: 256 }, pair("src", "dst")),
        2_000_000_000,
    );
    let c = &r.classes[0];
    let l = &c.network_latency;
    assert!(l.count > 500 && l.count == c.delivered_packets);
    let want = zero_load(2, 0) as f64 + 4_000.0 * c.delivered_bytes as f64 / l.count as f64;
    assert!((l.mean_ps.unwrap() - want).abs() < 1e-6, "mean {:?} != {want}", l.mean_ps);
    assert!(l.min_ps.unwrap() >= zero_load(2, 27) && l.max_ps.unwrap() <= zero_load(2, 282));
}

#[test]
fn single_packets_of_each_size_match_the_closed_form() {
    // Generation to delivery of one packet in an idle chain of 3 switches.
    let net = routed(chain(3, sdr(1.0), sdr(1.0)));
    let c = sized(0.0, ProcessKind::Poisson, mix(), pair("src", "dst"));
    for (payload, w) in [(32, 58), (256, 282), (1, 27)] {
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.inject_payload(1_000, 0, 0, 1, payload).unwrap();
        sim.run(100_000_000).unwrap();
        let l = &sim.results().classes[0].latency;
        assert_eq!((l.count, l.min_ps), (1, Some(zero_load(3, w))), "payload {payload}");
    }
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    let e = sim.inject(0, 0, 0, 1).unwrap_err().to_string();
    assert!(e.contains("no fixed payload size"), "{e}");
    let e = sim.inject_payload(0, 0, 0, 1, 257).unwrap_err().to_string();
    assert!(e.contains("'inject.payload_bytes'") && e.contains("1..=256"), "{e}");
}

#[test]
fn small_packets_use_fewer_credits() {
    // A 1 KB buffer holds 16 credits: three 282 B packets (5 credits each)
    // but sixteen 58 B ones (1 credit each). A 4x source at 0.9 load feeds a
    // 1x link, so the switch input and the send buffer fill up.
    let mut f = ibnetsim_fabric::Fabric::new();
    let s = f.add_switch("sw", 2).unwrap();
    let a = f.add_hca("src", 1).unwrap();
    let b = f.add_hca("dst", 1).unwrap();
    f.connect(a, 1, s, 1, sdr4(1.0)).unwrap();
    f.connect(b, 1, s, 2, sdr(1.0)).unwrap();
    let net = routed(f);
    let mut peak = Vec::new();
    for payload in [32, 256] {
        let mut c = sized(0.9, ProcessKind::Bernoulli, SizeConfig::Empirical { sizes: vec![(payload, 1.0)] }, pair("src", "dst"));
        c.switch.input_buffer_bytes = 1024;
        c.switch.output_buffer_bytes = 0;
        c.hca.send_buffer_bytes = 1024;
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        let mut most = 0;
        for t in 1..=400 {
            sim.run(t * 500_000).unwrap();
            let r = sim.results();
            most = most.max(r.in_flight - r.injection_queue.total_packets);
        }
        peak.push(most);
    }
    // At most in the network: the send buffer and the switch input buffer
    // full (a packet on a link holds its credits downstream): 16 + 16 packets
    // of 1 credit, or 3 + 3 of 5 credits.
    assert_eq!(peak, [32, 6]);
}

#[test]
fn draws_come_from_each_source_and_seed() {
    let net = small_irregular();
    let mut c = sized(0.3, ProcessKind::Poisson, mix(), PatternConfig::Uniform);
    c.traffic.classes.push(class("fixed", 0, 0.2, ProcessKind::Poisson, 128, PatternConfig::Uniform));
    let a = run(&net, &c, 500_000_000);
    assert_eq!(a, run(&net, &c, 500_000_000));
    let mut other_seed = c.clone();
    other_seed.seed += 1;
    let b = run(&net, &other_seed, 500_000_000);
    assert_ne!(a.classes[0].generated_bytes, b.classes[0].generated_bytes);
    // The fixed class's own stream is not touched by the other class's size
    // draws: it generates the same packets when the mix becomes a fixed size.
    let mut fixed_mix = c.clone();
    fixed_mix.traffic.classes[0].payload_size = None;
    let d = run(&net, &fixed_mix, 500_000_000);
    assert_eq!(
        (a.classes[1].generated_packets, a.classes[1].generated_bytes),
        (d.classes[1].generated_packets, d.classes[1].generated_bytes)
    );
}

#[test]
fn sizes_beyond_the_mtu_name_the_key() {
    let net = small_irregular();
    let err = |c: &SimConfig| match Simulation::new(&net.fabric, &net.lids, &net.tables, c) {
        Err(e @ SimError::Config { .. }) => e.to_string(),
        other => panic!("{other:?}"),
    };
    let e = err(&sized(0.1, ProcessKind::Poisson, SizeConfig::Empirical { sizes: vec![(32, 1.0), (512, 1.0)] }, PatternConfig::Uniform));
    assert!(e.contains("'traffic.classes[0].payload_sizes[1]'") && e.contains("1..=256 bytes (the MTU)"), "{e}");
    let e = err(&sized(0.1, ProcessKind::Poisson, SizeConfig::Uniform { min: 1, max: 300 }, PatternConfig::Uniform));
    assert!(e.contains("'traffic.classes[0].payload_size_range[1]'"), "{e}");
    let mut c = sized(0.1, ProcessKind::Poisson, SizeConfig::Uniform { min: 1, max: 300 }, PatternConfig::Uniform);
    c.mtu_bytes = 512;
    c.traffic.classes[0].vl15 = true;
    let e = err(&c);
    assert!(e.contains("'traffic.classes[0].payload_size_range[1]'") && e.contains("VL15"), "{e}");
}
