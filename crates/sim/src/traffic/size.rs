//! Payload sizes of open-loop packets: fixed, or drawn per packet.
//!
//! Config: `payload_bytes = 256` (fixed, the default) or one of
//!
//! ```toml
//! payload_sizes = [32, 256]            # drawn with the weights below
//! payload_size_weights = [0.5, 0.5]    # unset = equal weights
//! payload_size_range = [32, 256]       # every integer in min..=max
//! ```
//!
//! The keys are flat, beside the class's others, so that a scenario can sweep
//! them; [`SizeConfig`] is the distribution they describe.
//!
//! A size is drawn per packet from the source's own random stream, so a run
//! stays deterministic per seed; a fixed size draws nothing, so classes that
//! do not use a distribution replay exactly as before. The offered load stays a
//! fraction of the link rate in wire bytes: the arrival process is timed by the
//! *mean* wire size (see [`PayloadSize::mean_wire_bytes`]).

use rand::distr::weighted::WeightedIndex;
use rand::distr::Distribution;
use rand::Rng;
use crate::error::SimError;
use crate::link::wire_bytes;

/// A size distribution (`payload_sizes` with `payload_size_weights`, or `payload_size_range`).
#[derive(Debug, Clone, PartialEq)]
pub enum SizeConfig {
    /// A discrete distribution: `(payload bytes, weight)` pairs; weights need
    /// not sum to 1.
    Empirical {
        /// The sizes and their weights.
        sizes: Vec<(u32, f64)>,
    },
    /// Every payload size in `min..=max` with equal probability.
    Uniform {
        /// Smallest payload in bytes.
        min: u32,
        /// Largest payload in bytes (inclusive).
        max: u32,
    },
}


/// Payload sizes of one class, ready to draw from.
#[derive(Debug, Clone, PartialEq)]
pub enum PayloadSize {
    /// Every packet has this payload.
    Fixed(u32),
    /// `sizes[i]` with the weight the index was built from.
    Empirical {
        /// Payload bytes per outcome.
        sizes: Vec<u32>,
        /// Draws an index into `sizes`.
        index: WeightedIndex<f64>,
        /// Mean payload in bytes.
        mean: f64,
    },
    /// Uniform over `min..=max`.
    Uniform {
        /// Smallest payload.
        min: u32,
        /// Largest payload.
        max: u32,
    },
}

impl PayloadSize {
    /// Validates `cfg` (payloads 1..=`max_payload`, weights finite, ≥ 0, not
    /// all 0); `key` is the class's config key, which the error keys
    /// (`KEY.payload_sizes[1]`, …) extend; `why` says where `max_payload`
    /// comes from.
    pub fn build(cfg: &SizeConfig, max_payload: u32, why: &str, key: &str) -> Result<Self, SimError> {
        let check = |k: String, b: u32| {
            if b == 0 || b > max_payload {
                Err(SimError::config(k, format!("payload must be 1..={max_payload} bytes ({why}), got {b}")))
            } else {
                Ok(())
            }
        };
        match cfg {
            SizeConfig::Empirical { sizes } => {
                if sizes.is_empty() {
                    return Err(SimError::config(
                        format!("{key}.payload_sizes"),
                        "needs at least one payload size",
                    ));
                }
                let mut total = 0.0;
                let mut sum = 0.0;
                for (i, &(b, w)) in sizes.iter().enumerate() {
                    check(format!("{key}.payload_sizes[{i}]"), b)?;
                    if !w.is_finite() || w < 0.0 {
                        return Err(SimError::config(
                            format!("{key}.payload_size_weights[{i}]"),
                            format!("weight must be a finite number >= 0, got {w}"),
                        ));
                    }
                    total += w;
                    sum += w * b as f64;
                }
                if total <= 0.0 {
                    return Err(SimError::config(format!("{key}.payload_size_weights"), "the weights add up to 0"));
                }
                let index = WeightedIndex::new(sizes.iter().map(|&(_, w)| w))
                    .map_err(|e| SimError::config(format!("{key}.payload_size_weights"), e.to_string()))?;
                Ok(PayloadSize::Empirical { sizes: sizes.iter().map(|&(b, _)| b).collect(), index, mean: sum / total })
            }
            &SizeConfig::Uniform { min, max } => {
                check(format!("{key}.payload_size_range[0]"), min)?;
                check(format!("{key}.payload_size_range[1]"), max)?;
                if min > max {
                    return Err(SimError::config(
                        format!("{key}.payload_size_range"),
                        format!("[min, max] needs min <= max, got [{min}, {max}]"),
                    ));
                }
                Ok(PayloadSize::Uniform { min, max })
            }
        }
    }

    /// Payload of the next packet (no draw for a fixed size).
    #[inline]
    pub fn draw(&self, rng: &mut impl Rng) -> u32 {
        match self {
            PayloadSize::Fixed(b) => *b,
            PayloadSize::Empirical { sizes, index, .. } => sizes[index.sample(rng)],
            PayloadSize::Uniform { min, max } => rng.random_range(*min..=*max),
        }
    }

