//! Link widths, speeds and encodings, and the exact serialization time they imply.
//!
//! IBA signals at a per-lane baud rate (SDR 2.5 Gbaud … NDR 106.25 Gbaud) over
//! 1, 4, 8 or 12 lanes. The data rate is baud × lanes × encoding efficiency:
//! 8b/10b up to QDR, 64b/66b from FDR on. So 1x SDR carries 2 Gb/s = 0.25 B/ns,
//! i.e. exactly 4 ns (4000 ps) per byte. Times are integer picoseconds; a
//! transfer that is not a whole number of picoseconds is rounded up.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Cable propagation delay used when none is given: 5 ns per metre.
pub const DEFAULT_PROPAGATION_PS_PER_M: u32 = 5_000;

/// Number of lanes of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum LinkWidth {
    /// One lane.
    X1,
    /// Two lanes (HDR100/NDR200 splits).
    X2,
    /// Four lanes, the common case.
    X4,
    /// Eight lanes.
    X8,
    /// Twelve lanes.
    X12,
}

impl LinkWidth {
    /// All widths, narrowest first.
    pub const ALL: [LinkWidth; 5] = [LinkWidth::X1, LinkWidth::X2, LinkWidth::X4, LinkWidth::X8, LinkWidth::X12];

    /// Lanes in the link.
    pub fn lanes(self) -> u32 {
        match self {
            LinkWidth::X1 => 1,
            LinkWidth::X2 => 2,
            LinkWidth::X4 => 4,
            LinkWidth::X8 => 8,
            LinkWidth::X12 => 12,
        }
    }

    /// The width with `lanes` lanes, if IBA defines one.
    pub fn from_lanes(lanes: u32) -> Option<Self> {
        Some(match lanes {
            1 => LinkWidth::X1,
            2 => LinkWidth::X2,
            4 => LinkWidth::X4,
            8 => LinkWidth::X8,
            12 => LinkWidth::X12,
            _ => return None,
        })
    }
}

impl fmt::Display for LinkWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x", self.lanes())
    }
}

impl FromStr for LinkWidth {
    type Err = String;
    /// Accepts `4x`, `4X` or `4`.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().trim_end_matches(['x', 'X']);
        t.parse::<u32>()
            .ok()
            .and_then(LinkWidth::from_lanes)
            .ok_or_else(|| format!("unknown link width '{s}' (expected 1x, 2x, 4x, 8x or 12x)"))
    }
}

/// Line encoding of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Encoding {
    /// 8 data bits in 10 line bits (SDR, DDR, QDR).
    B8b10b,
    /// 64 data bits in 66 line bits (FDR10 and later).
    B64b66b,
}

impl Encoding {
    /// Efficiency as the fraction (data bits, line bits).
    pub fn ratio(self) -> (u64, u64) {
        match self {
            Encoding::B8b10b => (8, 10),
            Encoding::B64b66b => (64, 66),
        }
    }
}

/// Per-lane signalling rate generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum LinkSpeed {
    /// 2.5 Gbaud.
    Sdr,
    /// 5 Gbaud.
    Ddr,
    /// 10 Gbaud.
    Qdr,
    /// 10.3125 Gbaud with 64b/66b.
    Fdr10,
    /// 14.0625 Gbaud.
    Fdr,
    /// 25.78125 Gbaud.
    Edr,
    /// 53.125 Gbaud.
    Hdr,
    /// 106.25 Gbaud.
    Ndr,
}

impl LinkSpeed {
    /// All speeds, slowest first.
    pub const ALL: [LinkSpeed; 8] = [
        LinkSpeed::Sdr,
        LinkSpeed::Ddr,
        LinkSpeed::Qdr,
        LinkSpeed::Fdr10,
        LinkSpeed::Fdr,
        LinkSpeed::Edr,
        LinkSpeed::Hdr,
        LinkSpeed::Ndr,
    ];

    /// Per-lane signalling rate in kbaud (exact integer for every generation).
    pub fn kbaud(self) -> u64 {
        match self {
            LinkSpeed::Sdr => 2_500_000,
            LinkSpeed::Ddr => 5_000_000,
            LinkSpeed::Qdr => 10_000_000,
            LinkSpeed::Fdr10 => 10_312_500,
            LinkSpeed::Fdr => 14_062_500,
            LinkSpeed::Edr => 25_781_250,
            LinkSpeed::Hdr => 53_125_000,
            LinkSpeed::Ndr => 106_250_000,
        }
    }

