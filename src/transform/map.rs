//! `map`: replace values through a table written in the job (Minesweeper's state codes → symbols).
//! Values are matched by their text form, so `-1` in YAML matches an integer -1 in the source.

use std::collections::BTreeMap;

use super::{KvRow, Transform};
use crate::config::MapDefault;
use crate::error::{Error, Result};
use crate::value::Value;

pub struct MapTransform {
    values: BTreeMap<String, Option<String>>,
    default: MapDefault,
    mapped: u64,
    unmapped: u64,
}

impl MapTransform {
    pub fn new(values: BTreeMap<String, Option<String>>, default: MapDefault) -> MapTransform {
        MapTransform {
            values,
            default,
            mapped: 0,
            unmapped: 0,
        }
    }
}

impl Transform for MapTransform {
    fn name(&self) -> &'static str {
        "map"
    }

    fn push(&mut self, mut row: KvRow, out: &mut Vec<KvRow>) -> Result<()> {
        let key = row.value.as_text();
        match key.as_ref().and_then(|k| self.values.get(k)) {
            Some(replacement) => {
                self.mapped += 1;
                row.value = replacement.clone().map_or(Value::Null, Value::Text);
            }
            None if row.value.is_null() => {}
            None => {
                self.unmapped += 1;
                match self.default {
                    MapDefault::Keep => {}
                    MapDefault::Null => row.value = Value::Null,
                    MapDefault::Error => {
                        return Err(Error::Job(format!(
                            "map: value {} (attribute {}) has no entry in map.values (map.default: error)",
                            crate::error::shown(&row.value.to_string()),
                            crate::error::shown(&row.attribute)
                        )))
                    }
                }
            }
        }
        out.push(row);
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<KvRow>) -> Result<()> {
        Ok(())
    }

    fn report(&self) -> serde_json::Value {
        serde_json::json!({ "transform": "map", "mapped": self.mapped, "unmapped": self.unmapped })
    }
}

/// The report object of [`MapTransform`] as one line.
pub fn sentence(t: &serde_json::Value) -> String {
    let n = |key: &str| t.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0);
    format!(
        "map: {} values mapped, {} not in the table",
        n("mapped"),
        n("unmapped")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: Value) -> KvRow {
        KvRow {
            entity: vec![Value::Int(1)],
            attribute: "1".into(),
            value: v,
        }
    }

    #[test]
    fn maps_by_text_and_keeps_or_blanks_the_rest() {
        let table: BTreeMap<_, _> = [
            ("-1".to_string(), Some("?".to_string())),
            ("0".into(), None),
        ]
        .into();
        let mut keep = MapTransform::new(table.clone(), MapDefault::Keep);
        let mut out = Vec::new();
        for v in [Value::Int(-1), Value::Int(0), Value::Int(5)] {
            keep.push(row(v), &mut out).unwrap();
        }
        let got: Vec<Value> = out.into_iter().map(|r| r.value).collect();
        assert_eq!(got, [Value::Text("?".into()), Value::Null, Value::Int(5)]);

        let mut strict = MapTransform::new(table, MapDefault::Error);
        let err = strict
            .push(row(Value::Int(7)), &mut Vec::new())
            .unwrap_err();
        assert!(err.to_string().contains("value '7'"), "{err}");
    }
}
