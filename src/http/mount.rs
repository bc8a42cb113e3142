//! Where the documented routes are mounted: on the server's workers, plain
//! actix-web; for the OpenAPI document, utoipa's config, which also builds
//! each route's operation. Building them costs a few MiB per worker that the
//! allocator then keeps, so the workers mount without it and the document is
//! built once (`openapi::generate`) and kept as its JSON (`openapi::Rendered`).

use actix_web::dev::HttpServiceFactory;
use utoipa_actix_web::OpenApiFactory;

/// A place routes are registered.
pub trait Mount {
    fn service<F>(&mut self, factory: F) -> &mut Self
    where
        F: HttpServiceFactory + OpenApiFactory + 'static;
}

impl Mount for actix_web::web::ServiceConfig {
    fn service<F>(&mut self, factory: F) -> &mut Self
    where
        F: HttpServiceFactory + OpenApiFactory + 'static,
    {
        actix_web::web::ServiceConfig::service(self, factory)
    }
}

impl Mount for utoipa_actix_web::service_config::ServiceConfig<'_> {
    fn service<F>(&mut self, factory: F) -> &mut Self
    where
        F: HttpServiceFactory + OpenApiFactory + 'static,
    {
        utoipa_actix_web::service_config::ServiceConfig::service(self, factory)
    }
}
