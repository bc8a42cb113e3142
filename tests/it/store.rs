//! Store guarantees that handlers rely on.

use sea_orm::{EntityTrait, PaginatorTrait};

use crate::{
    harness::{Backend, spawn_app},
    on_both_backends,
};

on_both_backends!(
    a_snapshot_keeps_seeing_the_rows_of_its_first_read_while_others_commit,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let partners = hookd::store::entity::partner::Entity::find;
        let snapshot = hookd::store::snapshot(app.db()).await.expect("begin");
        let before = partners().count(&snapshot).await.expect("first read");

        hookd::store::partners::create(app.db(), None, "Committed meanwhile", 0)
            .await
            .expect("a partner committed outside the snapshot");

        let inside = partners().count(&snapshot).await.expect("second read");
        assert_eq!(
            inside, before,
            "a read in the snapshot saw a row committed after its first read"
        );
        snapshot.commit().await.expect("end the snapshot");
        let after = partners().count(app.db()).await.expect("fresh read");
        assert_eq!(
            after,
            before + 1,
            "the committed partner is visible outside"
        );
    }
);
