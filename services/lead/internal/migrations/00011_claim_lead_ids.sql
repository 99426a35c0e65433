-- +goose Up
-- The secondary-lead rule, written once for every way a lead is stored: a sync create claims its
-- lead with claim_lead_id in the statement that inserts it (lead.Store.Create), a worker batch or
-- an import chunk claims all its rows with claim_lead_ids before its insert (lead.InsertBatch).
-- Leads repeat one another when they share (order, phone).
--
-- claim_lead_id, one lead: it takes the key's transaction advisory lock (p_lock,
-- lead.PhoneKey.LockID), draws the id under it (so a later lead of a key always has a larger id),
-- and links the lead to its previous one: p_previous when the caller has it (an earlier row of the
-- same claim_lead_ids call, not stored yet, whose next link that call returns), else the newest
-- stored lead of the key, whose next_lead_id becomes the new id. It must be VOLATILE plpgsql: each
-- of its statements then runs with a fresh snapshot, so it sees a lead that a holder of the lock
-- committed while this call waited for it (the calling statement's own snapshot, taken before the
-- wait, does not). A sync create runs only this, as it ran claim_lead_id of 00005: going through
-- claim_lead_ids instead measured a few percent more of PostgreSQL's CPU per sync create (its
-- array handling), and a set-based claim_lead_ids more than twice as much (a statement over arrays
-- is planned anew on every call, for their sizes).
-- +goose StatementBegin
CREATE FUNCTION claim_lead_id(p_lock bigint, p_order bigint, p_phone text, p_previous bigint,
    OUT new_id bigint, OUT previous_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    new_id := nextval('leads_id_seq');
    IF p_previous IS NOT NULL THEN
        previous_id := p_previous;
    ELSE
        SELECT l.id INTO previous_id FROM leads l
        WHERE l.order_id = p_order AND l.phone = p_phone
        ORDER BY l.id DESC LIMIT 1;
        IF previous_id IS NOT NULL THEN
            UPDATE leads SET next_lead_id = new_id WHERE id = previous_id;
        END IF;
    END IF;
END
$$;
-- +goose StatementEnd

-- claim_lead_ids, the rows of a batch in their order (p_locks[i] the lock id of row i): the keys'
-- locks first, distinct and ascending, so two batches that share keys queue instead of deadlocking
-- (claim_lead_id then takes each again, which costs nothing for a lock held); then each row through
-- claim_lead_id in order, its previous lead being the last earlier row of its key in the batch if
-- any. It returns, per row, its id, its previous lead and its next lead (the first later row of its
-- key in the batch), for the insert that follows.
-- +goose StatementBegin
CREATE FUNCTION claim_lead_ids(p_locks bigint[], p_orders bigint[], p_phones text[])
RETURNS TABLE (new_id bigint, previous_id bigint, next_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lock_id bigint;
    claimed record;
    ids bigint[];
    previous_ids bigint[];
    -- Per row, the position of the last earlier and of the first later row of its key, if any.
    earlier int[];
    later int[];
BEGIN
    FOREACH lock_id IN ARRAY ARRAY(SELECT DISTINCT k FROM unnest(p_locks) AS k ORDER BY k) LOOP
        PERFORM pg_advisory_xact_lock(lock_id);
    END LOOP;
    SELECT array_agg(r.e ORDER BY r.i), array_agg(r.x ORDER BY r.i) INTO earlier, later
    FROM (SELECT u.i, lag(u.i) OVER w AS e, lead(u.i) OVER w AS x
          FROM unnest(p_orders, p_phones) WITH ORDINALITY AS u(o, p, i)
          WINDOW w AS (PARTITION BY u.o, u.p ORDER BY u.i)) AS r;
    FOR i IN 1 .. cardinality(p_orders) LOOP
        claimed := claim_lead_id(p_locks[i], p_orders[i], p_phones[i], ids[earlier[i]]);
        ids[i] := claimed.new_id;
        previous_ids[i] := claimed.previous_id;
    END LOOP;
    FOR i IN 1 .. cardinality(p_orders) LOOP
        new_id := ids[i];
        previous_id := previous_ids[i];
        next_id := ids[later[i]];
        RETURN NEXT;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- The three-argument claim_lead_id stays for lead-api processes of the previous release, whose
-- prepared create calls it until they are replaced.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION claim_lead_id(p_lock bigint, p_order bigint, p_phone text, OUT new_id bigint, OUT previous_id bigint)
LANGUAGE sql VOLATILE AS $$
    SELECT c.new_id, c.previous_id FROM claim_lead_id(p_lock, p_order, p_phone, NULL) AS c
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
    -- Drawn under the lock, so a later lead of a key always has a larger id.
    new_id := nextval('leads_id_seq');
    IF previous_id IS NOT NULL THEN
        UPDATE leads SET next_lead_id = new_id WHERE id = previous_id;
    END IF;
END
$$;
-- +goose StatementEnd
DROP FUNCTION claim_lead_ids(bigint[], bigint[], text[]);
DROP FUNCTION claim_lead_id(bigint, bigint, text, bigint);
