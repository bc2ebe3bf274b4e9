//! Multicast: a packet to a multicast LID is replicated at the switches of
//! the subnet manager's spanning tree, and every member other than the
//! sender receives exactly one copy.

use ibnetsim_sim::{PatternConfig, ProcessKind, SimConfig, Simulation};
use ibnetsim_sm::{MulticastGroupConfig, SmConfig, Subnet, SubnetManager};

use crate::common::*;

fn subnet(fabric: &ibnetsim_fabric::Fabric, members: &[&str]) -> Subnet {
    subnet_of_groups(fabric, &[(0xC000, members)])
}

fn subnet_of_groups(fabric: &ibnetsim_fabric::Fabric, groups: &[(u16, &[&str])]) -> Subnet {
    let groups = groups
        .iter()
        .map(|&(mlid, members)| MulticastGroupConfig { mlid, members: members.iter().map(|m| m.to_string()).collect() })
        .collect();
    SubnetManager::new(SmConfig { routing_engine: "updn".into(), multicast_groups: groups, ..SmConfig::default() })
        .configure(fabric)
        .unwrap()
}

fn quiet() -> SimConfig {
    config(vec![class("m", 0, 0.0, ProcessKind::Poisson, 256, PatternConfig::Uniform)])
}

#[test]
fn one_packet_reaches_every_other_member_once() {
    let net = small_irregular();
    let members = ["h0", "h3", "h4", "h7", "h9"];
    let sn = subnet(&net.fabric, &members);
    let mut sim = Simulation::from_subnet(&net.fabric, &sn, &quiet(), None).unwrap();
    sim.inject_to_group(0, 0, 3, 0xC000, 256).unwrap();
    sim.run(100_000_000).unwrap();
    sim.check_conservation().unwrap();
    let got: Vec<u64> = (0..10).map(|h| sim.host_deliveries(h).unwrap()).collect();
    assert_eq!(got, vec![1, 0, 0, 0, 1, 0, 0, 1, 0, 1], "h3 sent; h0, h4, h7, h9 each receive one copy");
    let r = sim.results();
    assert_eq!((r.generated, r.delivered, r.dropped, r.in_flight), (1, 4, 0, 0));
    // Every switch holds a member, so the tree spans all five and each gets
    // the packet once and retires it after copying: 1 original + copies =
    // 4 deliveries + 5 retirements, so 8 copies.
    assert_eq!(r.multicast_copies, 8);
}

