//! Input buffer organisations, transfers per crossbar input and crossbar
//! arbiters (issue 13), on cases worked by hand to the picosecond.

use ibnetsim_fabric::Fabric;
use ibnetsim_sim::{CrossbarKind, ProcessKind, SimConfig, Simulation};
use ibnetsim_sm::{MulticastGroupConfig, SmConfig, SubnetManager};

use crate::common::*;

/// One switch `sw`: `h0`, `h1` on ports 1, 2 over 4x SDR (1 ns/B), `h2`, `h3`
/// on ports 3, 4 over 1x SDR (4 ns/B); 1 m cables. Inputs are four times
/// faster than outputs, so packets queue at the inputs.
fn two_by_two() -> Fabric {
    let mut f = Fabric::new();
    let s = f.add_switch("sw", 4).unwrap();
    for (i, link) in [sdr4(1.0), sdr4(1.0), sdr(1.0), sdr(1.0)].into_iter().enumerate() {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(h, 1, s, i as u32 + 1, link).unwrap();
    }
    f
}

/// One class per packet (loads 0: packets are injected by hand), so each
/// class's latency is one packet's.
fn per_packet(pairs: &[(&str, &str, &str)]) -> SimConfig {
    config(pairs.iter().map(|(name, s, d)| class(name, 0, 0.0, ProcessKind::Poisson, 256, pair(s, d))).collect())
}

