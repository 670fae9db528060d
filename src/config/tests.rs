use super::*;

fn parse(text: &str) -> Result<Job, ConfigError> {
    parse_job(text, Path::new("job.yaml"))
}

const MINIMAL: &str = "
name: t
source: { table: dbo.KV, alias: k }
entity: [k.ID, { expr: \"k.A + k.B\", name: AB }]
attribute: k.NAME
value: k.VAL
target: { table: WIDE }
";

#[test]
fn minimal_job_gets_every_default() {
    let job = parse(MINIMAL).expect("valid");
    assert_eq!(job.source.table.sql(), "dbo.KV");
    assert_eq!(
        job.entity[0],
        EntityKey {
            expr: "k.ID".into(),
            name: "ID".into()
        }
    );
    assert_eq!(job.entity[1].name, "AB");
    assert_eq!(job.pivot.columns, ColumnSelection::Discover);
    assert_eq!(job.pivot.aggregate, Aggregate::Max);
    assert_eq!(job.pivot.order, Order::Natural);
    assert_eq!(job.pivot.column_type, ColumnType::Text);
    assert_eq!(job.target.if_exists, IfExists::Fail);
    assert_eq!(job.target.split, Split::Off);
    assert_eq!(job.strategy, StrategyName::Auto);
}

#[test]
fn unknown_keys_are_named_with_their_line() {
    let err = parse(&MINIMAL.replace("attribute:", "atribute:")).expect_err("typo");
    let msg = err.to_string();
    assert!(msg.contains("unknown key `atribute`"), "{msg}");
    assert!(msg.contains("job.yaml line 5"), "{msg}");
}

#[test]
fn expressions_as_entities_need_a_name() {
    let err = parse(&MINIMAL.replace("[k.ID, ", "[UPPER(k.ID), ")).expect_err("expression");
    assert!(err.to_string().contains("write it as { expr:"), "{err}");
}

#[test]
fn column_types_and_table_names_are_checked() {
    let bad_type = format!("{MINIMAL}pivot: {{ column_type: \"INT; DROP TABLE x\" }}\n");
    assert!(parse(&bad_type).is_err());
    let ok_type = format!("{MINIMAL}pivot: {{ column_type: \"NUMERIC(10, 2)\" }}\n");
    assert_eq!(
        parse(&ok_type).expect("valid").pivot.column_type,
        ColumnType::Sql("NUMERIC(10, 2)".into())
    );
    assert!(parse(&MINIMAL.replace("table: WIDE", "table: \"WIDE; DROP\"")).is_err());
}

#[test]
fn columns_list_and_split_and_transforms() {
    let text = format!(
        "{MINIMAL}pivot: {{ columns: [a, b] }}\ntransforms:\n  - map: {{ values: {{ '-1': '?' }} }}\n  - sudoku_solve: {{ box_size: 3 }}\n"
    )
    .replace("target: { table: WIDE }", "target: { table: WIDE, split: auto }");
    let job = parse(&text).expect("valid");
    assert_eq!(
        job.pivot.columns,
        ColumnSelection::List(vec!["a".into(), "b".into()])
    );
    assert_eq!(job.target.split, Split::Auto);
    assert_eq!(job.transforms.len(), 2);
    let twice = format!("{MINIMAL}pivot: {{ columns: [a, a] }}\n");
    assert!(parse(&twice)
        .expect_err("duplicate")
        .to_string()
        .contains("listed twice"));
    let empty = format!("{MINIMAL}transforms: [{{}}]\n");
    assert!(parse(&empty)
        .expect_err("empty transform")
        .to_string()
        .contains("empty transform"));
}

#[test]
fn a_list_of_two_columns_is_two_entity_keys() {
    let job = parse(&MINIMAL.replace("[k.ID, { expr: \"k.A + k.B\", name: AB }]", "[k.A, k.B]"))
        .expect("valid");
    let names: Vec<&str> = job.entity.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    let single = parse(&MINIMAL.replace("[k.ID, { expr: \"k.A + k.B\", name: AB }]", "k.ID"))
        .expect("valid");
    assert_eq!(single.entity.len(), 1);
}

#[test]
fn pivot_infer_takes_widths_and_numbers_only_with_infer() {
    let job = parse(&format!("{MINIMAL}pivot: {{ column_type: infer }}\n")).expect("valid");
    assert_eq!(job.pivot.infer, Infer::default());
    assert_eq!(job.pivot.infer.widths, InferWidths::Headroom);
    assert_eq!(job.pivot.infer.numbers, InferNumbers::Value);
    let exact = format!(
        "{MINIMAL}pivot: {{ column_type: infer, infer: {{ widths: exact, numbers: text }} }}\n"
    );
    let job = parse(&exact).expect("valid");
    assert_eq!(job.pivot.infer.widths, InferWidths::Exact);
    assert_eq!(job.pivot.infer.numbers, InferNumbers::Text);
    let typo = exact.replace("widths: exact", "width: exact");
    let err = parse(&typo).expect_err("unknown key").to_string();
    assert!(err.contains("unknown key `width`"), "{err}");
    let word = exact.replace("widths: exact", "widths: narrow");
    let err = parse(&word).expect_err("bad word").to_string();
    assert!(err.contains("headroom or exact"), "{err}");
    let without = format!("{MINIMAL}pivot: {{ infer: {{ widths: exact }} }}\n");
    let err = parse(&without).expect_err("not infer").to_string();
    assert!(
        err.contains("pivot.infer") && err.contains("column_type: infer"),
        "{err}"
    );
}

#[test]
fn target_distribute_is_auto_by_default_and_a_bad_word_names_its_line() {
    let job = parse(MINIMAL).expect("valid");
    assert_eq!(job.target.distribute, Distribute::Auto);
    let off = MINIMAL.replace(
        "target: { table: WIDE }",
        "target:\n  table: WIDE\n  distribute: off",
    );
    assert_eq!(
        parse(&off).expect("valid").target.distribute,
        Distribute::Off
    );
    let bad = MINIMAL.replace(
        "target: { table: WIDE }",
        "target:\n  table: WIDE\n  distribute: yes",
    );
    let msg = parse(&bad).expect_err("bad value").to_string();
    assert!(msg.contains("job.yaml"), "{msg}");
    assert!(msg.contains("line 9"), "{msg}");
    assert!(msg.contains("target.distribute"), "{msg}");
    assert!(msg.contains("auto or off"), "{msg}");
}
