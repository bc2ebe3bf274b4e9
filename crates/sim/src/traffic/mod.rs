//! Open-loop workloads: traffic classes, their sources and destinations.
//!
//! A class is a stream of packets with an SL, injected by every host the
//! destination pattern lets send, at a load given as a fraction of the source
//! link's data rate counted in wire bytes (SPEC "Offered load"). Payloads are
//! fixed or drawn per packet ([`size`]). Traces ([`trace`]) replay messages
//! from a file instead; each trace counts as one more class in the results.
//! Each (class, host) source draws from its own ChaCha8 stream derived from
//! the seed, so adding a source does not change the others' draws (simcore
//! keeps the generator in the simulation state; we keep one per source).
//! Constant-bit-rate connections ([`connection`]) are a third kind.
//! Inter-arrival processes are in [`process`], destination patterns in
//! [`pattern`]; both are enums with a name registry.

pub mod closed_loop;
pub mod connection;
pub mod pattern;
pub mod process;
pub mod size;
pub mod trace;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::table::IdVec;
pub use closed_loop::{ClosedLoopConfig, ClosedLoopSource, GapDistribution};
pub use connection::{Connection, ConnectionConfig};
pub use pattern::{Pattern, PatternConfig, PatternKeys, PatternKind};
pub use process::{Process, ProcessKind};
pub use size::{PayloadSize, SizeConfig};
pub use trace::{Message, Trace, TraceConfig};

/// Every packet source of a simulation.
#[derive(Debug, Clone)]
pub(crate) struct Workload {
    /// Traffic classes (open-loop classes, then traces, then the connections' class).
    pub classes: Vec<Class>,
    /// Open-loop sources, one per (class, sending host).
    pub sources: IdVec<Source>,
    /// Each open-loop source's host, by source: a generation starts from its
    /// host, and the next one's lines are asked for
    /// (`Simulation::prefetch_generation`), without reading the source's own
    /// state first, on a large fabric a miss.
    pub source_hosts: IdVec<u32>,
    /// Trace replays, each with its cursor.
    pub traces: Vec<Trace>,
    /// Closed-loop sources, one per (closed-loop class, sending host).
    pub closed_loop: Vec<ClosedLoopSource>,
    /// CBR connections, each with its cursor.
    pub connections: Vec<Connection>,
    /// The class their packets count in (unused without connections).
    pub conn_class: u8,
    /// Packets created by `Simulation::inject` whose generation time is to come.
    pub injections_pending: u64,
}

/// How the source picks the path bits (low LMC bits) of the DLID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PathBits {
    /// Always the destination's base LID.
    #[default]
    Base,
    /// Uniformly among the destination's `2^LMC` LIDs, per packet (paper 000's
    /// reliable datagrams pick a random path at the source).
    Random,
}

impl PathBits {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &["base", "random"];
}

/// Payload bytes of a class that gives no size.
pub const DEFAULT_PAYLOAD_BYTES: u32 = 256;

/// One traffic class; a config document writes it as a [`ClassDoc`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ClassDoc", into = "ClassDoc")]
pub struct ClassConfig {
    /// Name used in results.
    pub name: String,
    /// Service level 0..=15.
    pub sl: u8,
    /// Management traffic on VL15 (strict priority, not flow controlled;
    /// payload at most 256 bytes).
    pub vl15: bool,
    /// Offered load per source as a fraction of its link's data rate, in wire
    /// bytes (may exceed 1 to overload; Bernoulli needs ≤ 1). With a size
    /// distribution the arrival rate follows the mean wire size.
    pub load: f64,
    /// Inter-arrival process: `poisson` or `bernoulli`.
    pub process: ProcessKind,
    /// Payload bytes per packet (1..=MTU) when `payload_size` is unset; wire
    /// bytes add 26 plus extra headers.
    pub payload_bytes: u32,
    /// Payload size distribution, drawn per packet; replaces `payload_bytes`.
    pub payload_size: Option<SizeConfig>,
    /// Destinations.
    pub pattern: PatternConfig,
    /// Choice of DLID path bits.
    pub path_bits: PathBits,
    /// Fraction (0..=1) of packets sent to the destination's second LID
    /// (DLID least significant bit 1), which the `fa` routing engine labels
    /// adaptive; the others go to its base LID, routed deterministically on
    /// the escape path (paper 002 §4.2: the sender enables adaptive routing
    /// per packet). Needs LMC ≥ 1 and `path_bits = "base"`.
    pub adaptive_fraction: f64,
}