    /// Encoding used at this speed.
    pub fn encoding(self) -> Encoding {
        match self {
            LinkSpeed::Sdr | LinkSpeed::Ddr | LinkSpeed::Qdr => Encoding::B8b10b,
            _ => Encoding::B64b66b,
        }
    }

    /// Name as ibnetdiscover prints it (`SDR`, `QDR`, …).
    pub fn name(self) -> &'static str {
        match self {
            LinkSpeed::Sdr => "SDR",
            LinkSpeed::Ddr => "DDR",
            LinkSpeed::Qdr => "QDR",
            LinkSpeed::Fdr10 => "FDR10",
            LinkSpeed::Fdr => "FDR",
            LinkSpeed::Edr => "EDR",
            LinkSpeed::Hdr => "HDR",
            LinkSpeed::Ndr => "NDR",
        }
    }
}

impl fmt::Display for LinkSpeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LinkSpeed {
    type Err = String;
    /// Accepts the generation name (`QDR`) or the IBDM lane-rate tag (`2.5G`, `5G`, `10G`).
    fn from_str(s: &str) -> Result<Self, String> {
        let u = s.trim().to_ascii_uppercase();
        let by_name = LinkSpeed::ALL.iter().find(|sp| sp.name() == u);
        if let Some(sp) = by_name {
            return Ok(*sp);
        }
        Ok(match u.trim_end_matches('G') {
            "2.5" => LinkSpeed::Sdr,
            "5" => LinkSpeed::Ddr,
            "10" => LinkSpeed::Qdr,
            "14" => LinkSpeed::Fdr,
            "25" => LinkSpeed::Edr,
            "50" => LinkSpeed::Hdr,
            "100" => LinkSpeed::Ndr,
            _ => {
                return Err(format!(
                    "unknown link speed '{s}' (expected SDR, DDR, QDR, FDR10, FDR, EDR, HDR or NDR)"
                ))
            }
        })
    }
}

macro_rules! string_serde {
    ($t:ty) => {
        impl TryFrom<String> for $t {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                s.parse()
            }
        }
        impl From<$t> for String {
            fn from(v: $t) -> String {
                v.to_string()
            }
        }
    };
}
string_serde!(LinkWidth);
string_serde!(LinkSpeed);

/// Physical parameters of one link. In config files: `width = "4x"`,
/// `speed = "QDR"`, `length_m = 20.0`, `propagation_ps_per_m = 5000`; omitted
/// keys take the defaults of [`LinkSpec::default`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkSpec {
    /// Lanes.
    pub width: LinkWidth,
    /// Per-lane rate.
    pub speed: LinkSpeed,
    /// Cable length in metres.
    pub length_m: f64,
    /// Propagation delay per metre in picoseconds.
    pub propagation_ps_per_m: u32,
}

impl Default for LinkSpec {
    /// 1x SDR, 1 m of cable at 5 ns/m: the papers' baseline link.
    fn default() -> Self {
        LinkSpec {
            width: LinkWidth::X1,
            speed: LinkSpeed::Sdr,
            length_m: 1.0,
            propagation_ps_per_m: DEFAULT_PROPAGATION_PS_PER_M,
        }
    }
}

impl LinkSpec {
    /// A spec with the given width and speed and default cable.
    pub fn new(width: LinkWidth, speed: LinkSpeed) -> Self {
        LinkSpec { width, speed, ..LinkSpec::default() }
    }

    /// Data rate after encoding, in bits per second.
    pub fn data_rate_bps(&self) -> f64 {
        let (num, den) = self.speed.encoding().ratio();
        self.speed.kbaud() as f64 * 1e3 * self.width.lanes() as f64 * num as f64 / den as f64
    }

    /// Signalling rate (before encoding), in bits per second, as some papers quote it.
    pub fn signalling_rate_bps(&self) -> f64 {
        self.speed.kbaud() as f64 * 1e3 * self.width.lanes() as f64
    }

    /// Data rate in bytes per nanosecond.
    pub fn bytes_per_ns(&self) -> f64 {
        self.data_rate_bps() / 8e9
    }

