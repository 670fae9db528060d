//! `run --conflicts FILE`: every entity/attribute pair with more than one distinct value, in
//! full, as CSV (the report only counts them, and `aggregate: error` lists the first ten).
//!
//! One read-only query over the source, before the job runs, so a job that `aggregate: error`
//! refuses still leaves the file behind to fix the data from. Values are the source's, before
//! any transform.

use crate::dialect::query;
use std::path::Path;

use crate::backend::Backend;
use crate::config::Job;
use crate::error::Result;
use crate::value::Value;

/// Query the conflicts and write them to `path`: the entity columns, `attribute`, `values`
/// (how many distinct values), then `value_1` … `value_N`. Returns the number of pairs.
pub async fn export(backend: &mut dyn Backend, job: &Job, path: &Path) -> Result<usize> {
    let dialect = backend.dialect();
    // Names and values compared as the run compares them: by their bytes, whatever the
    // collation (a listing: the exact key's cost does not matter here).
    let mut source = crate::plan::source_query(job);
    if let Some(exact) = dialect.exact_text_key(&job.attribute) {
        source.attribute_key = Some(exact);
    }
    // The value and the keys read as a run reads them (Session::describe_value,
    // plan::source::read_keys): a MONEY or MariaDB FLOAT key listed as the run writes it,
    // not rounded.
    let mut session = crate::execute::Session::new(&mut *backend, false);
    let declared = session.describe_value(&mut source).await.map_err(|e| {
        e.with_context(&format!("reading the value's type in {}", job.source.table))
    })?;
    session
        .describe_keys(&mut source)
        .await
        .map_err(|e| e.with_context(&format!("reading the key types in {}", job.source.table)))?;
    source.value_order = query::value_order(dialect, declared.as_deref());
    let rows = backend
        .query(&query::conflicting_values(dialect, &source))
        .await
        .map_err(|e| e.with_context(&format!("listing the conflicts in {}", job.source.table)))?;
    let width = job.entity.len();
    // A float as the run's cells and messages show it (PostgreSQL's `1e+20`).
    let float_text = declared.as_deref().and_then(|t| dialect.float_text(t));
    // Rows come ordered by pair: consecutive rows with the same key and attribute are one pair.
    let mut pairs: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for row in rows {
        let text = |v: Option<&Value>| v.and_then(Value::as_text).unwrap_or_default();
        let mut key: Vec<String> = row.iter().take(width).map(|v| text(Some(v))).collect();
        key.push(dialect.decode_attribute_key(text(row.get(width))));
        let value = match row.get(width + 1) {
            Some(float @ Value::Float(_)) => crate::execute::stream::value_shown(float, float_text),
            other => text(other),
        };
        match pairs.last_mut() {
            Some((last, values)) if *last == key => values.push(value),
            _ => pairs.push((key, vec![value])),
        }
    }
    let most = pairs.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let header: Vec<String> = job
        .entity
        .iter()
        .map(|e| e.name.clone())
        .chain(["attribute".to_string(), "values".to_string()])
        .chain((1..=most).map(|i| format!("value_{i}")))
        .collect();
    let mut csv = csv_line(&header);
    for (key, values) in &pairs {
        let mut fields = key.clone();
        fields.push(values.len().to_string());
        fields.extend(values.iter().cloned());
        csv.push_str(&csv_line(&fields));
    }
    std::fs::write(path, csv).map_err(|source| crate::Error::Io {
        context: format!("writing conflicts to {}", path.display()),
        source,
    })?;
    Ok(pairs.len())
}

/// RFC 4180: a field with a comma, quote, line break or edge space is quoted, quotes doubled.
fn csv_line(fields: &[String]) -> String {
    let quoted: Vec<String> = fields
        .iter()
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) || f.trim() != f {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect();
    format!("{}\r\n", quoted.join(","))
}

#[cfg(test)]
mod tests {
    use super::csv_line;

    #[test]
    fn fields_that_need_it_are_quoted() {
        let line = csv_line(&["a".into(), "b,c".into(), "say \"hi\"".into(), " x".into()]);
        assert_eq!(line, "a,\"b,c\",\"say \"\"hi\"\"\",\" x\"\r\n");
    }
}
