//! A Map state's ItemReader: the items read from S3 through the Task integrations
//! (`arn:aws:states:::s3:getObject` with ReaderConfig InputType JSON or CSV, and
//! `arn:aws:states:::s3:listObjectsV2`), limited by MaxItems.

use super::run::Resource;
use super::{Exec, Failure, data};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub async fn items(
    exec: &Arc<Exec>,
    reader: &Value,
    input: &Value,
    ctx: &Value,
) -> Result<Vec<Value>, Failure> {
    let arn = reader["Resource"].as_str().unwrap_or("");
    let resource = Resource::parse(arn).ok_or_else(|| {
        Failure::runtime(format!("The ItemReader resource {arn} is not recognized"))
    })?;
    let params = match reader.get("Parameters").or_else(|| reader.get("Arguments")) {
        Some(t) => data::template(t, input, ctx)?,
        None => json!({}),
    };
    let answer = exec
        .integrations
        .call(exec, &resource, params, None)
        .await?;
    let config = &reader["ReaderConfig"];
    let mut items = if arn.ends_with(":listObjectsV2") {
        answer["Contents"].as_array().cloned().unwrap_or_default()
    } else {
        let body = answer["Body"].as_str().unwrap_or("");
        match config["InputType"].as_str().unwrap_or("JSON") {
            "CSV" => csv(body, config)?,
            "JSON" => match serde_json::from_str::<Value>(body) {
                Ok(Value::Array(a)) => a,
                _ => {
                    return Err(Failure::new(
                        "States.ItemReaderFailed",
                        "Attempting to map over non-iterable node.",
                    ));
                }
            },
            other => {
                return Err(Failure::runtime(format!(
                    "cumulo's ItemReader does not read InputType {other}"
                )));
            }
        }
    };
    if let Some(max) = config["MaxItems"].as_u64() {
        items.truncate(max as usize);
    }
    Ok(items)
}

/// CSV rows as objects keyed by the header (the first row, or `CSVHeaders`), values strings.
fn csv(body: &str, config: &Value) -> Result<Vec<Value>, Failure> {
    let mut rows = body.lines().filter(|l| !l.is_empty()).map(fields);
    let header: Vec<String> = match config["CSVHeaderLocation"].as_str().unwrap_or("FIRST_ROW") {
        "GIVEN" => config["CSVHeaders"]
            .as_array()
            .map(|h| {
                h.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        _ => rows.next().unwrap_or_default(),
    };
    Ok(rows
        .map(|r| {
            let mut m = Map::new();
            for (i, h) in header.iter().enumerate() {
                m.insert(h.clone(), json!(r.get(i).cloned().unwrap_or_default()));
            }
            Value::Object(m)
        })
        .collect())
}

/// One CSV line's fields (RFC 4180 quoting: `"a,b"`, `""` for a quote).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_csv_with_quotes_and_given_headers() {
        let body = "id,name\n1,\"a, b\"\n2,\"say \"\"hi\"\"\"\n";
        assert_eq!(
            csv(body, &json!({})).unwrap(),
            vec![
                json!({"id": "1", "name": "a, b"}),
                json!({"id": "2", "name": "say \"hi\""})
            ]
        );
        let given = json!({"CSVHeaderLocation": "GIVEN", "CSVHeaders": ["x", "y"]});
        assert_eq!(
            csv("1,2\n", &given).unwrap(),
            vec![json!({"x": "1", "y": "2"})]
        );
    }
}
