//! The events the engine handles per packet, by kind, worked by hand: the
//! cost model `ibnetsim bench` reports as "events per switch hop".
//!
//! One packet crosses a chain of `k` switches on an idle fabric (equal 1x SDR
//! links, 1 m cables): the source HCA sends it, each switch routes it and
//! moves it through its crossbar onto its output link, and the sink consumes
//! it. There are `k + 1` links, each with one transmitter and one credit
//! return.

use std::collections::BTreeMap;

use ibnetsim_sim::{CrossbarKind, ProcessKind, SimConfig, Simulation};

use crate::common::*;

fn one_packet(k: usize, output_buffers: bool) -> (BTreeMap<&'static str, u64>, u64, u64) {
    let net = routed(chain(k, sdr(1.0), sdr(1.0)));
    let mut c: SimConfig = config(vec![class("a", 0, 0.0, ProcessKind::Bernoulli, 256, pair("src", "dst"))]);
    c.switch.output_buffer_bytes = if output_buffers { 2048 } else { 0 };
    c.switch.crossbar = CrossbarKind::PerVl;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(1_000, 0, 0, 1).unwrap();
    sim.run(100_000_000).unwrap();
    let r = sim.results();
    assert_eq!(r.delivered, 1);
    (r.events_by_kind, r.events, r.switch_hops)
}

fn kinds(pairs: &[(&'static str, u64)]) -> BTreeMap<&'static str, u64> {
    pairs.iter().copied().filter(|&(_, n)| n > 0).collect()
}

#[test]
fn one_packet_through_k_switches_with_output_buffers() {
    for k in 1..=3u64 {
        let (by_kind, events, hops) = one_packet(k as usize, true);
        assert_eq!(hops, k);
        // Per switch: the header routed, and the crossbar transfer's end,
        // which is also its output link's (the packet leaves the output
        // buffer as it arrives there, so one `XbarLinkDone` ends both); the
        // delivery once. The source's link frees itself without an event:
        // the host has nothing more to send (`lazy_free`). No credit return
        // is an event: each reaches a transmitter with nothing waiting, so
        // its arrival cannot start anything (see `Credits`).
        let want = kinds(&[("Inject", 1), ("XbarLinkDone", k), ("Routed", k), ("Deliver", 1)]);
        assert_eq!(by_kind, want, "k={k}");
        assert_eq!(events, 2 * k + 2);
    }
}

#[test]
fn one_packet_through_k_switches_without_output_buffers() {
    for k in 1..=3u64 {
        let (by_kind, events, hops) = one_packet(k as usize, false);
        assert_eq!(hops, k);
        // The crossbar feeds the link directly: its transfer ends with the
        // link's. Credits returned to a switch port decide its crossbar
        // arbitration, so they are events (one per switch); the source HCA's
        // are not, and its link frees itself without an event, as above.
        let want = kinds(&[("Inject", 1), ("LinkFree", k), ("Credit", k), ("Routed", k), ("Deliver", 1)]);
        assert_eq!(by_kind, want, "k={k}");
        assert_eq!(events, 3 * k + 2);
    }
}
