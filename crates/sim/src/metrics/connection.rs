//! Per-connection QoS measurements of paper 001 §5.3: delay against
//! thresholds relative to the connection's inter-arrival time (Fig. 8), jitter
//! against IAT-relative intervals (Fig. 9), and from the delay bins the share
//! of packets within a deadline of IAT/2 (Figs. 10–12).
//!
//! The paper's figures do not survive in its text, only their thresholds in
//! the prose: IAT/32 (SLs 0–1 arrive before it), IAT/2 (the deadline of Figs.
//! 10–12), 3·IAT/4 (every packet of SLs 2–3 before it), and the jitter
//! intervals [−IAT/8, IAT/8] and [−IAT, IAT] (§6). We use the powers of two
//! between them plus 3/4 and 1: delay bins `≤ IAT/32, ≤ IAT/16, ≤ IAT/8,
//! ≤ IAT/4, ≤ IAT/2, ≤ 3·IAT/4, ≤ IAT, more` and jitter (inter-arrival time of
//! consecutive deliveries minus the IAT) bins `< −IAT/2, [−IAT/2, −IAT/4),
//! [−IAT/4, −IAT/8), [−IAT/8, IAT/8], (IAT/8, IAT/4], (IAT/4, IAT/2],
//! (IAT/2, IAT], > IAT`. The IAT is a fraction of picoseconds, so every
//! comparison is done exactly in integers: `delay ≤ m/32 · IAT` as
//! `delay · 32 · bandwidth ≤ m · wire_bits · 10^12`.
//!
//! Everything is in arrays sized at build time: recording allocates nothing.

use serde::Serialize;

use crate::engine::Time;
use crate::traffic::connection::PS_PER_S;

/// Delay thresholds in 32nds of the IAT (the last bin is "more").
pub const DELAY_32NDS: [u32; 7] = [1, 2, 4, 8, 16, 24, 32];
/// Names of the delay bins.
pub const DELAY_BINS: [&str; 8] = ["iat/32", "iat/16", "iat/8", "iat/4", "iat/2", "3iat/4", "iat", "more"];
/// Jitter interval edges, as (inter-arrival time) in 8ths of the IAT: the
/// jitter is `inter − IAT`, so 4 ↔ −IAT/2, 7 ↔ −IAT/8, 9 ↔ +IAT/8, 16 ↔ +IAT.
const JITTER_8THS: [u32; 7] = [4, 6, 7, 9, 10, 12, 16];
/// Names of the jitter bins.
pub const JITTER_BINS: [&str; 8] = ["<-iat/2", "-iat/2", "-iat/4", "+-iat/8", "+iat/4", "+iat/2", "+iat", ">iat"];
/// Index of the `[−IAT/8, IAT/8]` bin.
pub const JITTER_CENTRE: usize = 3;

/// Counters of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnStats {
    /// Wire bits per packet and bandwidth: the IAT is `bits · 10^12 / bps` ps.
    pub wire_bits: u64,
    /// Mean bandwidth, bit/s.
    pub bandwidth_bps: u64,
    /// Packets generated in the window.
    pub generated: u64,
    /// Packets delivered in the window.
    pub delivered: u64,
    /// Their wire bytes.
    pub delivered_bytes: u64,
    /// Packets generated in the window and delivered: the delay sample.
    pub measured: u64,
    /// Sum, smallest and largest delay of the sample, ps.
    pub delay_sum_ps: u64,
    /// Smallest delay (`Time::MAX` when none).
    pub delay_min_ps: Time,
    /// Largest delay.
    pub delay_max_ps: Time,
    /// Sample counts per [`DELAY_BINS`] bin.
    pub delay_bins: [u64; 8],
    /// Deliveries in the window after a previous delivery, per [`JITTER_BINS`] bin.
    pub jitter_bins: [u64; 8],
    /// Time of the connection's last delivery (`Time::MAX` before the first).
    pub last_arrival: Time,
}

impl ConnStats {
    fn new(wire_bits: u64, bandwidth_bps: u64) -> Self {
        ConnStats {
            wire_bits,
            bandwidth_bps,
            generated: 0,
            delivered: 0,
            delivered_bytes: 0,
            measured: 0,
            delay_sum_ps: 0,
            delay_min_ps: Time::MAX,
            delay_max_ps: 0,
            delay_bins: [0; 8],
            jitter_bins: [0; 8],
            last_arrival: Time::MAX,
        }
    }

    #[inline]
    fn iat_num(&self) -> u128 {
        self.wire_bits as u128 * PS_PER_S
    }

