//! IAM's XML response shapes (botocore's `Role`, `User`, `Group`, `Policy`, ...).
//!
//! Policy documents go out URL-encoded, as AWS sends them: botocore (and so the CLI) decodes
//! every `policyDocumentType` member with `unquote` and parses it as JSON.

use super::model::{AttachedPolicy, Group, InstanceProfile, PolicyVersion, PolicyView, Role, User};
use super::users::UserAccessKey;
use chrono::{DateTime, Utc};
use cumulo_wire::xml::XmlWriter;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What AWS leaves unencoded in a document: RFC 3986's unreserved characters.
const DOCUMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

pub fn document(doc: &str) -> String {
    utf8_percent_encode(doc, DOCUMENT).to_string()
}

pub fn ts(d: &DateTime<Utc>) -> String {
    d.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn tags(w: &mut XmlWriter, tags: &[(String, String)]) {
    w.open("Tags", None);
    for (k, v) in tags {
        w.open("member", None)
            .elem("Key", k)
            .elem("Value", v)
            .close();
    }
    w.close();
}

/// `<Name><member>..</member></Name>` of plain strings.
pub fn strings(w: &mut XmlWriter, name: &'static str, items: &[String]) {
    w.open(name, None);
    for i in items {
        w.elem("member", i);
    }
    w.close();
}

fn boundary(w: &mut XmlWriter, arn: Option<&str>) {
    if let Some(arn) = arn {
        w.open("PermissionsBoundary", None)
            .elem("PermissionsBoundaryType", "Policy")
            .elem("PermissionsBoundaryArn", arn)
            .close();
    }
}

/// A role; `full` adds what GetRole/CreateRole report and ListRoles leaves out (boundary, tags,
/// last use).
pub fn role(w: &mut XmlWriter, name: &'static str, r: &Role, full: bool) {
    w.open(name, None)
        .elem("Path", &r.path)
        .elem("RoleName", &r.name)
        .elem("RoleId", &r.id)
        .elem("Arn", &r.arn)
        .elem("CreateDate", &ts(&r.create_date))
        .elem("AssumeRolePolicyDocument", &document(&r.assume_role_policy))
        .opt("Description", r.description.as_deref())
        .elem("MaxSessionDuration", &r.max_session_duration.to_string());
    if full {
        boundary(w, r.permissions_boundary.as_deref());
        if !r.tags.is_empty() {
            tags(w, &r.tags);
        }
        w.raw("<RoleLastUsed/>");
    }
    w.close();
}

pub fn user(w: &mut XmlWriter, name: &'static str, u: &User, full: bool) {
    w.open(name, None)
        .elem("Path", &u.path)
        .elem("UserName", &u.name)
        .elem("UserId", &u.id)
        .elem("Arn", &u.arn)
        .elem("CreateDate", &ts(&u.create_date));
    if full {
        boundary(w, u.permissions_boundary.as_deref());
        if !u.tags.is_empty() {
            tags(w, &u.tags);
        }
    }
    w.close();
}

pub fn group(w: &mut XmlWriter, name: &'static str, g: &Group) {
    w.open(name, None)
        .elem("Path", &g.path)
        .elem("GroupName", &g.name)
        .elem("GroupId", &g.id)
        .elem("Arn", &g.arn)
        .elem("CreateDate", &ts(&g.create_date))
        .close();
}

/// A managed policy; `full` (GetPolicy, CreatePolicy) adds the description and tags.
pub fn policy(w: &mut XmlWriter, name: &'static str, p: &PolicyView, full: bool) {
    w.open(name, None)
        .elem("PolicyName", &p.name)
        .elem("PolicyId", &p.id)
        .elem("Arn", &p.arn)
        .elem("Path", &p.path)
        .elem("DefaultVersionId", &p.default_version)
        .elem("AttachmentCount", &p.attachment_count.to_string())
        .elem(
            "PermissionsBoundaryUsageCount",
            &p.boundary_usage_count.to_string(),
        )
        .elem("IsAttachable", "true");
    if full {
        w.opt("Description", p.description.as_deref());
    }
    w.elem("CreateDate", &ts(&p.create_date))
        .elem("UpdateDate", &ts(&p.update_date));
    if full && !p.tags.is_empty() {
        tags(w, &p.tags);
    }
    w.close();
}

/// A policy version; ListPolicyVersions leaves the document out.
pub fn version(
    w: &mut XmlWriter,
    name: &'static str,
    v: &PolicyVersion,
    is_default: bool,
    with_document: bool,
) {
    w.open(name, None);
    if with_document {
        w.elem("Document", &document(&v.document));
    }
    w.elem("VersionId", &v.id)
        .elem(
            "IsDefaultVersion",
            if is_default { "true" } else { "false" },
        )
        .elem("CreateDate", &ts(&v.create_date))
        .close();
}

pub fn profile(w: &mut XmlWriter, name: &'static str, p: &InstanceProfile, roles: &[Role]) {
    w.open(name, None)
        .elem("Path", &p.path)
        .elem("InstanceProfileName", &p.name)
        .elem("InstanceProfileId", &p.id)
        .elem("Arn", &p.arn)
        .elem("CreateDate", &ts(&p.create_date));
    w.open("Roles", None);
    for r in roles {
        role(w, "member", r, false);
    }
    w.close();
    if !p.tags.is_empty() {
        tags(w, &p.tags);
    }
    w.close();
}

pub fn attached(w: &mut XmlWriter, items: &[AttachedPolicy]) {
    w.open("AttachedPolicies", None);
    for a in items {
        w.open("member", None)
            .elem("PolicyName", &a.name)
            .elem("PolicyArn", &a.arn)
            .close();
    }
    w.close();
}

pub fn access_key(w: &mut XmlWriter, name: &'static str, k: &UserAccessKey, with_secret: bool) {
    w.open(name, None)
        .elem("UserName", &k.user_name)
        .elem("AccessKeyId", &k.key.id)
        .elem("Status", if k.key.active { "Active" } else { "Inactive" });
    if with_secret {
        w.elem("SecretAccessKey", &k.key.secret);
    }
    w.elem("CreateDate", &ts(&k.key.create_date)).close();
}

/// `IsTruncated` and, when there is more, `Marker`.
pub fn truncation(w: &mut XmlWriter, next: Option<&str>) {
    w.elem("IsTruncated", if next.is_some() { "true" } else { "false" })
        .opt("Marker", next);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_percent_encoded_like_aws() {
        assert_eq!(
            document(r#"{"Action":"s3:*", "R":"a/b"}"#),
            "%7B%22Action%22%3A%22s3%3A%2A%22%2C%20%22R%22%3A%22a%2Fb%22%7D"
        );
    }
}
