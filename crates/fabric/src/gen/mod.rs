//! Seeded, deterministic topology generators: the fabrics of the papers
//! (random irregular networks, meshes, tori, hypercubes, k-ary n-trees) plus a
//! ring and a single switch for tests.
//!
//! Every generator has a parameter struct that deserializes from a TOML table
//! (unknown keys are rejected) and a `build` method returning a [`Fabric`] or
//! [`FabricError::InvalidParameter`] naming the offending key. [`GeneratorSpec`]
//! gathers them into one tagged enum (`kind = "irregular"`, `kind = "mesh"`, …)
//! and [`GeneratorSpec::KINDS`] lists them for the command line.
//!
//! Conventions shared by all generators, so that routing engines and traffic
//! patterns can rely on them:
//!
//! * Switches are named `sw0, sw1, …` and are added first, so switch `swI` has
//!   `NodeId(I)`. Hosts are named `h0, h1, …` and are numbered by switch, as the
//!   papers number their end nodes: the hosts of `sw0` first, then those of
//!   `sw1`, and so on. Each host is a 1-port HCA cabled on its port 1.
//! * NodeDescriptions follow what real fabrics report through `ibnetdiscover`:
//!   `h3 HCA-1` for a host (OFED's "host name, adapter"), `MF0;sw2:ibnetsim/U1`
//!   for a switch (a managed Mellanox switch's "system name:part/unit"). A
//!   fat-tree switch's part also holds its level.
//! * Switch-to-switch links take the lowest switch ports and hosts the highest
//!   ones (mesh, torus, hypercube, irregular, ring). This keeps the port of a
//!   mesh dimension fixed whatever the number of hosts, which OpenSM-style `dor`
//!   routing depends on (it is minhop preferring the lowest-numbered minimal
//!   port). The fat tree is the one exception: its down ports `1..=k` face the
//!   hosts, as in every fat-tree description.
//! * One [`LinkSpec`] (the `link` key, default [`LinkSpec::default`], 1x SDR,
//!   1 m) applies to every link, host links included.
//! * Only the irregular generator draws random numbers; it uses ChaCha8 seeded
//!   from `seed`, so a seed gives the same fabric on every platform and run.
//! * A fabric must fit an IBA subnet: switches + hosts ≤ 49151 unicast LIDs
//!   (0x0001–0xBFFF at LMC 0), and a switch has at most 254 ports because 255
//!   is the "no path" entry of a linear forwarding table.

pub mod fattree;
pub mod hypercube;
pub mod irregular;
pub mod mesh;
pub mod simple;

use serde::{Deserialize, Serialize};

use crate::error::FabricError;
use crate::fabric::{Fabric, NodeId, PortNum};
use crate::rate::LinkSpec;

pub use fattree::{switch_level, FatTreeParams};
pub use hypercube::HypercubeParams;
pub use irregular::IrregularParams;
pub use mesh::MeshParams;
pub use simple::{ring, single_switch, RingParams, SingleSwitchParams};

/// Unicast LIDs of an IBA subnet (0x0001–0xBFFF): the most switches plus CA
/// ports a generated fabric may have.
pub const MAX_UNICAST_LIDS: u64 = 0xBFFF;

/// Most ports a generated switch may have: an LFT entry of 255 means "no path".
pub const MAX_SWITCH_PORTS: u32 = 254;

/// A generator and its parameters, as written in a scenario file:
/// `topology = { kind = "mesh", dims = [4, 4], torus = true, hosts_per_switch = 4 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GeneratorSpec {
    /// Random irregular network ([`irregular`]).
    Irregular(IrregularParams),
    /// n-dimensional mesh or torus ([`mesh`]).
    Mesh(MeshParams),
    /// Binary hypercube ([`hypercube`]).
    Hypercube(HypercubeParams),
    /// k-ary n-tree fat tree ([`fattree`]).
    FatTree(FatTreeParams),
    /// Ring of switches ([`simple`]).
    Ring(RingParams),
    /// One switch with hosts ([`simple`]).
    SingleSwitch(SingleSwitchParams),
}

