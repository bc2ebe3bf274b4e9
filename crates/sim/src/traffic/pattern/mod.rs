//! Destination patterns: for each source host, which hosts it sends to.
//!
//! A config names the pattern with `pattern = "hot-spot"` and gives its
//! parameters as keys of their own beside it ([`PatternKeys`]: `hot_hosts`,
//! `hot_fraction`, …), so that a scenario can sweep one like any other key.
//! Each pattern is a file here
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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::traffic::Source;

pub use bits::BitPermutation;
pub use dest_map::DestMap;
pub use hot_spot::HotSpot;
pub use uniform::Uniform;

/// A pattern with its parameters.
#[derive(Debug, Clone, PartialEq)]
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

/// The `pattern` key: which destinations a class draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PatternKind {
    /// Every other host alike.
    #[default]
    Uniform,
    /// The source/destination pairs of `pairs`.
    FixedPairs,
    /// To the host whose index is the source's with its bits reversed (a power-of-two host count).
    BitReversal,
    /// To the host whose index is the complement of the source's (a power-of-two host count).
    BitComplement,
    /// To the host whose index is the source's with its bit halves swapped (a power-of-two host count).
    Transpose,
    /// To the host whose index is the source's rotated left one bit (a power-of-two host count).
    PerfectShuffle,
    /// ⌈k/2⌉ − 1 hosts ahead in every dimension of `tornado_dims`.
    Tornado,
    /// `hot_fraction` of the packets to the `hot_hosts`, the rest uniform.
    HotSpot,
    /// A random derangement, drawn once per run (`permutation_seed`).
    RandomPermutation,
    /// Every member of the multicast group `mlid` sends to the group.
    Multicast,
}

/// A pattern's parameters, each a key of its own beside `pattern` in a class
/// document; a key is read only by its pattern, and giving it to another is
/// an error naming it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatternKeys {
    /// `fixed-pairs`: `"SOURCE>DESTINATION"` host names (`node` or `node:port`).
    pub pairs: Vec<String>,
    /// `hot-spot`: the hot hosts.
    pub hot_hosts: Vec<String>,
    /// `hot-spot`: the share of every source's packets sent to them.
    pub hot_fraction: Option<f64>,
    /// `tornado`: radices of the host layout, first dimension fastest.
    pub tornado_dims: Vec<u32>,
    /// `random-permutation`: seed of the draw.
    pub permutation_seed: Option<u64>,
    /// `multicast`: the group's multicast LID.
    pub mlid: Option<u16>,
}

