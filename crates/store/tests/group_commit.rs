//! The group commit keeps `write`'s promise: a write is durable once its future resolves, a
//! failing write fails alone, and `kill -9` of the process loses nothing that was answered.

use cumulo_store::{Durability, Store};
use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

const M: &[&str] = &["CREATE TABLE t_items (k INTEGER PRIMARY KEY, v TEXT NOT NULL);"];

fn insert(store: &Store, k: i64) -> impl Future<Output = cumulo_store::Result<()>> + use<> {
    store.write_grouped(move |tx| {
        tx.prepare_cached("INSERT INTO t_items(k, v) VALUES (?1, 'x')")?
            .execute([k])?;
        Ok(())
    })
}

fn count(store: &Store) -> i64 {
    store
        .read(|c| c.query_row("SELECT count(*) FROM t_items", [], |r| r.get(0)))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_share_commits_and_a_failing_one_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), Durability::Process).unwrap());
    store.migrate("t", M).unwrap();
    // Key 500 exists before the race starts, so the duplicate below fails whichever way the
    // writers are ordered (a duplicate of a racing key could win and fail its twin instead).
    insert(&store, 500).await.unwrap();
    let mut tasks = Vec::new();
    for k in 0..500i64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move { insert(&store, k).await }));
    }
    // A duplicate key: its own savepoint is rolled back, the rest of its batch commits.
    let dup = insert(&store, 500);
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert!(dup.await.is_err());
    assert_eq!(count(&store), 501);
    drop(store);
    let reopened = Store::open(dir.path(), Durability::Process).unwrap();
    assert_eq!(count(&reopened), 501);
}

#[test]
fn works_outside_a_runtime_and_drop_waits_for_the_committer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Process).unwrap();
    store.migrate("t", M).unwrap();
    let pending: Vec<_> = (0..50).map(|k| insert(&store, k)).collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for p in pending {
        rt.block_on(p).unwrap();
    }
    drop(store);
    // The directory's lock was released: the committer no longer holds the connection.
    let reopened = Store::open(dir.path(), Durability::Process).unwrap();
    assert_eq!(count(&reopened), 50);
}

/// The child half of the kill test: writes keys through the group commit from many tasks and
/// prints each key once its write resolved, until killed.
#[test]
fn child_writer() {
    let Ok(dir) = std::env::var("CUMULO_GROUP_COMMIT_CHILD") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let store = Arc::new(Store::open(std::path::Path::new(&dir), Durability::Process).unwrap());
        store.migrate("t", M).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<i64>();
        for w in 0..32i64 {
            let (store, tx) = (store.clone(), tx.clone());
            tokio::spawn(async move {
                for i in 0.. {
                    let k = i * 32 + w;
                    insert(&store, k).await.unwrap();
                    if tx.send(k).is_err() {
                        return;
                    }
                }
            });
        }
        let mut out = std::io::stdout().lock();
        while let Some(k) = rx.recv().await {
            writeln!(out, "{k}").unwrap();
            out.flush().unwrap();
        }
    });
}

#[test]
fn kill_9_loses_no_acknowledged_grouped_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env("CUMULO_GROUP_COMMIT_CHILD", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acked = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(k) = line.unwrap().trim().parse::<i64>() else {
            continue;
        };
        acked.push(k);
        if acked.len() == 3000 {
            break;
        }
    }
    // SIGKILL while the writers are mid-flight (Child::kill sends SIGKILL on Unix).
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(acked.len(), 3000, "the child wrote and acknowledged");
    let store = Store::open(dir.path(), Durability::Process).unwrap();
    let missing: Vec<i64> = acked
        .iter()
        .copied()
        .filter(|k| {
            store
                .read(|c| {
                    c.query_row("SELECT count(*) FROM t_items WHERE k = ?1", [k], |r| {
                        r.get::<_, i64>(0)
                    })
                })
                .unwrap()
                == 0
        })
        .collect();
    assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");
    assert!(count(&store) >= 3000);
}
