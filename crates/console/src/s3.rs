//! S3 through its typed operations: buckets, a bucket's objects a page at a time, download and
//! upload (bounded by [`MAX_UPLOAD`]).

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, Query, json_ok, respond};
use cumulo_services::s3::{ContentHeaders, ListInput, PutInput, S3Service};
use http::{HeaderValue, StatusCode, header};
use serde_json::json;

/// The largest upload the console accepts (the AWS endpoint takes up to `--max-body-size`).
pub const MAX_UPLOAD: usize = 8 * 1024 * 1024;
/// Objects per page, at most and by default.
const MAX_PAGE: usize = 1000;
const DEFAULT_PAGE: usize = 100;

fn service(ctx: &Ctx<'_>) -> Result<std::sync::Arc<S3Service>, ApiError> {
    ctx.service::<S3Service>()
}

pub fn bucket_names(ctx: &Ctx<'_>) -> Result<Vec<String>, ApiError> {
    Ok(service(ctx)?
        .list_buckets()
        .into_iter()
        .map(|b| b.name)
        .collect())
}

/// `GET s3/buckets`.
pub fn buckets(ctx: &Ctx<'_>) -> ApiResult {
    let list: Vec<_> = service(ctx)?
        .list_buckets()
        .into_iter()
        .map(|b| {
            json!({
                "name": b.name,
                "region": b.region,
                "creation_time": chrono::DateTime::from_timestamp_millis(b.created)
                    .map(|t| crate::stacks::time(&t)),
            })
        })
        .collect();
    json_ok(&json!({ "buckets": list }))
}

/// `GET s3/buckets/{bucket}/objects?prefix=&delimiter=&marker=&max-keys=`: one page; the
/// answer's `next_marker` is the next page's `marker`.
pub fn objects(ctx: &Ctx<'_>, bucket: &str) -> ApiResult {
    let q = Query::of(ctx.req);
    let input = ListInput {
        prefix: q.get("prefix").unwrap_or("").to_string(),
        delimiter: q.get("delimiter").unwrap_or("").to_string(),
        marker: q.get("marker").unwrap_or("").to_string(),
        max_keys: q.number("max-keys", DEFAULT_PAGE, MAX_PAGE)?,
    };
    let page = service(ctx)?
        .list_objects(bucket, &input)
        .map_err(ApiError::from_aws)?;
    let objects: Vec<_> = page
        .entries
        .iter()
        .map(|m| {
            json!({
                "key": m.key,
                "size": m.size,
                "etag": format!("\"{}\"", m.etag),
                "last_modified": chrono::DateTime::from_timestamp_millis(m.last_modified)
                    .map(|t| crate::stacks::time(&t)),
                "content_type": m.headers.content_type,
                "storage_class": m.storage_class.as_deref().unwrap_or("STANDARD"),
            })
        })
        .collect();
    json_ok(&json!({
        "bucket": bucket,
        "objects": objects,
        "common_prefixes": page.common_prefixes,
        "is_truncated": page.is_truncated,
        "next_marker": if page.is_truncated { page.next_marker } else { None },
    }))
}

/// `GET s3/buckets/{bucket}/objects/{key}`: the object's bytes, as an attachment.
pub fn download(ctx: &Ctx<'_>, bucket: &str, key: &str) -> ApiResult {
    let got = service(ctx)?
        .get_object(bucket, key, None, None, &Default::default())
        .map_err(ApiError::from_aws)?
        .map_err(|_| ApiError::bad_request("precondition failed"))?;
    let content_type = got
        .meta
        .headers
        .content_type
        .clone()
        .unwrap_or_else(|| "application/octet-stream".into());
    let mut r = respond(StatusCode::OK, &content_type, got.body);
    let file = key.rsplit('/').next().unwrap_or(key);
    let encoded = crate::web::encode(file);
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename*=UTF-8''{encoded}")) {
        r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}\"", got.meta.etag)) {
        r.headers_mut().insert(header::ETAG, v);
    }
    Ok(r)
}

/// `PUT s3/buckets/{bucket}/objects/{key}`: the body becomes the object (PutObject), with the
/// request's Content-Type; larger than [`MAX_UPLOAD`] is refused with 413 and nothing stored.
pub fn upload(ctx: &Ctx<'_>, bucket: &str, key: &str) -> ApiResult {
    let body = &ctx.req.body;
    if body.len() > MAX_UPLOAD {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "EntityTooLarge",
            format!(
                "The upload is {} bytes; the console accepts at most {MAX_UPLOAD} (use the S3 API for larger objects)",
                body.len()
            ),
        ));
    }
    let input = PutInput {
        key: key.to_string(),
        body: body.clone(),
        headers: ContentHeaders {
            content_type: ctx.req.header("content-type").map(str::to_string),
            ..Default::default()
        },
        ..Default::default()
    };
    let out = service(ctx)?
        .put_object(bucket, input)
        .map_err(ApiError::from_aws)?;
    let mut r = json_ok(&json!({
        "bucket": bucket,
        "key": key,
        "size": out.meta.size,
        "etag": format!("\"{}\"", out.meta.etag),
        "version_id": out.version_id,
    }))?;
    *r.status_mut() = StatusCode::CREATED;
    Ok(r)
}
