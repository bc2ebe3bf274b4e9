//! The deadlock watchdog: a ring routed all clockwise with one VL deadlocks
//! under heavy load, and the run stops with the cycle of blocked channels
//! instead of hanging — also when traffic elsewhere keeps moving (a partial
//! deadlock). The same ring routed without the wrap-around channel (a line,
//! deadlock-free) keeps running, and a saturated hot spot on up*/down* is
//! congestion, not deadlock.

use ibnetsim_fabric::NodeId;
use ibnetsim_sim::{ProcessKind, SimConfig, SimError, Simulation};
use ibnetsim_sm::{ForwardingTables, LidMap};

use crate::common::*;

const N: u32 = 4;

/// Ring tables: at `s<i>`, host `h<i>` on port 3; every other host clockwise
/// (port 1) when `clockwise`, else along the line `s0 … s3` (never using the
/// `s3 → s0` wrap-around): port 1 towards higher indices, port 2 towards lower.
fn ring_tables(net_f: &ibnetsim_fabric::Fabric, lids: &LidMap, clockwise: bool) -> ForwardingTables {
    let mut t = ForwardingTables::new(net_f, lids.top_lid());
    for i in 0..N {
        let s = net_f.node_by_name(&format!("s{i}")).unwrap();
        for j in 0..N {
            let h: NodeId = net_f.node_by_name(&format!("h{j}")).unwrap();
            let lid = lids.of_port(h, 1).unwrap().base;
            let port = if i == j {
                3
            } else if clockwise || j > i {
                1
            } else {
                2
            };
            t.set(s, lid, port);
        }
    }
    t
}

fn heavy(output_buffers: bool) -> SimConfig {
    let mut c = uniform(1.0, ProcessKind::Bernoulli, 256);
    // One packet per buffer makes the cycle fill quickly.
    c.switch.input_buffer_bytes = 320;
    c.switch.output_buffer_bytes = if output_buffers { 320 } else { 0 };
    c.hca.send_buffer_bytes = 320;
    c.hca.receive_buffer_bytes = 320;
    c.watchdog_ns = 20_000.0;
    c
}

#[test]
fn clockwise_ring_with_one_vl_is_reported_deadlocked() {
    for output_buffers in [true, false] {
        let f = ring(N);
        let lids = LidMap::assign(&f, 0).unwrap();
        let t = ring_tables(&f, &lids, true);
        let mut sim = Simulation::new(&f, &lids, &t, &heavy(output_buffers)).unwrap();
        let err = sim.run(100_000_000_000).unwrap_err();
        let SimError::Deadlock(report) = &err else { panic!("expected a deadlock, got {err}") };
        // Found long before the 100 ms limit.
        assert!(report.time_ps < 10_000_000_000, "{}", report.time_ps);
        assert!(report.time_ps - report.last_progress_ps > 20_000_000);
        assert!(report.waiting_packets >= N as u64);
        assert_clockwise_cycle(report);
        let msg = err.to_string();
        assert!(msg.starts_with("deadlock at t = ") && msg.contains("s0:1 -> s1:2 VL0"), "{msg}");
        // Once deadlocked, further runs report the same deadlock.
        assert!(matches!(sim.run(200_000_000_000), Err(SimError::Deadlock(_))));
        sim.check_conservation().unwrap();
    }
}

#[test]
fn line_routing_on_the_same_ring_runs_on() {
    for output_buffers in [true, false] {
        let f = ring(N);
        let lids = LidMap::assign(&f, 0).unwrap();
        let t = ring_tables(&f, &lids, false);
        let mut sim = Simulation::new(&f, &lids, &t, &heavy(output_buffers)).unwrap();
        sim.run(5_000_000_000).unwrap();
        let r = sim.results();
        assert!(r.delivered > 2_000, "{}", r.delivered);
        assert!(r.injection_queue.total_packets > 100, "overloaded sources queue up");
    }
}

