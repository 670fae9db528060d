//! The summary line of a `sudoku_solve` report object: `sudoku_solve: 6 puzzles — 3 solved, …`.

use crate::display::plain;
use serde_json::Value as Json;

/// The object of the streaming solver or of the in-database engines as one sentence.
pub fn sentence(t: &Json) -> String {
    let n = |key: &str| t.get(key).and_then(Json::as_u64).unwrap_or(0);
    let puzzles = n("puzzles");
    let unsolved: &[Json] = t
        .get("unsolved")
        .and_then(Json::as_array)
        .map_or(&[], Vec::as_slice);
    // The puzzles with this status that the report lists: `(4, 7: detail)`.
    let which = |status: &str| -> String {
        let listed: Vec<String> = unsolved
            .iter()
            .filter(|u| u.get("status").and_then(Json::as_str) == Some(status))
            .map(|u| {
                let puzzle = u.get("puzzle").map(plain).unwrap_or_default();
                match u.get("detail").and_then(Json::as_str) {
                    Some(d) if !d.is_empty() => format!("{puzzle}: {d}"),
                    _ => puzzle,
                }
            })
            .collect();
        if listed.is_empty() {
            String::new()
        } else {
            format!(" ({})", listed.join("; "))
        }
    };
    let mut parts = vec![format!("{} solved", n("solved"))];
    for (key, words) in [
        ("no_solution", "no solution"),
        ("multiple_solutions", "several solutions"),
        ("invalid", "invalid"),
    ] {
        if n(key) > 0 {
            parts.push(format!("{} {words}{}", n(key), which(key)));
        }
    }
    if n("not_written") > 0 {
        parts.push(format!(
            "{} not written (no solution, several, or invalid)",
            n("not_written")
        ));
    }
    let engine = match t.get("engine").and_then(Json::as_str) {
        Some("sql") => " in the database",
        _ => "",
    };
    let status = t
        .get("status_table")
        .and_then(Json::as_str)
        .map(|s| format!("; every verdict in {s}"))
        .unwrap_or_default();
    format!(
        "sudoku_solve{engine}: {puzzles} puzzle{} — {}{status}",
        if puzzles == 1 { "" } else { "s" },
        parts.join(", ")
    )
}
