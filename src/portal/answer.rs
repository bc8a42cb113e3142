//! How a portal action answers (Post/Redirect/Get): done, it redirects
//! (`303 See Other`) to the page it belongs to, which says once what was
//! done (`flash`), so a reload reads the page and posts nothing again;
//! refused, that page comes back at once with the form as it was sent and
//! why at its field, at the refusal's status.

use actix_web::HttpResponse;

use super::{
    Signed,
    flash::{self, Flash},
    form::{Draft, Fields},
    views,
};
use crate::{
    http::{AppState, problem::Problem},
    web::chrome::see_other,
};

/// The page an action belongs to.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'a> {
    /// The endpoints (where one is created).
    Endpoints,
    Endpoint(&'a str),
    Delivery(&'a str),
    Settings,
}

impl Owner<'_> {
    pub fn path(self) -> String {
        match self {
            Owner::Endpoints => "/portal".to_string(),
            Owner::Endpoint(id) => format!("/portal/endpoints/{id}"),
            Owner::Delivery(id) => format!("/portal/deliveries/{id}"),
            Owner::Settings => "/portal/settings".to_string(),
        }
    }

    /// The page with the form `draft` shown again.
    async fn page(
        self,
        state: &AppState,
        s: &Signed,
        draft: &Draft,
    ) -> Result<HttpResponse, Problem> {
        match self {
            Owner::Endpoints => views::show_endpoints(state, s, draft).await,
            Owner::Endpoint(id) => views::show_endpoint(state, s, id, draft, None).await,
            Owner::Delivery(id) => views::show_delivery(state, s, id, draft).await,
            Owner::Settings => views::show_settings(state, s, draft).await,
        }
    }
}

/// What a done action says, and where (its owner's page, unless `to`).
#[derive(Debug)]
pub struct Done {
    pub flash: Flash,
    pub to: Option<String>,
}

impl From<Flash> for Done {
    fn from(flash: Flash) -> Done {
        Done { flash, to: None }
    }
}

/// The redirect that says `flash` once at `to`.
fn redirect(state: &AppState, s: &Signed, to: &str, flash: &Flash) -> HttpResponse {
    let key = state.shared.secrets.session_key();
    see_other(to)
        .cookie(flash::cookie(key, &s.session_id, flash))
        .finish()
}

/// The answer to the form `form` (its `fields`) of the page `owner`: a
/// redirect for a done action, the page with the form again for a refused
/// one; a failure of hookd's own stays an error.
pub async fn answer(
    state: &AppState,
    s: &Signed,
    owner: Owner<'_>,
    form: &str,
    fields: Fields,
    outcome: Result<Done, Problem>,
) -> Result<HttpResponse, Problem> {
    match outcome {
        Ok(done) => {
            let to = done.to.unwrap_or_else(|| owner.path());
            Ok(redirect(state, s, &to, &done.flash))
        }
        Err(p) if p.status >= 500 => Err(p),
        Err(p) => {
            let draft = Draft::refused(fields, &p, form);
            // A refused form is all this page says.
            let s = Signed {
                flash: None,
                ..s.clone()
            };
            owner.page(state, &s, &draft).await
        }
    }
}
