"""DynamoDB through boto3 (and the AWS CLI): tables, items, expressions, Query/Scan, batches,
transactions, TTL, tags, exact errors, persistence across restart and kill -9."""
import re
import time
import uuid
from decimal import Decimal

import boto3
import pytest
from botocore.exceptions import ClientError


def uniq(prefix="t"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def ddb(cumulo):
    return cumulo.client("dynamodb")


def make_table(ddb, name=None, range_key=True, **extra):
    name = name or uniq()
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        attrs.append({"AttributeName": "sk", "AttributeType": "N"})
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
    attrs += extra.pop("ExtraAttributes", [])
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=attrs,
        KeySchema=keys,
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )
    return name


def err(excinfo):
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


# ---------------------------------------------------------------- tables


def test_create_describe_list_delete_table(ddb):
    name = uniq()
    resp = ddb.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "N"},
            {"AttributeName": "l", "AttributeType": "B"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 3},
        GlobalSecondaryIndexes=[{
            "IndexName": "byG",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        }],
        LocalSecondaryIndexes=[{
            "IndexName": "byL",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]},
        }],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        SSESpecification={"Enabled": True},
        Tags=[{"Key": "team", "Value": "a"}],
        TableClass="STANDARD_INFREQUENT_ACCESS",
        DeletionProtectionEnabled=True,
    )
    desc = resp["TableDescription"]
    assert desc["TableStatus"] == "CREATING"
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["TableStatus"] == "ACTIVE"
    assert t["TableArn"] == f"arn:aws:dynamodb:us-east-1:000000000000:table/{name}"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert t["ItemCount"] == 0 and t["TableSizeBytes"] == 0
    assert t["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    assert t["GlobalSecondaryIndexes"][0]["IndexArn"].endswith(f"table/{name}/index/byG")
    assert t["LocalSecondaryIndexes"][0]["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]}
    assert t["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert t["LatestStreamArn"] == f"{t['TableArn']}/stream/{t['LatestStreamLabel']}"
    assert t["SSEDescription"]["Status"] == "ENABLED"
    assert t["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert t["DeletionProtectionEnabled"] is True
    assert name in ddb.list_tables()["TableNames"]

    with pytest.raises(ClientError) as e:
        ddb.delete_table(TableName=name)
    assert err(e) == ("ValidationException", "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
    ddb.update_table(TableName=name, DeletionProtectionEnabled=False)
    assert ddb.delete_table(TableName=name)["TableDescription"]["TableStatus"] == "DELETING"
    ddb.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    with pytest.raises(ClientError) as e:
        ddb.describe_table(TableName=name)
    assert err(e) == ("ResourceNotFoundException", f"Requested resource not found: Table: {name} not found")


def test_create_table_validation_messages(ddb):
    name = uniq()
    cases = [
        (dict(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
              KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]),
         "One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [pk, sk], AttributeDefinitions: [pk]"),
        (dict(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "x", "AttributeType": "S"}],
              KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}]),
         "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"),
        (dict(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
              KeySchema=[{"AttributeName": "pk", "KeyType": "RANGE"}]),
         "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ClientError) as e:
            ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", **kwargs)
        assert err(e) == ("ValidationException", message)
    with pytest.raises(ClientError) as e:
        ddb.create_table(TableName=name, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    assert err(e) == ("ValidationException", "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
    with pytest.raises(ClientError) as e:
        ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    assert "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified" in err(e)[1]
    with pytest.raises(ClientError) as e:
        ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "X"}],
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    assert err(e)[0] == "ValidationException"
    assert name not in ddb.list_tables()["TableNames"], "a refused create leaves nothing behind"
    existing = make_table(ddb)
    with pytest.raises(ClientError) as e:
        make_table(ddb, name=existing)
    assert err(e) == ("ResourceInUseException", f"Table already exists: {existing}")


def test_list_tables_paginates(ddb, cumulo):
    client = cumulo.client("dynamodb", region="eu-west-3")
    names = sorted(make_table(client, name=f"page-{i:02d}-{uuid.uuid4().hex[:4]}") for i in range(7))
    first = client.list_tables(Limit=3)
    assert first["TableNames"] == names[:3]
    assert first["LastEvaluatedTableName"] == names[2]
    second = client.list_tables(Limit=3, ExclusiveStartTableName=names[2])
    assert second["TableNames"] == names[3:6]
    third = client.list_tables(Limit=3, ExclusiveStartTableName=names[5])
    assert third["TableNames"] == names[6:] and "LastEvaluatedTableName" not in third
    paged = [n for p in client.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 2}) for n in p["TableNames"]]
    assert paged == names
    # Regional: us-east-1 does not see them.
    assert not set(names) & set(ddb.list_tables()["TableNames"])


