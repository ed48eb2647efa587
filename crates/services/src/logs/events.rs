//! Typed operations on log events: PutLogEvents (AWS's ordering, size and age rules),
//! GetLogEvents (forward/backward tokens over one stream) and FilterLogEvents (a group's
//! streams interleaved in time order, through a filter pattern).

use super::LogsService;
use super::filter::Pattern;
use super::groups::{
    check_group_name, check_stream_name, decode_token, encode_token, group_not_found, invalid,
    now_ms, stream_not_found,
};
use super::state::{self, Cursor, StoredEvent, StreamQuery, internal};
use cumulo_wire::AwsError;

const MAX_BATCH_EVENTS: usize = 10_000;
const MAX_BATCH_BYTES: usize = 1_048_576;
/// AWS counts 26 bytes of overhead per event against the batch size.
const EVENT_OVERHEAD: usize = 26;
const MAX_EVENT_BYTES: usize = 1_048_576 - EVENT_OVERHEAD;
const DAY_MS: i64 = 86_400_000;
/// Events more than 2 hours in the future are rejected as too new.
const TOO_NEW_MS: i64 = 2 * 3_600_000;
/// Events older than 14 days are rejected as too old.
const TOO_OLD_MS: i64 = 14 * DAY_MS;
/// What one GetLogEvents / FilterLogEvents response may carry.
const MAX_RESPONSE_BYTES: usize = 1_048_576;
/// Rows FilterLogEvents reads from the store per round while it collects matches.
const SCAN_BATCH: usize = 1_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLogEvent {
    /// Milliseconds since the epoch.
    pub timestamp: i64,
    pub message: String,
}

/// Indexes of the events PutLogEvents did not store, as AWS reports them: events before
/// `too_old_end` / `expired_end` and from `too_new_start` on were rejected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RejectedInfo {
    pub too_new_start: Option<usize>,
    pub too_old_end: Option<usize>,
    pub expired_end: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutLogEventsOutput {
    pub next_sequence_token: String,
    pub rejected: Option<RejectedInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLogEvent {
    pub timestamp: i64,
    pub message: String,
    pub ingestion_time: i64,
}

/// Input of `GetLogEvents`.
#[derive(Debug, Clone, Default)]
pub struct GetEventsInput {
    pub group: String,
    pub stream: String,
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub next_token: Option<String>,
    pub limit: Option<i64>,
    pub start_from_head: bool,
}

/// Input of `FilterLogEvents`.
#[derive(Debug, Clone, Default)]
pub struct FilterInput {
    pub group: String,
    pub stream_names: Option<Vec<String>>,
    pub stream_prefix: Option<String>,
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub pattern: Option<String>,
    pub next_token: Option<String>,
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilteredEvent {
    pub stream: String,
    pub timestamp: i64,
    pub message: String,
    pub ingestion_time: i64,
    pub event_id: String,
}

/// GetLogEvents' result: events oldest first and the two tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetEventsOutput {
    pub events: Vec<OutputLogEvent>,
    pub forward_token: String,
    pub backward_token: String,
}

/// FilterLogEvents' result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterOutput {
    pub events: Vec<FilteredEvent>,
    pub searched_streams: Vec<String>,
    pub next_token: Option<String>,
}

fn position(c: Cursor) -> String {
    format!("{:020}{:020}", c.timestamp, c.id)
}

fn cursor_of(e: &StoredEvent) -> Cursor {
    Cursor {
        timestamp: e.timestamp,
        id: e.id,
    }
}

fn bad_token() -> AwsError {
    invalid("The specified nextToken is invalid.")
}

/// `f/<40 digits>` or `b/<40 digits>`: direction (forward?) and position.
fn parse_stream_token(t: &str) -> Result<(bool, Cursor), AwsError> {
    let (forward, digits) = if let Some(d) = t.strip_prefix("f/") {
        (true, d)
    } else if let Some(d) = t.strip_prefix("b/") {
        (false, d)
    } else {
        return Err(bad_token());
    };
    if digits.len() != 40 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_token());
    }
    let (ts, id) = digits.split_at(20);
    Ok((
        forward,
        Cursor {
            timestamp: ts.parse().map_err(|_| bad_token())?,
            id: id.parse().map_err(|_| bad_token())?,
        },
    ))
}

