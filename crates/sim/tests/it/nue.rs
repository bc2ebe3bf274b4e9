//! The `nue` routing engine end to end: its tables keep a ring deadlock-free
//! on one VL where shortest paths deadlock, and its per-path SLs (the
//! destination's layer) are the SLs packets travel on.

use ibnetsim_sim::{PatternConfig, ProcessKind, SimConfig, SimError, Simulation};
use ibnetsim_sm::{RoutingOptions, SmConfig, SubnetManager};

use crate::common::*;

fn nue(max_vls: u8) -> SubnetManager {
    SubnetManager::new(SmConfig {
        routing_engine: "nue".into(),
        options: RoutingOptions { max_vls: Some(max_vls), ..RoutingOptions::default() },
        ..SmConfig::default()
    })
}

/// Saturating uniform traffic with one packet per buffer, so that a cycle of
/// channel dependencies fills and locks quickly.
fn heavy() -> SimConfig {
    let mut c = uniform(1.0, ProcessKind::Bernoulli, 256);
    c.switch.input_buffer_bytes = 320;
    c.switch.output_buffer_bytes = 320;
    c.hca.send_buffer_bytes = 320;
    c.hca.receive_buffer_bytes = 320;
    c.watchdog_ns = 20_000.0;
    c
}

#[test]
fn ring_of_five_on_one_vl_runs_on_where_shortest_paths_deadlock() {
    // Every pair two hops apart has one shortest path on a ring of five, and
    // together they close a cycle each way: shortest paths deadlock. nue
    // sends some of them the long way round and keeps the dependencies
    // acyclic on the one VL.
    let f = ring(5);
    let sn = nue(1).configure(&f).unwrap();
    assert!(sn.path_sl.is_none());
    let mut sim = Simulation::from_subnet(&f, &sn, &heavy(), None).unwrap();
    sim.run(5_000_000_000).unwrap();
    assert!(sim.results().delivered > 2_000, "{}", sim.results().delivered);
    let shortest = minhop_tables(&f, &sn.lids);
    let mut sim = Simulation::new(&f, &sn.lids, &shortest, &heavy()).unwrap();
    assert!(matches!(sim.run(100_000_000_000), Err(SimError::Deadlock(_))));
}

#[test]
fn packets_travel_on_their_destinations_layer() {
    // One switch, hosts h0, h1, h2 in port-GUID order: two layers deal them
    // out as 0, 1, 0. h0 -> h1 goes on SL 1; h0 -> h2 and h1 -> h0 on SL 0.
    let f = star(3);
    let sn = nue(2).configure(&f).unwrap();
    let mut c = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, PatternConfig::Uniform)]);
    c.data_vls = 2;
    let mut sim = Simulation::from_subnet(&f, &sn, &c, None).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.inject(0, 0, 0, 2).unwrap();
    sim.inject(0, 0, 1, 0).unwrap();
    sim.run(50_000_000).unwrap();
    let per_sl: Vec<(u8, u64)> = sim.results().sls.iter().map(|s| (s.sl, s.delivered_packets)).collect();
    assert_eq!(per_sl, vec![(0, 2), (1, 1)]);
}
