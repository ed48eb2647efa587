//! Statuses derived from timestamps, so nothing is written as time passes and a poller sees
//! the in-progress status before the settled one, as on AWS. Every operation on a service (or
//! ingress connection) takes [`TRANSITION_SECONDS`].

use super::state::{AppService, IngressConnection, Operation};

/// How long an operation stays in progress. No container starts, so this only has to be long
/// enough for a poller to see the transition.
pub const TRANSITION_SECONDS: f64 = 0.2;

/// The service's Status, or `None` once a deletion has completed (the service is gone).
pub fn service_status(s: &AppService, now: f64) -> Option<&'static str> {
    match s.deleted_at {
        Some(at) if now >= at + TRANSITION_SECONDS => None,
        Some(_) => Some("OPERATION_IN_PROGRESS"),
        None if now < s.busy_until => Some("OPERATION_IN_PROGRESS"),
        None if s.paused => Some("PAUSED"),
        None => Some("RUNNING"),
    }
}

pub fn operation_status(op: &Operation, now: f64) -> &'static str {
    if now < op.ends {
        "IN_PROGRESS"
    } else {
        "SUCCEEDED"
    }
}

pub fn ingress_status(i: &IngressConnection, now: f64) -> String {
    match i.deleted_at {
        Some(at) if now >= at + TRANSITION_SECONDS => "DELETED".into(),
        Some(_) => "PENDING_DELETION".into(),
        None if now < i.busy_until => i.pending.clone(),
        None => "AVAILABLE".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn service(busy_until: f64) -> AppService {
        AppService {
            name: "web".into(),
            id: "0".repeat(32),
            url: "abc.us-east-1.awsapprunner.com".into(),
            created: 0.0,
            updated: 0.0,
            source: json!({}),
            instance: json!({}),
            health: json!({}),
            network: json!({}),
            observability: json!({}),
            encryption: None,
            auto_scaling_arn: String::new(),
            tags: vec![],
            paused: false,
            busy_until,
            deleted_at: None,
            operations: vec![],
            domains: vec![],
        }
    }

    #[test]
    fn a_service_is_in_progress_then_running_then_paused() {
        let mut s = service(10.0);
        assert_eq!(service_status(&s, 9.5), Some("OPERATION_IN_PROGRESS"));
        assert_eq!(service_status(&s, 10.0), Some("RUNNING"));
        s.paused = true;
        assert_eq!(service_status(&s, 9.0), Some("OPERATION_IN_PROGRESS"));
        assert_eq!(service_status(&s, 11.0), Some("PAUSED"));
    }

    #[test]
    fn a_deleted_service_is_in_progress_then_gone() {
        let mut s = service(0.0);
        s.deleted_at = Some(20.0);
        assert_eq!(service_status(&s, 20.1), Some("OPERATION_IN_PROGRESS"));
        assert_eq!(service_status(&s, 20.0 + TRANSITION_SECONDS), None);
    }

    #[test]
    fn operations_succeed_when_their_time_is_up() {
        let op = Operation {
            id: "x".into(),
            kind: "CREATE_SERVICE".into(),
            started: 0.0,
            ends: 1.0,
        };
        assert_eq!(operation_status(&op, 0.5), "IN_PROGRESS");
        assert_eq!(operation_status(&op, 1.0), "SUCCEEDED");
    }

    #[test]
    fn an_ingress_connection_moves_from_pending_to_available_to_deleted() {
        let mut i = IngressConnection {
            name: "in".into(),
            service_arn: String::new(),
            vpc_id: String::new(),
            vpc_endpoint_id: String::new(),
            domain_name: String::new(),
            created: 0.0,
            pending: "PENDING_CREATION".into(),
            busy_until: 1.0,
            deleted_at: None,
            tags: vec![],
        };
        assert_eq!(ingress_status(&i, 0.5), "PENDING_CREATION");
        assert_eq!(ingress_status(&i, 1.5), "AVAILABLE");
        i.deleted_at = Some(2.0);
        assert_eq!(ingress_status(&i, 2.1), "PENDING_DELETION");
        assert_eq!(ingress_status(&i, 2.0 + TRANSITION_SECONDS), "DELETED");
    }
}
