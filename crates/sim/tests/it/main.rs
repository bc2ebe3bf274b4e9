//! Integration tests of the data plane: one binary, one module per behaviour.

mod common;

mod adaptive;
mod connections;
mod conservation;
mod crossbar;
mod deadlock;
mod event_counts;
mod fecn;
mod flow_control;
mod fully_adaptive;
mod determinism;
mod lfu;
mod lifetime;
mod md1;
mod multicast;
mod nue;
mod partitions;
mod path_sl;
mod series;
mod sizes;
mod source_queues;
mod switch_organisations;
mod traces;
mod transport;
mod validation;
mod vl15_and_hca;
mod vlarb_share;
mod zero_load;
mod warmup;
