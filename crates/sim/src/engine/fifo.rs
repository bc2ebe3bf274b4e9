//! Per-delay FIFOs and a tree of the sources' next arrivals, next to a heap.
//!
//! Most events of a packet network are scheduled at a fixed delay from "now":
//! a packet's serialization time, a cable's propagation, the routing delay.
//! Since "now" never decreases, all events pushed with the same delay arrive in
//! (time, sequence) order, so a plain FIFO per distinct delay stays sorted and
//! costs O(1) per push and pop. A delay seen for the first time gets a FIFO
//! if one is free — never used, or empty again (so rare delays do not keep
//! their FIFO) — up to [`MAX_FIFOS`]. Traffic sources' generations (random
//! gaps, one pending per source) go to a winner tree with a leaf per source
//! (`tournament.rs`; a second pending one of a source, or a source past the
//! tree's 2^16 leaves, to the heap), anything else to a heap. `pop` takes
//! the earliest of the FIFO heads, the tree's root and the heap top, whose
//! keys sit side by side in one small array, as do the FIFOs' head entries.
//! This is the idea of simcore's `emit_ordered`, generalised to several
//! delays. With no FIFOs (the queue called `heap`) every event goes to the
//! heap.

use std::collections::BinaryHeap;

use super::ring::Ring;
use super::tournament::Tournament;
use super::{Entry, Event, EventQueue, Time};
use crate::table::IdVec;

/// Distinct delays that get a FIFO of their own.
pub const MAX_FIFOS: usize = 16;

/// The heap's slot in [`FifoQueue::head_keys`].
const HEAP: usize = 0;

/// The generation tree's slot in [`FifoQueue::head_keys`] (FIFO `i` has
/// slot `i + FIRST_FIFO`).
const GENERATIONS: usize = 1;

/// The slot of FIFO 0.
const FIRST_FIFO: usize = 2;

/// The generation tree's head key while its earliest entry is taken
/// ([`Tournament::take_top`]), which a push usually replaces at once: it
/// sorts before every real head key but the heap's at time 0 with sequence
/// number 0, so the next pop, if no push came first, lands on the tree's
/// slot and settles the tree before it looks again. (It equals the real
/// head key at time 0, sequence number 0 of the tree's slot: `pop` and
/// `peek_time` ask the tree whether an entry is taken, not the key.)
const GENERATION_TAKEN: u128 = GENERATIONS as u128;

/// Slots of the delay → FIFO lookup cache.
const CACHE: usize = 64;

/// Low bits of a head key's sequence part that name its slot (see
/// [`FifoQueue::head_keys`]); enough for the heap, the tree and
/// [`MAX_FIFOS`] FIFOs.
const SLOT_BITS: u32 = 5;

/// Slots of [`FifoQueue::head_keys`]: every value the slot bits can take, so
/// that indexing with them needs no check.
const HEAD_SLOTS: usize = 1 << SLOT_BITS;
const _: () = assert!(MAX_FIFOS + FIRST_FIFO <= HEAD_SLOTS);

/// The head key of the entry keyed `key` ([`super::event_key`]) at slot
/// `slot`: the sequence number shifted up and the slot below it. Sequence
/// numbers are unique, so these keys order exactly as the entries' own, and
/// the earliest head is a plain minimum whose low bits say where it is (a
/// minimum that also tracked an index compiled to a branch that the order
/// of the heads makes unpredictable).
#[inline(always)]
fn head_key(key: u128, slot: usize) -> u128 {
    let seq = key as u64;
    debug_assert!(seq < 1 << (64 - SLOT_BITS), "sequence numbers ran past the slot bits");
    (key >> 64 << 64) | ((seq << SLOT_BITS) | slot as u64) as u128
}

/// [`head_key`], or `u128::MAX` for a key that says "empty".
#[inline(always)]
fn head_key_or_empty(key: u128, slot: usize) -> u128 {
    if key == u128::MAX {
        u128::MAX
    } else {
        head_key(key, slot)
    }
}

