//! Selection among routing options.
//!
//! The routing stage ([`crate::switch::route`]) turns a packet's DLID into a
//! fixed-capacity list of [`Candidate`]s `{out port, VL, buffer partition}`;
//! a selection policy picks one (paper 002 §4.3 makes the same split; BookSim's
//! `OutputSet` and CAMINOS' `RoutingNextCandidates` are the same idea).
//! Deterministic routing is the one-candidate case. Policies are an enum
//! dispatched by `match`, each in its own file with a `NAME`;
//! [`Selection::from_name`] is the registry.
//!
//! A policy decides at one of two moments ([`Selection::decides_at_routing`]):
//!
//! * **arbitration time** (`deterministic`, `adaptive-by-credits`): at every
//!   crossbar arbitration attempt the policy picks an option that can take the
//!   packet now, or none ("wait and retry"), from a read-only
//!   [`SelectionView`] of credits and buffer state;
//! * **routing time** (`lfu`): once per packet and switch, the first time the
//!   packet's routed header is considered at the head of its input queue, the
//!   policy picks one option from its own state; the choice is pinned in
//!   [`crate::packet::Packet::pinned`] until the packet leaves that input
//!   buffer, and every later arbitration attempt considers only that option
//!   (the packet waits for it, it never re-chooses).

pub mod adaptive_credits;
pub mod config;
pub mod deterministic;
pub mod fully_adaptive;
pub mod lfu;

use ibnetsim_fabric::PortNum;

use crate::error::SimError;

pub use adaptive_credits::AdaptiveByCredits;
pub use config::{LfuCounters, SelectionConfig};
pub use deterministic::Deterministic;
pub use fully_adaptive::FullyAdaptive;
pub use lfu::Lfu;

/// Most routing options one lookup can return. With adaptive selection the
/// options are the distinct LFT ports of the destination's `2^LMC` LIDs;
/// building a simulation fails if some destination has more.
pub const MAX_CANDIDATES: usize = 16;

/// One routing option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Candidate {
    /// Output port of the switch.
    pub port: PortNum,
    /// VL slot on that output (after SL2VL).
    pub slot: u8,
    /// Buffer partition of the next hop's VL buffer (0 = the whole buffer,
    /// or its adaptive part; 1 = the escape part, see [`FullyAdaptive`]).
    pub partition: u8,
    /// The option is the escape path (paper 002), not an adaptive one.
    pub escape: bool,
}

/// A fixed-capacity list of options: no allocation per packet.
#[derive(Debug, Clone, Copy, Default)]
pub struct Candidates {
    len: u8,
    items: [Candidate; MAX_CANDIDATES],
}

impl Candidates {
    /// An empty list.
    #[inline]
    pub fn new() -> Self {
        Candidates::default()
    }

    /// Appends `c` unless its port is already listed; false when full.
    #[inline]
    pub fn push_unique_port(&mut self, c: Candidate) -> bool {
        if self.as_slice().iter().any(|x| x.port == c.port) {
            return true;
        }
        if self.len as usize == MAX_CANDIDATES {
            return false;
        }
        self.items[self.len as usize] = c;
        self.len += 1;
        true
    }

    /// Empties the list (its items are left as they are, unread).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `c` whatever its port (the escape option may share a port
    /// with an adaptive one); false when full.
    #[inline]
    pub fn push(&mut self, c: Candidate) -> bool {
        if self.len as usize == MAX_CANDIDATES {
            return false;
        }
        self.items[self.len as usize] = c;
        self.len += 1;
        true
    }

    /// Keeps only option `k` (a routing-time choice).
    #[inline]
    pub fn keep_only(&mut self, k: usize) {
        debug_assert!(k < self.len());
        self.items[0] = self.items[k];
        self.len = 1;
    }

    /// The options.
    #[inline]
    pub fn as_slice(&self) -> &[Candidate] {
        &self.items[..self.len as usize]
    }

    /// Number of options.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when there is no option (no route).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What a selection policy may look at.
pub trait SelectionView {
    /// Credits (64-byte blocks) the switch holds for the next hop of `c`.
    fn credits(&self, c: &Candidate) -> u32;
    /// Whether the packet can move towards `c` right now (crossbar port free,
    /// room in the output buffer or, without output buffers, link free and
    /// credits for the whole packet).
    fn can_accept(&self, c: &Candidate) -> bool;
    /// Whether the next hop of `c` has credits for the whole packet in the
    /// partition `c` names (always for VL15, which has no flow control).
    fn fits(&self, c: &Candidate) -> bool;
}

/// The selection policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The LFT entry of the DLID.
    Deterministic(Deterministic),
    /// Among the LFT ports of the destination's LIDs, the most credits.
    AdaptiveByCredits(AdaptiveByCredits),
    /// Among the LFT ports of the destination's LIDs, the least used output
    /// (port, VL); decided at routing time.
    Lfu(Lfu),
    /// Adaptive minimal options while the next adaptive queue has room, the
    /// escape path otherwise (paper 002).
    FullyAdaptive(FullyAdaptive),
}