    /// Mean payload in bytes.
    pub fn mean_payload(&self) -> f64 {
        match self {
            PayloadSize::Fixed(b) => *b as f64,
            PayloadSize::Empirical { mean, .. } => *mean,
            PayloadSize::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
        }
    }

    /// Mean wire bytes: the mean payload plus the headers every packet carries
    /// (exact, since the headers do not depend on the payload).
    pub fn mean_wire_bytes(&self, header_bytes: u32) -> f64 {
        self.mean_payload() + wire_bytes(0, header_bytes) as f64
    }

    /// The fixed payload, if every packet has the same one.
    pub fn fixed(&self) -> Option<u32> {
        match self {
            PayloadSize::Fixed(b) => Some(*b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn counts(p: &PayloadSize, values: &[u32], n: usize) -> Vec<usize> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut c = vec![0; values.len()];
        for _ in 0..n {
            let b = p.draw(&mut rng);
            c[values.iter().position(|&v| v == b).expect("drawn size is one of the outcomes")] += 1;
        }
        c
    }

    /// Each count is Binomial(n, p); 5 standard deviations make a false
    /// failure a 1-in-a-million event for a given seed, yet a wrong weight of
    /// 0.05 in 100 000 draws is 36 standard deviations off.
    fn assert_binomial(count: usize, n: usize, p: f64) {
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let dev = (count as f64 - n as f64 * p).abs();
        assert!(dev < 5.0 * sd, "count {count} of {n}, expected {} ± {}", n as f64 * p, 5.0 * sd);
    }

    #[test]
    fn empirical_draws_follow_the_weights() {
        let cfg = SizeConfig::Empirical { sizes: vec![(32, 3.0), (256, 1.0), (100, 0.0), (64, 4.0)] };
        let p = PayloadSize::build(&cfg, 256, "the MTU", "k").unwrap();
        // Mean payload: (3·32 + 256 + 4·64) / 8 = 76.
        assert_eq!(p.mean_payload(), 76.0);
        assert_eq!(p.mean_wire_bytes(34), 76.0 + 34.0);
        let n = 100_000;
        let c = counts(&p, &[32, 256, 100, 64], n);
        assert_eq!(c[2], 0, "zero weight is never drawn");
        for (i, w) in [(0, 3.0), (1, 1.0), (3, 4.0)] {
            assert_binomial(c[i], n, w / 8.0);
        }
    }

    #[test]
    fn uniform_draws_every_size_equally() {
        let p = PayloadSize::build(&SizeConfig::Uniform { min: 30, max: 33 }, 256, "the MTU", "k").unwrap();
        assert_eq!(p.mean_payload(), 31.5);
        let n = 80_000;
        for c in counts(&p, &[30, 31, 32, 33], n) {
            assert_binomial(c, n, 0.25);
        }
    }

    #[test]
    fn fixed_size_draws_nothing() {
        let mut a = ChaCha8Rng::seed_from_u64(1);
        let b = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(PayloadSize::Fixed(77).draw(&mut a), 77);
        assert_eq!(a, b, "the stream has not moved");
    }

    #[test]
    fn bad_distributions_name_the_key() {
        let e = |cfg: SizeConfig| PayloadSize::build(&cfg, 256, "the MTU", "c").unwrap_err().to_string();
        let m = e(SizeConfig::Empirical { sizes: vec![(32, 1.0), (300, 1.0)] });
        assert!(m.contains("'c.payload_sizes[1]'") && m.contains("1..=256") && m.contains("300"), "{m}");
        let m = e(SizeConfig::Empirical { sizes: vec![(0, 1.0)] });
        assert!(m.contains("'c.payload_sizes[0]'"), "{m}");
        let m = e(SizeConfig::Empirical { sizes: vec![(32, -1.0)] });
        assert!(m.contains("'c.payload_size_weights[0]'") && m.contains(">= 0"), "{m}");
        let m = e(SizeConfig::Empirical { sizes: vec![(32, f64::NAN)] });
        assert!(m.contains("finite"), "{m}");
        let m = e(SizeConfig::Empirical { sizes: vec![(32, 0.0)] });
        assert!(m.contains("'c.payload_size_weights'") && m.contains("add up to 0"), "{m}");
        let m = e(SizeConfig::Empirical { sizes: vec![] });
        assert!(m.contains("at least one"), "{m}");
        let m = e(SizeConfig::Uniform { min: 32, max: 257 });
        assert!(m.contains("'c.payload_size_range[1]'") && m.contains("257"), "{m}");
        let m = e(SizeConfig::Uniform { min: 0, max: 10 });
        assert!(m.contains("'c.payload_size_range[0]'"), "{m}");
        let m = e(SizeConfig::Uniform { min: 64, max: 32 });
        assert!(m.contains("'c.payload_size_range'") && m.contains("[64, 32]"), "{m}");
    }
}
