//! Deadlock detection: when no packet has moved for the watchdog period while
//! some wait, the run stops and reports the cycle of blocked (link, VL)
//! channels.
//!
//! The report walks the wait-for graph among buffers that cannot make
//! progress: a switch input queue whose routed head cannot enter the output
//! buffer it selects (full) — or, without output buffers, whose next hop has no
//! credits for it — waits for that buffer; an output (or CA send) buffer whose
//! head has no credits waits for the input buffer across the link. Following
//! these edges from every blocked buffer finds a cycle when there is a
//! deadlock; it is reported as the sequence of channels (transmitter → receiver,
//! VL) each waiting for the next.

use crate::error::{BlockedChannel, DeadlockReport};
use crate::packet::{FLAG_VL15, NIL};
use crate::selection::Candidates;
use crate::sim::{Simulation, NONE};

impl Simulation {
    /// The buffer `node` waits for, if it is blocked. Nodes `0..npv` are input
    /// buffers, `npv..2·npv` output buffers, both by port × slot.
    fn waits_for(&self, node: usize) -> Option<usize> {
        let npv = self.inq.len();
        let nvl = self.p.nvl;
        if node < npv {
            let head = self.inq[node].head;
            let gp = (node / nvl) as u32;
            let pm = self.ports[gp as usize];
            if head == NIL || !pm.is_switch {
                return None;
            }
            let p = self.arena[head];
            let mut cands = Candidates::new();
            self.route(pm.switch, pm.port, &p, &mut cands).ok()?;
            let c = *cands.as_slice().first()?;
            let ogp = self.switches[pm.switch as usize].port_base + c.port as u32 - 1;
            let o = ogp as usize * nvl + c.slot as usize;
            if self.p.output_buffers {
                (self.out_used[o] + p.blocks as u32 > self.out_cap[o]).then_some(npv + o)
            } else {
                let peer = self.ports[ogp as usize].peer;
                let blocked = p.flags & FLAG_VL15 == 0 && self.credits.available(ogp, c.slot) < p.blocks as u32;
                (blocked && peer != NONE).then(|| peer as usize * nvl + c.slot as usize)
            }
        } else {
            let o = node - npv;
            let head = self.outq[o].head;
            if head == NIL {
                return None;
            }
            let gp = (o / nvl) as u32;
            let slot = (o % nvl) as u8;
            let p = self.arena[head];
            let peer = self.ports[gp as usize].peer;
            let blocked = p.flags & FLAG_VL15 == 0 && self.credits.available(gp, slot) < p.blocks as u32;
            (blocked && peer != NONE).then(|| peer as usize * nvl + slot as usize)
        }
    }

    /// The channel a buffer belongs to.
    fn channel_of(&self, node: usize) -> BlockedChannel {
        let npv = self.inq.len();
        let nvl = self.p.nvl;
        let (tx, rx, slot) = if node < npv {
            let gp = (node / nvl) as u32;
            (self.ports[gp as usize].peer, gp, (node % nvl) as u8)
        } else {
            let gp = ((node - npv) / nvl) as u32;
            (gp, self.ports[gp as usize].peer, ((node - npv) % nvl) as u8)
        };
        let name = |gp: u32| {
            let pm = &self.ports[gp as usize];
            (self.node_names[pm.node as usize].clone(), pm.port)
        };
        let (from_node, from_port) = name(tx);
        let (to_node, to_port) = name(rx);
        BlockedChannel { from_node, from_port, to_node, to_port, vl: self.vl_of_slot(slot) }
    }

    /// Builds the deadlock report for the current state.
    pub(crate) fn deadlock_report(&self) -> DeadlockReport {
        let npv = self.inq.len();
        let mut color = vec![0u8; 2 * npv];
        let mut cycle_nodes: Vec<usize> = Vec::new();
        let mut path: Vec<usize> = Vec::new();
        'outer: for start in 0..2 * npv {
            let nonempty = if start < npv { !self.inq[start].is_empty() } else { !self.outq[start - npv].is_empty() };
            if !nonempty || color[start] != 0 {
                continue;
            }
            path.clear();
            let mut cur = start;
            loop {
                match color[cur] {
                    2 => break,
                    1 => {
                        let at = path.iter().position(|&n| n == cur).expect("on the current path");
                        cycle_nodes = path[at..].to_vec();
                        break 'outer;
                    }
                    _ => {}
                }
                color[cur] = 1;
                path.push(cur);
                match self.waits_for(cur) {
                    Some(n) => cur = n,
                    None => break,
                }
            }
            for &n in &path {
                color[n] = 2;
            }
        }
        let mut cycle: Vec<BlockedChannel> = Vec::new();
        for n in cycle_nodes {
            let c = self.channel_of(n);
            if cycle.last() != Some(&c) {
                cycle.push(c);
            }
        }
        if cycle.len() > 1 && cycle.first() == cycle.last() {
            cycle.pop();
        }
        DeadlockReport {
            time_ps: self.now,
            last_progress_ps: self.last_progress,
            waiting_packets: self.in_network,
            cycle,
        }
    }
}
