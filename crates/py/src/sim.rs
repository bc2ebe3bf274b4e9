//! `Simulation`: the packet-level data plane, run in slices of simulated time so
//! that Python can draw a progress bar and honour Ctrl-C between slices.

use std::path::PathBuf;

use ibnetsim_sim::arbitration::VlArbiter;
use ibnetsim_sim::config::{section_default_json, section_schema, MTU_BYTES, SCHEMA_SECTIONS};
use ibnetsim_sim::engine::{Queue, MAX_TIME_PS};
use ibnetsim_sim::selection::Selection;
use ibnetsim_sim::traffic::{GapDistribution, PathBits, Pattern, ProcessKind};
use ibnetsim_sim::{preset, AckMode, QosTables, SimConfig, SimError, Simulation, MAX_LOAD, PRESETS};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{sm_err, ConfigError, DeadlockError, IbnetsimError, StarvationError};
use crate::subnet::{read_qos, PySubnet};

/// (requests as (source, destination, class, bit/s), be_share, rate_basis, high_limit).
type PlanArgs = (Vec<crate::qos::Request>, f64, String, u8, String);


/// Converts a simulation error; a deadlock carries its cycle as `.cycle`
/// (a list of (from_node, from_port, to_node, to_port, vl)), the VLs that
/// explain a stall without a cycle as `.starved` (node, port, vl, packets:
/// then it is a `StarvationError`), `.time_ps`,
/// `.partial` (other traffic kept moving), `.blocked_since_ps` and
/// `.last_progress_ps` (when a packet last moved anywhere).
fn sim_err(py: Python<'_>, e: SimError) -> PyErr {
    match e {
        SimError::Config { .. } | SimError::Parse { .. } => ConfigError::new_err(e.to_string()),
        SimError::Deadlock(report) => {
            let err = if report.starved.is_empty() {
                DeadlockError::new_err(report.to_string())
            } else {
                StarvationError::new_err(report.to_string())
            };
            let starved: Vec<(String, u8, u8, u64)> =
                report.starved.iter().map(|s| (s.node.clone(), s.port, s.vl, s.packets)).collect();
            if let Ok(list) = PyList::new(py, starved) {
                let _ = err.value(py).setattr("starved", list);
            }
            let cycle: Vec<(String, u8, String, u8, u8)> = report
                .cycle
                .iter()
                .map(|c| (c.from_node.clone(), c.from_port, c.to_node.clone(), c.to_port, c.vl))
                .collect();
            if let Ok(list) = PyList::new(py, cycle) {
                let _ = err.value(py).setattr("cycle", list);
            }
            let _ = err.value(py).setattr("time_ps", report.time_ps);
            let _ = err.value(py).setattr("partial", report.partial);
            let _ = err.value(py).setattr("blocked_since_ps", report.blocked_since_ps);
            let _ = err.value(py).setattr("last_progress_ps", report.last_progress_ps);
            err
        }
        SimError::Conservation { .. } => IbnetsimError::new_err(e.to_string()),
    }
}

#[pyclass(name = "Simulation", module = "ibnetsim._core")]
pub struct PySimulation {
    sim: Simulation,
}

#[pymethods]
impl PySimulation {
    /// Builds a simulation of a configured subnet; `config_json` is a full
    /// `SimConfig` (every validation happens here, errors name the key).
    /// `qos_file` (opensm.conf `qos_*` options, or a TOML `[qos]` table) makes
    /// the subnet manager program per-port SL2VL and VLArbitration tables that
    /// replace the config's; the data VLs are then those the file gives.
    /// `qos_plan` = (requests, be_share, rate_basis, high_limit) instead
    /// admits the requests as `ibnetsim.qos.plan` does and programs the tables
    /// that plan writes (15 data VLs).
    #[new]
    #[pyo3(signature = (subnet, config_json, qos_file=None, qos_plan=None, preset=None))]
    fn new(
        py: Python<'_>,
        subnet: &PySubnet,
        config_json: &str,
        qos_file: Option<PathBuf>,
        qos_plan: Option<PlanArgs>,
        preset: Option<&str>,
    ) -> PyResult<Self> {
        // `config_json` holds only the keys the caller gives; the rest are the
        // preset's (or the defaults), which never leave the core.
        let base = match preset {
            Some(n) => ibnetsim_sim::preset(n).map_err(|e| sim_err(py, e))?,
            None => SimConfig::default(),
        };
        let mut config = base.with_overrides(config_json, "simulation config").map_err(|e| ConfigError::new_err(e.to_string()))?;
        let fabric = &subnet.fabric().inner;
        let s = subnet.subnet();
        if qos_file.is_some() && qos_plan.is_some() {
            return Err(ConfigError::new_err("give qos_file or qos_plan, not both"));
        }
        let qos = match &qos_file {
            None => match qos_plan {
                // An engine that programs its own SL2VL (torus-2QoS) runs on
                // them, every VL weighted alike.
                None => match &s.sl2vl {
                    None => None,
                    Some(sl2vl) => {
                        config.data_vls = sl2vl.data_vls();
                        let vlarb = ibnetsim_sm::qos::VlArbTables::uniform(fabric, sl2vl.data_vls()).map_err(sm_err)?;
                        Some(QosTables::from_subnet_manager(fabric, sl2vl, &vlarb))
                    }
                },
                Some((requests, be_share, rate_basis, high_limit, entry_limit)) => {
                    config.data_vls = ibnetsim_sm::qos::admission::DATA_VLS;
                    Some(crate::qos::plan_tables(subnet, &requests, be_share, &rate_basis, high_limit, &entry_limit)?)
                }
            },
            Some(path) => {
                let qos = read_qos(path).map_err(sm_err)?;
                let (sl2vl, vlarb) = qos.apply(fabric);
                // As OpenSM, an engine's own SL2VL wins over qos_sl2vl; the
                // file still gives the VL arbitration.
                let sl2vl = s.sl2vl.clone().unwrap_or(sl2vl);
                config.data_vls = sl2vl.data_vls().max(vlarb.data_vls());
                Some(QosTables::from_subnet_manager(fabric, &sl2vl, &vlarb))
            }
        };
        let sim = py.detach(|| Simulation::from_subnet(fabric, s, &config, qos)).map_err(|e| sim_err(py, e))?;
        Ok(PySimulation { sim })
    }

