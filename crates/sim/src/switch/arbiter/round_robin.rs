//! Round-robin crossbar arbitration (the default): inputs are offered the
//! crossbar in order from the switch's pointer, which moves past each input
//! that is granted, so every waiting input gets its turn.

use crate::selection::Candidates;
use crate::sim::Simulation;
use crate::switch::SwitchModel;

impl Simulation {
    /// One pass over the pending input queues of switch `swi` (only VL15
    /// queues if `vl15_only`), in round-robin order; `PLAIN`: the inputs are
    /// FIFOs and the selection deterministic (`Params::plain_arbitration`).
    // Inlined (as are the calls below it on the FIFO path): this loop and
    // what it calls were one function before the arbiters and organisations
    // became modules, and calls through them cost 4 % of the benchmark's
    // instructions.
    #[inline(always)]
    pub(in crate::switch) fn round_robin_pass<const PLAIN: bool>(&mut self, swi: u32, sm: &SwitchModel, vl15_only: bool, cands: &mut Candidates) {
        let qpp = self.layout.qpp;
        let nbits = sm.num_ports as usize * qpp;
        // Every writer keeps the pointer below `nbits` (no division here).
        let start = self.switches.lines[swi as usize].state.rr as usize;
        debug_assert!(start < nbits);
        if PLAIN && sm.bits_words == 1 {
            debug_assert!(!vl15_only, "VL15 heads take the general path");
            self.round_robin_word(swi, sm, cands, start, nbits);
            return;
        }
        for (lo, hi) in [(start, nbits), (0, start)] {
            let mut cur = lo;
            while let Some(idx) = self.next_pending(swi, cur, hi) {
                cur = idx + 1;
                if vl15_only && self.layout.slot_of_q(self.layout.split_local(sm.port_base, idx).1) != self.layout.vl15_slot {
                    continue;
                }
                let granted = if PLAIN { self.serve_plain(swi, sm, idx, cands) } else { self.serve_input(swi, sm, idx, cands) };
                if granted {
                    self.pass_pointer(swi, idx, nbits);
                }
            }
        }
    }

    /// The default switch's `round_robin_pass` when its input queues fit one
    /// bitset word (up to 32 ports with one data VL): the pending word is
    /// read once and its bits visited from the pointer on, then from 0, as
    /// the general loop visits them. Serving a FIFO head never marks another
    /// input pending (the grant path only schedules events), so the word
    /// read at the start is the one the general loop reads bit by bit.
    // The word is rotated so that the pointer's bit comes first: one loop
    // visits the bits in round-robin order (bits at and past `nbits` are
    // never set), where two loops, one per side of the pointer, left a
    // branch on which side the pending bits are.
    #[inline(always)]
    fn round_robin_word(&mut self, swi: u32, sm: &SwitchModel, cands: &mut Candidates, start: usize, nbits: usize) {
        let word = self.switches.lines[swi as usize].bits.pending;
        let mut bits = word.rotate_right(start as u32);
        while bits != 0 {
            let idx = (bits.trailing_zeros() as usize + start) % 64;
            bits &= bits - 1;
            if self.serve_plain(swi, sm, idx, cands) {
                self.pass_pointer(swi, idx, nbits);
            }
        }
        debug_assert_eq!(self.switches.lines[swi as usize].bits.pending & !word, 0, "a pending mark appeared during the pass");
    }

    /// `serve_input` for the default switch: FIFO heads, deterministic selection.
    #[inline(always)]
    fn serve_plain(&mut self, swi: u32, sm: &SwitchModel, idx: usize, cands: &mut Candidates) -> bool {
        self.clear_pending(swi, idx);
        self.serve_fifo::<true>(swi, sm, idx, cands)
    }

    /// Moves the pointer of switch `swi` past input `idx`, which was granted
    /// (below `nbits`, so that no pass needs a division).
    #[inline(always)]
    fn pass_pointer(&mut self, swi: u32, idx: usize, nbits: usize) {
        self.switches.lines[swi as usize].state.rr = if idx + 1 == nbits { 0 } else { idx as u32 + 1 };
    }
}
