//! Crossbar arbitration and transfer.
//!
//! Input queues compete in the order a crossbar arbiter gives
//! ([`crate::switch::arbiter`]; round robin by default), and each offers the
//! packets its organisation lets cross ([`crate::switch::organisation`]; by
//! default only its head). VL15 inputs go first. A packet takes part once its
//! routing delay has elapsed and its crossbar input can take one more
//! transfer — with a multiplexed crossbar one input per physical port, shared
//! by all its VLs; per VL otherwise; `switch.max_transfers_per_input` at once. The selection policy then picks a routing option that can
//! take the packet now, or none (the head waits; any change at the switch
//! re-arbitrates). Under a routing-time policy the head's options are first
//! narrowed to the one it chose when first routed here (see
//! [`crate::selection`]), so it waits for that one.
//!
//! *With output buffers*, the transfer moves the packet into the output buffer
//! of (port, VL) at `speedup` times the output link's rate, reserving the whole
//! packet there (virtual cut-through inside the switch), and the output link
//! may start as soon as it cannot underrun (see the module doc of `switch`).
//! *Without*, the crossbar connects the input directly to the link: an output
//! port whose link is free runs IBA VL arbitration over the VLs that have a
//! head selecting it (credits for the whole packet needed), then round robin
//! among those heads; an option on a VL the port never sends (no table
//! weight) is not selectable, so a head with another option takes that one.
//!
//! In both cases the input buffer space (and so the upstream credits) is freed
//! when the packet's last byte has left it.

use std::cell::Cell;

use crate::engine::{Event, EventQueue, Time};
use crate::metrics::DropReason;
use crate::packet::{Packet, PacketId, PacketKind, FLAG_FECN, FLAG_VL15, NIL};
use crate::selection::{Candidate, Candidates, SelectionView};
use crate::layout::Layout;
use crate::port::Ports;
use crate::sim::{Simulation, NONE};
use crate::switch::multicast::is_multicast;
use crate::switch::arbiter::CrossbarArbiter;
use crate::switch::organisation::InputBuffer;
use crate::switch::{RoutedHead, SwitchModel};

use super::input::next_bit;

/// Selection view with output buffers: the output's VL arbiter must ever send
/// the option's VL, the crossbar output must be free and the output buffer
/// must have room for the packet.
pub(super) struct BufferedView<'a> {
    ports: &'a Ports,
    port_base: u32,
    layout: Layout,
    /// `Params::xbar_slot_mask`: which bits of a VL slot name its crossbar output.
    xbar_slot_mask: u8,
    blocks: u32,
    vl15: bool,
}

impl<'a> BufferedView<'a> {
    /// The view for a packet of `blocks` credits (on VL15 if `flags` say so)
    /// at the switch whose port 1 is `port_base`.
    #[inline]
    pub(super) fn new(ports: &'a Ports, layout: Layout, xbar_slot_mask: u8, port_base: u32, blocks: u16, flags: u8) -> Self {
        BufferedView {
            ports,
            port_base,
            layout,
            xbar_slot_mask,
            blocks: blocks as u32,
            vl15: flags & FLAG_VL15 != 0,
        }
    }

    #[inline]
    fn gp(&self, c: &Candidate) -> u32 {
        Layout::node_port(self.port_base, c.port)
    }
}

impl SelectionView for BufferedView<'_> {
    #[inline]
    fn credits(&self, c: &Candidate) -> u32 {
        self.ports.credits.available(self.gp(c), self.layout.q(c.slot, c.partition))
    }
    #[inline]
    fn can_accept(&self, c: &Candidate) -> bool {
        let gp = self.gp(c);
        let o = self.ports.out(gp, c.slot);
        // The crossbar output is the one `Simulation::xslot` names: this
        // buffer's own with a port per VL.
        let x = c.slot & self.xbar_slot_mask;
        let crossing = if x == c.slot { o.crossing } else { self.ports.out(gp, x).crossing };
        // A packet buffered on a VL its output never sends would starve
        // there, though another option could take it.
        !crossing && o.fits(self.blocks) && o.served
    }
    #[inline]
    fn fits(&self, c: &Candidate) -> bool {
        self.vl15 || self.credits(c) >= self.blocks
    }
}

/// Selection view without output buffers: the output's VL arbiter must ever
/// send the option's VL, the link must be free, the next hop must have
/// credits for the whole packet (not for VL15), and starting now must not
/// overtake the packet's own arriving tail.
struct LinkView<'a> {
    ports: &'a Ports,
    now: Time,
    port_base: u32,
    layout: Layout,
    blocks: u32,
    wire: u32,
    tail_at: Time,
    vl15: bool,
    /// Earliest time an option refused only for underrun becomes possible.
    wake: Cell<Time>,
}

