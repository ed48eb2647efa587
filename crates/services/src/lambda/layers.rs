//! Layers: versioned packages a function mounts beside its code (AWS unpacks them into /opt;
//! cumulo unpacks each into its own directory and puts `nodejs/node_modules` and `python` of
//! each on the runtime's module path, which is what /opt gives a function).

use super::model::{CodeInput, LayerVersion};
use super::names::{layer_arn, parse_layer, parse_layer_version_arn};
use super::ops::{RUNTIMES, invalid_parameter, now_modified, validation};
use super::state::{self};
use super::{Lambda, store_error};
use cumulo_wire::AwsError;
use std::path::PathBuf;

/// What PublishLayerVersion takes.
#[derive(Debug, Clone, Default)]
pub struct PublishLayerInput {
    pub description: Option<String>,
    pub content: CodeInput,
    pub compatible_runtimes: Vec<String>,
    pub compatible_architectures: Vec<String>,
    pub license_info: Option<String>,
}

fn layer_version_not_found() -> AwsError {
    AwsError::not_found(
        "ResourceNotFoundException",
        "The resource you requested does not exist.",
    )
}

impl Lambda {
    /// PublishLayerVersion: returns the layer's name and the new version.
    pub fn publish_layer_version(
        &self,
        region: &str,
        layer: &str,
        input: PublishLayerInput,
    ) -> Result<(String, LayerVersion), AwsError> {
        let name = parse_layer(layer)?;
        for r in &input.compatible_runtimes {
            if !RUNTIMES.contains(&r.as_str()) {
                return Err(validation(
                    "compatibleRuntimes",
                    r,
                    "Member must satisfy enum value set",
                ));
            }
        }
        if input.compatible_runtimes.len() > 15 {
            return Err(invalid_parameter(
                "A layer can be compatible with at most 15 runtimes.",
            ));
        }
        let zip = self.package_bytes(&input.content)?;
        let (sha, size) = self.store_package(&zip)?;
        let mut st = self.lock();
        let key = (region.to_string(), name.clone());
        let mut layer = st.layers.get(&key).cloned().unwrap_or_default();
        layer.name = name.clone();
        let n = layer.next_version.max(1);
        let v = LayerVersion {
            version: n,
            description: input.description.unwrap_or_default(),
            compatible_runtimes: input.compatible_runtimes,
            compatible_architectures: input.compatible_architectures,
            license_info: input.license_info,
            code_sha256: sha,
            code_size: size,
            created_date: now_modified(),
        };
        layer.versions.insert(n, v.clone());
        layer.next_version = n + 1;
        self.store
            .write(|tx| state::put_layer(tx, region, &layer))
            .map_err(store_error)?;
        st.layers.insert(key, layer);
        Ok((name, v))
    }

    pub fn get_layer_version(
        &self,
        region: &str,
        layer: &str,
        version: u64,
    ) -> Result<(String, LayerVersion), AwsError> {
        let name = parse_layer(layer)?;
        let st = self.lock();
        let v = st
            .layers
            .get(&(region.to_string(), name.clone()))
            .and_then(|l| l.versions.get(&version))
            .cloned()
            .ok_or_else(layer_version_not_found)?;
        Ok((name, v))
    }

    /// A layer version named by its ARN (as functions reference them).
    pub fn layer_version_by_arn(
        &self,
        region: &str,
        arn: &str,
    ) -> Result<(String, LayerVersion), AwsError> {
        let (layer_region, name, version) = parse_layer_version_arn(arn).ok_or_else(|| {
            validation(
                "layers",
                arn,
                "Member must satisfy regular expression pattern: arn:[a-zA-Z0-9-]+:lambda:[a-zA-Z0-9-]+:\\d{12}:layer:[a-zA-Z0-9-_]+:[0-9]+",
            )
        })?;
        let _ = region;
        self.get_layer_version(&layer_region, &name, version)
            .map_err(|_| invalid_parameter(format!("Layer version {arn} does not exist.")))
    }

    /// ListLayerVersions, newest first.
    pub fn list_layer_versions(
        &self,
        region: &str,
        layer: &str,
    ) -> Result<(String, Vec<LayerVersion>), AwsError> {
        let name = parse_layer(layer)?;
        let st = self.lock();
        let versions = st
            .layers
            .get(&(region.to_string(), name.clone()))
            .map(|l| l.versions.values().rev().cloned().collect())
            .unwrap_or_default();
        Ok((name, versions))
    }

    /// ListLayers: each layer with its latest version, by name.
    pub fn list_layers(&self, region: &str) -> Vec<(String, LayerVersion)> {
        let st = self.lock();
        let mut out: Vec<(String, LayerVersion)> = st
            .layers
            .iter()
            .filter(|((r, _), _)| r == region)
            .filter_map(|((_, n), l)| {
                l.versions
                    .values()
                    .next_back()
                    .map(|v| (n.clone(), v.clone()))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// DeleteLayerVersion (deleting a missing one succeeds, as on AWS).
    pub fn delete_layer_version(
        &self,
        region: &str,
        layer: &str,
        version: u64,
    ) -> Result<(), AwsError> {
        let name = parse_layer(layer)?;
        let mut st = self.lock();
        let key = (region.to_string(), name);
        let Some(mut l) = st.layers.get(&key).cloned() else {
            return Ok(());
        };
        if l.versions.remove(&version).is_none() {
            return Ok(());
        }
        self.store
            .write(|tx| state::put_layer(tx, region, &l))
            .map_err(store_error)?;
        st.layers.insert(key, l);
        Ok(())
    }

    pub fn layer_arn(&self, region: &str, name: &str) -> String {
        layer_arn(region, &self.account_id, name)
    }

    /// The unpacked directories of a function's layers, in its order.
    pub(super) fn layer_dirs(
        &self,
        region: &str,
        arns: &[String],
    ) -> Result<Vec<PathBuf>, AwsError> {
        arns.iter()
            .map(|arn| {
                let (_, v) = self.layer_version_by_arn(region, arn)?;
                self.unpacked("layers", &v.code_sha256)
            })
            .collect()
    }
}
