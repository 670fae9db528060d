//! Hand-written `Deserialize` for the keys that take one of a few words or shapes.
//!
//! Derived impls explain a wrong value in Rust's terms: an untagged enum says only `data did
//! not match any variant of untagged enum SplitFile`, at the parent key, and a unit enum given
//! a list says `expected a YAML tag starting with '!'`. These visitors are called in place, so
//! serde_yaml reports the key's own path and line, and their `expecting` text is what the key
//! accepts, which [`yaml_error`] words as
//! `target.split: expected off, auto or a number of columns, got a sequence`.

use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{
    Aggregate, ColumnsFile, Distribute, EmptyNames, EntityExprFile, EntityFile, IfExists,
    InferNumbers, InferWidths, JoinKind, OnCollision, OnMissing, OnNewAttributes, OneOrMany, Order,
    SplitFile, StrategyName,
};
use crate::config::ConfigError;
use crate::secrets::shown_redacted;

/// A serde_yaml error as a [`ConfigError`] in job-file words.
pub fn yaml_error(path: &str, err: &serde_yaml::Error) -> ConfigError {
    // serde speaks of "fields"; job files have "keys". Drop serde's own trailing location.
    let mut message = err.to_string();
    if let Some(cut) = message.find(" at line ") {
        message.truncate(cut);
    }
    let message = redact_quoted(&expected_first(
        &message
            .replace("unknown field `", "unknown key `")
            .replace("missing field `", "missing required key `"),
    ));
    match err.location() {
        Some(loc) => ConfigError::Yaml {
            path: path.to_string(),
            line: loc.line(),
            column: loc.column(),
            message,
        },
        None => ConfigError::YamlNoLocation {
            path: path.to_string(),
            message,
        },
    }
}

/// serde's `key: invalid type: sequence, expected a string` as `key: expected a string, got a
/// sequence`: what the key accepts first, as every other config message puts it.
fn expected_first(message: &str) -> String {
    for lead in ["invalid type: ", "invalid value: "] {
        let Some(start) = message.find(lead) else {
            continue;
        };
        let rest = &message[start + lead.len()..];
        if let Some(cut) = rest.find(", expected ") {
            let got = &rest[..cut];
            let article = if got.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            // A scalar is described, never echoed: it may be a connection string with its
            // password, written under the wrong key.
            let got = match got {
                "sequence" | "map" | "unit value" => format!("{article} {got}"),
                s if s.starts_with("string ") => "a string".to_string(),
                other => other.to_string(),
            };
            return format!(
                "{}expected {}, got {got}",
                &message[..start],
                &rest[cut + ", expected ".len()..]
            );
        }
    }
    message.to_string()
}

