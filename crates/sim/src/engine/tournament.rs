//! A winner tree over streams that each have at most one pending event: the
//! traffic sources' generations.
//!
//! A fat tree of 1,728 hosts keeps 1,728 `Generate` events pending, one per
//! source, each due at a random time. In a binary heap every generation
//! costs a sift through 11 levels whose every step is a branch on which
//! child is earlier; those outcomes are random, so about half of them are
//! mispredicted, and a generation cost about 45 ns on this project's
//! machines. Here each stream owns a leaf of a complete binary tree whose
//! every node holds the earliest key below it. Scheduling a stream's next
//! event rewrites its leaf and walks up to the root, taking at each level
//! the minimum of the walk's key and the sibling's: the path depends only
//! on the leaf, so the loads issue at once, and the minimum is a
//! conditional move, never a branch (about 11 ns, the same machine).
//!
//! Keys are the engine's event keys ([`super::event_key`]) with the leaf in
//! the low bits of the sequence part ("tagged"): sequence numbers are
//! unique, so tagged keys order exactly as the keys themselves, and the
//! root names its own leaf.

use super::Entry;
use crate::table::IdVec;

/// Leaves at most `1 << MAX_LEAF_BITS`; a stream past that is refused (its
/// events go to the heap). The tag leaves `64 − MAX_LEAF_BITS` bits of
/// sequence number: 2.8 × 10^14 events, 160 days at 20 M events/s.
pub(super) const MAX_LEAF_BITS: u32 = 16;

/// No leaf.
const NO_LEAF: u32 = u32::MAX;

/// Nodes at the top of the tree (1 KB): every walk to the root reads them,
/// so they stay in the cache, and a path's prefetch skips them.
const HOT_NODES: usize = 64;

/// The tree (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct Tournament {
    /// `nodes[1]` is the root, node `i`'s children are `2i` and `2i + 1`,
    /// and the leaves are `nodes[leaves..2 · leaves]`; each holds the
    /// earliest tagged key below it, or `u128::MAX`.
    nodes: IdVec<u128>,
    /// The pending entry of each leaf.
    entries: IdVec<Entry>,
    /// `log2` of the number of leaves.
    bits: u32,
    /// The leaf whose entry was taken by [`Tournament::take_top`] and is
    /// still in the tree, or [`NO_LEAF`]. A source schedules its next
    /// generation while handling this one, so the next push to that leaf
    /// overwrites it with one walk to the root; anything else settles it
    /// first ([`Tournament::settle`]).
    taken: u32,
}

impl Default for Tournament {
    fn default() -> Self {
        Tournament { nodes: vec![u128::MAX; 2].into(), entries: vec![super::ring::VACANT; 1].into(), bits: 0, taken: NO_LEAF }
    }
}

