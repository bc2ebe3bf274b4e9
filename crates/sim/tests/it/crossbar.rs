//! Crossbar arbitration is fair between inputs that compete for one output.

use ibnetsim_sim::{ProcessKind, Simulation};

use crate::common::*;

#[test]
fn two_saturated_inputs_share_one_output_equally() {
    // h0 and h1 each offer 90 % of a 1x link to h2 through one switch. The
    // output can carry one link's worth, and round-robin arbitration over the
    // inputs gives each half of it, with or without output buffers. An
    // arbiter that always starts from the same input would starve the other.
    for output_buffers in [true, false] {
        let net = routed(star(3));
        let mut c = config(vec![
            class("x", 0, 0.9, ProcessKind::Poisson, 256, pair("h0", "h2")),
            class("y", 0, 0.9, ProcessKind::Poisson, 256, pair("h1", "h2")),
        ]);
        c.warmup_ns = 200_000.0;
        if !output_buffers {
            c.switch.output_buffer_bytes = 0;
        }
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.run(4_200_000_000).unwrap();
        let r = sim.results();
        let (x, y) = (r.classes[0].accepted_fraction, r.classes[1].accepted_fraction);
        assert!((0.48..0.52).contains(&x) && (0.48..0.52).contains(&y), "output buffers: {output_buffers}: {x} {y}");
    }
}

#[test]
fn a_request_no_vl_arbiter_serves_waits_until_its_lifetime_runs_out() {
    // No output buffers, two data VLs; the switch's port to h2 has a
    // VLArbitration table without VL1 (every other port serves both VLs).
    // One packet on SL1 (VL1) from h1 to h2 is routed at 185 ns (5 ns cable,
    // 80 ns header, 100 ns routing) and requests the free output to h2, but
    // that port's arbiter never picks VL1: the packet waits, and with a
    // 500 ns switch lifetime it is discarded just after 685 ns.
    use ibnetsim_sim::mechanism::lifetime;
    use ibnetsim_sim::{QosTables, Sl2VlMap, VlArbConfig, VlArbMap};
    let net = routed(star(3));
    let sw = net.fabric.node_by_name("sw").unwrap();
    let mut c = config(vec![class("b", 1, 0.0, ProcessKind::Poisson, 256, pair("h1", "h2"))]);
    c.data_vls = 2;
    c.switch.output_buffer_bytes = 0;
    c.mechanisms.lifetime = Some(lifetime::Options { switch_lifetime_ns: 500.0 });
    let only_vl0 = VlArbConfig { high: vec![], low: vec![(0, 10)], limit_of_high_priority: 0 };
    let qos = QosTables {
        sl2vl: Sl2VlMap::modulo(2),
        vlarb: VlArbMap { default: VlArbConfig::uniform(2), per_port: vec![((sw, 3), only_vl0)] },
    };
    let mut sim = Simulation::with_qos(&net.fabric, &net.lids, &net.tables, &c, qos).unwrap();
    sim.inject(0, 0, 1, 2).unwrap();
    let lifetime_drops = |sim: &Simulation| sim.results().drops.iter().find(|(n, _)| n == "lifetime").map_or(0, |d| d.1);
    sim.run(685_000).unwrap();
    assert_eq!((lifetime_drops(&sim), sim.results().in_flight), (0, 1));
    sim.run(685_001).unwrap();
    assert_eq!((lifetime_drops(&sim), sim.results().in_flight), (1, 0));
    sim.run(10_000_000).unwrap();
    sim.check_conservation().unwrap();
    assert_eq!(sim.results().delivered, 0);
}