def test_update_table_billing_throughput_gsis_stream(ddb):
    name = uniq()
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
    )
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "email": {"S": "a@x"}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "b"}})
    with pytest.raises(ClientError) as e:
        ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    assert err(e)[1].startswith("The provisioned throughput for the table will not change.")
    t = ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 7, "WriteCapacityUnits": 2})["TableDescription"]
    assert t["TableStatus"] == "UPDATING"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 7
    assert "LastIncreaseDateTime" in t["ProvisionedThroughput"]

    ddb.update_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "email", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "byEmail",
            "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }}],
    )
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert t["GlobalSecondaryIndexes"][0]["ItemCount"] == 1, "the new index is backfilled"
    got = ddb.query(TableName=name, IndexName="byEmail", KeyConditionExpression="email = :e",
                    ExpressionAttributeValues={":e": {"S": "a@x"}})
    assert [i["pk"]["S"] for i in got["Items"]] == ["a"]

    t = ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})["TableDescription"]
    assert t["LatestStreamArn"].startswith(f"{t['TableArn']}/stream/")
    with pytest.raises(ClientError) as e:
        ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    assert err(e)[0] == "ValidationException"
    ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    assert "StreamSpecification" not in ddb.describe_table(TableName=name)["Table"]

    ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "byEmail"}}])
    t = ddb.describe_table(TableName=name)["Table"]
    assert "GlobalSecondaryIndexes" not in t
    assert t["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
    with pytest.raises(ClientError) as e:
        ddb.query(TableName=name, IndexName="byEmail", KeyConditionExpression="email = :e",
                  ExpressionAttributeValues={":e": {"S": "a@x"}})
    assert err(e) == ("ValidationException", "The table does not have the specified index: byEmail")


def test_ttl_tags_and_limits(ddb):
    name = make_table(ddb, range_key=False)
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    past, future = int(time.time()) - 60, int(time.time()) + 3600
    ddb.put_item(TableName=name, Item={"pk": {"S": "old"}, "exp": {"N": str(past)}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "new"}, "exp": {"N": str(future)}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "ancient"}, "exp": {"N": "1000"}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "none"}})
    spec = ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    assert spec["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "exp"}
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    with pytest.raises(ClientError) as e:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    assert err(e) == ("ValidationException", "TimeToLive is already enabled")
    keys = sorted(i["pk"]["S"] for i in ddb.scan(TableName=name)["Items"])
    assert keys == ["ancient", "new", "none"], "expired items are removed; over five years old are not"

    arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}])
    ddb.untag_resource(ResourceArn=arn, TagKeys=["a"])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "b", "Value": "2"}]
    with pytest.raises(ClientError) as e:
        ddb.list_tags_of_resource(ResourceArn=arn + "nope")
    assert err(e)[0] == "ResourceNotFoundException"
    limits = ddb.describe_limits()
    assert limits["TableMaxReadCapacityUnits"] == 40000
    assert ddb.describe_endpoints()["Endpoints"][0]["CachePeriodInMinutes"] == 1440


# ---------------------------------------------------------------- items


def test_put_get_delete_with_return_values(ddb):
    name = make_table(ddb)
    item = {"pk": {"S": "u1"}, "sk": {"N": "1"}, "name": {"S": "Ann"}, "tags": {"SS": ["x", "y"]},
            "nested": {"M": {"lst": {"L": [{"N": "1.50"}, {"BOOL": True}, {"NULL": True}]}}},
            "blob": {"B": b"\x00\xff"}, "nums": {"NS": ["1", "2.0"]}, "empty": {"S": ""}}
    assert "Attributes" not in ddb.put_item(TableName=name, Item=item)
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "u1"}, "sk": {"N": "1"}}, ConsistentRead=True)["Item"]
    assert got["nested"]["M"]["lst"]["L"][0] == {"N": "1.5"}, "numbers come back normalized"
    assert got["blob"] == {"B": b"\x00\xff"}
    assert sorted(got["nums"]["NS"]) == ["1", "2"]
    proj = ddb.get_item(TableName=name, Key={"pk": {"S": "u1"}, "sk": {"N": "1"}},
                        ProjectionExpression="#n, nested.lst[1]", ExpressionAttributeNames={"#n": "name"})["Item"]
    assert proj == {"name": {"S": "Ann"}, "nested": {"M": {"lst": {"L": [{"BOOL": True}]}}}}
    old = ddb.put_item(TableName=name, Item={"pk": {"S": "u1"}, "sk": {"N": "1"}}, ReturnValues="ALL_OLD")["Attributes"]
    assert old["name"] == {"S": "Ann"}
    assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "nobody"}, "sk": {"N": "1"}})
    deleted = ddb.delete_item(TableName=name, Key={"pk": {"S": "u1"}, "sk": {"N": "1"}}, ReturnValues="ALL_OLD")
    assert deleted["Attributes"] == {"pk": {"S": "u1"}, "sk": {"N": "1"}}
    assert "Attributes" not in ddb.delete_item(TableName=name, Key={"pk": {"S": "u1"}, "sk": {"N": "1"}}, ReturnValues="ALL_OLD")


