//! What a run measures: per packet generation, injection (first byte on the
//! source link) and delivery (last byte consumed) times, folded into per-class
//! and per-SL latency histograms; offered and accepted traffic; per-port,
//! per-VL link busy time; drops by reason; events processed.
//!
//! Packets generated before the end of warm-up are left out of the latency
//! and offered-traffic figures, deliveries and transmissions before it out of
//! accepted traffic and utilization, so every figure covers the window
//! `[warmup, now]` and carries its sample size. Warm-up is either a fixed
//! `warmup_ns` or detected from the run ([`warmup`]); until it is detected the
//! start is "never" (`Time::MAX`) and nothing is counted. Computing the report
//! is in [`results`].

pub mod connection;
pub mod histogram;
pub mod results;
pub mod series;
pub mod warmup;

use crate::engine::Time;
use crate::layout::Layout;
use crate::packet::{Packet, FLAG_CONN};
pub use connection::{ConnMetrics, ConnStats, ConnectionResult};
pub use histogram::LogHistogram;
pub use results::{FlowResult, InjectionQueueResult, LatencySummary, PortResult, SimResults, TransportResult, WatchdogResult};
pub use warmup::{MeasuredWindows, WarmupDetector, WarmupState, WindowAcc, WindowSample};

/// Why a packet left the network without being delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The LFT has no entry (or an unconnected port) for the DLID.
    NoRoute,
    /// The LFT sends the packet back out of the port it came in on, which IBA
    /// switches do not do for unicast.
    InputPortIsOutput,
    /// A VL15 packet found no room in the receiver's VL15 buffer (VL15 is not
    /// flow controlled).
    Vl15Overflow,
    /// The packet reached a CA that does not own its DLID.
    Misrouted,
    /// A switch discarded the packet when it outlived the switch lifetime
    /// limit (`mechanisms.lifetime`).
    Lifetime,
}

impl DropReason {
    /// All reasons, in report order.
    pub const ALL: [DropReason; 5] =
        [DropReason::NoRoute, DropReason::InputPortIsOutput, DropReason::Vl15Overflow, DropReason::Misrouted, DropReason::Lifetime];

    /// Name in results.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::NoRoute => "no_route",
            DropReason::InputPortIsOutput => "input_port_is_output",
            DropReason::Vl15Overflow => "vl15_overflow",
            DropReason::Misrouted => "misrouted",
            DropReason::Lifetime => "lifetime",
        }
    }
}

/// Counters of one class or SL.
#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    /// Packets generated after warm-up.
    pub generated_packets: u64,
    /// Their wire bytes.
    pub generated_bytes: u64,
    /// Packets delivered after warm-up (whenever generated).
    pub delivered_packets: u64,
    /// Their wire bytes.
    pub delivered_bytes: u64,
    /// Generation → last byte consumed, packets generated after warm-up.
    pub latency: LogHistogram,
    /// First byte injected → last byte consumed, same packets.
    pub network_latency: LogHistogram,
    /// Messages completed in the window (traces, closed-loop classes, and
    /// open-loop packets when the transport acknowledges).
    pub messages_completed: u64,
    /// Message generation → completion, messages generated in the window.
    pub message_time: LogHistogram,
    /// First byte of a message's first packet injected → last byte of its
    /// last packet consumed, messages generated in the window (ib_flit_sim's
    /// `Msg-Network-Latency`).
    pub message_network_time: LogHistogram,
}

