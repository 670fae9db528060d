//! `--var NAME=VALUE` and `${NAME}` in the job's operator SQL (`where`, `on`, entity,
//! attribute and value expressions): one job file for every delta window of a migration
//! (`changed: "s.modified > '${since}'"`).
//!
//! Values are operator input, pasted into operator SQL exactly like the expression around
//! them; data never passes through here. A `${NAME}` that no `--var` defines refuses the job,
//! naming the key and the variable: an empty window must never pass for a full one. `$${` is
//! a literal `${`.

use std::collections::BTreeMap;

use super::file::{EntityFile, JobFile};

/// Variables given on the command line, by name.
pub type Vars = BTreeMap<String, String>;

/// Parse `NAME=VALUE` (the value may contain `=`).
pub fn parse_var(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("--var {text}: expected NAME=VALUE"))?;
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "--var {text}: the name must be letters, digits and _"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Replace every `${NAME}` in the job's operator SQL; `Err((key, message))` for the first
/// undefined variable.
pub fn substitute(raw: &mut JobFile, vars: &Vars) -> Result<(), (String, String)> {
    let apply = |key: &str, text: &mut String| -> Result<(), (String, String)> {
        *text = expand(text, vars).map_err(|m| (key.to_string(), m))?;
        Ok(())
    };
    if let Some(filter) = raw.source.filter.as_mut() {
        apply("source.where", filter)?;
    }
    if let Some(changed) = raw.source.changed.as_mut() {
        apply("source.changed", changed)?;
    }
    for (i, join) in raw.source.joins.iter_mut().enumerate() {
        apply(&format!("source.joins[{i}].on"), &mut join.on)?;
    }
    apply("attribute", &mut raw.attribute)?;
    apply("value", &mut raw.value)?;
    let entity = match &mut raw.entity {
        super::file::OneOrMany::One(e) => vec![e],
        super::file::OneOrMany::Many(items) => items.iter_mut().collect(),
    };
    for (i, item) in entity.into_iter().enumerate() {
        let text = match item {
            EntityFile::Column(c) => c,
            EntityFile::Expr(e) => &mut e.expr,
        };
        apply(&format!("entity[{i}]"), text)?;
    }
    Ok(())
}

fn expand(text: &str, vars: &Vars) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("${") {
            let end = tail
                .find('}')
                .ok_or_else(|| format!("'${{' without a closing '}}' in {text:?}"))?;
            let name = &tail[..end];
            let value = vars.get(name).ok_or_else(|| {
                format!("variable ${{{name}}} is not defined: pass --var {name}=VALUE")
            })?;
            out.push_str(value);
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn variables_are_replaced_and_undefined_ones_refused() {
        let v = vars(&[("since", "2026-01-01"), ("n", "3")]);
        assert_eq!(
            expand("s.modified > '${since}' AND s.k < ${n}", &v).as_deref(),
            Ok("s.modified > '2026-01-01' AND s.k < 3")
        );
        assert_eq!(
            expand("a $$ b $${x} $1", &v).as_deref(),
            Ok("a $$ b ${x} $1")
        );
        let err = expand("x > ${until}", &v).expect_err("undefined");
        assert!(
            err.contains("${until}") && err.contains("--var until="),
            "{err}"
        );
        assert!(expand("x > ${since", &v).is_err());
    }

    #[test]
    fn var_flags_parse_name_and_value() {
        assert_eq!(
            parse_var("since=a=b"),
            Ok(("since".to_string(), "a=b".to_string()))
        );
        assert!(parse_var("novalue").is_err());
        assert!(parse_var("bad name=1").is_err());
    }
}
