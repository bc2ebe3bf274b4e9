//! Fully adaptive routing with escape queues (paper 002: Martínez, Flich,
//! Robles, López, Duato, "Supporting Fully Adaptive Routing in InfiniBand
//! Networks", IPDPS 2003, §3 and §4.4).
//!
//! Each VL buffer of a switch input is split into two partitions
//! (`switch.input_partition_bytes = [adaptive, escape]`), each a FIFO with its
//! own head, credits and connection to the crossbar. The routing stage lists,
//! for a packet addressed to an adaptive LID of the `fa` engine, first the
//! adaptive (minimal) options — each towards partition 0 of the next switch —
//! then the escape (up*/down*) option twice: towards partition 0, then
//! towards partition 1. A packet addressed to the escape LID (deterministic)
//! gets only the two escape entries.
//!
//! The choice, at every crossbar arbitration attempt:
//! 1. an adaptive option whose next adaptive partition has credits for the
//!    whole packet, the one with the most such credits (ties: the first);
//! 2. otherwise the escape option, into the adaptive partition if it has room
//!    (the paper stores escape-routed packets in the adaptive queue while it
//!    has space, so packets return from escape to adaptive queues), else into
//!    the escape partition;
//! 3. otherwise the packet waits and is re-arbitrated when credits return.
//!
//! Deterministic packets (addressed to the escape LID) use only the escape
//! option. One stored in the adaptive part of a buffer still waits in the
//! escape FIFO (`Simulation::input_fifo`), which is paper 002's pointer to the
//! first deterministic packet of the adaptive queue: deterministic packets
//! leave a buffer in the order they came, and the escape FIFO never waits
//! behind an adaptive packet.
//!
//! The escape FIFOs hold only packets that follow the escape routing
//! function, whose channel dependency graph is acyclic (up*/down*, checked by
//! `ibnetsim check`): by Duato's condition for virtual cut-through the whole
//! routing is then deadlock-free. `max_options` (paper 002's MR) caps the
//! options per destination: the escape one and the adaptive entries of the
//! lowest LID offsets.
//! A packet moves only with credits for all of it in the partition it chose:
//! with output buffers the switch takes those credits when the packet crosses
//! the crossbar (see `Simulation::grant_buffered`), so the choice cannot be
//! invalidated by packets queued ahead of it in the output buffer.

use super::{Candidates, SelectionView};

/// Adaptive options while the next adaptive queue has room, the escape path
/// otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullyAdaptive {
    /// Most routing options per destination, the escape one included (paper
    /// 002's MR; parameter `max_options`): the routing stage lists the
    /// adaptive entries of the lowest offsets only. 255 = all.
    pub max_options: u8,
}

impl Default for FullyAdaptive {
    fn default() -> Self {
        FullyAdaptive { max_options: u8::MAX }
    }
}

impl FullyAdaptive {
    /// Registry name.
    pub const NAME: &'static str = "fully-adaptive";

    /// The option the packet takes now, or `None` to wait.
    #[inline]
    pub fn select(&self, cands: &Candidates, view: &impl SelectionView) -> Option<usize> {
        let mut best: Option<(usize, u32)> = None;
        let mut escape: Option<usize> = None;
        for (i, c) in cands.as_slice().iter().enumerate() {
            if !view.can_accept(c) || !view.fits(c) {
                continue;
            }
            if c.escape {
                escape.get_or_insert(i);
            } else {
                let cr = view.credits(c);
                if !matches!(best, Some((_, b)) if cr <= b) {
                    best = Some((i, cr));
                }
            }
        }
        best.map(|(i, _)| i).or(escape)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Candidate, Candidates, SelectionView};
    use super::*;

    /// Credits per (port, partition); a packet of `need` blocks.
    struct View {
        credits: [[u32; 2]; 8],
        busy: [bool; 8],
        need: u32,
    }
    impl SelectionView for View {
        fn credits(&self, c: &Candidate) -> u32 {
            self.credits[c.port as usize][c.partition as usize]
        }
        fn can_accept(&self, c: &Candidate) -> bool {
            !self.busy[c.port as usize]
        }
        fn fits(&self, c: &Candidate) -> bool {
            self.credits(c) >= self.need
        }
    }

