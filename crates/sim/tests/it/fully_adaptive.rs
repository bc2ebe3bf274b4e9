//! Fully adaptive routing with escape queues (paper 002) end to end: the
//! `fa` engine's tables and labels, `fully-adaptive` selection, and VL
//! buffers split into an adaptive and an escape part.
//!
//! The square: `a0, a1` on `s0`, `b0, b1` on `s3`, and two middle switches,
//! `s1` (port 1 of `s0`) and `s2` (port 2). With `s1` as the up*/down* root,
//! `s0` and `s3` rank 1 and `s2` rank 2, so the only legal way from `s0` to
//! `s3` is through `s1` (through `s2` would go down, then up). Both middle
//! switches are minimal, so at LMC 1 the `fa` engine gives `s0` the escape
//! port 1 and the adaptive port 2 towards `b0`, `b1`.

use ibnetsim_fabric::Fabric;
use ibnetsim_sim::presets::preset;
use ibnetsim_sim::{AckMode, ProcessKind, SimConfig, SimError, Simulation};
use ibnetsim_sm::{PathLabels, RoutingOptions, SmConfig, Subnet, SubnetManager};

use crate::common::*;

fn square() -> Fabric {
    diamond_fabric(sdr(20.0))
}

fn subnet(f: &Fabric, engine: &str) -> Subnet {
    let options = RoutingOptions { roots: vec!["s1".into()], ..RoutingOptions::default() };
    SubnetManager::new(SmConfig { routing_engine: engine.into(), lmc: 1, options, ..SmConfig::default() }).configure(f).unwrap()
}

/// Paper 002's switch (the `martinez2003` preset) with 512 + 512 B input VL
/// buffers; `a0 → b0` and `a1 → b1` at `load` each, 256 B payloads, a
/// fraction `adaptive` of the packets sent to the adaptive LID.
fn flows(load: f64, adaptive: f64) -> SimConfig {
    let mut c = preset("martinez2003").unwrap();
    c.switch.input_partition_bytes = vec![512, 512];
    c.selection = "fully-adaptive".into();
    c.traffic.classes = vec![
        class("x", 0, load, ProcessKind::Poisson, 256, pair("a0", "b0")),
        class("y", 0, load, ProcessKind::Poisson, 256, pair("a1", "b1")),
    ];
    for k in &mut c.traffic.classes {
        k.adaptive_fraction = adaptive;
    }
    c.warmup_ns = 100_000.0;
    c
}

fn run(c: &SimConfig, ps: u64) -> Simulation {
    let f = square();
    let mut sim = Simulation::from_subnet(&f, &subnet(&f, "fa"), c, None).unwrap();
    sim.run(ps).unwrap();
    sim.check_conservation().unwrap();
    sim
}

#[test]
fn the_fa_tables_give_s0_an_escape_and_a_different_adaptive_port() {
    let f = square();
    let sn = subnet(&f, "fa");
    let s0 = f.node_by_name("s0").unwrap();
    for h in ["b0", "b1"] {
        let base = sn.lids.of_port(f.node_by_name(h).unwrap(), 1).unwrap().base;
        assert_eq!((sn.tables.get(s0, base), sn.tables.get(s0, base + 1)), (Some(1), Some(2)), "{h}");
    }
}

#[test]
fn deterministic_packets_take_only_the_escape_path() {
    let sim = run(&flows(0.9, 0.0), 2_100_000_000);
    let r = sim.results();
    assert_eq!(port(&r, "s0", 2).utilization, 0.0);
    assert!(port(&r, "s0", 1).utilization > 0.98, "{}", port(&r, "s0", 1).utilization);
    let (x, y) = (r.classes[0].accepted_fraction, r.classes[1].accepted_fraction);
    assert!(x < 0.52 && y < 0.52 && x + y > 0.97, "{x} {y}");
    assert_eq!(r.fully_adaptive.adaptive_hops, 0);
    assert!(r.fully_adaptive.escape_hops > 0);
}

#[test]
fn adaptive_packets_prefer_the_minimal_option_and_overflow_to_the_escape() {
    let sim = run(&flows(0.9, 1.0), 2_100_000_000);
    let r = sim.results();
    // Deterministic routing gets at most half a link per flow (above); here
    // both paths carry them. (One 282 B packet per 512 B partition on 20 m
    // cables: the credit round trip keeps each path below full rate.)
    let (x, y) = (r.classes[0].accepted_fraction, r.classes[1].accepted_fraction);
    assert!(x > 0.8 && y > 0.8, "{x} {y}");
    // Both paths are busy. The escape path carries more: a packet may take
    // it into either part of the next buffer, an adaptive one only into the
    // adaptive part, so it has twice the buffer to cover the round trip.
    let (u1, u2) = (port(&r, "s0", 1).utilization, port(&r, "s0", 2).utilization);
    assert!(u2 > 0.6 && u1 > u2 && u1 + u2 > 1.6, "{u1} {u2}");
    let fa = &r.fully_adaptive;
    assert!(fa.adaptive_hops > fa.escape_hops && fa.escape_hops > 0, "{fa:?}");
    assert_eq!(r.dropped, 0);
}

