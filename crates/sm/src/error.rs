//! Errors of the subnet manager. Each names what the user must change.

use std::path::PathBuf;

use ibnetsim_fabric::{FabricError, Location};

/// Everything that can go wrong while configuring, routing or analysing a subnet.
#[derive(Debug, thiserror::Error)]
pub enum SmError {
    /// A problem with the fabric itself.
    #[error(transparent)]
    Fabric(#[from] FabricError),
    /// A routing engine name that is not registered.
    #[error("unknown routing engine '{name}'{} (known engines: {known})", chain_hint(chain.as_deref()))]
    UnknownEngine {
        /// What the user asked for.
        name: String,
        /// Comma-separated list of valid names.
        known: String,
        /// The chain `name` is a member of, if the user gave several engines.
        chain: Option<String>,
    },
    /// More LIDs are needed than the unicast LID space holds.
    #[error("LMC {lmc} needs {needed} unicast LIDs but only {max} exist (0x0001-0xbfff); {}", lmc_hint(*.fits))]
    LmcTooLarge {
        /// Requested LMC.
        lmc: u8,
        /// LIDs the fabric would need.
        needed: u64,
        /// LIDs available.
        max: u64,
        /// The largest LMC whose LIDs fit, when known.
        fits: Option<u8>,
    },
    /// An engine cannot handle this fabric (e.g. `dor` on an irregular one).
    #[error("routing engine '{engine}' cannot route this fabric: {reason}")]
    Unsupported {
        /// Engine name.
        engine: String,
        /// Why.
        reason: String,
    },
    /// A destination LID that some switch cannot reach.
    #[error("LID {lid:#06x} ({target}) is unreachable from switch '{switch}'")]
    Unroutable {
        /// Switch name.
        switch: String,
        /// Destination LID.
        lid: u16,
        /// Node and port owning the LID.
        target: String,
    },
    /// A multicast group that cannot be set up: bad MLID, bad member, or
    /// members no tree can join.
    #[error("multicast group {mlid:#06x}{}: {reason}", member_hint(member.as_deref()))]
    Multicast {
        /// The group's MLID.
        mlid: u16,
        /// The member at fault, as the user named it or as `name:port`.
        member: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// A bad option value.
    #[error("invalid option '{key}': {msg}")]
    InvalidOption {
        /// Option name as the user spells it.
        key: String,
        /// What is wrong and what is expected.
        msg: String,
    },
    /// Malformed input file.
    #[error("{loc}: {msg}")]
    Parse {
        /// File and line.
        loc: Location,
        /// What is wrong.
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

fn chain_hint(chain: Option<&str>) -> String {
    chain.map(|c| format!(" in the chain '{c}'")).unwrap_or_default()
}

fn member_hint(member: Option<&str>) -> String {
    member.map(|m| format!(", member '{m}'")).unwrap_or_default()
}

fn lmc_hint(fits: Option<u8>) -> String {
    match fits {
        Some(l) => format!("use LMC {l} or lower (the --lmc option, or `lmc` in a scenario)"),
        None => "lower the LMC".to_string(),
    }
}

impl SmError {
    /// A parse error at `loc`.
    pub fn parse(loc: Location, msg: impl Into<String>) -> Self {
        SmError::Parse { loc, msg: msg.into() }
    }

    /// An invalid option error.
    pub fn option(key: impl Into<String>, msg: impl Into<String>) -> Self {
        SmError::InvalidOption { key: key.into(), msg: msg.into() }
    }
}

/// Reads an input file with [`ibnetsim_fabric::io::read_text_file`] (regular
/// files of bounded size; bytes that are not UTF-8 are replaced, so the
/// parser names the line if they matter). `what` names the kind of file
/// expected, e.g. "a forwarding-table dump".
pub fn read_text(path: &std::path::Path, what: &str) -> Result<String, SmError> {
    use ibnetsim_fabric::io::{read_text_file, TextFileError};
    read_text_file(path).map_err(|e| match e {
        TextFileError::Io(source) => SmError::Io { path: path.to_path_buf(), source },
        e => SmError::parse(Location { file: Some(path.to_path_buf()), line: None }, e.message(what)),
    })
}
