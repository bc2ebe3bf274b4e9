//! Time series per link and VL (`series_interval_ns`): every interval, each
//! cabled port's utilization per VL over the interval just ended, and the
//! occupancy of its input and output buffers per VL at the interval's end.
//!
//! Off by default; when off nothing is kept and the hot path pays one
//! branch per transmission. Samples are taken by the run loop's periodic
//! work, which sees the state before the first event at or after each
//! interval's end, so they do not depend on how a run is sliced.
//!
//! Utilization counts each transmission's time inside the interval: a
//! transmission's whole serialization time is added when it starts, and the
//! part still to come at the interval's end (one transmission per port at
//! most) is taken off and left to the next interval.

use serde::Serialize;

use crate::engine::Time;

/// The series being collected.
#[derive(Debug, Clone)]
pub struct Series {
    /// End of the interval being collected.
    pub next: Time,
    /// Serialization time started per (port, VL slot), since time 0.
    pub started: Vec<u64>,
    /// Transmission time per (port, VL slot) before the previous sample's time.
    pub used_before: Vec<u64>,
    /// Samples so far, flat: one row per (sample, recorded port, slot).
    pub rows: SeriesRows,
}

/// The samples, column by column (results' `series`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SeriesRows {
    /// Interval between samples, in picoseconds.
    pub interval_ps: u64,
    /// End of each row's interval, in picoseconds.
    pub time_ps: Vec<u64>,
    /// Node name of the port.
    pub node: Vec<u32>,
    /// Port number.
    pub port: Vec<u8>,
    /// VL (15 for the management VL).
    pub vl: Vec<u8>,
    /// Fraction of the interval the port's transmitter sent on this VL.
    pub utilization: Vec<f64>,
    /// Bytes of the packets waiting in the port's input buffer of this VL at
    /// the interval's end, arrived or arriving, not yet granted the crossbar
    /// (whole 64-byte credits; at a CA, not yet consumed).
    pub input_bytes: Vec<u32>,
    /// Bytes held in its output (send) buffer of this VL: packets granted
    /// the crossbar (or moved from the SL queues) whose last byte has not
    /// left yet (credits).
    pub output_bytes: Vec<u32>,
    /// Node names, indexed by `node`.
    pub node_names: Vec<String>,
}

impl Series {
    /// A series sampled every `interval` ps over `port_slots` (port, slot) pairs.
    pub fn new(interval: Time, port_slots: usize, node_names: Vec<String>) -> Self {
        Series {
            next: interval,
            started: vec![0; port_slots],
            used_before: vec![0; port_slots],
            rows: SeriesRows { interval_ps: interval, node_names, ..SeriesRows::default() },
        }
    }
}

impl crate::sim::Simulation {
    /// Takes the samples of every interval that ended by now.
    pub(crate) fn sample_series(&mut self) {
        let Some(mut s) = self.metrics.series.take() else { return };
        while s.next <= self.now {
            let at = s.next;
            for (gp, pm) in self.ports.models().enumerate() {
                if pm.peer == crate::sim::NONE {
                    continue;
                }
                let tx = self.ports.tx(gp as u32);
                for slot in 0..self.layout.nvl as u8 {
                    let i = self.layout.pv(gp as u32, slot);
                    // The part of a transmission on this slot still to come after `at`.
                    let ahead = if tx.busy && tx.sending_slot == slot && tx.busy_until > at { tx.busy_until - at } else { 0 };
                    let used = s.started[i] - ahead;
                    let in_blocks: u32 = (0..self.layout.parts as u8).map(|part| self.ports.inq_at(self.layout.pq(gp as u32, self.layout.q(slot, part))).blocks).sum();
                    let r = &mut s.rows;
                    r.time_ps.push(at);
                    r.node.push(self.ports.node[gp]);
                    r.port.push(pm.port);
                    r.vl.push(self.layout.vl_of_slot(slot));
                    r.utilization.push((used - s.used_before[i]) as f64 / r.interval_ps as f64);
                    r.input_bytes.push(in_blocks * crate::credits::CREDIT_BYTES);
                    r.output_bytes.push(self.ports.out_at(i).used * crate::credits::CREDIT_BYTES);
                    s.used_before[i] = used;
                }
            }
            s.next += s.rows.interval_ps;
        }
        self.metrics.series = Some(s);
    }
}