/// Every quoted part of `message` (`"…"`, `` `…` ``) that may be a connection string, with
/// its password hidden: serde's messages quote what they were given (an unknown key, a
/// variant), and a password must not ride along.
fn redact_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`']) {
        let quote = &rest[open..=open];
        let Some(len) = rest[open + 1..].find(quote) else {
            break;
        };
        let inner = &rest[open + 1..open + 1 + len];
        out.push_str(&rest[..=open]);
        match crate::secrets::may_be_connection_string(inner) {
            true => out.push_str(&crate::secrets::redact_or_kind(inner)),
            false => out.push_str(inner),
        }
        out.push_str(quote);
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
    out
}

/// The error for a word that is not one of the key's words.
fn not_one_of<E: de::Error>(expecting: &str, got: &str) -> E {
    E::custom(format!("expected {expecting}, got {}", shown_redacted(got)))
}

/// `Deserialize` for a unit enum written as one of its words.
macro_rules! words {
    ($ty:ident, $expecting:literal, { $($word:literal => $variant:ident),+ $(,)? }) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Words;
                impl Visitor<'_> for Words {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        match v {
                            $($word => Ok($ty::$variant),)+
                            other => Err(not_one_of($expecting, other)),
                        }
                    }
                }
                d.deserialize_str(Words)
            }
        }
    };
}

words!(JoinKind, "inner or left", { "inner" => Inner, "left" => Left });
words!(Aggregate, "max, min or error", { "max" => Max, "min" => Min, "error" => Error });
words!(Order, "natural, alphabetical or frequency", {
    "natural" => Natural, "alphabetical" => Alphabetical, "frequency" => Frequency,
});
words!(EmptyNames, "skip or error", { "skip" => Skip, "error" => Error });
words!(OnCollision, "rename or error", { "rename" => Rename, "error" => Error });
words!(IfExists, "fail, replace, append or merge", {
    "fail" => Fail, "replace" => Replace, "append" => Append, "merge" => Merge,
});
words!(OnMissing, "keep or delete", { "keep" => Keep, "delete" => Delete });
words!(Distribute, "auto or off", { "auto" => Auto, "off" => Off });
words!(OnNewAttributes, "add, error or ignore", {
    "add" => Add, "error" => Error, "ignore" => Ignore,
});
words!(InferWidths, "headroom or exact", { "headroom" => Headroom, "exact" => Exact });
words!(InferNumbers, "value or text", { "value" => Value, "text" => Text });
words!(StrategyName, "auto, pushdown or stream", {
    "auto" => Auto, "pushdown" => Pushdown, "stream" => Stream,
});

const SPLIT: &str = "off, auto or a number of columns";

impl<'de> Deserialize<'de> for SplitFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Split;
        impl Visitor<'_> for Split {
            type Value = SplitFile;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(SPLIT)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SplitFile, E> {
                match v {
                    "off" => Ok(SplitFile::Off),
                    "auto" => Ok(SplitFile::Auto),
                    other => Err(not_one_of(SPLIT, other)),
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SplitFile, E> {
                match usize::try_from(v) {
                    Ok(n) if n > 0 => Ok(SplitFile::Columns(n)),
                    _ => Err(not_one_of(SPLIT, &v.to_string())),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SplitFile, E> {
                match u64::try_from(v) {
                    Ok(n) => self.visit_u64(n),
                    Err(_) => Err(not_one_of(SPLIT, &v.to_string())),
                }
            }
        }
        d.deserialize_any(Split)
    }
}

const COLUMNS: &str = "discover or a list of attribute names";

impl<'de> Deserialize<'de> for ColumnsFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Columns;
        impl<'de> Visitor<'de> for Columns {
            type Value = ColumnsFile;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(COLUMNS)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ColumnsFile, E> {
                match v {
                    "discover" => Ok(ColumnsFile::Discover),
                    other => Err(not_one_of(COLUMNS, other)),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ColumnsFile, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(ColumnsFile::List)
            }
        }
        d.deserialize_any(Columns)
    }
}

const ENTITY: &str = "a column or { expr: SQL, name: column }";
const ENTITIES: &str = "a column, { expr: SQL, name: column } or a list of them";

/// An entity key from a string or a map; `expecting` says whether a list was also allowed.
struct Entity(&'static str);

impl<'de> Visitor<'de> for Entity {
    type Value = EntityFile;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<EntityFile, E> {
        Ok(EntityFile::Column(v.to_string()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<EntityFile, A::Error> {
        EntityExprFile::deserialize(MapAccessDeserializer::new(map)).map(EntityFile::Expr)
    }
}

impl<'de> Deserialize<'de> for EntityFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Entity(ENTITY))
    }
}

impl<'de> Deserialize<'de> for OneOrMany<EntityFile> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entities;
        impl<'de> Visitor<'de> for Entities {
            type Value = OneOrMany<EntityFile>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(ENTITIES)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Entity(ENTITIES).visit_str(v).map(OneOrMany::One)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Entity(ENTITIES).visit_map(map).map(OneOrMany::One)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(OneOrMany::Many)
            }
        }
        d.deserialize_any(Entities)
    }
}
