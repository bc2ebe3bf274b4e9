//! Switch input buffers: one FIFO per (port, VL slot, buffer partition) — an
//! input *queue* (see [`crate::layout`]) — with a bitset per switch of the
//! non-empty ones so that arbitration visits only queues with packets.
//!
//! A packet enters when its first byte starts on the incoming link (its credits
//! were taken then); its header is routed at `ready_at`. Only the head of a
//! queue is routed towards the crossbar; a `Routed` event is scheduled when a
//! packet becomes head before its routing delay has elapsed.
//!
//! Arbitration does not rescan every queue on every event: a queue is
//! *pending* when its head may have become able to move (it was just routed,
//! its crossbar input freed, or the output it waits for changed); a head that
//! cannot move is parked as a *waiter* of the output port(s) it needs, and the
//! events that free those outputs (end of a crossbar transfer, of a
//! transmission, credits without output buffers) make their waiters pending
//! again. The outcome is the same as re-examining every head each time.

use ibnetsim_sm::RouteLabel;

use crate::engine::{Event, Time};
use crate::packet::{PacketId, NIL};
use crate::sim::{Simulation, NONE};
use crate::switch::multicast::is_multicast;
use crate::switch::organisation::InputBuffer;

impl Simulation {
    /// Word (within switch `swi`'s bits) and bit of its input queue `(gp, q)`.
    #[inline]
    fn input_bit(&self, swi: u32, gp: u32, q: u8) -> (usize, u64) {
        let sm = &self.switches.lines[swi as usize].model;
        let local = self.layout.local(sm.port_base, gp, q);
        (local / 64, 1u64 << (local % 64))
    }

    /// Appends an arriving packet to input queue `(gp, q)` of switch `swi`.
    #[inline(always)]
    pub(crate) fn push_input(&mut self, swi: u32, gp: u32, q: u8, id: PacketId) {
        let inq = self.ports.inq_mut(gp, q);
        let was_empty = inq.is_empty();
        inq.push(&mut self.arena, id);
        if was_empty || self.p.input_buffer == InputBuffer::Voq {
            // Under `voq` any packet may cross before it is the head, so each
            // needs its own `Routed` event.
            let at = self.arena[id].ready_at;
            if !(was_empty && self.offered_at_transfer_end(gp, q, at)) {
                self.schedule(at, Event::Routed { port: gp, queue: q, switch: swi, packet: id });
            }
        }
        if was_empty {
            let (w, b) = self.input_bit(swi, gp, q);
            self.switches.bits_mut(swi, w).nonempty |= b;
            if self.layout.slot_of_q(q) == self.layout.vl15_slot {
                self.switches.lines[swi as usize].state.vl15_inputs += 1;
            }
        }
    }

    /// Whether a packet routed at `at`, arriving into the empty input queue
    /// `(gp, q)`, can do without a `Routed` event: its crossbar input is busy
    /// with a transfer that ends at `at` or later, and the `XbarDone` event
    /// of that transfer (scheduled earlier, so handled before an event
    /// scheduled now for the same time) makes the port's queues pending.
    /// At `at` the `Routed` event would have found its head gone (offered
    /// already) or its input still busy; where `Params::offer_at_transfer_end`
    /// holds, nothing else is pending between events and no mechanism acts on
    /// a waiting head, so it would have changed nothing. On a fabric of equal
    /// cables the transfer of the packet before often ends exactly when the
    /// next is routed: 46 % of the mesh benchmark's `Routed` events, 29 % of
    /// the fat tree's.
    #[inline(always)]
    fn offered_at_transfer_end(&self, gp: u32, q: u8, at: Time) -> bool {
        if !self.p.offer_at_transfer_end {
            return false;
        }
        let x = self.ports.xin(gp, self.xslot(self.layout.slot_of_q(q)));
        // Busy, not merely ended at `at`: a packet routed the very moment
        // the transfer's end was handled has no later event to offer it.
        x.free() == 0 && x.until() >= at
    }

