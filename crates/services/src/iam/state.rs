//! IAM's state: every account's entities in memory, written through to `iam_entities` (one row
//! per entity, its JSON) so each mutation commits exactly the entities it changed.

use super::model::{DeletionTask, Group, InstanceProfile, ManagedPolicy, Role, User};
use cumulo_store::rusqlite::{self, params};
use cumulo_store::{Store, StoreError};
use cumulo_wire::AwsError;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

const MIGRATIONS: &[&str] = &["CREATE TABLE iam_entities (
        account TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (account, kind, key)
    );"];

/// One account's entities. IAM is global: there is no region in any key.
#[derive(Debug, Default, Clone)]
pub struct Account {
    pub roles: BTreeMap<String, Role>,
    pub users: BTreeMap<String, User>,
    pub groups: BTreeMap<String, Group>,
    /// Customer managed policies by ARN.
    pub policies: BTreeMap<String, ManagedPolicy>,
    pub profiles: BTreeMap<String, InstanceProfile>,
    pub tasks: BTreeMap<String, DeletionTask>,
}

/// An entity to write (insert or replace) in one mutation.
#[derive(Debug, Clone)]
pub enum Put {
    Role(Role),
    User(User),
    Group(Group),
    Policy(ManagedPolicy),
    Profile(InstanceProfile),
    Task(DeletionTask),
}

/// An entity to remove, by kind and key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Role,
    User,
    Group,
    Policy,
    Profile,
    Task,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Role => "role",
            Kind::User => "user",
            Kind::Group => "group",
            Kind::Policy => "policy",
            Kind::Profile => "profile",
            Kind::Task => "task",
        }
    }
}

/// The lower-cased key IAM names are unique by.
pub fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

impl Put {
    fn kind_key(&self) -> (Kind, String) {
        match self {
            Put::Role(r) => (Kind::Role, key(&r.name)),
            Put::User(u) => (Kind::User, key(&u.name)),
            Put::Group(g) => (Kind::Group, key(&g.name)),
            Put::Policy(p) => (Kind::Policy, p.arn.clone()),
            Put::Profile(p) => (Kind::Profile, key(&p.name)),
            Put::Task(t) => (Kind::Task, t.id.clone()),
        }
    }

    fn doc(&self) -> Result<String, serde_json::Error> {
        fn j<T: Serialize>(t: &T) -> Result<String, serde_json::Error> {
            serde_json::to_string(t)
        }
        match self {
            Put::Role(r) => j(r),
            Put::User(u) => j(u),
            Put::Group(g) => j(g),
            Put::Policy(p) => j(p),
            Put::Profile(p) => j(p),
            Put::Task(t) => j(t),
        }
    }
}

/// What one mutation changes: entities written and entities removed.
#[derive(Debug, Default)]
pub struct Changes {
    pub puts: Vec<Put>,
    pub dels: Vec<(Kind, String)>,
}

impl Changes {
    pub fn put(p: Put) -> Self {
        Changes {
            puts: vec![p],
            dels: Vec::new(),
        }
    }

    pub fn and(mut self, p: Put) -> Self {
        self.puts.push(p);
        self
    }

    pub fn del(mut self, kind: Kind, key: String) -> Self {
        self.dels.push((kind, key));
        self
    }
}

pub struct IamState {
    store: Arc<Store>,
    accounts: Mutex<HashMap<String, Account>>,
}

