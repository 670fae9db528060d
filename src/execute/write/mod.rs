//! The one write path: every table a run writes, and the transaction around them.
//!
//! Whatever fills the tables — the pushdown's `INSERT … SELECT`, the stream, a transform that
//! runs in the database, a command's import of its own rows — goes through [`Writes`]: it
//! decides where each table is built (its final name, or a staging name unique to this run),
//! refuses what must not happen before anything is written (a target that is the source, a
//! target that exists under `if_exists: fail`, another run writing the same table), creates
//! the tables, opens the transaction, lets the [`Fill`] load and verify, swaps staging tables
//! in, commits — or rolls back and drops what this run created, and says which.
//!
//! Where DDL is transactional (SQLite, PostgreSQL, SQL Server) everything happens inside one
//! transaction. Where it is not (MariaDB), tables are built under staging names marked with
//! the job and run, filled in a transaction, and made visible only after verification by one
//! atomic rename; a per-table lock keeps two runs apart, and what a crashed run left behind is
//! recognised by that mark and dropped by the next run before it starts.

mod commit;
mod distribute;
mod guard;
mod merge;
mod nulled;
mod staging;
mod widen;

pub use merge::read_split_target;

use crate::dialect::ddl;
use async_trait::async_trait;

use crate::config::{IfExists, Job, OnCollision, OnMissing, OnNewAttributes, TableRef};
use crate::dialect::{Dialect, SourceQuery, TableShape, UnquotedCase};
use crate::error::{Error, Result};
use crate::plan::naming::NaturalNames;
use crate::report::MergeStats;

use super::fault;
use super::session::Session;
use crate::interrupt::{self, check_interrupt, InterruptGuard, Shield};

use commit::{read_identity, refuse_a_view, replace_leaves};
use guard::refuse_writing_sources;

/// One table the run writes: a target table or a transform's companion table.
#[derive(Debug, Clone)]
pub struct Table {
    /// The table as it will be named when the run is done.
    pub shape: TableShape,
    /// Where rows go during the load: the final name, or a staging name.
    pub build: TableRef,
    pub exists: bool,
    /// Rows are appended to an existing table: no CREATE, counts taken before and after.
    pub append: bool,
    /// This table's tag in the run's staging names and marks.
    tag: String,
    /// What the database's `table_identity` said of the final name before the run (None:
    /// no such table, or not read in a dry run): a COMMIT whose outcome is unknown is
    /// judged by whether it changed.
    identity_before: Option<String>,
    /// `if_exists: merge` into this existing table: how.
    pub(crate) merge: Option<merge::MergePlan>,
    /// Not created before the fill: the fill makes it inside the transaction, by `CREATE
    /// TABLE … AS` where that is faster ([`Fill::creates_target`]). No run mark is needed:
    /// a table made in the transaction cannot outlive a failed run.
    pub create_as: bool,
    /// What a `CREATE TABLE` of this table adds after its columns so that its text holds
    /// every value ([`crate::dialect::Schema::created_table_options`], read with the table's
    /// existence).
    options: Option<String>,
}

impl Table {
    /// The table rows are written into: the shape under its build name.
    pub fn build_shape(&self) -> TableShape {
        TableShape {
            table: self.build.clone(),
            ..self.shape.clone()
        }
    }

    /// The `CREATE TABLE` of the build table, with its [`Table::options`].
    pub fn create_statement(&self, dialect: &dyn Dialect) -> String {
        let create = ddl::create_table(dialect, &self.build_shape());
        match &self.options {
            Some(options) => format!("{create} {options}"),
            None => create,
        }
    }

    fn staged(&self) -> bool {
        self.build != self.shape.table
    }

    /// The table that takes the target's name when the run is done, if another does: the
    /// staging table, or for a merge the target's copy (where one is needed).
    fn swapped_in(&self) -> Option<&TableRef> {
        match &self.merge {
            Some(plan) => plan.copy.as_ref(),
            None => self.staged().then_some(&self.build),
        }
    }
}

