//! Function and layer identifiers: the forms AWS accepts (name, partial ARN, full ARN, each with
//! an optional `:qualifier`) and the ARNs it reports.

use cumulo_wire::AwsError;

/// `arn:aws:lambda:{region}:{account}:function:{name}` (`:{qualifier}` when given).
pub fn function_arn(region: &str, account: &str, name: &str, qualifier: Option<&str>) -> String {
    match qualifier {
        Some(q) => format!("arn:aws:lambda:{region}:{account}:function:{name}:{q}"),
        None => format!("arn:aws:lambda:{region}:{account}:function:{name}"),
    }
}

pub fn layer_arn(region: &str, account: &str, name: &str) -> String {
    format!("arn:aws:lambda:{region}:{account}:layer:{name}")
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn valid_qualifier(q: &str) -> bool {
    q == "$LATEST"
        || (!q.is_empty()
            && q.len() <= 128
            && q.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

/// The function name and qualifier a `FunctionName` parameter designates.
pub fn parse_function(input: &str) -> Result<(String, Option<String>), AwsError> {
    let invalid = || {
        AwsError::bad_request(
            "ValidationException",
            format!(
                "1 validation error detected: Value '{input}' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{{2}}(-gov)?-[a-z]+-\\d{{1}}:)?(\\d{{12}}:)?(function:)?([a-zA-Z0-9-_\\.]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?"
            ),
        )
    };
    let parts: Vec<&str> = input.split(':').collect();
    let (name, qualifier) = match parts.as_slice() {
        [name] => (*name, None),
        [name, q] => (*name, Some(*q)),
        [_account, "function", name] => (*name, None),
        [_account, "function", name, q] => (*name, Some(*q)),
        ["arn", _, "lambda", _region, _account, "function", name] => (*name, None),
        ["arn", _, "lambda", _region, _account, "function", name, q] => (*name, Some(*q)),
        _ => return Err(invalid()),
    };
    if !valid_name(name) || qualifier.is_some_and(|q| !valid_qualifier(q)) {
        return Err(invalid());
    }
    Ok((name.to_string(), qualifier.map(str::to_string)))
}

/// A function name to create: the bare-name form only (an ARN names the region and account
/// the caller already is in, so it is accepted and reduced).
pub fn parse_new_function(input: &str) -> Result<String, AwsError> {
    let (name, qualifier) = parse_function(input)?;
    if qualifier.is_some() {
        return Err(AwsError::bad_request(
            "InvalidParameterValueException",
            "Unsupported function name: a function name cannot carry a qualifier",
        ));
    }
    Ok(name)
}

/// The name of a layer from `LayerName` (name or layer ARN).
pub fn parse_layer(input: &str) -> Result<String, AwsError> {
    let name = match input.split(':').collect::<Vec<_>>().as_slice() {
        [name] => *name,
        ["arn", _, "lambda", _, _, "layer", name] => *name,
        _ => "",
    };
    let ok = !name.is_empty()
        && name.len() <= 140
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !ok {
        return Err(AwsError::bad_request(
            "ValidationException",
            format!(
                "1 validation error detected: Value '{input}' at 'layerName' failed to satisfy constraint: Member must satisfy regular expression pattern: (arn:[a-zA-Z0-9-]+:lambda:[a-zA-Z0-9-]+:\\d{{12}}:layer:[a-zA-Z0-9-_]+)|[a-zA-Z0-9-_]+"
            ),
        ));
    }
    Ok(name.to_string())
}

/// `(region, name, version)` of a layer version ARN.
pub fn parse_layer_version_arn(arn: &str) -> Option<(String, String, u64)> {
    match arn.split(':').collect::<Vec<_>>().as_slice() {
        ["arn", _, "lambda", region, _, "layer", name, v] => {
            Some((region.to_string(), name.to_string(), v.parse().ok()?))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_forms() {
        assert_eq!(parse_function("f").unwrap(), ("f".into(), None));
        assert_eq!(
            parse_function("f:live").unwrap(),
            ("f".into(), Some("live".into()))
        );
        assert_eq!(
            parse_function("arn:aws:lambda:us-east-1:000000000000:function:f:3").unwrap(),
            ("f".into(), Some("3".into()))
        );
        assert_eq!(
            parse_function("000000000000:function:f").unwrap(),
            ("f".into(), None)
        );
        assert!(parse_function("a b").is_err());
        assert!(parse_function("arn:aws:s3:::x").is_err());
        assert!(parse_new_function("f:1").is_err());
        assert_eq!(
            parse_layer_version_arn("arn:aws:lambda:us-east-1:000000000000:layer:l:2"),
            Some(("us-east-1".into(), "l".into(), 2))
        );
    }
}
