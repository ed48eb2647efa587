//! JSON parameters in the SDK's member names written as a query or EC2 request's form, by the
//! operation's input shape, as botocore's serializers write them: awsQuery lists as
//! `Name.member.N` (flattened: `Name.N`, an empty list `Name=`), maps as
//! `Name.entry.N.key`/`.value`; EC2 names from `queryName` or the capitalised `locationName`
//! (`InstanceIds` is `InstanceId.N`, `Filters` `Filter.N.Name`/`Filter.N.Value.M`) and every
//! list as `Name.N`.

use super::QueryModel;
use crate::AwsError;
use serde_json::Value;

impl QueryModel {
    /// `params` as `op`'s form pairs, without `Action` and `Version`. A member the input
    /// shape does not have is refused with botocore's wording.
    pub fn form(&self, op: &str, params: &Value) -> Result<Vec<(String, String)>, AwsError> {
        let o = self
            .operations
            .get(op)
            .ok_or_else(|| AwsError::internal(format!("{op} is not in the model")))?;
        let mut out = Vec::new();
        if let Some(input) = o["input"].as_str() {
            self.write(input, "", params, &mut out)?;
        } else if let Some(k) = params.as_object().and_then(|m| m.keys().next()) {
            return Err(unknown(k, &[]));
        }
        Ok(out)
    }

    /// A member's name on the wire.
    fn member_name(&self, name: &str, member: &Value) -> String {
        if self.ec2 {
            if let Some(q) = member["queryName"].as_str() {
                return q.to_string();
            }
            if let Some(l) = member["locationName"].as_str() {
                let mut c = l.chars();
                return c.next().map_or_else(String::new, |f| {
                    f.to_ascii_uppercase().to_string() + c.as_str()
                });
            }
            return name.to_string();
        }
        member["locationName"].as_str().unwrap_or(name).to_string()
    }

    fn write(
        &self,
        shape: &str,
        prefix: &str,
        v: &Value,
        out: &mut Vec<(String, String)>,
    ) -> Result<(), AwsError> {
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            }
        };
        let s = self.shape(shape);
        match (s["type"].as_str().unwrap_or("string"), v) {
            (_, Value::Null) => {}
            ("structure", Value::Object(obj)) => {
                let members = s["members"].as_object();
                for (k, value) in obj {
                    let Some(m) = members.and_then(|m| m.get(k)) else {
                        let names: Vec<&str> = members
                            .into_iter()
                            .flat_map(|m| m.keys().map(String::as_str))
                            .collect();
                        return Err(unknown(k, &names));
                    };
                    let target = m["shape"].as_str().unwrap_or("");
                    self.write(target, &join(&self.member_name(k, m)), value, out)?;
                }
            }
            ("list", Value::Array(items)) => {
                let member = &s["member"];
                let member_shape = member["shape"].as_str().unwrap_or("");
                let base = if self.ec2 {
                    prefix.to_string()
                } else if items.is_empty() {
                    // awsQuery sends an empty list as an empty value.
                    out.push((prefix.to_string(), String::new()));
                    return Ok(());
                } else if s["flattened"].as_bool().unwrap_or(false) {
                    match member["locationName"].as_str() {
                        Some(name) => match prefix.rsplit_once('.') {
                            Some((parent, _)) => format!("{parent}.{name}"),
                            None => name.to_string(),
                        },
                        None => prefix.to_string(),
                    }
                } else {
                    format!(
                        "{prefix}.{}",
                        member["locationName"].as_str().unwrap_or("member")
                    )
                };
                for (i, item) in items.iter().enumerate() {
                    self.write(member_shape, &format!("{base}.{}", i + 1), item, out)?;
                }
            }
            ("map", Value::Object(entries)) => {
                let base = if s["flattened"].as_bool().unwrap_or(false) {
                    prefix.to_string()
                } else {
                    format!("{prefix}.entry")
                };
                let key_name = s["key"]["locationName"].as_str().unwrap_or("key");
                let value_name = s["value"]["locationName"].as_str().unwrap_or("value");
                let value_shape = s["value"]["shape"].as_str().unwrap_or("");
                for (i, (k, value)) in entries.iter().enumerate() {
                    out.push((format!("{base}.{}.{key_name}", i + 1), k.clone()));
                    let at = format!("{base}.{}.{value_name}", i + 1);
                    self.write(value_shape, &at, value, out)?;
                }
            }
            ("timestamp", Value::Number(n)) => {
                let ms = (n.as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
                if let Some(t) = chrono::DateTime::from_timestamp_millis(ms) {
                    let text = t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
                    out.push((prefix.to_string(), text));
                }
            }
            (_, Value::String(text)) => out.push((prefix.to_string(), text.clone())),
            (_, other) => out.push((prefix.to_string(), other.to_string())),
        }
        Ok(())
    }
}

/// botocore's refusal of a parameter the input shape does not have.
fn unknown(name: &str, valid: &[&str]) -> AwsError {
    AwsError::bad_request(
        "ValidationException",
        format!(
            "Unknown parameter in input: \"{name}\", must be one of: {}",
            valid.join(", ")
        ),
    )
}
