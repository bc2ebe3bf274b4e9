//! Mechanisms: what the papers add to a plain IBA switch or HCA, each one
//! module behind named hook points.
//!
//! The switch and the HCA call [`Mechanisms`] at these points and contain no
//! mechanism-specific code beyond the calls.

pub mod selection;

use selection::Selection;

/// Every mechanism of a simulation, each off unless configured.
#[derive(Debug, Clone)]
pub(crate) struct Mechanisms {
    /// The selection policy among routing options.
    pub selection: Selection,
}
