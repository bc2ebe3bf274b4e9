//! The report of a run: numbers in the units of SPEC "Units and definitions",
//! each with its sample size.

use serde::Serialize;

use super::{DropReason, FlowStats, LogHistogram};
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
    /// Generation → last byte consumed.
    pub latency: LatencySummary,
    /// First byte injected → last byte consumed.
    pub network_latency: LatencySummary,
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
}

/// Everything a run reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResults {
    /// Simulated time reached.
    pub time_ps: u64,
    /// Start of the measurement window.
    pub warmup_ps: u64,
    /// Window length.
    pub window_ps: u64,
    /// Events handled.
    pub events: u64,
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
    /// Accepted traffic as a fraction of the hosts' total data rate.
    pub accepted_fraction: f64,
    /// Accepted traffic in bytes/ns/switch (papers 002/003).
    pub accepted_bytes_per_ns_per_switch: f64,
    /// Accepted traffic in bits/µs, all hosts together (paper 004).
    pub accepted_bits_per_us: f64,
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
    /// Injection queue sizes.
    pub injection_queue: InjectionQueueResult,
}

pub(crate) fn compute(sim: &Simulation) -> SimResults {
    let m = &sim.metrics;
    let window = sim.now.saturating_sub(m.warmup_ps);
    let w = window as f64;
    let host_rate = |h: u32| sim.ports[sim.hosts[h as usize].gp as usize].timing.bytes_per_ps();
    let total_rate: f64 = (0..sim.hosts.len() as u32).map(host_rate).sum();
    let frac = |bytes: u64, rate: f64| if w > 0.0 && rate > 0.0 { bytes as f64 / (w * rate) } else { 0.0 };

    // The capacity a class's offered fraction is relative to: the links of
    // its sending hosts (each host of a trace once per class and once per SL
    // it sends on).
    let mut class_rate = vec![0.0f64; sim.classes.len()];
    let mut sl_rate = [0.0f64; 16];
    for s in &sim.sources {
        let r = host_rate(s.host);
        class_rate[s.class as usize] += r;
        sl_rate[sim.classes[s.class as usize].sl as usize & 15] += r;
    }
    for t in &sim.traces {
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
    let flow = |name: String, sl: u8, f: &FlowStats, rate: f64| FlowResult {
        name,
        sl,
        generated_packets: f.generated_packets,
        delivered_packets: f.delivered_packets,
        generated_bytes: f.generated_bytes,
        delivered_bytes: f.delivered_bytes,
        offered_fraction: frac(f.generated_bytes, rate),
        accepted_fraction: frac(f.delivered_bytes, rate),
        latency: LatencySummary::of(&f.latency),
        network_latency: LatencySummary::of(&f.network_latency),
    };
    let classes: Vec<FlowResult> = sim
        .classes
        .iter()
        .zip(&m.classes)
        .enumerate()
        .map(|(i, (c, f))| flow(c.name.clone(), c.sl, f, class_rate[i]))
        .collect();
    let mut sls = Vec::new();
    for (sl, f) in m.sls.iter().enumerate() {
        if let Some(f) = f {
            sls.push(flow(format!("SL{sl}"), sl as u8, f, sl_rate[sl]));
        }
    }
    let offered: u64 = m.classes.iter().map(|f| f.generated_bytes).sum();
    let accepted: u64 = m.classes.iter().map(|f| f.delivered_bytes).sum();

    let nvl = sim.p.nvl;
    let mut ports = Vec::new();
    for (gp, pm) in sim.ports.iter().enumerate() {
        if pm.peer == NONE {
            continue;
        }
        let peer = &sim.ports[pm.peer as usize];
        let mut busy = m.busy_ps[gp * nvl..(gp + 1) * nvl].to_vec();
        // A packet still on the wire counted its whole transmission; keep only
        // the part up to now.
        let tx = &sim.tx[gp];
        if tx.busy && tx.busy_until > sim.now {
            let s = tx.sending_slot as usize;
            busy[s] = busy[s].saturating_sub(tx.busy_until - sim.now.max(m.warmup_ps).min(tx.busy_until));
        }
        let u = |b: u64| if w > 0.0 { b as f64 / w } else { 0.0 };
        ports.push(PortResult {
            node: sim.node_names[pm.node as usize].clone(),
            port: pm.port,
            peer_node: sim.node_names[peer.node as usize].clone(),
            peer_port: peer.port,
            utilization: u(busy.iter().sum()),
            vl_utilization: busy.iter().map(|&b| u(b)).collect(),
        });
    }
    let hs = &sim.host_state;
    SimResults {
        time_ps: sim.now,
        warmup_ps: m.warmup_ps,
        window_ps: window,
        events: m.events,
        generated: m.generated,
        delivered: m.delivered,
        dropped: m.dropped,
        in_flight: sim.arena.live() as u64,
        offered_fraction: frac(offered, total_rate),
        accepted_fraction: frac(accepted, total_rate),
        accepted_bytes_per_ns_per_switch: if w > 0.0 && !sim.switches.is_empty() {
            accepted as f64 / (w / 1e3) / sim.switches.len() as f64
        } else {
            0.0
        },
        accepted_bits_per_us: if w > 0.0 { accepted as f64 * 8.0 / (w / 1e6) } else { 0.0 },
        classes,
        sls,
        ports,
        vl_of_slot: (0..nvl as u8).map(|s| sim.vl_of_slot(s)).collect(),
        drops: DropReason::ALL.iter().map(|r| (r.name().to_string(), m.drops[*r as usize])).collect(),
        injection_queue: InjectionQueueResult {
            total_packets: hs.iter().map(|h| h.queued).sum(),
            max_host_packets: hs.iter().map(|h| h.queued).max().unwrap_or(0),
            peak_host_packets: hs.iter().map(|h| h.peak).max().unwrap_or(0),
        },
    }
}
