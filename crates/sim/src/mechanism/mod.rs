//! Mechanisms: what the papers add to a plain IBA switch or HCA, each one
//! module with an `Options` struct, off by default, behind named hook points.
//!
//! The switch and the HCA call [`Mechanisms`] at these points and contain no
//! mechanism-specific code beyond the calls:
//!
//! | hook | called by | when | mechanisms |
//! |---|---|---|---|
//! | routing | switch (`switch/route.rs`, `switch/crossbar.rs`) | a packet's routing options are listed and one is chosen | [`selection`] |
//! | injection | HCA (`hca/mod.rs`, `hca_fill`) | a packet leaves its SL send queue for the port | [`injection_delay`] |
//! | delivery | HCA (`hca/mod.rs`, `on_deliver`) | a packet has been consumed at its destination | the transport layer (`hca/transport.rs`) |
//!
//! Dispatch is static (a `match` or an `Option` check per call), never a
//! trait object per packet. To add a mechanism: see `crates/sim/README.md`.

pub mod injection_delay;
pub mod selection;

use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::error::SimError;
use injection_delay::InjectionDelay;
use selection::Selection;

/// The `[mechanisms]` table: one optional table per mechanism; an absent
/// table leaves the mechanism off. (The selection policy is the top-level
/// `selection` key.)
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MechanismsConfig {
    /// Fixed inter-packet delay at every source ([`injection_delay`]).
    pub injection_delay: Option<injection_delay::Options>,
}

/// Every mechanism of a simulation, each off unless configured.
#[derive(Debug, Clone)]
pub(crate) struct Mechanisms {
    /// The selection policy among routing options (routing hook).
    pub selection: Selection,
    /// Source pacing (injection hook).
    pub injection_delay: Option<InjectionDelay>,
}

impl Mechanisms {
    /// The mechanisms `cfg` switches on, for `hosts` hosts.
    pub fn build(selection: Selection, cfg: &MechanismsConfig, hosts: usize) -> Result<Self, SimError> {
        let injection_delay = match &cfg.injection_delay {
            Some(o) => Some(InjectionDelay::new(o, hosts, "mechanisms.injection_delay")?),
            None => None,
        };
        Ok(Mechanisms { selection, injection_delay })
    }

    /// Injection hook: the earliest start of a packet of `host` that enters
    /// its send buffer `now`.
    #[inline]
    pub fn on_inject(&mut self, host: u32, now: Time) -> Time {
        match &mut self.injection_delay {
            Some(d) => d.earliest_start(host, now),
            None => now,
        }
    }
}
