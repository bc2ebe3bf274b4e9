//! Automatic warm-up detection.
//!
//! A run starts from an empty network, so its first packets see shorter
//! queues than the steady state; the measurement must start once the
//! transient is over. As SuperSim does, the detector samples the run in fixed
//! windows of simulated time and declares warm-up over at the end of the first
//! window where the recent windows look stationary. "Recent" is the last `K`
//! windows, or the last half of all windows once that is longer: a test over a
//! fixed span is retried every window, and an overload small enough to pass it
//! now and then would pass eventually; a span that grows with the run gains
//! power as fast as it is retried (the rule of deleting up to half the run, as
//! in MSER and Welch's method). The test:
//!
//! * **no backlog growth** — the wire bytes accepted over the `K` windows fall
//!   short of the bytes offered by at most `tolerance` of them plus one
//!   standard deviation of the offered count (`√generated` packets, the
//!   Poisson noise of what was offered). The shortfall is the growth of the
//!   packets in the system over the span; in a stable system it is the
//!   difference of two samples of the content, far below that while the
//!   latency is short against the span. An overload smaller than `tolerance`
//!   plus `1/√generated` can pass: longer windows sharpen the test;
//! * **no latency trend** — the least-squares slope of the per-window mean
//!   latency (packets delivered in the window) either changes the mean by at
//!   most `tolerance` over the span, or is not significant (|slope| ≤ 2
//!   standard errors). Both must fail to call it a trend: per-window means are
//!   noisy at low load and autocorrelated at high load.
//!
//! Everything is known at the window boundary, so the decision does not depend
//! on how a run is sliced. On a decision the measurement starts at that
//! boundary and the accumulators are reset (statistics count only packets
//! generated after warm-up, so nothing straddles the reset). If the run is not
//! stationary by `max_ns`, warm-up ends there anyway and the result says
//! `warmup_detected = false`: the latency is not bounded, a saturation signal.

use serde::Serialize;

use crate::engine::Time;

/// Where the detector stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmupState {
    /// A fixed `warmup_ns`.
    Fixed,
    /// Still watching.
    Pending,
    /// Stationary at this time.
    Detected(Time),
    /// Not stationary by the maximum; measurement started there.
    NotStabilised(Time),
}

impl WarmupState {
    /// Name in results.
    pub fn name(self) -> &'static str {
        match self {
            WarmupState::Fixed => "fixed",
            WarmupState::Pending => "pending",
            WarmupState::Detected(_) => "detected",
            WarmupState::NotStabilised(_) => "not-stabilised",
        }
    }
}

/// What one window saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct WindowSample {
    /// End of the window, in picoseconds.
    pub end_ps: u64,
    /// Packets generated in the window.
    pub generated_packets: u64,
    /// Their wire bytes.
    pub offered_bytes: u64,
    /// Packets delivered in the window (whenever generated).
    pub delivered_packets: u64,
    /// Their wire bytes.
    pub accepted_bytes: u64,
    /// Mean generation → delivery latency of those packets, in picoseconds.
    pub mean_latency_ps: Option<f64>,
}

/// Counters of the window being filled; updated per packet, so plain adds.
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowAcc {
    /// Packets generated.
    pub gen_packets: u64,
    /// Their wire bytes.
    pub gen_bytes: u64,
    /// Packets delivered.
    pub del_packets: u64,
    /// Their wire bytes.
    pub del_bytes: u64,
    /// Sum of their latencies in picoseconds.
    pub lat_sum: u64,
}

impl WindowAcc {
    /// What the window ending at `end_ps` saw.
    fn sample(&self, end_ps: Time) -> WindowSample {
        WindowSample {
            end_ps,
            generated_packets: self.gen_packets,
            offered_bytes: self.gen_bytes,
            delivered_packets: self.del_packets,
            accepted_bytes: self.del_bytes,
            mean_latency_ps: (self.del_packets > 0).then(|| self.lat_sum as f64 / self.del_packets as f64),
        }
    }
}

/// The detector.
#[derive(Debug, Clone)]
pub struct WarmupDetector {
    window_ps: Time,
    windows: usize,
    tolerance: f64,
    max_ps: Time,
    /// End of the window being filled.
    pub next_end: Time,
    /// Every window closed so far (one push per window, none after the decision).
    pub series: Vec<WindowSample>,
    /// The outcome.
    pub state: WarmupState,
}

