//! Arrays indexed by the ids the builder issues: ports, switches, queues and
//! packets.
//!
//! An [`IdVec`] is a `Vec` whose `[i]` is not bounds-checked in a release
//! build. Every index into one is an id made by `build` (a global port, a
//! switch, a host, a source, a queue number from [`crate::layout::Layout`])
//! or by [`crate::packet::PacketArena::alloc`], or an offset the builder
//! laid out from them, all below the array's length by construction; and
//! no `IdVec` ever shrinks (it offers `push` and slice access only). A hop
//! reads about a dozen of these arrays; with `&mut Simulation` LLVM loads
//! each one's pointer and length again after every store, and compares:
//! without the compares the mesh runs 10 % fewer instructions
//! (`crates/sim/README.md`, eleventh stop). Indices that come from outside
//! (a packet's destination LID) stay checked, in plain `Vec`s or by `get`.
//!
//! A debug build, which every test runs (`[profile.test]` keeps debug
//! assertions), checks every index as a `Vec` does; so does a release build
//! with the `checked-indexing` feature, to chase a suspected bad index.

use std::ops::{Deref, DerefMut, Index, IndexMut};

/// A `Vec` indexed by ids that are in range by construction (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdVec<T>(Vec<T>);

const CHECKED: bool = cfg!(any(debug_assertions, feature = "checked-indexing"));

impl<T> IdVec<T> {
    /// An empty array.
    pub(crate) fn new() -> Self {
        IdVec(Vec::new())
    }

    /// Appends `x` (its id is the old length): the only way an `IdVec`
    /// changes length, so no id it gave out ever falls off its end.
    #[inline]
    pub(crate) fn push(&mut self, x: T) {
        self.0.push(x);
    }

    /// The elements as a slice (range indexing goes through it: `[i]` on
    /// the array itself takes ids only).
    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[T] {
        &self.0
    }
}

impl<T> Default for IdVec<T> {
    fn default() -> Self {
        IdVec::new()
    }
}

impl<T> From<Vec<T>> for IdVec<T> {
    fn from(v: Vec<T>) -> Self {
        IdVec(v)
    }
}

impl<T> FromIterator<T> for IdVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        IdVec(iter.into_iter().collect())
    }
}

impl<'a, T> IntoIterator for &'a IdVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut IdVec<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

// To a slice, not to the `Vec`: a slice cannot be truncated, cleared or
// popped, so the "never shrinks" the unchecked indexing relies on is the
// type's, not a convention.
impl<T> Deref for IdVec<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for IdVec<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T> Index<usize> for IdVec<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        if CHECKED {
            &self.0[i]
        } else {
            // SAFETY: `i` is an id below the length by construction, and the
            // array never shrinks (module doc); checked builds verify it.
            unsafe { self.0.get_unchecked(i) }
        }
    }
}

impl<T> IndexMut<usize> for IdVec<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        if CHECKED {
            &mut self.0[i]
        } else {
            // SAFETY: as for `index`.
            unsafe { self.0.get_unchecked_mut(i) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_like_a_vec() {
        let mut v: IdVec<u32> = (0..5).collect();
        v[3] += 10;
        assert_eq!(v[3], 13);
        assert_eq!(&v.as_slice()[1..3], &[1, 2]);
        v.push(7);
        assert_eq!((v.len(), v[5]), (6, 7));
    }

    // Only where the checks are on: an unchecked read past the end is
    // undefined behaviour, not a panic (`cargo test --release` skips this).
    #[cfg(any(debug_assertions, feature = "checked-indexing"))]
    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn a_checked_build_checks_every_index() {
        let v: IdVec<u32> = vec![1, 2].into();
        let _ = v[2];
    }
}
