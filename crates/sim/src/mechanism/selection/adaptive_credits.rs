//! Adaptive selection by credits (paper 000 §3.3 "Max-Credit"; paper 002 §4.3
//! selects at arbitration time from credit state): the options are the LFT
//! ports of all `2^LMC` LIDs of the destination port, and among those that can
//! take the packet now the one with the most downstream credits for the
//! packet's VL on that port wins; ties go to the earlier option (the DLID's own
//! entry comes first).

use super::{Candidates, SelectionView};

/// Most downstream credits among the destination's paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdaptiveByCredits {
    /// Keep the first acceptable option (the DLID's own path) unless another
    /// has more than this many more credits (parameter
    /// `prefer_first_within`; 0: always the most credits).
    pub prefer_first_within: u32,
}

impl AdaptiveByCredits {
    /// Registry name.
    pub const NAME: &'static str = "adaptive-by-credits";

    /// The acceptable option with the most credits, or wait.
    #[inline]
    pub fn select(&self, cands: &Candidates, view: &impl SelectionView) -> Option<usize> {
        let mut best: Option<(usize, u32)> = None;
        let mut first: Option<(usize, u32)> = None;
        for (i, c) in cands.as_slice().iter().enumerate() {
            if !view.can_accept(c) {
                continue;
            }
            let cr = view.credits(c);
            first.get_or_insert((i, cr));
            if !matches!(best, Some((_, b)) if cr <= b) {
                best = Some((i, cr));
            }
        }
        match (first, best) {
            (Some((f, fc)), Some((_, bc))) if bc <= fc.saturating_add(self.prefer_first_within) => Some(f),
            _ => best.map(|(i, _)| i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Candidate, Candidates, SelectionView};
    use super::*;

    struct View {
        credits: [u32; 8],
        accept: [bool; 8],
    }
    impl SelectionView for View {
        fn credits(&self, c: &Candidate) -> u32 {
            self.credits[c.port as usize]
        }
        fn can_accept(&self, c: &Candidate) -> bool {
            self.accept[c.port as usize]
        }
        fn fits(&self, _: &Candidate) -> bool {
            unreachable!("adaptive-by-credits does not ask")
        }
    }

    fn cands(ports: &[u8]) -> Candidates {
        let mut c = Candidates::new();
        for &p in ports {
            c.push_unique_port(Candidate { port: p, slot: 0, partition: 0, escape: false });
        }
        c
    }

    #[test]
    fn most_credits_among_acceptable_ties_to_first() {
        let v = View { credits: [0, 4, 9, 9, 12, 0, 0, 0], accept: [true, true, true, true, false, true, true, true] };
        // Port 4 has the most credits but cannot accept; 2 and 3 tie, 2 is first.
        let a = AdaptiveByCredits::default();
        assert_eq!(a.select(&cands(&[1, 4, 2, 3]), &v), Some(2));
        assert_eq!(a.select(&cands(&[4]), &v), None);
    }

    #[test]
    fn prefer_first_within_keeps_the_first_path_unless_clearly_worse() {
        let v = View { credits: [0, 4, 9, 9, 12, 0, 0, 0], accept: [true; 8] };
        // Port 1 (4 credits) first; the best is port 4 (12): 8 more.
        let within = |m| AdaptiveByCredits { prefer_first_within: m }.select(&cands(&[1, 2, 4]), &v);
        assert_eq!(within(0), Some(2));
        assert_eq!(within(7), Some(2), "8 more credits is more than 7");
        assert_eq!(within(8), Some(0));
    }

    #[test]
    fn deterministic_takes_first_or_waits() {
        let v = View { credits: [0; 8], accept: [false, true, false, false, false, false, false, false] };
        assert_eq!(super::super::Deterministic.select(&cands(&[1, 2]), &v), Some(0));
        assert_eq!(super::super::Deterministic.select(&cands(&[2, 1]), &v), None);
    }
}
