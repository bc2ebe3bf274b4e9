//! A single link under Poisson load is an M/D/1 queue: its mean waiting time
//! is ρS / (2(1 − ρ)) (Pollaczek–Khinchine with deterministic service S).
//!
//! `src` — sw — `dst` with one flow: packets wait only in the source HCA (the
//! switch's output link has the same rate and one input), so the mean packet
//! latency is the zero-load latency plus the M/D/1 waiting time, and the
//! network latency (first byte injected → delivered) is exactly constant. The
//! statistical error comes from independent replications (different seeds).

use ibnetsim_sim::{ProcessKind, Simulation};

use crate::common::*;

const ZERO_LOAD_PS: f64 = 1_318_000.0;
const SERVICE_PS: f64 = 1_128_000.0;

fn replicate(rho: f64, seed: u64, until_ps: u64) -> f64 {
    let net = routed(chain(1, sdr(1.0), sdr(1.0)));
    let mut c = config(vec![class("p", 0, rho, ProcessKind::Poisson, 256, pair("src", "dst"))]);
    c.seed = seed;
    c.warmup_ns = 1_000_000.0;
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(until_ps).unwrap();
    let r = sim.results();
    let k = &r.classes[0];
    assert_eq!(k.network_latency.min_ps, Some(ZERO_LOAD_PS as u64), "no waiting inside the network");
    assert_eq!(k.network_latency.max_ps, Some(ZERO_LOAD_PS as u64), "no waiting inside the network");
    assert!((k.offered_fraction - rho).abs() < 0.03, "offered {} vs {rho}", k.offered_fraction);
    // The histogram holds every measured packet; the network part is one bucket.
    let h = sim.latency_histogram(0, false).unwrap();
    assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), k.latency.count);
    assert_eq!(sim.latency_histogram(0, true).unwrap().len(), 1);
    assert!(sim.latency_histogram(1, false).is_none());
    k.latency.mean_ps.unwrap() - ZERO_LOAD_PS
}

fn check(rho: f64, reps: u64, until_ps: u64) {
    let w: Vec<f64> = (0..reps).map(|s| replicate(rho, 100 + s, until_ps)).collect();
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let sd = (w.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let se = sd / n.sqrt();
    let theory = rho * SERVICE_PS / (2.0 * (1.0 - rho));
    assert!(se > 0.0 && se < 0.05 * theory, "replications too noisy: se {se}");
    assert!(
        (mean - theory).abs() < 4.0 * se,
        "rho {rho}: mean wait {mean:.0} ps, M/D/1 {theory:.0} ps, standard error {se:.0} ps"
    );
}

#[test]
fn mean_wait_matches_pollaczek_khinchine_at_rho_0_3() {
    // 0.3 · 1.128 µs / 1.4 = 241 714 ps.
    check(0.3, 8, 31_000_000_000);
}

#[test]
fn mean_wait_matches_pollaczek_khinchine_at_rho_0_6() {
    // 0.6 · 1.128 µs / 0.8 = 846 000 ps.
    check(0.6, 8, 31_000_000_000);
}
