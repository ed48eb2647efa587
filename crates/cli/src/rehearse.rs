//! `cumulo migrate rehearse inventory.json [--out DIR]`: the runbook's CloudFormation steps
//! replayed on a local twin of the inventoried account, and the careless plain `DeleteStack`
//! on a second twin, before anyone touches the account.
//!
//! A twin is an in-process cumulo ([`LocalTarget`]) over a fresh temporary directory, acting
//! as the inventoried account and region, with its gateway served on a loopback port for as
//! long as it lives: custom-resource handlers answer their ResponseURL and make their SDK calls
//! there, and the twin is read back through the same read-only client and inventory code that
//! read the account. In-process rather than a spawned `cumulo serve`: no port to find or
//! process to reap, the custom-resource request log is read directly from the twin's
//! [`Responses`], and out-of-band objects are listed through the services' typed operations.
//!
//! Each twin is built from the inventory alone: every root stack created from its recorded
//! template (Original stage), parameters and tags, in [`deploy_order`]; nested stacks' recorded
//! templates put where their parents' TemplateURLs point; the records the account's zones hold
//! beyond what the stacks made seeded into the twin's zones of the same name; and a marker
//! object put in every bucket the stacks own, so a delete that empties or removes a bucket
//! shows. What the twin cannot reproduce is said, never silently approximated.
//!
//! Exit codes: 0 every proof holds, 1 one does not (each named), 2 unusable input (as the
//! other migrate subcommands).

use crate::aws_read::HttpReadClient;
use crate::target::{LocalTarget, runtime};
use clap::Args;
use cumulo_engine::{
    ChangeSetRef, ChangeSetView, CreateChangeSetInput, CreateStackInput, DeleteStackInput,
    DescribeChangeSetInput, DescribeStackEventsInput, DescribeStackResourcesInput,
    DescribeStacksInput, ExecuteChangeSetInput, Parameter, StackView, Tag,
};
use cumulo_migrate::generate::{GenerateError, Generated, Options, generate};
use cumulo_migrate::inventory::live;
use cumulo_migrate::inventory::model::{Inventory, LiveState, Selection};
use cumulo_migrate::inventory::take::{Request, take};
use cumulo_migrate::rehearse::{
    Plans, Rehearsal, World, check_imports, code_sha256, deploy_order, map_ids, markdown,
    nested_templates, patch_sha256, record_key, refused_on_create, resolve_import, s3_code,
    still_there,
};
use cumulo_services::acm::AcmService;
use cumulo_services::route53::Route53Service;
use cumulo_services::s3::{ListInput, PutInput, S3Service};
use cumulo_services::ssm::{PutParameterInput, SsmService};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct RehearseArgs {
    /// The inventory (`cumulo migrate inventory -o inventory.json`).
    inventory: PathBuf,
    /// Where to write REHEARSAL.md (created if missing).
    #[arg(long)]
    out: Option<PathBuf>,
    /// A root stack kept under CloudFormation (repeatable), as `generate --keep`.
    #[arg(long = "keep", value_name = "STACK")]
    keep: Vec<String>,
    /// First read the account again and refuse (exit 2) if it changed since the inventory,
    /// as `generate --recheck`.
    #[arg(long)]
    recheck: bool,
}

/// The key every marker object is put under.
const MARKER: &str = "cumulo-rehearsal/marker.txt";

fn refuse(message: String) -> ExitCode {
    eprintln!("cumulo migrate rehearse: {message}");
    ExitCode::from(2)
}

pub fn run(args: &RehearseArgs) -> anyhow::Result<ExitCode> {
    let text = match std::fs::read_to_string(&args.inventory) {
        Ok(t) => t,
        Err(e) => return Ok(refuse(format!("reading {}: {e}", args.inventory.display()))),
    };
    let inv = match cumulo_migrate::inventory::seal::open(&text) {
        Ok(i) => i,
        Err(e) => return Ok(refuse(format!("{}: {e}", args.inventory.display()))),
    };
    if let Some(out) = args.out.as_deref().filter(|o| !usable_out(o)) {
        return Ok(refuse(format!("--out {}: not a directory", out.display())));
    }
    if let Some(stop) = crate::migrate::freshness(&inv, args.recheck, "rehearse")? {
        return Ok(stop);
    }
    let options = || Options {
        keep: args.keep.clone(),
        tool: format!("cumulo {}", env!("CARGO_PKG_VERSION")),
        report_markdown: None,
    };
    // The plan under rehearsal: exactly what `generate` writes for this inventory.
    let plan = match generate(&inv, &options()) {
        Ok(g) => g,
        Err(GenerateError::BadInput(why)) => return Ok(refuse(why)),
        Err(GenerateError::Refused(reasons)) => {
            for r in &reasons {
                eprintln!("cumulo migrate rehearse: generate refuses: {r}");
            }
            eprintln!("cumulo migrate rehearse: no plan to rehearse");
            return Ok(ExitCode::FAILURE);
        }
    };
    let manifest: Value = serde_json::from_str(&plan.files["manifest.json"])?;
    let rt = runtime()?;
    let mut r = Rehearsal {
        account: inv.account.clone(),
        region: inv.region.clone(),
        taken_at: inv.taken_at.clone(),
        ..Rehearsal::default()
    };
    r.notes = code_notes(&inv);
    let packages = fetch_packages(&inv, &mut r.notes)?;
    r.deployed = deploy_order(&inv).iter().map(|s| s.name.clone()).collect();
    patched(&rt, &inv, &packages, &plan, &manifest, &options(), &mut r)?;
    careless(&rt, &inv, &packages, &manifest, &options(), &mut r)?;

    let md = markdown(&r);
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("REHEARSAL.md"), &md)?;
    }
    let held = r.imports.iter().filter(|i| i.holds).count();
    say!(
        "imports resolving on the twin after teardown: {held} of {}",
        r.imports.len()
    );
    say!(
        "custom-resource Delete requests on the patched twin: {}",
        r.handler_requests
            .iter()
            .filter(|h| h.starts_with("Delete"))
            .count()
    );
    say!(
        "out-of-band objects gone on the patched twin: {}",
        r.gone.len()
    );
    say!(
        "a plain DeleteStack destroyed {} stack resource(s) and {} out-of-band object(s); handler requests: {}",
        r.careless.destroyed.len(),
        r.careless.gone.len(),
        r.careless.handler_requests.len()
    );
    for d in &r.careless.destroyed {
        say!("  destroyed: {d}");
    }
    for (_, d) in &r.careless.gone {
        say!("  destroyed out of band: {d}");
    }
    for h in &r.careless.handler_requests {
        say!("  handler request: {h}");
    }
    for n in &r.notes {
        say!("note: {n}");
    }
    if let Some(dir) = &args.out {
        say!("{}", dir.join("REHEARSAL.md").display());
    }
    if r.failures.is_empty() {
        say!("the rehearsal passes: nothing the plan keeps was destroyed");
        Ok(ExitCode::SUCCESS)
    } else {
        for f in &r.failures {
            say!("failure: {f}");
        }
        say!("the rehearsal fails: {} failure(s)", r.failures.len());
        Ok(ExitCode::FAILURE)
    }
}