impl<'a> LinkView<'a> {
    /// The links of the switch whose first port is `port_base`, as packet `p` sees them now.
    #[inline]
    fn new(ports: &'a Ports, now: Time, layout: Layout, port_base: u32, p: &Packet) -> Self {
        LinkView {
            ports,
            now,
            port_base,
            layout,
            blocks: p.blocks as u32,
            wire: p.wire_bytes as u32,
            tail_at: p.tail_at,
            vl15: p.flags & FLAG_VL15 != 0,
            wake: Cell::new(Time::MAX),
        }
    }
}

impl SelectionView for LinkView<'_> {
    #[inline]
    fn credits(&self, c: &Candidate) -> u32 {
        self.ports.credits.available(Layout::node_port(self.port_base, c.port), self.layout.q(c.slot, c.partition))
    }
    #[inline]
    fn can_accept(&self, c: &Candidate) -> bool {
        let gp = Layout::node_port(self.port_base, c.port);
        // A VL the output never sends would hold the head for good, though
        // another option (another port, whose SL2VL may give another VL)
        // could take it.
        if self.ports.tx(gp).busy || !self.ports.out(gp, c.slot).served {
            return false;
        }
        if !self.fits(c) {
            return false;
        }
        let ser = self.ports.timing(gp).ser_ps(self.wire);
        if self.now + ser < self.tail_at {
            let w = self.tail_at - ser;
            if w < self.wake.get() {
                self.wake.set(w);
            }
            return false;
        }
        true
    }
    #[inline]
    fn fits(&self, c: &Candidate) -> bool {
        self.vl15 || self.credits(c) >= self.blocks
    }
}

/// A multicast head takes any port it owes a copy to that can take one now:
/// the selection policy chooses among paths, and a copy has exactly one.
#[inline]
pub(super) fn first_acceptable(cands: &Candidates, view: &impl SelectionView) -> Option<usize> {
    cands.as_slice().iter().position(|c| view.can_accept(c))
}

impl Simulation {
    /// An `XbarDone` event: the crossbar transfer of switch `swi` from port
    /// `input` to its port `out_port` has ended, so both crossbar ports are
    /// free again. Returns the output's global port.
    // Inlined into both its event handlers: a call per crossbar transfer.
    #[inline(always)]
    pub(crate) fn on_xbar_done(&mut self, swi: u32, input: u32, out_port: u8, in_slot: u8, out_slot: u8) -> u32 {
        // The input's and the output's crossbar state are in the second
        // halves of their lines: on a large fabric, misses that overlap with
        // the switch's own instead of following it.
        crate::prefetch::prefetch_at(self.ports.credits.lines(), input as usize, 64);
        let output = self.switches.lines[swi as usize].model.gp(out_port);
        crate::prefetch::prefetch_at(self.ports.credits.lines(), output as usize, 64);
        self.ports.xin_mut(input, self.xslot(in_slot)).end();
        self.ports.out_mut(output, self.xslot(out_slot)).crossing = false;
        self.mark_port_pending(swi, input);
        self.wake_waiters(swi, output);
        self.arbitrate_switch(swi);
        output
    }

    /// A `SwitchWake` event: a head that was held back by time (underrun, a
    /// lifetime deadline) may move or must go.
    #[inline]
    pub(crate) fn on_switch_wake(&mut self, swi: u32) {
        let st = &mut self.switches.lines[swi as usize].state;
        if st.wake_at != self.now {
            // Superseded by an earlier wake, which re-armed whatever still waits:
            // acting on it would clear the pending wake's mark and let the same
            // deadline be scheduled again, once more per stale wake.
            return;
        }
        st.wake_at = 0;
        self.mark_all_pending(swi);
        self.arbitrate_switch(swi);
    }

    /// Re-arbitrates switch `swi` after any change that may let a packet move.
    // The test for pending inputs inline at every caller: close to half the
    // calls find none, and then skip the call into the arbiters' large frame.
    #[inline(always)]
    pub(crate) fn arbitrate_switch(&mut self, swi: u32) {
        if !self.switches.nothing_pending(swi) {
            self.arbitrate_pending(swi);
        }
        #[cfg(debug_assertions)]
        self.check_no_head_left_behind(swi);
    }

