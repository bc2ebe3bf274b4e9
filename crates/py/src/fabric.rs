//! `Fabric`: a handle on the core fabric model, with readers, writers and generators.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use ibnetsim_fabric::gen::GeneratorSpec;
use ibnetsim_fabric::io::{self, ReadOptions, TopologyFormat};
use ibnetsim_fabric::rate::{LinkSpeed, LinkWidth};
use ibnetsim_fabric::{Fabric, NodeId, PortNum};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{fabric_err, TopologyError};

/// LIDs a topology file stated: (node, port, base LID, LMC).
pub type FileLids = Vec<(NodeId, PortNum, u16, u8)>;

#[pyclass(name = "Fabric", module = "ibnetsim._core", frozen)]
pub struct PyFabric {
    pub inner: Fabric,
    pub file_lids: FileLids,
    source_format: Option<&'static str>,
}

impl PyFabric {
    pub fn new(inner: Fabric, file_lids: FileLids, source_format: Option<&'static str>) -> Self {
        PyFabric { inner, file_lids, source_format }
    }
}

fn format_name(f: TopologyFormat) -> &'static str {
    match f {
        TopologyFormat::NetFile => "ibnetdiscover",
        TopologyFormat::Ibdm => "ibdm-topo",
        TopologyFormat::SubnetLst => "subnet.lst",
    }
}

/// Hop diameter of the switch graph (0 for a single switch).
fn switch_diameter(f: &Fabric) -> usize {
    let mut diameter = 0;
    let mut dist = vec![usize::MAX; f.num_nodes()];
    for s in f.switches() {
        dist.iter_mut().for_each(|d| *d = usize::MAX);
        dist[s.index()] = 0;
        let mut q = VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            for (_, peer) in f.switch_neighbors(u) {
                if dist[peer.node.index()] == usize::MAX {
                    dist[peer.node.index()] = dist[u.index()] + 1;
                    diameter = diameter.max(dist[peer.node.index()]);
                    q.push_back(peer.node);
                }
            }
        }
    }
    diameter
}

#[pymethods]
impl PyFabric {
    /// Reads a topology file; `ibnl_dirs` are extra folders of IBDM system
    /// files; the link width and speed apply where the file gives none, the
    /// cable length to every cable, and `cable_lengths` names a file of
    /// per-cable lengths.
    #[staticmethod]
    #[pyo3(signature = (path, ibnl_dirs, link_width=None, link_speed=None, cable_length_m=None, cable_lengths=None))]
    fn read(
        py: Python<'_>,
        path: PathBuf,
        ibnl_dirs: Vec<PathBuf>,
        link_width: Option<&str>,
        link_speed: Option<&str>,
        cable_length_m: Option<f64>,
        cable_lengths: Option<PathBuf>,
    ) -> PyResult<Self> {
        let bad = |key: &str, e: String| TopologyError::new_err(format!("{key}: {e}"));
        let opts = ReadOptions {
            ibnl_dirs,
            link_width: link_width.map(|w| w.parse::<LinkWidth>()).transpose().map_err(|e| bad("link_width", e))?,
            link_speed: link_speed.map(|s| s.parse::<LinkSpeed>()).transpose().map_err(|e| bad("link_speed", e))?,
            cable_length_m,
            cable_lengths,
        };
        let topo = py.detach(|| io::read_topology_with(&path, &opts)).map_err(fabric_err)?;
        Ok(PyFabric::new(topo.fabric, topo.lids, Some(format_name(topo.format))))
    }

    /// Generates a fabric from a JSON generator spec (`{"kind": ..., params, "link": {...}}`).
    #[staticmethod]
    fn generate(py: Python<'_>, spec_json: &str) -> PyResult<Self> {
        let spec: GeneratorSpec =
            serde_json::from_str(spec_json).map_err(|e| TopologyError::new_err(format!("generator parameters: {e}")))?;
        let fabric = py.detach(|| spec.build()).map_err(fabric_err)?;
        Ok(PyFabric::new(fabric, Vec::new(), None))
    }

    #[getter]
    fn num_switches(&self) -> usize {
        self.inner.switches().count()
    }

    #[getter]
    fn num_cas(&self) -> usize {
        self.inner.cas().count()
    }

    #[getter]
    fn num_links(&self) -> usize {
        self.inner.links().len()
    }