    /// Adaptive options on `adaptive`, then the escape port twice (adaptive
    /// partition, escape partition), as the routing stage lists them.
    fn options(adaptive: &[u8], escape: u8) -> Candidates {
        let mut c = Candidates::new();
        for &port in adaptive {
            c.push(Candidate { port, slot: 0, partition: 0, escape: false });
        }
        c.push(Candidate { port: escape, slot: 0, partition: 0, escape: true });
        c.push(Candidate { port: escape, slot: 0, partition: 1, escape: true });
        c
    }

    fn view(credits: &[(u8, u32, u32)], need: u32) -> View {
        let mut v = View { credits: [[0; 2]; 8], busy: [false; 8], need };
        for &(p, a, e) in credits {
            v.credits[p as usize] = [a, e];
        }
        v
    }

    #[test]
    fn an_adaptive_option_needs_credits_for_the_whole_packet_in_the_adaptive_part() {
        // 256 B packets are 4 credits (+ headers: 5 with 26 B of headers);
        // port 2 has 4 adaptive credits, port 3 has 8.
        let c = options(&[2, 3], 1);
        let v = view(&[(1, 8, 8), (2, 4, 8), (3, 8, 0)], 5);
        assert_eq!(FullyAdaptive::default().select(&c, &v), Some(1), "port 3: the only adaptive option with room");
        let v = view(&[(1, 8, 8), (2, 6, 8), (3, 5, 0)], 5);
        assert_eq!(FullyAdaptive::default().select(&c, &v), Some(0), "both fit: the most adaptive credits");
        let v = view(&[(1, 8, 8), (2, 6, 0), (3, 6, 0)], 5);
        assert_eq!(FullyAdaptive::default().select(&c, &v), Some(0), "a tie goes to the first option");
    }

    #[test]
    fn the_escape_path_is_taken_when_no_adaptive_queue_has_room() {
        let c = options(&[2, 3], 1);
        // Escape port's adaptive part has room: the packet goes there (and may
        // adapt again at the next switch).
        let v = view(&[(1, 5, 8), (2, 4, 8), (3, 0, 8)], 5);
        assert_eq!(FullyAdaptive::default().select(&c, &v), Some(2));
        assert_eq!(c.as_slice()[2].partition, 0);
        // Only the escape part has room.
        let v = view(&[(1, 4, 5), (2, 4, 8), (3, 0, 8)], 5);
        assert_eq!(FullyAdaptive::default().select(&c, &v), Some(3));
        assert_eq!(c.as_slice()[3].partition, 1);
        // Nowhere: wait.
        let v = view(&[(1, 4, 4), (2, 4, 8), (3, 0, 8)], 5);
        assert_eq!(FullyAdaptive::default().select(&c, &v), None);
    }

    #[test]
    fn adaptive_credits_on_the_escape_partition_do_not_count() {
        // Port 2's escape part is empty and its adaptive part full: an
        // adaptive option may not use the escape part.
        let c = options(&[2], 1);
        let v = view(&[(1, 0, 0), (2, 0, 16)], 5);
        assert_eq!(FullyAdaptive::default().select(&c, &v), None);
    }

    #[test]
    fn a_busy_port_is_skipped_and_a_deterministic_packet_has_only_the_escape() {
        let c = options(&[2, 3], 1);
        let mut v = view(&[(1, 8, 8), (2, 16, 8), (3, 8, 0)], 5);
        v.busy[2] = true;
        assert_eq!(FullyAdaptive::default().select(&c, &v), Some(1));
        let det = options(&[], 1);
        assert_eq!(FullyAdaptive::default().select(&det, &v), Some(0));
        v.busy[1] = true;
        assert_eq!(FullyAdaptive::default().select(&det, &v), None);
    }
}
