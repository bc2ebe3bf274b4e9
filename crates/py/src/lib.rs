//! `ibnetsim._core`: the only crate that knows about Python.
//!
//! Python classes here are thin handles on core objects (`Fabric`, `Subnet`);
//! the Python package wraps them in friendlier classes. Every long call
//! releases the interpreter (`Python::detach`), and every core error goes
//! through `errors.rs`, the single mapping to Python exceptions.
use pyo3::prelude::*;

mod errors;
mod fabric;
mod port_results;
mod qos;
mod sim;
mod subnet;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Set by build.rs: the commit of this build, or "unknown" outside a checkout.
    m.add("BUILD_COMMIT", env!("IBNETSIM_BUILD_COMMIT"))?;
    // Benchmarks say which build they timed: a debug build is many times slower.
    m.add("BUILD_PROFILE", if cfg!(debug_assertions) { "debug" } else { "release" })?;
    errors::register(m)?;
    fabric::register(m)?;
    subnet::register(m)?;
    sim::register(m)?;
    qos::register(m)?;
    Ok(())
}
