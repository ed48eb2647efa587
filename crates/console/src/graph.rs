//! A stack's resource graph from its processed template: one node per resource, one edge per
//! resource it depends on (DependsOn, Ref, Fn::GetAtt, Fn::Sub, as the engine orders them:
//! `cumulo_template::graph::references`), with each node's layer in a layered drawing (a
//! resource sits one layer after the deepest one it depends on), which the page draws as SVG.

use cumulo_template::graph::{RefKind, references};
use cumulo_template::{NameMap, Template, parse_template};
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: String,
    pub resource_type: String,
    pub level: usize,
}

/// `from` depends on `to`, written as `kinds` (`DependsOn`, `Ref`, `GetAtt`, `Sub`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kinds: Vec<&'static str>,
}

fn kind_name(k: RefKind) -> &'static str {
    match k {
        RefKind::Ref => "Ref",
        RefKind::GetAtt => "GetAtt",
        RefKind::Sub => "Sub",
        RefKind::DependsOn => "DependsOn",
    }
}

/// The graph of a template text (JSON or YAML), or why it cannot be read.
pub fn of_template(text: &str) -> Result<(Vec<Node>, Vec<Edge>), String> {
    let first = |d: Vec<cumulo_template::Diagnostic>| {
        d.first()
            .map_or_else(|| "unreadable template".to_string(), |d| d.aws_message())
    };
    let doc = parse_template(text).map_err(first)?;
    let template = Template::from_value(doc.value).map_err(first)?;
    // No condition is known here: both branches of an Fn::If count, as either may be taken.
    let conditions = NameMap::default();
    let mut deps: BTreeMap<&str, BTreeMap<String, BTreeSet<&'static str>>> = BTreeMap::new();
    let mut refs = Vec::new();
    for (id, r) in &template.resources {
        refs.clear();
        references(&r.properties, "Properties", &conditions, &mut refs);
        let mine = deps.entry(id.as_str()).or_default();
        for d in &r.depends_on {
            mine.entry(d.clone()).or_default().insert("DependsOn");
        }
        for f in &refs {
            if f.target != *id && template.resources.contains_key(&f.target) {
                mine.entry(f.target.clone())
                    .or_default()
                    .insert(kind_name(f.kind));
            }
        }
    }
    let levels = levels(&deps);
    let nodes = template
        .resources
        .iter()
        .map(|(id, r)| Node {
            id: id.clone(),
            resource_type: r.resource_type.clone(),
            level: levels.get(id.as_str()).copied().unwrap_or(0),
        })
        .collect();
    let edges = deps
        .iter()
        .flat_map(|(from, to)| {
            to.iter()
                .filter(|(t, _)| template.resources.contains_key(*t))
                .map(|(t, kinds)| Edge {
                    from: from.to_string(),
                    to: t.clone(),
                    kinds: kinds.iter().copied().collect(),
                })
        })
        .collect();
    Ok((nodes, edges))
}

/// Longest-path layering; a cycle (which the engine refuses, but a stored template is read
/// here as it is) is cut where the walk meets it again.
fn levels<'a>(
    deps: &'a BTreeMap<&'a str, BTreeMap<String, BTreeSet<&'static str>>>,
) -> HashMap<&'a str, usize> {
    fn visit<'a>(
        id: &'a str,
        deps: &'a BTreeMap<&'a str, BTreeMap<String, BTreeSet<&'static str>>>,
        done: &mut HashMap<&'a str, usize>,
        on_path: &mut BTreeSet<&'a str>,
    ) -> usize {
        if let Some(l) = done.get(id) {
            return *l;
        }
        if !on_path.insert(id) {
            return 0;
        }
        let mut level = 0;
        if let Some(to) = deps.get(id) {
            for t in to.keys() {
                if let Some((key, _)) = deps.get_key_value(t.as_str()) {
                    level = level.max(visit(key, deps, done, on_path) + 1);
                }
            }
        }
        on_path.remove(id);
        done.insert(id, level);
        level
    }
    let mut done = HashMap::new();
    for id in deps.keys() {
        visit(id, deps, &mut done, &mut BTreeSet::new());
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = r#"
Parameters:
  Name: {Type: String}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties: {QueueName: !Ref Name}
  Bucket:
    Type: AWS::S3::Bucket
  Policy:
    Type: AWS::SQS::QueuePolicy
    DependsOn: Bucket
    Properties:
      Queues: [!Ref Queue]
      PolicyDocument:
        Statement:
          - Resource: !GetAtt Queue.Arn
            Condition: {ArnLike: {"aws:SourceArn": !Sub "${Bucket.Arn}"}}
  Topic:
    Type: AWS::SNS::Topic
    Properties:
      DisplayName: !Sub "${Policy}-${AWS::Region}"
"#;

    #[test]
    fn edges_come_from_every_kind_of_reference() {
        let (nodes, edges) = of_template(TEMPLATE).unwrap();
        let level = |id: &str| nodes.iter().find(|n| n.id == id).unwrap().level;
        assert_eq!(
            [
                level("Queue"),
                level("Bucket"),
                level("Policy"),
                level("Topic")
            ],
            [0, 0, 1, 2]
        );
        let find = |from: &str, to: &str| {
            edges
                .iter()
                .find(|e| e.from == from && e.to == to)
                .map(|e| e.kinds.clone())
        };
        assert_eq!(find("Policy", "Queue"), Some(vec!["GetAtt", "Ref"]));
        assert_eq!(find("Policy", "Bucket"), Some(vec!["DependsOn", "Sub"]));
        assert_eq!(find("Topic", "Policy"), Some(vec!["Sub"]));
        // Parameters and pseudo parameters are not resources: no edge.
        assert_eq!(edges.len(), 3);
        assert_eq!(nodes[0].resource_type, "AWS::SQS::Queue");
    }

    #[test]
    fn an_unreadable_template_says_why() {
        assert!(of_template("Resources: [").is_err());
    }

    #[test]
    fn a_cycle_does_not_loop() {
        let t = r#"{"Resources": {
            "A": {"Type": "AWS::SNS::Topic", "DependsOn": "B"},
            "B": {"Type": "AWS::SNS::Topic", "DependsOn": "A"}}}"#;
        let (nodes, edges) = of_template(t).unwrap();
        assert_eq!((nodes.len(), edges.len()), (2, 2));
    }
}