def test_key_and_value_validation_messages(ddb):
    name = make_table(ddb)
    cases = [
        ({"pk": {"S": "a"}}, "One or more parameter values were invalid: Missing the key sk in the item"),
        ({"pk": {"N": "1"}, "sk": {"N": "1"}}, "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"),
        ({"pk": {"S": ""}, "sk": {"N": "1"}}, "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"),
        ({"pk": {"S": "a"}, "sk": {"N": "1"}, "s": {"SS": []}}, "One or more parameter values were invalid: An string set  may not be empty"),
        ({"pk": {"S": "a"}, "sk": {"N": "1"}, "s": {"SS": ["a", "a"]}}, "One or more parameter values were invalid: Input collection [a, a] contains duplicates."),
        ({"pk": {"S": "a"}, "sk": {"N": "1"}, "n": {"N": "1e126"}}, "Number overflow. Attempting to store a number with magnitude larger than supported range"),
        ({"pk": {"S": "a"}, "sk": {"N": "1"}, "n": {"N": "1.234567890123456789012345678901234567890"}}, "Attempting to store more than 38 significant digits in a Number"),
        ({"pk": {"S": "a"}, "sk": {"N": "abc"}}, "A value provided cannot be converted into a number"),
        ({"pk": {"S": "a"}, "sk": {"N": "1"}, "big": {"S": "x" * (400 * 1024)}}, "Item size has exceeded the maximum allowed size"),
    ]
    for item, message in cases:
        with pytest.raises(ClientError) as e:
            ddb.put_item(TableName=name, Item=item)
        assert err(e) == ("ValidationException", message), item
    with pytest.raises(ClientError) as e:
        ddb.get_item(TableName=name, Key={"pk": {"S": "a"}})
    assert err(e) == ("ValidationException", "The provided key element does not match the schema")
    with pytest.raises(ClientError) as e:
        ddb.get_item(TableName="no-such-table", Key={"pk": {"S": "a"}})
    assert err(e) == ("ResourceNotFoundException", "Requested resource not found")
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"N": "1"}}, Expected={"x": {"Exists": False}})
    assert err(e)[0] == "ValidationException"
    assert ddb.scan(TableName=name)["Count"] == 0, "refused writes change nothing"


def test_numbers_keep_38_digits_and_sort_numerically(ddb):
    name = make_table(ddb)
    values = ["-1E+125", "-10", "-2.5", "0", "0.000001", "1", "2", "10", "12345678901234567890123456789012345678", "9.9999999999999999999999999999999999999E+125"]
    for v in reversed(values):
        ddb.put_item(TableName=name, Item={"pk": {"S": "n"}, "sk": {"N": v}})
    got = [i["sk"]["N"] for i in ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                                            ExpressionAttributeValues={":p": {"S": "n"}})["Items"]]
    assert [Decimal(g) for g in got] == [Decimal(v) for v in values]
    assert got[-2] == "12345678901234567890123456789012345678"
    # Exact arithmetic at full precision.
    ddb.put_item(TableName=name, Item={"pk": {"S": "c"}, "sk": {"N": "0"}, "v": {"N": "0.1"}})
    r = ddb.update_item(TableName=name, Key={"pk": {"S": "c"}, "sk": {"N": "0"}}, UpdateExpression="SET v = v + :x",
                        ExpressionAttributeValues={":x": {"N": "0.2"}}, ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {"v": {"N": "0.3"}}


def test_binary_keys_sort_unsigned(ddb):
    name = uniq()
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "B"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}])
    for b in [b"\xff", b"\x00", b"\x7f", b"\x80\x01", b"\x80"]:
        ddb.put_item(TableName=name, Item={"pk": {"S": "p"}, "sk": {"B": b}})
    got = [i["sk"]["B"] for i in ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                                            ExpressionAttributeValues={":p": {"S": "p"}})["Items"]]
    assert got == [b"\x00", b"\x7f", b"\x80", b"\x80\x01", b"\xff"]


def test_condition_expressions(ddb):
    name = make_table(ddb)
    key = {"pk": {"S": "c"}, "sk": {"N": "1"}}
    full = {**key, "n": {"N": "5"}, "s": {"S": "hello"}, "tags": {"SS": ["a"]},
            "m": {"M": {"l": {"L": [{"M": {"c": {"S": "deep"}}}]}}}}
    ddb.put_item(TableName=name, Item=full)
    vals = {":five": {"N": "5"}, ":he": {"S": "he"}, ":a": {"S": "a"}, ":deep": {"S": "deep"}, ":lo": {"N": "1"},
            ":hi": {"N": "9"}, ":t": {"S": "SS"}}
    passing = [
        "n = :five", "n <> :hi", "n BETWEEN :lo AND :hi", "n IN (:lo, :five)", "begins_with(s, :he)",
        "contains(tags, :a)", "m.l[0].c = :deep", "size(s) = :five", "attribute_type(tags, :t)",
        "attribute_exists(m.l[0].c) AND NOT attribute_exists(zz)", "(n < :lo OR n >= :five) AND s > :he",
        "absent <> :five",
    ]
    for cond in passing:
        used = {k: v for k, v in vals.items() if re.search(re.escape(k) + r"\b", cond)}
        kwargs = {"ExpressionAttributeValues": used} if used else {}
        ddb.put_item(TableName=name, Item=full, ConditionExpression=cond, **kwargs)
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName=name, Item=key, ConditionExpression="attribute_not_exists(pk)",
                     ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert err(e) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert e.value.response["Item"]["s"] == {"S": "hello"}
    assert ddb.get_item(TableName=name, Key=key)["Item"]["n"] == {"N": "5"}, "a failed condition changes nothing"
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.delete_item(TableName=name, Key=key, ConditionExpression="n > :hi", ExpressionAttributeValues={":hi": {"N": "9"}})
    # Expression errors, as DynamoDB words them.
    bad = [
        (dict(ConditionExpression="n = :nope"), "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :nope"),
        (dict(ConditionExpression="#x = :a", ExpressionAttributeValues={":a": {"S": "a"}}), "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #x"),
        (dict(ConditionExpression="n = :a", ExpressionAttributeValues={":a": {"S": "a"}, ":b": {"S": "b"}}), "Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}"),
        (dict(ConditionExpression="n = ", ), "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"=\""),
        (dict(ConditionExpression="begins_with(s, :n)", ExpressionAttributeValues={":n": {"N": "1"}}), "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"),
        (dict(ExpressionAttributeNames={"#a": "a"}), "ExpressionAttributeNames can only be specified when using expressions"),
        (dict(ConditionExpression="attribute_exists(Status)"), "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: Status"),
    ]
    for kwargs, message in bad:
        with pytest.raises(ClientError) as e:
            ddb.put_item(TableName=name, Item=key, **kwargs)
        assert err(e) == ("ValidationException", message), kwargs


