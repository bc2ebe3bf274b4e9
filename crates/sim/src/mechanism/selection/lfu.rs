//! Least Frequently Used path selection (paper 000 §3.3, after Vaidya et al.):
//! the options are the LFT ports of all `2^LMC` LIDs of the destination port,
//! and the packet takes the output (port, VL) whose use counter is smallest;
//! ties go to the earlier option (the DLID's own LFT entry comes first).
//!
//! The counter of an output counts the packets routed to it. Paper 000 keeps
//! "only one counter for each VL" of a port, so there is one `u32` per
//! (switch output port, VL slot), sized when the simulation is built and
//! indexed like every other per-(port, VL) array: no allocation per packet.
//!
//! LFU decides at *routing* time, once per packet and switch, from counters
//! alone (not from credits or buffer state): the chosen option is pinned and
//! the packet waits for it even when another option frees first.

use super::Candidates;

/// Use counters of every (port, VL slot) of the fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lfu {
    counts: Vec<u32>,
    /// One counter per (port, VL) (paper 000; parameter `counters =
    /// "port-vl"`, the default), or per port (`"port"`: the counter of VL
    /// slot 0 counts every VL).
    pub per_vl: bool,
}

impl Default for Lfu {
    fn default() -> Self {
        Lfu::new()
    }
}

impl Lfu {
    /// Registry name.
    pub const NAME: &'static str = "lfu";

    /// Counters per (port, VL), none sized yet.
    pub fn new() -> Self {
        Lfu { counts: Vec::new(), per_vl: true }
    }

    /// Sizes the counters for `outputs` (port, VL slot) pairs, all zero.
    pub fn reset(&mut self, outputs: usize) {
        self.counts.clear();
        self.counts.resize(outputs, 0);
    }

    /// Index of the least used option, whose counter it then increments;
    /// `counter` maps an option to its (port, VL slot) index. `cands` is never
    /// empty (the routing stage drops packets without options).
    #[inline]
    pub fn choose(&mut self, cands: &Candidates, counter: impl Fn(&super::Candidate) -> usize) -> usize {
        let mut best = (0, u32::MAX, 0);
        for (i, c) in cands.as_slice().iter().enumerate() {
            let k = counter(c);
            let n = self.counts[k];
            if n < best.1 {
                best = (i, n, k);
            }
        }
        // Wrapping would take 2^32 packets through one output; saturate rather
        // than let an overflow make the busiest output look unused.
        self.counts[best.2] = best.1.saturating_add(1);
        best.0
    }

    /// The counters, indexed by (port, VL slot).
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Candidate, Candidates};
    use super::*;

    fn cands(opts: &[(u8, u8)]) -> Candidates {
        let mut c = Candidates::new();
        for &(port, slot) in opts {
            c.push_unique_port(Candidate { port, slot, partition: 0, escape: false });
        }
        c
    }

    /// (port, slot) → index with 4 slots per port, ports numbered from 1.
    fn idx(c: &Candidate) -> usize {
        (c.port as usize - 1) * 4 + c.slot as usize
    }

    #[test]
    fn alternates_between_two_unused_outputs_starting_with_the_first() {
        let mut l = Lfu::default();
        l.reset(16);
        let two = cands(&[(2, 0), (1, 0)]);
        let picks: Vec<usize> = (0..5).map(|_| l.choose(&two, idx)).collect();
        assert_eq!(picks, [0, 1, 0, 1, 0]);
        assert_eq!(l.counts()[4], 3);
        assert_eq!(l.counts()[0], 2);
    }

    #[test]
    fn least_used_wins_and_counters_are_per_vl() {
        let mut l = Lfu::default();
        l.reset(16);
        // Port 1 VL 0 used twice, port 3 VL 0 once; VL 1 of both is unused.
        let p1 = cands(&[(1, 0)]);
        l.choose(&p1, idx);
        l.choose(&p1, idx);
        l.choose(&cands(&[(3, 0)]), idx);
        assert_eq!(l.choose(&cands(&[(1, 0), (3, 0)]), idx), 1);
        assert_eq!(l.counts()[8], 2);
        // Another VL of the same ports has its own counters: a tie, so the first.
        assert_eq!(l.choose(&cands(&[(3, 1), (1, 1)]), idx), 0);
        assert_eq!(l.counts()[9], 1);
        assert_eq!(l.counts().iter().sum::<u32>(), 5);
    }

    #[test]
    fn reset_zeroes() {
        let mut l = Lfu::default();
        l.reset(8);
        l.choose(&cands(&[(1, 0)]), idx);
        l.reset(8);
        assert!(l.counts().iter().all(|&n| n == 0));
    }
}
