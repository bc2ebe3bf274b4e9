//! Crossbar arbiters: which input queue is offered the crossbar first when
//! several want it (the `switch.crossbar_arbiter` key).
//!
//! * [`round_robin`] — a pointer per switch rotates over the input (port, VL
//!   slot) queues and moves past each input that is granted.
//! * [`oldest_first`] — first come, first served: inputs are offered the
//!   crossbar in the order of the generation time of their oldest packet
//!   (BookSim's age-based priority), ties in round-robin order.
//! * [`islip`] — iSLIP: rounds of request–grant–accept between crossbar
//!   inputs and outputs with a rotating pointer at each, until the match is
//!   maximal (output buffers and FIFO inputs).
//!
//! With output buffers an arbiter orders the inputs and each in turn takes
//! what it can ([`crate::switch::organisation`]); without, it decides which
//! input's request an output port hears from each VL. VL15 inputs go first
//! under every arbiter. Dispatch is a `match` on [`CrossbarArbiter`].

pub mod islip;
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
    /// iSLIP matching of crossbar inputs to outputs.
    Islip,
}

impl CrossbarArbiter {
    /// Registry names, as the config spells them.
    pub const NAMES: &'static [&'static str] = &["round-robin", "oldest-first", "islip"];

    /// The arbiter called `name`; the error names `key` and lists the valid names.
    pub fn from_name(name: &str, key: &str) -> Result<Self, SimError> {
        match name {
            "round-robin" => Ok(CrossbarArbiter::RoundRobin),
            "oldest-first" => Ok(CrossbarArbiter::OldestFirst),
            "islip" => Ok(CrossbarArbiter::Islip),
            _ => Err(SimError::config(key, format!("unknown crossbar arbiter '{name}' (known: {})", Self::NAMES.join(", ")))),
        }
    }

    /// Its registry name.
    pub fn name(self) -> &'static str {
        match self {
            CrossbarArbiter::RoundRobin => "round-robin",
            CrossbarArbiter::OldestFirst => "oldest-first",
            CrossbarArbiter::Islip => "islip",
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
        let e = CrossbarArbiter::from_name("pim", "switch.crossbar_arbiter").unwrap_err().to_string();
        assert!(e.contains("switch.crossbar_arbiter") && e.contains("'pim'") && e.contains("round-robin, oldest-first, islip"), "{e}");
    }
}
