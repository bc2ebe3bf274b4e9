//! The index layout of every per-(port, VL) array: one place for the
//! arithmetic that turns a global port and a VL slot into an array index.
//!
//! A *global port* (`gp`) numbers every `(node, port)` of the fabric, node by
//! node. A *slot* is a VL at a port: the data VLs `0..data_vls`, then VL15.
//! Per-(port, slot) arrays (output buffers, busy time) are indexed by
//! [`Layout::pv`], slot by slot: all ports' slot 0, then all ports' slot 1,
//! and so on. A port's VL15 entry is then not beside its data VLs' in the
//! caches: on a large fabric with one data VL the hot entries are half the
//! lines they would be port by port.
//!
//! An input VL buffer may be split into *partitions* (an adaptive and an
//! escape part, paper 002 §4.2), each a FIFO with its own head and its own
//! credits. An input *queue* is a (slot, partition) pair, numbered within its
//! port by [`Layout::q`]; per-input-queue arrays (input buffers, their
//! capacities) are indexed by [`Layout::pq`], queue by queue as
//! per-(port, slot) arrays are slot by slot, and per-switch bitsets number a switch's own
//! (port, queue) pairs from 0 ([`Layout::local`]). With one partition (the
//! default) a queue is its slot.

/// Most partitions an input VL buffer may have (two bits of a packet's flags).
pub const MAX_PARTITIONS: usize = 4;

/// Sizes that fix the index layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Data VLs per port.
    pub data_vls: u8,
    /// Slots per port: data VLs + VL15.
    pub nvl: usize,
    /// Slot of VL15.
    pub vl15_slot: u8,
    /// Partitions per input VL buffer (1..=[`MAX_PARTITIONS`]).
    pub parts: usize,
    /// Bits of a queue number that give the partition: a queue is
    /// `slot << part_bits | partition`, so that taking it apart is a shift
    /// and a mask on the hot path, not a division. (With 3 partitions the
    /// fourth queue of each slot exists and holds nothing.)
    part_bits: u32,
    /// Input queues per port: slots × 2^`part_bits`, rounded up to a power
    /// of two (queues past the last slot exist and hold nothing), so that a
    /// per-queue index splits into port and queue by a shift and a mask.
    pub qpp: usize,
    /// log2 of `qpp`.
    qpp_shift: u32,
    /// Ports of the fabric: the stride of per-(port, slot) arrays.
    pub ports: usize,
}

impl Layout {
    /// The layout for `data_vls` data VLs (1..=15), unpartitioned buffers.
    pub fn new(data_vls: u8) -> Self {
        Self::partitioned(data_vls, 1)
    }

    /// The layout for `data_vls` data VLs with `parts` partitions (1..=4) per
    /// input VL buffer.
    pub fn partitioned(data_vls: u8, parts: usize) -> Self {
        debug_assert!((1..=MAX_PARTITIONS).contains(&parts));
        let nvl = data_vls as usize + 1;
        let part_bits = parts.next_power_of_two().trailing_zeros();
        let qpp = (nvl << part_bits).next_power_of_two();
        Layout { data_vls, nvl, vl15_slot: data_vls, parts, part_bits, qpp, qpp_shift: qpp.trailing_zeros(), ports: 0 }
    }

    /// This layout for a fabric of `ports` global ports.
    pub fn for_ports(self, ports: usize) -> Self {
        Layout { ports, ..self }
    }

    /// The input queue of partition `part` of slot `slot`, within its port.
    #[inline]
    pub fn q(&self, slot: u8, part: u8) -> u8 {
        (slot << self.part_bits) | part
    }

    /// The slot of input queue `q`.
    #[inline]
    pub fn slot_of_q(&self, q: u8) -> u8 {
        q >> self.part_bits
    }

    /// The partition of input queue `q`.
    #[inline]
    pub fn part_of_q(&self, q: u8) -> u8 {
        q & ((1 << self.part_bits) - 1)
    }

    /// Index of input queue `q` of port `gp` in per-input-queue arrays.
    #[inline]
    pub fn pq(&self, gp: u32, q: u8) -> usize {
        debug_assert!((gp as usize) < self.ports, "port {gp} of a layout for {} ports", self.ports);
        q as usize * self.ports + gp as usize
    }

    /// The port and queue of a per-input-queue index.
    #[inline]
    pub fn split_q(&self, pq: usize) -> (u32, u8) {
        ((pq % self.ports) as u32, (pq / self.ports) as u8)
    }

    /// Entries of a per-input-queue array.
    #[inline]
    pub fn port_queues(&self) -> usize {
        self.ports * self.qpp
    }

    /// Index of `(gp, slot)` in per-port-slot arrays.
    #[inline]
    pub fn pv(&self, gp: u32, slot: u8) -> usize {
        debug_assert!((gp as usize) < self.ports, "port {gp} of a layout for {} ports", self.ports);
        slot as usize * self.ports + gp as usize
    }

    /// The port and slot of a per-port-slot index.
    #[inline]
    pub fn split(&self, pv: usize) -> (u32, u8) {
        ((pv % self.ports) as u32, (pv / self.ports) as u8)
    }

    /// Index of input queue `(port, q)` among the input queues of one
    /// switch, whose port 1 is global port `first_gp`.
    #[inline]
    pub fn local(&self, first_gp: u32, gp: u32, q: u8) -> usize {
        (((gp - first_gp) as usize) << self.qpp_shift) | q as usize
    }

