//! Closed-loop sources: each sending host keeps at most `window` messages
//! outstanding, and the next message leaves a gap after one completes
//! (ib_flit_sim's generator is the `window = 1` case: it waits for its
//! previous message). The gap is `gap_ns`, or drawn per message with that mean
//! (ib_flit_sim's `msg2msgGap` is a volatile parameter, so its users write a
//! distribution there too). A message is complete when its last packet has been
//! delivered or, with `transport.ack` set, when the acknowledgement of it is
//! back at the source (see `hca/transport.rs`). At time 0 every source sends
//! `window` messages at once. Destinations come from the class's pattern;
//! messages larger than the MTU are split into MTU-sized packets.

use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PathBits, PatternConfig, PatternKeys, PatternKind, Source};
use crate::engine::Time;

/// Most messages one closed-loop source may keep outstanding. A window leaves
/// whole at time 0, so its messages' packets all exist at once; far deeper
/// windows keep every source busy from the start, which open-loop traffic
/// with a load does without holding the packets.
pub const MAX_WINDOW: u32 = 65_536;

/// Most packets the closed-loop classes may put into the send queues at time
/// 0 (windows × sending hosts × packets per message), about 1 GiB of packets
/// and events.
pub const MAX_START_PACKETS: u64 = 1 << 24;

/// How the gap after a completed message is drawn, with mean `gap_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GapDistribution {
    /// Always `gap_ns`; nothing is drawn.
    #[default]
    Constant,
    /// Exponential with mean `gap_ns` (a Poisson "think time").
    Exponential,
    /// Uniform on [0, 2·`gap_ns`].
    Uniform,
}

impl GapDistribution {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &["constant", "exponential", "uniform"];

    /// A gap of mean `mean_ps`, rounded to the picosecond; draws from `rng`
    /// unless constant, so a constant gap leaves the source's destinations
    /// as they were.
    #[inline]
    pub fn draw(self, mean_ps: Time, rng: &mut impl Rng) -> Time {
        let mean = mean_ps as f64;
        let gap = match self {
            GapDistribution::Constant => return mean_ps,
            // 1 − U is in (0, 1], so the logarithm is finite.
            GapDistribution::Exponential => -mean * (1.0 - rng.random::<f64>()).ln(),
            GapDistribution::Uniform => 2.0 * mean * rng.random::<f64>(),
        };
        gap.round() as Time
    }
}

/// One closed-loop class (`[[traffic.closed_loop]]`, written as a
/// [`ClosedLoopDoc`]); in results it is one more class, after the traces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ClosedLoopDoc", into = "ClosedLoopDoc")]
pub struct ClosedLoopConfig {
    /// Name used in results.
    pub name: String,
    /// Service level 0..=15.
    pub sl: u8,
    /// Destinations of the messages (the pattern decides which hosts send).
    pub pattern: PatternConfig,
    /// Messages a source keeps outstanding, at least 1.
    pub window: u32,
    /// Payload bytes per message (split into packets of at most the MTU).
    pub message_bytes: u32,
    /// Nanoseconds between a message's completion and the next message (the
    /// mean, when `gap_distribution` draws it).
    pub gap_ns: f64,
    /// `constant`, `exponential` or `uniform` (on [0, 2·`gap_ns`]).
    pub gap_distribution: GapDistribution,
    /// Choice of DLID path bits (per message).
    pub path_bits: PathBits,
}

impl Default for ClosedLoopConfig {
    fn default() -> Self {
        ClosedLoopConfig {
            name: "closed-loop".into(),
            sl: 0,
            pattern: PatternConfig::Uniform,
            window: 1,
            message_bytes: 2048,
            gap_ns: 0.0,
            gap_distribution: GapDistribution::Constant,
            path_bits: PathBits::Base,
        }
    }
}

/// A closed-loop class as a config document writes it: the pattern's
/// parameters are keys beside `pattern`, as in an open-loop class
/// ([`super::ClassDoc`]).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ClosedLoopDoc {
    /// Name of the class in results (unique among classes).
    pub name: String,
    /// Service level, 0..=15.
    #[schemars(range(max = 15))]
    pub sl: u8,
    /// Destinations, drawn per message; the keys below are its parameters,
    /// as in an open-loop class (`multicast` is for open-loop classes only).
    pub pattern: PatternKind,
    /// For `fixed-pairs`: `"SOURCE>DESTINATION"` host-name pairs (`node` or `node:port`).
    pub pairs: Vec<String>,
    /// For `hot-spot`: the hot hosts, by name.
    pub hot_hosts: Vec<String>,
    /// For `hot-spot`: share of every source's messages sent to the hot hosts; the rest is uniform.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub hot_fraction: Option<f64>,
    /// For `tornado`: radices of the host layout, first dimension fastest; empty = one ring of all hosts.
    #[schemars(inner(range(min = 1)))]
    pub tornado_dims: Vec<u32>,
    /// For `random-permutation`: seed of the permutation; unset = the run's seed.
    pub permutation_seed: Option<u64>,
    /// Not for closed-loop classes (a message has one destination); kept so that the error says so.
    pub mlid: Option<u16>,
    /// Messages a source keeps outstanding, 1..=65536 (the whole window leaves at time 0).
    #[schemars(range(min = 1, max = 65536))]
    pub window: u32,
    /// Payload bytes per message, at least 1 (split into packets of at most the MTU).
    #[schemars(range(min = 1))]
    pub message_bytes: u32,
    /// Nanoseconds between a message's completion and the next message (the mean, when `gap_distribution` draws it).
    pub gap_ns: f64,
    /// How the gap is drawn.
    pub gap_distribution: GapDistribution,
    /// DLID path bits with LMC > 0, per message: always the base LID, or a random one.
    pub path_bits: PathBits,
}

