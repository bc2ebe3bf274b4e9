//! Oldest-first (FCFS) crossbar arbitration: the pending inputs are offered
//! the crossbar in the order of the generation time of the first packet in
//! their buffer, so the packet that has been in the network longest goes
//! first (BookSim's age-based priority; it bounds how long a packet that
//! keeps losing can wait). Ties keep round-robin order from the switch's
//! pointer, which moves past each granted input as under round robin.

use crate::engine::Time;
use crate::packet::NIL;
use crate::selection::Candidates;
use crate::sim::Simulation;
use crate::switch::SwitchModel;

impl Simulation {
    /// One pass over the pending input queues of switch `swi` (only VL15
    /// queues if `vl15_only`), oldest first.
    pub(in crate::switch) fn oldest_first_pass(&mut self, swi: u32, sm: &SwitchModel, vl15_only: bool, cands: &mut Candidates) {
        let qpp = self.layout.qpp;
        let nbits = sm.num_ports as usize * qpp;
        let start = self.switches.lines[swi as usize].state.rr as usize % nbits;
        // Taken out of `self` so that serving inputs may borrow it mutably;
        // its capacity (one entry per input queue) is kept, so no allocation.
        let mut order = std::mem::take(&mut self.switches.scratch_order);
        order.clear();
        for (lo, hi) in [(start, nbits), (0, start)] {
            let mut cur = lo;
            while let Some(idx) = self.next_pending(swi, cur, hi) {
                cur = idx + 1;
                if vl15_only && self.layout.slot_of_q(self.layout.split_local(sm.port_base, idx).1) != self.layout.vl15_slot {
                    continue;
                }
                let (gp, q) = self.layout.split_local(sm.port_base, idx);
                let head = self.ports.inq_at(self.layout.pq(gp, q)).head;
                let age = if head == NIL { Time::MAX } else { self.arena[head].gen_time };
                // The position in round-robin order breaks ties.
                order.push((age, order.len() as u32, idx as u32));
            }
        }
        order.sort_unstable();
        for &(_, _, idx) in &order {
            if self.serve_input(swi, sm, idx as usize, cands) {
                self.switches.lines[swi as usize].state.rr = ((idx as usize + 1) % nbits) as u32;
            }
        }
        self.switches.scratch_order = order;
    }

    /// Without output buffers: whether the head `id` should replace the head
    /// of input queue `held` (a [`crate::layout::Layout::pq`] index), which
    /// already requests the same output VL: under oldest-first if it is
    /// strictly older (requests are gathered in round-robin order, so equal
    /// ages keep that order); never under round robin.
    #[inline]
    pub(in crate::switch) fn request_preferred(&self, id: crate::packet::PacketId, held: usize) -> bool {
        self.p.crossbar_arbiter == super::CrossbarArbiter::OldestFirst && self.arena[id].gen_time < self.arena[self.ports.inq_at(held).head].gen_time
    }
}
