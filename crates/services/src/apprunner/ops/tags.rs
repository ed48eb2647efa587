//! TagResource / UntagResource / ListTagsForResource over every taggable record, found by ARN.

use super::{AppRunnerService, body, internal, not_found, tags_in, tags_json};
use crate::apprunner::lifecycle::service_status;
use crate::apprunner::state::{self, Doc, Region};
use cumulo_wire::AwsError;
use serde_json::{Value, json};

fn resource_not_found(arn: &str) -> AwsError {
    not_found(format!("Resource with ARN {arn} not found"))
}

impl AppRunnerService {
    /// Applies `f` to the tags of the live resource `arn` names and writes it.
    fn change_tags(
        &self,
        region: &str,
        arn: &str,
        f: impl FnOnce(&mut Vec<(String, String)>),
    ) -> Result<(), AwsError> {
        let now = super::now();
        let mut regions = self.lock();
        let r: &mut Region = self.region(&mut regions, region);
        if let Some(s) = r
            .services
            .get(arn)
            .filter(|s| service_status(s, now).is_some())
        {
            let mut s = s.clone();
            f(&mut s.tags);
            self.store
                .write(|tx| state::save(tx, region, arn, Doc::Service(&s)))
                .map_err(internal)?;
            r.services.insert(arn.into(), s);
        } else if let Some(c) = r.connectors.get(arn) {
            let mut c = c.clone();
            f(&mut c.tags);
            self.store
                .write(|tx| state::save(tx, region, arn, Doc::Connector(&c)))
                .map_err(internal)?;
            r.connectors.insert(arn.into(), c);
        } else if let Some(i) = r.ingress.get(arn) {
            let mut i = i.clone();
            f(&mut i.tags);
            self.store
                .write(|tx| state::save(tx, region, arn, Doc::Ingress(&i)))
                .map_err(internal)?;
            r.ingress.insert(arn.into(), i);
        } else if let Some(v) = r.configs.get(arn) {
            let mut v = v.clone();
            f(&mut v.tags);
            self.store
                .write(|tx| state::save(tx, region, arn, Doc::Config(&v)))
                .map_err(internal)?;
            r.configs.insert(arn.into(), v);
        } else {
            return Err(resource_not_found(arn));
        }
        Ok(())
    }

    pub fn tag_resource(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("ResourceArn")?;
        if !b.has("Tags") {
            return Err(super::missing("Tags"));
        }
        let new = tags_in(&b)?;
        self.change_tags(region, &arn, |tags| {
            for (k, v) in new {
                match tags.iter_mut().find(|(key, _)| *key == k) {
                    Some(t) => t.1 = v,
                    None => tags.push((k, v)),
                }
            }
        })?;
        Ok(json!({}))
    }

    pub fn untag_resource(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("ResourceArn")?;
        if !b.has("TagKeys") {
            return Err(super::missing("TagKeys"));
        }
        let keys = b.strings("TagKeys")?;
        self.change_tags(region, &arn, |tags| tags.retain(|(k, _)| !keys.contains(k)))?;
        Ok(json!({}))
    }

    pub fn list_tags_for_resource(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = body(input)?.str("ResourceArn")?;
        let now = super::now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let tags = if let Some(s) = r
            .services
            .get(&arn)
            .filter(|s| service_status(s, now).is_some())
        {
            &s.tags
        } else if let Some(c) = r.connectors.get(&arn) {
            &c.tags
        } else if let Some(i) = r.ingress.get(&arn) {
            &i.tags
        } else if let Some(v) = r.configs.get(&arn) {
            &v.tags
        } else {
            return Err(resource_not_found(&arn));
        };
        Ok(json!({"Tags": tags_json(tags)}))
    }
}
