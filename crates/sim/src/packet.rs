//! Packets and the arena that holds them.
//!
//! A packet lives in a slab indexed by `u32` from generation to delivery or drop;
//! freed slots are reused through a free list, so the hot path never allocates
//! once the slab has grown to the peak number of packets alive. Queues are
//! intrusive singly linked lists threaded through [`Packet::next`]: a packet is
//! in at most one queue at a time (an SL send queue, a VL buffer of a port), and
//! moving it between queues costs two index writes.

use crate::engine::Time;
use crate::table::IdVec;

/// Index of a packet in the [`PacketArena`].
pub type PacketId = u32;

/// "No packet" in intrusive lists.
pub const NIL: PacketId = u32::MAX;

/// One IBA packet in flight: 64 bytes aligned to 64, so that a packet is
/// one cache line (the arena's allocation alone would put most packets across
/// two).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub struct Packet {
    /// When the packet entered its source's send queue.
    pub gen_time: Time,
    /// When its first byte went onto the source link (`Time::MAX` before).
    pub inject_time: Time,
    /// When its last byte is available in the buffer it currently occupies.
    pub tail_at: Time,
    /// When it may leave the buffer it currently occupies: at a switch input,
    /// the time its header is routed; in an output buffer, the earliest start
    /// that does not underrun (cut-through).
    pub ready_at: Time,
    /// Next packet in the same queue.
    pub next: PacketId,
    /// Source host index.
    pub src: u32,
    /// Destination host index.
    pub dst: u32,
    /// The flow it belongs to: the CBR connection ([`FLAG_CONN`]) or the
    /// transport flow ([`FLAG_FLOW`]) that sent it, else `u32::MAX`.
    pub flow: u32,
    /// Packet sequence number within its transport flow (the BTH PSN): data
    /// packets count up from 0; a reply carries the PSN it answers.
    pub psn: u32,
    /// Destination LID (the low LMC bits are path bits).
    pub dlid: u16,
    /// Bytes on the wire (payload and all headers).
    pub wire_bytes: u16,
    /// 64-byte flow-control blocks the packet occupies.
    pub blocks: u16,
    /// Service level.
    pub sl: u8,
    /// VL slot on the link it currently uses or waits for.
    pub slot: u8,
    /// Traffic class index.
    pub class: u8,
    /// Bit flags (see the `FLAG_*` constants).
    pub flags: u8,
    /// Output port a routing-time selection policy chose at the switch whose
    /// input buffer holds the packet (0 = not chosen yet); cleared when the
    /// packet leaves that buffer.
    pub pinned: u8,
    /// Its routing options at the switch whose input buffer it heads are
    /// remembered (`remember_route`, after it had to wait); cleared when it
    /// leaves that buffer. Kept here, in the line every arbitration reads
    /// anyway, so that a head that never waited costs no read of the memo.
    pub remembered: bool,
}

/// `flow` is a CBR connection.
pub const FLAG_CONN: u8 = 1;
/// The packet travels on VL15 (management, not flow controlled).
pub const FLAG_VL15: u8 = 2;
/// `flow` is a transport flow (closed-loop sources, traces).
pub const FLAG_FLOW: u8 = 4;
/// Two bits of packet kind (see [`PacketKind`]).
const KIND_SHIFT: u8 = 3;
const KIND_MASK: u8 = 3 << KIND_SHIFT;
/// Forward explicit congestion notification: a switch marked the packet.
pub const FLAG_FECN: u8 = 32;
/// Two bits of buffer partition (see [`Packet::part`]).
const PART_SHIFT: u8 = 6;
const PART_MASK: u8 = 3 << PART_SHIFT;

/// What a packet carries, as its BTH opcode would say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// Payload of a message.
    Data = 0,
    /// A positive acknowledgement from the destination.
    Ack = 1,
    /// A negative acknowledgement (a sequence error seen at the destination).
    Nack = 2,
    /// A congestion notification back to the source (IBA's BECN).
    Cn = 3,
}

impl PacketKind {
    /// All kinds, in report order.
    pub const ALL: [PacketKind; 4] = [PacketKind::Data, PacketKind::Ack, PacketKind::Nack, PacketKind::Cn];

