//! Inter-arrival processes of open-loop sources.
//!
//! `poisson`: exponential gaps with mean `packet time / load`, where the packet
//! time is the serialization of its wire bytes on the source link — so `load`
//! is the fraction of the link's data rate offered. `bernoulli`: time is cut
//! into slots of one packet time and a packet is generated at each slot
//! boundary with probability `load`; instead of drawing every slot, the number
//! of empty slots before the next packet is drawn from the geometric
//! distribution, which is the same process with one draw per packet.

use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Process names as they appear in configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessKind {
    /// Exponential inter-arrival times.
    #[default]
    Poisson,
    /// Slotted arrivals with probability `load` per packet slot.
    Bernoulli,
}

impl ProcessKind {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &["poisson", "bernoulli"];
}

/// An arrival process with its timing fixed for one source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Process {
    /// Exponential gaps of mean `mean_gap_ps`.
    Poisson {
        /// Mean gap in picoseconds.
        mean_gap_ps: f64,
    },
    /// Slots of `slot_ps`, success probability `p`.
    Bernoulli {
        /// Slot length in picoseconds (one packet time).
        slot_ps: f64,
        /// Probability of a packet per slot.
        p: f64,
    },
}

/// A uniform draw in (0, 1], safe for `ln`.
#[inline]
fn unit_open0(rng: &mut impl Rng) -> f64 {
    1.0 - rng.random::<f64>()
}

impl Process {
    /// The process of `kind` at `load` for packets taking `packet_ps` on the
    /// source link; `Err` explains an impossible load.
    pub fn new(kind: ProcessKind, load: f64, packet_ps: f64) -> Result<Self, String> {
        if !load.is_finite() || load <= 0.0 {
            return Err(format!("must be a finite fraction > 0, got {load}"));
        }
        match kind {
            ProcessKind::Poisson => Ok(Process::Poisson { mean_gap_ps: packet_ps / load }),
            ProcessKind::Bernoulli => {
                if load > 1.0 {
                    return Err(format!(
                        "a Bernoulli source sends at most one packet per packet time, so load must be <= 1, got {load}"
                    ));
                }
                Ok(Process::Bernoulli { slot_ps: packet_ps, p: load })
            }
        }
    }

    /// Empty slots before a success.
    #[inline]
    fn failures(p: f64, rng: &mut impl Rng) -> f64 {
        if p >= 1.0 {
            0.0
        } else {
            (unit_open0(rng).ln() / (1.0 - p).ln()).floor()
        }
    }

    /// Time of the first arrival after 0.
    pub fn first(&self, rng: &mut impl Rng) -> f64 {
        match *self {
            Process::Poisson { mean_gap_ps } => -mean_gap_ps * unit_open0(rng).ln(),
            Process::Bernoulli { slot_ps, p } => slot_ps * Self::failures(p, rng),
        }
    }

    /// Time of the arrival after one at `prev`.
    #[inline]
    pub fn next(&self, prev: f64, rng: &mut impl Rng) -> f64 {
        match *self {
            Process::Poisson { mean_gap_ps } => prev - mean_gap_ps * unit_open0(rng).ln(),
            Process::Bernoulli { slot_ps, p } => prev + slot_ps * (1.0 + Self::failures(p, rng)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn mean_gap(p: Process, n: usize) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let first = p.first(&mut rng);
        let mut t = first;
        for _ in 0..n {
            t = p.next(t, &mut rng);
        }
        (t - first) / n as f64
    }

    #[test]
    fn poisson_mean_matches_load() {
        let p = Process::new(ProcessKind::Poisson, 0.25, 1000.0).unwrap();
        let m = mean_gap(p, 200_000);
        // Standard error of the mean is 4000 / sqrt(2e5) ≈ 9; allow 5 sigma.
        assert!((m - 4000.0).abs() < 45.0, "{m}");
    }

    #[test]
    fn bernoulli_is_slotted_with_mean_slot_over_p() {
        let p = Process::new(ProcessKind::Bernoulli, 0.4, 1000.0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut t = p.first(&mut rng);
        for _ in 0..1000 {
            assert_eq!(t % 1000.0, 0.0);
            t = p.next(t, &mut rng);
        }
        let m = mean_gap(p, 200_000);
        // Geometric gaps: sd = slot·sqrt(1-p)/p ≈ 1936; SE ≈ 4.3.
        assert!((m - 2500.0).abs() < 25.0, "{m}");
        let full = Process::new(ProcessKind::Bernoulli, 1.0, 1000.0).unwrap();
        assert_eq!(mean_gap(full, 100), 1000.0);
    }

    #[test]
    fn impossible_loads_are_rejected() {
        assert!(Process::new(ProcessKind::Bernoulli, 1.5, 1.0).unwrap_err().contains("<= 1"));
        assert!(Process::new(ProcessKind::Poisson, 0.0, 1.0).is_err());
        assert!(Process::new(ProcessKind::Poisson, f64::NAN, 1.0).is_err());
        assert!(Process::new(ProcessKind::Poisson, 2.0, 1.0).is_ok());
    }
}
