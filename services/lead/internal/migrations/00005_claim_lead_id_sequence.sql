-- +goose Up
-- claim_lead_id (00003) drew ids with nextval(pg_get_serial_sequence('leads', 'id')), which looks
-- the table and its owned sequence up in the catalogs on every call: a measurable share of a sync
-- create's CPU in PostgreSQL. The sequence is the one the id column's default names
-- (leads_id_seq, made by bigserial); naming it here resolves it once per session, when plpgsql
-- plans the expression. Everything else is as in 00003.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION claim_lead_id(p_lock bigint, p_order bigint, p_phone text, OUT new_id bigint, OUT previous_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    SELECT l.id INTO previous_id FROM leads l
    WHERE l.order_id = p_order AND l.phone = p_phone
    ORDER BY l.id DESC LIMIT 1;
    -- Drawn under the lock, so a later lead of a key always has a larger id.
    new_id := nextval('leads_id_seq');
    IF previous_id IS NOT NULL THEN
        UPDATE leads SET next_lead_id = new_id WHERE id = previous_id;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION claim_lead_id(p_lock bigint, p_order bigint, p_phone text, OUT new_id bigint, OUT previous_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    SELECT l.id INTO previous_id FROM leads l
    WHERE l.order_id = p_order AND l.phone = p_phone
    ORDER BY l.id DESC LIMIT 1;
    new_id := nextval(pg_get_serial_sequence('leads', 'id'));
    IF previous_id IS NOT NULL THEN
        UPDATE leads SET next_lead_id = new_id WHERE id = previous_id;
    END IF;
END
$$;
-- +goose StatementEnd
