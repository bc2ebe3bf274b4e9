//! Building a [`Simulation`]: validation of the configuration against the
//! fabric, LIDs and tables, and the flattening of everything into arrays.
//! Every error names the config key (or the fabric object) at fault; after this
//! a run can only fail by deadlock.

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId, PortNum};
use ibnetsim_sm::{ForwardingTables, LidMap, NO_PATH};

use crate::arbitration::{VlArbTable, VlArbiter};
use crate::config::{ns_to_ps, Sl2VlConfig, SimConfig, VlArbitrationConfig};
use crate::credits::{blocks_for, buffer_blocks, Credits, CREDIT_BYTES};
use crate::engine::{Event, EventQueue, Queue, Time};
use crate::error::SimError;
use crate::link::{wire_bytes, LinkTiming};
use crate::metrics::{ConnMetrics, Metrics, WarmupDetector};
use crate::packet::{PacketArena, PacketQueue};
use crate::qos::{QosTables, Sl2VlMap, VlArbConfig, VlArbMap};
use crate::selection::{Selection, MAX_CANDIDATES};
use crate::hca::{Hcas, HostModel, HostState};
use crate::layout::Layout;
use crate::mechanism::Mechanisms;
use crate::port::{PortModel, Ports, TxState};
use crate::sim::{Params, Simulation, NONE};
use crate::switch::{SwitchModel, SwitchState, Switches};
use crate::traffic::pattern::DestMap;
use crate::traffic::{Class, Connection, PathBits, PayloadSize, Pattern, Process, ProcessKind, Source, Trace, Workload};
use crate::watchdog::Watchdog;

/// Largest payload IBA allows on VL15 (management datagrams are 256 B).
pub const VL15_MAX_PAYLOAD: u32 = 256;

/// Highest offered load per source accepted, as a multiple of its link rate:
/// beyond this an open-loop source only fills memory.
pub const MAX_LOAD: f64 = 100.0;

/// The QoS tables a config describes (the same on every port).
pub fn qos_from_config(c: &SimConfig) -> Result<QosTables, SimError> {
    check_data_vls(c.data_vls)?;
    let sl2vl = match &c.sl2vl {
        Sl2VlConfig::Modulo => Sl2VlMap::modulo(c.data_vls),
        Sl2VlConfig::Table { vl_of_sl } => {
            if vl_of_sl.len() != 16 {
                return Err(SimError::config(
                    "sl2vl.vl_of_sl",
                    format!("needs one VL for each of the 16 SLs, got {} entries", vl_of_sl.len()),
                ));
            }
            let mut m = [0u8; 16];
            for (sl, &vl) in vl_of_sl.iter().enumerate() {
                if vl >= c.data_vls {
                    return Err(SimError::config(
                        format!("sl2vl.vl_of_sl[{sl}]"),
                        format!("VL {vl} is not a data VL (data VLs are 0..={})", c.data_vls - 1),
                    ));
                }
                m[sl] = vl;
            }
            Sl2VlMap::Uniform(m)
        }
    };
    let table = match &c.vl_arbitration {
        VlArbitrationConfig::Iba(t) if t.high.is_empty() && t.low.is_empty() => VlArbConfig::uniform(c.data_vls),
        VlArbitrationConfig::Iba(t) => t.clone(),
        VlArbitrationConfig::RoundRobin => VlArbConfig::uniform(c.data_vls),
    };
    Ok(QosTables { sl2vl, vlarb: VlArbMap::uniform(table) })
}

fn check_data_vls(v: u8) -> Result<(), SimError> {
    if !(1..=15).contains(&v) {
        return Err(SimError::config("data_vls", format!("must be 1..=15 (VL15 is added for management), got {v}")));
    }
    Ok(())
}

fn resolve_node(fabric: &Fabric, what: &str, key: &str) -> Result<NodeId, SimError> {
    fabric.resolve(what).map_err(|e| SimError::config(key, e.to_string()))
}

