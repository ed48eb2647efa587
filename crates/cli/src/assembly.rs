//! What a deploy deploys: a template file, or a CDK cloud assembly (`cdk.out`).
//!
//! A cloud assembly is read the way the CDK CLI reads it: `manifest.json` lists the stacks
//! (`aws:cloudformation:stack` artifacts, deployed in dependency order) and their asset
//! manifests (`cdk:asset-manifest`); each file asset is uploaded, zipped when its packaging
//! says `zip`, to the bucket and key its destination names, which is where the template (and a
//! nested stack's `TemplateURL`) expects it.
//!
//! Bootstrap, decided: a direct deploy makes the local cloud look like an account bootstrapped
//! with the CDK's default bootstrap template, as `cdk deploy` requires: the asset buckets the
//! manifests name are created when absent, and the version parameter the stacks check
//! (`/cdk-bootstrap/<qualifier>/version`, read by the templates' `BootstrapVersion` parameter
//! and `CheckBootstrapVersion` rule) is written with [`BOOTSTRAP_VERSION`] when absent. The roles
//! the manifest names are not needed: the local cloud does not check permissions.

use anyhow::{Context, bail};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The bootstrap version a direct deploy provides (the CDK's current default template's).
pub const BOOTSTRAP_VERSION: &str = "30";

/// One file asset to upload.
#[derive(Debug, Clone)]
pub struct FileAsset {
    pub path: PathBuf,
    /// Upload a zip of the directory (packaging `zip`), else the file's bytes.
    pub zip: bool,
    pub bucket: String,
    pub key: String,
}

/// What a CDK stack needs from a bootstrapped environment.
#[derive(Debug, Clone, Default)]
pub struct Bootstrap {
    pub buckets: Vec<String>,
    pub version_parameter: Option<String>,
}

/// One stack to deploy.
#[derive(Debug, Clone, Default)]
pub struct StackSpec {
    pub name: String,
    pub template: String,
    pub parameters: Vec<(String, String)>,
    pub resource_count: usize,
    /// Where the CDK put the stack's own template (`stackTemplateAssetObjectUrl`), used when the
    /// template is too large to pass inline.
    pub template_object: Option<(String, String)>,
    pub assets: Vec<FileAsset>,
    pub bootstrap: Option<Bootstrap>,
}

/// `Name=Value` from the command line.
pub fn parse_param(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("expected NAME=VALUE, got '{s}'")),
    }
}

/// The stacks at `path` (a template file, or a cloud assembly directory), narrowed to `stack`
/// when given. `params` go to every stack.
pub fn load(
    path: &Path,
    stack: Option<&str>,
    params: &[(String, String)],
    account: &str,
    region: &str,
) -> anyhow::Result<Vec<StackSpec>> {
    let manifest = if path.is_dir() {
        Some(path.join("manifest.json"))
    } else if path.file_name().is_some_and(|n| n == "manifest.json") {
        Some(path.to_path_buf())
    } else {
        None
    };
    let mut specs = match manifest {
        Some(m) => cloud_assembly(&m, account, region)?,
        None => vec![template_file(path, stack)?],
    };
    if let Some(want) = stack {
        specs.retain(|s| s.name == want);
        if specs.is_empty() {
            bail!("no stack named {want} in {}", path.display());
        }
    }
    for s in &mut specs {
        s.parameters.extend(params.iter().cloned());
    }
    Ok(specs)
}

fn resource_count(template: &str) -> usize {
    cumulo_template::parse_template(template)
        .ok()
        .and_then(|d| {
            d.value
                .get("Resources")
                .and_then(cumulo_template::Value::as_object)
                .map(|r| r.len())
        })
        .unwrap_or(0)
}

/// A stack name from a file name: CloudFormation's `[a-zA-Z][-a-zA-Z0-9]*`.
fn stack_name_from(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "stack-");
    }
    name.truncate(128);
    name
}

fn template_file(path: &Path, stack: Option<&str>) -> anyhow::Result<StackSpec> {
    let template = std::fs::read_to_string(path)
        .with_context(|| format!("reading template {}", path.display()))?;
    Ok(StackSpec {
        name: stack
            .map(str::to_string)
            .unwrap_or_else(|| stack_name_from(path)),
        resource_count: resource_count(&template),
        template,
        ..Default::default()
    })
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// `${AWS::AccountId}` / `${AWS::Region}` / `${AWS::Partition}` in a manifest string.
fn placeholders(s: &str, account: &str, region: &str) -> String {
    s.replace("${AWS::AccountId}", account)
        .replace("${AWS::Region}", region)
        .replace("${AWS::Partition}", "aws")
}

fn s3_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("s3://")?;
    let (bucket, key) = rest.split_once('/')?;
    Some((bucket.to_string(), key.to_string()))
}

