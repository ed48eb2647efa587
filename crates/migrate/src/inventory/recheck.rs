//! Whether an inventory still describes the account: before `generate --recheck` or
//! `rehearse --recheck` acts on it, the account is read again (through the same read-only
//! client) and every stack's status, last update time and deployed template compared with what
//! the inventory recorded. A plan made from a stale inventory would patch templates that are no
//! longer deployed and import resources that may be gone, so any difference refuses the command.

use super::answer::{list, text};
use super::model::Inventory;
use super::reads::{CallError, ReadClient, ReadRequest, Refused};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
pub enum RecheckError {
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error("{operation}: {} ({})", error.message, error.code)]
    Call { operation: String, error: CallError },
}

fn sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// What changed in the account since the inventory was taken, one line each (empty: nothing).
pub fn recheck(client: &dyn ReadClient, inv: &Inventory) -> Result<Vec<String>, RecheckError> {
    let call = |service: &str, operation: &str, input: serde_json::Value| {
        let request = ReadRequest::new(service, operation, input)?;
        Ok::<_, RecheckError>(client.call(&request))
    };
    let failed = |operation: &str, error: CallError| RecheckError::Call {
        operation: format!("cloudformation:{operation}"),
        error,
    };
    let mut changes = Vec::new();
    let identity =
        call("sts", "GetCallerIdentity", json!({}))?.map_err(|error| RecheckError::Call {
            operation: "sts:GetCallerIdentity".into(),
            error,
        })?;
    let account = text(&identity, "Account").unwrap_or_default();
    if account != inv.account {
        changes.push(format!(
            "the credentials reach account {account}, not the inventory's account {}",
            inv.account
        ));
        return Ok(changes);
    }
    for s in &inv.stacks {
        // By StackId: a deleted stack still answers (DELETE_COMPLETE), a recreated one of the
        // same name is another stack.
        let described = match call(
            "cloudformation",
            "DescribeStacks",
            json!({"StackName": s.id}),
        )? {
            Ok(answer) => list(answer.get("Stacks")).into_iter().next().cloned(),
            Err(e) if e.code == "ValidationError" && e.message.contains("does not exist") => None,
            Err(e) => return Err(failed("DescribeStacks", e)),
        };
        let Some(described) = described else {
            changes.push(format!("{}: the stack no longer exists", s.name));
            continue;
        };
        let status = text(&described, "StackStatus").unwrap_or_default();
        if status == "DELETE_COMPLETE" {
            changes.push(format!("{}: the stack was deleted", s.name));
            continue;
        }
        if status != s.status {
            changes.push(format!(
                "{}: status {status}, inventoried {}",
                s.name, s.status
            ));
        }
        let updated = text(&described, "LastUpdatedTime");
        if updated != s.last_updated_at {
            changes.push(format!(
                "{}: last updated {}, inventoried {}",
                s.name,
                updated.as_deref().unwrap_or("never"),
                s.last_updated_at.as_deref().unwrap_or("never")
            ));
        }
        let template = call(
            "cloudformation",
            "GetTemplate",
            json!({"StackName": s.id, "TemplateStage": "Original"}),
        )?
        .map_err(|e| failed("GetTemplate", e))?;
        let body = text(&template, "TemplateBody").unwrap_or_default();
        let (now, then) = (sha256(&body), sha256(&s.template));
        if now != then {
            changes.push(format!(
                "{}: the deployed template changed (SHA-256 {now}, inventoried {then})",
                s.name
            ));
        }
    }
    Ok(changes)
}

