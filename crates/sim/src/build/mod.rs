//! Building a [`Simulation`], in steps: the configuration is validated and
//! resolved on its own ([`params`]); the fabric is flattened into arrays
//! ([`topology`]); the ports get their buffers, credits and QoS tables
//! ([`ports`]); the workload is built ([`traffic`]); then the components are
//! assembled. Every error names the config key (or the fabric object) at
//! fault; after this a run can only fail by deadlock.

mod params;
mod ports;
mod topology;
mod traffic;

use ibnetsim_fabric::{Fabric, NodeId};
use ibnetsim_sm::{ForwardingTables, LidMap, MulticastTables, PathLabels, PathSl, NO_PATH};

use crate::config::SimConfig;
use crate::engine::{Event, EventQueue};
use crate::error::SimError;
use crate::hca::transport::Transport;
use crate::hca::backlog::SourceQueues;
use crate::hca::{Hcas, HostState};
use crate::link::wire_bytes;
use crate::mechanism::Mechanisms;
use crate::metrics::{ConnMetrics, Metrics};
use crate::packet::PacketArena;
use crate::qos::QosTables;
use crate::selection::{Candidate, Candidates, Selection, MAX_CANDIDATES};
use crate::sim::{Simulation, NONE};
use crate::switch::multicast::Multicast;
use crate::switch::{QueueBits, SwitchLine, SwitchState, Switches};
use crate::watchdog::Watchdog;

pub(crate) use params::check_data_vls;
pub use traffic::MAX_LOAD;

/// What the subnet manager hands the data plane: LIDs, unicast and multicast
/// forwarding tables, and the per-path SLs its routing engine chose.
pub(crate) struct Routing<'a> {
    pub lids: &'a LidMap,
    pub tables: &'a ForwardingTables,
    pub mfts: &'a MulticastTables,
    pub path_sl: &'a PathSl,
    pub labels: &'a PathLabels,
}

/// Checks everything about `c` that does not depend on the fabric (values,
/// delays, choices, buffers against the MTU), with the error building would
/// give: a scenario is validated with it before anything runs.
pub(crate) fn check_config(c: &SimConfig) -> Result<(), SimError> {
    let r = params::resolve(c)?;
    ports::buffers(c, r.params.output_buffers)?;
    traffic::check_classes(c)
}

