//! A generated CloudFormation resource and the SAM resource it comes from, with the helpers
//! every translation shares (references, tags, the attributes passed through).

use serde_json::{Map, Value, json};

/// One generated resource: `{Type, DependsOn, <attributes>, Properties}` as the translator
/// writes it.
#[derive(Debug, Clone)]
pub struct Res {
    pub id: String,
    pub ty: String,
    pub depends_on: Option<Value>,
    pub attrs: Map<String, Value>,
    pub props: Map<String, Value>,
}

impl Res {
    pub fn new(id: impl Into<String>, ty: &str, attrs: Map<String, Value>) -> Res {
        Res {
            id: id.into(),
            ty: ty.to_string(),
            depends_on: None,
            attrs,
            props: Map::new(),
        }
    }

    /// Sets a property when the value is present (the translator omits `None`s).
    pub fn set(&mut self, name: &str, value: Option<Value>) {
        if let Some(v) = value
            && !v.is_null()
        {
            self.props.insert(name.to_string(), v);
        }
    }

    pub fn put(&mut self, name: &str, value: Value) {
        self.props.insert(name.to_string(), value);
    }

    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        out.insert("Type".into(), json!(self.ty));
        if let Some(d) = &self.depends_on {
            out.insert("DependsOn".into(), d.clone());
        }
        for (k, v) in &self.attrs {
            out.insert(k.clone(), v.clone());
        }
        out.insert("Properties".into(), Value::Object(self.props.clone()));
        Value::Object(out)
    }
}

/// A SAM resource as submitted: its logical id, properties and resource attributes.
pub struct Sam<'a> {
    pub id: &'a str,
    pub ty: &'a str,
    pub props: Map<String, Value>,
    pub depends_on: Option<Value>,
    /// DeletionPolicy, UpdatePolicy, Condition, UpdateReplacePolicy, Metadata, as given.
    pub attrs: Map<String, Value>,
}

const SUPPORTED_ATTRIBUTES: [&str; 5] = [
    "DeletionPolicy",
    "UpdatePolicy",
    "Condition",
    "UpdateReplacePolicy",
    "Metadata",
];
const PASS_THROUGH: [&str; 3] = ["Condition", "DeletionPolicy", "UpdateReplacePolicy"];

impl<'a> Sam<'a> {
    pub fn from(id: &'a str, r: &'a Value) -> Result<Sam<'a>, String> {
        let ty = r.get("Type").and_then(Value::as_str).unwrap_or("");
        if !id.chars().all(|c| c.is_ascii_alphanumeric()) || id.is_empty() {
            return Err(crate::invalid(id, "Logical ids must be alphanumeric."));
        }
        let props = match r.get("Properties") {
            None => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => {
                return Err(crate::invalid(
                    id,
                    "Properties of a resource must be an object.",
                ));
            }
        };
        let mut attrs = Map::new();
        for a in SUPPORTED_ATTRIBUTES {
            if let Some(v) = r.get(a) {
                attrs.insert(a.to_string(), v.clone());
            }
        }
        Ok(Sam {
            id,
            ty,
            props,
            depends_on: r.get("DependsOn").cloned(),
            attrs,
        })
    }

    /// Checks every property is one the type declares (the translator's own refusal).
    pub fn check_known(&self, known: &[&str]) -> Result<(), String> {
        for k in self.props.keys() {
            if !known.contains(&k.as_str()) {
                return Err(crate::invalid(
                    self.id,
                    format!("property {k} not defined for resource of type {}", self.ty),
                ));
            }
        }
        Ok(())
    }

    /// Refuses, by name, properties cumulo's transform does not implement.
    pub fn refuse(&self, names: &[&str]) -> Result<(), String> {
        for n in names {
            if self.props.get(*n).is_some_and(|v| !v.is_null()) {
                return Err(crate::unsupported(self.id, &format!("'{n}'")));
            }
        }
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.props.get(name).filter(|v| !v.is_null())
    }

    pub fn cloned(&self, name: &str) -> Option<Value> {
        self.get(name).cloned()
    }

    /// The attributes generated resources inherit (Condition, DeletionPolicy,
    /// UpdateReplacePolicy).
    pub fn passthrough(&self) -> Map<String, Value> {
        PASS_THROUGH
            .iter()
            .filter_map(|a| Some((a.to_string(), self.attrs.get(*a)?.clone())))
            .collect()
    }

    /// The main generated resource: it keeps every attribute and the DependsOn.
    pub fn main(&self, ty: &str) -> Res {
        let mut r = Res::new(self.id, ty, self.attrs.clone());
        r.depends_on = self.depends_on.clone();
        r
    }

    /// `Tags` as a list, `lambda:createdBy: SAM` first, refusing the reserved keys.
    pub fn tag_list(&self, additional: &[(String, Value)]) -> Result<Value, String> {
        let tags = match self.get("Tags") {
            None => Map::new(),
            Some(Value::Object(t)) => t.clone(),
            Some(_) => {
                return Err(crate::invalid(
                    self.id,
                    "Type of property 'Tags' is invalid.",
                ));
            }
        };
        for reserved in [
            "lambda:createdBy",
            "serverlessrepo:applicationId",
            "serverlessrepo:semanticVersion",
        ] {
            if tags.contains_key(reserved) {
                return Err(crate::invalid(
                    self.id,
                    format!(
                        "{reserved} is a reserved Tag key name and cannot be set on your resource. Please change the tag key in the input."
                    ),
                ));
            }
        }
        let mut list = vec![json!({"Key": "lambda:createdBy", "Value": "SAM"})];
        for (k, v) in additional {
            list.push(json!({"Key": k, "Value": v}));
        }
        list.extend(tag_list(&tags));
        Ok(Value::Array(list))
    }
}