/// The clockwise ring of `ring_tables` with a bystander: switch `t` (hosts
/// `x0`, `x1` on ports 1, 2) hangs off `s0` port 4 through its port 3.
fn ring_with_bystander() -> (ibnetsim_fabric::Fabric, LidMap, ForwardingTables) {
    let mut f = ibnetsim_fabric::Fabric::new();
    let hosts: Vec<NodeId> = (0..N).map(|i| f.add_hca(format!("h{i}"), 1).unwrap()).collect();
    let sws: Vec<NodeId> = (0..N).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
    for i in 0..N as usize {
        f.connect(sws[i], 1, sws[(i + 1) % N as usize], 2, sdr(1.0)).unwrap();
        f.connect(hosts[i], 1, sws[i], 3, sdr(1.0)).unwrap();
    }
    let t = f.add_switch("t", 3).unwrap();
    f.connect(sws[0], 4, t, 3, sdr(1.0)).unwrap();
    for j in 0..2u32 {
        let x = f.add_hca(format!("x{j}"), 1).unwrap();
        f.connect(x, 1, t, j + 1, sdr(1.0)).unwrap();
    }
    let lids = LidMap::assign(&f, 0).unwrap();
    let mut tables = ForwardingTables::new(&f, lids.top_lid());
    let lid = |name: &str| lids.of_port(f.node_by_name(name).unwrap(), 1).unwrap().base;
    for i in 0..N {
        let s = sws[i as usize];
        for j in 0..N {
            tables.set(s, lid(&format!("h{j}")), if i == j { 3 } else { 1 });
        }
        for x in ["x0", "x1"] {
            tables.set(s, lid(x), if i == 0 { 4 } else { 1 });
        }
    }
    for j in 0..N {
        tables.set(t, lid(&format!("h{j}")), 3);
    }
    tables.set(t, lid("x0"), 1);
    tables.set(t, lid("x1"), 2);
    (f, lids, tables)
}

fn ring_pairs(ahead: u32) -> ibnetsim_sim::PatternConfig {
    ibnetsim_sim::PatternConfig::FixedPairs {
        pairs: (0..N).map(|i| (format!("h{i}"), format!("h{}", (i + ahead) % N))).collect(),
    }
}

/// The four clockwise channels `s<k>:1 -> s<k+1>:2 VL0`, in wait-for order.
fn assert_clockwise_cycle(report: &ibnetsim_sim::DeadlockReport) {
    let links: Vec<(String, u8, String, u8, u8)> =
        report.cycle.iter().map(|c| (c.from_node.clone(), c.from_port, c.to_node.clone(), c.to_port, c.vl)).collect();
    assert_eq!(links.len(), N as usize, "{report}");
    let start = links.iter().position(|l| l.0 == "s0").unwrap();
    for k in 0..N as usize {
        let (from, fp, to, tp, vl) = &links[(start + k) % N as usize];
        assert_eq!(
            (from.as_str(), *fp, to.as_str(), *tp, *vl),
            (format!("s{k}").as_str(), 1, format!("s{}", (k + 1) % N as usize).as_str(), 2, 0),
            "{report}"
        );
    }
}

#[test]
fn a_deadlocked_ring_is_reported_while_a_bystander_keeps_moving() {
    for output_buffers in [true, false] {
        let (f, lids, t) = ring_with_bystander();
        let mut c = heavy(output_buffers);
        c.traffic.classes = vec![
            class("two", 0, 1.0, ProcessKind::Bernoulli, 256, ring_pairs(2)),
            class("three", 0, 1.0, ProcessKind::Bernoulli, 256, ring_pairs(3)),
            class("side", 0, 0.5, ProcessKind::Bernoulli, 256, pair("x0", "x1")),
        ];
        let mut sim = Simulation::new(&f, &lids, &t, &c).unwrap();
        let err = sim.run(100_000_000_000).unwrap_err();
        let SimError::Deadlock(report) = &err else { panic!("expected a deadlock, got {err}") };
        assert!(report.partial, "{err}");
        // The bystander moved a packet within the last hop or so; the ring
        // has been stuck for at least the 20 µs watchdog.
        assert!(report.time_ps - report.last_progress_ps < 5_000_000, "{err}");
        assert!(report.time_ps - report.blocked_since_ps >= 20_000_000, "{err}");
        assert_clockwise_cycle(report);
        // Everything that can never move again: the four ring input buffers
        // (and the four output buffers feeding them), and behind them the
        // hosts' send buffers and the switch input buffers they feed.
        assert_eq!(report.deadlocked_buffers, if output_buffers { 16 } else { 12 }, "{err}");
        let msg = err.to_string();
        assert!(msg.starts_with("deadlock at t = ") && msg.contains(", partial (other traffic still moves): "), "{msg}");
        assert!(msg.contains("s0:1 -> s1:2 VL0"), "{msg}");
        // Up to the report the bystander was delivered at its offered rate.
        let r = sim.results();
        let side = r.classes.iter().find(|k| k.name == "side").unwrap();
        assert!(side.delivered_packets as f64 > 0.9 * side.generated_packets as f64, "{side:?}");
        assert!(matches!(sim.run(200_000_000_000), Err(SimError::Deadlock(_))));
        sim.check_conservation().unwrap();
    }
}