    /// Delay bin of `delay_ps`.
    #[inline]
    pub fn delay_bin(&self, delay_ps: Time) -> usize {
        let lhs = delay_ps as u128 * 32 * self.bandwidth_bps as u128;
        let n = self.iat_num();
        DELAY_32NDS.iter().position(|&m| lhs <= m as u128 * n).unwrap_or(DELAY_32NDS.len())
    }

    /// Jitter bin of an inter-arrival time `inter_ps`.
    #[inline]
    pub fn jitter_bin(&self, inter_ps: Time) -> usize {
        let a = inter_ps as u128 * 8 * self.bandwidth_bps as u128;
        let n = self.iat_num();
        for (i, &m) in JITTER_8THS.iter().enumerate() {
            let edge = m as u128 * n;
            // Below the centre the intervals are closed on the left (the edge
            // belongs to the bin above); from the centre up, closed on the right.
            if (i < JITTER_CENTRE && a < edge) || (i >= JITTER_CENTRE && a <= edge) {
                return i;
            }
        }
        JITTER_8THS.len()
    }

    /// The IAT in picoseconds.
    pub fn iat_ps(&self) -> f64 {
        self.iat_num() as f64 / self.bandwidth_bps as f64
    }
}

/// The counters of every connection.
#[derive(Debug, Clone, Default)]
pub struct ConnMetrics {
    /// Per connection, in config order.
    pub stats: Vec<ConnStats>,
}

impl ConnMetrics {
    /// Counters for connections of `(wire_bits, bandwidth_bps)`.
    pub fn new(conns: impl Iterator<Item = (u64, u64)>) -> Self {
        ConnMetrics { stats: conns.map(|(b, bw)| ConnStats::new(b, bw)).collect() }
    }

    /// Connection `c` generated a packet; `window`: after warm-up.
    #[inline]
    pub fn on_generate(&mut self, c: u32, window: bool) {
        if window {
            self.stats[c as usize].generated += 1;
        }
    }

    /// A packet of connection `c` generated at `gen` was delivered at `now`;
    /// `window`: the delivery is after warm-up; `measured`: so was its generation.
    #[inline]
    pub fn on_deliver(&mut self, c: u32, now: Time, gen: Time, wire: u32, window: bool, measured: bool) {
        let s = &mut self.stats[c as usize];
        let prev = std::mem::replace(&mut s.last_arrival, now);
        if !window {
            return;
        }
        s.delivered += 1;
        s.delivered_bytes += wire as u64;
        if prev != Time::MAX {
            let b = s.jitter_bin(now - prev);
            s.jitter_bins[b] += 1;
        }
        if measured {
            let d = now - gen;
            s.measured += 1;
            s.delay_sum_ps += d;
            s.delay_min_ps = s.delay_min_ps.min(d);
            s.delay_max_ps = s.delay_max_ps.max(d);
            let b = s.delay_bin(d);
            s.delay_bins[b] += 1;
        }
    }

    /// Forgets the window's counts (the last arrival stays: jitter of the
    /// first delivery in the window is relative to the one before).
    pub fn start_measurement(&mut self) {
        for s in &mut self.stats {
            *s = ConnStats { last_arrival: s.last_arrival, ..ConnStats::new(s.wire_bits, s.bandwidth_bps) };
        }
    }
}

/// Results of one connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionResult {
    /// Source host.
    pub source: String,
    /// Destination host.
    pub destination: String,
    /// Service level.
    pub sl: u8,
    /// Mean bandwidth asked for, bit/s (wire).
    pub bandwidth_bps: u64,
    /// Wire bytes per packet.
    pub packet_bytes: u32,
    /// Inter-arrival time, ps.
    pub iat_ps: f64,
    /// Packets generated in the window.
    pub generated_packets: u64,
    /// Packets delivered in the window.
    pub delivered_packets: u64,
    /// Delivered wire bits per second of window.
    pub delivered_bps: f64,
    /// Packets in the delay sample.
    pub measured_packets: u64,
    /// Mean, smallest and largest delay (generation → delivery), ps.
    pub delay_mean_ps: Option<f64>,
    /// Smallest delay.
    pub delay_min_ps: Option<u64>,
    /// Largest delay.
    pub delay_max_ps: Option<u64>,
    /// Delay sample per bin (see the module docs).
    pub delay_bins: [u64; 8],
    /// Jitter sample per bin.
    pub jitter_bins: [u64; 8],
}

#[cfg(test)]
mod tests {
    use super::*;

