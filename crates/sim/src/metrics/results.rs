//! The report of a run: numbers in the units of SPEC "Units and definitions",
//! each with its sample size.

use serde::Serialize;

use super::{ConnectionResult, DropReason, FlowStats, LogHistogram, WarmupState, WindowSample};
use crate::sim::{Simulation, NONE};

/// Latency statistics of one flow, in picoseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Packets measured.
    pub count: u64,
    /// Exact mean.
    pub mean_ps: Option<f64>,
    /// Median (within 3.1 %).
    pub p50_ps: Option<u64>,
    /// 99th percentile (within 3.1 %).
    pub p99_ps: Option<u64>,
    /// Exact minimum.
    pub min_ps: Option<u64>,
    /// Exact maximum.
    pub max_ps: Option<u64>,
}

impl LatencySummary {
    fn of(h: &LogHistogram) -> Self {
        LatencySummary {
            count: h.count(),
            mean_ps: h.mean(),
            p50_ps: h.quantile(0.5),
            p99_ps: h.quantile(0.99),
            min_ps: h.min(),
            max_ps: h.max(),
        }
    }
}

/// Traffic and latency of one class or SL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowResult {
    /// Class name, or `SL<n>`.
    pub name: String,
    /// Service level.
    pub sl: u8,
    /// Packets generated in the window.
    pub generated_packets: u64,
    /// Packets delivered in the window.
    pub delivered_packets: u64,
    /// Wire bytes of the packets generated in the window.
    pub generated_bytes: u64,
    /// Wire bytes of the packets delivered in the window.
    pub delivered_bytes: u64,
    /// Offered wire bytes ÷ (window × data rate of the sending hosts).
    pub offered_fraction: f64,
    /// Delivered wire bytes ÷ the same.
    pub accepted_fraction: f64,
    /// Offered wire bytes per ns of window per switch of the fabric.
    pub offered_bytes_per_ns_per_switch: f64,
    /// Delivered wire bytes per ns of window per switch of the fabric.
    pub accepted_bytes_per_ns_per_switch: f64,
    /// Generation → last byte consumed.
    pub latency: LatencySummary,
    /// First byte injected → last byte consumed.
    pub network_latency: LatencySummary,
    /// Messages completed in the window (see `hca/transport.rs`).
    pub messages_completed: u64,
    /// Message completion time: generation of the message → its last packet
    /// delivered, or its acknowledgement back at the source.
    pub message_completion: LatencySummary,
    /// Message network latency as ib_flit_sim measures it: first byte of the
    /// message's first packet onto the source link → last byte of its last
    /// packet consumed (no source queueing, no acknowledgement).
    pub message_network_latency: LatencySummary,
}

/// Utilization of one transmitter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortResult {
    /// Node name.
    pub node: String,
    /// Port number.
    pub port: u8,
    /// Node at the other end.
    pub peer_node: String,
    /// Port at the other end.
    pub peer_port: u8,
    /// Busy fraction of the window.
    pub utilization: f64,
    /// Busy fraction per VL slot (data VLs, then VL15; see [`SimResults::vl_of_slot`]).
    pub vl_utilization: Vec<f64>,
}

/// Injection (SL send) queues of the hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InjectionQueueResult {
    /// Packets waiting in all hosts' send queues now.
    pub total_packets: u64,
    /// Most packets waiting at one host now.
    pub max_host_packets: u64,
    /// Most packets ever waiting at one host.
    pub peak_host_packets: u64,
    /// Of `total_packets`, arrivals that bounded source queues
    /// (`hca.source_queue_packets`) hold as a count, not as packets.
    pub deferred_packets: u64,
}

/// Where `fully-adaptive` selection sent packets (paper 002), counted per
/// switch hop since time 0; all zero under other policies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FullyAdaptiveResult {
    /// Hops on an adaptive (minimal) option.
    pub adaptive_hops: u64,
    /// Hops on the escape option into the next switch's adaptive part.
    pub escape_hops: u64,
    /// Hops on the escape option into the next switch's escape part.
    pub escape_queue_hops: u64,
}

