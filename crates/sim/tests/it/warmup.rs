//! Automatic warm-up detection (`metrics/warmup.rs`) on the small irregular
//! network under uniform traffic, whose accepted traffic stops following the
//! offered load at about 0.59 of the link rate (minhop routing, 256 B).

use ibnetsim_sim::{AutoWarmupConfig, PatternConfig, ProcessKind, SimConfig, SimResults, Simulation};

use crate::common::*;

const MS: u64 = 1_000_000_000;

fn auto(load: f64, max_ns: f64) -> SimConfig {
    let mut c = uniform(load, ProcessKind::Poisson, 256);
    c.auto_warmup = Some(AutoWarmupConfig { max_ns, ..Default::default() });
    c
}

fn fixed(load: f64, warmup_ps: u64) -> SimConfig {
    let mut c = uniform(load, ProcessKind::Poisson, 256);
    c.warmup_ns = warmup_ps as f64 / 1e3;
    c
}

fn sim(c: &SimConfig) -> Simulation {
    let net = small_irregular();
    Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap()
}

fn run(c: &SimConfig, until: u64, slices: u64) -> SimResults {
    let mut s = sim(c);
    for i in 1..=slices {
        s.run(until * i / slices).unwrap();
    }
    s.results()
}

/// The measured part of two runs is the same.
fn assert_same_measurement(a: &SimResults, b: &SimResults) {
    assert_eq!(a.warmup_ps, b.warmup_ps);
    assert_eq!(a.classes, b.classes);
    assert_eq!(a.latency, b.latency);
    assert_eq!(a.network_latency, b.network_latency);
    assert_eq!(a.ports, b.ports);
    assert_eq!((a.offered_fraction, a.accepted_fraction), (b.offered_fraction, b.accepted_fraction));
}

#[test]
fn below_saturation_the_warmup_is_short_and_equals_that_fixed_warmup() {
    let r = run(&auto(0.3, 1_000_000.0), 2 * MS, 1);
    assert_eq!(r.warmup_status, "detected");
    assert_eq!(r.warmup_detected, Some(true));
    // The earliest possible decision is after 10 windows of 10 µs; a network
    // whose latency is ~2 µs settles long before.
    assert_eq!(r.warmup_ps, 100_000_000);
    assert_eq!(r.warmup_series.len(), 10);
    assert!(r.warmup_series.iter().all(|w| w.delivered_packets > 0));
    // Starting the measurement at the decision is exactly a fixed warm-up of
    // that length: the reset forgets everything, and packets generated
    // before it are not measured.
    let f = run(&fixed(0.3, r.warmup_ps), 2 * MS, 1);
    assert_same_measurement(&r, &f);
    assert_eq!(f.warmup_status, "fixed");
    assert_eq!(f.warmup_detected, None);
    assert!(f.warmup_series.is_empty());
}

/// Mean packet latency and its standard error by batch means: the run is
/// cut into `batches` equal slices after `from`, each slice's mean comes from
/// the difference of the cumulative sums.
fn batch_means(c: &SimConfig, from: u64, until: u64, batches: u64) -> (f64, f64) {
    let mut s = sim(c);
    s.run(from).unwrap();
    let (mut n0, mut sum0) = (0u64, 0.0f64);
    let mut means = Vec::new();
    for i in 1..=batches {
        s.run(from + (until - from) * i / batches).unwrap();
        let l = s.results().latency;
        let (n, sum) = (l.count, l.mean_ps.unwrap() * l.count as f64);
        means.push((sum - sum0) / (n - n0) as f64);
        (n0, sum0) = (n, sum);
    }
    let k = means.len() as f64;
    let mean = means.iter().sum::<f64>() / k;
    let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (sum0 / n0 as f64, (var / k).sqrt())
}

#[test]
fn detected_warmup_measures_what_a_long_fixed_warmup_does() {
    // A 10× longer fixed warm-up (1 ms) leaves no transient. The two means
    // differ by sampling noise: the test allows 3 standard errors of the
    // difference, each estimated by 10 batch means of ~400 µs (~1 400
    // packets, far longer than the ~3 µs latency). At 2/3 of saturation the
    // latency is correlated over many packets, so the standard error is ~2 %
    // of the mean (measured: auto 2.832 µs, fixed 2.874 µs, SE 0.071 µs).
    let load = 0.4;
    let r = run(&auto(load, 1_000_000.0), 5 * MS, 1);
    assert_eq!(r.warmup_status, "detected");
    assert!(r.warmup_ps <= 200_000_000, "{}", r.warmup_ps);
    let (fixed_mean, se_fixed) = batch_means(&fixed(load, MS), MS, 5 * MS, 10);
    let (auto_mean, se_auto) = batch_means(&auto(load, 1_000_000.0), r.warmup_ps, 5 * MS, 10);
    assert_eq!(auto_mean, r.latency.mean_ps.unwrap());
    let se = (se_fixed.powi(2) + se_auto.powi(2)).sqrt();
    assert!(se > 0.0 && se < 0.05 * fixed_mean, "SE {se} of {fixed_mean}");
    assert!((auto_mean - fixed_mean).abs() <= 3.0 * se, "auto {auto_mean} fixed {fixed_mean} SE {se}");
    let f = run(&fixed(load, MS), 5 * MS, 1);
    assert!((r.accepted_fraction - f.accepted_fraction).abs() < 0.01, "{} {}", r.accepted_fraction, f.accepted_fraction);
}

