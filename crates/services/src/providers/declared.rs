//! Resource types whose provider is a mechanical mapping: template properties to a service's
//! typed operations, Ref and Fn::GetAtt from its answer, delete by id. Such a type is a
//! declaration, an implementation of [`Declared`]: the names the engine and its messages need,
//! the properties it accepts, the error codes that mean "gone", and the few calls that differ
//! from type to type. [`DeclaredProvider`] is the one provider of every such type: it checks the
//! properties (nothing unknown is dropped silently), turns a service's refusal into the status
//! reason CloudFormation shows, treats "gone" as deleted, and refuses an in-place change the
//! type does not declare by naming the property.
//!
//! A type with logic of its own (waits, several services, derived state) still implements
//! [`Provider`] by hand; this is for the many that do not.

use super::{check_known, failed, object, unsupported_prop};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Why a declared call failed: a property problem (already the resource's reason) or a
/// service's refusal (worded as CloudFormation words a handler error).
#[derive(Debug)]
pub(crate) enum Fault {
    Provider(ProviderError),
    Service(AwsError),
    /// Either of the others, after the create had made the resource under `id`: the engine
    /// records the id so the rollback deletes it ([`ProviderError::FailedAfterCreate`]).
    Made {
        id: String,
        fault: Box<Fault>,
    },
}

/// What a call made after the service's create answers: a failure names the resource made
/// under `id`, so the rollback deletes it rather than leave it behind.
pub(crate) fn after_create<T>(id: &str, answer: Answer<T>) -> Answer<T> {
    answer.map_err(|fault| Fault::Made {
        id: id.to_string(),
        fault: Box::new(fault),
    })
}

impl From<ProviderError> for Fault {
    fn from(e: ProviderError) -> Self {
        Fault::Provider(e)
    }
}

impl From<AwsError> for Fault {
    fn from(e: AwsError) -> Self {
        Fault::Service(e)
    }
}

/// What a declared call answers.
pub(crate) type Answer<T> = Result<T, Fault>;

/// A created or updated resource: its physical id (Ref) and every Fn::GetAtt attribute.
#[derive(Debug, Clone, Default)]
pub(crate) struct Made {
    pub id: String,
    pub attributes: Map<String, Value>,
}

impl Made {
    pub fn new(id: impl Into<String>) -> Self {
        Made {
            id: id.into(),
            attributes: Map::new(),
        }
    }

    /// Adds one Fn::GetAtt attribute.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.attributes.insert(name.to_string(), value.into());
        self
    }
}

/// A resource as a read reports it from its answer: its attributes, no properties.
impl From<Made> for Observed {
    fn from(made: Made) -> Self {
        Observed {
            properties: Map::new(),
            attributes: made.attributes,
        }
    }
}

/// One resource type, declared.
#[async_trait::async_trait]
pub(crate) trait Declared: Send + Sync + 'static {
    /// The resource type (`AWS::EC2::VPC`).
    const TYPE: &'static str;
    /// The service as a handler's messages name it (`Ec2`).
    const SERVICE: &'static str;
    /// Every property the type accepts; any other fails the resource.
    const PROPERTIES: &'static [&'static str];
    /// Properties of the type's schema cumulo cannot apply, each with why.
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[];
    /// Every Fn::GetAtt attribute its [`Made`] answers ([`Provider::attributes`]).
    const ATTRIBUTES: &'static [&'static str];
    /// The service's error codes that mean the resource no longer exists.
    const NOT_FOUND: &'static [&'static str];
    /// A limitation every resource of the type shows as its status reason (`cumulo: ...`).
    const LIMITATION: Option<&'static str> = None;
    /// See [`Provider::live_attributes`]: attributes other resources change, read back
    /// through [`Declared::read`] before they are used.
    const LIVE_ATTRIBUTES: &'static [&'static str] = &[];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made>;

    /// Applies a change in place. The engine calls it only when no createOnly property
    /// changed. The default applies nothing, so it refuses any changed property by name and,
    /// with nothing changed (a stack-tag-only update of an untaggable type), answers what
    /// [`Declared::read`] reports.
    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        if let Some(key) = changed_keys(old, new).into_iter().next() {
            return Err(
                unsupported_prop(Self::TYPE, &key, "cumulo cannot change it in place").into(),
            );
        }
        match self.read(ctx, id, new)? {
            Some(o) => Ok(Made {
                id: id.to_string(),
                attributes: o.attributes,
            }),
            None => Err(ProviderError::NotFound(id.to_string()).into()),
        }
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()>;

    /// The live resource's Ref and Fn::GetAtt answer, by the mapping create and update answer
    /// with, so an imported resource answers as a created one. A type that maps its answer this
    /// way implements it once and is readable through the default [`Declared::read`]. The
    /// default: not readable.
    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let _ = id;
        Err(ProviderError::NotReadable(ctx.resource_type.clone()).into())
    }

    /// The live resource, `None` when it is gone. The default: [`Declared::made`]'s
    /// attributes, and no properties (drift then compares nothing the service cannot report).
    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let _ = props;
        Ok(Some(self.made(ctx, id)?.into()))
    }

    /// See [`Provider::created_identity`]; the default: not known beforehand.
    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        let _ = (ctx, props);
        None
    }
}

