//! Subscription filter delivery to Lambda: the events a PutLogEvents call stores that match a
//! subscription filter whose destination is a Lambda function invoke it asynchronously (Event
//! invocation), one invocation per filter and call, with AWS's payload:
//! `{"awslogs": {"data": base64(gzip(<DATA_MESSAGE JSON>))}}`. Kinesis, Firehose and Logs
//! destinations are stored and reported only (neither Kinesis nor Firehose is emulated).
//!
//! Lambda depends on Logs (function logs go here), so Logs reaches Lambda through the catalog
//! when it delivers, never at build ([`crate::catalog::Context::catalog`]).

use super::LogsService;
use super::filter::Pattern;
use super::state::SubscriptionFilter;
use base64::Engine;
use serde_json::{Value, json};
use std::io::Write;

/// One stored event as a subscription delivers it.
pub struct Delivered<'a> {
    pub id: i64,
    pub timestamp: i64,
    pub message: &'a str,
}

/// The id AWS gives an event (the same FilterLogEvents reports).
pub fn event_id(timestamp: i64, id: i64) -> String {
    format!("{timestamp:020}{id:036}")
}

/// The DATA_MESSAGE a filter sends for the events it matches (`None`: it matches none).
pub fn data_message(
    owner: &str,
    group: &str,
    stream: &str,
    filter: &SubscriptionFilter,
    events: &[Delivered<'_>],
) -> Option<Value> {
    let pattern = Pattern::parse(&filter.filter_pattern).ok()?;
    let matched: Vec<Value> = events
        .iter()
        .filter(|e| pattern.matches(e.message))
        .map(|e| json!({"id": event_id(e.timestamp, e.id), "timestamp": e.timestamp, "message": e.message}))
        .collect();
    if matched.is_empty() {
        return None;
    }
    Some(json!({
        "messageType": "DATA_MESSAGE",
        "owner": owner,
        "logGroup": group,
        "logStream": stream,
        "subscriptionFilters": [filter.filter_name],
        "logEvents": matched,
    }))
}

/// `{"awslogs": {"data": base64(gzip(message))}}`.
pub fn awslogs_payload(message: &Value) -> Value {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(message.to_string().as_bytes());
    let bytes = gz.finish().unwrap_or_default();
    json!({"awslogs": {"data": base64::engine::general_purpose::STANDARD.encode(bytes)}})
}

fn is_lambda(arn: &str) -> bool {
    arn.split(':').nth(2) == Some("lambda")
}

impl LogsService {
    /// Invokes the Lambda destinations of `filters` with the events they match, in the
    /// background (the PutLogEvents answer does not wait, as on AWS).
    pub(super) fn deliver(
        &self,
        region: &str,
        group: &str,
        stream: &str,
        filters: &[SubscriptionFilter],
        events: &[Delivered<'_>],
    ) {
        let invocations: Vec<(String, Value)> = filters
            .iter()
            .filter(|f| is_lambda(&f.destination_arn))
            .filter_map(|f| {
                let message = data_message(&self.account_id, group, stream, f, events)?;
                Some((f.destination_arn.clone(), awslogs_payload(&message)))
            })
            .collect();
        if invocations.is_empty() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let catalog = self.catalog.clone();
        let region = region.to_string();
        handle.spawn(async move {
            let Some(catalog) = catalog.upgrade() else {
                return;
            };
            let Ok(lambda) = catalog.get::<crate::lambda::LambdaService>() else {
                return;
            };
            let core = lambda.core();
            for (function, payload) in invocations {
                let sent = core
                    .invoke(
                        &region,
                        &function,
                        None,
                        payload.to_string().into(),
                        crate::lambda::InvocationType::Event,
                        "",
                    )
                    .await;
                if let Err(e) = sent {
                    eprintln!(
                        "cumulo: logs: subscription delivery to {function} failed: {}",
                        e.message
                    );
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn payload_is_gzipped_base64_of_the_matching_events() {
        let filter = SubscriptionFilter {
            filter_name: "errors".into(),
            filter_pattern: "ERROR".into(),
            destination_arn: "arn:aws:lambda:us-east-1:000000000000:function:f".into(),
            role_arn: None,
            distribution: "ByLogStream".into(),
            apply_on_transformed_logs: false,
            creation_time: 0,
        };
        let events = [
            Delivered {
                id: 1,
                timestamp: 10,
                message: "ok",
            },
            Delivered {
                id: 2,
                timestamp: 11,
                message: "ERROR bad",
            },
        ];
        let m = data_message("000000000000", "/g", "s", &filter, &events).expect("matched");
        assert_eq!(m["logEvents"].as_array().map(Vec::len), Some(1));
        assert_eq!(m["logEvents"][0]["id"], event_id(11, 2));
        assert_eq!(m["subscriptionFilters"], json!(["errors"]));
        let p = awslogs_payload(&m);
        let raw = base64::engine::general_purpose::STANDARD
            .decode(p["awslogs"]["data"].as_str().expect("data"))
            .expect("base64");
        let mut text = String::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_string(&mut text)
            .expect("gzip");
        assert_eq!(serde_json::from_str::<Value>(&text).expect("json"), m);
        assert!(data_message("0", "/g", "s", &filter, &events[..1]).is_none());
    }
}
