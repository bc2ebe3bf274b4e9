//! Step 2: the fabric flattened — global ports, switches with their bitset
//! ranges, hosts (cabled CA ports with LIDs), and the forwarding tables as
//! one array.

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId};
use ibnetsim_sm::{ForwardingTables, LidMap, NO_PATH};

use crate::error::SimError;
use crate::hca::HostModel;
use crate::layout::Layout;
use crate::link::LinkTiming;
use crate::port::PortModel;
use crate::sim::NONE;
use crate::switch::SwitchModel;

/// The fabric as arrays.
pub(super) struct Topology {
    /// Global port of port 1 of each node.
    pub node_port_base: Vec<u32>,
    pub ports: Vec<PortModel>,
    /// Node of each global port.
    pub port_node: Vec<u32>,
    /// Distinct cable timings, indexed by `PortModel::timing`.
    pub timings: Vec<LinkTiming>,
    pub switches: Vec<SwitchModel>,
    pub hosts: Vec<HostModel>,
    /// Host of each global port, or `NONE`.
    pub host_of_gp: Vec<u32>,
    /// Words of all switches' input bitsets past each one's first (which is
    /// in its `SwitchLine`), and of their waiter bitsets.
    pub more_bits_words: u32,
    pub wait_words: u32,
    pub lft: Vec<u8>,
    pub lft_stride: usize,
    pub lid_host: Vec<u32>,
}

impl Topology {
    /// Timing of the cable at global port `gp`.
    pub fn timing(&self, gp: usize) -> &LinkTiming {
        &self.timings[self.ports[gp].timing as usize]
    }

    /// Global port of `port` on node `n`.
    pub fn gp(&self, n: NodeId, port: u8) -> u32 {
        self.node_port_base[n.index()] + port as u32 - 1
    }

    /// Whether switch `s` (dense index) can send on its port `port`: it has
    /// that port and a cable there leads somewhere.
    pub fn sends_on(&self, s: usize, port: u8) -> bool {
        let sm = &self.switches[s];
        port >= 1 && port as u32 <= sm.num_ports && self.ports[sm.gp(port) as usize].peer != NONE
    }

    /// The forwarding tables, taken out, with every entry naming a port the
    /// switch cannot send on (port 0, the switch itself; a port it does not
    /// have; an uncabled one) made no path, as the routing stage treats it:
    /// routing then reads one byte per option, not the output port's
    /// description too.
    pub fn take_sendable_lft(&mut self) -> Vec<u8> {
        let mut lft = std::mem::take(&mut self.lft);
        for (s, row) in lft.chunks_mut(self.lft_stride).enumerate() {
            for e in row.iter_mut().filter(|e| **e != NO_PATH && !self.sends_on(s, **e)) {
                *e = NO_PATH;
            }
        }
        lft
    }
}

pub(super) fn build(fabric: &Fabric, lids: &LidMap, tables: &ForwardingTables, layout: &Layout) -> Result<Topology, SimError> {
    let mut node_port_base = Vec::with_capacity(fabric.num_nodes());
    let mut switches = Vec::new();
    let mut nports = 0u32;
    for n in fabric.ids() {
        node_port_base.push(nports);
        nports += fabric.node(n).num_ports as u32;
    }
    let mut more_bits_words = 0u32;
    let mut wait_words = 0u32;
    let mut switch_of_node = vec![NONE; fabric.num_nodes()];
    for n in fabric.switches() {
        let np = fabric.node(n).num_ports as u32;
        let words = (np * layout.qpp as u32).div_ceil(64);
        switch_of_node[n.index()] = switches.len() as u32;
        switches.push(SwitchModel {
            node: n.0,
            port_base: node_port_base[n.index()],
            num_ports: np,
            bits_base: more_bits_words,
            bits_words: words,
            wait_base: wait_words,
        });
        more_bits_words += words.saturating_sub(1);
        wait_words += words * np;
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

    let mut ports = Vec::with_capacity(nports as usize);
    let mut port_node = Vec::with_capacity(nports as usize);
    let mut timings: Vec<LinkTiming> = Vec::new();
    let mut timing_index = std::collections::HashMap::new();
    for n in fabric.ids() {
        let node = fabric.node(n);
        for p in 1..=node.num_ports {
            let gp = node_port_base[n.index()] + p as u32 - 1;
            let (peer, peer_switch, timing) = match node.ports[p as usize] {
                Some(l) => {
                    let link = fabric.link(l);
                    let o = link.other(LinkEnd { node: n, port: p });
                    (node_port_base[o.node.index()] + o.port as u32 - 1, switch_of_node[o.node.index()], LinkTiming::new(&link.spec))
                }
                None => (NONE, NONE, LinkTiming::new(&Default::default())),
            };
            let next = timings.len();
            let timing = *timing_index.entry(timing).or_insert_with(|| {
                timings.push(timing);
                next
            });
            let timing = u16::try_from(timing).map_err(|_| {
                SimError::config(
                    "fabric",
                    format!("the cables have more than {} distinct timings (speed, width and length); give cables of similar length the same length", u16::MAX as u32 + 1),
                )
            })?;
            debug_assert_eq!(node.kind.is_switch(), switch_of_node[n.index()] != NONE);
            ports.push(PortModel::new(p, switch_of_node[n.index()], host_of_gp[gp as usize], peer, peer_switch, timing));
            port_node.push(n.0);
        }
    }

    // Forwarding tables, flattened.
    let lft_stride = lids.top_lid() as usize + 1;
    let mut lft = vec![NO_PATH; switches.len() * lft_stride];
    for (i, s) in switches.iter().enumerate() {
        let t = tables.lft(NodeId(s.node)).ok_or_else(|| {
            SimError::config("tables", format!("switch '{}' has no forwarding table", fabric.node(NodeId(s.node)).name))
        })?;
        let e = t.entries();
        let n = e.len().min(lft_stride);
        lft[i * lft_stride..i * lft_stride + n].copy_from_slice(&e[..n]);
    }
    let mut lid_host = vec![NONE; lft_stride];
    for (h, hm) in hosts.iter().enumerate() {
        lid_host[hm.base_lid as usize..hm.base_lid as usize + hm.lid_count as usize].fill(h as u32);
    }
    Ok(Topology { node_port_base, ports, port_node, timings, switches, hosts, host_of_gp, more_bits_words, wait_words, lft, lft_stride, lid_host })
}
