//! `url.full` for an attempt span: the callback URL with every query value
//! replaced by `REDACTED` (partners put tokens there), no credentials and no
//! fragment. Keys stay, so a trace still shows which parameters were sent.

/// `url` as a span may show it.
pub fn url_full(url: &url::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_fragment(None);
    if let Some(query) = url.query() {
        let redacted: Vec<String> = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) => format!("{key}=REDACTED"),
                None => pair.to_string(),
            })
            .collect();
        shown.set_query(Some(&redacted.join("&")));
    }
    shown.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        url_full(&url::Url::parse(text).expect("a URL"))
    }

    #[test]
    fn query_values_are_redacted_and_their_keys_kept() {
        assert_eq!(
            shown("https://hooks.example.com/in?token=s3cret&tenant=42"),
            "https://hooks.example.com/in?token=REDACTED&tenant=REDACTED"
        );
    }

    #[test]
    fn a_url_without_a_query_is_shown_as_it_is() {
        assert_eq!(
            shown("https://hooks.example.com:8443/in/"),
            "https://hooks.example.com:8443/in/"
        );
    }

    #[test]
    fn a_key_without_a_value_stays_and_credentials_and_fragments_go() {
        assert_eq!(
            shown("https://user:pw@hooks.example.com/in?flag&a=1#frag"),
            "https://hooks.example.com/in?flag&a=REDACTED"
        );
    }

    #[test]
    fn an_encoded_value_is_redacted_whole() {
        let out = shown("https://h.example.com/?sig=a%3Db%26c");
        assert_eq!(out, "https://h.example.com/?sig=REDACTED");
    }
}