    // 256 B at 2 Gb/s: IAT = 2048 bits / 2e9 b/s = 1.024 µs = 1 024 000 ps.
    fn s() -> ConnStats {
        ConnStats::new(2048, 2_000_000_000)
    }

    #[test]
    fn delay_bins_are_closed_on_the_right() {
        let s = s();
        assert_eq!(s.iat_ps(), 1_024_000.0);
        assert_eq!(s.delay_bin(0), 0);
        assert_eq!(s.delay_bin(32_000), 0); // IAT/32 exactly
        assert_eq!(s.delay_bin(32_001), 1);
        assert_eq!(s.delay_bin(512_000), 4); // IAT/2
        assert_eq!(s.delay_bin(768_000), 5); // 3·IAT/4
        assert_eq!(s.delay_bin(768_001), 6);
        assert_eq!(s.delay_bin(1_024_000), 6);
        assert_eq!(s.delay_bin(1_024_001), 7);
    }

    #[test]
    fn jitter_bins_around_the_iat() {
        let s = s();
        let iat = 1_024_000;
        assert_eq!(s.jitter_bin(iat), JITTER_CENTRE);
        assert_eq!(s.jitter_bin(iat + 128_000), JITTER_CENTRE); // +IAT/8
        assert_eq!(s.jitter_bin(iat - 128_000), JITTER_CENTRE); // −IAT/8
        assert_eq!(s.jitter_bin(iat - 128_001), 2);
        assert_eq!(s.jitter_bin(iat + 128_001), 4);
        assert_eq!(s.jitter_bin(iat - 512_000), 1); // −IAT/2 is in [−IAT/2, −IAT/4)
        assert_eq!(s.jitter_bin(0), 0);
        assert_eq!(s.jitter_bin(2 * iat), 6); // +IAT
        assert_eq!(s.jitter_bin(2 * iat + 1), 7);
    }

    #[test]
    fn window_resets_counts_but_keeps_the_last_arrival() {
        let mut m = ConnMetrics::new([(2048, 2_000_000_000)].into_iter());
        m.on_deliver(0, 5_000_000, 4_000_000, 256, false, false);
        assert_eq!((m.stats[0].delivered, m.stats[0].last_arrival), (0, 5_000_000));
        m.start_measurement();
        // Next arrival one IAT later, 0.1 IAT of delay: centre jitter, bin
        // (IAT/16, IAT/8].
        m.on_deliver(0, 6_024_000, 5_921_600, 256, true, true);
        let s = m.stats[0];
        assert_eq!((s.delivered, s.delivered_bytes, s.measured), (1, 256, 1));
        assert_eq!(s.jitter_bins, [0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(s.delay_bins, [0, 0, 1, 0, 0, 0, 0, 0]);
        assert_eq!((s.delay_min_ps, s.delay_max_ps, s.delay_sum_ps), (102_400, 102_400, 102_400));
    }

    #[test]
    fn a_window_of_three_deliveries_two_of_them_timed() {
        // IAT 1 024 000 ps (see `s`). Generations: one before the window, two
        // in it. Deliveries in the window at 1 000 000 (delay 100 000: over
        // IAT/16 = 64 000, within IAT/8 = 128 000; the first arrival has no
        // jitter), 1 768 000 (768 000 after the previous: jitter −IAT/4,
        // which opens [−IAT/4, −IAT/8); delay 768 000 = 3·IAT/4) and
        // 3 000 000 (1 232 000 after: jitter +208 000, in (IAT/8, IAT/4];
        // generated before the window, so not timed).
        let mut m = ConnMetrics::new([(2048, 2_000_000_000)].into_iter());
        m.on_generate(0, false);
        m.on_generate(0, true);
        m.on_generate(0, true);
        m.on_deliver(0, 1_000_000, 900_000, 256, true, true);
        m.on_deliver(0, 1_768_000, 1_000_000, 256, true, true);
        m.on_deliver(0, 3_000_000, 2_900_000, 256, true, false);
        let s = m.stats[0];
        assert_eq!((s.generated, s.delivered, s.delivered_bytes, s.measured), (2, 3, 768, 2));
        assert_eq!((s.delay_sum_ps, s.delay_min_ps, s.delay_max_ps), (868_000, 100_000, 768_000));
        assert_eq!(s.delay_bins, [0, 0, 1, 0, 0, 1, 0, 0]);
        assert_eq!(s.jitter_bins, [0, 0, 1, 0, 1, 0, 0, 0]);
        assert_eq!(s.last_arrival, 3_000_000);
    }
}
