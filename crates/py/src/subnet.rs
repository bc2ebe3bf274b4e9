//! `Subnet`: a configured subnet (LIDs + forwarding tables) and its checks.

use std::path::Path;

use ibnetsim_fabric::{LinkEnd, NodeId};
use ibnetsim_sm::analysis::{analyze, uniform_loads, AnalysisOptions, DirLink, LoadLids, PathSl, SlView};
use ibnetsim_sm::dump::opensm_lfts;
use ibnetsim_sm::guid2lid::read_guid2lid;
use ibnetsim_sm::lid_matrix::{compare, read_lid_matrix};
use ibnetsim_sm::qos::sl2vl_dump::read_sl2vl_dump;
use ibnetsim_sm::qos::{QosConfig, Sl2VlTables};
use ibnetsim_sm::{LidOrder, MulticastGroupConfig, PathLabels, RouteLabel, RoutingOptions, SmConfig, SmError, Subnet, SubnetManager, ENGINES};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{sm_err, ConfigError};
use crate::fabric::PyFabric;

/// QoS options from an opensm.conf file, or from a `.toml` file's `[qos]` table.
pub(crate) fn read_qos(path: &Path) -> Result<QosConfig, SmError> {
    if path.extension().is_some_and(|e| e == "toml") {
        let text = ibnetsim_sm::error::read_text(path, "a QoS .toml file")?;
        QosConfig::from_toml_str(&text, Some(path))
    } else {
        QosConfig::read_opensm_conf(path)
    }
}

#[pyclass(name = "Subnet", module = "ibnetsim._core", frozen)]
pub struct PySubnet {
    fabric: Py<PyFabric>,
    inner: Subnet,
}

impl PySubnet {
    pub fn fabric(&self) -> &PyFabric {
        self.fabric.get()
    }

    pub fn subnet(&self) -> &Subnet {
        &self.inner
    }

    fn ca(&self, fabric: &PyFabric, name: &str) -> PyResult<NodeId> {
        let f = &fabric.inner;
        let n = f.resolve(name).map_err(|e| ConfigError::new_err(e.to_string()))?;
        if !f.node(n).kind.is_ca() {
            return Err(ConfigError::new_err(format!("'{name}' is a switch; give a channel adapter")));
        }
        Ok(n)
    }
}

#[pymethods]
impl PySubnet {
    /// Runs the subnet manager on a fabric.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (fabric, engine, lmc, roots, file, file_key, seed, multicast_groups=Vec::new(), non_adaptive=Vec::new(), guid2lid=None, max_vls=None, lash_start_vl=None, lid_order="ibnetsim", torus_config=None))]
    fn configure(
        py: Python<'_>,
        fabric: Py<PyFabric>,
        engine: String,
        lmc: u8,
        roots: Vec<String>,
        file: Option<std::path::PathBuf>,
        file_key: Option<std::path::PathBuf>,
        seed: u64,
        multicast_groups: Vec<(u16, Vec<String>)>,
        non_adaptive: Vec<String>,
        guid2lid: Option<std::path::PathBuf>,
        max_vls: Option<u8>,
        lash_start_vl: Option<u8>,
        lid_order: &str,
        torus_config: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let fab = fabric.get();
        let lid_order = LidOrder::from_name(lid_order).map_err(sm_err)?;
        let config = SmConfig {
            routing_engine: engine,
            lmc,
            options: RoutingOptions { roots, file, file_key, seed, topology_lids: fab.file_lids.clone(), non_adaptive, max_vls, lash_start_vl, torus_config },
            multicast_groups: multicast_groups.into_iter().map(|(mlid, members)| MulticastGroupConfig { mlid, members }).collect(),
            lid_order,
        };
        let inner = py
            .detach(|| {
                // OpenSM's own LIDs, when given, replace the assigned ones.
                let given = guid2lid.as_deref().map(|p| read_guid2lid(p, &fab.inner)).transpose()?;
                SubnetManager::new(config).configure_with_lids(&fab.inner, given)
            })
            .map_err(sm_err)?;
        Ok(PySubnet { fabric, inner })
    }