impl GeneratorSpec {
    /// Every generator kind, as spelled in `kind = "…"`, with a one-line summary.
    pub const KINDS: &'static [(&'static str, &'static str)] = &[
        (
            "irregular",
            "random connected irregular network: N switches of P ports, H hosts each, \
             links_per_switch or total_links/independent_cycles random links, seeded",
        ),
        ("mesh", "n-dimensional mesh, or torus with torus = true; dimension d on ports 2d+1 (+) and 2d+2 (-)"),
        ("hypercube", "binary hypercube of 2^dimension switches; dimension i on port i+1"),
        ("fat_tree", "k-ary n-tree (Petrini/Vanneschi): k^n hosts, n levels of k^(n-1) switches of 2k ports"),
        ("ring", "ring of switches (a 1-dimensional torus)"),
        ("single_switch", "one switch with a host on every port"),
    ];

    /// The `kind` string of this spec.
    pub fn kind(&self) -> &'static str {
        match self {
            GeneratorSpec::Irregular(_) => "irregular",
            GeneratorSpec::Mesh(_) => "mesh",
            GeneratorSpec::Hypercube(_) => "hypercube",
            GeneratorSpec::FatTree(_) => "fat_tree",
            GeneratorSpec::Ring(_) => "ring",
            GeneratorSpec::SingleSwitch(_) => "single_switch",
        }
    }

    /// Generates the fabric.
    pub fn build(&self) -> Result<Fabric, FabricError> {
        match self {
            GeneratorSpec::Irregular(p) => p.build(),
            GeneratorSpec::Mesh(p) => p.build(),
            GeneratorSpec::Hypercube(p) => p.build(),
            GeneratorSpec::FatTree(p) => p.build(),
            GeneratorSpec::Ring(p) => p.build(),
            GeneratorSpec::SingleSwitch(p) => p.build(),
        }
    }
}

/// Checks that `switches` switches and `hosts` single-port hosts fit the unicast
/// LID space; `key` is the parameter that sets the size.
pub(crate) fn check_size(key: &str, switches: u64, hosts: u64) -> Result<(), FabricError> {
    let total = switches.saturating_add(hosts);
    if total > MAX_UNICAST_LIDS {
        return Err(FabricError::param(
            key,
            format!(
                "the fabric would have {switches} switches and {hosts} hosts = {total} LIDs, \
                 more than the {MAX_UNICAST_LIDS} unicast LIDs of an IBA subnet"
            ),
        ));
    }
    Ok(())
}

/// Checks a switch port count computed from parameters; `what` explains the sum.
pub(crate) fn check_ports(key: &str, ports: u32, what: &str) -> Result<PortNum, FabricError> {
    if ports == 0 {
        return Err(FabricError::param(key, format!("switches would have no ports ({what})")));
    }
    if ports > MAX_SWITCH_PORTS {
        return Err(FabricError::param(
            key,
            format!("switches would need {ports} ports ({what}); at most {MAX_SWITCH_PORTS} are possible"),
        ));
    }
    Ok(ports as PortNum)
}

/// Adds `count` switches `sw0..` of `ports` ports each.
pub(crate) fn add_switches(f: &mut Fabric, count: u32, ports: PortNum) -> Result<Vec<NodeId>, FabricError> {
    (0..count).map(|i| add_switch(f, format!("sw{i}"), ports, "")).collect()
}

/// A generated switch named `name`, described as managed Mellanox switches
/// describe themselves (`MF0;<system name>:<part>/U1`), the part being
/// `ibnetsim` plus `extra`. Names stay short (`sw3`); the description is what
/// `ibnetdiscover` would print beside them.
pub(crate) fn add_switch(f: &mut Fabric, name: String, ports: PortNum, extra: &str) -> Result<NodeId, FabricError> {
    let desc = format!("MF0;{name}:ibnetsim{extra}/U1");
    let id = f.add_switch(name, ports)?;
    f.set_description(id, desc);
    Ok(id)
}

