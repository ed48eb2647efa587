//! DynamoDB's in-memory state and its write-through persistence. Every table's items live in
//! memory in key order (a partition's items are contiguous and sorted by sort key), with each
//! secondary index kept as an ordered set of references; every change is committed to the
//! `dynamodb_*` tables before the operation answers, and [`load`] rebuilds memory on start.

use super::schema::{IndexMeta, TableMeta};
use super::value::{Item, KeyVal, PrimaryKey, item_from_json, item_size, item_to_json};
use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

/// Tables hold their definition as a JSON document (new fields need no migration); items are
/// keyed by the JSON text of their key attributes and hold the item in DynamoDB's wire JSON.
pub const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE dynamodb_tables (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );
    CREATE TABLE dynamodb_items (
        region TEXT NOT NULL,
        tbl TEXT NOT NULL,
        k TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (region, tbl, k)
    );
",
    super::streams::MIGRATION,
];

/// A table is identified by its region and name (one account per server).
pub type TableKey = (String, String);

/// One secondary index: index partition value → (index sort value, table key) in order.
pub type IndexMap = BTreeMap<KeyVal, BTreeSet<(Option<KeyVal>, PrimaryKey)>>;

pub struct Table {
    pub meta: TableMeta,
    pub items: BTreeMap<PrimaryKey, Item>,
    pub indexes: HashMap<String, IndexMap>,
    /// DynamoDB's size of all items, kept up to date on every write.
    pub size: u64,
    /// When expired items were last removed (TTL sweeps run at most once a second per table).
    pub last_ttl_sweep: Option<Instant>,
}

impl Table {
    pub fn new(meta: TableMeta) -> Table {
        let mut t = Table {
            meta,
            items: BTreeMap::new(),
            indexes: HashMap::new(),
            size: 0,
            last_ttl_sweep: None,
        };
        t.rebuild_indexes();
        t
    }

    fn all_indexes(meta: &TableMeta) -> impl Iterator<Item = &IndexMeta> {
        meta.gsis.iter().chain(meta.lsis.iter())
    }

    /// Rebuilds every index from the items (after an index is created or deleted).
    pub fn rebuild_indexes(&mut self) {
        let mut indexes: HashMap<String, IndexMap> = HashMap::new();
        for index in Self::all_indexes(&self.meta) {
            let mut map = IndexMap::new();
            for (pk, item) in &self.items {
                if let Ok(Some((h, r))) = self.meta.index_key(index, item) {
                    map.entry(h).or_default().insert((r, pk.clone()));
                }
            }
            indexes.insert(index.name.clone(), map);
        }
        self.indexes = indexes;
    }

    /// Stores an item (already validated), returning the one it replaced.
    pub fn insert(&mut self, pk: PrimaryKey, item: Item) -> Option<Item> {
        let old = self.remove(&pk);
        self.size += item_size(&item) as u64;
        for index in Self::all_indexes(&self.meta) {
            if let Ok(Some((h, r))) = self.meta.index_key(index, &item) {
                self.indexes
                    .entry(index.name.clone())
                    .or_default()
                    .entry(h)
                    .or_default()
                    .insert((r, pk.clone()));
            }
        }
        self.items.insert(pk, item);
        old
    }

    pub fn remove(&mut self, pk: &PrimaryKey) -> Option<Item> {
        let old = self.items.remove(pk)?;
        self.size = self.size.saturating_sub(item_size(&old) as u64);
        for index in Self::all_indexes(&self.meta) {
            if let Ok(Some((h, r))) = self.meta.index_key(index, &old)
                && let Some(index_map) = self.indexes.get_mut(&index.name)
                && let Some(set) = index_map.get_mut(&h)
            {
                set.remove(&(r, pk.clone()));
                if set.is_empty() {
                    index_map.remove(&h);
                }
            }
        }
        Some(old)
    }

    /// Items and bytes in one index.
    pub fn index_stats(&self, name: &str) -> (u64, u64) {
        let Some(map) = self.indexes.get(name) else {
            return (0, 0);
        };
        let mut count = 0;
        let mut size = 0;
        for set in map.values() {
            for (_, pk) in set {
                count += 1;
                size += self.items.get(pk).map_or(0, |i| item_size(i) as u64);
            }
        }
        (count, size)
    }
}

