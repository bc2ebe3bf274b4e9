//! Partitioned input VL buffers: each partition has its own credits, so a
//! transmitter holds back a packet for a full partition even while another
//! partition of the same VL buffer has room; with one partition (the
//! default) the whole buffer is one queue, as before.

use ibnetsim_sim::{ProcessKind, SimConfig, Simulation};

use crate::common::*;

/// `src` —4x— sw0 —1x— `dst`, no output buffers: the switch drains its input
/// buffer four times slower than it fills, so packets wait there.
fn net_and_config(partitions: Vec<u32>) -> (Net, SimConfig) {
    let f = fast_to_slow();
    let mut c = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, pair("src", "dst"))]);
    c.switch.output_buffer_bytes = 0;
    c.switch.input_buffer_bytes = 1024;
    c.switch.input_partition_bytes = partitions;
    (routed(f), c)
}

/// Three 256 B packets (282 B, 5 credits each) injected together; the
/// source's credits for the switch's VL 0 buffer 600 ns later, per partition.
fn after_600ns(partitions: Vec<u32>) -> (Vec<(u32, u32)>, Simulation) {
    let (net, c) = net_and_config(partitions);
    let parts = c.switch.input_partition_bytes.len().max(1);
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    for _ in 0..3 {
        sim.inject(0, 0, 0, 1).unwrap();
    }
    sim.run(600_000).unwrap();
    let seen = (0..parts as u8).map(|k| sim.credits("src", 1, 0, k).unwrap()).collect();
    assert_eq!(sim.credits("src", 1, 0, parts as u8), None);
    (seen, sim)
}

#[test]
fn a_full_partition_refuses_a_packet_while_another_has_room() {
    // One buffer of 16 credits: by 600 ns all three packets (282 ns each on
    // the 4x link) have started into it, and none has left it (the first
    // needs 1 128 ns on the 1x link): one credit is left.
    let (whole, _) = after_600ns(vec![]);
    assert_eq!(whole, vec![(1, 16)]);
    // Split 5 + 11 credits: the first packet fills partition 0; the others
    // wait at the source for partition 0's credits although partition 1 is
    // empty (nothing is sent towards it).
    let (split, mut sim) = after_600ns(vec![320, 704]);
    assert_eq!(split, vec![(0, 5), (11, 11)]);
    sim.run(50_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    assert_eq!(r.delivered, 3);
    // Packet 1 is unaffected: 5 000 + 20 000 + 100 000 + 5 000 + 1 128 000.
    // Each later one leaves the source only when the previous one's last byte
    // has left the switch, so they arrive one 1x packet time apart plus the
    // credit's return and the hop to the switch.
    let l = &r.classes[0].latency;
    assert_eq!(l.min_ps, Some(1_258_000));
    assert!(l.max_ps.unwrap() > 2 * 1_128_000 + 1_258_000, "{:?}", l.max_ps);
}

#[test]
fn partitions_are_checked() {
    let build = |parts: Vec<u32>| {
        let (net, c) = net_and_config(parts);
        Simulation::new(&net.fabric, &net.lids, &net.tables, &c).err().map(|e| e.to_string())
    };
    assert_eq!(build(vec![512, 512]), None);
    assert_eq!(build(vec![320, 320, 384]), None);
    let e = build(vec![256, 768]).unwrap();
    assert!(e.contains("switch.input_partition_bytes[0]") && e.contains("whole MTU packet"), "{e}");
    let e = build(vec![512, 448]).unwrap();
    assert!(e.contains("switch.input_partition_bytes") && e.contains("add up to 960"), "{e}");
    let e = build(vec![1024]).unwrap();
    assert!(e.contains("2..=4"), "{e}");
    let e = build(vec![320; 5]).unwrap();
    assert!(e.contains("2..=4"), "{e}");
}

#[test]
fn a_partition_that_holds_what_the_buffer_held_changes_nothing() {
    // At low load the 16-credit buffer never holds more than two packets
    // (every packet sees the zero-load latency). A first partition of 10
    // credits holds two as well: the same seed gives the same latencies. One
    // of 8 credits holds only one, and a packet that follows one packet time
    // after another waits for the credits of the first (a credit round trip
    // is longer than a packet time).
    let run = |parts: Vec<u32>| {
        let net = routed(chain(2, sdr(1.0), sdr(1.0)));
        let mut c = config(vec![class("a", 0, 0.05, ProcessKind::Bernoulli, 256, pair("src", "dst"))]);
        c.switch.input_buffer_bytes = 1024;
        c.switch.input_partition_bytes = parts;
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
        sim.run(2_000_000_000).unwrap();
        let r = sim.results();
        (r.delivered, r.classes[0].latency.clone())
    };
    let (n, whole) = run(vec![]);
    assert!(n > 50, "{n}");
    assert_eq!((whole.min_ps, whole.max_ps), (Some(1_503_000), Some(1_503_000)));
    assert_eq!(run(vec![640, 384]), (n, whole.clone()));
    let (m, halves) = run(vec![512, 512]);
    assert_eq!((m, halves.min_ps), (n, Some(1_503_000)));
    assert!(halves.max_ps > Some(1_503_000), "{halves:?}");
}
