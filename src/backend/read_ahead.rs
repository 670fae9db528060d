//! Reading the ordered source rows ahead of the pivot, on their own connection and task.
//!
//! The server backends stream on two connections: one reads, the other holds the load's
//! transaction. With the read on its own task the server keeps sending rows while a batch
//! loads, instead of stalling on a full socket until the load returns. Rows wait in a bounded
//! channel ([`CHUNKS_AHEAD`] × [`CHUNK_ROWS`]), so memory stays flat however far the reader
//! could run ahead: when the channel is full it simply waits.
//!
//! Measured and not kept: starting this read before discovery (no gain on 2 cores, where
//! discovery and the read compete for the same CPU), and a reader thread for SQLite (slower:
//! a second connection re-reads every page the first already has in its cache), and a
//! two-worker multi-thread runtime for the CLI so that the read's decoding runs beside the
//! pivot (session 10, 1M rows typed and text, n = 3: PostgreSQL and MariaDB no faster, the
//! stream 0–10 % slower, with the server on the same two cores).
//!
//! A read abandoned midway (the job failed) is cancelled when its [`ReadAhead`] is dropped:
//! the task ends. Its driver may still drain the rest of the result in the background before
//! the connection closes (mysql_async and tokio-postgres both do); nothing reads those rows.

use std::future::Future;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{load_ready, Backend, LoadTarget, RowPipeline};
use crate::error::{Error, Result};
use crate::value::Value;

/// Rows per message from the reading task: large enough that channel overhead is noise.
pub const CHUNK_ROWS: usize = 512;
/// Messages the reader may be ahead by (at most ~8k source rows in memory).
pub const CHUNKS_AHEAD: usize = 16;

enum Message {
    Rows(Vec<Vec<Value>>),
    Done,
    Failed(Error),
}

/// The reading task's end of the channel: collects rows into chunks.
pub struct RowSender {
    tx: mpsc::Sender<Message>,
    chunk: Vec<Vec<Value>>,
}

impl RowSender {
    /// Queue one source row; `false` once nobody is listening any more (stop reading).
    pub async fn push(&mut self, row: Vec<Value>) -> bool {
        self.chunk.push(row);
        if self.chunk.len() < CHUNK_ROWS {
            return true;
        }
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK_ROWS));
        self.tx.send(Message::Rows(chunk)).await.is_ok()
    }

    /// [`RowSender::push`] from a blocking thread (the SQLite reader).
    pub fn push_blocking(&mut self, row: Vec<Value>) -> bool {
        self.chunk.push(row);
        if self.chunk.len() < CHUNK_ROWS {
            return true;
        }
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK_ROWS));
        self.tx.blocking_send(Message::Rows(chunk)).is_ok()
    }

    fn end_blocking(mut self, outcome: Result<()>) {
        let chunk = std::mem::take(&mut self.chunk);
        if !chunk.is_empty() && outcome.is_ok() {
            let _ = self.tx.blocking_send(Message::Rows(chunk));
        }
        let _ = self.tx.blocking_send(match outcome {
            Ok(()) => Message::Done,
            Err(e) => Message::Failed(e),
        });
    }

    async fn end(mut self, outcome: Result<()>) {
        let chunk = std::mem::take(&mut self.chunk);
        // A closed channel means the stream was abandoned: nothing left to tell.
        if !chunk.is_empty() && outcome.is_ok() {
            let _ = self.tx.send(Message::Rows(chunk)).await;
        }
        let last = match outcome {
            Ok(()) => Message::Done,
            Err(e) => Message::Failed(e),
        };
        let _ = self.tx.send(last).await;
    }
}

/// A source read running on its own task; consumed by [`stream`].
pub struct ReadAhead {
    rx: mpsc::Receiver<Message>,
    task: JoinHandle<()>,
    done: bool,
}