/// `{k: v}` tags as CloudFormation's `[{Key, Value}]` (a null value becomes "").
pub fn tag_list(tags: &Map<String, Value>) -> Vec<Value> {
    tags.iter()
        .map(|(k, v)| {
            let v = if v.is_null() { json!("") } else { v.clone() };
            json!({"Key": k, "Value": v})
        })
        .collect()
}

pub fn reference(id: &str) -> Value {
    json!({"Ref": id})
}

pub fn get_att(id: &str, attr: &str) -> Value {
    json!({"Fn::GetAtt": [id, attr]})
}

/// Whether a value is an intrinsic function: one key, `Ref`, `Condition` or `Fn::*`.
pub fn is_intrinsic(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.len() == 1
            && o.keys()
                .next()
                .is_some_and(|k| k == "Ref" || k == "Condition" || k.starts_with("Fn::"))
    })
}

/// A managed policy's ARN in the partition (`service-role/AWSLambdaBasicExecutionRole`).
pub fn managed_arn(partition: &str, name: &str) -> Value {
    json!(format!("arn:{partition}:iam::aws:policy/{name}"))
}

/// Python's truthiness, which the translator's `if self.X:` tests.
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
    }
}

/// An implicit API takes the strongest deletion and replace policies of the functions whose
/// events made it (`deletion`/`replace`: each event's API id and its function's policy).
pub(crate) fn inherit_policies(
    api: &mut Map<String, Value>,
    api_id: &str,
    deletion: &[(String, Option<Value>)],
    replace: &[(String, Option<Value>)],
) {
    let pick = |list: &[(String, Option<Value>)], order: &[&str]| -> Option<&'static str> {
        let given: Vec<&str> = list
            .iter()
            .filter(|(a, _)| a == api_id)
            .filter_map(|(_, p)| p.as_ref().and_then(Value::as_str))
            .collect();
        order.iter().find(|o| given.contains(o)).map(|o| match *o {
            "Retain" => "Retain",
            "Snapshot" => "Snapshot",
            _ => "Delete",
        })
    };
    if let Some(p) = pick(deletion, &["Retain", "Delete"]) {
        api.insert("DeletionPolicy".into(), json!(p));
    }
    if let Some(p) = pick(replace, &["Retain", "Snapshot", "Delete"]) {
        api.insert("UpdateReplacePolicy".into(), json!(p));
    }
}
