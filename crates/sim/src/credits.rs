//! Credit-based link-level flow control per VL (IBA 7.9).
//!
//! Buffers are counted in 64-byte blocks. A transmitter may start a packet only
//! when the receiver has advertised credits for the whole packet (virtual
//! cut-through); the credits it consumed come back when the packet's last byte
//! has left the receiver's buffer, one propagation delay later over the reverse
//! direction of the same link (flow-control packets are not charged link
//! bandwidth). VL15 is not flow controlled: a receiver without room drops the
//! packet (IBA 7.9.4); see `sim.rs`.

use crate::engine::event_key;
use crate::port::PortLine;
use crate::table::IdVec;

/// Bytes per flow-control block.
pub const CREDIT_BYTES: u32 = 64;

/// Blocks a packet of `wire_bytes` occupies in a buffer.
#[inline]
pub fn blocks_for(wire_bytes: u32) -> u16 {
    wire_bytes.div_ceil(CREDIT_BYTES) as u16
}

/// Whole blocks in a buffer of `bytes`.
#[inline]
pub fn buffer_blocks(bytes: u32) -> u32 {
    bytes / CREDIT_BYTES
}

/// When credits freed at `freed` leave the receiver: then, or with the next
/// periodic update when the receiver sends them every `period` (its updates
/// go out at the multiples of the period).
#[inline]
pub fn next_update(freed: u64, period: u64) -> u64 {
    if period == 0 {
        freed
    } else {
        freed.div_ceil(period) * period
    }
}

/// Credit returns one transmitter may hold as arriving "on their own"
/// before further ones need events. Two fit in the transmitter's line
/// (`PortLine`), and are enough where a packet takes longer to send than
/// its credits take to come back: a full line first counts in the returns
/// already due, and on the benchmarks' fabrics at most one return was ever
/// still on its way when another was deferred. On longer cables more can
/// be: each further return is an event, with the same effect on every
/// count. Only the number of events grows, and with it the moments at which
/// the once-per-period checks that run at the first event after their time
/// (the stall check, the deadlock scan) may look.
pub const DEFERRED_PER_PORT: usize = 2;

/// Bits of a sequence number a deferred return keeps; a return whose event
/// would have a larger one is not deferred (2^40 events take hours).
const SEQ_BITS: u32 = 40;

/// A credit return on its way back: due at `(time, seq)`, the key its
/// `Credit` event would have had; `seq`, `blocks` and `queue` packed in
/// `tag` (seq in the high bits, so `tag >> 24` is the sequence number).
#[derive(Debug, Clone, Copy, Default)]
struct Return {
    time: u64,
    tag: u64,
}

impl Return {
    #[inline]
    fn new(time: u64, seq: u64, blocks: u16, queue: u8) -> Self {
        Return { time, tag: seq << 24 | (blocks as u64) << 8 | queue as u64 }
    }
    #[inline]
    fn seq(&self) -> u64 {
        self.tag >> 24
    }
    #[inline]
    fn blocks(&self) -> u16 {
        (self.tag >> 8) as u16
    }
    #[inline]
    fn queue(&self) -> u8 {
        self.tag as u8
    }
    #[inline]
    fn key(&self) -> u128 {
        event_key(self.time, self.seq())
    }
}

/// Queues whose credits a transmitter keeps in its own cache line: queue
/// 0, VL0's (VL15's queue is not flow controlled); the others are in
/// [`Credits`]' `avail_rest`.
pub const INLINE_QUEUES: usize = 1;

/// One transmitter's credits: those of its first [`INLINE_QUEUES`] queues,
/// and its deferred returns, 40 bytes, in its port's line
/// ([`crate::port::PortLine`]) beside the transmitter's state.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PortCredits {
    avail: [u32; INLINE_QUEUES],
    r: [Return; DEFERRED_PER_PORT],
    n: u8,
    /// Its credits always arrive as events (see [`Credits::new`]).
    eager: bool,
}

