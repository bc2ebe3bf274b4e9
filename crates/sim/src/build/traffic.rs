//! Step 4: the workload — traffic classes with their open-loop sources,
//! trace replays and CBR connections; hosts named in the config are resolved
//! here, and every error names the config key.

use ibnetsim_fabric::{Fabric, PortNum};

use crate::config::{ns_to_ps, AckMode, SimConfig};
use crate::error::SimError;
use crate::link::{wire_bytes, VL15_MAX_PAYLOAD};
use crate::qos::QosTables;
use crate::sim::NONE;
use crate::traffic::pattern::DestMap;
use crate::switch::multicast::Multicast;
use crate::traffic::pattern::PatternConfig;
use crate::traffic::{Class, ClosedLoopSource, Connection, PathBits, PayloadSize, Pattern, Process, ProcessKind, Source, Trace, Workload};
use crate::traffic::closed_loop::{MAX_START_PACKETS, MAX_WINDOW};

use super::topology::Topology;

/// Highest offered load per source accepted, as a multiple of its link rate:
/// beyond this an open-loop source only fills memory.
pub const MAX_LOAD: f64 = 100.0;

/// The workload, the SLs it uses (sorted) and the class of the transport's
/// replies (`u8::MAX` without replies).
pub(super) fn build(
    fabric: &Fabric,
    c: &SimConfig,
    topo: &Topology,
    qos: &QosTables,
    mcast: &Multicast,
) -> Result<(Workload, Vec<u8>, u8), SimError> {
    let hosts = &topo.hosts;
    let num_hosts = hosts.len() as u32;
    let data_vls = c.data_vls;
    let nclasses = c.traffic.classes.len()
        + c.traffic.traces.len()
        + c.traffic.closed_loop.len()
        + usize::from(!c.traffic.connections.is_empty())
        + usize::from(c.transport.ack != AckMode::None || c.mechanisms.fecn.is_some());
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
        match topo.host_of_gp[topo.gp(n, port) as usize] {
            NONE => Err(format!("port {port} of '{name}' is not cabled")),
            h => Ok(h),
        }
    };
    let mut classes = Vec::new();
    let mut sources = Vec::new();
    for (ci, k) in c.traffic.classes.iter().enumerate() {
        let key = format!("traffic.classes[{ci}]");
        let size = check_class(c, ci)?;
        if k.adaptive_fraction > 0.0 && hosts.iter().any(|h| h.lid_count < 2) {
            return Err(SimError::config(
                format!("{key}.adaptive_fraction"),
                "needs two LIDs per port (LMC ≥ 1, e.g. the 'fa' routing engine at LMC 1)",
            ));
        }
        let pattern = match k.pattern {
            PatternConfig::Multicast { mlid } => multicast_pattern(mlid, num_hosts, mcast, &format!("{key}.mlid"))?,
            _ => Pattern::build(&k.pattern, num_hosts, &resolve_host, c.seed, &key)?,
        };
        let mean_wire = size.mean_wire_bytes(c.header_bytes + c.extra_header_bytes);
        if k.load > 0.0 {
            for (h, hm) in hosts.iter().enumerate() {
                if !pattern.sends(h as u32) {
                    continue;
                }
                let timing = topo.timing(hm.gp as usize);
                // A fixed size keeps the whole-picosecond packet time it always
                // had; a distribution is timed by its exact mean wire size, so
                // the offered wire bytes are `load` × the link rate.
                let packet_ps = match size.fixed() {
                    Some(p) => timing.ser_ps(wire_bytes(p, c.header_bytes + c.extra_header_bytes)) as f64,
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
            adaptive_fraction: k.adaptive_fraction,
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
        // A regular file of bounded size; bytes that are not UTF-8 are replaced,
        // so the trace parser names the line they spoil.
        let text = ibnetsim_fabric::io::read_text_file(std::path::Path::new(&t.file))
            .map_err(|e| SimError::config(format!("{key}.file"), format!("cannot read '{}': {}", t.file, e.message("a trace file"))))?;
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
            adaptive_fraction: 0.0,
            trace: Some(traces.len() as u32),
        });
        traces.push(trace);
    }

    let mut closed_loop = Vec::new();
    let mut start_packets = 0u64;
    for (i, k) in c.traffic.closed_loop.iter().enumerate() {
        let key = format!("traffic.closed_loop[{i}]");
        let gap_ps = check_closed_loop_class(c, i)?;
        // The traces' names come from their files.
        if classes.iter().any(|o| o.name == k.name) {
            return Err(SimError::config(format!("{key}.name"), format!("class name '{}' is used twice", k.name)));
        }
        let pattern = Pattern::build(&k.pattern, num_hosts, &resolve_host, c.seed, &key)?;
        let senders = (0..num_hosts).filter(|&h| pattern.sends(h)).count() as u64;
        start_packets += senders * k.window as u64 * k.message_bytes.div_ceil(c.mtu_bytes) as u64;
        if start_packets > MAX_START_PACKETS {
            return Err(SimError::config(
                format!("{key}.window"),
                format!(
                    "the closed-loop windows would put {start_packets} packets into the send queues at time 0 ({senders} sources here, {} packets per message), more than the {MAX_START_PACKETS} a run may start with: lower the window or the message size",
                    k.message_bytes.div_ceil(c.mtu_bytes)
                ),
            ));
        }
        let class = classes.len() as u8;
        for h in 0..num_hosts {
            if pattern.sends(h) {
                closed_loop.push(ClosedLoopSource {
                    src: Source::for_messages(c.seed, h, class),
                    window: k.window,
                    message_bytes: k.message_bytes,
                    gap_ps,
                    gap: k.gap_distribution,
                    outstanding: 0,
                    peak_outstanding: 0,
                    sent: 0,
                });
            }
        }
        classes.push(Class {
            name: k.name.clone(),
            sl: k.sl,
            vl15: false,
            size: PayloadSize::Fixed(k.message_bytes.min(c.mtu_bytes)),
            load: 0.0,
            process: ProcessKind::Poisson,
            pattern,
            path_bits: k.path_bits,
            adaptive_fraction: 0.0,
            trace: None,
        });
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
        let headers = check_connection(c, i)?;
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
            adaptive_fraction: 0.0,
            trace: None,
        });
    }

    // Replies of the transport count in a class of their own.
    // Replies: acknowledgements, and congestion notifications answering FECN.
    let reply_class = if c.transport.ack != AckMode::None || c.mechanisms.fecn.is_some() {
        let name = "transport";
        if classes.iter().any(|k| k.name == name) {
            return Err(SimError::config("transport.ack", format!("class name '{name}' (the replies' class) is used twice")));
        }
        check_transport(c)?;
        classes.push(Class {
            name: name.into(),
            sl: c.transport.reply_sl,
            vl15: false,
            size: PayloadSize::Fixed(c.transport.reply_payload_bytes),
            load: 0.0,
            process: ProcessKind::Poisson,
            // Replies go back to the sender of what they answer.
            pattern: Pattern::Map(DestMap::from_vec(Vec::new())),
            path_bits: PathBits::Base,
            adaptive_fraction: 0.0,
            trace: None,
        });
        (classes.len() - 1) as u8
    } else {
        u8::MAX
    };

    // SLs in use: classes' own, and every SL a trace message or connection uses.
    let mut used_sls: Vec<u8> = classes.iter().filter(|k| k.trace.is_none()).map(|k| k.sl).collect();
    used_sls.extend(traces.iter().flat_map(|t| t.senders.iter().map(|&(sl, _)| sl)));
    used_sls.extend(connections.iter().map(|k| k.sl));
    used_sls.sort_unstable();
    used_sls.dedup();
    check_sls_have_data_vls(qos, &used_sls, data_vls, "a used SL")?;

    let source_hosts = sources.iter().map(|s| s.host).collect();
    Ok((Workload { classes, sources: sources.into(), source_hosts, traces, closed_loop, connections, conn_class, injections_pending: 0 }, used_sls, reply_class))
}

