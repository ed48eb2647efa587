//! VPC connectors (revisioned per name; a deleted one stays describable as INACTIVE) and VPC
//! ingress connections (PENDING_CREATION → AVAILABLE on the clock). Subnets, security groups
//! and VPCs must exist in cumulo's EC2.

use super::{
    AppRunnerService, body, check_pattern, hex32, internal, invalid, invalid_state, not_found, now,
    page, put, required_object, tags_in, with_token,
};
use crate::apprunner::lifecycle::{TRANSITION_SECONDS, ingress_status};
use crate::apprunner::state::{self, Doc, IngressConnection, VpcConnector};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

const NAME_PATTERN: &str = r"[A-Za-z0-9][A-Za-z0-9\-_]{3,39}";

fn connector_not_found(arn: &str) -> AwsError {
    not_found(format!("VPC connector with ARN {arn} not found"))
}

fn ingress_not_found(arn: &str) -> AwsError {
    not_found(format!("VPC ingress connection with ARN {arn} not found"))
}

fn connector_json(arn: &str, c: &VpcConnector) -> Value {
    let mut m = Map::new();
    m.insert("VpcConnectorName".into(), json!(c.name));
    m.insert("VpcConnectorArn".into(), json!(arn));
    m.insert("VpcConnectorRevision".into(), json!(c.revision));
    m.insert("Subnets".into(), json!(c.subnets));
    m.insert("SecurityGroups".into(), json!(c.security_groups));
    m.insert(
        "Status".into(),
        json!(if c.deleted_at.is_some() {
            "INACTIVE"
        } else {
            "ACTIVE"
        }),
    );
    m.insert("CreatedAt".into(), json!(c.created));
    put(&mut m, "DeletedAt", c.deleted_at.map(Value::from));
    Value::Object(m)
}

impl AppRunnerService {
    pub fn create_vpc_connector(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let name = b.str("VpcConnectorName")?;
        check_pattern("VpcConnectorName", &name, NAME_PATTERN)?;
        if !b.has("Subnets") {
            return Err(super::missing("Subnets"));
        }
        let subnets = b.strings("Subnets")?;
        let groups = b.strings("SecurityGroups")?;
        let tags = tags_in(&b)?;
        if subnets.is_empty() {
            return Err(invalid("At least one subnet is required"));
        }
        let mut vpcs = Vec::new();
        for s in &subnets {
            let view = self
                .ec2
                .subnet(region, s)
                .map_err(|_| invalid(format!("Subnet {s} does not exist")))?;
            vpcs.push(view.vpc_id);
        }
        for g in &groups {
            let view = self
                .ec2
                .security_group(region, g)
                .map_err(|_| invalid(format!("Security group {g} does not exist")))?;
            vpcs.push(view.vpc_id);
        }
        vpcs.dedup();
        if vpcs.len() > 1 {
            return Err(invalid(
                "The subnets and security groups of a VPC connector must belong to the same VPC",
            ));
        }
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let revision = r
            .connectors
            .values()
            .filter(|c| c.name == name)
            .map(|c| c.revision)
            .max()
            .unwrap_or(0)
            + 1;
        let arn = self.arn(
            region,
            &format!("vpcconnector/{name}/{revision}/{}", hex32()),
        );
        let c = VpcConnector {
            name,
            revision,
            subnets,
            security_groups: groups,
            created: now(),
            deleted_at: None,
            tags,
        };
        self.store
            .write(|tx| state::save(tx, region, &arn, Doc::Connector(&c)))
            .map_err(internal)?;
        let out = connector_json(&arn, &c);
        r.connectors.insert(arn, c);
        Ok(json!({"VpcConnector": out}))
    }

    pub fn describe_vpc_connector(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = body(input)?.str("VpcConnectorArn")?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let c = r
            .connectors
            .get(&arn)
            .ok_or_else(|| connector_not_found(&arn))?;
        Ok(json!({"VpcConnector": connector_json(&arn, c)}))
    }

    pub fn list_vpc_connectors(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut active: Vec<(&String, &VpcConnector)> = r
            .connectors
            .iter()
            .filter(|(_, c)| c.deleted_at.is_none())
            .collect();
        active.sort_by(|a, b| a.1.created.total_cmp(&b.1.created));
        let arns: Vec<String> = active.into_iter().map(|(a, _)| a.clone()).collect();
        let (items, token) = page(&b, &arns, 100)?;
        let list: Vec<Value> = items
            .iter()
            .map(|a| connector_json(a, &r.connectors[a]))
            .collect();
        Ok(with_token(json!({"VpcConnectors": list}), token))
    }

    pub fn delete_vpc_connector(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = body(input)?.str("VpcConnectorArn")?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut c = r
            .connectors
            .get(&arn)
            .filter(|c| c.deleted_at.is_none())
            .cloned()
            .ok_or_else(|| connector_not_found(&arn))?;
        c.deleted_at = Some(now());
        self.store
            .write(|tx| state::save(tx, region, &arn, Doc::Connector(&c)))
            .map_err(internal)?;
        let out = connector_json(&arn, &c);
        r.connectors.insert(arn, c);
        Ok(json!({"VpcConnector": out}))
    }

    fn ingress_json(&self, arn: &str, i: &IngressConnection, now: f64) -> Value {
        let mut m = Map::new();
        m.insert("VpcIngressConnectionArn".into(), json!(arn));
        m.insert("VpcIngressConnectionName".into(), json!(i.name));
        m.insert("ServiceArn".into(), json!(i.service_arn));
        m.insert("Status".into(), json!(ingress_status(i, now)));
        m.insert("AccountId".into(), json!(self.account_id));
        m.insert("DomainName".into(), json!(i.domain_name));
        m.insert(
            "IngressVpcConfiguration".into(),
            json!({"VpcId": i.vpc_id, "VpcEndpointId": i.vpc_endpoint_id}),
        );
        m.insert("CreatedAt".into(), json!(i.created));
        put(&mut m, "DeletedAt", i.deleted_at.map(Value::from));
        Value::Object(m)
    }