/// What the twin does differently from the account, from the inventory alone: code it does
/// not hold, runtimes AWS refuses, masked NoEcho values.
fn code_notes(inv: &Inventory) -> Vec<String> {
    let mut notes = Vec::new();
    for s in &inv.stacks {
        for cr in &s.custom_resources {
            let Some(f) = &cr.function else {
                notes.push(format!(
                    "{}/{}: the inventory holds no handler function for its ServiceToken {}",
                    s.name, cr.logical_id, cr.service_token
                ));
                continue;
            };
            if f.code.zip_file.is_some() {
                notes.push(format!(
                    "{}/{}: its handler {} runs the inline code the template records",
                    s.name, cr.logical_id, f.name
                ));
            } else if f.code.s3_bucket.is_none() || f.code.s3_key.is_none() {
                notes.push(format!(
                    "{}/{}: the inventory holds neither the code of its handler {} nor a literal S3 location for it: the twin cannot run it",
                    s.name, cr.logical_id, f.name
                ));
            }
        }
        let Ok(doc) = cumulo_template::parse_template(&s.template) else {
            continue;
        };
        let t = doc.value.to_json();
        for (logical, res) in t["Resources"].as_object().into_iter().flatten() {
            if res["Type"] != "AWS::Lambda::Function" {
                continue;
            }
            if let Some(rt) = res["Properties"]["Runtime"]
                .as_str()
                .filter(|r| refused_on_create(r))
            {
                notes.push(format!(
                    "{}/{logical}: runtime {rt}, which AWS no longer accepts on create; the twin creates it as recorded",
                    s.name
                ));
            }
        }
        for p in s.parameters.iter().filter(|p| p.no_echo) {
            notes.push(format!(
                "{}: NoEcho parameter {} is masked in the inventory; the twin deploys with the mask `{}` as its value",
                s.name, p.key, p.value
            ));
        }
    }
    notes
}

/// A function package the twin must hold where its template's Code names it.
struct Package {
    bucket: String,
    key: String,
    bytes: Vec<u8>,
}

