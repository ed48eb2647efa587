//! A NoEcho parameter's value never reaches the store in clear: the rows that hold it (the
//! stack, its change sets, the resources and events built from it) are sealed under the
//! store's master key, and a restarted engine opens them again (UsePreviousValue, outputs).

mod support;

use cumulo_engine::*;
use cumulo_store::Store;
use serde_json::json;
use std::sync::Arc;
use support::*;

const PASSWORD: &str = "Tr0ub4dor&3-no-echo";

fn with_password() -> String {
    json!({
        "Parameters": {
            "Pw": {"Type": "String", "NoEcho": true},
            "Size": {"Type": "String"}
        },
        "Resources": {
            "Db": {"Type": FAKE, "Properties": {
                "Password": {"Fn::Sub": "pw=${Pw}"}, "Size": {"Ref": "Size"}}},
            "Plain": {"Type": FAKE, "Properties": {"Size": {"Ref": "Size"}}}
        },
        "Outputs": {"Shown": {"Value": {"Fn::Sub": "${Pw}!"}}}
    })
    .to_string()
}

fn param(key: &str, value: Option<&str>) -> Parameter {
    Parameter {
        key: key.into(),
        value: value.map(str::to_string),
        use_previous_value: value.is_none(),
    }
}

/// Every stored body of the engine's tables, by table.
fn stored(store: &Store) -> Vec<(String, String)> {
    store
        .read(|c| {
            let mut out = Vec::new();
            for table in [
                "cfn_stacks",
                "cfn_resources",
                "cfn_events",
                "cfn_change_sets",
            ] {
                let mut st = c.prepare(&format!("SELECT body FROM {table}"))?;
                for body in st.query_map([], |r| r.get::<_, String>(0))? {
                    out.push((table.to_string(), body?));
                }
            }
            Ok(out)
        })
        .unwrap()
}

fn assert_nothing_clear(store: &Store) {
    let rows = stored(store);
    let clear: Vec<_> = rows
        .iter()
        .filter(|(_, b)| b.contains("Tr0ub4dor"))
        .collect();
    assert!(clear.is_empty(), "stored in clear: {clear:?}");
}

#[tokio::test]
async fn no_echo_parameter_values_are_sealed_at_rest_and_open_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), Default::default()).unwrap());
    let h = Harness::with(store.clone(), config());
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "ne".into(),
                template_body: Some(with_password()),
                parameters: vec![param("Pw", Some(PASSWORD)), param("Size", Some("1"))],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.settle("ne").await, StackStatus::CREATE_COMPLETE);
    let db = h.physical("ne", "Db").await;
    assert_eq!(
        h.fake.props(&db).unwrap()["Password"],
        json!(format!("pw={PASSWORD}"))
    );
    let shown = h.stack("ne").await;
    let pw = shown.parameters.iter().find(|p| p.key == "Pw").unwrap();
    assert_eq!(pw.value, "****");
    assert_eq!(shown.outputs[0].value, format!("{PASSWORD}!"));
    // A pending change set records the parameters too.
    h.engine
        .create_change_set(
            &h.caller,
            CreateChangeSetInput {
                stack_name: "ne".into(),
                change_set_name: "pending".into(),
                use_previous_template: true,
                parameters: vec![param("Pw", None), param("Size", Some("3"))],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_nothing_clear(&store);
    // Only the rows that hold the value are sealed: the plain resource's are JSON.
    let rows = stored(&store);
    let plain_rows = |table: &str| {
        rows.iter()
            .filter(|(t, b)| t == table && b.starts_with('{'))
            .count()
    };
    assert_eq!(plain_rows("cfn_stacks"), 0);
    assert_eq!(plain_rows("cfn_change_sets"), 0);
    assert_eq!(plain_rows("cfn_resources"), 1, "{rows:?}");
    assert!(plain_rows("cfn_events") > 0);

    // A second engine over the same store is what a restarted process sees: it opens the
    // sealed rows, so the output and UsePreviousValue still have the clear value.
    let again = h.restarted("req-2");
    assert_eq!(
        again.stack("ne").await.outputs[0].value,
        format!("{PASSWORD}!")
    );
    again
        .engine
        .update_stack(
            &again.caller,
            UpdateStackInput {
                stack_name: "ne".into(),
                template_body: Some(with_password()),
                parameters: vec![param("Pw", None), param("Size", Some("2"))],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(again.settle("ne").await, StackStatus::UPDATE_COMPLETE);
    let db_now = again.fake.props(&db).unwrap();
    assert_eq!(db_now["Password"], json!(format!("pw={PASSWORD}")));
    assert_eq!(db_now["Size"], json!("2"));
    assert_nothing_clear(&store);
}