/// The per-delay FIFO queue.
#[derive(Debug, Clone)]
pub struct FifoQueue {
    /// FIFOs it may give delays: [`MAX_FIFOS`], or 0 for the queue called
    /// `heap`, which keeps every event in its heap.
    max_fifos: usize,
    delays: Vec<Time>,
    fifos: IdVec<Ring>,
    /// The heap top's key, the generation tree's earliest, then each
    /// FIFO's head key, tagged with their slot ([`head_key`]; `u128::MAX`
    /// when empty or unused, and [`GENERATION_TAKEN`] at the tree's slot
    /// while its top is taken): a few at most, so the earliest is found by
    /// comparing them all, cheaper than keeping them in a heap.
    head_keys: [u128; HEAD_SLOTS],
    /// Each FIFO's head entry, kept out of its ring (which holds the entries
    /// behind it) at its slot: a pop reads the event it returns at an
    /// address that depends on the slot alone, where reaching into the ring
    /// took three loads one after another, each waiting for the one before,
    /// between one event and the next.
    heads: [Entry; HEAD_SLOTS],
    /// The traffic sources' `Generate` events, with a FIFO queue (the
    /// queue called `heap` keeps them in its heap, the reference for whole
    /// runs).
    generations: Tournament,
    /// Everything else: events at delays without a FIFO, traces' and
    /// connections' next messages, pushes out of a FIFO's order, and
    /// generations the tree refuses (all of them in the queue called `heap`).
    heap: BinaryHeap<HeapEntry>,
    /// The heap's top has been popped but is still in place: the next push
    /// into the heap overwrites it and sifts once, where taking it out and
    /// pushing would sift twice (in the queue called `heap` a source's
    /// `Generate` schedules its next at once, so every generation saves a
    /// sift); a second pop takes it out.
    top_taken: bool,
    /// Direct-mapped cache `delay → fifo`: every entry is current (a FIFO
    /// given to another delay takes its old delay's entry out).
    cache: [(Time, u8); CACHE],
    seq: u64,
}

impl Default for FifoQueue {
    fn default() -> Self {
        FifoQueue::new()
    }
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

#[inline]
fn cache_slot(delay: Time) -> usize {
    (delay.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

impl FifoQueue {
    /// Registry names, in the order they are listed in errors: per-delay
    /// FIFOs and the sources' tree next to a heap, or the heap alone
    /// (identical results; one type, so that the run loop does not dispatch
    /// on the kind of queue).
    pub const NAMES: &'static [&'static str] = &["fifo", "heap"];

    /// An empty queue with per-delay FIFOs.
    pub fn new() -> Self {
        FifoQueue::with_fifos(MAX_FIFOS)
    }

    fn with_fifos(max_fifos: usize) -> Self {
        FifoQueue {
            max_fifos,
            delays: Vec::new(),
            fifos: IdVec::new(),
            head_keys: [u128::MAX; HEAD_SLOTS],
            heads: [Entry::new(0, 0, Event::SwitchWake { switch: u32::MAX }); HEAD_SLOTS],
            generations: Tournament::default(),
            heap: BinaryHeap::new(),
            top_taken: false,
            cache: [(Time::MAX, 0); CACHE],
            seq: 0,
        }
    }

    /// The queue called `name` ([`FifoQueue::NAMES`]), or `None` when no
    /// queue has that name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "fifo" => Some(FifoQueue::new()),
            "heap" => Some(FifoQueue::with_fifos(0)),
            _ => None,
        }
    }

