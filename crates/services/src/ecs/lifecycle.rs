//! Where a task is in its life, derived from its timestamps at the moment of asking: no
//! container runs, so a task moves PROVISIONING -> PENDING -> RUNNING on a short clock, and
//! from StopTask on DEPROVISIONING -> STOPPED. Nothing is written as time passes: every read
//! derives the same answer from what was stored when the task was started or stopped.

use super::state::Task;

/// Seconds a task spends PROVISIONING (its ENI being attached on AWS).
pub const PROVISIONING_S: f64 = 0.2;
/// Seconds from start until RUNNING.
pub const RUNNING_AFTER_S: f64 = 0.5;
/// Seconds a stopping task spends DEPROVISIONING before it is STOPPED.
pub const STOPPING_S: f64 = 0.3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Provisioning,
    Pending,
    Running,
    Deprovisioning,
    Stopped,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Provisioning => "PROVISIONING",
            Phase::Pending => "PENDING",
            Phase::Running => "RUNNING",
            Phase::Deprovisioning => "DEPROVISIONING",
            Phase::Stopped => "STOPPED",
        }
    }

    /// Counted in a service's or cluster's pendingCount.
    pub fn is_pending(self) -> bool {
        matches!(self, Phase::Provisioning | Phase::Pending)
    }
}

pub fn phase(task: &Task, now: f64) -> Phase {
    phase_at(task.created_at, task.stop_requested_at, now)
}

pub fn phase_at(created: f64, stop_requested: Option<f64>, now: f64) -> Phase {
    match stop_requested {
        Some(s) if now - s >= STOPPING_S => Phase::Stopped,
        Some(_) => Phase::Deprovisioning,
        None if now - created >= RUNNING_AFTER_S => Phase::Running,
        None if now - created >= PROVISIONING_S => Phase::Pending,
        None => Phase::Provisioning,
    }
}

/// When a started task reached (or reaches) RUNNING.
pub fn running_at(created: f64) -> f64 {
    created + RUNNING_AFTER_S
}

/// When a stop-requested task reached (or reaches) STOPPED.
pub fn stopped_at(stop_requested: f64) -> f64 {
    stop_requested + STOPPING_S
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_provisions_then_pends_then_runs() {
        assert_eq!(phase_at(10.0, None, 10.0), Phase::Provisioning);
        assert_eq!(phase_at(10.0, None, 10.3), Phase::Pending);
        assert_eq!(phase_at(10.0, None, 10.5), Phase::Running);
        assert_eq!(phase_at(10.0, None, 1000.0), Phase::Running);
    }

    #[test]
    fn a_stopped_task_deprovisions_then_stops_whatever_it_was() {
        assert_eq!(phase_at(10.0, Some(10.1), 10.2), Phase::Deprovisioning);
        assert_eq!(phase_at(10.0, Some(10.1), 10.4), Phase::Stopped);
        assert_eq!(running_at(10.0), 10.5);
        assert_eq!(stopped_at(11.0), 11.3);
    }

    #[test]
    fn only_provisioning_and_pending_count_as_pending() {
        assert!(Phase::Provisioning.is_pending());
        assert!(Phase::Pending.is_pending());
        assert!(!Phase::Running.is_pending());
        assert!(!Phase::Deprovisioning.is_pending());
    }
}