/// The row key of an item: the JSON text of its key attributes (stable: maps are ordered).
pub fn row_key(meta: &TableMeta, item: &Item) -> String {
    item_to_json(&meta.key_of(item)).to_string()
}

pub fn save_table(tx: &Transaction<'_>, meta: &TableMeta) -> rusqlite::Result<()> {
    let data = serde_json::to_string(meta)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
    tx.execute(
        "INSERT INTO dynamodb_tables(region, name, data) VALUES (?1, ?2, ?3)
         ON CONFLICT(region, name) DO UPDATE SET data = excluded.data",
        params![meta.region, meta.name, data],
    )?;
    Ok(())
}

pub fn delete_table(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM dynamodb_tables WHERE region = ?1 AND name = ?2",
        params![region, name],
    )?;
    tx.execute(
        "DELETE FROM dynamodb_items WHERE region = ?1 AND tbl = ?2",
        params![region, name],
    )?;
    Ok(())
}

/// One item change of a request; a request's changes commit in one transaction.
pub enum Change {
    Put {
        meta_key: TableKey,
        pk: PrimaryKey,
        row: String,
        item: Item,
    },
    Delete {
        meta_key: TableKey,
        pk: PrimaryKey,
        row: String,
    },
}

impl Change {
    pub fn put(meta: &TableMeta, pk: PrimaryKey, item: Item) -> Change {
        Change::Put {
            meta_key: (meta.region.clone(), meta.name.clone()),
            row: row_key(meta, &item),
            pk,
            item,
        }
    }

    pub fn delete(meta: &TableMeta, pk: PrimaryKey, old: &Item) -> Change {
        Change::Delete {
            meta_key: (meta.region.clone(), meta.name.clone()),
            row: row_key(meta, old),
            pk,
        }
    }
}

pub fn write_changes(tx: &Transaction<'_>, changes: &[Change]) -> rusqlite::Result<()> {
    for c in changes {
        match c {
            Change::Put {
                meta_key: (region, name),
                row,
                item,
                ..
            } => {
                tx.execute(
                    "INSERT INTO dynamodb_items(region, tbl, k, data) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(region, tbl, k) DO UPDATE SET data = excluded.data",
                    params![region, name, row, item_to_json(item).to_string()],
                )?;
            }
            Change::Delete {
                meta_key: (region, name),
                row,
                ..
            } => {
                tx.execute(
                    "DELETE FROM dynamodb_items WHERE region = ?1 AND tbl = ?2 AND k = ?3",
                    params![region, name, row],
                )?;
            }
        }
    }
    Ok(())
}

/// Rebuilds every table from the store; records that cannot be read are reported, not fatal.
pub fn load(conn: &Connection) -> rusqlite::Result<(HashMap<TableKey, Table>, Vec<String>)> {
    let mut tables = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = conn.prepare("SELECT region, name, data FROM dynamodb_tables")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, name, data) = row?;
        match serde_json::from_str::<TableMeta>(&data) {
            Ok(meta) => {
                tables.insert((region, name), Table::new(meta));
            }
            Err(e) => problems.push(format!("table {region}/{name}: {e}")),
        }
    }
    let mut stmt = conn.prepare("SELECT region, tbl, k, data FROM dynamodb_items")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (region, tbl, k, data) = row?;
        let Some(table) = tables.get_mut(&(region.clone(), tbl.clone())) else {
            problems.push(format!("item {k} of missing table {region}/{tbl}"));
            continue;
        };
        let item = serde_json::from_str::<serde_json::Value>(&data)
            .ok()
            .and_then(|v| item_from_json(&v).ok());
        let Some(item) = item else {
            problems.push(format!("item {k} of {region}/{tbl}"));
            continue;
        };
        match table.meta.item_key(&item) {
            Ok(pk) => {
                table.insert(pk, item);
            }
            Err(e) => problems.push(format!("item {k} of {region}/{tbl}: {e}")),
        }
    }
    Ok((tables, problems))
}