    /// Removes the head of input queue `(gp, q)`; the crossbar input is busy
    /// until `free_at`, after which the switch re-arbitrates anyway, so the new
    /// head needs its own `Routed` event only if it is routed later than that.
    /// An input that may send several packets at once is not busy after one,
    /// so its new head needs the event whenever it is routed later than now;
    /// under `voq` every packet has had its own since it arrived.
    #[inline(always)]
    pub(crate) fn pop_input(&mut self, swi: u32, gp: u32, q: u8, free_at: Time) -> PacketId {
        let inq = self.ports.inq_mut(gp, q);
        let id = inq.pop(&mut self.arena).expect("pop from an empty input queue");
        let head = inq.head;
        let popped = &mut self.arena[id];
        popped.remembered = false;
        // Only a multicast head has copies to forget; a unicast one would
        // touch the multicast state's line for nothing.
        if is_multicast(popped.dlid) {
            self.switches.mcast.forget(self.layout.pq(gp, q));
        }
        if head == NIL {
            let (w, b) = self.input_bit(swi, gp, q);
            self.switches.bits_mut(swi, w).nonempty &= !b;
            if self.layout.slot_of_q(q) == self.layout.vl15_slot {
                self.switches.lines[swi as usize].state.vl15_inputs -= 1;
            }
        } else if self.p.input_buffer == InputBuffer::Fifo {
            let busy_until = if self.p.max_transfers == 1 { free_at.max(self.now) } else { self.now };
            let at = self.arena[head].ready_at;
            if at > busy_until {
                self.schedule(at, Event::Routed { port: gp, queue: q, switch: swi, packet: head });
            }
        }
        id
    }

    /// The FIFO of a switch input VL buffer that packet `id`, arriving into
    /// queue `q` (its credit partition), waits in.
    ///
    /// Under `fully-adaptive` selection (paper 002 §4.4) a deterministic
    /// packet (its DLID an escape LID, see [`ibnetsim_sm::labels`]) may be
    /// stored in the adaptive part of the buffer, but it waits in the escape
    /// FIFO: the paper keeps a pointer to the first deterministic packet in
    /// the adaptive queue and serves it before any later packet of the escape
    /// queue, so that deterministic packets leave in order. Queuing them in
    /// one FIFO does exactly that, and keeps the escape FIFO from ever
    /// waiting behind an adaptive packet (which would void the escape
    /// network's deadlock freedom). The packet still holds, and returns, the
    /// credits of the part it was sent to ([`crate::packet::Packet::part`]).
    #[inline]
    pub(crate) fn input_fifo(&self, q: u8, id: PacketId) -> u8 {
        if !self.p.fully_adaptive || self.layout.part_of_q(q) != 0 || !self.is_deterministic(id) {
            return q;
        }
        self.layout.q(self.layout.slot_of_q(q), 1)
    }

    /// Whether packet `id` asked for deterministic routing: its DLID is an
    /// escape LID of its destination.
    #[inline(never)]
    fn is_deterministic(&self, id: PacketId) -> bool {
        let dlid = self.arena[id].dlid as usize;
        match self.hcas.lid_host.get(dlid) {
            Some(&h) if h != NONE => {
                let base = self.hcas.model[h as usize].base_lid as usize;
                self.switches.labels.get((dlid - base) as u8) == RouteLabel::Escape
            }
            _ => false,
        }
    }

    /// A `Routed` event: the head of input queue `(gp, q)` has been routed.
    #[inline]
    pub(crate) fn on_routed(&mut self, swi: u32, gp: u32, q: u8, packet: PacketId) {
        // Arbitration reads the queue's head, then the head packet: on a large
        // fabric two misses one after the other, unless the packet's line is
        // on its way already. (Usually the head; a hint either way.)
        self.arena.prefetch(packet);
        self.prefetch_routed_lines(swi, gp, packet);
        self.mark_pending(swi, gp, q);
        self.arbitrate_switch(swi);
    }

    /// Asks for the port lines arbitration will read for the packet just
    /// routed at input port `gp` of switch `swi`: the input's queues (the
    /// second half of its line) and both halves of the line of the output
    /// its forwarding-table entry names. On a large fabric each is an L2
    /// miss, and arbitration reaches them one after the other (switch, queue,
    /// packet, table entry, output); asked for together, the waits overlap.
    /// The entry was asked for when the packet arrived. A hint only: the
    /// packet may be another head's by now, or the entry name no port.
    #[inline(always)]
    fn prefetch_routed_lines(&self, swi: u32, gp: u32, packet: PacketId) {
        use crate::prefetch::{prefetch, prefetch_at};
        let lines = self.ports.credits.lines();
        prefetch_at(lines, gp as usize, 64);
        let dlid = self.arena[packet].dlid as usize;
        if dlid < self.switches.lft_stride {
            let port = self.switches.lft[swi as usize * self.switches.lft_stride + dlid];
            // `SwitchModel::gp` without its arithmetic's checks: for port 0
            // or `NO_PATH` (no route) it names another node's line or none,
            // a wasted hint but never a read.
            let ogp = (self.switches.lines[swi as usize].model.port_base as usize + port as usize).wrapping_sub(1);
            prefetch(lines, ogp);
            prefetch_at(lines, ogp, 64);
        }
    }

