//! Flow logs and VPC peering connections. A flow log is stored and described: no traffic flows,
//! so none is ever delivered to its destination. A peering connection within one account and
//! region starts `pending-acceptance` and is `active` once accepted (CloudFormation accepts it
//! at once, as it does within one account).

use super::Ec2Service;
use super::errors::{invalid_value, not_found};
use super::model::*;
use super::ops::now;
use cumulo_wire::AwsError;

/// AWS's default flow log record format.
pub const DEFAULT_FORMAT: &str = "${version} ${account-id} ${interface-id} ${srcaddr} ${dstaddr} ${srcport} ${dstport} ${protocol} ${packets} ${bytes} ${start} ${end} ${action} ${log-status}";

/// What CreateFlowLogs asks for (one flow log per resource id).
#[derive(Debug, Clone, Default)]
pub struct FlowLogRequest {
    pub resource_ids: Vec<String>,
    pub resource_type: String,
    pub traffic_type: Option<String>,
    pub destination_type: Option<String>,
    pub destination: Option<String>,
    pub log_group_name: Option<String>,
    pub deliver_role_arn: Option<String>,
    pub log_format: Option<String>,
    pub max_aggregation_interval: Option<i64>,
    pub tags: Tags,
    /// EC2's idempotency token: a repeated request with it answers the first one's flow logs.
    pub client_token: Option<String>,
}

/// One resource id refused, as an item of AWS's `Unsuccessful` list.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub resource_id: String,
    pub code: String,
    pub message: String,
}

/// What CreateFlowLogs answers: the token (the caller's, or one made up as AWS does when none
/// is given), the flow logs made and the resource ids refused.
#[derive(Debug, Clone)]
pub struct FlowLogsMade {
    pub client_token: String,
    pub made: Vec<FlowLog>,
    pub refused: Vec<Refusal>,
}

/// The bucket an S3 destination ARN names (`arn:aws:s3:::bucket/prefix/` -> `bucket`).
fn bucket_of(destination: &str) -> &str {
    let path = destination.splitn(6, ':').nth(5).unwrap_or(destination);
    path.split('/').next().unwrap_or(path)
}

fn invalid(message: &str) -> AwsError {
    AwsError::bad_request("InvalidParameter", message)
}

