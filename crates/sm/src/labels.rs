//! Labels on routing options: which of a destination's LIDs are escape
//! (deadlock-free) routes and which are adaptive ones.
//!
//! With LMC, a CA port owns `2^LMC` consecutive LIDs, `base + offset` for the
//! path-bits offset `0..2^LMC`, and every switch has one LFT entry per LID.
//! Ordinarily each LID is simply one path (multipath with LMC, or APM): the
//! switch forwards a packet on the entry of its own DLID and nothing else.
//!
//! Paper 002 (Martínez et al., "Supporting Fully Adaptive Routing in
//! InfiniBand Networks", IPDPS 2003) uses the LIDs differently. The switch
//! reads the entries of *all* of a destination's LIDs at once (an interleaved
//! LFT memory), so each LID's entry becomes one routing option for the packet.
//! The entry at the first LID (`d`, offset 0) is filled by a deadlock-free
//! escape function (up*/down*); the others by minimal, fully adaptive routing.
//! Whether a given packet may adapt is chosen by its sender through the DLID:
//! least significant bit 0 (`d`) asks for deterministic routing on the escape
//! option only, bit 1 (`d + 1`) asks for every option.
//!
//! [`PathLabels`] records that role per path-bits offset, once for the whole
//! subnet (the same offsets play the same role for every destination), so the
//! data plane knows how to use each entry. An engine that fills LFTs the
//! ordinary way leaves every offset [`RouteLabel::Primary`], which is the
//! default.
//!
//! # What the data plane does with each label
//! For a packet with DLID `base + o` arriving at a switch, where `base` is the
//! destination port's base LID:
//! - [`RouteLabel::Primary`] at `o`: the standard IBA lookup. The only option
//!   is the LFT entry of the DLID itself; the entries of the destination's other
//!   LIDs are not consulted.
//! - [`RouteLabel::Escape`] at `o`: the packet asked for deterministic routing.
//!   Its only option is the entry at `o` (in order delivery, as paper 002's
//!   "deterministic" packets). The escape option is always legal: the packet
//!   goes into the escape part of the next switch's VL buffer when the adaptive
//!   part lacks credits for it.
//! - [`RouteLabel::Adaptive`] at `o`: the packet may adapt. Its options are the
//!   entries of *every* offset labelled `Escape` or `Adaptive` of the
//!   destination. An adaptive option may be taken only when the next switch's
//!   adaptive part of the VL (after SL2VL) has credits for the whole packet; an
//!   escape option may be taken at any time. Paper 002 prefers adaptive options
//!   (minimal paths) and lets a packet return from an escape queue to an
//!   adaptive one at the next switch.
//!
//! Offsets beyond the labels given (and every offset of the default value) are
//! `Primary`.

use crate::error::SmError;
use crate::lid::{Lid, LidMap};

/// The role of one LFT entry among a destination's routing options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RouteLabel {
    /// An ordinary route: used alone, by packets addressed to this very LID.
    #[default]
    Primary,
    /// A deadlock-free escape route (up*/down* in paper 002): always legal,
    /// and the only option of a packet that asked for deterministic routing.
    Escape,
    /// A minimal adaptive route: legal only while the adaptive part of the
    /// next VL buffer has credits for the whole packet.
    Adaptive,
}

impl RouteLabel {
    /// Lower-case name (`primary`, `escape`, `adaptive`), for reports.
    pub fn name(self) -> &'static str {
        match self {
            RouteLabel::Primary => "primary",
            RouteLabel::Escape => "escape",
            RouteLabel::Adaptive => "adaptive",
        }
    }
}

/// The label of each path-bits offset of a destination's LIDs, the same for
/// every destination of the subnet. The default labels every offset
/// [`RouteLabel::Primary`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PathLabels {
    /// Label of offset `i`; offsets beyond are `Primary`. Empty by default.
    labels: Vec<RouteLabel>,
}

impl PathLabels {
    /// Every offset [`RouteLabel::Primary`] (the same as `default()`).
    pub fn primary() -> Self {
        PathLabels::default()
    }

    /// Labels for offsets `0..labels.len()`.
    ///
    /// The length must be a power of two up to 128 (`2^LMC` for LMC 0..=7),
    /// and a table with an `Adaptive` offset must have an `Escape` one too:
    /// adaptive routing without an escape option is not deadlock-free.
    pub fn new(labels: Vec<RouteLabel>) -> Result<Self, SmError> {
        let n = labels.len();
        if n == 0 || n > 128 || !n.is_power_of_two() {
            return Err(SmError::option(
                "path labels",
                format!("{n} labels given; one per LID of a port is needed, 2^LMC = 1, 2, 4, … 128"),
            ));
        }
        let has = |l: RouteLabel| labels.contains(&l);
        if has(RouteLabel::Adaptive) && !has(RouteLabel::Escape) {
            return Err(SmError::option(
                "path labels",
                "adaptive routing options need an escape option among the same LIDs (deadlock freedom)",
            ));
        }
        Ok(PathLabels { labels })
    }