#[test]
fn at_low_load_adaptive_packets_never_need_the_escape() {
    // 32 B payloads are one credit; an adaptive part holds eight.
    let mut c = flows(0.05, 1.0);
    c.traffic.classes.truncate(1);
    c.traffic.classes[0].payload_bytes = 32;
    let sim = run(&c, 1_100_000_000);
    let r = sim.results();
    let fa = &r.fully_adaptive;
    assert_eq!((fa.escape_hops, fa.escape_queue_hops), (0, 0));
    // Three switches per packet (s0, s2, s3), all on adaptive options.
    let delivered: u64 = r.delivered_per_host.iter().sum();
    assert!(delivered > 200, "{delivered}");
    let in_flight = fa.adaptive_hops - 3 * delivered;
    assert!(in_flight <= 3 * 4, "{} hops for {delivered} packets", fa.adaptive_hops);
    assert_eq!(port(&r, "s0", 1).utilization, 0.0);
}

#[test]
fn the_escape_part_takes_packets_when_the_adaptive_parts_are_full() {
    let sim = run(&flows(1.0, 1.0), 1_100_000_000);
    let fa = sim.results().fully_adaptive;
    assert!(fa.escape_queue_hops > 0, "{fa:?}");
}

#[test]
fn deterministic_packets_stay_in_order_among_adaptive_ones() {
    // Packet acknowledgements give every packet a PSN in its flow, so the
    // destination sees any overtaking. Deterministic packets share both
    // parts of each VL buffer with adaptive ones, and the in-order pointer
    // keeps them in order; adaptive packets of one flow take two paths and
    // do overtake each other.
    let mut c = flows(0.95, 0.0);
    c.traffic.classes[1].adaptive_fraction = 1.0;
    c.traffic.classes.push(class("z", 0, 0.5, ProcessKind::Poisson, 256, pair("a1", "b0")));
    c.transport.ack = AckMode::Packet;
    let det_only = {
        let mut d = c.clone();
        d.traffic.classes.remove(1);
        d.traffic.classes[1].adaptive_fraction = 0.0;
        d
    };
    assert_eq!(run(&det_only, 1_100_000_000).results().transport.out_of_order, 0);
    let mixed = run(&c, 1_100_000_000).results();
    assert_eq!(mixed.dropped, 0);
    assert!(mixed.fully_adaptive.escape_queue_hops > 0, "{:?}", mixed.fully_adaptive);
    let adaptive_flows = {
        let mut a = c.clone();
        a.traffic.classes[0].adaptive_fraction = 1.0;
        a
    };
    assert!(run(&adaptive_flows, 1_100_000_000).results().transport.out_of_order > 0);
}

#[test]
fn fully_adaptive_needs_the_fa_labels_and_two_partitions() {
    let f = square();
    let err = |c: &SimConfig, engine: &str| match Simulation::from_subnet(&f, &subnet(&f, engine), c, None) {
        Err(SimError::Config { key, msg }) => format!("{key}: {msg}"),
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    };
    let e = err(&flows(0.1, 1.0), "updn");
    assert!(e.starts_with("selection: 'fully-adaptive' needs routing options labelled escape"), "{e}");
    let mut c = flows(0.1, 1.0);
    c.switch.input_partition_bytes.clear();
    let e = err(&c, "fa");
    assert!(e.starts_with("switch.input_partition_bytes: 'fully-adaptive' selection splits"), "{e}");
    let mut c = flows(0.1, 1.5);
    c.selection = "deterministic".into();
    let e = err(&c, "fa");
    assert_eq!(e, "traffic.classes[0].adaptive_fraction: must be a fraction in 0..=1, got 1.5");
    let mut c = flows(0.1, 0.5);
    c.traffic.classes[0].path_bits = ibnetsim_sim::PathBits::Random;
    let e = err(&c, "fa");
    assert!(e.contains("leave path_bits = \"base\""), "{e}");
}

/// The ring of `n` switches (one host each) with LMC 1 tables of `engine`,
/// read as the `fa` engine lays them out (offset 0 escape, offset 1 adaptive).
fn ring_as_fa(n: u32, engine: &str) -> (Fabric, Subnet) {
    let f = ring(n);
    let sm = SubnetManager::new(SmConfig { routing_engine: engine.into(), lmc: 1, ..SmConfig::default() });
    let mut s = sm.configure(&f).unwrap();
    s.labels = PathLabels::escape_first(1);
    (f, s)
}