/// Everything counted during a run.
#[derive(Debug, Clone)]
pub struct Metrics {
    /// Start of the measurement window.
    pub warmup_ps: Time,
    /// Per traffic class, when there are several ([`Metrics::class`]): with
    /// one, its counts are `all`'s, kept once (a delivery records into two
    /// histograms fewer).
    classes: Vec<FlowStats>,
    /// Per SL, for SLs used by some class.
    pub sls: Vec<Option<FlowStats>>,
    /// All classes together.
    pub all: FlowStats,
    /// The traffic has a single class (`classes` is then empty).
    one_class: bool,
    /// The window being filled, for warm-up detection and then for the
    /// measured windows (all packets).
    pub win: WindowAcc,
    /// The automatic warm-up detector, if warm-up is automatic.
    pub detector: Option<WarmupDetector>,
    /// The windows of the measurement, for its stationarity.
    pub measured: MeasuredWindows,
    /// Busy time of each transmitter per VL slot, window only, except what
    /// each transmitter's [`BusyTally`] still holds.
    pub busy_ps: Vec<u64>,
    /// Drops by reason (all packets).
    pub drops: [u64; DropReason::ALL.len()],
    /// Packets generated since time 0.
    pub generated: u64,
    /// Packets delivered since time 0.
    pub delivered: u64,
    /// Packets dropped since time 0.
    pub dropped: u64,
    /// Copies a switch made of a multicast packet, since time 0.
    pub copies: u64,
    /// Crossbar grants under `fully-adaptive` selection, since time 0: on an
    /// adaptive option, on the escape option into the next adaptive part, and
    /// on the escape option into the next escape part.
    pub fa_hops: [u64; 3],
    /// Multicast packets retired at a switch once all their copies were
    /// made, since time 0.
    pub retired: u64,
    /// Events handled, by kind ([`crate::engine::Event::kind`]).
    pub events_by_kind: [u64; crate::engine::Event::KIND_NAMES.len()],
    /// Packets (and multicast copies) granted a switch's crossbar, since
    /// time 0: the switch hops taken.
    pub switch_hops: u64,
    /// Per CBR connection.
    pub conns: ConnMetrics,
    /// The time series per link and VL, when `series_interval_ns` asks for one.
    pub series: Option<series::Series>,
}

/// Busy time a transmitter has counted in the window on its last VL slot
/// and not yet added to [`Metrics::busy_ps`]. It lives in the transmitter's
/// own cache line ([`crate::port::TxState`]): on a large fabric the per-slot
/// array cost a cache miss at every transmission, and the tally is settled
/// only when the transmitter changes slot, which a port with one data VL
/// never does. Packed, 9 bytes, so that the transmitter's other fields fit
/// beside it in 24 (its fields are only ever read and written by value).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, packed)]
pub(crate) struct BusyTally {
    ps: u64,
    slot: u8,
}

impl Metrics {
    /// Events handled, all kinds.
    pub fn events(&self) -> u64 {
        self.events_by_kind.iter().sum()
    }

    /// Counters for `classes` classes, the SLs `used_sls` and `port_slots`
    /// transmitter slots; with a `detector`, `warmup_ps` must be `Time::MAX`.
    /// `measured` samples the measurement in windows.
    pub fn new(
        warmup_ps: Time,
        classes: usize,
        used_sls: &[u8],
        port_slots: usize,
        detector: Option<WarmupDetector>,
        measured: MeasuredWindows,
    ) -> Self {
        let mut sls: Vec<Option<FlowStats>> = vec![None; 16];
        for &sl in used_sls {
            sls[sl as usize] = Some(FlowStats::default());
        }
        Metrics {
            warmup_ps,
            classes: if classes > 1 { vec![FlowStats::default(); classes] } else { Vec::new() },
            one_class: classes == 1,
            sls,
            all: FlowStats::default(),
            win: WindowAcc::default(),
            detector,
            measured,
            busy_ps: vec![0; port_slots],
            drops: [0; DropReason::ALL.len()],
            generated: 0,
            delivered: 0,
            dropped: 0,
            copies: 0,
            fa_hops: [0; 3],
            retired: 0,
            events_by_kind: [0; crate::engine::Event::KIND_NAMES.len()],
            switch_hops: 0,
            conns: ConnMetrics::default(),
            series: None,
        }
    }

    /// A packet of `class`/`sl` with `wire` bytes was generated at `now`.
    #[inline]
    pub fn on_generate(&mut self, now: Time, class: u8, sl: u8, wire: u32) {
        self.generated += 1;
        self.win.gen_packets += 1;
        self.win.gen_bytes += wire as u64;
        if now >= self.warmup_ps {
            for f in self.flows(class, sl) {
                f.generated_packets += 1;
                f.generated_bytes += wire as u64;
            }
        }
    }