    /// The queue's registry name.
    pub fn name(&self) -> &'static str {
        if self.max_fifos == 0 {
            "heap"
        } else {
            "fifo"
        }
    }

    /// The FIFO for `delay`, assigning one if possible.
    #[inline]
    fn fifo_for(&mut self, delay: Time) -> Option<usize> {
        let c = cache_slot(delay);
        let (d, i) = self.cache[c];
        if d == delay {
            debug_assert_eq!(self.delays[i as usize], delay, "a stale cache entry");
            return Some(i as usize);
        }
        self.assign_fifo(delay, c)
    }

    // Out of line, as are the other rare paths of a push, so that the push
    // itself is small enough to inline into every handler that schedules.
    #[cold]
    #[inline(never)]
    fn assign_fifo(&mut self, delay: Time, c: usize) -> Option<usize> {
        let i = match self.delays.iter().position(|&d| d == delay) {
            Some(i) => i,
            None if self.delays.len() < self.max_fifos => {
                self.delays.push(delay);
                self.fifos.push(Ring::with_capacity(1024));
                self.delays.len() - 1
            }
            None => {
                let i = (0..self.fifos.len()).position(|i| self.head_keys[i + FIRST_FIFO] == u128::MAX)?;
                let old = cache_slot(self.delays[i]);
                if self.cache[old].0 == self.delays[i] {
                    self.cache[old] = (Time::MAX, 0);
                }
                self.delays[i] = delay;
                i
            }
        };
        self.cache[c] = (delay, i as u8);
        Some(i)
    }

    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    fn push_heap(&mut self, e: Entry) {
        if self.top_taken {
            self.top_taken = false;
            *self.heap.peek_mut().expect("a taken top") = HeapEntry(e);
            self.head_keys[HEAP] = head_key(self.heap.peek().expect("a top").0.key, HEAP);
            return;
        }
        self.head_keys[HEAP] = self.head_keys[HEAP].min(head_key(e.key, HEAP));
        self.heap.push(HeapEntry(e));
    }

    /// The source of the earliest pending `Generate`, when it is known at
    /// once (`None` when it is not): a hint of which source generates next,
    /// whose state can be asked for early. The tree's root names it without
    /// a read of its entry (on a large fabric a miss).
    #[inline]
    pub fn next_generation(&self) -> Option<u32> {
        if self.max_fifos > 0 {
            if self.generations.has_taken() {
                return None;
            }
            return self.generations.top_stream();
        }
        if self.top_taken {
            return None;
        }
        match self.heap.peek()?.0.ev {
            Event::Generate { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Empties the generation tree's taken leaf: no push replaced it before
    /// the next pop.
    #[cold]
    #[inline(never)]
    fn settle_generations(&mut self) {
        self.generations.settle();
        self.refresh_generations_key();
    }

    /// The tree's slot after a push into it or a settle.
    #[inline(always)]
    fn refresh_generations_key(&mut self) {
        self.head_keys[GENERATIONS] = head_key_or_empty(self.generations.top_key(), GENERATIONS);
    }

    /// Pops the heap's top, leaving it in place ([`FifoQueue::top_taken`]).
    #[inline(always)]
    fn take_heap_top(&mut self) -> Entry {
        if std::mem::take(&mut self.top_taken) {
            self.heap.pop();
        }
        let h = self.heap.as_slice();
        let e = h[0].0;
        // The next earliest is a child of the top.
        let next = match h {
            [_] => u128::MAX,
            [_, a] => head_key(a.0.key, HEAP),
            [_, a, b, ..] => head_key(a.0.key.min(b.0.key), HEAP),
            [] => unreachable!("a heap key names a top"),
        };
        self.head_keys[HEAP] = next;
        self.top_taken = true;
        e
    }

    /// Schedules `e`, pushed at `now`: a generation in the sources' tree,
    /// anything else at the back of its delay's FIFO, or in the heap.
    /// `CHECKED`: `e` may sort before that FIFO's back (its sequence number
    /// was reserved earlier), so it goes there only if not.
    #[inline(always)]
    fn push_entry<const CHECKED: bool>(&mut self, now: Time, e: Entry) {
        let at = e.time();
        debug_assert!(at >= now, "event scheduled in the past: {at} < {now}");
        // Arrival gaps are random: a FIFO per gap would only churn the cache.
        let fifo = match e.ev {
            Event::Generate { source, .. } if self.max_fifos > 0 => {
                if self.generations.push(source, e) {
                    self.refresh_generations_key();
                    return;
                }
                None
            }
            Event::Generate { .. } | Event::TraceNext { .. } | Event::ConnNext { .. } => None,
            _ => self.fifo_for(at - now),
        };
        let Some(i) = fifo else { return self.push_heap(e) };
        let slot = i + FIRST_FIFO;
        if self.head_keys[slot] == u128::MAX {
            self.heads[slot] = e;
            self.head_keys[slot] = head_key(e.key, slot);
            return;
        }
        let back = self.fifos[i].back().unwrap_or(&self.heads[slot]).key;
        debug_assert!(CHECKED || back < e.key, "a FIFO's pushes out of order");
        if CHECKED && back >= e.key {
            return self.push_heap(e);
        }
        self.fifos[i].push_back(e);
    }

    /// The earliest head key ([`head_key`]); `u128::MAX` when the queue is
    /// empty.
    // With up to six FIFOs (every benchmark scenario has three at most) the
    // slots in use, rounded up to an even number and at least four, are
    // compared pairwise, without a loop (each comparison of two keys is five
    // instructions, and every pop makes them).
    #[inline(always)]
    fn min_key(&self) -> u128 {
        let k = &self.head_keys;
        let four = |k: &[u128]| k[0].min(k[1]).min(k[2].min(k[3]));
        match self.fifos.len() {
            0..=2 => four(&k[..4]),
            3..=4 => four(&k[..4]).min(k[4].min(k[5])),
            5..=6 => four(&k[..4]).min(four(&k[4..8])),
            n => k[..FIRST_FIFO + n].iter().copied().min().unwrap_or(u128::MAX),
        }
    }
}

impl EventQueue for FifoQueue {
    #[inline]
    fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
    }

    // A fresh sequence number is the largest yet and "now" never decreases,
    // so an event pushed with one sorts after everything in its delay's FIFO.
    #[inline(always)]
    fn push(&mut self, now: Time, at: Time, ev: Event) {
        let seq = self.reserve();
        self.push_entry::<false>(now, Entry::new(at, seq, ev));
    }

    // A sequence number reserved earlier may be older than the back of
    // its delay's FIFO: such an entry goes to the heap.
    #[inline(always)]
    fn push_reserved(&mut self, now: Time, at: Time, seq: u64, ev: Event) {
        self.push_entry::<true>(now, Entry::new(at, seq, ev));
    }

    #[inline]
    fn push_late(&mut self, _now: Time, at: Time, seq: u64, ev: Event) {
        self.push_heap(Entry::new(at, seq, ev));
    }

    #[inline]
    fn pop_entry_until(&mut self, limit: Time) -> Option<(Time, u64, Event)> {
        let key = self.min_key();
        // An empty queue's key is past any limit.
        if (key >> 64) as Time > limit || key == u128::MAX {
            return None;
        }
        let slot = (key as usize) & ((1 << SLOT_BITS) - 1);
        let e = if slot == HEAP {
            self.take_heap_top()
        } else if slot == GENERATIONS {
            if self.generations.has_taken() {
                self.settle_generations();
                return self.pop_entry_until(limit);
            }
            self.head_keys[GENERATIONS] = GENERATION_TAKEN;
            self.generations.take_top()
        } else {
            let e = self.heads[slot];
            match self.fifos[slot - FIRST_FIFO].pop_front() {
                Some(next) => {
                    self.heads[slot] = next;
                    self.head_keys[slot] = head_key(next.key, slot);
                }
                None => self.head_keys[slot] = u128::MAX,
            }
            e
        };
        Some((e.time(), e.seq(), e.ev))
    }

    #[inline]
    fn peek_time(&self) -> Option<Time> {
        let mut key = self.min_key();
        if key == GENERATION_TAKEN {
            let others = self.head_keys.iter().enumerate().filter(|&(i, _)| i != GENERATIONS).map(|(_, &k)| k).min().unwrap_or(u128::MAX);
            key = others.min(head_key_or_empty(self.generations.peek_key(), GENERATIONS));
        }
        (key != u128::MAX).then_some((key >> 64) as Time)
    }

    // Counted when asked (between runs, by reports), not at every push and pop.
    #[inline]
    fn len(&self) -> usize {
        let heads = self.head_keys[FIRST_FIFO..].iter().filter(|&&k| k != u128::MAX).count();
        self.heap.len() - self.top_taken as usize + self.generations.len() + heads + self.fifos.iter().map(Ring::len).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::engine::HeapQueue;

    /// One step of a run: schedule at one of 24 delays (more than the FIFOs),
    /// schedule a generation of a new source or of one of six (random gap;
    /// a source with one pending in the tree has the next in the heap),
    /// schedule with a sequence number reserved earlier (`push_late`, or
    /// `push_reserved` as a grant does after scheduling others), or pop up
    /// to a limit.
    #[derive(Debug, Clone)]
    enum Step {
        Push(u8),
        Generate(u64),
        GenerateFrom(u8, u64),
        Late(u8),
        Reserved(u8),
        Pop(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0u8..24).prop_map(Step::Push),
            1 => (0u64..5_000).prop_map(Step::Generate),
            2 => (0u8..6, 0u64..5_000).prop_map(|(s, gap)| Step::GenerateFrom(s, gap)),
            1 => (0u8..24).prop_map(Step::Late),
            1 => (0u8..24).prop_map(Step::Reserved),
            3 => (0u64..3_000).prop_map(Step::Pop),
        ]
    }

    proptest! {
        /// The per-delay FIFOs pop every event when the binary heap does, with
        /// its time and sequence number: ties included, FIFOs recycled,
        /// pushes out of a FIFO's order sent to its heap, and generations
        /// through the tree (grown, a taken entry replaced, or settled when
        /// the next pop comes first).
        #[test]
        fn fifos_pop_in_the_heaps_order(steps in proptest::collection::vec(step(), 1..400), heap_only in any::<bool>()) {
            let name = if heap_only { "heap" } else { "fifo" };
            let (mut fifo, mut heap) = (FifoQueue::from_name(name).unwrap(), HeapQueue::new());
            let mut now: Time = 0;
            let mut reserved = None;
            for (id, s) in (1u32..).zip(steps) {
                match s {
                    Step::Push(d) => {
                        let (at, ev) = (now + 100 * d as u64, Event::SwitchWake { switch: id });
                        fifo.push(now, at, ev);
                        heap.push(now, at, ev);
                    }
                    Step::Generate(gap) => {
                        let (at, ev) = (now + gap, Event::Generate { source: id });
                        fifo.push(now, at, ev);
                        heap.push(now, at, ev);
                    }
                    Step::GenerateFrom(source, gap) => {
                        let (at, ev) = (now + gap, Event::Generate { source: source as u32 });
                        fifo.push(now, at, ev);
                        heap.push(now, at, ev);
                    }
                    Step::Late(d) => match reserved.take() {
                        None => reserved = Some((fifo.reserve(), heap.reserve())),
                        Some((sf, sh)) => {
                            prop_assert_eq!(sf, sh);
                            let (at, ev) = (now + 100 * d as u64, Event::SwitchWake { switch: id });
                            fifo.push_late(now, at, sf, ev);
                            heap.push_late(now, at, sh, ev);
                        }
                    },
                    Step::Reserved(d) => match reserved.take() {
                        None => reserved = Some((fifo.reserve(), heap.reserve())),
                        Some((sf, sh)) => {
                            let (at, ev) = (now + 100 * d as u64, Event::SwitchWake { switch: id });
                            fifo.push_reserved(now, at, sf, ev);
                            heap.push_reserved(now, at, sh, ev);
                        }
                    },
                    Step::Pop(ahead) => {
                        let limit = now + ahead;
                        while let Some(got) = fifo.pop_entry_until(limit) {
                            let want = heap.pop_entry_until(limit);
                            prop_assert_eq!(Some(got), want);
                            now = got.0;
                        }
                        prop_assert_eq!(heap.pop_entry_until(limit), None);
                    }
                }
                prop_assert_eq!(fifo.len(), heap.len());
                prop_assert_eq!(fifo.peek_time(), heap.peek_time());
            }
            while let Some(got) = fifo.pop_entry_until(Time::MAX) {
                prop_assert_eq!(Some(got), heap.pop_entry_until(Time::MAX));
            }
            prop_assert!(heap.is_empty());
        }
    }
}
