//! Text a person reads: report objects as sentences, and tables aligned by the width a
//! terminal gives each character (CJK and emoji take two columns), with cut values marked.
//!
//! The `--json` report keeps the raw objects; this is only how the human summary shows them.

use serde_json::Value as Json;
use unicode_width::UnicodeWidthChar;

/// Characters of a name from the data shown in a message before it is cut: enough for any
/// column name that fits a server's identifier limit (SQL Server's 128 the longest).
pub const SHOWN_CHARS: usize = 128;

/// A name or value from the data as a message shows it: quoted and escaped (so a newline in
/// it cannot break the one-line rule), and cut with its length when long, so a 10 MB
/// attribute name makes `'NNNN…' (10485760 bytes)`, not a 10 MB line.
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => format!("'{}'", text.escape_debug()),
        Some((cut, _)) => format!("'{}…' ({} bytes)", text[..cut].escape_debug(), text.len()),
    }
}

/// Widest a preview cell is drawn, in terminal columns; longer values are cut and end in `…`.
pub const MAX_CELL_WIDTH: usize = 24;

/// A transform's report object as one line, `name: key value, …`: how the summary shows the
/// object of a transform that gives no sentence of its own (`crate::transform::sentence`).
pub fn fields_sentence(t: &Json) -> String {
    let name = t
        .get("transform")
        .and_then(Json::as_str)
        .unwrap_or("transform");
    let fields: Vec<String> = t
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| *k != "transform")
        .map(|(k, v)| format!("{} {}", k.replace('_', " "), plain(v)))
        .collect();
    format!("{name}: {}", fields.join(", "))
}

/// A JSON scalar without its quotes.
pub fn plain(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Columns a string takes on a terminal (control characters count as none).
pub fn display_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `s` cut to at most `max` terminal columns, ending in `…` when anything was cut. Line
/// breaks and tabs are shown as `↵` and `→`, so one value stays on one line.
pub fn fit(s: &str, max: usize) -> String {
    let shown: String = s
        .chars()
        .map(|c| match c {
            '\n' | '\r' => '↵',
            '\t' => '→',
            c => c,
        })
        .collect();
    if display_width(&shown) <= max {
        return shown;
    }
    let mut out = String::new();
    let mut used = 0;
    for c in shown.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// A plain text table: a header, a rule, the rows; columns padded to the same display width.
pub fn render_table(header: &[String], rows: &[Vec<String>]) -> String {
    let cells: Vec<Vec<String>> = std::iter::once(header)
        .chain(rows.iter().map(Vec::as_slice))
        .map(|r| r.iter().map(|c| fit(c, MAX_CELL_WIDTH)).collect())
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            cells
                .iter()
                .map(|r| r.get(c).map_or(0, |s| display_width(s)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in cells.iter().enumerate() {
        let line: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(c, w)| {
                let s = row.get(c).map_or("", String::as_str);
                format!("{s}{}", " ".repeat(w - display_width(s)))
            })
            .collect();
        out.push_str(line.join(" | ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("-+-"));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_reads_as_its_fields() {
        let other = serde_json::json!({"transform":"trim","rows_changed":4});
        assert_eq!(fields_sentence(&other), "trim: rows changed 4");
    }

    #[test]
    fn wide_characters_align_and_cut_values_are_marked() {
        assert_eq!(display_width("色"), 2);
        assert_eq!(display_width("🙂a"), 3);
        let long = "x".repeat(30);
        assert_eq!(fit(&long, 24), format!("{}…", "x".repeat(23)));
        assert_eq!(display_width(&fit(&"色".repeat(20), 24)), 23);
        assert_eq!(fit("a\nb", 24), "a↵b");
        let table = render_table(
            &["k".into(), "Farbe".into(), "n".into()],
            &[
                vec!["1".into(), "赤い色".into(), "2".into()],
                vec!["2".into(), "red".into(), "3".into()],
            ],
        );
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "k | Farbe  | n");
        assert_eq!(lines[1], "--+--------+--");
        assert_eq!(lines[2], "1 | 赤い色 | 2");
        assert_eq!(lines[3], "2 | red    | 3");
        let bars: Vec<usize> = lines
            .iter()
            .map(|l| display_width(&l[..l.rfind(['|', '+']).unwrap()]))
            .collect();
        assert!(bars.iter().all(|b| *b == bars[0]), "{table}");
    }
}
