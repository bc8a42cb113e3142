//! Owns the in-process fake DNS server for tests: names answer with the addresses a test sets (TTL 0), and every query is counted.
//!
//! Built on `hickory-server` with a hand-written `RequestHandler` (no zone handler, no catalog):
//! UDP and TCP on the same port of 127.0.0.1. A name answers A records for its IPv4 addresses
//! and AAAA records for its IPv6 ones, with TTL 0 so that resolvers do not cache; another query
//! type for a known name gets an empty NOERROR answer; an unknown name gets NXDOMAIN (no SOA,
//! so no negative caching either).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hickory_server::Server;
use hickory_server::net::runtime::Time;
use hickory_server::proto::op::{Header, HeaderCounts, Metadata, OpCode, ResponseCode};
use hickory_server::proto::rr::rdata::{A, AAAA};
use hickory_server::proto::rr::{RData, Record, RecordType};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::zone_handler::MessageResponseBuilder;
use tokio::net::{TcpListener, UdpSocket};

/// A DNS server on 127.0.0.1 (UDP and TCP, one port) that answers what the test says.
///
/// Dropping it stops the server.
pub struct FakeDns {
    addr: SocketAddr,
    zone: Arc<Zone>,
    server: Server<Handler>,
}

#[derive(Default)]
struct Zone {
    state: Mutex<ZoneState>,
}

#[derive(Default)]
struct ZoneState {
    /// Keyed by normalised name (see `key`).
    answers: HashMap<String, Vec<IpAddr>>,
    /// Keyed by normalised name: queries of any type.
    queries: HashMap<String, usize>,
}

impl Zone {
    fn state(&self) -> MutexGuard<'_, ZoneState> {
        super::lock_through_poison(&self.state)
    }
}

/// Names compare case-insensitively, with or without the trailing dot.
fn key(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl FakeDns {
    /// Serves UDP and TCP on one port of 127.0.0.1 in spawned tokio tasks. Must be called inside
    /// a tokio runtime (current-thread is fine, e.g. `actix_rt::test`).
    ///
    /// Panics if it cannot bind a port.
    pub async fn start() -> FakeDns {
        let (udp, tcp) = bind_pair().await;
        let addr = udp.local_addr().expect("fake DNS: no local address");
        let zone = Arc::new(Zone::default());
        let mut server = Server::new(Handler {
            zone: Arc::clone(&zone),
        });
        server.register_socket(udp);
        server.register_listener(tcp, Duration::from_secs(5), 32);
        FakeDns { addr, zone, server }
    }

    /// The address to use as the nameserver (UDP and TCP).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// From now on, `name` (case-insensitive, with or without trailing dot) answers with these
    /// addresses: A records for the IPv4 ones, AAAA records for the IPv6 ones, TTL 0. A name never
    /// given here answers NXDOMAIN; one given an empty list answers NOERROR with no records.
    pub fn answer(&self, name: &str, ips: Vec<IpAddr>) {
        self.zone.state().answers.insert(key(name), ips);
    }

    /// How many queries (of any type, over UDP or TCP) have arrived for `name` so far.
    pub fn queries(&self, name: &str) -> usize {
        self.zone
            .state()
            .queries
            .get(&key(name))
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for FakeDns {
    fn drop(&mut self) {
        // Cancelling stops the accept loops; dropping `server` (its JoinSet) aborts every task.
        self.server.shutdown_token().cancel();
    }
}

/// A UDP socket and a TCP listener on the same ephemeral port of 127.0.0.1.
async fn bind_pair() -> (UdpSocket, TcpListener) {
    let mut last_error = None;
    for _ in 0..50 {
        let udp = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("fake DNS: cannot bind a UDP port on 127.0.0.1");
        let addr = udp.local_addr().expect("fake DNS: no local address");
        // The port is free for UDP; TCP may have it taken: then try another.
        match TcpListener::bind(addr).await {
            Ok(tcp) => return (udp, tcp),
            Err(e) => last_error = Some(e),
        }
    }
    panic!("fake DNS: no port free for both UDP and TCP on 127.0.0.1: {last_error:?}");
}

struct Handler {
    zone: Arc<Zone>,
}

#[async_trait::async_trait]
impl RequestHandler for Handler {
    async fn handle_request<R: ResponseHandler, T: Time>(
        &self,
        request: &Request,
        mut response_handle: R,
    ) -> ResponseInfo {
        let builder = MessageResponseBuilder::from_message_request(request);
        let mut metadata = Metadata::response_from_request(&request.metadata);
        metadata.authoritative = true;

        let query = match request.request_info() {
            Ok(info) if request.metadata.op_code == OpCode::Query => info.query,
            // Not exactly one query, or not a query at all.
            Ok(_) => return send_error(request, response_handle, ResponseCode::NotImp).await,
            Err(_) => return send_error(request, response_handle, ResponseCode::FormErr).await,
        };
        let name = key(&query.name().to_string());
        let answers: Option<Vec<Record>> = {
            let mut state = self.zone.state();
            *state.queries.entry(name.clone()).or_default() += 1;
            state.answers.get(&name).map(|ips| {
                let owner = query.original().name().clone();
                ips.iter()
                    .filter_map(|ip| match (ip, query.query_type()) {
                        (IpAddr::V4(v4), RecordType::A) => Some(RData::A(A(*v4))),
                        (IpAddr::V6(v6), RecordType::AAAA) => Some(RData::AAAA(AAAA(*v6))),
                        _ => None,
                    })
                    .map(|rdata| Record::from_rdata(owner.clone(), 0, rdata))
                    .collect()
            })
        };
        let Some(answers) = answers else {
            return send_error(request, response_handle, ResponseCode::NXDomain).await;
        };
        let response = builder.build(
            metadata,
            &answers,
            std::iter::empty(),
            std::iter::empty(),
            std::iter::empty(),
        );
        match response_handle.send_response(response).await {
            Ok(info) => info,
            Err(_) => serve_failed(request),
        }
    }
}

/// Answers with `code` and no records.
async fn send_error<R: ResponseHandler>(
    request: &Request,
    mut response_handle: R,
    code: ResponseCode,
) -> ResponseInfo {
    let mut response =
        MessageResponseBuilder::from_message_request(request).error_msg(&request.metadata, code);
    response.metadata_mut().authoritative = true;
    match response_handle.send_response(response).await {
        Ok(info) => info,
        Err(_) => serve_failed(request),
    }
}

/// What the handler reports when the response could not be sent.
fn serve_failed(request: &Request) -> ResponseInfo {
    let mut metadata = Metadata::response_from_request(&request.metadata);
    metadata.response_code = ResponseCode::ServFail;
    ResponseInfo::from(Header {
        metadata,
        counts: HeaderCounts::default(),
    })
}
