//! Input buffer organisations: how the packets of one switch input (port,
//! VL) buffer reach the crossbar (the `switch.input_buffer` key).
//!
//! * [`fifo`] — the buffer is one FIFO and only its head may cross: a head
//!   that waits for a busy output holds back every packet behind it
//!   (head-of-line blocking), as in a plain IBA VL buffer.
//! * [`voq`] — virtual output queues: inside the buffer, one queue per output
//!   port, all sharing the buffer's space and so its credits. A packet waits
//!   only behind earlier packets of its buffer that want one of its outputs.
//!
//! Either may send up to `switch.max_transfers_per_input` packets through one
//! crossbar input at once, each to a different output. Dispatch is a `match`
//! on [`InputBuffer`], no trait objects.

pub mod fifo;
pub mod voq;

use crate::error::SimError;

/// The input buffer organisations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputBuffer {
    /// One FIFO per (port, VL) buffer; only the head may cross.
    Fifo,
    /// One queue per output port inside each (port, VL) buffer.
    Voq,
}

impl InputBuffer {
    /// Registry names, as the config spells them.
    pub const NAMES: &'static [&'static str] = &["fifo", "voq"];

    /// The organisation called `name`; the error names `key` and lists the valid names.
    pub fn from_name(name: &str, key: &str) -> Result<Self, SimError> {
        match name {
            "fifo" => Ok(InputBuffer::Fifo),
            "voq" => Ok(InputBuffer::Voq),
            _ => Err(SimError::config(key, format!("unknown input buffer organisation '{name}' (known: {})", Self::NAMES.join(", ")))),
        }
    }

    /// Its registry name.
    pub fn name(self) -> &'static str {
        match self {
            InputBuffer::Fifo => "fifo",
            InputBuffer::Voq => "voq",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InputBuffer;

    #[test]
    fn names_resolve_and_unknown_names_the_key() {
        for name in InputBuffer::NAMES {
            assert_eq!(InputBuffer::from_name(name, "switch.input_buffer").unwrap().name(), *name);
        }
        let e = InputBuffer::from_name("oq", "switch.input_buffer").unwrap_err().to_string();
        assert!(e.contains("switch.input_buffer") && e.contains("'oq'") && e.contains("fifo, voq"), "{e}");
    }
}