pub(crate) fn build(
    fabric: &Fabric,
    lids: &LidMap,
    tables: &ForwardingTables,
    c: &SimConfig,
    qos: QosTables,
) -> Result<Simulation, SimError> {
    check_data_vls(c.data_vls)?;
    if ![256, 512, 1024, 2048, 4096].contains(&c.mtu_bytes) {
        return Err(SimError::config("mtu_bytes", format!("must be 256, 512, 1024, 2048 or 4096, got {}", c.mtu_bytes)));
    }
    if c.extra_header_bytes > 1024 {
        return Err(SimError::config("extra_header_bytes", format!("{} is beyond any IBA header stack", c.extra_header_bytes)));
    }
    let sc = &c.switch;
    if !sc.speedup.is_finite() || sc.speedup <= 0.0 {
        return Err(SimError::config("switch.speedup", format!("must be a finite number > 0, got {}", sc.speedup)));
    }
    let routing_ps = ns_to_ps("switch.routing_delay_ns", sc.routing_delay_ns)?;
    let arbitration_ps = ns_to_ps("switch.arbitration_delay_ns", sc.arbitration_delay_ns)?;
    let mut warmup_ps = ns_to_ps("warmup_ns", c.warmup_ns)?;
    let detector = match &c.auto_warmup {
        None => None,
        Some(a) => {
            if warmup_ps != 0 {
                return Err(SimError::config("warmup_ns", "must be 0 when auto_warmup is set (the warm-up is detected)"));
            }
            let window_ps = ns_to_ps("auto_warmup.window_ns", a.window_ns)?;
            if window_ps == 0 {
                return Err(SimError::config("auto_warmup.window_ns", "must be > 0"));
            }
            if a.windows < 3 {
                return Err(SimError::config("auto_warmup.windows", format!("must be at least 3 to see a trend, got {}", a.windows)));
            }
            if !(a.tolerance > 0.0 && a.tolerance < 1.0) {
                return Err(SimError::config("auto_warmup.tolerance", format!("must be a fraction in (0, 1), got {}", a.tolerance)));
            }
            let max_ps = ns_to_ps("auto_warmup.max_ns", a.max_ns)?;
            if max_ps < window_ps * a.windows as u64 {
                return Err(SimError::config(
                    "auto_warmup.max_ns",
                    format!("{} ns is shorter than the windows looked at (windows × window_ns = {} ns)", a.max_ns, a.window_ns * a.windows as f64),
                ));
            }
            warmup_ps = Time::MAX;
            Some(WarmupDetector::new(window_ps, a.windows as usize, a.tolerance, max_ps))
        }
    };
    let watchdog_ps = ns_to_ps("watchdog_ns", c.watchdog_ns)?;
    if watchdog_ps == 0 {
        return Err(SimError::config("watchdog_ns", "must be > 0"));
    }
    let queue = Queue::from_name(&c.event_queue).ok_or_else(|| {
        SimError::config(
            "event_queue",
            format!("unknown event queue '{}' (known: {})", c.event_queue, Queue::NAMES.join(", ")),
        )
    })?;
    let mut selection = Selection::from_name(&c.selection, "selection")?;
    let arbiter = match c.vl_arbitration {
        VlArbitrationConfig::Iba(_) => VlArbiter::from_name("iba", "vl_arbitration.kind")?,
        VlArbitrationConfig::RoundRobin => VlArbiter::from_name("round-robin", "vl_arbitration.kind")?,
    };
    let data_vls = c.data_vls;
    let nvl = data_vls as usize + 1;
    let vl15_slot = data_vls;
    let mut sl_order = [0u8; 16];
    {
        let mut seen = [false; 16];
        let mut k = 0;
        for (i, &sl) in c.hca.sl_priority.iter().enumerate() {
            if sl > 15 || seen[sl as usize] {
                return Err(SimError::config(
                    format!("hca.sl_priority[{i}]"),
                    format!("SL {sl} is {}", if sl > 15 { "not an SL (0..=15)" } else { "listed twice" }),
                ));
            }
            seen[sl as usize] = true;
            sl_order[k] = sl;
            k += 1;
        }
        for sl in 0..16u8 {
            if !seen[sl as usize] {
                sl_order[k] = sl;
                k += 1;
            }
        }
    }

    // Ports.
    let mut node_port_base = Vec::with_capacity(fabric.num_nodes());
    let mut switches = Vec::new();
    let mut nports = 0u32;
    for n in fabric.ids() {
        node_port_base.push(nports);
        nports += fabric.node(n).num_ports as u32;
    }
    let mut bits_words_total = 0u32;
    let mut wait_words_total = 0u32;
    let mut switch_of_node = vec![NONE; fabric.num_nodes()];
    for n in fabric.switches() {
        let np = fabric.node(n).num_ports as u32;
        let words = (np * nvl as u32).div_ceil(64);
        switch_of_node[n.index()] = switches.len() as u32;
        switches.push(SwitchModel {
            node: n.0,
            port_base: node_port_base[n.index()],
            num_ports: np,
            bits_base: bits_words_total,
            bits_words: words,
            wait_base: wait_words_total,
        });
        bits_words_total += words;
        wait_words_total += words * np;
    }

    // Hosts: cabled CA ports in fabric order, each must own LIDs.
    let mut hosts = Vec::new();
    let mut host_of_gp = vec![NONE; nports as usize];
    for end in fabric.ca_ports() {
        let pl = lids.of_port(end.node, end.port).ok_or_else(|| {
            SimError::config(
                "lids",
                format!("CA port {}:{} has no LID; assign LIDs to every cabled CA port", fabric.node(end.node).name, end.port),
            )
        })?;
        let gp = node_port_base[end.node.index()] + end.port as u32 - 1;
        host_of_gp[gp as usize] = hosts.len() as u32;
        hosts.push(HostModel { gp, node: end.node.0, base_lid: pl.base, lid_count: pl.count() as u16 });
    }
    let num_hosts = hosts.len() as u32;

    let mut ports = Vec::with_capacity(nports as usize);
    for n in fabric.ids() {
        let node = fabric.node(n);
        for p in 1..=node.num_ports {
            let gp = node_port_base[n.index()] + p as u32 - 1;
            let (peer, timing) = match node.ports[p as usize] {
                Some(l) => {
                    let link = fabric.link(l);
                    let o = link.other(LinkEnd { node: n, port: p });
                    (node_port_base[o.node.index()] + o.port as u32 - 1, LinkTiming::new(&link.spec))
                }
                None => (NONE, LinkTiming::new(&Default::default())),
            };
            ports.push(PortModel {
                node: n.0,
                port: p,
                peer,
                is_switch: node.kind.is_switch(),
                switch: switch_of_node[n.index()],
                host: host_of_gp[gp as usize],
                timing,
            });
        }
    }

    // The watchdog must not mistake a packet that is simply still travelling
    // for a stall: it must exceed the slowest hop several times over.
    let slowest_hop = ports
        .iter()
        .filter(|p| p.peer != NONE)
        .map(|p| p.timing.propagation_ps + p.timing.ser_ps(wire_bytes(c.mtu_bytes, c.extra_header_bytes)))
        .max()
        .unwrap_or(0)
        + routing_ps
        + arbitration_ps;
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

    // Forwarding tables, flattened.
    let top = lids.top_lid() as usize;
    let lft_stride = top + 1;
    let mut lft = vec![NO_PATH; switches.len() * lft_stride];
    for (i, s) in switches.iter().enumerate() {
        let t = tables.lft(NodeId(s.node)).ok_or_else(|| {
            SimError::config(
                "tables",
                format!("switch '{}' has no forwarding table", fabric.node(NodeId(s.node)).name),
            )
        })?;
        let e = t.entries();
        let n = e.len().min(lft_stride);
        lft[i * lft_stride..i * lft_stride + n].copy_from_slice(&e[..n]);
    }
    let mut lid_host = vec![NONE; lft_stride];
    for (h, hm) in hosts.iter().enumerate() {
        lid_host[hm.base_lid as usize..hm.base_lid as usize + hm.lid_count as usize].fill(h as u32);
    }

    // Packet sizes and buffers.
    let max_wire = wire_bytes(c.mtu_bytes, c.extra_header_bytes);
    let max_blocks = blocks_for(max_wire) as u32;
    let vl15_blocks = blocks_for(wire_bytes(VL15_MAX_PAYLOAD, c.extra_header_bytes)) as u32;
    let output_buffers = sc.output_buffer_bytes > 0;
    let vl15_wire = wire_bytes(VL15_MAX_PAYLOAD, c.extra_header_bytes);
    let check_buf = |key: &str, bytes: u32, need_blocks: u32, what: &str| -> Result<u32, SimError> {
        let b = buffer_blocks(bytes);
        if b < need_blocks {
            let wire = if what == "VL15 packet" { vl15_wire } else { max_wire };
            return Err(SimError::config(
                key,
                format!(
                    "{bytes} bytes hold {b} credits of {CREDIT_BYTES} B, but virtual cut-through needs room for a whole {what} ({wire} B on the wire = {need_blocks} credits = {} B)",
                    need_blocks * CREDIT_BYTES
                ),
            ));
        }
        Ok(b)
    };
    let sw_in = check_buf("switch.input_buffer_bytes", sc.input_buffer_bytes, max_blocks, "MTU packet")?;
    let sw_out =
        if output_buffers { check_buf("switch.output_buffer_bytes", sc.output_buffer_bytes, max_blocks, "MTU packet")? } else { 0 };
    let vl15 = check_buf("switch.vl15_buffer_bytes", sc.vl15_buffer_bytes, vl15_blocks, "VL15 packet")?;
    let ca_in = check_buf("hca.receive_buffer_bytes", c.hca.receive_buffer_bytes, max_blocks, "MTU packet")?;
    let ca_out = check_buf("hca.send_buffer_bytes", c.hca.send_buffer_bytes, max_blocks, "MTU packet")?;
    let npv = nports as usize * nvl;
    selection.prepare(npv);
    let mut in_cap = vec![0u32; npv];
    let mut out_cap = vec![0u32; npv];
    for (gp, pm) in ports.iter().enumerate() {
        for s in 0..nvl {
            let i = gp * nvl + s;
            if s == vl15_slot as usize {
                in_cap[i] = vl15;
                out_cap[i] = vl15;
            } else if pm.is_switch {
                in_cap[i] = sw_in;
                out_cap[i] = sw_out;
            } else {
                in_cap[i] = ca_in;
                out_cap[i] = ca_out;
            }
        }
    }
    for (k, o) in c.buffer_overrides.iter().enumerate() {
        let key = format!("buffer_overrides[{k}]");
        let n = resolve_node(fabric, &o.node, &format!("{key}.node"))?;
        let node = fabric.node(n);
        if o.port == 0 || o.port > node.num_ports {
            return Err(SimError::config(
                format!("{key}.port"),
                format!("port {} is out of range for node '{}', which has ports 1..={}", o.port, node.name, node.num_ports),
            ));
        }
        let slots: Vec<usize> = match o.vl {
            Some(v) if v >= data_vls => {
                return Err(SimError::config(
                    format!("{key}.vl"),
                    format!("VL {v} is not a data VL (data VLs are 0..={})", data_vls - 1),
                ))
            }
            Some(v) => vec![v as usize],
            None => (0..data_vls as usize).collect(),
        };
        let gp = (node_port_base[n.index()] + o.port as u32 - 1) as usize;
        if let Some(b) = o.input_bytes {
            let b = check_buf(&format!("{key}.input_bytes"), b, max_blocks, "MTU packet")?;
            for &s in &slots {
                in_cap[gp * nvl + s] = b;
            }
        }
        if let Some(b) = o.output_bytes {
            if node.kind.is_switch() && !output_buffers {
                return Err(SimError::config(
                    format!("{key}.output_bytes"),
                    "switches have no output buffers (switch.output_buffer_bytes = 0)",
                ));
            }
            let b = check_buf(&format!("{key}.output_bytes"), b, max_blocks, "MTU packet")?;
            for &s in &slots {
                out_cap[gp * nvl + s] = b;
            }
        }
    }
    let mut credit_init = vec![0u32; npv];
    for (gp, pm) in ports.iter().enumerate() {
        if pm.peer != NONE {
            for s in 0..nvl {
                credit_init[gp * nvl + s] = in_cap[pm.peer as usize * nvl + s];
            }
        }
    }

    // QoS.
    qos.vlarb.default.validate("vl_arbitration", data_vls)?;
    let mut arb_tables = vec![VlArbTable::from_config(&qos.vlarb.default)];
    let mut port_arb = vec![0u16; nports as usize];
    for (i, ((n, p), t)) in qos.vlarb.per_port.iter().enumerate() {
        let key = format!("vlarb.per_port[{i}]");
        if n.index() >= fabric.num_nodes() || *p == 0 || *p > fabric.node(*n).num_ports {
            return Err(SimError::config(&key, format!("no port {p} on node #{}", n.0)));
        }
        t.validate(&key, data_vls)?;
        arb_tables.push(VlArbTable::from_config(t));
        port_arb[(node_port_base[n.index()] + *p as u32 - 1) as usize] = (arb_tables.len() - 1) as u16;
    }

    // Adaptive selection lists every LID of the destination; keep within capacity.
    if selection.wants_all_paths() && lids.lmc() > 4 {
        for (i, s) in switches.iter().enumerate() {
            for h in &hosts {
                let mut ports_seen = [false; 256];
                let mut distinct = 0;
                for l in h.base_lid as usize..(h.base_lid + h.lid_count) as usize {
                    let p = lft[i * lft_stride + l];
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

    // Traffic.
    let nclasses = c.traffic.classes.len() + c.traffic.traces.len() + usize::from(!c.traffic.connections.is_empty());
    if nclasses > 255 {
        return Err(SimError::config("traffic", format!("at most 255 classes and traces together, got {nclasses}")));
    }
    let resolve_host = |what: &str| -> Result<u32, String> {
        let (name, port) = match what.rsplit_once(':') {
            Some((n, p)) if p.parse::<u8>().is_ok() => (n, Some(p.parse::<u8>().unwrap())),
            _ => (what, None),
        };
        let n = fabric.resolve(name).map_err(|e| e.to_string())?;
        let node = fabric.node(n);
        if node.kind.is_switch() {
            return Err(format!("'{name}' is a switch, not a host"));
        }
        let port: PortNum = match port {
            Some(p) => p,
            None => node.connected_ports().next().map(|(p, _)| p).ok_or_else(|| format!("'{name}' has no cabled port"))?,
        };
        if port == 0 || port > node.num_ports {
            return Err(format!("'{name}' has no port {port}"));
        }
        let gp = node_port_base[n.index()] + port as u32 - 1;
        match host_of_gp[gp as usize] {
            NONE => Err(format!("port {port} of '{name}' is not cabled")),
            h => Ok(h),
        }
    };
    let mut classes = Vec::new();
    let mut sources = Vec::new();
    for (ci, k) in c.traffic.classes.iter().enumerate() {
        let key = format!("traffic.classes[{ci}]");
        if k.name.is_empty() {
            return Err(SimError::config(format!("{key}.name"), "must not be empty"));
        }
        if c.traffic.classes[..ci].iter().any(|o| o.name == k.name) {
            return Err(SimError::config(format!("{key}.name"), format!("class name '{}' is used twice", k.name)));
        }
        if k.sl > 15 {
            return Err(SimError::config(format!("{key}.sl"), format!("SL {} is not 0..=15", k.sl)));
        }
        let (max_payload, why) = if k.vl15 { (VL15_MAX_PAYLOAD, "VL15 packets are at most 256 B") } else { (c.mtu_bytes, "the MTU") };
        let size = match &k.payload_size {
            None if k.payload_bytes == 0 || k.payload_bytes > max_payload => {
                return Err(SimError::config(
                    format!("{key}.payload_bytes"),
                    format!("must be 1..={max_payload} ({why}), got {}", k.payload_bytes),
                ));
            }
            None => PayloadSize::Fixed(k.payload_bytes),
            Some(d) => PayloadSize::build(d, max_payload, why, &format!("{key}.payload_size"))?,
        };
        if !k.load.is_finite() || !(0.0..=MAX_LOAD).contains(&k.load) {
            return Err(SimError::config(
                format!("{key}.load"),
                format!("must be a fraction of the link rate in 0..={MAX_LOAD}, got {}", k.load),
            ));
        }
        let pattern = Pattern::build(&k.pattern, num_hosts, &resolve_host, c.seed, &format!("{key}.pattern"))?;
        let mean_wire = size.mean_wire_bytes(c.extra_header_bytes);
        if k.load > 0.0 {
            for (h, hm) in hosts.iter().enumerate() {
                if !pattern.sends(h as u32) {
                    continue;
                }
                let timing = &ports[hm.gp as usize].timing;
                // A fixed size keeps the whole-picosecond packet time it always
                // had; a distribution is timed by its exact mean wire size, so
                // the offered wire bytes are `load` × the link rate.
                let packet_ps = match size.fixed() {
                    Some(p) => timing.ser_ps(wire_bytes(p, c.extra_header_bytes)) as f64,
                    None => mean_wire / timing.bytes_per_ps(),
                };
                let process = Process::new(k.process, k.load, packet_ps)
                    .map_err(|m| SimError::config(format!("{key}.load"), m))?;
                sources.push(Source::new(c.seed, h as u32, ci as u8, process));
            }
        }
        classes.push(Class {
            name: k.name.clone(),
            sl: k.sl,
            vl15: k.vl15,
            size,
            load: k.load,
            process: k.process,
            pattern,
            path_bits: k.path_bits,
            trace: None,
        });
    }
    let mut traces = Vec::new();
    for (ti, t) in c.traffic.traces.iter().enumerate() {
        let key = format!("traffic.traces[{ti}]");
        let name = t.display_name();
        if name.is_empty() {
            return Err(SimError::config(format!("{key}.name"), "must not be empty"));
        }
        if classes.iter().any(|k| k.name == name) {
            return Err(SimError::config(
                format!("{key}.name"),
                format!("class name '{name}' is used twice (trace names default to the file name)"),
            ));
        }
        if !t.time_scale.is_finite() || t.time_scale <= 0.0 {
            return Err(SimError::config(format!("{key}.time_scale"), format!("must be a finite number > 0, got {}", t.time_scale)));
        }
        let text = std::fs::read_to_string(&t.file)
            .map_err(|e| SimError::config(format!("{key}.file"), format!("cannot read '{}': {e}", t.file)))?;
        let messages = crate::traffic::trace::parse(&text, &t.file, t.time_scale, &resolve_host)?;
        let class = classes.len() as u8;
        let trace = Trace::new(class, messages);
        classes.push(Class {
            name,
            sl: trace.senders.iter().map(|&(sl, _)| sl).min().unwrap_or(0),
            vl15: false,
            size: PayloadSize::Fixed(c.mtu_bytes),
            load: 0.0,
            process: ProcessKind::Poisson,
            // No source draws from it: a trace picks its own destinations.
            pattern: Pattern::Map(DestMap::from_vec(Vec::new())),
            path_bits: PathBits::Base,
            trace: Some(traces.len() as u32),
        });
        traces.push(trace);
    }

    let mut connections = Vec::with_capacity(c.traffic.connections.len());
    let conn_class = classes.len() as u8;
    for (i, k) in c.traffic.connections.iter().enumerate() {
        let key = format!("traffic.connections[{i}]");
        let src = resolve_host(&k.source).map_err(|m| SimError::config(format!("{key}.source"), m))?;
        let dst = resolve_host(&k.destination).map_err(|m| SimError::config(format!("{key}.destination"), m))?;
        if src == dst {
            return Err(SimError::config(format!("{key}.destination"), "is the source host; a connection joins two hosts"));
        }
        if k.sl > 15 {
            return Err(SimError::config(format!("{key}.sl"), format!("SL {} is not 0..=15", k.sl)));
        }
        if k.bandwidth_bps == 0 {
            return Err(SimError::config(format!("{key}.bandwidth_bps"), "must be > 0 bit/s"));
        }
        let headers = wire_bytes(0, c.extra_header_bytes);
        if k.packet_bytes <= headers || k.packet_bytes - headers > c.mtu_bytes {
            return Err(SimError::config(
                format!("{key}.packet_bytes"),
                format!(
                    "is the packet on the wire, headers ({headers} B) included: must be {}..={} with the MTU of {} B, got {}",
                    headers + 1,
                    headers + c.mtu_bytes,
                    c.mtu_bytes,
                    k.packet_bytes
                ),
            ));
        }
        connections.push(Connection::new(c.seed, i as u32, src, dst, k.sl, k.packet_bytes - headers, k.packet_bytes, k.bandwidth_bps));
    }
    if !connections.is_empty() {
        let name = "connections";
        if classes.iter().any(|k| k.name == name) {
            return Err(SimError::config("traffic.connections", format!("class name '{name}' (the connections' class) is used twice")));
        }
        classes.push(Class {
            name: name.into(),
            sl: connections.iter().map(|k| k.sl).min().unwrap_or(0),
            vl15: false,
            size: PayloadSize::Fixed(connections[0].payload),
            load: 0.0,
            process: ProcessKind::Poisson,
            // Connections pick their own destinations.
            pattern: Pattern::Map(DestMap::from_vec(Vec::new())),
            path_bits: PathBits::Base,
            trace: None,
        });
    }

    // SLs in use: classes' own, and every SL a trace message or connection uses.
    let mut used_sls: Vec<u8> = classes.iter().filter(|k| k.trace.is_none()).map(|k| k.sl).collect();
    used_sls.extend(traces.iter().flat_map(|t| t.senders.iter().map(|&(sl, _)| sl)));
    used_sls.extend(connections.iter().map(|k| k.sl));
    used_sls.sort_unstable();
    used_sls.dedup();
    if !used_sls.is_empty() && qos.sl2vl.max_vl(&used_sls) >= data_vls {
        return Err(SimError::config(
            "sl2vl",
            format!(
                "the SL-to-VL tables map a used SL to VL {} but data VLs are 0..={}",
                qos.sl2vl.max_vl(&used_sls),
                data_vls - 1
            ),
        ));
    }

    let p = Params {
        switch_delay_ps: routing_ps + arbitration_ps,
        speedup: sc.speedup,
        output_buffers,
        crossbar: sc.crossbar,
        watchdog_ps,
        sl_order,
        mtu_bytes: c.mtu_bytes,
        extra_header_bytes: c.extra_header_bytes,
    };
    let max_ports = switches.iter().map(|s| s.num_ports).max().unwrap_or(0) as usize;
    let nswitches = switches.len();
    let nhosts = hosts.len();
    let mut sim = Simulation {
        node_names: fabric.nodes().iter().map(|n| n.name.clone()).collect(),
        layout: Layout::new(data_vls),
        ports: Ports {
            model: ports,
            tx: vec![TxState { feeding_input: NONE, ..TxState::default() }; nports as usize],
            credits: Credits::new(credit_init, nvl),
            inq: vec![PacketQueue::default(); npv],
            in_cap,
            outq: vec![PacketQueue::default(); npv],
            out_used: vec![0; npv],
            out_cap,
            sl2vl: qos.sl2vl,
            arb_tables,
            port_arb,
            arbiter,
        },
        switches: Switches {
            model: switches,
            state: vec![SwitchState::default(); nswitches],
            lft,
            lft_stride,
            xin_busy: vec![false; npv],
            xout_busy: vec![false; npv],
            in_bits: vec![0; bits_words_total as usize],
            pend_bits: vec![0; bits_words_total as usize],
            wait_bits: vec![0; wait_words_total as usize],
            scratch_req: vec![NONE; max_ports * nvl],
        },
        hcas: Hcas { model: hosts, state: vec![HostState::default(); nhosts], lid_host },
        mech: Mechanisms { selection },
        now: 0,
        queue,
        arena: PacketArena::new(),
        metrics: Metrics::new(warmup_ps, classes.len(), &used_sls, npv, detector),
        traffic: Workload { classes, sources, traces, connections, conn_class, injections_pending: 0 },
        in_network: 0,
        last_progress: 0,
        deadlock: None,
        watchdog: Watchdog::new(2 * npv, (watchdog_ps / 2).max(1)),
        next_housekeeping: 0,
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
    sim.metrics.conns = ConnMetrics::new(sim.traffic.connections.iter().map(|k| (k.wire_bits, k.bandwidth_bps)));
    for k in 0..sim.traffic.connections.len() {
        let at = sim.traffic.connections[k].due();
        sim.queue.push(0, at, Event::ConnNext { conn: k as u32 });
    }
    Ok(sim)
}
