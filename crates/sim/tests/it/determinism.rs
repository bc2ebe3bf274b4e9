//! Runs are deterministic: the same seed gives identical results, whether run
//! in one call or in slices, and with either event queue.

use ibnetsim_sim::{ProcessKind, SimConfig, SimResults, Simulation};

use crate::common::*;

fn run_slices(c: &SimConfig, slices: u64, until: u64) -> SimResults {
    let net = small_irregular();
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    for i in 1..=slices {
        sim.run(until * i / slices).unwrap();
    }
    sim.results()
}

fn busy_config(seed: u64) -> SimConfig {
    let mut c = uniform(0.7, ProcessKind::Poisson, 256);
    c.seed = seed;
    c.data_vls = 2;
    c.warmup_ns = 100_000.0;
    c.traffic.classes.push(class("b", 1, 0.2, ProcessKind::Bernoulli, 64, ibnetsim_sim::PatternConfig::Uniform));
    c
}

#[test]
fn same_seed_same_results() {
    let a = run_slices(&busy_config(7), 1, 3_000_000_000);
    let b = run_slices(&busy_config(7), 1, 3_000_000_000);
    assert!(a.delivered > 10_000, "{}", a.delivered);
    assert_eq!(a, b);
    let c = run_slices(&busy_config(8), 1, 3_000_000_000);
    assert_ne!(a.classes[0].latency, c.classes[0].latency);
    assert_ne!(a.generated, c.generated);
}

#[test]
fn slices_do_not_change_the_run() {
    let whole = run_slices(&busy_config(3), 1, 2_000_000_000);
    let sliced = run_slices(&busy_config(3), 17, 2_000_000_000);
    assert_eq!(whole, sliced);
}

#[test]
fn heap_and_fifo_queues_give_identical_runs() {
    for output_buffers in [2048, 0] {
        let mut h = busy_config(11);
        h.switch.output_buffer_bytes = output_buffers;
        h.event_queue = "heap".into();
        let mut f = h.clone();
        f.event_queue = "fifo".into();
        let a = run_slices(&h, 3, 2_000_000_000);
        let b = run_slices(&f, 3, 2_000_000_000);
        assert!(a.events > 100_000);
        assert_eq!(a, b, "output buffers {output_buffers}");
    }
}

#[test]
fn every_input_buffer_and_arbiter_is_deterministic() {
    // The new switch organisations keep a run a function of its seed: whole
    // or sliced, heap or FIFO event queue.
    for (buffer, arbiter) in [("voq", "round-robin"), ("fifo", "oldest-first"), ("voq", "oldest-first"), ("fifo", "islip")] {
        let mut h = busy_config(5);
        h.switch.output_buffer_bytes = 2048;
        h.switch.input_buffer = buffer.into();
        h.switch.crossbar_arbiter = arbiter.into();
        h.switch.max_transfers_per_input = 3;
        h.event_queue = "heap".into();
        let mut f = h.clone();
        f.event_queue = "fifo".into();
        let whole = run_slices(&h, 1, 2_000_000_000);
        assert!(whole.delivered > 10_000, "{}", whole.delivered);
        assert_eq!(whole, run_slices(&h, 1, 2_000_000_000), "{buffer} {arbiter}");
        assert_eq!(whole, run_slices(&f, 7, 2_000_000_000), "{buffer} {arbiter}");
    }
}
