//! The deadlock watchdog: a ring routed all clockwise with one VL deadlocks
//! under heavy load, and the run stops with the cycle of blocked channels
//! instead of hanging. The same ring routed without the wrap-around channel
//! (a line, deadlock-free) keeps running.

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
        // The cycle is the four clockwise inter-switch channels, in wait-for order.
        let links: Vec<(String, u8, String, u8, u8)> = report
            .cycle
            .iter()
            .map(|c| (c.from_node.clone(), c.from_port, c.to_node.clone(), c.to_port, c.vl))
            .collect();
        assert_eq!(links.len(), N as usize, "{err}");
        let start = links.iter().position(|l| l.0 == "s0").unwrap();
        for k in 0..N as usize {
            let (from, fp, to, tp, vl) = &links[(start + k) % N as usize];
            assert_eq!(
                (from.as_str(), *fp, to.as_str(), *tp, *vl),
                (format!("s{k}").as_str(), 1, format!("s{}", (k + 1) % N as usize).as_str(), 2, 0),
                "{err}"
            );
        }
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
