//! CBR connections end to end: a lone connection on an idle path (every delay
//! the zero-load latency, every jitter exactly 0), the mean bandwidth kept
//! when connections share links, determinism, conservation and errors that
//! name the config key.

use ibnetsim_sim::traffic::ConnectionConfig;
use ibnetsim_sim::{SimConfig, SimResults, Simulation};

use crate::common::*;

fn conn(src: &str, dst: &str, sl: u8, bandwidth_bps: u64, packet_bytes: u32) -> ConnectionConfig {
    ConnectionConfig { source: src.into(), destination: dst.into(), sl, bandwidth_bps, packet_bytes }
}

fn with(conns: Vec<ConnectionConfig>) -> SimConfig {
    let mut c = config(vec![]);
    c.data_vls = 4;
    c.traffic.connections = conns;
    c
}

fn run(net: &Net, c: &SimConfig, until_ps: u64) -> (Simulation, SimResults) {
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.run(until_ps).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    (sim, r)
}

/// On `star(2)` a 282 B packet in an idle fabric takes 190 000 + 4 000 · 282
/// = 1 318 000 ps (traces.rs, zero_load.rs).
const ZERO_LOAD_282: u64 = 1_318_000;

#[test]
fn a_lone_connection_has_zero_load_delay_and_no_jitter() {
    // 282 B (256 B payload) at 225.6 Mb/s: IAT = 2256 bits / 225.6e6 b/s = 10 µs.
    let net = routed(star(2));
    let c = with(vec![conn("h0", "h1", 2, 225_600_000, 282)]);
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    // Warm up for 100 µs, then measure 1 ms: the first delivery in the window
    // has a predecessor, so every delivery in it has a jitter sample.
    sim.run(100_000_000).unwrap();
    sim.begin_measurement().unwrap();
    sim.run(1_100_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let k = &r.connections[0];
    assert_eq!((k.source.as_str(), k.destination.as_str(), k.sl, k.packet_bytes), ("h0", "h1", 2, 282));
    assert_eq!(k.iat_ps, 10_000_000.0);
    // 1 ms holds exactly 100 IATs: 100 generations and 100 deliveries (each
    // delivery 1.318 µs after its generation). With this seed's phase a packet
    // is on its way at 100 µs and another at 1100 µs: the first is delivered in
    // the window but generated before it, so 99 deliveries carry a delay.
    assert_eq!((k.generated_packets, k.delivered_packets, k.measured_packets), (100, 100, 99));
    assert_eq!((k.delay_min_ps, k.delay_max_ps, k.delay_mean_ps), (Some(ZERO_LOAD_282), Some(ZERO_LOAD_282), Some(ZERO_LOAD_282 as f64)));
    // 1.318 µs is in (IAT/8, IAT/4] = (1.25, 2.5] µs.
    assert_eq!(k.delay_bins, [0, 0, 0, 99, 0, 0, 0, 0]);
    assert_eq!(k.jitter_bins, [0, 0, 0, 100, 0, 0, 0, 0]);
    assert!((k.delivered_bps - 225_600_000.0).abs() < 1e-3, "{}", k.delivered_bps);
    // The connections' class and SL carry the same packets.
    let cls = r.classes.iter().find(|f| f.name == "connections").unwrap();
    assert_eq!((cls.delivered_packets, cls.latency.max_ps), (100, Some(ZERO_LOAD_282)));
    assert_eq!(r.sls.iter().map(|f| f.sl).collect::<Vec<_>>(), vec![2]);
    // Utilization of h0's link: 100 × 1.128 µs in 1 ms.
    assert!((port(&r, "h0", 1).utilization - 0.1128).abs() < 1e-12);
}

#[test]
fn a_packet_in_flight_when_measurement_begins_is_delivered_but_not_measured() {
    // Same connection: step in 100 ns until a packet is on its way, start the
    // window there, and run 1 ms more. That packet's delivery falls in the
    // window but its generation does not, so it counts as delivered and not in
    // the delay figures — neither the connection's nor its class's.
    let net = routed(star(2));
    let c = with(vec![conn("h0", "h1", 2, 225_600_000, 282)]);
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    let mut t = 0;
    while sim.packets_alive() == 0 {
        t += 100_000;
        sim.run(t).unwrap();
    }
    sim.begin_measurement().unwrap();
    sim.run(t + 1_000_000_000).unwrap();
    let r = sim.results();
    let k = &r.connections[0];
    assert_eq!(k.measured_packets + 1, k.delivered_packets, "{k:?}");
    assert_eq!((k.delay_min_ps, k.delay_max_ps), (Some(ZERO_LOAD_282), Some(ZERO_LOAD_282)));
    let cls = r.classes.iter().find(|f| f.name == "connections").unwrap();
    assert_eq!((cls.delivered_packets, cls.latency.count), (k.delivered_packets, k.measured_packets));
}

#[test]
fn shared_links_keep_every_mean_bandwidth() {
    // Six connections from three hosts into h3 on one switch: 0.25 + 0.2 + … of
    // h3's 2 Gb/s data rate, 1.9 Gb/s in all (95 %), different packet sizes
    // and SLs. Over 2 ms each delivers its mean within one packet.
    let net = routed(star(4));
    let conns = vec![
        conn("h0", "h3", 0, 500_000_000, 282),
        conn("h1", "h3", 1, 400_000_000, 282),
        conn("h2", "h3", 2, 300_000_000, 122),
        conn("h0", "h3", 3, 300_000_000, 282),
        conn("h1", "h3", 0, 200_000_000, 58),
        conn("h2", "h3", 1, 200_000_000, 282),
    ];
    let c = with(conns.clone());
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(200_000_000).unwrap();
    sim.begin_measurement().unwrap();
    sim.run(2_200_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    for (k, want) in r.connections.iter().zip(&conns) {
        let iat_s = k.iat_ps / 1e12;
        let expect = 2e-3 / iat_s;
        assert!((k.generated_packets as f64 - expect).abs() <= 1.0, "{k:?}");
        assert!((k.delivered_packets as f64 - expect).abs() <= 2.0, "{k:?}");
        let bound = want.packet_bytes as f64 * 8.0 * 2.0 / 2e-3;
        assert!((k.delivered_bps - want.bandwidth_bps as f64).abs() <= bound, "{k:?}");
    }
    let u = port(&r, "sw", 4).utilization;
    assert!((u - 0.95).abs() < 0.005, "{u}");
}

#[test]
fn runs_repeat_per_seed_and_phases_move_with_it() {
    let net = small_irregular();
    let mut conns = Vec::new();
    // Nine hosts into h0 at 67 % of its link: the queueing, hence the delays,
    // depend on the phases.
    for i in 1..10 {
        conns.push(conn(&format!("h{i}"), "h0", (i % 4) as u8, 150_000_000 + i as u64 * 1_000_000, 282));
    }
    let c = with(conns);
    let (_, a) = run(&net, &c, 300_000_000);
    let (_, b) = run(&net, &c, 300_000_000);
    assert_eq!(a.connections, b.connections);
    assert_eq!(a.delivered, b.delivered);
    let mut c2 = c.clone();
    c2.seed = 2;
    let (_, d) = run(&net, &c2, 300_000_000);
    assert_ne!(
        a.connections.iter().map(|k| k.delay_mean_ps).collect::<Vec<_>>(),
        d.connections.iter().map(|k| k.delay_mean_ps).collect::<Vec<_>>()
    );
    assert!(a.delivered > 0 && a.generated == a.delivered + a.in_flight);
}

#[test]
fn bad_connections_name_the_key() {
    let net = routed(star(2));
    let cases = [
        (conn("h0", "h9", 0, 1_000, 282), "traffic.connections[0].destination"),
        (conn("h0", "h0", 0, 1_000, 282), "traffic.connections[0].destination"),
        (conn("h0", "h1", 16, 1_000, 282), "traffic.connections[0].sl"),
        (conn("h0", "h1", 0, 0, 282), "traffic.connections[0].bandwidth_bps"),
        (conn("h0", "h1", 0, 1_000, 26), "traffic.connections[0].packet_bytes"),
        (conn("h0", "h1", 0, 1_000, 283), "traffic.connections[0].packet_bytes"),
    ];
    for (k, key) in cases {
        let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &with(vec![k.clone()])).unwrap_err().to_string();
        assert!(e.contains(&format!("'{key}'")), "{k:?}: {e}");
    }
    let e = SimConfig::from_toml("[[traffic.connections]]\nsource = \"h0\"\ndestination = \"h1\"\nsl = 0\nbandwidth = 5\n", "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("c.toml") && e.contains("bandwidth"), "{e}");
}

#[test]
fn admission_tables_reach_the_arbiters_and_every_mean_is_met() {
    use ibnetsim_sm::qos::admission::{Admission, AdmissionConfig, Connection, Decision, RateBasis, TrafficClass, DATA_VLS};
    use ibnetsim_sm::{SmConfig, SubnetManager};
    use ibnetsim_sim::QosTables;

    let f = star(4);
    let subnet = SubnetManager::new(SmConfig::default()).configure(&f).unwrap();
    let cfg = AdmissionConfig { be_share: 0.2, rate_basis: RateBasis::Data, high_limit: 255, ..Default::default() };
    let mut adm = Admission::new(&f, &subnet, cfg).unwrap();
    // Into h3: 400 + 300 + 20 + 0.05 Mb/s on SLs 3, 3, 2, 0 — 36 % of 2 Gb/s.
    let asks = [("h0", 400_000_000u64), ("h1", 300_000_000), ("h2", 20_000_000), ("h0", 50_000)];
    let mut conns = Vec::new();
    for (src, bw) in asks {
        let c = Connection { src: f.resolve(src).unwrap(), dst: f.resolve("h3").unwrap(), class: TrafficClass::Db, bw_bps: bw };
        let Decision::Accepted { sl, .. } = adm.admit(&c).unwrap() else { panic!("{src} refused") };
        conns.push(conn(src, "h3", sl, bw, 256));
    }
    assert_eq!(conns.iter().map(|c| c.sl).collect::<Vec<_>>(), vec![3, 3, 2, 0]);
    let q = QosTables::from_admission(&adm);
    // The switch port towards h3 carries all four: its table is the plan's.
    let sw = f.resolve("sw").unwrap();
    let out = q.vlarb.per_port.iter().find(|((n, p), _)| *n == sw && *p == 4).unwrap();
    let planned = adm.vlarb(ibnetsim_fabric::LinkEnd { node: sw, port: 4 }).unwrap();
    assert_eq!((&out.1.high, &out.1.low), (&planned.high, &planned.low));
    assert!(out.1.low.iter().any(|&(vl, w)| vl == 3 && w > 0), "{:?}", out.1.low);
    let mut c = config(vec![]);
    c.data_vls = DATA_VLS;
    c.traffic.connections = conns.clone();
    let mut sim = Simulation::with_qos(&f, &subnet.lids, &subnet.tables, &c, q).unwrap();
    sim.run(100_000_000).unwrap();
    sim.begin_measurement().unwrap();
    sim.run(2_100_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    for k in &r.connections {
        // 2 ms of window: W/IAT packets, ±1 for the window edges.
        let expect = 2e9 / k.iat_ps;
        assert!((k.delivered_packets as f64 - expect).abs() <= 1.0, "{k:?}");
    }
}

/// SL 3 is served per the admission table, with no starvation from the
/// table, the multiplexed crossbar at speedup 2 or 4-packet output buffers:
/// paper 001's full runs see 1.5–4 % of SL 3 packets later than 3·IAT/4, and
/// this case, small enough to bound by hand, rules out a data-plane cause.
///
/// On one switch (preset `alfaro2001`), h0–h3 send SL 3 connections of 300,
/// 250, 200 and 150 Mb/s, h4 an SL 2 one of 60 Mb/s and h5 an SL 1 one of
/// 1.5 Mb/s, all to h6, 256 B packets on the wire (T = 1.024 µs on a 2 Gb/s
/// link). Admission gives SL 3 ⌈0.45 × 16320⌉ = 7344 slots on the port to h6:
/// 29 entries of weight ≤ 255 among the BE (VL 8) and CH (VL 9) entries and
/// those of VLs 1 and 2. Every source sends one connection, and six packets
/// take 6.1 µs on the link, less than the shortest IAT (6.83 µs): the port
/// never holds two packets of one connection, so a packet waits for at most
/// the five others. Every delay is then at most the zero-load delay + 5 T,
/// 6.4 µs, within the 300 Mb/s connection's IAT — the paper's "all within
/// the IAT" holds here, and a lost turn of VL 3 would break the bound.
#[test]
fn sl3_delay_is_bounded_by_the_packets_ahead_of_it() {
    use ibnetsim_sim::{preset, QosTables};
    use ibnetsim_sm::qos::admission::{Admission, AdmissionConfig, Connection, Decision, RateBasis, TrafficClass};
    use ibnetsim_sm::{SmConfig, SubnetManager};

    let f = star(7);
    let subnet = SubnetManager::new(SmConfig::default()).configure(&f).unwrap();
    let cfg = AdmissionConfig { be_share: 0.2, rate_basis: RateBasis::Data, high_limit: 255, ..Default::default() };
    let asks = [
        ("h0", 300_000_000u64, 3u8),
        ("h1", 250_000_000, 3),
        ("h2", 200_000_000, 3),
        ("h3", 150_000_000, 3),
        ("h4", 60_000_000, 2),
        ("h5", 1_500_000, 1),
    ];
    let mut adm = Admission::new(&f, &subnet, cfg).unwrap();
    let mut conns = Vec::new();
    for (src, bw, want) in asks {
        let c = Connection { src: f.resolve(src).unwrap(), dst: f.resolve("h6").unwrap(), class: TrafficClass::Db, bw_bps: bw };
        let Decision::Accepted { sl, .. } = adm.admit(&c).unwrap() else { panic!("{src} refused") };
        assert_eq!(sl, want);
        conns.push(conn(src, "h6", sl, bw, 256));
    }
    let sw = f.resolve("sw").unwrap();
    let table = adm.vlarb(ibnetsim_fabric::LinkEnd { node: sw, port: 7 }).unwrap().low;
    let vl3: Vec<u8> = table.iter().filter(|e| e.0 == 3 && e.1 > 0).map(|e| e.1).collect();
    assert_eq!((vl3.len(), vl3.iter().map(|&w| w as u32).sum::<u32>()), (29, 7344), "{table:?}");
    assert!(table.iter().any(|e| e.0 == 8) && table.iter().any(|e| e.0 == 9) && table.iter().any(|e| e.0 == 2));

    let mut c = preset("alfaro2001").unwrap();
    c.traffic.connections = conns.clone();
    let q = QosTables::from_admission(&adm);
    let run = |c: &SimConfig| {
        let mut sim = Simulation::with_qos(&f, &subnet.lids, &subnet.tables, c, q.clone()).unwrap();
        sim.run(100_000_000).unwrap();
        sim.begin_measurement().unwrap();
        sim.run(5_100_000_000).unwrap();
        sim.check_conservation().unwrap();
        sim.results()
    };
    // Zero-load delay: the 300 Mb/s connection alone.
    let lone = SimConfig { traffic: ibnetsim_sim::TrafficConfig { connections: vec![conns[0].clone()], ..c.traffic.clone() }, ..c.clone() };
    let k = &run(&lone).connections[0];
    let zero_load = k.delay_max_ps.unwrap();
    assert_eq!(k.delay_min_ps, Some(zero_load));
    let t = 256 * 4_000; // ps per 256 B packet at 2 Gb/s
    let r = run(&c);
    let mut waited = false;
    for k in &r.connections {
        let max = k.delay_max_ps.unwrap();
        assert!(max <= zero_load + 5 * t, "{k:?}: {max} ps > {zero_load} + 5 × {t}");
        assert!(max <= k.iat_ps as u64, "{k:?}");
        waited |= max > zero_load + t;
        // 5 ms of window: W/IAT packets, ±1 for the window edges.
        assert!((k.delivered_packets as f64 - 5e9 / k.iat_ps).abs() <= 1.0, "{k:?}");
    }
    assert!(waited, "the phases never made a packet wait behind another: the bound was not exercised");
}
