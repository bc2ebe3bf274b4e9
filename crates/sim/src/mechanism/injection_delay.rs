//! Injection delay: a source HCA lets its packets leave no faster than one per
//! `gap_ns` (the injection hook). This is IBA congestion control's
//! inter-packet delay (IPD) held at a fixed value; the congestion-control
//! mechanism (paper 004) will vary it per flow.
//!
//! A packet that moves from its SL send queue into the port's send buffer at
//! `t` may start on the link at `max(t, previous + gap)`, where `previous` is
//! that earliest start of the host's previous packet. The send buffer's VL
//! arbitration then waits for that time (an `OutputReady` event).

use serde::{Deserialize, Serialize};

use crate::config::ns_to_ps;
use crate::engine::Time;
use crate::error::SimError;

/// `[mechanisms.injection_delay]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Least time between the earliest starts of two packets of one host, in
    /// nanoseconds.
    pub gap_ns: f64,
}

/// Per-host pacing state.
#[derive(Debug, Clone)]
pub(crate) struct InjectionDelay {
    gap_ps: Time,
    next_start: Vec<Time>,
}

impl InjectionDelay {
    /// Pacing for `hosts` hosts; errors name `key`. A packet waiting for its
    /// start is a packet that does not move, so the gap must stay well below
    /// the deadlock watchdog's period (`watchdog_ps`).
    pub fn new(o: &Options, hosts: usize, watchdog_ps: Time, key: &str) -> Result<Self, SimError> {
        let gap_ps = ns_to_ps(&format!("{key}.gap_ns"), o.gap_ns)?;
        if gap_ps.saturating_mul(2) >= watchdog_ps {
            return Err(SimError::config(
                format!("{key}.gap_ns"),
                format!(
                    "{} ns would keep packets waiting for half the deadlock watchdog's period or more (watchdog_ns = {} ns): raise watchdog_ns",
                    o.gap_ns,
                    watchdog_ps as f64 / 1e3
                ),
            ));
        }
        Ok(InjectionDelay { gap_ps, next_start: vec![0; hosts] })
    }

    /// Earliest start of a packet of `host` that enters its send buffer `now`.
    #[inline]
    pub fn earliest_start(&mut self, host: u32, now: Time) -> Time {
        let next = &mut self.next_start[host as usize];
        let t = now.max(*next);
        *next = t + self.gap_ps;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_spaced_by_the_gap_per_host() {
        let mut d = InjectionDelay::new(&Options { gap_ns: 10.0 }, 2, 100_000_000, "k").unwrap();
        assert_eq!(d.earliest_start(0, 0), 0);
        assert_eq!(d.earliest_start(0, 0), 10_000);
        assert_eq!(d.earliest_start(0, 3_000), 20_000);
        assert_eq!(d.earliest_start(1, 3_000), 3_000, "hosts are paced apart");
        assert_eq!(d.earliest_start(0, 50_000), 50_000, "an idle host starts at once");
        let e = InjectionDelay::new(&Options { gap_ns: -1.0 }, 1, 100_000_000, "mechanisms.injection_delay").unwrap_err().to_string();
        assert!(e.contains("mechanisms.injection_delay.gap_ns"), "{e}");
        let e = InjectionDelay::new(&Options { gap_ns: 50_000.0 }, 1, 100_000_000, "k").unwrap_err().to_string();
        assert!(e.contains("k.gap_ns") && e.contains("watchdog_ns"), "{e}");
    }
}