#[test]
fn a_saturated_hot_spot_on_up_down_is_congestion_not_deadlock() {
    // Half of every host's packets go to h0, whose link gets 3× its rate:
    // the tree towards it saturates, and with one-packet buffers heads wait
    // behind it for longer than the (shortest allowed) 6 µs watchdog. Up*/down*
    // has no cyclic channel dependency, so none of that is a deadlock.
    let net = small_irregular();
    let sm = ibnetsim_sm::SubnetManager::new(ibnetsim_sm::SmConfig { routing_engine: "updn".into(), ..Default::default() });
    let subnet = sm.configure(&net.fabric).unwrap();
    for output_buffers in [true, false] {
        let mut c = heavy(output_buffers);
        c.watchdog_ns = 6_000.0;
        c.traffic.classes = vec![class(
            "hot",
            0,
            0.6,
            ProcessKind::Poisson,
            256,
            ibnetsim_sim::PatternConfig::HotSpot { hosts: vec!["h0".into()], fraction: 0.5 },
        )];
        let mut sim = Simulation::new(&net.fabric, &subnet.lids, &subnet.tables, &c).unwrap();
        sim.run(5_000_000_000).unwrap();
        let r = sim.results();
        // Saturated: h0's link is busy all the time, sources queue up.
        let into_h0 = r.ports.iter().find(|p| p.peer_node == "h0").unwrap();
        assert!(into_h0.utilization > 0.97, "{}", into_h0.utilization);
        assert!(r.injection_queue.total_packets > 1_000, "{:?}", r.injection_queue);
        // The scan (every 3 µs) did see heads blocked for a whole watchdog
        // period — 19 and 16 buffers at once at worst in this run — and
        // judged them.
        assert_eq!(r.watchdog.scans, 1_666, "{:?}", r.watchdog);
        assert!(r.watchdog.max_stuck_buffers >= 10, "{:?}", r.watchdog);
    }
}

/// One packet of SL `sl` injected from `src` to `dst` across `star(3)` with
/// `data_vls` data VLs (SL n on VL n), where port `port` of `node` has VL
/// arbitration table `table` and every other port serves every VL: the
/// report of the stall the run must end in.
fn stall_of_one_packet(
    src: &str,
    dst: &str,
    sl: u8,
    data_vls: u8,
    (node, port, table): (&str, u8, ibnetsim_sim::VlArbConfig),
    output_buffers: bool,
) -> ibnetsim_sim::DeadlockReport {
    use ibnetsim_sim::{QosTables, Sl2VlMap, VlArbConfig, VlArbMap};
    let net = routed(star(3));
    let at = net.fabric.node_by_name(node).unwrap();
    let mut c = config(vec![class("b", sl, 0.0, ProcessKind::Poisson, 256, pair(src, dst))]);
    c.data_vls = data_vls;
    if !output_buffers {
        c.switch.output_buffer_bytes = 0;
    }
    let qos = QosTables {
        sl2vl: Sl2VlMap::modulo(data_vls),
        vlarb: VlArbMap { default: VlArbConfig::uniform(data_vls), per_port: vec![((at, port), table)] },
    };
    let mut sim = Simulation::with_qos(&net.fabric, &net.lids, &net.tables, &c, qos).unwrap();
    // star(3)'s hosts are numbered as named.
    let index = |h: &str| h[1..].parse::<usize>().unwrap();
    sim.inject(0, 0, index(src), index(dst)).unwrap();
    let Err(SimError::Deadlock(r)) = sim.run(1_000_000_000) else { panic!("{src} -> {dst}: the run should stall") };
    *r
}

#[test]
fn a_vl_no_arbitration_table_serves_is_reported_as_starvation() {
    // One SL1 packet from h1 to h2 across a switch whose port to h2 (port 3)
    // serves VL0 only; every other port serves both VLs. The packet reaches
    // the switch and then waits forever at the head of sw/2's VL1 input, with
    // or without output buffers (none is taken on a VL its port never
    // sends). Either way the stall names sw/3 VL1 and its one packet, and no
    // cycle.
    // The same packet from h0 to h1, where h0's own port serves only VL0,
    // starves in h0's send buffer.
    use ibnetsim_sim::{StarvedVl, VlArbConfig};
    let only_vl0 = VlArbConfig { high: vec![], low: vec![(0, 10)], limit_of_high_priority: 0 };
    for (src, dst, node, port, output_buffers) in
        [("h1", "h2", "sw", 3, true), ("h1", "h2", "sw", 3, false), ("h0", "h1", "h0", 1, true)]
    {
        let r = stall_of_one_packet(src, dst, 1, 2, (node, port, only_vl0.clone()), output_buffers);
        assert!(r.cycle.is_empty());
        assert_eq!(r.starved, vec![StarvedVl { node: node.into(), port, vl: 1, packets: 1 }], "{src} -> {dst}");
        let msg = r.to_string();
        assert!(msg.starts_with("starvation at t = "), "{msg}");
        assert!(msg.contains(&format!("VL1 at {node}/{port} (1 packet waits) is never sent")), "{msg}");
    }
}

