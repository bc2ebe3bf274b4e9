//! n-dimensional meshes and tori of switches with H hosts on every switch:
//! the regular networks of paper 001 (§5.1, a 16-switch mesh of 8-port
//! switches with 4 hosts: `dims = [4, 4], hosts_per_switch = 4`), paper 003
//! (§4, a 4×4 torus with 4 hosts, and 8 workstations per switch for the I/O
//! traces) and paper 004 (§5.1–5.2, a 64-node 2D torus and a 32-node mesh).
//!
//! Port numbering is the point of this module. OpenSM's `dor` engine is
//! minhop choosing the lowest-numbered port among the minimal ones, so the
//! order in which dimensions are corrected comes from the port order. The
//! link towards the "+" neighbour in dimension d (coordinate x_d + 1) is on
//! port 2d+1 and the link towards the "−" neighbour on port 2d+2; hosts follow
//! on ports 2D+1..=2D+H for D dimensions. A mesh leaves the outward ports of
//! its edge switches empty; a torus closes each dimension into a ring.
//!
//! A torus dimension of size 2 would cable the same two switches twice, "+"
//! and "−". IBA allows parallel links, but then a dimension of size 2 would
//! have two minimal ports where every other dimension has one; we cable one
//! link (switch with x_d = 0, port 2d+1, to x_d = 1, port 2d+2) and leave the
//! wrap-around ports empty, so such a dimension looks the same in a mesh and a
//! torus. A dimension of size 1 has no neighbours and is an error.
//!
//! Switch `swI` has coordinates x with I = x_0 + d_0·(x_1 + d_1·(x_2 + …)):
//! dimension 0 varies fastest.

use serde::{Deserialize, Serialize};

use super::{add_switches, attach_hosts, check_ports, check_size, MAX_UNICAST_LIDS};
use crate::error::FabricError;
use crate::fabric::Fabric;
use crate::rate::LinkSpec;

/// Parameters of a mesh or torus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshParams {
    /// Switches along each dimension, each at least 2: `[4, 4]` is a 4×4 mesh
    /// of 16 switches.
    pub dims: Vec<u32>,
    /// Close every dimension into a ring (wrap-around links); default false.
    #[serde(default)]
    pub torus: bool,
    /// Hosts on every switch, on ports `2·dims.len()+1..`.
    pub hosts_per_switch: u8,
    /// Every link, host links included.
    #[serde(default)]
    pub link: LinkSpec,
}

impl MeshParams {
    /// A mesh (`torus = false`) or torus with the default link.
    pub fn new(dims: &[u32], torus: bool, hosts_per_switch: u8) -> Self {
        MeshParams { dims: dims.to_vec(), torus, hosts_per_switch, link: LinkSpec::default() }
    }

    /// Uses `link` for every link.
    pub fn link(mut self, link: LinkSpec) -> Self {
        self.link = link;
        self
    }

    /// Number of switches, after checking `dims`.
    fn switch_count(&self) -> Result<u64, FabricError> {
        if self.dims.is_empty() {
            return Err(FabricError::param("dims", "give at least one dimension, e.g. dims = [4, 4]"));
        }
        let mut count: u64 = 1;
        for (d, &size) in self.dims.iter().enumerate() {
            if size < 2 {
                return Err(FabricError::param(
                    "dims",
                    format!(
                        "dims[{d}] = {size}: every dimension needs at least 2 switches (drop dimensions of size 1)"
                    ),
                ));
            }
            count = count.saturating_mul(size as u64).min(MAX_UNICAST_LIDS + 1);
        }
        Ok(count)
    }

