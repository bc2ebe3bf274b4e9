//! Constant-bit-rate connections (paper 001 §5.2): each sends fixed-size
//! packets at exactly its mean bandwidth.
//!
//! A connection's inter-arrival time is `IAT = packet wire bits / bandwidth`
//! (the paper's packet sizes of 256 and 4096 bytes include the headers, so
//! the bandwidth is counted on the wire). Packet `k` is generated at
//! `phase + floor(k × IAT)`, computed exactly in integers (no drift over the
//! 10^5 packets a long run sends), where `phase` is drawn once per connection,
//! uniformly in `[0, IAT)`, from the ChaCha8 stream `CONN_STREAM | index` of
//! the seed, so connections do not start in lockstep and adding a connection
//! does not move the others. Like a trace, each connection is a cursor with
//! one pending event; generating a packet allocates nothing but its arena slot.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;

/// Picoseconds per second: `IAT_ps = wire_bits × PS_PER_S / bandwidth_bps`.
pub const PS_PER_S: u128 = 1_000_000_000_000;

/// ChaCha8 stream space of connection phases (open-loop sources use
/// `(class << 32) | host`, below 2^40).
const CONN_STREAM: u64 = 1 << 48;

/// One connection in the config (a `traffic.connections` entry). The hosts
/// and the bandwidth are required; the `Default` (empty names, no bandwidth)
/// only lists the fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionConfig {
    /// Sending host as the fabric names it (`node` or `node:port`).
    pub source: String,
    /// Receiving host.
    pub destination: String,
    /// Service level 0..=15 (what admission control assigned).
    #[schemars(range(max = 15))]
    #[serde(default)]
    pub sl: u8,
    /// Mean bandwidth in bit/s on the wire (headers included), > 0.
    #[schemars(range(min = 1))]
    pub bandwidth_bps: u64,
    /// Packet size on the wire, headers included (paper: 256 or 4096); the
    /// payload is this minus 26 B and `extra_header_bytes`, at most the MTU.
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
}

fn default_packet_bytes() -> u32 {
    256
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig { source: String::new(), destination: String::new(), sl: 0, bandwidth_bps: 0, packet_bytes: default_packet_bytes() }
    }
}

/// A validated connection and its cursor.
#[derive(Debug, Clone, Copy)]
pub struct Connection {
    /// Source host index.
    pub src: u32,
    /// Destination host index.
    pub dst: u32,
    /// Service level.
    pub sl: u8,
    /// Payload bytes per packet.
    pub payload: u32,
    /// Wire bits per packet.
    pub wire_bits: u64,
    /// Mean bandwidth, bit/s.
    pub bandwidth_bps: u64,
    /// Generation time of packet 0, in `[0, IAT)`.
    pub phase: Time,
    /// Index of the next packet to generate.
    pub next: u64,
}

impl Connection {
    /// A connection with index `index`, phase drawn from `seed`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(seed: u64, index: u32, src: u32, dst: u32, sl: u8, payload: u32, wire_bytes: u32, bandwidth_bps: u64) -> Self {
        let mut c = Connection { src, dst, sl, payload, wire_bits: wire_bytes as u64 * 8, bandwidth_bps, phase: 0, next: 0 };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(CONN_STREAM | index as u64);
        // floor(IAT) ≥ 0; a phase below it keeps packet 0 before packet 1.
        let iat_floor = c.offset(1);
        c.phase = if iat_floor == 0 { 0 } else { rng.random_range(0..iat_floor) };
        c
    }

    /// `floor(k × IAT)` in picoseconds.
    #[inline]
    pub fn offset(&self, k: u64) -> Time {
        (k as u128 * self.wire_bits as u128 * PS_PER_S / self.bandwidth_bps as u128) as Time
    }

    /// Generation time of the pending packet.
    #[inline]
    pub fn due(&self) -> Time {
        self.phase + self.offset(self.next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_exact_multiples_of_the_iat() {
        // 256 B at 8 kb/s: IAT = 2048 bits / 8000 b/s = 0.256 s.
        let mut c = Connection::new(1, 0, 0, 1, 0, 230, 256, 8_000);
        assert_eq!(c.offset(1), 256_000_000_000);
        assert!(c.phase < 256_000_000_000);
        let p = c.phase;
        c.next = 100;
        assert_eq!(c.due(), p + 25_600_000_000_000);
        // 282 B at 7 Gb/s: IAT = 2256 bits / 7e9 b/s = 322 285.714… ps; k × IAT
        // is floored, not accumulated, so 7 IATs are exactly 2.256 µs.
        let c = Connection::new(1, 1, 0, 1, 0, 256, 282, 7_000_000_000);
        assert_eq!(c.offset(7), 2_256_000);
        assert_eq!(c.offset(1), 322_285);
        assert_eq!(c.offset(1_000_000), 322_285_714_285);
    }

    #[test]
    fn phases_differ_per_connection_and_repeat_per_seed() {
        let a = Connection::new(5, 0, 0, 1, 0, 230, 256, 1_000_000);
        let b = Connection::new(5, 1, 0, 1, 0, 230, 256, 1_000_000);
        let a2 = Connection::new(5, 0, 0, 1, 0, 230, 256, 1_000_000);
        assert_eq!(a.phase, a2.phase);
        assert_ne!(a.phase, b.phase);
    }
}