    #[getter]
    fn source_format(&self) -> Option<&'static str> {
        self.source_format
    }

    /// Summary counts as a dict.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner;
        let d = PyDict::new(py);
        let switch_links = f
            .links()
            .iter()
            .filter(|l| f.node(l.ends[0].node).kind.is_switch() && f.node(l.ends[1].node).kind.is_switch())
            .count();
        let mut rates: BTreeMap<String, usize> = BTreeMap::new();
        for l in f.links() {
            *rates.entry(format!("{}{}", l.spec.width, l.spec.speed)).or_default() += 1;
        }
        let hosts_per_switch: Vec<usize> = f
            .switches()
            .map(|s| f.node(s).connected_ports().filter(|&(p, _)| f.peer(s, p).is_some_and(|e| f.node(e.node).kind.is_ca())).count())
            .collect();
        d.set_item("switches", self.num_switches())?;
        d.set_item("channel_adapters", self.num_cas())?;
        d.set_item("ca_ports_cabled", f.ca_ports().len())?;
        d.set_item("links", f.links().len())?;
        d.set_item("switch_to_switch_links", switch_links)?;
        d.set_item("independent_cycles", (switch_links + 1).saturating_sub(self.num_switches()))?;
        d.set_item("max_switch_ports", f.switches().map(|s| f.node(s).num_ports).max().unwrap_or(0))?;
        d.set_item("cas_per_switch_min", hosts_per_switch.iter().min().copied().unwrap_or(0))?;
        d.set_item("cas_per_switch_max", hosts_per_switch.iter().max().copied().unwrap_or(0))?;
        d.set_item("switch_diameter_hops", switch_diameter(f))?;
        d.set_item("connected", f.check_connected().is_ok())?;
        d.set_item("link_rates", rates.into_iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "))?;
        Ok(d)
    }

    /// Node table as columns.
    fn nodes_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner;
        let d = PyDict::new(py);
        let n = f.nodes();
        d.set_item("name", n.iter().map(|x| x.name.as_str()).collect::<Vec<_>>())?;
        d.set_item("kind", n.iter().map(|x| format!("{:?}", x.kind)).collect::<Vec<_>>())?;
        d.set_item("guid", n.iter().map(|x| format!("{:#018x}", x.guid)).collect::<Vec<_>>())?;
        d.set_item("system_guid", n.iter().map(|x| format!("{:#018x}", x.system_guid)).collect::<Vec<_>>())?;
        d.set_item("description", n.iter().map(|x| x.description.as_str()).collect::<Vec<_>>())?;
        d.set_item("num_ports", n.iter().map(|x| x.num_ports as u32).collect::<Vec<_>>())?;
        d.set_item("connected_ports", n.iter().map(|x| x.connected_ports().count()).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Link table as columns.
    fn links_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner;
        let d = PyDict::new(py);
        let l = f.links();
        let name = |e: ibnetsim_fabric::LinkEnd| f.node(e.node).name.as_str();
        d.set_item("node_a", l.iter().map(|x| name(x.ends[0])).collect::<Vec<_>>())?;
        d.set_item("port_a", l.iter().map(|x| x.ends[0].port as u32).collect::<Vec<_>>())?;
        d.set_item("node_b", l.iter().map(|x| name(x.ends[1])).collect::<Vec<_>>())?;
        d.set_item("port_b", l.iter().map(|x| x.ends[1].port as u32).collect::<Vec<_>>())?;
        d.set_item("width", l.iter().map(|x| x.spec.width.to_string()).collect::<Vec<_>>())?;
        d.set_item("speed", l.iter().map(|x| x.spec.speed.to_string()).collect::<Vec<_>>())?;
        d.set_item("length_m", l.iter().map(|x| x.spec.length_m).collect::<Vec<_>>())?;
        d.set_item("data_rate_gbps", l.iter().map(|x| x.spec.data_rate_bps() / 1e9).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// The fabric in ibnetdiscover/ibsim net format.
    fn to_netfile(&self) -> PyResult<String> {
        let mut out = Vec::new();
        io::write_netfile(&self.inner, self.lids_for_writing(), &mut out).map_err(fabric_err)?;
        Ok(String::from_utf8(out).expect("netfile writer produces UTF-8"))
    }

    /// Writes the fabric in ibnetdiscover/ibsim net format.
    fn write_netfile(&self, path: PathBuf) -> PyResult<()> {
        let text = self.to_netfile()?;
        std::fs::write(&path, text).map_err(|source| fabric_err(ibnetsim_fabric::FabricError::Io { path, source }))
    }
}

impl PyFabric {
    fn lids_for_writing(&self) -> Option<&[(NodeId, PortNum, u16, u8)]> {
        (!self.file_lids.is_empty()).then_some(self.file_lids.as_slice())
    }
}

#[pyfunction]
fn generator_kinds() -> Vec<(&'static str, &'static str)> {
    GeneratorSpec::KINDS.to_vec()
}

/// The link widths (`1x` …) and speeds (`SDR` …) a fabric's links may have,
/// by the names configs use: the scenario's choices.
#[pyfunction]
fn link_choices() -> (Vec<String>, Vec<&'static str>) {
    (LinkWidth::ALL.iter().map(|w| w.to_string()).collect(), LinkSpeed::ALL.iter().map(|s| s.name()).collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFabric>()?;
    m.add_function(wrap_pyfunction!(generator_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(link_choices, m)?)?;
    Ok(())
}
