//! Bounded source queues (`hca.source_queue_packets`): past saturation the
//! hosts keep at most the bound as packets, the rest as a count, and a source
//! alone on its SL queue runs packet for packet as with unbounded queues.

use ibnetsim_sim::metrics::InjectionQueueResult;
use ibnetsim_sim::{PatternConfig, ProcessKind, SimConfig, SimResults, Simulation};

use crate::common::*;

const RUN_PS: u64 = 400_000_000;

fn run(net: &Net, c: &SimConfig) -> (SimResults, Simulation) {
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.run(RUN_PS).unwrap();
    sim.check_conservation().unwrap();
    (sim.results(), sim)
}

fn bounded(mut c: SimConfig, packets: u32) -> SimConfig {
    c.hca.source_queue_packets = packets;
    c
}

#[test]
fn a_source_alone_on_its_queue_runs_exactly_as_unbounded() {
    // Twice the links' capacity: every source falls behind from the start.
    let net = small_irregular();
    let c = uniform(2.0, ProcessKind::Poisson, 256);
    let (free, _) = run(&net, &c);
    for limit in [1, 3] {
        let (capped, _) = run(&net, &bounded(c.clone(), limit));
        // The same packets, made at other moments, take the same paths at the same times.
        assert_eq!(capped.generated, free.generated);
        assert_eq!(capped.delivered, free.delivered);
        assert_eq!(capped.in_flight, free.in_flight);
        assert_eq!(capped.latency, free.latency);
        assert_eq!(capped.delivered_per_host, free.delivered_per_host);
        assert_eq!(capped.offered_fraction, free.offered_fraction);
        assert_eq!(capped.accepted_fraction, free.accepted_fraction);
        assert_eq!(capped.injection_queue.total_packets, free.injection_queue.total_packets);
        assert_eq!(capped.injection_queue.peak_host_packets, free.injection_queue.peak_host_packets);
        assert_eq!(free.injection_queue.deferred_packets, 0);
        // Of the packets waiting at the hosts, all but `limit` per source are a count.
        let hosts = capped.delivered_per_host.len() as u64;
        let held = capped.injection_queue.total_packets - capped.injection_queue.deferred_packets;
        assert!(held <= hosts * limit as u64, "{held} packets held by {hosts} hosts at {limit} each");
        assert!(capped.injection_queue.deferred_packets > 10 * hosts, "overload left {} deferred", capped.injection_queue.deferred_packets);
    }
}

#[test]
fn below_saturation_nothing_is_deferred_for_long() {
    let net = small_irregular();
    let c = uniform(0.2, ProcessKind::Poisson, 256);
    let (free, _) = run(&net, &c);
    let (capped, _) = run(&net, &bounded(c, 4));
    assert_eq!(capped.latency, free.latency);
    assert_eq!(capped.delivered, free.delivered);
    assert_eq!(capped.injection_queue.deferred_packets, 0);
}

#[test]
fn sources_sharing_a_queue_keep_the_offered_load_exact() {
    // Two classes from every host on SL 0: one queue, two sources. Their
    // packets interleave in another order once deferred, but every arrival is
    // drawn on time, so what is generated and offered is the same.
    let net = small_irregular();
    let classes = vec![
        class("a", 0, 1.0, ProcessKind::Poisson, 256, PatternConfig::Uniform),
        class("b", 0, 1.0, ProcessKind::Bernoulli, 128, PatternConfig::Uniform),
    ];
    let c = config(classes);
    let (free, _) = run(&net, &c);
    let (capped, _) = run(&net, &bounded(c, 2));
    assert_eq!(capped.generated, free.generated);
    assert_eq!(capped.offered_fraction, free.offered_fraction);
    for (a, b) in capped.classes.iter().zip(&free.classes) {
        assert_eq!(a.generated_packets, b.generated_packets, "class {}", a.name);
    }
    assert_eq!(capped.generated, capped.delivered + capped.dropped + capped.in_flight);
    let held = capped.injection_queue.total_packets - capped.injection_queue.deferred_packets;
    assert!(held <= 2 * 2 * capped.delivered_per_host.len() as u64);
    // Saturated either way: the hosts' links decide what is accepted, within a few per cent.
    assert!((capped.accepted_fraction - free.accepted_fraction).abs() < 0.03 * free.accepted_fraction, "{} vs {}", capped.accepted_fraction, free.accepted_fraction);
}

#[test]
fn backlogs_that_drain_and_build_again_run_exactly_as_unbounded() {
    // Each host sends to the next one at 0.95 of its link: nothing contends
    // in the switch, but Poisson arrivals queue at the source and drain
    // again, so a bound of 1 is reached, deferred arrivals are made into
    // packets, and the backlog empties many times over.
    let net = routed(star(4));
    let pairs = (0..4).map(|i| (format!("h{i}"), format!("h{}", (i + 1) % 4))).collect();
    let mut c = config(vec![class("ring", 0, 0.95, ProcessKind::Poisson, 256, PatternConfig::FixedPairs { pairs })]);
    // Room for one packet in the send buffer, so the queue builds in the SL queue.
    c.hca.send_buffer_bytes = 320;
    let (free, _) = run(&net, &c);
    let (capped, _) = run(&net, &bounded(c, 1));
    assert!(free.injection_queue.peak_host_packets > 5, "the sources' queues must exceed the bound: {:?}", free.injection_queue);
    assert_eq!(capped.generated, free.generated);
    assert_eq!(capped.delivered, free.delivered);
    assert_eq!(capped.latency, free.latency);
    assert_eq!(capped.delivered_per_host, free.delivered_per_host);
    assert_eq!(capped.injection_queue, InjectionQueueResult { deferred_packets: capped.injection_queue.deferred_packets, ..free.injection_queue.clone() });
}