    #[getter]
    fn engine(&self) -> &str {
        &self.inner.engine
    }

    #[getter]
    fn notes(&self) -> Vec<String> {
        self.inner.notes.clone()
    }

    #[getter]
    fn lmc(&self) -> u8 {
        self.inner.lids.lmc()
    }

    /// LID assignment as columns.
    fn lids_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.fabric.get().inner;
        let ports = self.inner.lids.ports();
        let d = PyDict::new(py);
        d.set_item("node", ports.iter().map(|p| f.node(p.end.node).name.as_str()).collect::<Vec<_>>())?;
        d.set_item("port", ports.iter().map(|p| p.end.port as u32).collect::<Vec<_>>())?;
        d.set_item("kind", ports.iter().map(|p| format!("{:?}", f.node(p.end.node).kind)).collect::<Vec<_>>())?;
        d.set_item("base_lid", ports.iter().map(|p| p.base).collect::<Vec<_>>())?;
        d.set_item("lmc", ports.iter().map(|p| p.lmc as u32).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Switch names in row order of `lft_matrix`.
    fn switch_names(&self) -> Vec<String> {
        let f = &self.fabric.get().inner;
        f.switches().map(|s| f.node(s).name.clone()).collect()
    }

    /// Forwarding tables as a (switch x LID) uint8 matrix, 255 = no path.
    fn lft_matrix<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u8>> {
        let f = &self.fabric.get().inner;
        let cols = self.inner.tables.top_lid() as usize + 1;
        let switches: Vec<NodeId> = f.switches().collect();
        let mut data = Vec::with_capacity(switches.len() * cols);
        for s in &switches {
            data.extend_from_slice(self.inner.tables.lft(*s).expect("switch has a table").entries());
        }
        Array2::from_shape_vec((switches.len(), cols), data).expect("rows of equal length").into_pyarray(py)
    }

    /// The tables in OpenSM's `opensm-lfts.dump` format.
    fn lfts_dump(&self, py: Python<'_>) -> String {
        let f = &self.fabric.get().inner;
        py.detach(|| opensm_lfts::write(f, &self.inner.lids, &self.inner.tables))
    }

    /// Writes `opensm-lfts.dump`.
    fn write_lfts(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let text = self.lfts_dump(py);
        std::fs::write(&path, text).map_err(|source| sm_err(ibnetsim_sm::SmError::Io { path, source }))
    }

    /// Reachability, loops, stretch, channel load and credit loops:
    /// returns (report as JSON, report as text).
    /// `escape_first` reads the tables as the `fa` engine lays them out
    /// (offset 0 escape, the others adaptive) whatever engine made them.
    #[pyo3(signature = (data_vls, qos_file, spread_lmc, sl, include_switch_lids, escape_first, sl2vl_file=None, lid_matrix_file=None))]
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        py: Python<'_>,
        data_vls: u8,
        qos_file: Option<std::path::PathBuf>,
        spread_lmc: bool,
        sl: u8,
        include_switch_lids: bool,
        escape_first: bool,
        sl2vl_file: Option<std::path::PathBuf>,
        lid_matrix_file: Option<std::path::PathBuf>,
    ) -> PyResult<(String, String)> {
        let f = &self.fabric.get().inner;
        let labels = if escape_first { PathLabels::escape_first(self.inner.lids.lmc()) } else { self.inner.labels.clone() };
        let escape_offsets =
            labels.as_slice().iter().enumerate().filter(|(_, &l)| l == RouteLabel::Escape).map(|(o, _)| o as u16).collect();
        let options = AnalysisOptions {
            load_lids: if spread_lmc { LoadLids::Spread } else { LoadLids::Base },
            cdg_switch_lids: include_switch_lids,
            escape_offsets,
            not_in_dump: self.inner.not_in_dump.clone(),
            ..AnalysisOptions::default()
        };
        py.detach(|| {
            // The tables OpenSM programmed (its dump), or the ones its
            // options would program; the caller gives at most one of them.
            let tables = match (&qos_file, &sl2vl_file) {
                (Some(_), Some(_)) => {
                    return Err(SmError::option(
                        "sl2vl",
                        "give either the SL2VL dump or the QoS options that produced it, not both",
                    ))
                }
                // An engine that programs its own tables (torus-2QoS) wins
                // over qos_sl2vl, as in OpenSM.
                (Some(path), None) => match &self.inner.sl2vl {
                    Some(t) => Some(t.clone()),
                    None => Some(read_qos(path)?.apply(f).0),
                },
                (None, Some(path)) => Some(read_sl2vl_dump(path, f)?),
                // The engine's own tables, else SL i on VL i mod data_vls.
                (None, None) => self.inner.sl2vl.clone(),
            };
            // The engine's per-path SLs (dfsssp's layers), `sl` where it gives none.
            let lids = &self.inner.lids;
            let per_path = |src: LinkEnd, dlid: u16| {
                lids.of_port(src.node, src.port).and_then(|p| self.inner.path_sl.get(p.base, dlid)).unwrap_or(sl)
            };
            let route_sl = if self.inner.path_sl.is_none() { PathSl::Fixed(sl) } else { PathSl::PerPair(&per_path) };
            let view = match &tables {
                Some(t) => SlView::with_tables(t),
                None => SlView::modulo(data_vls)?,
            }
            .with_path_sl(route_sl);
            let report = analyze(f, &self.inner.lids, &self.inner.tables, &view, &options)?;
            let mut json = serde_json::to_value(&report).expect("report serializes");
            let mut text = report.to_string();
            // OpenSM's hop counts, when given: a section of their own, whose
            // disagreement with the fabric is a warning (see lid_matrix).
            if let Some(path) = &lid_matrix_file {
                let m = compare(f, &self.inner.lids, &self.inner.tables, &read_lid_matrix(path, f)?);
                if m.has_warnings() {
                    json["has_warnings"] = true.into();
                }
                json["lid_matrix"] = serde_json::to_value(&m).expect("report serializes");
                // Before the verdict, which stays the last line.
                let at = text.rfind("verdict:").unwrap_or(text.len());
                text.insert_str(at, &m.to_string());
                if m.has_warnings() && text.ends_with("verdict: ok") {
                    text.push_str(" for the tables, but the LID matrix is not this fabric's (see above)");
                }
            }
            Ok((json.to_string(), text))
        })
        .map_err(sm_err)
    }