/// The transport layer's state (see `hca/transport.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransportResult {
    /// Flows (source, destination, SL, class) that have sent a message.
    pub flows: u64,
    /// Messages not complete yet.
    pub open_messages: u64,
    /// Data packets delivered out of PSN order.
    pub out_of_order: u64,
    /// Most messages a closed-loop source ever had outstanding.
    pub closed_loop_peak_outstanding: u32,
    /// Congestion notifications (BECN) that reached their source, since time 0.
    pub congestion_notifications: u64,
    /// Packets the switches marked FECN (`mechanisms.fecn`), since time 0.
    pub fecn_marked: u64,
    /// Messages given up because a packet or acknowledgement of theirs was
    /// dropped (there is no retransmission), since time 0.
    pub lost_messages: u64,
}

/// What the partial-deadlock scan saw (see `watchdog.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WatchdogResult {
    /// Scans done.
    pub scans: u64,
    /// Most buffers whose head packet was blocked for a whole watchdog period
    /// at one scan: congestion the scan judged (not a deadlock, or the run
    /// would have stopped).
    pub max_stuck_buffers: u64,
}

/// Everything a run reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResults {
    /// Simulated time reached.
    pub time_ps: u64,
    /// Start of the measurement window (now, while automatic warm-up is pending;
    /// a fixed warm-up not reached yet is reported as configured, window 0).
    pub warmup_ps: u64,
    /// How it was chosen: `fixed`, `detected`, `not-stabilised` (automatic
    /// warm-up gave up at its maximum: latency unbounded, a saturation signal)
    /// or `pending` (automatic, not decided yet: nothing measured).
    pub warmup_status: String,
    /// Automatic warm-up: whether the run became stationary (`None` when fixed).
    pub warmup_detected: Option<bool>,
    /// Automatic warm-up: the windows sampled until the decision.
    pub warmup_series: Vec<WindowSample>,
    /// The windows of the measurement (the auto warm-up's window length, or
    /// its default with a fixed warm-up), complete ones only.
    pub measurement_series: Vec<WindowSample>,
    /// Whether the measurement was stationary by the warm-up detector's test
    /// over all its windows (no backlog growth, no latency trend): `false`
    /// means queues or latency kept growing while measured, so the figures
    /// depend on the run length (past saturation, or a warm-up too short).
    /// `None` with fewer than 3 windows measured.
    pub stationary: Option<bool>,
    /// Window length.
    pub window_ps: u64,
    /// Events handled.
    pub events: u64,
    /// Events handled by kind (event name → count; kinds never handled are
    /// left out): which parts of the model the run's time went to.
    pub events_by_kind: std::collections::BTreeMap<&'static str, u64>,
    /// Crossbar grants since time 0 (each packet counts once per switch it
    /// crosses, each multicast copy once): `events / switch_hops` is the
    /// engine's cost per switch hop.
    pub switch_hops: u64,
    /// The time series per link and VL (`series_interval_ns`), or `None`.
    pub series: Option<crate::metrics::series::SeriesRows>,
    /// Packets generated since time 0.
    pub generated: u64,
    /// Packets delivered since time 0.
    pub delivered: u64,
    /// Packets dropped since time 0.
    pub dropped: u64,
    /// Packets still queued or on links.
    pub in_flight: u64,
    /// Offered load as a fraction of the hosts' total data rate.
    pub offered_fraction: f64,
    /// Offered traffic in bytes/ns/switch.
    pub offered_bytes_per_ns_per_switch: f64,
    /// Offered traffic in bits/µs, all hosts together.
    pub offered_bits_per_us: f64,
    /// Accepted traffic as a fraction of the hosts' total data rate.
    pub accepted_fraction: f64,
    /// Accepted traffic in bytes/ns/switch (papers 002/003).
    pub accepted_bytes_per_ns_per_switch: f64,
    /// Accepted traffic in bits/µs, all hosts together (paper 004).
    pub accepted_bits_per_us: f64,
    /// Generation → last byte consumed, all classes together.
    pub latency: LatencySummary,
    /// First byte injected → last byte consumed, all classes together.
    pub network_latency: LatencySummary,
    /// Messages completed in the window, all classes.
    pub messages_completed: u64,
    /// Message completion time, all classes.
    pub message_completion: LatencySummary,
    /// Message network latency (ib_flit_sim's), all classes.
    pub message_network_latency: LatencySummary,
    /// Flows and messages of the transport layer.
    pub transport: TransportResult,
    /// Packets delivered to each host since time 0, by host index (cabled CA
    /// ports in fabric order, as `Simulation::num_hosts` counts them).
    pub delivered_per_host: Vec<u64>,
    /// Copies the switches made of multicast packets since time 0 (each
    /// copy is delivered or dropped like any packet).
    pub multicast_copies: u64,
    /// Flow-control packets sent since time 0 where they are charged link
    /// time (`credit_packet_bytes` > 0; 0 otherwise).
    pub flow_control_packets: u64,
    /// Routing choices of `fully-adaptive` selection.
    pub fully_adaptive: FullyAdaptiveResult,
    /// Per traffic class.
    pub classes: Vec<FlowResult>,
    /// Per SL used by some class.
    pub sls: Vec<FlowResult>,
    /// Per cabled port.
    pub ports: Vec<PortResult>,
    /// VL number of each slot in `vl_utilization`.
    pub vl_of_slot: Vec<u8>,
    /// Drops by reason, all reasons listed.
    pub drops: Vec<(String, u64)>,
    /// Per CBR connection, in config order.
    pub connections: Vec<ConnectionResult>,
    /// Injection queue sizes.
    pub injection_queue: InjectionQueueResult,
    /// The partial-deadlock scan.
    pub watchdog: WatchdogResult,
}