impl Ec2Service {
    /// Answers the made flow logs and the resource ids refused (with why), as AWS's
    /// `Unsuccessful` list does.
    pub fn create_flow_logs(
        &self,
        region: &str,
        req: FlowLogRequest,
    ) -> Result<FlowLogsMade, AwsError> {
        let destination_type = req
            .destination_type
            .clone()
            .unwrap_or_else(|| "cloud-watch-logs".into());
        if !matches!(
            destination_type.as_str(),
            "cloud-watch-logs" | "s3" | "kinesis-data-firehose"
        ) {
            return Err(invalid_value(
                &destination_type,
                "LogDestinationType",
                "Valid types are cloud-watch-logs, s3 and kinesis-data-firehose.",
            ));
        }
        if req.log_group_name.is_some() && req.destination.is_some() {
            return Err(invalid(
                "Please only provide LogGroupName or only provide LogDestination.",
            ));
        }
        if destination_type != "cloud-watch-logs" && req.log_group_name.is_some() {
            return Err(invalid(
                "LogDestination type must be cloud-watch-logs if LogGroupName is provided.",
            ));
        }
        if destination_type == "cloud-watch-logs"
            && req.log_group_name.is_none()
            && req.destination.is_none()
        {
            return Err(invalid(
                "LogDestination can't be empty if LogGroupName is not provided.",
            ));
        }
        if destination_type != "cloud-watch-logs" && req.destination.is_none() {
            return Err(invalid(
                "LogDestination can't be empty if LogGroupName is not provided.",
            ));
        }
        if destination_type == "cloud-watch-logs" && req.deliver_role_arn.is_none() {
            return Err(invalid(
                "DeliverLogsPermissionArn can't be empty if LogDestinationType is cloud-watch-logs.",
            ));
        }
        let traffic_type = req.traffic_type.clone().unwrap_or_else(|| "ALL".into());
        if !matches!(traffic_type.as_str(), "ACCEPT" | "REJECT" | "ALL") {
            return Err(invalid_value(
                &traffic_type,
                "TrafficType",
                "Valid types are ACCEPT, REJECT and ALL.",
            ));
        }
        let interval = req.max_aggregation_interval.unwrap_or(600);
        if !matches!(interval, 60 | 600) {
            return Err(invalid_value(
                &interval.to_string(),
                "MaxAggregationInterval",
                "Valid values are 60 and 600.",
            ));
        }
        if req.resource_ids.is_empty() {
            return Err(super::errors::missing("ResourceId"));
        }
        let log_format = req
            .log_format
            .clone()
            .unwrap_or_else(|| DEFAULT_FORMAT.to_string());
        // AWS refuses every resource, in a successful answer, when the bucket is missing.
        let missing_bucket = match (&self.buckets, destination_type.as_str(), &req.destination) {
            (Some(s3), "s3", Some(d)) if s3.bucket_region(bucket_of(d)).is_err() => {
                Some(bucket_of(d).to_string())
            }
            _ => None,
        };
        let client_token = req
            .client_token
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        self.change(region, |r, touched| {
            let mut made = Vec::new();
            let mut refused = Vec::new();
            if req.client_token.is_some() {
                let earlier: Vec<FlowLog> = r
                    .items
                    .values()
                    .filter_map(|x| match x {
                        Resource::FlowLog(f) if f.client_token == req.client_token => {
                            Some(f.clone())
                        }
                        _ => None,
                    })
                    .collect();
                if !earlier.is_empty() {
                    let same = earlier.iter().all(|f| {
                        req.resource_ids.contains(&f.resource_id)
                            && f.traffic_type == traffic_type
                            && f.destination_type == destination_type
                            && f.destination == req.destination
                            && f.log_group_name == req.log_group_name
                            && f.deliver_role_arn == req.deliver_role_arn
                            && f.log_format == log_format
                            && f.max_aggregation_interval == interval
                    });
                    if !same {
                        // EC2's idempotency error, as it answers RunInstances.
                        return Err(AwsError::bad_request(
                            "IdempotentParameterMismatch",
                            "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).",
                        ));
                    }
                    return Ok(FlowLogsMade {
                        client_token,
                        made: earlier,
                        refused,
                    });
                }
            }
            for id in &req.resource_ids {
                let exists = match req.resource_type.as_str() {
                    "VPC" => r.vpc(id).is_ok(),
                    "Subnet" => r.subnet(id).is_ok(),
                    "NetworkInterface" => r.interface(id).is_ok(),
                    other => {
                        return Err(invalid_value(
                            other,
                            "ResourceType",
                            "Valid types are VPC, Subnet and NetworkInterface.",
                        ));
                    }
                };
                if let Some(bucket) = &missing_bucket {
                    refused.push(Refusal {
                        resource_id: id.clone(),
                        code: "400".into(),
                        message: format!("LogDestination: {bucket} does not exist"),
                    });
                    continue;
                }
                if !exists {
                    refused.push(Refusal {
                        resource_id: id.clone(),
                        code: "InvalidParameter".into(),
                        message: format!("{}: {id} does not exist", req.resource_type),
                    });
                    continue;
                }
                let f = FlowLog {
                    id: new_id("fl"),
                    resource_id: id.clone(),
                    traffic_type: traffic_type.clone(),
                    destination_type: destination_type.clone(),
                    destination: req.destination.clone(),
                    log_group_name: req.log_group_name.clone(),
                    deliver_role_arn: req.deliver_role_arn.clone(),
                    log_format: log_format.clone(),
                    max_aggregation_interval: interval,
                    created: now(),
                    tags: req.tags.clone(),
                    client_token: req.client_token.clone(),
                };
                r.insert(Resource::FlowLog(f.clone()), touched);
                made.push(f);
            }
            Ok(FlowLogsMade {
                client_token,
                made,
                refused,
            })
        })
    }

    /// Answers the ids not found (AWS lists them as unsuccessful).
    pub fn delete_flow_logs(&self, region: &str, ids: &[String]) -> Result<Vec<String>, AwsError> {
        self.change(region, |r, touched| {
            let mut missing = Vec::new();
            for id in ids {
                if r.flow_log(id).is_ok() {
                    r.remove(id, touched);
                } else {
                    missing.push(id.clone());
                }
            }
            Ok(missing)
        })
    }

    // ----- peering -----

