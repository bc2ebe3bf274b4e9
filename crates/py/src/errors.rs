//! The one place where core errors become Python exceptions.
//!
//! All exceptions derive from `IbnetsimError` (a `ValueError`); I/O failures
//! become Python's own `FileNotFoundError`/`PermissionError`/`OSError`.

use ibnetsim_fabric::FabricError;
use ibnetsim_sm::SmError;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::create_exception;

create_exception!(ibnetsim._core, IbnetsimError, PyValueError, "Base class of every ibnetsim error.");
create_exception!(ibnetsim._core, TopologyError, IbnetsimError, "A malformed or impossible fabric.");
create_exception!(ibnetsim._core, RoutingError, IbnetsimError, "The subnet manager could not route or load tables.");
create_exception!(ibnetsim._core, ConfigError, IbnetsimError, "A bad configuration key or value.");
create_exception!(ibnetsim._core, DeadlockError, IbnetsimError, "A simulation stopped in a deadlock.");
create_exception!(
    ibnetsim._core,
    StarvationError,
    DeadlockError,
    "A simulation stopped because packets wait for a VL that no VL arbitration table serves."
);

fn io_error(path: &std::path::Path, e: &std::io::Error) -> PyErr {
    let msg = format!("{}: {}", path.display(), e);
    let args = (e.raw_os_error().unwrap_or(0), e.to_string(), path.display().to_string());
    match e.kind() {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(args),
        std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(args),
        _ => PyOSError::new_err(msg),
    }
}

/// Converts a fabric error.
pub fn fabric_err(e: FabricError) -> PyErr {
    match &e {
        FabricError::Io { path, source } => io_error(path, source),
        _ => TopologyError::new_err(e.to_string()),
    }
}

/// Converts a subnet-manager error.
pub fn sm_err(e: SmError) -> PyErr {
    match e {
        SmError::Fabric(f) => fabric_err(f),
        SmError::Io { ref path, ref source } => io_error(path, source),
        SmError::InvalidOption { .. } | SmError::UnknownEngine { .. } | SmError::Multicast { .. } => ConfigError::new_err(e.to_string()),
        _ => RoutingError::new_err(e.to_string()),
    }
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IbnetsimError", py.get_type::<IbnetsimError>())?;
    m.add("TopologyError", py.get_type::<TopologyError>())?;
    m.add("RoutingError", py.get_type::<RoutingError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("StarvationError", py.get_type::<StarvationError>())?;
    Ok(())
}