def test_update_expressions(ddb):
    name = make_table(ddb)
    key = {"pk": {"S": "u"}, "sk": {"N": "1"}}
    r = ddb.update_item(
        TableName=name, Key=key,
        UpdateExpression="SET #c = if_not_exists(#c, :zero) + :one, l = :l, m = :m ADD tags :t, tot :ten",
        ExpressionAttributeNames={"#c": "count"},
        ExpressionAttributeValues={":zero": {"N": "0"}, ":one": {"N": "1"}, ":l": {"L": [{"S": "a"}]},
                                   ":m": {"M": {"child": {"M": {}}}}, ":t": {"SS": ["x", "y"]}, ":ten": {"N": "10"}},
        ReturnValues="ALL_NEW",
    )["Attributes"]
    assert r["count"] == {"N": "1"} and r["tot"] == {"N": "10"} and r["pk"] == {"S": "u"}
    r = ddb.update_item(
        TableName=name, Key=key,
        UpdateExpression="SET l = list_append(l, :more), m.child.deep = :v, #c = #c - :one REMOVE tot DELETE tags :x",
        ExpressionAttributeNames={"#c": "count"},
        ExpressionAttributeValues={":more": {"L": [{"S": "b"}, {"S": "c"}]}, ":v": {"S": "v"}, ":one": {"N": "1"}, ":x": {"SS": ["x"]}},
        ReturnValues="UPDATED_NEW",
    )["Attributes"]
    assert r == {"l": {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}]}, "m": {"M": {"child": {"M": {"deep": {"S": "v"}}}}},
                 "count": {"N": "0"}, "tags": {"SS": ["y"]}}
    old = ddb.update_item(TableName=name, Key=key, UpdateExpression="REMOVE l[0], l[2]", ReturnValues="UPDATED_OLD")["Attributes"]
    assert old == {"l": {"L": [{"S": "a"}, {"S": "c"}]}}
    item = ddb.get_item(TableName=name, Key=key)["Item"]
    assert item["l"] == {"L": [{"S": "b"}]} and "tot" not in item
    errors = [
        ("SET pk = :v", {":v": {"S": "x"}}, "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"),
        ("SET nope.deeper = :v", {":v": {"S": "x"}}, "The document path provided in the update expression is invalid for update"),
        ("SET l = l + :v", {":v": {"N": "1"}}, "An operand in the update expression has an incorrect data type"),
        ("SET x = absent", None, "The provided expression refers to an attribute that does not exist in the item"),
        ("ADD s :v", {":v": {"S": "x"}}, "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING"),
        ("SET a = :v, a = :v", {":v": {"S": "x"}}, "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"),
        ("SET a = :v SET b = :v", {":v": {"S": "x"}}, "Invalid UpdateExpression: The \"SET\" section can only be used once in an update expression;"),
    ]
    for expr, values, message in errors:
        kwargs = {"ExpressionAttributeValues": values} if values else {}
        with pytest.raises(ClientError) as e:
            ddb.update_item(TableName=name, Key=key, UpdateExpression=expr, **kwargs)
        assert err(e) == ("ValidationException", message), expr
    # An update with a failed condition reports the old item when asked.
    with pytest.raises(ClientError) as e:
        ddb.update_item(TableName=name, Key=key, UpdateExpression="SET a = :v", ConditionExpression="attribute_not_exists(pk)",
                        ExpressionAttributeValues={":v": {"S": "x"}}, ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert e.value.response["Item"]["count"] == {"N": "0"}
    # Upsert: updating a missing item creates it.
    ddb.update_item(TableName=name, Key={"pk": {"S": "new"}, "sk": {"N": "2"}}, UpdateExpression="SET a = :v",
                    ExpressionAttributeValues={":v": {"S": "x"}})
    assert ddb.get_item(TableName=name, Key={"pk": {"S": "new"}, "sk": {"N": "2"}})["Item"]["a"] == {"S": "x"}


# ---------------------------------------------------------------- query / scan


def seed(ddb, name, n=10):
    with_gsi = []
    for i in range(n):
        item = {"pk": {"S": "p"}, "sk": {"N": str(i)}, "kind": {"S": "even" if i % 2 == 0 else "odd"},
                "title": {"S": f"item-{i:02d}"}}
        ddb.put_item(TableName=name, Item=item)
        with_gsi.append(item)
    ddb.put_item(TableName=name, Item={"pk": {"S": "other"}, "sk": {"N": "0"}, "kind": {"S": "odd"}})
    return with_gsi


def test_query_key_conditions_order_limit_and_pages(ddb):
    name = make_table(ddb)
    seed(ddb, name)
    q = lambda **kw: ddb.query(TableName=name, **kw)
    v = {":p": {"S": "p"}}
    got = q(KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b", ExpressionAttributeValues={**v, ":a": {"N": "3"}, ":b": {"N": "5"}})
    assert [i["sk"]["N"] for i in got["Items"]] == ["3", "4", "5"]
    got = q(KeyConditionExpression="pk = :p AND sk > :a", ExpressionAttributeValues={**v, ":a": {"N": "7"}}, ScanIndexForward=False)
    assert [i["sk"]["N"] for i in got["Items"]] == ["9", "8"]
    got = q(KeyConditionExpression="pk = :p", FilterExpression="kind = :k", ExpressionAttributeValues={**v, ":k": {"S": "odd"}},
            ProjectionExpression="sk")
    assert got["Count"] == 5 and got["ScannedCount"] == 10
    assert got["Items"][0] == {"sk": {"N": "1"}}
    got = q(KeyConditionExpression="pk = :p", ExpressionAttributeValues=v, Select="COUNT")
    assert got["Count"] == 10 and "Items" not in got
    # Pages of 4: the key of the last evaluated item continues the query.
    seen, start, pages = [], None, 0
    while True:
        kw = {"ExclusiveStartKey": start} if start else {}
        page = q(KeyConditionExpression="pk = :p", ExpressionAttributeValues=v, Limit=4, **kw)
        seen += [i["sk"]["N"] for i in page["Items"]]
        pages += 1
        start = page.get("LastEvaluatedKey")
        if not start:
            break
        assert start == {"pk": {"S": "p"}, "sk": page["Items"][-1]["sk"]}
    assert seen == [str(i) for i in range(10)] and pages == 3
    paginated = [i["sk"]["N"] for p in ddb.get_paginator("query").paginate(
        TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues=v, ScanIndexForward=False,
        PaginationConfig={"PageSize": 3}) for i in p["Items"]]
    assert paginated == [str(i) for i in reversed(range(10))]
    errors = [
        ("sk = :a", {":a": {"N": "1"}}, "Query condition missed key schema element: pk"),
        ("pk = :p AND kind = :a", {**v, ":a": {"S": "x"}}, "Query condition missed key schema element: sk"),
        ("pk > :p", v, "Query key condition not supported"),
        ("pk = :p OR sk = :a", {**v, ":a": {"N": "1"}}, "Invalid KeyConditionExpression: Invalid operator used in KeyConditionExpression: OR"),
        ("pk = :a", {":a": {"N": "1"}}, "One or more parameter values were invalid: Condition parameter type does not match schema type"),
        ("pk = :p AND begins_with(sk, :a)", {**v, ":a": {"N": "1"}}, "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"),
    ]
    for expr, values, message in errors:
        with pytest.raises(ClientError) as e:
            q(KeyConditionExpression=expr, ExpressionAttributeValues=values)
        assert err(e) == ("ValidationException", message), expr


def test_query_begins_with_on_string_sort_key(ddb):
    name = uniq()
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}])
    for sk in ["order#1", "order#2", "profile", "order#10", "Order#3"]:
        ddb.put_item(TableName=name, Item={"pk": {"S": "u"}, "sk": {"S": sk}})
    got = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND begins_with(sk, :o)",
                    ExpressionAttributeValues={":p": {"S": "u"}, ":o": {"S": "order#"}})
    assert [i["sk"]["S"] for i in got["Items"]] == ["order#1", "order#10", "order#2"]