/// The packages of the functions whose templates take their code from S3, read from
/// GetFunction's Code.Location as the inventory recorded it and checked against the recorded
/// CodeSha256. The location is presigned and short-lived on AWS: an expired one is named.
fn fetch_packages(inv: &Inventory, notes: &mut Vec<String>) -> anyhow::Result<Vec<Package>> {
    let wanted = s3_code(inv);
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let client = HttpReadClient::local("http://127.0.0.1", &inv.region)?;
    let mut out: Vec<Package> = Vec::new();
    for w in wanted {
        let at = format!("{}/{} (s3://{}/{})", w.stack, w.logical_id, w.bucket, w.key);
        if out.iter().any(|p| p.bucket == w.bucket && p.key == w.key) {
            continue;
        }
        let Some(url) = &w.location else {
            notes.push(format!(
                "{at}: the inventory recorded no code location: the twin cannot create the function"
            ));
            continue;
        };
        match client.fetch(url) {
            Ok(bytes) => {
                let sha = code_sha256(&bytes);
                if w.sha256.as_deref().is_some_and(|want| want != sha) {
                    notes.push(format!(
                        "{at}: the code read from its location is not the recorded package (CodeSha256 {sha}, not {}): not used",
                        w.sha256.as_deref().unwrap_or_default()
                    ));
                    continue;
                }
                notes.push(format!(
                    "{at}: code read from GetFunction's Code.Location (CodeSha256 {sha}, as recorded){}",
                    w.runtime
                        .as_deref()
                        .map(|r| format!(", runtime {r}"))
                        .unwrap_or_default()
                ));
                out.push(Package {
                    bucket: w.bucket,
                    key: w.key,
                    bytes,
                });
            }
            Err(e) => notes.push(format!(
                "{at}: its code location could not be read ({e}; AWS's expires minutes after the inventory was taken): take the inventory again just before rehearsing"
            )),
        }
    }
    Ok(out)
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One twin. The target is dropped before the directory is removed (field order).
struct Twin {
    target: LocalTarget,
    _dir: TempDir,
    endpoint: String,
    /// Per root stack, the `(account id, twin id)` pairs its template and parameters named
    /// and were deployed with the twin's ([`map_ids`]).
    mapped: BTreeMap<String, Vec<(String, String)>>,
}

impl Twin {
    /// A fresh twin with every root stack of the inventory deployed. `Err`: why the twin
    /// could not be built (a rehearsal failure, not an error of the command).
    fn build(
        rt: &tokio::runtime::Runtime,
        inv: &Inventory,
        packages: &[Package],
        notes: &mut Vec<String>,
    ) -> anyhow::Result<Result<Twin, String>> {
        let dir = std::env::temp_dir().join(format!("cumulo-rehearse-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir)?;
        let dir = TempDir(dir);
        let target =
            rt.block_on(async { LocalTarget::open_as(&dir.0, &inv.region, &inv.account, true) })?;
        let endpoint = format!("http://{}", target.served_at().unwrap_or("127.0.0.1:4566"));
        let mut twin = Twin {
            target,
            _dir: dir,
            endpoint,
            mapped: BTreeMap::new(),
        };
        for found in nested_templates(inv) {
            match found {
                Ok((stack, bucket, key)) => {
                    use crate::target::Target;
                    rt.block_on(twin.target.publish(
                        &bucket,
                        &key,
                        stack.template.clone().into_bytes(),
                    ))?;
                }
                Err((stack, why)) => notes.push(format!(
                    "nested stack {stack}: its recorded template cannot be placed for its parent: {why}"
                )),
            }
        }
        for p in packages {
            use crate::target::Target;
            rt.block_on(twin.target.publish(&p.bucket, &p.key, p.bytes.clone()))?;
        }
        twin.put_ssm_parameters(rt, inv)?;
        let mut made: Vec<(String, String)> = Vec::new();
        for s in deploy_order(inv) {
            let mut zones = twin.zone_ids(inv);
            zones.extend(made.iter().cloned());
            let named: Vec<(String, String)> = zones
                .into_iter()
                .filter(|(account, _)| {
                    s.template.contains(account.as_str())
                        || s.parameters
                            .iter()
                            .any(|p| p.value.contains(account.as_str()))
                })
                .collect();
            if !named.is_empty() {
                let pairs: Vec<String> = named.iter().map(|(a, t)| format!("{a} → {t}")).collect();
                notes.push(format!(
                    "{}: the ids it names literally (hosted zones, EC2 ids, load balancer ARNs) are the twin's: {}",
                    s.name,
                    pairs.join(", ")
                ));
            }
            let created = rt.block_on(twin.create(s, &named))?;
            twin.mapped.insert(s.name.clone(), named);
            if let Err(why) = created {
                return Ok(Err(why));
            }
            made.extend(rt.block_on(twin.generated_ids(s)));
        }
        twin.seed_records(inv, notes);
        Ok(Ok(twin))
    }

    /// SSM-typed parameters name a parameter the twin must hold: its value as resolved at
    /// the account's last deploy.
    fn put_ssm_parameters(
        &self,
        rt: &tokio::runtime::Runtime,
        inv: &Inventory,
    ) -> anyhow::Result<()> {
        let ssm = self.target.catalog().get::<SsmService>()?;
        for s in &inv.stacks {
            for p in &s.parameters {
                let Some(resolved) = &p.resolved_value else {
                    continue;
                };
                let input = PutParameterInput {
                    name: p.value.clone(),
                    value: resolved.clone(),
                    param_type: Some("String".into()),
                    overwrite: true,
                    ..Default::default()
                };
                rt.block_on(ssm.put_parameter(&inv.region, input))
                    .map_err(|e| anyhow::anyhow!("putting {}: {}", p.value, e.message))?;
            }
        }
        Ok(())
    }

    /// The account's hosted zone ids (the zones the stacks reference) paired with the ids of
    /// the twin's zones of the same name, where the twin has exactly one and its id differs:
    /// a template or parameter naming a zone by its id (Copilot's alias records name the
    /// app's root zone) must name the twin's.
    fn zone_ids(&self, inv: &Inventory) -> Vec<(String, String)> {
        let Ok(r53) = self.target.catalog().get::<Route53Service>() else {
            return Vec::new();
        };
        inv.out_of_band
            .hosted_zones
            .iter()
            .filter_map(|z| match r53.zones_named(&z.name).as_slice() {
                [twin] if twin.id != z.id => Some((z.id.clone(), twin.id.clone())),
                _ => None,
            })
            .collect()
    }

    /// The account's generated ids of a stack's resources (EC2's `sg-…`, `subnet-…`; load
    /// balancers' ARNs) paired with the ids the twin gave the same resources: a later stack
    /// naming one literally (a Copilot render names an imported load balancer's security
    /// groups and listeners) must name the twin's.
    async fn generated_ids(
        &self,
        s: &cumulo_migrate::inventory::model::Stack,
    ) -> Vec<(String, String)> {
        let input = DescribeStackResourcesInput {
            stack_name: Some(s.name.clone()),
            ..Default::default()
        };
        let Ok(views) = self
            .target
            .engine()
            .describe_stack_resources(&self.target.caller_of(), input)
            .await
        else {
            return Vec::new();
        };
        let generated = |id: &str| {
            id.split_once('-').is_some_and(|(prefix, hex)| {
                prefix.chars().all(|c| c.is_ascii_lowercase())
                    && hex.len() >= 8
                    && hex.chars().all(|c| c.is_ascii_hexdigit())
            })
        };
        s.resources
            .iter()
            .filter_map(|r| {
                let account = r.physical_id.as_deref().filter(|id| {
                    (r.resource_type.starts_with("AWS::EC2::") && generated(id))
                        || (r.resource_type.starts_with("AWS::ElasticLoadBalancingV2::")
                            && id.starts_with("arn:"))
                })?;
                let twin = views
                    .iter()
                    .find(|v| v.logical_resource_id == r.logical_id)?
                    .physical_resource_id
                    .clone()?;
                (twin != account).then(|| (account.to_string(), twin))
            })
            .collect()
    }

    /// `logical id (type)` of every resource a live stack holds with a physical id; empty when
    /// the stack is gone.
    async fn holding(&self, name: &str) -> BTreeSet<String> {
        let input = DescribeStackResourcesInput {
            stack_name: Some(name.to_string()),
            ..Default::default()
        };
        self.target
            .engine()
            .describe_stack_resources(&self.target.caller_of(), input)
            .await
            .map(|views| {
                views
                    .into_iter()
                    .filter(|v| v.physical_resource_id.is_some())
                    .map(|v| format!("{} ({})", v.logical_resource_id, v.resource_type))
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn create(
        &self,
        s: &cumulo_migrate::inventory::model::Stack,
        zones: &[(String, String)],
    ) -> anyhow::Result<Result<(), String>> {
        let engine = self.target.engine();
        let twin_ids = |text: &str| map_ids(text, zones);
        let input = CreateStackInput {
            stack_name: s.name.clone(),
            template_body: Some(twin_ids(&s.template)),
            parameters: s
                .parameters
                .iter()
                .map(|p| Parameter {
                    key: p.key.clone(),
                    value: Some(twin_ids(&p.value)),
                    use_previous_value: false,
                })
                .collect(),
            capabilities: vec![
                "CAPABILITY_IAM".into(),
                "CAPABILITY_NAMED_IAM".into(),
                "CAPABILITY_AUTO_EXPAND".into(),
            ],
            tags: s
                .tags
                .iter()
                .map(|(k, v)| Tag {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
            ..Default::default()
        };
        let id = match engine.create_stack(&self.target.caller_of(), input).await {
            Ok(out) => out.stack_id,
            Err(e) => {
                return Ok(Err(format!(
                    "creating {} on the twin: {}",
                    s.name, e.message
                )));
            }
        };
        let view = self.settle(&id).await;
        match view {
            Some(v) if v.stack_status.to_string() == "CREATE_COMPLETE" => Ok(Ok(())),
            other => Ok(Err(format!(
                "the twin could not be built: {} ended {}{}",
                s.name,
                other.map_or("missing".to_string(), |v| v.stack_status.to_string()),
                self.first_failure(&id).await
            ))),
        }
    }

    /// Waits for the stack's running operation; the stack as it ended.
    async fn settle(&self, stack_id: &str) -> Option<StackView> {
        let engine = self.target.engine();
        engine.wait_for_stack(stack_id).await;
        engine
            .describe_stacks(
                &self.target.caller_of(),
                DescribeStacksInput {
                    stack_name: Some(stack_id.to_string()),
                    next_token: None,
                },
            )
            .await
            .ok()
            .and_then(|o| o.stacks.into_iter().next())
    }

    /// `: <logical id> <status>: <reason>` of the stack's first failed event, if any (every
    /// page read: the first failure is the oldest).
    async fn first_failure(&self, stack_id: &str) -> String {
        let mut events = Vec::new();
        let mut token = None;
        loop {
            let input = DescribeStackEventsInput {
                stack_name: stack_id.to_string(),
                next_token: token.take(),
            };
            let Ok(page) = self
                .target
                .engine()
                .describe_stack_events(&self.target.caller_of(), input)
                .await
            else {
                break;
            };
            events.extend(page.stack_events);
            match page.next_token {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        events
            .iter()
            .rev()
            .find(|e| e.resource_status.ends_with("_FAILED") && e.resource_status_reason.is_some())
            .map(|e| {
                format!(
                    ": {} {}: {}",
                    e.logical_resource_id,
                    e.resource_status,
                    e.resource_status_reason.clone().unwrap_or_default()
                )
            })
            .unwrap_or_default()
    }

    /// Puts into the twin's zone of the same name each record the account's zone holds and
    /// the twin's does not (made by hand, or by a handler whose code the twin did not run).
    fn seed_records(&self, inv: &Inventory, notes: &mut Vec<String>) {
        let Ok(r53) = self.target.catalog().get::<Route53Service>() else {
            return;
        };
        for zone in &inv.out_of_band.hosted_zones {
            let twins = r53.zones_named(&zone.name);
            let [twin_zone] = twins.as_slice() else {
                notes.push(format!(
                    "zone {} ({}): {} zone(s) of that name on the twin; its records are not seeded",
                    zone.name,
                    zone.id,
                    twins.len()
                ));
                continue;
            };
            let mut seeded = 0;
            for rec in &zone.records {
                let apex_default =
                    rec.name == zone.name && (rec.record_type == "SOA" || rec.record_type == "NS");
                let present = twin_zone.records.iter().any(|t| {
                    t.name == rec.name
                        && t.rtype == rec.record_type
                        && t.set_identifier == rec.set_identifier
                });
                if apex_default || present {
                    continue;
                }
                let mut set = json!({"Name": rec.name, "Type": rec.record_type});
                if let Some(ttl) = rec.ttl {
                    set["TTL"] = json!(ttl);
                }
                if !rec.values.is_empty() {
                    set["ResourceRecords"] =
                        rec.values.iter().map(|v| json!({"Value": v})).collect();
                }
                if let Some(a) = &rec.alias_target {
                    set["AliasTarget"] = json!({"HostedZoneId": a.hosted_zone_id,
                        "DNSName": a.dns_name, "EvaluateTargetHealth": a.evaluate_target_health});
                }
                if let Some(id) = &rec.set_identifier {
                    set["SetIdentifier"] = json!(id);
                }
                let change = json!({"HostedZoneId": twin_zone.id, "ChangeBatch": {"Changes": [
                    {"Action": "UPSERT", "ResourceRecordSet": set}]}});
                match r53.api_change_resource_record_sets(&change) {
                    Ok(_) => seeded += 1,
                    Err(e) => notes.push(format!(
                        "record {} {} in {}: not seeded: {}",
                        rec.name, rec.record_type, zone.name, e.message
                    )),
                }
            }
            if seeded > 0 {
                notes.push(format!(
                    "zone {}: {seeded} record(s) no stack made were seeded from the inventory",
                    zone.name
                ));
            }
        }
    }

    /// The twin's inventory, taken as the account's was.
    fn inventory(&self, inv: &Inventory) -> anyhow::Result<Inventory> {
        let client = HttpReadClient::local(&self.endpoint, &inv.region)?;
        let names = deploy_order(inv).iter().map(|s| s.name.clone()).collect();
        let request = Request {
            selection: Selection::Stacks { names },
            region: inv.region.clone(),
            endpoint: Some(self.endpoint.clone()),
            taken_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            taken_by: format!("cumulo {} (rehearsal twin)", env!("CARGO_PKG_VERSION")),
        };
        Ok(take(&client, request)?)
    }

    /// Puts a marker object in every bucket the stacks own.
    fn mark_buckets(
        &self,
        twin_inv: &Inventory,
        notes: Option<&mut Vec<String>>,
    ) -> anyhow::Result<()> {
        let s3 = self.target.catalog().get::<S3Service>()?;
        let mut marked = 0;
        for s in &twin_inv.stacks {
            for r in s
                .resources
                .iter()
                .filter(|r| r.resource_type == "AWS::S3::Bucket")
            {
                let Some(bucket) = &r.physical_id else {
                    continue;
                };
                let input = PutInput {
                    key: MARKER.to_string(),
                    body: b"put by cumulo migrate rehearse".to_vec().into(),
                    ..Default::default()
                };
                if s3.put_object(bucket, input).is_ok() {
                    marked += 1;
                }
            }
        }
        if let Some(notes) = notes
            && marked > 0
        {
            notes.push(format!(
                "a marker object ({MARKER}) was put in each of the stacks' {marked} bucket(s), so a delete that empties or removes a bucket shows"
            ));
        }
        Ok(())
    }

    /// Every object no stack owns, through the services' typed operations.
    fn world(&self, region: &str) -> anyhow::Result<World> {
        let mut w = World::default();
        let s3 = self.target.catalog().get::<S3Service>()?;
        for b in s3.list_buckets() {
            w.add(format!("bucket {}", b.name), format!("bucket {}", b.name));
            let mut input = ListInput {
                max_keys: 1000,
                ..Default::default()
            };
            while let Ok(page) = s3.list_objects(&b.name, &input) {
                for o in &page.entries {
                    let key = format!("s3://{}/{}", b.name, o.key);
                    w.add(format!("object {key}"), format!("object {key}"));
                }
                match page.next_marker.filter(|_| page.is_truncated) {
                    Some(m) => input.marker = m,
                    None => break,
                }
            }
        }
        let r53 = self.target.catalog().get::<Route53Service>()?;
        let mut marker: Option<String> = None;
        loop {
            let mut input = json!({"MaxItems": "100"});
            if let Some(m) = &marker {
                input["Marker"] = json!(m);
            }
            let Ok(page) = r53.api_list_hosted_zones(&input) else {
                break;
            };
            for z in page["HostedZones"].as_array().into_iter().flatten() {
                let id = z["Id"].as_str().unwrap_or_default();
                let Ok(zone) = r53.zone(id) else { continue };
                w.add(
                    format!("zone {}", zone.id),
                    format!("hosted zone {} ({})", zone.name, zone.id),
                );
                for rec in &zone.records {
                    if rec.name == zone.name && (rec.rtype == "SOA" || rec.rtype == "NS") {
                        continue;
                    }
                    w.add(
                        record_key(
                            &zone.id,
                            &rec.name,
                            &rec.rtype,
                            rec.set_identifier.as_deref(),
                        ),
                        format!("record {} {} in {}", rec.name, rec.rtype, zone.name),
                    );
                }
            }
            match page["NextMarker"].as_str() {
                Some(m) => marker = Some(m.to_string()),
                None => break,
            }
        }
        let acm = self.target.catalog().get::<AcmService>()?;
        let regions: BTreeSet<&str> = [region, "us-east-1"].into_iter().collect();
        for reg in regions {
            if let Ok(list) = acm.list_certificates(reg, &json!({})) {
                for c in list["CertificateSummaryList"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let arn = c["CertificateArn"].as_str().unwrap_or_default();
                    w.add(
                        format!("certificate {arn}"),
                        format!(
                            "certificate {} ({arn})",
                            c["DomainName"].as_str().unwrap_or_default()
                        ),
                    );
                }
            }
        }
        Ok(w)
    }

    /// Requests sent to custom-resource handlers, from the `skip`th on.
    fn handler_requests(&self, skip: usize) -> Vec<String> {
        self.target.catalog().context().responses.sent()[skip.min(self.sent_count())..]
            .iter()
            .map(|s| {
                let stack = s.stack_id.split('/').nth(1).unwrap_or(&s.stack_id);
                format!(
                    "{} {stack}/{} ({}) to {}",
                    s.request_type, s.logical_id, s.resource_type, s.service_token
                )
            })
            .collect()
    }

    fn sent_count(&self) -> usize {
        self.target.catalog().context().responses.sent().len()
    }

    /// Deletes a stack (by name) and waits; `<stack>: <status>[: reason]`.
    async fn delete(&self, name: &str) -> (bool, String) {
        let Some(view) = self.settle(name).await else {
            return (false, format!("{name}: not on the twin"));
        };
        let input = DeleteStackInput {
            stack_name: view.stack_id.clone(),
            ..Default::default()
        };
        if let Err(e) = self
            .target
            .engine()
            .delete_stack(&self.target.caller_of(), input)
            .await
        {
            return (false, format!("{name}: DeleteStack refused: {}", e.message));
        }
        let after = self.settle(&view.stack_id).await;
        let status = after
            .as_ref()
            .map_or("missing".to_string(), |v| v.stack_status.to_string());
        if status == "DELETE_COMPLETE" {
            return (true, format!("{name}: DELETE_COMPLETE"));
        }
        // A delete refused as a whole (an export still imported) puts the stack back where it
        // was, with the reason on the stack rather than on a failed event.
        let mut why = self.first_failure(&view.stack_id).await;
        if why.is_empty()
            && let Some(reason) = after.and_then(|v| v.stack_status_reason)
        {
            why = format!(": {reason}");
        }
        (false, format!("{name}: {status}{why}"))
    }

    /// Applies a retain patch through a change set the gate checks; executes it only if the
    /// gate passes. `Ok(line)` when executed and complete; `Err(line)` otherwise.
    async fn patch(
        &self,
        name: &str,
        patch: &str,
        inv: &Inventory,
        manifest: &Value,
    ) -> Result<String, String> {
        let engine = self.target.engine();
        let caller = self.target.caller_of();
        let nested = manifest["stacks"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == name))
            .and_then(|s| s["nested_stacks"].as_array())
            .is_some_and(|n| !n.is_empty());
        let params = inv
            .stack(name)
            .map(|s| {
                s.parameters
                    .iter()
                    .map(|p| Parameter {
                        key: p.key.clone(),
                        value: None,
                        use_previous_value: true,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let input = CreateChangeSetInput {
            stack_name: name.to_string(),
            change_set_name: "cumulo-retain".into(),
            template_body: Some(patch.to_string()),
            parameters: params,
            capabilities: vec![
                "CAPABILITY_IAM".into(),
                "CAPABILITY_NAMED_IAM".into(),
                "CAPABILITY_AUTO_EXPAND".into(),
            ],
            include_nested_stacks: nested,
            ..Default::default()
        };
        let created = engine
            .create_change_set(&caller, input)
            .await
            .map_err(|e| format!("{name}: CreateChangeSet refused: {}", e.message))?;
        let mut files = Vec::new();
        let mut frontier = vec![created.id.clone()];
        while let Some(id) = frontier.pop() {
            let view = self.described_change_set(&id).await?;
            for c in &view.changes {
                if let Some(n) = &c.change_set_id {
                    frontier.push(n.clone());
                }
            }
            files.push((
                format!("change set {}", view.change_set_name),
                change_set_json(&view),
            ));
        }
        use cumulo_migrate::changeset::{GateError, gate};
        match gate(&files, manifest, name) {
            Ok(v) if v.violations.is_empty() => {
                let input = ExecuteChangeSetInput {
                    change_set: ChangeSetRef {
                        change_set_name: created.id.clone(),
                        stack_name: None,
                    },
                    ..Default::default()
                };
                engine
                    .execute_change_set(&caller, input)
                    .await
                    .map_err(|e| format!("{name}: ExecuteChangeSet refused: {}", e.message))?;
                let after = self.settle(&created.stack_id).await;
                let status = after.map_or("missing".to_string(), |v| v.stack_status.to_string());
                if status == "UPDATE_COMPLETE" {
                    Ok(format!(
                        "{name}: the gate passed ({} change(s) in {} change set(s), every one only retains); executed: UPDATE_COMPLETE",
                        v.changes, v.change_sets
                    ))
                } else {
                    Err(format!(
                        "{name}: the gate passed but the patch ended {status}{}",
                        self.first_failure(&created.stack_id).await
                    ))
                }
            }
            Ok(v) => Err(format!(
                "{name}: the gate refuses the change set (not executed): {}",
                v.violations.join("; ")
            )),
            Err(GateError::Empty(why)) => Err(format!("{name}: {why} (not executed)")),
            Err(GateError::BadInput(why)) => Err(format!("{name}: the gate cannot decide: {why}")),
        }
    }

    /// A change set once planned, every page.
    async fn described_change_set(&self, id: &str) -> Result<ChangeSetView, String> {
        let engine = self.target.engine();
        let caller = self.target.caller_of();
        for _ in 0..3000 {
            let input = DescribeChangeSetInput {
                change_set: ChangeSetRef {
                    change_set_name: id.to_string(),
                    stack_name: None,
                },
                ..Default::default()
            };
            let mut view = engine
                .describe_change_set(&caller, input)
                .await
                .map_err(|e| format!("DescribeChangeSet {id}: {}", e.message))?;
            if matches!(
                view.status.as_str(),
                "CREATE_PENDING" | "CREATE_IN_PROGRESS"
            ) {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            while let Some(token) = view.next_token.take() {
                let input = DescribeChangeSetInput {
                    change_set: ChangeSetRef {
                        change_set_name: id.to_string(),
                        stack_name: None,
                    },
                    next_token: Some(token),
                    ..Default::default()
                };
                let page = engine
                    .describe_change_set(&caller, input)
                    .await
                    .map_err(|e| format!("DescribeChangeSet {id}: {}", e.message))?;
                view.changes.extend(page.changes);
                view.next_token = page.next_token;
            }
            return Ok(view);
        }
        Err(format!(
            "change set {id} was still being planned after a minute"
        ))
    }
}

/// A change set as `aws cloudformation describe-change-set` prints it: what the gate reads.
fn change_set_json(v: &ChangeSetView) -> Value {
    let changes: Vec<Value> = v
        .changes
        .iter()
        .map(|c| {
            let details: Vec<Value> = c
                .details
                .iter()
                .map(|d| {
                    let mut target = json!({"Attribute": d.target.attribute});
                    if let Some(n) = &d.target.name {
                        target["Name"] = json!(n);
                    }
                    if let Some(r) = &d.target.requires_recreation {
                        target["RequiresRecreation"] = json!(r);
                    }
                    let mut detail = json!({"Target": target, "Evaluation": d.evaluation,
                        "ChangeSource": d.change_source});
                    if let Some(e) = &d.causing_entity {
                        detail["CausingEntity"] = json!(e);
                    }
                    detail
                })
                .collect();
            let mut rc = json!({"Action": c.action, "LogicalResourceId": c.logical_resource_id,
                "ResourceType": c.resource_type, "Scope": c.scope, "Details": details});
            if let Some(p) = &c.physical_resource_id {
                rc["PhysicalResourceId"] = json!(p);
            }
            if let Some(r) = &c.replacement {
                rc["Replacement"] = json!(r);
            }
            if let Some(id) = &c.change_set_id {
                rc["ChangeSetId"] = json!(id);
            }
            json!({"Type": "Resource", "ResourceChange": rc})
        })
        .collect();
    let mut out = json!({"ChangeSetId": v.change_set_id, "ChangeSetName": v.change_set_name,
        "StackId": v.stack_id, "StackName": v.stack_name, "Status": v.status,
        "ExecutionStatus": v.execution_status, "Changes": changes});
    if let Some(r) = &v.status_reason {
        out["StatusReason"] = json!(r);
    }
    if let Some(p) = &v.parent_change_set_id {
        out["ParentChangeSetId"] = json!(p);
    }
    out
}

/// Drops the buckets and zones that are stack resources (reported as resources) from a
/// list of objects gone, leaving what no stack owns.
fn out_of_band(gone: Vec<(String, String)>, twin_inv: &Inventory) -> Vec<(String, String)> {
    let owned: BTreeSet<String> = twin_inv
        .stacks
        .iter()
        .flat_map(|s| &s.resources)
        .filter_map(|r| {
            let id = r.physical_id.as_deref()?;
            match r.resource_type.as_str() {
                "AWS::S3::Bucket" => Some(format!("bucket {id}")),
                "AWS::Route53::HostedZone" => {
                    Some(format!("zone {}", id.rsplit('/').next().unwrap_or(id)))
                }
                _ => None,
            }
        })
        .collect();
    gone.into_iter()
        .filter(|(k, _)| !owned.contains(k))
        .collect()
}

/// The twin's name of each nested stack of the account (nested stacks' names are generated):
/// the stack its twin parent's resource of the same logical id made.
fn nested_names(account: &Inventory, twin: &Inventory) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let twin_name = |name: &str, out: &[(String, String)]| -> String {
        out.iter()
            .find(|(a, _)| a == name)
            .map_or(name.to_string(), |(_, t)| t.clone())
    };
    for child in account.stacks.iter().filter(|s| s.parent_id.is_some()) {
        let Some(parent) = account
            .stacks
            .iter()
            .find(|p| Some(p.id.as_str()) == child.parent_id.as_deref())
        else {
            continue;
        };
        let Some(logical) = parent
            .resources
            .iter()
            .find(|r| r.physical_id.as_deref() == Some(child.id.as_str()))
        else {
            continue;
        };
        let parent_twin = twin_name(&parent.name, &out);
        let found = twin
            .stack(&parent_twin)
            .and_then(|p| p.resource(&logical.logical_id))
            .and_then(|r| r.physical_id.as_deref())
            .and_then(|id| twin.stacks.iter().find(|s| s.id == id));
        if let Some(t) = found {
            out.push((child.name.clone(), t.name.clone()));
        }
    }
    out
}

/// Reads one resource on the twin, as the inventory read it on the account.
fn describer(client: &HttpReadClient) -> impl FnMut(&str, &str) -> LiveState + '_ {
    move |rtype, physical| match live::describe(client, rtype, physical) {
        Ok(d) => d.live,
        Err(refused) => LiveState::NotRead {
            reason: refused.to_string(),
        },
    }
}

/// The runbook's CloudFormation steps on the first twin, and the proof.
fn patched(
    rt: &tokio::runtime::Runtime,
    inv: &Inventory,
    packages: &[Package],
    plan: &Generated,
    manifest: &Value,
    options: &Options,
    r: &mut Rehearsal,
) -> anyhow::Result<()> {
    let twin = match Twin::build(rt, inv, packages, &mut r.notes)? {
        Ok(t) => t,
        Err(why) => {
            r.failures.push(why);
            return Ok(());
        }
    };
    let twin_inv = twin.inventory(inv)?;
    twin.mark_buckets(&twin_inv, Some(&mut r.notes))?;
    // The twin's own plan: the same stacks and addresses, the twin's ids.
    let twin_plan = match generate(&twin_inv, options) {
        Ok(g) => g,
        Err(e) => {
            r.failures
                .push(format!("generate refuses the twin's inventory: {e}"));
            return Ok(());
        }
    };
    let twin_manifest: Value = serde_json::from_str(&twin_plan.files["manifest.json"])?;
    let before = twin.world(&inv.region)?;
    let sent_before = twin.sent_count();
    let mut executed = BTreeSet::new();
    for s in manifest["stacks"].as_array().into_iter().flatten() {
        if s["handed_off"] != true || !s["parent"].is_null() {
            continue;
        }
        let name = s["name"].as_str().unwrap_or_default();
        let path = s["retain_patch"]["path"].as_str().unwrap_or_default();
        let sha = s["retain_patch"]["sha256"].as_str().unwrap_or_default();
        let twin_sha = twin_manifest["stacks"]
            .as_array()
            .and_then(|a| a.iter().find(|t| t["name"] == name))
            .and_then(|t| t["retain_patch"]["sha256"].as_str())
            .unwrap_or_default();
        let Some(account_text) = plan.files.get(path) else {
            r.failures
                .push(format!("{name}: no patch {path} in the plan"));
            continue;
        };
        // The twin was deployed with the account's ids it could not reproduce mapped to its
        // own: the patch it is handed is the account's patch under the same mapping, and that
        // must be, byte for byte, the patch of the template the twin deployed.
        let mapping = twin.mapped.get(name).cloned().unwrap_or_default();
        let text = &map_ids(account_text, &mapping);
        let mapped_sha = patch_sha256(text);
        if mapped_sha != twin_sha {
            r.failures.push(format!(
                "{name}: the account's patch (SHA-256 {sha}){} is not the patch of the twin's deployed template (SHA-256 {twin_sha}, not {mapped_sha})",
                mapped_note(&mapping)
            ));
            continue;
        }
        r.patched.push(format!(
            "{name}: the account's patch (SHA-256 {sha}){} is byte for byte the patch of the twin's deployed template (SHA-256 {twin_sha})",
            mapped_note(&mapping)
        ));
        // The runbook's nested step: each nested stack's patch served where its parent's
        // TemplateURL points, so the parent's change set carries it.
        for (child, bucket, key) in nested_templates(inv).into_iter().flatten() {
            let patch = manifest["stacks"]
                .as_array()
                .and_then(|a| a.iter().find(|m| m["name"] == child.name.as_str()))
                .and_then(|m| m["retain_patch"]["path"].as_str())
                .and_then(|p| plan.files.get(p));
            if let Some(patch) = patch {
                use crate::target::Target;
                rt.block_on(
                    twin.target
                        .publish(&bucket, &key, patch.clone().into_bytes()),
                )?;
            }
        }
        match rt.block_on(twin.patch(name, text, inv, &twin_manifest)) {
            Ok(line) => {
                r.patched.push(line);
                executed.insert(name.to_string());
            }
            Err(line) => {
                r.patched.push(line.clone());
                r.failures.push(line);
            }
        }
    }
    for t in manifest["teardown_order"].as_array().into_iter().flatten() {
        let name = t["stack"].as_str().unwrap_or_default();
        if !executed.contains(name) {
            r.teardown
                .push(format!("{name}: not deleted, its patch did not run"));
            continue;
        }
        let (ok, line) = rt.block_on(twin.delete(name));
        if !ok {
            r.failures.push(format!("teardown: {line}"));
        }
        r.teardown.push(line);
    }
    r.handler_requests = twin.handler_requests(sent_before);
    for h in r
        .handler_requests
        .iter()
        .filter(|h| h.starts_with("Delete"))
    {
        r.failures
            .push(format!("a custom-resource Delete handler ran: {h}"));
    }
    let after = twin.world(&inv.region)?;
    r.gone = out_of_band(before.gone_in(&after), &twin_inv);
    for (_, d) in &r.gone {
        r.failures.push(format!("gone on the patched twin: {d}"));
    }
    let client = HttpReadClient::local(&twin.endpoint, &inv.region)?;
    let nested = nested_names(inv, &twin_inv);
    let id_map: Vec<(String, String)> = twin.mapped.values().flatten().cloned().collect();
    let plans = Plans {
        account: manifest,
        account_inventory: inv,
        nested_names: &nested,
        id_map: &id_map,
        twin: &twin_manifest,
        twin_inventory: &twin_inv,
    };
    r.imports = check_imports(&plans, &after, &mut describer(&client), &mut |tf, id| {
        resolve_import(&client, tf, id)
    });
    for i in r.imports.iter().filter(|i| !i.holds) {
        r.failures.push(format!(
            "import {} ({}) does not resolve: {}",
            i.to, i.account_id, i.how
        ));
    }
    drop(client);
    Ok(())
}

/// The careless plain `DeleteStack` of every handed-off root stack on a second twin, in the
/// manifest's teardown order, and what it destroyed.
fn careless(
    rt: &tokio::runtime::Runtime,
    inv: &Inventory,
    packages: &[Package],
    manifest: &Value,
    options: &Options,
    r: &mut Rehearsal,
) -> anyhow::Result<()> {
    let mut notes = Vec::new();
    let twin = match Twin::build(rt, inv, packages, &mut notes)? {
        Ok(t) => t,
        Err(why) => {
            r.failures.push(format!("the careless twin: {why}"));
            return Ok(());
        }
    };
    let twin_inv = twin.inventory(inv)?;
    twin.mark_buckets(&twin_inv, None)?;
    let before = twin.world(&inv.region)?;
    let sent_before = twin.sent_count();
    let order: Vec<&str> = manifest["teardown_order"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["stack"].as_str())
        .collect();
    // What each stack holds before each delete: a delete whose handler updates another stack
    // (Copilot's env-controller) shows as resources that stack lost during it.
    let mut held: BTreeMap<&str, BTreeSet<String>> = order
        .iter()
        .map(|n| (*n, rt.block_on(twin.holding(n))))
        .collect();
    for (i, name) in order.iter().enumerate() {
        let (_, line) = rt.block_on(twin.delete(name));
        r.careless.deleted.push(line);
        for other in &order[i + 1..] {
            let now = rt.block_on(twin.holding(other));
            let lost: Vec<&String> = held[other].difference(&now).collect();
            if !lost.is_empty() {
                r.careless.cascades.push(format!(
                    "deleting {name} removed {} resource(s) from {other}: {}",
                    lost.len(),
                    lost.iter()
                        .map(|l| l.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            held.insert(other, now);
        }
    }
    r.careless.handler_requests = twin.handler_requests(sent_before);
    let after = twin.world(&inv.region)?;
    r.careless.gone = out_of_band(before.gone_in(&after), &twin_inv);
    let client = HttpReadClient::local(&twin.endpoint, &inv.region)?;
    let mut describe = describer(&client);
    // The careless twin's own import ids, for the types no Describe reads by physical id.
    let twin_imports: Vec<Value> = generate(&twin_inv, options)
        .ok()
        .and_then(|g| serde_json::from_str::<Value>(&g.files["manifest.json"]).ok())
        .and_then(|m| m["imports"].as_array().cloned())
        .unwrap_or_default();
    let handed: BTreeSet<&str> = manifest["stacks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["handed_off"] == true)
        .filter_map(|s| s["name"].as_str())
        .collect();
    for s in twin_inv
        .stacks
        .iter()
        .filter(|s| handed.contains(s.name.as_str()))
    {
        for res in &s.resources {
            let Some(physical) = &res.physical_id else {
                continue;
            };
            let line = format!(
                "{}/{} ({}) {physical}",
                s.name, res.logical_id, res.resource_type
            );
            if cumulo_migrate::inventory::take::is_custom(&res.resource_type) {
                let sent = r
                    .careless
                    .handler_requests
                    .iter()
                    .any(|h| h.starts_with(&format!("Delete {}/{} ", s.name, res.logical_id)));
                if sent {
                    r.careless
                        .destroyed
                        .push(format!("{line} (custom resource: its Delete handler ran)"));
                } else {
                    r.careless
                        .survived
                        .push(format!("{line} (custom resource: no Delete was sent)"));
                }
                continue;
            }
            match describe(&res.resource_type, physical) {
                LiveState::Gone { .. } => r.careless.destroyed.push(line),
                state @ LiveState::Described { .. } if !still_there(&state) => r
                    .careless
                    .destroyed
                    .push(format!("{line} (deleted: pending deletion or INACTIVE)")),
                LiveState::Described { .. } => r.careless.survived.push(line),
                LiveState::NotRead { reason } => {
                    let resolved = twin_imports
                        .iter()
                        .filter(|i| {
                            i["stack"] == s.name.as_str()
                                && i["logical_id"] == res.logical_id.as_str()
                        })
                        .map(|i| {
                            let tf = i["to"]
                                .as_str()
                                .unwrap_or_default()
                                .split('.')
                                .next()
                                .unwrap_or_default();
                            resolve_import(&client, tf, i["id"].as_str().unwrap_or_default())
                        })
                        .collect::<Option<Vec<_>>>()
                        .filter(|v| !v.is_empty());
                    match resolved {
                        Some(v) if v.iter().all(Result::is_err) => r.careless.destroyed.push(line),
                        Some(_) => r.careless.survived.push(line),
                        None => r
                            .careless
                            .survived
                            .push(format!("{line}: not checked ({reason})")),
                    }
                }
                LiveState::Failed { error_code, .. } => r
                    .careless
                    .survived
                    .push(format!("{line}: not checked ({error_code})")),
            }
        }
    }
    Ok(())
}

/// `, with its ids mapped to the twin's as its deploy was (a → b, ...)`, or nothing.
fn mapped_note(mapping: &[(String, String)]) -> String {
    if mapping.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = mapping.iter().map(|(a, t)| format!("{a} → {t}")).collect();
    format!(
        ", with the {} id(s) its deploy mapped to the twin's mapped the same way ({})",
        mapping.len(),
        pairs.join(", ")
    )
}

/// Whether `path` is usable as `--out` (a directory, or nothing yet).
fn usable_out(path: &Path) -> bool {
    !path.exists() || path.is_dir()
}