    /// Paper 002's layout for `2^lmc` LIDs per port: offset 0 is the escape
    /// option, every other offset an adaptive one. With LMC 0 there is a single
    /// offset, labelled `Escape` (deterministic routing only).
    pub fn escape_first(lmc: u8) -> Self {
        let n = 1usize << lmc.min(7);
        let labels = (0..n).map(|o| if o == 0 { RouteLabel::Escape } else { RouteLabel::Adaptive }).collect();
        PathLabels { labels }
    }

    /// The label of path-bits offset `offset`.
    #[inline]
    pub fn get(&self, offset: u8) -> RouteLabel {
        self.labels.get(offset as usize).copied().unwrap_or_default()
    }

    /// The label of the LFT entry of `dlid`: its offset from the base LID of
    /// the port that owns it. `None` when no port owns `dlid`. A switch's LID
    /// has offset 0.
    pub fn of_lid(&self, lids: &LidMap, dlid: Lid) -> Option<RouteLabel> {
        let owner = lids.owner(dlid)?;
        Some(self.get((dlid - owner.base) as u8))
    }

    /// Labels given explicitly, by offset (empty for the default).
    pub fn as_slice(&self) -> &[RouteLabel] {
        &self.labels
    }

    /// Whether every offset is `Primary`: ordinary one-entry-per-packet routing.
    pub fn is_primary(&self) -> bool {
        self.labels.iter().all(|&l| l == RouteLabel::Primary)
    }

    /// Offsets whose entries are options of a packet addressed to offset
    /// `offset`, in ascending order: the offset itself for `Primary` and
    /// `Escape`, and every `Escape` and `Adaptive` offset for `Adaptive`.
    pub fn options(&self, offset: u8) -> Vec<u8> {
        match self.get(offset) {
            RouteLabel::Primary | RouteLabel::Escape => vec![offset],
            RouteLabel::Adaptive => (0..self.labels.len() as u8)
                .filter(|&o| matches!(self.get(o), RouteLabel::Escape | RouteLabel::Adaptive))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::{Fabric, LinkSpec};

    #[test]
    fn default_is_primary_everywhere() {
        let l = PathLabels::default();
        assert!(l.is_primary());
        assert_eq!(l, PathLabels::primary());
        for o in [0u8, 1, 5, 127, 255] {
            assert_eq!(l.get(o), RouteLabel::Primary);
            assert_eq!(l.options(o), vec![o]);
        }
        assert!(l.as_slice().is_empty());
    }

    #[test]
    fn escape_first_follows_paper_002() {
        let l = PathLabels::escape_first(1);
        assert_eq!(l.as_slice(), [RouteLabel::Escape, RouteLabel::Adaptive]);
        assert!(!l.is_primary());
        // DLID d: deterministic, escape only; d + 1: both options.
        assert_eq!(l.options(0), vec![0]);
        assert_eq!(l.options(1), vec![0, 1]);
        let l2 = PathLabels::escape_first(2);
        assert_eq!(l2.get(3), RouteLabel::Adaptive);
        assert_eq!(l2.options(2), vec![0, 1, 2, 3]);
        assert_eq!(l2.get(4), RouteLabel::Primary);
        assert_eq!(PathLabels::escape_first(0).as_slice(), [RouteLabel::Escape]);
    }

    #[test]
    fn new_validates_length_and_escape() {
        use RouteLabel::*;
        assert!(PathLabels::new(vec![Escape, Adaptive, Adaptive, Adaptive]).is_ok());
        for bad in [vec![], vec![Escape, Adaptive, Adaptive], vec![Primary; 256]] {
            let n = bad.len();
            let err = PathLabels::new(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("{n} labels given")), "{err}");
        }
        let err = PathLabels::new(vec![Adaptive, Adaptive]).unwrap_err().to_string();
        assert!(err.contains("need an escape option"), "{err}");
        let mixed = PathLabels::new(vec![Primary, Escape]).unwrap();
        assert_eq!(mixed.options(0), vec![0]);
        assert_eq!(mixed.options(1), vec![1]);
    }

    #[test]
    fn of_lid_uses_the_owner_base() {
        let mut f = Fabric::new();
        let s = f.add_switch("s", 4).unwrap();
        let h = f.add_hca("h", 1).unwrap();
        f.connect(s, 1, h, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 1).unwrap();
        // h owns 2..=3, s owns 4.
        let l = PathLabels::escape_first(1);
        assert_eq!(l.of_lid(&lids, 2), Some(RouteLabel::Escape));
        assert_eq!(l.of_lid(&lids, 3), Some(RouteLabel::Adaptive));
        assert_eq!(l.of_lid(&lids, 4), Some(RouteLabel::Escape));
        assert_eq!(l.of_lid(&lids, 1), None);
        assert_eq!(RouteLabel::Adaptive.name(), "adaptive");
    }
}