impl Selection {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &[Deterministic::NAME, AdaptiveByCredits::NAME, Lfu::NAME, FullyAdaptive::NAME];

    /// The policy `cfg` describes, with its parameters; errors name `key`
    /// (or `key.parameter`).
    pub fn from_config(cfg: &SelectionConfig, key: &str) -> Result<Self, SimError> {
        let mut s = Self::from_name(&cfg.kind, key)?;
        let misplaced = |p: &str, owner: &str| {
            SimError::config(format!("{key}.{p}"), format!("is a parameter of {owner}, not of '{}'", cfg.kind))
        };
        if let Some(m) = cfg.prefer_first_within {
            match &mut s {
                Selection::AdaptiveByCredits(a) => a.prefer_first_within = m,
                _ => return Err(misplaced("prefer_first_within", AdaptiveByCredits::NAME)),
            }
        }
        if let Some(m) = cfg.max_options {
            match &mut s {
                Selection::FullyAdaptive(f) if m >= 2 => f.max_options = m,
                Selection::FullyAdaptive(_) => {
                    return Err(SimError::config(
                        format!("{key}.max_options"),
                        format!("must be at least 2 (the escape and one adaptive option), got {m}"),
                    ))
                }
                _ => return Err(misplaced("max_options", FullyAdaptive::NAME)),
            }
        }
        if let Some(k) = cfg.counters {
            match &mut s {
                Selection::Lfu(l) => l.per_vl = k == LfuCounters::PortVl,
                _ => return Err(misplaced("counters", Lfu::NAME)),
            }
        }
        Ok(s)
    }

    /// The policy called `name`, with default parameters; the error (for
    /// config key `key`) lists the valid names.
    pub fn from_name(name: &str, key: &str) -> Result<Self, SimError> {
        match name {
            Deterministic::NAME => Ok(Selection::Deterministic(Deterministic)),
            AdaptiveByCredits::NAME => Ok(Selection::AdaptiveByCredits(AdaptiveByCredits::default())),
            Lfu::NAME => Ok(Selection::Lfu(Lfu::new())),
            FullyAdaptive::NAME => Ok(Selection::FullyAdaptive(FullyAdaptive::default())),
            _ => Err(SimError::config(
                key,
                format!("unknown selection policy '{name}' (known: {})", Self::NAMES.join(", ")),
            )),
        }
    }