/// What a run does with tables that exist: the job's `if_exists` and, for a merge, its
/// `on_missing` and `on_new_attributes`.
#[derive(Debug, Clone)]
pub struct Policy {
    pub if_exists: IfExists,
    pub on_missing: OnMissing,
    pub on_new_attributes: OnNewAttributes,
    /// A merged attribute whose column is another attribute's existing column as an
    /// identifier: renamed, or refused under `error`.
    pub on_collision: OnCollision,
    /// The column each attribute would get as it is: a merge takes an existing column for an
    /// attribute renamed in this run only when it is that name.
    pub natural: NaturalNames,
}

impl Policy {
    pub fn of(job: &Job) -> Policy {
        Policy {
            if_exists: job.target.if_exists,
            on_missing: job.target.on_missing,
            on_new_attributes: job.pivot.on_new_attributes,
            on_collision: job.pivot.on_collision,
            natural: NaturalNames::of(job),
        }
    }

    /// Only `if_exists`, the rest at their defaults (writers without a job file).
    pub fn if_exists(if_exists: IfExists) -> Policy {
        Policy {
            if_exists,
            on_missing: OnMissing::Keep,
            on_new_attributes: OnNewAttributes::Add,
            on_collision: OnCollision::Rename,
            natural: NaturalNames::default(),
        }
    }
}

/// The work done inside the transaction, after every table exists and before the swap and
/// commit: load the rows and verify them. An error rolls everything back.
#[async_trait]
pub trait Fill: Send {
    type Output: Send;
    /// The fill makes this new target table itself, in the transaction (by `CREATE TABLE …
    /// AS` where that is faster), instead of filling a table created for it.
    fn creates_target(&self, _dialect: &dyn Dialect, _table: &Table) -> bool {
        false
    }
    async fn fill(&mut self, session: &mut Session<'_>, tables: &Tables) -> Result<Self::Output>;
}

/// The tables a run writes, in the order given to [`Writes::prepare`].
pub struct Tables {
    all: Vec<Table>,
    /// How many of `all` are the job's targets; the rest are companion tables.
    targets: usize,
}

impl Tables {
    pub fn targets(&self) -> &[Table] {
        &self.all[..self.targets]
    }

