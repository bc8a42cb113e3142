//! Checks every request passes before it is routed: a request target longer
//! than `http.max_uri_bytes` is 414, and an error answer that left a route
//! or the router without a body (such as a 405) becomes problem+json.

use actix_web::{
    Error, ResponseError,
    body::{EitherBody, MessageBody},
    dev::{ServiceRequest, ServiceResponse},
    http::{StatusCode, header},
    middleware::Next,
};

use super::problem::Problem;

/// The longest target the app was configured with (`http.max_uri_bytes`).
#[derive(Debug, Clone, Copy)]
pub struct MaxUri(pub usize);

fn uri_too_long(max: usize) -> Problem {
    Problem::new_public(
        StatusCode::URI_TOO_LONG,
        "uri-too-long",
        "URI too long",
        format!("the request target is longer than {max} bytes"),
    )
}

/// The problem+json that stands for a bodiless error `status`.
fn bare(status: StatusCode) -> Problem {
    match status {
        StatusCode::METHOD_NOT_ALLOWED => Problem::new_public(
            status,
            "method-not-allowed",
            "Method not allowed",
            "this route does not take this method",
        ),
        StatusCode::NOT_FOUND => Problem::not_found("no such route"),
        other => Problem::new_public(
            other,
            "error",
            other.canonical_reason().unwrap_or("Error"),
            other.canonical_reason().unwrap_or("error").to_lowercase(),
        ),
    }
}

pub async fn limits(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let max = req.app_data::<MaxUri>().map_or(usize::MAX, |m| m.0);
    let target = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if target > max {
        let response = uri_too_long(max).error_response();
        return Ok(req.into_response(response).map_into_right_body());
    }
    let response = next.call(req).await?;
    let status = response.status();
    let bodiless = !response.headers().contains_key(header::CONTENT_TYPE);
    if (status.is_client_error() || status.is_server_error()) && bodiless {
        let (req, _) = response.into_parts();
        let response = bare(status).error_response();
        return Ok(ServiceResponse::new(req, response).map_into_right_body());
    }
    Ok(response.map_into_left_body())
}
