//! Locating the shared test data (`shared/data` beside the repository).

use std::path::{Path, PathBuf};

/// The data folder, found through `IBNETSIM_SHARED_DATA` or beside the
/// repository. `None` (skip) when missing, except under `CI=true`, where a
/// missing folder fails the test.
pub fn data_dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = match std::env::var_os("IBNETSIM_SHARED_DATA") {
        Some(d) => Some(PathBuf::from(d)).filter(|p| p.is_dir()),
        // Beside the repository (CI), or beside a worktree's parent.
        None => ["../shared/data", "../../shared/data"].iter().map(|r| root.join(r)).find(|p| p.is_dir()),
    };
    if found.is_none() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "shared/data is missing under CI=true");
        eprintln!("shared/data not found: skipping");
    }
    found
}