fn events_limit(given: Option<i64>) -> Result<usize, AwsError> {
    let n = given.unwrap_or(MAX_BATCH_EVENTS as i64);
    if !(1..=MAX_BATCH_EVENTS as i64).contains(&n) {
        return Err(invalid(format!(
            "1 validation error detected: Value '{n}' at 'limit' failed to satisfy constraint: Member must have value between 1 and 10000"
        )));
    }
    Ok(n as usize)
}

/// The first `events` whose messages (plus overhead) fit in one response.
fn fit_response<T>(events: &mut Vec<T>, size: impl Fn(&T) -> usize) {
    let mut total = 0;
    let keep = events
        .iter()
        .take_while(|e| {
            total += size(e) + EVENT_OVERHEAD;
            total <= MAX_RESPONSE_BYTES
        })
        .count();
    events.truncate(keep.max(1).min(events.len()));
}

impl LogsService {
    /// The oldest timestamp a group still holds: events past its retention are gone (AWS
    /// deletes them; cumulo stops returning them).
    fn retention_floor(&self, region: &str, group: &str, now: i64) -> Result<i64, AwsError> {
        let g = self.log_group(region, group)?;
        Ok(g.retention_in_days.map_or(i64::MIN, |d| now - d * DAY_MS))
    }

    /// Stores a batch of events in one stream. The batch must be in chronological order and
    /// span at most 24 hours; events too far in the future, older than 14 days or past the
    /// group's retention are skipped and reported in `rejected`, as AWS does.
    pub fn put_log_events(
        &self,
        region: &str,
        group: &str,
        stream: &str,
        events: &[InputLogEvent],
    ) -> Result<PutLogEventsOutput, AwsError> {
        check_group_name(group, "logGroupName")?;
        check_stream_name(stream)?;
        if events.is_empty() {
            return Err(invalid(
                "1 validation error detected: Value '[]' at 'logEvents' failed to satisfy constraint: Member must have length greater than or equal to 1",
            ));
        }
        if events.len() > MAX_BATCH_EVENTS {
            return Err(invalid(format!(
                "1 validation error detected: Value at 'logEvents' failed to satisfy constraint: Member must have length less than or equal to {MAX_BATCH_EVENTS}"
            )));
        }
        let mut size = 0;
        for (i, e) in events.iter().enumerate() {
            if e.message.is_empty() {
                return Err(invalid(format!(
                    "1 validation error detected: Value '' at 'logEvents.{}.member.message' failed to satisfy constraint: Member must have length greater than or equal to 1",
                    i + 1
                )));
            }
            if e.timestamp < 0 {
                return Err(invalid(format!(
                    "1 validation error detected: Value '{}' at 'logEvents.{}.member.timestamp' failed to satisfy constraint: Member must have value greater than or equal to 0",
                    e.timestamp,
                    i + 1
                )));
            }
            if e.message.len() > MAX_EVENT_BYTES {
                return Err(invalid(format!(
                    "Log event too large: {} bytes exceeds limit of {MAX_EVENT_BYTES}",
                    e.message.len()
                )));
            }
            size += e.message.len() + EVENT_OVERHEAD;
        }
        if size > MAX_BATCH_BYTES {
            return Err(invalid(format!(
                "Upload too large: {size} bytes exceeds limit of {MAX_BATCH_BYTES}"
            )));
        }
        if events.windows(2).any(|w| w[1].timestamp < w[0].timestamp) {
            return Err(invalid(
                "Log events in a single PutLogEvents request must be in chronological order.",
            ));
        }
        if let (Some(first), Some(last)) = (events.first(), events.last())
            && last.timestamp - first.timestamp > DAY_MS
        {
            return Err(invalid(
                "The batch of log events in a single PutLogEvents request cannot span more than 24 hours.",
            ));
        }

        let now = now_ms();
        let mut regions = self.lock();
        let g = regions
            .get_mut(region)
            .and_then(|m| m.get_mut(group))
            .ok_or_else(group_not_found)?;
        let retention_floor = g.retention_in_days.map(|d| now - d * DAY_MS);
        let mut rejected = RejectedInfo::default();
        let mut accepted: Vec<&InputLogEvent> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            if e.timestamp > now + TOO_NEW_MS {
                rejected.too_new_start.get_or_insert(i);
            } else if e.timestamp < now - TOO_OLD_MS {
                rejected.too_old_end = Some(i + 1);
            } else if retention_floor.is_some_and(|f| e.timestamp < f) {
                rejected.expired_end = Some(i + 1);
            } else {
                accepted.push(e);
            }
        }
        let s = g.streams.get_mut(stream).ok_or_else(stream_not_found)?;
        let mut updated = s.clone();
        updated.uploads += 1;
        if let (Some(first), Some(last)) = (accepted.first(), accepted.last()) {
            updated.first_event = Some(
                updated
                    .first_event
                    .map_or(first.timestamp, |f| f.min(first.timestamp)),
            );
            updated.last_event = Some(
                updated
                    .last_event
                    .map_or(last.timestamp, |l| l.max(last.timestamp)),
            );
            updated.last_ingestion = Some(now);
            updated.stored_bytes += accepted.iter().map(|e| e.message.len() as i64).sum::<i64>();
        }
        let ids = self
            .store
            .write(|tx| {
                let mut ids = Vec::with_capacity(accepted.len());
                for e in &accepted {
                    ids.push(state::insert_event(
                        tx,
                        region,
                        group,
                        stream,
                        e.timestamp,
                        now,
                        &e.message,
                    )?);
                }
                state::save_stream(tx, region, group, &updated)?;
                Ok(ids)
            })
            .map_err(internal)?;
        let token = updated.sequence_token();
        *s = updated;
        let filters: Vec<_> = g.subscription_filters.values().cloned().collect();
        drop(regions);
        if !filters.is_empty() {
            let delivered: Vec<super::delivery::Delivered<'_>> = accepted
                .iter()
                .zip(&ids)
                .map(|(e, id)| super::delivery::Delivered {
                    id: *id,
                    timestamp: e.timestamp,
                    message: &e.message,
                })
                .collect();
            self.deliver(region, group, stream, &filters, &delivered);
        }
        let any_rejected = rejected != RejectedInfo::default();
        Ok(PutLogEventsOutput {
            next_sequence_token: token,
            rejected: any_rejected.then_some(rejected),
        })
    }

    pub fn get_log_events(
        &self,
        region: &str,
        input: GetEventsInput,
    ) -> Result<GetEventsOutput, AwsError> {
        check_group_name(&input.group, "logGroupName")?;
        check_stream_name(&input.stream)?;
        let limit = events_limit(input.limit)?;
        let now = now_ms();
        let floor = self.retention_floor(region, &input.group, now)?;
        let g = self.log_group(region, &input.group)?;
        if !g.streams.contains_key(&input.stream) {
            return Err(stream_not_found());
        }
        let (forward, cursor) = match input.next_token.as_deref() {
            Some(t) => {
                let (f, c) = parse_stream_token(t)?;
                (f, Some(c))
            }
            None => (input.start_from_head, None),
        };
        let q = StreamQuery {
            region,
            group: &input.group,
            stream: &input.stream,
            start: input.start_time.unwrap_or(i64::MIN).max(floor),
            end: input.end_time.unwrap_or(i64::MAX),
            cursor,
            forward,
            limit,
        };
        let mut rows = self
            .store
            .read(|c| state::stream_events(c, &q))
            .map_err(internal)?;
        if forward {
            fit_response(&mut rows, |e| e.message.len());
        } else {
            rows.reverse();
            fit_response(&mut rows, |e| e.message.len());
            rows.reverse();
        }
        let zero = Cursor {
            timestamp: 0,
            id: 0,
        };
        let (forward_pos, backward_pos) = match (rows.first(), rows.last()) {
            (Some(first), Some(last)) => (cursor_of(last), cursor_of(first)),
            // Nothing (more) to read: both tokens stay where the read was.
            _ => {
                let at = cursor.unwrap_or(zero);
                (at, at)
            }
        };
        Ok(GetEventsOutput {
            events: rows
                .into_iter()
                .map(|e| OutputLogEvent {
                    timestamp: e.timestamp,
                    message: e.message,
                    ingestion_time: e.ingestion_time,
                })
                .collect(),
            forward_token: format!("f/{}", position(forward_pos)),
            backward_token: format!("b/{}", position(backward_pos)),
        })
    }

    /// Events of a group's streams (all, the named ones, or those with a prefix) that match
    /// the pattern, interleaved in time order; `endTime` is inclusive here, as AWS documents.
    pub fn filter_log_events(
        &self,
        region: &str,
        input: FilterInput,
    ) -> Result<FilterOutput, AwsError> {
        check_group_name(&input.group, "logGroupName")?;
        if input.stream_names.is_some() && input.stream_prefix.is_some() {
            return Err(invalid(
                "logStreamNames and logStreamNamePrefix are mutually exclusive",
            ));
        }
        let limit = events_limit(input.limit)?;
        let pattern = Pattern::parse(input.pattern.as_deref().unwrap_or(""))?;
        let mut cursor = match input.next_token.as_deref() {
            None => None,
            Some(t) => {
                let raw = decode_token(t)?;
                let (f, c) = parse_stream_token(&raw)?;
                if !f {
                    return Err(bad_token());
                }
                Some(c)
            }
        };
        let now = now_ms();
        let floor = self.retention_floor(region, &input.group, now)?;
        let group = self.log_group(region, &input.group)?;
        let searched: Vec<String> = group
            .streams
            .keys()
            .filter(|s| {
                input
                    .stream_names
                    .as_ref()
                    .is_none_or(|names| names.contains(s))
            })
            .filter(|s| {
                input
                    .stream_prefix
                    .as_ref()
                    .is_none_or(|p| s.starts_with(p))
            })
            .cloned()
            .collect();
        let range = (
            input.start_time.unwrap_or(i64::MIN).max(floor),
            input.end_time.map_or(i64::MAX, |e| e.saturating_add(1)),
        );
        let mut found: Vec<FilteredEvent> = Vec::new();
        let mut bytes = 0;
        let mut more = false;
        'scan: loop {
            let batch = self
                .store
                .read(|c| state::group_events(c, region, &input.group, range, cursor, SCAN_BATCH))
                .map_err(internal)?;
            let exhausted = batch.len() < SCAN_BATCH;
            for e in batch {
                if found.len() == limit
                    || bytes + e.message.len() + EVENT_OVERHEAD > MAX_RESPONSE_BYTES
                {
                    more = true;
                    break 'scan;
                }
                cursor = Some(cursor_of(&e));
                if !searched.contains(&e.stream) || !pattern.matches(&e.message) {
                    continue;
                }
                bytes += e.message.len() + EVENT_OVERHEAD;
                found.push(FilteredEvent {
                    event_id: format!("{:020}{:036}", e.timestamp, e.id),
                    stream: e.stream,
                    timestamp: e.timestamp,
                    message: e.message,
                    ingestion_time: e.ingestion_time,
                });
            }
            if exhausted {
                break;
            }
        }
        let next_token = match (more, cursor) {
            (true, Some(c)) => Some(encode_token(&format!("f/{}", position(c)))),
            _ => None,
        };
        Ok(FilterOutput {
            events: found,
            searched_streams: searched,
            next_token,
        })
    }
}
