//! The two smallest fabrics, mostly for tests and examples: one switch with a
//! host on every port, and a ring of switches.
//!
//! A ring is the 1-dimensional torus of [`super::mesh`], with its port
//! numbering: clockwise neighbour on port 1, counter-clockwise on port 2, hosts
//! from port 3; a ring of 2 switches is a single link.

use serde::{Deserialize, Serialize};

use super::{add_switches, attach_hosts, check_ports, MeshParams};
use crate::error::FabricError;
use crate::fabric::Fabric;
use crate::rate::LinkSpec;

/// Parameters of a single switch with hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SingleSwitchParams {
    /// Hosts, on switch ports 1..=hosts; the switch has exactly this many ports.
    pub hosts: u8,
    /// Every link.
    #[serde(default)]
    pub link: LinkSpec,
}

impl SingleSwitchParams {
    /// Generates the fabric: `sw0` with hosts `h0..` on ports 1.. in order.
    pub fn build(&self) -> Result<Fabric, FabricError> {
        if self.hosts == 0 {
            return Err(FabricError::param("hosts", "a single switch needs at least one host"));
        }
        let ports = check_ports("hosts", self.hosts as u32, "one port per host")?;
        let mut f = Fabric::new();
        let sws = add_switches(&mut f, 1, ports)?;
        attach_hosts(&mut f, &sws, self.hosts, 1, self.link)?;
        Ok(f)
    }
}

/// Parameters of a ring of switches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingParams {
    /// Switches in the ring, at least 2.
    pub switches: u32,
    /// Hosts on every switch, on ports 3..
    pub hosts_per_switch: u8,
    /// Every link, host links included.
    #[serde(default)]
    pub link: LinkSpec,
}

impl RingParams {
    /// Generates the fabric.
    pub fn build(&self) -> Result<Fabric, FabricError> {
        if self.switches < 2 {
            return Err(FabricError::param(
                "switches",
                format!("a ring needs at least 2 switches, got {}", self.switches),
            ));
        }
        MeshParams { dims: vec![self.switches], torus: true, hosts_per_switch: self.hosts_per_switch, link: self.link }
            .build()
            .map_err(|e| match e {
                // The mesh names its own keys; the ring spells the size `switches`.
                FabricError::InvalidParameter { key, msg } if key == "dims" => FabricError::param("switches", msg),
                other => other,
            })
    }
}

/// One switch with `hosts` hosts and the default link.
pub fn single_switch(hosts: u8) -> Result<Fabric, FabricError> {
    SingleSwitchParams { hosts, link: LinkSpec::default() }.build()
}

/// A ring of `switches` switches with one host each and the default link.
pub fn ring(switches: u32) -> Result<Fabric, FabricError> {
    RingParams { switches, hosts_per_switch: 1, link: LinkSpec::default() }.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    #[test]
    fn single_switch_has_hosts_on_every_port() {
        let f = single_switch(4).unwrap();
        assert_eq!(f.num_nodes(), 5);
        assert_eq!(f.node(NodeId(0)).num_ports, 4);
        for p in 1..=4u8 {
            let h = f.peer(NodeId(0), p).unwrap();
            assert_eq!(f.node(h.node).name, format!("h{}", p - 1));
        }
        assert!(single_switch(0).unwrap_err().to_string().starts_with("invalid parameter 'hosts'"));
    }

    #[test]
    fn ring_of_five() {
        let f = ring(5).unwrap();
        assert_eq!(f.links().len(), 10);
        for s in 0..5u32 {
            let next = f.peer(NodeId(s), 1).unwrap();
            assert_eq!((next.node, next.port), (NodeId((s + 1) % 5), 2));
            assert_eq!(f.node(f.peer(NodeId(s), 3).unwrap().node).name, format!("h{s}"));
        }
    }

    #[test]
    fn ring_of_two_is_one_link() {
        let f = ring(2).unwrap();
        assert_eq!(f.links().len(), 3);
        assert_eq!(f.peer(NodeId(0), 1).unwrap().node, NodeId(1));
        assert_eq!(f.peer(NodeId(0), 2), None);
        let e = ring(1).unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'switches'"), "{e}");
        let e = ring(60_000).unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'switches'") && e.contains("LIDs"), "{e}");
    }
}