    /// The word and the mask of a port's input queues in a switch's bitset,
    /// `first` being [`Layout::local`] of its queue 0: `qpp` bits, a power of
    /// two of at most 64 starting at a multiple of itself, so always within
    /// one word.
    #[inline]
    pub fn port_bits(&self, first: usize) -> (usize, u64) {
        let mask = if self.qpp >= 64 { !0 } else { ((1u64 << self.qpp) - 1) << (first % 64) };
        (first / 64, mask)
    }

    /// The global port (of the node whose first port is `first_gp`) and the
    /// queue of local bit `idx`: the inverse of [`Layout::local`].
    #[inline]
    pub fn split_local(&self, first_gp: u32, idx: usize) -> (u32, u8) {
        (first_gp + (idx >> self.qpp_shift) as u32, (idx & (self.qpp - 1)) as u8)
    }

    /// The per-input-queue index ([`Layout::pq`]) of local bit `idx` of the
    /// node whose port 1 is global port `first_gp`.
    #[inline]
    pub fn local_pq(&self, first_gp: u32, idx: usize) -> usize {
        let (gp, q) = self.split_local(first_gp, idx);
        self.pq(gp, q)
    }

    /// Entries of a per-port-slot array.
    #[inline]
    pub fn port_slots(&self) -> usize {
        self.ports * self.nvl
    }

    /// Global index of port `port` (numbered from 1) of a node whose port 1
    /// is global port `first_gp`.
    #[inline]
    pub fn node_port(first_gp: u32, port: u8) -> u32 {
        first_gp + port as u32 - 1
    }

    /// The VL number of a slot.
    #[inline]
    pub fn vl_of_slot(&self, slot: u8) -> u8 {
        if slot == self.vl15_slot {
            15
        } else {
            slot
        }
    }

    /// Whether `slot` is VL15.
    #[inline]
    pub fn is_vl15(&self, slot: u8) -> bool {
        slot == self.vl15_slot
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn indices_round_trip() {
        let l = Layout::new(4).for_ports(6);
        assert_eq!((l.nvl, l.vl15_slot), (5, 4));
        assert_eq!(l.pv(3, 2), 15, "slot by slot: 2 × 6 ports + 3");
        assert_eq!(l.split(15), (3, 2));
        assert_eq!(l.port_slots(), 30);
        let all: std::collections::BTreeSet<usize> = (0..6).flat_map(|gp| (0..5).map(move |s| l.pv(gp, s))).collect();
        assert_eq!(all, (0..30).collect(), "every (port, slot) has its own index");
        // 5 slots: 8 queue numbers per port, the last 3 unused.
        assert_eq!(l.qpp, 8);
        assert_eq!(l.local(10, 12, 4), 20);
        assert_eq!(l.split_local(10, 20), (12, 4));
        assert_eq!(l.local_pq(2, 20), l.pq(4, 4), "local bit 20 of the node from port 2: port 4, queue 4");
        assert_eq!((l.vl_of_slot(4), l.vl_of_slot(3)), (15, 3));
        assert_eq!((l.q(2, 0), l.pq(3, 2)), (2, 15), "one partition: a queue is its slot, queue by queue");
        assert_eq!(l.split_q(15), (3, 2));
        let all: std::collections::BTreeSet<usize> = (0..6).flat_map(|gp| (0..8).map(move |q| l.pq(gp, q))).collect();
        assert_eq!(all, (0..l.port_queues()).collect(), "every (port, queue) has its own index");
    }

    #[test]
    fn a_ports_queue_bits_are_one_mask_in_one_word() {
        // 2, 8 and 64 queue numbers per port (1 VL; 4 VLs; 15 VLs in 4 partitions).
        for l in [Layout::new(1), Layout::new(4), Layout::partitioned(15, 4)] {
            for port in 0..20u32 {
                let first = l.local(100, 100 + port, 0);
                let mut words = [0u64; 20];
                for q in 0..l.qpp {
                    let local = l.local(100, 100 + port, q as u8);
                    words[local / 64] |= 1 << (local % 64);
                }
                let (w, mask) = l.port_bits(first);
                assert_eq!(words[w], mask, "qpp {} port {port}", l.qpp);
                assert_eq!(words.iter().filter(|&&x| x != 0).count(), 1, "qpp {} port {port}", l.qpp);
            }
        }
        assert_eq!(Layout::partitioned(15, 4).qpp, 64);
    }

    #[test]
    fn partitions_number_queues_slot_by_slot() {
        let l = Layout::partitioned(2, 2).for_ports(4);
        assert_eq!((l.nvl, l.qpp), (3, 8));
        assert_eq!(l.q(1, 1), 3);
        assert_eq!((l.slot_of_q(3), l.part_of_q(3)), (1, 1));
        assert_eq!(l.pq(2, 3), 14);
        assert_eq!(l.split_q(14), (2, 3));
        assert_eq!(l.local(10, 11, 5), 13);
        assert_eq!(l.q(l.vl15_slot, 0), 4);
        let three = Layout::partitioned(1, 3);
        assert_eq!((three.qpp, three.q(1, 2), three.slot_of_q(6), three.part_of_q(6)), (8, 6, 1, 2));
    }
}
