//! A plain binary-heap event queue ordered by (time, sequence): the
//! reference the simulator's queue ([`super::FifoQueue`], in both of its
//! modes) is checked against in the tests.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{Entry, Event, EventQueue, Time};

/// Heap entry with the order reversed, because `BinaryHeap` is a max-heap.
#[derive(Debug, Clone, Copy)]
struct Rev(Entry);

impl PartialEq for Rev {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}
impl Eq for Rev {}
impl PartialOrd for Rev {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rev {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key.cmp(&self.0.key)
    }
}

/// A binary heap of events.
#[derive(Debug, Clone, Default)]
pub struct HeapQueue {
    heap: BinaryHeap<Rev>,
    seq: u64,
}

impl HeapQueue {
    /// An empty queue.
    pub fn new() -> Self {
        HeapQueue::default()
    }
}

impl EventQueue for HeapQueue {
    #[inline]
    fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
    }
    #[inline]
    fn push_reserved(&mut self, _now: Time, at: Time, seq: u64, ev: Event) {
        self.heap.push(Rev(Entry::new(at, seq, ev)));
    }
    #[inline]
    fn pop_entry_until(&mut self, limit: Time) -> Option<(Time, u64, Event)> {
        if self.heap.peek()?.0.time() > limit {
            return None;
        }
        self.heap.pop().map(|Rev(e)| (e.time(), e.seq(), e.ev))
    }
    #[inline]
    fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|r| r.0.time())
    }
    #[inline]
    fn len(&self) -> usize {
        self.heap.len()
    }
}
