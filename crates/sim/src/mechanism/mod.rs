//! Mechanisms: what the papers add to a plain IBA switch or HCA, each one
//! module with an `Options` struct, off by default, behind named hook points.
//!
//! The switch and the HCA call [`Mechanisms`] at these points and contain no
//! mechanism-specific code beyond the calls:
//!
//! | hook | called by | when | mechanisms |
//! |---|---|---|---|
//! | routing | switch (`switch/route.rs`, `switch/crossbar.rs`) | a packet's routing options are listed and one is chosen | [`selection`] |
//! | input head | switch (`switch/crossbar.rs`, `eligible_head`) | the head of an input queue is considered for the crossbar | [`lifetime`] |
//! | crossbar grant | switch (`switch/crossbar.rs`, `grant_buffered`) | the crossbar moves a packet into an output buffer | [`fecn`] (marking) |
//! | injection | HCA (`hca/mod.rs`, `hca_fill`) | a packet leaves its SL send queue for the port | [`injection_delay`] |
//! | delivery | HCA (`hca/mod.rs`, `on_deliver`) | a packet has been consumed at its destination | the transport layer (`hca/transport.rs`) |
//!
//! Dispatch is static (a `match` or an `Option` check per call), never a
//! trait object per packet. To add a mechanism: see `crates/sim/README.md`.

pub mod fecn;
pub mod injection_delay;
pub mod lifetime;
pub mod selection;

use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::error::SimError;
use crate::metrics::DropReason;
use crate::packet::Packet;
use fecn::Fecn;
use injection_delay::InjectionDelay;
use lifetime::Lifetime;
use selection::Selection;

/// The `[mechanisms]` table: one optional table per mechanism; an absent
/// table leaves the mechanism off. (The selection policy is the top-level
/// `selection` key.)
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MechanismsConfig {
    /// Fixed inter-packet delay at every source ([`injection_delay`]).
    pub injection_delay: Option<injection_delay::Options>,
    /// Switch lifetime limit ([`lifetime`]).
    pub lifetime: Option<lifetime::Options>,
    /// FECN marking at congested output buffers ([`fecn`]).
    pub fecn: Option<fecn::Options>,
}

/// Every mechanism of a simulation, each off unless configured.
#[derive(Debug, Clone)]
pub(crate) struct Mechanisms {
    /// The selection policy among routing options (routing hook).
    pub selection: Selection,
    /// Source pacing (injection hook).
    pub injection_delay: Option<InjectionDelay>,
    /// Switch lifetime limit (input-head hook).
    pub lifetime: Option<Lifetime>,
    /// FECN marking (crossbar-grant hook).
    pub fecn: Option<Fecn>,
}

impl Mechanisms {
    /// The mechanisms `cfg` switches on, for `hosts` hosts and `outputs`
    /// output (port, VL) buffers (`output_buffers`: switches have them),
    /// under a deadlock watchdog of `watchdog_ps`.
    pub fn build(
        selection: Selection,
        cfg: &MechanismsConfig,
        hosts: usize,
        outputs: usize,
        output_buffers: bool,
        watchdog_ps: Time,
    ) -> Result<Self, SimError> {
        let injection_delay = match &cfg.injection_delay {
            Some(o) => Some(InjectionDelay::new(o, hosts, watchdog_ps, "mechanisms.injection_delay")?),
            None => None,
        };
        let lifetime = match &cfg.lifetime {
            Some(o) => Some(Lifetime::new(o, "mechanisms.lifetime")?),
            None => None,
        };
        let fecn = match &cfg.fecn {
            Some(o) => Some(Fecn::new(o, outputs, output_buffers, "mechanisms.fecn")?),
            None => None,
        };
        Ok(Mechanisms { selection, injection_delay, lifetime, fecn })
    }

    /// Crossbar-grant hook: a packet enters output buffer `out`, which now
    /// holds `used` of `cap` blocks; whether it is to be marked FECN.
    #[inline]
    pub fn on_grant(&mut self, out: usize, used: u32, cap: u32) -> bool {
        match &mut self.fecn {
            Some(f) => f.on_grant(out, used, cap),
            None => false,
        }
    }

    /// Input-head hook: why the routed head `p` of a switch input queue must
    /// be discarded now, if it must.
    #[inline]
    pub fn at_input_head(&self, p: &Packet, now: Time) -> Option<DropReason> {
        match &self.lifetime {
            Some(l) if l.expired(p, now) => Some(DropReason::Lifetime),
            _ => None,
        }
    }

    /// When the input-head hook would discard head `p` if it is still waiting
    /// (the switch is woken then), or `None`.
    #[inline]
    pub fn head_deadline(&self, p: &Packet) -> Option<Time> {
        self.lifetime.as_ref().map(|l| l.deadline(p))
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
