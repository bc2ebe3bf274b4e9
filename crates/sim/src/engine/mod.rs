//! The discrete-event engine: integer time, a small `Copy` event enum and an
//! event queue ordered by (time, sequence number).
//!
//! Ordering by insertion sequence among events of equal time makes runs
//! deterministic (nexosim's `priority_queue.rs` does the same). The queue
//! keeps a set of per-delay FIFOs (simcore's `emit_ordered` idea) and a
//! winner tree of the traffic sources' next arrivals next to a heap, or, as
//! the queue called `heap`, the heap alone. Both assign
//! sequence numbers the same way, so they pop events in exactly the same order;
//! `tests/it/determinism.rs` (`heap_and_fifo_queues_give_identical_runs`)
//! checks that whole runs agree, and [`HeapQueue`], a plain binary heap kept
//! for the tests, is the reference both are checked against.

mod event;
mod fifo;
#[cfg(test)]
mod heap;
mod ring;
mod tournament;

pub use event::Event;
pub use fifo::FifoQueue;
#[cfg(test)]
use heap::HeapQueue;

/// Simulated time in picoseconds.
pub type Time = u64;

/// Picoseconds in one nanosecond.
pub const PS_PER_NS: u64 = 1_000;

/// The latest simulated time a configuration may ask for (a run's end, a
/// delay, a trace time), in picoseconds: a quarter of `u64` leaves room to add
/// the fabric's delays to any such time without overflowing (about 4.6 × 10^6 s,
/// 53 days).
pub const MAX_TIME_PS: Time = u64::MAX / 4;

/// An event queue ordered by (time, insertion sequence).
///
/// `push` receives the current time as well as the event's time so that an
/// implementation can recognise events scheduled at a fixed delay (they arrive in
/// time order and can go to a FIFO instead of a heap).
pub trait EventQueue {
    /// Schedules `ev` at time `at`; `now` is the time of the event being handled
    /// (`at >= now`).
    #[inline]
    fn push(&mut self, now: Time, at: Time, ev: Event) {
        let seq = self.reserve();
        self.push_reserved(now, at, seq, ev);
    }
    /// Takes the next sequence number without scheduling anything yet: an
    /// event pushed later with it orders among equal times as if it had been
    /// pushed now. (A handler that decides an event's kind only after
    /// scheduling others keeps the order it would have had.)
    fn reserve(&mut self) -> u64;
    /// Schedules `ev` at `at` with a sequence number from [`EventQueue::reserve`].
    fn push_reserved(&mut self, now: Time, at: Time, seq: u64, ev: Event);
    /// Schedules `ev` at `at` with a sequence number reserved before events
    /// already pushed (so possibly out of the order a per-delay FIFO keeps).
    #[inline]
    fn push_late(&mut self, now: Time, at: Time, seq: u64, ev: Event) {
        self.push_reserved(now, at, seq, ev);
    }
    /// Removes and returns the earliest event (ties: first pushed first) with
    /// its time and sequence number, if its time is at most `limit`.
    fn pop_entry_until(&mut self, limit: Time) -> Option<(Time, u64, Event)>;
    /// As [`EventQueue::pop_entry_until`], without the sequence number.
    #[inline]
    fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        self.pop_entry_until(limit).map(|(t, _, ev)| (t, ev))
    }
    /// Removes and returns the earliest event.
    fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_until(Time::MAX)
    }
    /// Time of the earliest event.
    fn peek_time(&self) -> Option<Time>;
    /// Number of pending events.
    fn len(&self) -> usize;
    /// True when no event is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The event queue of every simulation, selectable by name (`event_queue`
/// in the config, [`FifoQueue::NAMES`]): per-delay FIFOs and the sources'
/// tree next to a heap, or the heap alone.
pub type Queue = FifoQueue;

/// The ordering key of an event at `time` pushed as the `seq`-th:
/// `time · 2⁶⁴ + seq`, so that one integer comparison orders by time, then
/// by insertion (also what deferred work is compared against, see
/// [`crate::credits::Credits`]).
#[inline(always)]
pub(crate) fn event_key(time: Time, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

/// One queued event with its ordering key ([`event_key`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub key: u128,
    pub ev: Event,
}

impl Entry {
    /// An entry for `ev` at `time`, pushed as the `seq`-th event.
    #[inline]
    pub fn new(time: Time, seq: u64, ev: Event) -> Self {
        Entry { key: event_key(time, seq), ev }
    }

    /// The event's time.
    #[inline]
    pub fn time(&self) -> Time {
        (self.key >> 64) as Time
    }

    /// The event's sequence number.
    #[inline]
    pub fn seq(&self) -> u64 {
        self.key as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Drives a queue the way the simulator does (time never goes backwards,
    /// a few fixed delays and some random ones) and returns the pop order.
    fn drive(mut q: impl EventQueue, seed: u64) -> Vec<(Time, u32)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut now = 0;
        let mut id = 0u32;
        let mut out = Vec::new();
        for _ in 0..50 {
            q.push(now, rng.random_range(0..1000), Event::LinkFree { port: id, switch: 0 });
            id += 1;
        }
        while let Some((t, ev)) = q.pop() {
            assert!(t >= now, "time went backwards: {t} < {now}");
            now = t;
            let Event::LinkFree { port, .. } = ev else { unreachable!() };
            out.push((t, port));
            if id < 20_000 {
                for _ in 0..rng.random_range(0..3) {
                    let delay = match rng.random_range(0..4) {
                        0 => 1_128_000,
                        1 => 25_000,
                        2 => 0,
                        _ => rng.random_range(0..5_000_000),
                    };
                    q.push(now, now + delay, Event::LinkFree { port: id, switch: 0 });
                    id += 1;
                }
            }
        }
        out
    }

    #[test]
    fn both_queues_pop_in_the_reference_heaps_order() {
        for seed in 0..4 {
            let reference = drive(HeapQueue::new(), seed);
            assert!(reference.len() > 10_000);
            for name in Queue::NAMES {
                assert_eq!(drive(Queue::from_name(name).unwrap(), seed), reference, "{name}, seed {seed}");
            }
        }
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        for name in Queue::NAMES {
            let mut q = Queue::from_name(name).unwrap();
            for i in 0..10 {
                q.push(0, 7, Event::LinkFree { port: i, switch: 0 });
            }
            q.push(0, 3, Event::LinkFree { port: 99, switch: 0 });
            let order: Vec<u32> = std::iter::from_fn(|| q.pop())
                .map(|(_, e)| match e {
                    Event::LinkFree { port, .. } => port,
                    _ => unreachable!(),
                })
                .collect();
            assert_eq!(order, vec![99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "{name}");
        }
    }

    #[test]
    fn queue_names() {
        for name in Queue::NAMES {
            assert_eq!(Queue::from_name(name).unwrap().name(), *name);
        }
        assert!(Queue::from_name("calendar").is_none());
    }
}
