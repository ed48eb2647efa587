//! The firing loop: one task per service that sleeps until the earliest next firing (or until
//! a schedule changes), hands each due key to the service, and lets the service record the
//! key's following firing. Idle when nothing is scheduled. Firings missed while the process was
//! down are not replayed (AWS does not replay them either).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How long the task sleeps at most when nothing is due (it is woken on every change anyway).
const MAX_SLEEP: Duration = Duration::from_secs(3600);

/// A key: (region, the service's name for what fires).
pub type Key = (String, String);

/// The next firing (ms since the epoch) of every scheduled key, and the bell that wakes the
/// loop when one changes.
#[derive(Default)]
pub struct Timers {
    next: Mutex<HashMap<Key, i64>>,
    wake: tokio::sync::Notify,
}

impl Timers {
    fn lock(&self) -> MutexGuard<'_, HashMap<Key, i64>> {
        self.next.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records when `key` fires next (`None`: it does not) and wakes the loop.
    pub fn set(&self, region: &str, name: &str, at: Option<i64>) {
        let key = (region.to_string(), name.to_string());
        match at {
            Some(t) => self.lock().insert(key, t),
            None => self.lock().remove(&key),
        };
        self.wake.notify_one();
    }

    fn earliest(&self) -> Option<i64> {
        self.lock().values().min().copied()
    }

    /// The keys due at `now`, removed: the service records each one's following firing.
    fn take_due(&self, now: i64) -> Vec<Key> {
        let mut next = self.lock();
        let due: Vec<Key> = next
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &due {
            next.remove(k);
        }
        due
    }

    /// Starts the loop on the current async runtime, calling `fire(region, name, now)` for
    /// each due key; without a runtime (a synchronous in-process caller, a unit test)
    /// schedules are recorded but not fired.
    pub fn start(self: &Arc<Self>, fire: impl Fn(&str, &str, i64) + Send + 'static) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let timers = self.clone();
        runtime.spawn(async move {
            loop {
                let now = super::now_ms();
                for (region, name) in timers.take_due(now) {
                    fire(&region, &name, now);
                }
                let wait = timers.earliest().map_or(MAX_SLEEP, |t| {
                    Duration::from_millis((t - now).clamp(0, 3_600_000) as u64)
                });
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = timers.wake.notified() => {}
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_keys_are_taken_once_and_the_rest_wait() {
        let t = Timers::default();
        t.set("r", "a", Some(100));
        t.set("r", "b", Some(200));
        t.set("r", "c", Some(50));
        t.set("r", "c", None);
        assert_eq!(t.earliest(), Some(100));
        assert_eq!(t.take_due(150), vec![("r".to_string(), "a".to_string())]);
        assert!(t.take_due(150).is_empty());
        assert_eq!(t.earliest(), Some(200));
    }
}