    /// Packet `p` was delivered at `now`. Deliveries count from the start of
    /// the window; latencies only of packets generated in it (`warmup_ps` is
    /// always the current start, fixed or detected, so the generation time
    /// alone decides).
    #[inline]
    pub fn on_deliver(&mut self, now: Time, p: &Packet) {
        self.delivered += 1;
        let (class, sl, wire, gen, inject) = (p.class, p.sl, p.wire_bytes as u32, p.gen_time, p.inject_time);
        let window = now >= self.warmup_ps;
        let measured = gen >= self.warmup_ps;
        if p.flags & FLAG_CONN != 0 {
            self.conns.on_deliver(p.flow, now, gen, wire, window, measured);
        }
        self.win.del_packets += 1;
        self.win.del_bytes += wire as u64;
        self.win.lat_sum += now - gen;
        if !window {
            return;
        }
        for f in self.flows(class, sl) {
            f.delivered_packets += 1;
            f.delivered_bytes += wire as u64;
            if measured {
                f.latency.record(now - gen);
                f.network_latency.record(now - inject);
            }
        }
    }

    /// A message of `class` generated at `gen` completed at `now`.
    #[inline]
    pub fn on_message_complete(&mut self, now: Time, class: u8, gen: Time) {
        if now < self.warmup_ps {
            return;
        }
        let measured = gen >= self.warmup_ps;
        for f in self.classes.get_mut(class as usize).into_iter().chain(std::iter::once(&mut self.all)) {
            f.messages_completed += 1;
            if measured {
                f.message_time.record(now - gen);
            }
        }
    }

    /// The last packet of a message of `class`, generated at `gen` and
    /// whose first packet was injected at `first_inject`, was consumed now.
    #[inline]
    pub fn on_message_arrival(&mut self, now: Time, class: u8, gen: Time, first_inject: Time) {
        if gen < self.warmup_ps {
            return;
        }
        for f in self.classes.get_mut(class as usize).into_iter().chain(std::iter::once(&mut self.all)) {
            f.message_network_time.record(now - first_inject);
        }
    }

    /// A packet was dropped.
    #[inline]
    pub fn on_drop(&mut self, reason: DropReason) {
        self.dropped += 1;
        self.drops[reason as usize] += 1;
    }

    /// The transmitter of port `gp` is busy on VL slot `slot` for `ps` from
    /// `now`; only the part after warm-up counts (the part beyond the current
    /// time is taken off when results are computed). It is counted in the
    /// transmitter's `tally` first.
    // Inlined into the transmission: LLVM left it a call per packet sent.
    #[inline(always)]
    pub(crate) fn on_transmit(&mut self, tally: &mut BusyTally, layout: &Layout, gp: u32, slot: u8, now: Time, ps: u64) {
        if let Some(s) = &mut self.series {
            s.started[layout.pv(gp, slot)] += ps;
        }
        let end = now + ps;
        if end > self.warmup_ps {
            if tally.slot != slot {
                self.busy_ps[layout.pv(gp, tally.slot)] += tally.ps;
                *tally = BusyTally { ps: 0, slot };
            }
            tally.ps += end - now.max(self.warmup_ps);
        }
    }

    /// Busy time in the window of each slot of the transmitter of port `gp`,
    /// whose tally is `tally`.
    pub(crate) fn busy_of_port(&self, tally: &BusyTally, layout: &Layout, gp: u32) -> Vec<u64> {
        let mut busy: Vec<u64> = (0..layout.nvl as u8).map(|s| self.busy_ps[layout.pv(gp, s)]).collect();
        busy[tally.slot as usize] += tally.ps;
        busy
    }

    /// Starts the measurement window at `at`: everything counted so far is
    /// forgotten (the caller clears the transmitters' tallies and adds the
    /// part of transmissions in progress after `at`).
    pub fn start_measurement(&mut self, at: Time) {
        self.warmup_ps = at;
        for f in self.classes.iter_mut().chain(self.sls.iter_mut().flatten()).chain(std::iter::once(&mut self.all)) {
            *f = FlowStats::default();
        }
        self.busy_ps.fill(0);
        self.conns.start_measurement();
        self.win = WindowAcc::default();
        self.measured.restart(at);
    }

    /// The counts of traffic class `class`, `None` if there is no such class.
    pub fn class(&self, class: usize) -> Option<&FlowStats> {
        if self.one_class && class == 0 {
            Some(&self.all)
        } else {
            self.classes.get(class)
        }
    }