    pub fn companions(&self) -> &[Table] {
        &self.all[self.targets..]
    }
}

/// The tables of one run and the state of its transaction.
pub struct Writes {
    tables: Tables,
    /// Marks this run's staging tables (`<table>__eavpivot_<tag>`).
    run: staging::Run,
    began: bool,
    /// The rows are committed (to staging tables, where DDL is not transactional): what can
    /// still fail is putting them in place.
    committed: bool,
    /// Tables created outside a transaction (non-transactional DDL), to drop on failure.
    created_outside: Vec<TableRef>,
    /// What each merge did, once the run has committed.
    merged: Vec<MergeStats>,
    /// Set once the run got to its COMMIT and the outcome is known otherwise than by the
    /// error (an interrupt the commit was finished through, or a COMMIT that failed and was
    /// checked): what happened, said instead of "rolled back".
    settled: Option<String>,
    /// Per merge into a copy, the target's fingerprint as copied: checked after the swap.
    copied: Vec<(TableRef, Vec<String>)>,
    /// Plan notes from matching existing targets (an older key column's case).
    notes: Vec<String>,
    /// On a scale-out engine (Citus): how created tables are distributed.
    scaled_out: Option<distribute::ScaledOut>,
}

impl Writes {
    /// Decide where each table is built and refuse, before any write, what the run must not
    /// do. `sources` are the tables the run reads; `targets` are the job's tables,
    /// `companions` the transforms' side tables.
    pub async fn prepare(
        session: &mut Session<'_>,
        job_name: &str,
        policy: Policy,
        sources: &[TableRef],
        targets: Vec<TableShape>,
        companions: Vec<TableShape>,
    ) -> Result<Writes> {
        let dialect = session.backend.dialect();
        let run = staging::Run::new(job_name);
        let n_targets = targets.len();
        let mut all = Vec::new();
        let mut notes = Vec::new();
        for (index, shape) in targets.into_iter().chain(companions).enumerate() {
            if let Some(problem) = dialect.target_name_problem(&shape.table) {
                return Err(Error::Job(format!(
                    "cannot write the target table {}: {problem}",
                    shape.table
                )));
            }
            run.lock(session, dialect, &shape.table).await?;
            run.clean_leftovers(session, dialect, &shape.table).await?;
            let tag = run.tag(index);
            let mut table =
                plan_table(session, dialect, &run, tag, policy.if_exists, shape).await?;
            if table.exists && matches!(policy.if_exists, IfExists::Append | IfExists::Merge) {
                notes.extend(match_existing_keys(session, dialect, &mut table.shape).await?);
            }
            all.push(table);
        }
        refuse_writing_sources(session, dialect, sources, &all).await?;
        let if_exists = policy.if_exists;
        if let Some(table) = all.iter().find(|t| t.exists && if_exists == IfExists::Fail) {
            return Err(Error::Job(format!(
                "target table {} already exists (target.if_exists: fail): drop it, or set if_exists to replace or append",
                table.shape.table
            )));
        }
        // After the source guard: a target that is the source is refused as such first.
        for table in all
            .iter()
            .filter(|t| t.exists && if_exists == IfExists::Replace)
        {
            notes.extend(replace_leaves(session, dialect, &table.shape.table).await?);
        }
        for (index, table) in all.iter_mut().enumerate() {
            if table.exists && if_exists == IfExists::Merge {
                // The copy a merge needs where DDL is not transactional: tagged apart from
                // every table of the run.
                let copy_tag = run.tag(index + (1 << 20));
                let copy = run.staging_name(dialect, &table.shape.table, &copy_tag);
                let (on_new, on_missing) = (policy.on_new_attributes, policy.on_missing);
                let naming = (&policy.natural, policy.on_collision);
                let copy = (copy, copy_tag);
                let plan = merge::MergePlan::read(
                    session,
                    dialect,
                    &mut table.shape,
                    on_new,
                    on_missing,
                    naming,
                    copy,
                )
                .await?;
                table.merge = Some(plan);
            }
        }
        Ok(Writes {
            tables: Tables {
                all,
                targets: n_targets,
            },
            run,
            began: false,
            committed: false,
            created_outside: Vec::new(),
            merged: Vec::new(),
            settled: None,
            copied: Vec::new(),
            notes,
            scaled_out: None,
        })
    }

    /// Guard each merge of `job` against `where` used as its delta ([`merge::MergePlan::guard`]).
    pub fn guard_merges(&mut self, job: &Job, source: &SourceQuery) {
        for plan in self.tables.all.iter_mut().filter_map(|t| t.merge.as_mut()) {
            plan.guard(job, source);
        }
    }

    /// Notes for the plan: decisions made on meeting the existing tables.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// What each merge did (empty unless the run merged into existing tables).
    pub fn merged(&self) -> &[MergeStats] {
        &self.merged
    }

    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// Create, begin, fill, swap, commit; on any failure roll back, drop what this run
    /// created, and say so in the error (`{what} failed and was rolled back: …`).
    pub async fn run<F: Fill>(
        &mut self,
        session: &mut Session<'_>,
        what: &str,
        fill: &mut F,
    ) -> Result<F::Output> {
        let _interrupt = InterruptGuard::arm();
        let result = self.write(session, fill).await;
        if result.is_ok() || self.settled.is_some() {
            interrupt::set_forced_cleanup(Vec::new());
        }
        if let Some(done) = self.settled.take() {
            // Past the COMMIT: nothing to roll back, and what happened is known.
            return match result {
                Ok(_) => Err(Error::Job(format!("{what}: {done}"))),
                Err(err) => Err(err.with_context(&format!("{what}: {done}"))),
            };
        }
        match result {
            Ok(out) => Ok(out),
            Err(err) => {
                let undo = self.roll_back(session).await;
                Err(err.with_context(&format!("{what} failed and was {undo}")))
            }
        }
    }

