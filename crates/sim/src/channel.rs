//! A packet on a link: starting a transmission and its arrival at the far end.
//!
//! Starting at `t0` on a link with serialization `ser` and propagation `prop`:
//! the transmitter is busy until `t0 + ser(wire)`; the receiver's buffer holds
//! the packet from then on (its credits were taken at `t0`); a switch has the
//! LRH+BTH at `t0 + prop + ser(20 B)` and finishes routing `switch delay`
//! later; the last byte is in at `t0 + prop + ser(wire)`. A CA's sink consumes
//! at link rate, so it has consumed the last byte as soon as it arrives; the
//! packet is delivered then and its credits go back. The switch's own delays
//! are the routing stage's (`switch/route.rs`, [`Simulation::routed_at`]).

use crate::engine::{Event, EventQueue, Time};
use crate::link::LinkTiming;
use crate::metrics::DropReason;
use crate::packet::{PacketId, FLAG_VL15};
use crate::sim::{Simulation, NONE};

impl Simulation {
    /// Puts `id` on the link of transmitter `gp` in VL `slot` now, towards
    /// the receiver's input partition the packet carries. `from_outq` says
    /// whether its blocks stay held in `gp`'s output buffer until the last
    /// byte has left.
    #[inline(always)]
    pub(crate) fn start_transmission(&mut self, gp: u32, id: PacketId, slot: u8, from_outq: bool) {
        let now = self.now;
        let pm = *self.ports.model(gp);
        let (wire, blocks, vl15, part) = {
            let p = &mut self.arena[id];
            p.slot = slot;
            if pm.host() != NONE && p.inject_time == Time::MAX {
                p.inject_time = now;
            }
            (p.wire_bytes as u32, p.blocks, p.flags & FLAG_VL15 != 0, p.part())
        };
        let q = self.layout.q(slot, part);
        let timing = *self.ports.timing(gp);
        let ser = timing.ser_ps(wire);
        // With `credits_at_grant` a switch took them when the packet crossed.
        let taken = self.p.credits_at_grant && from_outq && pm.is_switch;
        if !vl15 && !taken {
            self.ports.credits.consume(gp, q, blocks);
        }
        let tx = self.ports.tx_mut(gp);
        debug_assert!(!tx.busy && tx.busy_until <= now);
        tx.busy = true;
        tx.busy_until = now + ser;
        tx.sending_slot = slot;
        tx.sending_blocks = if from_outq { blocks } else { 0 };
        self.metrics.on_transmit(&mut tx.tally, &self.layout, gp, slot, now, ser);
        self.last_progress = now;
        let fold = &mut self.link_fold;
        if fold.port == gp && fold.at == now + ser {
            fold.taken = true;
        } else if self.leaves_link_free_out(gp, &pm) {
            let seq = self.queue.reserve();
            self.ports.tx_mut(gp).lazy_free = true;
            self.hcas.state[pm.host() as usize].free_seq = seq;
        } else {
            self.schedule(now + ser, Event::LinkFree { port: gp, switch: pm.switch_or_none() });
        }
        self.arrive(pm.peer, pm.peer_switch, id, q, ser, &timing);
    }

    /// The packet that started now on the link into `gp` (of switch `swi`,
    /// `NONE`: a CA port), whose cable's timing is `timing`, enters `gp`'s
    /// input queue `q`.
    // Inlined into its one caller: a call and its frame cost a fifth of it.
    #[inline(always)]
    fn arrive(&mut self, gp: u32, swi: u32, id: PacketId, q: u8, ser: Time, timing: &LinkTiming) {
        let now = self.now;
        let prop = timing.propagation_ps;
        let (blocks, vl15) = {
            let p = &self.arena[id];
            (p.blocks, p.flags & FLAG_VL15 != 0)
        };
        if vl15 && self.ports.inq(gp, q).blocks + blocks as u32 > self.ports.in_cap[self.layout.pq(gp, q)] {
            // VL15 is not flow controlled: a receiver without room discards it.
            self.drop_packet(id, DropReason::Vl15Overflow);
            return;
        }
        let tail = now + prop + ser;
        if swi != NONE {
            let routed = self.routed_at(now + prop, timing);
            let dlid = {
                let p = &mut self.arena[id];
                p.tail_at = tail;
                p.ready_at = routed;
                p.dlid
            };
            self.prefetch_route(swi, dlid);
            let fifo = self.input_fifo(q, id);
            self.push_input(swi, gp, fifo, id);
        } else {
            // The delivery counts in the receiving host's state, on a large
            // fabric a miss: asked for a serialization ahead. A unicast
            // packet's destination is that host, named in the packet's own
            // line (the port's description would be one more miss to wait
            // for); a multicast copy names none.
            let dst = self.arena[id].dst;
            if dst != NONE {
                crate::prefetch::prefetch(&self.hcas.state, dst as usize);
            }
            self.arena[id].tail_at = tail;
            self.ports.inq_mut(gp, q).push(&mut self.arena, id);
            self.schedule(tail, Event::Deliver { port: gp, queue: q, packet: id });
        }
    }

    /// Whether the `LinkFree` event of the transmission host port `gp` (of
    /// model `pm`) starts now can be left out: the host has nothing more to
    /// send, so that event would only free the transmitter and its blocks
    /// (its send queues are empty, so filling them moves nothing, and no
    /// advertisement waits: a host's are not charged link time when this
    /// holds). Every event that gives the host something to send passes
    /// through `resolve_lazy_free` first. At the CA ports of the benchmarks,
    /// most transmissions end this way.
    #[inline(always)]
    fn leaves_link_free_out(&self, gp: u32, pm: &crate::port::PortModel) -> bool {
        let host = pm.host();
        self.p.lazy_host_free
            && host != NONE
            && self.ports.tx(gp).outq_mask == 0
            && self.hcas.state[host as usize].sl_mask == 0
            && !self.ports.fcp.charged(gp)
    }