def test_query_gsi_and_lsi(ddb):
    name = uniq()
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in
                              [("pk", "S"), ("sk", "N"), ("kind", "S"), ("title", "S")]],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "byKind", "KeySchema": [{"AttributeName": "kind", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[{"IndexName": "byTitle", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "title", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}],
    )
    seed(ddb, name)
    ddb.put_item(TableName=name, Item={"pk": {"S": "p"}, "sk": {"N": "100"}})  # sparse: in no index
    got = ddb.query(TableName=name, IndexName="byKind", KeyConditionExpression="kind = :k AND sk < :s",
                    ExpressionAttributeValues={":k": {"S": "odd"}, ":s": {"N": "6"}})
    assert got["Items"] == [{"pk": {"S": "other"}, "sk": {"N": "0"}, "kind": {"S": "odd"}}] + [
        {"pk": {"S": "p"}, "sk": {"N": str(i)}, "kind": {"S": "odd"}} for i in (1, 3, 5)], "KEYS_ONLY projection"
    page = ddb.query(TableName=name, IndexName="byKind", KeyConditionExpression="kind = :k",
                     ExpressionAttributeValues={":k": {"S": "even"}}, Limit=2)
    assert set(page["LastEvaluatedKey"]) == {"pk", "sk", "kind"}
    rest = ddb.query(TableName=name, IndexName="byKind", KeyConditionExpression="kind = :k",
                     ExpressionAttributeValues={":k": {"S": "even"}}, ExclusiveStartKey=page["LastEvaluatedKey"])
    assert [i["sk"]["N"] for i in page["Items"] + rest["Items"]] == ["0", "2", "4", "6", "8"]
    with pytest.raises(ClientError) as e:
        ddb.query(TableName=name, IndexName="byKind", KeyConditionExpression="kind = :k", ConsistentRead=True,
                  ExpressionAttributeValues={":k": {"S": "even"}})
    assert err(e) == ("ValidationException", "Consistent reads are not supported on global secondary indexes")
    got = ddb.query(TableName=name, IndexName="byTitle", KeyConditionExpression="pk = :p AND title >= :t",
                    ExpressionAttributeValues={":p": {"S": "p"}, ":t": {"S": "item-07"}}, ScanIndexForward=False)
    assert [i["title"]["S"] for i in got["Items"]] == ["item-09", "item-08", "item-07"]
    assert got["Items"][0]["kind"] == {"S": "odd"}
    scanned = ddb.scan(TableName=name, IndexName="byKind")
    assert scanned["Count"] == 11


def test_scan_filter_pages_and_segments(ddb):
    name = make_table(ddb)
    for p in range(6):
        for s in range(5):
            ddb.put_item(TableName=name, Item={"pk": {"S": f"p{p}"}, "sk": {"N": str(s)}, "v": {"N": str(p * 10 + s)}})
    got = ddb.scan(TableName=name, FilterExpression="v >= :x", ExpressionAttributeValues={":x": {"N": "40"}})
    assert got["Count"] == 10 and got["ScannedCount"] == 30
    all_items = [i for p in ddb.get_paginator("scan").paginate(TableName=name, PaginationConfig={"PageSize": 7}) for i in p["Items"]]
    assert len(all_items) == 30 and len({(i["pk"]["S"], i["sk"]["N"]) for i in all_items}) == 30
    segments = [ddb.scan(TableName=name, Segment=s, TotalSegments=3)["Items"] for s in range(3)]
    keys = [(i["pk"]["S"], i["sk"]["N"]) for seg in segments for i in seg]
    assert len(keys) == 30 and len(set(keys)) == 30, "segments partition the table"
    with pytest.raises(ClientError) as e:
        ddb.scan(TableName=name, Segment=3, TotalSegments=3)
    assert err(e) == ("ValidationException", "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: 3 is not less than TotalSegments: 3")
    with pytest.raises(ClientError) as e:
        ddb.scan(TableName=name, ScanFilter={"v": {"ComparisonOperator": "NOT_NULL"}})
    assert err(e)[0] == "ValidationException"


# ---------------------------------------------------------------- batches and transactions


def test_batch_write_and_get(ddb):
    a, b = make_table(ddb, range_key=False), make_table(ddb, range_key=False)
    resp = ddb.batch_write_item(RequestItems={
        a: [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "v": {"N": str(i)}}}} for i in range(20)],
        b: [{"PutRequest": {"Item": {"pk": {"S": "only"}}}}],
    })
    assert resp["UnprocessedItems"] == {}
    ddb.batch_write_item(RequestItems={a: [{"DeleteRequest": {"Key": {"pk": {"S": "k0"}}}}]})
    got = ddb.batch_get_item(RequestItems={
        a: {"Keys": [{"pk": {"S": "k0"}}, {"pk": {"S": "k1"}}, {"pk": {"S": "k2"}}], "ProjectionExpression": "v"},
        b: {"Keys": [{"pk": {"S": "only"}}]},
    })
    assert sorted(i["v"]["N"] for i in got["Responses"][a]) == ["1", "2"]
    assert got["Responses"][b] == [{"pk": {"S": "only"}}]
    assert got["UnprocessedKeys"] == {}
    with pytest.raises(ClientError) as e:
        ddb.batch_write_item(RequestItems={a: [{"PutRequest": {"Item": {"pk": {"S": "x"}}}}] * 2})
    assert err(e) == ("ValidationException", "Provided list of item keys contains duplicates")
    with pytest.raises(ClientError) as e:
        ddb.batch_write_item(RequestItems={a: [{"PutRequest": {"Item": {"pk": {"S": f"y{i}"}}}} for i in range(26)]})
    assert err(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ddb.batch_write_item(RequestItems={a: [{"PutRequest": {"Item": {"pk": {"S": "ok"}}}}, {"PutRequest": {"Item": {"pk": {"N": "1"}}}}]})
    assert err(e)[0] == "ValidationException"
    assert "Item" not in ddb.get_item(TableName=a, Key={"pk": {"S": "ok"}}), "a refused batch writes nothing"


def test_transactions_all_or_nothing(ddb):
    a, b = make_table(ddb, range_key=False), make_table(ddb, range_key=False)
    ddb.put_item(TableName=a, Item={"pk": {"S": "acct"}, "balance": {"N": "100"}})
    ddb.put_item(TableName=a, Item={"pk": {"S": "open"}})
    ddb.transact_write_items(TransactItems=[
        {"Update": {"TableName": a, "Key": {"pk": {"S": "acct"}}, "UpdateExpression": "SET balance = balance - :x",
                    "ConditionExpression": "balance >= :x", "ExpressionAttributeValues": {":x": {"N": "30"}}}},
        {"Put": {"TableName": b, "Item": {"pk": {"S": "t1"}, "amount": {"N": "30"}}, "ConditionExpression": "attribute_not_exists(pk)"}},
        {"ConditionCheck": {"TableName": a, "Key": {"pk": {"S": "open"}}, "ConditionExpression": "attribute_exists(pk)"}},
    ])
    assert ddb.get_item(TableName=a, Key={"pk": {"S": "acct"}})["Item"]["balance"] == {"N": "70"}
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Update": {"TableName": a, "Key": {"pk": {"S": "acct"}}, "UpdateExpression": "SET balance = balance - :x",
                        "ConditionExpression": "balance >= :x", "ExpressionAttributeValues": {":x": {"N": "30"}}}},
            {"Put": {"TableName": b, "Item": {"pk": {"S": "t1"}}, "ConditionExpression": "attribute_not_exists(pk)",
                     "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
            {"Delete": {"TableName": b, "Key": {"pk": {"S": "other"}}}},
        ])
    code, message = err(e)
    assert code == "TransactionCanceledException"
    assert message == "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, None]"
    reasons = e.value.response["CancellationReasons"]
    assert reasons[0] == {"Code": "None"}
    assert reasons[1]["Code"] == "ConditionalCheckFailed" and reasons[1]["Item"]["amount"] == {"N": "30"}
    assert ddb.get_item(TableName=a, Key={"pk": {"S": "acct"}})["Item"]["balance"] == {"N": "70"}, "nothing applied"
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": b, "Item": {"pk": {"S": "dup"}}}},
            {"Delete": {"TableName": b, "Key": {"pk": {"S": "dup"}}}},
        ])
    assert err(e) == ("ValidationException", "Transaction request cannot include multiple operations on one item")
    # Idempotency: the same ClientRequestToken and request apply once; another request is refused.
    bump = [{"Update": {"TableName": a, "Key": {"pk": {"S": "acct"}}, "UpdateExpression": "SET balance = balance + :x",
                        "ExpressionAttributeValues": {":x": {"N": "5"}}}}]
    token = uuid.uuid4().hex
    ddb.transact_write_items(TransactItems=bump, ClientRequestToken=token)
    ddb.transact_write_items(TransactItems=bump, ClientRequestToken=token)
    assert ddb.get_item(TableName=a, Key={"pk": {"S": "acct"}})["Item"]["balance"] == {"N": "75"}
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=bump + [{"Put": {"TableName": b, "Item": {"pk": {"S": "z"}}}}], ClientRequestToken=token)
    assert err(e)[0] == "IdempotentParameterMismatchException"
    ddb.transact_write_items(TransactItems=bump)
    assert ddb.get_item(TableName=a, Key={"pk": {"S": "acct"}})["Item"]["balance"] == {"N": "80"}
    got = ddb.transact_get_items(TransactItems=[
        {"Get": {"TableName": a, "Key": {"pk": {"S": "acct"}}, "ProjectionExpression": "balance"}},
        {"Get": {"TableName": b, "Key": {"pk": {"S": "missing"}}}},
    ])["Responses"]
    assert got == [{"Item": {"balance": {"N": "80"}}}, {}]


