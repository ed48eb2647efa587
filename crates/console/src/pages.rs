//! The console's pages: one server-rendered HTML shell per page (header, navigation, the page's
//! name and subject as data attributes) and the static assets, all compiled into the binary.
//! The shell's script module reads the API and renders the page.

use crate::web::{Body, respond};
use cumulo_wire::AwsRequest;
use http::{HeaderValue, Method, Response, StatusCode, header};

/// Every asset, by file name: what `assets/` holds, compiled in.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "console.css",
        "text/css; charset=utf-8",
        include_str!("../assets/console.css"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/app.js"),
    ),
    (
        "stacks.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/stacks.js"),
    ),
    (
        "stack.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/stack.js"),
    ),
    (
        "timeline.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/timeline.js"),
    ),
    (
        "graph.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/graph.js"),
    ),
    (
        "highlight.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/highlight.js"),
    ),
    (
        "s3.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/s3.js"),
    ),
    (
        "sqs.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/sqs.js"),
    ),
    (
        "views.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/views.js"),
    ),
    (
        "sns.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/sns.js"),
    ),
    (
        "dynamodb.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/dynamodb.js"),
    ),
    (
        "ssm.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/ssm.js"),
    ),
    (
        "secretsmanager.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/secretsmanager.js"),
    ),
    (
        "lambda.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/lambda.js"),
    ),
    (
        "logs.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/logs.js"),
    ),
    (
        "iam.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/iam.js"),
    ),
    (
        "kms.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/kms.js"),
    ),
    (
        "events.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/events.js"),
    ),
    (
        "stepfunctions.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/stepfunctions.js"),
    ),
    (
        "route53.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/route53.js"),
    ),
    (
        "acm.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/acm.js"),
    ),
    (
        "apigateway.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/apigateway.js"),
    ),
    (
        "ecs.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/ecs.js"),
    ),
    (
        "elb.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/elb.js"),
    ),
    (
        "securitygroups.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/securitygroups.js"),
    ),
    (
        "vpc.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/vpc.js"),
    ),
    (
        "login.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/login.js"),
    ),
    (
        "search.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/search.js"),
    ),
];

const SHELL: &str = include_str!("../assets/shell.html");

