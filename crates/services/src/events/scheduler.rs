//! The task that fires scheduled rules: it sleeps until the earliest next firing (or until a
//! rule changes), sends each due rule's "Scheduled Event" to its targets, and computes that
//! rule's following firing. Idle when no rule has a schedule. Firings missed while the process
//! was down are not replayed (AWS does not replay them either).

use super::EventsService;
use super::schedule::Schedule;
use std::time::Duration;

/// How long the task sleeps at most when nothing is due (it is woken on every change anyway).
const MAX_SLEEP: Duration = Duration::from_secs(3600);

/// Starts the scheduler on the current async runtime; without one (a synchronous in-process
/// caller, a unit test) schedules are recorded but not fired.
pub fn start(svc: EventsService) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        loop {
            let now = super::ops::now_ms();
            let due = svc.take_due(now);
            for (region, name) in due {
                svc.fire(&region, &name, now);
            }
            let wait = svc.earliest().map_or(MAX_SLEEP, |t| {
                Duration::from_millis((t - now).clamp(0, 3_600_000) as u64)
            });
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = svc.inner.wake.notified() => {}
            }
        }
    });
}

impl EventsService {
    fn earliest(&self) -> Option<i64> {
        self.inner
            .next_fire
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .min()
            .copied()
    }

    /// The rules due at `now`, each rescheduled to its following firing.
    fn take_due(&self, now: i64) -> Vec<(String, String)> {
        let mut fire = self
            .inner
            .next_fire
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let due: Vec<(String, String)> = fire
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &due {
            fire.remove(k);
        }
        due
    }

    fn fire(&self, region: &str, name: &str, now: i64) {
        let Ok(rule) = self.describe_rule(region, name, None) else {
            return;
        };
        let Some(schedule) = rule
            .schedule
            .as_deref()
            .and_then(|s| Schedule::parse(s).ok())
        else {
            return;
        };
        if rule.enabled() {
            let event = self.scheduled_event(region, &rule, now);
            self.dispatch(region, &rule.bus, &event, Some(&rule));
            if let Some(next) = schedule.next_after(rule.schedule_from, now) {
                self.inner
                    .next_fire
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert((region.to_string(), name.to_string()), next);
            }
        }
    }
}