impl Default for ClassConfig {
    fn default() -> Self {
        ClassConfig {
            name: PatternKind::Uniform.name().into(),
            sl: 0,
            vl15: false,
            load: 0.0,
            process: ProcessKind::Poisson,
            payload_bytes: DEFAULT_PAYLOAD_BYTES,
            payload_size: None,
            pattern: PatternConfig::Uniform,
            path_bits: PathBits::Base,
            adaptive_fraction: 0.0,
        }
    }
}

/// A traffic class as a config document writes it (`[[traffic.classes]]`,
/// a scenario's `[traffic]`, the dicts of Python's `ibnetsim.traffic`): flat
/// keys, so that a scenario can sweep any of them. Its JSON schema declares
/// the scenario section. `load` is the one key without a default: a class
/// that offers nothing is a mistake. Of `payload_bytes`, `payload_sizes` and
/// `payload_size_range` at most one may be given; with none, packets carry
/// 256 bytes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassDoc {
    /// Name of the class in results; unset = the pattern's name.
    #[serde(default)]
    pub name: Option<String>,
    /// Service level, 0..=15.
    #[schemars(range(max = 15))]
    #[serde(default)]
    pub sl: u8,
    /// Management traffic on VL15 (strict priority, not flow controlled; payload at most 256 bytes).
    #[serde(default)]
    pub vl15: bool,
    /// Offered load per source, as a fraction of its link's data rate counted in wire bytes (payload + `header_bytes`,
    /// 26 B of headers by default); above 1 overloads. With a size distribution the arrival rate follows the mean wire size.
    #[schemars(range(min = 0.0, max = crate::build::MAX_LOAD))]
    pub load: f64,
    /// Inter-arrival process of each source.
    #[serde(default)]
    pub process: ProcessKind,
    /// Payload bytes of every packet, 1..=MTU; unset = 256, or the distribution below.
    #[schemars(range(min = 1, max = crate::config::MAX_MTU_BYTES))]
    #[serde(default)]
    pub payload_bytes: Option<u32>,
    /// Payload sizes drawn per packet (e.g. `[32, 256]`, the mix of paper 002), with `payload_size_weights`.
    #[schemars(inner(range(min = 1, max = crate::config::MAX_MTU_BYTES)))]
    #[serde(default)]
    pub payload_sizes: Vec<u32>,
    /// Relative weight of each of `payload_sizes`; empty = equal weights.
    #[schemars(inner(range(min = 0.0)))]
    #[serde(default)]
    pub payload_size_weights: Vec<f64>,
    /// `[min, max]`: payload sizes drawn uniformly from min..=max per packet.
    #[schemars(inner(range(min = 1, max = crate::config::MAX_MTU_BYTES)))]
    #[serde(default)]
    pub payload_size_range: Vec<u32>,
    /// Destinations; the hosts a pattern maps onto themselves do not send.
    #[serde(default)]
    pub pattern: PatternKind,
    /// For `fixed-pairs`: `"SOURCE>DESTINATION"` host-name pairs (`node` or `node:port`).
    #[serde(default)]
    pub pairs: Vec<String>,
    /// For `hot-spot`: the hot hosts, by name.
    #[serde(default)]
    pub hot_hosts: Vec<String>,
    /// For `hot-spot`: share of every source's packets sent to the hot hosts; the rest is uniform.
    #[schemars(range(min = 0.0, max = 1.0))]
    #[serde(default)]
    pub hot_fraction: Option<f64>,
    /// For `tornado`: radices of the host layout, first dimension fastest; empty = one ring of all hosts.
    #[schemars(inner(range(min = 1)))]
    #[serde(default)]
    pub tornado_dims: Vec<u32>,
    /// For `random-permutation`: seed of the permutation; unset = the run's seed.
    #[serde(default)]
    pub permutation_seed: Option<u64>,
    /// For `multicast`: the group's multicast LID, 0xC000..=0xFFFE.
    #[schemars(range(min = 0xC000, max = 0xFFFE))]
    #[serde(default)]
    pub mlid: Option<u16>,
    /// DLID path bits with LMC > 0: always the base LID, or a random one per packet.
    #[serde(default)]
    pub path_bits: PathBits,
    /// Share (0..=1) of packets sent to the destination's adaptive LID (base + 1) for `fully-adaptive` switches and the
    /// `fa` engine (paper 002: the sender enables adaptive routing per packet); the rest use the base LID, routed
    /// deterministically on the escape path. Needs LMC ≥ 1 and `path_bits = "base"`.
    #[schemars(range(min = 0.0, max = 1.0))]
    #[serde(default)]
    pub adaptive_fraction: f64,
}