    /// Generates the fabric.
    pub fn build(&self) -> Result<Fabric, FabricError> {
        let switches = self.switch_count()?;
        let dim_ports = 2 * self.dims.len() as u32;
        let h = self.hosts_per_switch as u32;
        check_ports("dims", dim_ports, &format!("2 per dimension × {}", self.dims.len()))?;
        let ports =
            check_ports("hosts_per_switch", dim_ports + h, &format!("{dim_ports} dimension ports + {h} hosts"))?;
        check_size("dims", switches, switches * h as u64)?;

        let mut f = Fabric::new();
        let sws = add_switches(&mut f, switches as u32, ports)?;
        let mut stride = 1usize;
        for (d, &size) in self.dims.iter().enumerate() {
            let size = size as usize;
            let (plus, minus) = (2 * d as u32 + 1, 2 * d as u32 + 2);
            for (i, &sw) in sws.iter().enumerate() {
                let x = (i / stride) % size;
                if x + 1 < size {
                    f.connect(sw, plus, sws[i + stride], minus, self.link)?;
                } else if self.torus && size > 2 {
                    f.connect(sw, plus, sws[i - x * stride], minus, self.link)?;
                }
            }
            stride *= size;
        }
        attach_hosts(&mut f, &sws, self.hosts_per_switch, dim_ports + 1, self.link)?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{LinkEnd, NodeId};

    #[test]
    fn every_host_counts_against_the_unicast_lids() {
        // 100 × 100 switches with 4 hosts each: 10 000 + 40 000 = 50 000 LIDs,
        // more than the 49 151 of a subnet.
        let e = MeshParams::new(&[100, 100], false, 4).build().expect_err("too many LIDs").to_string();
        assert!(e.contains("10000 switches and 40000 hosts = 50000 LIDs"), "{e}");
    }

    fn peer(f: &Fabric, sw: u32, port: u8) -> Option<(String, u8)> {
        f.peer(NodeId(sw), port).map(|LinkEnd { node, port }| (f.node(node).name.clone(), port))
    }

    fn at(name: &str, port: u8) -> Option<(String, u8)> {
        Some((name.to_string(), port))
    }

    #[test]
    fn mesh_3x3_neighbour_ports() {
        // sw0 sw1 sw2 / sw3 sw4 sw5 / sw6 sw7 sw8, x along a row, y down the rows.
        let f = MeshParams::new(&[3, 3], false, 1).build().unwrap();
        assert_eq!(f.switches().count(), 9);
        assert_eq!(f.links().len(), 12 + 9);
        assert_eq!(peer(&f, 4, 1), at("sw5", 2));
        assert_eq!(peer(&f, 4, 2), at("sw3", 1));
        assert_eq!(peer(&f, 4, 3), at("sw7", 4));
        assert_eq!(peer(&f, 4, 4), at("sw1", 3));
        assert_eq!(peer(&f, 4, 5), at("h4", 1));
        // Corner sw0: only + ports; corner sw8: only − ports.
        assert_eq!(peer(&f, 0, 1), at("sw1", 2));
        assert_eq!(peer(&f, 0, 2), None);
        assert_eq!(peer(&f, 0, 3), at("sw3", 4));
        assert_eq!(peer(&f, 0, 4), None);
        assert_eq!(peer(&f, 8, 1), None);
        assert_eq!(peer(&f, 8, 2), at("sw7", 1));
        assert_eq!(peer(&f, 8, 3), None);
        assert_eq!(peer(&f, 8, 4), at("sw5", 3));
        assert_eq!(f.node(NodeId(8)).num_ports, 5);
    }

    #[test]
    fn torus_2x2_has_one_link_per_pair() {
        let f = MeshParams::new(&[2, 2], true, 2).build().unwrap();
        let switch_links = f.links().iter().filter(|l| l.ends.iter().all(|e| f.node(e.node).kind.is_switch()));
        assert_eq!(switch_links.count(), 4);
        assert_eq!(peer(&f, 0, 1), at("sw1", 2));
        assert_eq!(peer(&f, 0, 2), None);
        assert_eq!(peer(&f, 1, 1), None);
        assert_eq!(peer(&f, 0, 3), at("sw2", 4));
        assert_eq!(peer(&f, 3, 2), at("sw2", 1));
        assert_eq!(peer(&f, 3, 4), at("sw1", 3));
        assert_eq!(peer(&f, 3, 5), at("h6", 1));
        assert_eq!(peer(&f, 3, 6), at("h7", 1));
        f.check_connected().unwrap();
    }

    #[test]
    fn torus_wraps_plus_to_minus() {
        let f = MeshParams::new(&[3, 4], true, 0).build().unwrap();
        assert_eq!(f.links().len(), 24);
        // sw2 = (2,0): + in x wraps to (0,0); sw9 = (0,3): + in y wraps to (0,0).
        assert_eq!(peer(&f, 2, 1), at("sw0", 2));
        assert_eq!(peer(&f, 9, 3), at("sw0", 4));
        assert_eq!(peer(&f, 0, 4), at("sw9", 3));
        for s in 0..12 {
            assert_eq!(f.node(NodeId(s)).connected_ports().count(), 4, "sw{s}");
        }
    }

    #[test]
    fn three_dimensions() {
        let f = MeshParams::new(&[4, 4, 4], true, 1).build().unwrap();
        assert_eq!(f.switches().count(), 64);
        assert_eq!(f.links().len(), 64 * 3 + 64);
        // sw21 = (1,1,1); + in z is (1,1,2) = sw37 on ports 5 ↔ 6.
        assert_eq!(peer(&f, 21, 5), at("sw37", 6));
        assert_eq!(peer(&f, 21, 7), at("h21", 1));
        let m = MeshParams::new(&[4, 4, 4], false, 1).build().unwrap();
        assert_eq!(m.links().len(), 3 * 16 * 3 + 64);
    }

    #[test]
    fn bad_dims_are_errors() {
        let e = MeshParams::new(&[4, 1], false, 1).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'dims'") && e.contains("dims[1] = 1"), "{e}");
        let e = MeshParams::new(&[], true, 1).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'dims'"), "{e}");
        let e = MeshParams::new(&[300, 300], false, 1).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'dims'") && e.contains("LIDs"), "{e}");
        let e = MeshParams::new(&[4, 4], false, 251).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'hosts_per_switch'"), "{e}");
        let e = MeshParams::new(&[2; 128], false, 0).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'dims'") && e.contains("256 ports"), "{e}");
    }
}
