-- +goose Up
-- One synchronous create is one statement (lead.Store.Create): this function claims the new lead's
-- place in its (order, phone) chain, and the statement that calls it inserts the lead. It takes
-- the key's transaction advisory lock (the same lock id a worker batch takes, lead.LockIDs), then
-- finds the newest lead of the key, draws the new id and points that lead's next_lead_id at it.
-- It must be VOLATILE plpgsql: each of its statements then runs with a fresh snapshot, so it sees
-- a lead that a concurrent holder of the lock committed while this call waited for the lock (the
-- calling statement's own snapshot, taken before the wait, does not).
-- +goose StatementBegin
CREATE FUNCTION claim_lead_id(p_lock bigint, p_order bigint, p_phone text, OUT new_id bigint, OUT previous_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    SELECT l.id INTO previous_id FROM leads l
    WHERE l.order_id = p_order AND l.phone = p_phone
    ORDER BY l.id DESC LIMIT 1;
    -- Drawn under the lock, so a later lead of a key always has a larger id.
    new_id := nextval(pg_get_serial_sequence('leads', 'id'));
    IF previous_id IS NOT NULL THEN
        UPDATE leads SET next_lead_id = new_id WHERE id = previous_id;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION claim_lead_id(bigint, bigint, text);