impl ReadAhead {
    /// Start `read(sql, sender)` on a new task. `read` opens its own connection, runs `sql`
    /// and pushes every row; its error (if any) reaches the consumer in order, after the rows.
    pub fn spawn<F, Fut>(sql: &str, read: F) -> ReadAhead
    where
        F: FnOnce(String, RowSender) -> Fut,
        Fut: Future<Output = (RowSender, Result<()>)> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        let sender = RowSender {
            tx,
            chunk: Vec::with_capacity(CHUNK_ROWS),
        };
        let work = read(sql.to_string(), sender);
        let task = tokio::spawn(async move {
            let (sender, outcome) = work.await;
            sender.end(outcome).await;
        });
        ReadAhead {
            rx,
            task,
            done: false,
        }
    }

    /// Run the blocking `read(sql, sender)` on a thread of its own (a driver without async
    /// I/O, SQLite): as [`ReadAhead::spawn`] otherwise.
    pub fn spawn_blocking<F>(sql: &str, read: F) -> ReadAhead
    where
        F: FnOnce(&str, &mut RowSender) -> Result<()> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        let mut sender = RowSender {
            tx,
            chunk: Vec::with_capacity(CHUNK_ROWS),
        };
        let sql = sql.to_string();
        let task = tokio::task::spawn_blocking(move || {
            let outcome = read(&sql, &mut sender);
            sender.end_blocking(outcome);
        });
        ReadAhead {
            rx,
            task,
            done: false,
        }
    }

    /// The next chunk of rows; `None` after the last.
    pub async fn next(&mut self) -> Result<Option<Vec<Vec<Value>>>> {
        if self.done {
            return Ok(None);
        }
        match self.rx.recv().await {
            Some(Message::Rows(rows)) => Ok(Some(rows)),
            Some(Message::Done) => {
                self.done = true;
                Ok(None)
            }
            Some(Message::Failed(e)) => {
                self.done = true;
                Err(e)
            }
            // The task ended without saying so: it panicked or was cancelled. Never treat
            // that as the end of the source, or rows would be silently missing.
            None => Err(Error::Job(
                "reading source rows: the reading task stopped before the end of the rows".into(),
            )),
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The server backends' stream loop: feed `source`'s rows through `pipeline`, loading each
/// batch of wide rows on `backend`'s own connection while the reader keeps reading.
pub async fn stream<B: Backend + ?Sized>(
    backend: &mut B,
    mut source: ReadAhead,
    pipeline: &mut dyn RowPipeline,
    targets: &[LoadTarget],
    batch_rows: usize,
) -> Result<Vec<u64>> {
    let mut loaded = vec![0u64; targets.len()];
    loop {
        // The first rows of an ordered read can be seconds away (the server sorts first): an
        // interrupt must not wait for them. Dropping `source` ends the read and its connection.
        let next = tokio::select! {
            next = source.next() => next?,
            _ = crate::interrupt::interrupted() => {
                return Err(crate::interrupt::interrupted_error(true));
            }
        };
        let Some(rows) = next else { break };
        for row in rows {
            pipeline.push(row)?;
            if pipeline.ready_rows() >= batch_rows {
                load_ready(backend, pipeline, targets, &mut loaded).await?;
            }
        }
    }
    pipeline.finish()?;
    load_ready(backend, pipeline, targets, &mut loaded).await?;
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
    }

    async fn drain(mut r: ReadAhead) -> Result<Vec<i64>> {
        let mut out = Vec::new();
        while let Some(rows) = r.next().await? {
            out.extend(rows.iter().filter_map(|row| row[0].as_i64()));
        }
        Ok(out)
    }

    #[test]
    fn every_row_arrives_in_order_across_chunks() {
        let n = CHUNK_ROWS as i64 * 3 + 7;
        let got = runtime().block_on(async {
            let r = ReadAhead::spawn("q", |_sql, mut tx| async move {
                for i in 0..n {
                    if !tx.push(vec![Value::Int(i)]).await {
                        break;
                    }
                }
                (tx, Ok(()))
            });
            drain(r).await
        });
        assert_eq!(got.expect("read"), (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn a_reader_error_is_the_next_thing_read_not_a_partial_chunk() {
        let first = runtime().block_on(async {
            let mut r = ReadAhead::spawn("q", |_sql, mut tx| async move {
                for i in 0..10 {
                    tx.push(vec![Value::Int(i)]).await;
                }
                (
                    tx,
                    Err(Error::database("reading source rows", "connection lost")),
                )
            });
            r.next().await
        });
        let err = first.expect_err("the failure comes first, not the 10 rows before it");
        assert!(err.to_string().contains("connection lost"), "{err}");
    }

    #[test]
    fn a_task_that_dies_is_an_error_not_an_end() {
        let got = runtime().block_on(async {
            let r = ReadAhead::spawn("q", |_sql, tx| async move {
                drop(tx);
                // Never reached by the consumer: the sender is gone without Done.
                std::future::pending::<()>().await;
                unreachable!()
            });
            drain(r).await
        });
        let err = got.expect_err("a silent stop is an error");
        assert!(err.to_string().contains("stopped before the end"), "{err}");
    }
}
