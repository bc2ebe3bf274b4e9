//! A hint to the CPU that a line will be read soon.
//!
//! On a large fabric the model's tables span megabytes and a lookup whose
//! line is not in the cache stalls the handler; where the address is known
//! well before the read, fetching it early hides the wait. A hint only: the
//! results cannot change.

/// Asks the CPU to bring the line `offset` bytes into `s[i]` into the
/// cache; an address out of range is never read.
#[inline(always)]
pub(crate) fn prefetch_at<T>(s: &[T], i: usize, offset: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address, and nothing is read.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((s.as_ptr().wrapping_add(i) as *const i8).wrapping_add(offset));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, i, offset);
}

/// Asks the CPU to bring `s[i]` into the cache; an index out of range is
/// never read.
#[inline(always)]
pub(crate) fn prefetch<T>(s: &[T], i: usize) {
    prefetch_at(s, i, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hint at any address, however far outside the slice (a routed
    /// head's table entry naming no port gives one), cannot fault: a read
    /// there would end the test binary with a segmentation fault.
    #[test]
    fn a_prefetch_far_out_of_range_is_harmless() {
        let lines = [[0u64; 16]; 2];
        for i in [0, 1, 2, usize::MAX / 2, usize::MAX] {
            prefetch(&lines, i);
            prefetch_at(&lines, i, 64);
        }
    }
}