/// Credits each transmitter holds for each input queue (VL slot and buffer
/// partition, see [`crate::layout`]) of its receiver. They are kept in the
/// ports' lines ([`PortLine`]), which are kept here: the credits are the
/// part of a line every packet sent reads and writes, and `Ports` reaches
/// the rest of a line (its transmitter, description, first output buffer
/// and first input queue) through [`Credits::line`].
///
/// A credit return is an event only when its arrival can make something
/// happen: when the transmitter is idle with a packet waiting (it may be the
/// credits it waits for), or always for switch ports whose credits decide
/// crossbar arbitration ("eager" ports). Otherwise — most returns, on a
/// fabric below saturation — the return is *deferred*: kept here with the
/// key (time, sequence number) its event would have had, and counted by
/// every read made while handling an event with a later key, exactly as if
/// the event had been handled. A transmitter that becomes idle with a packet
/// waiting turns its deferred returns into events
/// ([`crate::Simulation`]'s `try_transmit`), so from then on the old event
/// order holds for it.
#[derive(Debug, Clone)]
pub(crate) struct Credits {
    /// Credits of queues `INLINE_QUEUES..queues`, by port.
    avail_rest: IdVec<u32>,
    /// `queues − INLINE_QUEUES`, or 0.
    rest: usize,
    /// Each port's line, by global port.
    per_port: IdVec<PortLine>,
    /// Key of the event being handled: returns due before it have arrived.
    now_key: u128,
}

impl Credits {
    /// The ports' `lines`, given their credits: `capacity[port * queues +
    /// queue]` blocks advertised initially; `eager[port]`: credits returned
    /// to `port` are always events.
    pub(crate) fn new(mut lines: Vec<PortLine>, capacity: Vec<u32>, queues: usize, eager: &[bool]) -> Self {
        debug_assert_eq!((capacity.len(), lines.len()), (queues * eager.len(), eager.len()));
        let rest = queues.saturating_sub(INLINE_QUEUES);
        let mut avail_rest = Vec::with_capacity(rest * eager.len());
        for ((line, &eager), cap) in lines.iter_mut().zip(eager).zip(capacity.chunks(queues.max(1))) {
            let mut d = PortCredits { eager, ..PortCredits::default() };
            let inline = cap.len().min(INLINE_QUEUES);
            d.avail[..inline].copy_from_slice(&cap[..inline]);
            avail_rest.extend_from_slice(&cap[inline..]);
            line.c = d;
        }
        Credits { avail_rest: avail_rest.into(), rest, per_port: lines.into(), now_key: 0 }
    }

    /// The line of port `port`.
    #[inline(always)]
    pub(crate) fn line(&self, port: u32) -> &PortLine {
        &self.per_port[port as usize]
    }

    /// Likewise, to change.
    #[inline(always)]
    pub(crate) fn line_mut(&mut self, port: u32) -> &mut PortLine {
        &mut self.per_port[port as usize]
    }

    /// Every port's line, by global port.
    pub(crate) fn lines(&self) -> &[PortLine] {
        &self.per_port
    }

    /// The count of `port`'s `queue`.
    #[inline(always)]
    fn avail_mut(&mut self, port: u32, queue: u8) -> &mut u32 {
        match (queue as usize).checked_sub(INLINE_QUEUES) {
            None => &mut self.per_port[port as usize].c.avail[queue as usize],
            Some(k) => &mut self.avail_rest[port as usize * self.rest + k],
        }
    }

    /// Sets the key (time, sequence number) of the event being handled;
    /// `u64::MAX` as the sequence number means "after every event of that time".
    #[inline]
    pub fn set_now(&mut self, time: u64, seq: u64) {
        self.now_key = event_key(time, seq);
    }

    /// Whether an event of key `(time, seq)` would have been handled before
    /// the current one.
    #[inline]
    pub fn is_past(&self, time: u64, seq: u64) -> bool {
        event_key(time, seq) < self.now_key
    }

    /// Blocks available at transmitter `port` for the receiver's `queue`.
    #[inline]
    pub fn available(&self, port: u32, queue: u8) -> u32 {
        let d = &self.per_port[port as usize].c;
        let mut a = match (queue as usize).checked_sub(INLINE_QUEUES) {
            None => d.avail[queue as usize],
            Some(k) => self.avail_rest[port as usize * self.rest + k],
        };
        for r in &d.r[..d.n as usize] {
            if r.queue() == queue && r.key() < self.now_key {
                a += r.blocks() as u32;
            }
        }
        a
    }

    /// Consumes `blocks` for a packet about to be sent.
    // Inlined into the transmission, with the settling of due returns: as
    // calls they cost 70 instructions per packet sent, a tenth of them the
    // calls themselves (crates/sim/README.md, twelfth stop).
    #[inline(always)]
    pub fn consume(&mut self, port: u32, queue: u8, blocks: u16) {
        self.settle(port);
        let a = self.avail_mut(port, queue);
        debug_assert!(*a >= blocks as u32, "sent without credits");
        *a -= blocks as u32;
    }

