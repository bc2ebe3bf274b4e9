//! The simulation: the clock, the event queue, the packet arena and the
//! metrics; the run loop and event dispatch.
//!
//! Building ([`Simulation::new`], in `build/`) validates the configuration
//! against the fabric and turns everything into flat arrays indexed as
//! `layout.rs` says. Running ([`Simulation::run`]) pops events up to a time
//! limit and can be resumed, so a caller can report progress or check for
//! Ctrl-C between slices. Each event goes to the handler of the component
//! whose state it changes: link events (`LinkFree`, `Credit`) to
//! `channel.rs`, switch events (`Routed`, `XbarDone`, `SwitchWake`,
//! `OutputReady`) to `switch/`, HCA and source events (`Deliver`, `Inject`,
//! `Generate`, `TraceNext`, `ConnNext`, `MessageNext`) to `hca/`. Switch state
//! is changed only in `switch/`, HCA state only in `hca/`.

use ibnetsim_fabric::Fabric;
use ibnetsim_sm::{ForwardingTables, LidMap, MulticastTables, PathLabels, PathSl, Subnet};

use crate::config::{CrossbarKind, SimConfig};
use crate::engine::{Event, EventQueue, Queue, Time};
use crate::error::{DeadlockReport, SimError};
use crate::hca::Hcas;
use crate::layout::Layout;
use crate::mechanism::Mechanisms;
use crate::metrics::{Metrics, SimResults};
use crate::packet::PacketArena;
use crate::port::Ports;
use crate::qos::QosTables;
use crate::switch::Switches;
use crate::traffic::Workload;
use crate::watchdog::Watchdog;

/// "No port" / "no host" marker in index arrays.
pub(crate) const NONE: u32 = u32::MAX;

/// Numbers derived from the config, in the units the hot path uses.
#[derive(Debug, Clone)]
pub(crate) struct Params {
    /// Routing + arbitration delay at a switch.
    pub switch_delay_ps: Time,
    /// Interval of a switch port's credit updates (0: at once).
    pub switch_credit_period_ps: Time,
    /// Interval of a CA port's credit updates (0: at once).
    pub hca_credit_period_ps: Time,
    /// Wire bytes of a switch port's and a CA port's flow-control packets
    /// (0: not charged link time).
    pub credit_packet_bytes: [u16; 2],
    /// Crossbar speedup.
    pub speedup: f64,
    /// Switches have output buffers.
    pub output_buffers: bool,
    /// A switch takes the next hop's credits when a packet crosses into an
    /// output buffer, not when it starts on the link (the selection policy's
    /// choice of partition depends on them: `fully-adaptive`).
    pub credits_at_grant: bool,
    /// The selection policy is `fully-adaptive` (escape paths, split VL
    /// buffers): checked on hot paths, so kept here beside the other flags.
    pub fully_adaptive: bool,
    /// Crossbar organisation.
    pub crossbar: CrossbarKind,
    /// The bits of a VL slot that name its crossbar port: all of them with a
    /// port per VL, none with a multiplexed crossbar (one port for all VLs).
    pub xbar_slot_mask: u8,
    /// Input buffer organisation.
    pub input_buffer: crate::switch::organisation::InputBuffer,
    /// Transfers one crossbar input may have under way at once.
    pub max_transfers: u8,
    /// Crossbar arbiter.
    pub crossbar_arbiter: crate::switch::arbiter::CrossbarArbiter,
    /// The default arbitration: round robin over FIFO heads, deterministic
    /// selection (the crossbar has a path compiled for it alone).
    pub plain_arbitration: bool,
    /// A new head whose crossbar input is busy until it is routed is offered
    /// by the end of that transfer, without a `Routed` event of its own:
    /// the default switch (`plain_arbitration`) with output buffers, one
    /// transfer per input, and no mechanism acting on waiting heads
    /// (`Simulation::offered_at_transfer_end`).
    pub offer_at_transfer_end: bool,
    /// A transmitter with only its one data VL queued sends that VL's head
    /// without the VL arbiter (`Simulation::only_data_vl_ready`): one data
    /// VL, and no escape paths, whose credits a switch takes at the grant.
    pub one_vl_sends_head: bool,
    /// A host's transmitter that has nothing more to send frees itself
    /// when its packet's last byte has left, without a `LinkFree` event
    /// (`Simulation::resolve_lazy_free`): every run without a time series,
    /// whose samples read the send buffers' room.
    pub lazy_host_free: bool,
    /// Watchdog period.
    pub watchdog_ps: Time,
    /// SLs in HCA service order.
    pub sl_order: [u8; 16],
    /// Path MTU in payload bytes (trace messages are split into packets of it).
    pub mtu_bytes: u32,
    /// Header and CRC bytes on every packet (`header_bytes` +
    /// `extra_header_bytes`).
    pub header_bytes: u32,
    /// Bytes a switch needs before it can route: the LRH and BTH, or the
    /// whole header if shorter.
    pub cut_through_bytes: u32,
}