    /// Marks input queue `(gp, q)` for arbitration.
    #[inline]
    pub(crate) fn mark_pending(&mut self, swi: u32, gp: u32, q: u8) {
        let (w, b) = self.input_bit(swi, gp, q);
        self.switches.bits_mut(swi, w).pending |= b;
    }

    /// Marks every non-empty input queue of port `gp` for arbitration.
    #[inline(always)]
    pub(crate) fn mark_port_pending(&mut self, swi: u32, gp: u32) {
        let sm = &self.switches.lines[swi as usize].model;
        let (word, mask) = self.layout.port_bits(self.layout.local(sm.port_base, gp, 0));
        let w = self.switches.bits_mut(swi, word);
        w.pending |= mask & w.nonempty;
    }

    /// Marks every non-empty input queue of switch `swi` for arbitration.
    pub(crate) fn mark_all_pending(&mut self, swi: u32) {
        for k in 0..self.switches.lines[swi as usize].model.bits_words as usize {
            let w = self.switches.bits_mut(swi, k);
            w.pending |= w.nonempty;
        }
    }

    /// Makes the waiters of output port `gp` pending.
    // Always inlined: a few loads and one word on most switches, called two
    // or three times per switch hop.
    #[inline(always)]
    pub(crate) fn wake_waiters(&mut self, swi: u32, gp: u32) {
        let sm = &self.switches.lines[swi as usize].model;
        let words = sm.bits_words as usize;
        let wb = sm.wait_base as usize + (gp - sm.port_base) as usize * words;
        if !std::mem::take(&mut self.ports.out_mut(gp, 0).waited) {
            debug_assert!(self.switches.wait_bits.as_slice()[wb..wb + words].iter().all(|&w| w == 0), "a waiter parked without setting its output's `waited`");
            return;
        }
        for k in 0..words {
            let waiting = std::mem::take(&mut self.switches.wait_bits[wb + k]);
            self.switches.bits_mut(swi, k).pending |= waiting;
        }
    }

    /// Parks input queue `local` (bit index within switch `swi`) as a waiter
    /// of its output port `port`.
    #[inline]
    pub(crate) fn park(&mut self, swi: u32, local: usize, port: u8) {
        let sm = &self.switches.lines[swi as usize].model;
        let wb = sm.wait_base as usize + (port as usize - 1) * sm.bits_words as usize;
        self.switches.wait_bits[wb + local / 64] |= 1u64 << (local % 64);
        let gp = sm.gp(port);
        self.ports.out_mut(gp, 0).waited = true;
    }

    /// The crossbar slot of VL slot `slot`, which names the crossbar input
    /// or output of a (port, slot): the slot itself with a crossbar port per
    /// VL, 0 with a multiplexed crossbar.
    #[inline(always)]
    pub(crate) fn xslot(&self, slot: u8) -> u8 {
        slot & self.p.xbar_slot_mask
    }
}

/// The next set bit at or after `from`, below `nbits`, of the bitset of
/// `words` words that `word` gives.
#[inline]
pub(crate) fn next_bit(words: usize, word: impl Fn(usize) -> u64, from: usize, nbits: usize) -> Option<usize> {
    if from >= nbits {
        return None;
    }
    let mut w = from / 64;
    let mut cur = word(w) & (!0u64 << (from % 64));
    loop {
        if cur != 0 {
            let b = w * 64 + cur.trailing_zeros() as usize;
            return (b < nbits).then_some(b);
        }
        w += 1;
        if w >= words {
            return None;
        }
        cur = word(w);
    }
}

#[cfg(test)]
mod tests {
    use super::next_bit;

    #[test]
    fn next_bit_scans_words() {
        let w = [0b1010u64, 0, 1 << 5];
        assert_eq!(next_bit(w.len(), |k| w[k], 0, 192), Some(1));
        assert_eq!(next_bit(w.len(), |k| w[k], 2, 192), Some(3));
        assert_eq!(next_bit(w.len(), |k| w[k], 4, 192), Some(133));
        assert_eq!(next_bit(w.len(), |k| w[k], 134, 192), None);
        assert_eq!(next_bit(w.len(), |k| w[k], 4, 100), None);
    }

    #[test]
    fn next_bit_stops_below_nbits() {
        // "below nbits": a bit set exactly at nbits is past the range.
        let w = [1u64 << 5, 1];
        assert_eq!(next_bit(w.len(), |k| w[k], 0, 5), None);
        assert_eq!(next_bit(w.len(), |k| w[k], 0, 6), Some(5));
        assert_eq!(next_bit(w.len(), |k| w[k], 6, 64), None);
        assert_eq!(next_bit(w.len(), |k| w[k], 6, 65), Some(64));
    }
}
