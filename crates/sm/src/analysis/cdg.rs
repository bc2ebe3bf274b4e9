//! Credit loops: cycles in the channel dependency graph over (directed link, VL).
//!
//! Dally & Seitz (IEEE TC 1987) and, for IBA's virtual cut-through, Duato's
//! theory (IEEE TPDS 1993/1995): deterministic routing is free of deadlock
//! when the graph whose nodes are channels, with an edge from c1 to c2
//! whenever a route can hold c1 while it waits for c2, has no cycle. In IBA a
//! channel is a link direction and a VL, and the VL on each hop comes from
//! SLtoVL: a packet of service level `sl` entering switch `s` at port `i` and
//! leaving at `o` goes on VL `SL2VL[s][i][o][sl]` (IBA 7.6.6), and a CA sends
//! on `SL2VL[ca][port][sl]`. The graph is built from the routes of every
//! source CA port to every examined CA LID, one walk per (LID, SL) over the
//! LID's in-tree.
//!
//! Routes from and to switch port 0 are left out unless asked for
//! ([`super::AnalysisOptions::cdg_switch_lids`]), as ibdm's `CrdLoopAnalyze`
//! leaves them out: they carry management traffic only. But GMPs (performance
//! management, SA queries from a switch's agents) travel on data VLs, so a
//! loop closed only by them still deadlocks a fabric under load.
//! `IS3-loop.topo`, ibutils' credit-loop demo, is such a fabric: its minimal
//! routes close a cycle only through routes a spine switch originates.
//!
//! Cycles are found with an iterative Tarjan SCC pass (graphs have 10^4-10^5
//! channels; recursion would overflow the stack). For the report a short
//! concrete cycle is extracted by BFS inside a cyclic component: the shortest
//! cycle through each of several start channels, the shortest kept.

use ibnetsim_fabric::{LinkEnd, NodeId, PortNum};
use rustc_hash::FxHashSet;
use serde::Serialize;

use super::slview::{SlView, VL15};
use super::trace::{port_name, Attach, DirLink, Net, NONE};
use crate::error::SmError;
use crate::lid::Lid;

/// VL slots per directed link in channel numbering (`dirlink * 16 + vl`).
const VL_SLOTS: u32 = 16;

/// Edge visits the shortest-cycle search may spend across all its BFS runs.
const CYCLE_SEARCH_BUDGET: u64 = 20_000_000;

/// One channel of a reported cycle, and the routes that lead on from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CycleStep {
    /// Sending port (`name/port`).
    pub from: String,
    /// Receiving port (`name/port`).
    pub to: String,
    /// Virtual lane.
    pub vl: u8,
    /// A destination LID whose routes hold this channel while waiting for the
    /// next one of the cycle.
    pub dlid: Lid,
}

/// What the credit-loop check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CdgReport {
    /// (directed link, VL) channels some route uses.
    pub channels: u64,
    /// Distinct dependencies between them.
    pub dependencies: u64,
    /// VLs carrying data on some route.
    pub vls_used: Vec<u8>,
    /// Strongly connected components that contain a cycle.
    pub cyclic_sccs: u64,
    /// Channels in those components.
    pub channels_in_cycles: u64,
    /// Channels in the largest of them.
    pub largest_cyclic_scc: u64,
    /// A short cycle, in dependency order (the last channel depends on the first).
    pub cycle: Option<Vec<CycleStep>>,
    /// Distinct (node, input port, output port, SL) turns used by a route
    /// whose SL maps to VL15 there: packets dropped, not delivered.
    pub vl15_turns: u64,
    /// One such turn.
    pub vl15_example: Option<String>,
    /// Whether routes from and to switch port 0 are in the graph (see the module docs).
    pub switch_lids: bool,
}

impl CdgReport {
    /// Whether the graph has a cycle (the routing can deadlock).
    pub fn has_cycle(&self) -> bool {
        self.cyclic_sccs > 0
    }
}