fn cloud_assembly(manifest: &Path, account: &str, region: &str) -> anyhow::Result<Vec<StackSpec>> {
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let doc = read_json(manifest)?;
    let Some(artifacts) = doc.get("artifacts").and_then(Value::as_object) else {
        bail!("{} has no artifacts", manifest.display());
    };
    let kind = |a: &Value| {
        a.get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    // Stacks in dependency order (the manifest lists dependencies by artifact id).
    let mut order: Vec<String> = Vec::new();
    fn visit(
        id: &str,
        artifacts: &serde_json::Map<String, Value>,
        order: &mut Vec<String>,
        depth: usize,
    ) {
        if order.iter().any(|o| o == id) || depth > artifacts.len() {
            return;
        }
        if let Some(deps) = artifacts
            .get(id)
            .and_then(|a| a.get("dependencies"))
            .and_then(Value::as_array)
        {
            for d in deps.iter().filter_map(Value::as_str) {
                visit(d, artifacts, order, depth + 1);
            }
        }
        order.push(id.to_string());
    }
    for id in artifacts.keys() {
        visit(id, artifacts, &mut order, 0);
    }
    let mut specs = Vec::new();
    for id in order {
        let Some(a) = artifacts.get(&id) else {
            continue;
        };
        if kind(a) != "aws:cloudformation:stack" {
            continue;
        }
        let props = a.get("properties").cloned().unwrap_or(Value::Null);
        let Some(file) = props.get("templateFile").and_then(Value::as_str) else {
            bail!("stack artifact {id} has no templateFile");
        };
        let template = std::fs::read_to_string(dir.join(file))
            .with_context(|| format!("reading {}", dir.join(file).display()))?;
        let name = props
            .get("stackName")
            .and_then(Value::as_str)
            .unwrap_or(&id)
            .to_string();
        let mut bootstrap = Bootstrap {
            buckets: Vec::new(),
            version_parameter: props
                .get("bootstrapStackVersionSsmParameter")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let mut assets = Vec::new();
        let deps = a
            .get("dependencies")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for dep in deps.iter().filter_map(Value::as_str) {
            let Some(d) = artifacts
                .get(dep)
                .filter(|d| kind(d) == "cdk:asset-manifest")
            else {
                continue;
            };
            let Some(file) = d
                .get("properties")
                .and_then(|p| p.get("file"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let asset_manifest = read_json(&dir.join(file))?;
            if bootstrap.version_parameter.is_none() {
                bootstrap.version_parameter = d
                    .get("properties")
                    .and_then(|p| p.get("bootstrapStackVersionSsmParameter"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            if asset_manifest
                .get("dockerImages")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
            {
                bail!(
                    "stack {name} has Docker image assets: cumulo deploy does not build or push images yet"
                );
            }
            let files = asset_manifest
                .get("files")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for (asset_id, f) in files {
                let source = f.get("source").cloned().unwrap_or(Value::Null);
                let Some(path) = source.get("path").and_then(Value::as_str) else {
                    bail!(
                        "asset {asset_id} of {name} has no source path (executable assets are not supported)"
                    );
                };
                let zip = source.get("packaging").and_then(Value::as_str) == Some("zip");
                let dests = f
                    .get("destinations")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                for dest in dests.values() {
                    let bucket = dest.get("bucketName").and_then(Value::as_str);
                    let key = dest.get("objectKey").and_then(Value::as_str);
                    let (Some(bucket), Some(key)) = (bucket, key) else {
                        continue;
                    };
                    let bucket = placeholders(bucket, account, region);
                    if !bootstrap.buckets.contains(&bucket) {
                        bootstrap.buckets.push(bucket.clone());
                    }
                    assets.push(FileAsset {
                        path: dir.join(path),
                        zip,
                        bucket,
                        key: placeholders(key, account, region),
                    });
                }
            }
        }
        let template_object = props
            .get("stackTemplateAssetObjectUrl")
            .and_then(Value::as_str)
            .map(|u| placeholders(u, account, region))
            .and_then(|u| s3_url(&u));
        specs.push(StackSpec {
            name,
            resource_count: resource_count(&template),
            template,
            parameters: Vec::new(),
            template_object,
            assets,
            bootstrap: Some(bootstrap),
        });
    }
    if specs.is_empty() {
        bail!("{} lists no stacks", manifest.display());
    }
    Ok(specs)
}

/// The bytes to upload for an asset: the file, or a zip of the directory (entries sorted, so
/// an unchanged directory gives the same archive).
pub fn asset_bytes(asset: &FileAsset) -> anyhow::Result<Vec<u8>> {
    if !asset.zip {
        return std::fs::read(&asset.path)
            .with_context(|| format!("reading asset {}", asset.path.display()));
    }
    let mut files = Vec::new();
    collect(&asset.path, &asset.path, &mut files)?;
    files.sort();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    for (name, path) in files {
        zip.start_file(name, options)?;
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        zip.write_all(&bytes)?;
    }
    Ok(zip.finish()?.into_inner())
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> anyhow::Result<()> {
    if dir.is_file() {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push((name, dir.to_path_buf()));
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, out)?;
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, path));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_names_from_files_are_valid() {
        assert_eq!(stack_name_from(Path::new("a/my_app.yaml")), "my-app");
        assert_eq!(stack_name_from(Path::new("1app.json")), "stack-1app");
    }

    #[test]
    fn params_need_a_name() {
        assert_eq!(parse_param("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert!(parse_param("=x").is_err());
        assert!(parse_param("x").is_err());
    }

    #[test]
    fn manifest_placeholders_take_the_environment() {
        assert_eq!(
            placeholders("cdk-${AWS::AccountId}-${AWS::Region}", "1", "eu-west-1"),
            "cdk-1-eu-west-1"
        );
        assert_eq!(
            s3_url("s3://b/k/x.json"),
            Some(("b".into(), "k/x.json".into()))
        );
    }
}