def test_resource_layer_round_trip(cumulo):
    """The high-level boto3 resource API (Decimal numbers, sets, Key conditions)."""
    from boto3.dynamodb.conditions import Attr, Key
    res = boto3.resource("dynamodb", endpoint_url=cumulo.endpoint, region_name="us-east-1",
                         aws_access_key_id="test", aws_secret_access_key="test")
    name = uniq()
    table = res.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                             AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}],
                             KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}])
    table.wait_until_exists()
    with table.batch_writer() as w:
        for i in range(30):
            w.put_item(Item={"pk": "r", "sk": i, "price": Decimal("9.99") * i, "tags": {"a", "b"}})
    got = table.query(KeyConditionExpression=Key("pk").eq("r") & Key("sk").between(5, 7),
                      FilterExpression=Attr("price").gt(Decimal("55")))["Items"]
    assert [i["sk"] for i in got] == [6, 7]
    assert got[0]["price"] == Decimal("59.94") and got[0]["tags"] == {"a", "b"}


def test_aws_cli_round_trip(cumulo):
    name = uniq()
    cumulo.aws("dynamodb", "create-table", "--table-name", name, "--billing-mode", "PAY_PER_REQUEST",
               "--attribute-definitions", "AttributeName=id,AttributeType=S", "--key-schema", "AttributeName=id,KeyType=HASH")
    cumulo.aws("dynamodb", "wait", "table-exists", "--table-name", name)
    cumulo.aws("dynamodb", "put-item", "--table-name", name, "--item", '{"id": {"S": "1"}, "n": {"N": "2"}}')
    got = cumulo.aws("dynamodb", "get-item", "--table-name", name, "--key", '{"id": {"S": "1"}}')
    assert got["Item"] == {"id": {"S": "1"}, "n": {"N": "2"}}
    assert name in cumulo.aws("dynamodb", "list-tables")["TableNames"]


