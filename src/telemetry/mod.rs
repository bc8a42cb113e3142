//! Traces over OTLP/HTTP: the tracer hookd's spans come from, when
//! `[telemetry]` is on, and nothing at all when it is off (every span site
//! asks [`Telemetry::tracer`] first, a check of one `Option`). Spans are
//! batched on the SDK's own thread and posted by [`export::Collector`];
//! an unreachable collector loses spans, never deliveries.

use std::{sync::Arc, time::SystemTime};

use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::{
    Resource,
    trace::{BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider},
};

use crate::config::TelemetryConfig;

mod export;
pub mod redact;
pub mod spans;

/// The tracer, or nothing when telemetry is off. Cheap to clone.
#[derive(Clone, Default)]
pub struct Telemetry {
    on: Option<Arc<On>>,
}

struct On {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl Telemetry {
    /// Telemetry off: no span is ever made.
    pub fn off() -> Telemetry {
        Telemetry::default()
    }

    /// Starts the exporter when `config` turns telemetry on. `tls` verifies
    /// an `https://` collector.
    pub fn start(
        config: &TelemetryConfig,
        tls: Arc<rustls::ClientConfig>,
    ) -> Result<Telemetry, opentelemetry_otlp::ExporterBuildError> {
        if !config.enabled {
            return Ok(Telemetry::off());
        }
        let collector = export::Collector::new(&config.endpoint, tls, config.export_timeout);
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(config.endpoint.as_str())
            .with_timeout(config.export_timeout)
            .with_http_client(collector)
            .build()?;
        let sampler =
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(config.sampling_ratio)));
        let resource = Resource::builder_empty()
            .with_service_name(config.service_name.clone())
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(BatchSpanProcessor::builder(exporter).build())
            .with_sampler(sampler)
            .with_resource(resource)
            .build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "hookd");
        tracing::info!(endpoint = %config.endpoint, service = %config.service_name, ratio = config.sampling_ratio, "traces are exported over OTLP/HTTP");
        Ok(Telemetry {
            on: Some(Arc::new(On { provider, tracer })),
        })
    }

    /// The tracer, `None` when telemetry is off.
    pub fn tracer(&self) -> Option<&SdkTracer> {
        self.on.as_ref().map(|on| &on.tracer)
    }

    /// Exports every span ended so far, now, and waits for it (the batch
    /// otherwise goes out on its schedule, every few seconds).
    pub fn flush(&self) {
        if let Some(on) = &self.on
            && let Err(e) = on.provider.force_flush()
        {
            tracing::debug!(error = %e, "flushing the trace exporter failed");
        }
    }

    /// Exports what is still batched, waiting at most the export timeout.
    pub fn shutdown(&self) {
        if let Some(on) = &self.on
            && let Err(e) = on.provider.shutdown()
        {
            tracing::debug!(error = %e, "the trace exporter stopped with spans unsent");
        }
    }
}

/// The wall-clock time for a span's explicit start: telemetry reports real
/// time to the collector, which the injected clock (a test's stepped time)
/// must not stand in for.
#[allow(
    clippy::disallowed_methods,
    reason = "span timestamps are wall time for the collector, not time-dependent logic"
)]
pub fn wall_now() -> SystemTime {
    SystemTime::now()
}
