//! Per-delay FIFOs next to a heap.
//!
//! Most events of a packet network are scheduled at a fixed delay from "now":
//! a packet's serialization time, a cable's propagation, the routing delay.
//! Since "now" never decreases, all events pushed with the same delay arrive in
//! (time, sequence) order, so a plain FIFO per distinct delay stays sorted and
//! costs O(1) per push and pop. A delay seen for the first time gets a FIFO
//! if one is free — never used, or empty again (so rare delays do not keep
//! their FIFO) — up to [`MAX_FIFOS`]; anything else, and traffic generation
//! (random gaps), goes to a heap. `pop` takes the smallest head among the
//! FIFOs and the heap. This is the idea of simcore's `emit_ordered`,
//! generalised to several delays.

use std::collections::VecDeque;

use super::{Entry, Event, EventQueue, Time};

/// Distinct delays that get a FIFO of their own.
pub const MAX_FIFOS: usize = 16;

/// The per-delay FIFO queue.
#[derive(Debug, Clone, Default)]
pub struct FifoQueue {
    delays: Vec<Time>,
    fifos: Vec<VecDeque<Entry>>,
    /// Events with other delays; its own sequence counter is not used.
    heap: std::collections::BinaryHeap<HeapEntry>,
    seq: u64,
    len: usize,
    /// Index of the FIFO (or `usize::MAX` for the heap) holding the minimum,
    /// valid while `min_valid`.
    min_src: usize,
    min_valid: bool,
}

#[derive(Debug, Clone, Copy)]
struct HeapEntry(Entry);
impl PartialEq for HeapEntry {
    fn eq(&self, o: &Self) -> bool {
        self.0.key == o.0.key
    }
}
impl Eq for HeapEntry {}
impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for HeapEntry {
    #[inline]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.key.cmp(&self.0.key)
    }
}

impl FifoQueue {
    /// Registry name.
    pub const NAME: &'static str = "fifo";

    /// An empty queue.
    pub fn new() -> Self {
        FifoQueue { min_src: usize::MAX, ..Default::default() }
    }

    #[inline]
    fn find_min(&self) -> Option<usize> {
        let mut best: Option<u128> = self.heap.peek().map(|e| e.0.key);
        let mut src = usize::MAX;
        for (i, f) in self.fifos.iter().enumerate() {
            if let Some(e) = f.front() {
                let k = e.key;
                if best.is_none_or(|b| k < b) {
                    best = Some(k);
                    src = i;
                }
            }
        }
        best.map(|_| src)
    }
}

impl EventQueue for FifoQueue {
    #[inline]
    fn push(&mut self, now: Time, at: Time, ev: Event) {
        debug_assert!(at >= now, "event scheduled in the past: {at} < {now}");
        let e = Entry::new(at, self.seq, ev);
        self.seq += 1;
        self.len += 1;
        let delay = at - now;
        let idx = if matches!(ev, Event::Generate { .. }) {
            None
        } else {
            match self.delays.iter().position(|&d| d == delay) {
                Some(i) => Some(i),
                None if self.delays.len() < MAX_FIFOS => {
                    self.delays.push(delay);
                    self.fifos.push(VecDeque::with_capacity(1024));
                    Some(self.delays.len() - 1)
                }
                None => match self.fifos.iter().position(|f| f.is_empty()) {
                    Some(i) => {
                        self.delays[i] = delay;
                        Some(i)
                    }
                    None => None,
                },
            }
        };
        let src = match idx {
            Some(i) => {
                // A FIFO is only sorted if its pushes come in time order; "now" is
                // monotone in the simulator, and this guards the invariant anyway.
                match self.fifos[i].back() {
                    Some(b) if b.time() > at => {
                        self.heap.push(HeapEntry(e));
                        usize::MAX
                    }
                    _ => {
                        self.fifos[i].push_back(e);
                        i
                    }
                }
            }
            None => {
                self.heap.push(HeapEntry(e));
                usize::MAX
            }
        };
        if self.min_valid {
            let cur = self.peek_key_of(self.min_src);
            if cur.is_none_or(|c| e.key < c) {
                self.min_src = src;
            }
        }
    }

    #[inline]
    fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        if !self.min_valid {
            self.min_src = self.find_min()?;
            self.min_valid = true;
        }
        if (self.peek_key_of(self.min_src)? >> 64) as Time > limit {
            return None;
        }
        let e = if self.min_src == usize::MAX {
            self.heap.pop()?.0
        } else {
            self.fifos[self.min_src].pop_front()?
        };
        self.len -= 1;
        self.min_valid = false;
        Some((e.time(), e.ev))
    }

    #[inline]
    fn peek_time(&self) -> Option<Time> {
        if self.min_valid {
            return self.peek_key_of(self.min_src).map(|k| (k >> 64) as Time);
        }
        self.find_min().and_then(|s| self.peek_key_of(s)).map(|k| (k >> 64) as Time)
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }
}

impl FifoQueue {
    #[inline]
    fn peek_key_of(&self, src: usize) -> Option<u128> {
        if src == usize::MAX {
            self.heap.peek().map(|e| e.0.key)
        } else {
            self.fifos.get(src).and_then(|f| f.front()).map(|e| e.key)
        }
    }
}
