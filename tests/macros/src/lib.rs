//! `#[test]` runs one async test function on its own actix system through
//! the harness's `run`, which stops the engines the test started and tears
//! the system down where its tasks can still hand their connections back.
//!
//! `#[both_backends]` turns one async test function into two tests,
//! `name::sqlite` and `name::postgres`, through the harness's
//! `on_both_backends!`. The function takes either `app: TestApp` (hookd on
//! the defaults, spawned for it) or `backend: Backend` (it starts its own):
//!
//! ```ignore
//! #[both_backends]
//! async fn a_refused_rotation_makes_no_secret(app: TestApp) { … }
//! ```

use proc_macro::TokenStream;
use quote::quote;
use syn::{FnArg, ItemFn, Pat, Type, parse_macro_input, spanned::Spanned};

/// A compile error naming the attribute `name` if it was given arguments.
fn no_arguments(name: &str, attr: TokenStream) -> Result<(), TokenStream> {
    if attr.is_empty() {
        return Ok(());
    }
    let attr = proc_macro2::TokenStream::from(attr);
    Err(
        syn::Error::new(attr.span(), format!("#[{name}] takes no arguments"))
            .to_compile_error()
            .into(),
    )
}

#[proc_macro_attribute]
pub fn test(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Err(refused) = no_arguments("test", attr) {
        return refused;
    }
    let test = parse_macro_input!(item as ItemFn);
    match on_its_own_system(test) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn on_its_own_system(test: ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    let ItemFn {
        attrs,
        vis,
        mut sig,
        block,
    } = test;
    if sig.asyncness.take().is_none() || !sig.inputs.is_empty() {
        return Err(syn::Error::new(
            sig.span(),
            "a #[test] is an async fn with no arguments",
        ));
    }
    Ok(quote! {
        #[::core::prelude::v1::test]
        #(#attrs)*
        #vis #sig {
            crate::harness::run(::std::boxed::Box::pin(async move #block))
        }
    })
}

#[proc_macro_attribute]
pub fn both_backends(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Err(refused) = no_arguments("both_backends", attr) {
        return refused;
    }
    let test = parse_macro_input!(item as ItemFn);
    match expand(&test) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(test: &ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    let sig = &test.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.span(),
            "a #[both_backends] test is an async fn",
        ));
    }
    let (arg, ty) = only_argument(test)?;
    let (name, body) = (&sig.ident, &test.block);
    let closure = match ty.as_str() {
        "TestApp" => quote! { |#arg: TestApp| async move #body },
        "Backend" => quote! { |#arg: crate::harness::Backend| async move #body },
        other => {
            return Err(syn::Error::new(
                sig.inputs.span(),
                format!(
                    "a #[both_backends] test takes `app: TestApp` or `backend: Backend`, not `{other}`"
                ),
            ));
        }
    };
    Ok(quote! { crate::on_both_backends!(#name, #closure); })
}

/// The test's one argument: its name, and the last segment of its type.
fn only_argument(test: &ItemFn) -> syn::Result<(syn::Ident, String)> {
    let inputs = &test.sig.inputs;
    let wrong = || {
        syn::Error::new(
            inputs.span(),
            "a #[both_backends] test takes one argument: `app: TestApp` or `backend: Backend`",
        )
    };
    let (Some(FnArg::Typed(arg)), 1) = (inputs.first(), inputs.len()) else {
        return Err(wrong());
    };
    let (Pat::Ident(name), Type::Path(ty)) = (&*arg.pat, &*arg.ty) else {
        return Err(wrong());
    };
    let last = ty.path.segments.last().ok_or_else(wrong)?;
    Ok((name.ident.clone(), last.ident.to_string()))
}
