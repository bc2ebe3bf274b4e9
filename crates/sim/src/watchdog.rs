//! Deadlock detection, total and partial.
//!
//! **Total:** when no packet has moved for the watchdog period while some
//! wait, the run stops (checked per event in the run loop: one comparison).
//!
//! **Partial:** a deadlock confined to one region while other traffic flows
//! never stops all movement, so a periodic scan (every half watchdog period,
//! off the hot path) looks for it. It remembers each buffer's head packet; a
//! buffer whose head is the same packet as at a scan at least one watchdog
//! period ago, and is blocked now, is *stuck*.
//!
//! **Blocked** means waiting for room downstream: a switch input queue whose
//! routed head fits in none of the output buffers its routing options select
//! (full) — or, without output buffers, has credits for none of its next
//! hops — waits for those buffers; an output (or CA send) buffer whose head
//! has no credits waits for the input buffer across the link. Every routing
//! option the switch would consider counts (all of the destination's LIDs under
//! adaptive selection), since a head with one free option is not deadlocked;
//! a head pinned by a routing-time policy (`lfu`) waits for its pinned option only.
//! VL15 (not flow controlled) and CA receive buffers (drained at link rate)
//! never wait.
//!
//! A stuck buffer that waits for one that is not stuck will get room (that one
//! moves), so the deadlocked set is what remains after repeatedly removing
//! such buffers; what remains all wait only for each other, for longer than the
//! watchdog (far longer than a credit takes to come back), so none can move
//! again. A congested network with acyclic dependencies (up*/down*) always
//! drains to an empty set: congestion is not reported. From any remaining
//! buffer, following one wait-for edge at a time reaches a cycle, reported as
//! the sequence of channels (transmitter → receiver, VL) each waiting for the next.

use crate::engine::Time;
use crate::error::{BlockedChannel, DeadlockReport, SimError, StarvedVl};
use crate::packet::{PacketId, FLAG_VL15, NIL};
use crate::selection::{Candidates, MAX_CANDIDATES};
use crate::sim::{Simulation, NONE};

/// When the scan first saw a buffer's head: that packet's generation time
/// (packet ids are reused; with the id it names the packet) and the scan's
/// time.
#[derive(Debug, Clone, Copy)]
struct Seen {
    gen: Time,
    since: Time,
}

/// State of the periodic scan; buffers are numbered as in
/// [`Simulation::blocked_targets`].
#[derive(Debug, Clone)]
pub(crate) struct Watchdog {
    /// Each buffer's head at the last scan (`NIL`: empty), apart from when
    /// it was first seen (`seen`): most buffers are empty at every scan, and
    /// the scan then reads 4 bytes of theirs, not 24.
    head: Vec<PacketId>,
    seen: Vec<Seen>,
    /// Scratch for the stuck buffers of one scan: all false between scans.
    member: Vec<bool>,
    /// Time of the next scan.
    pub next_scan: Time,
    /// Scans done.
    pub scans: u64,
    /// Most buffers found stuck at one scan.
    pub max_stuck: u64,
}

impl Watchdog {
    /// A watchdog over `buffers` buffers.
    pub fn new(buffers: usize, period: Time) -> Self {
        Watchdog {
            head: vec![NIL; buffers],
            seen: vec![Seen { gen: 0, since: 0 }; buffers],
            member: vec![false; buffers],
            next_scan: period,
            scans: 0,
            max_stuck: 0,
        }
    }
}

impl Simulation {
    /// Period of the partial-deadlock scan.
    pub(crate) fn scan_period(&self) -> Time {
        (self.p.watchdog_ps / 2).max(1)
    }

