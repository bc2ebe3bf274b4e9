//! The crossbar-grant hook: FECN marking at a congested output buffer, and
//! the destination's congestion notification back to the source.

use ibnetsim_sim::mechanism::fecn;
use ibnetsim_sim::{ProcessKind, Simulation};

use crate::common::*;

/// h0 and h1 each send 40 packets to h2 at once through one switch whose
/// crossbar runs at twice the link rate: it fills the output buffer towards
/// h2 faster than its link drains it. Returns (marked, notifications, deliveries per host).
fn burst(options: Option<fecn::Options>) -> (u64, u64, Vec<u64>) {
    let net = routed(star(3));
    let mut c = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, pair("h0", "h2"))]);
    c.switch.speedup = 2.0;
    c.mechanisms.fecn = options;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    for src in [0, 1] {
        for _ in 0..40 {
            sim.inject(0, 0, src, 2).unwrap();
        }
    }
    sim.run(1_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    assert_eq!(r.in_flight, 0);
    (r.transport.fecn_marked, r.transport.congestion_notifications, (0..3).map(|h| sim.host_deliveries(h).unwrap()).collect())
}

#[test]
fn packets_through_a_congested_buffer_are_marked_and_their_sources_notified() {
    let (marked, cns, got) = burst(Some(fecn::Options { threshold: 0.5, marking_rate: 1 }));
    // The 8 KB output buffer (128 credits, 25 packets of 5) passes half full
    // once about 13 packets wait in it; from then on every packet is marked.
    assert!(marked > 20 && marked < 80, "{marked}");
    // Every marked packet reached h2, and each drew one notification back.
    assert_eq!(got[2], 80);
    assert_eq!(cns, marked);
    assert_eq!(got[0] + got[1], marked);
    // One in every two at marking rate 2.
    let (half, cns2, _) = burst(Some(fecn::Options { threshold: 0.5, marking_rate: 2 }));
    assert_eq!((half, cns2), (marked / 2, marked / 2));
    // A buffer is never more than full: threshold 1 marks nothing, as does no FECN.
    assert_eq!(burst(Some(fecn::Options { threshold: 1.0, marking_rate: 1 })).0, 0);
    let (none, no_cns, got) = burst(None);
    assert_eq!((none, no_cns, got), (0, 0, vec![0, 0, 80]));
}
