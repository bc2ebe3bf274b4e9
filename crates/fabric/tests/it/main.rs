//! Integration tests of ibnetsim-fabric, one module per behaviour.

mod gen;