    /// The buffers that buffer `node` waits for, in `out`; returns how many (0:
    /// not blocked). Buffers `0..nin` are input queues (by port × queue, see
    /// [`crate::layout`]), `nin..nin + npv` output buffers (by port × slot).
    fn blocked_targets(&self, node: usize, out: &mut [usize; MAX_CANDIDATES]) -> usize {
        let nin = self.ports.inq_len();
        let l = self.layout;
        if node < nin {
            let head = self.ports.inq_at(node).head;
            let gp = l.split_q(node).0;
            let pm = *self.ports.model(gp);
            if head == NIL || !pm.is_switch {
                return 0;
            }
            let p = self.arena[head];
            if p.flags & FLAG_VL15 != 0 {
                return 0;
            }
            let mut cands = Candidates::new();
            if self.route(pm.switch(), pm.port, node, head, &p, &mut cands).is_err() {
                return 0;
            }
            // A pinned head waits for its pinned option only.
            Self::pinned_only(&p, &mut cands);
            let mut n = 0;
            for c in cands.as_slice() {
                let ogp = self.switches.lines[pm.switch() as usize].model.gp(c.port);
                let o = l.pv(ogp, c.slot);
                let target = if self.p.output_buffers {
                    (!self.ports.out_at(o).fits(p.blocks as u32)).then_some(nin + o)
                } else {
                    let peer = self.ports.model(ogp).peer;
                    let q = l.q(c.slot, c.partition);
                    (self.ports.credits.available(ogp, q) < p.blocks as u32 && peer != NONE).then(|| l.pq(peer, q))
                };
                match target {
                    Some(t) => {
                        out[n] = t;
                        n += 1;
                    }
                    None => return 0,
                }
            }
            n
        } else {
            let o = node - nin;
            let head = self.ports.out_at(o).queue.head;
            if head == NIL {
                return 0;
            }
            let (gp, slot) = l.split(o);
            let p = self.arena[head];
            let q = l.q(slot, p.part());
            let peer = self.ports.model(gp).peer;
            if p.flags & FLAG_VL15 == 0 && self.ports.credits.available(gp, q) < p.blocks as u32 && peer != NONE {
                out[0] = l.pq(peer, q);
                1
            } else {
                0
            }
        }
    }

    fn head_of(&self, node: usize) -> PacketId {
        let nin = self.ports.inq_len();
        if node < nin {
            self.ports.inq_at(node).head
        } else {
            self.ports.out_at(node - nin).queue.head
        }
    }

    /// The periodic scan: updates the head marks and returns a deadlock
    /// report if some stuck buffers wait for each other.
    pub(crate) fn watchdog_scan(&mut self) -> Option<SimError> {
        let now = self.now;
        let period = self.scan_period();
        let mut wd = std::mem::replace(&mut self.watchdog, Watchdog::new(0, 0));
        wd.next_scan = (now / period + 1) * period;
        wd.scans += 1;
        debug_assert!(wd.member.iter().all(|&m| !m), "members are cleared after each scan");
        let mut stuck = 0u64;
        let mut targets = [0usize; MAX_CANDIDATES];
        // Buffer by buffer, in any order (each is judged on its own): first
        // each port's first input queue and first output buffer, which share
        // its line, then the other queues and buffers (the layout numbers
        // every port's queue 0 and slot 0 before the others).
        let (l, ports, nin, nodes) = (self.layout, self.ports.len(), self.ports.inq_len(), wd.head.len());
        let firsts = (0..ports as u32).flat_map(|gp| [l.pq(gp, 0), nin + l.pv(gp, 0)]);
        for node in firsts.chain(ports..nin).chain(nin + ports..nodes) {
            if self.mark_head(&mut wd, node, &mut targets) {
                wd.member[node] = true;
                stuck += 1;
            }
        }
        wd.max_stuck = wd.max_stuck.max(stuck);
        let found = if stuck > 0 { self.deadlocked_cycle(&mut wd.member, &mut targets) } else { None };
        let report = found.map(|(cycle, members)| {
            let since = cycle.iter().map(|&n| wd.seen[n].since).min().unwrap_or(now);
            self.report(cycle, members, since, true)
        });
        if stuck > 0 {
            wd.member.fill(false);
        }
        self.watchdog = wd;
        report.map(|r| self.declare(r))
    }