/// A packet-level simulation of one fabric with one configuration.
///
/// The simulation keeps the clock, the event queue, the packet arena and the
/// metrics, and dispatches each event to the component that owns the state it
/// changes: [`Ports`] (VL buffers, credits and transmitters of every port),
/// [`Switches`] (forwarding tables and crossbars), [`Hcas`] (send queues and
/// sinks), the [`Workload`] (sources) and the [`Mechanisms`] (selection and
/// the paper mechanisms' hooks).
#[derive(Debug, Clone)]
pub struct Simulation {
    pub(crate) p: Params,
    /// Index arithmetic of per-(port, VL) arrays.
    pub(crate) layout: Layout,
    pub(crate) node_names: Vec<String>,
    pub(crate) ports: Ports,
    pub(crate) switches: Switches,
    pub(crate) hcas: Hcas,
    pub(crate) traffic: Workload,
    pub(crate) mech: Mechanisms,

    pub(crate) now: Time,
    pub(crate) queue: Queue,
    pub(crate) arena: PacketArena,
    pub(crate) metrics: Metrics,
    /// Packets that left their SL send queue and are not yet delivered or dropped.
    pub(crate) in_network: u64,
    pub(crate) last_progress: Time,
    pub(crate) deadlock: Option<Box<DeadlockReport>>,
    /// The periodic partial-deadlock scan.
    pub(crate) watchdog: Watchdog,
    /// Earliest of the next scan and the end of the warm-up window being
    /// filled: the run loop's only per-event check for periodic work.
    pub(crate) next_housekeeping: Time,
    /// A crossbar grant's offer to end its transfer and the output link's
    /// transmission with one event (see [`LinkFold`]).
    pub(crate) link_fold: LinkFold,
}

/// While a crossbar grant into an output buffer starts that buffer's link,
/// the transmission it starts may end exactly when the transfer does (the
/// packet leaves as it arrives, the common case below saturation). The two
/// events would then have the same time and consecutive sequence numbers,
/// so nothing can be handled between them: the grant schedules one
/// `XbarLinkDone` in their place, under the transfer's sequence number.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkFold {
    /// Transmitter whose `LinkFree` may be folded (`NONE`: no grant under way).
    pub port: u32,
    /// The transfer's end.
    pub at: Time,
    /// Set by the transmission that was folded.
    pub taken: bool,
}

impl Simulation {
    /// Builds a simulation of `fabric` routed by `tables` over `lids`, with the
    /// SL2VL and VLArbitration tables described by `config`. All validation
    /// happens here; errors name the config key.
    pub fn new(
        fabric: &Fabric,
        lids: &LidMap,
        tables: &ForwardingTables,
        config: &SimConfig,
    ) -> Result<Simulation, SimError> {
        let qos = crate::qos::from_config(config)?;
        Self::with_qos(fabric, lids, tables, config, qos)
    }

    /// As [`Simulation::new`], with SL2VL and VLArbitration tables given per
    /// port (e.g. converted from the subnet manager's QoS module); the config's
    /// `sl2vl` and `vl_arbitration` tables are then ignored, its arbiter kind is not.
    pub fn with_qos(
        fabric: &Fabric,
        lids: &LidMap,
        tables: &ForwardingTables,
        config: &SimConfig,
        qos: QosTables,
    ) -> Result<Simulation, SimError> {
        let (mfts, path_sl, labels) = (MulticastTables::new(), PathSl::none(), PathLabels::primary());
        crate::build::build(fabric, crate::build::Routing { lids, tables, mfts: &mfts, path_sl: &path_sl, labels: &labels }, config, qos)
    }

