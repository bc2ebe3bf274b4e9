//! A log-bucket histogram of picosecond latencies: fixed memory, O(1) record,
//! no per-packet storage.
//!
//! Values below 64 have a bucket each; above, every power of two is split
//! into 32 equal sub-buckets (the layout of HdrHistogram with 5 significant
//! bits), so a bucket is at most 1/32 ≈ 3.1 % of its values wide. Count, sum,
//! minimum and maximum are exact; percentiles are the upper edge of the bucket
//! holding that rank, clamped to the exact maximum.

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
const LINEAR: u64 = 2 * SUB;
/// Buckets needed for every u64 value.
const BUCKETS: usize = (LINEAR + (64 - SUB_BITS as u64 - 1) * SUB) as usize;

/// Latency histogram.
#[derive(Debug, Clone)]
pub struct LogHistogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram::new()
    }
}

#[inline]
fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let mant = v >> shift;
    (LINEAR + (shift as u64 - 1) * SUB + (mant - SUB)) as usize
}

/// Smallest value of bucket `b` and its width.
#[inline]
fn bucket_range(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < LINEAR {
        return (b, 1);
    }
    let shift = (b - LINEAR) / SUB + 1;
    let mant = (b - LINEAR) % SUB + SUB;
    (mant << shift, 1u64 << shift)
}

impl LogHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LogHistogram { counts: vec![0; BUCKETS], count: 0, sum: 0, min: u64::MAX, max: 0 }
    }

    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket_of(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Exact mean, or `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Exact minimum.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// Exact maximum.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// The `q`-quantile (0 < q ≤ 1) within one bucket width (≤ 3.1 %).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket_range(b);
                return Some((lo + w - 1).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Non-empty buckets as `(lowest value, width, count)`, for plotting.
    pub fn buckets(&self) -> Vec<(u64, u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(b, &c)| {
                let (lo, w) = bucket_range(b);
                (lo, w, c)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = LogHistogram::new();
        for v in 0..10 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(4));
        assert_eq!(h.quantile(1.0), Some(9));
        assert_eq!(h.mean(), Some(4.5));
        assert_eq!((h.min(), h.max(), h.count()), (Some(0), Some(9), 10));
    }

    #[test]
    fn empty_has_no_stats() {
        let h = LogHistogram::new();
        assert_eq!((h.mean(), h.quantile(0.5), h.max()), (None, None, None));
    }

    #[test]
    fn buckets_and_quantiles_of_a_hand_worked_sample() {
        // From the layout in the module doc: 5 has its own bucket; 64..127
        // are split into 32 buckets of width 2, so 64 and 65 share [64, 66);
        // 128..255 into width 4, so 130 is in [128, 132); 8192..16383 into
        // width 256, so 10 000 is in [9 984, 10 240).
        let mut h = LogHistogram::new();
        for v in [10_000, 65, 5, 130, 64] {
            h.record(v);
        }
        assert_eq!(h.buckets(), vec![(5, 1, 1), (64, 2, 2), (128, 4, 1), (9_984, 256, 1)]);
        // Ranks ceil(q·5): 1 → 5; 3 → 64's bucket's top, 65; 4 → 131; 5 →
        // 10 239, clamped to the exact maximum.
        let q = |x| h.quantile(x).unwrap();
        assert_eq!((q(0.1), q(0.5), q(0.8), q(1.0)), (5, 65, 131, 10_000));
        assert_eq!(h.mean(), Some(10_264.0 / 5.0));
        assert_eq!((h.min(), h.max(), h.count()), (Some(5), Some(10_000), 5));
    }

    proptest! {
        #[test]
        fn buckets_contain_their_values(v in any::<u64>()) {
            let b = bucket_of(v);
            prop_assert!(b < BUCKETS);
            let (lo, w) = bucket_range(b);
            prop_assert!(lo <= v && (v - lo) < w);
            prop_assert!(w == 1 || (w as f64) / (lo as f64) <= 1.0 / 32.0 + 1e-12);
        }

        #[test]
        fn quantiles_within_bucket_width(mut vals in proptest::collection::vec(1u64..10_000_000_000, 1..300), q in 0.01f64..1.0) {
            let mut h = LogHistogram::new();
            for &v in &vals { h.record(v); }
            vals.sort_unstable();
            let rank = ((q * vals.len() as f64).ceil() as usize).max(1);
            let exact = vals[rank - 1];
            let got = h.quantile(q).unwrap();
            prop_assert!(got >= exact && (got - exact) as f64 <= exact as f64 / 32.0 + 1.0, "{} vs {}", got, exact);
        }
    }
}
