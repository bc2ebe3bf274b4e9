//! Destination patterns: for each source host, which hosts it sends to.
//!
//! Config uses `pattern = { kind = "uniform" }`. Each pattern is a file here
//! with its `NAME`; at run time they reduce to three shapes, gathered in the
//! [`Pattern`] enum (dispatched by `match`): uniform draws, hot-spot draws, and
//! a fixed destination per host ([`DestMap`]), which covers fixed pairs, the
//! bit permutations, tornado and random permutations — and a multicast group,
//! whose members send to it (built from the subnet manager's multicast
//! tables in `build/traffic.rs`). Adding a pattern is one
//! file, one variant in [`PatternConfig`] and one arm in [`Pattern::build`].
//!
//! Hosts are numbered in fabric order (cabled CA ports, node by node). A host
//! that a permutation maps onto itself does not send in that class.

pub mod bits;
pub mod dest_map;
pub mod fixed_pairs;
pub mod hot_spot;
pub mod random_permutation;
pub mod tornado;
pub mod uniform;

use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::traffic::Source;

pub use bits::BitPermutation;
pub use dest_map::DestMap;
pub use hot_spot::HotSpot;
pub use uniform::Uniform;

/// A pattern as written in a config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PatternConfig {
    /// Every other host with equal probability.
    Uniform,
    /// Fixed `(source, destination)` pairs; hosts named `node` or `node:port`.
    FixedPairs {
        /// The pairs.
        pairs: Vec<(String, String)>,
    },
    /// Host `s` sends to the bit-reversed index of `s`.
    BitReversal,
    /// Host `s` sends to the complement of `s`.
    BitComplement,
    /// Host `s` sends to `s` with the halves of its bits swapped.
    Transpose,
    /// Host `s` sends to `s` rotated left by one bit.
    PerfectShuffle,
    /// Each host sends ⌈k/2⌉−1 ahead in every dimension of `dims`.
    Tornado {
        /// Radices of the host layout, first dimension fastest; unset = one ring.
        #[serde(default)]
        dims: Option<Vec<u32>>,
    },
    /// `fraction` of the packets to the hot `hosts`, the rest uniform.
    HotSpot {
        /// Hot hosts, named `node` or `node:port`.
        hosts: Vec<String>,
        /// Share of every source's packets sent to the hot hosts.
        fraction: f64,
    },
    /// A random derangement drawn once per run.
    RandomPermutation {
        /// Seed of the draw; unset = the simulation's seed.
        #[serde(default)]
        seed: Option<u64>,
    },
    /// Every member of the multicast group `mlid` sends to the group (the
    /// subnet manager's `multicast_groups`); each other member receives a
    /// copy of every packet.
    Multicast {
        /// The group's multicast LID, 0xC000..=0xFFFE.
        mlid: u16,
    },
}

/// A pattern ready to draw from.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// See [`Uniform`].
    Uniform(Uniform),
    /// See [`HotSpot`].
    HotSpot(HotSpot),
    /// One destination per host.
    Map(DestMap),
    /// To a multicast group, from its members.
    Multicast {
        /// The group's multicast LID.
        mlid: u16,
        /// Whether each host is a member (and so sends).
        senders: Vec<bool>,
    },
}

impl Pattern {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &[
        uniform::NAME,
        fixed_pairs::NAME,
        "bit-reversal",
        "bit-complement",
        "transpose",
        "perfect-shuffle",
        tornado::NAME,
        hot_spot::NAME,
        random_permutation::NAME,
        "multicast",
    ];

    /// Builds the pattern over `num_hosts` hosts; `resolve` maps a host name
    /// to its index; `seed` is the run's; `key` prefixes error keys.
    pub fn build(
        cfg: &PatternConfig,
        num_hosts: u32,
        resolve: &dyn Fn(&str) -> Result<u32, String>,
        seed: u64,
        key: &str,
    ) -> Result<Self, SimError> {
        let err = |m: String| SimError::config(key, m);
        let bits = |p: BitPermutation| p.map(num_hosts).map(Pattern::Map).map_err(err);
        match cfg {
            PatternConfig::Uniform => Uniform::new(num_hosts).map(Pattern::Uniform).map_err(err),
            PatternConfig::FixedPairs { pairs } => {
                fixed_pairs::map(pairs, num_hosts, resolve, key).map(Pattern::Map)
            }
            PatternConfig::BitReversal => bits(BitPermutation::Reversal),
            PatternConfig::BitComplement => bits(BitPermutation::Complement),
            PatternConfig::Transpose => bits(BitPermutation::Transpose),
            PatternConfig::PerfectShuffle => bits(BitPermutation::Shuffle),
            PatternConfig::Tornado { dims } => tornado::map(num_hosts, dims.as_deref())
                .map(Pattern::Map)
                .map_err(|m| SimError::config(format!("{key}.dims"), m)),
            PatternConfig::HotSpot { hosts, fraction } => {
                let mut hot = Vec::with_capacity(hosts.len());
                for (i, h) in hosts.iter().enumerate() {
                    let idx = resolve(h).map_err(|m| SimError::config(format!("{key}.hosts[{i}]"), m))?;
                    if hot.contains(&idx) {
                        return Err(SimError::config(format!("{key}.hosts[{i}]"), format!("host '{h}' is listed twice")));
                    }
                    hot.push(idx);
                }
                HotSpot::new(num_hosts, hot, *fraction).map(Pattern::HotSpot).map_err(|(field, m)| {
                    SimError::config(if field.is_empty() { key.to_string() } else { format!("{key}.{field}") }, m)
                })
            }
            PatternConfig::RandomPermutation { seed: own } => {
                random_permutation::map(num_hosts, own.unwrap_or(seed)).map(Pattern::Map).map_err(err)
            }
            PatternConfig::Multicast { mlid } => Err(SimError::config(
                format!("{key}.kind"),
                format!("multicast (group 0x{mlid:04x}) is for open-loop classes only: a message has one destination"),
            )),
        }
    }

    /// Whether `host` sends in this pattern.
    #[inline]
    pub fn sends(&self, host: u32) -> bool {
        match self {
            Pattern::Uniform(_) | Pattern::HotSpot(_) => true,
            Pattern::Map(m) => m.sends(host),
            Pattern::Multicast { senders, .. } => senders[host as usize],
        }
    }

    /// A destination for the next packet of `src` (`u32::MAX` for a
    /// multicast group, which has no one destination host).
    #[inline]
    pub fn dest(&self, src: &mut Source) -> u32 {
        match self {
            Pattern::Uniform(p) => p.dest(src),
            Pattern::HotSpot(p) => p.dest(src),
            Pattern::Map(m) => m.dest(src),
            Pattern::Multicast { .. } => u32::MAX,
        }
    }
}
