//! Per-region state of several record kinds kept in one store table `(region, kind, <key>,
//! doc)`, the shape ECS, EFS, Cloud Map and API Gateway share. A mutation works on a copy of
//! the region and names the records it touched; the copy replaces the region only once those
//! records are written through, so an error (or a failed write) leaves memory and disk as
//! they were.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use cumulo_store::{Store, StoreError};
use cumulo_wire::AwsError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// A record's identity in the table: its kind and key.
pub trait Touched {
    fn parts(&self) -> (&'static str, &str);
}

impl Touched for (&'static str, String) {
    fn parts(&self) -> (&'static str, &str) {
        (self.0, &self.1)
    }
}

/// One region's records of every kind, as the table stores them.
pub trait Records: Default + Clone {
    /// The records the mutation in progress touched.
    fn touched(&self) -> impl Iterator<Item = (&'static str, &str)>;
    fn clear_touched(&mut self);
    /// The stored document of a record; `None` once it is gone (its row is deleted).
    fn doc(&self, kind: &str, key: &str) -> serde_json::Result<Option<String>>;
    /// Puts a stored document back at load; a kind the region does not know is skipped.
    fn put(&mut self, kind: &str, key: String, doc: &str) -> serde_json::Result<()>;
}

/// The store table: its name and the name of its key column.
pub struct Table {
    pub name: &'static str,
    pub key: &'static str,
}

impl Table {
    fn save<R: Records>(&self, tx: &Transaction<'_>, region: &str, r: &R) -> rusqlite::Result<()> {
        let (table, key) = (self.name, self.key);
        for (kind, k) in r.touched() {
            let doc = r
                .doc(kind, k)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
            match doc {
                Some(doc) => tx.execute(
                    &format!("INSERT OR REPLACE INTO {table}(region, kind, {key}, doc) VALUES (?1, ?2, ?3, ?4)"),
                    params![region, kind, k, doc],
                )?,
                None => tx.execute(
                    &format!("DELETE FROM {table} WHERE region = ?1 AND kind = ?2 AND {key} = ?3"),
                    params![region, kind, k],
                )?,
            };
        }
        Ok(())
    }

    /// Every stored record by region, and a line for each record that could not be read.
    fn load<R: Records>(
        &self,
        c: &Connection,
    ) -> rusqlite::Result<(HashMap<String, R>, Vec<String>)> {
        let mut regions: HashMap<String, R> = HashMap::new();
        let mut problems = Vec::new();
        let mut stmt = c.prepare(&format!(
            "SELECT region, kind, {}, doc FROM {}",
            self.key, self.name
        ))?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        for row in rows {
            let (region, kind, key, doc) = row?;
            let r = regions.entry(region.clone()).or_default();
            if let Err(e) = r.put(&kind, key.clone(), &doc) {
                problems.push(format!("{kind} {region}/{key}: {e}"));
            }
        }
        Ok((regions, problems))
    }
}

/// A service's regions, loaded from and written through to its table.
pub struct Regional<R> {
    store: Arc<Store>,
    table: Table,
    regions: Mutex<HashMap<String, R>>,
}

impl<R: Records> Regional<R> {
    /// Runs the table's migrations under `owner` and loads every stored record. A record that
    /// cannot be read is reported on stderr and skipped, rather than keeping the service down.
    pub fn open(
        store: Arc<Store>,
        owner: &str,
        migrations: &[&str],
        table: Table,
    ) -> Result<Self, StoreError> {
        store.migrate(owner, migrations)?;
        let (regions, problems) = store.read(|c| table.load(c))?;
        for p in problems {
            eprintln!("cumulo: {owner}: skipped unreadable stored record: {p}");
        }
        Ok(Regional {
            store,
            table,
            regions: Mutex::new(regions),
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, HashMap<String, R>> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` over a copy of the region and commits the records it touched.
    pub fn mutate<T>(
        &self,
        region: &str,
        f: impl FnOnce(&mut R) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        let mut regions = self.lock();
        let mut r = regions.get(region).cloned().unwrap_or_default();
        r.clear_touched();
        let out = f(&mut r)?;
        self.store
            .write(|tx| self.table.save(tx, region, &r))
            .map_err(|e| AwsError::internal(e.to_string()))?;
        r.clear_touched();
        regions.insert(region.to_string(), r);
        Ok(out)
    }

    pub fn read<T>(&self, region: &str, f: impl FnOnce(&R) -> T) -> T {
        let regions = self.lock();
        let empty = R::default();
        f(regions.get(region).unwrap_or(&empty))
    }
}

/// Implements [`Records`] for a region struct whose kinds are each one `BTreeMap<String, T>`
/// field (`field: KIND`), and whose `dirty` set holds [`Touched`] identities.
macro_rules! records_by_kind {
    ($region:ty { $($field:ident: $kind:pat),+ $(,)? }) => {
        impl $crate::regional::Records for $region {
            fn touched(&self) -> impl Iterator<Item = (&'static str, &str)> {
                self.dirty.iter().map($crate::regional::Touched::parts)
            }

            fn clear_touched(&mut self) {
                self.dirty.clear();
            }

            fn doc(&self, kind: &str, key: &str) -> serde_json::Result<Option<String>> {
                match kind {
                    $($kind => self.$field.get(key).map(serde_json::to_string).transpose(),)+
                    _ => Ok(None),
                }
            }

            fn put(&mut self, kind: &str, key: String, doc: &str) -> serde_json::Result<()> {
                match kind {
                    $($kind => {
                        self.$field.insert(key, serde_json::from_str(doc)?);
                    })+
                    _ => {}
                }
                Ok(())
            }
        }
    };
}
pub(crate) use records_by_kind;
