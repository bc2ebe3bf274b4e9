//! The FIFO of one delay: a ring of entries with a power-of-two capacity.
//!
//! `VecDeque` keeps a head and a length and wraps each physical index with
//! a compare; here the head and tail are free-running counters and a slot is
//! the counter masked, so a push or a pop is a store or a load and an
//! increment. Every event of a run passes through one of these.

use super::{Entry, Event};
use crate::table::IdVec;

/// A FIFO of entries (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct Ring {
    /// `capacity` slots, a power of two; those in `head..tail` (masked) are live.
    slots: IdVec<Entry>,
    mask: usize,
    head: usize,
    tail: usize,
}

/// The filler of slots not in use.
pub(super) const VACANT: Entry = Entry { key: u128::MAX, ev: Event::SwitchWake { switch: u32::MAX } };

impl Ring {
    /// An empty ring with room for `capacity` entries (rounded up to a power of two).
    pub(super) fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(2).next_power_of_two();
        Ring { slots: vec![VACANT; capacity].into(), mask: capacity - 1, head: 0, tail: 0 }
    }

    /// The number of live entries.
    pub(super) fn len(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }

    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// The oldest entry.
    #[cfg(test)]
    fn front(&self) -> Option<&Entry> {
        (!self.is_empty()).then(|| &self.slots[self.head & self.mask])
    }

    /// The newest entry.
    #[inline(always)]
    pub(super) fn back(&self) -> Option<&Entry> {
        (!self.is_empty()).then(|| &self.slots[self.tail.wrapping_sub(1) & self.mask])
    }

    #[inline(always)]
    pub(super) fn push_back(&mut self, e: Entry) {
        if self.len() == self.slots.len() {
            self.grow();
        }
        let i = self.tail & self.mask;
        self.slots[i] = e;
        self.tail = self.tail.wrapping_add(1);
    }

    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<Entry> {
        if self.is_empty() {
            return None;
        }
        let e = self.slots[self.head & self.mask];
        self.head = self.head.wrapping_add(1);
        Some(e)
    }

    /// Twice the room, the live entries first in order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let len = self.len();
        let mut slots = Vec::with_capacity(2 * self.slots.len());
        slots.extend((0..len).map(|k| self.slots[self.head.wrapping_add(k) & self.mask]));
        slots.resize(2 * self.slots.len(), VACANT);
        self.mask = slots.len() - 1;
        self.slots = slots.into();
        self.head = 0;
        self.tail = len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(k: u64) -> Entry {
        Entry::new(k, k, Event::Generate { source: k as u32 })
    }

    #[test]
    fn keeps_order_through_wraps_and_growth() {
        let mut r = Ring::with_capacity(2);
        let (mut pushed, mut popped) = (0u64, 0u64);
        // Two pushes per pop: the ring wraps and grows (2, 4, ... 64) with
        // live entries straddling the end of its slots.
        for round in 0..40 {
            for _ in 0..2 {
                r.push_back(entry(pushed));
                pushed += 1;
                assert_eq!(r.back().map(|e| e.seq()), Some(pushed - 1));
            }
            if round % 3 != 2 {
                assert_eq!(r.pop_front().map(|e| e.seq()), Some(popped));
                popped += 1;
            }
        }
        assert_eq!((r.slots.len(), r.len()), (64, (pushed - popped) as usize));
        while let Some(e) = r.pop_front() {
            assert_eq!(e.seq(), popped);
            popped += 1;
        }
        assert_eq!((popped, r.front().is_none(), r.back().is_none()), (pushed, true, true));
    }
}