    /// Name in results and configs.
    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Data => "data",
            PacketKind::Ack => "ack",
            PacketKind::Nack => "nack",
            PacketKind::Cn => "cn",
        }
    }
}

impl Packet {
    /// The packet's kind.
    #[inline]
    pub fn kind(&self) -> PacketKind {
        match (self.flags & KIND_MASK) >> KIND_SHIFT {
            0 => PacketKind::Data,
            1 => PacketKind::Ack,
            2 => PacketKind::Nack,
            _ => PacketKind::Cn,
        }
    }

    /// The partition of the input VL buffer the packet occupies, or is sent
    /// towards when it is in an output buffer (0 without partitions).
    #[inline]
    pub fn part(&self) -> u8 {
        (self.flags & PART_MASK) >> PART_SHIFT
    }

    /// Sets the packet's partition.
    #[inline]
    pub fn set_part(&mut self, part: u8) {
        debug_assert!(part < 4);
        self.flags = (self.flags & !PART_MASK) | (part << PART_SHIFT);
    }

    /// Sets the packet's kind.
    #[inline]
    pub fn set_kind(&mut self, k: PacketKind) {
        self.flags = (self.flags & !KIND_MASK) | ((k as u8) << KIND_SHIFT);
    }
}

/// Slab of packets with free-list reuse.
#[derive(Debug, Clone, Default)]
pub struct PacketArena {
    slots: IdVec<Packet>,
    free: Vec<PacketId>,
    live: usize,
}

impl PacketArena {
    /// An empty arena.
    pub fn new() -> Self {
        PacketArena::default()
    }

    /// Stores `p` and returns its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    /// Releases `id` for reuse.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.free.push(id);
    }

    /// Number of packets alive.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Peak number of packets alive at once (the slab size).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }

    /// Asks the CPU to bring packet `id`'s line into the cache (see
    /// [`crate::prefetch`]); a stale or freed id costs nothing.
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        crate::prefetch::prefetch(&self.slots, id as usize);
    }
}

impl std::ops::Index<PacketId> for PacketArena {
    type Output = Packet;
    #[inline]
    fn index(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }
}

impl std::ops::IndexMut<PacketId> for PacketArena {
    #[inline]
    fn index_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
}

/// A FIFO of packets linked through [`Packet::next`], with its occupancy in
/// 64-byte blocks, in 12 bytes (the packets are counted by walking them, in
/// reports only; see [`PacketQueue::count_linked`]).
#[derive(Debug, Clone, Copy)]
pub struct PacketQueue {
    /// First packet, [`NIL`] when empty.
    pub head: PacketId,
    /// Last packet.
    pub tail: PacketId,
    /// Blocks held (including blocks reserved by packets still arriving).
    pub blocks: u32,
}

impl Default for PacketQueue {
    fn default() -> Self {
        PacketQueue { head: NIL, tail: NIL, blocks: 0 }
    }
}

impl PacketQueue {
    /// True when the queue holds no packet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// Appends `id`.
    #[inline]
    pub fn push(&mut self, arena: &mut PacketArena, id: PacketId) {
        arena[id].next = NIL;
        if self.tail == NIL {
            self.head = id;
        } else {
            arena[self.tail].next = id;
        }
        self.tail = id;
        self.blocks += arena[id].blocks as u32;
    }

    /// Removes the head.
    #[inline]
    pub fn pop(&mut self, arena: &mut PacketArena) -> Option<PacketId> {
        let id = self.head;
        if id == NIL {
            return None;
        }
        self.head = arena[id].next;
        if self.head == NIL {
            self.tail = NIL;
        }
        self.blocks -= arena[id].blocks as u32;
        Some(id)
    }

    /// Moves `id`, the packet after `prev` (`NIL`: `id` is already the
    /// head), to the front, keeping the order of the others (a virtual output
    /// queue's packet that crosses before the head leaves through `pop`).
    #[inline]
    pub fn move_to_front(&mut self, arena: &mut PacketArena, prev: PacketId, id: PacketId) {
        if prev == NIL {
            debug_assert_eq!(self.head, id);
            return;
        }
        debug_assert_eq!(arena[prev].next, id);
        arena[prev].next = arena[id].next;
        if self.tail == id {
            self.tail = prev;
        }
        arena[id].next = self.head;
        self.head = id;
    }

