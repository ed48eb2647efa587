//! What EventBridge's scheduled rules and EventBridge Scheduler's schedules share: the
//! expression language (`rate(...)`, six-field `cron(...)`) in `expression`, and in `timer` the
//! task that sleeps until the earliest firing and hands each due key to its service. Each
//! service keeps its own records and decides what a firing does; neither runs a loop of its own.

mod expression;
mod timer;

pub use expression::Schedule;
pub use timer::Timers;

/// Milliseconds since the epoch: the clock every firing is computed against.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
