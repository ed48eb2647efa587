//! Drift through the CloudFormation API: DetectStackDrift, DetectStackResourceDrift,
//! DescribeStackDriftDetectionStatus, DescribeStackResourceDrifts, and the DriftInformation
//! of stacks and resources. Detection is [`super::drift::drift`] itself (what `cumulo drift`
//! runs), so the endpoint and direct deploy report the same thing on one stack; a report
//! `cumulo drift` makes is recorded here too.
//!
//! Decisions:
//! - Detection runs before DetectStackDrift answers: its status is DETECTION_COMPLETE (or
//!   DETECTION_FAILED) on the first DescribeStackDriftDetectionStatus, never IN_PROGRESS.
//! - A resource whose type cannot be read back (not emulated, a stub, no read) is
//!   NOT_CHECKED in its DriftInformation and absent from DescribeStackResourceDrifts, as AWS
//!   leaves out types that do not support drift detection; a read that failed is UNKNOWN and
//!   makes the detection DETECTION_FAILED with the stack UNKNOWN.
//! - Detections live in `cfn_drift_detections` (their own migration owner, `cfn_drift`); the
//!   last [`KEPT`] of each stack are kept. Expected and actual values keep dynamic references
//!   literal (never a resolved secret) and rows holding a NoEcho parameter value are sealed
//!   like every other row of the stack.

use super::common::find_live;
use super::drift::{PropertyDifference, ResourceDrift, Settle};
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::ops::read::time;
use crate::state::now_ms;
use cumulo_store::rusqlite::params;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE cfn_drift_detections (detection_id TEXT PRIMARY KEY, stack_id TEXT NOT NULL, body TEXT NOT NULL);",
];

/// Detections kept per stack (AWS: "the number of drift results CloudFormation retains ...
/// may vary").
const KEPT: i64 = 20;

/// One resource's result in a detection (a StackResourceDrift).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ResourceResult {
    pub logical_id: String,
    pub physical_id: Option<String>,
    pub resource_type: String,
    pub status: String,
    pub reason: Option<String>,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
    pub differences: Vec<PropertyDifference>,
    pub timestamp: i64,
}

/// One detection, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Detection {
    pub id: String,
    pub stack_id: String,
    /// DetectStackDrift (a single resource's detection leaves the stack's status alone).
    pub whole_stack: bool,
    pub timestamp: i64,
    pub stack_drift_status: String,
    pub detection_status: String,
    pub reason: Option<String>,
    pub drifted: usize,
    pub resources: Vec<ResourceResult>,
}

/// What the last detections say about one stack.
#[derive(Debug, Clone, Default)]
struct StackDrift {
    /// `(StackDriftStatus, LastCheckTimestamp)` of the last DetectStackDrift.
    stack: Option<(String, i64)>,
    resources: IndexMap<String, ResourceResult>,
}

/// Every stack's drift knowledge, in memory, loaded from the store at start.
#[derive(Default)]
pub(crate) struct Detections {
    /// Detection id → the detection without its resources (DescribeStackDriftDetectionStatus).
    by_id: HashMap<String, Detection>,
    stacks: HashMap<String, StackDrift>,
}

impl Detections {
    fn note(&mut self, d: &Detection) {
        let entry = self.stacks.entry(d.stack_id.clone()).or_default();
        if d.whole_stack {
            entry.stack = Some((d.stack_drift_status.clone(), d.timestamp));
        }
        for r in &d.resources {
            entry.resources.insert(r.logical_id.clone(), r.clone());
        }
        let mut head = d.clone();
        head.resources.clear();
        self.by_id.insert(d.id.clone(), head);
    }

    pub(crate) fn load(store: &cumulo_store::Store) -> Result<Detections, EngineError> {
        store.migrate("cfn_drift", MIGRATIONS)?;
        let rows = store.read(|c| {
            let mut st =
                c.prepare("SELECT stack_id, body FROM cfn_drift_detections ORDER BY rowid")?;
            let it = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            it.collect::<cumulo_store::rusqlite::Result<Vec<_>>>()
        })?;
        let mut out = Detections::default();
        for (stack_id, body) in rows {
            let Some(body) = crate::seal::open(store.master_key(), &stack_id, body) else {
                continue;
            };
            if let Ok(d) = serde_json::from_str::<Detection>(&body) {
                out.note(&d);
            }
        }
        Ok(out)
    }

    /// The stack's DriftInformation.
    pub(crate) fn stack_info(&self, stack_id: &str) -> DriftInformation {
        match self.stacks.get(stack_id).and_then(|s| s.stack.as_ref()) {
            Some((status, at)) => DriftInformation {
                status: status.clone(),
                last_check: Some(time(*at)),
            },
            None => DriftInformation::default(),
        }
    }