pub(crate) fn build(fabric: &Fabric, routing: Routing<'_>, c: &SimConfig, qos: QosTables) -> Result<Simulation, SimError> {
    let Routing { lids, tables, mfts, path_sl, labels } = routing;
    let params::Resolved { layout, params: p, routing_ps, arbitration_ps, warmup_ps, detector, measured, queue, mut selection, arbiter } =
        params::resolve(c)?;
    let mut topo = topology::build(fabric, lids, tables, &layout)?;
    check_watchdog(c, &topo, routing_ps + arbitration_ps, p.watchdog_ps)?;
    let layout = layout.for_ports(topo.ports.len());
    let ports = ports::build(fabric, c, &p, &layout, &topo, &qos, arbiter)?;
    let npv = layout.port_slots();
    selection.prepare(npv);
    check_candidates(fabric, lids, &topo, &selection)?;
    check_escape_paths(c, lids, labels, &selection)?;
    // The routing stage lists more than one option only for these (`route`).
    let multi_option = selection.wants_all_paths() || selection.escape_paths();
    let switch_nodes: Vec<u32> = topo.switches.iter().map(|s| s.node).collect();
    let host_of = |n: NodeId, port: u8| match topo.host_of_gp[topo.gp(n, port) as usize] {
        NONE => None,
        h => Some(h),
    };
    let mcast = Multicast::new(mfts, &switch_nodes, host_of, |s, port| topo.sends_on(s, port), ports.inq_len());
    let (traffic, mut used_sls, reply_class) = traffic::build(fabric, c, &topo, &qos, &mcast)?;
    check_path_sls(path_sl, &topo, &qos, layout.data_vls, &mut used_sls)?;
    check_sent_vls_are_served(fabric, &topo, &ports, &traffic, path_sl)?;
    let mech = Mechanisms::build(selection, &c.mechanisms, topo.hosts.len(), npv, p.output_buffers, p.watchdog_ps)?;

    let nvl = layout.nvl;
    // The watchdog looks at every input queue and output buffer.
    let sim_buffers = ports.inq_len() + npv;
    let max_ports = topo.switches.iter().map(|s| s.num_ports).max().unwrap_or(0) as usize;
    let islip = if p.crossbar_arbiter == crate::switch::arbiter::CrossbarArbiter::Islip {
        let per_switch = |sm: &crate::switch::SwitchModel| sm.num_ports as usize * if p.crossbar == crate::config::CrossbarKind::Multiplexed { 1 } else { nvl };
        crate::switch::arbiter::islip::IslipState::new(topo.switches.iter().map(per_switch))
    } else {
        Default::default()
    };
    // Last: every check above reads the tables as given.
    let lft = topo.take_sendable_lft();
    let switches = Switches {
        lines: topo.switches.into_iter().map(|model| SwitchLine { model, state: SwitchState::default(), bits: QueueBits::default() }).collect(),
        lft: lft.into(),
        lft_stride: topo.lft_stride,
        labels: labels.clone(),
        more_bits: vec![QueueBits::default(); topo.more_bits_words as usize].into(),
        wait_bits: vec![0; topo.wait_words as usize].into(),
        routed: vec![crate::switch::RoutedHead::NONE; sim_buffers - npv].into(),
        routed_more: vec![Candidates::new(); if multi_option { sim_buffers - npv } else { 0 }].into(),
        mcast,
        scratch_req: vec![NONE; max_ports * nvl],
        scratch_opt: vec![Candidate::default(); max_ports * nvl],
        scratch_order: Vec::with_capacity(max_ports * layout.qpp),
        islip,
    };
    let source_queues = SourceQueues::new(c.hca.source_queue_packets, &traffic.sources, traffic.classes.len(), topo.hosts.len() as u32);
    let hcas = Hcas {
        source_queues,
        state: vec![HostState::default(); topo.hosts.len()].into(),
        model: topo.hosts.into(),
        lid_host: topo.lid_host,
        transport: Transport::new(&c.transport, reply_class),
        path_sl: path_sl.clone(),
    };
    let watchdog_ps = p.watchdog_ps;
    let mut sim = Simulation {
        node_names: fabric.nodes().iter().map(|n| n.name.clone()).collect(),
        layout,
        ports,
        switches,
        hcas,
        mech,
        now: 0,
        queue,
        arena: PacketArena::new(),
        metrics: Metrics::new(warmup_ps, traffic.classes.len(), &used_sls, npv, detector, measured),
        traffic,
        in_network: 0,
        last_progress: 0,
        deadlock: None,
        watchdog: Watchdog::new(sim_buffers, (watchdog_ps / 2).max(1)),
        next_housekeeping: 0,
        link_fold: crate::sim::LinkFold { port: NONE, at: 0, taken: false },
        p,
    };
    sim.update_housekeeping();
    for s in 0..sim.traffic.sources.len() {
        let at = sim.traffic.sources[s].due();
        sim.queue.push(0, at, Event::Generate { source: s as u32 });
    }
    for t in 0..sim.traffic.traces.len() {
        if let Some(at) = sim.traffic.traces[t].due() {
            sim.queue.push(0, at, Event::TraceNext { trace: t as u32 });
        }
    }
    for s in 0..sim.traffic.closed_loop.len() {
        // The whole window leaves at once.
        for _ in 0..sim.traffic.closed_loop[s].window {
            sim.queue.push(0, 0, Event::MessageNext { source: s as u32 });
        }
    }
    let series_ps = crate::config::ns_to_ps("series_interval_ns", c.series_interval_ns)?;
    if series_ps > 0 {
        sim.metrics.series = Some(crate::metrics::series::Series::new(series_ps, npv, sim.node_names.clone()));
        sim.update_housekeeping();
    }
    sim.metrics.conns = ConnMetrics::new(sim.traffic.connections.iter().map(|k| (k.wire_bits, k.bandwidth_bps)));
    for k in 0..sim.traffic.connections.len() {
        let at = sim.traffic.connections[k].due();
        sim.queue.push(0, at, Event::ConnNext { conn: k as u32 });
    }
    Ok(sim)
}