impl WarmupDetector {
    /// A detector with windows of `window_ps`, judging the last `windows`,
    /// giving up at `max_ps`.
    pub fn new(window_ps: Time, windows: usize, tolerance: f64, max_ps: Time) -> Self {
        WarmupDetector {
            window_ps,
            windows,
            tolerance,
            max_ps,
            next_end: window_ps,
            series: Vec::new(),
            state: WarmupState::Pending,
        }
    }

    /// Closes the window ending at `next_end` with counters `acc`; returns the
    /// measurement start when warm-up ends here.
    pub fn close_window(&mut self, acc: &WindowAcc) -> Option<Time> {
        let end = self.next_end;
        self.next_end += self.window_ps;
        self.series.push(acc.sample(end));
        let n = self.series.len();
        let span = self.windows.max(n / 2);
        if n >= self.windows && stationary(&self.series[n - span..], self.tolerance) {
            self.state = WarmupState::Detected(end);
            return Some(end);
        }
        if end >= self.max_ps {
            self.state = WarmupState::NotStabilised(end);
            return Some(end);
        }
        None
    }
}

/// The windows of the measurement itself. A warm-up, fixed or detected, only
/// says when measuring starts; past saturation, or with a warm-up too short,
/// the measured interval still drifts (queues grow, latency climbs), and a
/// short run can show accepted ≈ offered while it does. So the run keeps
/// being sampled in windows after warm-up, and [`grows`] over all of them
/// says whether the measurement itself held steady.
#[derive(Debug, Clone)]
pub struct MeasuredWindows {
    window_ps: Time,
    tolerance: f64,
    /// The next window boundary: the measurement start until it is reached
    /// (`Time::MAX` while an automatic warm-up is pending), then the end of the
    /// window being filled.
    pub next_end: Time,
    started: bool,
    /// Every window closed since the measurement started.
    pub series: Vec<WindowSample>,
}

impl MeasuredWindows {
    /// Windows of `window_ps` from `start` (`Time::MAX`: set by [`Self::restart`]).
    pub fn new(window_ps: Time, tolerance: f64, start: Time) -> Self {
        MeasuredWindows { window_ps, tolerance, next_end: start, started: false, series: Vec::new() }
    }

    /// The measurement starts at `at`, with nothing counted yet.
    pub fn restart(&mut self, at: Time) {
        self.series.clear();
        self.started = true;
        self.next_end = at.saturating_add(self.window_ps);
    }

    /// Closes the window ending at `next_end` with counters `acc`; at the
    /// measurement start itself, `acc` holds the warm-up and is dropped.
    pub fn close_window(&mut self, acc: &WindowAcc) {
        let end = self.next_end;
        if !self.started {
            self.restart(end);
            return;
        }
        self.next_end = end.saturating_add(self.window_ps);
        self.series.push(acc.sample(end));
    }

    /// Whether the measurement held steady: no growth ([`grows`]) over its
    /// windows; `None` with fewer than 3 (too few to see a trend).
    pub fn stationary(&self) -> Option<bool> {
        (self.series.len() >= 3).then(|| !grows(&self.series, self.tolerance))
    }
}

/// The stability test of the module docs over `w`.
pub fn stationary(w: &[WindowSample], tolerance: f64) -> bool {
    if backlog_grows(w, tolerance) {
        return false;
    }
    match latency_trend(w) {
        // Too few deliveries to see a trend; the backlog test stands alone.
        None => true,
        Some(t) => {
            let small = (t.slope * t.span).abs() <= tolerance * t.mean;
            let insignificant = t.slope.abs() <= 2.0 * t.se;
            small || insignificant
        }
    }
}

/// Whether the system grows over `w`, the test of a measurement: the backlog
/// test, or a latency trend that is upward, large (as in [`stationary`]) and
/// beyond 3 standard errors. A measurement is judged once, not retried each
/// window, so it needs a stricter level than the detector's 2 to keep
/// per-window noise (heavy-tailed, autocorrelated means) from being called
/// growth; a falling latency is the tail of a transient, not overload.
pub fn grows(w: &[WindowSample], tolerance: f64) -> bool {
    backlog_grows(w, tolerance)
        || latency_trend(w).is_some_and(|t| t.slope * t.span > tolerance * t.mean && t.slope > 3.0 * t.se)
}

/// The wire bytes accepted over `w` fall short of those offered by more than
/// `tolerance` of them plus one standard deviation of the offered count.
fn backlog_grows(w: &[WindowSample], tolerance: f64) -> bool {
    let gen: u64 = w.iter().map(|s| s.generated_packets).sum();
    let offered: u64 = w.iter().map(|s| s.offered_bytes).sum();
    let accepted: u64 = w.iter().map(|s| s.accepted_bytes).sum();
    if gen == 0 {
        return false;
    }
    let bytes_per_packet = offered as f64 / gen as f64;
    let slack = (gen as f64).sqrt() * bytes_per_packet;
    (offered as f64 - accepted as f64) > tolerance * offered as f64 + slack
}