impl IamState {
    pub fn open(store: Arc<Store>) -> Result<Self, StoreError> {
        store.migrate("iam", MIGRATIONS)?;
        let rows: Vec<(String, String, String)> = store.read(|c| {
            let mut stmt = c.prepare("SELECT account, kind, doc FROM iam_entities")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        let mut accounts: HashMap<String, Account> = HashMap::new();
        for (account, kind, doc) in rows {
            let a = accounts.entry(account).or_default();
            // A row that no longer parses (hand-edited database) is skipped rather than fatal.
            let _ = match kind.as_str() {
                "role" => serde_json::from_str(&doc).map(|r: Role| {
                    a.roles.insert(key(&r.name), r);
                }),
                "user" => serde_json::from_str(&doc).map(|u: User| {
                    a.users.insert(key(&u.name), u);
                }),
                "group" => serde_json::from_str(&doc).map(|g: Group| {
                    a.groups.insert(key(&g.name), g);
                }),
                "policy" => serde_json::from_str(&doc).map(|p: ManagedPolicy| {
                    a.policies.insert(p.arn.clone(), p);
                }),
                "profile" => serde_json::from_str(&doc).map(|p: InstanceProfile| {
                    a.profiles.insert(key(&p.name), p);
                }),
                "task" => serde_json::from_str(&doc).map(|t: DeletionTask| {
                    a.tasks.insert(t.id.clone(), t);
                }),
                _ => Ok(()),
            };
        }
        Ok(IamState {
            store,
            accounts: Mutex::new(accounts),
        })
    }

    /// Runs a read against the account's entities.
    pub fn read<T>(&self, account: &str, f: impl FnOnce(&Account) -> T) -> T {
        let guard = self.accounts.lock().unwrap_or_else(PoisonError::into_inner);
        match guard.get(account) {
            Some(a) => f(a),
            None => f(&Account::default()),
        }
    }

    /// Runs a mutation: `f` decides from the current entities what to change (or refuses), the
    /// changes are committed to the store, and only then made visible. The lock is held
    /// throughout, so mutations of one account are serialised and checks cannot go stale.
    pub fn mutate<T>(
        &self,
        account: &str,
        f: impl FnOnce(&Account) -> Result<(T, Changes), AwsError>,
    ) -> Result<T, AwsError> {
        let mut guard = self.accounts.lock().unwrap_or_else(PoisonError::into_inner);
        let a = guard.entry(account.to_string()).or_default();
        let (out, changes) = f(a)?;
        let mut rows = Vec::with_capacity(changes.puts.len());
        for p in &changes.puts {
            let (kind, k) = p.kind_key();
            let doc = p.doc().map_err(|e| AwsError::internal(e.to_string()))?;
            rows.push((kind, k, doc));
        }
        self.store
            .write(|tx| {
                for (kind, k) in &changes.dels {
                    tx.execute(
                        "DELETE FROM iam_entities WHERE account = ?1 AND kind = ?2 AND key = ?3",
                        params![account, kind.as_str(), k],
                    )?;
                }
                for (kind, k, doc) in &rows {
                    tx.execute(
                        "INSERT OR REPLACE INTO iam_entities(account, kind, key, doc) VALUES (?1, ?2, ?3, ?4)",
                        params![account, kind.as_str(), k, doc],
                    )?;
                }
                Ok(())
            })
            .map_err(|e| AwsError::internal(format!("iam: could not save: {e}")))?;
        for (kind, k) in changes.dels {
            match kind {
                Kind::Role => {
                    a.roles.remove(&k);
                }
                Kind::User => {
                    a.users.remove(&k);
                }
                Kind::Group => {
                    a.groups.remove(&k);
                }
                Kind::Policy => {
                    a.policies.remove(&k);
                }
                Kind::Profile => {
                    a.profiles.remove(&k);
                }
                Kind::Task => {
                    a.tasks.remove(&k);
                }
            }
        }
        for p in changes.puts {
            match p {
                Put::Role(r) => {
                    a.roles.insert(key(&r.name), r);
                }
                Put::User(u) => {
                    a.users.insert(key(&u.name), u);
                }
                Put::Group(g) => {
                    a.groups.insert(key(&g.name), g);
                }
                Put::Policy(p) => {
                    a.policies.insert(p.arn.clone(), p);
                }
                Put::Profile(p) => {
                    a.profiles.insert(key(&p.name), p);
                }
                Put::Task(t) => {
                    a.tasks.insert(t.id.clone(), t);
                }
            }
        }
        Ok(out)
    }
}