/// The watchdog must not mistake a packet that is simply still travelling
/// for a stall: it must exceed the slowest hop several times over.
fn check_watchdog(c: &SimConfig, topo: &topology::Topology, switch_ps: u64, watchdog_ps: u64) -> Result<(), SimError> {
    let slowest_hop = topo
        .ports
        .iter()
        .filter(|p| p.peer != NONE)
        .map(|p| &topo.timings[p.timing as usize])
        .map(|t| t.propagation_ps + t.ser_ps(wire_bytes(c.mtu_bytes, c.header_bytes + c.extra_header_bytes)))
        .max()
        .unwrap_or(0)
        + switch_ps;
    if watchdog_ps <= 4 * slowest_hop {
        return Err(SimError::config(
            "watchdog_ns",
            format!(
                "{} ns is too short: the slowest hop (cable, MTU packet and switch delays) takes {} ns, and the watchdog must exceed four of them",
                c.watchdog_ns,
                slowest_hop as f64 / 1e3
            ),
        ));
    }
    Ok(())
}

/// The SLs the routing engine gives paths between hosts must map to data VLs
/// too; they join the SLs in use (measured per SL).
fn check_path_sls(path_sl: &PathSl, topo: &topology::Topology, qos: &QosTables, data_vls: u8, used: &mut Vec<u8>) -> Result<(), SimError> {
    if path_sl.is_none() {
        return Ok(());
    }
    let mut seen = [false; 16];
    for s in &topo.hosts {
        for d in &topo.hosts {
            for dlid in d.base_lid..d.base_lid + d.lid_count {
                if let Some(sl) = path_sl.get(s.base_lid, dlid) {
                    seen[sl as usize & 15] = true;
                }
            }
        }
    }
    let path_sls: Vec<u8> = (0..16u8).filter(|&sl| seen[sl as usize]).collect();
    traffic::check_sls_have_data_vls(qos, &path_sls, data_vls, &format!("the routing engine's path SLs {path_sls:?}"))?;
    used.extend(path_sls);
    used.sort_unstable();
    used.dedup();
    Ok(())
}