    /// `arbitrate_switch` when some input of `swi` is pending.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    fn arbitrate_pending(&mut self, swi: u32) {
        if self.p.output_buffers {
            if self.p.plain_arbitration {
                self.arbitrate_plain(swi);
            } else {
                self.arbitrate_buffered(swi);
            }
        } else {
            self.arbitrate_bufferless(swi);
        }
    }

    /// Debug check of the pending/waiter bookkeeping: after arbitration, no
    /// packet that its input buffer lets cross (a FIFO's head; under `voq`
    /// each packet no earlier one waits before) may be able to move. (A
    /// packet routed exactly now is considered when its own `Routed` or
    /// `XbarDone` event at this time is handled, so it is not checked here.)
    #[cfg(debug_assertions)]
    fn check_no_head_left_behind(&mut self, swi: u32) {
        let sm = self.switches.lines[swi as usize].model;
        let qpp = self.layout.qpp;
        let voq = self.p.input_buffer == InputBuffer::Voq;
        for idx in 0..sm.num_ports as usize * qpp {
            let (gp, q) = self.layout.split_local(sm.port_base, idx);
            let slot = self.layout.slot_of_q(q);
            // Queue numbers past the last slot exist only to round a port's up.
            if slot as usize >= self.layout.nvl || self.ports.xin(gp, self.xslot(slot)).free() == 0 {
                continue;
            }
            let head = self.ports.inq(gp, q).head;
            let mut waiting = ibnetsim_sm::PortSet::new();
            let mut id = head;
            while id != NIL {
                let p = self.arena[id];
                if p.ready_at >= self.now || (id != head && is_multicast(p.dlid)) {
                    break;
                }
                let mut cands = Candidates::new();
                if self.route(swi, self.ports.model(gp).port, self.layout.pq(gp, q), id, &p, &mut cands).is_err() {
                    break;
                }
                Self::pinned_only(&p, &mut cands);
                let behind = cands.as_slice().iter().any(|c| waiting.contains(c.port));
                assert!(
                    behind || !self.movable(&sm, &p, &cands),
                    "t={} switch {} input port {} queue {}: a packet that can move was left waiting",
                    self.now, self.node_names[sm.node as usize], self.ports.model(gp).port, q
                );
                if !voq || is_multicast(p.dlid) {
                    break;
                }
                for c in cands.as_slice() {
                    waiting.insert(c.port);
                }
                id = p.next;
            }
        }
    }

    /// Whether packet `p` at switch `sm` could take one of `cands` now (for
    /// the debug check above).
    #[cfg(debug_assertions)]
    fn movable(&self, sm: &SwitchModel, p: &Packet, cands: &Candidates) -> bool {
        if self.p.output_buffers {
            let view = BufferedView::new(&self.ports, self.layout, self.p.xbar_slot_mask, sm.port_base, p.blocks, p.flags);
            cands.as_slice().iter().any(|c| view.can_accept(c) && (!self.p.fully_adaptive || view.fits(c)))
        } else {
            // The view already leaves out VLs the output's arbiter never
            // sends (a VL without table weight holds a request legitimately).
            let view = LinkView::new(&self.ports, self.now, self.layout, sm.port_base, p);
            cands.as_slice().iter().any(|c| view.can_accept(c))
        }
    }

    /// The routed head of input queue `(gp, q)` that may use the crossbar
    /// now, dropping heads that have no route; `None` when there is none.
    #[inline(always)]
    pub(super) fn eligible_head(&mut self, swi: u32, gp: u32, q: u8, cands: &mut Candidates) -> Option<PacketId> {
        let slot = self.layout.slot_of_q(q);
        loop {
            let i = self.layout.pq(gp, q);
            let head = self.ports.inq(gp, q).head;
            if head == NIL {
                return None;
            }
            let p = &self.arena[head];
            if p.ready_at > self.now {
                return None;
            }
            let xin_busy = self.ports.xin(gp, self.xslot(slot)).free() == 0;
            if xin_busy && is_multicast(p.dlid) && self.switches.mcast.copying(i, head) {
                // A copy of this head is crossing now: the head stays until
                // that copy has left its buffer (the transfer's end re-arbitrates).
                return None;
            }
            if let Some(reason) = self.mech.at_input_head(p, self.now) {
                self.discard_head(swi, gp, q, head, reason);
                continue;
            }
            if xin_busy {
                // Waiting for its crossbar input: a mechanism may act first.
                self.arm_head_deadline(swi, head);
                return None;
            }
            // A head keeps its options (and a routing-time choice) while it
            // waits: a head that had to wait is not routed again (see
            // `remember_route`).
            if p.remembered {
                let memo = self.switches.routed[i];
                debug_assert_eq!(memo.head, head, "a remembered head's options are its queue's");
                if memo.len == 1 {
                    cands.clear();
                    cands.push(memo.first);
                } else {
                    *cands = self.switches.routed_more[i];
                }
                return Some(head);
            }
            cands.clear();
            let in_port = self.switches.lines[swi as usize].model.port_of(gp);
            match self.route(swi, in_port, i, head, p, cands) {
                Ok(()) => {
                    if self.mech.selection.decides_at_routing() && !is_multicast(self.arena[head].dlid) {
                        self.pin_choice(swi, head, cands);
                    }
                    return Some(head);
                }
                Err(reason) => self.discard_head(swi, gp, q, head, reason),
            }
        }
    }

    /// Discards the head `head` of input queue `(gp, q)` for `reason`. Its
    /// buffer space is returned once it has fully arrived.
    pub(super) fn discard_head(&mut self, swi: u32, gp: u32, q: u8, head: PacketId, reason: DropReason) {
        let p = self.arena[head];
        let release = p.tail_at.max(self.now);
        let id = self.pop_input(swi, gp, q, self.now);
        debug_assert_eq!(id, head);
        self.return_input_credits(gp, q, &p, release);
        self.drop_packet(id, reason);
    }

    /// A head that has to wait: the switch is woken when a mechanism would
    /// act on it (its lifetime running out).
    #[inline]
    pub(super) fn arm_head_deadline(&mut self, swi: u32, id: PacketId) {
        if let Some(at) = self.mech.head_deadline(&self.arena[id]) {
            self.wake_switch_at(swi, at);
        }
    }

    /// Makes sure switch `swi` re-arbitrates at `at` (later than now).
    #[inline]
    fn wake_switch_at(&mut self, swi: u32, at: Time) {
        debug_assert!(at > self.now);
        let st = &mut self.switches.lines[swi as usize].state;
        if st.wake_at == 0 || st.wake_at > at {
            st.wake_at = at;
            self.schedule(at, Event::SwitchWake { switch: swi });
        }
    }

    /// The packet that crosses to output `port` now from the head `id` of
    /// input queue `(gp, q)` of switch `swi`, and whether the head leaves its
    /// queue (the crossbar input is busy until `free_at`). A unicast head
    /// itself leaves. A multicast head sends a copy and stays until its last
    /// copy, when it is retired.
    #[inline(always)]
    fn take_for_output(&mut self, swi: u32, gp: u32, q: u8, id: PacketId, port: u8, free_at: Time) -> (PacketId, bool) {
        if is_multicast(self.arena[id].dlid) {
            return self.take_copy(swi, gp, q, id, port, free_at);
        }
        let popped = self.pop_input(swi, gp, q, free_at);
        debug_assert_eq!(popped, id);
        (id, true)
    }

    /// `take_for_output` for a multicast head (kept out of line: the unicast
    /// path is the hot one).
    #[inline(never)]
    fn take_copy(&mut self, swi: u32, gp: u32, q: u8, id: PacketId, port: u8, free_at: Time) -> (PacketId, bool) {
        let p = self.arena[id];
        let in_port = self.switches.lines[swi as usize].model.port_of(gp);
        let more = self.switches.mcast.copied(swi, self.layout.pq(gp, q), id, p.dlid, in_port, port);
        let copy = self.arena.alloc(p);
        self.metrics.copies += 1;
        self.in_network += 1;
        if !more {
            let popped = self.pop_input(swi, gp, q, free_at);
            debug_assert_eq!(popped, id);
            self.arena.free(id);
            self.in_network -= 1;
            self.metrics.retired += 1;
        }
        (copy, !more)
    }

    /// Keeps the options of head `id` of input queue `(gp, q)`, which has to
    /// wait, for its next arbitration attempts (most heads move at their first
    /// attempt and are never remembered).
    #[inline]
    pub(super) fn remember_route(&mut self, gp: u32, q: u8, id: PacketId, cands: &Candidates) {
        if is_multicast(self.arena[id].dlid) {
            // Its options shrink with every copy.
            return;
        }
        debug_assert!(!cands.is_empty(), "a head with no route is dropped, not remembered");
        let i = self.layout.pq(gp, q);
        let first = cands.as_slice().first().copied().unwrap_or_default();
        self.switches.routed[i] = RoutedHead { head: id, len: cands.len() as u8, first };
        self.arena[id].remembered = true;
        if cands.len() > 1 {
            self.switches.routed_more[i] = *cands;
        }
    }

    /// Sends the credits of packet `p`, which has left input queue `(gp, q)`
    /// at `left_at`, back to the upstream transmitter: those of the buffer
    /// part it was sent to (its FIFO may be another part's, see
    /// `Simulation::input_fifo`).
    // Inlined into the grant, as it was before other changes there made
    // LLVM leave it a call per hop.
    #[inline(always)]
    fn return_input_credits(&mut self, gp: u32, q: u8, p: &Packet, left_at: Time) {
        if p.flags & FLAG_VL15 != 0 {
            return;
        }
        let queue = self.layout.q(self.layout.slot_of_q(q), p.part());
        self.advertise_credits(gp, queue, p.blocks, crate::credits::next_update(left_at, self.p.switch_credit_period_ps));
    }

    /// The next pending input of switch `swi` in round-robin order from `cur`
    /// below `hi`.
    #[inline]
    pub(super) fn next_pending(&self, swi: u32, cur: usize, hi: usize) -> Option<usize> {
        let words = self.switches.lines[swi as usize].model.bits_words as usize;
        next_bit(words, |w| self.switches.bits(swi, w).pending, cur, hi)
    }

    #[inline]
    pub(super) fn clear_pending(&mut self, swi: u32, idx: usize) {
        self.switches.bits_mut(swi, idx / 64).pending &= !(1u64 << (idx % 64));
    }

    /// Crossbar arbitration of switch `swi`, some of whose inputs are pending
    /// (both callers have tested that).
    fn arbitrate_buffered(&mut self, swi: u32) {
        let sm = self.switches.lines[swi as usize].model;
        let passes: &[bool] = if self.switches.lines[swi as usize].state.vl15_inputs > 0 { &[true, false] } else { &[false] };
        let mut cands = Candidates::new();
        for &vl15_only in passes {
            match self.p.crossbar_arbiter {
                CrossbarArbiter::RoundRobin => self.round_robin_pass::<false>(swi, &sm, vl15_only, &mut cands),
                CrossbarArbiter::OldestFirst => self.oldest_first_pass(swi, &sm, vl15_only, &mut cands),
                CrossbarArbiter::Islip => self.islip_pass(swi, &sm, vl15_only, &mut cands),
            }
        }
    }

    /// `arbitrate_buffered` for the default switch (round robin over FIFO
    /// heads, deterministic selection), compiled with those choices known:
    /// without the other arbiters, organisations and policies in the loop it
    /// takes fewer instructions (see `crates/sim/README.md`).
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    fn arbitrate_plain(&mut self, swi: u32) {
        let sm = self.switches.lines[swi as usize].model;
        if self.switches.lines[swi as usize].state.vl15_inputs > 0 {
            // VL15 heads go first: the general path's two passes.
            self.arbitrate_buffered(swi);
            return;
        }
        self.round_robin_pass::<true>(swi, &sm, false, &mut Candidates::new());
    }

    /// Offers pending input queue `idx` of switch `swi` to the crossbar, the
    /// way its organisation says (output buffers); true if a packet was granted.
    #[inline(always)]
    pub(super) fn serve_input(&mut self, swi: u32, sm: &SwitchModel, idx: usize, cands: &mut Candidates) -> bool {
        self.clear_pending(swi, idx);
        match self.p.input_buffer {
            InputBuffer::Fifo => self.serve_fifo::<false>(swi, sm, idx, cands),
            InputBuffer::Voq => self.serve_voq(swi, sm, idx, cands),
        }
    }

    // Inlined into its callers, as when it lived beside the arbitration loop:
    // the unicast grant is the hot path of every buffered switch.
    #[inline(always)]
    pub(super) fn grant_buffered(&mut self, swi: u32, gp: u32, q: u8, id: PacketId, c: Candidate) {
        let slot = self.layout.slot_of_q(q);
        let now = self.now;
        let ogp = self.switches.lines[swi as usize].model.gp(c.port);
        let p = self.arena[id];
        let ser_o = self.ports.timing(ogp).ser_ps(p.wire_bytes as u32);
        let xser = if self.p.speedup == 1.0 { ser_o } else { (ser_o as f64 / self.p.speedup).ceil() as Time };
        let xend = (now + xser).max(p.tail_at);
        self.ports.xin_mut(gp, self.xslot(slot)).start(xend);
        self.metrics.switch_hops += 1;
        self.ports.out_mut(ogp, self.xslot(c.slot)).crossing = true;
        let (moved, last) = self.take_for_output(swi, gp, q, id, c.port, xend);
        {
            let p = &mut self.arena[moved];
            p.ready_at = now.max(xend.saturating_sub(ser_o));
            p.tail_at = xend;
            p.slot = c.slot;
            p.set_part(c.partition);
            p.pinned = 0;
        }
        self.count_escape_hop(c);
        if self.p.credits_at_grant && p.flags & FLAG_VL15 == 0 {
            self.ports.credits.consume(ogp, self.layout.q(c.slot, c.partition), p.blocks);
        }
        let (used, cap) = {
            let o = self.ports.out_mut(ogp, c.slot);
            o.used += p.blocks as u32;
            (o.used, o.cap)
        };
        // Replies (ACKs, notifications) are not marked: only data congests.
        // A marked packet stays marked (and counts once).
        if p.kind() == PacketKind::Data && p.flags & FLAG_FECN == 0 && self.mech.on_grant(self.layout.pv(ogp, c.slot), used, cap) {
            self.arena[moved].flags |= FLAG_FECN;
        }
        self.ports.out_mut(ogp, c.slot).queue.push(&mut self.arena, moved);
        self.ports.tx_mut(ogp).outq_mask |= 1 << c.slot;
        if last {
            self.return_input_credits(gp, q, &p, xend);
        }
        let seq = self.queue.reserve();
        self.last_progress = now;
        self.link_fold = crate::sim::LinkFold { port: ogp, at: xend, taken: false };
        self.try_transmit(ogp);
        let (input, switch, out_port, in_slot, out_slot) = (gp, swi, c.port, slot, c.slot);
        let ev = if self.link_fold.taken {
            Event::XbarLinkDone { input, switch, out_port, in_slot, out_slot }
        } else {
            Event::XbarDone { input, switch, out_port, in_slot, out_slot }
        };
        self.link_fold.port = NONE;
        self.queue.push_reserved(now, xend, seq, ev);
    }

    fn arbitrate_bufferless(&mut self, swi: u32) {
        let sm = self.switches.lines[swi as usize].model;
        let (nvl, qpp) = (self.layout.nvl, self.layout.qpp);
        let nbits = sm.num_ports as usize * qpp;
        let nreq = sm.num_ports as usize * nvl;
        let mut cands = Candidates::new();
        loop {
            if self.switches.nothing_pending(swi) {
                return;
            }
            // Gather each pending head's selected option: the first head (in
            // round-robin order) per (output port, VL slot). Heads that select
            // one stay pending for the next round; the others are parked.
            self.switches.scratch_req[..nreq].fill(NONE);
            let mut any = false;
            let mut wake = Time::MAX;
            // The earliest lifetime deadline among the heads that request an
            // output: should no VL arbiter serve them, they wait until then.
            let mut requests_deadline = Time::MAX;
            let start = self.switches.lines[swi as usize].state.rr as usize % nbits;
            for (lo, hi) in [(start, nbits), (0, start)] {
                let mut cur = lo;
                while let Some(idx) = self.next_pending(swi, cur, hi) {
                    cur = idx + 1;
                    let (gp, q) = self.layout.split_local(sm.port_base, idx);
                    let Some(id) = self.eligible_head(swi, gp, q, &mut cands) else {
                        self.clear_pending(swi, idx);
                        continue;
                    };
                    let p = self.arena[id];
                    let view = LinkView::new(&self.ports, self.now, self.layout, sm.port_base, &p);
                    let sel = if is_multicast(p.dlid) { first_acceptable(&cands, &view) } else { self.mech.selection.select(&cands, &view) };
                    let underrun = view.wake.get();
                    wake = wake.min(underrun);
                    match sel {
                        Some(k) => {
                            if let Some(d) = self.mech.head_deadline(&p) {
                                requests_deadline = requests_deadline.min(d);
                            }
                            let c = cands.as_slice()[k];
                            let r = (c.port as usize - 1) * nvl + c.slot as usize;
                            let held = self.switches.scratch_req[r];
                            if held == NONE || self.request_preferred(id, self.layout.local_pq(sm.port_base, held as usize)) {
                                self.switches.scratch_req[r] = idx as u32;
                                self.switches.scratch_opt[r] = c;
                            }
                            any = true;
                        }
                        // Held back only until its tail can no longer be
                        // overtaken: keep it pending (time, not an event, frees it).
                        None if underrun != Time::MAX => {
                            self.remember_route(gp, q, id, &cands);
                            self.arm_head_deadline(swi, id);
                        }
                        None => {
                            self.remember_route(gp, q, id, &cands);
                            self.arm_head_deadline(swi, id);
                            self.clear_pending(swi, idx);
                            for c in cands.as_slice() {
                                self.park(swi, idx, c.port);
                            }
                        }
                    }
                }
            }
            if wake != Time::MAX {
                // Some head could go once its tail can no longer be overtaken.
                self.wake_switch_at(swi, wake);
            }
            if !any {
                return;
            }
            // One grant: the next output port (round robin) with requests, its
            // VL by VL arbitration (VL15 first), then that VL's head.
            let np = sm.num_ports as usize;
            let ostart = self.switches.lines[swi as usize].state.out_rr as usize % np;
            let mut granted = false;
            for k in 0..np {
                let o = (ostart + k) % np;
                let mut ready: u16 = 0;
                for s in 0..nvl {
                    if self.switches.scratch_req[o * nvl + s] != NONE {
                        ready |= 1 << s;
                    }
                }
                if ready == 0 {
                    continue;
                }
                let ogp = sm.port_base + o as u32;
                let vl15 = self.layout.vl15_slot;
                let slot = if ready & (1 << vl15) != 0 {
                    vl15
                } else {
                    let table = &self.ports.arb_tables[self.ports.port_arb[ogp as usize] as usize];
                    let req = &self.switches.scratch_req;
                    let (credits, inq_rest) = (&self.ports.credits, &self.ports.inq_rest);
                    let arena = &self.arena;
                    let (layout, first) = (self.layout, sm.port_base);
                    let blocks_of = |s: u8| {
                        arena[Ports::inq_in(credits, inq_rest, layout.local_pq(first, req[o * nvl + s as usize] as usize)).head].blocks
                    };
                    match self.ports.arbiter.pick(table, &mut self.ports.tx_cold[ogp as usize].arb, ready, self.layout.data_vls, blocks_of) {
                        Some(s) => s,
                        None => continue,
                    }
                };
                let r = o * nvl + slot as usize;
                let idx = self.switches.scratch_req[r] as usize;
                let (gp, in_q) = self.layout.split_local(sm.port_base, idx);
                self.clear_pending(swi, idx);
                self.grant_bufferless(gp, in_q, ogp, slot, self.switches.scratch_opt[r]);
                if self.p.max_transfers > 1 {
                    // The input may send more: its new head asks in the next round.
                    let w = self.switches.bits_mut(swi, idx / 64);
                    w.pending |= w.nonempty & (1u64 << (idx % 64));
                }
                let st = &mut self.switches.lines[swi as usize].state;
                st.out_rr = ((o + 1) % np) as u32;
                st.rr = ((idx + 1) % nbits) as u32;
                granted = true;
                break;
            }
            if !granted {
                // Requests exist but no VL arbiter would serve them: they wait
                // for a change at the outputs. A guard only: requests are on
                // VLs their outputs send (`LinkView`), and both arbiters grant
                // one whenever such a VL is ready.
                for k in 0..nreq {
                    let r = self.switches.scratch_req[k];
                    if r != NONE {
                        self.clear_pending(swi, r as usize);
                        self.park(swi, r as usize, (k / nvl + 1) as u8);
                    }
                }
                if requests_deadline != Time::MAX {
                    self.wake_switch_at(swi, requests_deadline);
                }
                return;
            }
        }
    }

    /// Counts a `fully-adaptive` grant on option `c` by kind (results'
    /// `fully_adaptive`).
    #[inline]
    fn count_escape_hop(&mut self, c: Candidate) {
        if self.p.fully_adaptive {
            self.metrics.fa_hops[if !c.escape { 0 } else { 1 + c.partition as usize }] += 1;
        }
    }

    fn grant_bufferless(&mut self, gp: u32, q: u8, ogp: u32, oslot: u8, opt: Candidate) {
        self.count_escape_hop(opt);
        let now = self.now;
        let slot = self.layout.slot_of_q(q);
        let id = self.ports.inq(gp, q).head;
        let p = self.arena[id];
        let end = now + self.ports.timing(ogp).ser_ps(p.wire_bytes as u32);
        // The transfer lasts as long as the link's transmission.
        self.ports.xin_mut(gp, self.xslot(slot)).start(end);
        self.metrics.switch_hops += 1;
        let oport = self.ports.model(ogp).port;
        let (moved, last) = self.take_for_output(self.ports.model(gp).switch(), gp, q, id, oport, end);
        {
            let p = &mut self.arena[moved];
            p.pinned = 0;
            p.set_part(opt.partition);
        }
        if last {
            self.return_input_credits(gp, q, &p, end);
        }
        self.start_transmission(ogp, moved, oslot, false);
        let cold = &mut self.ports.tx_cold[ogp as usize];
        cold.feeding_input = gp;
        cold.feeding_slot = slot;
    }
}

