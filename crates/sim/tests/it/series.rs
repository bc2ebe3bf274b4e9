//! The time series per link and VL (`series_interval_ns`), worked by hand.

use ibnetsim_sim::{ProcessKind, SimConfig, Simulation};

use crate::common::*;

/// `(time_ps, node, port, vl, utilization, input_bytes, output_bytes)` rows.
type Row = (u64, String, u8, u8, f64, u32, u32);

fn rows(sim: &Simulation) -> Vec<Row> {
    let s = sim.results().series.expect("series asked for");
    (0..s.time_ps.len())
        .map(|k| (s.time_ps[k], s.node_names[s.node[k] as usize].clone(), s.port[k], s.vl[k], s.utilization[k], s.input_bytes[k], s.output_bytes[k]))
        .collect()
}

fn at<'a>(rows: &'a [Row], t: u64, node: &str, port: u8) -> &'a Row {
    rows.iter().find(|r| r.0 == t && r.1 == node && r.2 == port && r.3 == 0).unwrap_or_else(|| panic!("no row {t} {node}/{port}"))
}

#[test]
fn one_packet_sampled_every_microsecond() {
    // h0 → h1 through one switch, 1x SDR, 1 m: the packet (282 B, 5 credits)
    // leaves h0 over 0..1 128 ns; the switch routes it at 185 ns, grants it
    // the crossbar at once and sends it to h1 over 185..1 313 ns. From the
    // grant on it counts in the output buffer (port 2), 320 B, until its last
    // byte has left; the input buffer counts packets not yet granted.
    let net = routed(star(2));
    let mut c: SimConfig = config(vec![class("a", 0, 0.0, ProcessKind::Bernoulli, 256, pair("h0", "h1"))]);
    c.series_interval_ns = 1000.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.run(3_000_000).unwrap();
    let r = rows(&sim);
    // Every cabled port (4) and slot (VL 0, VL 15) at 1, 2 and 3 µs.
    assert_eq!(r.len(), 3 * 4 * 2);
    let h0 = at(&r, 1_000_000, "h0", 1);
    // A send buffer holds a packet's credits until its last byte has left.
    assert_eq!((h0.4, h0.6), (1.0, 320), "h0 sent the whole first µs, and is still sending");
    assert_eq!((at(&r, 2_000_000, "h0", 1).4, at(&r, 2_000_000, "h0", 1).6), (0.128, 0));
    let out = at(&r, 1_000_000, "sw", 2);
    assert!((out.4 - 0.815).abs() < 1e-12, "{}", out.4);
    assert_eq!((out.5, out.6), (0, 320));
    assert_eq!(at(&r, 1_000_000, "sw", 1).5, 0, "granted at 185 ns: no longer waiting at the input");
    let out2 = at(&r, 2_000_000, "sw", 2);
    assert!((out2.4 - 0.313).abs() < 1e-12, "{}", out2.4);
    assert_eq!((out2.5, out2.6, at(&r, 2_000_000, "sw", 1).5), (0, 0, 0));
    assert_eq!(at(&r, 3_000_000, "sw", 2).4, 0.0);
    // Slicing the run changes nothing.
    let mut sliced = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sliced.inject(0, 0, 0, 1).unwrap();
    for until in [500_000, 999_999, 1_000_000, 2_300_000, 3_000_000] {
        sliced.run(until).unwrap();
    }
    assert_eq!(sliced.results().series, sim.results().series);
}

#[test]
fn the_hot_links_series_rises_when_the_hot_spot_starts() {
    // Three hosts send 20 packets each to h0 from 20 µs on: the link into h0
    // (switch port 1) is idle before and busy all the time after, as long as
    // the 60 packets (67.7 µs of link time) last, with packets queued at it.
    let net = routed(star(4));
    let mut c: SimConfig = config(vec![class("a", 0, 0.0, ProcessKind::Bernoulli, 256, pair("h1", "h0"))]);
    c.series_interval_ns = 5000.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    for src in 1..4 {
        for _ in 0..20 {
            sim.inject(20_000_000, 0, src, 0).unwrap();
        }
    }
    sim.run(120_000_000).unwrap();
    let r = rows(&sim);
    for t in (5..=20).map(|k| k * 1_000_000).filter(|t| t % 5_000_000 == 0) {
        assert_eq!(at(&r, t, "sw", 1).4, 0.0, "before the hot spot, at {t}");
    }
    for t in [30_000_000, 50_000_000, 80_000_000] {
        let row = at(&r, t, "sw", 1);
        assert_eq!(row.4, 1.0, "the hot link is busy all through the interval ending at {t}");
        assert!(row.6 > 0, "packets wait in its output buffer at {t}");
        let waiting: u32 = (2..=4).map(|p| at(&r, t, "sw", p).5).sum();
        assert!(waiting > 0, "and at the inputs that feed it, at {t}");
    }
    assert_eq!(at(&r, 120_000_000, "sw", 1).4, 0.0, "and idle again once they are through");
}
