//! Flow-control packets charged on the reverse link
//! (`credit_packet_bytes`, `flow_control.rs`), worked by hand on
//! `src` — sw0 — `dst` with 1 m 1x SDR links (4 ns/B, 5 ns of cable), 100 ns
//! routing and a switch input buffer that holds one 282-byte packet, so the
//! second of two packets waits for the first one's credits.

use ibnetsim_sim::config::BufferOverride;
use ibnetsim_sim::{ProcessKind, SimConfig, SimResults, Simulation};

use crate::common::*;

/// Latencies of the classes `a` (src → dst) and `b` (dst → src), packets
/// injected as `(time, class)`, and the results.
fn run(c: &SimConfig, packets: &[(u64, usize)]) -> (Vec<u64>, Vec<u64>, SimResults) {
    let net = routed(chain(1, sdr(1.0), sdr(1.0)));
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    for &(at, class) in packets {
        let (src, dst) = if class == 0 { (0, 1) } else { (1, 0) };
        sim.inject(at, class, src, dst).unwrap();
    }
    sim.run(100_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let lat = |k: usize| {
        let l = &r.classes[k].latency;
        [l.min_ps, l.max_ps].into_iter().flatten().collect::<Vec<_>>()
    };
    (lat(0), lat(1), r.clone())
}

fn one_packet_buffer(fcp_bytes: u32) -> SimConfig {
    let mut c = config(vec![
        class("a", 0, 0.0, ProcessKind::Poisson, 256, pair("src", "dst")),
        class("b", 0, 0.0, ProcessKind::Poisson, 256, pair("dst", "src")),
    ]);
    c.switch.input_buffer_bytes = 320;
    c.switch.output_buffer_bytes = 2048;
    c.switch.credit_packet_bytes = fcp_bytes;
    c
}

#[test]
fn a_credit_packet_takes_its_serialization_time_on_an_idle_link() {
    // Without charge (zero_load.rs): the first packet leaves the switch's
    // input buffer at 1 314 000, its credits reach src at 1 319 000, and the
    // second packet, waiting for them, has latency 2 636 000.
    let (a, _, r) = run(&one_packet_buffer(0), &[(1_000, 0), (1_000, 0)]);
    assert_eq!((a, r.flow_control_packets), (vec![1_318_000, 2_636_000], 0));
    // A 6-byte flow-control packet holds the switch's link towards src for
    // 24 000 ps first: the credits arrive at 1 343 000, 24 ns later.
    let (a, _, r) = run(&one_packet_buffer(6), &[(1_000, 0), (1_000, 0)]);
    assert_eq!((a, r.flow_control_packets), (vec![1_318_000, 2_660_000], 2));
    // Their time counts in that port's utilization: 2 × 24 000 ps of the
    // 100 µs run.
    assert!((port(&r, "sw0", 1).utilization - 48_000.0 / 100_000_000.0).abs() < 1e-12);
}

#[test]
fn a_credit_packet_waits_for_the_data_packet_on_its_link_and_goes_before_the_next() {
    // dst sends two packets to src from 100 000: the switch's link towards
    // src carries the first over [285 000, 1 413 000]. The credits freed at
    // 1 314 000 wait for it, leave at 1 413 000 and arrive at 1 442 000: src's
    // second packet has latency 1 442 000 + 1 318 000 − 1 000. dst's second
    // packet, routed at 1 413 000, starts after the flow-control packet, at
    // 1 437 000: latency 1 437 000 + 5 000 + 1 128 000 − 100 000.
    // (dst's packets enter sw0 through port 4, whose buffer holds both.)
    let packets = [(1_000, 0), (1_000, 0), (100_000, 1), (100_000, 1)];
    let with_room_at_port_4 = |fcp_bytes| {
        let mut c = one_packet_buffer(fcp_bytes);
        c.buffer_overrides = vec![BufferOverride { node: "sw0".into(), port: 4, vl: None, input_bytes: Some(8192), output_bytes: None }];
        c
    };
    let (a, b, _) = run(&with_room_at_port_4(0), &packets);
    assert_eq!((a, b), (vec![1_318_000, 2_636_000], vec![1_318_000, 2_446_000]));
    let (a, b, r) = run(&with_room_at_port_4(6), &packets);
    assert_eq!((a, b), (vec![1_318_000, 2_759_000], vec![1_318_000, 2_470_000]));
    // Two for src's packets at sw0 port 1, two for dst's at port 4 (the CAs
    // are not charged).
    assert_eq!(r.flow_control_packets, 4);
}

#[test]
fn credits_of_one_update_ride_in_one_packet() {
    // Two packets back to back with room for both: their credits are freed
    // at 1 314 000 and 2 442 000. With updates every 5 µs both go out at
    // 5 000 000, in one flow-control packet; with immediate updates, two.
    let mut c = one_packet_buffer(6);
    c.switch.input_buffer_bytes = 8192;
    let (_, _, r) = run(&c, &[(1_000, 0), (1_000, 0)]);
    assert_eq!(r.flow_control_packets, 2);
    c.switch.credit_update_ns = 5_000.0;
    let (_, _, r) = run(&c, &[(1_000, 0), (1_000, 0)]);
    assert_eq!(r.flow_control_packets, 1);
    // The CAs' own: dst advertises its sink's credits to sw0 too.
    c.hca.credit_packet_bytes = 6;
    let (a, _, r) = run(&c, &[(1_000, 0), (1_000, 0)]);
    assert_eq!((a, r.flow_control_packets), (vec![1_318_000, 2_446_000], 3));
}

#[test]
fn credit_packet_bytes_beyond_any_packet_are_refused() {
    let mut c = one_packet_buffer(2_000);
    let net = routed(chain(1, sdr(1.0), sdr(1.0)));
    let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).err().unwrap().to_string();
    assert!(e.contains("switch.credit_packet_bytes") && e.contains("2000"), "{e}");
    c.switch.credit_packet_bytes = 6;
    c.hca.credit_packet_bytes = 70_000;
    let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).err().unwrap().to_string();
    assert!(e.contains("hca.credit_packet_bytes"), "{e}");
}