/// Adds `hosts_per_switch` hosts to every switch in `switches`, in order, on
/// switch ports `first_port..`; hosts are named `h0..` in that order.
pub(crate) fn attach_hosts(
    f: &mut Fabric,
    switches: &[NodeId],
    hosts_per_switch: u8,
    first_port: u32,
    link: LinkSpec,
) -> Result<(), FabricError> {
    let mut next = 0u32;
    for &sw in switches {
        for j in 0..hosts_per_switch as u32 {
            let h = f.add_hca(format!("h{next}"), 1)?;
            // OFED's default NodeDescription: host name, then the adapter.
            f.set_description(h, format!("h{next} HCA-1"));
            f.connect(sw, first_port + j, h, 1, link)?;
            next += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeKind;

    #[test]
    fn kinds_are_unique_and_match_serde_names() {
        let mut names: Vec<&str> = GeneratorSpec::KINDS.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), GeneratorSpec::KINDS.len(), "duplicate kind in KINDS");

        let specs = [
            "kind = \"irregular\"\nswitches = 4\nswitch_ports = 4\nhosts_per_switch = 1\nlinks_per_switch = 2",
            "kind = \"mesh\"\ndims = [2, 3]\nhosts_per_switch = 1",
            "kind = \"hypercube\"\ndimension = 2\nhosts_per_switch = 1",
            "kind = \"fat_tree\"\nk = 2\nn = 2",
            "kind = \"ring\"\nswitches = 3\nhosts_per_switch = 1",
            "kind = \"single_switch\"\nhosts = 3",
        ];
        assert_eq!(specs.len(), GeneratorSpec::KINDS.len());
        for (text, (name, _)) in specs.iter().zip(GeneratorSpec::KINDS) {
            let spec: GeneratorSpec = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(spec.kind(), *name);
            let f = spec.build().unwrap_or_else(|e| panic!("{name}: {e}"));
            f.check_connected().unwrap();
        }
    }

    #[test]
    fn unknown_key_and_kind_are_rejected() {
        let e = toml::from_str::<GeneratorSpec>("kind = \"mesh\"\ndims = [2, 2]\nhosts_per_switch = 1\ntorrus = true")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `torrus`"), "{e}");
        let e = toml::from_str::<GeneratorSpec>("kind = \"dragonfly\"").unwrap_err().to_string();
        assert!(e.contains("dragonfly"), "{e}");
    }

    #[test]
    fn link_spec_applies_to_every_link() {
        let text = "kind = \"ring\"\nswitches = 4\nhosts_per_switch = 2\n\
                    link = { width = \"4x\", speed = \"QDR\", length_m = 20.0 }";
        let f = toml::from_str::<GeneratorSpec>(text).unwrap().build().unwrap();
        assert_eq!(f.links().len(), 4 + 8);
        for l in f.links() {
            assert_eq!(l.spec.width, crate::rate::LinkWidth::X4);
            assert_eq!(l.spec.speed, crate::rate::LinkSpeed::Qdr);
            assert_eq!(l.spec.propagation_ps(), 100_000);
        }
    }

    #[test]
    fn hosts_are_numbered_by_switch() {
        let mut f = Fabric::new();
        let sws = add_switches(&mut f, 3, 4).unwrap();
        attach_hosts(&mut f, &sws, 2, 3, LinkSpec::default()).unwrap();
        for (i, name) in ["h0", "h1", "h2", "h3", "h4", "h5"].iter().enumerate() {
            let h = f.node_by_name(name).unwrap();
            assert_eq!(f.node(h).kind, NodeKind::Hca);
            let peer = f.peer(h, 1).unwrap();
            assert_eq!(f.node(peer.node).name, format!("sw{}", i / 2));
            assert_eq!(peer.port as usize, 3 + i % 2);
        }
    }

    #[test]
    fn size_limits_name_the_key() {
        let e = check_size("dims", 50_000, 0).unwrap_err().to_string();
        assert!(e.starts_with("invalid parameter 'dims'"), "{e}");
        assert!(check_size("dims", 49_000, 151).is_ok());
        let e = check_ports("hosts_per_switch", 255, "4 dimension ports + 251 hosts").unwrap_err().to_string();
        assert!(e.contains("'hosts_per_switch'") && e.contains("255 ports"), "{e}");
    }
}
