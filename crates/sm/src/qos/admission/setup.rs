//! The connection-setup experiment of paper 001 §5.2 (Table 2, and Tables 3
//! and 4 of its appendix): how many of N requested CBR connections a network
//! accepts.
//!
//! Connections are spread evenly over the four bandwidth SLs: the next one is
//! always for the SL with the fewest established connections (ties to the
//! lowest SL), so the SLs take turns. ([`SlOrder::Cyclic`] and
//! [`SlOrder::Random`] are the alternatives we measured: one try per SL in
//! turn, or a random SL per try; both let the counts drift apart, which §5.2
//! rules out.) Each try draws a source and a different destination
//! uniformly among the CAs and a mean bandwidth uniformly (in whole bit/s)
//! in its SL's range. A refused try is a retry of the same SL;
//! after `retry_limit` refusals in a row the SL is exhausted. The paper says
//! "if after a certain number of retries it is not possible to establish more
//! connections for some service level, the establishment period ends"
//! ([`StopRule::All`], the default); [`StopRule::Level`] instead drops only
//! that SL and goes on with the others until N are established or every SL
//! is exhausted. The paper does not give the retry limit.
//!
//! The ranges are those of §5.2 except SL 2, which the text gives as
//! "between 64 Kbps and 64 Mbps" although §4.1 defines the class as above
//! 1.55 Mb/s; a 64 kb/s draw would belong to SL 1, so by default we use
//! 1.55–64 Mb/s. [`PAPER_TEXT_BANDS_BPS`] with [`SetupParams::loose_bands`]
//! draws it as printed, the connection staying on SL 2 ([`Admission::admit_as`]).
//! The lower bound of SLs 1–3 is exclusive (the bands of §4.1 are
//! "higher than" the previous limit).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ibnetsim_fabric::NodeId;

use super::control::{Admission, Connection, Decision};
use super::table::Shortfall;
use super::{sl_of, TrafficClass};
use crate::error::SmError;

/// Mean-bandwidth range (inclusive, bit/s) of each of the four SLs, §5.2.
pub const PAPER_BANDS_BPS: [(u64, u64); 4] =
    [(8_000, 64_000), (64_001, 1_550_000), (1_550_001, 64_000_000), (64_000_001, 300_000_000)];

/// §5.2's ranges as printed, SL 2 from 64 kb/s: needs [`SetupParams::loose_bands`].
pub const PAPER_TEXT_BANDS_BPS: [(u64, u64); 4] =
    [(8_000, 64_000), (64_001, 1_550_000), (64_001, 64_000_000), (64_000_001, 300_000_000)];

/// When setup stops because an SL runs out of retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopRule {
    /// The whole establishment period ends (paper 001 §5.2).
    #[default]
    All,
    /// Only that SL stops; the others go on.
    Level,
}

/// Which SL each try is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlOrder {
    /// The SL with the fewest established connections (ties to the lowest):
    /// a refused try is retried for the same SL, so the counts stay within one.
    #[default]
    Balanced,
    /// SLs in turn, one try each (try *i* is for SL *i* mod 4 among those
    /// still active): a refused SL waits for its next turn while the others
    /// go on.
    Cyclic,
    /// An SL drawn uniformly among the active ones for every try.
    Random,
}

impl SlOrder {
    /// Parses `balanced`, `cyclic` or `random`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "balanced" => Some(SlOrder::Balanced),
            "cyclic" => Some(SlOrder::Cyclic),
            "random" => Some(SlOrder::Random),
            _ => None,
        }
    }
}

/// Parameters of one setup run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupParams {
    /// N: connections to establish.
    pub target: u32,
    /// Refusals in a row after which an SL is exhausted.
    pub retry_limit: u32,
    /// DB (low table, SLs 0–3) or DBTS (high table, SLs 4–7).
    pub class: TrafficClass,
    /// Bandwidth range of each band.
    pub bands: [(u64, u64); 4],
    /// What an exhausted SL stops.
    pub stop: StopRule,
    /// Which SL each try is for.
    pub order: SlOrder,
    /// Whether a band's range may leave its SL's §4.1 class (the SL is then
    /// the band's, whatever the drawn bandwidth): needed for §5.2's literal
    /// SL 2 range of 64 kb/s–64 Mb/s.
    pub loose_bands: bool,
    /// Seed of the draws (ChaCha8).
    pub seed: u64,
}

impl SetupParams {
    /// The paper's setup: DB connections in the §5.2 ranges, stopping at the first exhausted SL.
    pub fn paper(target: u32, retry_limit: u32, seed: u64) -> Self {
        SetupParams {
            target,
            retry_limit,
            class: TrafficClass::Db,
            bands: PAPER_BANDS_BPS,
            stop: StopRule::All,
            order: SlOrder::Balanced,
            loose_bands: false,
            seed,
        }
    }
}

