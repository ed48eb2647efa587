//! The shape most EC2 types share: made with the template's, the stack's and CloudFormation's
//! tags, changed in place only in their tags, and answering their id as Ref and as one
//! Fn::GetAtt attribute. Each such type declares only what differs (a [`TaggedKind`]: its
//! properties, how it is made and deleted); [`Tagged`] is the one provider of them all.

use super::{SERVICE, TAGGED_NOT_FOUND, create_tags, retag};
use crate::ec2::Ec2Service;
use crate::ec2::model::Tags;
use crate::providers::declared::{Answer, Declared, Made, refuse_other_changes};
use cumulo_engine::ProviderContext;
use serde_json::{Map, Value};
use std::marker::PhantomData;
use std::sync::Arc;

/// One EC2 type whose only in-place change is its tags.
pub(super) trait TaggedKind: Send + Sync + 'static {
    const TYPE: &'static str;
    /// Every property the type accepts (`Tags` among them).
    const PROPERTIES: &'static [&'static str];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[];
    const LIMITATION: Option<&'static str> = None;
    /// The Fn::GetAtt attribute that is the id (`RouteTableId`, `Id`).
    const ID_ATTRIBUTE: &'static str;

    /// Makes the resource with `tags`; answers its id.
    fn create(
        ec2: &Ec2Service,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
        tags: Tags,
    ) -> Answer<String>;

    fn delete(ec2: &Ec2Service, region: &str, id: &str) -> Answer<()>;
}

/// Declares a [`TaggedKind`] made in a VPC from `VpcId` and `Tags` alone (a route table, a
/// network ACL, an egress-only gateway): only its type, id attribute and the service's create
/// and delete operations differ.
macro_rules! vpc_child {
    ($kind:ident, $type:literal, $id_attribute:literal, $create:ident, $delete:ident) => {
        struct $kind;

        impl $crate::ec2::provider::tagged::TaggedKind for $kind {
            const TYPE: &'static str = $type;
            const PROPERTIES: &'static [&'static str] = &["VpcId", "Tags"];
            const ID_ATTRIBUTE: &'static str = $id_attribute;

            fn create(
                ec2: &$crate::ec2::Ec2Service,
                ctx: &cumulo_engine::ProviderContext,
                props: &serde_json::Map<String, serde_json::Value>,
                tags: $crate::ec2::model::Tags,
            ) -> $crate::providers::declared::Answer<String> {
                let vpc = $crate::providers::required(props, "VpcId")?;
                Ok(ec2.$create(&ctx.region, &vpc, tags)?.id)
            }

            fn delete(
                ec2: &$crate::ec2::Ec2Service,
                region: &str,
                id: &str,
            ) -> $crate::providers::declared::Answer<()> {
                Ok(ec2.$delete(region, id)?)
            }
        }
    };
}
pub(super) use vpc_child;

/// The provider of a [`TaggedKind`].
pub(super) struct Tagged<K>(Arc<Ec2Service>, PhantomData<fn() -> K>);

impl<K: TaggedKind> Tagged<K> {
    pub fn new(ec2: Arc<Ec2Service>) -> Self {
        Tagged(ec2, PhantomData)
    }

    fn made(id: &str) -> Made {
        Made::new(id).with(K::ID_ATTRIBUTE, id)
    }
}

#[async_trait::async_trait]
impl<K: TaggedKind> Declared for Tagged<K> {
    const ATTRIBUTES: &'static [&'static str] = &[K::ID_ATTRIBUTE];
    const TYPE: &'static str = K::TYPE;
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = K::PROPERTIES;
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = K::UNSUPPORTED;
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;
    const LIMITATION: Option<&'static str> = K::LIMITATION;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let id = K::create(&self.0, ctx, props, create_tags(ctx, props)?)?;
        Ok(Self::made(&id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(K::TYPE, old, new, &["Tags"])?;
        retag(&self.0, ctx, id, new)?;
        Ok(Self::made(id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        K::delete(&self.0, &ctx.region, id)
    }
}
