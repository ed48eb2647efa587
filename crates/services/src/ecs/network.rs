//! A task's network interface (awsvpc): one of the task's subnets, its private IP and MAC.
//!
//! The ENI is drawn here, in ECS, until EC2's typed operations for other services
//! (`Ec2Service::create_network_interface`) are merged: then it comes from the subnet and
//! counts against it. The subnet is chosen round-robin over the task's subnets, as the task's
//! position in its batch.

use super::state::Eni;
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

/// An ENI for the `n`th task of a batch.
pub fn allocate(vpc: &Awsvpc, n: usize) -> Eni {
    let subnet_id = vpc.subnets[n % vpc.subnets.len()].clone();
    let bytes: [u8; 12] = rand::random();
    Eni {
        attachment_id: uuid::Uuid::new_v4().to_string(),
        eni_id: format!("eni-{}", &hex::encode(bytes)[..17]),
        private_ip: format!("10.0.{}.{}", bytes[0], 1 + bytes[1] % 254),
        mac_address: format!(
            "0e:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            bytes[2], bytes[3], bytes[4], bytes[5], bytes[6]
        ),
        subnet_id,
        managed: false,
    }
}

/// Gives a stopped task's ENI back.
pub fn release(_eni: &Eni) {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subnets_are_required_and_tasks_spread_over_them() {
        let e = awsvpc(Some(&json!({"awsvpcConfiguration": {"subnets": []}}))).unwrap_err();
        assert_eq!(e.message, "subnets can not be empty.");
        let v = awsvpc(Some(
            &json!({"awsvpcConfiguration": {"subnets": ["subnet-a", "subnet-b"]}}),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(v.assign_public_ip, "DISABLED");
        assert_eq!(allocate(&v, 0).subnet_id, "subnet-a");
        assert_eq!(allocate(&v, 3).subnet_id, "subnet-b");
        assert!(allocate(&v, 0).eni_id.starts_with("eni-"));
        assert_eq!(awsvpc(None).unwrap(), None);
    }
}
