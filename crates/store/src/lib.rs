//! Persistence for every emulated service: one embedded SQLite database in WAL mode.
//!
//! Invariants:
//! - A call that returns `Ok` from [`Store::write`] has committed; with WAL and `synchronous=NORMAL`
//!   a committed transaction survives `kill -9` of the process (the WAL is in the OS page cache).
//!   `Durability::Full` adds an fsync per commit for power-loss safety.
//! - One process owns a data directory: the database is opened in exclusive locking mode, so a
//!   second `cumulo serve` on the same directory fails at startup instead of two in-memory views
//!   of the same tables drifting apart. The OS drops the lock when the owner dies, even by
//!   `kill -9`, so a restart after a crash just works (SQLite replays the WAL on open).
//! - Each service owns the tables it creates through [`Store::migrate`] (named `<service>_...`);
//!   no service reads another's tables.
//! - [`Store::write_grouped`] is the same promise for writers that can hand their work over
//!   (owned data, `'static`): a commit thread runs every write queued meanwhile in one
//!   transaction, commits once, and only then answers each writer. A failing write changes
//!   nothing and fails alone: the batch runs without savepoints and, if a write fails, is
//!   rolled back and run again with a savepoint per write. Many concurrent writers then cost one
//!   commit (one run of WAL frame writes, shared pages written once) instead of one each.
//! - Writes commit in the order they were queued or called: a [`Store::write`] takes the grouped
//!   writes still queued into its own transaction, ahead of its own work, and the committer
//!   takes a batch only while it holds the connection.
//! - The WAL is checkpointed by the committer in a lull (no write queued for 20 ms) once enough
//!   was written, not inside a commit that writers wait for; SQLite's automatic checkpoint
//!   (every 4,096 pages) remains the backstop for a load that never pauses.
//! - Whatever must not sit on disk in clear is sealed with the data directory's [`MasterKey`]
//!   ([`master`] says what protects what); the key itself never enters the database.
//! - This crate knows nothing about AWS.

pub mod master;

pub use master::{MasterKey, MasterKeyError};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

pub use rusqlite;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("store: cannot create data directory {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "store: {path} is in use by another process (is another cumulo serving this data directory?)"
    )]
    InUse { path: PathBuf },
    #[error("store: migration {owner} v{version} failed: {source}")]
    Migration {
        owner: String,
        version: usize,
        source: rusqlite::Error,
    },
    #[error("store: the group commit failed: {0}")]
    GroupCommit(String),
    #[error(transparent)]
    MasterKey(#[from] MasterKeyError),
    #[error(
        "store: {owner} schema is at version {found}, newer than this cumulo knows ({known}); upgrade cumulo"
    )]
    TooNew {
        owner: String,
        found: usize,
        known: usize,
    },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// How hard a commit tries to reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Survives a process crash (`kill -9`); the default.
    #[default]
    Process,
    /// Also survives power loss: fsync on every commit.
    Full,
}

/// The database shared by all services. Cheap to share behind an `Arc`.
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    location: Option<PathBuf>,
    /// The writes [`Store::write_grouped`] queued for the next commit.
    group: Arc<Group>,
    master: MasterKey,
}

/// The work of one grouped write. `FnMut`, not `FnOnce`: a batch runs its writes without a
/// savepoint each and, in the rare case one of them fails, runs them all again, each in its
/// own savepoint (see [`run_batch`]).
type Work = Box<dyn FnMut(&rusqlite::Transaction<'_>) -> rusqlite::Result<()> + Send>;

/// One write handed to the committer, and where its outcome goes once committed.
struct Job {
    work: Work,
    done: tokio::sync::oneshot::Sender<Result<()>>,
}

#[derive(Default)]
struct Group {
    queue: Mutex<Queue>,
    /// Signalled when the committer stops (the store waits for it before closing).
    idle: Condvar,
    /// Signalled when a write is queued while the committer runs (it may be waiting for a
    /// lull to checkpoint in).
    arrived: Condvar,
    /// Writes committed since the committer last checkpointed (how much of the WAL may not
    /// be in the database yet, roughly).
    unchecked: AtomicUsize,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// A committer is running: it takes what is queued before it stops.
    running: bool,
    /// The store is being dropped: the committer stops once the queue is empty, without
    /// waiting for a lull (closing the connection checkpoints anyway).
    closing: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .finish()
    }
}