    /// A resource's DriftInformation.
    pub(crate) fn resource_info(&self, stack_id: &str, logical_id: &str) -> DriftInformation {
        match self
            .stacks
            .get(stack_id)
            .and_then(|s| s.resources.get(logical_id))
        {
            Some(r) => DriftInformation {
                status: r.status.clone(),
                last_check: Some(time(r.timestamp)),
            },
            None => DriftInformation::default(),
        }
    }
}

impl Engine {
    fn detections(&self) -> std::sync::MutexGuard<'_, Detections> {
        self.inner.drift.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fills the drift members of views the read operations built.
    pub(crate) fn with_stack_drift(&self, stack_id: &str) -> DriftInformation {
        self.detections().stack_info(stack_id)
    }

    pub(crate) fn with_resource_drift(&self, view: &mut StackResourceView) {
        view.drift = self
            .detections()
            .resource_info(&view.stack_id, &view.logical_resource_id);
    }
}

/// A drift report's result as the API shows it: unreadable resources are NOT_CHECKED, a read
/// that failed is UNKNOWN.
fn result_of(d: ResourceDrift, at: i64) -> ResourceResult {
    let unreadable = d
        .reason
        .as_deref()
        .is_some_and(|r| r.starts_with("cumulo:"));
    let status = match d.status.as_str() {
        "NOT_CHECKED" if !unreadable => "UNKNOWN".to_string(),
        s => s.to_string(),
    };
    ResourceResult {
        logical_id: d.logical_id,
        physical_id: d.physical_id,
        resource_type: d.resource_type,
        status,
        reason: d.reason,
        expected: d.expected,
        actual: d.actual,
        differences: d.differences,
        timestamp: at,
    }
}

/// Records a detection (durably, then in memory) and returns it.
fn record(
    engine: &Engine,
    stack_id: &str,
    whole_stack: bool,
    reports: Vec<ResourceDrift>,
) -> Result<Detection, EngineError> {
    let at = now_ms();
    let resources: Vec<ResourceResult> = reports.into_iter().map(|d| result_of(d, at)).collect();
    let drifted = resources
        .iter()
        .filter(|r| matches!(r.status.as_str(), "MODIFIED" | "DELETED"))
        .count();
    let failed: Vec<&str> = resources
        .iter()
        .filter(|r| r.status == "UNKNOWN")
        .map(|r| r.logical_id.as_str())
        .collect();
    let d = Detection {
        id: uuid::Uuid::new_v4().to_string(),
        stack_id: stack_id.to_string(),
        whole_stack,
        timestamp: at,
        stack_drift_status: if !failed.is_empty() {
            "UNKNOWN"
        } else if drifted > 0 {
            "DRIFTED"
        } else {
            "IN_SYNC"
        }
        .into(),
        detection_status: if failed.is_empty() {
            "DETECTION_COMPLETE"
        } else {
            "DETECTION_FAILED"
        }
        .into(),
        reason: (!failed.is_empty()).then(|| {
            format!(
                "Failed to detect drift on resources [{}]",
                failed.join(", ")
            )
        }),
        drifted,
        resources,
    };
    let body = engine
        .inner
        .row_body(stack_id, &engine.inner.needles_of(stack_id), &d);
    engine.inner.store.write(|tx| {
        tx.execute(
            "INSERT INTO cfn_drift_detections(detection_id, stack_id, body) VALUES (?1, ?2, ?3)",
            params![d.id, d.stack_id, body],
        )?;
        tx.execute(
            "DELETE FROM cfn_drift_detections WHERE stack_id = ?1 AND rowid NOT IN
                 (SELECT rowid FROM cfn_drift_detections WHERE stack_id = ?1 ORDER BY rowid DESC LIMIT ?2)",
            params![d.stack_id, KEPT],
        )
    })?;
    engine.detections().note(&d);
    Ok(d)
}

/// `cumulo drift`'s report, recorded as a DetectStackDrift would record it.
pub(crate) fn record_report(
    engine: &Engine,
    caller: &Caller,
    stack_name: &str,
    reports: &[ResourceDrift],
) -> Result<(), EngineError> {
    let stack_id = {
        let st = engine.inner.lock();
        find_live(&st, caller, stack_name)?.stack_id.clone()
    };
    record(engine, &stack_id, true, reports.to_vec()).map(|_| ())
}

pub async fn detect_stack_drift(
    engine: &Engine,
    caller: &Caller,
    stack_name: &str,
    logical_ids: &[String],
) -> Result<String, EngineError> {
    let stack_id = {
        let st = engine.inner.lock();
        let stack = find_live(&st, caller, stack_name)?;
        if let Some(bad) = logical_ids
            .iter()
            .find(|l| !stack.resources.contains_key(*l))
        {
            return Err(EngineError::validation(format!(
                "Resource {bad} does not exist for stack {stack_name}"
            )));
        }
        stack.stack_id.clone()
    };
    let mut reports = super::drift::drift(engine, caller, &stack_id, Settle::Report, &[]).await?;
    if !logical_ids.is_empty() {
        reports.retain(|r| logical_ids.contains(&r.logical_id));
    }
    Ok(record(engine, &stack_id, true, reports)?.id)
}

