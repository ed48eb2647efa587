//! The query-protocol adapter: decodes form parameters into typed calls, encodes XML responses.

mod policies;
mod principals;
mod roles;

use super::IamService;
use super::validate::{constraint, missing, page};
use cumulo_wire::query::QueryParams;
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};

pub const NS: &str = "https://iam.amazonaws.com/doc/2010-05-08/";
const PROTOCOL: Protocol = Protocol::Query(NS);

pub fn handle(svc: &IamService, req: &AwsRequest) -> AwsResponse {
    let params = query_params(req);
    let action = params.get("Action").unwrap_or("").to_string();
    let call = Call {
        svc,
        p: &params,
        account: &req.account_id,
        request_id: &req.request_id,
        access_key: req.access_key.as_deref(),
    };
    match call.dispatch(&action) {
        Ok(body) => AwsResponse::xml(body).with_header("x-amzn-requestid", &req.request_id),
        Err(e) => e.into_response(PROTOCOL, &req.request_id),
    }
}

/// The URL query plus, under a form content type (or none), the form body.
fn query_params(req: &AwsRequest) -> QueryParams {
    let form = req
        .header("content-type")
        .is_none_or(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if form {
        QueryParams::from_request(req)
    } else {
        QueryParams(req.query.clone())
    }
}

struct Call<'a> {
    svc: &'a IamService,
    p: &'a QueryParams,
    account: &'a str,
    request_id: &'a str,
    access_key: Option<&'a str>,
}