/// The smaller of `a` and `b` without a branch: which one it is depends on
/// random arrival times, so a branch would be mispredicted half the time.
/// (LLVM turns `min`, a `select` and a masked blend of two `u128`s into a
/// branch here, hence the assembly.)
#[inline(always)]
fn min_unpredictable(a: u128, b: u128) -> u128 {
    #[cfg(target_arch = "x86_64")]
    {
        let (mut lo, mut hi) = (a as u64, (a >> 64) as u64);
        // SAFETY: arithmetic on registers only; no memory is touched.
        unsafe {
            core::arch::asm!(
                // Carry set when b < a, as a 128-bit subtraction.
                "cmp {blo}, {lo}",
                "mov {t}, {bhi}",
                "sbb {t}, {hi}",
                "cmovb {lo}, {blo}",
                "cmovb {hi}, {bhi}",
                blo = in(reg) b as u64,
                bhi = in(reg) (b >> 64) as u64,
                lo = inout(reg) lo,
                hi = inout(reg) hi,
                t = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        ((hi as u128) << 64) | lo as u128
    }
    #[cfg(not(target_arch = "x86_64"))]
    a.min(b)
}

impl Tournament {
    fn leaves(&self) -> usize {
        1 << self.bits
    }

    /// `key` tagged with `leaf` (see the module doc).
    #[inline(always)]
    fn tag(&self, key: u128, leaf: u32) -> u128 {
        let seq = key as u64;
        debug_assert!(seq < 1 << (64 - MAX_LEAF_BITS), "sequence numbers ran past the leaf bits");
        (key >> 64 << 64) | ((seq << self.bits) | leaf as u64) as u128
    }

    /// The key a tagged key was made from.
    #[inline(always)]
    fn untag(&self, tagged: u128) -> u128 {
        (tagged >> 64 << 64) | ((tagged as u64) >> self.bits) as u128
    }

    /// [`Tournament::untag`], or `u128::MAX` for a node that says "empty".
    #[inline(always)]
    fn untag_or_empty(&self, tagged: u128) -> u128 {
        if tagged == u128::MAX {
            u128::MAX
        } else {
            self.untag(tagged)
        }
    }

    /// The leaf a tagged key names.
    #[inline(always)]
    fn leaf_of(&self, tagged: u128) -> u32 {
        (tagged as u64 & ((1 << self.bits) - 1)) as u32
    }

    /// Sets `leaf`'s tagged key and brings its ancestors up to date.
    #[inline(always)]
    fn replay(&mut self, leaf: u32, tagged: u128) {
        let mut i = self.leaves() + leaf as usize;
        let mut best = tagged;
        self.nodes[i] = best;
        while i > 1 {
            best = min_unpredictable(best, self.nodes[i ^ 1]);
            i >>= 1;
            self.nodes[i] = best;
        }
    }

    /// Empties the leaf whose entry was taken, if any.
    #[inline]
    pub(super) fn settle(&mut self) {
        if self.taken != NO_LEAF {
            let leaf = std::mem::replace(&mut self.taken, NO_LEAF);
            self.replay(leaf, u128::MAX);
        }
    }

    /// Whether an entry was taken and the tree still holds it.
    #[inline(always)]
    pub(super) fn has_taken(&self) -> bool {
        self.taken != NO_LEAF
    }

    /// Schedules `e` as the pending entry of `stream`. Returns `false`, and
    /// keeps nothing, when `stream` is past [`MAX_LEAF_BITS`] or already has
    /// an entry pending: the caller keeps it elsewhere.
    #[inline(always)]
    pub(super) fn push(&mut self, stream: u32, e: Entry) -> bool {
        // First, so that no stream past the leaves (`NO_LEAF` included)
        // passes for the taken one.
        if stream as usize >= self.leaves() && !self.grow(stream) {
            return false;
        }
        if stream != self.taken {
            if self.nodes[self.leaves() + stream as usize] != u128::MAX {
                return false;
            }
            self.settle();
        }
        self.taken = NO_LEAF;
        self.entries[stream as usize] = e;
        self.replay(stream, self.tag(e.key, stream));
        self.prefetch_path(self.nodes[1]);
        true
    }

    /// Asks for the lines that the next push to the leaf `root` names will
    /// read and write: its entry and, below the levels every walk keeps in
    /// the cache, the nodes on its path (a node's sibling, which the walk
    /// reads, shares its line unless the pair straddles two: the array is
    /// aligned to 16 bytes only; asking for both lines measured no better).
    /// That leaf is the next to be taken, and its stream pushes
    /// again at once; with many streams its path is cold, and it is known a
    /// dozen events or so ahead.
    #[inline(always)]
    fn prefetch_path(&self, root: u128) {
        if root == u128::MAX {
            return;
        }
        let leaf = self.leaf_of(root) as usize;
        crate::prefetch::prefetch(self.entries.as_slice(), leaf);
        let mut i = self.leaves() + leaf;
        while i >= HOT_NODES {
            crate::prefetch::prefetch(self.nodes.as_slice(), i);
            i >>= 1;
        }
    }

    /// Makes room for leaf `stream`, if it is within [`MAX_LEAF_BITS`].
    #[cold]
    #[inline(never)]
    fn grow(&mut self, stream: u32) -> bool {
        let bits = (stream as u64 + 1).next_power_of_two().trailing_zeros();
        if bits > MAX_LEAF_BITS {
            return false;
        }
        self.settle();
        let grown = Tournament { nodes: vec![u128::MAX; 2 << bits].into(), entries: vec![super::ring::VACANT; 1 << bits].into(), bits, taken: NO_LEAF };
        let old = std::mem::replace(self, grown);
        let leaves = self.leaves();
        for leaf in 0..old.leaves() {
            let tagged = old.nodes[old.leaves() + leaf];
            if tagged != u128::MAX {
                self.entries[leaf] = old.entries[leaf];
                self.nodes[leaves + leaf] = self.tag(old.untag(tagged), leaf as u32);
            }
        }
        for i in (1..self.leaves()).rev() {
            self.nodes[i] = self.nodes[2 * i].min(self.nodes[2 * i + 1]);
        }
        true
    }

    /// The earliest pending entry's key ([`super::event_key`]), or
    /// `u128::MAX` when none is pending. Not while an entry is taken.
    #[inline(always)]
    pub(super) fn top_key(&self) -> u128 {
        debug_assert!(!self.has_taken(), "the top of a tree with an entry taken");
        self.untag_or_empty(self.nodes[1])
    }

    /// The earliest pending entry, if any. Not while an entry is taken.
    #[cfg(test)]
    fn top(&self) -> Option<Entry> {
        self.top_stream().map(|leaf| self.entries[leaf as usize])
    }

    /// The stream of the earliest pending entry, if any, from the root
    /// alone. Not while an entry is taken.
    #[inline(always)]
    pub(super) fn top_stream(&self) -> Option<u32> {
        debug_assert!(!self.has_taken(), "the top of a tree with an entry taken");
        let root = self.nodes[1];
        (root != u128::MAX).then_some(self.leaf_of(root))
    }

    /// Takes the earliest entry, which must exist, leaving it in place until
    /// the next push or [`Tournament::settle`].
    #[inline(always)]
    pub(super) fn take_top(&mut self) -> Entry {
        debug_assert!(!self.has_taken() && self.nodes[1] != u128::MAX, "a take from an empty tree");
        let leaf = self.leaf_of(self.nodes[1]);
        self.taken = leaf;
        self.entries[leaf as usize]
    }

    /// The earliest pending entry's key as [`Tournament::top_key`], also
    /// while an entry is taken (then the earliest of the others).
    pub(super) fn peek_key(&self) -> u128 {
        if !self.has_taken() {
            return self.top_key();
        }
        let mut i = self.leaves() + self.taken as usize;
        let mut best = u128::MAX;
        while i > 1 {
            best = best.min(self.nodes[i ^ 1]);
            i >>= 1;
        }
        self.untag_or_empty(best)
    }

    /// The number of pending entries.
    pub(super) fn len(&self) -> usize {
        let leaves = &self.nodes.as_slice()[self.leaves()..];
        leaves.iter().filter(|&&k| k != u128::MAX).count() - self.has_taken() as usize
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::engine::Event;

    proptest! {
        /// The branch-free minimum is the minimum, ties and carries across
        /// the halves included.
        #[test]
        fn min_unpredictable_is_the_minimum(a_hi in 0u64..4, a_lo in any::<u64>(), b_hi in 0u64..4, b_lo in any::<u64>(), same in any::<bool>()) {
            let a = ((a_hi as u128) << 64) | a_lo as u128;
            let b = if same { a } else { ((b_hi as u128) << 64) | b_lo as u128 };
            prop_assert_eq!(min_unpredictable(a, b), a.min(b));
            prop_assert_eq!(min_unpredictable(b, a), a.min(b));
        }
    }

    fn entry(time: u64, seq: u64, stream: u32) -> Entry {
        Entry::new(time, seq, Event::Generate { source: stream })
    }

    /// Growing keeps every pending entry, a stream with one pending is
    /// refused a second, and a taken entry is replaced by its stream's next.
    #[test]
    fn growth_refusals_and_taken_entries() {
        let mut t = Tournament::default();
        assert_eq!(t.top_key(), u128::MAX);
        assert!(t.push(0, entry(50, 0, 0)));
        assert!(t.push(5, entry(20, 1, 5)));
        assert!(t.push(300, entry(20, 2, 300)));
        assert!(!t.push(5, entry(10, 3, 5)), "stream 5 has one pending");
        assert!(!t.push(1 << MAX_LEAF_BITS, entry(1, 4, 0)), "past the leaves");
        assert!(!t.push(u32::MAX, entry(1, 4, 0)), "no stream passes for the taken one when none is");
        assert_eq!(t.len(), 3);
        assert_eq!(t.top_key(), entry(20, 1, 5).key);
        assert_eq!(t.take_top().ev, Event::Generate { source: 5 });
        assert_eq!((t.len(), t.peek_key()), (2, entry(20, 2, 300).key));
        assert!(t.push(5, entry(60, 5, 5)), "the taken entry's stream schedules its next");
        assert_eq!(t.top().map(|e| e.key), Some(entry(20, 2, 300).key));
        assert_eq!(t.take_top().ev, Event::Generate { source: 300 });
        assert!(t.push(1000, entry(70, 6, 1000)), "another stream, with growth, settles the taken one");
        let order: Vec<u64> = std::iter::from_fn(|| {
            t.settle();
            (t.top_key() != u128::MAX).then(|| t.take_top().time())
        })
        .collect();
        assert_eq!(order, [50, 60, 70]);
        assert_eq!(t.len(), 0);
    }
}