impl PatternConfig {
    /// The pattern a document's `pattern` and parameter keys describe; the
    /// error is (key, message).
    pub fn from_keys(kind: PatternKind, k: PatternKeys) -> Result<Self, (&'static str, String)> {
        let owners: [(&'static str, bool, PatternKind); 6] = [
            ("pairs", !k.pairs.is_empty(), PatternKind::FixedPairs),
            ("hot_hosts", !k.hot_hosts.is_empty(), PatternKind::HotSpot),
            ("hot_fraction", k.hot_fraction.is_some(), PatternKind::HotSpot),
            ("tornado_dims", !k.tornado_dims.is_empty(), PatternKind::Tornado),
            ("permutation_seed", k.permutation_seed.is_some(), PatternKind::RandomPermutation),
            ("mlid", k.mlid.is_some(), PatternKind::Multicast),
        ];
        for (key, given, owner) in owners {
            if given && owner != kind {
                return Err((key, format!("is read only with pattern = \"{}\", not \"{}\"", owner.name(), kind.name())));
            }
        }
        Ok(match kind {
            PatternKind::Uniform => PatternConfig::Uniform,
            PatternKind::FixedPairs => {
                if k.pairs.is_empty() {
                    return Err(("pairs", "pattern \"fixed-pairs\" needs pairs = [\"SOURCE>DESTINATION\", …] (host names)".into()));
                }
                let mut pairs = Vec::with_capacity(k.pairs.len());
                for p in &k.pairs {
                    match p.split_once('>') {
                        Some((s, d)) if !s.trim().is_empty() && !d.trim().is_empty() && !d.contains('>') => {
                            pairs.push((s.trim().to_string(), d.trim().to_string()))
                        }
                        _ => return Err(("pairs", format!("'{p}' is not a pair: write \"SOURCE>DESTINATION\" with host names"))),
                    }
                }
                PatternConfig::FixedPairs { pairs }
            }
            PatternKind::BitReversal => PatternConfig::BitReversal,
            PatternKind::BitComplement => PatternConfig::BitComplement,
            PatternKind::Transpose => PatternConfig::Transpose,
            PatternKind::PerfectShuffle => PatternConfig::PerfectShuffle,
            PatternKind::Tornado => {
                PatternConfig::Tornado { dims: if k.tornado_dims.is_empty() { None } else { Some(k.tornado_dims) } }
            }
            PatternKind::HotSpot => {
                if k.hot_hosts.is_empty() {
                    return Err(("hot_hosts", "pattern \"hot-spot\" needs hot_hosts = [\"NODE\", …] (host names)".into()));
                }
                let Some(fraction) = k.hot_fraction else {
                    return Err(("hot_fraction", "pattern \"hot-spot\" needs hot_fraction, the share of packets sent to the hot hosts (e.g. 0.05)".into()));
                };
                PatternConfig::HotSpot { hosts: k.hot_hosts, fraction }
            }
            PatternKind::RandomPermutation => PatternConfig::RandomPermutation { seed: k.permutation_seed },
            PatternKind::Multicast => match k.mlid {
                Some(mlid) => PatternConfig::Multicast { mlid },
                None => return Err(("mlid", "pattern \"multicast\" needs mlid, the group's multicast LID (0xC000..=0xFFFE)".into())),
            },
        })
    }

    /// The `pattern` key and parameter keys that describe this pattern.
    pub fn to_keys(&self) -> (PatternKind, PatternKeys) {
        let mut k = PatternKeys::default();
        let kind = match self {
            PatternConfig::Uniform => PatternKind::Uniform,
            PatternConfig::FixedPairs { pairs } => {
                k.pairs = pairs.iter().map(|(s, d)| format!("{s}>{d}")).collect();
                PatternKind::FixedPairs
            }
            PatternConfig::BitReversal => PatternKind::BitReversal,
            PatternConfig::BitComplement => PatternKind::BitComplement,
            PatternConfig::Transpose => PatternKind::Transpose,
            PatternConfig::PerfectShuffle => PatternKind::PerfectShuffle,
            PatternConfig::Tornado { dims } => {
                k.tornado_dims = dims.clone().unwrap_or_default();
                PatternKind::Tornado
            }
            PatternConfig::HotSpot { hosts, fraction } => {
                k.hot_hosts = hosts.clone();
                k.hot_fraction = Some(*fraction);
                PatternKind::HotSpot
            }
            PatternConfig::RandomPermutation { seed } => {
                k.permutation_seed = *seed;
                PatternKind::RandomPermutation
            }
            PatternConfig::Multicast { mlid } => {
                k.mlid = Some(*mlid);
                PatternKind::Multicast
            }
        };
        (kind, k)
    }
}

impl PatternKind {
    /// The name a config writes.
    pub fn name(self) -> &'static str {
        Pattern::NAMES[self as usize]
    }
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
    /// to its index; `seed` is the run's; `key` is the class's, which the
    /// error keys (`KEY.hot_hosts[1]`, …) extend.
    pub fn build(
        cfg: &PatternConfig,
        num_hosts: u32,
        resolve: &dyn Fn(&str) -> Result<u32, String>,
        seed: u64,
        key: &str,
    ) -> Result<Self, SimError> {
        let err = |m: String| SimError::config(format!("{key}.pattern"), m);
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
                .map_err(|m| SimError::config(format!("{key}.tornado_dims"), m)),
            PatternConfig::HotSpot { hosts, fraction } => {
                let mut hot = Vec::with_capacity(hosts.len());
                for (i, h) in hosts.iter().enumerate() {
                    let idx = resolve(h).map_err(|m| SimError::config(format!("{key}.hot_hosts[{i}]"), m))?;
                    if hot.contains(&idx) {
                        return Err(SimError::config(format!("{key}.hot_hosts[{i}]"), format!("host '{h}' is listed twice")));
                    }
                    hot.push(idx);
                }
                HotSpot::new(num_hosts, hot, *fraction).map(Pattern::HotSpot).map_err(|(field, m)| {
                    SimError::config(if field.is_empty() { format!("{key}.pattern") } else { format!("{key}.hot_{field}") }, m)
                })
            }
            PatternConfig::RandomPermutation { seed: own } => {
                random_permutation::map(num_hosts, own.unwrap_or(seed)).map(Pattern::Map).map_err(err)
            }
            PatternConfig::Multicast { mlid } => Err(SimError::config(
                format!("{key}.pattern"),
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

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [PatternKind; 10] = [
        PatternKind::Uniform,
        PatternKind::FixedPairs,
        PatternKind::BitReversal,
        PatternKind::BitComplement,
        PatternKind::Transpose,
        PatternKind::PerfectShuffle,
        PatternKind::Tornado,
        PatternKind::HotSpot,
        PatternKind::RandomPermutation,
        PatternKind::Multicast,
    ];

    #[test]
    fn every_kind_is_named_as_a_config_writes_it() {
        for k in KINDS {
            assert_eq!(serde_json::to_value(k).unwrap(), serde_json::json!(k.name()));
        }
        assert_eq!(KINDS.len(), Pattern::NAMES.len());
    }

    #[test]
    fn parameters_go_with_their_pattern_only() {
        let hot = PatternKeys { hot_hosts: vec!["a".into()], hot_fraction: Some(0.25), ..Default::default() };
        let p = PatternConfig::from_keys(PatternKind::HotSpot, hot.clone()).unwrap();
        assert_eq!(p, PatternConfig::HotSpot { hosts: vec!["a".into()], fraction: 0.25 });
        assert_eq!(p.to_keys(), (PatternKind::HotSpot, hot.clone()));
        let (key, msg) = PatternConfig::from_keys(PatternKind::Uniform, hot).unwrap_err();
        assert_eq!((key, msg.as_str()), ("hot_hosts", "is read only with pattern = \"hot-spot\", not \"uniform\""));
        let pairs = |p: &str| PatternKeys { pairs: vec![p.into()], ..Default::default() };
        assert_eq!(
            PatternConfig::from_keys(PatternKind::FixedPairs, pairs(" h0 > h1:1 ")).unwrap(),
            PatternConfig::FixedPairs { pairs: vec![("h0".into(), "h1:1".into())] }
        );
        for bad in ["h0", "h0>", ">h1", "a>b>c"] {
            assert_eq!(PatternConfig::from_keys(PatternKind::FixedPairs, pairs(bad)).unwrap_err().0, "pairs", "{bad}");
        }
        let (key, _) = PatternConfig::from_keys(PatternKind::Multicast, PatternKeys::default()).unwrap_err();
        assert_eq!(key, "mlid");
        assert_eq!(
            PatternConfig::from_keys(PatternKind::Tornado, PatternKeys::default()).unwrap(),
            PatternConfig::Tornado { dims: None }
        );
    }
}