    /// A simulation of `fabric` as the subnet manager configured it: its
    /// LIDs, forwarding tables, multicast tables (groups that traffic
    /// classes can send to with `pattern = { kind = "multicast", mlid = … }`)
    /// and the per-path SLs its routing engine chose (a packet takes its
    /// path's SL where the engine gave one, its class's otherwise).
    /// `qos` gives per-port SL2VL and VLArbitration tables as in
    /// [`Simulation::with_qos`]; `None` takes them from the config.
    pub fn from_subnet(fabric: &Fabric, subnet: &Subnet, config: &SimConfig, qos: Option<QosTables>) -> Result<Simulation, SimError> {
        let qos = match qos {
            Some(q) => q,
            None => crate::qos::from_config(config)?,
        };
        let routing = crate::build::Routing {
            lids: &subnet.lids,
            tables: &subnet.tables,
            mfts: &subnet.mfts,
            path_sl: &subnet.path_sl,
            labels: &subnet.labels,
        };
        crate::build::build(fabric, routing, config, qos)
    }

    /// Current simulated time in picoseconds.
    pub fn now_ps(&self) -> Time {
        self.now
    }

    /// Runs until simulated time `until_ps` (inclusive) or a deadlock. May be
    /// called again with a later time to continue.
    // The run loop and the functions it calls on every packet are given a
    // section of their own (`.text.hot.*`, merged into `.text`), so that the
    // linker lays them out side by side: the hot code is larger than the L1
    // instruction cache, and scattered among the rest it conflicted there
    // by chance of layout (see `crates/sim/README.md`, tenth stop). An ELF
    // section name, hence Linux only.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    pub fn run(&mut self, until_ps: Time) -> Result<(), SimError> {
        if let Some(d) = &self.deadlock {
            return Err(SimError::Deadlock(d.clone()));
        }
        if until_ps <= self.now {
            return Ok(());
        }
        let watchdog = self.p.watchdog_ps;
        while let Some((t, seq, ev)) = self.queue.pop_entry_until(until_ps) {
            debug_assert!(t >= self.now);
            self.now = t;
            self.ports.credits.set_now(t, seq);
            self.metrics.events_by_kind[ev.kind()] += 1;
            // Periodic work sees the state before the first event at or after
            // its time, whatever the slicing of the run.
            let found = if t >= self.next_housekeeping { self.housekeeping() } else { None };
            self.dispatch(ev);
            if let Some(e) = found {
                return Err(e);
            }
            if self.in_network > 0 && t - self.last_progress > watchdog {
                return Err(self.declare_stall());
            }
        }
        if self.in_network > 0 && (self.queue.is_empty() || until_ps - self.last_progress > watchdog) {
            // Nothing can move any more (no events left), or nothing did for a
            // whole watchdog period.
            self.now = until_ps.max(self.now);
            return Err(self.declare_stall());
        }
        self.now = until_ps;
        // Intervals that ended with no event since are complete.
        self.sample_series();
        // Between runs every event up to `until_ps` has been handled.
        self.ports.credits.set_now(until_ps, u64::MAX);
        // Windows that ended with no event since are complete: closing them now
        // or at the next event is the same.
        self.close_warmup_windows();
        if cfg!(debug_assertions) {
            self.check_conservation()?;
        }
        Ok(())
    }

    /// The periodic work due now: warm-up windows, the deadlock scan.
    fn housekeeping(&mut self) -> Option<SimError> {
        self.sample_series();
        self.close_warmup_windows();
        let found = if self.now >= self.watchdog.next_scan { self.watchdog_scan() } else { None };
        self.update_housekeeping();
        found
    }

    pub(crate) fn update_housekeeping(&mut self) {
        let window = match &self.metrics.detector {
            Some(d) if d.state == crate::metrics::WarmupState::Pending => d.next_end,
            _ => Time::MAX,
        };
        let sample = self.metrics.series.as_ref().map_or(Time::MAX, |s| s.next);
        self.next_housekeeping = self.watchdog.next_scan.min(window).min(self.metrics.measured.next_end).min(sample);
    }

    /// Closes the warm-up windows that ended by now; starts the measurement
    /// when the detector decides.
    fn close_warmup_windows(&mut self) {
        let now = self.now;
        let mut start = None;
        if let Some(d) = &mut self.metrics.detector {
            while d.state == crate::metrics::WarmupState::Pending && d.next_end <= now {
                let acc = std::mem::take(&mut self.metrics.win);
                start = d.close_window(&acc);
            }
        }
        if let Some(at) = start {
            self.start_window(at);
        }
        while self.metrics.measured.next_end <= now {
            let acc = std::mem::take(&mut self.metrics.win);
            self.metrics.measured.close_window(&acc);
        }
    }

    fn start_window(&mut self, at: Time) {
        self.metrics.start_measurement(at);
        // Transmissions in progress at `at` count from `at` on.
        for gp in 0..self.ports.len() as u32 {
            self.ports.tx_mut(gp).tally = crate::metrics::BusyTally::default();
            let tx = *self.ports.tx(gp);
            if tx.busy && tx.busy_until > at {
                let i = self.layout.pv(gp, tx.sending_slot);
                self.metrics.busy_ps[i] += tx.busy_until - at;
            }
        }
    }

    /// Ends the warm-up now: everything measured so far is forgotten and the
    /// window starts at the current time, as a run-time decision of the
    /// caller (paper 001's transient ends after 10 000 deliveries). An error
    /// with automatic warm-up, whose detector owns that decision.
    pub fn begin_measurement(&mut self) -> Result<(), SimError> {
        if self.metrics.detector.is_some() {
            return Err(SimError::config("auto_warmup", "the measurement start is detected; begin_measurement needs a fixed warm-up"));
        }
        self.start_window(self.now);
        self.update_housekeeping();
        Ok(())
    }

    /// Packets delivered since time 0.
    pub fn delivered(&self) -> u64 {
        self.metrics.delivered
    }

    /// Packets of CBR connection `c` delivered in the measurement window.
    pub fn connection_delivered(&self, c: usize) -> Option<u64> {
        self.metrics.conns.stats.get(c).map(|s| s.delivered)
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Generate { source } => self.on_generate(source),
            Event::TraceNext { trace } => self.on_trace(trace),
            Event::ConnNext { conn } => self.on_connection(conn),
            Event::MessageNext { source } => self.on_message_next(source),
            Event::Routed { port, queue, switch, packet } => self.on_routed(switch, port, queue, packet),
            Event::XbarDone { input, switch, out_port, in_slot, out_slot } => {
                self.on_xbar_done(switch, input, out_port, in_slot, out_slot);
            }
            Event::XbarLinkDone { input, switch, out_port, in_slot, out_slot } => {
                let output = self.on_xbar_done(switch, input, out_port, in_slot, out_slot);
                self.on_link_free(output, switch);
            }
            Event::LinkFree { port, switch } => self.on_link_free(port, switch),
            Event::OutputReady { port } => self.on_output_ready(port),
            Event::Credit { port, queue, blocks } => self.on_credit(port, queue, blocks),
            Event::Deliver { port, queue, packet } => self.on_deliver(port, queue, packet),
            Event::Inject { packet } => self.on_inject(packet),
            Event::SwitchWake { switch } => self.on_switch_wake(switch),
            Event::FcpDue { port, queue, blocks } => self.on_fcp_due(port, queue, blocks),
            Event::FcpStart { port } => self.on_fcp_start(port),
        }
    }

    /// Schedules `ev` at `at`.
    #[inline]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    pub(crate) fn schedule(&mut self, at: Time, ev: Event) {
        self.queue.push(self.now, at, ev);
    }

    /// Results so far (the measurement window is `[warmup, now]`).
    pub fn results(&self) -> SimResults {
        crate::metrics::results::compute(self)
    }

    /// Latency histogram of traffic class `class` as `(lowest value, width,
    /// count)` buckets in picoseconds (each at most 3.1 % wide): generation →
    /// delivery, or first byte injected → delivery when `network` is set.
    /// `None` for a class that does not exist.
    pub fn latency_histogram(&self, class: usize, network: bool) -> Option<Vec<(u64, u64, u64)>> {
        let f = self.metrics.class(class)?;
        Some(if network { f.network_latency.buckets() } else { f.latency.buckets() })
    }

    /// As [`Simulation::latency_histogram`], all classes together.
    pub fn total_latency_histogram(&self, network: bool) -> Vec<(u64, u64, u64)> {
        let f = &self.metrics.all;
        if network {
            f.network_latency.buckets()
        } else {
            f.latency.buckets()
        }
    }

    /// Packets generated, delivered, dropped, and found by walking every queue;
    /// `Err` when they do not add up.
    pub fn check_conservation(&self) -> Result<(), SimError> {
        let mut queued = 0u64;
        for q in self.ports.inqs().chain(self.ports.outs().map(|b| &b.queue)) {
            queued += q.count_linked(&self.arena) as u64;
        }
        for h in &self.hcas.state {
            for q in &h.slq {
                queued += q.count_linked(&self.arena) as u64;
            }
        }
        let m = &self.metrics;
        // Arrivals a bounded source queue holds as a count are generated and not packets yet.
        let deferred = self.hcas.source_queues.deferred;
        // A multicast packet becomes its copies at the switches: each copy is
        // one more packet, the original retires.
        if m.generated + m.copies != m.delivered + m.dropped + m.retired + queued + deferred
            || queued + self.traffic.injections_pending != self.arena.live() as u64
        {
            return Err(SimError::Conservation {
                generated: m.generated,
                delivered: m.delivered,
                dropped: m.dropped,
                queued: queued + deferred,
            });
        }
        Ok(())
    }

    /// Schedules one packet of traffic class `class` from host `src` to host
    /// `dst` (host indices in LID order), generated at `at_ps` (not before
    /// now), with the class's fixed payload. Its DLID is the destination's
    /// base LID. For tests that need exact single packets.
    pub fn inject(&mut self, at_ps: Time, class: usize, src: usize, dst: usize) -> Result<(), SimError> {
        let payload = match self.traffic.classes.get(class) {
            Some(c) => c.size.fixed().ok_or_else(|| {
                SimError::config(
                    "inject.class",
                    format!("class '{}' has no fixed payload size; use inject_payload", c.name),
                )
            })?,
            None => 0,
        };
        self.inject_payload(at_ps, class, src, dst, payload)
    }

    /// As [`Simulation::inject`], with `payload_bytes` of payload (1..=MTU,
    /// at most 256 on VL15).
    pub fn inject_payload(&mut self, at_ps: Time, class: usize, src: usize, dst: usize, payload_bytes: u32) -> Result<(), SimError> {
        let n = self.hcas.model.len();
        if dst >= n {
            return Err(SimError::config("inject.dst", format!("host {dst} does not exist ({n} hosts)")));
        }
        if src == dst {
            return Err(SimError::config("inject.dst", "a host cannot send to itself"));
        }
        self.inject_to(at_ps, class, src, dst as u32, self.hcas.model[dst].base_lid, payload_bytes)
    }

    /// As [`Simulation::inject`], to the multicast group `mlid` (the subnet
    /// manager's multicast tables, see [`Simulation::from_subnet`]), from a
    /// member host.
    pub fn inject_to_group(&mut self, at_ps: Time, class: usize, src: usize, mlid: u16, payload_bytes: u32) -> Result<(), SimError> {
        let Some(members) = self.switches.mcast.members(mlid) else {
            return Err(SimError::config("inject.mlid", format!("no multicast group 0x{mlid:04x}")));
        };
        if !members.contains(&(src as u32)) {
            return Err(SimError::config("inject.src", format!("host {src} is not a member of group 0x{mlid:04x}")));
        }
        self.inject_to(at_ps, class, src, NONE, mlid, payload_bytes)
    }

    fn inject_to(&mut self, at_ps: Time, class: usize, src: usize, dst: u32, dlid: u16, payload_bytes: u32) -> Result<(), SimError> {
        if class >= self.traffic.classes.len() {
            return Err(SimError::config("inject.class", format!("class {class} does not exist ({} classes)", self.traffic.classes.len())));
        }
        let max = if self.traffic.classes[class].vl15 { crate::link::VL15_MAX_PAYLOAD } else { self.p.mtu_bytes };
        if payload_bytes == 0 || payload_bytes > max {
            return Err(SimError::config("inject.payload_bytes", format!("must be 1..={max}, got {payload_bytes}")));
        }
        let n = self.hcas.model.len();
        if src >= n {
            return Err(SimError::config("inject.src", format!("host {src} does not exist ({n} hosts)")));
        }
        if at_ps < self.now {
            return Err(SimError::config("inject.at_ps", format!("{at_ps} ps is in the past (now is {} ps)", self.now)));
        }
        let sl = self.traffic.classes[class].sl;
        let id = self.new_packet(at_ps, class as u8, sl, src as u32, dst, dlid, payload_bytes);
        self.traffic.injections_pending += 1;
        self.schedule(at_ps, Event::Inject { packet: id });
        Ok(())
    }

    /// Packets host `host` has received (delivered to it) since time 0;
    /// `None` for a host that does not exist.
    pub fn host_deliveries(&self, host: usize) -> Option<u64> {
        self.hcas.state.get(host).map(|h| h.delivered)
    }

    /// Number of hosts (CA ports with LIDs), the traffic endpoints, in LID order.
    pub fn num_hosts(&self) -> usize {
        self.hcas.model.len()
    }

    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.metrics.events()
    }

    /// Pending events.
    pub fn pending_events(&self) -> usize {
        self.queue.len()
    }

    /// Packets alive (queued anywhere or on a link).
    pub fn packets_alive(&self) -> usize {
        self.arena.live()
    }

    /// Packets a routing-time selection policy (`lfu`) has routed to output
    /// `port`, VL slot `vl_slot`, of switch `switch`: each packet counts once
    /// per switch, when it is first routed there. `None` for other policies or
    /// an unknown switch, port or slot.
    pub fn selection_count(&self, switch: &str, port: u8, vl_slot: u8) -> Option<u32> {
        let counts = self.mech.selection.counts()?;
        let node = self.node_names.iter().position(|n| n == switch)? as u32;
        let sm = &self.switches.lines.iter().find(|s| s.model.node == node)?.model;
        if port == 0 || port as u32 > sm.num_ports || vl_slot as usize >= self.layout.nvl {
            return None;
        }
        counts.get(self.layout.pv(sm.gp(port), vl_slot)).copied()
    }

    /// Credits the transmitter of port `port` of node `node` holds for input
    /// queue (`vl`, `partition`) across its link, and that queue's capacity,
    /// in 64-byte blocks (what a selection policy reads); `None` for an
    /// unknown or uncabled port, VL or partition. VL 15 is the management VL.
    /// A receiver that does not split its buffers (a CA, VL15) has capacity 0
    /// in partitions other than 0.
    pub fn credits(&self, node: &str, port: u8, vl: u8, partition: u8) -> Option<(u32, u32)> {
        let n = self.node_names.iter().position(|x| x == node)? as u32;
        let gp = (0..self.ports.len()).position(|gp| self.ports.node[gp] == n && self.ports.model(gp as u32).port == port)? as u32;
        let peer = self.ports.model(gp).peer;
        let slot = if vl == 15 { self.layout.vl15_slot } else { vl };
        if peer == NONE || (vl != 15 && vl >= self.layout.data_vls) || partition as usize >= self.layout.parts {
            return None;
        }
        let q = self.layout.q(slot, partition);
        Some((self.ports.credits.available(gp, q), self.ports.in_cap[self.layout.pq(peer, q)]))
    }

    /// Messages closed-loop source `source` has outstanding now, and the
    /// most it ever had; `None` for a source that does not exist. Sources are
    /// numbered class by class, each class's sending hosts in host order.
    pub fn closed_loop_outstanding(&self, source: usize) -> Option<(u32, u32)> {
        self.traffic.closed_loop.get(source).map(|c| (c.outstanding, c.peak_outstanding))
    }

    /// Name of the event queue in use.
    pub fn event_queue_name(&self) -> &'static str {
        self.queue.name()
    }
}
