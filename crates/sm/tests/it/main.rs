//! Integration tests of ibnetsim-sm, one module per behaviour.

mod dumps;
