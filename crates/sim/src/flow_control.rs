//! Flow-control packets charged on the link that carries them.
//!
//! A receiver advertises freed buffer space to its upstream transmitter in
//! flow-control packets (IBA 7.9.4: 4 bytes and a 2-byte LPCRC, so 6 on the
//! wire), sent on its own outgoing link, which is the reverse direction of the
//! link the data came in on. By default (`credit_packet_bytes = 0` in
//! `[switch]` and `[hca]`) they take no link time: the credits leave when
//! freed (or at the next periodic update) and arrive one propagation delay
//! later. With `credit_packet_bytes > 0` each advertisement is a packet that
//! occupies the receiver's transmitter for its serialization time:
//!
//! * credits of one input queue freed while an earlier advertisement of it
//!   still waits for the link ride in that packet (an FCP carries the
//!   queue's running total, so one packet says it all);
//! * an advertisement goes ahead of the next data packet, but never
//!   interrupts one: a transmitter busy with data sends it when that ends;
//! * the credits arrive when the packet's last byte has crossed the cable;
//! * its time counts in the port's utilization, on the VL whose credits it
//!   carries, and [`FlowControlPackets::sent`] counts them.
//!
//! Advertisements due at the same moment (the multiples of a periodic update
//! interval) are gathered before the first goes out: the start is an event
//! scheduled behind them.

use crate::engine::{Event, Time};
use crate::sim::Simulation;

/// Advertisements waiting for their port's transmitter.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlowControlPackets {
    /// Wire bytes of one packet at each port (0: not charged), by global port.
    bytes: Vec<u16>,
    /// Blocks freed and not yet advertised, by [`crate::layout::Layout::pq`].
    ready: Vec<u32>,
    /// Queues with blocks in `ready`, a bit per queue, by global port.
    waiting: Vec<u64>,
    /// A `FcpStart` event is pending, by global port.
    start_pending: Vec<bool>,
    /// Flow-control packets sent since time 0.
    pub sent: u64,
}

impl FlowControlPackets {
    /// Charges `bytes[port]` per packet; none at all when every entry is 0.
    pub fn new(bytes: Vec<u16>, queues_per_port: usize) -> Self {
        if bytes.iter().all(|&b| b == 0) {
            return FlowControlPackets::default();
        }
        let ports = bytes.len();
        FlowControlPackets { bytes, ready: vec![0; ports * queues_per_port], waiting: vec![0; ports], start_pending: vec![false; ports], sent: 0 }
    }

    /// Whether port `gp`'s advertisements are packets of their own.
    #[inline]
    pub fn charged(&self, gp: u32) -> bool {
        self.bytes.get(gp as usize).is_some_and(|&b| b > 0)
    }

    /// Whether port `gp` has advertisements waiting for its transmitter.
    #[inline]
    pub fn waiting(&self, gp: u32) -> bool {
        self.waiting.get(gp as usize).is_some_and(|&w| w != 0)
    }
}

impl Simulation {
    /// Port `gp` has freed `blocks` of its input queue `q`, to be advertised
    /// upstream from `send_at` on (now, or its next periodic update).
    #[inline(always)]
    pub(crate) fn advertise_credits(&mut self, gp: u32, q: u8, blocks: u16, send_at: Time) {
        let pm = *self.ports.model(gp);
        if !self.ports.fcp.charged(gp) {
            self.return_credits(pm.peer, q, blocks, send_at + self.ports.timing(gp).propagation_ps);
        } else if send_at > self.now {
            self.schedule(send_at, Event::FcpDue { port: gp, queue: q, blocks });
        } else {
            self.on_fcp_due(gp, q, blocks);
        }
    }

    /// Credits of `gp`'s input queue `q` are due to be advertised now.
    #[cold]
    pub(crate) fn on_fcp_due(&mut self, gp: u32, q: u8, blocks: u16) {
        let i = self.layout.pq(gp, q);
        let idle = !self.ports.tx(gp).busy;
        let fcp = &mut self.ports.fcp;
        fcp.ready[i] += blocks as u32;
        fcp.waiting[gp as usize] |= 1 << q;
        if idle && !fcp.start_pending[gp as usize] {
            fcp.start_pending[gp as usize] = true;
            // Behind every event already due now: others of this moment join.
            self.schedule(self.now, Event::FcpStart { port: gp });
        }
    }

    /// Port `gp` may start an advertisement now, if its link is idle.
    #[cold]
    pub(crate) fn on_fcp_start(&mut self, gp: u32) {
        self.ports.fcp.start_pending[gp as usize] = false;
        if !self.ports.tx(gp).busy && self.ports.fcp.waiting(gp) {
            self.start_fcp(gp);
        }
    }

    /// Sends the advertisement of `gp`'s lowest waiting input queue on its
    /// link now; the transmitter is idle.
    #[cold]
    pub(crate) fn start_fcp(&mut self, gp: u32) {
        let now = self.now;
        let pm = *self.ports.model(gp);
        let timing = *self.ports.timing(gp);
        let fcp = &mut self.ports.fcp;
        let w = fcp.waiting[gp as usize];
        let q = w.trailing_zeros() as u8;
        fcp.waiting[gp as usize] = w & (w - 1);
        let i = self.layout.pq(gp, q);
        let blocks = std::mem::take(&mut fcp.ready[i]);
        fcp.sent += 1;
        let ser = timing.ser_ps(fcp.bytes[gp as usize] as u32);
        let slot = self.layout.slot_of_q(q);
        let tx = self.ports.tx_mut(gp);
        debug_assert!(!tx.busy);
        tx.busy = true;
        tx.busy_until = now + ser;
        tx.sending_slot = slot;
        tx.sending_blocks = 0;
        self.metrics.on_transmit(&mut tx.tally, &self.layout, gp, slot, now, ser);
        let switch = self.ports.model(gp).switch_or_none();
        self.schedule(now + ser, Event::LinkFree { port: gp, switch });
        // One running total; returns carry u16 counts of blocks, so a buffer
        // of more than 4 MiB would need several.
        let (mut left, at) = (blocks, now + ser + timing.propagation_ps);
        while left > 0 {
            let part = left.min(u16::MAX as u32);
            self.return_credits(pm.peer, q, part as u16, at);
            left -= part;
        }
    }
}
