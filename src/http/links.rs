//! OpenAPI links: which response supplies the `{id}` of which operation.
//!
//! Clients and generated SDKs use them to follow a created object to its
//! routes; schemathesis's stateful phase uses them to test the `{id}` routes
//! on real objects instead of ids that only ever answer 404.

use utoipa::openapi::{OpenApi, RefOr, link::Link, path::Operation};

/// One link: a response of `from` whose body field `pointer` is the `id` of `to`.
struct IdLink {
    from: (&'static str, &'static str),
    status: &'static str,
    pointer: &'static str,
    to: &'static [&'static str],
}

const ENDPOINT_ROUTES: &[&str] = &[
    "get_endpoint",
    "update_endpoint",
    "delete_endpoint",
    "enable_endpoint",
    "disable_endpoint",
    "rotate_secret",
    "expire_previous",
    "send_test",
    "recover",
    "get_receiver_auth",
    "set_headers",
    "set_oauth2",
    "set_client_certificate",
    "remove_receiver_auth",
    "held_subjects",
    "filter_test",
];
const DELIVERY_ROUTES: &[&str] = &["get_delivery", "replay_delivery", "skip_delivery"];

const LINKS: &[IdLink] = &[
    IdLink {
        from: ("post", "/v1/endpoints"),
        status: "201",
        pointer: "/id",
        to: ENDPOINT_ROUTES,
    },
    IdLink {
        from: ("post", "/v1/endpoints/{id}/test"),
        status: "202",
        pointer: "/delivery_id",
        to: DELIVERY_ROUTES,
    },
    IdLink {
        from: ("post", "/v1/endpoints/{id}/test"),
        status: "202",
        pointer: "/event_id",
        to: &["get_event"],
    },
    // The feed's first event, to its page (the export's lines are the same
    // envelopes, but NDJSON has no pointer to link from).
    IdLink {
        from: ("get", "/v1/events"),
        status: "200",
        pointer: "/data/0/event_id",
        to: &["get_event"],
    },
    IdLink {
        from: ("post", "/v1/admin/incidents"),
        status: "201",
        pointer: "/id",
        to: &["resolve_incident"],
    },
    IdLink {
        from: ("post", "/v1/admin/partners"),
        status: "201",
        pointer: "/id",
        to: &["create_partner_key"],
    },
    IdLink {
        from: ("post", "/v1/admin/partners/{id}/keys"),
        status: "201",
        pointer: "/id",
        to: &["revoke_key"],
    },
];

/// Adds the links to `doc`. A link whose operation or response is missing is
/// a programming error: the test below fails on it.
pub fn add(doc: &mut OpenApi) {
    for link in LINKS {
        let (method, path) = link.from;
        let Some(op) = operation_mut(doc, method, path) else {
            continue;
        };
        let Some(RefOr::T(response)) = op.responses.responses.get_mut(link.status) else {
            continue;
        };
        for target in link.to {
            let expression = format!("$response.body#{}", link.pointer);
            response.links.insert(
                (*target).to_string(),
                RefOr::T(
                    Link::builder()
                        .operation_id(*target)
                        .parameter("id", expression)
                        .build(),
                ),
            );
        }
    }
}

fn operation_mut<'a>(doc: &'a mut OpenApi, method: &str, path: &str) -> Option<&'a mut Operation> {
    let item = doc.paths.paths.get_mut(path)?;
    match method {
        "get" => item.get.as_mut(),
        "post" => item.post.as_mut(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_link_starts_from_a_documented_response_and_names_a_documented_operation() {
        let doc = crate::http::openapi::generate();
        let ids: Vec<String> = doc
            .paths
            .paths
            .values()
            .flat_map(|item| {
                [&item.get, &item.post, &item.put, &item.patch, &item.delete]
                    .into_iter()
                    .flatten()
                    .filter_map(|op| op.operation_id.clone())
            })
            .collect();
        let mut doc = doc;
        for link in LINKS {
            let (method, path) = link.from;
            let op = operation_mut(&mut doc, method, path)
                .unwrap_or_else(|| panic!("no operation {method} {path}"));
            let Some(RefOr::T(response)) = op.responses.responses.get(link.status) else {
                panic!("{method} {path} documents no {} response", link.status);
            };
            assert!(
                !response.links.is_empty(),
                "{method} {path} {} got no links",
                link.status
            );
            for target in link.to {
                assert!(
                    ids.iter().any(|id| id == target),
                    "no operation id {target}"
                );
            }
        }
    }
}