/// Delivery time of each class's one packet, in ns, after injecting
/// `(at_ns, class, src, dst)` in that order.
fn delivery_ns(net: &Net, c: &SimConfig, injections: &[(u64, usize, usize, usize)]) -> Vec<u64> {
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    for &(at, class, src, dst) in injections {
        sim.inject(at * 1000, class, src, dst).unwrap();
    }
    sim.run(1_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    assert_eq!(r.delivered, injections.len() as u64);
    injections
        .iter()
        .map(|&(at, class, ..)| {
            let l = &r.classes[class].latency;
            assert_eq!((l.count, l.min_ps), (1, l.max_ps));
            at + l.min_ps.unwrap() / 1000
        })
        .collect()
}

#[test]
fn voq_removes_head_of_line_blocking() {
    // Wire 282 B: 282 ns on the 4x inputs, 1128 ns on the 1x outputs; a
    // header (20 B) takes 20 ns on a 4x link; routing 100 ns; speedup 1.
    //
    // p (h1 → h2) at 0: routed at 5 + 20 + 100 = 125, crosses to h2's output
    //   125..1253 (the output link's pace), delivered 1253 + 5 = 1258.
    // a (h0 → h2) at 10: routed at 135; output h2's crossbar port is busy
    //   until 1253.
    // b (h0 → h3) at 10, behind a on h0's link: on the wire 292..574, routed
    //   at 297 + 20 + 100 = 417; output h3 is free.
    //
    // fifo: b waits behind a. a crosses 1253..2381, delivered 2386; h0's
    //   crossbar input is busy until then, so b crosses 2381..3509,
    //   delivered 3514.
    // voq: b passes a: crosses 417..1545, delivered 1550. At 1253 output h2
    //   is free but h0's crossbar input is still busy with b, so a crosses
    //   1545..2673, delivered 2678.
    // voq, 2 transfers per input: b as before, and a crosses at 1253 beside
    //   it, delivered 2386.
    // fifo, 2 transfers per input: a crosses at 1253 and b right after it
    //   beside it, both delivered 2386.
    let net = routed(two_by_two());
    let inj = [(0, 0, 1, 2), (10, 1, 0, 2), (10, 2, 0, 3)];
    for (buffer, transfers, want) in [
        ("fifo", 1, [1258, 2386, 3514]),
        ("voq", 1, [1258, 2678, 1550]),
        ("voq", 2, [1258, 2386, 1550]),
        ("fifo", 2, [1258, 2386, 2386]),
    ] {
        let mut c = per_packet(&[("p", "h1", "h2"), ("a", "h0", "h2"), ("b", "h0", "h3")]);
        c.switch.input_buffer = buffer.into();
        c.switch.max_transfers_per_input = transfers;
        assert_eq!(delivery_ns(&net, &c, &inj), want, "{buffer}, {transfers} per input");
    }
}

#[test]
fn voq_does_not_let_a_multicast_packet_pass() {
    // As above, with b replaced by a multicast packet m from h0 to the group
    // {h0, h3} (its one copy goes to h3, whose output is free). p (h1 → h2)
    // at 0 is delivered at 1258; a (h0 → h2) at 10 waits for output h2 until
    // 1253, crosses 1253..2381, delivered 2386. m at 10, behind a, is routed
    // at 417; a multicast packet is neither passed nor passes, so it waits
    // until a has left: it crosses 2381..3509, delivered 3514, as under fifo.
    // (Passing a, it would be delivered at 1550, as b above.)
    let fabric = two_by_two();
    let groups = vec![MulticastGroupConfig { mlid: 0xC000, members: vec!["h0".into(), "h3".into()] }];
    let sn = SubnetManager::new(SmConfig { routing_engine: "updn".into(), multicast_groups: groups, ..SmConfig::default() }).configure(&fabric).unwrap();
    for buffer in ["voq", "fifo"] {
        let mut c = per_packet(&[("p", "h1", "h2"), ("a", "h0", "h2"), ("m", "h0", "h3")]);
        c.switch.input_buffer = buffer.into();
        let mut sim = Simulation::from_subnet(&fabric, &sn, &c, None).unwrap();
        sim.inject(0, 0, 1, 2).unwrap();
        sim.inject(10_000, 1, 0, 2).unwrap();
        sim.inject_to_group(10_000, 2, 0, 0xC000, 256).unwrap();
        sim.run(1_000_000_000).unwrap();
        sim.check_conservation().unwrap();
        let r = sim.results();
        let at: Vec<u64> = [(0, 0), (1, 10), (2, 10)]
            .iter()
            .map(|&(k, t)| {
                let l = &r.classes[k].latency;
                assert_eq!((l.count, l.min_ps), (1, l.max_ps), "{buffer}, class {k}");
                t + l.min_ps.unwrap() / 1000
            })
            .collect();
        assert_eq!(at, [1258, 2386, 3514], "{buffer}");
    }
}

#[test]
fn voq_keeps_each_outputs_packets_in_order() {
    // Speedup 2, output buffers of 7 credits (448 B). A 256 B payload is 282 B
    // on the wire, 5 credits; a 64 B payload 90 B, 2 credits.
    //
    // p (h1 → h2, 256 B) at 0: routed at 125, crosses at twice the output
    //   rate 125..689 and is sent on h2's link 125..1253, holding 5 credits
    //   of h2's output buffer until then; delivered 1258.
    // a (h0 → h2, 256 B) at 10: routed at 135; at 689 the crossbar output is
    //   free but 5 + 5 credits do not fit in 7: a waits until 1253, crosses
    //   1253..1817, and is sent 1253..2381, delivered 2386.
    // c (h0 → h2, 64 B) at 10, behind a: routed at 417. At 689 it would fit
    //   (5 + 2 credits), but it must not pass a on their common output; it
    //   crosses when a's crossing ends, 1817..1997, and is sent after a,
    //   2381..2741, delivered 2746. (Passing a would deliver c at 1618.)
    let net = routed(two_by_two());
    let inj = [(0, 0, 1, 2), (10, 1, 0, 2), (10, 2, 0, 2)];
    for buffer in ["fifo", "voq"] {
        let mut c = per_packet(&[("p", "h1", "h2"), ("a", "h0", "h2"), ("c", "h0", "h2")]);
        c.traffic.classes[2].payload_bytes = 64;
        c.switch.input_buffer = buffer.into();
        c.switch.speedup = 2.0;
        c.switch.output_buffer_bytes = 448;
        assert_eq!(delivery_ns(&net, &c, &inj), [1258, 2386, 2746], "{buffer}");
    }
}

#[test]
fn oldest_first_serves_the_oldest_head() {
    // All links 1x SDR, 1 m: header 80 ns, packet 1128 ns.
    // p (h3 → h2) at 0: routed at 185, crosses to h2 185..1313, delivered 1318.
    // old (h1 → h2) at 10 and young (h0 → h2) at 20 are routed at 195 and
    // 205 and wait for output h2. When it frees at 1313, round robin's
    // pointer, just past port 4, reaches port 1 (young) first; oldest-first
    // takes old. The winner crosses 1313..2441 (delivered 2446), the other
    // 2441..3569 (delivered 3574).
    let net = routed(star(4));
    let inj = [(0, 0, 3, 2), (10, 1, 1, 2), (20, 2, 0, 2)];
    for (arbiter, want) in [("round-robin", [1318, 3574, 2446]), ("oldest-first", [1318, 2446, 3574])] {
        for output_buffers in [true, false] {
            let mut c = per_packet(&[("p", "h3", "h2"), ("old", "h1", "h2"), ("young", "h0", "h2")]);
            c.switch.crossbar_arbiter = arbiter.into();
            if !output_buffers {
                c.switch.output_buffer_bytes = 0;
            }
            assert_eq!(delivery_ns(&net, &c, &inj), want, "{arbiter}, output buffers: {output_buffers}");
        }
    }
}

#[test]
fn oldest_first_breaks_ties_in_round_robin_order() {
    // Star of 5, 1x SDR. p (h3, port 4 → h2) crosses 185..1313, delivered
    // 1318; the switch's pointer moves past port 4. a (h1, port 2) and b (h4,
    // port 5), both to h2 and both generated at 10, are routed at 195 and
    // wait. Equal ages keep round-robin order from the pointer: port 5 first,
    // so b crosses 1313..2441 (delivered 2446) and a 2441..3569 (3574), as
    // under round robin.
    let net = routed(star(5));
    let inj = [(0, 0, 3, 2), (10, 1, 1, 2), (10, 2, 4, 2)];
    for arbiter in ["oldest-first", "round-robin"] {
        for output_buffers in [true, false] {
            let mut c = per_packet(&[("p", "h3", "h2"), ("a", "h1", "h2"), ("b", "h4", "h2")]);
            c.switch.crossbar_arbiter = arbiter.into();
            if !output_buffers {
                c.switch.output_buffer_bytes = 0;
            }
            assert_eq!(delivery_ns(&net, &c, &inj), [1318, 3574, 2446], "{arbiter}, output buffers: {output_buffers}");
        }
    }
}

#[test]
fn oldest_first_moves_its_pointer_past_the_granted_input() {
    // The two-by-two switch (h0, h1 on 4x SDR, h2, h3 on 1x). p1 (h0 → h2) at
    // 0: routed at 125, crosses 125..1253 at the output's pace, delivered
    // 1258; the pointer moves past h0's queue. p2 (h0 → h2) and y (h1 → h2)
    // are both generated at 10: y is routed at 135, p2 (behind p1 on h0's
    // link, sent 282..564) at 407. At 1253 h0's crossbar input and output h2
    // free together; the ages tie, and from the pointer y's queue comes
    // first: y crosses 1253..2381, delivered 2386, p2 2381..3509, 3514.
    let net = routed(two_by_two());
    let inj = [(0, 0, 0, 2), (10, 1, 0, 2), (10, 2, 1, 2)];
    for arbiter in ["oldest-first", "round-robin"] {
        for output_buffers in [true, false] {
            let mut c = per_packet(&[("p1", "h0", "h2"), ("p2", "h0", "h2"), ("y", "h1", "h2")]);
            c.switch.crossbar_arbiter = arbiter.into();
            if !output_buffers {
                c.switch.output_buffer_bytes = 0;
            }
            assert_eq!(delivery_ns(&net, &c, &inj), [1258, 3514, 2386], "{arbiter}, output buffers: {output_buffers}");
        }
    }
}

#[test]
fn without_output_buffers_outputs_take_turns_from_one_past_the_last_granted() {
    // The two-by-two switch without output buffers, two data VLs (SL n on
    // VL n), a multiplexed crossbar. h0 sends p1 (→ h2, VL0) at 0, p2 (→ h2,
    // VL0) at 10 and p3 (→ h3, VL1) at 300, after p2 has started: on h0's 4x
    // link 0..282, 282..564 and 564..846. p1 is routed at 125 and crosses to
    // output 3 125..1253 (the 1x link's pace), delivered 1258; p2 and p3 are
    // routed at 407 and 689 and wait for h0's crossbar input. At 1253 it
    // frees, and both outputs are free: they are offered in turn from one
    // past output 3, the last granted, so output 4 first: p3 crosses
    // 1253..2381, delivered 2386, and p2 2381..3509, delivered 3514.
    let net = routed(two_by_two());
    let mut c = per_packet(&[("p1", "h0", "h2"), ("p2", "h0", "h2"), ("p3", "h0", "h3")]);
    c.traffic.classes[2].sl = 1;
    c.data_vls = 2;
    c.switch.output_buffer_bytes = 0;
    assert_eq!(delivery_ns(&net, &c, &[(0, 0, 0, 2), (10, 1, 0, 2), (300, 2, 0, 3)]), [1258, 3514, 2386]);
}

#[test]
fn islip_keeps_a_grant_pointer_per_output() {
    // Star of 5 (h_i on port i + 1), 1x SDR, 1 m: routed 185 ns after a
    // packet starts, 1128 ns per packet.
    // p (h4 → h2) at 0: crosses to port 3 185..1313, delivered 1318. Round
    //   robin's pointer moves past port 5; iSLIP's pointer of output 3 too.
    // a (h1, port 2 → h2) at 10: routed 195, waits for output 3.
    // z (h2, port 3 → h0) at 20: routed 205, crosses to port 1 at once,
    //   delivered 205 + 1128 + 5 = 1338. Round robin's one pointer moves past
    //   port 3; iSLIP moves only output 1's.
    // b (h3, port 4 → h2) at 30: routed 215, waits for output 3.
    // At 1313 output 3 frees: round robin looks from port 4 on and takes b;
    // output 3's iSLIP pointer (past port 5: port 1) finds a first. The
    // winner crosses 1313..2441 (delivered 2446), the other 2441..3569
    // (delivered 3574).
    // A per-VL crossbar (one input and output per port and VL) gives the
    // same times: there is one data VL, so the same ports meet.
    let net = routed(star(5));
    let inj = [(0, 0, 4, 2), (10, 1, 1, 2), (20, 2, 2, 0), (30, 3, 3, 2)];
    for (arbiter, want) in [("round-robin", [1318, 3574, 1338, 2446]), ("islip", [1318, 2446, 1338, 3574])] {
        for crossbar in [CrossbarKind::Multiplexed, CrossbarKind::PerVl] {
            let mut c = per_packet(&[("p", "h4", "h2"), ("a", "h1", "h2"), ("z", "h2", "h0"), ("b", "h3", "h2")]);
            c.switch.crossbar_arbiter = arbiter.into();
            c.switch.crossbar = crossbar;
            assert_eq!(delivery_ns(&net, &c, &inj), want, "{arbiter}, {crossbar:?}");
        }
    }
}

#[test]
fn islip_grant_pointers_reach_every_port_under_both_crossbars() {
    // Star of 5 as above (h_i on port i + 1, 1x SDR): p crosses 185..1313,
    // delivered 1318; two later packets wait for p's output; the one the
    // output's grant pointer (one past p's input port) reaches first crosses
    // 1313..2441, delivered 2446, the other 2441..3569, delivered 3574.
    // A: p from port 3 to port 1; a from port 4, b from port 5: a first.
    // B: p from port 4 to port 3; a from port 2, b from port 5: b first, the
    //   last port of the switch, past a in the order the queues are scanned.
    // Round robin's one pointer gives the same order here. With one data VL
    // and no VL15 traffic, a per-VL crossbar (one crossbar port per port and
    // VL) meets the same ports in the same order, so the same times.
    let net = routed(star(5));
    for (name, inj, want) in [
        ("A", [(0, 0, 2, 0), (10, 1, 3, 0), (20, 2, 4, 0)], [1318, 2446, 3574]),
        ("B", [(0, 0, 3, 2), (10, 1, 1, 2), (20, 2, 4, 2)], [1318, 3574, 2446]),
    ] {
        for arbiter in ["islip", "round-robin"] {
            for crossbar in [CrossbarKind::Multiplexed, CrossbarKind::PerVl] {
                let h = |i: usize| format!("h{i}");
                let (p, a, b) = ((h(inj[0].2), h(inj[0].3)), (h(inj[1].2), h(inj[1].3)), (h(inj[2].2), h(inj[2].3)));
                let mut c = per_packet(&[("p", &p.0, &p.1), ("a", &a.0, &a.1), ("b", &b.0, &b.1)]);
                c.switch.crossbar_arbiter = arbiter.into();
                c.switch.crossbar = crossbar;
                assert_eq!(delivery_ns(&net, &c, &inj), want, "{name}, {arbiter}, {crossbar:?}");
            }
        }
    }
}

#[test]
fn a_waiting_vl15_packet_goes_before_waiting_data_under_every_arbiter() {
    // Star of 4, 1x SDR. p (h3 → h2, data) crosses 185..1313, delivered 1318.
    // d (h0 → h2, data) at 10 and m (h1 → h2, VL15, 64 B payload: 90 B on the
    // wire, 360 ns) at 20 are routed at 195 and 205 and wait for output 3.
    // At 1313 the VL15 input goes first under every arbiter: m crosses
    // 1313..1673, delivered 1678; d crosses 1673..2801, delivered 2806.
    let net = routed(star(4));
    let inj = [(0, 0, 3, 2), (10, 1, 0, 2), (20, 2, 1, 2)];
    for arbiter in ["islip", "round-robin", "oldest-first"] {
        let mut c = per_packet(&[("p", "h3", "h2"), ("d", "h0", "h2"), ("m", "h1", "h2")]);
        c.traffic.classes[2].vl15 = true;
        c.traffic.classes[2].payload_bytes = 64;
        c.switch.crossbar_arbiter = arbiter.into();
        assert_eq!(delivery_ns(&net, &c, &inj), [1318, 2806, 1678], "{arbiter}");
    }
}

#[test]
fn vl15_from_the_last_port_of_a_two_port_switch_at_zero_load() {
    // Star of 2, 1x SDR: port 2's VL15 queue is the switch's last input
    // queue, and its VL15 the last crossbar port (port, VL slot) of a per-VL
    // crossbar. A VL15 packet of 64 B (90 B on the wire) from h1 has the
    // zero-load latency 5 + 80 + 100 + 5 + 360 = 550 ns; a data packet from
    // h0 at 2 000 ns, 1 318 ns, after the pointer has wrapped past that queue.
    let net = routed(star(2));
    for arbiter in ["islip", "round-robin"] {
        for crossbar in [CrossbarKind::Multiplexed, CrossbarKind::PerVl] {
            let mut c = per_packet(&[("m", "h1", "h0"), ("d", "h0", "h1")]);
            c.traffic.classes[0].vl15 = true;
            c.traffic.classes[0].payload_bytes = 64;
            c.switch.crossbar_arbiter = arbiter.into();
            c.switch.crossbar = crossbar;
            assert_eq!(delivery_ns(&net, &c, &[(0, 0, 1, 0), (2_000, 1, 0, 1)]), [550, 3_318], "{arbiter}, {crossbar:?}");
        }
    }
}

#[test]
fn islip_needs_output_buffers_and_fifo_inputs() {
    let net = routed(star(3));
    for (output_bytes, buffer) in [(0, "fifo"), (2048, "voq")] {
        let mut c = per_packet(&[("p", "h0", "h1")]);
        c.switch.crossbar_arbiter = "islip".into();
        c.switch.output_buffer_bytes = output_bytes;
        c.switch.input_buffer = buffer.into();
        let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).expect_err("refused").to_string();
        assert!(e.contains("switch.crossbar_arbiter") && e.contains("islip"), "{e}");
    }
}