/// Least squares of the window mean latency against the window index.
struct Trend {
    slope: f64,
    se: f64,
    mean: f64,
    span: f64,
}

fn latency_trend(w: &[WindowSample]) -> Option<Trend> {
    let pts = || w.iter().enumerate().filter_map(|(i, s)| s.mean_latency_ps.map(|y| (i as f64, y)));
    let n = pts().count();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let (mx, my) = pts().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / nf, b + y / nf));
    let sxx: f64 = pts().map(|(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = pts().map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = sxy / sxx;
    let rss: f64 = pts().map(|(x, y)| (y - my - slope * (x - mx)).powi(2)).sum();
    let se = (rss / (nf - 2.0) / sxx).sqrt();
    Some(Trend { slope, se, mean: my, span: (w.len() - 1) as f64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_windows_drop_the_warm_up_and_sample_from_the_start() {
        let acc = |packets: u64, lat: u64| WindowAcc {
            gen_packets: packets,
            gen_bytes: packets * 100,
            del_packets: packets,
            del_bytes: packets * 100,
            lat_sum: packets * lat,
        };
        // Fixed warm-up at 5 000 ps, windows of 1 000 ps.
        let mut w = MeasuredWindows::new(1_000, 0.05, 5_000);
        assert_eq!(w.next_end, 5_000);
        w.close_window(&acc(7, 10)); // the warm-up's counts: dropped
        assert!(w.series.is_empty() && w.next_end == 6_000 && w.stationary().is_none());
        for _ in 0..4 {
            w.close_window(&acc(100, 50));
        }
        assert_eq!(w.series.iter().map(|s| s.end_ps).collect::<Vec<_>>(), [6_000, 7_000, 8_000, 9_000]);
        assert_eq!(w.series[0].mean_latency_ps, Some(50.0));
        assert_eq!(w.stationary(), Some(true));
        // Latency doubling every window, and half of what is offered left behind: not stationary.
        w.restart(20_000);
        assert!(w.series.is_empty() && w.next_end == 21_000);
        for i in 0..5 {
            w.close_window(&WindowAcc { del_packets: 50, del_bytes: 5_000, lat_sum: 50 * (100 << i), ..acc(100, 0) });
        }
        assert_eq!(w.stationary(), Some(false));
        // Latency climbing 10 % a window with everything accepted: growth too.
        w.restart(40_000);
        for i in 0..5 {
            w.close_window(&acc(100, 1_000 + 100 * i));
        }
        assert_eq!(w.stationary(), Some(false));
        // Latency falling the same way (a transient's tail) is not growth.
        w.restart(60_000);
        for i in 0..5 {
            w.close_window(&acc(100, 1_500 - 100 * i));
        }
        assert_eq!(w.stationary(), Some(true));
        // An automatic warm-up: nothing until the detector's decision restarts it.
        let w = MeasuredWindows::new(1_000, 0.05, Time::MAX);
        assert_eq!(w.next_end, Time::MAX);
    }

    fn series(lat: &[f64], offered: u64, accepted: u64) -> Vec<WindowSample> {
        lat.iter()
            .enumerate()
            .map(|(i, &l)| WindowSample {
                end_ps: (i as u64 + 1) * 1000,
                generated_packets: offered / 100,
                offered_bytes: offered,
                delivered_packets: accepted / 100,
                accepted_bytes: accepted,
                mean_latency_ps: Some(l),
            })
            .collect()
    }

    #[test]
    fn a_backlog_grows_only_past_the_tolerance_plus_one_deviation() {
        // Four windows of one 100 B packet each, none delivered: a shortfall
        // of 400 B. One standard deviation of 4 packets is √4 · 100 = 200 B;
        // at tolerance 0.5 the bound is 200 + 200 = 400 B, which the
        // shortfall only reaches; at 0.49 (396 B) it exceeds it. The latency
        // is flat, so only the backlog decides.
        let w = series(&[100.0; 4], 100, 0);
        assert!(!grows(&w, 0.5));
        assert!(grows(&w, 0.49));
    }

    #[test]
    fn flat_latency_and_balanced_traffic_is_stationary() {
        // 10 windows of 100 packets: slope 0.
        assert!(stationary(&series(&[5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0], 10_000, 10_000), 0.05));
    }

    #[test]
    fn growing_latency_is_a_trend() {
        // y = 100 + 10 i exactly: slope 10, change over the span 90 = 62 % of
        // the mean 145, and with no residual the slope is significant.
        let lat: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        assert!(!stationary(&series(&lat, 10_000, 10_000), 0.05));
        // The same slope over a mean of 10 000 changes it by 0.9 %: small.
        let lat: Vec<f64> = (0..10).map(|i| 10_000.0 + 10.0 * i as f64).collect();
        assert!(stationary(&series(&lat, 10_000, 10_000), 0.05));
    }

    #[test]
    fn three_windows_are_enough_to_see_a_trend() {
        // y = 100, 200, 300: slope 100 a window with no residual, a change of
        // 200 over the span against 5 % of the mean 200 = 10.
        assert!(!stationary(&series(&[100.0, 200.0, 300.0], 10_000, 10_000), 0.05));
        // Two windows: no trend is fitted, and the backlog test alone passes.
        assert!(stationary(&series(&[100.0, 300.0], 10_000, 10_000), 0.05));
    }

    #[test]
    fn significance_uses_n_minus_2_degrees_of_freedom() {
        // y_i = 1000 + 10 i + 30 (i even) − 30 (i odd), i = 0..10. By hand
        // (x̄ = 4.5, Sxx = 82.5, Sxy = 675): slope 90/11 ≈ 8.18, residual sum of
        // squares 96 000/11, se = √(96 000/11 / 8 / 82.5) = 40/11 ≈ 3.64. The slope
        // is 2.25 standard errors (significant at 2) and changes the mean
        // 1 045 by 73.6 over the span, more than 5 % (52.25): a trend.
        let lat: Vec<f64> = (0..10).map(|i| 1000.0 + 10.0 * i as f64 + if i % 2 == 0 { 30.0 } else { -30.0 }).collect();
        assert!(!stationary(&series(&lat, 10_000, 10_000), 0.05));
    }

    #[test]
    fn growth_must_be_large_against_the_mean() {
        // y = 10 000 + 10 i over 10 windows: a clean upward slope (se 0), but
        // the change over the span, 90, is below 5 % of the mean 10 045.
        let lat: Vec<f64> = (0..10).map(|i| 10_000.0 + 10.0 * i as f64).collect();
        assert!(!grows(&series(&lat, 10_000, 10_000), 0.05));
        // y = 100 + 10 i: the change, 90, is 62 % of the mean 145.
        let lat: Vec<f64> = (0..10).map(|i| 100.0 + 10.0 * i as f64).collect();
        assert!(grows(&series(&lat, 10_000, 10_000), 0.05));
        // y = 1 855 + 10 i: the span is 9 windows (first to last), so the
        // change is 90, within 5 % of the mean 1 900 (95); over 10 it would not be.
        let lat: Vec<f64> = (0..10).map(|i| 1_855.0 + 10.0 * i as f64).collect();
        assert!(!grows(&series(&lat, 10_000, 10_000), 0.05));
        assert!(stationary(&series(&lat, 10_000, 10_000), 0.05));
    }

    #[test]
    fn backlog_growth_is_not_stationary() {
        // 100 packets of 100 B a window: slack √1000·100 B = 3 162 B plus 5 %
        // of 100 000 B = 8 162 B. Accepting 92 % (8 000 B short) passes, 91 %
        // (9 000 B short) does not.
        let flat = [5.0; 10];
        assert!(stationary(&series(&flat, 10_000, 9_200), 0.05));
        assert!(!stationary(&series(&flat, 10_000, 9_100), 0.05));
    }

    #[test]
    fn detector_gives_up_at_the_maximum() {
        let mut d = WarmupDetector::new(1000, 3, 0.05, 5000);
        let acc = WindowAcc { gen_packets: 100, gen_bytes: 10_000, del_packets: 10, del_bytes: 1_000, lat_sum: 1000 };
        let ends: Vec<Option<Time>> = (0..5).map(|_| d.close_window(&acc)).collect();
        assert_eq!(ends, vec![None, None, None, None, Some(5000)]);
        assert_eq!(d.state, WarmupState::NotStabilised(5000));
        let mut d = WarmupDetector::new(1000, 3, 0.05, 5000);
        let ok = WindowAcc { gen_packets: 100, gen_bytes: 10_000, del_packets: 100, del_bytes: 10_000, lat_sum: 100_000 };
        assert_eq!((d.close_window(&ok), d.close_window(&ok), d.close_window(&ok)), (None, None, Some(3000)));
        assert_eq!(d.state, WarmupState::Detected(3000));
        assert_eq!(d.series[2].mean_latency_ps, Some(1000.0));
    }
}