    /// Registry name of this policy.
    pub fn name(&self) -> &'static str {
        match self {
            Selection::Deterministic(_) => Deterministic::NAME,
            Selection::AdaptiveByCredits(_) => AdaptiveByCredits::NAME,
            Selection::Lfu(_) => Lfu::NAME,
            Selection::FullyAdaptive(_) => FullyAdaptive::NAME,
        }
    }

    /// Sizes the policy's state for `outputs` (port, VL slot) pairs of the
    /// fabric (once, when the simulation is built).
    pub fn prepare(&mut self, outputs: usize) {
        if let Selection::Lfu(s) = self {
            s.reset(outputs);
        }
    }

    /// Whether the policy decides once per packet and switch at routing time
    /// ([`Selection::choose_at_routing`]) rather than at each arbitration
    /// attempt ([`Selection::select`]).
    #[inline]
    pub fn decides_at_routing(&self) -> bool {
        matches!(self, Selection::Lfu(_))
    }

    /// The routing-time choice among the non-empty `cands`; `counter` maps an
    /// option to its (port, VL slot) index. Arbitration-time policies take
    /// option 0 (never called for them).
    #[inline]
    pub fn choose_at_routing(&mut self, cands: &Candidates, counter: impl Fn(&Candidate) -> usize) -> usize {
        match self {
            Selection::Lfu(s) => s.choose(cands, counter),
            Selection::Deterministic(_) | Selection::AdaptiveByCredits(_) | Selection::FullyAdaptive(_) => 0,
        }
    }

    /// Whether routing-time counters are kept per (port, VL) rather than per
    /// port (then slot 0's counter counts every VL).
    #[inline]
    pub fn counts_per_vl(&self) -> bool {
        !matches!(self, Selection::Lfu(l) if !l.per_vl)
    }

    /// Routing-time use counters per (port, VL slot), for policies that keep them.
    pub fn counts(&self) -> Option<&[u32]> {
        match self {
            Selection::Lfu(s) => Some(s.counts()),
            Selection::Deterministic(_) | Selection::AdaptiveByCredits(_) | Selection::FullyAdaptive(_) => None,
        }
    }

    /// Whether the routing stage must list every LID of the destination port
    /// (all its paths) rather than only the DLID's entry.
    #[inline]
    pub fn wants_all_paths(&self) -> bool {
        matches!(self, Selection::AdaptiveByCredits(_) | Selection::Lfu(_))
    }

    /// Whether the routing stage lists the escape and adaptive options of
    /// the destination's labelled LIDs ([`FullyAdaptive`]). Such a choice
    /// needs the next hop's credits for the whole packet in the chosen
    /// partition, so with output buffers the switch takes them when the packet
    /// crosses the crossbar, and re-arbitrates when credits return.
    #[inline]
    pub fn escape_paths(&self) -> bool {
        matches!(self, Selection::FullyAdaptive(_))
    }

    /// Most adaptive options the routing stage lists per destination
    /// (`fully-adaptive`'s `max_options − 1`; unlimited otherwise).
    #[inline]
    pub fn max_adaptive_options(&self) -> usize {
        match self {
            Selection::FullyAdaptive(f) => (f.max_options as usize).saturating_sub(1),
            _ => usize::MAX,
        }
    }

    /// Index of the arbitration-time choice, or `None` to wait. A routing-time
    /// policy has already pinned its choice (the only option left), so it
    /// takes it when it can accept the packet. Always inlined: with two
    /// input buffer organisations calling it, the compiler stopped inlining
    /// it on the hot FIFO path (1 % more instructions in the benchmark).
    #[inline(always)]
    pub fn select(&mut self, cands: &Candidates, view: &impl SelectionView) -> Option<usize> {
        match self {
            Selection::Deterministic(s) => s.select(cands, view),
            Selection::AdaptiveByCredits(s) => s.select(cands, view),
            Selection::Lfu(_) => Deterministic.select(cands, view),
            Selection::FullyAdaptive(s) => s.select(cands, view),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_resolve() {
        let mut n = Selection::NAMES.to_vec();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), Selection::NAMES.len());
        for name in Selection::NAMES {
            assert_eq!(Selection::from_name(name, "selection").unwrap().name(), *name);
        }
    }

    #[test]
    fn unknown_name_lists_known() {
        let e = Selection::from_name("lru", "selection").unwrap_err().to_string();
        assert!(e.contains("'selection'") && e.contains("deterministic, adaptive-by-credits, lfu, fully-adaptive"), "{e}");
    }

    #[test]
    fn max_options_is_fully_adaptives_parameter() {
        let cfg = |kind: &str, m: u8| SelectionConfig { max_options: Some(m), ..SelectionConfig::named(kind) };
        let s = Selection::from_config(&cfg("fully-adaptive", 3), "selection").unwrap();
        assert_eq!(s.max_adaptive_options(), 2);
        assert_eq!(Selection::from_name("fully-adaptive", "selection").unwrap().max_adaptive_options(), 254);
        assert_eq!(Selection::from_name("lfu", "selection").unwrap().max_adaptive_options(), usize::MAX);
        let e = Selection::from_config(&cfg("fully-adaptive", 1), "selection").unwrap_err().to_string();
        assert!(e.contains("'selection.max_options'") && e.contains("at least 2"), "{e}");
        let e = Selection::from_config(&cfg("lfu", 3), "selection").unwrap_err().to_string();
        assert!(e.contains("'selection.max_options'") && e.contains("fully-adaptive"), "{e}");
    }

    #[test]
    fn candidates_dedupe_ports_and_cap() {
        let mut c = Candidates::new();
        assert!(c.push_unique_port(Candidate { port: 3, slot: 0, partition: 0, escape: false }));
        assert!(c.push_unique_port(Candidate { port: 3, slot: 1, partition: 0, escape: false }));
        assert_eq!(c.len(), 1);
        for p in 4..(4 + MAX_CANDIDATES as u8 - 1) {
            assert!(c.push_unique_port(Candidate { port: p, slot: 0, partition: 0, escape: false }));
        }
        assert!(!c.push_unique_port(Candidate { port: 200, slot: 0, partition: 0, escape: false }));
        assert_eq!(c.len(), MAX_CANDIDATES);
    }
}