    /// The flows a packet of `class` and `sl` counts in: its class's (unless
    /// it is the only one, counted as `all`), its SL's if kept, and `all`.
    #[inline]
    fn flows(&mut self, class: u8, sl: u8) -> impl Iterator<Item = &mut FlowStats> {
        let c = self.classes.get_mut(class as usize);
        let s = self.sls[sl as usize & 15].as_mut();
        c.into_iter().chain(s).chain(std::iter::once(&mut self.all))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Window starts at 1 000 ps; two classes; only SL 3 is used.
    fn metrics() -> Metrics {
        Metrics::new(1_000, 2, &[3], 4, None, MeasuredWindows::new(10_000, 0.05, 1_000))
    }

    fn pkt(class: u8, sl: u8, wire: u16, gen: Time, inject: Time) -> Packet {
        Packet { gen_time: gen, inject_time: inject, wire_bytes: wire, sl, class, ..crate::packet::test_packet(wire.div_ceil(64)) }
    }

    fn sl3(m: &Metrics) -> &FlowStats {
        m.sls[3].as_ref().unwrap()
    }

    #[test]
    fn generation_before_the_window_feeds_only_the_window_sums() {
        let mut m = metrics();
        m.on_generate(999, 0, 3, 100);
        m.on_generate(1_000, 1, 3, 200);
        m.on_generate(1_500, 1, 3, 300);
        assert_eq!(m.generated, 3);
        // The sums of the sampling windows see every packet.
        assert_eq!((m.win.gen_packets, m.win.gen_bytes), (3, 600));
        assert_eq!((m.classes[0].generated_packets, m.classes[0].generated_bytes), (0, 0));
        for f in [&m.classes[1], sl3(&m), &m.all] {
            assert_eq!((f.generated_packets, f.generated_bytes), (2, 500));
        }
        assert!(m.sls.iter().enumerate().all(|(sl, f)| f.is_some() == (sl == 3)));
    }

    #[test]
    fn delivery_counts_from_the_window_and_latency_only_for_packets_generated_in_it() {
        let mut m = metrics();
        // Before the window: only the sampling windows' sums, latency 999 − 900.
        m.on_deliver(999, &pkt(0, 3, 128, 900, 950));
        // In the window but generated before it: counted, not measured.
        m.on_deliver(1_200, &pkt(1, 3, 256, 900, 950));
        // Generated at the start: latency 1 300 − 1 000, network 1 300 − 1 100.
        m.on_deliver(1_300, &pkt(1, 3, 64, 1_000, 1_100));
        assert_eq!(m.delivered, 3);
        // The sampling windows' sums: every delivery, latencies 99 + 300 + 300.
        assert_eq!((m.win.del_packets, m.win.del_bytes, m.win.lat_sum), (3, 448, 699));
        assert_eq!(m.classes[0].delivered_packets, 0);
        for f in [&m.classes[1], sl3(&m), &m.all] {
            assert_eq!((f.delivered_packets, f.delivered_bytes), (2, 320));
            assert_eq!((f.latency.count(), f.latency.min(), f.latency.max()), (1, Some(300), Some(300)));
            assert_eq!((f.network_latency.count(), f.network_latency.min()), (1, Some(200)));
        }
    }

    #[test]
    fn a_message_counts_from_the_window_and_is_timed_only_if_generated_in_it() {
        let mut m = metrics();
        // Two before the window, so that a test for "exactly at the start"
        // instead of "before it" would count one of them.
        m.on_message_complete(500, 0, 0);
        m.on_message_complete(999, 0, 0);
        m.on_message_complete(1_000, 0, 999);
        m.on_message_complete(1_400, 0, 1_000);
        for f in [&m.classes[0], &m.all] {
            assert_eq!(f.messages_completed, 2);
            assert_eq!((f.message_time.count(), f.message_time.min()), (1, Some(400)));
        }
        assert_eq!(m.classes[1].messages_completed, 0);
        assert_eq!(sl3(&m).messages_completed, 0);
    }

    /// With one class, the class's counts are the totals, counted once:
    /// the same figures as a class kept apart (a second, idle class beside it).
    #[test]
    fn a_single_class_is_counted_as_the_total() {
        let one = Metrics::new(1_000, 1, &[3], 4, None, MeasuredWindows::new(10_000, 0.05, 1_000));
        let [mut one, mut two] = [one, metrics()];
        for m in [&mut one, &mut two] {
            m.on_generate(1_100, 0, 3, 300);
            m.on_deliver(1_300, &pkt(0, 3, 64, 1_000, 1_100));
            m.on_deliver(1_350, &pkt(0, 2, 128, 1_050, 1_100));
            m.on_message_complete(1_400, 0, 1_000);
            m.on_message_arrival(1_400, 0, 1_000, 1_100);
        }
        assert!(one.classes.is_empty(), "kept once");
        let (a, b) = (one.class(0).unwrap(), two.class(0).unwrap());
        assert_eq!((a.generated_packets, a.generated_bytes, a.delivered_packets, a.delivered_bytes), (1, 300, 2, 192));
        assert_eq!((b.generated_packets, b.generated_bytes, b.delivered_packets, b.delivered_bytes), (1, 300, 2, 192));
        assert_eq!((a.latency.count(), a.latency.max(), a.network_latency.count()), (2, Some(300), 2));
        assert_eq!((a.latency.buckets(), a.network_latency.buckets()), (b.latency.buckets(), b.network_latency.buckets()));
        assert_eq!((a.messages_completed, a.message_time.count(), a.message_network_time.count()), (1, 1, 1));
        assert_eq!((b.messages_completed, b.message_time.count(), b.message_network_time.count()), (1, 1, 1));
        assert_eq!(sl3(&one).delivered_packets, 1, "SL 3's own count: one of the two");
        assert!(one.class(1).is_none() && two.class(2).is_none());
    }

    #[test]
    fn each_drop_reason_has_its_own_counter() {
        let mut m = metrics();
        m.on_drop(DropReason::InputPortIsOutput);
        m.on_drop(DropReason::Lifetime);
        m.on_drop(DropReason::Lifetime);
        assert_eq!(m.dropped, 3);
        assert_eq!(m.drops, [0, 1, 0, 0, 2]);
    }

    #[test]
    fn busy_time_is_clipped_to_the_window() {
        let mut m = metrics();
        let mut t = BusyTally::default();
        // One port with four slots: its slot s is index s.
        let l = Layout::new(3).for_ports(1);
        m.on_transmit(&mut t, &l, 0, 2, 900, 50); // ends before the window
        m.on_transmit(&mut t, &l, 0, 2, 900, 300); // 200 of it in the window
        m.on_transmit(&mut t, &l, 0, 2, 1_100, 40); // all of it
        assert_eq!((m.busy_ps[2], t.ps), (0, 240), "the tally holds its slot's time");
        m.on_transmit(&mut t, &l, 0, 1, 1_000, 7);
        assert_eq!(m.busy_ps, [0, 0, 240, 0], "a change of slot settles the tally");
        assert_eq!(m.busy_of_port(&t, &l, 0), [0, 7, 240, 0]);
        m.on_transmit(&mut t, &l, 0, 2, 1_200, 10);
        assert_eq!(m.busy_of_port(&t, &l, 0), [0, 7, 250, 0]);
    }

    #[test]
    fn starting_the_window_forgets_the_counts_but_not_the_totals() {
        let mut m = metrics();
        m.on_generate(1_000, 1, 3, 200);
        m.on_deliver(1_100, &pkt(1, 3, 200, 1_000, 1_000));
        m.on_message_complete(1_100, 1, 1_000);
        let mut t = BusyTally::default();
        let l = Layout::new(1).for_ports(2);
        m.on_transmit(&mut t, &l, 1, 1, 1_000, 100);
        m.on_transmit(&mut t, &l, 1, 0, 1_000, 100);
        m.start_measurement(2_000);
        assert_eq!(m.warmup_ps, 2_000);
        for f in [&m.classes[0], &m.classes[1], sl3(&m), &m.all] {
            assert_eq!((f.generated_packets, f.delivered_packets, f.messages_completed, f.latency.count()), (0, 0, 0, 0));
        }
        assert!(m.sls.iter().enumerate().all(|(sl, f)| f.is_some() == (sl == 3)));
        assert_eq!(m.busy_ps, [0; 4]);
        assert_eq!((m.generated, m.delivered), (1, 1));
    }
}
