use super::*;

const DOCS: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
const SOLUTION: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

fn spec() -> SudokuSolveSpec {
    SudokuSolveSpec {
        engine_sql: false,
        sql_join: false,
        box_size: None,
        error_on_unsolved: false,
        status_table: None,
    }
}

fn transform(spec: SudokuSolveSpec) -> SudokuTransform {
    let t = SudokuTransform::new(spec, &TableRef::parse("GRID").expect("name"));
    let discovery = Discovery {
        attributes: (1..=8)
            .map(|c| Discovered {
                name: c.to_string(),
                rows: 1,
                values: 1,
                widths: None,
            })
            .collect(),
        ..Discovery::default()
    };
    let declared = t.attributes(discovery).expect("numeric columns");
    let names: Vec<&str> = declared
        .attributes
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["1", "2", "3", "4", "5", "6", "7", "8", "9"]);
    t
}

/// Key–value givens of an 81-character line, as the engine would feed them.
fn givens(puzzle: i64, line: &str) -> Vec<KvRow> {
    line.chars()
        .enumerate()
        .filter(|(_, ch)| ch.is_ascii_digit() && *ch != '0')
        .map(|(i, ch)| KvRow {
            entity: vec![Value::Int(puzzle), Value::Int((i / 9 + 1) as i64)],
            attribute: (i % 9 + 1).to_string(),
            value: Value::Int(i64::from(ch as u8 - b'0')),
        })
        .collect()
}

fn run(t: &mut SudokuTransform, rows: Vec<KvRow>) -> Result<Vec<KvRow>> {
    let mut out = Vec::new();
    for row in rows {
        t.push(row, &mut out)?;
    }
    t.finish(&mut out)?;
    Ok(out)
}

#[test]
fn solves_and_emits_every_cell_in_entity_order() {
    let mut t = transform(spec());
    let out = run(&mut t, givens(7, DOCS)).expect("solves");
    assert_eq!(out.len(), 81);
    let line: String = out.iter().map(|r| r.value.to_string()).collect();
    assert_eq!(line, SOLUTION);
    assert_eq!(out[80].entity, [Value::Int(7), Value::Int(9)]);
    assert_eq!(out[80].attribute, "9");
    let report = t.report();
    assert_eq!(
        (report["solved"].as_u64(), report["puzzles"].as_u64()),
        (Some(1), Some(1))
    );
    let status = t.side_tables().remove(0);
    assert_eq!(status.table.to_string(), "GRID_status");
    assert_eq!(status.rows[0][1], Value::Text("solved".into()));
}

#[test]
fn unsolved_puzzles_are_recorded_not_emitted() {
    let mut rows = givens(1, &format!("{}5", ".".repeat(80)));
    let mut dup = givens(2, DOCS);
    dup.push(KvRow {
        entity: vec![Value::Int(2), Value::Int(1)],
        attribute: "3".into(),
        value: Value::Int(5),
    });
    let mut clash = givens(3, DOCS);
    clash.push(KvRow {
        entity: vec![Value::Int(3), Value::Int(1)],
        attribute: "1".into(),
        value: Value::Int(6),
    });
    let mut range = givens(4, DOCS);
    range[0].value = Value::Int(10);
    rows.extend(dup);
    rows.extend(clash);
    rows.extend(range);
    let mut t = transform(spec());
    assert!(run(&mut t, rows).expect("skip mode").is_empty());
    let status = t.side_tables().remove(0);
    let words: Vec<String> = status.rows.iter().map(|r| r[1].to_string()).collect();
    assert_eq!(
        words,
        ["multiple_solutions", "invalid", "invalid", "invalid"]
    );
    assert!(
        status.rows[1][5].to_string().contains("appears twice"),
        "{:?}",
        status.rows[1]
    );
    assert!(
        status.rows[2][5].to_string().contains("two values"),
        "{:?}",
        status.rows[2]
    );
    assert!(
        status.rows[3][5].to_string().contains("not a digit"),
        "{:?}",
        status.rows[3]
    );
}

#[test]
fn on_unsolved_error_fails() {
    let mut t = transform(SudokuSolveSpec {
        error_on_unsolved: true,
        ..spec()
    });
    let line = format!("12345678.........9{}", ".".repeat(63));
    let err = run(&mut t, givens(5, &line)).expect_err("no solution");
    assert_eq!(
        err.to_string(),
        "sudoku_solve: puzzle 5 is no_solution (on_unsolved: error)"
    );
}

#[test]
fn box_size_follows_the_columns_or_the_job() {
    let t = SudokuTransform::new(spec(), &TableRef::parse("G").expect("name"));
    let found = |names: &[&str]| Discovery {
        attributes: names
            .iter()
            .map(|n| Discovered {
                name: n.to_string(),
                rows: 1,
                values: 1,
                widths: None,
            })
            .collect(),
        ..Discovery::default()
    };
    assert_eq!(
        t.attributes(found(&["3", "4"]))
            .expect("4x4")
            .attributes
            .len(),
        4
    );
    assert_eq!(
        t.attributes(found(&["16"]))
            .expect("16x16")
            .attributes
            .len(),
        16
    );
    assert!(t.attributes(found(&["26"])).is_err());
    let err = t.attributes(found(&["x"])).expect_err("not a number");
    assert_eq!(
        err.to_string(),
        "sudoku_solve: attribute 'x' is not a column number"
    );
    let fixed = SudokuTransform::new(
        SudokuSolveSpec {
            box_size: Some(5),
            ..spec()
        },
        &TableRef::parse("G").expect("name"),
    );
    assert_eq!(
        fixed
            .attributes(found(&["2"]))
            .expect("25x25")
            .attributes
            .len(),
        25
    );
}
