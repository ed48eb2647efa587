//! Where function logs go. AWS writes them to CloudWatch Logs (`/aws/lambda/<name>`, one stream
//! per execution environment); until cumulo's Logs service is merged, they are kept here, the
//! newest lines per log group in memory, and an invocation's own lines are returned to the
//! caller with LogType=Tail.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// How many lines a log group keeps.
const KEEP: usize = 10_000;

#[derive(Default)]
pub struct LogSink {
    groups: Mutex<HashMap<(String, String), VecDeque<(String, String)>>>,
}

impl LogSink {
    /// Appends an invocation's lines to `group`'s `stream`.
    pub fn write(&self, region: &str, group: &str, stream: &str, lines: &[String]) {
        let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        let g = groups
            .entry((region.to_string(), group.to_string()))
            .or_default();
        for l in lines {
            if g.len() == KEEP {
                g.pop_front();
            }
            g.push_back((stream.to_string(), l.clone()));
        }
    }
}