    /// Runs until `until_ps` (absolute simulated time), without the interpreter.
    fn run(&mut self, py: Python<'_>, until_ps: u64) -> PyResult<()> {
        let sim = &mut self.sim;
        py.detach(|| sim.run(until_ps)).map_err(|e| sim_err(py, e))
    }

    /// Simulated time reached, in picoseconds.
    #[getter]
    fn now_ps(&self) -> u64 {
        self.sim.now_ps()
    }

    /// Events handled so far.
    #[getter]
    fn events(&self) -> u64 {
        self.sim.events()
    }

    /// Packets delivered since time 0.
    #[getter]
    fn delivered(&self) -> u64 {
        self.sim.delivered()
    }

    /// Packets of CBR connection `c` delivered in the measurement window.
    fn connection_delivered(&self, c: usize) -> Option<u64> {
        self.sim.connection_delivered(c)
    }

    /// Ends the warm-up now (fixed warm-up only): the window starts here.
    fn begin_measurement(&mut self, py: Python<'_>) -> PyResult<()> {
        self.sim.begin_measurement().map_err(|e| sim_err(py, e))
    }

    /// Hosts (CA ports) that send and receive.
    #[getter]
    fn num_hosts(&self) -> usize {
        self.sim.num_hosts()
    }

    /// All results (see `SimResults`): JSON of everything but the per-port
    /// records (`"ports": []`), and those records as Python objects, which
    /// on a large fabric cost less built directly (`port_results.rs`).
    fn results<'py>(&self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyList>)> {
        let mut r = self.sim.results();
        let ports = std::mem::take(&mut r.ports);
        Ok((serde_json::to_string(&r).expect("results serialize"), crate::port_results::port_records(py, &ports)?))
    }

    /// Latency histogram of class `class`: (bucket low ps, bucket width ps,
    /// count); generation → delivery, or first byte injected → delivery when
    /// `network`. None for a class that does not exist.
    fn latency_histogram(&self, class: usize, network: bool) -> Option<Vec<(u64, u64, u64)>> {
        self.sim.latency_histogram(class, network)
    }

    /// As `latency_histogram`, all classes together.
    fn total_latency_histogram(&self, network: bool) -> Vec<(u64, u64, u64)> {
        self.sim.total_latency_histogram(network)
    }

    /// Checks packet conservation (generated = delivered + dropped + in flight).
    fn check_conservation(&self, py: Python<'_>) -> PyResult<()> {
        self.sim.check_conservation().map_err(|e| sim_err(py, e))
    }
}

/// The full default `SimConfig`, or a paper preset, as JSON.
#[pyfunction]
#[pyo3(signature = (name=None))]
fn sim_config_json(py: Python<'_>, name: Option<&str>) -> PyResult<String> {
    let config = match name {
        Some(n) => preset(n).map_err(|e| sim_err(py, e))?,
        None => SimConfig::default(),
    };
    Ok(serde_json::to_string(&config).expect("config serializes"))
}

/// The JSON schema of config section `name` (`switch` or `hca`): each field
/// with its type, range, choices and doc comment. The scenario's section of
/// the same name takes its keys from it.
#[pyfunction]
fn sim_section_schema(name: &str) -> PyResult<String> {
    let schema = section_schema(name).ok_or_else(|| {
        ConfigError::new_err(format!("no schema for config section '{name}' (known: {})", SCHEMA_SECTIONS.join(", ")))
    })?;
    Ok(schema.as_value().to_string())
}