/// The most writes one commit takes: bounds how long the first of a batch waits.
const MAX_BATCH: usize = 1024;

/// Writes after which the committer checkpoints the WAL in the next lull.
/// A checkpoint copies the WAL into the database and fsyncs it, holding the connection: run by
/// SQLite's automatic checkpoint inside a commit, it stalled every writer queued behind that
/// commit for ~90 ms (16 MiB of WAL on the development machine's disk), in the middle of a
/// stack operation. Run in a lull, it falls between bursts. The automatic checkpoint stays as
/// the backstop for a burst that never pauses.
const IDLE_CHECKPOINT_WRITES: usize = 256;

/// How long the queue must stay empty to count as a lull. Within a burst (a stack operation's
/// writes) the queue empties for a fraction of a millisecond at a time: checkpointing at the
/// first empty queue stalled the rest of the burst instead.
const LULL: std::time::Duration = std::time::Duration::from_millis(20);

/// Which migrations each owner has applied.
const SCHEMA_VERSIONS: &str = "CREATE TABLE IF NOT EXISTS schema_versions (owner TEXT PRIMARY KEY, version INTEGER NOT NULL);";

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "cumulo.db";

impl Store {
    /// Opens (creating if needed) `dir/cumulo.db`.
    pub fn open(dir: &Path, durability: Durability) -> Result<Store> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(DB_FILE);
        let in_use = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::InUse { path: path.clone() }
            }
            _ => StoreError::Sqlite(e),
        };
        let conn = Connection::open(&path)?;
        // Only another process can hold the lock; wait briefly (it may be exiting), not 5 s.
        conn.busy_timeout(std::time::Duration::from_millis(250))?;
        let sync = match durability {
            // WAL + NORMAL: a commit is written to the WAL file before `write` returns, so it
            // survives the process dying; only power loss can lose the last commits.
            Durability::Process => "NORMAL",
            Durability::Full => "FULL",
        };
        // Creating the database and switching it to WAL costs five fsyncs at any level but OFF
        // (~50 ms on a busy disk: most of a first start). Nothing of the user's is at stake yet and
        // a dying process cannot lose what the OS already has, so under `Process` durability the
        // setup runs unsynced; the chosen level applies from the first real commit on.
        if durability == Durability::Process {
            conn.pragma_update(None, "synchronous", "OFF")
                .map_err(in_use)?;
        }
        // Exclusive before the first access: the lock is then held for the connection's life, and
        // WAL needs no shared-memory index (one less file, faster commits).
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(in_use)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(in_use)?;
        conn.execute_batch(SCHEMA_VERSIONS).map_err(in_use)?;
        // A checkpoint copies the WAL into the database and fsyncs both, holding the connection
        // meanwhile. Every 4,096 pages (16 MiB) rather than SQLite's 1,000: a quarter of the
        // stalls, and a page rewritten many times in between is copied once. Durability is
        // unchanged: a commit is in the WAL before it returns either way.
        conn.pragma_update(None, "wal_autocheckpoint", 4096)
            .map_err(in_use)?;
        conn.pragma_update(None, "synchronous", sync)
            .map_err(in_use)?;
        // A page first changed inside a savepoint (each `Store::write`'s own work, each write of
        // a batch replayed after a failure; every grouped write, before batches ran without
        // them) is copied to the sub-journal. With the default temp store that journal spills
        // to a temp file past 64 KiB and never shrinks within the transaction: each page copy
        // was a `pwrite`, ~16% of a 500-resource stack deletion's CPU (perf). Nothing in it
        // outlives the transaction, so keeping it in memory costs no durability.
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(in_use)?;
        // After the lock: a second process on the directory fails as in use, not on the key.
        let master = MasterKey::for_dir(dir)?;
        Self::init(conn, Some(path.clone()), master).map_err(|e| match e {
            StoreError::Sqlite(e) => in_use(e),
            e => e,
        })
    }

    /// A database that lives only in memory (tests, `--in-memory`).
    pub fn in_memory() -> Result<Store> {
        Self::init(Connection::open_in_memory()?, None, MasterKey::ephemeral())
    }

    fn init(conn: Connection, location: Option<PathBuf>, master: MasterKey) -> Result<Store> {
        conn.execute_batch(SCHEMA_VERSIONS)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
            location,
            group: Arc::default(),
            master,
        })
    }

    /// The data directory's master key (random per process in memory).
    pub fn master_key(&self) -> &MasterKey {
        &self.master
    }

    /// The database file, or `None` in memory.
    pub fn location(&self) -> Option<&Path> {
        self.location.as_deref()
    }

    /// Applies `owner`'s migrations that have not run yet, each in its own transaction.
    /// `migrations[i]` takes the schema from version `i` to `i + 1`. A database whose version is
    /// newer than `migrations.len()` is refused rather than misread.
    pub fn migrate(&self, owner: &str, migrations: &[&str]) -> Result<()> {
        let mut conn = self.lock();
        let current: usize = conn
            .query_row(
                "SELECT version FROM schema_versions WHERE owner = ?1",
                [owner],
                |r| r.get::<_, i64>(0),
            )
            .map(|v| v as usize)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(0),
                e => Err(e),
            })?;
        if current > migrations.len() {
            return Err(StoreError::TooNew {
                owner: owner.to_string(),
                found: current,
                known: migrations.len(),
            });
        }
        for (i, sql) in migrations.iter().enumerate().skip(current) {
            let version = i + 1;
            let fail = |source| StoreError::Migration {
                owner: owner.to_string(),
                version,
                source,
            };
            let tx = conn.transaction().map_err(fail)?;
            tx.execute_batch(sql).map_err(fail)?;
            tx.execute(
                "INSERT INTO schema_versions(owner, version) VALUES (?1, ?2)
                 ON CONFLICT(owner) DO UPDATE SET version = excluded.version",
                rusqlite::params![owner, version as i64],
            )
            .map_err(fail)?;
            tx.commit().map_err(fail)?;
        }
        Ok(())
    }

    /// Whether `owner`'s migrations have run in this store (it has a schema version row): a
    /// cheap test of whether a service ever ran here, without building it.
    pub fn has_owner(&self, owner: &str) -> bool {
        self.lock()
            .query_row(
                "SELECT 1 FROM schema_versions WHERE owner = ?1",
                [owner],
                |_| Ok(()),
            )
            .is_ok()
    }

    /// Runs `f` in a transaction and commits it before returning: when this returns `Ok`, the
    /// change is durable. Services call it before they answer a mutating request.
    ///
    /// Grouped writes still queued when it takes the connection commit in the same transaction,
    /// ahead of `f`: a write never becomes durable before one queued earlier (a message sent to
    /// a queue whose grouped creation was still queued could otherwise outlive it in a crash).
    pub fn write<R>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<R>,
    ) -> Result<R> {
        let conn = self.lock();
        let queued = take_queued(&self.group, usize::MAX);
        let (tx, pending) = run_batch(&conn, queued)?;
        // In a savepoint of its own, so that its failure leaves the queued writes standing.
        let r = run_cached(&tx, "SAVEPOINT own").and_then(|()| match f(&tx) {
            Ok(r) => run_cached(&tx, "RELEASE own").map(|()| r),
            Err(e) => {
                let _ = tx.execute_batch("ROLLBACK TO own; RELEASE own");
                Err(e)
            }
        });
        let committed = tx.commit().map_err(|e| e.to_string());
        self.group
            .unchecked
            .fetch_add(1 + pending.len(), Ordering::Relaxed);
        answer(pending, &committed);
        if let Err(msg) = committed {
            return Err(StoreError::GroupCommit(msg));
        }
        Ok(r?)
    }

    /// Like [`Store::write`] for work that owns its data: queued to the commit thread, which
    /// commits it together with every other write queued meanwhile. The write is queued when
    /// this is called (so writes queued in some order commit in that order, whatever order
    /// their [`Commit`]s are awaited in); the returned [`Commit`] resolves once the batch
    /// holding it has committed (the write is then durable, as with `write`), or with the
    /// write's own error (it then changed nothing), or with the batch's commit error.
    ///
    /// A service queues its write while it holds its own state lock (so the store sees its
    /// writes in the order its memory does), releases the lock, and awaits the `Commit` before
    /// it answers: concurrent requests then share commits instead of taking one each.
    ///
    /// `work` may run twice: when another write of its batch fails, the batch is rolled back
    /// and run again. It must act only through the transaction it is given.
    pub fn write_grouped<F, R>(&self, mut work: F) -> Commit
    where
        F: FnMut(&rusqlite::Transaction<'_>) -> rusqlite::Result<R> + Send + 'static,
    {
        let (done, rx) = tokio::sync::oneshot::channel();
        let job = Job {
            work: Box::new(move |tx| work(tx).map(drop)),
            done,
        };
        self.enqueue(job);
        Commit { rx }
    }

    /// Queues a job and starts a committer unless one is running. The committer is a blocking
    /// task of the caller's runtime (so a paused test clock does not jump while it commits),
    /// or a thread outside one.
    fn enqueue(&self, job: Job) {
        let mut q = lock(&self.group.queue);
        q.jobs.push(job);
        if q.running {
            self.group.arrived.notify_one();
            return;
        }
        q.running = true;
        drop(q);
        let (conn, group) = (self.conn.clone(), self.group.clone());
        let run = move || commit_loop(&conn, &group);
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn_blocking(run);
            }
            Err(_) => {
                if let Err(e) = std::thread::Builder::new()
                    .name("cumulo-store-commit".into())
                    .spawn(run)
                {
                    let mut q = lock(&self.group.queue);
                    q.running = false;
                    for job in q.jobs.drain(..) {
                        let _ = job.done.send(Err(StoreError::GroupCommit(e.to_string())));
                    }
                    self.group.idle.notify_all();
                }
            }
        }
    }

    /// Runs a read-only closure against the connection.
    pub fn read<R>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<R>) -> Result<R> {
        let conn = self.lock();
        Ok(f(&conn)?)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        lock(&self.conn)
    }
}