#[cfg(test)]
mod tests {
    use ibnetsim_fabric::gen::FatTreeParams;
    use ibnetsim_sm::routing::build_engine;
    use ibnetsim_sm::{LidMap, RoutingOptions};

    use crate::{ClassConfig, PatternConfig, ProcessKind, SimConfig, Simulation};

    /// A 4-ary 2-tree routed by `ftree`, the default switch, uniform traffic
    /// at 0.9 (past saturation, so that heads wait for busy outputs).
    fn saturated_4_ary_2_tree() -> Simulation {
        four_ary_2_tree(0.9)
    }

    /// A 4-ary 2-tree routed by `ftree`, the default switch, uniform traffic
    /// at `load`.
    fn four_ary_2_tree(load: f64) -> Simulation {
        let f = FatTreeParams::new(4, 2).build().unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let t = build_engine("ftree", &RoutingOptions::default()).unwrap().route(&f, &lids).unwrap().tables;
        let mut cfg = SimConfig::default();
        cfg.traffic.classes = vec![ClassConfig {
            name: "uniform".into(),
            load,
            process: ProcessKind::Poisson,
            payload_bytes: 256,
            pattern: PatternConfig::Uniform,
            ..ClassConfig::default()
        }];
        Simulation::new(&f, &lids, &t, &cfg).unwrap()
    }