# ---------------------------------------------------------------- durability


def test_state_survives_restart_and_kill_9(fresh_server):
    server = fresh_server.start()
    ddb = server.client("dynamodb")
    name = uniq()
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     GlobalSecondaryIndexes=[{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "ALL"}}])
    for i in range(5):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"k{i}"}, "g": {"S": "grp"}, "n": {"N": f"{i}.5"}})
    ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    server.stop()
    server.start()
    ddb = server.client("dynamodb")
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]["TimeToLiveStatus"] == "ENABLED"
    assert ddb.scan(TableName=name)["Count"] == 5
    ddb.delete_item(TableName=name, Key={"pk": {"S": "k0"}})
    ddb.update_item(TableName=name, Key={"pk": {"S": "k1"}}, UpdateExpression="SET n = n + :one",
                    ExpressionAttributeValues={":one": {"N": "1"}})
    ddb.transact_write_items(TransactItems=[{"Put": {"TableName": name, "Item": {"pk": {"S": "tx"}, "g": {"S": "grp"}}}}])
    server.kill9()
    server.start()
    ddb = server.client("dynamodb")
    got = ddb.query(TableName=name, IndexName="byG", KeyConditionExpression="g = :g", ExpressionAttributeValues={":g": {"S": "grp"}})
    assert sorted(i["pk"]["S"] for i in got["Items"]) == ["k1", "k2", "k3", "k4", "tx"]
    assert ddb.get_item(TableName=name, Key={"pk": {"S": "k1"}})["Item"]["n"] == {"N": "2.5"}
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 5