    /// Updates buffer `node`'s mark; true if it is stuck: the same head
    /// since a scan at least a watchdog period ago, and blocked now.
    #[inline]
    fn mark_head(&self, wd: &mut Watchdog, node: usize, targets: &mut [usize; MAX_CANDIDATES]) -> bool {
        let head = self.head_of(node);
        if head == NIL {
            wd.head[node] = NIL;
            return false;
        }
        let gen = self.arena[head].gen_time;
        if wd.head[node] != head || wd.seen[node].gen != gen {
            wd.head[node] = head;
            wd.seen[node] = Seen { gen, since: self.now };
            return false;
        }
        self.now - wd.seen[node].since >= self.p.watchdog_ps && self.blocked_targets(node, targets) > 0
    }

    /// Reduces `member` to the buffers that wait only for members (the
    /// deadlocked set) and returns a cycle among them and the set's size.
    fn deadlocked_cycle(&self, member: &mut [bool], targets: &mut [usize; MAX_CANDIDATES]) -> Option<(Vec<usize>, usize)> {
        loop {
            let mut changed = false;
            for node in 0..member.len() {
                if member[node] {
                    let n = self.blocked_targets(node, targets);
                    if n == 0 || targets[..n].iter().any(|&t| !member[t]) {
                        member[node] = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let count = member.iter().filter(|&&m| m).count();
        // The walk starts at the first member port by port, as reports have
        // always listed buffers, whatever order the arrays keep them in.
        let nin = self.ports.inq_len();
        let start = (0..member.len()).filter(|&n| member[n]).min_by_key(|&n| report_order(&self.layout, nin, n))?;
        // Every member waits for a member: walking first edges must revisit one.
        let mut order: Vec<usize> = Vec::new();
        let mut cur = start;
        while !order.contains(&cur) {
            order.push(cur);
            let n = self.blocked_targets(cur, targets);
            debug_assert!(n > 0);
            cur = *targets[..n].iter().find(|&&t| member[t])?;
        }
        let at = order.iter().position(|&n| n == cur).expect("revisited");
        Some((order.split_off(at), count))
    }

    /// Stops the run on a total stall: nothing moved for the watchdog period.
    pub(crate) fn declare_stall(&mut self) -> SimError {
        let mut member: Vec<bool> = vec![false; self.ports.inq_len() + self.ports.out_len()];
        let mut targets = [0usize; MAX_CANDIDATES];
        for (node, m) in member.iter_mut().enumerate() {
            *m = self.blocked_targets(node, &mut targets) > 0;
        }
        let (cycle, count) = self.deadlocked_cycle(&mut member, &mut targets).unwrap_or_default();
        let report = self.report(cycle, count, self.last_progress, false);
        self.declare(report)
    }

    fn declare(&mut self, report: DeadlockReport) -> SimError {
        let report = Box::new(report);
        self.deadlock = Some(report.clone());
        SimError::Deadlock(report)
    }

    fn report(&self, cycle_nodes: Vec<usize>, deadlocked_buffers: usize, since: Time, partial: bool) -> DeadlockReport {
        let mut cycle: Vec<BlockedChannel> = Vec::new();
        for n in cycle_nodes {
            let c = self.channel_of(n);
            // An input buffer and the output buffer feeding the same link are
            // one channel.
            if cycle.last() != Some(&c) {
                cycle.push(c);
            }
        }
        if cycle.len() > 1 && cycle.first() == cycle.last() {
            cycle.pop();
        }
        let starved = if cycle.is_empty() { self.starved_vls() } else { Vec::new() };
        DeadlockReport {
            time_ps: self.now,
            last_progress_ps: self.last_progress,
            blocked_since_ps: since,
            partial,
            deadlocked_buffers: deadlocked_buffers as u64,
            waiting_packets: self.in_network,
            cycle,
            starved,
        }
    }

    /// Output VLs that packets wait for but the port's VL arbiter never
    /// sends: what explains a stall without a cycle of full buffers.
    fn starved_vls(&self) -> Vec<StarvedVl> {
        let l = self.layout;
        let served = |o: usize| self.ports.out_at(o).served;
        let mut waiting = vec![0u64; self.ports.out_len()];
        // Output buffers, and CA send buffers.
        for (o, q) in self.ports.outs().map(|b| &b.queue).enumerate() {
            if q.head != NIL && !served(o) {
                waiting[o] += q.count_linked(&self.arena) as u64;
            }
        }
        // A switch input's head never bids for (nor enters the buffer of) an
        // output VL that is never sent: it starves when none of its options
        // is ever served.
        let mut cands = Candidates::new();
        for (node, q) in self.ports.inqs().enumerate() {
            let pm = self.ports.model(l.split_q(node).0);
            if q.head == NIL || !pm.is_switch {
                continue;
            }
            let p = self.arena[q.head];
            cands.clear();
            if self.route(pm.switch(), pm.port, node, q.head, &p, &mut cands).is_err() {
                continue;
            }
            Self::pinned_only(&p, &mut cands);
            let outs = cands.as_slice().iter().map(|c| l.pv(self.switches.lines[pm.switch() as usize].model.gp(c.port), c.slot));
            if let Some(first) = outs.clone().next() {
                if outs.clone().all(|o| !served(o)) {
                    waiting[first] += q.count_linked(&self.arena) as u64;
                }
            }
        }
        let mut starved = Vec::new();
        let mut outs: Vec<(u32, u8)> = (0..waiting.len()).filter(|&o| waiting[o] > 0).map(|o| l.split(o)).collect();
        // Port by port, then by VL, whatever order the arrays keep them in.
        outs.sort_unstable();
        for (gp, slot) in outs {
            let pm = &self.ports.model(gp);
            let packets = waiting[l.pv(gp, slot)];
            starved.push(StarvedVl { node: self.node_names[self.ports.node[gp as usize] as usize].clone(), port: pm.port, vl: l.vl_of_slot(slot), packets });
        }
        starved
    }

    /// The channel a buffer belongs to.
    fn channel_of(&self, node: usize) -> BlockedChannel {
        let nin = self.ports.inq_len();
        let (tx, rx, slot) = if node < nin {
            let (gp, q) = self.layout.split_q(node);
            (self.ports.model(gp).peer, gp, self.layout.slot_of_q(q))
        } else {
            let (gp, slot) = self.layout.split(node - nin);
            (gp, self.ports.model(gp).peer, slot)
        };
        let name = |gp: u32| {
            let pm = &self.ports.model(gp);
            (self.node_names[self.ports.node[gp as usize] as usize].clone(), pm.port)
        };
        let (from_node, from_port) = name(tx);
        let (to_node, to_port) = name(rx);
        BlockedChannel { from_node, from_port, to_node, to_port, vl: self.layout.vl_of_slot(slot) }
    }
}

/// The order in which reports list the buffers of the wait graph: input
/// queues port by port (each port's queues in order), then output buffers
/// port by port (each port's VL slots in order). `nin` is the number of
/// input queues, which come first among the graph's nodes.
fn report_order(layout: &crate::layout::Layout, nin: usize, node: usize) -> (bool, u32, u8) {
    if node < nin {
        let (gp, q) = layout.split_q(node);
        (false, gp, q)
    } else {
        let (gp, slot) = layout.split(node - nin);
        (true, gp, slot)
    }
}

#[cfg(test)]
mod tests {
    use super::report_order;
    use crate::layout::Layout;

    #[test]
    fn reports_list_buffers_port_by_port_whatever_the_array_order() {
        let l = Layout::new(2).for_ports(3);
        let nin = l.port_queues();
        let mut nodes: Vec<usize> = (0..nin + l.port_slots()).collect();
        nodes.sort_by_key(|&n| report_order(&l, nin, n));
        let inputs: Vec<(u32, u8)> = nodes[..nin].iter().map(|&n| l.split_q(n)).collect();
        let expected: Vec<(u32, u8)> = (0..3).flat_map(|gp| (0..l.qpp as u8).map(move |q| (gp, q))).collect();
        assert_eq!(inputs, expected);
        let outputs: Vec<(u32, u8)> = nodes[nin..].iter().map(|&n| l.split(n - nin)).collect();
        assert_eq!(outputs, (0..3).flat_map(|gp| (0..3u8).map(move |s| (gp, s))).collect::<Vec<_>>());
    }
}