    /// `sim` and a copy changed by `change`, each run for 200 µs.
    fn both_ways(sim: Simulation, change: impl FnOnce(&mut Simulation)) -> [Simulation; 2] {
        let mut other = sim.clone();
        change(&mut other);
        let mut runs = [sim, other];
        for sim in &mut runs {
            sim.run(200_000_000).unwrap();
        }
        runs
    }

    /// Asserts that runs `a` and `b` end with the same results but for their
    /// events of `kind` (`a` has fewer, and no more of another kind);
    /// returns each one's count of them.
    fn same_but_events_of(kind: &str, a: &Simulation, b: &Simulation) -> (u64, u64) {
        let (mut ra, mut rb) = (a.results(), b.results());
        let (na, nb) = (ra.events_by_kind.remove(kind).unwrap_or(0), rb.events_by_kind.remove(kind).unwrap_or(0));
        assert_eq!(rb.events - ra.events, nb - na, "only {kind} events are left out");
        ra.events = rb.events;
        assert_eq!(ra, rb);
        (na, nb)
    }

    /// Heads that had to wait keep their options: on a saturated 4-ary
    /// 2-tree some heads are remembered at any time, and each memo holds the
    /// head and the options routing gives it again.
    #[test]
    fn a_waiting_head_keeps_the_options_routing_gives_it() {
        let mut sim = saturated_4_ary_2_tree();
        let mut remembered = 0;
        for step in 1..=20u64 {
            sim.run(step * 10_000_000).unwrap();
            for i in 0..sim.ports.inq_len() {
                let head = sim.ports.inq_at(i).head;
                if head == crate::packet::NIL || !sim.arena[head].remembered {
                    continue;
                }
                remembered += 1;
                let memo = sim.switches.routed[i];
                assert_eq!((memo.head, memo.len), (head, 1));
                let (gp, _) = sim.layout.split_q(i);
                let pm = *sim.ports.model(gp);
                let mut cands = crate::selection::Candidates::new();
                sim.route(pm.switch(), pm.port, i, head, &sim.arena[head], &mut cands).unwrap();
                assert_eq!(cands.as_slice(), &[memo.first]);
            }
        }
        assert!(remembered > 0, "no head had to wait");
    }

