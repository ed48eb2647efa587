//! A task's network interface (awsvpc): one of the task's subnets, its private IP and MAC.
//!
//! The ENI itself comes from EC2 (`Ec2Service::create_network_interface`, in `ops`): a
//! private address of the subnet, which counts against it, chosen round-robin over the task's
//! subnets by the task's position in its batch.

use cumulo_wire::AwsError;
use serde_json::Value;

/// The awsvpc configuration a task or service was given.
#[derive(Debug, Clone, PartialEq)]
pub struct Awsvpc {
    pub subnets: Vec<String>,
    pub security_groups: Vec<String>,
    pub assign_public_ip: String,
}

fn invalid(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidParameterException", message)
}

/// Reads `networkConfiguration.awsvpcConfiguration`, refusing what AWS refuses.
pub fn awsvpc(network_configuration: Option<&Value>) -> Result<Option<Awsvpc>, AwsError> {
    let Some(cfg) = network_configuration.and_then(|n| n.get("awsvpcConfiguration")) else {
        return Ok(None);
    };
    let strings = |key: &str| -> Vec<String> {
        cfg.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let subnets = strings("subnets");
    if subnets.is_empty() {
        return Err(invalid("subnets can not be empty."));
    }
    if subnets.len() > 16 {
        return Err(invalid("subnets can have at most 16 items."));
    }
    let security_groups = strings("securityGroups");
    if security_groups.len() > 5 {
        return Err(invalid("securityGroups can have at most 5 items."));
    }
    let assign_public_ip = cfg
        .get("assignPublicIp")
        .and_then(Value::as_str)
        .unwrap_or("DISABLED")
        .to_string();
    if !matches!(assign_public_ip.as_str(), "ENABLED" | "DISABLED") {
        return Err(invalid(format!(
            "1 validation error detected: Value '{assign_public_ip}' at 'networkConfiguration.awsvpcConfiguration.assignPublicIp' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED]"
        )));
    }
    Ok(Some(Awsvpc {
        subnets,
        security_groups,
        assign_public_ip,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subnets_are_required() {
        let e = awsvpc(Some(&json!({"awsvpcConfiguration": {"subnets": []}}))).unwrap_err();
        assert_eq!(e.message, "subnets can not be empty.");
        let v = awsvpc(Some(
            &json!({"awsvpcConfiguration": {"subnets": ["subnet-a", "subnet-b"]}}),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(v.assign_public_ip, "DISABLED");
        assert_eq!(awsvpc(None).unwrap(), None);
    }
}