/// The graph being collected: channels get compact ids as routes reach them.
///
/// Every dependency out of a channel leaves the switch that channel enters,
/// so it is named by (output port, VL) of that switch: a small bitset per
/// channel deduplicates them far faster than hashing the millions of
/// (source link, next hop) pairs of a 2,000-host fabric.
struct Builder<'n, 'a> {
    net: &'n Net<'a>,
    view: &'n SlView<'n>,
    /// Per switch, the output port and directed link of the current LID.
    hop: Vec<(PortNum, u32)>,
    compact: Vec<u32>,
    channels: Vec<u32>,
    turn_bits: Vec<u64>,
    turn_offset: Vec<u32>,
    /// (from, to, a destination LID whose routes make the turn), compact ids.
    edges: Vec<(u32, u32, Lid)>,
    seen: Vec<u32>,
    epoch: u32,
    drops: FxHashSet<(u32, u8, u8, u8)>,
    drop_example: Option<String>,
    vls: u16,
}

impl Builder<'_, '_> {
    fn channel(&mut self, c: u32) -> u32 {
        let slot = &mut self.compact[c as usize];
        if *slot == NONE {
            *slot = self.channels.len() as u32;
            self.channels.push(c);
            self.turn_offset.push(NONE);
            self.vls |= 1 << (c % VL_SLOTS);
        }
        *slot
    }

    /// Marks `c` visited in this walk; true the first time.
    fn visit(&mut self, c: u32) -> bool {
        std::mem::replace(&mut self.seen[c as usize], self.epoch) != self.epoch
    }

    /// Where the current LID's packets on `sl`, held in channel `from` (compact)
    /// and entering switch `s` at `at`, go next: records the dependency and
    /// returns the next channel, if the switch forwards them over a link.
    fn turn(&mut self, s: u32, at: LinkEnd, from: u32, sl: u8, dlid: Lid) -> Option<u32> {
        let (out, next) = self.hop[s as usize];
        if next == NONE {
            return None;
        }
        let vl = self.view.vl(at.node, at.port, out, sl);
        if vl >= VL15 {
            self.drop_turn((at.node.0, at.port, out), sl, vl, dlid);
            return None;
        }
        let c2 = next * VL_SLOTS + vl as u32;
        let to = self.channel(c2);
        let ports = self.net.fabric.node(at.node).num_ports;
        let mut off = self.turn_offset[from as usize];
        if off == NONE {
            off = self.turn_bits.len() as u32;
            self.turn_offset[from as usize] = off;
            let bits = (ports as usize + 1) * VL_SLOTS as usize;
            self.turn_bits.resize(self.turn_bits.len() + bits.div_ceil(64), 0);
        }
        let bit = out as usize * VL_SLOTS as usize + vl as usize;
        let word = &mut self.turn_bits[off as usize + bit / 64];
        let mask = 1u64 << (bit % 64);
        if *word & mask == 0 {
            *word |= mask;
            self.edges.push((from, to, dlid));
        }
        Some(c2)
    }

    fn drop_turn(&mut self, at: (u32, u8, u8), sl: u8, vl: u8, dlid: Lid) {
        if self.drops.insert((at.0, at.1, at.2, sl)) && self.drop_example.is_none() {
            let name = &self.net.fabric.node(NodeId(at.0)).name;
            let turn =
                if at.1 == 0 { format!("sending port {}", at.2) } else { format!("port {} to port {}", at.1, at.2) };
            self.drop_example = Some(format!(
                "SL {sl} maps to VL{vl} at {name} {turn}: packets to LID {dlid:#06x} on SL {sl} are dropped"
            ));
        }
    }
}

