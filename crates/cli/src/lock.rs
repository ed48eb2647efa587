//! The per-stack deploy lock in the state directory, so two deploys of one stack cannot
//! interleave. The store already lets only one process open a state directory at a time; the
//! lock is what outlives a deploy that died mid-way (`kill -9`, a lost CI runner): the next
//! deploy of that stack is refused until the lock expires or `cumulo force-unlock` drops it,
//! rather than racing what the dead one left.
//!
//! A lock row names its owner (a random id, the pid and host); release deletes the row only if
//! this owner still holds it, so a deploy that outlived its expiry never releases the lock of
//! the deploy that took it over.

use anyhow::bail;
use cumulo_store::Store;
use cumulo_store::rusqlite::{OptionalExtension, params};

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE direct_locks (region TEXT NOT NULL, stack TEXT NOT NULL,
        owner TEXT NOT NULL, acquired_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
        PRIMARY KEY (region, stack));",
];

/// How long a lock holds without its owner releasing it.
pub const TTL_MS: i64 = 30 * 60 * 1000;

/// A lock this process holds.
#[derive(Debug, Clone)]
pub struct Lock {
    pub region: String,
    pub stack: String,
    pub owner: String,
}

pub fn migrate(store: &Store) -> anyhow::Result<()> {
    store.migrate("direct", MIGRATIONS)?;
    Ok(())
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn owner_id() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
    format!(
        "{} (pid {} on {host})",
        uuid::Uuid::new_v4(),
        std::process::id()
    )
}

/// Takes the lock of `stack`, or says who holds it and until when.
pub fn acquire(store: &Store, region: &str, stack: &str) -> anyhow::Result<Lock> {
    let owner = owner_id();
    let now = now_ms();
    let held: Option<(String, i64, i64)> = store.write(|tx| {
        let current: Option<(String, i64, i64)> = tx
            .query_row(
                "SELECT owner, acquired_ms, expires_ms FROM direct_locks WHERE region = ?1 AND stack = ?2",
                params![region, stack],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        if let Some(c) = current.filter(|c| c.2 > now) {
            return Ok(Some(c));
        }
        tx.execute(
            "INSERT OR REPLACE INTO direct_locks(region, stack, owner, acquired_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![region, stack, owner, now, now + TTL_MS],
        )?;
        Ok(None)
    })?;
    if let Some((by, since, until)) = held {
        let at = |ms: i64| {
            chrono::DateTime::from_timestamp_millis(ms)
                .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
                .unwrap_or_default()
        };
        bail!(
            "stack {stack} is locked by another deploy: {by}, since {}; the lock expires at {}. If that deploy is gone, run `cumulo force-unlock {stack}`",
            at(since),
            at(until)
        );
    }
    Ok(Lock {
        region: region.to_string(),
        stack: stack.to_string(),
        owner,
    })
}

/// Releases the lock if this owner still holds it.
pub fn release(store: &Store, lock: &Lock) -> anyhow::Result<()> {
    store.write(|tx| {
        tx.execute(
            "DELETE FROM direct_locks WHERE region = ?1 AND stack = ?2 AND owner = ?3",
            params![lock.region, lock.stack, lock.owner],
        )
    })?;
    Ok(())
}

/// Drops the stack's lock whoever holds it. Returns whether there was one.
pub fn force(store: &Store, region: &str, stack: &str) -> anyhow::Result<bool> {
    let n = store.write(|tx| {
        tx.execute(
            "DELETE FROM direct_locks WHERE region = ?1 AND stack = ?2",
            params![region, stack],
        )
    })?;
    Ok(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        let s = Store::in_memory().expect("store");
        migrate(&s).expect("migrate");
        s
    }

    #[test]
    fn a_held_lock_refuses_a_second_owner_until_released() {
        let s = store();
        let first = acquire(&s, "us-east-1", "app").expect("first");
        let err = acquire(&s, "us-east-1", "app").expect_err("held");
        assert!(err.to_string().contains("cumulo force-unlock app"), "{err}");
        // Another stack, or another region, is a different lock.
        acquire(&s, "us-east-1", "other").expect("other stack");
        acquire(&s, "eu-west-1", "app").expect("other region");
        release(&s, &first).expect("release");
        acquire(&s, "us-east-1", "app").expect("free again");
    }

    #[test]
    fn release_is_owner_checked_and_force_drops_any() {
        let s = store();
        let stale = acquire(&s, "us-east-1", "app").expect("first");
        assert!(force(&s, "us-east-1", "app").expect("force"));
        let current = acquire(&s, "us-east-1", "app").expect("taken over");
        // The old owner's release must not free the new owner's lock.
        release(&s, &stale).expect("release");
        assert!(acquire(&s, "us-east-1", "app").is_err());
        release(&s, &current).expect("release");
        assert!(!force(&s, "us-east-1", "app").expect("nothing held"));
    }

    #[test]
    fn an_expired_lock_is_taken_over() {
        let s = store();
        s.write(|tx| {
            tx.execute(
                "INSERT INTO direct_locks VALUES ('us-east-1', 'app', 'dead', 0, 1)",
                [],
            )
        })
        .expect("seed");
        acquire(&s, "us-east-1", "app").expect("expired lock taken over");
    }
}
