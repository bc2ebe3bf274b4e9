//! IBA VL arbitration (IBA 1.2 §7.6.9, VLArbitrationTable §14.2.5.9).
//!
//! Two tables of up to 64 `(VL, weight)` entries. Within a table the current
//! entry's VL sends while it has a packet that can go and weight left; the
//! weight counts 64-byte units and a packet that starts is always finished, so a
//! weight is effectively rounded up to whole packets. When the entry's VL has
//! nothing ready, or its weight is used up, arbitration moves on to the next
//! entry with non-zero weight and a ready VL, whose weight starts afresh.
//! The high table goes before the low one, except that after
//! `LimitOfHighPriority × 4096` bytes of high-priority data (counted in blocks,
//! the packet that crosses the limit finishes) a ready low-priority packet is
//! sent first; limit 0 allows one high packet, 255 is unbounded. A low packet
//! goes whenever no high packet is ready, and each low packet resets the count.

use super::{VlArbState, VlArbTable, NO_ENTRY};

/// IBA two-level weighted VL arbiter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IbaVlArb;

/// A table entry chosen by [`find`], not yet committed.
#[derive(Debug, Clone, Copy)]
struct Choice {
    entry: usize,
    /// The entry is entered afresh (its weight restarts).
    fresh: bool,
}

/// The entry of `table` that would send next given the current entry `idx`
/// (`NO_ENTRY` before the first packet) with `rem` blocks of weight left.
#[inline]
fn find(table: &[(u8, u16)], idx: u8, rem: i32, ready: u16) -> Option<Choice> {
    let n = table.len();
    if n == 0 {
        return None;
    }
    let serves = |e: usize| {
        let (slot, w) = table[e];
        w > 0 && ready & (1 << slot) != 0
    };
    if idx != NO_ENTRY && (idx as usize) < n && rem > 0 && serves(idx as usize) {
        return Some(Choice { entry: idx as usize, fresh: false });
    }
    // Move on; after a full turn this comes back to `idx` itself, afresh.
    let start = if idx == NO_ENTRY { 0 } else { idx as usize + 1 };
    (0..n).map(|i| (start + i) % n).find(|&e| serves(e)).map(|entry| Choice { entry, fresh: true })
}

#[inline]
fn commit(table: &[(u8, u16)], idx: &mut u8, rem: &mut i32, c: Choice, blocks: u16) -> u8 {
    let (slot, w) = table[c.entry];
    if c.fresh {
        *rem = w as i32;
    }
    *idx = c.entry as u8;
    *rem -= blocks as i32;
    slot
}

impl IbaVlArb {
    /// Registry name.
    pub const NAME: &'static str = "iba";

    /// Picks and commits; see the module doc.
    #[inline]
    pub fn pick(
        &self,
        table: &VlArbTable,
        st: &mut VlArbState,
        ready: u16,
        blocks: impl Fn(u8) -> u16,
    ) -> Option<u8> {
        let high = find(&table.high, st.high_idx, st.high_rem, ready);
        let low = find(&table.low, st.low_idx, st.low_rem, ready);
        let limit_reached = table.high_limit_blocks.is_some_and(|l| st.high_sent >= l);
        match (high, low) {
            (Some(h), l) if !(limit_reached && l.is_some()) => {
                let slot = table.high[h.entry].0;
                let b = blocks(slot);
                st.high_sent = st.high_sent.saturating_add(b as u32);
                Some(commit(&table.high, &mut st.high_idx, &mut st.high_rem, h, b))
            }
            (_, Some(l)) => {
                let slot = table.low[l.entry].0;
                let b = blocks(slot);
                st.high_sent = 0;
                Some(commit(&table.low, &mut st.low_idx, &mut st.low_rem, l, b))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::VlArbConfig;

    fn table(high: &[(u8, u8)], low: &[(u8, u8)], limit: u8) -> VlArbTable {
        VlArbTable::from_config(&VlArbConfig {
            high: high.to_vec(),
            low: low.to_vec(),
            limit_of_high_priority: limit,
        })
    }

    /// Runs `n` picks with every VL in `ready` always ready and packets of
    /// `blocks` blocks; returns the VL sequence.
    fn run(t: &VlArbTable, ready: u16, blocks: u16, n: usize) -> Vec<u8> {
        let mut st = VlArbState::default();
        (0..n).map(|_| IbaVlArb.pick(t, &mut st, ready, |_| blocks).unwrap()).collect()
    }

    #[test]
    fn weights_in_64_byte_units_rounded_up_to_packets() {
        // VL0 weight 10 blocks (640 B), VL1 weight 5 blocks, 5-block packets:
        // VL0 sends 2 packets per turn, VL1 one.
        let t = table(&[], &[(0, 10), (1, 5)], 0);
        assert_eq!(run(&t, 0b11, 5, 9), vec![0, 0, 1, 0, 0, 1, 0, 0, 1]);
        // Weight 6 with 5-block packets: the second packet starts with 1 block
        // left and is allowed to finish, so VL0 still sends 2.
        let t = table(&[], &[(0, 6), (1, 1)], 0);
        assert_eq!(run(&t, 0b11, 5, 6), vec![0, 0, 1, 0, 0, 1]);
    }

    #[test]
    fn zero_weight_and_unready_entries_are_skipped() {
        let t = table(&[], &[(0, 0), (1, 1), (2, 1)], 0);
        assert_eq!(run(&t, 0b111, 1, 4), vec![1, 2, 1, 2]);
        assert_eq!(run(&t, 0b101, 1, 3), vec![2, 2, 2]);
        let mut st = VlArbState::default();
        // VL0's only entry has weight 0: it is never served; VL3 has no entry.
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b0001, |_| 1), None);
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b1000, |_| 1), None);
    }

    #[test]
    fn high_limit_zero_lets_one_low_after_each_high() {
        let t = table(&[(0, 255)], &[(1, 255)], 0);
        assert_eq!(run(&t, 0b11, 5, 6), vec![0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn high_limit_counts_4096_byte_units() {
        // Limit 1 = 4096 B = 64 blocks; with 5-block packets, 12 packets make 60
        // blocks, the 13th starts below the limit and is allowed to finish (65),
        // so 13 high packets go before one low one.
        let t = table(&[(0, 255)], &[(1, 255)], 1);
        let seq = run(&t, 0b11, 5, 28);
        let mut expect = vec![0u8; 13];
        expect.push(1);
        expect.extend(std::iter::repeat(0u8).take(13));
        expect.push(1);
        assert_eq!(seq, expect);
    }

    #[test]
    fn unbounded_high_starves_low_while_high_is_ready() {
        let t = table(&[(0, 1)], &[(1, 1)], 255);
        assert_eq!(run(&t, 0b11, 5, 5), vec![0; 5]);
        // Low goes when no high packet is ready.
        assert_eq!(run(&t, 0b10, 5, 2), vec![1, 1]);
    }

    #[test]
    fn current_entry_keeps_weight_until_exhausted() {
        // VL0 has weight 3 packets; it goes unready after one, VL1 sends; when
        // VL0 comes back its entry restarts with full weight.
        let t = table(&[], &[(0, 3), (1, 1)], 0);
        let mut st = VlArbState::default();
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b11, |_| 1), Some(0));
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b10, |_| 1), Some(1));
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b11, |_| 1), Some(0));
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b11, |_| 1), Some(0));
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b11, |_| 1), Some(0));
        assert_eq!(IbaVlArb.pick(&t, &mut st, 0b11, |_| 1), Some(1));
    }
}