/// Builds the channel dependency graph of the routes to `dlids` and looks for
/// cycles; with `switch_ends`, switches' port 0 are sources too, and `dlids`
/// may hold switch LIDs.
pub(crate) fn credit_loops(
    net: &Net<'_>,
    view: &SlView<'_>,
    dlids: &[Lid],
    switch_ends: bool,
) -> Result<CdgReport, SmError> {
    let slots = DirLink::count(net.fabric) * VL_SLOTS as usize;
    let mut b = Builder {
        net,
        view,
        hop: vec![(0, NONE); net.switches.len()],
        compact: vec![NONE; slots],
        channels: Vec::new(),
        turn_bits: Vec::new(),
        turn_offset: Vec::new(),
        edges: Vec::new(),
        seen: vec![0; slots],
        epoch: 0,
        drops: FxHashSet::default(),
        drop_example: None,
        vls: 0,
    };
    let mut by_sl: Vec<Vec<u32>> = vec![Vec::new(); 16];
    let mut sw_by_sl: Vec<Vec<u32>> = vec![Vec::new(); 16];
    let mut stack: Vec<u32> = Vec::new();
    for &d in dlids {
        let dst = match net.endpoint_of(d) {
            Some(e) => e,
            None if switch_ends && net.lids.owner(d).is_some() => NONE,
            None => continue,
        };
        for v in by_sl.iter_mut().chain(&mut sw_by_sl) {
            v.clear();
        }
        for (si, src) in net.endpoints.iter().enumerate() {
            if si as u32 != dst && src.up != NONE {
                by_sl[view.sl(src.end, d)? as usize].push(si as u32);
            }
        }
        if switch_ends {
            for (s, &node) in net.switches.iter().enumerate() {
                sw_by_sl[view.sl(LinkEnd { node, port: 0 }, d)? as usize].push(s as u32);
            }
        }
        for (s, &node) in net.switches.iter().enumerate() {
            b.hop[s] = match net.tables.get(node, d) {
                Some(p) if p != 0 => DirLink::out_of(net.fabric, node, p).map_or((0, NONE), |(dl, _)| (p, dl.0)),
                _ => (0, NONE),
            };
        }
        for sl in 0..16u8 {
            if by_sl[sl as usize].is_empty() && sw_by_sl[sl as usize].is_empty() {
                continue;
            }
            b.epoch += 1;
            stack.clear();
            // A switch's own packets hold no channel before the first link;
            // that link may carry transit routes too, hence the visited mark.
            for &s in &sw_by_sl[sl as usize] {
                let (out, next) = b.hop[s as usize];
                if next == NONE {
                    continue;
                }
                let node = net.switches[s as usize];
                let vl = view.vl(node, 0, out, sl);
                if vl >= VL15 {
                    b.drop_turn((node.0, 0, out), sl, vl, d);
                    continue;
                }
                let c = next * VL_SLOTS + vl as u32;
                b.channel(c);
                if b.visit(c) {
                    stack.push(c);
                }
            }
            // A source's own link is used by no other source, so only what
            // follows it needs the visited marks.
            for &si in &by_sl[sl as usize] {
                let src = &net.endpoints[si as usize];
                let vl = view.vl(src.end.node, 0, src.end.port, sl);
                if vl >= VL15 {
                    b.drop_turn((src.end.node.0, 0, src.end.port), sl, vl, d);
                    continue;
                }
                let from = b.channel(src.up * VL_SLOTS + vl as u32);
                if let Attach::Switch(s) = src.attach {
                    let at = LinkEnd { node: net.switches[s as usize], port: src.peer_port };
                    if let Some(c2) = b.turn(s, at, from, sl, d) {
                        if b.visit(c2) {
                            stack.push(c2);
                        }
                    }
                }
            }
            while let Some(c) = stack.pop() {
                let at = DirLink(c / VL_SLOTS).to(net.fabric);
                let s = net.sw_index[at.node.index()];
                if s == NONE {
                    continue;
                }
                let from = b.compact[c as usize];
                if let Some(c2) = b.turn(s, at, from, sl, d) {
                    if b.visit(c2) {
                        stack.push(c2);
                    }
                }
            }
        }
    }
    let graph = Csr::new(b.channels.len(), &mut b.edges);
    let sccs = graph.cyclic_components();
    let mut report = CdgReport {
        channels: b.channels.len() as u64,
        dependencies: graph.adj.len() as u64,
        vls_used: (0..16).filter(|v| b.vls & (1 << v) != 0).collect(),
        cyclic_sccs: sccs.len() as u64,
        channels_in_cycles: sccs.iter().map(|c| c.len() as u64).sum(),
        largest_cyclic_scc: sccs.iter().map(|c| c.len() as u64).max().unwrap_or(0),
        cycle: None,
        vl15_turns: b.drops.len() as u64,
        vl15_example: b.drop_example.take(),
        switch_lids: switch_ends,
    };
    if let Some(mut cycle) = graph.short_cycle(&sccs) {
        // Start at the lowest-numbered link so that reports are stable.
        let lowest = (0..cycle.len()).min_by_key(|&i| b.channels[cycle[i] as usize]).expect("non-empty");
        cycle.rotate_left(lowest);
        let step = |i: usize| {
            let (c, c2) = (cycle[i], cycle[(i + 1) % cycle.len()]);
            let ch = b.channels[c as usize];
            let dl = DirLink(ch / VL_SLOTS);
            CycleStep {
                from: port_name(net.fabric, dl.from(net.fabric)),
                to: port_name(net.fabric, dl.to(net.fabric)),
                vl: (ch % VL_SLOTS) as u8,
                dlid: graph.dlid(c, c2),
            }
        };
        report.cycle = Some((0..cycle.len()).map(step).collect());
    }
    Ok(report)
}

