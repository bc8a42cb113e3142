//! A real SMTP listener on loopback: it speaks enough of RFC 5321 (EHLO,
//! MAIL, RCPT, DATA, RSET, NOOP, QUIT) for hookd's mailer, and keeps every
//! mail it accepts for the test to read. It can refuse the next few mails
//! with a transient 451 to exercise retries.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
};

/// One mail as received.
#[derive(Debug, Clone)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    /// Headers and body, with CRLF line ends, dot-stuffing undone.
    pub data: String,
}

impl Mail {
    /// The value of the first header named `name` (unfolded).
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next()?;
        let mut value: Option<String> = None;
        for line in head.split("\r\n") {
            if let Some(v) = value.as_mut() {
                if line.starts_with([' ', '\t']) {
                    v.push_str(line.trim_start());
                    continue;
                }
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case(name)
            {
                value = Some(v.trim().to_string());
            }
        }
        value
    }

    /// The body, as sent (7bit or quoted-printable is left as is).
    pub fn body(&self) -> String {
        self.data
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    }
}

#[derive(Clone)]
pub struct SmtpListener {
    pub port: u16,
    mails: Arc<Mutex<Vec<Mail>>>,
    refuse: Arc<AtomicUsize>,
}

impl SmtpListener {
    pub async fn start() -> SmtpListener {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind an SMTP port");
        let port = listener.local_addr().expect("an address").port();
        let me = SmtpListener {
            port,
            mails: Arc::default(),
            refuse: Arc::default(),
        };
        let server = me.clone();
        actix_rt::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let server = server.clone();
                actix_rt::spawn(async move {
                    let _ = server.session(stream).await;
                });
            }
        });
        me
    }

    /// `smtp.url` for hookd: plain SMTP on loopback.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The next `n` mails are refused with 451 (try again later).
    pub fn refuse_next(&self, n: usize) {
        self.refuse.store(n, Ordering::SeqCst);
    }

    pub fn mails(&self) -> Vec<Mail> {
        self.mails.lock().expect("mails").clone()
    }

    /// Waits until at least `n` mails came, or `timeout`; returns them.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Mail> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let mails = self.mails();
            if mails.len() >= n || tokio::time::Instant::now() >= deadline {
                return mails;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn session(&self, stream: TcpStream) -> std::io::Result<()> {
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read);
        write.write_all(b"220 hookd-test ESMTP ready\r\n").await?;
        let (mut from, mut to) = (String::new(), Vec::new());
        let mut line = String::new();
        loop {
            line.clear();
            if lines.read_line(&mut line).await? == 0 {
                return Ok(());
            }
            let command = line.trim_end().to_string();
            let verb = command
                .split([' ', ':'])
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            let reply: &[u8] = match verb.as_str() {
                "EHLO" => b"250-hookd-test greets you\r\n250 8BITMIME\r\n",
                "HELO" | "NOOP" => b"250 OK\r\n",
                "RSET" => {
                    (from, to) = (String::new(), Vec::new());
                    b"250 OK\r\n"
                }
                "MAIL" => {
                    let refused = self
                        .refuse
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    if refused {
                        b"451 4.3.0 try again later\r\n"
                    } else {
                        from = address(&command);
                        b"250 OK\r\n"
                    }
                }
                "RCPT" => {
                    to.push(address(&command));
                    b"250 OK\r\n"
                }
                "DATA" => {
                    write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
                    let mut data = String::new();
                    loop {
                        line.clear();
                        if lines.read_line(&mut line).await? == 0 {
                            return Ok(());
                        }
                        if line == ".\r\n" {
                            break;
                        }
                        data.push_str(line.strip_prefix('.').unwrap_or(&line));
                    }
                    self.mails.lock().expect("mails").push(Mail {
                        from: std::mem::take(&mut from),
                        to: std::mem::take(&mut to),
                        data,
                    });
                    b"250 OK queued\r\n"
                }
                "QUIT" => {
                    write.write_all(b"221 bye\r\n").await?;
                    return Ok(());
                }
                _ => b"502 5.5.2 not implemented\r\n",
            };
            write.write_all(reply).await?;
        }
    }
}

/// The address inside `<…>` of a MAIL or RCPT command.
fn address(command: &str) -> String {
    command
        .split_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map(|(a, _)| a.to_string())
        .unwrap_or_default()
}
