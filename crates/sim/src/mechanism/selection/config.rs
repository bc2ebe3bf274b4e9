//! How a selection policy is written in a config: its name alone
//! (`selection = "lfu"`), or a table with its name and parameters
//! (`selection = { kind = "adaptive-by-credits", prefer_first_within = 4 }`).

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What LFU counts per output port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LfuCounters {
    /// One counter per (port, VL), as paper 000 §3.3 keeps them.
    PortVl,
    /// One counter per port, shared by its VLs.
    Port,
}

/// A selection policy and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectionConfig {
    /// Registry name: `deterministic`, `adaptive-by-credits` or `lfu`.
    pub kind: String,
    /// `adaptive-by-credits`: keep the DLID's own path unless another option
    /// has more than this many more credits (64-byte blocks); 0 = always the
    /// most credits.
    pub prefer_first_within: Option<u32>,
    /// `lfu`: what the use counters count (`port-vl` or `port`).
    pub counters: Option<LfuCounters>,
    /// `fully-adaptive`: most routing options per destination (paper 002's
    /// MR): the escape option and up to `max_options − 1` adaptive ones, from
    /// the lowest adaptive LID offsets; unset = every labelled LID.
    pub max_options: Option<u8>,
}

impl SelectionConfig {
    /// The policy `kind` with its default parameters.
    pub fn named(kind: &str) -> Self {
        SelectionConfig { kind: kind.to_string(), prefer_first_within: None, counters: None, max_options: None }
    }

    fn has_parameters(&self) -> bool {
        self.prefer_first_within.is_some() || self.counters.is_some() || self.max_options.is_some()
    }
}

impl From<&str> for SelectionConfig {
    fn from(kind: &str) -> Self {
        SelectionConfig::named(kind)
    }
}

impl From<String> for SelectionConfig {
    fn from(kind: String) -> Self {
        SelectionConfig::named(&kind)
    }
}

/// The table form.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prefer_first_within: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    counters: Option<LfuCounters>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_options: Option<u8>,
}

impl Serialize for SelectionConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.has_parameters() {
            Table {
                kind: self.kind.clone(),
                prefer_first_within: self.prefer_first_within,
                counters: self.counters,
                max_options: self.max_options,
            }
            .serialize(s)
        } else {
            s.serialize_str(&self.kind)
        }
    }
}

impl<'de> Deserialize<'de> for SelectionConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NameOrTable;
        impl<'de> Visitor<'de> for NameOrTable {
            type Value = SelectionConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a selection policy name, or a table with `kind` and the policy's parameters")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(SelectionConfig::named(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(SelectionConfig { kind: t.kind, prefer_first_within: t.prefer_first_within, counters: t.counters, max_options: t.max_options })
            }
        }
        d.deserialize_any(NameOrTable)
    }
}