    /// Exact time to serialize `bytes` bytes, in picoseconds, rounded up.
    ///
    /// `t = bytes · 8 · den · 10⁹ / (kbaud · lanes · num)` with the encoding
    /// ratio `num/den`; 1x SDR gives exactly 4000 ps per byte.
    pub fn serialization_ps(&self, bytes: u64) -> u64 {
        let (num, den) = self.speed.encoding().ratio();
        let numer = bytes as u128 * 8 * den as u128 * 1_000_000_000u128;
        let denom = self.speed.kbaud() as u128 * self.width.lanes() as u128 * num as u128;
        numer.div_ceil(denom) as u64
    }

    /// Propagation delay of the cable in picoseconds (rounded to nearest).
    pub fn propagation_ps(&self) -> u64 {
        (self.length_m * self.propagation_ps_per_m as f64).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_rate_tags_name_each_generation() {
        // IBDM topology files tag a link with its per-lane data rate in Gb/s.
        let tags = [
            ("2.5G", LinkSpeed::Sdr),
            ("5G", LinkSpeed::Ddr),
            ("10G", LinkSpeed::Qdr),
            ("14G", LinkSpeed::Fdr),
            ("25g", LinkSpeed::Edr),
            ("50G", LinkSpeed::Hdr),
            ("100G", LinkSpeed::Ndr),
        ];
        for (tag, speed) in tags {
            assert_eq!(tag.parse::<LinkSpeed>(), Ok(speed), "{tag}");
        }
        assert!("40G".parse::<LinkSpeed>().is_err());
    }

    #[test]
    fn signalling_rate_is_baud_times_lanes() {
        // 4x QDR: 4 lanes of 10 Gbaud; 12x EDR: 12 of 25.78125 Gbaud.
        assert_eq!(LinkSpec::new(LinkWidth::X4, LinkSpeed::Qdr).signalling_rate_bps(), 40e9);
        assert_eq!(LinkSpec::new(LinkWidth::X12, LinkSpeed::Edr).signalling_rate_bps(), 309.375e9);
    }

    #[test]
    fn sdr_1x_is_4ns_per_byte() {
        let l = LinkSpec::new(LinkWidth::X1, LinkSpeed::Sdr);
        assert_eq!(l.serialization_ps(1), 4000);
        assert_eq!(l.serialization_ps(282), 1_128_000);
        assert!((l.bytes_per_ns() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn fdr_4x_uses_64b66b() {
        let l = LinkSpec::new(LinkWidth::X4, LinkSpeed::Fdr);
        // 4 × 14.0625 Gbaud × 64/66 = 54.5454… Gb/s → 66 bytes take 66·8/54.5454 ns = 9.68 ns.
        assert_eq!(l.serialization_ps(66), 9_680);
    }

    #[test]
    fn twelve_x_sdr_rounds_up() {
        let l = LinkSpec::new(LinkWidth::X12, LinkSpeed::Sdr);
        assert_eq!(l.serialization_ps(3), 1_000);
        assert_eq!(l.serialization_ps(1), 334);
    }

    #[test]
    fn every_width_and_speed_parses_back_from_its_name() {
        for w in LinkWidth::ALL {
            assert_eq!(w.to_string().parse::<LinkWidth>().unwrap(), w);
        }
        for s in LinkSpeed::ALL {
            assert_eq!(s.name().parse::<LinkSpeed>().unwrap(), s);
        }
        assert_eq!(LinkWidth::ALL.map(|w| w.to_string()), ["1x", "2x", "4x", "8x", "12x"]);
    }

    #[test]
    fn parse_names_and_tags() {
        assert_eq!("qdr".parse::<LinkSpeed>().unwrap(), LinkSpeed::Qdr);
        assert_eq!("5G".parse::<LinkSpeed>().unwrap(), LinkSpeed::Ddr);
        assert_eq!("12X".parse::<LinkWidth>().unwrap(), LinkWidth::X12);
        assert!("3x".parse::<LinkWidth>().is_err());
        assert!("XDR".parse::<LinkSpeed>().is_err());
    }

    #[test]
    fn propagation_default_5ns_per_m() {
        let l = LinkSpec { length_m: 20.0, ..LinkSpec::default() };
        assert_eq!(l.propagation_ps(), 100_000);
    }
}
