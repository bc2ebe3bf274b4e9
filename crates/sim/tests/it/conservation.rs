//! Every generated packet is delivered, dropped (with a reason) or still
//! queued/in flight; checked at arbitrary stop times and with drops.

use ibnetsim_sim::{CrossbarKind, PatternConfig, ProcessKind, Simulation};
use ibnetsim_sm::NO_PATH;
use proptest::prelude::*;

use crate::common::*;

#[test]
fn mid_run_counts_add_up() {
    let net = small_irregular();
    let c = uniform(0.9, ProcessKind::Poisson, 256);
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(1_234_567_891).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    assert!(r.in_flight > 0 && r.delivered > 1000);
    assert_eq!(r.generated, r.delivered + r.dropped + r.in_flight);
    assert_eq!(r.dropped, 0);
}

/// Switch s4's entry for host h0's LID (LID 1) set to `entry`; hosts on s4
/// (h8, h9) send to h0, the same hosts reach h1, and h1 reaches h0: three
/// packets of each pair, 10 µs apart. Every h8/h9 → h0 packet is dropped at
/// s4 as unroutable, everything else arrives.
fn drops_at_s4_with_entry(entry: u8) {
    let mut net = small_irregular();
    let s4 = net.fabric.node_by_name("s4").unwrap();
    net.tables.set(s4, 1, entry);
    let c = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, PatternConfig::Uniform)]);
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    let pairs = [(8, 0), (9, 0), (8, 1), (1, 0)];
    for k in 0..3u64 {
        for (i, &(src, dst)) in pairs.iter().enumerate() {
            sim.inject((k * 4 + i as u64) * 10_000_000, 0, src, dst).unwrap();
        }
    }
    sim.run(1_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let no_route = r.drops.iter().find(|(n, _)| n == "no_route").unwrap().1;
    assert_eq!((no_route, r.dropped, r.delivered, r.in_flight), (6, 6, 6, 0), "entry {entry}");
    assert_eq!((sim.host_deliveries(0), sim.host_deliveries(1)), (Some(3), Some(3)), "entry {entry}");
}

#[test]
fn missing_route_drops_with_reason() {
    drops_at_s4_with_entry(NO_PATH);
}

#[test]
fn a_route_to_port_0_or_past_the_last_port_drops_with_no_route() {
    // Port 0 is the switch itself and s4 has ports 1..=6: neither entry can
    // forward a packet out of s4, exactly like an empty entry.
    drops_at_s4_with_entry(0);
    drops_at_s4_with_entry(7);
}

#[test]
fn a_route_to_an_uncabled_port_drops_with_no_route() {
    // s4's ports 3 and 4 have no cable (1 and 2 lead to s3 and s0, 5 and 6
    // to h8 and h9): the building turns such entries into no path.
    drops_at_s4_with_entry(3);
    drops_at_s4_with_entry(4);
}

#[test]
fn route_back_out_of_the_input_port_is_dropped() {
    let mut net = small_irregular();
    // s0 sends h9's packets (LID 10) to s1, and s1 sends them back to s0: a
    // packet arriving at s1 from s0 would leave by the port it came in on.
    let s0 = net.fabric.node_by_name("s0").unwrap();
    let s1 = net.fabric.node_by_name("s1").unwrap();
    let p01 = net.fabric.switch_neighbors(s0).find(|(_, e)| e.node == s1).unwrap().0;
    let p10 = net.fabric.switch_neighbors(s1).find(|(_, e)| e.node == s0).unwrap().0;
    net.tables.set(s0, 10, p01);
    net.tables.set(s1, 10, p10);
    let c = config(vec![class("a", 0, 0.2, ProcessKind::Poisson, 256, pair("h0", "h9"))]);
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(1_000_000_000).unwrap();
    let r = sim.results();
    let back = r.drops.iter().find(|(n, _)| n == "input_port_is_output").unwrap().1;
    assert!(back > 50 && back == r.dropped && r.delivered == 0, "{back} {r:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn conservation_holds_for_random_runs(
        seed in 0u64..1000,
        load in 0.05f64..1.5,
        payload in 1u32..=256,
        stop in 100_000_000u64..1_500_000_000,
        bernoulli in any::<bool>(),
        per_vl in any::<bool>(),
        output_buffers in any::<bool>(),
        data_vls in 1u8..=3,
    ) {
        let net = small_irregular();
        let process = if bernoulli { ProcessKind::Bernoulli } else { ProcessKind::Poisson };
        let mut c = uniform(if bernoulli { load.min(1.0) } else { load }, process, payload);
        c.seed = seed;
        c.data_vls = data_vls;
        c.traffic.classes.push(class("x", 2, 0.1, ProcessKind::Poisson, 200, ibnetsim_sim::PatternConfig::Uniform));
        c.switch.crossbar = if per_vl { CrossbarKind::PerVl } else { CrossbarKind::Multiplexed };
        c.switch.output_buffer_bytes = if output_buffers { 1024 } else { 0 };
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.run(stop).unwrap();
        prop_assert!(sim.check_conservation().is_ok());
        let r = sim.results();
        prop_assert_eq!(r.generated, r.delivered + r.dropped + r.in_flight);
        prop_assert_eq!(r.dropped, 0);
        // No link can be busier than always, and busy time is counted exactly.
        for p in &r.ports {
            prop_assert!(p.utilization <= 1.0 + 1e-12, "{} {}", p.node, p.utilization);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    #[test]
    fn conservation_holds_under_every_input_buffer_and_arbiter(
        seed in 0u64..1000,
        load in 0.3f64..1.5,
        stop in 100_000_000u64..1_000_000_000,
        per_vl in any::<bool>(),
        output_buffers in any::<bool>(),
        voq in any::<bool>(),
        oldest_first in any::<bool>(),
        transfers in 1u32..=3,
    ) {
        // Every combination the switch accepts (`voq` needs output buffers);
        // debug builds also check after every arbitration that no packet the
        // organisation lets cross was left waiting.
        let net = small_irregular();
        let mut c = uniform(load, ProcessKind::Poisson, 256);
        c.seed = seed;
        c.data_vls = 2;
        c.traffic.classes.push(class("x", 1, 0.1, ProcessKind::Poisson, 200, ibnetsim_sim::PatternConfig::Uniform));
        c.switch.crossbar = if per_vl { CrossbarKind::PerVl } else { CrossbarKind::Multiplexed };
        c.switch.output_buffer_bytes = if output_buffers { 1024 } else { 0 };
        c.switch.input_buffer = if voq && output_buffers { "voq" } else { "fifo" }.into();
        // iSLIP where it applies (output buffers, FIFO inputs), else oldest-first.
        c.switch.crossbar_arbiter = match (oldest_first, output_buffers && !voq) {
            (false, _) => "round-robin",
            (true, true) if seed % 2 == 0 => "islip",
            (true, _) => "oldest-first",
        }
        .into();
        c.switch.max_transfers_per_input = transfers;
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.run(stop).unwrap();
        prop_assert!(sim.check_conservation().is_ok());
        let r = sim.results();
        prop_assert!(r.delivered > 0);
        prop_assert_eq!(r.generated, r.delivered + r.dropped + r.in_flight);
        prop_assert_eq!(r.dropped, 0);
    }
}