/// A write queued by [`Store::write_grouped`]: resolves once it is durable (or with why not).
/// Dropping it does not cancel the write, only the wait.
#[must_use = "a write is only durable once its Commit resolves"]
pub struct Commit {
    rx: tokio::sync::oneshot::Receiver<Result<()>>,
}

impl Future for Commit {
    type Output = Result<()>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<()>> {
        std::pin::Pin::new(&mut self.rx).poll(cx).map(|r| {
            r.unwrap_or_else(|_| {
                Err(StoreError::GroupCommit(
                    "the committer stopped before answering".into(),
                ))
            })
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave SQLite inconsistent (the transaction is
    // rolled back on drop), nor the queue (a push or a take), so a poisoned lock is safe to use.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for Store {
    /// Waits for a running committer: it holds the connection (and so the data directory's
    /// lock) until it has answered every queued write.
    fn drop(&mut self) {
        let mut q = lock(&self.group.queue);
        q.closing = true;
        self.group.arrived.notify_all();
        while q.running {
            q = self.group.idle.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The committer: takes whatever is queued, runs it as one transaction and answers each
/// writer after the commit; what queues up meanwhile is the next batch. When the queue is
/// empty and enough was written since it last checkpointed, it waits for a lull ([`LULL`])
/// and checkpoints in it (a write queued meanwhile waits for the checkpoint); then it stops.
fn commit_loop(conn: &Mutex<Connection>, group: &Group) {
    loop {
        {
            let mut q = lock(&group.queue);
            if q.jobs.is_empty()
                && !q.closing
                && group.unchecked.load(Ordering::Relaxed) >= IDLE_CHECKPOINT_WRITES
            {
                let (woken, wait) = group
                    .arrived
                    .wait_timeout_while(q, LULL, |q| q.jobs.is_empty() && !q.closing)
                    .unwrap_or_else(|p| p.into_inner());
                q = woken;
                if wait.timed_out() {
                    drop(q);
                    group.unchecked.store(0, Ordering::Relaxed);
                    // PASSIVE: copies what it can. A failure leaves the WAL to the next
                    // checkpoint and costs no write its durability (it is in the WAL).
                    let _ = lock(conn).query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                    continue;
                }
            }
            if q.jobs.is_empty() {
                q.running = false;
                group.idle.notify_all();
                return;
            }
        }
        // The batch is taken with the connection held, so a `Store::write` cannot commit
        // between taking it and committing it (that write takes what is still queued itself).
        let guard = lock(conn);
        let batch = take_queued(group, MAX_BATCH);
        if batch.is_empty() {
            continue;
        }
        group.unchecked.fetch_add(batch.len(), Ordering::Relaxed);
        commit_batch(&guard, batch);
    }
}

/// Takes up to `max` queued writes, oldest first.
fn take_queued(group: &Group, max: usize) -> Vec<Job> {
    let mut q = lock(&group.queue);
    let n = q.jobs.len().min(max);
    q.jobs.drain(..n).collect()
}

/// Answers writes that cannot be committed.
fn refuse(jobs: Vec<Job>, msg: &str) {
    for job in jobs {
        let _ = job.done.send(Err(StoreError::GroupCommit(msg.to_string())));
    }
}

/// Answers the writes a transaction ran once it has committed (or failed to).
fn answer(
    pending: Vec<tokio::sync::oneshot::Sender<Result<()>>>,
    committed: &std::result::Result<(), String>,
) {
    for done in pending {
        let _ = done.send(match committed {
            Ok(()) => Ok(()),
            Err(msg) => Err(StoreError::GroupCommit(msg.clone())),
        });
    }
}

/// Runs a statement through the connection's statement cache: a batch runs two savepoint
/// statements per write, which `execute_batch` would parse anew each time.
fn run_cached(tx: &rusqlite::Transaction<'_>, sql: &str) -> rusqlite::Result<()> {
    tx.prepare_cached(sql)?.execute([]).map(drop)
}

fn commit_batch(conn: &Connection, batch: Vec<Job>) {
    let Ok((tx, pending)) = run_batch(conn, batch) else {
        return;
    };
    let committed = tx.commit().map_err(|e| e.to_string());
    answer(pending, &committed);
}

/// The writers a batch's transaction holds work for, to be answered once it commits.
type Pending = Vec<tokio::sync::oneshot::Sender<Result<()>>>;

/// Opens a transaction and runs queued writes in it; returns the transaction (to be committed
/// by the caller) and the writers to answer then. A write that fails is undone alone and its
/// writer told so now; every other write stays in the transaction.
///
/// Writes almost never fail, so the batch first runs them one after the other, with no
/// savepoint each (a savepoint costs two statements and a copy of every page it first
/// changes: ~10% of a stack deletion's CPU). If one does fail, the transaction is rolled back
/// and the batch runs again, each write in its own savepoint. When the transaction cannot
/// even be opened, every writer is told why and so is the caller.
///
/// It takes the connection shared (`unchecked_transaction`) because it opens a second
/// transaction after dropping the first, which a `&mut` borrow cannot express; the callers
/// hold the connection's lock, so no other transaction can be open on it.
fn run_batch(
    conn: &Connection,
    mut batch: Vec<Job>,
) -> rusqlite::Result<(rusqlite::Transaction<'_>, Pending)> {
    let clean = match conn.unchecked_transaction() {
        Ok(tx) => batch
            .iter_mut()
            .all(|job| run_guarded(&tx, &mut job.work).is_ok())
            .then_some(tx),
        Err(e) => {
            refuse(batch, &e.to_string());
            return Err(e);
        }
    };
    if let Some(tx) = clean {
        let pending = batch.into_iter().map(|job| job.done).collect();
        return Ok((tx, pending));
    }
    let tx = match conn.unchecked_transaction() {
        Ok(tx) => tx,
        Err(e) => {
            refuse(batch, &e.to_string());
            return Err(e);
        }
    };
    let pending = run_jobs(&tx, batch);
    Ok((tx, pending))
}

/// Runs one write, turning a panic into an error (the batch and the committer go on).
fn run_guarded(tx: &rusqlite::Transaction<'_>, work: &mut Work) -> rusqlite::Result<()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(tx))).unwrap_or_else(|_| {
        Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
            Some("a write panicked".into()),
        ))
    })
}

/// Runs queued writes in a transaction, each in its own savepoint: one that fails is undone
/// alone and told so now. Returns the others, to be answered after the commit.
fn run_jobs(tx: &rusqlite::Transaction<'_>, batch: Vec<Job>) -> Pending {
    let mut pending = Vec::with_capacity(batch.len());
    for Job { mut work, done } in batch {
        let outcome = run_cached(tx, "SAVEPOINT w").and_then(|()| run_guarded(tx, &mut work));
        match outcome {
            Ok(()) => match run_cached(tx, "RELEASE w") {
                Ok(()) => pending.push(done),
                Err(e) => {
                    let _ = tx.execute_batch("ROLLBACK TO w; RELEASE w");
                    let _ = done.send(Err(e.into()));
                }
            },
            Err(e) => {
                let _ = tx.execute_batch("ROLLBACK TO w; RELEASE w");
                let _ = done.send(Err(e.into()));
            }
        }
    }
    pending
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &[&str] = &[
        "CREATE TABLE t_items (k TEXT PRIMARY KEY, v TEXT);",
        "ALTER TABLE t_items ADD COLUMN n INTEGER DEFAULT 0;",
    ];

    #[test]
    fn migrates_once_and_persists() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path(), Durability::Process).unwrap();
            s.migrate("t", M).unwrap();
            s.migrate("t", M).unwrap();
            s.write(|tx| tx.execute("INSERT INTO t_items(k, v) VALUES ('a', 'b')", []))
                .unwrap();
        }
        let s = Store::open(dir.path(), Durability::Process).unwrap();
        s.migrate("t", M).unwrap();
        let v: String = s
            .read(|c| c.query_row("SELECT v FROM t_items WHERE k='a'", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(v, "b");
    }

    #[test]
    fn one_process_owns_a_data_dir() {
        let dir = tempfile::tempdir().unwrap();
        let first = Store::open(dir.path(), Durability::Process).unwrap();
        let err = Store::open(dir.path(), Durability::Process).unwrap_err();
        assert!(matches!(err, StoreError::InUse { .. }), "{err:?}");
        drop(first);
        Store::open(dir.path(), Durability::Process).unwrap();
    }

    #[test]
    fn refuses_newer_schema() {
        let s = Store::in_memory().unwrap();
        s.migrate("t", M).unwrap();
        let err = s.migrate("t", &M[..1]).unwrap_err();
        assert!(matches!(
            err,
            StoreError::TooNew {
                found: 2,
                known: 1,
                ..
            }
        ));
    }

    #[test]
    fn failed_write_changes_nothing() {
        let s = Store::in_memory().unwrap();
        s.migrate("t", M).unwrap();
        let r = s.write(|tx| {
            tx.execute("INSERT INTO t_items(k, v) VALUES ('a', 'b')", [])?;
            tx.execute("INSERT INTO nope VALUES (1)", [])
        });
        assert!(r.is_err());
        let n: i64 = s
            .read(|c| c.query_row("SELECT count(*) FROM t_items", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 0);
    }

    /// Enough grouped writes, then a pause: the committer copies the WAL into the database
    /// before it stops (SQLite's own checkpoint would wait for 4,096 pages of WAL).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_committer_checkpoints_when_idle() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path(), Durability::Process).unwrap();
        s.migrate("t", M).unwrap();
        let db_size = || std::fs::metadata(dir.path().join(DB_FILE)).unwrap().len();
        let before = db_size();
        let row = "x".repeat(1024);
        let commits: Vec<Commit> = (0..IDLE_CHECKPOINT_WRITES)
            .map(|i| {
                let row = row.clone();
                s.write_grouped(move |tx| {
                    tx.execute(
                        "INSERT INTO t_items(k, v) VALUES (?1, ?2)",
                        rusqlite::params![i.to_string(), row],
                    )
                })
            })
            .collect();
        for c in commits {
            c.await.unwrap();
        }
        // The committer has answered everyone; wait for it to stop (after its checkpoint).
        let mut q = lock(&s.group.queue);
        while q.running {
            q = s.group.idle.wait(q).unwrap();
        }
        drop(q);
        let grown = db_size() - before;
        assert!(
            grown >= (IDLE_CHECKPOINT_WRITES * 1024) as u64,
            "the database grew by {grown} bytes only: the WAL was not checkpointed"
        );
    }

    /// A batch runs its writes without savepoints until one fails; then it starts again with
    /// a savepoint each, so the failing write (an error or a panic) is undone alone and the
    /// others, before and after it, commit once each.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_write_fails_alone_in_a_batch_that_ran_without_savepoints() {
        let s = Store::in_memory().unwrap();
        s.migrate("t", M).unwrap();
        let insert = |k: &'static str| {
            s.write_grouped(move |tx| tx.execute("INSERT INTO t_items(k, v) VALUES (?1, 'x')", [k]))
        };
        // Held, so that the five writes are queued before the committer takes them: one batch.
        let held = s.lock();
        let first = insert("a");
        let failing = insert("a");
        let between = insert("b");
        let panicking = s.write_grouped(|tx| -> rusqlite::Result<()> {
            tx.execute("INSERT INTO t_items(k, v) VALUES ('p', 'x')", [])?;
            panic!("a write that panics")
        });
        let last = insert("c");
        drop(held);
        first.await.unwrap();
        assert!(failing.await.is_err());
        between.await.unwrap();
        assert!(panicking.await.is_err());
        last.await.unwrap();
        let keys: Vec<String> = s
            .read(|c| {
                c.prepare("SELECT k FROM t_items ORDER BY rowid")?
                    .query_map([], |r| r.get(0))?
                    .collect()
            })
            .unwrap();
        assert_eq!(keys, ["a", "b", "c"]);
    }

