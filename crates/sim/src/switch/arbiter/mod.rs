//! Crossbar arbiters: which input queue is offered the crossbar first when
//! several want it (the `switch.crossbar_arbiter` key).
//!
//! * [`round_robin`] — a pointer per switch rotates over the input (port, VL
//!   slot) queues and moves past each input that is granted.
//! * [`oldest_first`] — first come, first served: inputs are offered the
//!   crossbar in the order of the generation time of their oldest packet
//!   (BookSim's age-based priority), ties in round-robin order.
//!
//! With output buffers an arbiter orders the inputs and each in turn takes
//! what it can ([`crate::switch::organisation`]); without, it decides which
//! input's request an output port hears from each VL. VL15 inputs go first
//! under every arbiter. Dispatch is a `match` on [`CrossbarArbiter`].

pub mod oldest_first;
pub mod round_robin;

use crate::error::SimError;

/// The crossbar arbiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossbarArbiter {
    /// Round robin over the input queues.
    RoundRobin,
    /// The input with the oldest packet first.
    OldestFirst,
}

impl CrossbarArbiter {
    /// Registry names, as the config spells them.
    pub const NAMES: &'static [&'static str] = &["round-robin", "oldest-first"];

    /// The arbiter called `name`; the error names `key` and lists the valid names.
    pub fn from_name(name: &str, key: &str) -> Result<Self, SimError> {
        match name {
            "round-robin" => Ok(CrossbarArbiter::RoundRobin),
            "oldest-first" => Ok(CrossbarArbiter::OldestFirst),
            _ => Err(SimError::config(key, format!("unknown crossbar arbiter '{name}' (known: {})", Self::NAMES.join(", ")))),
        }
    }

    /// Its registry name.
    pub fn name(self) -> &'static str {
        match self {
            CrossbarArbiter::RoundRobin => "round-robin",
            CrossbarArbiter::OldestFirst => "oldest-first",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CrossbarArbiter;

    #[test]
    fn names_resolve_and_unknown_names_the_key() {
        for name in CrossbarArbiter::NAMES {
            assert_eq!(CrossbarArbiter::from_name(name, "switch.crossbar_arbiter").unwrap().name(), *name);
        }
        let e = CrossbarArbiter::from_name("islip", "switch.crossbar_arbiter").unwrap_err().to_string();
        assert!(e.contains("switch.crossbar_arbiter") && e.contains("'islip'") && e.contains("round-robin, oldest-first"), "{e}");
    }
}
