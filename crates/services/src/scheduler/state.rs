//! Schedule groups and schedules in memory per region, each written through to the store as
//! one JSON document (`scheduler_records`, kinds `group` and `schedule`). A schedule's key is
//! `<group>/<name>`: names are unique within a group. The `default` group exists in every
//! region without being created; it is stored on the region's first change.

use crate::regional::{Table, records_by_kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE scheduler_records (
        region TEXT NOT NULL,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, kind, id)
    );"];

pub const TABLE: Table = Table {
    name: "scheduler_records",
    key: "id",
};

pub const GROUP: &str = "group";
pub const SCHEDULE: &str = "schedule";
pub const DEFAULT_GROUP: &str = "default";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub name: String,
    /// Seconds since the epoch.
    pub created: f64,
    pub modified: f64,
    pub tags: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub name: String,
    pub group: String,
    pub expression: String,
    pub timezone: Option<String>,
    pub description: Option<String>,
    /// Seconds since the epoch.
    pub start: Option<f64>,
    pub end: Option<f64>,
    /// `FlexibleTimeWindow` as given (`Mode`, `MaximumWindowInMinutes`).
    pub window: Value,
    /// `Target` as given: Arn, RoleArn, Input, RetryPolicy, DeadLetterConfig and the
    /// per-kind parameters, reported back as they came.
    pub target: Value,
    /// `ENABLED` or `DISABLED`.
    pub state: String,
    pub kms_key: Option<String>,
    /// `NONE` or `DELETE`; absent when not given (GetSchedule then omits it).
    pub after_completion: Option<String>,
    pub created: f64,
    pub modified: f64,
    /// When a rate expression started counting (ms): its creation or last update.
    pub counted_from: i64,
}

impl Schedule {
    pub fn key(&self) -> String {
        key(&self.group, &self.name)
    }
}

pub fn key(group: &str, name: &str) -> String {
    format!("{group}/{name}")
}

#[derive(Debug, Clone, Default)]
pub struct Region {
    pub groups: BTreeMap<String, Group>,
    pub schedules: BTreeMap<String, Schedule>,
    pub dirty: BTreeSet<(&'static str, String)>,
}

impl Region {
    pub fn touch(&mut self, kind: &'static str, id: &str) {
        self.dirty.insert((kind, id.to_string()));
    }

    /// The group by name; `default` exists from the region's first use (`now`).
    pub fn group(&self, name: &str, now: f64) -> Option<Group> {
        match self.groups.get(name) {
            Some(g) => Some(g.clone()),
            None if name == DEFAULT_GROUP => Some(Group {
                name: DEFAULT_GROUP.to_string(),
                created: now,
                modified: now,
                tags: Vec::new(),
            }),
            None => None,
        }
    }

    /// Stores the `default` group, so its creation date stays what it was first reported.
    pub fn keep_default(&mut self, now: f64) {
        if !self.groups.contains_key(DEFAULT_GROUP)
            && let Some(g) = self.group(DEFAULT_GROUP, now)
        {
            self.groups.insert(DEFAULT_GROUP.to_string(), g);
            self.touch(GROUP, DEFAULT_GROUP);
        }
    }
}

records_by_kind!(Region {
    groups: GROUP,
    schedules: SCHEDULE
});
