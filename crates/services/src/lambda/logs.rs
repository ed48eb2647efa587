//! Function logs go to CloudWatch Logs as AWS writes them: log group `/aws/lambda/<name>`, one
//! stream per execution environment (`YYYY/MM/DD/[version]id`), the INIT_START / START / END /
//! REPORT lines around each invocation's own output. Written through the Logs service's typed
//! operations; the group and stream are created on first use, as Lambda does.

use crate::logs::{CreateLogGroupInput, InputLogEvent, LogsService};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

pub struct LogSink {
    logs: Arc<LogsService>,
    /// `(region, group, stream)` already created by this process.
    created: Mutex<HashSet<(String, String, String)>>,
}

impl LogSink {
    pub fn new(logs: Arc<LogsService>) -> Self {
        LogSink {
            logs,
            created: Mutex::new(HashSet::new()),
        }
    }

    /// Appends an invocation's lines to `group`'s `stream`. A failure to write logs never fails
    /// the invocation (as on AWS); it is reported on cumulo's stderr.
    pub fn write(&self, region: &str, group: &str, stream: &str, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        let key = (region.to_string(), group.to_string(), stream.to_string());
        let known = self
            .created
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&key);
        if !known {
            let group_input = CreateLogGroupInput {
                name: group.to_string(),
                ..Default::default()
            };
            let made = self
                .logs
                .create_log_group(region, group_input)
                .or_else(already_exists)
                .and_then(|_| {
                    self.logs
                        .create_log_stream(region, group, stream)
                        .or_else(already_exists)
                });
            if let Err(e) = made {
                eprintln!(
                    "cumulo: lambda: cannot create log stream {group}/{stream}: {}",
                    e.message
                );
                return;
            }
            self.created
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key);
        }
        let now = chrono::Utc::now().timestamp_millis();
        let events: Vec<InputLogEvent> = lines
            .iter()
            .map(|l| InputLogEvent {
                timestamp: now,
                message: l.clone(),
            })
            .collect();
        if let Err(e) = self.logs.put_log_events(region, group, stream, &events) {
            eprintln!(
                "cumulo: lambda: cannot write logs to {group}/{stream}: {}",
                e.message
            );
        }
    }
}

fn already_exists(e: cumulo_wire::AwsError) -> Result<(), cumulo_wire::AwsError> {
    if e.code == "ResourceAlreadyExistsException" {
        Ok(())
    } else {
        Err(e)
    }
}
