//! Output buffers and the link they feed, with output VL arbitration.
//!
//! Each port has one buffer per VL slot (a switch's output buffers, or a CA
//! port's send buffers — the same mechanism). When the link is idle, the heads
//! that may start now — data present without underrun, and credits at the
//! receiver for the whole packet (virtual cut-through) — compete: VL15 first,
//! then the port's VL arbiter (IBA tables or round robin). Credits are those of
//! the receiver's input partition the head is sent towards. A packet's blocks
//! stay held in the buffer until its last byte has left. When a head is only
//! waiting for its data, an `OutputReady` event is set for the time it can go.

use crate::engine::{Event, Time};
use crate::port::Ports;
use crate::sim::{Simulation, NONE};

impl Simulation {
    /// Starts the next packet on transmitter `gp` if the link is idle and a
    /// packet may go.
    // The test inline at every caller: about half the calls (a link still
    // busy, or nothing queued) end here.
    #[inline(always)]
    pub(crate) fn try_transmit(&mut self, gp: u32) {
        let t = self.ports.tx(gp);
        // A busy link has its LinkFree event pending, which calls back here.
        if t.busy || t.outq_mask == 0 {
            return;
        }
        self.transmit_next(gp);
    }

    /// `try_transmit` on an idle link with packets queued.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    fn transmit_next(&mut self, gp: u32) {
        if self.only_data_vl_ready(gp) {
            // Its link is busy now: nothing more to look at.
            self.send_head(gp, 0);
            return;
        }
        let (slot, wake) = self.choose_slot(gp);
        match slot {
            Some(s) => self.send_head(gp, s),
            None if wake != Time::MAX => {
                let cold = &mut self.ports.tx_cold[gp as usize];
                if cold.ready_wake_at == 0 || cold.ready_wake_at > wake {
                    cold.ready_wake_at = wake;
                    self.schedule(wake, Event::OutputReady { port: gp });
                }
            }
            None => {}
        }
        // Idle with a packet waiting: credits on their way may start it.
        if !self.ports.tx(gp).busy && self.ports.credits.has_deferred(gp) {
            self.schedule_deferred_credits(gp);
        }
    }

    /// Starts the head of transmitter `gp`'s VL slot `s` on its link.
    #[inline(always)]
    fn send_head(&mut self, gp: u32, s: u8) {
        let q = &mut self.ports.out_mut(gp, s).queue;
        let id = q.pop(&mut self.arena).expect("ready slot has a head");
        if q.is_empty() {
            self.ports.tx_mut(gp).outq_mask &= !(1 << s);
        }
        self.start_transmission(gp, id, s, true);
    }

    /// Whether transmitter `gp` has packets on its one data VL only and
    /// that VL's head may go now: what `choose_slot` would find, for every
    /// hop of the benchmarks, without its loop over the queued slots and
    /// the VL arbiter (2.4 % of the mesh's instructions, twelfth stop).
    #[inline(always)]
    fn only_data_vl_ready(&self, gp: u32) -> bool {
        if !self.p.one_vl_sends_head || self.ports.tx(gp).outq_mask != 1 {
            return false;
        }
        let p = &self.arena[self.ports.out(gp, 0).queue.head];
        p.ready_at <= self.now && self.ports.credits.available(gp, self.layout.q(0, p.part())) >= p.blocks as u32 && self.ports.out(gp, 0).served
    }

    /// The VL slot whose head transmitter `gp` sends now (VL15 first, then
    /// the VL arbiter among the heads that are in and have credits), and
    /// the earliest time a head still arriving may go.
    #[inline(always)]
    fn choose_slot(&mut self, gp: u32) -> (Option<u8>, Time) {
        let now = self.now;
        let vl15 = self.layout.vl15_slot;
        let is_switch = self.ports.model(gp).is_switch;
        let mut ready: u16 = 0;
        let mut wake = Time::MAX;
        let mut m = self.ports.tx(gp).outq_mask;
        while m != 0 {
            let s = m.trailing_zeros() as u8;
            m &= m - 1;
            let head = self.ports.out(gp, s).queue.head;
            let p = &self.arena[head];
            if p.ready_at > now {
                wake = wake.min(p.ready_at);
            } else if s == vl15 || self.ports.credits.available(gp, self.layout.q(s, p.part())) >= p.blocks as u32 {
                ready |= 1 << s;
            } else if is_switch && self.p.credits_at_grant {
                // Taken when the packet crossed the crossbar.
                ready |= 1 << s;
            } else if !is_switch && self.p.fully_adaptive && self.ca_sends_to_escape_part(gp, s, head) {
                ready |= 1 << s;
            }
        }
        let slot = if ready & (1 << vl15) != 0 {
            Some(vl15)
        } else if self.layout.data_vls == 1 {
            // One data VL: the arbiter's only possible choice, if its table
            // serves it; its state then never decides anything, so it is not kept.
            (ready & 1 != 0 && self.ports.out(gp, 0).served).then_some(0)
        } else {
            let table = &self.ports.arb_tables[self.ports.port_arb[gp as usize] as usize];
            let (credits, out_rest, arena, layout) = (&self.ports.credits, &self.ports.out_rest, &self.arena, self.layout);
            self.ports.arbiter.pick(table, &mut self.ports.tx_cold[gp as usize].arb, ready, self.layout.data_vls, |s| {
                arena[Ports::out_in(credits, out_rest, layout.pv(gp, s)).queue.head].blocks
            })
        };
        (slot, wake)
    }

    /// A CA's head `head` of VL slot `s`, held back for lack of credits in
    /// the adaptive part of the switch's VL buffer, goes into its escape part
    /// when that has room (paper 002 §4.4 stores packets in the escape queue
    /// when the adaptive one is full); true if so.
    #[cold]
    #[inline(never)]
    fn ca_sends_to_escape_part(&mut self, gp: u32, s: u8, head: u32) -> bool {
        let blocks = self.arena[head].blocks as u32;
        if self.ports.credits.available(gp, self.layout.q(s, 1)) < blocks {
            return false;
        }
        self.arena[head].set_part(1);
        true
    }

    /// An `OutputReady` event: the head waiting for its data may start now.
    #[inline]
    pub(crate) fn on_output_ready(&mut self, gp: u32) {
        self.ports.tx_cold[gp as usize].ready_wake_at = 0;
        self.try_transmit(gp);
    }

    /// The link of switch port `gp` has sent its packet: room in the output
    /// buffer (or the link itself) is free again, and without output buffers
    /// the crossbar input `feeding` that fed it (slot `fslot`) too.
    #[inline]
    pub(crate) fn switch_link_freed(&mut self, gp: u32, swi: u32, feeding: u32, fslot: u8) {
        self.wake_waiters(swi, gp);
        if feeding != NONE {
            self.ports.xin_mut(feeding, self.xslot(fslot)).end();
            self.mark_port_pending(swi, feeding);
        }
        self.arbitrate_switch(swi);
        if self.p.output_buffers {
            self.try_transmit(gp);
        }
    }
}
