//! Credit-based link-level flow control per VL (IBA 7.9).
//!
//! Buffers are counted in 64-byte blocks. A transmitter may start a packet only
//! when the receiver has advertised credits for the whole packet (virtual
//! cut-through); the credits it consumed come back when the packet's last byte
//! has left the receiver's buffer, one propagation delay later over the reverse
//! direction of the same link (flow-control packets are not charged link
//! bandwidth). VL15 is not flow controlled: a receiver without room drops the
//! packet (IBA 7.9.4); see `sim.rs`.

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

/// Credits each transmitter holds for each input queue (VL slot and buffer
/// partition, see [`crate::layout`]) of its receiver.
#[derive(Debug, Clone, Default)]
pub struct Credits {
    avail: Vec<u32>,
    queues: usize,
}

impl Credits {
    /// `capacity[port * queues + queue]` blocks advertised initially.
    pub fn new(capacity: Vec<u32>, queues: usize) -> Self {
        Credits { avail: capacity, queues }
    }

    /// Blocks available at transmitter `port` for the receiver's `queue`.
    #[inline]
    pub fn available(&self, port: u32, queue: u8) -> u32 {
        self.avail[port as usize * self.queues + queue as usize]
    }

    /// Consumes `blocks` for a packet about to be sent.
    #[inline]
    pub fn consume(&mut self, port: u32, queue: u8, blocks: u16) {
        let a = &mut self.avail[port as usize * self.queues + queue as usize];
        debug_assert!(*a >= blocks as u32, "sent without credits");
        *a -= blocks as u32;
    }

    /// Credits returned by the receiver.
    #[inline]
    pub fn give_back(&mut self, port: u32, queue: u8, blocks: u16) {
        self.avail[port as usize * self.queues + queue as usize] += blocks as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut c = Credits::new(vec![16, 8], 2);
        c.consume(0, 1, 5);
        assert_eq!(c.available(0, 1), 3);
        c.give_back(0, 1, 5);
        assert_eq!(c.available(0, 1), 8);
        assert_eq!(c.available(0, 0), 16);
    }
}