/// Saturating uniform traffic, all adaptive, on paper 002's switch with one
/// 282 B packet per partition.
fn saturating() -> SimConfig {
    let mut c = preset("martinez2003").unwrap();
    c.switch.input_partition_bytes = vec![512, 512];
    c.selection = "fully-adaptive".into();
    c.traffic.classes = vec![class("u", 0, 1.0, ProcessKind::Bernoulli, 256, ibnetsim_sim::PatternConfig::Uniform)];
    c.traffic.classes[0].adaptive_fraction = 1.0;
    c.watchdog_ns = 20_000.0;
    c
}

#[test]
fn minimal_adaptive_routing_without_a_real_escape_deadlocks() {
    // minhop's entries as the "escape": minimal routes around a 6-ring close
    // a cycle on the one VL (`ibnetsim check --escape-first` reports it, see
    // the sm crate's escape_check tests), and the escape parts fill around it.
    let (f, s) = ring_as_fa(6, "minhop");
    let mut sim = Simulation::from_subnet(&f, &s, &saturating(), None).unwrap();
    let err = sim.run(50_000_000_000).unwrap_err();
    assert!(matches!(err, SimError::Deadlock(_)), "{err}");
    sim.check_conservation().unwrap();
    // The fa engine's up*/down* escape on the same ring keeps moving.
    let (f, s) = ring_as_fa(6, "fa");
    let mut sim = Simulation::from_subnet(&f, &s, &saturating(), None).unwrap();
    sim.run(50_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    assert!(sim.results().fully_adaptive.escape_queue_hops > 0);
}

#[test]
fn mixed_deterministic_and_adaptive_traffic_past_saturation_keeps_moving() {
    // Paper 002's Fig. 3 mixes: a quarter of the packets adaptive, uniform
    // 32 B traffic well past saturation on an 8-switch irregular network.
    // Deterministic packets stored in the adaptive part wait in the escape
    // FIFO; were they kept in the adaptive FIFO, an escape head would wait
    // behind adaptive packets for an older deterministic one, and this run
    // deadlocks within 200 µs.
    let f = ibnetsim_fabric::gen::IrregularParams::with_links_per_switch(8, 8, 4, 4, 1)
        .link(sdr(20.0))
        .build()
        .unwrap();
    let s = SubnetManager::new(SmConfig { routing_engine: "fa".into(), lmc: 1, ..SmConfig::default() }).configure(&f).unwrap();
    let mut c = preset("martinez2003").unwrap();
    c.switch.input_partition_bytes = vec![512, 512];
    c.selection = "fully-adaptive".into();
    c.traffic.classes = vec![class("u", 0, 0.6, ProcessKind::Poisson, 32, ibnetsim_sim::PatternConfig::Uniform)];
    c.traffic.classes[0].adaptive_fraction = 0.25;
    let mut sim = Simulation::from_subnet(&f, &s, &c, None).unwrap();
    sim.run(400_000_000).unwrap();
    sim.check_conservation().unwrap();
    let fa = sim.results().fully_adaptive;
    assert!(fa.adaptive_hops > 0 && fa.escape_queue_hops > 0, "{fa:?}");
}

#[test]
fn on_64_switches_all_adaptive_traffic_saturates_later_than_deterministic() {
    // Paper 002's 64-switch networks (4 hosts and 4 links per switch, 1x
    // links, 20 m cables), uniform 32 B packets at 8 % of the link rate:
    // above what up*/down* sustains on this topology (about 4 %), below
    // what fully adaptive routing does (about 13 %).
    let f = ibnetsim_fabric::gen::IrregularParams::with_links_per_switch(64, 8, 4, 4, 1)
        .link(sdr(20.0))
        .build()
        .unwrap();
    let s = SubnetManager::new(SmConfig { routing_engine: "fa".into(), lmc: 1, ..SmConfig::default() }).configure(&f).unwrap();
    let run = |adaptive: f64| {
        let mut c = preset("martinez2003").unwrap();
        c.switch.input_partition_bytes = vec![512, 512];
        c.selection = "fully-adaptive".into();
        c.traffic.classes = vec![class("u", 0, 0.08, ProcessKind::Poisson, 32, ibnetsim_sim::PatternConfig::Uniform)];
        c.traffic.classes[0].adaptive_fraction = adaptive;
        c.warmup_ns = 50_000.0;
        let mut sim = Simulation::from_subnet(&f, &s, &c, None).unwrap();
        sim.run(250_000_000).unwrap();
        sim.check_conservation().unwrap();
        let r = sim.results();
        (r.classes[0].offered_fraction, r.classes[0].accepted_fraction)
    };
    let (offered, det) = run(0.0);
    assert!(det < 0.75 * offered, "deterministic keeps up: {det} of {offered}");
    let (offered, fa) = run(1.0);
    assert!(fa > 0.98 * offered, "fully adaptive falls behind: {fa} of {offered}");
}