    /// Uniform all-to-all load of every directed link, as columns.
    fn link_loads<'py>(&self, py: Python<'py>, spread_lmc: bool) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.fabric.get().inner;
        let which = if spread_lmc { LoadLids::Spread } else { LoadLids::Base };
        let loads = py.detach(|| uniform_loads(f, &self.inner.lids, &self.inner.tables, which)).map_err(sm_err)?;
        let dirs: Vec<DirLink> = (0..loads.loads.len() as u32).map(DirLink).collect();
        let name = |e: LinkEnd| f.node(e.node).name.as_str();
        let d = PyDict::new(py);
        d.set_item("from_node", dirs.iter().map(|dl| name(dl.from(f))).collect::<Vec<_>>())?;
        d.set_item("from_port", dirs.iter().map(|dl| dl.from(f).port as u32).collect::<Vec<_>>())?;
        d.set_item("to_node", dirs.iter().map(|dl| name(dl.to(f))).collect::<Vec<_>>())?;
        d.set_item("to_port", dirs.iter().map(|dl| dl.to(f).port as u32).collect::<Vec<_>>())?;
        let rate = |dl: &DirLink| f.link(dl.link()).spec.data_rate_bps() / 1e9;
        d.set_item("data_rate_gbps", dirs.iter().map(rate).collect::<Vec<_>>())?;
        d.set_item("load", loads.loads.clone())?;
        Ok(d)
    }

    /// SLtoVL tables of every cabled (input, output) port pair, as columns:
    /// node, in_port, out_port and `sl0`..`sl15` (the VL of each SL).
    #[pyo3(signature = (data_vls, qos_file))]
    fn sl2vl_columns<'py>(
        &self,
        py: Python<'py>,
        data_vls: u8,
        qos_file: Option<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.fabric.get().inner;
        // As check reads them: the engine's own tables first.
        let tables: Sl2VlTables = match (&self.inner.sl2vl, &qos_file) {
            (Some(t), _) => Ok(t.clone()),
            (None, Some(path)) => read_qos(path).map(|q| q.apply(f).0),
            (None, None) => Sl2VlTables::uniform(f, data_vls),
        }
        .map_err(sm_err)?;
        let (mut nodes, mut ins, mut outs) = (Vec::new(), Vec::new(), Vec::new());
        let mut vls: Vec<Vec<u32>> = vec![Vec::new(); 16];
        for (i, node) in f.nodes().iter().enumerate() {
            let id = NodeId(i as u32);
            let cabled: Vec<u8> = node.connected_ports().map(|(p, _)| p).collect();
            // A switch's port 0 is an input too: its own packets (management, GMPs).
            let inputs: Vec<u8> =
                if node.kind.is_switch() { std::iter::once(0).chain(cabled.iter().copied()).collect() } else { vec![0] };
            for &i in &inputs {
                for &o in cabled.iter().filter(|&&o| o != i) {
                    nodes.push(node.name.as_str());
                    ins.push(i as u32);
                    outs.push(o as u32);
                    for (sl, col) in vls.iter_mut().enumerate() {
                        col.push(tables.vl(id, i, o, sl as u8) as u32);
                    }
                }
            }
        }
        let d = PyDict::new(py);
        d.set_item("node", nodes)?;
        d.set_item("in_port", ins)?;
        d.set_item("out_port", outs)?;
        for (sl, col) in vls.into_iter().enumerate() {
            d.set_item(format!("sl{sl}"), col)?;
        }
        Ok(d)
    }

    /// The SL the engine gave the path from the port owning `slid` to `dlid`
    /// (OpenSM's `path_sl`, what a PathRecord carries); `None` if it gave none.
    fn path_sl(&self, slid: u16, dlid: u16) -> Option<u8> {
        self.inner.path_sl.get(slid, dlid)
    }

    /// Hops (node name, output port) from CA `src` to CA `dst`'s base LID + offset.
    fn trace(&self, src: &str, dst: &str, lid_offset: u16) -> PyResult<Vec<(String, u8)>> {
        let fab = self.fabric.get();
        let f = &fab.inner;
        let (s, d) = (self.ca(fab, src)?, self.ca(fab, dst)?);
        let dport = f.node(d).connected_ports().next().map(|(p, _)| p).unwrap_or(1);
        let lids = self.inner.lids.of_port(d, dport).ok_or_else(|| ConfigError::new_err(format!("'{dst}' has no LID")))?;
        if lid_offset as u32 >= lids.count() {
            return Err(ConfigError::new_err(format!("lid_offset {lid_offset} is beyond 2^LMC = {}", lids.count())));
        }
        let lid = lids.base + lid_offset;
        let sport = f.node(s).connected_ports().next().map(|(p, _)| p).unwrap_or(1);
        let mut hops = vec![(f.node(s).name.clone(), sport)];
        let mut at: Option<LinkEnd> = f.peer(s, sport);
        while let Some(end) = at {
            if end.node == d {
                return Ok(hops);
            }
            if !f.node(end.node).kind.is_switch() || hops.len() > f.num_nodes() {
                break;
            }
            let Some(out) = self.inner.tables.get(end.node, lid) else { break };
            hops.push((f.node(end.node).name.clone(), out));
            at = f.peer(end.node, out);
        }
        Err(ConfigError::new_err(format!("no route from '{src}' to LID {lid:#x} of '{dst}' (stopped after {hops:?})")))
    }
}

#[pyfunction]
fn routing_engines() -> Vec<(&'static str, &'static str)> {
    ENGINES.iter().map(|e| (e.name, e.summary)).collect()
}

/// The LID manager's numberings (`SubnetManager(lid_order=…)`).
#[pyfunction]
fn lid_orders() -> Vec<&'static str> {
    LidOrder::NAMES.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySubnet>()?;
    m.add_function(wrap_pyfunction!(routing_engines, m)?)?;
    m.add_function(wrap_pyfunction!(lid_orders, m)?)?;
    Ok(())
}