    /// Credits returned by the receiver (a `Credit` event).
    #[inline]
    pub fn give_back(&mut self, port: u32, queue: u8, blocks: u16) {
        *self.avail_mut(port, queue) += blocks as u32;
    }

    /// Keeps a return due at `(time, seq)` instead of its event, if `port`
    /// takes deferred returns and has room; false if it needs the event.
    #[inline]
    pub fn defer(&mut self, port: u32, queue: u8, blocks: u16, time: u64, seq: u64) -> bool {
        if self.per_port[port as usize].c.eager || seq >> SEQ_BITS != 0 {
            return false;
        }
        // Only a full line needs the returns due by now counted in first:
        // the counts a later read sees are the same either way.
        if self.per_port[port as usize].c.n as usize == DEFERRED_PER_PORT {
            self.settle_due(port);
        }
        let d = &mut self.per_port[port as usize].c;
        if d.n as usize == DEFERRED_PER_PORT {
            return false;
        }
        d.r[d.n as usize] = Return::new(time, seq, blocks, queue);
        d.n += 1;
        true
    }

    /// Whether `port` holds deferred returns.
    #[inline]
    pub fn has_deferred(&self, port: u32) -> bool {
        self.per_port[port as usize].c.n > 0
    }

    /// Takes `port`'s deferred returns that are still on their way, as
    /// `(time, seq, queue, blocks)`, to be scheduled as events; those due
    /// already are counted as arrived.
    pub fn take_deferred(&mut self, port: u32) -> impl Iterator<Item = (u64, u64, u8, u16)> {
        self.settle(port);
        let d = &mut self.per_port[port as usize].c;
        let n = std::mem::take(&mut d.n) as usize;
        let r = d.r;
        r.into_iter().take(n).map(|r| (r.time, r.seq(), r.queue(), r.blocks()))
    }

    /// Counts `port`'s deferred returns that are due as arrived.
    #[inline(always)]
    fn settle(&mut self, port: u32) {
        if self.per_port[port as usize].c.n != 0 {
            self.settle_due(port);
        }
    }

