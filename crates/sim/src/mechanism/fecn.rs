//! Forward explicit congestion notification, the switch half of IBA
//! congestion control (IBA vol. 1 annex A10; paper 004): an output port whose
//! VL buffer holds more than `threshold` of its capacity is congested, and
//! packets the crossbar moves into it are marked FECN — one in every
//! `marking_rate` of them (IBA's Marking_Rate). The destination HCA answers a
//! marked data packet with a congestion notification (a BECN, packet kind
//! `cn`) back to the source, through the fabric on `transport.reply_sl`,
//! counted in the `transport` class. The sources' reaction (the congestion
//! control table and inter-packet delay) is paper 004's mechanism and not
//! part of this one: here notifications are counted
//! (`SimResults.transport.congestion_notifications`).
//!
//! The hook is the crossbar grant: the occupancy is that of the output buffer
//! with the packet in it, so marking needs switch output buffers. Only data
//! packets are marked (and counted towards the marking rate); replies are not.

use serde::{Deserialize, Serialize};

use crate::error::SimError;

/// `[mechanisms.fecn]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Share of an output VL buffer above which its port is congested, in (0, 1].
    pub threshold: f64,
    /// Mark one in every this many packets entering a congested buffer (≥ 1).
    pub marking_rate: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { threshold: 0.5, marking_rate: 1 }
    }
}

/// Marking state: one counter per output (port, VL).
#[derive(Debug, Clone)]
pub(crate) struct Fecn {
    threshold: f64,
    rate: u32,
    seen: Vec<u32>,
    /// Packets marked.
    pub marked: u64,
}

impl Fecn {
    /// The mechanism for `o` over `outputs` (port, VL) buffers; errors name `key`.
    pub fn new(o: &Options, outputs: usize, output_buffers: bool, key: &str) -> Result<Self, SimError> {
        if !(o.threshold > 0.0 && o.threshold <= 1.0) {
            return Err(SimError::config(format!("{key}.threshold"), format!("must be a share of the buffer in (0, 1], got {}", o.threshold)));
        }
        if o.marking_rate == 0 {
            return Err(SimError::config(format!("{key}.marking_rate"), "must be at least 1 (mark one in every N packets)"));
        }
        if !output_buffers {
            return Err(SimError::config(
                key,
                "marks packets entering a congested output buffer: set switch.output_buffer_bytes > 0",
            ));
        }
        Ok(Fecn { threshold: o.threshold, rate: o.marking_rate, seen: vec![0; outputs], marked: 0 })
    }

    /// A packet enters output buffer `out` (a per-(port, VL) index), which now
    /// holds `used` of its `cap` blocks: whether to mark it.
    #[inline]
    pub fn on_grant(&mut self, out: usize, used: u32, cap: u32) -> bool {
        if (used as f64) <= self.threshold * cap as f64 {
            return false;
        }
        let n = &mut self.seen[out];
        *n += 1;
        if *n >= self.rate {
            *n = 0;
            self.marked += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_above_the_threshold_at_the_marking_rate() {
        let mut f = Fecn::new(&Options { threshold: 0.5, marking_rate: 2 }, 2, true, "k").unwrap();
        assert!(!f.on_grant(0, 8, 16), "at the threshold is not above it");
        assert!(!f.on_grant(0, 9, 16));
        assert!(f.on_grant(0, 9, 16));
        assert!(!f.on_grant(1, 12, 16), "each buffer counts on its own");
        assert_eq!(f.marked, 1);
        assert!(Fecn::new(&Options::default(), 1, false, "mechanisms.fecn").unwrap_err().to_string().contains("output_buffer_bytes"));
        assert!(Fecn::new(&Options { threshold: 0.0, marking_rate: 1 }, 1, true, "k").is_err());
        assert!(Fecn::new(&Options { threshold: 0.5, marking_rate: 0 }, 1, true, "k").is_err());
    }
}
