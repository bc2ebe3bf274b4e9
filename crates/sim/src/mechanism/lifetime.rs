//! Switch lifetime limit (IBA's SwitchInfo:LifeTimeValue; paper 000's SLL
//! packet dropping): a switch discards a packet that has waited in it longer
//! than the limit since its header was routed. The check is the input-head
//! hook: it runs whenever the head of an input queue is considered for the
//! crossbar, and a head that has to wait has the switch woken just after its
//! limit, so a packet is discarded at the first arbitration after it expires
//! (counted as drop reason `lifetime`). Its buffer space is returned as for
//! any discarded packet, once it has fully arrived.

use serde::{Deserialize, Serialize};

use crate::config::ns_to_ps;
use crate::engine::Time;
use crate::error::SimError;
use crate::packet::Packet;

/// `[mechanisms.lifetime]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Longest time a packet may stay in a switch after its header is
    /// routed, in nanoseconds (> 0).
    pub switch_lifetime_ns: f64,
}

/// The limit, in picoseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lifetime {
    limit_ps: Time,
}

impl Lifetime {
    /// The mechanism for `o`; errors name `key`.
    pub fn new(o: &Options, key: &str) -> Result<Self, SimError> {
        let k = format!("{key}.switch_lifetime_ns");
        let limit_ps = ns_to_ps(&k, o.switch_lifetime_ns)?;
        if limit_ps == 0 {
            return Err(SimError::config(k, "must be > 0"));
        }
        Ok(Lifetime { limit_ps })
    }

    /// Whether head `p` (routed at `p.ready_at`) has outlived the limit at `now`.
    #[inline]
    pub fn expired(&self, p: &Packet, now: Time) -> bool {
        now > p.ready_at.saturating_add(self.limit_ps)
    }

    /// The first time at which head `p` has expired.
    #[inline]
    pub fn deadline(&self, p: &Packet) -> Time {
        p.ready_at.saturating_add(self.limit_ps) + 1
    }
}