pub async fn detect_stack_resource_drift(
    engine: &Engine,
    caller: &Caller,
    stack_name: &str,
    logical_id: &str,
) -> Result<StackResourceDriftView, EngineError> {
    let stack_id = {
        let st = engine.inner.lock();
        let stack = find_live(&st, caller, stack_name)?;
        if !stack.resources.contains_key(logical_id) {
            return Err(EngineError::validation(format!(
                "Resource {logical_id} does not exist for stack {stack_name}"
            )));
        }
        stack.stack_id.clone()
    };
    let mut reports = super::drift::drift(engine, caller, &stack_id, Settle::Report, &[]).await?;
    reports.retain(|r| r.logical_id == logical_id);
    let d = record(engine, &stack_id, false, reports)?;
    d.resources
        .first()
        .map(|r| view(&stack_id, r))
        .ok_or_else(|| {
            EngineError::validation(format!(
                "Resource {logical_id} does not exist for stack {stack_name}"
            ))
        })
}

pub fn describe_stack_drift_detection_status(
    engine: &Engine,
    caller: &Caller,
    detection_id: &str,
) -> Result<DriftDetectionStatusView, EngineError> {
    let d = engine
        .detections()
        .by_id
        .get(detection_id)
        .cloned()
        .filter(|d| d.stack_id.contains(&format!(":{}:", caller.region)))
        .ok_or_else(|| {
            EngineError::validation(format!(
                "Drift detection with id {detection_id} does not exist"
            ))
        })?;
    Ok(DriftDetectionStatusView {
        stack_id: d.stack_id,
        stack_drift_detection_id: d.id,
        stack_drift_status: d.stack_drift_status,
        detection_status: d.detection_status,
        detection_status_reason: d.reason,
        drifted_stack_resource_count: d.drifted,
        timestamp: time(d.timestamp),
    })
}

pub fn describe_stack_resource_drifts(
    engine: &Engine,
    caller: &Caller,
    input: DescribeStackResourceDriftsInput,
) -> Result<DescribeStackResourceDriftsOutput, EngineError> {
    const STATUSES: &[&str] = &[
        "IN_SYNC",
        "MODIFIED",
        "DELETED",
        "NOT_CHECKED",
        "UNKNOWN",
        "UNSUPPORTED",
    ];
    if let Some(bad) = input
        .status_filters
        .iter()
        .find(|f| !STATUSES.contains(&f.as_str()))
    {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '[{bad}]' at 'stackResourceDriftStatusFilters' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [{}]]",
            STATUSES.join(", ")
        )));
    }
    let (stack_id, logical_ids): (String, Vec<String>) = {
        let st = engine.inner.lock();
        let stack = super::common::find(&st, caller, &input.stack_name)
            .ok_or_else(|| EngineError::stack_not_found(&input.stack_name))?;
        (
            stack.stack_id.clone(),
            stack.resources.keys().cloned().collect(),
        )
    };
    let all: Vec<StackResourceDriftView> = {
        let detections = engine.detections();
        detections
            .stacks
            .get(&stack_id)
            .map(|s| {
                s.resources
                    .values()
                    .filter(|r| logical_ids.contains(&r.logical_id) && r.status != "NOT_CHECKED")
                    .filter(|r| {
                        input.status_filters.is_empty() || input.status_filters.contains(&r.status)
                    })
                    .map(|r| view(&stack_id, r))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (drifts, next_token) =
        super::common::page_at_most(all, input.next_token.as_deref(), input.max_results)?;
    Ok(DescribeStackResourceDriftsOutput { drifts, next_token })
}

fn json_text(v: &Option<Value>) -> Option<String> {
    v.as_ref().map(Value::to_string)
}

fn view(stack_id: &str, r: &ResourceResult) -> StackResourceDriftView {
    StackResourceDriftView {
        stack_id: stack_id.to_string(),
        logical_resource_id: r.logical_id.clone(),
        physical_resource_id: r.physical_id.clone(),
        resource_type: r.resource_type.clone(),
        expected_properties: json_text(&r.expected),
        actual_properties: json_text(&r.actual),
        property_differences: r
            .differences
            .iter()
            .map(|d| PropertyDifferenceView {
                property_path: format!("/{}", d.path.replace('.', "/")),
                expected_value: d.expected.as_ref().map(value_text).unwrap_or_default(),
                actual_value: d.actual.as_ref().map(value_text).unwrap_or_default(),
                difference_type: d.difference_type.clone(),
            })
            .collect(),
        status: r.status.clone(),
        reason: r.reason.clone(),
        timestamp: time(r.timestamp),
    }
}

/// A property value as AWS writes it in a PropertyDifference: strings bare, the rest JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