    /// The default switch's compiled path (`arbitrate_plain`) grants exactly
    /// what the general path grants: the same run both ways, with heads
    /// waiting for busy outputs (uniform traffic past saturation on a 4-ary
    /// 2-tree), ends with the same results and the same events.
    #[test]
    fn the_default_switchs_own_path_grants_what_the_general_path_grants() {
        let plain = saturated_4_ary_2_tree();
        assert!(plain.p.plain_arbitration, "the default configuration takes the compiled path");
        let [plain, general] = both_ways(plain, |sim| sim.p.plain_arbitration = false);
        assert!(plain.delivered() > 1_000, "{} delivered", plain.delivered());
        let r = plain.results();
        let (min, max) = (r.network_latency.min_ps.unwrap(), r.network_latency.max_ps.unwrap());
        assert!(max > 3 * min, "heads must have waited for outputs: network latency {min}..{max} ps");
        assert_eq!((plain.events(), plain.delivered()), (general.events(), general.delivered()));
        assert_eq!(r, general.results());
    }

    /// A head that arrives while its crossbar input is busy until it is
    /// routed, offered by the end of that transfer without a `Routed` event
    /// of its own, moves exactly when it would have moved with one: the same
    /// run both ways, past saturation, ends with the same results, with
    /// fewer `Routed` events (and no other event kind changed).
    #[test]
    fn a_head_offered_at_its_inputs_transfer_end_needs_no_routed_event() {
        let skipping = saturated_4_ary_2_tree();
        assert!(skipping.p.offer_at_transfer_end, "the default configuration offers such heads at the transfer's end");
        let [skipping, every] = both_ways(skipping, |sim| sim.p.offer_at_transfer_end = false);
        assert!(skipping.delivered() > 1_000, "{} delivered", skipping.delivered());
        let (routed_a, routed_b) = same_but_events_of("Routed", &skipping, &every);
        assert!(routed_a < routed_b * 9 / 10, "{routed_a} Routed events against {routed_b}");
    }

