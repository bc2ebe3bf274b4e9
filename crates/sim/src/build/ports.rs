//! Step 3: the ports — VL buffer sizes (defaults, then per-port overrides),
//! the credits each transmitter starts with, and the SL2VL and
//! VLArbitration tables.

use ibnetsim_fabric::{Fabric, NodeId};

use crate::arbitration::{VlArbTable, VlArbiter};
use crate::config::SimConfig;
use crate::credits::{blocks_for, buffer_blocks, Credits, CREDIT_BYTES};
use crate::error::SimError;
use crate::flow_control::FlowControlPackets;
use crate::layout::{Layout, MAX_PARTITIONS};
use crate::link::{wire_bytes, VL15_MAX_PAYLOAD};
use crate::packet::PacketQueue;
use crate::port::{OutBuffer, PortLine, Ports, RestOut, TxCold};
use crate::qos::QosTables;
use crate::sim::{Params, NONE};
use crate::switch::CrossbarInput;

use super::topology::Topology;

fn resolve_node(fabric: &Fabric, what: &str, key: &str) -> Result<NodeId, SimError> {
    fabric.resolve(what).map_err(|e| SimError::config(key, e.to_string()))
}

pub(super) fn build(
    fabric: &Fabric,
    c: &SimConfig,
    p: &Params,
    layout: &Layout,
    topo: &Topology,
    qos: &QosTables,
    arbiter: VlArbiter,
) -> Result<Ports, SimError> {
    let (nvl, vl15_slot, data_vls) = (layout.nvl, layout.vl15_slot, layout.data_vls);
    let ports = &topo.ports;
    let output_buffers = p.output_buffers;
    let Buffers { sw_in, sw_out, vl15, ca_in, ca_out, part_blocks } = buffers(c, output_buffers)?;
    // The per-port overrides below are checked as the defaults are.
    let max_blocks = blocks_for(wire_bytes(c.mtu_bytes, c.header_bytes + c.extra_header_bytes)) as u32;
    let check_buf = buffer_check(c);
    let npv = layout.port_slots();
    let mut in_cap = vec![0u32; npv];
    let mut out_cap = vec![0u32; npv];
    for (gp, pm) in ports.iter().enumerate() {
        for s in 0..nvl {
            let i = layout.pv(gp as u32, s as u8);
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
        let gp = topo.gp(n, o.port) as usize;
        if o.input_bytes.is_some() && node.kind.is_switch() && !part_blocks.is_empty() {
            return Err(SimError::config(
                format!("{key}.input_bytes"),
                "switch input buffers are split by switch.input_partition_bytes; give the partitions instead",
            ));
        }
        if let Some(b) = o.input_bytes {
            let b = check_buf(&format!("{key}.input_bytes"), b, max_blocks, "MTU packet")?;
            for &s in &slots {
                in_cap[layout.pv(gp as u32, s as u8)] = b;
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
                out_cap[layout.pv(gp as u32, s as u8)] = b;
            }
        }
    }
    // Input queues: a data VL buffer of a switch port is split into its
    // partitions; every other buffer is one queue (partition 0) and its other
    // partitions hold nothing.
    let nin = layout.port_queues();
    let mut queue_cap = vec![0u32; nin];
    for (gp, pm) in ports.iter().enumerate() {
        for s in 0..nvl as u8 {
            let whole = in_cap[layout.pv(gp as u32, s)];
            if pm.is_switch && s != vl15_slot && !part_blocks.is_empty() {
                for (k, &b) in part_blocks.iter().enumerate() {
                    queue_cap[layout.pq(gp as u32, layout.q(s, k as u8))] = b;
                }
            } else {
                queue_cap[layout.pq(gp as u32, layout.q(s, 0))] = whole;
            }
        }
    }
    let in_cap = queue_cap;
    // Port by port, as `Credits::new` takes them.
    let mut credit_init = vec![0u32; nin];
    for (gp, pm) in ports.iter().enumerate() {
        if pm.peer != NONE {
            for q in 0..layout.qpp as u8 {
                credit_init[gp * layout.qpp + q as usize] = in_cap[layout.pq(pm.peer, q)];
            }
        }
    }

    // QoS.
    qos.vlarb.default.validate("vl_arbitration", data_vls)?;
    let mut arb_tables = vec![VlArbTable::from_config(&qos.vlarb.default)];
    let mut port_arb = vec![0u16; ports.len()];
    for (i, ((n, p), t)) in qos.vlarb.per_port.iter().enumerate() {
        let key = format!("vlarb.per_port[{i}]");
        if n.index() >= fabric.num_nodes() || *p == 0 || *p > fabric.node(*n).num_ports {
            return Err(SimError::config(&key, format!("no port {p} on node #{}", n.0)));
        }
        t.validate(&key, data_vls)?;
        arb_tables.push(VlArbTable::from_config(t));
        port_arb[topo.gp(*n, *p) as usize] = (arb_tables.len() - 1) as u16;
    }

    // A head must not bid for (or be buffered on) a VL its output never
    // sends while another option could take it.
    let mut out: Vec<OutBuffer> = out_cap
        .into_iter()
        .enumerate()
        .map(|(o, cap)| {
            let (gp, slot) = layout.split(o);
            let served = layout.is_vl15(slot) || arbiter.serves(&arb_tables[port_arb[gp as usize] as usize], slot);
            OutBuffer { cap, served, ..OutBuffer::default() }
        })
        .collect();

    // Credits decide crossbar arbitration at switch ports without output
    // buffers, or that take them at the crossbar: their returns are always
    // events (`Simulation::on_credit`).
    let eager: Vec<bool> = ports.iter().map(|pm| pm.is_switch && (!output_buffers || p.credits_at_grant)).collect();
    // Each port's first slot's buffer goes into its line: `Layout::pv`
    // numbers every port's first slot before the others.
    let out_rest = out.split_off(ports.len()).into_iter().map(RestOut).collect();
    let xin = CrossbarInput::new(p.max_transfers);
    let lines = ports.iter().zip(out).map(|(&model, out0)| PortLine::new(model, out0, xin)).collect();
    Ok(Ports {
        node: topo.port_node.clone(),
        timings: topo.timings.clone().into(),
        tx_cold: vec![TxCold::default(); ports.len()].into(),
        credits: Credits::new(lines, credit_init, layout.qpp, &eager),
        inq_rest: vec![PacketQueue::default(); nin - ports.len()].into(),
        in_cap,
        out_rest,
        xin_rest: vec![xin; ports.len() * (layout.nvl - 1)].into(),
        sl2vl: qos.sl2vl.clone(),
        arb_tables: arb_tables.into(),
        port_arb: port_arb.into(),
        arbiter,
        fcp: FlowControlPackets::new(ports.iter().map(|m| p.credit_packet_bytes[usize::from(!m.is_switch)]).collect(), layout.qpp),
    })
}

/// Checks that a buffer of some bytes (config key, bytes, blocks needed,
/// what must fit) holds a whole packet; returns its blocks.
type CheckBuffer = dyn Fn(&str, u32, u32, &str) -> Result<u32, SimError>;

/// The buffer check of `c`'s packet sizes (see [`CheckBuffer`]).
fn buffer_check(c: &SimConfig) -> impl Fn(&str, u32, u32, &str) -> Result<u32, SimError> {
    let max_wire = wire_bytes(c.mtu_bytes, c.header_bytes + c.extra_header_bytes);
    let vl15_wire = wire_bytes(VL15_MAX_PAYLOAD, c.header_bytes + c.extra_header_bytes);
    move |key: &str, bytes: u32, need_blocks: u32, what: &str| -> Result<u32, SimError> {
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
    }
}

/// The default buffers in credits (0 for absent switch output buffers) and
/// the switch input partitions: what the configuration alone decides about
/// buffers, each checked to hold a whole packet.
pub(super) struct Buffers {
    pub sw_in: u32,
    pub sw_out: u32,
    pub vl15: u32,
    pub ca_in: u32,
    pub ca_out: u32,
    pub part_blocks: Vec<u32>,
}

/// Checks and sizes the default buffers of `c`; `output_buffers` says
/// whether switches have output buffers at all.
pub(super) fn buffers(c: &SimConfig, output_buffers: bool) -> Result<Buffers, SimError> {
    let sc = &c.switch;
    let max_blocks = blocks_for(wire_bytes(c.mtu_bytes, c.header_bytes + c.extra_header_bytes)) as u32;
    let vl15_blocks = blocks_for(wire_bytes(VL15_MAX_PAYLOAD, c.header_bytes + c.extra_header_bytes)) as u32;
    let check_buf = buffer_check(c);
    let sw_in = check_buf("switch.input_buffer_bytes", sc.input_buffer_bytes, max_blocks, "MTU packet")?;
    let sw_out =
        if output_buffers { check_buf("switch.output_buffer_bytes", sc.output_buffer_bytes, max_blocks, "MTU packet")? } else { 0 };
    let vl15 = check_buf("switch.vl15_buffer_bytes", sc.vl15_buffer_bytes, vl15_blocks, "VL15 packet")?;
    let ca_in = check_buf("hca.receive_buffer_bytes", c.hca.receive_buffer_bytes, max_blocks, "MTU packet")?;
    let ca_out = check_buf("hca.send_buffer_bytes", c.hca.send_buffer_bytes, max_blocks, "MTU packet")?;
    let part_blocks = partitions(c, sw_in, &check_buf, max_blocks)?;
    Ok(Buffers { sw_in, sw_out, vl15, ca_in, ca_out, part_blocks })
}

/// The blocks of each partition of a switch's input VL buffers
/// (`switch.input_partition_bytes`), empty when they are not split.
fn partitions(
    c: &SimConfig,
    whole_blocks: u32,
    check_buf: &CheckBuffer,
    max_blocks: u32,
) -> Result<Vec<u32>, SimError> {
    let parts = &c.switch.input_partition_bytes;
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let key = "switch.input_partition_bytes";
    if !(2..=MAX_PARTITIONS).contains(&parts.len()) {
        return Err(SimError::config(key, format!("gives {} partitions; split a buffer into 2..={MAX_PARTITIONS}, or leave it empty", parts.len())));
    }
    let mut blocks = Vec::with_capacity(parts.len());
    for (k, &b) in parts.iter().enumerate() {
        // Virtual cut-through: each partition holds a whole packet.
        blocks.push(check_buf(&format!("{key}[{k}]"), b, max_blocks, "MTU packet")?);
    }
    let sum: u64 = parts.iter().map(|&b| b as u64).sum();
    if sum != c.switch.input_buffer_bytes as u64 || blocks.iter().sum::<u32>() != whole_blocks {
        return Err(SimError::config(
            key,
            format!(
                "the partitions add up to {sum} bytes, but they split switch.input_buffer_bytes = {} (give whole 64-byte credits that add up to it)",
                c.switch.input_buffer_bytes
            ),
        ));
    }
    Ok(blocks)
}