/// The default of config section `name` as JSON, its keys in the order of
/// the struct's fields (the order the scenario section lists them in).
#[pyfunction]
fn sim_section_default(name: &str) -> PyResult<String> {
    section_default_json(name).ok_or_else(|| {
        ConfigError::new_err(format!("no schema for config section '{name}' (known: {})", SCHEMA_SECTIONS.join(", ")))
    })
}

/// Checks one class document of section `section` (`traffic`: a
/// `ClassDoc`, `closed_loop`: a `ClosedLoopDoc`, as JSON whose values a
/// scenario has already typed): None when it describes a class, else the
/// (key of the document, message) of its first problem (keys that exclude
/// each other, a pattern's parameter given to another pattern, …).
#[pyfunction]
fn sim_check_class(section: &str, doc_json: &str) -> PyResult<Option<(String, String)>> {
    let parse_err = |e: serde_json::Error| ConfigError::new_err(format!("{section} class: {e}"));
    let problem = match section {
        "traffic" => serde_json::from_str::<ibnetsim_sim::traffic::ClassDoc>(doc_json).map_err(parse_err)?.to_class().err(),
        "closed_loop" => {
            serde_json::from_str::<ibnetsim_sim::traffic::closed_loop::ClosedLoopDoc>(doc_json).map_err(parse_err)?.to_class().err()
        }
        _ => return Err(ConfigError::new_err(format!("no class document for section '{section}' (known: traffic, closed_loop)"))),
    };
    Ok(problem.map(|(key, msg)| (key.to_string(), msg)))
}

/// Checks the config that `config_json` (the keys given) makes over
/// `preset` (or the defaults) as far as it can be without a fabric: None
/// when building a simulation from it would get past the config, else the
/// (dotted key, message) of the first problem. A document that does not
/// parse raises `ConfigError`, naming the key.
#[pyfunction]
#[pyo3(signature = (config_json, preset=None))]
fn sim_check_config(py: Python<'_>, config_json: &str, preset: Option<&str>) -> PyResult<Option<(String, String)>> {
    let base = match preset {
        Some(n) => ibnetsim_sim::preset(n).map_err(|e| sim_err(py, e))?,
        None => SimConfig::default(),
    };
    let config = base.with_overrides(config_json, "simulation config").map_err(|e| ConfigError::new_err(e.to_string()))?;
    match config.check() {
        Ok(()) => Ok(None),
        Err(SimError::Config { key, msg }) => Ok(Some((key, msg))),
        Err(e) => Err(ConfigError::new_err(e.to_string())),
    }
}

/// The default `[auto_warmup]` table (automatic warm-up detection) as JSON.
#[pyfunction]
fn sim_auto_warmup_default_json() -> String {
    serde_json::to_string(&ibnetsim_sim::AutoWarmupConfig::default()).expect("config serializes")
}

/// The values the core accepts where a configuration names something, by
/// registry, and the unit-implied limits: Python's checks, the scenario
/// schema's choices and docs/scenario.md read them here rather than keep
/// copies.
#[pyfunction]
fn sim_registries(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("presets", PRESETS.iter().map(|p| p.name).collect::<Vec<_>>())?;
    d.set_item("selections", Selection::NAMES)?;
    d.set_item("patterns", Pattern::NAMES)?;
    d.set_item("processes", ProcessKind::NAMES)?;
    d.set_item("path_bits", PathBits::NAMES)?;
    d.set_item("gap_distributions", GapDistribution::NAMES)?;
    d.set_item("vl_arbiters", VlArbiter::NAMES)?;
    d.set_item("event_queues", Queue::NAMES)?;
    d.set_item("acks", AckMode::NAMES)?;
    d.set_item("mtu_bytes", MTU_BYTES)?;
    d.set_item("max_time_ps", MAX_TIME_PS)?;
    d.set_item("max_load", MAX_LOAD)?;
    Ok(d)
}

/// (name, paper, notes) of every switch parameter preset.
#[pyfunction]
fn sim_presets() -> Vec<(&'static str, &'static str, &'static str)> {
    PRESETS.iter().map(|p| (p.name, p.paper, p.notes)).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySimulation>()?;
    m.add_function(wrap_pyfunction!(sim_config_json, m)?)?;
    m.add_function(wrap_pyfunction!(sim_presets, m)?)?;
    m.add_function(wrap_pyfunction!(sim_registries, m)?)?;
    m.add_function(wrap_pyfunction!(sim_check_config, m)?)?;
    m.add_function(wrap_pyfunction!(sim_section_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sim_section_default, m)?)?;
    m.add_function(wrap_pyfunction!(sim_check_class, m)?)?;
    m.add_function(wrap_pyfunction!(sim_auto_warmup_default_json, m)?)?;
    Ok(())
}