/// A directed graph in compressed sparse rows, each edge with its LID.
struct Csr {
    start: Vec<u32>,
    adj: Vec<u32>,
    dlid: Vec<Lid>,
}

impl Csr {
    /// From distinct edges (sorted in place).
    fn new(n: usize, edges: &mut [(u32, u32, Lid)]) -> Self {
        edges.sort_unstable();
        let mut start = vec![0u32; n + 1];
        for &(a, _, _) in edges.iter() {
            start[a as usize + 1] += 1;
        }
        for i in 1..=n {
            start[i] += start[i - 1];
        }
        Csr { start, adj: edges.iter().map(|e| e.1).collect(), dlid: edges.iter().map(|e| e.2).collect() }
    }

    /// The LID recorded for edge `a -> b`.
    fn dlid(&self, a: u32, b: u32) -> Lid {
        let lo = self.start[a as usize] as usize;
        let i = self.succ(a).binary_search(&b).expect("edge of the graph");
        self.dlid[lo + i]
    }

    #[inline]
    fn succ(&self, v: u32) -> &[u32] {
        &self.adj[self.start[v as usize] as usize..self.start[v as usize + 1] as usize]
    }

    /// Strongly connected components that contain a cycle, each as its nodes
    /// (ascending), by an iterative Tarjan pass.
    fn cyclic_components(&self) -> Vec<Vec<u32>> {
        let n = self.start.len() - 1;
        let mut index = vec![NONE; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut call: Vec<(u32, u32)> = Vec::new();
        let mut next_index = 0u32;
        let mut out = Vec::new();
        for root in 0..n as u32 {
            if index[root as usize] != NONE {
                continue;
            }
            index[root as usize] = next_index;
            low[root as usize] = next_index;
            next_index += 1;
            stack.push(root);
            on_stack[root as usize] = true;
            call.push((root, self.start[root as usize]));
            while let Some(top) = call.last_mut() {
                let v = top.0;
                if top.1 < self.start[v as usize + 1] {
                    let w = self.adj[top.1 as usize];
                    top.1 += 1;
                    if index[w as usize] == NONE {
                        index[w as usize] = next_index;
                        low[w as usize] = next_index;
                        next_index += 1;
                        stack.push(w);
                        on_stack[w as usize] = true;
                        call.push((w, self.start[w as usize]));
                    } else if on_stack[w as usize] {
                        low[v as usize] = low[v as usize].min(index[w as usize]);
                    }
                    continue;
                }
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u as usize] = low[u as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[w as usize] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 || self.succ(v).contains(&v) {
                        comp.sort_unstable();
                        out.push(comp);
                    }
                }
            }
        }
        out
    }

