//! Table statements rendered the same way on every database from the dialect's narrow traits:
//! `CREATE TABLE` with its primary key, the INSERT column list and multi-row `VALUES`, the
//! cell counts of a table. No dialect overrides them (they were template methods of
//! `Dialect`); the differences are in the hooks they call ([`super::Types`], [`super::Quoting`]).

use super::{EntityColumn, Quoting, TableShape, Types};

/// `sql_type` followed by the rest of a column's definition a change of type must restate
/// ([`super::Schema::alter_column_type`]'s `kept`).
pub fn retyped(sql_type: &str, kept: Option<&str>) -> String {
    match kept {
        Some(kept) => format!("{sql_type} {kept}"),
        None => sql_type.to_string(),
    }
}

/// Why the entity columns cannot be this table's primary key here, if they cannot:
/// an unknown type (the column would be created untyped), a type the database will not
/// index, or a key wider than the database allows.
pub fn primary_key_problem<D: Types + ?Sized>(d: &D, entity: &[EntityColumn]) -> Option<String> {
    let mut total = 0usize;
    for e in entity {
        let Some(ty) = &e.sql_type else {
            return Some(format!("the type of entity column {} is unknown", e.name));
        };
        match d.key_bytes(ty) {
            Some(n) => total = total.saturating_add(n),
            None => {
                return Some(format!(
                    "entity column {} has type {ty}, which {} cannot use in a primary key",
                    e.name,
                    d.name()
                ))
            }
        }
    }
    match d.max_key_bytes() {
        Some(max) if total > max => Some(format!(
            "the entity key may take {total} bytes, more than the {max} a {} primary key allows",
            d.name()
        )),
        _ => None,
    }
}

/// `CREATE TABLE`, with the entity key as `NOT NULL` primary key where the shape asks for
/// one and the database can make it (else the plan has said why not).
pub fn create_table<D: Types + ?Sized>(d: &D, shape: &TableShape) -> String {
    let keyed = keyed(d, shape);
    let mut cols: Vec<String> = shape
        .entity
        .iter()
        .map(|e| match entity_type(d, shape, e) {
            Some(ty) if keyed => format!("{} {ty} NOT NULL", d.quote_ident(&e.name)),
            Some(ty) => format!("{} {ty}", d.quote_ident(&e.name)),
            None => d.quote_ident(&e.name),
        })
        .collect();
    cols.extend(
        shape
            .columns
            .iter()
            .map(|c| format!("{} {}", d.quote_ident(&c.column), c.sql_type(shape))),
    );
    if keyed && !shape.entity.is_empty() {
        cols.push(format!("PRIMARY KEY ({})", entity_order(d, shape)));
    }
    format!(
        "CREATE TABLE {} (\n  {}\n)",
        shape.table,
        cols.join(",\n  ")
    )
}

/// Whether `shape`'s entity key becomes its primary key here (else the plan has said why not).
pub fn keyed<D: Types + ?Sized>(d: &D, shape: &TableShape) -> bool {
    shape.primary_key && primary_key_problem(d, &shape.entity).is_none()
}

/// The type [`create_table`] declares for entity column `e`: a key column's type where the
/// entity is the primary key. None: the source's type is unknown, none is declared.
pub fn entity_type<D: Types + ?Sized>(
    d: &D,
    shape: &TableShape,
    e: &EntityColumn,
) -> Option<String> {
    let ty = e.sql_type.as_deref()?;
    Some(match keyed(d, shape) {
        true => d.key_column_type(ty),
        false => ty.to_string(),
    })
}

/// Whether `CREATE TABLE … AS` the pivot ([`super::query::create_select`]) gives `shape`'s
/// table exactly as [`create_table`] and the INSERT would: the database offers it
/// ([`super::Types::parallel_probe`]), and every
/// pivoted column is either cast to its own type already (a typed, non-text column) or
/// declared as the unbounded text type, which a CAST reaches without losing anything. A
/// bounded text type (`varchar(20)`) is not: its CAST would cut a value the INSERT refuses.
pub fn created_as_exactly<D: Types + ?Sized>(d: &D, shape: &TableShape) -> bool {
    d.parallel_probe("").is_some()
        && shape.columns.iter().all(|c| match &c.typed {
            Some(t) if !t.kind.is_text() => true,
            _ => c.sql_type(shape) == d.text_type(),
        })
}

/// `ALTER TABLE … ADD PRIMARY KEY (e…)` for a table made by `CREATE TABLE … AS`, where
/// [`create_table`] would have declared the key (it also makes the key columns NOT NULL).
pub fn add_primary_key<D: Types + ?Sized>(d: &D, shape: &TableShape) -> Option<String> {
    let keyed = keyed(d, shape) && !shape.entity.is_empty();
    keyed.then(|| {
        format!(
            "ALTER TABLE {} ADD PRIMARY KEY ({})",
            shape.table,
            entity_order(d, shape)
        )
    })
}

/// Column list `(e…, c…)` of an INSERT into `shape`.
pub fn insert_columns<D: Quoting + ?Sized>(d: &D, shape: &TableShape) -> String {
    let names: Vec<String> = shape
        .entity
        .iter()
        .map(|e| d.quote_ident(&e.name))
        .chain(shape.columns.iter().map(|c| d.quote_ident(&c.column)))
        .collect();
    names.join(", ")
}

/// One row: the table's row count, then the non-null count of each pivoted column.
pub fn count_table_cells<D: Quoting + ?Sized>(d: &D, shape: &TableShape) -> String {
    let mut counts = vec!["COUNT(*)".to_string()];
    counts.extend(
        shape
            .columns
            .iter()
            .map(|c| format!("COUNT({})", d.quote_ident(&c.column))),
    );
    format!("SELECT {} FROM {}", counts.join(", "), shape.table)
}

/// The target's entity columns, quoted: its natural ORDER BY.
pub fn entity_order<D: Quoting + ?Sized>(dialect: &D, shape: &TableShape) -> String {
    shape
        .entity
        .iter()
        .map(|e| dialect.quote_ident(&e.name))
        .collect::<Vec<_>>()
        .join(", ")
}
