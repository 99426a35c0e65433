-- +goose Up
-- Lead events leave through logical decoding (pkg/walrelay, docs/operations.md "Lead events"):
-- each is a message written into the WAL in its change's transaction, read by the relay that holds
-- the database's slot. The publication and the slot are made at start, before this runs
-- (wiring.OpenDB): pgoutput reads the publication as the catalog was at each decoded position, so
-- it must be older than the slot, and the slot older than the messages below.

-- The outbox table goes once nothing is left in it. Its last unpublished rows (written by the
-- previous version until this moment) are moved into the WAL as the same messages, in id order and
-- in this transaction, under a lock that holds writers off until the table is gone: nothing is
-- lost and nothing is published twice. The slot must exist for them (wiring.OpenDB makes it before
-- migrating): without one the move would lose them, so the migration refuses.
-- +goose StatementBegin
DO $$
DECLARE
    moved bigint;
BEGIN
    IF to_regclass('outbox') IS NULL THEN
        RETURN;
    END IF;
    EXECUTE 'LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE';
    EXECUTE 'SELECT count(*) FROM outbox WHERE published_at IS NULL' INTO moved;
    IF moved > 0 AND NOT EXISTS (SELECT 1 FROM pg_replication_slots
            WHERE database = current_database() AND plugin = 'pgoutput' AND slot_name LIKE 'lead_events%') THEN
        RAISE EXCEPTION 'the outbox still holds % lead events and this database has no lead_events slot to move them to: start lead-api or lead-worker (which make the slot), or drain the outbox first', moved;
    END IF;
    EXECUTE $q$
        SELECT count(pg_logical_emit_message(true, 'lead_events',
            convert_to(jsonb_build_object('exchange', exchange, 'key', routing_key, 'id', message_id, 'type', type,
                'requestId', request_id, 'order', convert_from(body, 'UTF8')::jsonb -> 'data' ->> 'id')::text || E'\n', 'UTF8') || body))
        FROM (SELECT * FROM outbox WHERE published_at IS NULL ORDER BY id) o$q$;
    RAISE NOTICE 'moved % outbox rows into the WAL', moved;
    DROP TABLE outbox;
    DROP TABLE IF EXISTS outbox_version;
END $$;
-- +goose StatementEnd

-- +goose Down
-- The outbox is not brought back: the events are in the WAL now.
SELECT 1;