/// The model's field name for a parameter (`RoleName` → `roleName`), for validation messages.
fn field(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

impl<'a> Call<'a> {
    fn req(&self, name: &str) -> Result<String, AwsError> {
        self.p
            .get(name)
            .map(str::to_string)
            .ok_or_else(|| missing(&field(name)))
    }

    fn opt(&self, name: &str) -> Option<&'a str> {
        self.p.get(name)
    }

    fn int(&self, name: &str) -> Result<Option<i64>, AwsError> {
        self.p
            .get(name)
            .map(|v| {
                v.trim()
                    .parse::<i64>()
                    .map_err(|_| constraint(v, &field(name), "Member must be a number"))
            })
            .transpose()
    }

    fn bool(&self, name: &str) -> Result<Option<bool>, AwsError> {
        match self.p.get(name) {
            None => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(v) => Err(constraint(v, &field(name), "Member must be a boolean")),
        }
    }

    fn tags(&self) -> Vec<(String, String)> {
        self.p
            .list_of_structs("Tags")
            .into_iter()
            .map(|fields| {
                let get = |f: &str| {
                    fields
                        .iter()
                        .find(|(k, _)| k == f)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                (get("Key"), get("Value"))
            })
            .collect()
    }

    fn page<T>(&self, items: Vec<T>) -> Result<(Vec<T>, Option<String>), AwsError> {
        page(items, self.opt("Marker"), self.int("MaxItems")?)
    }

    /// The user a call without `UserName` acts on: the owner of the caller's access key.
    fn user_or_caller(&self) -> Result<String, AwsError> {
        if let Some(u) = self.opt("UserName") {
            return Ok(u.to_string());
        }
        self.access_key
            .and_then(|k| self.svc.access_key_owner(self.account, k))
            .ok_or_else(|| {
                AwsError::validation("Must specify userName when calling with non-User credentials")
            })
    }

    /// `<ActionResponse>[<ActionResult>...</ActionResult>]<ResponseMetadata>`.
    fn respond(&self, action: &str, body: Option<&dyn Fn(&mut XmlWriter)>) -> String {
        let mut w = XmlWriter::new();
        w.raw(&format!("<{action}Response xmlns=\"{NS}\">"));
        if let Some(body) = body {
            w.raw(&format!("<{action}Result>"));
            body(&mut w);
            w.raw(&format!("</{action}Result>"));
        }
        w.open("ResponseMetadata", None)
            .elem("RequestId", self.request_id)
            .close();
        w.raw(&format!("</{action}Response>"));
        w.finish()
    }

    fn empty(&self, action: &str) -> String {
        self.respond(action, None)
    }

    fn with(&self, action: &str, body: impl Fn(&mut XmlWriter)) -> String {
        self.respond(action, Some(&body))
    }

    fn dispatch(&self, action: &str) -> Result<String, AwsError> {
        if let Some(out) = self.roles(action)? {
            return Ok(out);
        }
        if let Some(out) = self.principal_policies(action)? {
            return Ok(out);
        }
        if let Some(out) = self.users(action)? {
            return Ok(out);
        }
        if let Some(out) = self.groups(action)? {
            return Ok(out);
        }
        if let Some(out) = self.policies(action)? {
            return Ok(out);
        }
        if let Some(out) = self.profiles(action)? {
            return Ok(out);
        }
        match action {
            "" => Err(AwsError::bad_request(
                "MissingAction",
                "Missing Action parameter",
            )),
            other if KNOWN_ACTIONS.contains(&other) => Err(AwsError::not_implemented("iam", other)),
            other => Err(AwsError::bad_request(
                "InvalidAction",
                format!("Could not find operation {other} for version 2010-05-08"),
            )),
        }
    }
}

/// IAM operations that exist in AWS but are not emulated (they answer 501 naming themselves).
const KNOWN_ACTIONS: &[&str] = &[
    "AcceptDelegationRequest",
    "AddClientIDToOpenIDConnectProvider",
    "AssociateDelegationRequest",
    "ChangePassword",
    "CreateAccountAlias",
    "CreateDelegationRequest",
    "CreateOpenIDConnectProvider",
    "CreateSAMLProvider",
    "CreateServiceSpecificCredential",
    "CreateVirtualMFADevice",
    "DeactivateMFADevice",
    "DeleteAccountAlias",
    "DeleteAccountPasswordPolicy",
    "DeleteOpenIDConnectProvider",
    "DeleteSAMLProvider",
    "DeleteSSHPublicKey",
    "DeleteServerCertificate",
    "DeleteServiceSpecificCredential",
    "DeleteSigningCertificate",
    "DeleteVirtualMFADevice",
    "DisableOrganizationsRootCredentialsManagement",
    "DisableOrganizationsRootSessions",
    "DisableOutboundWebIdentityFederation",
    "EnableMFADevice",
    "EnableOrganizationsRootCredentialsManagement",
    "EnableOrganizationsRootSessions",
    "EnableOutboundWebIdentityFederation",
    "GenerateCredentialReport",
    "GenerateOrganizationsAccessReport",
    "GenerateServiceLastAccessedDetails",
    "GetAccessKeyLastUsed",
    "GetAccountAuthorizationDetails",
    "GetAccountPasswordPolicy",
    "GetAccountSummary",
    "GetContextKeysForCustomPolicy",
    "GetContextKeysForPrincipalPolicy",
    "GetCredentialReport",
    "GetDelegationRequest",
    "GetHumanReadableSummary",
    "GetMFADevice",
    "GetOpenIDConnectProvider",
    "GetOrganizationsAccessReport",
    "GetOutboundWebIdentityFederationInfo",
    "GetSAMLProvider",
    "GetSSHPublicKey",
    "GetServerCertificate",
    "GetServiceLastAccessedDetails",
    "GetServiceLastAccessedDetailsWithEntities",
    "ListAccountAliases",
    "ListDelegationRequests",
    "ListMFADeviceTags",
    "ListMFADevices",
    "ListOpenIDConnectProviderTags",
    "ListOpenIDConnectProviders",
    "ListOrganizationsFeatures",
    "ListPoliciesGrantingServiceAccess",
    "ListSAMLProviderTags",
    "ListSAMLProviders",
    "ListSSHPublicKeys",
    "ListServerCertificateTags",
    "ListServerCertificates",
    "ListServiceSpecificCredentials",
    "ListSigningCertificates",
    "ListVirtualMFADevices",
    "RejectDelegationRequest",
    "RemoveClientIDFromOpenIDConnectProvider",
    "ResetServiceSpecificCredential",
    "ResyncMFADevice",
    "SendDelegationToken",
    "SetSecurityTokenServicePreferences",
    "SimulateCustomPolicy",
    "SimulatePrincipalPolicy",
    "TagMFADevice",
    "TagOpenIDConnectProvider",
    "TagSAMLProvider",
    "TagServerCertificate",
    "UntagMFADevice",
    "UntagOpenIDConnectProvider",
    "UntagSAMLProvider",
    "UntagServerCertificate",
    "UpdateAccountPasswordPolicy",
    "UpdateDelegationRequest",
    "UpdateOpenIDConnectProviderThumbprint",
    "UpdateSAMLProvider",
    "UpdateSSHPublicKey",
    "UpdateServerCertificate",
    "UpdateServiceSpecificCredential",
    "UpdateSigningCertificate",
    "UploadSSHPublicKey",
    "UploadServerCertificate",
    "UploadSigningCertificate",
];
