//! Integration tests of ibnetsim-sm, one module per behaviour.

mod cdg;
mod common;
mod dumps;
mod escape_check;
mod ftree;
mod real_fabrics;
mod lmc_paths;
mod multicast;
mod opensm_run_files;
mod paper_networks;
mod path_lengths;
mod updn_legality;
mod updn_roots;