    /// Savepoints' sub-journals stay in memory: in a temp file they cost a `pwrite` per page.
    #[test]
    fn the_temp_store_is_memory() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path(), Durability::Process).unwrap();
        let mode: i64 = s
            .read(|c| c.query_row("PRAGMA temp_store", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(mode, 2, "PRAGMA temp_store: 2 is MEMORY");
    }

    /// A grouped write queued before a `Store::write` starts is never committed after it,
    /// whichever of the committer and the writer gets the connection first.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_never_commits_ahead_of_grouped_writes_queued_before_it() {
        let s = Arc::new(Store::in_memory().unwrap());
        s.migrate("t", M).unwrap();
        let rowid = |s: &Store, k: &str| -> i64 {
            s.read(|c| c.query_row("SELECT rowid FROM t_items WHERE k = ?1", [k], |r| r.get(0)))
                .unwrap()
        };
        for round in 0..40 {
            let (g, w) = (format!("g{round}"), format!("w{round}"));
            // Held, so that the committer and the writer both wait for the connection.
            let held = s.lock();
            let key = g.clone();
            let grouped = s.write_grouped(move |tx| {
                tx.execute("INSERT INTO t_items(k, v) VALUES (?1, 'g')", [&key])
            });
            let (writer, key) = (s.clone(), w.clone());
            let direct = std::thread::spawn(move || {
                writer.write(|tx| tx.execute("INSERT INTO t_items(k, v) VALUES (?1, 'w')", [key]))
            });
            std::thread::sleep(std::time::Duration::from_millis(2));
            drop(held);
            direct.join().unwrap().unwrap();
            grouped.await.unwrap();
            assert!(
                rowid(&s, &g) < rowid(&s, &w),
                "round {round}: the direct write committed before the grouped one queued first"
            );
        }
    }
}
