//! Deterministic selection: the packet takes the LFT entry of its DLID (the
//! first, and with this policy only, candidate), as every IBA switch does.

use super::{Candidates, SelectionView};

/// Always the DLID's LFT entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deterministic;

impl Deterministic {
    /// Registry name.
    pub const NAME: &'static str = "deterministic";

    /// Option 0 when it can accept the packet now, else wait.
    #[inline(always)]
    pub fn select(&self, cands: &Candidates, view: &impl SelectionView) -> Option<usize> {
        let c = cands.as_slice().first()?;
        view.can_accept(c).then_some(0)
    }
}