    async fn write<F: Fill>(
        &mut self,
        session: &mut Session<'_>,
        fill: &mut F,
    ) -> Result<F::Output> {
        let dialect = session.backend.dialect();
        let merges = self.tables.all.iter().filter_map(|t| t.merge.as_ref());
        if let Some(refusal) = merges.filter_map(|m| m.keyless.clone()).next() {
            return Err(Error::Job(refusal));
        }
        let tx_ddl = dialect.transactional_ddl();
        if !tx_ddl {
            self.create_all(session, dialect, false).await?;
        }
        session.change(&dialect.begin()).await?;
        self.began = true;
        for sql in self.scaled_out.iter().flat_map(|s| s.after_begin()) {
            session.change(&sql).await?;
        }
        if tx_ddl {
            // Only a new table built inside the transaction, not distributed, not merged.
            let local = self.scaled_out.is_none();
            let targets = self.tables.targets;
            for table in &mut self.tables.all[..targets] {
                table.create_as = local
                    && !table.append
                    && table.merge.is_none()
                    && fill.creates_target(dialect, table);
            }
            self.create_all(session, dialect, true).await?;
        }
        fault::pause_at("created");
        let out = fill.fill(session, &self.tables).await?;
        fault::pause_at("loaded");
        let mut merged = Vec::new();
        for table in &self.tables.all {
            if let Some(plan) = &table.merge {
                let done = merge::merge(session, dialect, table, plan).await?;
                if let Some(copied) = done.copied {
                    self.copied.push((table.shape.table.clone(), copied));
                }
                merged.push(done.stats);
            }
        }
        if tx_ddl {
            for table in &self.tables.all {
                for sql in swap_statements(dialect, &self.run, table) {
                    session.change(&sql).await?;
                }
            }
        }
        // From here the COMMIT and what must follow it run to their end: an interrupt
        // is reported after them, saying what was done, instead of making the outcome
        // unknown by cancelling a COMMIT already on its way.
        let shield = Shield::raise();
        check_interrupt()?;
        fault::pause_at("commit");
        self.commit(session, dialect).await?;
        fault::pause_at("committed");
        if !tx_ddl {
            self.swap_after_commit(session, dialect).await?;
        }
        drop(shield);
        self.merged = merged;
        if interrupt::interrupt_requested() {
            self.settled = Some(format!(
                "interrupted ({}) during the commit, which was finished first: the commit went through: {}",
                interrupt::interrupted_label(),
                self.new_tables()
            ));
        }
        Ok(out)
    }

    /// Tell a forced exit (a second signal) what this run would leave behind now.
    fn publish_cleanup(&self, dialect: &dyn Dialect) {
        interrupt::set_forced_cleanup(
            self.created_outside
                .iter()
                .map(|t| (t.to_string(), dialect.drop_table(t)))
                .collect(),
        );
    }

    async fn create_all(
        &mut self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        in_transaction: bool,
    ) -> Result<()> {
        let created = self.create_each(session, dialect, in_transaction).await;
        self.publish_cleanup(dialect);
        created
    }

