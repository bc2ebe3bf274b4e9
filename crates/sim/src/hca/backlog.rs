//! Bounded source queues (`hca.source_queue_packets`): flat memory past
//! saturation with the offered load kept exact.
//!
//! Past saturation an open-loop source generates faster than its port drains,
//! and an unbounded SL send queue keeps every waiting packet (~65 B each, so a
//! long overloaded run grows without bound). With a bound, a source whose
//! packets already fill it stops making packets: each later arrival is still
//! drawn on time from the source's own random stream and counted as
//! generated and queued (metrics, injection queue), but only the count is
//! kept. When one of the source's packets leaves the send queue, the oldest
//! deferred arrival becomes a packet, back-dated to its arrival time, as
//! BookSim's traffic manager back-dates packets of a backlogged source.
//!
//! The deferred packets are made by replaying the source's draws from a copy
//! of it taken at its first deferred arrival, so they get exactly the
//! destinations, sizes, path bits and times they would have had. A source
//! that feeds its SL queue alone (one open-loop class per host, no per-path
//! SLs) therefore runs packet for packet as with unbounded queues; where
//! several sources share an SL queue, packets of one source made late queue
//! behind those of another, an order that differs by less than the bound.

use crate::sim::NONE;
use crate::traffic::Source;

/// The bounded queue state of one open-loop source.
#[derive(Debug, Clone, Default)]
pub(crate) struct Backlog {
    /// This source's packets in its host's SL send queues.
    pub queued: u32,
    /// Arrivals counted as generated that are not packets yet.
    pub deferred: u64,
    /// The source as it was at its oldest deferred arrival.
    pub replay: Option<Source>,
}

/// Every open-loop source's bounded queue.
#[derive(Debug, Clone)]
pub(crate) struct SourceQueues {
    /// Packets a source may have in its SL send queues; 0 = unbounded.
    pub limit: u32,
    /// By source index.
    pub sources: Vec<Backlog>,
    /// Source of (class, host) at `class * hosts + host`, or `NONE`.
    source_of: Vec<u32>,
    hosts: u32,
    /// Deferred arrivals of all sources: generated, not delivered, in no queue.
    pub deferred: u64,
}

impl SourceQueues {
    /// Queues of `sources` bounded by `limit` packets each (0: unbounded,
    /// and then nothing is tracked).
    pub fn new(limit: u32, sources: &[Source], classes: usize, hosts: u32) -> Self {
        let mut source_of = Vec::new();
        if limit > 0 {
            source_of = vec![NONE; classes * hosts as usize];
            for (s, src) in sources.iter().enumerate() {
                source_of[src.class as usize * hosts as usize + src.host as usize] = s as u32;
            }
        }
        let tracked = if limit > 0 { sources.len() } else { 0 };
        SourceQueues { limit, sources: vec![Backlog::default(); tracked], source_of, hosts, deferred: 0 }
    }

    /// Whether source `s`'s arrival now must wait as a count: its packets
    /// fill the bound. (Older arrivals waiting imply that: each packet that
    /// leaves is replaced at once by the oldest of them.)
    #[inline]
    pub fn must_defer(&self, s: u32) -> bool {
        self.limit > 0 && self.sources[s as usize].queued >= self.limit
    }

    /// Counts an arrival of source `s` as deferred; `before` is the source
    /// as it was before drawing that arrival.
    pub fn defer(&mut self, s: u32, before: &Source) {
        let b = &mut self.sources[s as usize];
        if b.deferred == 0 {
            b.replay = Some(before.clone());
        }
        b.deferred += 1;
        self.deferred += 1;
    }

    /// A packet of source `s` entered its SL send queue.
    #[inline]
    pub fn on_enqueue(&mut self, s: u32) {
        if self.limit > 0 {
            self.sources[s as usize].queued += 1;
        }
    }

    /// A packet of `class` from `host` left its SL send queue; returns its
    /// source when that source has a deferred arrival to make into a packet.
    #[inline]
    pub fn on_dequeue(&mut self, class: u8, host: u32) -> Option<u32> {
        if self.limit == 0 {
            return None;
        }
        let s = *self.source_of.get(class as usize * self.hosts as usize + host as usize)?;
        if s == NONE {
            return None;
        }
        let b = &mut self.sources[s as usize];
        b.queued -= 1;
        (b.deferred > 0).then_some(s)
    }

    /// Takes the replay cursor of source `s` for its oldest deferred arrival;
    /// give it back with [`SourceQueues::made`].
    pub fn take_replay(&mut self, s: u32) -> Source {
        self.sources[s as usize].replay.take().expect("a source with deferred arrivals has a replay cursor")
    }

    /// The oldest deferred arrival of `s` became a packet; `replay` has
    /// advanced past it (and is replaced at the next first deferral when no
    /// arrival waits any more).
    pub fn made(&mut self, s: u32, replay: Source) {
        let b = &mut self.sources[s as usize];
        b.deferred -= 1;
        self.deferred -= 1;
        b.replay = Some(replay);
    }
}
