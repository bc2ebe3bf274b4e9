//! Switch input buffers: one FIFO per (port, VL slot), with a bitset per switch
//! of the non-empty ones so that arbitration visits only queues with packets.
//!
//! A packet enters when its first byte starts on the incoming link (its credits
//! were taken then); its header is routed at `ready_at`. Only the head of a
//! queue is routed towards the crossbar; a `Routed` event is scheduled when a
//! packet becomes head before its routing delay has elapsed.

use crate::engine::{Event, Time};
use crate::packet::PacketId;
use crate::sim::Simulation;

impl Simulation {
    /// Bit position of `(gp, slot)` within its switch's bitset.
    #[inline]
    fn input_bit(&self, gp: u32, slot: u8) -> (usize, u64) {
        let pm = &self.ports[gp as usize];
        let sm = &self.switches[pm.switch as usize];
        let local = (gp - sm.port_base) as usize * self.p.nvl + slot as usize;
        (sm.bits_base as usize + local / 64, 1u64 << (local % 64))
    }

    /// Appends an arriving packet to input queue `(gp, slot)`.
    pub(crate) fn push_input(&mut self, gp: u32, slot: u8, id: PacketId) {
        let i = self.pv(gp, slot);
        let was_empty = self.inq[i].is_empty();
        self.inq[i].push(&mut self.arena, id);
        if was_empty {
            let (w, b) = self.input_bit(gp, slot);
            self.in_bits[w] |= b;
            if slot == self.p.vl15_slot {
                self.sw[self.ports[gp as usize].switch as usize].vl15_inputs += 1;
            }
            let at = self.arena[id].ready_at;
            self.schedule(at, Event::Routed { port: gp, slot });
        }
    }

    /// Removes the head of input queue `(gp, slot)`; the crossbar input is busy
    /// until `free_at`, after which the switch re-arbitrates anyway, so the new
    /// head needs its own `Routed` event only if it is routed later than that.
    pub(crate) fn pop_input(&mut self, gp: u32, slot: u8, free_at: Time) -> PacketId {
        let i = self.pv(gp, slot);
        let id = self.inq[i].pop(&mut self.arena).expect("pop from an empty input queue");
        let head = self.inq[i].head;
        if self.inq[i].is_empty() {
            let (w, b) = self.input_bit(gp, slot);
            self.in_bits[w] &= !b;
            if slot == self.p.vl15_slot {
                self.sw[self.ports[gp as usize].switch as usize].vl15_inputs -= 1;
            }
        } else {
            let at = self.arena[head].ready_at;
            if at > free_at.max(self.now) {
                self.schedule(at, Event::Routed { port: gp, slot });
            }
        }
        id
    }

    /// Index of the crossbar input or output port of `(gp, slot)` in the busy arrays.
    #[inline]
    pub(crate) fn xidx(&self, gp: u32, slot: u8) -> usize {
        match self.p.crossbar {
            crate::config::CrossbarKind::Multiplexed => gp as usize * self.p.nvl,
            crate::config::CrossbarKind::PerVl => self.pv(gp, slot),
        }
    }
}

/// The next set bit of `words` at or after `from`, below `nbits`.
#[inline]
pub(crate) fn next_bit(words: &[u64], from: usize, nbits: usize) -> Option<usize> {
    if from >= nbits {
        return None;
    }
    let mut w = from / 64;
    let mut cur = words[w] & (!0u64 << (from % 64));
    loop {
        if cur != 0 {
            let b = w * 64 + cur.trailing_zeros() as usize;
            return (b < nbits).then_some(b);
        }
        w += 1;
        if w >= words.len() {
            return None;
        }
        cur = words[w];
    }
}

#[cfg(test)]
mod tests {
    use super::next_bit;

    #[test]
    fn next_bit_scans_words() {
        let w = [0b1010u64, 0, 1 << 5];
        assert_eq!(next_bit(&w, 0, 192), Some(1));
        assert_eq!(next_bit(&w, 2, 192), Some(3));
        assert_eq!(next_bit(&w, 4, 192), Some(133));
        assert_eq!(next_bit(&w, 134, 192), None);
        assert_eq!(next_bit(&w, 4, 100), None);
    }
}
