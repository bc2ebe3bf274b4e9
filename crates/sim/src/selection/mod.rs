//! Selection among routing options.
//!
//! The routing stage ([`crate::switch::route`]) turns a packet's DLID into a
//! fixed-capacity list of [`Candidate`]s `{out port, VL, buffer partition}`;
//! a selection policy picks one, or none ("wait and retry"), at crossbar
//! arbitration time from a read-only [`SelectionView`] of credits and buffer
//! state (paper 002 §4.3 makes the same split; BookSim's `OutputSet` and
//! CAMINOS' `RoutingNextCandidates` are the same idea). Deterministic routing is
//! the one-candidate case. Policies are an enum dispatched by `match`, each in
//! its own file with a `NAME`; [`Selection::from_name`] is the registry.

pub mod adaptive_credits;
pub mod deterministic;

use ibnetsim_fabric::PortNum;

use crate::error::SimError;

pub use adaptive_credits::AdaptiveByCredits;
pub use deterministic::Deterministic;

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
    /// Buffer partition of the next hop's VL buffer (0 = the whole buffer;
    /// escape/adaptive splits use other values).
    pub partition: u8,
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
}

/// The selection policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The LFT entry of the DLID.
    Deterministic(Deterministic),
    /// Among the LFT ports of the destination's LIDs, the most credits.
    AdaptiveByCredits(AdaptiveByCredits),
}

impl Selection {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &[Deterministic::NAME, AdaptiveByCredits::NAME];

    /// The policy called `name`; the error (for config key `key`) lists the
    /// valid names.
    pub fn from_name(name: &str, key: &str) -> Result<Self, SimError> {
        match name {
            Deterministic::NAME => Ok(Selection::Deterministic(Deterministic)),
            AdaptiveByCredits::NAME => Ok(Selection::AdaptiveByCredits(AdaptiveByCredits)),
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
        }
    }

    /// Whether the routing stage must list every LID of the destination port
    /// (all its paths) rather than only the DLID's entry.
    #[inline]
    pub fn wants_all_paths(&self) -> bool {
        matches!(self, Selection::AdaptiveByCredits(_))
    }

    /// Whether a credit update may change this policy's choice (the switch then
    /// re-arbitrates when credits arrive).
    #[inline]
    pub fn reads_credits(&self) -> bool {
        matches!(self, Selection::AdaptiveByCredits(_))
    }

    /// Index of the chosen option, or `None` to wait.
    #[inline]
    pub fn select(&mut self, cands: &Candidates, view: &impl SelectionView) -> Option<usize> {
        match self {
            Selection::Deterministic(s) => s.select(cands, view),
            Selection::AdaptiveByCredits(s) => s.select(cands, view),
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
        let e = Selection::from_name("lfu", "selection").unwrap_err().to_string();
        assert!(e.contains("'selection'") && e.contains("deterministic, adaptive-by-credits"), "{e}");
    }

    #[test]
    fn candidates_dedupe_ports_and_cap() {
        let mut c = Candidates::new();
        assert!(c.push_unique_port(Candidate { port: 3, slot: 0, partition: 0 }));
        assert!(c.push_unique_port(Candidate { port: 3, slot: 1, partition: 0 }));
        assert_eq!(c.len(), 1);
        for p in 4..(4 + MAX_CANDIDATES as u8 - 1) {
            assert!(c.push_unique_port(Candidate { port: p, slot: 0, partition: 0 }));
        }
        assert!(!c.push_unique_port(Candidate { port: 200, slot: 0, partition: 0 }));
        assert_eq!(c.len(), MAX_CANDIDATES);
    }
}
