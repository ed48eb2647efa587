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
        for path in editor.paths().keys() {
            let Some(item) = editor.paths().get(&path) else {
                continue;
            };
            for content in contents(item) {
                if content.as_dict().is_none() {
                    return Err(format!(
                        "Value of '{path}' path must be a dictionary according to Swagger spec."
                    ));
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

    /// A path's item: its first conditional content (the translator's `Fn::If` wrapping).
    pub(crate) fn path_item(&self, path: &str) -> Option<&Dict> {
        contents(self.paths().get(path)?)
            .into_iter()
            .next()?
            .as_dict()
    }

    pub(crate) fn path_item_mut(&mut self, path: &str) -> Option<&mut Dict> {
        contents_mut(self.paths_mut()?.get_mut(path)?)
            .into_iter()
            .next()?
            .as_dict_mut()
    }

    /// A method's definition, through the conditions wrapping its path and itself.
    pub(crate) fn method_mut(&mut self, path: &str, method: &str) -> Option<&mut Dict> {
        contents_mut(self.path_item_mut(path)?.get_mut(method)?)
            .into_iter()
            .next()?
            .as_dict_mut()
    }

    /// `has_integration`: the method is in every content of the path, each with an
    /// integration in one of its own contents.
    pub(crate) fn has_integration(&self, path: &str, method: &str) -> bool {
        let (m, _) = normalize(method, false);
        let Some(item) = self.paths().get(path) else {
            return false;
        };
        let items = contents(item);
        items
            .iter()
            .all(|i| i.as_dict().is_some_and(|d| d.contains(&m)))
            && items.iter().all(|i| {
                i.as_dict()
                    .and_then(|d| d.get(&m))
                    .filter(|def| def.as_dict().is_some())
                    .is_some_and(|def| {
                        contents(def).iter().any(|c| {
                            c.as_dict()
                                .and_then(|d| d.get(INTEGRATION))
                                .is_some_and(Py::truthy)
                        })
                    })
            })
    }

    /// `make_path_conditional`: the path's item wrapped in `Fn::If`.
    pub(crate) fn make_path_conditional(&mut self, path: &str, condition: Py) {
        if let Some(paths) = self.paths_mut()
            && let Some(item) = paths.get(path).cloned()
        {
            paths.set(path, false, make_conditional(condition, item));
        }
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
        if item.as_dict().is_none() {
            return Err(format!(
                "Value of '{path}' path must be a dictionary according to Swagger spec."
            ));
        }
        for content in contents_mut(item) {
            if let Some(d) = content.as_dict_mut() {
                d.setdefault(&m, m_uni, Py::Dict(Dict::py27()));
            }
        }
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

fn is_no_value(v: &Py) -> bool {
    v.as_dict().is_some_and(|d| {
        d.keys() == ["Ref"] && d.get("Ref").and_then(Py::as_str) == Some("AWS::NoValue")
    })
}

/// `get_conditional_contents`: an `Fn::If`'s branches (without `AWS::NoValue`), or the item.
pub(crate) fn contents(item: &Py) -> Vec<&Py> {
    match item.as_dict().and_then(|d| d.get("Fn::If")) {
        Some(Py::List(l)) => l.iter().skip(1).filter(|c| !is_no_value(c)).collect(),
        Some(_) => Vec::new(),
        None => vec![item],
    }
}

pub(crate) fn contents_mut(item: &mut Py) -> Vec<&mut Py> {
    let conditional = item.as_dict().is_some_and(|d| d.contains("Fn::If"));
    if !conditional {
        return vec![item];
    }
    match item.as_dict_mut().and_then(|d| d.get_mut("Fn::If")) {
        Some(Py::List(l)) => l.iter_mut().skip(1).filter(|c| !is_no_value(c)).collect(),
        _ => Vec::new(),
    }
}

/// `make_conditional`: `{"Fn::If": [condition, data, {"Ref": "AWS::NoValue"}]}` (plain dicts).
pub(crate) fn make_conditional(condition: Py, data: Py) -> Py {
    let mut d = Dict::plain();
    d.set(
        "Fn::If",
        false,
        Py::List(vec![
            condition,
            data,
            Py::plain(&json!({"Ref": "AWS::NoValue"})),
        ]),
    );
    Py::Dict(d)
}