/// The top-level properties whose values differ between two bags.
pub(crate) fn changed_keys(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = old
        .keys()
        .chain(new.keys())
        .filter(|k| old.get(*k) != new.get(*k))
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Refuses, by name, a changed property outside `mutable`: what a type's `update` checks first
/// when it applies some properties in place and not others.
pub(crate) fn refuse_other_changes(
    resource_type: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    mutable: &[&str],
) -> Result<(), ProviderError> {
    match changed_keys(old, new)
        .into_iter()
        .find(|k| !mutable.contains(&k.as_str()))
    {
        Some(k) => Err(unsupported_prop(
            resource_type,
            &k,
            "cumulo cannot change it in place",
        )),
        None => Ok(()),
    }
}

/// The provider of every [`Declared`] type.
pub(crate) struct DeclaredProvider<T>(pub T);

/// Registers a declared type.
pub(crate) fn register<T: Declared>(r: &mut ProviderRegistry, declared: T) {
    r.register(T::TYPE, Arc::new(DeclaredProvider(declared)));
}

impl<T: Declared> DeclaredProvider<T> {
    fn props<'a>(
        properties: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Map<String, Value>>, ProviderError> {
        let props = object(T::TYPE, properties)?;
        check_known(T::TYPE, &props, T::PROPERTIES, T::UNSUPPORTED)?;
        Ok(props)
    }

    fn reason(ctx: &ProviderContext, fault: Fault) -> ProviderError {
        match fault {
            Fault::Provider(e) => e,
            Fault::Service(e) => failed(ctx, T::SERVICE, e),
            Fault::Made { id, fault } => Self::reason(ctx, *fault).after_create(&id),
        }
    }

    fn outcome(made: Made) -> ProviderOutcome {
        ProviderOutcome {
            physical_id: made.id,
            attributes: made.attributes,
            status_reason: T::LIMITATION.map(str::to_string),
            ..Default::default()
        }
    }

    fn gone(fault: &Fault) -> bool {
        match fault {
            Fault::Service(e) => T::NOT_FOUND.contains(&e.code.as_str()),
            Fault::Provider(ProviderError::NotFound(_)) => true,
            Fault::Provider(_) | Fault::Made { .. } => false,
        }
    }
}

#[async_trait::async_trait]
impl<T: Declared> Provider for DeclaredProvider<T> {
    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = Self::props(properties)?;
        self.0
            .create(ctx, &props)
            .await
            .map(Self::outcome)
            .map_err(|f| Self::reason(ctx, f))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let new = Self::props(new)?;
        let old = object(T::TYPE, old)?;
        self.0
            .update(ctx, physical_id, &old, &new)
            .await
            .map(Self::outcome)
            .map_err(|f| Self::reason(ctx, f))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let props = object(T::TYPE, properties)?;
        match self.0.delete(ctx, physical_id, &props).await {
            Ok(()) => Ok(()),
            Err(f) if Self::gone(&f) => Err(ProviderError::NotFound(physical_id.to_string())),
            Err(f) => Err(Self::reason(ctx, f)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let props = object(T::TYPE, properties)?;
        match self.0.read(ctx, physical_id, &props) {
            Ok(o) => Ok(o),
            Err(f) if Self::gone(&f) => Ok(None),
            Err(f) => Err(Self::reason(ctx, f)),
        }
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(T::TYPE, properties).ok()?;
        self.0.created_identity(ctx, &props)
    }

    fn live_attributes(&self) -> &'static [&'static str] {
        T::LIVE_ATTRIBUTES
    }

    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(T::ATTRIBUTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::ctx;
    use serde_json::json;
    use std::sync::Mutex;

    /// A declared type over a map of names, enough to exercise the shared behaviour.
    #[derive(Default)]
    struct Thing {
        live: Mutex<Vec<String>>,
    }

    #[async_trait::async_trait]
    impl Declared for Thing {
        const TYPE: &'static str = "AWS::Test::Thing";
        const ATTRIBUTES: &'static [&'static str] = &["Arn"];
        const SERVICE: &'static str = "Test";
        const PROPERTIES: &'static [&'static str] = &["Name", "Size"];
        const UNSUPPORTED: &'static [(&'static str, &'static str)] =
            &[("Engine", "no engine runs here")];
        const NOT_FOUND: &'static [&'static str] = &["NoSuchThing"];
        const LIMITATION: Option<&'static str> = Some("cumulo: a thing is only recorded");

        async fn create(&self, _: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
            let name = super::super::required(props, "Name")?;
            if name == "taken" {
                return Err(AwsError::bad_request("ThingExists", "it exists").into());
            }
            self.live.lock().unwrap().push(name.clone());
            Ok(Made::new(name.clone()).with("Arn", format!("arn:thing/{name}")))
        }

        async fn delete(
            &self,
            _: &ProviderContext,
            id: &str,
            _: &Map<String, Value>,
        ) -> Answer<()> {
            let mut live = self.live.lock().unwrap();
            let Some(i) = live.iter().position(|n| n == id) else {
                return Err(AwsError::bad_request("NoSuchThing", "no such thing").into());
            };
            live.remove(i);
            Ok(())
        }

        fn read(
            &self,
            _: &ProviderContext,
            id: &str,
            _: &Map<String, Value>,
        ) -> Answer<Option<Observed>> {
            if !self.live.lock().unwrap().iter().any(|n| n == id) {
                return Err(AwsError::bad_request("NoSuchThing", "no such thing").into());
            }
            Ok(Some(Observed {
                attributes: Map::from_iter([("Arn".into(), json!(format!("arn:thing/{id}")))]),
                ..Default::default()
            }))
        }
    }

    #[tokio::test]
    async fn the_shared_behaviour_of_every_declared_type() {
        let p = DeclaredProvider(Thing::default());
        let c = ctx("T", Thing::TYPE);
        let made = p
            .create(&c, &json!({"Name": "a", "Size": 1}))
            .await
            .unwrap();
        assert_eq!(made.physical_id, "a");
        assert_eq!(made.attributes["Arn"], "arn:thing/a");
        assert_eq!(
            made.status_reason.as_deref(),
            Some("cumulo: a thing is only recorded")
        );

        // Unknown and unsupported properties fail by name; a refusal is a handler message.
        let e = p
            .create(&c, &json!({"Name": "b", "Color": 1}))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("extraneous key [Color]"), "{e}");
        let e = p
            .create(&c, &json!({"Name": "b", "Engine": 1}))
            .await
            .unwrap_err();
        assert!(
            matches!(e, ProviderError::Unsupported { ref property, .. } if property == "Engine")
        );
        let e = p.create(&c, &json!({"Name": "taken"})).await.unwrap_err();
        assert!(
            e.to_string()
                .contains("it exists (Service: Test, Status Code: 400"),
            "{e}"
        );

        // No declared update: a changed property is refused by name, no change reads back.
        let e = p
            .update(
                &c,
                "a",
                &json!({"Name": "a", "Size": 1}),
                &json!({"Name": "a", "Size": 2}),
            )
            .await
            .unwrap_err();
        assert!(matches!(e, ProviderError::Unsupported { ref property, .. } if property == "Size"));
        let same = json!({"Name": "a", "Size": 1});
        let up = p.update(&c, "a", &same, &same).await.unwrap();
        assert_eq!(up.attributes["Arn"], "arn:thing/a");

        // Gone is gone: delete of a missing resource is NotFound, read is None.
        p.delete(&c, "a", &same).await.unwrap();
        assert_eq!(
            p.delete(&c, "a", &same).await,
            Err(ProviderError::NotFound("a".into()))
        );
        assert_eq!(p.read(&c, "a", &same).await, Ok(None));
    }
}