#[test]
fn overload_is_reported_not_stabilised_and_measured_from_the_maximum() {
    // 0.9 = 1.5 × the ~0.6 saturation load.
    let r = run(&auto(0.9, 500_000.0), 2 * MS, 1);
    assert_eq!(r.warmup_status, "not-stabilised");
    assert_eq!(r.warmup_detected, Some(false));
    assert_eq!(r.warmup_ps, 500_000_000);
    assert_eq!(r.warmup_series.len(), 50);
    // The series shows why: over its second half the network accepted
    // markedly less than was offered.
    let half = &r.warmup_series[25..];
    let offered: u64 = half.iter().map(|w| w.offered_bytes).sum();
    let accepted: u64 = half.iter().map(|w| w.accepted_bytes).sum();
    assert!((accepted as f64) < 0.85 * offered as f64, "{accepted} of {offered}");
    // Still measured, from the maximum on, exactly as a fixed warm-up there.
    let f = run(&fixed(0.9, 500_000_000), 2 * MS, 1);
    assert_same_measurement(&r, &f);
    assert!(r.accepted_fraction < 0.8 * r.offered_fraction);
}

#[test]
fn automatic_warmup_is_deterministic_and_independent_of_slicing() {
    for load in [0.3, 0.9] {
        let c = auto(load, 300_000.0);
        let whole = run(&c, MS, 1);
        assert_eq!(whole, run(&c, MS, 1));
        // 37 slices put slice ends inside windows and on no event.
        assert_eq!(whole, run(&c, MS, 37));
        let mut h = c.clone();
        h.event_queue = "heap".into();
        assert_eq!(whole, run(&h, MS, 3));
    }
}

#[test]
fn before_the_decision_nothing_is_measured() {
    let mut s = sim(&auto(0.3, 1_000_000.0));
    s.run(55_000_000).unwrap();
    let r = s.results();
    assert_eq!((r.warmup_status.as_str(), r.warmup_detected), ("pending", Some(false)));
    assert_eq!((r.warmup_ps, r.window_ps), (55_000_000, 0));
    assert_eq!(r.latency.count, 0);
    assert_eq!(r.warmup_series.len(), 5);
    assert!(r.generated > 0);
    assert_eq!(r.classes[0].generated_packets, 0);
}

#[test]
fn a_fixed_warmup_measures_exactly_the_packets_generated_after_it() {
    // One switch, four hosts, 1 m 1x SDR links: a packet alone on its path
    // takes the zero-load 1 318 000 ps. Warm-up 10 µs. h0 → h1 at 9 µs (before
    // the window: delivered in it at 10.318 µs but not measured); h2 → h3 at
    // exactly 10 µs and at 12, 14, 16, 18, 20 µs (in the window: all six
    // measured, each exactly 1 318 ns; the paths share no link).
    let net = routed(star(4));
    let mut c = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, PatternConfig::Uniform)]);
    c.warmup_ns = 10_000.0;
    let mut s = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    s.inject(9_000_000, 0, 0, 1).unwrap();
    s.inject(10_000_000, 0, 2, 3).unwrap();
    for k in 1..=5u64 {
        s.inject(10_000_000 + 2_000_000 * k, 0, 2, 3).unwrap();
    }
    s.run(40_000_000).unwrap();
    let r = s.results();
    let a = &r.classes[0];
    assert_eq!((a.generated_packets, a.delivered_packets), (6, 7));
    assert_eq!(a.latency.count, 6);
    assert_eq!((a.latency.min_ps, a.latency.max_ps, a.latency.mean_ps), (Some(1_318_000), Some(1_318_000), Some(1_318_000.0)));
    assert_eq!(r.delivered, 7);
}

#[test]
fn the_measurement_itself_is_judged_stationary_or_not() {
    // Saturation is at about 0.59 here. Well below it, 2 ms measured after a
    // 100 µs warm-up are stationary; at 0.8 the backlog grows by about a
    // quarter of what is offered and latency keeps climbing. The measured
    // windows are the default 10 µs ones, ending every 10 µs from the
    // warm-up, complete ones only; the answer does not depend on slicing.
    let below = run(&fixed(0.3, MS / 10), 2 * MS + MS / 10, 1);
    assert_eq!(below.stationary, Some(true));
    assert_eq!(below.measurement_series.len(), 200);
    let ends: Vec<u64> = below.measurement_series.iter().map(|w| w.end_ps).collect();
    assert_eq!((ends[0], ends[199]), (MS / 10 + 10_000_000, 2 * MS + MS / 10));
    let generated: u64 = below.measurement_series.iter().map(|w| w.generated_packets).sum();
    assert_eq!(generated, below.classes[0].generated_packets);
    let over = run(&fixed(0.8, MS / 10), 2 * MS + MS / 10, 1);
    assert_eq!(over.stationary, Some(false));
    assert_eq!(run(&fixed(0.8, MS / 10), 2 * MS + MS / 10, 7).measurement_series, over.measurement_series);
    // An automatic warm-up that decides early does not vouch for what follows.
    let auto_over = run(&auto(0.8, 1_000_000.0), 2 * MS, 1);
    assert_eq!(auto_over.stationary, Some(false));
    // Fewer than three windows measured: no verdict.
    assert_eq!(run(&fixed(0.3, MS / 10), MS / 10 + 25_000_000, 1).stationary, None);
}