impl Default for ClassDoc {
    fn default() -> Self {
        ClassConfig::default().into()
    }
}

impl From<ClassConfig> for ClassDoc {
    fn from(c: ClassConfig) -> Self {
        let (pattern, k) = c.pattern.to_keys();
        let (mut payload_sizes, mut payload_size_weights, mut payload_size_range) = (Vec::new(), Vec::new(), Vec::new());
        let payload_bytes = match c.payload_size {
            None => Some(c.payload_bytes),
            Some(SizeConfig::Empirical { sizes }) => {
                (payload_sizes, payload_size_weights) = sizes.into_iter().unzip();
                None
            }
            Some(SizeConfig::Uniform { min, max }) => {
                payload_size_range = vec![min, max];
                None
            }
        };
        ClassDoc {
            // The default class's name is its pattern's, so the documented default leaves it unset.
            name: if c.name == pattern.name() { None } else { Some(c.name) },
            sl: c.sl,
            vl15: c.vl15,
            load: c.load,
            process: c.process,
            payload_bytes: if payload_bytes == Some(DEFAULT_PAYLOAD_BYTES) { None } else { payload_bytes },
            payload_sizes,
            payload_size_weights,
            payload_size_range,
            pattern,
            pairs: k.pairs,
            hot_hosts: k.hot_hosts,
            hot_fraction: k.hot_fraction,
            tornado_dims: k.tornado_dims,
            permutation_seed: k.permutation_seed,
            mlid: k.mlid,
            path_bits: c.path_bits,
            adaptive_fraction: c.adaptive_fraction,
        }
    }
}

impl ClassDoc {
    /// The class this document describes; the error is (key, message), the
    /// key one of this document's.
    pub fn to_class(self) -> Result<ClassConfig, (&'static str, String)> {
        let given: Vec<&'static str> = [
            ("payload_bytes", self.payload_bytes.is_some()),
            ("payload_sizes", !self.payload_sizes.is_empty()),
            ("payload_size_range", !self.payload_size_range.is_empty()),
        ]
        .into_iter()
        .filter_map(|(k, g)| g.then_some(k))
        .collect();
        if given.len() > 1 {
            return Err((given[1], format!("give one of payload_bytes, payload_sizes or payload_size_range, not {}", given.join(" and "))));
        }
        if !self.payload_size_weights.is_empty() && self.payload_size_weights.len() != self.payload_sizes.len() {
            return Err((
                "payload_size_weights",
                format!("{} weights for {} payload_sizes: give one weight per size", self.payload_size_weights.len(), self.payload_sizes.len()),
            ));
        }
        let payload_size = if !self.payload_sizes.is_empty() {
            let weights = if self.payload_size_weights.is_empty() { vec![1.0; self.payload_sizes.len()] } else { self.payload_size_weights };
            Some(SizeConfig::Empirical { sizes: self.payload_sizes.into_iter().zip(weights).collect() })
        } else if !self.payload_size_range.is_empty() {
            let &[min, max] = self.payload_size_range.as_slice() else {
                return Err(("payload_size_range", format!("expected [min, max] payload bytes, got {} values", self.payload_size_range.len())));
            };
            Some(SizeConfig::Uniform { min, max })
        } else {
            None
        };
        let keys = PatternKeys {
            pairs: self.pairs,
            hot_hosts: self.hot_hosts,
            hot_fraction: self.hot_fraction,
            tornado_dims: self.tornado_dims,
            permutation_seed: self.permutation_seed,
            mlid: self.mlid,
        };
        Ok(ClassConfig {
            name: self.name.unwrap_or_else(|| self.pattern.name().to_string()),
            sl: self.sl,
            vl15: self.vl15,
            load: self.load,
            process: self.process,
            payload_bytes: self.payload_bytes.unwrap_or(DEFAULT_PAYLOAD_BYTES),
            payload_size,
            pattern: PatternConfig::from_keys(self.pattern, keys)?,
            path_bits: self.path_bits,
            adaptive_fraction: self.adaptive_fraction,
        })
    }
}

impl TryFrom<ClassDoc> for ClassConfig {
    type Error = String;
    fn try_from(d: ClassDoc) -> Result<Self, String> {
        // serde's message carries the class's position; the key is named here.
        d.to_class().map_err(|(key, msg)| format!("{key}: {msg}"))
    }
}