impl Default for ClosedLoopDoc {
    fn default() -> Self {
        ClosedLoopConfig::default().into()
    }
}

impl From<ClosedLoopConfig> for ClosedLoopDoc {
    fn from(c: ClosedLoopConfig) -> Self {
        let (pattern, k) = c.pattern.to_keys();
        ClosedLoopDoc {
            name: c.name,
            sl: c.sl,
            pattern,
            pairs: k.pairs,
            hot_hosts: k.hot_hosts,
            hot_fraction: k.hot_fraction,
            tornado_dims: k.tornado_dims,
            permutation_seed: k.permutation_seed,
            mlid: k.mlid,
            window: c.window,
            message_bytes: c.message_bytes,
            gap_ns: c.gap_ns,
            gap_distribution: c.gap_distribution,
            path_bits: c.path_bits,
        }
    }
}

impl ClosedLoopDoc {
    /// The class this document describes; the error is (key, message), the
    /// key one of this document's.
    pub fn to_class(self) -> Result<ClosedLoopConfig, (&'static str, String)> {
        let d = self;
        let keys = PatternKeys {
            pairs: d.pairs,
            hot_hosts: d.hot_hosts,
            hot_fraction: d.hot_fraction,
            tornado_dims: d.tornado_dims,
            permutation_seed: d.permutation_seed,
            mlid: d.mlid,
        };
        Ok(ClosedLoopConfig {
            name: d.name,
            sl: d.sl,
            pattern: PatternConfig::from_keys(d.pattern, keys)?,
            window: d.window,
            message_bytes: d.message_bytes,
            gap_ns: d.gap_ns,
            gap_distribution: d.gap_distribution,
            path_bits: d.path_bits,
        })
    }
}

impl TryFrom<ClosedLoopDoc> for ClosedLoopConfig {
    type Error = String;
    fn try_from(d: ClosedLoopDoc) -> Result<Self, String> {
        // serde's message carries the class's position; the key is named here.
        d.to_class().map_err(|(key, msg)| format!("{key}: {msg}"))
    }
}

/// One sending host of a closed-loop class.
#[derive(Debug, Clone)]
pub struct ClosedLoopSource {
    /// Host, class and random stream (for destinations and path bits).
    pub src: Source,
    /// Most messages outstanding.
    pub window: u32,
    /// Payload bytes per message.
    pub message_bytes: u32,
    /// Gap after a completion (its mean, when drawn).
    pub gap_ps: Time,
    /// How the gap is drawn.
    pub gap: GapDistribution,
    /// Messages outstanding now.
    pub outstanding: u32,
    /// Most messages ever outstanding at once.
    pub peak_outstanding: u32,
    /// Messages sent.
    pub sent: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_constant_gap_draws_nothing() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(GapDistribution::Constant.draw(1_000, &mut rng), 1_000);
        assert_eq!(rng.get_word_pos(), 0, "the stream is untouched");
    }

    #[test]
    fn uniform_gaps_stay_below_twice_the_mean_and_exponential_ones_do_not() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let uni: Vec<Time> = (0..10_000).map(|_| GapDistribution::Uniform.draw(1_000, &mut rng)).collect();
        assert!(uni.iter().all(|&g| g <= 2_000));
        let exp: Vec<Time> = (0..10_000).map(|_| GapDistribution::Exponential.draw(1_000, &mut rng)).collect();
        // P(gap > 4·mean) = e^-4 ≈ 1.8 %: about 180 of 10 000.
        let long = exp.iter().filter(|&&g| g > 4_000).count();
        assert!((120..=250).contains(&long), "{long}");
        for v in [uni, exp] {
            let mean = v.iter().sum::<Time>() as f64 / v.len() as f64;
            assert!((mean - 1_000.0).abs() < 30.0, "{mean}");
        }
    }
}