/// How long ago `taken_at` (RFC 3339) was, for the warning an un-rechecked inventory gets:
/// `3 d 4 h`, `2 h 5 min`, `12 min`; None when the time does not parse.
pub fn age(taken_at: &str, now_unix: i64) -> Option<String> {
    let then = parse_rfc3339_utc(taken_at)?;
    let secs = (now_unix - then).max(0);
    let (d, h, m) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60);
    Some(if d > 0 {
        format!("{d} d {h} h")
    } else if h > 0 {
        format!("{h} h {m} min")
    } else {
        format!("{m} min")
    })
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.frac]Z` (what `inventory` writes).
fn parse_rfc3339_utc(t: &str) -> Option<i64> {
    let t = t.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, mo, da) = (d.next()??, d.next()??, d.next()??);
    let time = time.split('.').next()?;
    let mut tm = time.split(':').map(|x| x.parse::<i64>().ok());
    let (h, mi, s) = (tm.next()??, tm.next()??, tm.next()??);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    struct Account(fn(&str, &Value) -> Result<Value, CallError>);

    impl ReadClient for Account {
        fn call(&self, request: &ReadRequest) -> Result<Value, CallError> {
            let op = format!("{}:{}", request.op().service, request.op().operation);
            (self.0)(&op, request.input())
        }
    }

    fn inventory() -> Inventory {
        serde_json::from_value(json!({
            "format_version": 1, "account": "1", "region": "us-east-1", "taken_at": "t",
            "taken_by": "test", "selection": {"kind": "stacks", "names": ["web"]},
            "stacks": [{"name": "web", "id": "arn:s/web", "status": "CREATE_COMPLETE",
                        "template": "Resources: {}\n"}],
            "content_sha256": ""}))
        .unwrap()
    }

    #[test]
    fn an_unchanged_account_passes_and_each_change_is_named() {
        let same = Account(|op, _| match op {
            "sts:GetCallerIdentity" => Ok(json!({"Account": "1"})),
            "cloudformation:DescribeStacks" => {
                Ok(json!({"Stacks": {"StackStatus": "CREATE_COMPLETE"}}))
            }
            _ => Ok(json!({"TemplateBody": "Resources: {}\n"})),
        });
        assert_eq!(recheck(&same, &inventory()).unwrap(), Vec::<String>::new());
        let changed = Account(|op, _| match op {
            "sts:GetCallerIdentity" => Ok(json!({"Account": "1"})),
            "cloudformation:DescribeStacks" => Ok(
                json!({"Stacks": {"StackStatus": "UPDATE_COMPLETE", "LastUpdatedTime": "2026-12-04T10:00:00Z"}}),
            ),
            _ => Ok(json!({"TemplateBody": "Resources: {Q: {Type: AWS::SQS::Queue}}\n"})),
        });
        let got = recheck(&changed, &inventory()).unwrap();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got[0],
            "web: status UPDATE_COMPLETE, inventoried CREATE_COMPLETE"
        );
        assert_eq!(
            got[1],
            "web: last updated 2026-12-04T10:00:00Z, inventoried never"
        );
        assert!(got[2].starts_with("web: the deployed template changed (SHA-256 "));
        let gone = Account(|op, _| match op {
            "sts:GetCallerIdentity" => Ok(json!({"Account": "1"})),
            _ => Err(CallError {
                code: "ValidationError".into(),
                message: "Stack with id arn:s/web does not exist".into(),
            }),
        });
        assert_eq!(
            recheck(&gone, &inventory()).unwrap(),
            vec!["web: the stack no longer exists".to_string()]
        );
        let other = Account(|_, _| Ok(json!({"Account": "2"})));
        assert_eq!(
            recheck(&other, &inventory()).unwrap(),
            vec!["the credentials reach account 2, not the inventory's account 1".to_string()]
        );
    }

    #[test]
    fn ages_read_as_days_hours_or_minutes() {
        let t = parse_rfc3339_utc("2026-12-04T21:00:00Z").unwrap();
        assert_eq!(parse_rfc3339_utc("1970-01-02T00:00:01Z"), Some(86_401));
        assert_eq!(
            age("2026-12-04T21:00:00Z", t + 125).as_deref(),
            Some("2 min")
        );
        assert_eq!(
            age("2026-12-04T21:00:00Z", t + 2 * 3600 + 300).as_deref(),
            Some("2 h 5 min")
        );
        assert_eq!(
            age("2026-12-01T21:00:00Z", t + 3600).as_deref(),
            Some("3 d 1 h")
        );
        assert_eq!(age("yesterday", t), None);
    }
}