/// The workload: open-loop classes and replayed traces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Traffic classes.
    pub classes: Vec<ClassConfig>,
    /// Traces; in results each is one more class, after `classes`. Classes
    /// and traces together are at most 255.
    pub traces: Vec<TraceConfig>,
    /// Closed-loop classes ([`closed_loop`]); each is one more class, after
    /// the traces.
    pub closed_loop: Vec<ClosedLoopConfig>,
    /// Constant-bit-rate connections ([`connection`]); together they are one
    /// more class, `connections`, after the closed-loop classes, and each is
    /// also measured on its own (`SimResults::connections`).
    pub connections: Vec<ConnectionConfig>,
}

/// A validated class.
#[derive(Debug, Clone)]
pub struct Class {
    /// Name.
    pub name: String,
    /// Service level (of a trace: the lowest its messages use; each packet
    /// carries its own).
    pub sl: u8,
    /// Travels on VL15.
    pub vl15: bool,
    /// Payload sizes of open-loop packets.
    pub size: PayloadSize,
    /// Load per source.
    pub load: f64,
    /// Arrival process kind.
    pub process: ProcessKind,
    /// Destinations (a trace class has no open-loop source and never draws from it).
    pub pattern: Pattern,
    /// Path-bit choice.
    pub path_bits: PathBits,
    /// Fraction of packets sent to the destination's adaptive LID (base + 1).
    pub adaptive_fraction: f64,
    /// Index in `Simulation::traces` of the trace that drives this class.
    pub trace: Option<u32>,
}

/// One (class, host) generator.
#[derive(Debug, Clone)]
pub struct Source {
    /// Sending host.
    pub host: u32,
    /// Class index.
    pub class: u8,
    /// Its random stream.
    pub rng: ChaCha8Rng,
    /// Arrival process with this host's timing.
    pub process: Process,
    /// Time of the next arrival (fractional picoseconds, to keep the rate exact).
    pub next_at: f64,
}

impl Source {
    /// A source whose stream is `(class << 32) | host` of the ChaCha8 generator seeded with `seed`.
    pub fn new(seed: u64, host: u32, class: u8, process: Process) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(((class as u64) << 32) | host as u64);
        let next_at = process.first(&mut rng);
        Source { host, class, rng, process, next_at }
    }

    /// Time of the pending arrival, rounded to the picosecond.
    #[inline]
    pub fn due(&self) -> Time {
        self.next_at.round() as Time
    }

    /// Advances to the following arrival.
    #[inline]
    pub fn advance(&mut self) {
        self.next_at = self.process.next(self.next_at, &mut self.rng);
    }

    /// A source that draws destinations and path bits for messages but has no
    /// arrival process of its own (a closed-loop source's, same stream rule).
    pub fn for_messages(seed: u64, host: u32, class: u8) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(((class as u64) << 32) | host as u64);
        Source { host, class, rng, process: Process::Poisson { mean_gap_ps: f64::INFINITY }, next_at: f64::INFINITY }
    }

    /// A uniform index below `n` from this source's stream.
    #[inline]
    pub fn pick(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }

    /// Payload of the next packet, drawn from this source's stream.
    #[inline]
    pub fn payload(&mut self, size: &PayloadSize) -> u32 {
        size.draw(&mut self.rng)
    }

    /// True with probability `p` (no draw at 0 or 1, so that all-adaptive
    /// and all-deterministic runs see the same arrivals and destinations).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 || p >= 1.0 {
            return p >= 1.0;
        }
        self.rng.random::<f64>() < p
    }

    /// A uniform 32-bit draw from this source's stream.
    #[inline]
    pub fn rng_u32(&mut self) -> u32 {
        self.rng.random()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_bits_names_are_the_config_names() {
        let parsed: Vec<PathBits> = PathBits::NAMES.iter().map(|n| serde_json::from_value(serde_json::json!(n)).unwrap()).collect();
        assert_eq!(parsed, [PathBits::Base, PathBits::Random]);
    }

    #[test]
    fn streams_are_independent_of_other_sources() {
        let p = Process::new(ProcessKind::Poisson, 0.5, 1000.0).unwrap();
        let a = Source::new(9, 3, 0, p);
        let b = Source::new(9, 4, 0, p);
        let a2 = Source::new(9, 3, 0, p);
        assert_eq!(a.next_at, a2.next_at);
        assert_ne!(a.next_at, b.next_at);
        let c = Source::new(9, 3, 1, p);
        assert_ne!(a.next_at, c.next_at);
    }
}