    async fn create_each(
        &mut self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
        in_transaction: bool,
    ) -> Result<()> {
        let n_targets = self.tables.targets;
        for (index, table) in self.tables.all.iter().enumerate() {
            if table.append || table.create_as {
                continue;
            }
            let create = table.create_statement(dialect);
            let create = match table.staged() {
                true => dialect.mark_created(create, &self.run.mark(&table.tag)),
                false => create,
            };
            session.change(&create).await?;
            // Companion tables hold rows that are not per entity: they stay local.
            let keys: Vec<String> = table.shape.entity.iter().map(|e| e.name.clone()).collect();
            let spread = |t: &TableRef| {
                let scaled = self.scaled_out.as_ref().filter(|_| index < n_targets);
                scaled.and_then(|s| s.distribute(t, &keys))
            };
            if let Some(sql) = spread(&table.build) {
                session.change(&sql).await?;
            }
            if !in_transaction && !session.dry_run {
                self.created_outside.push(table.build.clone());
                self.publish_cleanup(dialect);
            }
            if let Some(copy) = table.merge.as_ref().and_then(|m| m.copy.as_ref()) {
                let plan = table.merge.as_ref().map(|m| {
                    let mark = self.run.mark(&m.copy_tag);
                    m.create_copy(dialect, &table.shape.table, &mark)
                });
                for sql in plan.unwrap_or_default().into_iter().chain(spread(copy)) {
                    session.change(&sql).await?;
                    if !session.dry_run && !self.created_outside.contains(copy) {
                        self.created_outside.push(copy.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// Non-transactional DDL: the verified staging tables become visible by one atomic
    /// rename each, after commit. What follows the rename (dropping the replaced table) is
    /// cleanup: the new table is already in place, so a failure there is a warning, and the
    /// next run of the job drops what is left.
    async fn swap_after_commit(
        &mut self,
        session: &mut Session<'_>,
        dialect: &dyn Dialect,
    ) -> Result<()> {
        for table in &self.tables.all {
            let mut statements = swap_statements(dialect, &self.run, table).into_iter();
            if let (Some(swap), Some(built)) = (statements.next(), table.swapped_in()) {
                session.change(&swap).await?;
                self.created_outside.retain(|t| t != built);
                let copied = self.copied.iter().find(|(t, _)| *t == table.shape.table);
                if let (Some(plan), Some((_, copied))) = (&table.merge, copied) {
                    let replaced = replaced_name(dialect, &self.run, table);
                    let names = (&table.shape.table, built, &replaced);
                    if let Err(e) =
                        merge::check_swapped(session, dialect, names, plan, copied).await
                    {
                        self.created_outside.push(built.clone());
                        self.publish_cleanup(dialect);
                        return Err(e);
                    }
                }
                self.publish_cleanup(dialect);
                fault::pause_at("swapped");
            }
            // A merge's staging table held only the source's rows: they are in the target now.
            let staging = table
                .merge
                .is_some()
                .then(|| dialect.drop_table(&table.build));
            let mut clean = true;
            for cleanup in statements.chain(staging) {
                let done = session.change(&cleanup).await;
                if done.is_ok() && table.merge.is_some() {
                    self.created_outside.retain(|t| *t != table.build);
                }
                if let Err(e) = done {
                    clean = false;
                    eprintln!(
                        "warning: {} is in place, but cleaning up after it failed ({e}); the next run of this job drops what is left",
                        table.shape.table
                    );
                }
            }
            // The swapped-in copy carries the run's mark as its comment; once nothing left
            // behind needs it (the replaced table is gone), the target's own comes back.
            let restore = table
                .merge
                .as_ref()
                .and_then(|m| m.restore_comment.as_ref());
            if let Some(sql) = restore.filter(|_| clean) {
                if let Err(e) = session.change(sql).await {
                    eprintln!(
                        "warning: {} is in place, but giving it back its comment failed ({e})",
                        table.shape.table
                    );
                }
            }
        }
        Ok(())
    }

    /// Undo after a failure; returns what was done, for the error message.
    async fn roll_back(&mut self, session: &mut Session<'_>) -> String {
        let dialect = session.backend.dialect();
        let mut said = match self.committed {
            true => "not put in place: the verified rows were committed to staging tables, but swapping them in failed, so the target is as it was".to_string(),
            false => "stopped before writing anything".to_string(),
        };
        if self.began && !session.dry_run {
            said = match session.backend.execute(&dialect.rollback()).await {
                Ok(_) => "rolled back: nothing was written".into(),
                Err(e) => format!("rolled back by the server (the ROLLBACK itself failed: {e})"),
            };
            self.began = false;
        }
        // Each table stays on the forced exit's list until it is dropped.
        while let Some(table) = self.created_outside.first().cloned() {
            match session.backend.execute(&dialect.drop_table(&table)).await {
                Ok(_) => said.push_str(&format!("; staging table {table} was dropped")),
                Err(e) => said.push_str(&format!(
                    "; staging table {table} could not be dropped ({e}): the next run of this job drops it"
                )),
            }
            self.created_outside.remove(0);
            self.publish_cleanup(dialect);
        }
        said
    }
}

/// The statements that put a verified staging table in place of its target. The replaced
/// table's name carries the tag of the table swapped in (whose mark the target then has), so
/// the next run can prove it is a leftover of this one.
fn swap_statements(dialect: &dyn Dialect, run: &staging::Run, table: &Table) -> Vec<String> {
    let Some(built) = table.swapped_in() else {
        return Vec::new();
    };
    let replaced = table.exists.then(|| replaced_name(dialect, run, table));
    dialect.swap_in(built, &table.shape.table, replaced.as_ref())
}

/// The name an existing table takes when another is swapped in: tagged with the table that
/// replaces it (a merge's copy, or the staging table), so its mark proves who named it.
fn replaced_name(dialect: &dyn Dialect, run: &staging::Run, table: &Table) -> TableRef {
    let tag = match &table.merge {
        Some(plan) => &plan.copy_tag,
        None => &table.tag,
    };
    run.replaced_name(dialect, &table.shape.table, tag)
}

/// An existing table about to take rows keeps its own key columns' names: where the
/// database folds unquoted names, a table built before key columns were folded has them
/// with their case kept ([`crate::plan::naming::match_existing_keys`]).
async fn match_existing_keys(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    shape: &mut TableShape,
) -> Result<Vec<String>> {
    if dialect.unquoted_case() == UnquotedCase::Kept {
        return Ok(Vec::new());
    }
    let rows = session
        .inspect_target(&dialect.table_columns(&shape.table))
        .await?;
    let columns: Vec<String> = rows
        .iter()
        .filter_map(|r| r.first().and_then(crate::value::Value::as_text))
        .collect();
    Ok(crate::plan::naming::match_existing_keys(
        dialect, shape, &columns,
    ))
}

/// Existence check and `if_exists` for one table: where it is built and what must happen.
async fn plan_table(
    session: &mut Session<'_>,
    dialect: &dyn Dialect,
    run: &staging::Run,
    tag: String,
    if_exists: IfExists,
    shape: TableShape,
) -> Result<Table> {
    let exists = session.target_exists(&shape.table).await?;
    // Asked whatever `exists` says: SQLite's table check does not count views.
    if matches!(if_exists, IfExists::Replace | IfExists::Merge) {
        refuse_a_view(session, dialect, &shape.table, if_exists).await?;
    }
    let identity_before = match session.dry_run {
        true => None,
        false => read_identity(session, dialect, &shape.table).await?,
    };
    let append = exists && if_exists == IfExists::Append;
    let staged = !append && (exists || !dialect.transactional_ddl());
    let build = match staged {
        true => run.staging_name(dialect, &shape.table, &tag),
        false => shape.table.clone(),
    };
    let options = match dialect.created_table_options(&shape.table) {
        Some(sql) => {
            let rows = session.inspect_target(&sql).await?;
            rows.first()
                .and_then(|r| r.first())
                .and_then(|v| v.as_text())
        }
        None => None,
    };
    Ok(Table {
        shape,
        build,
        exists,
        append,
        tag,
        identity_before,
        merge: None,
        create_as: false,
        options,
    })
}