    // The order of the returns still on their way means nothing (every read
    // sums them, and each becomes an event of its own when taken); they
    // keep it anyway.
    #[inline(always)]
    fn settle_due(&mut self, port: u32) {
        let now = self.now_key;
        let d = &mut self.per_port[port as usize].c;
        let n = (d.n as usize).min(DEFERRED_PER_PORT);
        let mut kept = 0;
        for k in 0..n {
            let r = d.r[k];
            if r.key() >= now {
                d.r[kept] = r;
                kept += 1;
            } else if (r.queue() as usize) < INLINE_QUEUES {
                d.avail[r.queue() as usize] += r.blocks() as u32;
            } else {
                self.avail_rest[port as usize * self.rest + r.queue() as usize - INLINE_QUEUES] += r.blocks() as u32;
            }
        }
        d.n = kept as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::{OutBuffer, PortModel};
    use crate::sim::NONE;

    /// `Credits::new` for ports that are nothing but their credits.
    fn credits(capacity: Vec<u32>, queues: usize, eager: &[bool]) -> Credits {
        let line = PortLine::new(PortModel::new(1, NONE, NONE, NONE, NONE, 0), OutBuffer::default(), crate::switch::CrossbarInput::new(1));
        Credits::new(vec![line; eager.len()], capacity, queues, eager)
    }

    #[test]
    fn a_transmitters_credits_fill_the_rest_of_its_cache_line() {
        assert_eq!(std::mem::size_of::<PortCredits>(), 40);
        assert_eq!(std::mem::size_of::<crate::port::TxState>() + std::mem::size_of::<PortCredits>(), 64);
    }

    #[test]
    fn queues_past_the_inline_ones_keep_their_own_counts() {
        // Five queues per port: one in the port's line, four apart.
        let cap: Vec<u32> = (1..=10).collect();
        let mut c = credits(cap, 5, &[false, false]);
        assert_eq!((0..5).map(|q| c.available(1, q)).collect::<Vec<_>>(), [6, 7, 8, 9, 10]);
        c.set_now(10, 0);
        c.consume(1, 4, 10);
        c.consume(0, 3, 4);
        assert!(c.defer(1, 4, 3, 20, 5));
        assert!(c.defer(1, 2, 2, 20, 6));
        c.set_now(20, 7);
        assert_eq!((0..5).map(|q| c.available(1, q)).collect::<Vec<_>>(), [6, 7, 10, 9, 3]);
        c.consume(1, 4, 1);
        assert!(!c.has_deferred(1), "consuming settled both returns");
        assert_eq!((0..5).map(|q| c.available(1, q)).collect::<Vec<_>>(), [6, 7, 10, 9, 2]);
        assert_eq!((0..5).map(|q| c.available(0, q)).collect::<Vec<_>>(), [1, 2, 3, 0, 5]);
        c.give_back(0, 3, 4);
        assert_eq!(c.available(0, 3), 4);
    }

    #[test]
    fn blocks_round_up() {
        assert_eq!(blocks_for(282), 5);
        assert_eq!(blocks_for(64), 1);
        assert_eq!(blocks_for(65), 2);
        assert_eq!(buffer_blocks(1056), 16);
        assert_eq!(buffer_blocks(4200), 65);
    }

    #[test]
    fn consume_and_return() {
        let mut c = credits(vec![16, 8], 2, &[false]);
        c.consume(0, 1, 5);
        assert_eq!(c.available(0, 1), 3);
        c.give_back(0, 1, 5);
        assert_eq!(c.available(0, 1), 8);
        assert_eq!(c.available(0, 0), 16);
    }

    #[test]
    fn a_deferred_return_counts_from_the_events_after_its_key() {
        let mut c = credits(vec![16, 8, 4, 4], 2, &[false, true]);
        c.set_now(100, 7);
        c.consume(0, 1, 5);
        // Due at time 300 with sequence number 9 (its event's key).
        assert!(c.defer(0, 1, 5, 300, 9));
        assert_eq!(c.available(0, 1), 3);
        c.set_now(300, 8);
        assert_eq!(c.available(0, 1), 3, "an event ordered before it does not see it");
        assert!(c.is_past(300, 7) && !c.is_past(300, 8) && !c.is_past(300, 9) && c.is_past(299, u64::MAX));
        c.set_now(300, 10);
        assert_eq!(c.available(0, 1), 8);
        assert_eq!(c.available(0, 0), 16, "another queue's credits are not changed");
        // A consumption settles it for good.
        c.consume(0, 1, 8);
        assert!(!c.has_deferred(0));
        assert_eq!(c.available(0, 1), 0);
        // An eager port never defers.
        assert!(!c.defer(1, 0, 1, 400, 11));
    }

    #[test]
    fn a_full_port_needs_events_and_taking_keeps_the_ones_not_due() {
        let mut c = credits(vec![0, 0], 1, &[false, false]);
        c.set_now(10, 0);
        assert_eq!(DEFERRED_PER_PORT, 2);
        assert!(c.defer(0, 0, 1, 20, 1));
        assert!(c.defer(0, 0, 1, 22, 2));
        assert!(!c.defer(0, 0, 1, 30, 9), "no room: the return needs its event");
        c.set_now(21, 100);
        // Due at 20 (a key below (21, 100)) has arrived; 22 is on its way.
        let left: Vec<_> = c.take_deferred(0).collect();
        assert_eq!(left, vec![(22, 2, 0, 1)]);
        assert_eq!(c.available(0, 0), 1);
        assert!(!c.has_deferred(0));
    }

    #[test]
    fn a_full_line_makes_room_by_counting_in_the_returns_due() {
        let mut c = credits(vec![0], 1, &[false]);
        c.set_now(10, 0);
        assert!(c.defer(0, 0, 1, 20, 1));
        assert!(c.defer(0, 0, 1, 22, 2));
        // Due at 20 has arrived, 22 has not.
        c.set_now(21, 100);
        assert!(c.defer(0, 0, 5, 40, 101), "a return was due: room for a new one");
        assert_eq!(c.available(0, 0), 1);
        let left: Vec<_> = c.take_deferred(0).collect();
        assert_eq!(left, vec![(22, 2, 0, 1), (40, 101, 0, 5)]);
    }

    #[test]
    fn a_deferred_return_keeps_its_whole_key_and_a_larger_one_is_not_deferred() {
        let mut c = credits(vec![0, 0, 0, 0], 4, &[false]);
        // The largest sequence number kept, the largest block count and queue.
        let seq = (1u64 << 40) - 1;
        assert!(c.defer(0, 3, u16::MAX, 5, seq));
        c.set_now(5, seq);
        assert_eq!(c.available(0, 3), 0, "not before its own key");
        c.set_now(5, seq + 1);
        assert_eq!(c.available(0, 3), 65_535);
        assert_eq!(c.available(0, 2), 0);
        assert!(!c.defer(0, 0, 1, 6, 1 << 40), "a sequence number past 40 bits needs its event");
    }
}