#[test]
fn under_load_credit_packets_take_their_share_of_the_links_and_lose_nothing() {
    // Uniform traffic at 0.9 of 256-byte payloads on a small irregular
    // fabric, CAs and switches charged 6 bytes per advertisement, with
    // immediate and with periodic updates: every packet is accounted for,
    // and the accepted traffic drops by no more than the advertisements'
    // share of the link (6 B per 282 B packet, about 2 %).
    let net = small_irregular();
    for period_ns in [0.0, 256.0] {
        let mut accepted = Vec::new();
        for fcp_bytes in [0, 6] {
            let mut c = uniform(0.9, ProcessKind::Poisson, 256);
            c.switch.credit_update_ns = period_ns;
            c.hca.credit_update_ns = period_ns;
            c.switch.credit_packet_bytes = fcp_bytes;
            c.hca.credit_packet_bytes = fcp_bytes;
            c.warmup_ns = 20_000.0;
            let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
            sim.run(200_000_000).unwrap();
            sim.check_conservation().unwrap();
            let r = sim.results();
            assert_eq!(r.flow_control_packets > 0, fcp_bytes > 0);
            if fcp_bytes > 0 && period_ns == 0.0 {
                // One advertisement per packet and hop at most.
                assert!(r.flow_control_packets <= r.delivered * 8, "{} for {}", r.flow_control_packets, r.delivered);
            }
            accepted.push(r.accepted_fraction);
        }
        assert!(accepted[1] <= accepted[0] + 0.005 && accepted[1] >= accepted[0] - 0.05, "period {period_ns}: {accepted:?}");
    }
}