    /// A shortest cycle through each of several channels of the cyclic
    /// components, the shortest of those.
    fn short_cycle(&self, sccs: &[Vec<u32>]) -> Option<Vec<u32>> {
        let n = self.start.len() - 1;
        let mut comp = vec![NONE; n];
        for (i, c) in sccs.iter().enumerate() {
            for &v in c {
                comp[v as usize] = i as u32;
            }
        }
        let mut parent = vec![NONE; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut queue: Vec<u32> = Vec::new();
        let mut best: Option<Vec<u32>> = None;
        let mut spent = 0u64;
        'outer: for (ci, c) in sccs.iter().enumerate() {
            for &u in c {
                if spent > CYCLE_SEARCH_BUDGET && best.is_some() {
                    break 'outer;
                }
                if best.as_ref().is_some_and(|b| b.len() <= 2) {
                    break 'outer;
                }
                for &t in &touched {
                    parent[t as usize] = NONE;
                }
                touched.clear();
                queue.clear();
                queue.push(u);
                parent[u as usize] = u;
                touched.push(u);
                let mut head = 0;
                let mut found = None;
                'bfs: while head < queue.len() {
                    let v = queue[head];
                    head += 1;
                    for &w in self.succ(v) {
                        spent += 1;
                        if comp[w as usize] != ci as u32 {
                            continue;
                        }
                        if w == u {
                            found = Some(v);
                            break 'bfs;
                        }
                        if parent[w as usize] == NONE {
                            parent[w as usize] = v;
                            touched.push(w);
                            queue.push(w);
                        }
                    }
                }
                let last = found.expect("every channel of a cyclic component lies on a cycle");
                let mut cyc = vec![last];
                while *cyc.last().expect("non-empty") != u {
                    let p = parent[*cyc.last().expect("non-empty") as usize];
                    cyc.push(p);
                }
                cyc.reverse();
                match &best {
                    Some(b) if b.len() <= cyc.len() => {}
                    _ => best = Some(cyc),
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(n: usize, e: &[(u32, u32)]) -> Csr {
        let mut e: Vec<(u32, u32, Lid)> = e.iter().map(|&(a, b)| (a, b, 0)).collect();
        Csr::new(n, &mut e)
    }

    #[test]
    fn tarjan_finds_only_cyclic_components() {
        // 0->1->2->0 is a cycle, 3->4 a chain, 5 has a self-loop, 2->3 links them.
        let g = csr(6, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (5, 5)]);
        let mut c = g.cyclic_components();
        c.sort();
        assert_eq!(c, vec![vec![0, 1, 2], vec![5]]);
    }

    #[test]
    fn shortest_cycle_is_preferred() {
        // One component holding a 4-cycle 0-1-2-3 and a 2-cycle 2<->4.
        let g = csr(5, &[(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (4, 2)]);
        let c = g.cyclic_components();
        assert_eq!(c, vec![vec![0, 1, 2, 3, 4]]);
        assert_eq!(g.short_cycle(&c), Some(vec![2, 4]));
    }

    #[test]
    fn a_longer_cycle_found_later_does_not_replace_a_shorter_one() {
        // One component: the 3-cycle 0-1-2 and the 5-cycle 0-1-2-3-4. The
        // searches from 0, 1 and 2 find 3-cycles; those from 3 and 4 only
        // 5-cycles, and the shortest stays the answer.
        let g = csr(5, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 0)]);
        let c = g.cyclic_components();
        assert_eq!(c, vec![vec![0, 1, 2, 3, 4]]);
        assert_eq!(g.short_cycle(&c), Some(vec![0, 1, 2]));
    }

    #[test]
    fn acyclic_graph_has_no_components() {
        let g = csr(4, &[(0, 1), (1, 2), (0, 2), (2, 3)]);
        assert!(g.cyclic_components().is_empty());
        assert_eq!(g.short_cycle(&[]), None);
    }

    #[test]
    fn deep_chain_does_not_overflow_the_stack() {
        let n = 200_000u32;
        let mut e: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        e.push((n - 1, 0));
        let g = csr(n as usize, &e);
        let c = g.cyclic_components();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].len(), n as usize);
        assert_eq!(g.short_cycle(&c).map(|c| c.len()), Some(n as usize));
    }
}