/// The pattern of a class sending to multicast group `mlid`: its members send.
fn multicast_pattern(mlid: u16, num_hosts: u32, mcast: &Multicast, key: &str) -> Result<Pattern, SimError> {
    let members = mcast.members(mlid).ok_or_else(|| {
        SimError::config(
            key,
            format!("no multicast group 0x{mlid:04x}: the subnet manager routes the groups in its multicast_groups"),
        )
    })?;
    if members.len() < 2 {
        return Err(SimError::config(key, format!("multicast group 0x{mlid:04x} has {} member host(s): nobody to send to", members.len())));
    }
    let mut senders = vec![false; num_hosts as usize];
    for &h in members {
        senders[h as usize] = true;
    }
    Ok(Pattern::Multicast { mlid, senders })
}

/// The SL2VL tables must map every SL in `sls` to a data VL; `what` names
/// those SLs in the error.
pub(super) fn check_sls_have_data_vls(qos: &QosTables, sls: &[u8], data_vls: u8, what: &str) -> Result<(), SimError> {
    if !sls.is_empty() && qos.sl2vl.max_vl(sls) >= data_vls {
        return Err(SimError::config(
            "sl2vl",
            format!("the SL-to-VL tables map {what} to VL {} but data VLs are 0..={}", qos.sl2vl.max_vl(sls), data_vls - 1),
        ));
    }
    Ok(())
}