pub fn handle(req: &AwsRequest) -> Response<Body> {
    if !matches!(req.method, Method::GET | Method::HEAD) {
        return page_error(StatusCode::METHOD_NOT_ALLOWED, "Pages are read with GET");
    }
    let Some(rest) = req.raw_path.strip_prefix(crate::CONSOLE_PREFIX) else {
        return page_error(StatusCode::NOT_FOUND, "No such page");
    };
    if rest.is_empty() {
        let mut r = respond(StatusCode::MOVED_PERMANENTLY, "text/plain", "");
        r.headers_mut().insert(
            header::LOCATION,
            HeaderValue::from_static("/_cumulo/console/"),
        );
        return r;
    }
    let Some(segs) = crate::web::segments(rest, "/") else {
        return page_error(StatusCode::BAD_REQUEST, "The path is not valid UTF-8");
    };
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    match segs.as_slice() {
        [] => shell("stacks", "", "Stacks"),
        ["stacks", name] => shell("stack", name, name),
        ["s3"] => shell("s3", "", "S3 buckets"),
        ["s3", bucket] => shell("s3", bucket, bucket),
        ["sqs"] => shell("sqs", "", "SQS queues"),
        ["sqs", queue] => shell("sqs", queue, queue),
        ["sns"] => shell("sns", "", "SNS topics"),
        ["sns", topic] => shell("sns", topic, topic),
        ["dynamodb"] => shell("dynamodb", "", "DynamoDB tables"),
        ["dynamodb", table] => shell("dynamodb", table, table),
        ["ssm"] => shell("ssm", "", "SSM parameters"),
        ["ssm", name] => shell("ssm", name, name),
        ["secretsmanager"] => shell("secretsmanager", "", "Secrets Manager secrets"),
        ["secretsmanager", id] => shell("secretsmanager", id, id),
        ["lambda"] => shell("lambda", "", "Lambda functions"),
        ["lambda", name] => shell("lambda", name, name),
        ["logs"] => shell("logs", "", "CloudWatch Logs groups"),
        ["logs", group] => shell("logs", group, group),
        ["iam"] => shell("iam", "", "IAM roles and policies"),
        ["iam", "roles", name] => shell("iam", name, name),
        ["iam", "policies", arn] => shell("iam", arn, arn),
        ["kms"] => shell("kms", "", "KMS keys"),
        ["kms", id] => shell("kms", id, id),
        ["events"] => shell("events", "", "EventBridge rules"),
        ["events", rule] => shell("events", rule, rule),
        ["stepfunctions"] => shell("stepfunctions", "", "Step Functions state machines"),
        ["stepfunctions", name] => shell("stepfunctions", name, name),
        ["stepfunctions", "executions", arn] => shell("stepfunctions", arn, arn),
        ["route53"] => shell("route53", "", "Route 53 hosted zones"),
        ["route53", id] => shell("route53", id, id),
        ["acm"] => shell("acm", "", "ACM certificates"),
        ["acm", arn] => shell("acm", arn, arn),
        ["apigateway"] => shell("apigateway", "", "API Gateway APIs"),
        ["apigateway", id] => shell("apigateway", id, id),
        ["ecs"] => shell("ecs", "", "ECS clusters"),
        ["ecs", cluster] => shell("ecs", cluster, cluster),
        ["elb"] => shell("elb", "", "Load balancers"),
        ["elb", "classic", name] => shell("elb", &format!("classic/{name}"), name),
        ["elb", lb] => shell("elb", lb, lb),
        ["ec2"] => shell("vpc", "", "VPCs"),
        ["ec2", "securitygroups"] => shell("securitygroups", "", "Security groups"),
        ["ec2", "securitygroups", id] => shell("securitygroups", id, id),
        ["ec2", vpc] => shell("vpc", vpc, vpc),
        ["search"] => shell("search", "", "Search"),
        ["assets", file] => asset(file),
        _ => page_error(StatusCode::NOT_FOUND, "No such page"),
    }
}

fn asset(file: &str) -> Response<Body> {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, text)) => {
            let mut r = respond(StatusCode::OK, content_type, *text);
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            r
        }
        None => page_error(StatusCode::NOT_FOUND, "No such asset"),
    }
}

/// Text safe inside an HTML attribute or element.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn shell(page: &str, subject: &str, title: &str) -> Response<Body> {
    let html = SHELL
        .replace("{{page}}", page)
        .replace("{{subject}}", &escape(subject))
        .replace("{{title}}", &escape(title));
    let mut r = respond(StatusCode::OK, "text/html; charset=utf-8", html);
    // Scripts only from here: a value shown on a page (a tag, a message body) can never run.
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; frame-ancestors 'none'",
        ),
    );
    r
}

/// The login form, for any page asked for without a session under `--verify-signatures`.
pub fn login() -> Response<Body> {
    let mut r = shell("login", "", "Sign in");
    *r.status_mut() = StatusCode::UNAUTHORIZED;
    r
}

pub fn page_error(status: StatusCode, message: &str) -> Response<Body> {
    let html = SHELL
        .replace("{{page}}", "error")
        .replace("{{subject}}", &escape(message))
        .replace(
            "{{title}}",
            &format!("{} {}", status.as_u16(), escape(message)),
        );
    respond(status, "text/html; charset=utf-8", html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_escaped_into_the_shell() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        let r = shell("stack", "<script>", "t");
        let Body::Whole(Some(b)) = r.into_body() else {
            panic!("whole body")
        };
        let text = String::from_utf8(b.to_vec()).unwrap();
        assert!(text.contains("data-subject=\"&lt;script&gt;\""));
        assert!(!text.contains("<script>\""));
    }
}
