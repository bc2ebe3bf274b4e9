//! Errors of the fabric layer. Parsers attach a [`Location`] (file and line) so
//! that every message about bad input says where the input is bad.

use std::fmt;
use std::path::PathBuf;

/// Where in the user's input a problem was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The file, when the input came from one.
    pub file: Option<PathBuf>,
    /// 1-based line number, when known.
    pub line: Option<usize>,
}

impl Location {
    /// A location in `file` at 1-based `line`.
    pub fn new(file: Option<PathBuf>, line: usize) -> Self {
        Location { file, line: Some(line) }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(p), Some(l)) => write!(f, "{}:{}", p.display(), l),
            (Some(p), None) => write!(f, "{}", p.display()),
            (None, Some(l)) => write!(f, "line {l}"),
            (None, None) => write!(f, "<input>"),
        }
    }
}

/// Everything that can go wrong while building, generating or reading a fabric.
#[derive(Debug, thiserror::Error)]
pub enum FabricError {
    /// Input text that does not follow its format, with where and why.
    #[error("{loc}: {msg}")]
    Parse {
        /// Where the bad input is.
        loc: Location,
        /// What is wrong and, where possible, what was expected.
        msg: String,
    },
    /// A port number outside `1..=num_ports` of its node.
    #[error("port {port} is out of range for node '{node}', which has ports 1..={num_ports}")]
    PortOutOfRange {
        /// Node name.
        node: String,
        /// Offending port number.
        port: u32,
        /// Ports the node has.
        num_ports: u8,
    },
    /// A port that is already cabled was given a second link.
    #[error("port {port} of node '{node}' is already connected to '{peer}' port {peer_port}")]
    PortInUse {
        /// Node name.
        node: String,
        /// Port number.
        port: u8,
        /// Node already on the other end.
        peer: String,
        /// Port already on the other end.
        peer_port: u8,
    },
    /// Two nodes with the same name (or GUID).
    #[error("duplicate node '{0}'")]
    DuplicateNode(String),
    /// A name that does not refer to any node.
    #[error("unknown node '{0}'")]
    UnknownNode(String),
    /// A link would connect a port to itself.
    #[error("a link cannot connect port {port} of '{node}' to itself")]
    SelfLoop {
        /// Node name.
        node: String,
        /// Port number.
        port: u8,
    },
    /// The fabric is not one connected component.
    #[error("the fabric is disconnected: {detail}")]
    Disconnected {
        /// Which nodes cannot be reached.
        detail: String,
    },
    /// An impossible generator or model parameter.
    #[error("invalid parameter '{key}': {msg}")]
    InvalidParameter {
        /// Parameter name as the user spells it.
        key: String,
        /// Why it is invalid.
        msg: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl FabricError {
    /// A parse error at `loc`.
    pub fn parse(loc: Location, msg: impl Into<String>) -> Self {
        FabricError::Parse { loc, msg: msg.into() }
    }

    /// Attaches a location to an error raised while applying one line of a file.
    pub fn at(self, loc: Location) -> Self {
        match self {
            FabricError::Parse { .. } | FabricError::Io { .. } => self,
            other => FabricError::Parse { loc, msg: other.to_string() },
        }
    }

    /// An invalid parameter error.
    pub fn param(key: impl Into<String>, msg: impl Into<String>) -> Self {
        FabricError::InvalidParameter { key: key.into(), msg: msg.into() }
    }
}
