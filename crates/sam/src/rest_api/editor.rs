//! The translator's `SwaggerEditor` over a body held as Python 2.7 values: a deep copy per
//! editor and per answer, as the translator makes them (each copy re-adds every dict's keys in
//! its order, which can reorder them).

use super::*;

pub(crate) const ANY_METHOD: &str = "x-amazon-apigateway-any-method";

pub(crate) const INTEGRATION: &str = "x-amazon-apigateway-integration";

pub(crate) const BINARY_MEDIA_TYPES: &str = "x-amazon-apigateway-binary-media-types";

pub(crate) fn skeleton() -> Py {
    let mut info = Dict::py27();
    info.set("version", false, Py::str("1.0"));
    info.set("title", false, Py::plain(&json!({"Ref": "AWS::StackName"})));
    let mut s = Dict::py27();
    s.set("swagger", false, Py::str("2.0"));
    s.set("info", false, Py::Dict(info));
    s.set("paths", false, Py::Dict(Dict::py27()));
    Py::Dict(s)
}

pub(crate) fn openapi3(v: &str) -> bool {
    let mut parts = v.split('.');
    parts.next() == Some("3") && {
        let rest: Vec<&str> = parts.collect();
        (1..=2).contains(&rest.len())
            && rest
                .iter()
                .all(|p| p.len() == 1 && p.chars().all(|c| c.is_ascii_digit()))
    }
}

/// `SwaggerEditor.is_valid`.
pub(crate) fn is_valid(body: &Py) -> bool {
    let Some(d) = body.as_dict() else {
        return false;
    };
    if !matches!(d.get("paths"), Some(Py::Dict(_))) {
        return false;
    }
    if d.get("swagger").is_some_and(Py::truthy) {
        return true;
    }
    d.get("openapi")
        .filter(|v| v.truthy())
        .and_then(Py::as_str)
        .is_some_and(openapi3)
}

/// `_normalize_method_name`: lower case (keeping the template's unicode mark), `any` as API
/// Gateway's any-method.
pub(crate) fn normalize(method: &str, uni: bool) -> (String, bool) {
    let m = method.to_lowercase();
    if m == "any" {
        (ANY_METHOD.to_string(), false)
    } else {
        (m, uni)
    }
}

/// The swagger editor over a deep copy of a body (the translator's `SwaggerEditor(doc)`).
pub(crate) struct Editor {
    pub(crate) doc: Dict,
}

impl Editor {
    pub(crate) fn new(body: &Py) -> Result<Editor, String> {
        if !is_valid(body) {
            return Err(
                "Invalid Swagger document or the Swagger document is not explicitly defined in 'DefinitionBody'."
                    .into(),
            );
        }
        let doc = body
            .as_dict()
            .map(Dict::deepcopy)
            .unwrap_or_else(Dict::py27);
        let editor = Editor { doc };
        for path in editor
            .doc
            .get("paths")
            .and_then(Py::as_dict)
            .map(Dict::keys)
            .unwrap_or_default()
        {
            if let Some(item) = editor.paths().get(&path) {
                match item {
                    Py::Dict(d) if d.contains("Fn::If") => {
                        return Err(format!(
                            "A path given with Fn::If ({path}) is not supported by cumulo's SAM transform."
                        ));
                    }
                    Py::Dict(_) => {}
                    _ => {
                        return Err(format!(
                            "Value of '{path}' path must be a dictionary according to Swagger spec."
                        ));
                    }
                }
            }
        }
        Ok(editor)
    }

    pub(crate) fn paths(&self) -> &Dict {
        static EMPTY: std::sync::OnceLock<Dict> = std::sync::OnceLock::new();
        self.doc
            .get("paths")
            .and_then(Py::as_dict)
            .unwrap_or_else(|| EMPTY.get_or_init(Dict::plain))
    }

    pub(crate) fn paths_mut(&mut self) -> Option<&mut Dict> {
        self.doc.get_mut("paths").and_then(Py::as_dict_mut)
    }

    pub(crate) fn method(&self, path: &str, method: &str) -> Option<&Py> {
        self.paths().get(path)?.as_dict()?.get(method)
    }