def test_malformed_input_gets_4xx_and_changes_nothing(cumulo, ddb):
    import http.client
    import json as _json

    name = make_table(ddb)

    def post(op, body):
        conn = http.client.HTTPConnection("127.0.0.1", cumulo.port, timeout=10)
        data = body if isinstance(body, bytes) else _json.dumps(body).encode()
        conn.request("POST", "/", body=data, headers={
            "X-Amz-Target": f"DynamoDB_20120810.{op}", "Content-Type": "application/x-amz-json-1.0",
            "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00"})
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        return resp.status, _json.loads(payload or b"{}")

    deep_list = {"S": "x"}
    for _ in range(200):
        deep_list = {"L": [deep_list]}
    cases = [
        ("PutItem", b"{not json"),
        ("PutItem", b"[1, 2]"),
        ("PutItem", {"TableName": 5, "Item": {}}),
        ("PutItem", {"TableName": name, "Item": "pk"}),
        ("PutItem", {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"S": "a", "N": "1"}}}),
        ("PutItem", {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {}}}),
        ("PutItem", {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"B": "not base64!"}}}),
        ("PutItem", {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"NULL": False}}}),
        ("PutItem", {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": deep_list}}),
        ("PutItem", {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "ConditionExpression": "(" * 3000}),
        ("PutItem", {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "ConditionExpression": "a = :v",
                     "ExpressionAttributeValues": {":v": {"N": "1e99999999999999999999"}}}),
        ("UpdateItem", {"TableName": name, "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "UpdateExpression": "SET a[99999999999999999999] = :v",
                        "ExpressionAttributeValues": {":v": {"S": "x"}}}),
        ("Query", {"TableName": name, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}, "Limit": 0}),
        ("Query", {"TableName": name, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}},
                   "ExclusiveStartKey": {"nope": {"S": "x"}}}),
        ("Scan", {"TableName": name, "Segment": -1, "TotalSegments": 2}),
        ("BatchWriteItem", {"RequestItems": {name: [{}]}}),
        ("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": name, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}},
                                                   "Delete": {"TableName": name, "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}}]}),
        ("CreateTable", {"TableName": "x", "KeySchema": [], "AttributeDefinitions": []}),
        ("UpdateTable", {"TableName": name, "GlobalSecondaryIndexUpdates": [{}]}),
        ("NoSuchOperation", {}),
    ]
    for op, body in cases:
        status, payload = post(op, body)
        assert 400 <= status < 500, (op, body if len(str(body)) < 300 else "...", status, payload)
        assert payload.get("__type"), payload
    assert ddb.scan(TableName=name)["Count"] == 0
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE", "the server is still serving"