/// Every VL a host sends data on from the start must be one its port's VL
/// arbiter sends (an entry of weight > 0 in its high or low table): packets
/// on any other VL would wait in the host forever, which the watchdog would
/// report only as starvation once the run stalls. The senders are the
/// sources of the open-loop classes (not VL15), the traces, the closed-loop
/// classes and the connections, each on its SL or, where the routing engine
/// gives one, on its path's SL. (A class without load only carries what
/// `Simulation::inject` puts in; switch ports are left to the watchdog,
/// since which of them a class crosses depends on its destinations.)
fn check_sent_vls_are_served(
    fabric: &Fabric,
    topo: &topology::Topology,
    ports: &crate::port::Ports,
    w: &crate::traffic::Workload,
    path_sl: &PathSl,
) -> Result<(), SimError> {
    let mut sends = vec![[false; 16]; topo.hosts.len()];
    let mut mark = |h: u32, sl: u8| sends[h as usize][sl as usize & 15] = true;
    for s in &w.sources {
        let k = &w.classes[s.class as usize];
        if !k.vl15 {
            mark(s.host, k.sl);
        }
    }
    for t in &w.traces {
        t.senders.iter().for_each(|&(sl, h)| mark(h, sl));
    }
    for s in &w.closed_loop {
        mark(s.src.host, w.classes[s.src.class as usize].sl);
    }
    for k in &w.connections {
        mark(k.src, k.sl);
    }
    for (h, host) in topo.hosts.iter().enumerate() {
        let mut sls = sends[h];
        if !sls.iter().any(|&b| b) {
            continue;
        }
        if !path_sl.is_none() {
            // A path's SL replaces the class's where the engine gives one.
            for d in &topo.hosts {
                for dlid in d.base_lid..d.base_lid + d.lid_count {
                    if let Some(sl) = path_sl.get(host.base_lid, dlid) {
                        sls[sl as usize & 15] = true;
                    }
                }
            }
        }
        let pm = ports.model(host.gp);
        let table = ports.arb_table(host.gp);
        for sl in (0..16u8).filter(|&sl| sls[sl as usize]) {
            let vl = ports.sl2vl.vl(ports.node[host.gp as usize], 0, pm.port, sl);
            if !ports.arbiter.serves(table, vl) {
                return Err(SimError::config(
                    "vl_arbitration",
                    format!(
                        "{}/{} sends SL {sl} on VL {vl}, which the port's VL arbitration table never sends (no entry of weight > 0 \
                         in its high or low table): those packets would wait forever. Give VL {vl} a weight there, or map SL {sl} to \
                         a VL the table sends",
                        fabric.node(NodeId(ports.node[host.gp as usize])).name,
                        pm.port
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `fully-adaptive` selection needs LFT entries labelled escape and adaptive
/// (the `fa` routing engine) and VL buffers split into an adaptive and an
/// escape part; its options (adaptive ports, and the escape port towards both
/// parts) must fit a candidate list.
fn check_escape_paths(c: &SimConfig, lids: &LidMap, labels: &PathLabels, selection: &Selection) -> Result<(), SimError> {
    if !selection.escape_paths() {
        return Ok(());
    }
    if !labels.as_slice().contains(&ibnetsim_sm::RouteLabel::Escape) {
        return Err(SimError::config(
            "selection",
            "'fully-adaptive' needs routing options labelled escape and adaptive: route with the 'fa' engine (LMC ≥ 1)",
        ));
    }
    if c.switch.input_partition_bytes.len() != 2 {
        return Err(SimError::config(
            "switch.input_partition_bytes",
            format!(
                "'fully-adaptive' selection splits each input VL buffer into [adaptive, escape] bytes (e.g. [{half}, {half}]); {} given",
                c.switch.input_partition_bytes.len(),
                half = c.switch.input_buffer_bytes / 2
            ),
        ));
    }
    let options = (1usize << lids.lmc()) - 1 + 2;
    if options > MAX_CANDIDATES {
        return Err(SimError::config(
            "selection",
            format!("'fully-adaptive' with LMC {} lists up to {options} options; at most {MAX_CANDIDATES} fit (use LMC ≤ 3)", lids.lmc()),
        ));
    }
    Ok(())
}

/// Adaptive selection lists every LID of the destination: keep within the
/// fixed capacity of a candidate list.
fn check_candidates(fabric: &Fabric, lids: &LidMap, topo: &topology::Topology, selection: &Selection) -> Result<(), SimError> {
    if selection.wants_all_paths() && lids.lmc() > 4 {
        for (i, s) in topo.switches.iter().enumerate() {
            for h in &topo.hosts {
                let mut ports_seen = [false; 256];
                let mut distinct = 0;
                for l in h.base_lid as usize..(h.base_lid + h.lid_count) as usize {
                    let p = topo.lft[i * topo.lft_stride + l];
                    if p != NO_PATH && !ports_seen[p as usize] {
                        ports_seen[p as usize] = true;
                        distinct += 1;
                    }
                }
                if distinct > MAX_CANDIDATES {
                    return Err(SimError::config(
                        "selection",
                        format!(
                            "switch '{}' has {distinct} distinct ports towards one destination; adaptive selection handles at most {MAX_CANDIDATES}",
                            fabric.node(NodeId(s.node)).name
                        ),
                    ));
                }
            }
        }
    }

    Ok(())
}