    pub fn create_peering(
        &self,
        region: &str,
        vpc_id: &str,
        peer_vpc_id: &str,
        peer_region: Option<&str>,
        tags: Tags,
    ) -> Result<PeeringConnection, AwsError> {
        let peer_region = peer_region.unwrap_or(region).to_string();
        if peer_region != region {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                "cumulo peers VPCs within one region only.",
            ));
        }
        self.change(region, |r, touched| {
            let a = r.vpc(vpc_id)?.cidr.clone();
            let b = r.vpc(peer_vpc_id)?.cidr.clone();
            if vpc_id == peer_vpc_id {
                return Err(invalid_value(peer_vpc_id, "peerVpcId", "A VPC cannot be peered with itself."));
            }
            let overlap = matches!((super::cidr::Block::parse(&a), super::cidr::Block::parse(&b)), (Some(x), Some(y)) if x.overlaps(&y));
            let expiration = (chrono::Utc::now() + chrono::Duration::days(7))
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            let p = PeeringConnection {
                id: new_id("pcx"),
                requester_vpc_id: vpc_id.to_string(),
                accepter_vpc_id: peer_vpc_id.to_string(),
                accepter_region: peer_region.clone(),
                status: if overlap { "failed".into() } else { "pending-acceptance".into() },
                expiration,
                tags,
            };
            r.insert(Resource::PeeringConnection(p.clone()), touched);
            Ok(p)
        })
    }

    /// Accepts, rejects or deletes: `to` is `active`, `rejected` or `deleted`.
    pub fn set_peering_status(
        &self,
        region: &str,
        id: &str,
        to: &str,
    ) -> Result<PeeringConnection, AwsError> {
        self.change(region, |r, touched| {
            let p = r.peering_mut(id)?;
            let allowed = match to {
                "active" | "rejected" => p.status == "pending-acceptance",
                _ => matches!(p.status.as_str(), "pending-acceptance" | "active" | "failed" | "rejected"),
            };
            if !allowed {
                return Err(AwsError::bad_request(
                    "InvalidStateTransition",
                    format!("Invalid state transition for {id}, attempted to transition from {} to {to}", p.status),
                ));
            }
            p.status = to.to_string();
            let out = p.clone();
            touched.push(id.to_string());
            Ok(out)
        })
    }

    pub(crate) fn peering_connection(
        &self,
        region: &str,
        id: &str,
    ) -> Result<PeeringConnection, AwsError> {
        self.read(region, |r| {
            r.peering(id).cloned().map_err(|_| not_found(id))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    #[test]
    fn a_destination_names_its_bucket_with_or_without_a_prefix() {
        assert_eq!(bucket_of("arn:aws:s3:::logs"), "logs");
        assert_eq!(bucket_of("arn:aws:s3:::logs/sub/folder/"), "logs");
    }

    #[test]
    fn peering_moves_from_pending_to_active_and_flow_logs_need_a_destination() {
        let ec2 =
            Ec2Service::new(Arc::new(Store::in_memory().unwrap()), &Config::default()).unwrap();
        let a = ec2
            .create_vpc("us-east-1", "10.0.0.0/16", None, Tags::new())
            .unwrap();
        let b = ec2
            .create_vpc("us-east-1", "10.1.0.0/16", None, Tags::new())
            .unwrap();
        let p = ec2
            .create_peering("us-east-1", &a.id, &b.id, None, Tags::new())
            .unwrap();
        assert_eq!(p.status, "pending-acceptance");
        assert_eq!(
            ec2.set_peering_status("us-east-1", &p.id, "active")
                .unwrap()
                .status,
            "active"
        );
        assert_eq!(
            ec2.set_peering_status("us-east-1", &p.id, "active")
                .unwrap_err()
                .code,
            "InvalidStateTransition"
        );
        ec2.set_peering_status("us-east-1", &p.id, "deleted")
            .unwrap();

        let none = ec2.create_flow_logs(
            "us-east-1",
            FlowLogRequest {
                resource_ids: vec![a.id.clone()],
                resource_type: "VPC".into(),
                ..Default::default()
            },
        );
        assert_eq!(
            none.unwrap_err().message,
            "LogDestination can't be empty if LogGroupName is not provided."
        );
        let out = ec2
            .create_flow_logs(
                "us-east-1",
                FlowLogRequest {
                    resource_ids: vec![a.id.clone(), "vpc-0123456789abcdef0".into()],
                    resource_type: "VPC".into(),
                    destination_type: Some("s3".into()),
                    destination: Some("arn:aws:s3:::logs".into()),
                    ..Default::default()
                },
            )
            .unwrap();
        let made = out.made;
        assert_eq!((made.len(), out.refused.len()), (1, 1));
        ec2.delete_vpc("us-east-1", &a.id).unwrap();
        assert_eq!(
            ec2.delete_flow_logs("us-east-1", &[made[0].id.clone()])
                .unwrap(),
            vec![made[0].id.clone()]
        );
    }
}