/// What can be checked of the open-loop and closed-loop classes without a
/// fabric (each class's names, SL, sizes against the MTU, load and adaptive
/// fraction; windows and gaps), so that `SimConfig::check` refuses what
/// building would.
pub(super) fn check_classes(c: &SimConfig) -> Result<(), SimError> {
    (0..c.traffic.classes.len()).try_for_each(|ci| check_class(c, ci).map(|_| ()))?;
    (0..c.traffic.closed_loop.len()).try_for_each(|i| check_closed_loop_class(c, i).map(|_| ()))?;
    (0..c.traffic.connections.len()).try_for_each(|i| check_connection(c, i).map(|_| ()))?;
    if c.transport.ack != AckMode::None || c.mechanisms.fecn.is_some() {
        check_transport(c)?;
    }
    Ok(())
}

/// The replies' SL and size, when there are replies.
fn check_transport(c: &SimConfig) -> Result<(), SimError> {
    if c.transport.reply_sl > 15 {
        return Err(SimError::config("transport.reply_sl", format!("SL {} is not 0..=15", c.transport.reply_sl)));
    }
    if c.transport.reply_payload_bytes == 0 || c.transport.reply_payload_bytes > c.mtu_bytes {
        return Err(SimError::config(
            "transport.reply_payload_bytes",
            format!("must be 1..={} (the MTU), got {}", c.mtu_bytes, c.transport.reply_payload_bytes),
        ));
    }
    Ok(())
}

/// Connection `i`'s fabric-free checks; the header bytes of its packets.
fn check_connection(c: &SimConfig, i: usize) -> Result<u32, SimError> {
    let k = &c.traffic.connections[i];
    let key = format!("traffic.connections[{i}]");
    if k.sl > 15 {
        return Err(SimError::config(format!("{key}.sl"), format!("SL {} is not 0..=15", k.sl)));
    }
    if k.bandwidth_bps == 0 {
        return Err(SimError::config(format!("{key}.bandwidth_bps"), "must be > 0 bit/s"));
    }
    let headers = wire_bytes(0, c.header_bytes + c.extra_header_bytes);
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
    Ok(headers)
}

/// Closed-loop class `i`'s fabric-free checks; its gap in picoseconds.
fn check_closed_loop_class(c: &SimConfig, i: usize) -> Result<u64, SimError> {
    let k = &c.traffic.closed_loop[i];
    let key = format!("traffic.closed_loop[{i}]");
    if k.name.is_empty() {
        return Err(SimError::config(format!("{key}.name"), "must not be empty"));
    }
    let earlier = c.traffic.classes.iter().map(|o| &o.name).chain(c.traffic.closed_loop[..i].iter().map(|o| &o.name));
    if earlier.into_iter().any(|n| *n == k.name) {
        return Err(SimError::config(format!("{key}.name"), format!("class name '{}' is used twice", k.name)));
    }
    if k.sl > 15 {
        return Err(SimError::config(format!("{key}.sl"), format!("SL {} is not 0..=15", k.sl)));
    }
    if k.window == 0 {
        return Err(SimError::config(format!("{key}.window"), "must be at least 1 message"));
    }
    if k.window > MAX_WINDOW {
        return Err(SimError::config(
            format!("{key}.window"),
            format!("{} messages outstanding per source is more than {MAX_WINDOW}: the whole window is sent at time 0; for sources that never wait, use an open-loop class with a load", k.window),
        ));
    }
    if k.message_bytes == 0 {
        return Err(SimError::config(format!("{key}.message_bytes"), "must be at least 1 byte"));
    }
    ns_to_ps(&format!("{key}.gap_ns"), k.gap_ns)
}

/// Class `ci`'s fabric-free checks; its payload sizes, ready to draw from.
fn check_class(c: &SimConfig, ci: usize) -> Result<PayloadSize, SimError> {
    let k = &c.traffic.classes[ci];
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
        Some(d) => PayloadSize::build(d, max_payload, why, &key)?,
    };
    if !k.load.is_finite() || !(0.0..=MAX_LOAD).contains(&k.load) {
        return Err(SimError::config(
            format!("{key}.load"),
            format!("must be a fraction of the link rate in 0..={MAX_LOAD}, got {}", k.load),
        ));
    }
    if k.load > 0.0 {
        // The packet time only scales the gaps; the process's own limits do not depend on it.
        Process::new(k.process, k.load, 1.0).map_err(|m| SimError::config(format!("{key}.load"), m))?;
    }
    let f = k.adaptive_fraction;
    let fkey = format!("{key}.adaptive_fraction");
    if !(0.0..=1.0).contains(&f) {
        return Err(SimError::config(fkey, format!("must be a fraction in 0..=1, got {f}")));
    }
    if f > 0.0 && k.path_bits != PathBits::Base {
        return Err(SimError::config(fkey, "chooses the DLID's path bits itself; leave path_bits = \"base\""));
    }
    if f > 0.0 && (matches!(k.pattern, PatternConfig::Multicast { .. }) || k.vl15) {
        return Err(SimError::config(fkey, "applies to unicast data classes only"));
    }
    Ok(size)
}