pub(crate) fn compute(sim: &Simulation) -> SimResults {
    let m = &sim.metrics;
    // Undecided automatic warm-up has no start yet (`Time::MAX`): report now.
    let start = if m.detector.is_some() { m.warmup_ps.min(sim.now) } else { m.warmup_ps };
    let window = sim.now.saturating_sub(start);
    let w = window as f64;
    let per_switch = |bytes: u64| {
        if w > 0.0 && !sim.switches.lines.is_empty() {
            bytes as f64 / (w / 1e3) / sim.switches.lines.len() as f64
        } else {
            0.0
        }
    };
    let bits_per_us = |bytes: u64| if w > 0.0 { bytes as f64 * 8.0 / (w / 1e6) } else { 0.0 };
    let host_rate = |h: u32| sim.ports.timing(sim.hcas.model[h as usize].gp).bytes_per_ps();
    let total_rate: f64 = (0..sim.hcas.model.len() as u32).map(host_rate).sum();
    let frac = |bytes: u64, rate: f64| if w > 0.0 && rate > 0.0 { bytes as f64 / (w * rate) } else { 0.0 };

    // The capacity a class's offered fraction is relative to: the links of
    // its sending hosts (each host of a trace once per class and once per SL
    // it sends on).
    let mut class_rate = vec![0.0f64; sim.traffic.classes.len()];
    let mut sl_rate = [0.0f64; 16];
    for s in &sim.traffic.sources {
        let r = host_rate(s.host);
        class_rate[s.class as usize] += r;
        sl_rate[sim.traffic.classes[s.class as usize].sl as usize & 15] += r;
    }
    for t in &sim.traffic.traces {
        let mut prev = NONE;
        let mut hosts: Vec<u32> = t.senders.iter().map(|&(_, h)| h).collect();
        hosts.sort_unstable();
        for h in hosts {
            if h != prev {
                class_rate[t.class as usize] += host_rate(h);
                prev = h;
            }
        }
        for &(sl, h) in &t.senders {
            sl_rate[sl as usize] += host_rate(h);
        }
    }
    let mut pairs: Vec<(u8, u32)> = sim.traffic.connections.iter().map(|k| (k.sl, k.src)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    for &(sl, h) in &pairs {
        sl_rate[sl as usize & 15] += host_rate(h);
    }
    let mut senders: Vec<u32> = pairs.iter().map(|&(_, h)| h).collect();
    senders.sort_unstable();
    senders.dedup();
    for h in senders {
        class_rate[sim.traffic.conn_class as usize] += host_rate(h);
    }
    for cl in &sim.traffic.closed_loop {
        let r = host_rate(cl.src.host);
        class_rate[cl.src.class as usize] += r;
        sl_rate[sim.traffic.classes[cl.src.class as usize].sl as usize & 15] += r;
    }
    let transport = &sim.hcas.transport;
    if (transport.reply_class as usize) < class_rate.len() {
        // Any host may reply.
        class_rate[transport.reply_class as usize] = total_rate;
        sl_rate[transport.reply_sl as usize & 15] += total_rate;
    }
    let host_name = |h: u32| {
        let pm = sim.ports.model(sim.hcas.model[h as usize].gp);
        let n = &sim.node_names[sim.ports.node[sim.hcas.model[h as usize].gp as usize] as usize];
        if pm.port == 1 {
            n.clone()
        } else {
            format!("{n}:{}", pm.port)
        }
    };
    let connections = sim
        .traffic
        .connections
        .iter()
        .zip(&m.conns.stats)
        .map(|(k, s)| ConnectionResult {
            source: host_name(k.src),
            destination: host_name(k.dst),
            sl: k.sl,
            bandwidth_bps: k.bandwidth_bps,
            packet_bytes: (k.wire_bits / 8) as u32,
            iat_ps: s.iat_ps(),
            generated_packets: s.generated,
            delivered_packets: s.delivered,
            delivered_bps: if w > 0.0 { s.delivered_bytes as f64 * 8.0 / (w / 1e12) } else { 0.0 },
            measured_packets: s.measured,
            delay_mean_ps: (s.measured > 0).then(|| s.delay_sum_ps as f64 / s.measured as f64),
            delay_min_ps: (s.measured > 0).then_some(s.delay_min_ps),
            delay_max_ps: (s.measured > 0).then_some(s.delay_max_ps),
            delay_bins: s.delay_bins,
            jitter_bins: s.jitter_bins,
        })
        .collect();
    let flow = |name: String, sl: u8, f: &FlowStats, rate: f64| FlowResult {
        name,
        sl,
        generated_packets: f.generated_packets,
        delivered_packets: f.delivered_packets,
        generated_bytes: f.generated_bytes,
        delivered_bytes: f.delivered_bytes,
        offered_fraction: frac(f.generated_bytes, rate),
        accepted_fraction: frac(f.delivered_bytes, rate),
        offered_bytes_per_ns_per_switch: per_switch(f.generated_bytes),
        accepted_bytes_per_ns_per_switch: per_switch(f.delivered_bytes),
        latency: LatencySummary::of(&f.latency),
        network_latency: LatencySummary::of(&f.network_latency),
        messages_completed: f.messages_completed,
        message_completion: LatencySummary::of(&f.message_time),
        message_network_latency: LatencySummary::of(&f.message_network_time),
    };
    let classes: Vec<FlowResult> = sim
        .traffic
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| flow(c.name.clone(), c.sl, m.class(i).expect("a class's counts"), class_rate[i]))
        .collect();
    let mut sls = Vec::new();
    for (sl, f) in m.sls.iter().enumerate() {
        if let Some(f) = f {
            sls.push(flow(format!("SL{sl}"), sl as u8, f, sl_rate[sl]));
        }
    }
    let offered = m.all.generated_bytes;
    let accepted = m.all.delivered_bytes;

    let nvl = sim.layout.nvl;
    let mut ports = Vec::new();
    for (gp, pm) in sim.ports.models().enumerate() {
        if pm.peer == NONE {
            continue;
        }
        let peer = sim.ports.model(pm.peer);
        let tx = sim.ports.tx(gp as u32);
        let mut busy = m.busy_of_port(&tx.tally, &sim.layout, gp as u32);
        // A packet still on the wire counted its whole transmission; keep only
        // the part up to now.
        if tx.busy && tx.busy_until > sim.now {
            let s = tx.sending_slot as usize;
            busy[s] = busy[s].saturating_sub(tx.busy_until - sim.now.max(m.warmup_ps).min(tx.busy_until));
        }
        let u = |b: u64| if w > 0.0 { b as f64 / w } else { 0.0 };
        ports.push(PortResult {
            node: sim.node_names[sim.ports.node[gp] as usize].clone(),
            port: pm.port,
            peer_node: sim.node_names[sim.ports.node[pm.peer as usize] as usize].clone(),
            peer_port: peer.port,
            utilization: u(busy.iter().sum()),
            vl_utilization: busy.iter().map(|&b| u(b)).collect(),
        });
    }
    let hs = &sim.hcas.state;
    let state = m.detector.as_ref().map_or(WarmupState::Fixed, |d| d.state);
    SimResults {
        time_ps: sim.now,
        warmup_ps: start,
        warmup_status: state.name().to_string(),
        warmup_detected: match state {
            WarmupState::Fixed => None,
            s => Some(matches!(s, WarmupState::Detected(_))),
        },
        warmup_series: m.detector.as_ref().map_or_else(Vec::new, |d| d.series.clone()),
        measurement_series: m.measured.series.clone(),
        stationary: m.measured.stationary(),
        window_ps: window,
        events: m.events(),
        events_by_kind: crate::engine::Event::KIND_NAMES.iter().zip(m.events_by_kind).filter(|&(_, n)| n > 0).map(|(&k, n)| (k, n)).collect(),
        switch_hops: m.switch_hops,
        series: m.series.as_ref().map(|s| s.rows.clone()),
        generated: m.generated,
        delivered: m.delivered,
        dropped: m.dropped,
        in_flight: sim.arena.live() as u64 + sim.hcas.source_queues.deferred,
        offered_fraction: frac(offered, total_rate),
        offered_bytes_per_ns_per_switch: per_switch(offered),
        offered_bits_per_us: bits_per_us(offered),
        accepted_fraction: frac(accepted, total_rate),
        accepted_bytes_per_ns_per_switch: per_switch(accepted),
        accepted_bits_per_us: bits_per_us(accepted),
        latency: LatencySummary::of(&m.all.latency),
        network_latency: LatencySummary::of(&m.all.network_latency),
        messages_completed: m.all.messages_completed,
        message_completion: LatencySummary::of(&m.all.message_time),
        message_network_latency: LatencySummary::of(&m.all.message_network_time),
        transport: TransportResult {
            flows: transport.flows.len() as u64,
            open_messages: transport.open_messages(),
            out_of_order: transport.out_of_order(),
            closed_loop_peak_outstanding: sim.traffic.closed_loop.iter().map(|c| c.peak_outstanding).max().unwrap_or(0),
            congestion_notifications: transport.congestion_notifications,
            fecn_marked: sim.mech.fecn.as_ref().map_or(0, |f| f.marked),
            lost_messages: transport.lost,
        },
        multicast_copies: m.copies,
        flow_control_packets: sim.ports.fcp.sent,
        fully_adaptive: FullyAdaptiveResult { adaptive_hops: m.fa_hops[0], escape_hops: m.fa_hops[1], escape_queue_hops: m.fa_hops[2] },
        delivered_per_host: hs.iter().map(|h| h.delivered).collect(),
        classes,
        sls,
        ports,
        vl_of_slot: (0..nvl as u8).map(|s| sim.layout.vl_of_slot(s)).collect(),
        connections,
        drops: DropReason::ALL.iter().map(|r| (r.name().to_string(), m.drops[*r as usize])).collect(),
        injection_queue: InjectionQueueResult {
            total_packets: hs.iter().map(|h| h.queued).sum(),
            max_host_packets: hs.iter().map(|h| h.queued).max().unwrap_or(0),
            peak_host_packets: hs.iter().map(|h| h.peak).max().unwrap_or(0),
            deferred_packets: sim.hcas.source_queues.deferred,
        },
        watchdog: WatchdogResult { scans: sim.watchdog.scans, max_stuck_buffers: sim.watchdog.max_stuck },
    }
}
