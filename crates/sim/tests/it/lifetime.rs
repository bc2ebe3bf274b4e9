//! The input-head hook: the switch lifetime limit discards a packet that has
//! waited in a switch longer than the limit, at the first arbitration after
//! it expires, and only then.

use ibnetsim_sim::mechanism::lifetime;
use ibnetsim_sim::{ProcessKind, SimConfig, Simulation};

use crate::common::*;

/// `src` —4x— sw0 —1x— `dst` without output buffers: packets that follow
/// the first one wait at the switch input for the slow link.
fn run(limit_ns: Option<f64>) -> ibnetsim_sim::SimResults {
    let net = routed(fast_to_slow());
    let mut c: SimConfig = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, pair("src", "dst"))]);
    c.switch.output_buffer_bytes = 0;
    c.mechanisms.lifetime = limit_ns.map(|switch_lifetime_ns| lifetime::Options { switch_lifetime_ns });
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    for _ in 0..3 {
        sim.inject(0, 0, 0, 1).unwrap();
    }
    sim.run(20_000_000).unwrap();
    sim.check_conservation().unwrap();
    sim.results()
}

fn lifetime_drops(r: &ibnetsim_sim::SimResults) -> u64 {
    r.drops.iter().find(|(n, _)| n == "lifetime").map(|(_, k)| *k).unwrap()
}

#[test]
fn packets_that_outlive_the_limit_are_discarded() {
    // Packet 1 is routed at 125 ns (5 ns cable, 20 B header at 1 ns/B, 100 ns
    // routing) and leaves at once on the 1x link, busy until 1 253 ns.
    // Packets 2 and 3 follow 282 ns apart, are routed at 407 and 689 ns and
    // must wait for the link: with a 500 ns limit both expire (at 907 and
    // 1 189 ns) before it frees; with 2 µs none does.
    let r = run(Some(500.0));
    assert_eq!((r.delivered, lifetime_drops(&r)), (1, 2));
    let r = run(Some(2_000.0));
    assert_eq!((r.delivered, lifetime_drops(&r)), (3, 0));
    // Packet 2 waits 846 ns; packet 3 waits for packet 2 as well (until
    // 2 381 ns, 1 692 ns after it was routed): a 1 µs limit drops only it.
    let r = run(Some(1_000.0));
    assert_eq!((r.delivered, lifetime_drops(&r)), (2, 1));
    let r = run(None);
    assert_eq!((r.delivered, lifetime_drops(&r)), (3, 0));
}

#[test]
fn a_waiting_head_is_discarded_just_after_its_limit() {
    // Packet 2 is routed at 407 ns and waits for the crossbar input packet 1
    // holds; with a 500 ns limit it has expired from 907.001 ns on, and the
    // switch is woken then — long before packet 1's link frees (1 253 ns),
    // which would otherwise be the next arbitration. Packet 3 likewise at
    // 1 189.001 ns.
    let net = routed(fast_to_slow());
    let mut c: SimConfig = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, pair("src", "dst"))]);
    c.switch.output_buffer_bytes = 0;
    c.mechanisms.lifetime = Some(lifetime::Options { switch_lifetime_ns: 500.0 });
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    for _ in 0..3 {
        sim.inject(0, 0, 0, 1).unwrap();
    }
    sim.run(907_000).unwrap();
    assert_eq!(lifetime_drops(&sim.results()), 0);
    sim.run(907_001).unwrap();
    assert_eq!(lifetime_drops(&sim.results()), 1);
    sim.run(1_189_000).unwrap();
    assert_eq!(lifetime_drops(&sim.results()), 1);
    sim.run(1_189_001).unwrap();
    assert_eq!(lifetime_drops(&sim.results()), 2);
}

#[test]
fn the_limit_is_checked() {
    let net = routed(chain(1, sdr(1.0), sdr(1.0)));
    let mut c = config(vec![]);
    c.mechanisms.lifetime = Some(lifetime::Options { switch_lifetime_ns: 0.0 });
    let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap_err().to_string();
    assert!(e.contains("mechanisms.lifetime.switch_lifetime_ns"), "{e}");
}

#[test]
fn a_head_held_back_for_its_tail_is_discarded_on_time() {
    // 1x in, 4x out, no output buffers: a 2 KB packet (2 074 B on the wire)
    // may not start out before 8 296 − 2 074 ns after it starts in (its tail
    // would be overtaken). It is routed at 185 ns; with a 1 µs limit it is
    // discarded at 1 185.001 ns, not when the underrun wait ends.
    let mut f = ibnetsim_fabric::Fabric::new();
    let src = f.add_hca("src", 1).unwrap();
    let dst = f.add_hca("dst", 1).unwrap();
    let sw = f.add_switch("sw0", 4).unwrap();
    f.connect(src, 1, sw, 1, sdr(1.0)).unwrap();
    f.connect(dst, 1, sw, 4, sdr4(1.0)).unwrap();
    let net = routed(f);
    let mut c: SimConfig = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 2048, pair("src", "dst"))]);
    c.mtu_bytes = 2048;
    c.switch.output_buffer_bytes = 0;
    c.mechanisms.lifetime = Some(lifetime::Options { switch_lifetime_ns: 1_000.0 });
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.run(1_185_000).unwrap();
    assert_eq!(lifetime_drops(&sim.results()), 0);
    sim.run(1_185_001).unwrap();
    assert_eq!(lifetime_drops(&sim.results()), 1);
    sim.run(50_000_000).unwrap();
    sim.check_conservation().unwrap();
    assert_eq!(sim.results().delivered, 0);
}

#[test]
fn a_superseded_wake_does_not_breed_more_wakes() {
    // Lifetime deadlines and cut-through underruns both wake a switch at a
    // time; a wake superseded by an earlier one used to clear the mark of the
    // pending wake when it fired, so each re-arbitration scheduled the same
    // deadline again: on this run 527 219 events in 20 µs for 535 packets,
    // and gigabytes of queued wakes within a second of wall time. Stale wakes
    // now do nothing, and the packets fare exactly as before.
    let f = ibnetsim_fabric::gen::IrregularParams::with_links_per_switch(16, 8, 4, 4, 4).build().unwrap();
    let s = ibnetsim_sm::SubnetManager::new(ibnetsim_sm::SmConfig { routing_engine: "updn".into(), options: ibnetsim_sm::RoutingOptions { seed: 1, ..Default::default() }, ..Default::default() }).configure(&f).unwrap();
    let mut c = config(vec![class("u", 0, 0.5, ProcessKind::Poisson, 256, ibnetsim_sim::PatternConfig::Uniform)]);
    c.data_vls = 2;
    c.switch.input_buffer_bytes = 1024;
    c.mechanisms.lifetime = Some(lifetime::Options { switch_lifetime_ns: 3000.0 });
    let mut sim = Simulation::from_subnet(&f, &s, &c, None).unwrap();
    sim.run(20_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    assert_eq!((r.delivered, lifetime_drops(&r)), (297, 110));
    // About 14 events per packet: a few per hop.
    assert!(sim.events() < 30 * r.generated, "{} events for {} packets", sim.events(), r.generated);
}