    /// Walks the list and counts its packets (for reports and the
    /// conservation check).
    pub fn count_linked(&self, arena: &PacketArena) -> usize {
        let mut n = 0;
        let mut id = self.head;
        while id != NIL {
            n += 1;
            id = arena[id].next;
        }
        n
    }
}

/// A packet of `blocks` credits with every other field neutral, for unit
/// tests that set what they look at with struct update syntax.
#[cfg(test)]
pub(crate) fn test_packet(blocks: u16) -> Packet {
    Packet {
        gen_time: 0,
        inject_time: Time::MAX,
        tail_at: 0,
        ready_at: 0,
        next: NIL,
        src: 0,
        dst: 0,
        flow: u32::MAX,
        psn: 0,
        dlid: 1,
        wire_bytes: blocks * 64,
        blocks,
        sl: 0,
        slot: 0,
        class: 0,
        flags: 0,
        pinned: 0,
        remembered: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_fits_one_cache_line() {
        // The arena is walked on every event; the pin must not grow a packet.
        assert_eq!((std::mem::size_of::<Packet>(), std::mem::align_of::<Packet>()), (64, 64));
    }

    #[test]
    fn kind_bits_leave_the_other_flags_alone() {
        let mut p = test_packet(1);
        p.flags = FLAG_VL15 | FLAG_FECN | FLAG_FLOW;
        assert_eq!(p.kind(), PacketKind::Data);
        for k in PacketKind::ALL {
            p.set_kind(k);
            assert_eq!(p.kind(), k);
            assert_eq!(p.flags & !KIND_MASK, FLAG_VL15 | FLAG_FECN | FLAG_FLOW);
        }
        p.set_part(3);
        p.set_kind(PacketKind::Nack);
        assert_eq!((p.part(), p.kind()), (3, PacketKind::Nack));
        p.set_part(1);
        assert_eq!((p.part(), p.kind(), p.flags & FLAG_FECN), (1, PacketKind::Nack, FLAG_FECN));
    }

    #[test]
    fn queue_is_fifo_and_counts_blocks() {
        let mut a = PacketArena::new();
        let mut q = PacketQueue::default();
        let ids: Vec<_> = (1..=3).map(|b| a.alloc(test_packet(b))).collect();
        for &i in &ids {
            q.push(&mut a, i);
        }
        assert_eq!((q.count_linked(&a), q.blocks), (3, 6));
        assert_eq!(q.pop(&mut a), Some(ids[0]));
        assert_eq!(q.blocks, 5);
        assert_eq!(q.pop(&mut a), Some(ids[1]));
        assert_eq!(q.pop(&mut a), Some(ids[2]));
        assert_eq!(q.pop(&mut a), None);
        assert!(q.is_empty());
    }

    #[test]
    fn move_to_front_keeps_the_others_in_order() {
        let mut a = PacketArena::new();
        let mut q = PacketQueue::default();
        let ids: Vec<_> = (1..=4).map(|b| a.alloc(test_packet(b))).collect();
        for &i in &ids {
            q.push(&mut a, i);
        }
        // The tail to the front: the one before it becomes the tail.
        q.move_to_front(&mut a, ids[2], ids[3]);
        // A middle packet to the front.
        q.move_to_front(&mut a, ids[0], ids[1]);
        // The head stays.
        q.move_to_front(&mut a, NIL, ids[1]);
        assert_eq!((q.count_linked(&a), q.blocks), (4, 10));
        let order: Vec<_> = std::iter::from_fn(|| q.pop(&mut a)).collect();
        assert_eq!(order, [ids[1], ids[3], ids[0], ids[2]]);
        q.push(&mut a, ids[0]);
        assert_eq!((q.head, q.tail), (ids[0], ids[0]));
    }

    #[test]
    fn arena_reuses_freed_slots() {
        let mut a = PacketArena::new();
        let x = a.alloc(test_packet(1));
        let _y = a.alloc(test_packet(1));
        a.free(x);
        let z = a.alloc(test_packet(2));
        assert_eq!(z, x);
        assert_eq!(a.live(), 2);
        assert_eq!(a.capacity_used(), 2);
    }
}