    /// `(VpcId, VpcEndpointId)` of an IngressVpcConfiguration, the VPC checked in EC2.
    fn ingress_config(
        &self,
        region: &str,
        b: &crate::json_body::Body<'_>,
    ) -> Result<(String, String), AwsError> {
        let c = required_object(b, "IngressVpcConfiguration")?;
        let vpc = c.str("VpcId")?;
        let endpoint = c.str("VpcEndpointId")?;
        self.ec2
            .vpc(region, &vpc)
            .map_err(|_| invalid(format!("VPC {vpc} does not exist")))?;
        if !endpoint.starts_with("vpce-") {
            return Err(invalid(format!("Invalid VpcEndpointId: {endpoint}")));
        }
        Ok((vpc, endpoint))
    }

    pub fn create_vpc_ingress_connection(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let service_arn = b.str("ServiceArn")?;
        let name = b.str("VpcIngressConnectionName")?;
        check_pattern("VpcIngressConnectionName", &name, NAME_PATTERN)?;
        let (vpc, endpoint) = self.ingress_config(region, &b)?;
        let tags = tags_in(&b)?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let service = Self::live_service(r, &service_arn, now)?;
        if r.ingress
            .values()
            .any(|i| i.name == name && i.deleted_at.is_none())
        {
            return Err(invalid(format!(
                "VPC ingress connection with the provided name already exists: {name}"
            )));
        }
        let label = service.url.split('.').next().unwrap_or_default();
        let arn = self.arn(region, &format!("vpcingressconnection/{name}/{}", hex32()));
        let i = IngressConnection {
            name,
            service_arn,
            domain_name: format!("{label}.{endpoint}.{region}.awsapprunner.com"),
            vpc_id: vpc,
            vpc_endpoint_id: endpoint,
            created: now,
            pending: "PENDING_CREATION".into(),
            busy_until: now + TRANSITION_SECONDS,
            deleted_at: None,
            tags,
        };
        self.store
            .write(|tx| state::save(tx, region, &arn, Doc::Ingress(&i)))
            .map_err(internal)?;
        let out = self.ingress_json(&arn, &i, now);
        r.ingress.insert(arn, i);
        Ok(json!({"VpcIngressConnection": out}))
    }

    pub fn describe_vpc_ingress_connection(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let arn = body(input)?.str("VpcIngressConnectionArn")?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let i = r.ingress.get(&arn).ok_or_else(|| ingress_not_found(&arn))?;
        Ok(json!({"VpcIngressConnection": self.ingress_json(&arn, i, now())}))
    }

    pub fn list_vpc_ingress_connections(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let (service, endpoint) = match b.object("Filter")? {
            Some(f) => (f.opt_str("ServiceArn")?, f.opt_str("VpcEndpointId")?),
            None => (None, None),
        };
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut found: Vec<(&String, &IngressConnection)> = r
            .ingress
            .iter()
            .filter(|(_, i)| {
                ingress_status(i, now) != "DELETED"
                    && service.as_ref().is_none_or(|s| &i.service_arn == s)
                    && endpoint.as_ref().is_none_or(|e| &i.vpc_endpoint_id == e)
            })
            .collect();
        found.sort_by(|a, b| a.1.created.total_cmp(&b.1.created));
        let summaries: Vec<Value> = found
            .iter()
            .map(|(a, i)| json!({"VpcIngressConnectionArn": a, "ServiceArn": i.service_arn}))
            .collect();
        let (items, token) = page(&b, &summaries, 100)?;
        Ok(with_token(
            json!({"VpcIngressConnectionSummaryList": items}),
            token,
        ))
    }

    /// Applies `change` to an AVAILABLE ingress connection and writes it, under one lock.
    fn change_ingress(
        &self,
        region: &str,
        arn: &str,
        what: &str,
        change: impl FnOnce(&mut IngressConnection, f64),
    ) -> Result<Value, AwsError> {
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut i = r
            .ingress
            .get(arn)
            .cloned()
            .ok_or_else(|| ingress_not_found(arn))?;
        let status = ingress_status(&i, now);
        if status == "DELETED" {
            return Err(ingress_not_found(arn));
        }
        if status != "AVAILABLE" {
            return Err(invalid_state(format!(
                "You can't {what} VPC ingress connection {arn} while it is in {status} status."
            )));
        }
        change(&mut i, now);
        self.store
            .write(|tx| state::save(tx, region, arn, Doc::Ingress(&i)))
            .map_err(internal)?;
        let out = self.ingress_json(arn, &i, now);
        r.ingress.insert(arn.to_string(), i);
        Ok(json!({"VpcIngressConnection": out}))
    }

    pub fn update_vpc_ingress_connection(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("VpcIngressConnectionArn")?;
        let (vpc, endpoint) = self.ingress_config(region, &b)?;
        self.change_ingress(region, &arn, "update", |i, now| {
            let label = i.domain_name.split('.').next().unwrap_or_default();
            i.domain_name = format!("{label}.{endpoint}.{region}.awsapprunner.com");
            i.vpc_id = vpc;
            i.vpc_endpoint_id = endpoint;
            i.pending = "PENDING_UPDATE".into();
            i.busy_until = now + TRANSITION_SECONDS;
        })
    }

    pub fn delete_vpc_ingress_connection(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let arn = body(input)?.str("VpcIngressConnectionArn")?;
        self.change_ingress(region, &arn, "delete", |i, now| i.deleted_at = Some(now))
    }
}
