// The shared-data switch for the integration tests: see crates/shared_data_cfg.rs.
include!("../shared_data_cfg.rs");
