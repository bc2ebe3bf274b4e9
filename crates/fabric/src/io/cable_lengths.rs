//! Per-cable lengths for a fabric read from a file: no topology format
//! carries cable lengths, so a fabric read from one has them all at one
//! length (1 m, or `cable_length_m`); this file gives some cables their own.
//!
//! ```text
//! # node   port  metres
//! sw-spine-1  3  20
//! 0x0002c90300001234  7  2.5   # a node by GUID
//! ```
//!
//! Each line names one end of a cable (the node by name or GUID, and its
//! port) and its length in metres (finite, 0 or more). Errors name the file
//! and line: an unknown node, a port without a cable, a bad number, or a
//! cable given twice.

use std::path::Path;

use crate::error::{FabricError, Location};
use crate::fabric::Fabric;

/// Sets the lengths `file` gives.
pub fn apply(fabric: &mut Fabric, file: &Path) -> Result<(), FabricError> {
    let text = super::read_text(file)?;
    let mut seen = std::collections::HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let err = |msg: String| FabricError::parse(Location::new(Some(file.to_path_buf()), no), msg);
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [node, port, length] = fields[..] else {
            return Err(err(format!("expected `NODE PORT LENGTH_M`, got {} fields", fields.len())));
        };
        let n = fabric.resolve(node).map_err(|e| err(e.to_string()))?;
        let port: u8 = port.parse().map_err(|_| err(format!("port '{port}' is not a port number")))?;
        let Some(link) = fabric.link_at(n, port) else {
            return Err(err(format!("{node} port {port} has no cable")));
        };
        let length: f64 = length.parse().map_err(|_| err(format!("length '{length}' is not a number of metres")))?;
        if let Some(prev) = seen.insert(link, no) {
            return Err(err(format!("this cable's length is already given at line {prev}")));
        }
        fabric.set_cable_length(link, length).map_err(err)?;
    }
    Ok(())
}