/// One connection the setup established, as admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Established {
    /// Source CA.
    pub src: NodeId,
    /// Destination CA.
    pub dst: NodeId,
    /// The SL it was admitted on (the band's, even when a loose band's
    /// bandwidth lies outside the SL's class).
    pub sl: u8,
    /// Mean bandwidth, bit/s.
    pub bw_bps: u64,
}

/// What a setup run did, per band (index 0..4 = band; the SL is band, or 4 + band for DBTS).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetupReport {
    /// N.
    pub target: u32,
    /// Connections established.
    pub established: [u32; 4],
    /// Connections tried (established + refused).
    pub tried: [u32; 4],
    /// Refusals for lack of slots.
    pub refused_bandwidth: [u32; 4],
    /// Refusals for lack of table entries (slots were there).
    pub refused_entries: [u32; 4],
    /// Sum of the accepted mean bandwidths, bit/s.
    pub bandwidth_bps: [u64; 4],
    /// The band that ran out of retries first, if any.
    pub exhausted: Option<u8>,
    /// The established connections in admission order: admitting them again
    /// in this order, each on its SL, with the same [`super::AdmissionConfig`]
    /// rebuilds the same port state (refused tries leave nothing behind).
    pub connections: Vec<Established>,
}

impl SetupReport {
    /// Connections established over all bands.
    pub fn total_established(&self) -> u32 {
        self.established.iter().sum()
    }

    /// Connections tried over all bands.
    pub fn total_tried(&self) -> u32 {
        self.tried.iter().sum()
    }
}

/// Runs the setup on `adm` (usually fresh); connections stay established.
pub fn run_setup(adm: &mut Admission<'_>, p: &SetupParams) -> Result<SetupReport, SmError> {
    if !p.class.reserves() {
        return Err(SmError::option("class", format!("setup establishes DB or DBTS connections, not {}", p.class.name())));
    }
    if p.retry_limit == 0 {
        return Err(SmError::option("retry_limit", "must be at least 1"));
    }
    let base = sl_of(p.class, 0);
    for (b, &(lo, hi)) in p.bands.iter().enumerate() {
        let leaves = sl_of(p.class, lo) != base + b as u8 || sl_of(p.class, hi) != base + b as u8;
        if lo > hi || lo == 0 || (leaves && !p.loose_bands) {
            return Err(SmError::option(
                "bands",
                format!("range {lo}..={hi} b/s of band {b} is empty or leaves the band (limits {:?})", super::BAND_LIMITS_BPS),
            ));
        }
    }
    let hosts: Vec<_> = adm.fabric().cas().collect();
    if hosts.len() < 2 {
        return Err(SmError::option("fabric", "connection setup needs at least two channel adapters"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut r = SetupReport { target: p.target, ..Default::default() };
    let mut active = [true; 4];
    let mut misses = [0u32; 4];
    let mut turn = 0usize;
    while r.total_established() < p.target {
        let n_active = active.iter().filter(|&&a| a).count();
        if n_active == 0 {
            break;
        }
        let b = match p.order {
            SlOrder::Balanced => {
                (0..4).filter(|&b| active[b]).min_by_key(|&b| (r.established[b], b)).expect("an active SL")
            }
            SlOrder::Cyclic => {
                let b = (turn..turn + 4).map(|t| t % 4).find(|&b| active[b]).expect("an active SL");
                turn = b + 1;
                b
            }
            SlOrder::Random => (0..4).filter(|&b| active[b]).nth(rng.random_range(0..n_active)).expect("an active SL"),
        };
        let src = hosts[rng.random_range(0..hosts.len())];
        let mut dst = hosts[rng.random_range(0..hosts.len() - 1)];
        if dst == src {
            dst = *hosts.last().expect("two hosts");
        }
        let (lo, hi) = p.bands[b];
        let bw = rng.random_range(lo..=hi);
        r.tried[b] += 1;
        match adm.admit_as(&Connection { src, dst, class: p.class, bw_bps: bw }, base + b as u8)? {
            Decision::Accepted { sl, .. } => {
                r.established[b] += 1;
                r.bandwidth_bps[b] += bw;
                r.connections.push(Established { src, dst, sl, bw_bps: bw });
                misses[b] = 0;
            }
            Decision::Rejected(rej) => {
                match rej.shortfall {
                    Shortfall::Bandwidth { .. } => r.refused_bandwidth[b] += 1,
                    Shortfall::Entries { .. } => r.refused_entries[b] += 1,
                }
                misses[b] += 1;
                if misses[b] >= p.retry_limit {
                    r.exhausted.get_or_insert(b as u8);
                    active[b] = false;
                    if p.stop == StopRule::All {
                        break;
                    }
                }
            }
        }
    }
    Ok(r)
}