#[test]
fn with_one_data_vl_a_port_whose_table_never_sends_it_starves_it() {
    // With one data VL the transmitter takes the arbiter's only possible
    // choice without asking it (`transmit_next`): a table that does not serve
    // VL0 must still hold the packet, at a switch port and at a CA port.
    use ibnetsim_sim::{StarvedVl, VlArbConfig};
    let serves_nothing = VlArbConfig { high: vec![], low: vec![], limit_of_high_priority: 0 };
    for (src, dst, node, port) in [("h1", "h2", "sw", 3), ("h0", "h1", "h0", 1)] {
        let r = stall_of_one_packet(src, dst, 0, 1, (node, port, serves_nothing.clone()), true);
        assert_eq!(r.starved, vec![StarvedVl { node: node.into(), port, vl: 0, packets: 1 }], "{src} -> {dst}");
    }
}

#[test]
fn dfsssp_layers_keep_running_a_torus_that_minhop_deadlocks() {
    // A 4x4 torus, two hosts a switch, saturating uniform traffic with
    // one-packet buffers. minhop's minimal routes on one VL deadlock; the
    // same kind of routes (sssp's) spread by dfsssp over layers, each on its
    // own VLs through the engine's per-path SLs, do not.
    use ibnetsim_sm::{RoutingOptions, SmConfig, SubnetManager};
    let f = ibnetsim_fabric::gen::MeshParams::new(&[4, 4], true, 2).build().unwrap();
    let configure = |engine: &str, max_vls: Option<u8>| {
        let options = RoutingOptions { max_vls, ..RoutingOptions::default() };
        SubnetManager::new(SmConfig { routing_engine: engine.into(), options, ..SmConfig::default() }).configure(&f).unwrap()
    };
    let heavy_on = |data_vls: u8| {
        let mut c = heavy(true);
        c.data_vls = data_vls;
        c
    };
    let minhop = configure("minhop", None);
    let mut sim = Simulation::from_subnet(&f, &minhop, &heavy_on(1), None).unwrap();
    let err = sim.run(10_000_000_000).unwrap_err();
    assert!(matches!(err, SimError::Deadlock(_)), "{err}");
    let dfsssp = configure("dfsssp", Some(4));
    assert!(dfsssp.notes[0].starts_with("dfsssp: 4 virtual layer(s) needed of 4 allowed"), "{:?}", dfsssp.notes);
    let mut sim = Simulation::from_subnet(&f, &dfsssp, &heavy_on(4), None).unwrap();
    sim.run(10_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let sls: Vec<u8> = r.sls.iter().filter(|s| s.delivered_packets > 0).map(|s| s.sl).collect();
    assert_eq!(sls, vec![0, 1, 2, 3]);
}

#[test]
fn lash_layers_keep_running_a_torus_that_minhop_deadlocks() {
    // The same saturated 4x4 torus: lash's minimal routes need two layers
    // there, and on two VLs through its per-path SLs they keep running,
    // while on one VL (every SL on VL0) they deadlock as minhop's do.
    use ibnetsim_sm::{RoutingOptions, SmConfig, SubnetManager};
    let f = ibnetsim_fabric::gen::MeshParams::new(&[4, 4], true, 2).build().unwrap();
    let options = RoutingOptions { max_vls: Some(2), ..RoutingOptions::default() };
    let lash = SubnetManager::new(SmConfig { routing_engine: "lash".into(), options, ..SmConfig::default() }).configure(&f).unwrap();
    assert!(lash.notes[0].starts_with("lash: 2 layer(s) needed of 2 available"), "{:?}", lash.notes);
    let heavy_on = |data_vls: u8| {
        let mut c = heavy(true);
        c.data_vls = data_vls;
        c
    };
    let mut sim = Simulation::from_subnet(&f, &lash, &heavy_on(2), None).unwrap();
    sim.run(10_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let sls: Vec<u8> = sim.results().sls.iter().filter(|s| s.delivered_packets > 0).map(|s| s.sl).collect();
    assert_eq!(sls, vec![0, 1]);
    let mut sim = Simulation::from_subnet(&f, &lash, &heavy_on(1), None).unwrap();
    let err = sim.run(10_000_000_000).unwrap_err();
    assert!(matches!(err, SimError::Deadlock(_)), "{err}");
}