#[test]
fn every_member_sending_reaches_every_other_member() {
    let net = small_irregular();
    let members = ["h1", "h2", "h5", "h6", "h8"];
    let sn = subnet(&net.fabric, &members);
    let mut sim = Simulation::from_subnet(&net.fabric, &sn, &quiet(), None).unwrap();
    let hosts = [1usize, 2, 5, 6, 8];
    for (k, &h) in hosts.iter().enumerate() {
        // Several packets each, sent together: copies meet in the buffers.
        for i in 0..3 {
            sim.inject_to_group(k as u64 * 1_000 + i, 0, h, 0xC000, 256).unwrap();
        }
    }
    sim.run(1_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    for h in 0..10 {
        let want = if hosts.contains(&h) { 3 * 4 } else { 0 };
        assert_eq!(sim.host_deliveries(h), Some(want), "host h{h}");
    }
    assert_eq!(sim.results().delivered, 15 * 4);
}

#[test]
fn copies_leave_one_crossbar_input_one_after_another() {
    // One switch, members h0..h3; h0 sends one 256 B packet. The crossbar
    // input copies it to h1, h2, h3 in turn, each copy taking one packet time
    // (282 B at 4 ns/B, speedup 1): latencies L, L + 1 128 ns, L + 2 256 ns
    // with L the one-switch zero-load latency 1 318 000 ps.
    let fabric = star(4);
    let sn = subnet(&fabric, &["h0", "h1", "h2", "h3"]);
    let mut sim = Simulation::from_subnet(&fabric, &sn, &quiet(), None).unwrap();
    sim.inject_to_group(0, 0, 0, 0xC000, 256).unwrap();
    sim.run(50_000_000).unwrap();
    let l = sim.results().classes[0].latency.clone();
    assert_eq!((l.count, l.min_ps, l.max_ps), (3, Some(1_318_000), Some(1_318_000 + 2 * 1_128_000)));
    assert_eq!(l.mean_ps, Some(1_318_000.0 + 1_128_000.0));
}

#[test]
fn a_copy_for_a_free_port_does_not_wait_for_a_busy_one() {
    // One switch without output buffers, 1x SDR, 1 m cables; zero-load
    // latency L = 185 + 5 + 1 128 = 1 318 ns. At 0 h0 sends h1 a unicast
    // packet: the link to h1 (port 2) is busy from 185 to 1 313 ns. At 100 ns
    // h3 sends to the group {h1, h2, h3}; its head is routed at 285 ns with
    // copies owed to ports 2 (busy) and 3 (free). The copy to h2 goes at once
    // (latency L); the crossbar input is then busy until 285 + 1 128 = 1 413
    // ns, when the copy to h1 goes: delivered at 1 413 + 5 + 1 128 = 2 546 ns,
    // latency 2 446 ns. Waiting for port 2 first would give h2 its copy
    // only at 3 574 ns.
    let fabric = star(4);
    let sn = subnet(&fabric, &["h1", "h2", "h3"]);
    let mut c = config(vec![
        class("u", 0, 0.0, ProcessKind::Poisson, 256, PatternConfig::Uniform),
        class("m", 0, 0.0, ProcessKind::Poisson, 256, PatternConfig::Uniform),
    ]);
    c.switch.output_buffer_bytes = 0;
    let mut sim = Simulation::from_subnet(&fabric, &sn, &c, None).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.inject_to_group(100_000, 1, 3, 0xC000, 256).unwrap();
    sim.run(50_000_000).unwrap();
    let r = sim.results();
    assert_eq!(r.classes[0].latency.max_ps, Some(1_318_000));
    let m = &r.classes[1].latency;
    assert_eq!((m.count, m.min_ps, m.max_ps), (2, Some(1_318_000), Some(2_446_000)));
}

#[test]
fn a_multicast_class_sends_from_its_members_and_conserves_packets() {
    for output_buffers in [true, false] {
        let net = small_irregular();
        let sn = subnet(&net.fabric, &["h0", "h2", "h5", "h9"]);
        let mut c = config(vec![class("m", 0, 0.05, ProcessKind::Poisson, 128, PatternConfig::Multicast { mlid: 0xC000 })]);
        if !output_buffers {
            c.switch.output_buffer_bytes = 0;
        }
        let mut sim = Simulation::from_subnet(&net.fabric, &sn, &c, None).unwrap();
        sim.run(200_000_000).unwrap();
        sim.check_conservation().unwrap();
        let r = sim.results();
        assert!(r.generated > 20, "{}", r.generated);
        // Only members send and receive.
        for h in [1usize, 3, 4, 6, 7, 8] {
            assert_eq!(sim.host_deliveries(h), Some(0));
        }
        let to_members: u64 = [0usize, 2, 5, 9].iter().map(|&h| sim.host_deliveries(h).unwrap()).sum();
        assert_eq!(to_members, r.delivered);
        // Three receivers per packet; at 5 % load nearly all have arrived.
        assert!(r.delivered <= 3 * r.generated && 10 * r.delivered >= 27 * r.generated, "{} of {}", r.delivered, r.generated);
    }
}

#[test]
fn multicast_errors_name_the_group() {
    let net = small_irregular();
    let sn = subnet(&net.fabric, &["h0", "h2"]);
    let c = config(vec![class("m", 0, 0.1, ProcessKind::Poisson, 128, PatternConfig::Multicast { mlid: 0xC001 })]);
    let e = Simulation::from_subnet(&net.fabric, &sn, &c, None).unwrap_err().to_string();
    assert!(e.contains("traffic.classes[0].mlid") && e.contains("0xc001"), "{e}");
    let mut sim = Simulation::from_subnet(&net.fabric, &sn, &quiet(), None).unwrap();
    let e = sim.inject_to_group(0, 0, 1, 0xC000, 64).unwrap_err().to_string();
    assert!(e.contains("not a member"), "{e}");
    // Without the subnet's multicast tables there is no group.
    let mut plain = Simulation::new(&net.fabric, &net.lids, &net.tables, &quiet()).unwrap();
    assert!(plain.inject_to_group(0, 0, 0, 0xC000, 64).is_err());
}

#[test]
fn marked_copies_draw_notifications_from_their_receivers() {
    // FECN marks copies at the congested buffers on the way; each receiving
    // member (a copy names no destination) answers its source.
    let fabric = star(4);
    let sn = subnet(&fabric, &["h0", "h1", "h2", "h3"]);
    let mut c = quiet();
    c.switch.speedup = 2.0;
    c.mechanisms.fecn = Some(ibnetsim_sim::mechanism::fecn::Options { threshold: 0.1, marking_rate: 1 });
    let mut sim = Simulation::from_subnet(&fabric, &sn, &c, None).unwrap();
    for src in 0..4 {
        for _ in 0..10 {
            sim.inject_to_group(0, 0, src, 0xC000, 256).unwrap();
        }
    }
    sim.run(2_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    assert_eq!(r.in_flight, 0);
    assert!(r.transport.fecn_marked > 0);
    assert_eq!(r.transport.congestion_notifications, r.transport.fecn_marked);
    // 40 packets × 3 receivers, plus one notification per marked copy.
    assert_eq!(r.delivered, 120 + r.transport.fecn_marked);
}

#[test]
fn management_multicast_stays_on_vl15() {
    // A VL15 class sent to a group: every copy travels on VL15 (not flow
    // controlled, served first), never on a data VL.
    let net = small_irregular();
    let sn = subnet(&net.fabric, &["h0", "h3", "h8"]);
    let mut c = quiet();
    c.data_vls = 2;
    c.traffic.classes[0].vl15 = true;
    let mut sim = Simulation::from_subnet(&net.fabric, &sn, &c, None).unwrap();
    sim.inject_to_group(0, 0, 0, 0xC000, 200).unwrap();
    sim.run(100_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    assert_eq!(r.delivered, 2);
    let vl15 = r.vl_of_slot.iter().position(|&v| v == 15).unwrap();
    for p in &r.ports {
        for (slot, &u) in p.vl_utilization.iter().enumerate() {
            assert!(slot == vl15 || u == 0.0, "{}:{} carried the copy on slot {slot}", p.node, p.port);
        }
    }
}

#[test]
fn each_group_reaches_its_own_members_only() {
    // Two groups on the 5-switch fabric, {h0, h3, h4} and {h1, h7, h9}: a
    // packet from h3 to the first and one from h9 to the second each reach
    // the other two members of their own group, and nobody else.
    let net = small_irregular();
    let sn = subnet_of_groups(&net.fabric, &[(0xC000, &["h0", "h3", "h4"]), (0xC001, &["h1", "h7", "h9"])]);
    let mut sim = Simulation::from_subnet(&net.fabric, &sn, &quiet(), None).unwrap();
    // Two rounds, the second once the first has left the fabric.
    for round in 1..=2u64 {
        let at = (round - 1) * 100_000_000;
        sim.inject_to_group(at, 0, 3, 0xC000, 256).unwrap();
        sim.inject_to_group(at, 0, 9, 0xC001, 256).unwrap();
        sim.run(round * 100_000_000).unwrap();
        sim.check_conservation().unwrap();
        let got: Vec<u64> = (0..10).map(|h| sim.host_deliveries(h).unwrap()).collect();
        assert_eq!(got, [1, 1, 0, 0, 1, 0, 0, 1, 0, 0].map(|n| n * round).to_vec(), "round {round}");
        let r = sim.results();
        assert_eq!((r.generated, r.delivered, r.dropped, r.in_flight), (2 * round, 4 * round, 0, 0), "round {round}");
    }
}
