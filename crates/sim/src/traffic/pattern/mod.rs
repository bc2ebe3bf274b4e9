//! Destination patterns: for each source host, which hosts it sends to.
//!
//! Config uses `pattern = { kind = "uniform" }`; each pattern is a file here
//! with a `NAME`, gathered in the [`Pattern`] enum (dispatched by `match`).
//! Adding a pattern (bit-reversal, transpose, hot-spot, …) is one file, one
//! variant in [`PatternConfig`] and [`Pattern`], and one line in
//! [`Pattern::build`].

pub mod fixed_pairs;
pub mod uniform;

use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::traffic::Source;

pub use fixed_pairs::FixedPairs;
pub use uniform::Uniform;

/// A pattern as written in a config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PatternConfig {
    /// Every other host with equal probability.
    Uniform,
    /// Fixed `(source, destination)` pairs; hosts named `node` or `node:port`.
    FixedPairs {
        /// The pairs.
        pairs: Vec<(String, String)>,
    },
}

/// A pattern ready to draw from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// See [`Uniform`].
    Uniform(Uniform),
    /// See [`FixedPairs`].
    FixedPairs(FixedPairs),
}

impl Pattern {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &[Uniform::NAME, FixedPairs::NAME];

    /// Builds the pattern over `num_hosts` hosts; `resolve` maps a host name
    /// to its index; `key` prefixes error keys.
    pub fn build(
        cfg: &PatternConfig,
        num_hosts: u32,
        resolve: &dyn Fn(&str) -> Result<u32, String>,
        key: &str,
    ) -> Result<Self, SimError> {
        match cfg {
            PatternConfig::Uniform => Uniform::new(num_hosts).map(Pattern::Uniform).map_err(|m| SimError::config(key, m)),
            PatternConfig::FixedPairs { pairs } => {
                FixedPairs::new(pairs, num_hosts, resolve, key).map(Pattern::FixedPairs)
            }
        }
    }

    /// Whether `host` sends in this pattern.
    #[inline]
    pub fn sends(&self, host: u32) -> bool {
        match self {
            Pattern::Uniform(_) => true,
            Pattern::FixedPairs(p) => p.sends(host),
        }
    }

    /// A destination for the next packet of `src`.
    #[inline]
    pub fn dest(&self, src: &mut Source) -> u32 {
        match self {
            Pattern::Uniform(p) => p.dest(src),
            Pattern::FixedPairs(p) => p.dest(src),
        }
    }
}