    /// A host transmitter left to free itself without a `LinkFree` event
    /// (nothing more to send) behaves as with the event: the same runs,
    /// below and past saturation, end with the same results, with fewer
    /// `LinkFree` events below it.
    #[test]
    fn a_host_with_nothing_to_send_frees_its_link_without_an_event() {
        for (load, fewer) in [(0.3, true), (0.9, false)] {
            let lazy = four_ary_2_tree(load);
            assert!(lazy.p.lazy_host_free, "the default configuration frees idle hosts' links lazily");
            let [lazy, eager] = both_ways(lazy, |sim| sim.p.lazy_host_free = false);
            assert!(lazy.delivered() > 500, "{} delivered", lazy.delivered());
            let (free_a, free_b) = same_but_events_of("LinkFree", &lazy, &eager);
            if fewer {
                assert!(free_a < free_b * 9 / 10, "load {load}: {free_a} LinkFree events against {free_b}");
            }
        }
    }

    /// A crossbar with a port per VL gives each (port, VL) its own crossbar
    /// input and output; a multiplexed one gives a port's VLs one for all.
    #[test]
    fn a_per_vl_crossbar_has_a_port_per_vl_and_a_multiplexed_one_per_port() {
        use crate::config::CrossbarKind;
        let f = FatTreeParams::new(4, 2).build().unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let t = build_engine("ftree", &RoutingOptions::default()).unwrap().route(&f, &lids).unwrap().tables;
        for (kind, per_vl) in [(CrossbarKind::PerVl, true), (CrossbarKind::Multiplexed, false)] {
            let mut cfg = SimConfig { data_vls: 2, ..SimConfig::default() };
            cfg.switch.crossbar = kind;
            let mut sim = Simulation::new(&f, &lids, &t, &cfg).unwrap();
            assert_eq!(sim.layout.nvl, 3);
            for gp in [0, 5, sim.layout.ports as u32 - 2] {
                for slot in 0..sim.layout.nvl as u8 {
                    // A transfer from (gp, slot) occupies the crossbar input
                    // of exactly the slots that share it, and of no other port.
                    let xslot = sim.xslot(slot);
                    sim.ports.xin_mut(gp, xslot).start(7);
                    for other in 0..sim.layout.nvl as u8 {
                        let busy = sim.ports.xin(gp, sim.xslot(other)).free() == 0;
                        assert_eq!(busy, !per_vl || other == slot, "{kind:?}: port {gp} slot {slot}, then slot {other}");
                        assert_eq!(sim.ports.xin(gp + 1, sim.xslot(other)).free(), 1, "{kind:?}: the next port's");
                    }
                    sim.ports.xin_mut(gp, xslot).end();
                }
            }
        }
    }
}