    pub(crate) fn method_mut(&mut self, path: &str, method: &str) -> Option<&mut Dict> {
        self.paths_mut()?
            .get_mut(path)?
            .as_dict_mut()?
            .get_mut(method)?
            .as_dict_mut()
    }

    pub(crate) fn has_integration(&self, path: &str, method: &str) -> bool {
        let (m, _) = normalize(method, false);
        self.method(path, &m)
            .and_then(Py::as_dict)
            .and_then(|d| d.get(INTEGRATION))
            .is_some_and(Py::truthy)
    }

    /// `add_path`: the path item and the method, unless present.
    pub(crate) fn add_path(
        &mut self,
        path: &str,
        path_uni: bool,
        method: &str,
        method_uni: bool,
    ) -> Result<(), String> {
        let (m, m_uni) = normalize(method, method_uni);
        let Some(paths) = self.paths_mut() else {
            return Ok(());
        };
        let item = paths.setdefault(path, path_uni, Py::Dict(Dict::py27()));
        let Some(item) = item.as_dict_mut() else {
            return Err(format!(
                "Value of '{path}' path must be a dictionary according to Swagger spec."
            ));
        };
        item.setdefault(&m, m_uni, Py::Dict(Dict::py27()));
        Ok(())
    }

    /// The editor's `swagger`: a deep copy of its document.
    pub(crate) fn swagger(&self) -> Py {
        Py::Dict(self.doc.deepcopy())
    }
}

/// `add_binary_media_types`'s `~1` → `/`, every string (and key) a Py27UniStr.
pub(crate) fn replace_slashes(v: &Py) -> Py {
    match v {
        Py::Dict(d) => {
            let mut out = Dict::py27();
            for (k, _, v) in d.items() {
                out.set(&k.replace("~1", "/"), true, replace_slashes(&v));
            }
            Py::Dict(out)
        }
        Py::List(l) => Py::List(l.iter().map(replace_slashes).collect()),
        Py::Str(s, _) => Py::uni(&s.replace("~1", "/")),
        other => other.clone(),
    }
}

/// `_openapi_postprocess`: an OpenAPI 3 body's securityDefinitions and definitions moved under
/// components (swagger bodies are left as they are).
pub(crate) fn openapi_postprocess(mut body: Py, open_api_version: Option<&str>) -> Py {
    let Some(d) = body.as_dict_mut() else {
        return body;
    };
    if d.get("swagger").is_some_and(|v| !matches!(v, Py::None)) {
        return body;
    }
    let version = match (d.get("openapi"), open_api_version) {
        (Some(Py::Str(v, _)), None) => Some(v.clone()),
        (_, v) => v.map(str::to_string),
    };
    if !version.as_deref().is_some_and(openapi3) {
        return body;
    }
    for (from, to) in [
        ("securityDefinitions", "securitySchemes"),
        ("definitions", "schemas"),
    ] {
        if d.get(from).is_some_and(Py::truthy) {
            let mut components = match d.get("components") {
                Some(Py::Dict(c)) if !c.is_empty() => c.clone(),
                _ => Dict::py27(),
            };
            if let Some(v) = d.get(from).cloned() {
                components.set(to, false, v);
            }
            d.set("components", false, Py::Dict(components));
            d.remove(from);
        }
    }
    // CORS preflights in OpenAPI 3: no produces/consumes, each header's type under a schema.
    let Some(Py::Dict(paths)) = d.get_mut("paths") else {
        return body;
    };
    for path in paths.keys() {
        let Some(Py::Dict(options)) = paths
            .get_mut(&path)
            .and_then(Py::as_dict_mut)
            .and_then(|item| item.get_mut("options"))
            .filter(|o| o.truthy())
        else {
            continue;
        };
        for field in options.keys() {
            if field == "produces" || field == "consumes" {
                options.remove(&field);
            }
        }
        let Some(Py::Dict(headers)) = options
            .get_mut("responses")
            .and_then(Py::as_dict_mut)
            .and_then(|r| r.get_mut("200"))
            .and_then(Py::as_dict_mut)
            .and_then(|ok| ok.get_mut("headers"))
        else {
            continue;
        };
        for (name, uni, value) in headers.items() {
            let mut wrapped = Dict::py27();
            wrapped.set("schema", false, value);
            headers.set(&name, uni, Py::Dict(wrapped));
        }
    }
    body
}
