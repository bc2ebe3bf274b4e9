//! Binary hypercubes: 2^d switches, switch i cabled to switch i XOR 2^b in
//! every dimension b, H hosts on every switch. Paper 001 (§5.1) evaluates a
//! 16-switch hypercube of 8-port switches with 4 hosts each:
//! `dimension = 4, hosts_per_switch = 4`.
//!
//! Dimension b uses port b+1 at both ends, so the lowest-port-first minimal
//! routing of OpenSM's `dor` corrects the address bits from bit 0 upwards
//! (e-cube routing). Hosts follow on ports d+1..=d+H.

use serde::{Deserialize, Serialize};

use super::{add_switches, attach_hosts, check_ports, check_size};
use crate::error::FabricError;
use crate::fabric::Fabric;
use crate::rate::LinkSpec;

/// Parameters of a binary hypercube.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HypercubeParams {
    /// Dimension d ≥ 1: the cube has 2^d switches.
    pub dimension: u32,
    /// Hosts on every switch, on ports `d+1..=d+H`.
    pub hosts_per_switch: u8,
    /// Every link, host links included.
    #[serde(default)]
    pub link: LinkSpec,
}

impl HypercubeParams {
    /// A hypercube with the default link.
    pub fn new(dimension: u32, hosts_per_switch: u8) -> Self {
        HypercubeParams { dimension, hosts_per_switch, link: LinkSpec::default() }
    }

    /// Uses `link` for every link.
    pub fn link(mut self, link: LinkSpec) -> Self {
        self.link = link;
        self
    }

    /// Generates the fabric.
    pub fn build(&self) -> Result<Fabric, FabricError> {
        let d = self.dimension;
        if d == 0 {
            return Err(FabricError::param(
                "dimension",
                "a hypercube needs dimension ≥ 1 (a 0-cube is a single switch: use kind = \"single_switch\")",
            ));
        }
        if d >= 32 {
            return Err(FabricError::param("dimension", format!("2^{d} switches do not fit an IBA subnet")));
        }
        let h = self.hosts_per_switch as u32;
        let ports = check_ports("hosts_per_switch", d + h, &format!("{d} dimension ports + {h} hosts"))?;
        let switches = 1u64 << d;
        check_size("dimension", switches, switches * h as u64)?;

        let mut f = Fabric::new();
        let sws = add_switches(&mut f, switches as u32, ports)?;
        for b in 0..d {
            for i in 0..switches as usize {
                let j = i ^ (1 << b);
                if i < j {
                    f.connect(sws[i], b + 1, sws[j], b + 1, self.link)?;
                }
            }
        }
        attach_hosts(&mut f, &sws, self.hosts_per_switch, d + 1, self.link)?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    #[test]
    fn port_b_joins_switches_differing_in_bit_b() {
        let f = HypercubeParams::new(4, 4).build().unwrap();
        assert_eq!(f.switches().count(), 16);
        assert_eq!(f.cas().count(), 64);
        assert_eq!(f.links().len(), 32 + 64);
        for i in 0..16u32 {
            assert_eq!(f.node(NodeId(i)).num_ports, 8);
            for b in 0..4u8 {
                let peer = f.peer(NodeId(i), b + 1).unwrap();
                assert_eq!(peer.node, NodeId(i ^ (1 << b)), "sw{i} port {}", b + 1);
                assert_eq!(peer.port, b + 1);
            }
            for j in 0..4u8 {
                let host = f.peer(NodeId(i), 5 + j).unwrap();
                assert_eq!(f.node(host.node).name, format!("h{}", 4 * i + j as u32));
            }
        }
        f.check_connected().unwrap();
    }

    #[test]
    fn hand_checked_3_cube() {
        let f = HypercubeParams::new(3, 1).build().unwrap();
        let name = |sw: u32, port: u8| f.node(f.peer(NodeId(sw), port).unwrap().node).name.clone();
        assert_eq!([name(5, 1), name(5, 2), name(5, 3), name(5, 4)], ["sw4", "sw7", "sw1", "h5"]);
    }

    #[test]
    fn bad_dimension() {
        let e = HypercubeParams::new(0, 1).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'dimension'"), "{e}");
        let e = HypercubeParams::new(16, 0).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'dimension'") && e.contains("65536 switches"), "{e}");
        let e = HypercubeParams::new(8, 250).build().unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'hosts_per_switch'"), "{e}");
    }
}