    /// Host `h` is about to be given a packet to send: a `LinkFree` event its
    /// transmitter left out is made good. If that event would have been
    /// handled already (its key is before the current event's), its effects
    /// are applied now, as its handler would have applied them (the host had
    /// nothing to send since); otherwise it is scheduled under the key it
    /// would have had, so that everything from here on happens as with it.
    #[inline]
    pub(crate) fn resolve_lazy_free(&mut self, h: u32) {
        let gp = self.hcas.model[h as usize].gp;
        if !self.ports.tx(gp).lazy_free {
            return;
        }
        self.resolve_lazy_free_of(h, gp);
    }

    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    fn resolve_lazy_free_of(&mut self, h: u32, gp: u32) {
        let seq = self.hcas.state[h as usize].free_seq;
        let tx = self.ports.tx_mut(gp);
        tx.lazy_free = false;
        let at = tx.busy_until;
        if self.ports.credits.is_past(at, seq) {
            self.release_transmitter(gp);
        } else {
            self.queue.push_late(self.now, at, seq, Event::LinkFree { port: gp, switch: NONE });
        }
    }

    /// Removes a packet from the network for `reason`.
    pub(crate) fn drop_packet(&mut self, id: PacketId, reason: DropReason) {
        self.metrics.on_drop(reason);
        self.in_network -= 1;
        let p = self.arena[id];
        self.arena.free(id);
        self.transport_on_drop(&p);
    }

    /// The transmitter `gp` (of switch `swi`, `NONE`: a CA port) has sent
    /// its packet's last byte: the output buffer space it held is free, and
    /// the node may send again.
    #[inline]
    pub(crate) fn on_link_free(&mut self, gp: u32, swi: u32) {
        debug_assert_eq!(swi, self.ports.model(gp).switch_or_none(), "the port's switch");
        // The transmitter is in the first half of the port's line, the
        // output buffer it frees and the queue it sends from in the second:
        // asked for together, the two misses of a large fabric overlap.
        crate::prefetch::prefetch_at(self.ports.credits.lines(), gp as usize, 64);
        self.release_transmitter(gp);
        // Only a switch without output buffers feeds a link from a crossbar input.
        let (feeding, fslot) = if self.p.output_buffers {
            (NONE, 0)
        } else {
            let cold = &mut self.ports.tx_cold[gp as usize];
            (std::mem::replace(&mut cold.feeding_input, NONE), cold.feeding_slot)
        };
        if self.ports.fcp.waiting(gp) {
            // Credit advertisements go before the next data packet.
            self.start_fcp(gp);
        }
        if swi != NONE {
            self.switch_link_freed(gp, swi, feeding, fslot);
        } else {
            self.hca_fill(self.ports.model(gp).host());
            self.try_transmit(gp);
        }
    }

    /// The transmitter `gp` is idle again, and the output buffer blocks its
    /// packet held (if it came from there) are free: what a `LinkFree`
    /// event does first, or a left-out one when it is made good.
    #[inline(always)]
    fn release_transmitter(&mut self, gp: u32) {
        let tx = self.ports.tx_mut(gp);
        let (slot, blocks) = (tx.sending_slot, tx.sending_blocks);
        tx.sending_blocks = 0;
        tx.busy = false;
        if blocks > 0 {
            self.ports.out_mut(gp, slot).used -= blocks as u32;
        }
    }

    /// Returns `blocks` credits of the receiver's input queue `q` to
    /// transmitter `gp`, arriving at `at`: as a `Credit` event when the
    /// transmitter is idle with a packet waiting (or its credits always need
    /// one), otherwise deferred (see [`crate::credits::Credits`]) under the
    /// sequence number the event would have had.
    #[inline(always)]
    pub(crate) fn return_credits(&mut self, gp: u32, q: u8, blocks: u16, at: Time) {
        let seq = self.queue.reserve();
        let tx = self.ports.tx(gp);
        let waiting = !tx.busy && tx.outq_mask != 0;
        if waiting || !self.ports.credits.defer(gp, q, blocks, at, seq) {
            self.queue.push_reserved(self.now, at, seq, Event::Credit { port: gp, queue: q, blocks });
        }
    }

    /// Transmitter `gp` is idle with a packet waiting: its deferred credit
    /// returns become events, so that their arrival lets it start as their
    /// events would have.
    #[cold]
    pub(crate) fn schedule_deferred_credits(&mut self, gp: u32) {
        let now = self.now;
        for (at, seq, queue, blocks) in self.ports.credits.take_deferred(gp) {
            self.queue.push_late(now, at, seq, Event::Credit { port: gp, queue, blocks });
        }
    }

    /// Credits for `blocks` of input queue `q` come back to transmitter `gp`.
    #[inline]
    pub(crate) fn on_credit(&mut self, gp: u32, q: u8, blocks: u16) {
        self.ports.credits.give_back(gp, q, blocks);
        let pm = *self.ports.model(gp);
        if pm.is_switch && (!self.p.output_buffers || self.p.credits_at_grant) {
            // Credits decide which heads may cross when the crossbar feeds the
            // link directly, or when they are taken at the crossbar; otherwise
            // (output buffers) they concern the link alone.
            self.wake_waiters(pm.switch(), gp);
            self.arbitrate_switch(pm.switch());
        } else {
            self.try_transmit(gp);
        }
    }
}
